# WATCH / UNWATCH (issue #19): a watched key changed by anyone (a command of
# any client, expiry, eviction, FLUSHDB / FLUSHALL, SWAPDB, RENAME, MOVE ...)
# makes the next EXEC reply a null array and run nothing; a write that
# changes nothing leaves the watch alone, as in Redis. The table of writes
# passes against TEST_SERVER=redis too: its expectations are Redis's.
# Keys on several shards (--threads 4) and an optimistic-locking stress test
# (WATCH, read, MULTI, write, EXEC, retry) that must never lose an update.
import threading
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, client_fields, config_set, info_dict, rc  # noqa: F401  (fixtures)
from test_atomicity import keys_on_distinct_shards, run_for, sharded  # noqa: F401  (fixture)

OK = b"+OK\r\n"
QUEUED = b"+QUEUED\r\n"
PONG_ARRAY = b"*1\r\n+PONG\r\n"
NULL_ARRAY = b"*-1\r\n"


def exec_ping(c):
    """MULTI / PING / EXEC on `c`: the raw reply of EXEC."""
    assert c.call("MULTI") == OK
    assert c.call("PING") == QUEUED
    return c.call("EXEC")


def run(r, line):
    """Runs the ';'-separated commands; an error reply is an outcome (INCR of
    a non-number changes nothing), not a failure."""
    for part in line.split(";"):
        part = part.strip()
        if part:
            try:
                r.execute_command(*part.split())
            except redis.ResponseError:
                pass


# (setup, command by another client, whether the watched key `k` changed)
WRITES = [
    # strings
    ("set k a", "set k a", True),
    ("", "set k v nx", True),
    ("set k a", "set k w nx", False),
    ("", "set k w xx", False),
    ("set k a", "set k w get", True),
    ("", "setnx k v", True),
    ("set k a", "setnx k v", False),
    ("set k a", "setex k 100 v", True),
    ("set k 1", "incr k", True),
    ("set k a", "incr k", False),
    ("set k 1", "decrby k 3", True),
    ("set k 1", "incrbyfloat k 1.5", True),
    ("set k a", "append k b", True),
    ("", "append k b", True),
    ("set k a", "setrange k 0 b", True),
    ("set k a", "getset k b", True),
    ("set k a", "getdel k", True),
    ("", "getdel k", False),
    ("set k a", "getex k", False),
    ("set k a", "getex k persist", False),
    ("set k a ex 100", "getex k persist", True),
    ("set k a", "getex k ex 100", True),
    ("set k a", "mset x 1 k 2", True),
    ("set k a", "msetnx k 2 y 1", False),
    ("set k a", "get k", False),
    ("set k a", "strlen k", False),
    # keys
    ("set k a", "del k", True),
    ("", "del k", False),
    ("set k a", "del x", False),
    ("set k a", "unlink x k", True),
    ("set k a", "expire k 100", True),
    ("", "expire k 100", False),
    ("set k a", "expire k 100 xx", False),
    ("set k a", "pexpireat k 1", True),
    ("set k a", "persist k", False),
    ("set k a ex 100", "persist k", True),
    ("set k a", "rename k k2", True),
    ("set j a", "rename j k", True),
    ("set j a; set k b", "renamenx j k", False),
    ("set k a", "rename k k", False),
    ("set j a", "copy j k", True),
    ("set j a; set k b", "copy j k", False),
    ("set j a; set k b", "copy j k replace", True),
    ("set k a", "copy k j", False),
    ("set k a", "move k 1", True),
    ("set k a", "touch k", False),
    ("set k a", "type k", False),
    ("set k a", "exists k", False),
    ("set k a", "object encoding k", False),
    # hashes
    ("", "hset k f v", True),
    ("hset k f v", "hset k f v", True),
    ("hset k f v", "hsetnx k f w", False),
    ("hset k f v", "hsetnx k g w", True),
    ("hset k f v", "hdel k g", False),
    ("hset k f v", "hdel k f", True),
    ("hset k f 1", "hincrby k f 1", True),
    ("hset k f 1", "hincrbyfloat k f 1", True),
    ("hset k f v", "hget k f", False),
    # sets
    ("sadd k a", "sadd k a", False),
    ("sadd k a", "sadd k b", True),
    ("sadd k a", "srem k b", False),
    ("sadd k a", "srem k a", True),
    ("sadd k a", "spop k", True),
    ("", "spop k", False),
    ("sadd k a b c", "spop k 2", True),
    ("sadd k a", "smove k d b", False),
    ("sadd k a", "smove k d a", True),
    ("sadd j a", "smove j k a", True),
    ("sadd j a", "sinterstore k j", True),
    ("", "sinterstore k j", False),
    ("sadd k a", "sinterstore k j", True),
    ("sadd j a; sadd k a", "sinterstore x j k", False),
    ("sadd j a", "sunionstore k j", True),
    ("sadd k a", "sdiffstore k j", True),
    # lists
    ("", "lpush k a", True),
    ("", "lpushx k a", False),
    ("rpush k a", "rpushx k b", True),
    ("rpush k a", "lpop k", True),
    ("", "lpop k", False),
    ("rpush k a b", "rpop k 0", False),
    ("rpush k a", "lrem k 0 b", False),
    ("rpush k a", "lrem k 0 a", True),
    ("rpush k a", "linsert k before b c", False),
    ("rpush k a", "linsert k before a c", True),
    ("rpush k a", "lset k 0 b", True),
    ("rpush k a b", "ltrim k 0 -1", True),
    ("rpush j a", "lmove j k left left", True),
    ("rpush k a", "lmove k j left left", True),
    ("rpush k a b", "rpoplpush k k", True),
    ("rpush k a", "lmpop 1 k left", True),
    ("rpush k a", "blpop k 1", True),
    ("rpush k a", "lrange k 0 -1", False),
    # sorted sets
    ("", "zadd k 1 a", True),
    ("zadd k 1 a", "zadd k 1 a", False),
    ("zadd k 1 a", "zadd k 2 a", True),
    ("zadd k 1 a", "zadd k nx 2 a", False),
    ("zadd k 1 a", "zadd k xx 1 b", False),
    ("zadd k 1 a", "zincrby k 1 a", True),
    ("zadd k 1 a", "zrem k b", False),
    ("zadd k 1 a", "zrem k a", True),
    ("zadd k 1 a", "zremrangebyscore k 5 6", False),
    ("zadd k 1 a", "zremrangebyscore k 0 6", True),
    ("zadd k 1 a", "zremrangebyrank k 0 0", True),
    ("zadd k 1 a", "zpopmin k", True),
    ("", "zpopmax k", False),
    ("zadd k 1 a", "bzpopmin k 1", True),
    ("zadd k 1 a", "zmpop 1 k min", True),
    ("zadd j 1 a", "zunionstore k 1 j", True),
    ("zadd k 1 a", "zinterstore k 1 j", True),
    ("", "zinterstore k 1 j", False),
    ("zadd j 1 a", "zrangestore k j 0 -1", True),
    ("zadd k 1 a", "zrangestore k j 0 -1", True),
    ("", "zrangestore k j 0 -1", False),
    ("zadd k 1 a", "zrange k 0 -1", False),
    # geo
    ("", "geoadd k 13.361389 38.115556 a", True),
    ("geoadd j 13.361389 38.115556 a", "geosearchstore k j fromlonlat 13 38 byradius 500 km", True),
    ("set k a", "georadius j 13 38 500 km store k", True),
    ("", "georadius j 13 38 500 km store k", False),
    # whole databases
    ("set k a", "flushdb", True),
    ("set x a", "flushdb", False),
    ("set k a", "flushall", True),
    ("", "flushall", False),
    ("set k a", "swapdb 0 1", True),
    ("select 1; set k a; select 0", "swapdb 0 1", True),
    ("select 1; set x a; select 0; set x b", "swapdb 0 1", False),
]


@pytest.mark.parametrize("setup,command,changed", WRITES, ids=[w[1] + ("" if not w[0] else " after " + w[0])
                                                                  for w in WRITES])
def test_watch_sees_exactly_the_writes_that_change_the_key(server, rc, setup, command, changed):
    rc.flushall()
    run(rc, setup)
    with Conn(server) as c:
        assert c.call("WATCH", "k") == OK
        run(rc, command)
        assert exec_ping(c) == (NULL_ARRAY if changed else PONG_ARRAY)


def test_exec_unwatches_whatever_its_outcome(server, rc):
    with Conn(server) as c:
        assert c.call("WATCH", "k") == OK
        assert exec_ping(c) == PONG_ARRAY
        rc.set("k", "1")  # no longer watched
        assert exec_ping(c) == PONG_ARRAY
        assert c.call("WATCH", "k") == OK
        rc.set("k", "2")
        assert exec_ping(c) == NULL_ARRAY
        rc.set("k", "3")
        assert exec_ping(c) == PONG_ARRAY


def test_unwatch_discard_and_reset_forget_the_watch(server, rc):
    with Conn(server) as c:
        assert c.call("UNWATCH") == OK  # nothing watched: still OK
        for forget in (("UNWATCH",), ("DISCARD",), ("RESET",)):
            assert c.call("WATCH", "k", "j") == OK
            rc.set("k", "1")  # dirty: forgetting clears that too
            if forget[0] == "DISCARD":
                assert c.call("MULTI") == OK
            assert c.call(*forget) == (b"+RESET\r\n" if forget[0] == "RESET" else OK)
            rc.set("j", "1")
            assert exec_ping(c) == PONG_ARRAY


def test_watch_inside_multi_is_refused_without_dooming_the_transaction(server, rc):
    with Conn(server) as c:
        assert c.call("MULTI") == OK
        assert c.call("WATCH", "k") == b"-ERR WATCH inside MULTI is not allowed\r\n"
        assert c.call("SET", "k", "v") == QUEUED
        assert c.call("EXEC") == b"*1\r\n+OK\r\n"
        # UNWATCH inside MULTI is queued, as in Redis.
        assert c.call("MULTI") == OK
        assert c.call("UNWATCH") == QUEUED
        assert c.call("EXEC") == b"*1\r\n+OK\r\n"
        assert c.call("WATCH") == b"-ERR wrong number of arguments for 'watch' command\r\n"


def test_watch_remembers_the_database(server, rc):
    with Conn(server) as c:
        assert c.call("SELECT", "1") == OK
        assert c.call("WATCH", "k") == OK
        rc.set("k", "db0")  # another database's k
        assert exec_ping(c) == PONG_ARRAY
        assert c.call("WATCH", "k") == OK
        assert c.call("SELECT", "0") == OK  # the watch stays on database 1's k
        rc.execute_command("SELECT", "1")
        rc.set("k", "db1")
        rc.execute_command("SELECT", "0")
        assert exec_ping(c) == NULL_ARRAY


def test_a_key_that_expires_after_watch_fails_exec(server, rc):
    """Redis 7: EXEC fails once a watched key's deadline has passed, whether or
    not anything deleted it yet."""
    rc.set("k", "v", px=150)
    with Conn(server) as c:
        assert c.call("WATCH", "k") == OK
        time.sleep(0.3)
        assert exec_ping(c) == NULL_ARRAY
        # A deadline that has not passed is no change.
        rc.set("k", "v", ex=100)
        assert c.call("WATCH", "k") == OK
        assert exec_ping(c) == PONG_ARRAY


@pytest.fixture
def debug_server(start_server):
    return start_server("--enable-debug-command", "yes")


def test_stale_keys_count_as_missing(debug_server):
    """A key already expired when watched (active expiry off, so it is still
    there) is missing for WATCH: its deletion, FLUSHDB or a SWAPDB that
    keeps it missing are no change; a live key in its place is one."""
    r = debug_server.client()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    with Conn(debug_server) as c:
        for touch, changed in ((["del", "k"], False), (["flushdb"], False), (["swapdb", "0", "1"], False),
                               (["set", "k", "new"], True)):
            r.flushall()
            r.set("k", "v", px=1)
            time.sleep(0.02)
            assert c.call("WATCH", "k") == OK
            r.execute_command(*touch)
            assert exec_ping(c) == (NULL_ARRAY if changed else PONG_ARRAY), touch
        # A missing key replaced by a stale one (SWAPDB): still missing.
        r.flushall()
        r.execute_command("SELECT", "1")
        r.set("k", "v", px=1)
        r.execute_command("SELECT", "0")
        time.sleep(0.02)
        assert c.call("WATCH", "k") == OK
        r.execute_command("SWAPDB", "0", "1")
        assert exec_ping(c) == PONG_ARRAY
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_eviction_of_a_watched_key_fails_exec(server, rc, config_set):
    rc.set("k", "v")
    rc.set("filler", "x" * 100000)
    with Conn(server) as c:
        assert c.call("WATCH", "k") == OK
        config_set("maxmemory-policy", "allkeys-random")
        config_set("maxmemory", "1")
        try:
            rc.set("other", "x")  # evicts everything (and may still be over the limit)
        except redis.ResponseError:
            pass
        deadline = time.monotonic() + 5
        while rc.exists("k") and time.monotonic() < deadline:  # (other shards evict when told)
            time.sleep(0.01)
        config_set("maxmemory", "0")
        assert rc.exists("k") == 0
        assert exec_ping(c) == NULL_ARRAY


@pytest.mark.skipif(IS_REDIS, reason="hash field expiry is Redis 7.4's")
def test_hash_fields_expiring_change_the_key(server, rc):
    rc.hset("k", mapping={"f": "1", "g": "2"})
    rc.execute_command("HPEXPIRE", "k", "100", "FIELDS", "1", "f")
    with Conn(server) as c:
        assert c.call("WATCH", "k") == OK
        time.sleep(0.3)  # the active cycle removes f
        assert exec_ping(c) == NULL_ARRAY
    assert rc.hgetall("k") == [b"g", b"2"]


def test_watch_state_shows_in_client_list_and_info(server, rc):
    def watcher():
        for line in rc.execute_command("CLIENT", "LIST").decode().splitlines():
            _, d = client_fields(line)
            if d["name"] == "watcher":
                return d
        raise AssertionError("no watcher")

    with Conn(server) as c:
        assert c.call("CLIENT", "SETNAME", "watcher") == OK
        assert c.call("WATCH", "a", "b", "a") == OK
        info = info_dict(rc.execute_command("INFO", "clients"))
        if not IS_REDIS:  # (fields of Redis 7.4; Debian's is 7.0)
            assert info["watching_clients"] == "1" and info["total_watched_keys"] == "2"
        assert "d" not in watcher()["flags"]
        rc.set("a", "1")
        assert "d" in watcher()["flags"]  # EXEC will fail
        assert exec_ping(c) == NULL_ARRAY
        assert watcher()["flags"] == "N"
        deadline = time.monotonic() + 5
        while info_dict(rc.execute_command("INFO", "clients")).get("total_watched_keys", "0") != "0":
            assert time.monotonic() < deadline  # (other shards' entries go by mail)
            time.sleep(0.01)


def test_keys_on_every_shard(sharded):
    r = sharded.client()
    keys = keys_on_distinct_shards("w", 8)
    for i, k in enumerate(keys):
        with Conn(sharded) as c:
            assert c.call("WATCH", *keys) == OK
            other = keys[(i + 1) % len(keys)]
            assert c.call("GET", other).startswith(b"$")  # reads do not touch
            r.set(k, "changed")
            assert exec_ping(c) == NULL_ARRAY
            assert c.call("WATCH", *keys) == OK
            assert exec_ping(c) == PONG_ARRAY
    deadline = time.monotonic() + 5
    while r.info("clients").get("total_watched_keys", 0) != 0:  # (other shards' entries go by mail)
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_optimistic_transfers_never_lose_an_update(sharded):
    """Clients move units between accounts on different shards with WATCH /
    GET / MULTI / SET / EXEC and retry when EXEC fails; one counts its
    successes in a ledger key in the same transaction. At the end the total
    is unchanged and the ledger matches the successes: no lost update."""
    accounts = keys_on_distinct_shards("acct", 4)
    r = sharded.client()
    for a in accounts:
        r.set(a, 1000)
    r.set("ledger", 0)
    done, errors = [0], []
    deadline = time.monotonic() + 3.0
    lock = threading.Lock()

    def mover(n):
        c = sharded.client()
        i = n
        try:
            while time.monotonic() < deadline:
                src, dst = accounts[i % 4], accounts[(i + 1 + n) % 4]
                i += 1
                if src == dst:
                    continue
                with c.pipeline() as p:
                    try:
                        p.watch(src, dst, "ledger")
                        s, d, ledger = int(p.get(src)), int(p.get(dst)), int(p.get("ledger"))
                        p.multi()
                        p.set(src, s - 1)
                        p.set(dst, d + 1)
                        p.set("ledger", ledger + 1)
                        p.execute()
                        with lock:
                            done[0] += 1
                    except redis.WatchError:
                        continue
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    run_for([threading.Thread(target=mover, args=(n,)) for n in range(4)])
    assert not errors, errors
    assert done[0] > 0
    assert sum(int(r.get(a)) for a in accounts) == 4000
    assert int(r.get("ledger")) == done[0]
