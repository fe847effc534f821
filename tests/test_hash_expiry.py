# Hash field expiry: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL HEXPIRETIME
# HPEXPIRETIME HPERSIST (Redis 7.4), HGETDEL HGETEX HSETEX (Redis 8.0), their error
# paths, how the other hash commands treat deadlines, lazy and active expiry, and
# keyspace operations on hashes with deadlines. Debian's Redis 7.0 has none of these
# commands, so the module runs against Peregrine only, checked against the behaviour
# Redis documents (docs/hashes-and-sets.md).
import time

import pytest

from conftest import IS_REDIS
from helpers import (  # noqa: F401  (fixtures)
    Conn, NOT_INT, WRONGTYPE, arity, config_set, encoding, info_dict, raises, rc, rc3)

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Redis 7.4/8.0 commands; Debian ships 7.0")

FIELDS_POS = "Mandatory argument FIELDS is missing or not at the right position"
NUMFIELDS_EXPIRE = "Parameter `numFields` should be greater than 0"
NUMFIELDS_POSITIVE = "Number of fields must be a positive integer"
NUMFIELDS_MISMATCH = "The `numfields` parameter must match the number of arguments"
NEGATIVE = "invalid expire time, must be >= 0"
MAX_MS = (1 << 46) - 1  # Redis's HFE_MAX_ABS_TIME_MSEC


def invalid(cmd):
    return "invalid expire time in '%s' command" % cmd


def now_ms():
    return int(time.time() * 1000)


def fill(c, key, n=3, prefix="f"):
    c.execute_command("HSET", key, *[x for i in range(n) for x in ("%s%d" % (prefix, i), "v%d" % i)])


# ---------------------------------------------------------------- HEXPIRE family

def test_hexpire_sets_deadlines_and_replies_per_field(rc):
    fill(rc, "h")
    assert rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 3, "f0", "nope", "f1") == [1, -2, 1]
    ttl = rc.execute_command("HTTL", "h", "FIELDS", 3, "f0", "f1", "f2")
    assert 99 <= ttl[0] <= 100 and 99 <= ttl[1] <= 100 and ttl[2] == -1
    pttl = rc.execute_command("HPTTL", "h", "FIELDS", 1, "f0")[0]
    assert 98_000 < pttl <= 100_000
    # The field keeps its value.
    assert rc.execute_command("HGET", "h", "f0") == b"v0"
    assert rc.execute_command("HLEN", "h") == 3


def test_hexpire_units_and_absolute_forms(rc):
    fill(rc, "h", 4)
    t = now_ms()
    assert rc.execute_command("HPEXPIRE", "h", 50_000, "FIELDS", 1, "f0") == [1]
    assert rc.execute_command("HEXPIREAT", "h", t // 1000 + 200, "FIELDS", 1, "f1") == [1]
    assert rc.execute_command("HPEXPIREAT", "h", t + 300_000, "FIELDS", 1, "f2") == [1]
    assert 48_000 < rc.execute_command("HPTTL", "h", "FIELDS", 1, "f0")[0] <= 50_000
    assert rc.execute_command("HEXPIRETIME", "h", "FIELDS", 1, "f1") == [t // 1000 + 200]
    assert rc.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "f1") == [(t // 1000 + 200) * 1000]
    assert rc.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "f2", "f3") == [t + 300_000, -1]
    # HEXPIRETIME rounds a millisecond deadline up to the next second.
    assert rc.execute_command("HEXPIRETIME", "h", "FIELDS", 1, "f2") == [(t + 300_000 + 999) // 1000]
    assert 199 <= rc.execute_command("HTTL", "h", "FIELDS", 1, "f1")[0] <= 200


def test_hexpire_conditions(rc):
    fill(rc, "h", 2)  # f0 without a deadline, f1 with one
    assert rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "f1") == [1]
    # No deadline counts as infinitely far: NX and LT pass, XX and GT fail.
    assert rc.execute_command("HEXPIRE", "h", 50, "XX", "FIELDS", 2, "f0", "f1") == [0, 1]
    t = now_ms()
    assert rc.execute_command("HPEXPIREAT", "h", t + 500_000, "GT", "FIELDS", 2, "f0", "f1") == [0, 1]
    assert rc.execute_command("HPEXPIREAT", "h", t + 500_000, "GT", "FIELDS", 1, "f1") == [0]  # equal: not greater
    assert rc.execute_command("HPEXPIREAT", "h", t + 400_000, "lt", "FIELDS", 2, "f0", "f1") == [1, 1]
    assert rc.execute_command("HPEXPIREAT", "h", t + 400_000, "LT", "FIELDS", 1, "f1") == [0]  # equal: not less
    assert rc.execute_command("HEXPIRE", "h", 10, "NX", "FIELDS", 2, "f0", "f1") == [0, 0]
    assert rc.execute_command("HPERSIST", "h", "FIELDS", 1, "f0") == [1]
    assert rc.execute_command("HEXPIRE", "h", 10, "nx", "FIELDS", 2, "f0", "f1") == [1, 0]
    ttl = rc.execute_command("HTTL", "h", "FIELDS", 2, "f0", "f1")
    assert 9 <= ttl[0] <= 10 and 399 <= ttl[1] <= 400


def test_hexpire_in_the_past_deletes_fields_and_the_empty_key(rc):
    fill(rc, "h", 3)
    assert rc.execute_command("HEXPIRE", "h", 0, "FIELDS", 2, "f0", "f9") == [2, -2]
    assert rc.execute_command("HEXISTS", "h", "f0") == 0
    assert rc.execute_command("HPEXPIREAT", "h", 1, "FIELDS", 1, "f1") == [2]
    # A failed condition deletes nothing, even with a time in the past.
    assert rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "f2") == [1]
    assert rc.execute_command("HPEXPIREAT", "h", 0, "NX", "FIELDS", 1, "f2") == [0]
    assert rc.execute_command("HEXISTS", "h", "f2") == 1
    assert rc.execute_command("HEXPIREAT", "h", 0, "FIELDS", 2, "f2", "f2") == [2, -2]
    assert rc.execute_command("EXISTS", "h") == 0


def test_hexpire_on_a_missing_key_replies_minus_two_and_creates_nothing(rc):
    assert rc.execute_command("HEXPIRE", "nokey", 10, "FIELDS", 2, "a", "b") == [-2, -2]
    assert rc.execute_command("HPERSIST", "nokey", "FIELDS", 1, "a") == [-2]
    assert rc.execute_command("HTTL", "nokey", "FIELDS", 1, "a") == [-2]
    assert rc.execute_command("HPEXPIRETIME", "nokey", "FIELDS", 2, "a", "b") == [-2, -2]
    assert rc.execute_command("EXISTS", "nokey") == 0


def test_hexpire_errors(rc):
    fill(rc, "h", 1)
    rc.execute_command("SET", "s", "x")
    for cmd in ("HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"):
        with raises(arity(cmd.lower())):
            rc.execute_command(cmd, "h", 10, "FIELDS", 1)
        # WRONGTYPE comes before the argument checks.
        with raises(WRONGTYPE):
            rc.execute_command(cmd, "s", "notanumber", "FIELDS", 1, "a")
        with raises(NOT_INT):
            rc.execute_command(cmd, "h", "1.5", "FIELDS", 1, "f0")
        with raises(NEGATIVE):
            rc.execute_command(cmd, "h", -1, "FIELDS", 1, "f0")
        with raises(NEGATIVE):
            rc.execute_command(cmd, "h", -9223372036854775808, "FIELDS", 1, "f0")
        with raises(invalid(cmd.lower())):
            rc.execute_command(cmd, "h", 9223372036854775807, "FIELDS", 1, "f0")
        with raises(FIELDS_POS):
            rc.execute_command(cmd, "h", 10, "NX", "XX", "FIELDS", 1, "f0")  # one condition only
        with raises(FIELDS_POS):
            rc.execute_command(cmd, "h", 10, "FIELD", 1, "f0")
        with raises(FIELDS_POS):
            rc.execute_command(cmd, "h", 10, "1", "FIELDS", "f0")
        for bad in ("0", "-1", "x"):
            with raises(NUMFIELDS_EXPIRE):
                rc.execute_command(cmd, "h", 10, "FIELDS", bad, "f0")
        with raises(NUMFIELDS_MISMATCH):
            rc.execute_command(cmd, "h", 10, "FIELDS", 2, "f0")
        with raises(NUMFIELDS_MISMATCH):
            rc.execute_command(cmd, "h", 10, "GT", "FIELDS", 1, "f0", "f1")
    # The largest deadline: 2^46 - 1 ms.
    with raises(invalid("hpexpireat")):
        rc.execute_command("HPEXPIREAT", "h", MAX_MS + 1, "FIELDS", 1, "f0")
    assert rc.execute_command("HPEXPIREAT", "h", MAX_MS, "FIELDS", 1, "f0") == [1]
    assert rc.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "f0") == [MAX_MS]
    with raises(invalid("hexpireat")):
        rc.execute_command("HEXPIREAT", "h", MAX_MS // 1000 + 1, "FIELDS", 1, "f0")
    assert rc.execute_command("HEXPIREAT", "h", MAX_MS // 1000, "FIELDS", 1, "f0") == [1]
    # A relative time counts from now: the same number may be too far.
    with raises(invalid("hpexpire")):
        rc.execute_command("HPEXPIRE", "h", MAX_MS, "FIELDS", 1, "f0")
    with raises(invalid("hexpire")):
        rc.execute_command("HEXPIRE", "h", MAX_MS // 1000, "FIELDS", 1, "f0")
    # Nothing changed on the errors.
    assert rc.execute_command("HGETALL", "h") == [b"f0", b"v0"]


# ---------------------------------------------------------------- HTTL / HPERSIST

def test_httl_family_errors(rc):
    fill(rc, "h", 1)
    rc.execute_command("SET", "s", "x")
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"):
        with raises(arity(cmd.lower())):
            rc.execute_command(cmd, "h", "FIELDS", 1)
        with raises(WRONGTYPE):
            rc.execute_command(cmd, "s", "FIELDS", 1, "a")
        with raises(FIELDS_POS):
            rc.execute_command(cmd, "h", "FIELDZ", 1, "a")
        for bad in ("0", "-3", "one"):
            with raises(NUMFIELDS_POSITIVE):
                rc.execute_command(cmd, "h", "FIELDS", bad, "a")
        with raises(NUMFIELDS_MISMATCH):
            rc.execute_command(cmd, "h", "FIELDS", 3, "a", "b")
        with raises(NUMFIELDS_MISMATCH):
            rc.execute_command(cmd, "h", "FIELDS", 1, "a", "b")


def test_hpersist(rc):
    fill(rc, "h", 3)
    rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 2, "f0", "f1")
    assert rc.execute_command("HPERSIST", "h", "FIELDS", 4, "f0", "f2", "zz", "f0") == [1, -1, -2, -1]
    assert rc.execute_command("HTTL", "h", "FIELDS", 2, "f0", "f1")[0] == -1
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "f1")[0] > 0


def test_persisted_field_outlives_its_old_deadline(rc):
    fill(rc, "h", 2)
    rc.execute_command("HPEXPIREAT", "h", now_ms() + 400, "FIELDS", 2, "f0", "f1")
    assert rc.execute_command("HPERSIST", "h", "FIELDS", 1, "f0") == [1]
    time.sleep(0.6)
    assert rc.execute_command("HGETALL", "h") == [b"f0", b"v0"]


# ---------------------------------------------------------------- expiry itself

def test_expired_fields_vanish_from_every_read(rc):
    fill(rc, "h", 4)
    rc.execute_command("HPEXPIRE", "h", 80, "FIELDS", 2, "f0", "f1")
    time.sleep(0.25)
    assert rc.execute_command("HGET", "h", "f0") is None
    assert rc.execute_command("HMGET", "h", "f0", "f1", "f2") == [None, None, b"v2"]
    assert rc.execute_command("HEXISTS", "h", "f1") == 0
    assert rc.execute_command("HSTRLEN", "h", "f1") == 0
    assert rc.execute_command("HLEN", "h") == 2
    assert sorted(rc.execute_command("HKEYS", "h")) == [b"f2", b"f3"]
    assert sorted(rc.execute_command("HVALS", "h")) == [b"v2", b"v3"]
    assert rc.execute_command("HSCAN", "h", 0)[1] in ([b"f2", b"v2", b"f3", b"v3"], [b"f3", b"v3", b"f2", b"v2"])
    for _ in range(20):
        assert rc.execute_command("HRANDFIELD", "h") in (b"f2", b"f3")
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "f0") == [-2]
    # HEXPIRE does not bring an expired field back.
    assert rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "f0") == [-2]


def test_hash_whose_last_field_expires_is_deleted_lazily(rc):
    fill(rc, "h", 2)
    rc.execute_command("HPEXPIRE", "h", 50, "FIELDS", 2, "f0", "f1")
    time.sleep(0.12)
    assert rc.execute_command("HGET", "h", "f0") is None
    assert rc.execute_command("EXISTS", "h") == 0
    # HSETNX on a hash whose fields all expired starts a new one.
    fill(rc, "h2", 1)
    rc.execute_command("HPEXPIRE", "h2", 50, "FIELDS", 1, "f0")
    time.sleep(0.12)
    assert rc.execute_command("HSETNX", "h2", "f0", "new") == 1
    assert rc.execute_command("HTTL", "h2", "FIELDS", 1, "f0") == [-1]


def expired_fields(c):
    """INFO's count of fields removed by expiry (read without touching a hash)."""
    return int(info_dict(c.execute_command("INFO", "stats"))["expired_subkeys"])


def wait_for_expired_fields(c, at_least, timeout=5.0):
    """Polls expired_fields until it reaches `at_least`; returns the last figure."""
    deadline = time.monotonic() + timeout
    n = expired_fields(c)
    while n < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
        n = expired_fields(c)
    return n


def test_active_expiry_removes_fields_nobody_reads(rc):
    before = expired_fields(rc)
    for k in range(20):
        fill(rc, "h%d" % k, 5)
        rc.execute_command("HPEXPIRE", "h%d" % k, 30 + k, "FIELDS", 5, *["f%d" % i for i in range(5)])
    fill(rc, "big", 600)  # a hashtable
    rc.execute_command("HPEXPIRE", "big", 40, "FIELDS", 300, *["f%d" % i for i in range(300)])
    fill(rc, "keep", 2)
    rc.execute_command("HPEXPIRE", "keep", 40, "FIELDS", 1, "f0")
    assert wait_for_expired_fields(rc, before + 100 + 300 + 1) == before + 100 + 300 + 1
    assert rc.execute_command("DBSIZE") == 2  # "big" and "keep" keep their other fields
    assert rc.execute_command("HLEN", "big") == 300
    assert rc.execute_command("HGETALL", "keep") == [b"f1", b"v1"]


def test_many_deadlines_in_a_large_hash(rc):
    n = 2000
    fill(rc, "h", n)
    assert encoding(rc, "h") == b"hashtable"
    # Staggered deadlines: every 4th field at 50 ms, every 4th at 100 s, the rest none.
    rc.execute_command("HPEXPIRE", "h", 50, "FIELDS", n // 4, *["f%d" % i for i in range(0, n, 4)])
    rc.execute_command("HEXPIRE", "h", 100, "FIELDS", n // 4, *["f%d" % i for i in range(1, n, 4)])
    time.sleep(0.2)
    assert rc.execute_command("HLEN", "h") == n - n // 4
    keys = set(rc.execute_command("HKEYS", "h"))
    assert keys == {b"f%d" % i for i in range(n) if i % 4 != 0}
    ttls = rc.execute_command("HTTL", "h", "FIELDS", 3, "f1", "f2", "f4")
    assert 99 <= ttls[0] <= 100 and ttls[1:] == [-1, -2]


# ---------------------------------------------------------------- other commands and deadlines

def test_hset_clears_a_deadline_and_hincrby_keeps_it(rc):
    fill(rc, "h", 4)
    rc.execute_command("HSET", "h", "n", "10", "x", "1.5")
    rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 6, "f0", "f1", "f2", "f3", "n", "x")
    rc.execute_command("HSET", "h", "f0", "new")
    rc.execute_command("HMSET", "h", "f1", "new")
    assert rc.execute_command("HSETNX", "h", "f2", "ignored") == 0
    assert rc.execute_command("HINCRBY", "h", "n", 5) == 15
    assert rc.execute_command("HINCRBYFLOAT", "h", "x", "1") == b"2.5"
    ttl = rc.execute_command("HTTL", "h", "FIELDS", 6, "f0", "f1", "f2", "f3", "n", "x")
    assert ttl[:2] == [-1, -1]
    assert all(99 <= t <= 100 for t in ttl[2:])
    assert rc.execute_command("HDEL", "h", "f3") == 1
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "f3") == [-2]
    assert rc.execute_command("HMGET", "h", "f0", "f1", "f2") == [b"new", b"new", b"v2"]


def test_hincrby_on_an_expired_field_starts_again_without_a_deadline(rc):
    rc.execute_command("HSET", "h", "n", "10", "other", "x")
    rc.execute_command("HPEXPIRE", "h", 50, "FIELDS", 1, "n")
    time.sleep(0.12)
    assert rc.execute_command("HINCRBY", "h", "n", 1) == 1
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "n") == [-1]


def test_encoding_listpackex(rc, config_set):
    fill(rc, "h", 3)
    assert encoding(rc, "h") == b"listpack"
    # HTTL and HPERSIST do not convert; HEXPIRE does, even when nothing changes.
    rc.execute_command("HTTL", "h", "FIELDS", 1, "f0")
    rc.execute_command("HPERSIST", "h", "FIELDS", 1, "f0")
    assert encoding(rc, "h") == b"listpack"
    rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "nope")
    assert encoding(rc, "h") == b"listpackex"
    rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "f0")
    rc.execute_command("HPERSIST", "h", "FIELDS", 1, "f0")
    assert encoding(rc, "h") == b"listpackex"  # never goes back
    fill(rc, "g", 2)
    rc.execute_command("HGETEX", "g", "PERSIST", "FIELDS", 1, "f0")
    assert encoding(rc, "g") == b"listpackex"
    rc.execute_command("HSETEX", "k", "KEEPTTL", "FIELDS", 1, "a", "1")
    assert encoding(rc, "k") == b"listpack"
    rc.execute_command("HSETEX", "k", "PX", 100000, "FIELDS", 1, "a", "1")
    assert encoding(rc, "k") == b"listpackex"
    # Past the listpack limits it is a hashtable, deadlines and all.
    config_set("hash-max-listpack-entries", "8")
    fill(rc, "h", 20)
    assert encoding(rc, "h") == b"hashtable"
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "f0") == [-1]
    rc.execute_command("HEXPIRE", "h", 50, "FIELDS", 1, "f19")
    assert 49 <= rc.execute_command("HTTL", "h", "FIELDS", 1, "f19")[0] <= 50
    # A long value converts a listpackex hash with its deadlines.
    fill(rc, "c", 3)
    rc.execute_command("HEXPIRE", "c", 70, "FIELDS", 1, "f1")
    rc.execute_command("HSET", "c", "long", "x" * 100)
    assert encoding(rc, "c") == b"hashtable"
    assert 69 <= rc.execute_command("HTTL", "c", "FIELDS", 1, "f1")[0] <= 70


def test_rename_copy_move_swapdb_keep_field_deadlines(rc):
    fill(rc, "h", 3)
    rc.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "f0")
    rc.execute_command("HPEXPIRE", "h", 600, "FIELDS", 1, "f1")
    before = expired_fields(rc)
    assert rc.execute_command("COPY", "h", "copy") == 1
    assert rc.execute_command("RENAME", "h", "renamed") == b"OK"
    for key in ("copy", "renamed"):
        ttl = rc.execute_command("HTTL", key, "FIELDS", 3, "f0", "f1", "f2")
        assert 99 <= ttl[0] <= 100 and ttl[1] == 1 and ttl[2] == -1
        assert encoding(rc, key) == b"listpackex"
    assert rc.execute_command("MOVE", "copy", 1) == 1
    # The moved, copied and renamed hashes both lose f1 by active expiry:
    # nothing reads them until the count says so.
    assert wait_for_expired_fields(rc, before + 2) == before + 2
    assert rc.execute_command("HKEYS", "renamed") == [b"f0", b"f2"]
    rc.execute_command("SELECT", 1)
    assert rc.execute_command("HKEYS", "copy") == [b"f0", b"f2"]
    rc.execute_command("HPEXPIRE", "copy", 60, "FIELDS", 2, "f0", "f2")
    rc.execute_command("SWAPDB", 0, 1)
    # The swapped database's timers came along: "copy", now in database 0,
    # empties and goes without being read.
    rc.execute_command("SELECT", 0)
    deadline = time.monotonic() + 3
    while rc.execute_command("DBSIZE") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rc.execute_command("DBSIZE") == 0
    rc.execute_command("SELECT", 1)
    assert rc.execute_command("HKEYS", "renamed") == [b"f0", b"f2"]


def test_field_expiry_commands_on_other_types(rc):
    rc.execute_command("SET", "s", "x")
    for args in (("HGETDEL", "s", "FIELDS", 1, "a"), ("HGETEX", "s", "FIELDS", 1, "a"),
                 ("HSETEX", "s", "FIELDS", 1, "a", "b"), ("HPERSIST", "s", "FIELDS", 1, "a")):
        with raises(WRONGTYPE):
            rc.execute_command(*args)
    assert rc.execute_command("GET", "s") == b"x"


# ---------------------------------------------------------------- HGETDEL

def test_hgetdel(rc):
    fill(rc, "h", 3)
    assert rc.execute_command("HGETDEL", "h", "FIELDS", 4, "f0", "zz", "f0", "f1") == [b"v0", None, None, b"v1"]
    assert rc.execute_command("HGETALL", "h") == [b"f2", b"v2"]
    assert rc.execute_command("HGETDEL", "h", "FIELDS", 1, "f2") == [b"v2"]
    assert rc.execute_command("EXISTS", "h") == 0
    assert rc.execute_command("HGETDEL", "h", "FIELDS", 2, "a", "b") == [None, None]
    assert rc.execute_command("EXISTS", "h") == 0


def test_hgetdel_errors(rc):
    fill(rc, "h", 1)
    with raises(arity("hgetdel")):
        rc.execute_command("HGETDEL", "h", "FIELDS", 1)
    with raises(FIELDS_POS):
        rc.execute_command("HGETDEL", "h", "NOPE", 1, "f0")
    with raises(NUMFIELDS_POSITIVE):
        rc.execute_command("HGETDEL", "h", "FIELDS", 0, "f0")
    with raises(NUMFIELDS_MISMATCH):
        rc.execute_command("HGETDEL", "h", "FIELDS", 2, "f0")
    assert rc.execute_command("HGET", "h", "f0") == b"v0"


# ---------------------------------------------------------------- HGETEX

def test_hgetex_options(rc):
    fill(rc, "h", 4)
    assert rc.execute_command("HGETEX", "h", "FIELDS", 2, "f0", "zz") == [b"v0", None]
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "f0") == [-1]
    assert rc.execute_command("HGETEX", "h", "EX", 100, "FIELDS", 2, "f0", "zz") == [b"v0", None]
    assert 99 <= rc.execute_command("HTTL", "h", "FIELDS", 1, "f0")[0] <= 100
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "zz") == [-2]  # not created
    assert rc.execute_command("HGETEX", "h", "px", 50_000, "FIELDS", 1, "f1") == [b"v1"]
    assert 48_000 < rc.execute_command("HPTTL", "h", "FIELDS", 1, "f1")[0] <= 50_000
    t = now_ms()
    assert rc.execute_command("HGETEX", "h", "EXAT", t // 1000 + 300, "FIELDS", 1, "f2") == [b"v2"]
    assert rc.execute_command("HEXPIRETIME", "h", "FIELDS", 1, "f2") == [t // 1000 + 300]
    assert rc.execute_command("HGETEX", "h", "PXAT", t + 400_000, "FIELDS", 1, "f3") == [b"v3"]
    assert rc.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "f3") == [t + 400_000]
    assert rc.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 2, "f0", "f1") == [b"v0", b"v1"]
    assert rc.execute_command("HTTL", "h", "FIELDS", 2, "f0", "f1") == [-1, -1]
    # A time not in the future: the value is returned, then the field goes.
    assert rc.execute_command("HGETEX", "h", "PXAT", 1, "FIELDS", 3, "f0", "f0", "f1") == [b"v0", None, b"v1"]
    assert sorted(rc.execute_command("HKEYS", "h")) == [b"f2", b"f3"]
    assert rc.execute_command("HGETEX", "h", "EX", 0, "FIELDS", 2, "f2", "f3") == [b"v2", b"v3"]
    assert rc.execute_command("EXISTS", "h") == 0
    assert rc.execute_command("HGETEX", "h", "EX", 10, "FIELDS", 1, "a") == [None]


def test_hgetex_errors(rc):
    fill(rc, "h", 1)
    with raises(arity("hgetex")):
        rc.execute_command("HGETEX", "h", "FIELDS", 1)
    with raises(arity("hgetex")):
        rc.execute_command("HGETEX", "h", "EX", 10, "FIELDS")
    with raises(FIELDS_POS):
        rc.execute_command("HGETEX", "h", "EX", 10, "PX", 10, "FIELDS", 1, "f0")
    with raises(FIELDS_POS):
        rc.execute_command("HGETEX", "h", "KEEPTTL", "FIELDS", 1, "f0")
    with raises(FIELDS_POS):
        rc.execute_command("HGETEX", "h", "PERSIST", "EX", "FIELDS", 1, "f0")
    with raises(NOT_INT):
        rc.execute_command("HGETEX", "h", "EX", "ten", "FIELDS", 1, "f0")
    with raises(NEGATIVE):
        rc.execute_command("HGETEX", "h", "PX", -5, "FIELDS", 1, "f0")
    with raises(invalid("hgetex")):
        rc.execute_command("HGETEX", "h", "PXAT", MAX_MS + 1, "FIELDS", 1, "f0")
    with raises(NUMFIELDS_POSITIVE):
        rc.execute_command("HGETEX", "h", "PERSIST", "FIELDS", -1, "f0")
    with raises(NUMFIELDS_MISMATCH):
        rc.execute_command("HGETEX", "h", "EX", 5, "FIELDS", 2, "f0")
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "f0") == [-1]


# ---------------------------------------------------------------- HSETEX

def test_hsetex_sets_values_and_deadlines(rc):
    assert rc.execute_command("HSETEX", "h", "EX", 100, "FIELDS", 2, "a", "1", "b", "2") == 1
    assert rc.execute_command("HGETALL", "h") == [b"a", b"1", b"b", b"2"]
    assert all(99 <= t <= 100 for t in rc.execute_command("HTTL", "h", "FIELDS", 2, "a", "b"))
    # Without an expiry option the deadline goes (as HSET); KEEPTTL keeps it.
    assert rc.execute_command("HSETEX", "h", "FIELDS", 1, "a", "x") == 1
    assert rc.execute_command("HSETEX", "h", "KEEPTTL", "FIELDS", 1, "b", "y") == 1
    ttl = rc.execute_command("HTTL", "h", "FIELDS", 2, "a", "b")
    assert ttl[0] == -1 and 99 <= ttl[1] <= 100
    t = now_ms()
    assert rc.execute_command("HSETEX", "h", "PXAT", t + 5000, "FIELDS", 1, "c", "3") == 1
    assert rc.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "c") == [t + 5000]
    assert rc.execute_command("HSETEX", "h", "PX", 200_000, "FIELDS", 1, "c", "4") == 1
    assert 199_000 < rc.execute_command("HPTTL", "h", "FIELDS", 1, "c")[0] <= 200_000
    # A later duplicate wins.
    assert rc.execute_command("HSETEX", "h", "FIELDS", 2, "d", "1", "d", "2") == 1
    assert rc.execute_command("HGET", "h", "d") == b"2"


def test_hsetex_fnx_fxx(rc):
    assert rc.execute_command("HSETEX", "h", "FXX", "FIELDS", 1, "a", "1") == 0
    assert rc.execute_command("EXISTS", "h") == 0  # FXX does not create the key
    assert rc.execute_command("HSETEX", "h", "FNX", "EX", 100, "FIELDS", 2, "a", "1", "b", "2") == 1
    assert rc.execute_command("HSETEX", "h", "FNX", "FIELDS", 2, "c", "3", "a", "9") == 0
    assert rc.execute_command("HEXISTS", "h", "c") == 0  # nothing is set when the condition fails
    assert rc.execute_command("HSETEX", "h", "FXX", "FIELDS", 2, "a", "5", "c", "3") == 0
    assert rc.execute_command("HGET", "h", "a") == b"1"
    # Options in any order before FIELDS.
    assert rc.execute_command("HSETEX", "h", "KEEPTTL", "fxx", "FIELDS", 2, "a", "5", "b", "6") == 1
    assert rc.execute_command("HMGET", "h", "a", "b") == [b"5", b"6"]
    assert all(t > 0 for t in rc.execute_command("HTTL", "h", "FIELDS", 2, "a", "b"))
    # An expired field counts as absent.
    rc.execute_command("HPEXPIRE", "h", 30, "FIELDS", 1, "a")
    time.sleep(0.1)
    assert rc.execute_command("HSETEX", "h", "FNX", "FIELDS", 1, "a", "new") == 1
    assert rc.execute_command("HTTL", "h", "FIELDS", 1, "a") == [-1]


def test_hsetex_in_the_past_sets_then_deletes(rc):
    assert rc.execute_command("HSETEX", "h", "EX", 0, "FIELDS", 1, "a", "1") == 1
    assert rc.execute_command("EXISTS", "h") == 0
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("HSETEX", "h", "PXAT", 1, "FIELDS", 1, "a", "9") == 1
    assert rc.execute_command("HGETALL", "h") == [b"b", b"2"]


def test_hsetex_errors(rc):
    rc.execute_command("SET", "s", "x")
    with raises(arity("hsetex")):
        rc.execute_command("HSETEX", "h", "FIELDS", 1, "a")
    with raises(arity("hsetex")):
        rc.execute_command("HSETEX", "h", "FIELDS", 2, "a", "1")
    with raises(arity("hsetex")):
        rc.execute_command("HSETEX", "h", "FIELDS", 1, "a", "1", "b")
    with raises(arity("hsetex")):
        rc.execute_command("HSETEX", "h", "EX", 10, "FIELDS", 1)
    with raises("invalid number of fields"):
        rc.execute_command("HSETEX", "h", "FIELDS", 0, "a", "1")
    with raises("invalid number of fields"):
        rc.execute_command("HSETEX", "h", "FIELDS", "x", "a", "1")
    with raises("invalid number of fields"):
        rc.execute_command("HSETEX", "h", "FIELDS", 2147483648, "a", "1")
    with raises("Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"):
        rc.execute_command("HSETEX", "h", "EX", 10, "KEEPTTL", "FIELDS", 1, "a", "1")
    with raises("Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"):
        rc.execute_command("HSETEX", "h", "PX", 10, "PX", 10, "FIELDS", 1, "a", "1")
    with raises("Only one of FXX or FNX arguments can be specified"):
        rc.execute_command("HSETEX", "h", "FNX", "FXX", "FIELDS", 1, "a", "1")
    with raises("Only one of FXX or FNX arguments can be specified"):
        rc.execute_command("HSETEX", "h", "FNX", "FNX", "FIELDS", 1, "a", "1")
    with raises("unknown argument: PERSIST"):
        rc.execute_command("HSETEX", "h", "PERSIST", "FIELDS", 1, "a", "1")
    with raises("unknown argument: nX"):
        rc.execute_command("HSETEX", "h", "nX", "FIELDS", 1, "a", "1")
    with raises(NOT_INT):
        rc.execute_command("HSETEX", "h", "EX", "1.5", "FIELDS", 1, "a", "1")
    with raises(NEGATIVE):
        rc.execute_command("HSETEX", "h", "PX", -1, "FIELDS", 1, "a", "1")
    with raises(invalid("hsetex")):
        rc.execute_command("HSETEX", "h", "EXAT", MAX_MS // 1000 + 1, "FIELDS", 1, "a", "1")
    # Arguments are checked before the key's type, and WRONGTYPE after.
    with raises("Only one of FXX or FNX arguments can be specified"):
        rc.execute_command("HSETEX", "s", "FXX", "FNX", "FIELDS", 1, "a", "1")
    with raises(WRONGTYPE):
        rc.execute_command("HSETEX", "s", "EX", 10, "FIELDS", 1, "a", "1")
    assert rc.execute_command("EXISTS", "h") == 0
    assert rc.execute_command("GET", "s") == b"x"


def test_hsetex_converts_like_hset(rc, config_set):
    config_set("hash-max-listpack-entries", "4")
    assert rc.execute_command("HSETEX", "h", "EX", 100, "FIELDS", 5, *[x for i in range(5) for x in ("f%d" % i, "v")]) == 1
    assert encoding(rc, "h") == b"hashtable"
    assert all(99 <= t <= 100 for t in rc.execute_command("HTTL", "h", "FIELDS", 5, *["f%d" % i for i in range(5)]))


# ---------------------------------------------------------------- RESP3 and introspection

def test_resp3_replies(server):
    # On the wire: arrays of integers, RESP3 nulls (_) for missing values.
    with Conn(server) as c:
        c.call("HELLO", "3")
        c.call("HSET", "h", "a", "1")
        assert c.call("HEXPIRE", "h", "100", "FIELDS", "2", "a", "b") == b"*2\r\n:1\r\n:-2\r\n"
        assert c.call("HGETDEL", "h", "FIELDS", "2", "b", "a") == b"*2\r\n_\r\n$1\r\n1\r\n"
        assert c.call("HGETEX", "nokey", "FIELDS", "1", "a") == b"*1\r\n_\r\n"
        assert c.call("HSETEX", "h", "FIELDS", "1", "a", "1") == b":1\r\n"
        assert c.call("HTTL", "h", "FIELDS", "1", "a") == b"*1\r\n:-1\r\n"
        c.call("HELLO", "2")
        assert c.call("HGETDEL", "h", "FIELDS", "2", "zz", "a") == b"*2\r\n$-1\r\n$1\r\n1\r\n"


def test_command_info(rc):
    info = rc.execute_command("COMMAND", "INFO", "hexpire", "httl", "hpersist", "hgetdel", "hgetex", "hsetex")
    assert [x[0] for x in info] == [b"hexpire", b"httl", b"hpersist", b"hgetdel", b"hgetex", b"hsetex"]
    assert [x[1] for x in info] == [-6, -5, -5, -5, -5, -6]
    assert b"denyoom" in info[0][2] and b"readonly" in info[1][2] and b"write" in info[5][2]
    assert all(x[3:6] == [1, 1, 1] for x in info)
