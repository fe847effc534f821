# CLIENT TRACKING, as Redis 7.2 (docs/tracking.md): a tracking client's
# reads are remembered, and a change of such a key (a command, expiry,
# eviction, a flush, a script's write) sends it an invalidation: a RESP3 push
# ["invalidate", [keys]] after the reply of its own command, or a Pub/Sub
# message on __redis__:invalidate to the RESP2 client it redirects to. BCAST
# tells of every change under its prefixes; NOLOOP leaves out the client's
# own; OPTIN / OPTOUT with CLIENT CACHING choose what is remembered;
# tracking-table-max-keys bounds the table. Under --threads 4 the keys live on
# several workers' shards. Every test passes against redis-server too
# (TEST_SERVER=redis).
import time

import pytest

from conftest import IS_REDIS
from helpers import Conn, config_set, crc16, encode, info_dict, rc, wait_for  # noqa: F401 (fixtures)


def push(*keys):
    """A RESP3 invalidation push of `keys`."""
    out = b">2\r\n$10\r\ninvalidate\r\n*%d\r\n" % len(keys)
    for k in keys:
        out += b"$%d\r\n%s\r\n" % (len(k), k.encode())
    return out


def message(*keys):
    """The RESP2 Pub/Sub message a redirected client gets for `keys`."""
    out = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*%d\r\n" % len(keys)
    for k in keys:
        out += b"$%d\r\n%s\r\n" % (len(k), k.encode())
    return out


FLUSH_PUSH = b">2\r\n$10\r\ninvalidate\r\n_\r\n"
FLUSH_MESSAGE = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n"


def keys_of(reply):
    """The key names of an invalidation (push or message), sorted."""
    parts = reply.split(b"\r\n")
    names = [parts[i + 1] for i in range(len(parts) - 1) if parts[i].startswith(b"$")]
    return sorted(n.decode() for n in names if n not in (b"invalidate", b"message", b"__redis__:invalidate"))


@pytest.fixture
def conns(server, rc):
    made = []

    def make(resp3=False):
        c = Conn(server)
        made.append(c)
        if resp3:
            assert c.call("HELLO", "3").startswith(b"%")
        return c

    yield make
    for c in made:
        c.close()


def info(rc, section):
    return info_dict(rc.execute_command("INFO", section))


def client_id(c):
    return int(c.call("CLIENT", "ID")[1:-2])


def redirect_target(conns):
    """A RESP2 client subscribed to __redis__:invalidate, and its id."""
    t = conns()
    tid = client_id(t)
    assert t.call("SUBSCRIBE", "__redis__:invalidate").endswith(b":1\r\n")
    return t, tid


def test_a_read_key_is_invalidated_after_another_clients_write(conns):
    t, w = conns(resp3=True), conns()
    assert t.call("CLIENT", "TRACKING", "on") == b"+OK\r\n"
    w.call("MSET", "a", "1", "b", "2")
    assert t.call("GET", "a") == b"$1\r\n1\r\n"
    assert w.call("INCR", "b") == b":3\r\n"  # not read: no invalidation
    assert w.call("INCR", "a") == b":2\r\n"
    assert t.read_reply() == push("a")
    # Told once: the key left the table (read again to be told again).
    assert w.call("INCR", "a") == b":3\r\n"
    assert t.call("PING") == b"+PONG\r\n"
    # A missing key read is remembered too; a write that changes nothing is none.
    assert t.call("GET", "nothing") == b"_\r\n"
    assert w.call("DEL", "nothing") == b":0\r\n"
    assert w.call("SET", "nothing", "x") == b"+OK\r\n"
    assert t.read_reply() == push("nothing")


def test_every_key_of_a_multi_key_read_across_shards(conns):
    t, w = conns(resp3=True), conns()
    t.call("CLIENT", "TRACKING", "on")
    names = ["k%d" % i for i in range(40)]
    assert t.call("MGET", *names).startswith(b"*40\r\n")
    w.call("MSET", *[x for n in names for x in (n, "v")])
    got = [t.read_reply() for _ in names]
    assert sorted(k for g in got for k in keys_of(g)) == sorted(names)
    assert all(len(keys_of(g)) == 1 for g in got)  # one push per key, as Redis
    assert t.call("PING") == b"+PONG\r\n"


def test_invalidation_comes_before_the_reply_to_the_next_command(conns):
    # A client told that a write is done, then asking the tracking client's
    # connection anything, finds the invalidation first.
    t, w = conns(resp3=True), conns()
    t.call("CLIENT", "TRACKING", "on")
    for i in range(200):
        key = "order%d" % i
        assert t.call("GET", key) == b"_\r\n"
        w.call("SET", key, "v")
        assert t.call("PING") == push(key), i
        assert t.read_reply() == b"+PONG\r\n"


def test_the_own_write_invalidation_follows_the_reply(conns):
    t = conns(resp3=True)
    t.call("CLIENT", "TRACKING", "on")
    t.call("HSET", "myhash", "f", "1")
    t.call("HGET", "myhash", "f")
    assert t.call("HDEL", "myhash", "f") == b":1\r\n"
    assert t.read_reply() == push("myhash")
    # Inside a transaction: after EXEC's whole reply.
    t.call("MSET", "a{t}", "1", "b{t}", "2")
    t.call("GET", "a{t}")
    assert t.call("MULTI") == b"+OK\r\n"
    t.call("INCR", "a{t}")
    t.call("GET", "b{t}")
    assert t.call("EXEC") == b"*2\r\n:2\r\n$1\r\n2\r\n"
    assert t.read_reply() == push("a{t}")
    # A pipeline whose keys live on several shards: each key's invalidation
    # after the replies that come before it.
    t.call("GET", "p1")
    t.call("GET", "p2")
    t.send(b"".join(b"*3\r\n$3\r\nSET\r\n$2\r\np%d\r\n$1\r\nx\r\n" % i for i in (1, 2)) + b"*1\r\n$4\r\nPING\r\n")
    seen = [t.read_reply() for _ in range(5)]
    assert seen.index(b"+OK\r\n") < seen.index(push("p1"))
    assert sorted(s for s in seen if s.startswith(b">")) == sorted([push("p1"), push("p2")])
    assert seen.count(b"+OK\r\n") == 2 and b"+PONG\r\n" in seen


def test_redirect_to_a_resp2_subscriber(conns):
    target, tid = redirect_target(conns)
    t, w = conns(), conns()
    assert t.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid)) == b"+OK\r\n"
    assert t.call("CLIENT", "GETREDIR") == b":%d\r\n" % tid
    w.call("SET", "a", "1")
    t.call("GET", "a")
    w.call("INCR", "a")
    assert target.read_reply() == message("a")
    # Several clients may redirect to one.
    u = conns()
    u.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid))
    u.call("GET", "b")
    w.call("SET", "b", "1")
    assert target.read_reply() == message("b")
    # A RESP2 tracking client without redirection is told nothing.
    v = conns()
    v.call("CLIENT", "TRACKING", "on")
    v.call("GET", "c")
    w.call("SET", "c", "1")
    assert v.nothing_pending()


def test_clients_redirecting_to_one_get_the_writes_order(conns):
    # Several tracking clients (on several workers under --threads 4)
    # redirect to one connection; one writer changes their keys (one
    # shard's) in turn, pipelined: the redirect gets the invalidations in
    # the order of the writes, as from Redis's one thread.
    from helpers import encode
    target, tid = redirect_target(conns)
    trackers = [conns() for _ in range(6)]
    for t in trackers:
        assert t.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid)) == b"+OK\r\n"
    w = conns()
    keys = [f"order{{t}}:{i}" for i in range(len(trackers))]
    for _ in range(30):
        for t, k in zip(trackers, keys):
            t.call("GET", k)
        w.send(b"".join(encode("INCR", k) for k in keys))
        for _ in keys:
            assert w.read_reply().startswith(b":")
        assert [keys_of(target.read_reply()) for _ in keys] == [[k] for k in keys]


def test_redirect_to_a_resp3_client_and_a_broken_redirection(conns):
    target = conns(resp3=True)
    tid = client_id(target)
    t, w = conns(resp3=True), conns()
    t.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid))
    t.call("GET", "k")
    w.call("SET", "k", "1")
    assert target.read_reply() == push("k")
    target.close()
    t.call("GET", "k")
    w.call("SET", "k", "2")
    got = t.read_reply()
    assert got == b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % tid
    info = t.call("CLIENT", "TRACKINGINFO")
    assert b"broken_redirect" in info and (b":%d\r\n" % tid) in info


def test_tracking_errors(conns):
    c = conns()
    me = client_id(c)
    assert c.call("CLIENT", "TRACKING", "on", "PREFIX", "a") == b"-ERR PREFIX option requires BCAST mode to be enabled\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "OPTIN") == b"-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT") == b"-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT", "999999") == (
        b"-ERR The client ID you want redirect to does not exist\r\n")
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT", "x") == b"-ERR value is not an integer or out of range\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT", str(me), "REDIRECT", str(me)) == (
        b"-ERR A client can only redirect to a single other client\r\n")
    assert c.call("CLIENT", "TRACKING", "maybe") == b"-ERR syntax error\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "BOGUS") == b"-ERR syntax error\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "REDIRECT") == b"-ERR syntax error\r\n"
    assert c.call("CLIENT", "TRACKING").startswith(b"-ERR wrong number of arguments for 'client|tracking'")
    assert c.call("CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n")
    assert c.call("CLIENT", "CACHING", "yes") == (
        b"-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode "
        b"enabled\r\n")
    assert c.call("CLIENT", "TRACKING", "on", "OPTIN") == b"+OK\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "OPTOUT") == (
        b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling "
        b"it with a different mode.\r\n")
    assert c.call("CLIENT", "TRACKING", "on", "BCAST") == (
        b"-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling "
        b"it with a different mode.\r\n")
    assert c.call("CLIENT", "CACHING", "no") == (
        b"-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n")
    assert c.call("CLIENT", "CACHING", "maybe") == b"-ERR syntax error\r\n"
    assert c.call("CLIENT", "TRACKING", "off") == b"+OK\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "OPTOUT") == b"+OK\r\n"
    assert c.call("CLIENT", "CACHING", "yes") == (
        b"-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n")
    c.call("CLIENT", "TRACKING", "off")
    # Overlapping prefixes.
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO") == (
        b"-ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for a single client must not "
        b"overlap.\r\n")
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR") == b"+OK\r\n"
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FO") == (
        b"-ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. Prefixes for a single client must not "
        b"overlap.\r\n")
    assert c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "BARB").startswith(b"-ERR Prefix 'BARB'")
    assert c.call("CLIENT", "TRACKING", "off") == b"+OK\r\n"


def test_trackinginfo_and_getredir(conns):
    c = conns(resp3=True)
    _, tid = redirect_target(conns)
    assert c.call("CLIENT", "GETREDIR") == b":-1\r\n"
    c.call("CLIENT", "TRACKING", "on")
    assert c.call("CLIENT", "GETREDIR") == b":0\r\n"
    assert c.call("CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~1\r\n$2\r\non\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n")
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid), "NOLOOP")
    info = c.call("CLIENT", "TRACKINGINFO")
    assert b"~2\r\n$2\r\non\r\n$6\r\nnoloop\r\n" in info and b":%d\r\n" % tid in info
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTIN")
    c.call("CLIENT", "CACHING", "yes")
    assert b"~3\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n" in c.call("CLIENT", "TRACKINGINFO")
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTOUT")
    c.call("CLIENT", "CACHING", "no")
    assert b"~3\r\n$2\r\non\r\n$6\r\noptout\r\n$10\r\ncaching-no\r\n" in c.call("CLIENT", "TRACKINGINFO")
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "foo", "PREFIX", "bar")
    assert c.call("CLIENT", "TRACKINGINFO").endswith(b"$8\r\nprefixes\r\n*2\r\n$3\r\nbar\r\n$3\r\nfoo\r\n")
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST")
    assert c.call("CLIENT", "TRACKINGINFO").endswith(b"$8\r\nprefixes\r\n*1\r\n$0\r\n\r\n")
    # RESET ends tracking.
    assert c.call("RESET") == b"+RESET\r\n"
    assert c.call("CLIENT", "GETREDIR") == b":-1\r\n"


def test_bcast_with_prefixes_and_the_empty_one(conns):
    target, tid = redirect_target(conns)
    c, w = conns(), conns()
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(tid))
    w.call("MSET", "a{t}", "1", "b{t}", "2", "c{t}", "3")
    assert keys_of(target.read_reply()) == ["a{t}", "b{t}", "c{t}"]  # one message for one command
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(tid), "PREFIX", "a:", "PREFIX", "b:")
    w.call("MULTI")
    for k in ("a:1{t}", "a:2{t}", "b:1{t}", "b:2{t}", "c:1{t}"):
        w.call("INCR", k)
    w.call("EXEC")
    first, second = keys_of(target.read_reply()), keys_of(target.read_reply())
    assert sorted(first + second) == ["a:1{t}", "a:2{t}", "b:1{t}", "b:2{t}"]  # one message per prefix
    # A prefix added later.
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(tid), "PREFIX", "c:")
    w.call("INCR", "c:1234")
    assert keys_of(target.read_reply()) == ["c:1234"]
    assert target.nothing_pending()


def test_noloop_leaves_out_the_clients_own_changes(conns):
    target, tid = redirect_target(conns)
    c, w = conns(), conns()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid), "NOLOOP")
    c.call("MGET", "otherkey1{t}", "loopkey{t}", "otherkey2{t}")
    w.call("SET", "otherkey1{t}", "1")
    c.call("SET", "loopkey{t}", "1")
    w.call("SET", "otherkey2{t}", "1")
    got = keys_of(target.read_reply()) + keys_of(target.read_reply())
    assert sorted(got) == ["otherkey1{t}", "otherkey2{t}"]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(tid), "NOLOOP")
    w.call("SET", "otherkey1", "1")
    c.call("SET", "loopkey", "1")
    w.call("SET", "otherkey2", "1")
    assert keys_of(target.read_reply()) == ["otherkey1"]
    assert keys_of(target.read_reply()) == ["otherkey2"]
    assert target.nothing_pending()


def test_expired_keys_are_invalidated(conns):
    target, tid = redirect_target(conns)
    c = conns()
    c.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(tid), "NOLOOP")
    c.call("SET", "mykey", "myval", "PX", "1")
    c.call("SET", "mykeyotherkey", "myval")  # own change, NOLOOP: not told
    assert keys_of(target.read_reply()) == ["mykey"]  # (the active expiry's)
    # Expired on access by the client itself: told even with NOLOOP (no
    # command changed it), once.
    c.call("MULTI")
    c.call("SET", "lazy{t}", "v", "PX", "1")
    c.call("SET", "lazyother{t}", "v")
    c.call("EXEC")
    time.sleep(0.01)
    c.call("GET", "lazy{t}")
    assert keys_of(target.read_reply()) == ["lazy{t}"]
    # A remembered key that expires (default mode).
    c.call("CLIENT", "TRACKING", "off")
    t = conns(resp3=True)
    t.call("CLIENT", "TRACKING", "on")
    t.call("SET", "soon", "v", "PX", "50")
    assert t.call("GET", "soon") == b"$1\r\nv\r\n"
    assert t.read_reply() == push("soon")


def test_optin_and_optout_with_caching(conns):
    target, tid = redirect_target(conns)
    c, w = conns(), conns()
    c.call("CLIENT", "TRACKING", "on", "OPTIN", "REDIRECT", str(tid))
    c.call("GET", "k1")  # not remembered: no CACHING yes
    w.call("SET", "k1", "1")
    assert c.call("CLIENT", "CACHING", "yes") == b"+OK\r\n"
    c.call("GET", "k2")  # remembered
    c.call("GET", "k3")  # CACHING held for one command only
    w.call("MSET", "k2", "1", "k3", "1")
    assert target.read_reply() == message("k2")
    # ...or for a whole transaction.
    c.call("CLIENT", "CACHING", "yes")
    c.call("MULTI")
    c.call("GET", "t1{x}")
    c.call("GET", "t2{x}")
    c.call("EXEC")
    w.call("MSET", "t1{x}", "1", "t2{x}", "1")
    assert sorted(keys_of(target.read_reply()) + keys_of(target.read_reply())) == ["t1{x}", "t2{x}"]
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTOUT", "REDIRECT", str(tid))
    c.call("CLIENT", "CACHING", "no")
    c.call("GET", "k4")  # not remembered
    c.call("GET", "k5")  # remembered
    w.call("MSET", "k4", "1", "k5", "1")
    assert target.read_reply() == message("k5")
    assert target.nothing_pending()


def test_scripts_track_the_keys_their_calls_read(conns):
    t, w = conns(resp3=True), conns()
    t.call("CLIENT", "TRACKING", "on")
    w.call("MSET", "key1{t}", "1", "key2{t}", "1")
    t.call("EVAL", "redis.call('set', 'key3{t}', 'bar')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key2{t}", "2", "key1{t}", "2")
    assert t.call("PING") == b"+PONG\r\n"
    t.call("EVAL", "redis.call('get', 'key2{t}')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key2{t}", "2", "key3{t}", "2")
    assert t.read_reply() == push("key2{t}")
    assert t.call("PING") == b"+PONG\r\n"
    t.call("EVAL_RO", "redis.call('ping')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key2{t}", "2", "key1{t}", "2")
    if IS_REDIS:  # (Redis 7.0 remembers EVAL_RO's declared keys; 7.2 does not)
        t.call("PING")
        t.read_reply()
    assert t.call("PING") == b"+PONG\r\n"
    t.call("EVAL_RO", "redis.call('get', 'key2{t}')", "2", "key1{t}", "key2{t}")
    w.call("MSET", "key2{t}", "2", "key3{t}", "2")
    assert t.read_reply() == push("key2{t}")
    # A script's write invalidates like any other.
    t.call("GET", "key1{t}")
    w.call("EVAL", "redis.call('incr', KEYS[1])", "1", "key1{t}")
    assert t.read_reply() == push("key1{t}")


def test_switching_to_bcast_drops_the_keys_remembered_before(conns):
    t, w = conns(resp3=True), conns()
    t.call("CLIENT", "TRACKING", "on")
    w.call("SET", "key1", "1")
    t.call("GET", "key1")
    t.call("CLIENT", "TRACKING", "off")
    t.call("CLIENT", "TRACKING", "on", "BCAST")
    w.call("INCR", "key1")
    assert t.call("PING") == push("key1")  # BCAST's, once
    assert t.read_reply() == b"+PONG\r\n"


def test_flushall_and_flushdb_invalidate_everything(conns, rc):
    target, tid = redirect_target(conns)
    c, t, w = conns(), conns(resp3=True), conns()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid))
    t.call("CLIENT", "TRACKING", "on")
    c.call("GET", "key1")
    t.call("GET", "key2")
    assert int(info(rc, "stats")["tracking_total_keys"]) == 2
    w.call("FLUSHALL", "ASYNC")
    assert int(info(rc, "stats")["tracking_total_keys"]) == 0
    assert target.read_reply() == FLUSH_MESSAGE
    assert t.read_reply() == FLUSH_PUSH
    w.call("SELECT", "3")
    w.call("FLUSHDB")  # (every tracking client, whatever the database)
    assert target.read_reply() == FLUSH_MESSAGE
    assert t.read_reply() == FLUSH_PUSH
    # The client's own flush: after its reply, and after EXEC's.
    t.call("GET", "a")
    t.call("MULTI")
    t.call("FLUSHDB")
    assert t.call("EXEC") == b"*1\r\n+OK\r\n"
    assert t.read_reply() == FLUSH_PUSH
    assert target.read_reply() == FLUSH_MESSAGE


def test_unblocked_blmove_gets_its_invalidation_after_its_reply(conns):
    t, w = conns(resp3=True), conns()
    w.call("RPUSH", "list2{t}", "a")
    t.call("CLIENT", "TRACKING", "on")
    t.call("LRANGE", "list2{t}", "0", "-1")
    t.send(b"*6\r\n$6\r\nBLMOVE\r\n$8\r\nlist1{t}\r\n$8\r\nlist2{t}\r\n$4\r\nleft\r\n$4\r\nleft\r\n$1\r\n0\r\n")
    wait_for(lambda: b"blocked_clients:1" in w.call("INFO", "clients"))
    w.call("RPUSH", "list1{t}", "foo")
    assert t.read_reply() == b"$3\r\nfoo\r\n"
    assert t.read_reply() == push("list2{t}")


def test_the_table_limit_invalidates_the_excess(conns, rc, config_set):
    target, tid = redirect_target(conns)
    c, w = conns(), conns()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid))
    n = 250
    for i in range(n):
        w.call("SET", "key%d" % i, str(i))
        c.call("GET", "key%d" % i)
    assert int(info(rc, "stats")["tracking_total_keys"]) == n
    config_set("tracking-table-max-keys", "1")
    got = [keys_of(target.read_reply()) for _ in range(n - 1)]
    assert all(len(g) == 1 for g in got)
    assert target.call("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"  # no more than the excess
    assert int(info(rc, "stats")["tracking_total_keys"]) == 1


@pytest.mark.parametrize("same_worker", [True, False])
def test_the_table_limit_applies_before_a_queued_command(conns, rc, config_set, same_worker):
    # Redis trims the table before every command, a queued one too
    # (its #11715): the invalidation comes before QUEUED, here also when the
    # tracked keys live on another worker's shard than the client's. (The
    # cron trims it too, at most 100 ms later: were it first, its
    # invalidation would come before QUEUED all the same.)
    c = conns(resp3=True)
    c.call("CLIENT", "TRACKING", "on")
    vtag, other = tags_on_two_shards(rc)
    tag = vtag if same_worker else other
    config_set("tracking-table-max-keys", "2")
    assert c.call("MGET", "1{%s}" % tag, "2{%s}" % tag) == b"*2\r\n_\r\n_\r\n"
    assert c.call("MULTI") == b"+OK\r\n"
    config_set("tracking-table-max-keys", "1")
    got = [c.call("PING"), c.read_reply()]
    assert got[0] in (push("1{%s}" % tag), push("2{%s}" % tag))
    assert got[1] == b"+QUEUED\r\n"
    assert c.call("EXEC") == b"*1\r\n+PONG\r\n"
    assert int(info(rc, "stats")["tracking_total_keys"]) == 1


def tags_on_two_shards(rc):
    """Two hash tags whose keys live on different shards (where there are several)."""
    threads = 1 if IS_REDIS else int(rc.execute_command("CONFIG", "GET", "threads")[1])
    def shard(tag):
        return crc16(tag.encode()) % 16384 * threads // 16384
    other = next(t for t in ("f%d" % i for i in range(1000)) if threads == 1 or shard(t) != shard("e"))
    return "e", other


@pytest.mark.parametrize("same_shard", [True, False])
def test_eviction_invalidates_before_the_reply(conns, rc, config_set, same_shard):
    # Redis evicts before it runs a command: the invalidation of what went
    # comes before the command's reply. With several workers also where the
    # evicted key is on another worker's shard than the command's keys (that
    # worker evicts at the command's ask and hands the invalidation back) and
    # where the command runs on another worker than the client's.
    t = conns(resp3=True)
    vtag, btag = tags_on_two_shards(rc)
    if same_shard:
        btag = vtag
    # Each command's first call makes its latency histogram (Redis's are
    # 24 KB each): made before the limit is measured.
    for tag in (vtag, btag):
        t.call("SETEX", "warm{%s}" % tag, "10000", "x")
        t.call("GET", "warm{%s}" % tag)
        t.call("SETBIT", "warm{%s}" % tag, "8", "0")
        t.call("GETBIT", "warm{%s}" % tag, "0")
        t.call("DEL", "warm{%s}" % tag)
    t.call("CLIENT", "TRACKING", "on")
    mem = info(rc, "memory")
    used = int(mem["used_memory"]) - int(mem.get("mem_not_counted_for_evict", 0))
    config_set("maxmemory-policy", "volatile-random")
    config_set("maxmemory", str(used + 100 * 1024))
    t.call("SETEX", "volatile-key{%s}" % vtag, "10000", "x")
    t.call("GET", "volatile-key{%s}" % vtag)
    t.call("SETBIT", "big-key{%s}" % btag, "1600000", "0")  # about 200 KB: over the limit
    got = [t.call("GETBIT", "big-key{%s}" % btag, "0"), t.read_reply()]
    assert got == [push("volatile-key{%s}" % vtag), b":0\r\n"]


def tags_on_every_shard(rc):
    """A hash tag per shard (one where there is one)."""
    threads = 1 if IS_REDIS else int(rc.execute_command("CONFIG", "GET", "threads")[1])
    found = {}
    for i in range(10000):
        tag = "s%d" % i
        found.setdefault(crc16(tag.encode()) % 16384 * threads // 16384, tag)
        if len(found) == threads:
            return [found[s] for s in sorted(found)]
    raise AssertionError("no tag for every shard")


def test_an_eviction_during_pipelined_reads_is_told_once(conns, rc, config_set):
    # Reads pipelined over every shard run as a read group, whose parts may
    # be run again when a shard changes under them (an eviction does): the
    # invalidation of the key that went must still come, once, and the
    # replies be right.
    t = conns(resp3=True)
    tags = tags_on_every_shard(rc)
    for tag in tags:  # (each command's first call made before the limit is measured)
        t.call("SETEX", "warm{%s}" % tag, "10000", "x")
        t.call("GET", "warm{%s}" % tag)
        t.call("SETBIT", "warm{%s}" % tag, "8", "0")
        t.call("DEL", "warm{%s}" % tag)
        t.call("SET", "k{%s}" % tag, tag)
    t.call("CLIENT", "TRACKING", "on")
    mem = info(rc, "memory")
    used = int(mem["used_memory"]) - int(mem.get("mem_not_counted_for_evict", 0))
    config_set("maxmemory-policy", "volatile-random")
    config_set("maxmemory", str(used + 100 * 1024))
    t.call("SETEX", "vk{%s}" % tags[0], "10000", "x")
    assert t.call("GET", "vk{%s}" % tags[0]) == b"$1\r\nx\r\n"
    t.call("SETBIT", "big{%s}" % tags[-1], "1600000", "0")  # about 200 KB: over the limit
    t.send(b"".join(encode("GET", "k{%s}" % tag) for tag in tags) + encode("PING"))
    want = [b"$%d\r\n%s\r\n" % (len(tag), tag.encode()) for tag in tags] + [b"+PONG\r\n"]
    got = []
    while len(got) < len(want) + 1:  # (the push may come after the replies: a read group's part may not tell it)
        got.append(t.read_reply())
    assert [g for g in got if not g.startswith(b">")] == want
    assert [g for g in got if g.startswith(b">")] == [push("vk{%s}" % tags[0])]
    assert t.call("PING") == b"+PONG\r\n"  # nothing more came


def test_info_counts(conns, rc):
    _, tid = redirect_target(conns)
    c, b, w = conns(), conns(), conns()
    c.call("CLIENT", "TRACKING", "on", "REDIRECT", str(tid))
    w.call("MSET", "key1", "1", "key2", "2")
    c.call("GET", "key1")
    c.call("GET", "key2")
    b.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "prefix:")
    w.call("SET", "prefix:key1", "1")
    stats, clients = info(rc, "stats"), info(rc, "clients")
    assert int(stats["tracking_total_items"]) == 2
    assert int(stats["tracking_total_keys"]) == 2
    assert int(stats["tracking_total_prefixes"]) == 1
    assert int(clients["tracking_clients"]) == 2
    b.close()
    c.call("CLIENT", "TRACKING", "off")
    wait_for(lambda: int(info(rc, "clients")["tracking_clients"]) == 0)
    assert int(info(rc, "stats")["tracking_total_prefixes"]) == 0


def test_pushes_reach_a_client_with_replies_off(conns):
    t, w = conns(resp3=True), conns()
    t.call("CLIENT", "TRACKING", "on")
    w.call("SET", "foo", "bar")
    t.call("GET", "foo")
    t.send(b"*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$3\r\nOFF\r\n")
    w.call("SET", "foo", "bar2")
    assert t.read_reply() == push("foo")
    assert t.call("CLIENT", "REPLY", "ON") == b"+OK\r\n"
    assert t.call("PING") == b"+PONG\r\n"


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's workers: the keys of many shards at once")
def test_many_readers_and_writers_across_workers(server, conns):
    # Tracking clients each read every key, writers change them from other
    # connections: every reader is told of every key it read, exactly once
    # per read, and a value read after an invalidation is the new one.
    readers = [conns(resp3=True) for _ in range(4)]
    w = conns()
    keys = ["m%d" % i for i in range(64)]
    w.call("MSET", *[x for k in keys for x in (k, "0")])
    for r in readers:
        r.call("CLIENT", "TRACKING", "on")
    for rnd in range(1, 4):
        for r in readers:
            assert r.call("MGET", *keys).startswith(b"*64\r\n")
        w.call("MSET", *[x for k in keys for x in (k, str(rnd))])
        for r in readers:
            got = sorted(k for _ in keys for k in keys_of(r.read_reply()))
            assert got == sorted(keys)
            assert r.call("GET", keys[0]) == b"$1\r\n%d\r\n" % rnd
        # (The GET just made remembered keys[0] again.)
        w.call("SET", keys[0], str(rnd))
        for r in readers:
            assert r.read_reply() == push(keys[0])
