# Blocking list commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP. Timeouts (sub-second,
# 0 = for ever), several keys, first come first served, a push serving several clients,
# BLMOVE's destination served in turn, key type changes, RENAME/MOVE/COPY/SWAPDB waking
# clients, CLIENT UNBLOCK, CLIENT LIST and INFO, disconnects, the pipeline behind a
# blocked command, keys on different shards, and a stress run (every item popped once).
import glob
import random
import threading
import time

import pytest
import redis

from conftest import IS_REDIS, ServerProcess
from helpers import (  # noqa: F401  (fixtures)
    NOT_INT, SYNTAX, WRONGTYPE, Conn, arity, blocked_clients, bulk, encode, fails, pop_everything, raises, rc, rc3,
    wait_blocked, wait_for, waiters)

skip_72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 behaviour; Debian ships 7.0")

# Keys that land on different shards with --threads 4 (and one shard with --threads 1).
SPREAD = ("a", "b", "c", "x", "y", "z")


def blocking_keys(c):
    """INFO total_blocking_keys (Redis 7.2; None on 7.0)."""
    info = c.execute_command("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("total_blocking_keys:"):
            return int(line.split(":")[1])
    assert IS_REDIS, info
    return None


def pair(k, v):
    return b"*2\r\n" + bulk(k) + bulk(v)


def test_immediate_pops(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("BLPOP", "missing", "l", 1) == [b"l", b"a"]
    assert rc.execute_command("BRPOP", "l", "missing", 1) == [b"l", b"c"]
    assert rc.execute_command("BLMOVE", "l", "d", "LEFT", "RIGHT", 1) == b"b"
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("LRANGE", "d", 0, -1) == [b"b"]
    rc.execute_command("RPUSH", "m", 1, 2, 3)
    assert rc.execute_command("BRPOPLPUSH", "m", "d", 0) == b"3"
    assert rc.execute_command("LRANGE", "d", 0, -1) == [b"3", b"b"]
    assert rc.execute_command("BLMPOP", 0, 2, "nope", "m", "LEFT", "COUNT", 5) == [b"m", [b"1", b"2"]]
    assert rc.execute_command("BLMPOP", 1, 1, "d", "RIGHT") == [b"d", [b"b"]]


def test_first_nonempty_key_in_argument_order(rc):
    rc.execute_command("RPUSH", "k2", "two")
    rc.execute_command("RPUSH", "k3", "three")
    assert rc.execute_command("BLPOP", "k1", "k2", "k3", 0) == [b"k2", b"two"]
    assert rc.execute_command("BLPOP", "k3", "k2", 0) == [b"k3", b"three"]


def test_wrong_type_replies_at_once(rc):
    rc.execute_command("SET", "s", "x")
    rc.execute_command("RPUSH", "l", "a")
    fails(rc, WRONGTYPE, ("BLPOP", "s", 0), ("BRPOP", "missing", "s", 0), ("BLMOVE", "s", "d", "LEFT", "LEFT", 0),
          ("BRPOPLPUSH", "s", "d", 0), ("BLMPOP", 0, 1, "s", "LEFT"), ("BLMOVE", "l", "s", "LEFT", "LEFT", 0))
    assert rc.execute_command("BLPOP", "l", "s", 0) == [b"l", b"a"]  # a list before the string serves


def test_timeouts(server, rc):
    for cmd, null in ((("BLPOP", "q", 0.05), None), (("BRPOP", "q", "q2", "0.05"), None),
                      (("BLMOVE", "q", "d", "LEFT", "LEFT", 0.05), None), (("BRPOPLPUSH", "q", "d", ".05"), None),
                      (("BLMPOP", 0.05, 1, "q", "LEFT"), None)):
        t = time.monotonic()
        assert rc.execute_command(*cmd) is null
        elapsed = time.monotonic() - t
        assert 0.04 <= elapsed < 1.0, (cmd, elapsed)
    # The wire forms: a null array for the pops, a null bulk for the moves; RESP3 null.
    with Conn(server, timeout=10) as c:
        assert c.call("BLPOP", "q", 0.01) == b"*-1\r\n"
        assert c.call("BLMPOP", 0.01, 1, "q", "RIGHT") == b"*-1\r\n"
        # A null array for the moves too (Redis's reply to every list wait that times out).
        assert c.call("BLMOVE", "q", "d", "LEFT", "LEFT", 0.01) == b"*-1\r\n"
        assert c.call("BRPOPLPUSH", "q", "d", 0.01) == b"*-1\r\n"
        assert c.call("HELLO", "3").startswith(b"%")
        assert c.call("BLPOP", "q", 0.01) == b"_\r\n"
        assert c.call("BLMOVE", "q", "d", "LEFT", "LEFT", 0.01) == b"_\r\n"
    assert blocked_clients(rc) == 0


def test_timeout_errors(rc):
    fails(rc, "timeout is not a float or out of range",
          ("BLPOP", "q", "abc"), ("BLPOP", "q", "nan"), ("BLPOP", "q", " 1"), ("BLPOP", "q", ""),
          ("BRPOP", "q", "1x"), ("BLMOVE", "q", "d", "LEFT", "LEFT", "x"), ("BRPOPLPUSH", "q", "d", "x"),
          ("BLMPOP", "x", 1, "q", "LEFT"))
    fails(rc, "timeout is negative", ("BLPOP", "q", -1), ("BRPOP", "q", "-0.5"),
          ("BLMOVE", "q", "d", "LEFT", "LEFT", -2), ("BRPOPLPUSH", "q", "d", -1), ("BLMPOP", -1, 1, "q", "LEFT"))
    # Checked before the keys: a wrong-type key does not hide a bad timeout.
    rc.execute_command("SET", "s", "x")
    fails(rc, "timeout is negative", ("BLPOP", "s", -1))
    # A timeout between -1 ms and 0 rounds to 0 (wait for ever); above 0 it never does.
    rc.execute_command("RPUSH", "q", "a", "b")
    assert rc.execute_command("BLPOP", "q", "-0.0001") == [b"q", b"a"]
    assert rc.execute_command("BLPOP", "q", "0x10") == [b"q", b"b"]  # strtold reads hex, as Redis


@skip_72
def test_timeout_out_of_range(rc):
    # Redis 7.0 casts these to a negative number; 7.2 says what they are.
    fails(rc, "timeout is out of range", ("BLPOP", "q", "inf"), ("BLPOP", "q", "1e18"),
          ("BLPOP", "q", "9223372036854775"), ("BLMPOP", "1e400", 1, "q", "LEFT"))


def test_argument_errors(rc):
    fails(rc, arity("blpop"), ("BLPOP",), ("BLPOP", "q"))
    fails(rc, arity("blmove"), ("BLMOVE", "a", "b", "LEFT", "LEFT"))
    fails(rc, arity("blmpop"), ("BLMPOP", 0, 1, "a"))
    fails(rc, SYNTAX, ("BLMOVE", "a", "b", "UP", "LEFT", 0), ("BLMOVE", "a", "b", "LEFT", "DOWN", 0),
          ("BLMPOP", 0, 1, "a", "MIDDLE"), ("BLMPOP", 0, 2, "a", "LEFT"), ("BLMPOP", 0, 1, "a", "LEFT", "COUNT"),
          ("BLMPOP", 0, 1, "a", "LEFT", "COUNT", 1, "COUNT", 1), ("BLMPOP", 0, 1, "a", "LEFT", "x"))
    fails(rc, "numkeys should be greater than 0", ("BLMPOP", 0, 0, "a", "LEFT"), ("BLMPOP", 0, "x", "a", "LEFT"))
    fails(rc, "count should be greater than 0", ("BLMPOP", 0, 1, "a", "LEFT", "COUNT", 0),
          ("BLMPOP", 0, 1, "a", "LEFT", "COUNT", -1))
    # The direction is checked before the timeout (as Redis's blmoveCommand), and
    # BLMPOP's timeout after every other argument.
    fails(rc, SYNTAX, ("BLMOVE", "a", "b", "UP", "LEFT", "x"), ("BLMPOP", -1, 1, "a", "LEFT", "COUNT"),
          ("BLMPOP", -1, 5, "a", "LEFT"), ("BLMPOP", "x", 1, "a", "UP"))
    fails(rc, "numkeys should be greater than 0", ("BLMPOP", -1, 0, "a", "LEFT"))
    fails(rc, "count should be greater than 0", ("BLMPOP", "x", 1, "a", "LEFT", "COUNT", 0))
    assert blocked_clients(rc) == 0


@pytest.mark.parametrize("key", SPREAD)
def test_push_serves_a_blocked_client(rc, waiters, key):
    w = waiters("BLPOP", key, 5)
    assert rc.execute_command("RPUSH", key, "a", "b") == 2  # the length after the push, as Redis
    assert w.reply() == pair(key.encode(), b"a")
    assert rc.execute_command("LRANGE", key, 0, -1) == [b"b"]
    w2 = waiters("BRPOP", key + "2", key + "3", 0)
    rc.execute_command("LPUSH", key + "3", "x", "y")
    assert w2.reply() == pair((key + "3").encode(), b"x")
    assert blocked_clients(rc) == 0


@pytest.mark.parametrize("pop", ["BLPOP", "BLMPOP"])
def test_sort_store_serves_a_blocked_client(rc, waiters, pop):
    # (Redis's "$pop when result key is created by SORT..STORE": the stored
    # list wakes the waiter, the source on another shard or not.)
    for src in ("notfoo{t}", "elsewhere"):
        rc.execute_command("DEL", "foo{t}")
        w = waiters(*((pop, "foo{t}", 5) if pop == "BLPOP" else (pop, 5, 1, "foo{t}", "LEFT")))
        rc.execute_command("LPUSH", src, "hello", "hola", "aguacate", "konichiwa", "zanzibar")
        assert rc.execute_command("SORT", src, "ALPHA", "STORE", "foo{t}") == 5
        if pop == "BLPOP":
            assert w.reply() == pair(b"foo{t}", b"aguacate")
        else:
            assert w.reply() == b"*2\r\n" + bulk(b"foo{t}") + b"*1\r\n" + bulk(b"aguacate")
        assert rc.execute_command("LLEN", "foo{t}") == 4
        rc.execute_command("DEL", src)
    assert blocked_clients(rc) == 0


def test_first_come_first_served(rc, waiters):
    ws = [waiters("BLPOP", "q", 5) for _ in range(3)]
    # One push with several items serves several clients, oldest first.
    assert rc.execute_command("RPUSH", "q", "1", "2") == 2
    assert ws[0].reply() == pair(b"q", b"1")
    assert ws[1].reply() == pair(b"q", b"2")
    wait_blocked(rc, 1)
    assert rc.execute_command("EXISTS", "q") == 0
    rc.execute_command("LPUSH", "q", "3", "4")  # [4, 3]
    assert ws[2].reply() == pair(b"q", b"4")
    assert rc.execute_command("LRANGE", "q", 0, -1) == [b"3"]


def test_blmpop_served_with_count(rc, waiters):
    w = waiters("BLMPOP", 0, 2, "m1", "m2", "RIGHT", "COUNT", 3)
    rc.execute_command("RPUSH", "m2", "a", "b", "c", "d")
    assert w.reply() == b"*2\r\n" + bulk(b"m2") + b"*3\r\n" + bulk(b"d") + bulk(b"c") + bulk(b"b")
    assert rc.execute_command("LRANGE", "m2", 0, -1) == [b"a"]


@pytest.mark.parametrize("src,dst", [("s", "d"), ("a", "x"), ("{t}s", "{t}d"), ("q", "q")])
def test_blmove_served(rc, waiters, src, dst):
    w = waiters("BLMOVE", src, dst, "RIGHT", "LEFT", 5)
    rc.execute_command("RPUSH", src, "1", "2")
    assert w.reply() == bulk(b"2")
    if src == dst:
        assert rc.execute_command("LRANGE", src, 0, -1) == [b"2", b"1"]
    else:
        assert rc.execute_command("LRANGE", src, 0, -1) == [b"1"]
        assert rc.execute_command("LRANGE", dst, 0, -1) == [b"2"]
    w2 = waiters("BRPOPLPUSH", "e" + src, dst, 5)
    rc.execute_command("LPUSH", "e" + src, "z")
    assert w2.reply() == bulk(b"z")
    assert rc.execute_command("LINDEX", dst, 0) == b"z"


def test_blmove_destination_served_in_turn(rc, waiters):
    # A moves src -> mid, B moves mid -> dst, C pops dst: one push feeds the chain.
    a = waiters("BLMOVE", "src", "mid", "LEFT", "RIGHT", 5)
    b = waiters("BLMOVE", "mid", "dst", "LEFT", "RIGHT", 5)
    c = waiters("BLPOP", "dst", 5)
    rc.execute_command("RPUSH", "src", "item")
    assert a.reply() == bulk(b"item")
    assert b.reply() == bulk(b"item")
    assert c.reply() == pair(b"dst", b"item")
    assert rc.execute_command("EXISTS", "src", "mid", "dst") == 0


def test_blmove_to_wrong_type_destination(rc, waiters):
    rc.execute_command("SET", "dst", "string")
    w = waiters("BLMOVE", "src", "dst", "LEFT", "LEFT", 5)
    rc.execute_command("RPUSH", "src", "a")
    assert w.reply() == b"-" + WRONGTYPE.encode() + b"\r\n"
    assert rc.execute_command("LRANGE", "src", 0, -1) == [b"a"]  # the item stays


def test_type_change_and_delete_keep_waiting(rc, waiters):
    w = waiters("BLPOP", "k", 5)
    rc.execute_command("SET", "k", "string")
    rc.execute_command("DEL", "k")
    rc.execute_command("SADD", "k", "member")
    time.sleep(0.05)
    assert blocked_clients(rc) == 1
    rc.execute_command("DEL", "k")
    rc.execute_command("RPUSH", "k", "v")
    assert w.reply() == pair(b"k", b"v")


@pytest.mark.parametrize("src", ["src", "{k}src"])
def test_rename_copy_move_serve(rc, waiters, src):
    rc.execute_command("RPUSH", src, "r1", "r2")
    w = waiters("BLPOP", "k", 5)
    assert rc.execute_command("RENAME", src, "k") == b"OK"
    assert w.reply() == pair(b"k", b"r1")
    rc.execute_command("DEL", "k")
    rc.execute_command("RPUSH", src, "c1")
    w = waiters("BRPOP", "k", 5)
    assert rc.execute_command("COPY", src, "k") == 1
    assert w.reply() == pair(b"k", b"c1")
    assert rc.execute_command("LRANGE", src, 0, -1) == [b"c1"]


def test_move_and_swapdb_serve(server, rc, waiters):
    w = waiters("BLPOP", "k", 5)  # in database 0
    rc.execute_command("SELECT", 1)
    rc.execute_command("RPUSH", "k", "from1")
    assert rc.execute_command("MOVE", "k", 0) == 1
    assert w.reply() == pair(b"k", b"from1")
    w = waiters("BLPOP", "k", 5)
    rc.execute_command("RPUSH", "k", "swapped")  # still database 1
    assert rc.execute_command("SWAPDB", 0, 1) == b"OK"
    assert w.reply() == pair(b"k", b"swapped")
    rc.execute_command("SELECT", 0)


def test_client_unblock(rc, waiters):
    w = waiters("BLPOP", "q", 0)
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id) == 1
    assert w.reply() == b"*-1\r\n"
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id) == 0  # not blocked any more
    w = waiters("BLMOVE", "q", "d", "LEFT", "LEFT", 0)
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id, "timeout") == 1
    assert w.reply() == b"*-1\r\n"
    w = waiters("BRPOP", "q", "q2", 0)
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id, "ERROR") == 1
    assert w.reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    # The client goes on: its next command runs.
    assert w.conn.call("PING") == b"+PONG\r\n"
    assert rc.execute_command("CLIENT", "UNBLOCK", 999999) == 0
    fails(rc, "CLIENT UNBLOCK reason should be TIMEOUT or ERROR", ("CLIENT", "UNBLOCK", w.id, "later"),
          ("CLIENT", "UNBLOCK", "abc", "later"))
    fails(rc, NOT_INT, ("CLIENT", "UNBLOCK", "abc"))
    fails(rc, arity("client|unblock"), ("CLIENT", "UNBLOCK"))
    fails(rc, "unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.",
          ("CLIENT", "UNBLOCK", 1, "timeout", "x"))
    # Nothing was left registered: a push stays in the list.
    rc.execute_command("RPUSH", "q", "kept")
    assert rc.execute_command("LRANGE", "q", 0, -1) == [b"kept"]


def commandstat(c, name):
    """INFO commandstats' calls and failed_calls of `name`."""
    for line in c.execute_command("INFO", "commandstats").decode().split("\r\n"):
        if line.startswith("cmdstat_%s:" % name):
            fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            return int(fields["calls"]), int(fields["failed_calls"])
    return 0, 0


def total_commands(c):
    for line in c.execute_command("INFO", "stats").decode().split("\r\n"):
        if line.startswith("total_commands_processed:"):
            return int(line.split(":")[1])
    raise AssertionError("no total_commands_processed")


def test_command_stats_count_waits_at_their_end(rc, waiters):
    # As Redis: a command that waited counts once its wait is over (served,
    # timed out or unblocked), as a failed call if that was an error; the
    # command that served it does not count its errors or time.
    rc.execute_command("CONFIG", "RESETSTAT")
    assert rc.execute_command("BLPOP", "nothing", 0.01) is None
    w = waiters("BLPOP", "q", 0)
    rc.execute_command("RPUSH", "q", "v")
    assert w.reply() == pair(b"q", b"v")
    w = waiters("BLPOP", "q", 0)
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id, "ERROR") == 1
    assert w.reply().startswith(b"-UNBLOCKED")
    assert commandstat(rc, "blpop") == (3, 1)
    assert commandstat(rc, "rpush") == (1, 0)
    # A served BLMOVE that finds a string at its destination replies
    # WRONGTYPE: its failure, not the push's.
    rc.execute_command("SET", "str", "x")
    w = waiters("BLMOVE", "src", "str", "LEFT", "LEFT", 0)
    rc.execute_command("RPUSH", "src", "m")
    assert w.reply().startswith(b"-WRONGTYPE")
    assert commandstat(rc, "rpush") == (2, 0)
    assert commandstat(rc, "blmove") == (1, 1)
    before = total_commands(rc)
    assert rc.execute_command("BLPOP", "nothing", 0.01) is None
    assert total_commands(rc) == before + 2  # the BLPOP and the first INFO


@pytest.mark.skipif(IS_REDIS, reason="a re-run wait exists in Peregrine only")
def test_a_wait_that_blocks_again_keeps_its_deadline(rc, waiters):
    # A wait over keys on several shards, served from one of them, runs its
    # command again on its own worker; a client waiting on that key alone
    # takes the item meanwhile, and the first blocks again: with the
    # deadline it had. (On one thread it is served at once instead.)
    start = time.monotonic()
    a = waiters("BLPOP", *SPREAD, 1)
    b = waiters("BLPOP", "x", 5)
    time.sleep(0.5)
    rc.execute_command("RPUSH", "x", "v")
    got = a.reply()
    if got == pair(b"x", b"v"):
        return  # served in place
    assert got == b"*-1\r\n"
    assert time.monotonic() - start < 1.4  # not 1.5 s and more: the deadline did not start again
    assert b.reply() == pair(b"x", b"v")


def test_client_list_and_info(rc, waiters):
    w = waiters("BLPOP", "q1", "q2", 0)
    w2 = waiters("BLMOVE", "q2", "d", "LEFT", "LEFT", 0)
    lines = rc.execute_command("CLIENT", "LIST").decode().splitlines()
    mine = [l for l in lines if ("id=%d " % w.id) in l]
    assert len(mine) == 1 and " flags=b " in mine[0] and " cmd=blpop " in mine[0], mine
    assert " cmd=blmove " in [l for l in lines if ("id=%d " % w2.id) in l][0]
    info = rc.execute_command("INFO", "clients").decode()
    assert "blocked_clients:2\r\n" in info
    assert blocking_keys(rc) in (2, None)  # q1 and q2
    rc.execute_command("CLIENT", "UNBLOCK", w.id)
    rc.execute_command("CLIENT", "UNBLOCK", w2.id)
    w.reply(), w2.reply()
    info = rc.execute_command("INFO", "clients").decode()
    assert "blocked_clients:0\r\n" in info and blocking_keys(rc) in (0, None)


def test_timeout_table_in_info(rc, waiters):
    waiters("BLPOP", "q", 30)
    waiters("BLPOP", "q", 0)
    info = rc.execute_command("INFO", "clients").decode()
    assert "clients_in_timeout_table:1\r\n" in info


def test_disconnect_forgets_the_client(rc, waiters):
    w = waiters("BLPOP", "q", 0)
    w2 = waiters("BLPOP", "q", 0)
    w.close()
    wait_blocked(rc, 1)
    rc.execute_command("RPUSH", "q", "one", "two")
    assert w2.reply() == pair(b"q", b"one")
    assert rc.execute_command("LRANGE", "q", 0, -1) == [b"two"]
    w2.close()
    wait_blocked(rc, 0)
    assert blocking_keys(rc) in (0, None)


def test_pipeline_after_blocked_command_waits(rc, waiters, server):
    c = Conn(server, timeout=10)
    try:
        c.send(encode("BLPOP", "q", 5) + encode("SET", "after", "1") + encode("GET", "after"))
        wait_blocked(rc, 1)
        assert rc.execute_command("GET", "after") is None  # not run yet
        rc.execute_command("RPUSH", "q", "v")
        assert c.read_reply() == pair(b"q", b"v")
        assert c.read_reply() == b"+OK\r\n"
        assert c.read_reply() == bulk(b"1")
    finally:
        c.close()


def test_pipeline_before_blocked_command_runs(rc, server):
    c = Conn(server, timeout=10)
    try:
        # Commands for other shards first, then the blocking one, then more.
        c.send(b"".join(encode("SET", k, k) for k in SPREAD) + encode("BLPOP", "q", 0.05) +
               b"".join(encode("GET", k) for k in SPREAD))
        for _ in SPREAD:
            assert c.read_reply() == b"+OK\r\n"
        assert c.read_reply() == b"*-1\r\n"
        for k in SPREAD:
            assert c.read_reply() == bulk(k.encode())
    finally:
        c.close()


def test_same_key_twice_and_many_keys(rc, waiters):
    w = waiters("BLPOP", "q", "q", "q", 5)
    rc.execute_command("RPUSH", "q", "a", "b")
    assert w.reply() == pair(b"q", b"a")
    keys = ["k%d" % i for i in range(50)]
    w = waiters("BRPOP", *keys, 5)
    rc.execute_command("RPUSH", "k37", "x")
    assert w.reply() == pair(b"k37", b"x")
    assert blocking_keys(rc) in (0, None)


def test_keys_on_several_shards(rc, waiters):
    # BLPOP over keys that live on different shards with several threads.
    w = waiters("BLPOP", *SPREAD, 5)
    rc.execute_command("RPUSH", "y", "from-y")
    assert w.reply() == pair(b"y", b"from-y")
    # Served by a push from a command over several shards (LMOVE across shards).
    w = waiters("BLPOP", "x", 5)
    rc.execute_command("RPUSH", "a", "moved")
    assert rc.execute_command("LMOVE", "a", "x", "LEFT", "LEFT") == b"moved"
    assert w.reply() == pair(b"x", b"moved")
    assert rc.execute_command("EXISTS", "a", "x") == 0


def test_blocked_client_is_not_idle_closed(rc, waiters, config_set_timeout):
    w = waiters("BLPOP", "q", 0)
    time.sleep(1.6)
    rc.execute_command("RPUSH", "q", "late")
    assert w.reply() == pair(b"q", b"late")


@pytest.fixture
def config_set_timeout(rc):
    old = rc.execute_command("CONFIG", "GET", "timeout")[1]
    rc.execute_command("CONFIG", "SET", "timeout", 1)
    yield
    rc.execute_command("CONFIG", "SET", "timeout", old)


def test_stress_every_item_popped_once(server, rc):
    # Producers push numbered items to a few queues while blocked consumers pop them
    # (BRPOP over all queues, BLMOVE into a per-consumer list, BLMPOP). Every item is
    # consumed exactly once.
    queues = ["sq:%s" % k for k in SPREAD[:4]]
    n_producers, per_producer, n_consumers = 4, 300, 8
    total = n_producers * per_producer

    def pop(c, i):
        kind = i % 3
        if kind == 0:
            r = c.execute_command("BRPOP", *queues, 0.2)
            return [r[1]] if r else []
        if kind == 1:
            v = c.execute_command("BLMOVE", random.choice(queues), "done:%d" % i, "LEFT", "RIGHT", 0.2)
            if v is None:
                return []
            c.execute_command("LPOP", "done:%d" % i)
            return [v]
        r = c.execute_command("BLMPOP", 0.2, len(queues), *queues, "LEFT", "COUNT", 3)
        return r[1] if r else []

    got = pop_everything(server, n_producers, per_producer, n_consumers,
                         lambda c, p, j: c.execute_command("LPUSH", queues[(p + j) % len(queues)], "%d:%d" % (p, j)),
                         pop)
    assert len(got) == total, (len(got), total)
    assert len(set(got)) == total
    assert rc.execute_command("EXISTS", *queues) == 0
    wait_blocked(rc, 0)


def test_command_info(rc):
    # Flags and ACL categories as Redis 7.2 prints them (categories in Redis's
    # order). Redis 7.0 (Debian's) still flags the four older commands
    # noscript; 7.2 lets scripts call them (they do not block there).
    infos = rc.execute_command("COMMAND", "INFO", "blpop", "brpoplpush", "blmpop", "client|unblock")
    got = {i[0]: (i[1], i[2], i[6]) for i in infos}

    def flags(name):
        arity, f, cats = got[name]
        if IS_REDIS:
            f = [x for x in f if x != b"noscript"]
        return arity, f, cats

    assert flags(b"blpop") == (-3, [b"write", b"blocking"], [b"@write", b"@list", b"@slow", b"@blocking"])
    assert flags(b"brpoplpush") == (4, [b"write", b"denyoom", b"blocking"],
                                    [b"@write", b"@list", b"@slow", b"@blocking"])
    assert got[b"blmpop"] == (-5, [b"write", b"blocking", b"movablekeys"],
                              [b"@write", b"@list", b"@slow", b"@blocking"])
    assert got[b"client|unblock"] == (-3, [b"admin", b"noscript", b"loading", b"stale"],
                                      [b"@admin", b"@slow", b"@dangerous", b"@connection"])


def test_a_key_expired_by_the_time_waiters_are_served_is_deleted_and_serves_nobody(tmp_path):
    # Redis's "MULTI + LPUSH + EXPIRE + DEBUG SLEEP on blocked client, key
    # already expired": the waiters are served after EXEC, at that time; the
    # key has expired by then, so it is deleted (a DEL in the append-only
    # file, as for replicas) and the client stays blocked.
    s = ServerProcess(["--enable-debug-command", "yes", "--appendonly", "yes"], tmp_path=tmp_path)
    try:
        c = s.client()
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        waiter = s.client()
        wid = waiter.client_id()
        got = []
        t = threading.Thread(target=lambda: got.append(waiter.brpop(["k"], timeout=0)))
        t.start()
        wait_for(lambda: "flags=b" in c.execute_command("CLIENT", "LIST", "ID", wid).decode())
        p = c.pipeline(transaction=True)
        p.rpush("k", "hello")
        p.pexpire("k", 100)
        p.execute_command("DEBUG", "SLEEP", "0.2")
        p.execute()
        assert "flags=b" in c.execute_command("CLIENT", "LIST", "ID", wid).decode()
        assert c.exists("k") == 0
        c.execute_command("CLIENT", "UNBLOCK", wid)
        t.join(5)
        assert got == [None]
        wait_for(lambda: b"DEL\r\n$1\r\nk\r\n" in b"".join(
            open(f, "rb").read() for f in glob.glob(str(tmp_path / "appendonlydir" / "*.incr.aof"))))
    finally:
        s.stop()
