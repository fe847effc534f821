# Hash commands: HSET family, reads, HDEL, counters, HRANDFIELD, HSCAN, encodings,
# type checks, keyspace operations on hashes, and a long randomized run against a model.
import random
import time

import pytest

from conftest import IS_REDIS
from helpers import Conn, NOT_INT, SYNTAX, WRONGTYPE, arity, config_set, encoding, raises, rc, rc3  # noqa: F401  (fixtures)

NOT_FLOAT = "value is not a valid float"
HASH_NOT_INT = "hash value is not an integer"
HASH_NOT_FLOAT = "hash value is not a float"
OVERFLOW = "increment or decrement would overflow"
LLONG_RANGE = ("value is out of range, value must between "
               "-9223372036854775807 and 9223372036854775807")

skip_74 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.4 feature; Debian ships 7.0")
skip_72 = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 behaviour; Debian ships 7.0")


def pairs(flat):
    """A flat [f1, v1, f2, v2, ...] reply as a dict (asserting no field repeats)."""
    assert len(flat) % 2 == 0
    d = dict(zip(flat[::2], flat[1::2]))
    assert len(d) == len(flat) // 2
    return d


def hset_many(c, key, mapping):
    args = []
    for f, v in mapping.items():
        args += [f, v]
    return c.execute_command("HSET", key, *args)


def hscan_all(c, key, *opts):
    """Run a whole HSCAN iteration; returns (list of (field, value) seen, number of calls)."""
    cursor, seen, calls = b"0", [], 0
    while True:
        cursor, items = c.execute_command("HSCAN", key, cursor, *opts)
        calls += 1
        seen += list(zip(items[::2], items[1::2]))
        if cursor == b"0":
            return seen, calls
        assert calls < 100000


# ---------------------------------------------------------------- HSET / HSETNX / HMSET

def test_hset_multiple_pairs_and_overwrite(rc):
    assert rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3") == 3
    assert rc.execute_command("HSET", "h", "a", "10", "d", "4") == 1
    assert rc.execute_command("HSET", "h", "a", "11") == 0
    assert rc.execute_command("HGET", "h", "a") == b"11"
    assert rc.execute_command("HLEN", "h") == 4
    # The same field twice in one call counts once; the last value wins.
    assert rc.execute_command("HSET", "h", "e", "x", "e", "y") == 1
    assert rc.execute_command("HGET", "h", "e") == b"y"


@pytest.mark.parametrize("cmd", ["HSET", "HMSET"])
def test_hset_odd_arguments(rc, cmd):
    for args in (("h",), ("h", "a"), ("h", "a", "1", "b")):
        with raises(arity(cmd.lower())):
            rc.execute_command(cmd, *args)
    assert rc.execute_command("EXISTS", "h") == 0


def test_hsetnx(rc):
    assert rc.execute_command("HSETNX", "h", "a", "1") == 1
    assert rc.execute_command("HSETNX", "h", "a", "2") == 0
    assert rc.execute_command("HGET", "h", "a") == b"1"
    assert rc.execute_command("HSETNX", "h", "b", "2") == 1
    assert rc.execute_command("HLEN", "h") == 2
    with raises(arity("hsetnx")):
        rc.execute_command("HSETNX", "h", "a")


def test_hmset(rc):
    assert rc.execute_command("HMSET", "h", "a", "1", "b", "2") == b"OK"
    assert rc.execute_command("HMSET", "h", "a", "3") == b"OK"
    assert rc.execute_command("HMGET", "h", "a", "b") == [b"3", b"2"]


# ---------------------------------------------------------------- reads

def test_hget_hmget(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("HGET", "h", "a") == b"1"
    assert rc.execute_command("HGET", "h", "zz") is None
    assert rc.execute_command("HGET", "missing", "a") is None
    assert rc.execute_command("HMGET", "h", "b", "zz", "a", "a") == [b"2", None, b"1", b"1"]
    assert rc.execute_command("HMGET", "missing", "a", "b") == [None, None]
    with raises(arity("hget")):
        rc.execute_command("HGET", "h")
    with raises(arity("hmget")):
        rc.execute_command("HMGET", "h")


def test_hdel(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert rc.execute_command("HDEL", "h", "a", "zz", "a") == 1
    assert rc.execute_command("HDEL", "h", "zz") == 0
    assert rc.execute_command("HLEN", "h") == 2
    assert rc.execute_command("HDEL", "missing", "a") == 0
    assert rc.execute_command("HDEL", "h", "b", "c") == 2
    assert rc.execute_command("EXISTS", "h") == 0
    assert rc.execute_command("TYPE", "h") == b"none"
    with raises(arity("hdel")):
        rc.execute_command("HDEL", "h")


def test_hdel_last_field_of_big_hash_deletes_key(rc):
    hset_many(rc, "h", {"f%d" % i: "v" for i in range(600)})
    assert encoding(rc, "h") == b"hashtable"
    assert rc.execute_command("HDEL", "h", *["f%d" % i for i in range(599)]) == 599
    assert rc.execute_command("HKEYS", "h") == [b"f599"]
    assert rc.execute_command("HDEL", "h", "f599") == 1
    assert rc.execute_command("EXISTS", "h") == 0


def test_hlen_hstrlen_hexists(rc):
    rc.execute_command("HSET", "h", "s", "hello", "n", "12345", "neg", "-1", "e", "")
    assert rc.execute_command("HLEN", "h") == 4
    assert rc.execute_command("HLEN", "missing") == 0
    assert rc.execute_command("HSTRLEN", "h", "s") == 5
    assert rc.execute_command("HSTRLEN", "h", "n") == 5
    assert rc.execute_command("HSTRLEN", "h", "neg") == 2
    assert rc.execute_command("HSTRLEN", "h", "e") == 0
    assert rc.execute_command("HSTRLEN", "h", "zz") == 0
    assert rc.execute_command("HSTRLEN", "missing", "a") == 0
    assert rc.execute_command("HEXISTS", "h", "e") == 1
    assert rc.execute_command("HEXISTS", "h", "zz") == 0
    assert rc.execute_command("HEXISTS", "missing", "a") == 0


def test_hgetall_hkeys_hvals_resp2(rc):
    data = {b"a": b"1", b"b": b"2", b"c": b"3"}
    hset_many(rc, "h", data)
    flat = rc.execute_command("HGETALL", "h")
    assert pairs(flat) == data
    keys = rc.execute_command("HKEYS", "h")
    vals = rc.execute_command("HVALS", "h")
    assert sorted(keys) == sorted(data)
    # HKEYS and HVALS walk the hash in the same order as HGETALL.
    assert keys == flat[::2] and vals == flat[1::2]
    assert rc.execute_command("HGETALL", "missing") == []
    assert rc.execute_command("HKEYS", "missing") == []
    assert rc.execute_command("HVALS", "missing") == []


def test_hgetall_resp3_is_map(rc3, server):
    rc3.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc3.execute_command("HGETALL", "h") == {b"a": b"1", b"b": b"2"}
    assert rc3.execute_command("HGETALL", "missing") == {}
    with Conn(server) as c:
        c.call("HELLO", "3")
        assert c.call("HGETALL", "h").startswith(b"%2\r\n")
        assert c.call("HGETALL", "missing") == b"%0\r\n"
        assert c.call("HKEYS", "h").startswith(b"*2\r\n")


def test_big_hash_reads(rc):
    data = {b"f%d" % i: b"v%d" % i for i in range(1500)}
    hset_many(rc, "h", data)
    assert rc.execute_command("HLEN", "h") == 1500
    assert pairs(rc.execute_command("HGETALL", "h")) == data
    assert sorted(rc.execute_command("HVALS", "h")) == sorted(data.values())
    assert rc.execute_command("HMGET", "h", "f0", "f1499", "f1500") == [b"v0", b"v1499", None]


# ---------------------------------------------------------------- HINCRBY / HINCRBYFLOAT

def test_hincrby(rc):
    assert rc.execute_command("HINCRBY", "h", "n", "5") == 5
    assert rc.execute_command("HINCRBY", "h", "n", "-7") == -2
    assert rc.execute_command("HGET", "h", "n") == b"-2"
    rc.execute_command("HSET", "h", "m", "100")
    assert rc.execute_command("HINCRBY", "h", "m", "1") == 101
    assert rc.execute_command("HINCRBY", "h", "q", "-9223372036854775808") == -9223372036854775808
    assert rc.execute_command("HINCRBY", "h", "p", "9223372036854775807") == 9223372036854775807


@pytest.mark.parametrize("value", ["abc", "1.5", "", " 1", "007", "-0", "+5", "1e3",
                                   "9223372036854775808"])
def test_hincrby_on_non_integer_value(rc, value):
    rc.execute_command("HSET", "h", "f", value)
    with raises(HASH_NOT_INT):
        rc.execute_command("HINCRBY", "h", "f", "1")
    assert rc.execute_command("HGET", "h", "f") == value.encode()


def test_hincrby_overflow(rc):
    rc.execute_command("HSET", "h", "big", "9223372036854775800", "small", "-9223372036854775808")
    with raises(OVERFLOW):
        rc.execute_command("HINCRBY", "h", "big", "100")
    with raises(OVERFLOW):
        rc.execute_command("HINCRBY", "h", "small", "-1")
    assert rc.execute_command("HGET", "h", "big") == b"9223372036854775800"
    assert rc.execute_command("HINCRBY", "h", "big", "7") == 9223372036854775807


@pytest.mark.parametrize("incr", ["abc", "1.5", "", "9223372036854775808", "1 "])
def test_hincrby_bad_increment(rc, incr):
    with raises(NOT_INT):
        rc.execute_command("HINCRBY", "h", "f", incr)
    assert rc.execute_command("EXISTS", "h") == 0


def test_hincrbyfloat_formatting(rc):
    assert rc.execute_command("HINCRBYFLOAT", "h", "f", "10.5") == b"10.5"
    assert rc.execute_command("HINCRBYFLOAT", "h", "f", "5.0e3") == b"5010.5"
    assert rc.execute_command("HGET", "h", "f") == b"5010.5"
    assert rc.execute_command("HINCRBYFLOAT", "h", "g", "0.1") == b"0.1"
    assert rc.execute_command("HINCRBYFLOAT", "h", "g", "0.2") == b"0.3"
    assert rc.execute_command("HINCRBYFLOAT", "h", "i", "3e0") == b"3"
    assert rc.execute_command("HINCRBYFLOAT", "h", "i", "-3") == b"0"
    assert rc.execute_command("HINCRBYFLOAT", "h", "j", "-1.50000") == b"-1.5"
    assert rc.execute_command("HINCRBYFLOAT", "h", "k", "1e-5") == b"0.00001"
    assert rc.execute_command("HINCRBYFLOAT", "h", "l", "1e20") == b"100000000000000000000"
    rc.execute_command("HSET", "h", "n", "5", "z", "007")
    assert rc.execute_command("HINCRBYFLOAT", "h", "n", "1.5") == b"6.5"
    assert rc.execute_command("HINCRBYFLOAT", "h", "z", "1") == b"8"


def test_hincrbyfloat_errors(rc):
    rc.execute_command("HSET", "h", "s", "abc", "sp", " 1", "e", "", "f", "1")
    for field in ("s", "sp", "e"):
        with raises(HASH_NOT_FLOAT):
            rc.execute_command("HINCRBYFLOAT", "h", field, "1")
    for incr in ("abc", "", "1.5 ", "nan"):
        with raises(NOT_FLOAT):
            rc.execute_command("HINCRBYFLOAT", "h", "f", incr)
    for incr in ("inf", "-inf", "+inf"):
        with raises("value is NaN or Infinity"):
            rc.execute_command("HINCRBYFLOAT", "h", "f", incr)
    assert rc.execute_command("HGET", "h", "f") == b"1"
    rc.execute_command("HSET", "h", "huge", "1e4932")
    with raises("increment would produce NaN or Infinity"):
        rc.execute_command("HINCRBYFLOAT", "h", "huge", "1e4932")
    assert rc.execute_command("HGET", "h", "huge") == b"1e4932"


def test_hincr_on_missing_key_creates_it(rc):
    assert rc.execute_command("HINCRBYFLOAT", "a", "f", "1.25") == b"1.25"
    assert rc.execute_command("TYPE", "a") == b"hash"
    assert rc.execute_command("HINCRBY", "b", "f", "0") == 0
    assert rc.execute_command("HGETALL", "b") == [b"f", b"0"]


# ---------------------------------------------------------------- HRANDFIELD

def test_hrandfield_no_count(rc):
    assert rc.execute_command("HRANDFIELD", "missing") is None
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    seen = {rc.execute_command("HRANDFIELD", "h") for _ in range(100)}
    assert seen == {b"a", b"b", b"c"}


@pytest.mark.parametrize("size", [5, 100, 1000])
def test_hrandfield_positive_count(rc, size):
    data = {b"f%d" % i: b"v%d" % i for i in range(size)}
    hset_many(rc, "h", data)
    for count in (1, 2, size // 3, size // 2, size - 1, size, size + 10, 100000):
        got = rc.execute_command("HRANDFIELD", "h", count)
        assert len(got) == min(count, size)
        assert len(set(got)) == len(got)
        assert set(got) <= set(data)
        flat = rc.execute_command("HRANDFIELD", "h", count, "WITHVALUES")
        d = pairs(flat)
        assert len(d) == min(count, size)
        assert all(data[f] == v for f, v in d.items())
    assert rc.execute_command("HRANDFIELD", "h", 0) == []
    assert rc.execute_command("HRANDFIELD", "h", 0, "WITHVALUES") == []
    assert rc.execute_command("HRANDFIELD", "missing", 5) == []
    assert rc.execute_command("HRANDFIELD", "missing", -5, "WITHVALUES") == []


@pytest.mark.skipif(IS_REDIS, reason="Redis builds the whole reply (client-output-buffer-limit normal 0 0 0)")
@pytest.mark.parametrize("key", ["h", "other{x}"])  # with several threads, one of them on another shard
def test_hrandfield_huge_negative_count_closes_the_client(server, rc, key):
    rc.execute_command("HSET", key, "a", "1")
    with Conn(server, timeout=30) as c:
        c.send(b"HRANDFIELD %s -4611686018427387903 WITHVALUES\r\nPING\r\n" % key.encode())
        data = c.read_until_closed(timeout=30)
        assert len(data) < 1 << 20 and b"PONG" not in data
    assert rc.execute_command("HGETALL", key) == [b"a", b"1"]


def test_hrandfield_negative_count_repeats(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    got = rc.execute_command("HRANDFIELD", "h", -300)
    assert len(got) == 300
    assert set(got) == {b"a", b"b", b"c"}
    flat = rc.execute_command("HRANDFIELD", "h", -50, "withvalues")
    assert len(flat) == 100
    for f, v in zip(flat[::2], flat[1::2]):
        assert {b"a": b"1", b"b": b"2", b"c": b"3"}[f] == v
    assert len(rc.execute_command("HRANDFIELD", "h", -1)) == 1


def test_hrandfield_resp3_withvalues_pairs(rc3):
    rc3.execute_command("HSET", "h", "a", "1", "b", "2")
    got = rc3.execute_command("HRANDFIELD", "h", 5, "WITHVALUES")
    assert sorted(got) == [[b"a", b"1"], [b"b", b"2"]]
    got = rc3.execute_command("HRANDFIELD", "h", -4, "WITHVALUES")
    assert len(got) == 4 and all(p in ([b"a", b"1"], [b"b", b"2"]) for p in got)
    assert sorted(rc3.execute_command("HRANDFIELD", "h", 2)) == [b"a", b"b"]
    assert rc3.execute_command("HRANDFIELD", "missing") is None


def test_hrandfield_errors(rc):
    rc.execute_command("HSET", "h", "a", "1")
    with raises(SYNTAX):
        rc.execute_command("HRANDFIELD", "h", 1, "foo")
    with raises(SYNTAX):
        rc.execute_command("HRANDFIELD", "h", 1, "WITHVALUES", "x")
    with raises(NOT_INT):
        rc.execute_command("HRANDFIELD", "h", "abc")
    with raises(NOT_INT):
        rc.execute_command("HRANDFIELD", "h", "1.5")
    with raises("value is out of range"):
        rc.execute_command("HRANDFIELD", "h", -5000000000000000000, "WITHVALUES")
    with raises("value is out of range"):
        rc.execute_command("HRANDFIELD", "h", 5000000000000000000, "WITHVALUES")
    for key in ("h", "missing"):
        with raises(LLONG_RANGE):
            rc.execute_command("HRANDFIELD", key, "-9223372036854775808")
        with raises(LLONG_RANGE):
            rc.execute_command("HRANDFIELD", key, "-9223372036854775808", "WITHVALUES")
    # A huge count without WITHVALUES is fine: it returns the whole hash.
    assert rc.execute_command("HRANDFIELD", "h", "9223372036854775807") == [b"a"]


# ---------------------------------------------------------------- HSCAN

def test_hscan_full_iteration(rc):
    data = {b"f%d" % i: b"v%d" % i for i in range(1000)}
    hset_many(rc, "h", data)
    seen, calls = hscan_all(rc, "h")
    assert calls > 1
    assert {f for f, _ in seen} == set(data)
    assert all(data[f] == v for f, v in seen)
    seen, _ = hscan_all(rc, "h", "COUNT", 1)
    assert {f for f, _ in seen} == set(data)
    seen, _ = hscan_all(rc, "h", "COUNT", 5000)
    assert {f for f, _ in seen} == set(data)


def test_hscan_match(rc):
    data = {b"f%d" % i: b"v%d" % i for i in range(1000)}
    data[b"other"] = b"x"
    hset_many(rc, "h", data)
    seen, _ = hscan_all(rc, "h", "MATCH", "f1*")
    want = {f for f in data if f.startswith(b"f1")}
    assert len(want) == 111
    assert {f for f, _ in seen} == want
    assert all(data[f] == v for f, v in seen)
    seen, _ = hscan_all(rc, "h", "MATCH", "f?9", "COUNT", 100)
    assert {f for f, _ in seen} == {b"f%d9" % i for i in range(1, 10)}
    seen, _ = hscan_all(rc, "h", "MATCH", "nothing*")
    assert seen == []


def test_hscan_small_hash_returns_everything_at_once(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    cursor, items = rc.execute_command("HSCAN", "h", 0, "COUNT", 1)
    assert cursor == b"0"
    assert pairs(items) == {b"a": b"1", b"b": b"2", b"c": b"3"}
    cursor, items = rc.execute_command("HSCAN", "h", 0, "MATCH", "[ab]")
    assert cursor == b"0" and pairs(items) == {b"a": b"1", b"b": b"2"}
    assert rc.execute_command("HSCAN", "missing", 0) == [b"0", []]


def test_hscan_errors(rc):
    rc.execute_command("HSET", "h", "a", "1")
    with raises(SYNTAX):
        rc.execute_command("HSCAN", "h", 0, "COUNT", 0)
    with raises(SYNTAX):
        rc.execute_command("HSCAN", "h", 0, "COUNT", -1)
    with raises(NOT_INT):
        rc.execute_command("HSCAN", "h", 0, "COUNT", "x")
    with raises(SYNTAX):
        rc.execute_command("HSCAN", "h", 0, "MATCH")
    with raises(SYNTAX):
        rc.execute_command("HSCAN", "h", 0, "TYPE", "string")
    with raises(SYNTAX):
        rc.execute_command("HSCAN", "h", 0, "FOO", "bar")
    for bad in ("abc", "1.5", "18446744073709551616", " 1"):
        with raises("invalid cursor"):
            rc.execute_command("HSCAN", "h", bad)
    with raises(arity("hscan")):
        rc.execute_command("HSCAN", "h")


def test_hscan_while_modifying(rc):
    # Fields present for the whole iteration are returned at least once.
    stable = {b"s%d" % i for i in range(800)}
    hset_many(rc, "h", {f: b"1" for f in stable})
    cursor, seen, n = b"0", set(), 0
    while True:
        cursor, items = rc.execute_command("HSCAN", "h", cursor, "COUNT", 20)
        seen.update(items[::2])
        n += 1
        rc.execute_command("HSET", "h", *[x for i in range(20) for x in (b"n%d_%d" % (n, i), b"v")])
        if n % 2 == 0:
            rc.execute_command("HDEL", "h", *[b"n%d_%d" % (n - 1, i) for i in range(20)])
        if cursor == b"0":
            break
        assert n < 10000
    assert stable <= seen


@skip_74
def test_hscan_novalues(rc):
    data = {b"f%d" % i: b"v%d" % i for i in range(700)}
    hset_many(rc, "h", data)
    for key, want in (("h", set(data)),):
        cursor, fields = b"0", []
        while True:
            cursor, items = rc.execute_command("HSCAN", key, cursor, "NOVALUES")
            fields += items
            if cursor == b"0":
                break
        assert set(fields) == want
    rc.execute_command("HSET", "small", "a", "1", "b", "2")
    cursor, items = rc.execute_command("HSCAN", "small", 0, "NOVALUES")
    assert cursor == b"0" and sorted(items) == [b"a", b"b"]


# ---------------------------------------------------------------- encodings

def test_encoding_listpack_to_hashtable_by_entries(rc):
    hset_many(rc, "h", {"f%d" % i: "v" for i in range(512)})
    assert encoding(rc, "h") == b"listpack"
    rc.execute_command("HSET", "h", "f512", "v")
    assert encoding(rc, "h") == b"hashtable"
    # Never converts back.
    rc.execute_command("HDEL", "h", *["f%d" % i for i in range(510)])
    assert encoding(rc, "h") == b"hashtable"
    assert rc.execute_command("HLEN", "h") == 3


@pytest.mark.parametrize("where", ["value", "field"])
def test_encoding_by_length(rc, where):
    rc.execute_command("HSET", "h", "a", "1")
    assert encoding(rc, "h") == b"listpack"
    rc.execute_command("HSET", "h", "x" * 64, "y" * 64)
    assert encoding(rc, "h") == b"listpack"
    long_ = "z" * 65
    rc.execute_command("HSET", "h", *((long_, "v") if where == "field" else ("k", long_)))
    assert encoding(rc, "h") == b"hashtable"
    assert rc.execute_command("HLEN", "h") == 3
    assert rc.execute_command("HGET", "h", "a") == b"1"


def test_encoding_hincr_and_hsetnx_conversions(rc):
    rc.execute_command("HSETNX", "h", "a", "v" * 65)
    assert encoding(rc, "h") == b"hashtable"
    hset_many(rc, "h2", {"f%d" % i: "1" for i in range(512)})
    assert rc.execute_command("HINCRBY", "h2", "new", "1") == 1
    assert encoding(rc, "h2") == b"hashtable"
    assert rc.execute_command("HGET", "h2", "f0") == b"1"


@skip_72
def test_hset_many_pairs_converts_first(rc, config_set):
    # Redis 7.2 sizes the hash for all of HSET's pairs before setting, duplicates or not.
    assert rc.execute_command("HSET", "h", *(["f", "v"] * 513)) == 1
    rc.execute_command("HSET", "h2", "a", "1")
    assert rc.execute_command("HMSET", "h2", *(["f", "v"] * 513)) == b"OK"
    rc.execute_command("HSET", "h3", *(["f", "v"] * 512))
    config_set("hash-max-listpack-entries", "2")
    rc.execute_command("HSET", "h4", "a", "1", "b", "2", "a", "3")
    got = {k: encoding(rc, k) for k in ("h", "h2", "h3", "h4")}
    assert got == {"h": b"hashtable", "h2": b"hashtable", "h3": b"listpack", "h4": b"hashtable"}
    assert rc.execute_command("HGETALL", "h4") in ([b"a", b"3", b"b", b"2"], [b"b", b"2", b"a", b"3"])


def test_config_hash_max_listpack_entries(rc, config_set):
    assert rc.execute_command("CONFIG", "GET", "hash-max-listpack-entries") == \
        [b"hash-max-listpack-entries", b"512"]
    assert rc.execute_command("CONFIG", "GET", "hash-max-ziplist-entries") == \
        [b"hash-max-ziplist-entries", b"512"]
    config_set("hash-max-listpack-entries", "3")
    assert rc.execute_command("CONFIG", "GET", "hash-max-ziplist-entries")[1] == b"3"
    rc.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert encoding(rc, "h") == b"listpack"
    rc.execute_command("HSET", "h", "d", "4")
    assert encoding(rc, "h") == b"hashtable"
    config_set("hash-max-ziplist-entries", "5")
    assert rc.execute_command("CONFIG", "GET", "hash-max-listpack-entries")[1] == b"5"
    hset_many(rc, "h2", {"f%d" % i: "v" for i in range(5)})
    assert encoding(rc, "h2") == b"listpack"
    rc.execute_command("HSET", "h2", "f5", "v")
    assert encoding(rc, "h2") == b"hashtable"
    assert pairs(rc.execute_command("HGETALL", "h2")) == {b"f%d" % i: b"v" for i in range(6)}


def test_config_hash_max_listpack_value(rc, config_set):
    assert rc.execute_command("CONFIG", "GET", "hash-max-listpack-value") == \
        [b"hash-max-listpack-value", b"64"]
    assert rc.execute_command("CONFIG", "GET", "hash-max-ziplist-value") == \
        [b"hash-max-ziplist-value", b"64"]
    config_set("hash-max-listpack-value", "5")
    assert rc.execute_command("CONFIG", "GET", "hash-max-ziplist-value")[1] == b"5"
    rc.execute_command("HSET", "h", "a", "12345")
    assert encoding(rc, "h") == b"listpack"
    rc.execute_command("HSET", "h", "b", "123456")
    assert encoding(rc, "h") == b"hashtable"
    rc.execute_command("HSET", "h2", "123456", "a")
    assert encoding(rc, "h2") == b"hashtable"
    config_set("hash-max-ziplist-value", "100")
    rc.execute_command("HSET", "h3", "a", "v" * 100)
    assert encoding(rc, "h3") == b"listpack"


def test_config_get_hash_pattern(rc):
    got = pairs(rc.execute_command("CONFIG", "GET", "hash-max-*"))
    assert got == {b"hash-max-listpack-entries": b"512", b"hash-max-ziplist-entries": b"512",
                   b"hash-max-listpack-value": b"64", b"hash-max-ziplist-value": b"64"}


# ---------------------------------------------------------------- types

HASH_COMMANDS = [
    ("HSET", "k", "f", "v"), ("HSETNX", "k", "f", "v"), ("HMSET", "k", "f", "v"),
    ("HGET", "k", "f"), ("HMGET", "k", "f"), ("HDEL", "k", "f"), ("HLEN", "k"),
    ("HSTRLEN", "k", "f"), ("HEXISTS", "k", "f"), ("HGETALL", "k"), ("HKEYS", "k"),
    ("HVALS", "k"), ("HINCRBY", "k", "f", "1"), ("HINCRBYFLOAT", "k", "f", "1"),
    ("HRANDFIELD", "k"), ("HRANDFIELD", "k", "1"), ("HRANDFIELD", "k", "0"),
    ("HRANDFIELD", "k", "-2", "WITHVALUES"), ("HSCAN", "k", "0"),
]


@pytest.mark.parametrize("cmd", HASH_COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("kind", ["string", "set"])
def test_hash_commands_wrongtype(rc, cmd, kind):
    if kind == "string":
        rc.execute_command("SET", "k", "v")
    else:
        rc.execute_command("SADD", "k", "f")
    with raises(WRONGTYPE):
        rc.execute_command(*cmd)
    assert rc.execute_command("TYPE", "k") == kind.encode()


@pytest.mark.parametrize("cmd", [
    ("GET", "h"), ("INCR", "h"), ("DECRBY", "h", "1"), ("INCRBYFLOAT", "h", "1"),
    ("APPEND", "h", "x"), ("SET", "h", "v", "GET"), ("GETSET", "h", "v"), ("STRLEN", "h"),
    ("GETRANGE", "h", "0", "1"), ("SETRANGE", "h", "0", "x"), ("GETDEL", "h"), ("GETEX", "h"),
    ("SADD", "h", "x"), ("SMEMBERS", "h"),
], ids=lambda c: " ".join(c))
def test_other_commands_against_hash(rc, cmd):
    rc.execute_command("HSET", "h", "f", "v")
    with raises(WRONGTYPE):
        rc.execute_command(*cmd)
    assert rc.execute_command("HGETALL", "h") == [b"f", b"v"]


def test_hash_and_string_keyspace(rc):
    rc.execute_command("HSET", "h", "f", "v")
    rc.execute_command("SET", "s", "x")
    assert rc.execute_command("MGET", "h", "s", "missing") == [None, b"x", None]
    assert rc.execute_command("TYPE", "h") == b"hash"
    assert rc.execute_command("MSETNX", "h", "1", "new", "2") == 0
    assert rc.execute_command("SET", "h", "now a string") == b"OK"
    assert rc.execute_command("TYPE", "h") == b"string"
    assert rc.execute_command("HSET", "h2", "f", "v") == 1
    assert rc.execute_command("SET", "h2", "x", "NX") is None
    assert rc.execute_command("TYPE", "h2") == b"hash"


def test_scan_type_hash(rc):
    for k in ("a", "b", "c", "x", "y"):
        rc.execute_command("HSET", "h" + k, "f", "v")
        rc.execute_command("SET", "s" + k, "v")
    rc.execute_command("SADD", "set", "m")
    cursor, keys = b"0", set()
    while True:
        cursor, batch = rc.execute_command("SCAN", cursor, "TYPE", "hash")
        keys.update(batch)
        if cursor == b"0":
            break
    assert keys == {b"ha", b"hb", b"hc", b"hx", b"hy"}


# ---------------------------------------------------------------- keyspace operations

@pytest.mark.parametrize("src,dst", [("{t}a", "{t}b"), ("a", "x"), ("b", "y"), ("c", "a")])
def test_rename_hash(rc, src, dst):
    hset_many(rc, src, {"f%d" % i: "v%d" % i for i in range(600)})
    rc.execute_command("EXPIRE", src, "1000")
    assert rc.execute_command("RENAME", src, dst) == b"OK"
    assert rc.execute_command("EXISTS", src) == 0
    assert rc.execute_command("TYPE", dst) == b"hash"
    assert rc.execute_command("HLEN", dst) == 600
    assert rc.execute_command("HGET", dst, "f599") == b"v599"
    assert 990 < rc.execute_command("TTL", dst) <= 1000
    rc.execute_command("HSET", src, "new", "1")
    assert rc.execute_command("RENAMENX", src, dst) == 0
    assert rc.execute_command("HLEN", src) == 1


@pytest.mark.parametrize("src,dst", [("{t}a", "{t}b"), ("x", "y"), ("a", "c")])
@pytest.mark.parametrize("size", [3, 700])
def test_copy_hash_is_deep(rc, src, dst, size):
    data = {b"f%d" % i: b"v%d" % i for i in range(size)}
    hset_many(rc, src, data)
    assert rc.execute_command("COPY", src, dst) == 1
    assert encoding(rc, dst) == encoding(rc, src)
    rc.execute_command("HSET", dst, "f0", "changed", "extra", "1")
    rc.execute_command("HDEL", dst, "f1")
    rc.execute_command("HINCRBY", dst, "n", "5")
    assert pairs(rc.execute_command("HGETALL", src)) == data
    assert rc.execute_command("HGET", dst, "f0") == b"changed"
    assert rc.execute_command("HLEN", dst) == size + 1
    assert rc.execute_command("COPY", src, dst) == 0
    assert rc.execute_command("COPY", src, dst, "REPLACE") == 1
    assert pairs(rc.execute_command("HGETALL", dst)) == data


def test_move_hash(rc):
    rc.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rc.execute_command("MOVE", "h", "1") == 1
    assert rc.execute_command("EXISTS", "h") == 0
    assert rc.execute_command("SELECT", "1") == b"OK"
    assert pairs(rc.execute_command("HGETALL", "h")) == {b"a": b"1", b"b": b"2"}
    assert rc.execute_command("HSET", "h", "c", "3") == 1
    rc.execute_command("SELECT", "0")
    rc.execute_command("HSET", "h", "z", "0")
    assert rc.execute_command("MOVE", "h", "1") == 0
    assert rc.execute_command("HGETALL", "h") == [b"z", b"0"]


def test_del_unlink_hash(rc):
    rc.execute_command("HSET", "a", "f", "v")
    hset_many(rc, "b", {"f%d" % i: "v" for i in range(1000)})
    assert rc.execute_command("DEL", "a") == 1
    assert rc.execute_command("UNLINK", "b") == 1
    assert rc.execute_command("EXISTS", "a", "b") == 0
    assert rc.execute_command("HSET", "b", "f", "v") == 1
    assert rc.execute_command("HLEN", "b") == 1


def test_expire_hash(rc):
    rc.execute_command("HSET", "h", "a", "1")
    hset_many(rc, "big", {"f%d" % i: "v" for i in range(700)})
    assert rc.execute_command("PEXPIRE", "h", "600") == 1
    assert rc.execute_command("PEXPIRE", "big", "600") == 1
    assert rc.execute_command("HSET", "h", "b", "2") == 1  # a write keeps the TTL
    assert 0 < rc.execute_command("PTTL", "h") <= 600
    deadline = time.monotonic() + 3
    while rc.execute_command("EXISTS", "h", "big") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rc.execute_command("EXISTS", "h", "big") == 0
    assert rc.execute_command("HGET", "h", "a") is None
    assert rc.execute_command("HLEN", "big") == 0
    assert rc.execute_command("HSET", "h", "c", "3") == 1
    assert rc.execute_command("TTL", "h") == -1


def test_memory_usage_grows(rc):
    rc.execute_command("HSET", "h", "a", "1")
    small = rc.execute_command("MEMORY", "USAGE", "h")
    hset_many(rc, "h", {"f%d" % i: "v" * 20 for i in range(1000)})
    big = rc.execute_command("MEMORY", "USAGE", "h", "SAMPLES", "0")
    assert 0 < small < big
    assert big > 1000 * 20
    assert rc.execute_command("MEMORY", "USAGE", "missing") is None


# ---------------------------------------------------------------- values

def test_binary_safe_fields_and_values(rc):
    fields = [b"\x00\xff", b"\xff\x00", b"a\r\nb", b"\x00", b" "]
    data = {f: f + b"\x00value\xff" for f in fields}
    for key in ("small", "big"):
        hset_many(rc, key, data)
        if key == "big":
            hset_many(rc, key, {"pad%d" % i: "v" for i in range(600)})
        for f, v in data.items():
            assert rc.execute_command("HGET", key, f) == v
            assert rc.execute_command("HSTRLEN", key, f) == len(v)
        got = pairs(rc.execute_command("HGETALL", key))
        assert all(got[f] == v for f, v in data.items())
        assert rc.execute_command("HDEL", key, b"\x00\xff") == 1
        assert rc.execute_command("HEXISTS", key, b"\x00\xff") == 0
        assert rc.execute_command("HEXISTS", key, b"\x00") == 1


def test_empty_field_and_value(rc):
    assert rc.execute_command("HSET", "h", "", "") == 1
    assert rc.execute_command("HGET", "h", "") == b""
    assert rc.execute_command("HEXISTS", "h", "") == 1
    assert rc.execute_command("HSTRLEN", "h", "") == 0
    assert rc.execute_command("HLEN", "h") == 1
    assert rc.execute_command("HGETALL", "h") == [b"", b""]
    assert rc.execute_command("HSET", "h", "", "x") == 0
    assert rc.execute_command("HGET", "h", "") == b"x"
    assert rc.execute_command("HDEL", "h", "") == 1
    assert rc.execute_command("EXISTS", "h") == 0


@pytest.mark.parametrize("big", [False, True])
def test_integer_looking_values_are_kept_exactly(rc, big):
    values = ["123", "-0", "007", "+5", "1e3", " 7", "-9223372036854775808",
              "9223372036854775808", "0x1f", "12345678901234567890123", "0", "-1", "3.0"]
    data = {("f%d" % i).encode(): v.encode() for i, v in enumerate(values)}
    if big:
        data.update({b"pad%d" % i: b"%d" % i for i in range(600)})
    hset_many(rc, "h", data)
    assert pairs(rc.execute_command("HGETALL", "h")) == data
    for f, v in data.items():
        assert rc.execute_command("HGET", "h", f) == v
        assert rc.execute_command("HSTRLEN", "h", f) == len(v)
    # Integer-looking fields are kept exactly too.
    rc.execute_command("HSET", "h", "1", "one", "01", "zero-one")
    assert rc.execute_command("HMGET", "h", "1", "01", "+1") == [b"one", b"zero-one", None]


def test_large_values(rc):
    big = bytes(random.Random(1).getrandbits(8) for _ in range(100 * 1024))
    assert rc.execute_command("HSET", "h", "big", big, "small", "s") == 2
    assert rc.execute_command("HGET", "h", "big") == big
    assert rc.execute_command("HSTRLEN", "h", "big") == len(big)
    assert encoding(rc, "h") == b"hashtable"
    assert rc.execute_command("HSET", "h", big, "as field") == 1
    assert rc.execute_command("HGET", "h", big) == b"as field"
    assert pairs(rc.execute_command("HGETALL", "h"))[b"big"] == big
    assert rc.execute_command("HDEL", "h", big, "big") == 2
    assert rc.execute_command("HGETALL", "h") == [b"small", b"s"]


# ---------------------------------------------------------------- long randomized run

def test_random_ops_match_dict_model(rc):
    rng = random.Random(20240611)
    model = {}
    pipe = rc.pipeline(transaction=False)
    expected = []
    checked_listpack = converted = False
    for i in range(20000):
        # The field pool grows so that the hash goes from listpack to hashtable.
        pool = 20 + i // 25
        f = b"f%d" % rng.randrange(pool)
        op = rng.random()
        if op < 0.45:
            v = b"v%d" % rng.randrange(1000)
            if i > 5000 and rng.random() < 0.02:
                v = b"L" * rng.randrange(60, 80)
                converted = converted or len(v) > 64
            pipe.execute_command("HSET", "{m}h", f, v)
            expected.append(int(f not in model))
            model[f] = v
        elif op < 0.65:
            pipe.execute_command("HDEL", "{m}h", f)
            expected.append(int(model.pop(f, None) is not None))
        else:
            n = b"n%d" % rng.randrange(pool // 4 + 1)
            incr = rng.randrange(-1000, 1000)
            pipe.execute_command("HINCRBY", "{m}h", n, incr)
            model[n] = b"%d" % (int(model.get(n, b"0")) + incr)
            expected.append(int(model[n]))
        converted = converted or len(model) > 512
        if i % 1000 == 999:
            assert pipe.execute() == expected
            expected = []
            got = pairs(rc.execute_command("HGETALL", "{m}h"))
            assert got == model
            assert rc.execute_command("HLEN", "{m}h") == len(model)
            if not converted:
                assert encoding(rc, "{m}h") == b"listpack"
                checked_listpack = True
    assert pipe.execute() == expected
    assert checked_listpack and converted
    assert encoding(rc, "{m}h") == b"hashtable"
    assert pairs(rc.execute_command("HGETALL", "{m}h")) == model
    seen, _ = hscan_all(rc, "{m}h")
    assert dict(seen) == model
    # Empty it completely: the key goes away.
    assert rc.execute_command("HDEL", "{m}h", *model) == len(model)
    assert rc.execute_command("EXISTS", "{m}h") == 0
