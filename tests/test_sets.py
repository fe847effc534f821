# Set commands: SADD/SREM, membership, SRANDMEMBER/SPOP, SMOVE, the multi-key algebra
# (also across shards), SSCAN, encodings, type checks, keyspace operations on sets, and a
# long randomized run against a Python set model.
import random
import threading
import time

import pytest

from conftest import IS_REDIS
from helpers import (  # noqa: F401  (fixtures)
    Conn, NOT_INT, SYNTAX, WRONGTYPE, arity, fails, config_set, encoding, raises, raw_client, rc, rc3)

POSITIVE = "value is out of range, must be positive"
LLONG_RANGE = ("value is out of range, value must between "
               "-9223372036854775807 and 9223372036854775807")

skip_72 = pytest.mark.skipif(
    IS_REDIS, reason="Redis 7.2 behaviour (listpack sets, size hints); Debian ships 7.0")

# Keys spread over shards (with --threads N) and keys sharing one hash tag.
SPREAD = ("a", "b", "c", "x", "y")
TAGGED = ("{t}a", "{t}b", "{t}c", "{t}d", "{t}e")


def members(c, key):
    got = c.execute_command("SMEMBERS", key)
    assert len(got) == len(set(got))
    return set(got)


def sscan_all(c, key, *opts):
    """Run a whole SSCAN iteration; returns (list of members seen, number of calls)."""
    cursor, seen, calls = b"0", [], 0
    while calls == 0 or cursor != b"0":
        cursor, items = c.execute_command("SSCAN", key, cursor, *opts)
        seen, calls = seen + items, calls + 1
        assert calls < 100000
    return seen, calls


def b(*xs):
    return {x if isinstance(x, bytes) else str(x).encode() for x in xs}


# The three encodings' member lists (the same tests run on each).
KINDS = {
    "ints": [str(i) for i in range(0, 300, 3)],
    "strings": ["m%d" % i for i in range(50)],
    "big": ["m%d" % i for i in range(1000)],
}


# ---------------------------------------------------------------- SADD / SREM / reads

def test_sadd_srem_scard(rc):
    assert rc.execute_command("SADD", "s", "a", "b", "a", "c") == 3
    assert rc.execute_command("SADD", "s", "a", "d") == 1
    assert rc.execute_command("SCARD", "s") == 4
    assert rc.execute_command("SCARD", "missing") == 0
    assert rc.execute_command("SREM", "s", "a", "zz", "a") == 1
    assert rc.execute_command("SREM", "missing", "a") == 0
    assert members(rc, "s") == b("b", "c", "d")
    assert rc.execute_command("SREM", "s", "b", "c", "d") == 3
    assert rc.execute_command("EXISTS", "s") == 0
    fails(rc, arity("sadd"), ("SADD", "s"))
    fails(rc, arity("srem"), ("SREM", "s"))


@pytest.mark.parametrize("kind", KINDS)
def test_srem_last_member_deletes_key(rc, kind):
    ms = KINDS[kind]
    assert rc.execute_command("SADD", "s", *ms) == len(ms)
    assert rc.execute_command("SREM", "s", *ms[1:]) == len(ms) - 1
    assert members(rc, "s") == b(ms[0])
    assert rc.execute_command("SREM", "s", ms[0], "other") == 1
    assert rc.execute_command("EXISTS", "s") == 0
    assert rc.execute_command("TYPE", "s") == b"none"


@pytest.mark.parametrize("kind", KINDS)
def test_sismember_smismember(rc, kind):
    ms = KINDS[kind]
    rc.execute_command("SADD", "s", *ms)
    assert rc.execute_command("SISMEMBER", "s", ms[-1]) == 1
    assert rc.execute_command("SISMEMBER", "s", "nope") == 0
    assert rc.execute_command("SISMEMBER", "s", "1") == 0
    assert rc.execute_command("SISMEMBER", "missing", "a") == 0
    assert rc.execute_command("SMISMEMBER", "s", ms[0], "nope", ms[1], ms[0]) == [1, 0, 1, 1]
    assert rc.execute_command("SMISMEMBER", "missing", "a", "b") == [0, 0]
    fails(rc, arity("smismember"), ("SMISMEMBER", "s"))
    fails(rc, arity("sismember"), ("SISMEMBER", "s", "a", "b"))


def test_smembers(rc, rc3, server):
    assert rc.execute_command("SMEMBERS", "missing") == []
    rc.execute_command("SADD", "s", "a", "b", "c")
    assert sorted(rc.execute_command("SMEMBERS", "s")) == [b"a", b"b", b"c"]
    # RESP3: a set reply ('~'); redis-py hands it over as a list with callbacks removed.
    got = rc3.execute_command("SMEMBERS", "s")
    assert isinstance(got, (list, set)) and sorted(got) == [b"a", b"b", b"c"]
    with Conn(server) as c:
        c.call("HELLO", "3")
        assert c.call("SMEMBERS", "s").startswith(b"~3\r\n")
        assert c.call("SMEMBERS", "missing") == b"~0\r\n"
        for cmd in (("SINTER", "s"), ("SUNION", "s", "missing"), ("SDIFF", "s"), ("SPOP", "s", "1")):
            assert c.call(*cmd)[:1] == b"~"
        assert c.call("SRANDMEMBER", "s", "2").startswith(b"*2\r\n")
        assert c.call("SMISMEMBER", "s", "a").startswith(b"*1\r\n")


# ---------------------------------------------------------------- SRANDMEMBER

@pytest.mark.parametrize("kind", KINDS)
def test_srandmember_counts(rc, kind):
    ms = b(*KINDS[kind])
    rc.execute_command("SADD", "s", *ms)
    size = len(ms)
    assert rc.execute_command("SRANDMEMBER", "s") in ms
    for count in (1, 2, size // 3, size // 2, size - 1, size, size + 1, 10 ** 9):
        got = rc.execute_command("SRANDMEMBER", "s", count)
        assert len(got) == min(count, size)
        assert len(set(got)) == len(got) and set(got) <= ms
    got = rc.execute_command("SRANDMEMBER", "s", -3 * size)
    assert len(got) == 3 * size and set(got) <= ms
    assert len(set(got)) > size // 2
    assert rc.execute_command("SRANDMEMBER", "s", 0) == []
    assert rc.execute_command("SCARD", "s") == size  # nothing removed
    picks = [m for _ in range(60) for m in rc.execute_command("SRANDMEMBER", "s", 3)]
    assert len(set(picks)) > min(size, 180) // 3  # random picks, not always the same few
    assert len({rc.execute_command("SRANDMEMBER", "s") for _ in range(100)}) > min(size, 100) // 4


def test_srandmember_missing_and_errors(rc):
    assert rc.execute_command("SRANDMEMBER", "missing") is None
    assert rc.execute_command("SRANDMEMBER", "missing", 5) == []
    assert rc.execute_command("SRANDMEMBER", "missing", -5) == []
    rc.execute_command("SADD", "s", "a")
    assert rc.execute_command("SRANDMEMBER", "s", -4) == [b"a"] * 4
    fails(rc, SYNTAX, ("SRANDMEMBER", "s", 1, 2))
    fails(rc, NOT_INT, ("SRANDMEMBER", "s", "abc"), ("SRANDMEMBER", "s", "1.5"))
    for key in ("s", "missing"):
        with raises(LLONG_RANGE):
            rc.execute_command("SRANDMEMBER", key, "-9223372036854775808")
    assert rc.execute_command("SRANDMEMBER", "s", "9223372036854775807") == [b"a"]


@pytest.mark.skipif(IS_REDIS, reason="Redis builds the whole reply (client-output-buffer-limit normal 0 0 0)")
@pytest.mark.parametrize("key", ["s", "other{x}"])  # with several threads, one of them on another shard
def test_srandmember_huge_negative_count_closes_the_client(server, rc, key):
    # The reply would be 2^63 - 1 picks: it is cut at 64 MB, the client closed
    # without it (docs/hashes-and-sets.md), and nothing else is affected.
    rc.execute_command("SADD", key, "a")
    with Conn(server, timeout=30) as c:
        c.send(b"SRANDMEMBER %s -9223372036854775807\r\nPING\r\n" % key.encode())
        data = c.read_until_closed(timeout=30)
        assert len(data) < 1 << 20 and b"PONG" not in data
    assert rc.execute_command("SMEMBERS", key) == [b"a"]
    assert int(rc.execute_command("INFO", "stats").split(b"client_output_buffer_limit_disconnections:")[1]
               .split(b"\r\n")[0]) >= 1


# ---------------------------------------------------------------- SPOP

def test_spop_no_count(rc):
    assert rc.execute_command("SPOP", "missing") is None
    rc.execute_command("SADD", "s", "a", "b", "c")
    popped = {rc.execute_command("SPOP", "s") for _ in range(3)}
    assert popped == b("a", "b", "c")
    assert rc.execute_command("EXISTS", "s") == 0
    assert rc.execute_command("SPOP", "s") is None
    rc.execute_command("SADD", "s", "a", "b")  # a count past the size takes all, deletes the key
    assert sorted(rc.execute_command("SPOP", "s", 10)) == [b"a", b"b"]
    assert rc.execute_command("EXISTS", "s") == 0
    assert rc.execute_command("SPOP", "s", 10) == rc.execute_command("SPOP", "missing", 0) == []


@pytest.mark.parametrize("kind", KINDS)
def test_spop_count(rc, kind):
    ms = b(*KINDS[kind])
    rc.execute_command("SADD", "s", *ms)
    size = len(ms)
    first = rc.execute_command("SPOP", "s", size // 3)
    second = rc.execute_command("SPOP", "s", 1)
    assert len(first) == size // 3 and len(second) == 1
    assert len(set(first) | set(second)) == size // 3 + 1
    rest = members(rc, "s")
    assert len(rest) == size - size // 3 - 1
    assert rest | set(first) | set(second) == ms
    assert not rest & (set(first) | set(second))
    assert rc.execute_command("SPOP", "s", 0) == []
    assert rc.execute_command("SCARD", "s") == len(rest)
    last = rc.execute_command("SPOP", "s", len(rest))  # count == size
    assert set(last) == rest and len(last) == len(rest)
    assert rc.execute_command("EXISTS", "s") == 0


def test_spop_errors(rc):
    rc.execute_command("SADD", "s", "a", "b")
    for bad in ("-1", "abc", "1.5", "-9223372036854775808", "9223372036854775808"):
        with raises(POSITIVE):
            rc.execute_command("SPOP", "s", bad)
    fails(rc, SYNTAX, ("SPOP", "s", 1, 2))
    assert rc.execute_command("SCARD", "s") == 2


# ---------------------------------------------------------------- SMOVE

@pytest.mark.parametrize("src,dst", [("{t}a", "{t}b"), ("x", "y"), ("a", "c")])
def test_smove(rc, src, dst):
    assert rc.execute_command("SMOVE", src, dst, "m") == 0  # missing source
    assert rc.execute_command("EXISTS", dst) == 0
    rc.execute_command("SADD", src, "1", "2", "m", "n")
    assert rc.execute_command("SMOVE", src, dst, "zz") == 0  # missing member
    assert rc.execute_command("EXISTS", dst) == 0
    assert rc.execute_command("SMOVE", src, dst, "m") == 1  # to a new key
    assert members(rc, dst) == b("m")
    assert members(rc, src) == b("1", "2", "n")
    rc.execute_command("SADD", dst, "1")
    assert rc.execute_command("SMOVE", src, dst, "1") == 1  # already in destination
    assert members(rc, dst) == b("m", "1")
    assert rc.execute_command("SMOVE", src, src, "2") == 1  # same key: a no-op
    assert rc.execute_command("SMOVE", src, src, "zz") == 0
    assert members(rc, src) == b("2", "n")
    assert rc.execute_command("SMOVE", src, dst, "2") == 1
    assert rc.execute_command("SMOVE", src, dst, "n") == 1  # last member: source deleted
    assert rc.execute_command("EXISTS", src) == 0
    assert members(rc, dst) == b("m", "1", "2", "n")


def test_smove_wrongtype(rc):
    rc.execute_command("SET", "str", "v")
    rc.execute_command("SADD", "s", "m")
    fails(rc, WRONGTYPE, ("SMOVE", "s", "str", "m"), ("SMOVE", "str", "s", "m"))
    fails(rc, WRONGTYPE, ("SMOVE", "str", "missing", "m"))
    # A missing source answers 0 before the destination's type is looked at.
    assert rc.execute_command("SMOVE", "missing", "str", "m") == 0
    assert members(rc, "s") == b("m")
    assert rc.execute_command("GET", "str") == b"v"
    fails(rc, arity("smove"), ("SMOVE", "s", "d"))


def test_smove_into_a_set_that_has_the_member_leaves_its_watch(server, rc):
    # (The destination does not change: a transaction watching it commits,
    # as Redis's smoveCommand signals it only when the member was added.)
    rc.execute_command("SADD", "src{t}", "a", "b")
    rc.execute_command("SADD", "dst{t}", "a")
    rc.execute_command("WATCH", "dst{t}")
    rc.execute_command("MULTI")
    rc.execute_command("SADD", "dst{t}", "c")
    other = server.client()
    assert other.smove("src{t}", "dst{t}", "a") is True
    assert rc.execute_command("EXEC") == [1]
    assert rc.execute_command("SCARD", "dst{t}") == 2
    assert members(rc, "src{t}") == b("b")
    # Added: the watch fails.
    rc.execute_command("WATCH", "dst{t}")
    rc.execute_command("MULTI")
    rc.execute_command("SADD", "dst{t}", "d")
    assert other.smove("src{t}", "dst{t}", "b") is True
    assert rc.execute_command("EXEC") is None
    other.close()


def test_smove_big_sets(rc):
    rc.execute_command("SADD", "x", *range(1000))
    rc.execute_command("SADD", "y", *["m%d" % i for i in range(200)])
    for i in range(0, 1000, 7):
        assert rc.execute_command("SMOVE", "x", "y", i) == 1
    assert members(rc, "x") == b(*(i for i in range(1000) if i % 7))
    assert members(rc, "y") == b(*range(0, 1000, 7), *("m%d" % i for i in range(200)))


# ---------------------------------------------------------------- SINTER / SUNION / SDIFF

@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_set_algebra(rc, keys):
    k1, k2, k3, d1, d2 = keys
    rc.execute_command("SADD", k1, "a", "b", "c", "1", "2")
    rc.execute_command("SADD", k2, "b", "c", "d", "2", "3")
    rc.execute_command("SADD", k3, "c", "2", "e", "x" * 100)
    assert members(rc, k1) & members(rc, k2) == b("b", "c", "2")
    assert set(rc.execute_command("SINTER", k1, k2)) == b("b", "c", "2")
    assert set(rc.execute_command("SINTER", k1, k2, k3)) == b("c", "2")
    assert set(rc.execute_command("SINTER", k1)) == members(rc, k1)
    assert set(rc.execute_command("SUNION", k1, k2, k3)) == b("a", "b", "c", "d", "e", "1", "2", "3",
                                                              "x" * 100)
    assert set(rc.execute_command("SDIFF", k1, k2)) == b("a", "1")
    assert set(rc.execute_command("SDIFF", k1, k2, k3)) == b("a", "1")
    assert set(rc.execute_command("SDIFF", k3, k1)) == b("e", "x" * 100)
    assert rc.execute_command("SDIFF", k1, k1) == []
    assert rc.execute_command("SINTERSTORE", d1, k1, k2, k3) == 2
    assert members(rc, d1) == b("c", "2")
    assert rc.execute_command("SUNIONSTORE", d2, k1, k3) == 7
    assert members(rc, d2) == members(rc, k1) | members(rc, k3)
    assert rc.execute_command("SDIFFSTORE", d2, k2, k1) == 2
    assert members(rc, d2) == b("d", "3")
    assert rc.execute_command("SINTERCARD", 2, k1, k2) == 3
    assert rc.execute_command("SINTERCARD", 3, k1, k2, k3, "LIMIT", 1) == 1


@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_set_algebra_with_missing_keys(rc, keys):
    k1, k2, missing, d1, d2 = keys
    rc.execute_command("SADD", k1, "a", "b")
    rc.execute_command("SADD", k2, "b", "c")
    assert rc.execute_command("SINTER", k1, missing) == []
    assert rc.execute_command("SINTER", missing, k1) == []
    assert rc.execute_command("SINTERCARD", 2, k1, missing) == 0
    assert set(rc.execute_command("SUNION", missing, k1)) == b("a", "b")
    assert rc.execute_command("SUNION", missing) == []
    assert set(rc.execute_command("SDIFF", k1, missing)) == b("a", "b")
    assert rc.execute_command("SDIFF", missing, k1) == []
    # An empty result deletes the destination (even of another type) and replies 0.
    rc.execute_command("SADD", d1, "old")
    assert rc.execute_command("SINTERSTORE", d1, k1, missing) == 0
    assert rc.execute_command("EXISTS", d1) == 0
    rc.execute_command("SET", d1, "string")
    assert rc.execute_command("SDIFFSTORE", d1, k1, k1) == 0
    assert rc.execute_command("EXISTS", d1) == 0
    rc.execute_command("HSET", d1, "f", "v")
    assert rc.execute_command("SUNIONSTORE", d1, missing) == 0
    assert rc.execute_command("EXISTS", d1) == 0
    # A non-empty result overwrites a destination of another type, dropping its TTL.
    rc.execute_command("SET", d2, "string", "EX", "100")
    assert rc.execute_command("SUNIONSTORE", d2, k1, k2) == 3
    assert rc.execute_command("TYPE", d2) == b"set"
    assert rc.execute_command("TTL", d2) == -1
    rc.execute_command("DEL", d2)
    rc.execute_command("HSET", d2, "f", "v")
    assert rc.execute_command("SINTERSTORE", d2, k1, k2) == 1
    assert members(rc, d2) == b("b")


@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_store_destination_among_sources(rc, keys):
    k1, k2, k3 = keys[:3]
    rc.execute_command("SADD", k1, *range(10))
    rc.execute_command("SADD", k2, *range(5, 15))
    assert rc.execute_command("SINTERSTORE", k1, k1, k2) == 5
    assert members(rc, k1) == b(*range(5, 10))
    assert rc.execute_command("SUNIONSTORE", k1, k1, k2) == 10
    assert members(rc, k1) == b(*range(5, 15))
    assert rc.execute_command("SDIFFSTORE", k2, k2, k3) == 10
    assert rc.execute_command("SDIFFSTORE", k2, k1, k2) == 0
    assert rc.execute_command("EXISTS", k2) == 0
    assert rc.execute_command("SINTERSTORE", k1, k1) == 10
    assert members(rc, k1) == b(*range(5, 15))
    assert rc.execute_command("SUNIONSTORE", k3, k1) == 10  # the result is a copy
    rc.execute_command("SREM", k3, 5)
    assert rc.execute_command("SCARD", k1) == 10 and rc.execute_command("SCARD", k3) == 9


def test_set_algebra_big_sets(rc):
    a = set(range(0, 3000, 2))
    c = set(range(0, 3000, 3))
    s = {"s%d" % i for i in range(0, 400, 5)}
    rc.execute_command("SADD", "a", *a)
    rc.execute_command("SADD", "c", *c, *s)
    rc.execute_command("SADD", "x", *range(100))  # an intset
    assert set(rc.execute_command("SINTER", "a", "c")) == b(*(a & c))
    assert set(rc.execute_command("SINTER", "a", "c", "x")) == b(*(a & c & set(range(100))))
    assert set(rc.execute_command("SUNION", "a", "c", "x")) == b(*(a | c | s | set(range(100))))
    assert set(rc.execute_command("SDIFF", "c", "a", "x")) == b(*((c - a - set(range(100))) | s))
    assert rc.execute_command("SINTERCARD", 2, "a", "c") == len(a & c)
    assert rc.execute_command("SINTERCARD", 2, "a", "c", "LIMIT", 17) == 17
    assert rc.execute_command("SDIFFSTORE", "y", "a", "c") == len(a - c)
    assert members(rc, "y") == b(*(a - c))


def test_set_algebra_wrongtype(rc):
    rc.execute_command("SADD", "a", "m")
    rc.execute_command("SET", "str", "v")
    rc.execute_command("SADD", "d", "keep")
    fails(rc, WRONGTYPE, ("SINTER", "a", "str"), ("SINTER", "missing", "str"), ("SUNION", "str", "a"),
          ("SDIFF", "a", "str"), ("SDIFF", "missing", "str"), ("SINTERCARD", 2, "a", "str"),
          ("SINTERCARD", 2, "str", "missing"), ("SINTERSTORE", "d", "missing", "str"),
          ("SUNIONSTORE", "d", "a", "str"), ("SDIFFSTORE", "d", "a", "str"))
    assert members(rc, "d") == b("keep")


def test_sintercard_command_info(rc):
    # numkeys keys: movable, and reported in Redis's flag order.
    info = rc.execute_command("COMMAND", "INFO", "sintercard")[0]
    assert info[1] == -3 and info[2] == [b"readonly", b"movablekeys"] and info[3:6] == [0, 0, 0]
    assert rc.execute_command("COMMAND", "GETKEYS", "SINTERCARD", 2, "a", "b", "LIMIT", 1) == [b"a", b"b"]


def test_sintercard_errors(rc):
    rc.execute_command("SADD", "a", "1", "2", "3")
    rc.execute_command("SADD", "b", "2", "3", "4")
    assert rc.execute_command("SINTERCARD", 1, "a") == 3
    assert rc.execute_command("SINTERCARD", 2, "a", "b", "LIMIT", 0) == 2
    assert rc.execute_command("SINTERCARD", 2, "a", "b", "limit", 1) == 1
    assert rc.execute_command("SINTERCARD", 2, "a", "b", "LIMIT", 100) == 2
    assert rc.execute_command("SINTERCARD", 2, "a", "b", "LIMIT", 1, "LIMIT", 5) == 2
    fails(rc, "numkeys should be greater than 0", *(("SINTERCARD", n, "a") for n in ("0", "-1", "x")))
    fails(rc, "Number of keys can't be greater than number of args", ("SINTERCARD", 3, "a", "b"))
    fails(rc, "LIMIT can't be negative", *(("SINTERCARD", 1, "a", "LIMIT", x) for x in ("-1", "x")))
    fails(rc, SYNTAX, ("SINTERCARD", 2, "a", "b", "LIMIT"), ("SINTERCARD", 1, "a", "b"))
    fails(rc, SYNTAX, ("SINTERCARD", 1, "a", "FOO", "1"))
    fails(rc, arity("sintercard"), ("SINTERCARD", 1))


# ---------------------------------------------------------------- SSCAN

def test_sscan_full_iteration(rc):
    want = b(*range(1000), *("m%d" % i for i in range(1000)))
    rc.execute_command("SADD", "s", *want)
    for opts in ((), ("COUNT", 1), ("COUNT", 50), ("COUNT", 10000)):
        seen, _ = sscan_all(rc, "s", *opts)
        assert set(seen) == want
    _, calls = sscan_all(rc, "s")
    assert calls > 1


def test_sscan_match(rc):
    rc.execute_command("SADD", "s", *("m%d" % i for i in range(2000)), "other")
    assert set(sscan_all(rc, "s", "MATCH", "m1?")[0]) == b(*("m1%d" % i for i in range(10)))
    seen = sscan_all(rc, "s", "MATCH", "*9", "COUNT", 100)[0]
    assert set(seen) == b(*("m%d" % i for i in range(2000) if i % 10 == 9))
    assert sscan_all(rc, "s", "MATCH", "zz*")[0] == []


@pytest.mark.parametrize("kind", ["ints", pytest.param("strings", marks=skip_72)])
def test_sscan_small_sets_in_one_call(rc, kind):
    ms = KINDS[kind]
    rc.execute_command("SADD", "s", *ms)
    cursor, items = rc.execute_command("SSCAN", "s", 0, "COUNT", 1)
    assert cursor == b"0" and sorted(items) == sorted(b(*ms))
    cursor, items = rc.execute_command("SSCAN", "s", 0, "MATCH", "*9")
    assert cursor == b"0" and set(items) == {m for m in b(*ms) if m.endswith(b"9")}
    assert rc.execute_command("SSCAN", "missing", 0) == [b"0", []]


def test_sscan_errors(rc):
    rc.execute_command("SADD", "s", "a")
    fails(rc, SYNTAX, ("SSCAN", "s", 0, "COUNT", 0), ("SSCAN", "s", 0, "NOVALUES"))
    fails(rc, SYNTAX, ("SSCAN", "s", 0, "TYPE", "set"))
    fails(rc, NOT_INT, ("SSCAN", "s", 0, "COUNT", "x"))
    fails(rc, "invalid cursor", *(("SSCAN", "s", x) for x in ("abc", "1.5", "18446744073709551616")))


def test_sscan_while_modifying(rc):
    stable = b(*("s%d" % i for i in range(1500)))
    rc.execute_command("SADD", "s", *stable)
    cursor, seen, n = b"0", set(), 0
    while True:
        cursor, items = rc.execute_command("SSCAN", "s", cursor, "COUNT", 30)
        seen.update(items)
        n += 1
        rc.execute_command("SADD", "s", *("n%d_%d" % (n, i) for i in range(30)))
        if n % 2 == 0:
            rc.execute_command("SREM", "s", *("n%d_%d" % (n - 1, i) for i in range(30)))
        if cursor == b"0":
            break
        assert n < 10000
    assert stable <= seen


# ---------------------------------------------------------------- encodings

def test_encoding_intset_and_hashtable(rc):
    rc.execute_command("SADD", "i", *range(512))
    assert encoding(rc, "i") == b"intset"
    rc.execute_command("SADD", "i", 512)
    assert encoding(rc, "i") == b"hashtable"
    rc.execute_command("SREM", "i", *range(500))  # never converts back
    assert encoding(rc, "i") == b"hashtable"
    assert members(rc, "i") == b(*range(500, 513))
    rc.execute_command("SADD", "ext", "9223372036854775807", "-9223372036854775808", "0", "-5")
    assert encoding(rc, "ext") == b"intset"
    assert members(rc, "ext") == b("9223372036854775807", "-9223372036854775808", "0", "-5")


def test_encoding_hashtable_for_many_or_long_strings(rc):
    rc.execute_command("SADD", "s", *("m%d" % i for i in range(129)))
    assert encoding(rc, "s") == b"hashtable"
    rc.execute_command("SADD", "long", "a", "x" * 65)
    assert encoding(rc, "long") == b"hashtable"
    rc.execute_command("SADD", "i", *range(200))
    rc.execute_command("SADD", "i", "a")  # 201 members: too many for a listpack
    assert encoding(rc, "i") == b"hashtable"
    assert rc.execute_command("SCARD", "i") == 201
    rc.execute_command("SADD", "i2", 1, 2, 3)
    rc.execute_command("SADD", "i2", "y" * 65)
    assert encoding(rc, "i2") == b"hashtable"
    assert members(rc, "i2") == b(1, 2, 3, "y" * 65)


def test_config_set_max_intset_entries(rc, config_set):
    assert rc.execute_command("CONFIG", "GET", "set-max-intset-entries") == \
        [b"set-max-intset-entries", b"512"]
    config_set("set-max-intset-entries", "4")
    rc.execute_command("SADD", "i", 1, 2, 3, 4)
    assert encoding(rc, "i") == b"intset"
    rc.execute_command("SADD", "i", 5)
    assert encoding(rc, "i") == b"hashtable"
    assert members(rc, "i") == b(1, 2, 3, 4, 5)
    config_set("set-max-intset-entries", "1000")
    rc.execute_command("SADD", "j", *range(1000))
    assert encoding(rc, "j") == b"intset"


@skip_72
def test_encoding_listpack(rc):
    rc.execute_command("SADD", "s", *("m%d" % i for i in range(128)))
    assert encoding(rc, "s") == b"listpack"
    rc.execute_command("SADD", "s", "m128")
    assert encoding(rc, "s") == b"hashtable"
    rc.execute_command("SADD", "v", "x" * 64)
    assert encoding(rc, "v") == b"listpack"
    rc.execute_command("SADD", "v", "x" * 65)
    assert encoding(rc, "v") == b"hashtable"
    rc.execute_command("SADD", "mix", 1, 2, 3)
    assert encoding(rc, "mix") == b"intset"
    rc.execute_command("SADD", "mix", "a")
    assert encoding(rc, "mix") == b"listpack"
    assert members(rc, "mix") == b(1, 2, 3, "a")
    rc.execute_command("SADD", "mix2", 1, "a", 2)  # first member an integer
    assert encoding(rc, "mix2") == b"listpack"
    rc.execute_command("SADD", "i", 1)
    rc.execute_command("SADD", "i", "01")
    assert encoding(rc, "i") == b"listpack"


@skip_72
def test_config_set_max_listpack(rc, config_set):
    got = dict(zip(*[iter(rc.execute_command("CONFIG", "GET", "set-max-*"))] * 2))
    assert got == {b"set-max-intset-entries": b"512", b"set-max-listpack-entries": b"128",
                   b"set-max-listpack-value": b"64"}
    config_set("set-max-listpack-entries", "3")
    rc.execute_command("SADD", "s", "a", "b", "c")
    assert encoding(rc, "s") == b"listpack"
    rc.execute_command("SADD", "s", "d")
    assert encoding(rc, "s") == b"hashtable"
    config_set("set-max-listpack-value", "3")
    rc.execute_command("SADD", "v", "abc")
    assert encoding(rc, "v") == b"listpack"
    rc.execute_command("SADD", "v", "abcd")
    assert encoding(rc, "v") == b"hashtable"
    assert members(rc, "v") == b("abc", "abcd")


def test_integer_canonical_forms(rc):
    rc.execute_command("SADD", "i", 1, 2, 3)
    assert rc.execute_command("SISMEMBER", "i", "01") == 0
    assert rc.execute_command("SISMEMBER", "i", "+1") == 0
    assert rc.execute_command("SISMEMBER", "i", " 1") == 0
    assert rc.execute_command("SREM", "i", "01", "1.0", "abc") == 0
    assert rc.execute_command("SADD", "i", "01") == 1  # not an integer: a new string member
    assert rc.execute_command("SCARD", "i") == 4
    assert rc.execute_command("SISMEMBER", "i", "1") == 1
    assert rc.execute_command("SISMEMBER", "i", "01") == 1
    assert members(rc, "i") == b("1", "01", "2", "3")
    assert rc.execute_command("SREM", "i", "1") == 1
    assert rc.execute_command("SISMEMBER", "i", "01") == 1
    odd = ["-0", "+1", " 1", "1 ", "0x10", "1.0", "1e3", "9223372036854775808",
           "-9223372036854775809", "00", "0"]
    assert rc.execute_command("SADD", "o", *odd) == len(odd)
    assert members(rc, "o") == b(*odd)
    assert rc.execute_command("SMISMEMBER", "o", "0", "-0", "1", "10", "16") == [1, 1, 0, 0, 0]
    # Small sets of strings are listpacks since Redis 7.2 (hashtables in 7.0).
    assert encoding(rc, "o") == (b"hashtable" if IS_REDIS else b"listpack")


def test_store_result_encodings(rc, config_set):
    # Results are built the way Redis builds them (7.0 and 7.2 alike): an all-integer
    # result that fits is an intset, whatever the sources' encodings or sizes.
    rc.execute_command("SADD", "{t}mix", *range(200), *("s%d" % i for i in range(600)))
    rc.execute_command("SADD", "{t}big", *range(1000))
    rc.execute_command("SADD", "{t}most", *range(990))
    assert rc.execute_command("SINTERSTORE", "{t}i", "{t}mix", "{t}big") == 200
    assert rc.execute_command("SDIFFSTORE", "{t}d", "{t}big", "{t}most") == 10
    assert rc.execute_command("SUNIONSTORE", "{t}u", "{t}most", "{t}d") == 1000
    config_set("set-max-intset-entries", "3")
    rc.execute_command("SADD", "{t}s1", 1, 2, 3)
    rc.execute_command("SADD", "{t}s2", 1, 2, 3, 4)
    assert rc.execute_command("SUNIONSTORE", "{t}u2", "{t}s1", "{t}s2") == 4
    got = {k: encoding(rc, k) for k in ("{t}i", "{t}d", "{t}u", "{t}u2")}
    assert got == {"{t}i": b"intset", "{t}d": b"intset", "{t}u": b"hashtable",
                   "{t}u2": b"hashtable"}  # u2: an intset past its limit


@skip_72
def test_store_and_spop_result_encodings_72(rc):
    rc.execute_command("SADD", "{t}a", *("m%d" % i for i in range(200)))
    rc.execute_command("SADD", "{t}b", *("m%d" % i for i in range(195)))
    assert rc.execute_command("SDIFFSTORE", "{t}d", "{t}a", "{t}b") == 5
    rc.execute_command("SADD", "{t}i", 1, 2)
    assert rc.execute_command("SUNIONSTORE", "{t}u", "{t}i", "{t}b") == 197
    # SPOP taking most of a hashtable set rebuilds it from the few members left.
    rc.execute_command("SADD", "{t}h", *range(999))
    assert len(rc.execute_command("SPOP", "{t}h", 990)) == 990
    assert len(rc.execute_command("SPOP", "{t}a", 170)) == 170
    assert rc.execute_command("SCARD", "{t}a") == 30
    rc.execute_command("SADD", "{t}c", *("m%d" % i for i in range(200)))
    assert len(rc.execute_command("SPOP", "{t}c", 100)) == 100  # most stay: no rebuild
    got = {k: encoding(rc, k) for k in ("{t}d", "{t}u", "{t}h", "{t}a", "{t}c")}
    assert got == {"{t}d": b"listpack", "{t}u": b"hashtable", "{t}h": b"listpack",
                   "{t}a": b"listpack", "{t}c": b"hashtable"}


@skip_72
def test_sadd_many_arguments_converts_first(rc, config_set):
    # SADD sizes the set for all its arguments before adding, duplicates or not.
    rc.execute_command("SADD", "i", 1, 2)
    assert rc.execute_command("SADD", "i", *(["1"] * 513)) == 0
    rc.execute_command("SADD", "l", "a")
    assert rc.execute_command("SADD", "l", *(["a"] * 129)) == 0
    rc.execute_command("SADD", "l2", "a")
    assert rc.execute_command("SADD", "l2", *(["a"] * 128)) == 0
    rc.execute_command("SADD", "n", *(["1"] * 513))
    rc.execute_command("SADD", "n2", *(["1"] * 129))
    rc.execute_command("SADD", "n3", *(["a"] * 129))
    config_set("set-max-intset-entries", "4")
    rc.execute_command("SADD", "n4", 1, 2, 3, 4, 5)
    got = {k: encoding(rc, k) for k in ("i", "l", "l2", "n", "n2", "n3", "n4")}
    assert got == {"i": b"hashtable", "l": b"hashtable", "l2": b"listpack", "n": b"hashtable",
                   "n2": b"intset", "n3": b"hashtable", "n4": b"listpack"}


# ---------------------------------------------------------------- types

SET_COMMANDS = [
    ("SADD", "k", "m"), ("SREM", "k", "m"), ("SCARD", "k"), ("SISMEMBER", "k", "m"),
    ("SMISMEMBER", "k", "m"), ("SMEMBERS", "k"), ("SRANDMEMBER", "k"), ("SRANDMEMBER", "k", "0"),
    ("SRANDMEMBER", "k", "-3"), ("SPOP", "k"), ("SPOP", "k", "0"), ("SPOP", "k", "2"),
    ("SMOVE", "k", "other", "m"), ("SINTER", "k"), ("SINTERSTORE", "d", "k"),
    ("SINTERCARD", "1", "k"), ("SUNION", "k"), ("SUNIONSTORE", "d", "k"), ("SDIFF", "k"),
    ("SDIFFSTORE", "d", "k"), ("SSCAN", "k", "0"),
]


@pytest.mark.parametrize("cmd", SET_COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("kind", ["string", "hash"])
def test_set_commands_wrongtype(rc, cmd, kind):
    if kind == "string":
        rc.execute_command("SET", "k", "v")
    else:
        rc.execute_command("HSET", "k", "f", "v")
    fails(rc, WRONGTYPE, cmd)
    assert rc.execute_command("TYPE", "k") == kind.encode()
    assert rc.execute_command("EXISTS", "d", "other") == 0


@pytest.mark.parametrize("cmd", [
    ("GET", "s"), ("INCR", "s"), ("APPEND", "s", "x"), ("SET", "s", "v", "GET"), ("STRLEN", "s"),
    ("GETRANGE", "s", "0", "1"), ("HSET", "s", "f", "v"), ("HGETALL", "s"),
], ids=lambda c: " ".join(c))
def test_other_commands_against_set(rc, cmd):
    rc.execute_command("SADD", "s", "m")
    fails(rc, WRONGTYPE, cmd)
    assert members(rc, "s") == b("m")


def test_set_keyspace(rc):
    rc.execute_command("SADD", "s", "m")
    rc.execute_command("SET", "str", "v")
    assert rc.execute_command("TYPE", "s") == b"set"
    assert rc.execute_command("MGET", "s", "str") == [None, b"v"]
    for k in SPREAD:
        rc.execute_command("SADD", "set" + k, k)
        rc.execute_command("HSET", "hash" + k, "f", "v")
    cursor, keys = b"0", set()
    while True:
        cursor, batch = rc.execute_command("SCAN", cursor, "TYPE", "set")
        keys.update(batch)
        if cursor == b"0":
            break
    assert keys == {b"s"} | {b"set" + k.encode() for k in SPREAD}
    assert rc.execute_command("SET", "s", "now a string") == b"OK"
    assert rc.execute_command("TYPE", "s") == b"string"


@pytest.mark.parametrize("src,dst", [("{t}a", "{t}b"), ("a", "x"), ("y", "c")])
@pytest.mark.parametrize("kind", KINDS)
def test_rename_copy_set(rc, src, dst, kind):
    ms = b(*KINDS[kind])
    rc.execute_command("SADD", src, *ms)
    enc = encoding(rc, src)
    rc.execute_command("EXPIRE", src, 1000)
    assert rc.execute_command("RENAME", src, dst) == b"OK"
    assert rc.execute_command("EXISTS", src) == 0
    assert members(rc, dst) == ms and encoding(rc, dst) == enc
    assert 990 < rc.execute_command("TTL", dst) <= 1000
    assert rc.execute_command("COPY", dst, src) == 1
    assert encoding(rc, src) == enc
    rc.execute_command("SADD", src, "new", 7)
    rc.execute_command("SREM", src, *list(ms)[:5])
    assert members(rc, dst) == ms  # the copy is deep
    assert rc.execute_command("SCARD", src) == len(ms) - 3
    assert rc.execute_command("COPY", dst, src) == 0
    assert rc.execute_command("COPY", dst, src, "REPLACE") == 1
    assert members(rc, src) == ms


def test_move_set(rc):
    rc.execute_command("SADD", "s", "a", "b")
    assert rc.execute_command("MOVE", "s", "1") == 1
    assert rc.execute_command("EXISTS", "s") == 0
    rc.execute_command("SELECT", "1")
    assert members(rc, "s") == b("a", "b")
    rc.execute_command("SELECT", "0")
    rc.execute_command("SADD", "s", "z")
    assert rc.execute_command("MOVE", "s", "1") == 0
    assert members(rc, "s") == b("z")


def test_expire_and_del_set(rc):
    rc.execute_command("SADD", "s", "a")
    rc.execute_command("SADD", "big", *range(1000))
    rc.execute_command("SADD", "d", "a")
    assert rc.execute_command("DEL", "d") == 1
    assert rc.execute_command("PEXPIRE", "s", 600) == 1
    assert rc.execute_command("PEXPIRE", "big", 600) == 1
    assert rc.execute_command("SADD", "s", "b") == 1  # a write keeps the TTL
    assert 0 < rc.execute_command("PTTL", "s") <= 600
    deadline = time.monotonic() + 3
    while rc.execute_command("EXISTS", "s", "big") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rc.execute_command("EXISTS", "s", "big") == 0
    assert rc.execute_command("SCARD", "big") == 0
    assert rc.execute_command("SMEMBERS", "s") == []


def test_memory_usage_grows(rc):
    rc.execute_command("SADD", "s", "a")
    small = rc.execute_command("MEMORY", "USAGE", "s")
    rc.execute_command("SADD", "s", *("member-%d" % i for i in range(2000)))
    big = rc.execute_command("MEMORY", "USAGE", "s", "SAMPLES", "0")
    assert 0 < small < big and big > 2000 * 8
    rc.execute_command("SADD", "i", *range(10))
    rc.execute_command("SADD", "i2", *range(500))
    assert rc.execute_command("MEMORY", "USAGE", "i") < rc.execute_command("MEMORY", "USAGE", "i2")


# ---------------------------------------------------------------- member values

def test_binary_and_empty_members(rc):
    ms = [b"\x00\xff", b"\xff\x00", b"a\r\nb", b"", b"\x00", b" "]
    for key, pad in (("small", []), ("big", ["pad%d" % i for i in range(300)])):
        assert rc.execute_command("SADD", key, *ms, *pad) == len(ms) + len(pad)
        for m in ms:
            assert rc.execute_command("SISMEMBER", key, m) == 1
        assert members(rc, key) == set(ms) | b(*pad)
        assert rc.execute_command("SREM", key, b"\x00\xff", b"") == 2
        assert rc.execute_command("SISMEMBER", key, b"\x00") == 1
        assert rc.execute_command("SISMEMBER", key, b"") == 0


def test_large_member(rc):
    big = bytes(random.Random(2).getrandbits(8) for _ in range(100 * 1024))
    assert rc.execute_command("SADD", "s", big, "small") == 2
    assert rc.execute_command("SISMEMBER", "s", big) == 1
    assert rc.execute_command("SISMEMBER", "s", big[:-1]) == 0
    assert members(rc, "s") == {big, b"small"}
    assert encoding(rc, "s") == b"hashtable"
    assert rc.execute_command("SMOVE", "s", "t", big) == 1
    assert rc.execute_command("SPOP", "t") == big
    assert rc.execute_command("EXISTS", "t") == 0


# ---------------------------------------------------------------- long randomized run

def test_random_ops_match_set_model(rc):
    rng = random.Random(77)
    model = {b"{m}big": set(), b"{m}small": set()}
    pipe = rc.pipeline(transaction=False)
    expected = []
    for i in range(20000):
        key = b"{m}big" if rng.random() < 0.8 else b"{m}small"
        if key == b"{m}small":
            m = rng.choice([b"%d" % rng.randrange(10), b"s%d" % rng.randrange(10)])
        elif i < 6000:
            m = b"%d" % rng.randrange(400)  # an intset first
        else:
            m = rng.choice([b"%d" % rng.randrange(1200), b"m%d" % rng.randrange(300)])
        s = model[key]
        if rng.random() < 0.6:
            pipe.execute_command("SADD", key, m)
            expected.append(int(m not in s))
            s.add(m)
        else:
            pipe.execute_command("SREM", key, m)
            expected.append(int(m in s))
            s.discard(m)
        if i % 1000 == 999:
            assert pipe.execute() == expected
            expected = []
            for k, s in model.items():
                assert members(rc, k) == s
                assert rc.execute_command("SCARD", k) == len(s)
            if i == 5999:
                assert encoding(rc, "{m}big") == b"intset"
    assert pipe.execute() == expected
    big, small = model[b"{m}big"], model[b"{m}small"]
    assert encoding(rc, "{m}big") == b"hashtable"
    assert set(sscan_all(rc, "{m}big")[0]) == big
    assert set(rc.execute_command("SINTER", "{m}big", "{m}small")) == big & small
    assert set(rc.execute_command("SUNION", "{m}big", "{m}small")) == big | small
    assert set(rc.execute_command("SDIFF", "{m}small", "{m}big")) == small - big
    assert rc.execute_command("SINTERCARD", 2, "{m}big", "{m}small") == len(big & small)
    assert rc.execute_command("SDIFFSTORE", "{m}d", "{m}big", "{m}small") == len(big - small)
    assert members(rc, "{m}d") == big - small
    popped = rc.execute_command("SPOP", "{m}big", len(big) // 2)
    assert set(popped) | members(rc, "{m}big") == big


def test_smove_across_shards_is_atomic(server, rc):
    # Movers shuffle members between two keys while a reader checks that every member
    # is always in exactly one of them.
    # A fixed amount of work (not a time window), so that a slow build still
    # checks while the movers run; a mover's failure is raised here.
    n, per_mover = 40, 400
    rc.execute_command("SADD", "x", *range(n))
    moves, errors = [], []

    def mover(seed):
        try:
            c, rng, done = raw_client(server), random.Random(seed), 0
            with c:
                for _ in range(per_mover):
                    src, dst = ("x", "y") if rng.random() < 0.5 else ("y", "x")
                    done += c.execute_command("SMOVE", src, dst, rng.randrange(n))
            moves.append(done)
        except Exception as e:  # noqa: BLE001 (re-raised by the test)
            errors.append(e)

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    checks = 0
    while any(t.is_alive() for t in threads) or checks == 0:
        assert sorted(rc.execute_command("SUNION", "x", "y")) == sorted(b(*range(n)))
        assert rc.execute_command("SINTERCARD", 2, "x", "y") == 0
        assert rc.execute_command("SINTER", "x", "y") == []
        checks += 1
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    assert len(moves) == 3 and sum(moves) > 0  # every mover ran to the end
    assert members(rc, "x") | members(rc, "y") == b(*range(n))
