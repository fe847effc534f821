# Sharded Pub/Sub outside cluster mode: SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH,
# PUBSUB SHARDCHANNELS / SHARDNUMSUB, their place in the subscribed context,
# transactions, scripts, ACLs, CLIENT LIST, INFO and replication. Byte-exact
# replies over raw connections; every test also runs against redis-server
# (TEST_SERVER=redis). In cluster mode the channels route by slot
# (test_cluster.py, TestShardedPubSub).
import time

import pytest
import redis

from conftest import ServerProcess
from helpers import Conn, client_fields, encode, info_dict
from test_acl import CHANNEL
from test_pubsub import CONTEXT_ERR, push, read_n


@pytest.fixture
def pub(server):
    c = Conn(server)
    assert c.call("FLUSHALL") == b"+OK\r\n"
    yield c
    c.close()


def ssubscriber(server, *channels, resp=2):
    c = Conn(server)
    if resp == 3:
        assert c.call("HELLO", "3").startswith(b"%")
    c.send(encode("SSUBSCRIBE", *channels))
    read_n(c, len(channels))
    return c


def shardnumsub(pub, channel):
    return int(pub.call("PUBSUB", "SHARDNUMSUB", channel).rsplit(b":", 1)[1][:-2])


def wait_shardnumsub(pub, channel, n, timeout=5):
    deadline = time.monotonic() + timeout
    while shardnumsub(pub, channel) != n:
        assert time.monotonic() < deadline, "SHARDNUMSUB %s never reached %d" % (channel, n)
        time.sleep(0.02)


def info_section(c, section):
    return info_dict(c.call("INFO", section).split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])


def test_ssubscribe_counts_shard_channels_apart(server):
    with Conn(server) as c:
        c.send(encode("SUBSCRIBE", "a") + encode("PSUBSCRIBE", "p*"))
        assert read_n(c, 2) == [push("subscribe", "a", 1), push("psubscribe", "p*", 2)]
        c.send(encode("SSUBSCRIBE", "s1", "s2", "s1"))
        assert read_n(c, 3) == [push("ssubscribe", "s1", 1), push("ssubscribe", "s2", 2),
                                push("ssubscribe", "s1", 2)]
        c.send(encode("SUBSCRIBE", "b"))
        assert c.read_reply() == push("subscribe", "b", 3)
        c.send(encode("SUNSUBSCRIBE", "s2", "nope"))
        assert read_n(c, 2) == [push("sunsubscribe", "s2", 1), push("sunsubscribe", "nope", 1)]
        c.send(encode("UNSUBSCRIBE") + encode("PUNSUBSCRIBE"))
        unsubs = read_n(c, 3)  # (Redis leaves them in its dict's order)
        assert sorted(unsubs[:2]) == sorted([push("unsubscribe", "a", 2), push("unsubscribe", "b", 2)]) or \
            sorted(unsubs[:2]) == sorted([push("unsubscribe", "a", 1), push("unsubscribe", "b", 2)]) or \
            sorted(unsubs[:2]) == sorted([push("unsubscribe", "a", 2), push("unsubscribe", "b", 1)])
        assert unsubs[2] == push("punsubscribe", "p*", 0)
        # Still subscribed (to a shard channel): still the subscribed context.
        assert c.call("GET", "sharded:none") == CONTEXT_ERR % b"get"
        c.send(encode("SUNSUBSCRIBE"))
        assert c.read_reply() == push("sunsubscribe", "s1", 0)
        assert c.call("GET", "sharded:none") == b"$-1\r\n"
        c.send(encode("SUNSUBSCRIBE"))
        assert c.read_reply() == push("sunsubscribe", None, 0)


def test_spublish_reaches_only_shard_subscribers(server, pub):
    s = ssubscriber(server, "news")
    both = ssubscriber(server, "news", "other")
    plain = Conn(server)
    plain.send(encode("SUBSCRIBE", "news") + encode("PSUBSCRIBE", "*"))
    read_n(plain, 2)
    try:
        assert pub.call("SPUBLISH", "news", "hello") == b":2\r\n"
        assert s.read_reply() == push("smessage", "news", "hello")
        assert both.read_reply() == push("smessage", "news", "hello")
        assert plain.nothing_pending()
        # PUBLISH on the same name reaches the others only.
        assert pub.call("PUBLISH", "news", "x") == b":2\r\n"
        assert read_n(plain, 2) == [push("message", "news", "x"), push("pmessage", "*", "news", "x")]
        assert s.nothing_pending() and both.nothing_pending()
        assert pub.call("SPUBLISH", "nobody", "x") == b":0\r\n"
        # Binary-safe, and in order per subscriber.
        ch, msg = b"c\x00\r\n\xff", b"m\x00\r\n" + bytes(range(256))
        with ssubscriber(server, ch) as bin_:
            for i in range(50):
                assert pub.call("SPUBLISH", ch, msg + b"%d" % i) == b":1\r\n"
            assert read_n(bin_, 50) == [push("smessage", ch, msg + b"%d" % i) for i in range(50)]
    finally:
        for c in (s, both, plain):
            c.close()


def test_resp3_pushes_and_any_command(server, pub):
    with ssubscriber(server, "r3", resp=3) as c:
        assert c.call("SET", "k", "v") == b"+OK\r\n"
        assert pub.call("SPUBLISH", "r3", "hi") == b":1\r\n"
        assert c.read_reply() == push("smessage", "r3", "hi", resp=3)
        assert c.call("SUNSUBSCRIBE", "r3") == push("sunsubscribe", "r3", 0, resp=3)


def test_subscribed_context_and_reset(server, pub):
    with ssubscriber(server, "ctx") as c:
        assert c.call("SET", "k", "v") == CONTEXT_ERR % b"set"
        assert c.call("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
        assert c.call("RESET") == b"+RESET\r\n"
        assert c.call("GET", "k") == b"$-1\r\n"
        assert shardnumsub(pub, "ctx") == 0
    with ssubscriber(server, "gone"):
        assert shardnumsub(pub, "gone") == 1
    wait_shardnumsub(pub, "gone", 0)
    assert pub.call("SPUBLISH", "gone", "x") == b":0\r\n"


def test_introspection(server, pub):
    a = ssubscriber(server, "s.one", "s.two")
    b = ssubscriber(server, "s.one")
    plain = Conn(server)
    plain.send(encode("SUBSCRIBE", "s.plain"))
    plain.read_reply()
    try:
        channels = pub.call("PUBSUB", "SHARDCHANNELS")
        assert channels.startswith(b"*2\r\n") and b"$5\r\ns.one\r\n" in channels and b"$5\r\ns.two\r\n" in channels
        assert pub.call("PUBSUB", "SHARDCHANNELS", "*two") == b"*1\r\n$5\r\ns.two\r\n"
        assert pub.call("PUBSUB", "SHARDCHANNELS", "s.plain") == b"*0\r\n"
        assert pub.call("PUBSUB", "SHARDNUMSUB", "s.one", "s.two", "s.plain") == (
            b"*6\r\n$5\r\ns.one\r\n:2\r\n$5\r\ns.two\r\n:1\r\n$7\r\ns.plain\r\n:0\r\n")
        assert pub.call("PUBSUB", "SHARDNUMSUB") == b"*0\r\n"
        assert pub.call("PUBSUB", "NUMSUB", "s.one") == b"*2\r\n$5\r\ns.one\r\n:0\r\n"
        assert pub.call("PUBSUB", "CHANNELS") == b"*1\r\n$7\r\ns.plain\r\n"
        assert pub.call("PUBSUB", "SHARDCHANNELS", "a", "b") == (
            b"-ERR unknown subcommand or wrong number of arguments for 'SHARDCHANNELS'. Try PUBSUB HELP.\r\n")
        stats = info_section(pub, "stats")
        assert (stats["pubsub_channels"], stats["pubsubshard_channels"]) == ("1", "2")
        lines = pub.call("CLIENT", "LIST", "TYPE", "pubsub").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
        rows = sorted((r["sub"], r["ssub"], r["flags"]) for r in (client_fields(x)[1] for x in lines.splitlines()))
        assert rows == [("0", "1", "P"), ("0", "2", "P"), ("1", "0", "P")]
        assert pub.call("CLIENT", "KILL", "TYPE", "pubsub") == b":3\r\n"
        wait_shardnumsub(pub, "s.one", 0)
        assert info_section(pub, "stats")["pubsubshard_channels"] == "0"
    finally:
        for c in (a, b, plain):
            c.close()


def test_errors_arity_and_command_info(pub):
    for cmd, name in ((("SSUBSCRIBE",), "ssubscribe"), (("SPUBLISH", "c"), "spublish"),
                      (("SPUBLISH", "c", "m", "x"), "spublish")):
        assert pub.call(*cmd) == b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()
    assert pub.call("COMMAND", "GETKEYS", "SPUBLISH", "c", "m") == b"-ERR The command has no key arguments\r\n"
    info = pub.call("COMMAND", "INFO", "SPUBLISH", "SSUBSCRIBE", "SUNSUBSCRIBE")
    # [name, arity, flags, first, last, step, ...]: the channels' legacy range.
    assert b"$8\r\nspublish\r\n:3\r\n" in info and b":1\r\n:1\r\n:1\r\n" in info
    assert b"$10\r\nssubscribe\r\n:-2\r\n" in info and b":1\r\n:-1\r\n:1\r\n" in info
    assert b"$12\r\nsunsubscribe\r\n:-1\r\n" in info
    assert info.count(b"not_key") == 3
    docs = pub.call("COMMAND", "DOCS", "SPUBLISH")
    assert b"Post a message to a shard channel" in docs and b"7.0.0" in docs


def test_transactions_and_scripts(server, pub):
    with ssubscriber(server, "tx") as s, Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("SPUBLISH", "tx", "in-multi") == b"+QUEUED\r\n"
        assert c.call("SSUBSCRIBE", "x") == b"+QUEUED\r\n"
        assert c.call("EXEC") == (b"*2\r\n:1\r\n-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n")
        assert s.read_reply() == push("smessage", "tx", "in-multi")
        assert c.call("SET", "after", "1") == b"+OK\r\n"  # not left subscribed
        assert c.call("EVAL", "return redis.call('spublish', 'tx', 'from-lua')", "0") == b":1\r\n"
        assert s.read_reply() == push("smessage", "tx", "from-lua")
        err = c.call("EVAL", "return redis.call('ssubscribe', 'x')", "0")
        assert err.startswith(b"-ERR This Redis command is not allowed from script")


def test_acl_channels(server, pub):
    assert pub.call("ACL", "SETUSER", "shardy", "on", "nopass", "resetchannels", "&ok*", "+@all") == b"+OK\r\n"
    try:
        with Conn(server) as c:
            assert c.call("AUTH", "shardy", "x") == b"+OK\r\n"
            denied = b"-NOPERM %s\r\n" % CHANNEL.encode()
            assert c.call("SSUBSCRIBE", "no") == denied
            assert c.call("SPUBLISH", "no", "m") == denied
            assert c.call("SPUBLISH", "ok1", "m") == b":0\r\n"
            c.send(encode("SSUBSCRIBE", "ok1"))
            assert c.read_reply() == push("ssubscribe", "ok1", 1)
            # Taking the channel away closes the subscriber.
            assert pub.call("ACL", "SETUSER", "shardy", "resetchannels") == b"+OK\r\n"
            assert c.read_until_closed() == b""
    finally:
        pub.call("ACL", "DELUSER", "shardy")


def test_spublish_reaches_a_replicas_subscribers(start_server):
    primary = start_server()
    replica = ServerProcess(["--replicaof", primary.host, str(primary.port)])  # (a directory of its own)
    try:
        rc = redis.Redis(host=replica.host, port=replica.port)
        deadline = time.monotonic() + 20
        while rc.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "replica never linked"
            time.sleep(0.05)
        with ssubscriber(replica, "rep") as s, Conn(primary) as p:
            assert p.call("SPUBLISH", "rep", "down-the-stream") == b":0\r\n"
            assert s.read_reply() == push("smessage", "rep", "down-the-stream")
    finally:
        replica.stop()
