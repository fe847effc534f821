# Bitmaps (issue #21): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
# BITFIELD_RO with Redis 7.2's ranges, limits and errors; random operations
# cross-checked reply for reply with Debian's redis-server.
import random

import pytest

from conftest import IS_REDIS
from helpers import raises, replies

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_setbit_getbit(r):
    assert r.setbit("b", 7, 1) == 0
    assert r.get("b") == b"\x01"
    assert r.setbit("b", 7, 1) == 1
    assert r.setbit("b", 7, 0) == 1
    assert r.getbit("b", 7) == 0
    assert r.setbit("b", 100, 1) == 0
    assert r.strlen("b") == 13
    assert r.getbit("b", 100) == 1 and r.getbit("b", 101) == 0 and r.getbit("b", 10**6) == 0
    assert r.getbit("missing", 0) == 0
    assert r.setbit("z", 0, 0) == 0 and r.get("z") == b"\x00"  # created even for a 0
    r.set("n", 1)  # an integer's bits are its decimal text's
    assert r.getbit("n", 2) == 1 and r.getbit("n", 0) == 0
    assert r.setbit("n", 6, 1) == 0 and r.get("n") == b"3"
    r.set("big", "x")
    assert r.setbit("big", 8 * 1024 * 1024 - 1, 0) == 0 and r.strlen("big") == 1024 * 1024
    r.delete("big")


def test_setbit_getbit_errors(r):
    for off in ("-1", "x", "4294967296", str(2**63)):
        with raises("bit offset is not an integer or out of range"):
            r.execute_command("SETBIT", "b", off, 1)
        with raises("bit offset is not an integer or out of range"):
            r.execute_command("GETBIT", "b", off)
    for v in ("2", "-1", "x", ""):
        with raises("bit is not an integer or out of range"):
            r.execute_command("SETBIT", "b", 0, v)
    r.rpush("l", "a")
    with raises(WRONGTYPE):
        r.setbit("l", 0, 1)
    with raises(WRONGTYPE):
        r.getbit("l", 0)
    with raises("wrong number of arguments for 'setbit' command"):
        r.execute_command("SETBIT", "b", 0)
    assert not r.exists("b")


def test_bitcount(r):
    r.set("s", "foobar")
    assert r.bitcount("s") == 26
    assert r.bitcount("s", 0, 0) == 4 and r.bitcount("s", 1, 1) == 6
    assert r.bitcount("s", 1, 1, "BYTE") == 6
    assert r.bitcount("s", 5, 30, "BIT") == 17
    assert r.bitcount("s", -2, -1) == 7 and r.bitcount("s", -1, -2) == 0
    assert r.bitcount("s", 100, 200) == 0 and r.bitcount("s", -100, 100) == 26
    assert r.bitcount("missing") == 0
    assert r.execute_command("BITCOUNT", "missing", "x") == 0  # the key first, as Redis
    with raises("syntax error"):
        r.execute_command("BITCOUNT", "s", 0)
    with raises("syntax error"):
        r.execute_command("BITCOUNT", "s", 0, 1, "bits")
    with raises("value is not an integer or out of range"):
        r.execute_command("BITCOUNT", "s", "a", 1)
    r.set("e", "")
    assert r.bitcount("e") == 0
    r.sadd("set", "m")
    with raises(WRONGTYPE):
        r.bitcount("set")


def test_bitpos(r):
    r.set("s", b"\xff\xf0\x00")
    assert r.bitpos("s", 0) == 12
    assert r.bitpos("s", 1) == 0
    assert r.bitpos("s", 1, 2) == -1
    assert r.bitpos("s", 0, 1) == 12
    assert r.bitpos("s", 1, 7, 15, "BIT") == 7
    assert r.bitpos("s", 0, 0, -1, "BIT") == 12
    r.set("ones", b"\xff\xff")
    assert r.bitpos("ones", 0) == 16  # past the end: zero-padded
    assert r.bitpos("ones", 0, 0) == 16
    assert r.bitpos("ones", 0, 0, -1) == -1  # an end given: no padding
    assert r.bitpos("missing", 0) == 0 and r.bitpos("missing", 1) == -1
    r.set("e", "")
    assert r.bitpos("e", 0) == -1 and r.bitpos("e", 1) == -1
    with raises("The bit argument must be 1 or 0."):
        r.execute_command("BITPOS", "s", 2)
    with raises("value is not an integer or out of range"):
        r.execute_command("BITPOS", "s", "x")
    with raises("syntax error"):
        r.execute_command("BITPOS", "s", 1, 0, 1, "bits")
    with raises("syntax error"):
        r.execute_command("BITPOS", "s", 1, 0, 1, "bit", "x")


def test_bitop(r):
    r.set("{b}1", b"\x0f\xff")
    r.set("{b}2", b"\xf0")
    assert r.bitop("AND", "{b}d", "{b}1", "{b}2") == 2
    assert r.get("{b}d") == b"\x00\x00"
    assert r.bitop("or", "{b}d", "{b}1", "{b}2") == 2 and r.get("{b}d") == b"\xff\xff"
    assert r.bitop("XOR", "{b}d", "{b}1", "{b}2", "{b}2") == 2 and r.get("{b}d") == b"\x0f\xff"
    assert r.bitop("NOT", "{b}d", "{b}2") == 1 and r.get("{b}d") == b"\x0f"
    # Keys on any shard; missing ones are empty; the destination loses its TTL.
    r.set("x", "ab", ex=100)
    assert r.bitop("or", "x", "x", "missing") == 2 and r.ttl("x") == -1
    assert r.bitop("or", "{b}d", "{b}missing", "{b}2") == 1 and r.get("{b}d") == b"\xf0"  # a missing first key
    r.rpush("dst", "a")
    assert r.bitop("or", "dst", "{b}1") == 2 and r.type("dst") == b"string"
    assert r.bitop("and", "dst", "missing", "missing2") == 0 and not r.exists("dst")
    with raises("BITOP NOT must be called with a single source key."):
        r.bitop("NOT", "d", "a", "b")
    with raises("syntax error"):
        r.bitop("NAND", "d", "a")
    r.rpush("l", "a")
    with raises(WRONGTYPE):
        r.bitop("or", "d", "{b}1", "l")
    with raises("wrong number of arguments for 'bitop' command"):
        r.execute_command("BITOP", "or", "d")


def test_bitfield(r):
    assert r.execute_command("BITFIELD", "f", "SET", "u8", 0, 200, "GET", "u8", 0, "GET", "i8", 0) == [0, 200, -56]
    assert r.execute_command("BITFIELD", "f", "INCRBY", "u8", 0, 100) == [44]
    assert r.execute_command("BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u8", 0, 300) == [255]
    assert r.execute_command("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1, "GET", "u8", 0) == [None, 255]
    assert r.execute_command("BITFIELD", "f", "SET", "i5", "#3", -3, "GET", "i5", 15, "GET", "u5", "#3") == [0, -3, 29]
    assert r.execute_command("BITFIELD", "f", "INCRBY", "i64", 64, 2**63 - 1, "OVERFLOW", "WRAP",
                             "INCRBY", "i64", 64, 1) == [2**63 - 1, -2**63]
    assert r.execute_command("BITFIELD", "f", "GET", "u63", 1000) == [0]  # past the end: zeros
    assert r.execute_command("BITFIELD", "missing", "GET", "u8", 0) == [0] and not r.exists("missing")
    assert r.execute_command("BITFIELD", "f") == []
    assert r.execute_command("BITFIELD_RO", "f", "GET", "u8", 0, "GET", "i64", 64) == [255, -2**63]
    with raises("BITFIELD_RO only supports the GET subcommand"):
        r.execute_command("BITFIELD_RO", "f", "SET", "u8", 0, 1)
    for bad in (("GET", "u64", 0), ("GET", "i65", 0), ("GET", "x8", 0), ("GET", "u0", 0), ("GET", "u", 0)):
        with raises("Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."):
            r.execute_command("BITFIELD", "f", *bad)
    with raises("bit offset is not an integer or out of range"):
        r.execute_command("BITFIELD", "f", "GET", "u8", -1)
    with raises("bit offset is not an integer or out of range"):
        r.execute_command("BITFIELD", "f", "GET", "u8", "#536870912")
    with raises("Invalid OVERFLOW type specified"):
        r.execute_command("BITFIELD", "f", "OVERFLOW", "NOPE")
    with raises("syntax error"):
        r.execute_command("BITFIELD", "f", "GET", "u8")
    with raises("syntax error"):
        r.execute_command("BITFIELD", "f", "FROB", "u8", 0)
    with raises("value is not an integer or out of range"):
        r.execute_command("BITFIELD", "f", "SET", "u8", 0, "x")
    r.rpush("l", "a")
    with raises(WRONGTYPE):
        r.execute_command("BITFIELD", "l", "GET", "u8", 0)
    with raises(WRONGTYPE):
        r.execute_command("BITFIELD_RO", "l", "GET", "u8", 0)


@pytest.mark.skipif(IS_REDIS, reason="compares with redis-server")
def test_random_operations_match_redis(server, reference):
    """Thousands of random bit operations on both servers: every reply and
    every final value the same."""
    rng = random.Random(2026)
    sub = server.client(protocol=2)
    ref = reference.client(protocol=2)
    for c in (sub, ref):
        c.flushall()
    keys = ["{k}a", "{k}b", "{k}c", "{k}d"]

    def off():
        return rng.choice([rng.randrange(64), rng.randrange(600), rng.randrange(5000)])

    def rng_range():
        return [rng.randrange(-70, 70), rng.randrange(-70, 70)]

    for i in range(3000):
        k = rng.choice(keys)
        kind = rng.randrange(9)
        if kind == 0:
            cmd = ["SETBIT", k, off(), rng.randrange(2)]
        elif kind == 1:
            cmd = ["GETBIT", k, off()]
        elif kind == 2:
            cmd = ["BITCOUNT", k] + (rng_range() + rng.choice([[], ["BIT"], ["BYTE"]]) if rng.random() < 0.7 else [])
        elif kind == 3:
            extra = rng.choice([[], [rng.randrange(-70, 70)], rng_range(), rng_range() + [rng.choice(["BIT", "BYTE"])]])
            cmd = ["BITPOS", k, rng.randrange(2)] + extra
        elif kind == 4:
            op = rng.choice(["AND", "OR", "XOR", "NOT"])
            srcs = [rng.choice(keys)] if op == "NOT" else rng.sample(keys, rng.randrange(1, 4))
            cmd = ["BITOP", op, k] + srcs
        elif kind == 5:
            cmd = ["SET", k, bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))]
        else:
            cmd = ["BITFIELD", k]
            for _ in range(rng.randrange(1, 4)):
                sign = rng.choice("iu")
                width = rng.randrange(1, 65 if sign == "i" else 64)
                offset = rng.choice([str(rng.randrange(200)), f"#{rng.randrange(20)}"])
                what = rng.randrange(4)
                if what == 0:
                    cmd += ["GET", f"{sign}{width}", offset]
                elif what == 1:
                    cmd += ["SET", f"{sign}{width}", offset, rng.randrange(-2**63, 2**63)]
                elif what == 2:
                    cmd += ["INCRBY", f"{sign}{width}", offset, rng.choice([rng.randrange(-300, 300),
                                                                           rng.randrange(-2**63, 2**63)])]
                else:
                    cmd += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"])]
        got, want = replies((sub, ref), *cmd)
        assert got == want, (i, cmd)
    for k in keys:
        assert sub.get(k) == ref.get(k), k
