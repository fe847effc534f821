# Pub/Sub: SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB,
# the RESP2 subscribed context, RESP3 pushes, CLIENT LIST/KILL TYPE pubsub,
# INFO's fields and the pubsub class of client-output-buffer-limit (issue
# #6). Byte-exact replies over raw connections; every test also runs against
# redis-server (TEST_SERVER=redis). With --threads 4 the connections land on
# different workers, so publishing crosses threads.
import socket
import threading
import time

import pytest

from conftest import HELP_LAST, IS_REDIS
from helpers import Conn, client_fields, encode, info_dict

CONTEXT_ERR = (b"-ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
               b"are allowed in this context\r\n")
MB = 1024 * 1024


def push(*items, resp=2):
    """A push (RESP3) or array (RESP2) of bulk strings and integers."""
    out = [b"%s%d\r\n" % (b">" if resp == 3 else b"*", len(items))]
    for x in items:
        if isinstance(x, int):
            out.append(b":%d\r\n" % x)
        elif x is None:
            out.append(b"_\r\n" if resp == 3 else b"$-1\r\n")
        else:
            x = x.encode() if isinstance(x, str) else x
            out.append(b"$%d\r\n%s\r\n" % (len(x), x))
    return b"".join(out)


def read_n(conn, n):
    return [conn.read_reply() for _ in range(n)]


@pytest.fixture
def pub(server):
    c = Conn(server)
    assert c.call("FLUSHALL") == b"+OK\r\n"
    yield c
    c.close()


def subscriber(server, *channels, patterns=(), resp=2):
    c = Conn(server)
    if resp == 3:
        assert c.call("HELLO", "3").startswith(b"%")
    if channels:
        c.send(encode("SUBSCRIBE", *channels))
        read_n(c, len(channels))
    if patterns:
        c.send(encode("PSUBSCRIBE", *patterns))
        read_n(c, len(patterns))
    return c


def wait_numsub(pub, channel, n, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = pub.call("PUBSUB", "NUMSUB", channel)
        if r.endswith(b":%d\r\n" % n):
            return
        time.sleep(0.02)
    raise AssertionError("NUMSUB %s never reached %d" % (channel, n))


# ---------------------------------------------------------------- subscribe / publish

def test_subscribe_confirms_each_channel_with_the_running_count(server):
    with Conn(server) as c:
        c.send(encode("SUBSCRIBE", "c1", "c2", "c1"))
        assert read_n(c, 3) == [push("subscribe", "c1", 1), push("subscribe", "c2", 2), push("subscribe", "c1", 2)]
        c.send(encode("PSUBSCRIBE", "c*", "c*"))
        assert read_n(c, 2) == [push("psubscribe", "c*", 3), push("psubscribe", "c*", 3)]


def test_publish_reaches_channel_and_pattern_subscribers(server, pub):
    a = subscriber(server, "news.tech")
    b = subscriber(server, patterns=["news.*"])
    both = subscriber(server, "news.tech", patterns=["*tech"])
    try:
        assert pub.call("PUBLISH", "news.tech", "hello") == b":4\r\n"
        assert a.read_reply() == push("message", "news.tech", "hello")
        assert b.read_reply() == push("pmessage", "news.*", "news.tech", "hello")
        assert read_n(both, 2) == [push("message", "news.tech", "hello"),
                                   push("pmessage", "*tech", "news.tech", "hello")]
        assert pub.call("PUBLISH", "news.art", "x") == b":1\r\n"
        assert b.read_reply() == push("pmessage", "news.*", "news.art", "x")
        assert pub.call("PUBLISH", "nobody", "x") == b":0\r\n"
        assert a.nothing_pending() and both.nothing_pending()
    finally:
        for c in (a, b, both):
            c.close()


def test_channels_and_messages_are_binary_safe(server, pub):
    ch, msg = b"ch\x00\r\n\xff", b"m\x00\r\nsg" + bytes(range(256))
    s = subscriber(server, ch)
    try:
        assert pub.call("PUBLISH", ch, msg) == b":1\r\n"
        assert s.read_reply() == push("message", ch, msg)
        assert pub.call("PUBLISH", b"ch", msg) == b":0\r\n"
    finally:
        s.close()


def test_message_order_is_kept_per_subscriber(server, pub):
    subs = [subscriber(server, "seq") for _ in range(6)]
    try:
        pub.send(b"".join(encode("PUBLISH", "seq", str(i)) for i in range(500)))
        assert read_n(pub, 500) == [b":6\r\n"] * 500
        for s in subs:
            assert read_n(s, 500) == [push("message", "seq", str(i)) for i in range(500)]
    finally:
        for s in subs:
            s.close()


def test_many_publishers_and_subscribers_concurrently(server):
    # Publishers on several connections (several workers), every subscriber
    # gets every message once, each publisher's messages in its order.
    n_subs, n_pubs, per = 5, 4, 300
    subs = [subscriber(server, "fan") for _ in range(n_subs)]
    errors = []

    def publish(p):
        try:
            with Conn(server) as c:
                c.send(b"".join(encode("PUBLISH", "fan", "%d:%d" % (p, i)) for i in range(per)))
                for r in read_n(c, per):
                    if r != b":%d\r\n" % n_subs:
                        errors.append(r)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=publish, args=(p,)) for p in range(n_pubs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert not errors, errors[:3]
        for s in subs:
            got = [r.split(b"\r\n")[-2].decode() for r in read_n(s, n_pubs * per)]
            for p in range(n_pubs):
                assert [g for g in got if g.startswith("%d:" % p)] == ["%d:%d" % (p, i) for i in range(per)]
            assert s.nothing_pending()
    finally:
        for s in subs:
            s.close()


def test_a_subscriber_told_of_a_write_can_read_it(server, pub):
    # "Write, then notify": a message published after a write in the same
    # pipeline reaches the subscriber only once the write is done, wherever
    # the key lives (with several threads the write may run on another
    # worker than the publish).
    with Conn(server) as s:
        assert s.call("HELLO", "3").startswith(b"%")
        assert s.call("SUBSCRIBE", "done") == push("subscribe", "done", 1, resp=3)
        keys = ["wtp:%d" % i for i in range(200)]
        want = {k: b"v%d" % i for i, k in enumerate(keys)}
        req = []
        for k in keys:
            req.append(encode("SET", k, want[k]) + encode("PUBLISH", "done", k))
        pub.send(b"".join(req))
        pushes = []

        def next_push():
            return pushes.pop(0) if pushes else s.read_reply()

        def get(key):  # pushes may arrive before the reply
            s.send(encode("GET", key))
            while True:
                r = s.read_reply()
                if not r.startswith(b">"):
                    return r
                pushes.append(r)

        for k in keys:
            assert next_push() == push("message", "done", k, resp=3)
            assert get(k) == b"$%d\r\n%s\r\n" % (len(want[k]), want[k])
        assert read_n(pub, 2 * len(keys)) == [b"+OK\r\n", b":1\r\n"] * len(keys)


def test_a_write_is_done_before_a_later_publish_is_delivered(server, pub):
    # The same over a whole-keyspace command: a subscriber that counts the
    # keys on each message must count the key written before it (three
    # connections: with two threads the subscriber shares the publisher's
    # worker while the other worker has a subscriber too, the case where a
    # PUBLISH is delivered here at once and there in a batch).
    other = subscriber(server, "seen")
    s = subscriber(server, "seen", resp=3)
    try:
        n = 150
        pub.send(b"".join(encode("SET", "dbs:%d" % i, "x") + encode("PUBLISH", "seen", str(i)) for i in range(n)))
        pending = []
        for i in range(n):
            r = pending.pop(0) if pending else s.read_reply()
            assert r == push("message", "seen", str(i), resp=3)
            s.send(encode("DBSIZE"))
            while True:
                r = s.read_reply()
                if not r.startswith(b">"):
                    break
                pending.append(r)
            assert int(r[1:-2]) >= i + 1, "message %d delivered before its key was written" % i
        assert read_n(pub, 2 * n) == [b"+OK\r\n", b":2\r\n"] * n
    finally:
        other.close()
        s.close()


# ---------------------------------------------------------------- unsubscribe

def test_unsubscribe_named_and_all(server, pub):
    with Conn(server) as c:
        assert c.call("UNSUBSCRIBE") == push("unsubscribe", None, 0)
        assert c.call("PUNSUBSCRIBE") == push("punsubscribe", None, 0)
        c.send(encode("SUBSCRIBE", "a", "b", "c"))
        read_n(c, 3)
        c.send(encode("PSUBSCRIBE", "p*"))
        c.read_reply()
        c.send(encode("UNSUBSCRIBE", "a", "zz"))
        assert read_n(c, 2) == [push("unsubscribe", "a", 3), push("unsubscribe", "zz", 3)]
        assert pub.call("PUBLISH", "a", "x") == b":0\r\n"
        # Without names: every channel, in some order, counting down.
        c.send(encode("UNSUBSCRIBE"))
        got = read_n(c, 2)
        assert sorted(got) == sorted([push("unsubscribe", "b", 2), push("unsubscribe", "c", 1)]) or \
            sorted(got) == sorted([push("unsubscribe", "b", 1), push("unsubscribe", "c", 2)])
        assert got[-1].endswith(b":1\r\n")
        # Only a pattern left: no channel to leave, the count is the pattern.
        assert c.call("UNSUBSCRIBE") == push("unsubscribe", None, 1)
        assert c.call("PUNSUBSCRIBE") == push("punsubscribe", "p*", 0)
        # Out of the subscribed context: normal commands again.
        assert c.call("PING") == b"+PONG\r\n"
        assert pub.call("PUBSUB", "NUMPAT") == b":0\r\n"


def test_disconnect_removes_subscriptions(server, pub):
    s = subscriber(server, "gone", patterns=["go*"])
    wait_numsub(pub, "gone", 1)
    s.close()
    wait_numsub(pub, "gone", 0)
    assert pub.call("PUBLISH", "gone", "x") == b":0\r\n"
    assert pub.call("PUBSUB", "NUMPAT") == b":0\r\n"


# ---------------------------------------------------------------- the subscribed context

def test_resp2_subscribed_context_allows_only_some_commands(server):
    with Conn(server) as c:
        c.send(encode("SUBSCRIBE", "ctx"))
        c.read_reply()
        assert c.call("GET", "x") == CONTEXT_ERR % b"get"
        assert c.call("CLIENT", "LIST") == CONTEXT_ERR % b"client|list"
        assert c.call("HELLO", "3") == CONTEXT_ERR % b"hello"
        assert c.call("PUBLISH", "ctx", "m") == CONTEXT_ERR % b"publish"
        # Unknown commands and wrong arity are reported first.
        assert c.call("NOSUCH").startswith(b"-ERR unknown command 'NOSUCH'")
        assert c.call("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
        assert c.call("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
        assert c.call("PING", "hi") == b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n"
        # A pipeline: every reply in order, the refused ones included.
        c.send(encode("SET", "k", "v") + encode("PING") + encode("SUBSCRIBE", "ctx2") + encode("GET", "k"))
        assert read_n(c, 4) == [CONTEXT_ERR % b"set", b"*2\r\n$4\r\npong\r\n$0\r\n\r\n",
                                push("subscribe", "ctx2", 2), CONTEXT_ERR % b"get"]
        assert c.call("QUIT") == b"+OK\r\n"
        assert c.read_until_closed() == b""


def test_reset_leaves_pubsub_silently(server, pub):
    with Conn(server) as c:
        c.send(encode("SUBSCRIBE", "r1") + encode("PSUBSCRIBE", "r*"))
        read_n(c, 2)
        assert c.call("RESET") == b"+RESET\r\n"
        assert pub.call("PUBLISH", "r1", "x") == b":0\r\n"
        assert c.call("GET", "x") == b"$-1\r\n"
        assert c.nothing_pending()


def test_resp3_pushes_and_any_command(server, pub):
    with Conn(server) as c:
        assert c.call("HELLO", "3").startswith(b"%")
        assert c.call("SUBSCRIBE", "r3") == push("subscribe", "r3", 1, resp=3)
        assert c.call("GET", "x") == b"_\r\n"
        assert c.call("PING") == b"+PONG\r\n"
        assert pub.call("PUBLISH", "r3", "m") == b":1\r\n"
        assert c.read_reply() == push("message", "r3", "m", resp=3)
        # Publishing to itself: the pushes come before PUBLISH's reply.
        assert c.call("PSUBSCRIBE", "r*") == push("psubscribe", "r*", 2, resp=3)
        c.send(encode("PUBLISH", "r3", "self"))
        assert read_n(c, 3) == [push("message", "r3", "self", resp=3),
                                push("pmessage", "r*", "r3", "self", resp=3), b":2\r\n"]
        assert c.call("UNSUBSCRIBE", "nope") == push("unsubscribe", "nope", 2, resp=3)
        assert c.call("PUNSUBSCRIBE", "nope") == push("punsubscribe", "nope", 2, resp=3)
        c.send(encode("UNSUBSCRIBE") + encode("PUNSUBSCRIBE"))
        assert read_n(c, 2) == [push("unsubscribe", "r3", 1, resp=3), push("punsubscribe", "r*", 0, resp=3)]
        assert c.call("UNSUBSCRIBE") == push("unsubscribe", None, 0, resp=3)


# ---------------------------------------------------------------- PUBSUB

def test_pubsub_introspection(server, pub):
    a = subscriber(server, "news.tech", "news.art", patterns=["n*", "x*"])
    b = subscriber(server, "news.tech", patterns=["n*"])
    try:
        channels = pub.call("PUBSUB", "CHANNELS")
        assert channels.startswith(b"*2\r\n") and b"news.tech" in channels and b"news.art" in channels
        assert pub.call("PUBSUB", "CHANNELS", "*art") == b"*1\r\n$8\r\nnews.art\r\n"
        assert pub.call("PUBSUB", "CHANNELS", "zz*") == b"*0\r\n"
        assert pub.call("PUBSUB", "NUMSUB", "news.tech", "news.art", "none") == (
            b"*6\r\n$9\r\nnews.tech\r\n:2\r\n$8\r\nnews.art\r\n:1\r\n$4\r\nnone\r\n:0\r\n")
        assert pub.call("PUBSUB", "NUMSUB") == b"*0\r\n"
        assert pub.call("PUBSUB", "NUMPAT") == b":2\r\n"  # unique patterns
        assert pub.call("PUBSUB", "SHARDCHANNELS") == b"*0\r\n"
        assert pub.call("PUBSUB", "SHARDNUMSUB", "a") == b"*2\r\n$1\r\na\r\n:0\r\n"
        info = info_dict(pub.call("INFO", "stats").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
        assert info["pubsub_channels"] == "2"
        assert info["pubsub_patterns"] == "2"
        assert info["pubsubshard_channels"] == "0"
        if not IS_REDIS:  # a Redis 7.2 field (7.0 lacks it)
            clients = info_dict(pub.call("INFO", "clients").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
            assert clients["pubsub_clients"] == "2"
    finally:
        a.close()
        b.close()


def test_pubsub_channels_lists_the_empty_channel_without_a_pattern(server, pub):
    # Found by the differential test: without a pattern Redis lists every channel;
    # a pattern, even "*", matches nothing against the empty name.
    a = subscriber(server, "", "x")
    try:
        wait_numsub(pub, "", 1)
        assert pub.call("PUBSUB", "CHANNELS") in (b"*2\r\n$0\r\n\r\n$1\r\nx\r\n", b"*2\r\n$1\r\nx\r\n$0\r\n\r\n")
        assert pub.call("PUBSUB", "CHANNELS", "*") == b"*1\r\n$1\r\nx\r\n"
        assert pub.call("PUBSUB", "CHANNELS", "") == b"*1\r\n$0\r\n\r\n"
        info = info_dict(pub.call("INFO", "stats").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
        assert info["pubsub_channels"] == "2"
    finally:
        a.close()


def test_pubsub_errors_and_help(pub):
    assert pub.call("PUBSUB") == b"-ERR wrong number of arguments for 'pubsub' command\r\n"
    assert pub.call("PUBSUB", "NOPE") == b"-ERR unknown subcommand 'NOPE'. Try PUBSUB HELP.\r\n"
    assert pub.call("PUBSUB", "NUMPAT", "x") == b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"
    assert pub.call("PUBSUB", "CHANNELS", "a", "b") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n")
    assert pub.call("PUBLISH", "c") == b"-ERR wrong number of arguments for 'publish' command\r\n"
    assert pub.call("SUBSCRIBE") == b"-ERR wrong number of arguments for 'subscribe' command\r\n"
    assert pub.call("PSUBSCRIBE") == b"-ERR wrong number of arguments for 'psubscribe' command\r\n"
    help_ = pub.call("PUBSUB", "HELP")
    assert help_.startswith(b"*14\r\n+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n")
    assert b"+NUMSUB [<channel> ...]\r\n" in help_ and help_.endswith(b"+HELP\r\n+" + HELP_LAST + b"\r\n")


def test_client_list_and_kill_by_type(server, pub):
    s = subscriber(server, "c1", "c2", patterns=["p*"])
    try:
        me = int(pub.call("CLIENT", "ID")[1:-2])
        lines = pub.call("CLIENT", "LIST", "TYPE", "pubsub").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
        rows = [client_fields(line)[1] for line in lines.splitlines()]
        assert len(rows) == 1
        assert (rows[0]["flags"], rows[0]["sub"], rows[0]["psub"]) == ("P", "2", "1")
        normal = pub.call("CLIENT", "LIST", "TYPE", "normal")
        assert b"id=%d " % me in normal and b"flags=P" not in normal
        assert pub.call("CLIENT", "KILL", "TYPE", "pubsub") == b":1\r\n"
        assert s.read_until_closed() == b""
        assert pub.call("CLIENT", "KILL", "TYPE", "pubsub") == b":0\r\n"
        assert pub.call("CLIENT", "LIST", "TYPE", "pubsub") in (b"$0\r\n\r\n", b"=4\r\ntxt:\r\n")
    finally:
        s.close()


# ---------------------------------------------------------------- output buffer limit

def slow_subscriber(server, channel):
    """Subscribes and then never reads (small receive buffer)."""
    s = socket.create_connection((server.host, server.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.sendall(encode("SUBSCRIBE", channel))
    return s


def test_pubsub_class_limit_closes_a_slow_subscriber(server, pub):
    assert pub.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 2mb 0 0") == b"+OK\r\n"
    fast = subscriber(server, "flood")
    slow = slow_subscriber(server, "flood")
    try:
        wait_numsub(pub, "flood", 2)
        rss_before = int(info_dict(pub.call("INFO", "memory").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
                         ["used_memory_rss"])
        msg = b"x" * (100 * 1024)
        counts = []
        for _ in range(10):  # 100 rounds of 100 KB: 10 MB, far past 2 MB
            pub.send(b"".join(encode("PUBLISH", "flood", msg) for _ in range(10)))
            counts += read_n(pub, 10)
            for _ in range(10):
                assert fast.read_reply().endswith(msg + b"\r\n")  # a reader keeps up
        assert counts[0] == b":2\r\n" and counts[-1] == b":1\r\n", (counts[0], counts[-1])
        wait_numsub(pub, "flood", 1)
        info = info_dict(pub.call("INFO", "stats").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
        if not IS_REDIS:  # 7.2's field
            assert int(info["client_output_buffer_limit_disconnections"]) >= 1
        rss_after = int(info_dict(pub.call("INFO", "memory").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0])
                        ["used_memory_rss"])
        assert rss_after - rss_before < 64 * MB
        # Normal clients are not of that class: a plain client with 3 MB of
        # replies pending is not closed.
        assert pub.call("SET", "big", b"v" * MB) == b"+OK\r\n"
        pub.send(b"".join(encode("GET", "big") for _ in range(3)))
        assert len(b"".join(read_n(pub, 3))) > 3 * MB
    finally:
        pub.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 32mb 8mb 60")
        fast.close()
        slow.close()


def test_a_publisher_closed_by_its_own_message_harms_nothing(server, pub):
    # A RESP3 client subscribed to the channel it publishes on, over a small
    # pubsub-class limit: its own message closes it, mid-command (with
    # several threads, while its PUBLISH is on its way to another worker's
    # subscriber). The server and other clients go on unharmed.
    other = subscriber(server, "self")
    me = Conn(server)
    try:
        assert me.call("HELLO", "3").startswith(b"%")
        assert me.call("SUBSCRIBE", "self") == push("subscribe", "self", 1, resp=3)
        # (Redis counts only replies past its 16 KB per-client buffer: a
        # 64 KB message passes a 16 KB limit in both.)
        assert pub.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 16kb 0 0") == b"+OK\r\n"
        me.send(encode("SET", "before", "1") + encode("PUBLISH", "self", "x" * 65536) + encode("SET", "after", "1"))
        try:
            me.read_until_closed(timeout=5)
        except ConnectionError:
            pass
        assert other.read_until_closed(timeout=5) is not None  # over the limit too
        # Every other path still works, remote batches included.
        keys = ["after:%d" % i for i in range(40)]
        pub.send(b"".join(encode("SET", k, k) for k in keys) + encode("MGET", *keys))
        replies = read_n(pub, len(keys) + 1)
        assert replies[:-1] == [b"+OK\r\n"] * len(keys)
        assert replies[-1] == b"*40\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(k), k.encode()) for k in keys)
    finally:
        pub.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 32mb 8mb 60")
        me.close()
        other.close()
