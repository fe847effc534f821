# Generic keyspace commands: DEL/EXISTS/TYPE/expiry/KEYS/SCAN/RENAME/COPY/MOVE/databases.
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import NOT_INT, SYNTAX, arity, make_list, raises, rc, rc3, wait_for  # noqa: F401  (fixtures)

DB_RANGE = "DB index is out of range"


# ---------------------------------------------------------------- DEL / UNLINK / EXISTS / TYPE / TOUCH

def test_del(rc):
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    assert rc.execute_command("DEL", "a", "a", "missing", "c") == 2
    assert rc.execute_command("EXISTS", "a", "c") == 0
    assert rc.execute_command("DEL", "b") == 1
    assert rc.execute_command("DEL", "b") == 0
    with raises(arity("del")):
        rc.execute_command("DEL")


def test_del_other_type(rc):
    make_list(rc, "l")
    rc.execute_command("SET", "s", "1")
    assert rc.execute_command("DEL", "l", "s") == 2
    assert rc.execute_command("EXISTS", "l", "s") == 0


def test_unlink(rc):
    rc.execute_command("MSET", "a", "1", "b", "2")
    assert rc.execute_command("UNLINK", "a", "b", "b", "c") == 2
    assert rc.execute_command("DBSIZE") == 0
    with raises(arity("unlink")):
        rc.execute_command("UNLINK")


def test_exists_counts_duplicates(rc):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command("EXISTS", "a") == 1
    assert rc.execute_command("EXISTS", "a", "a", "a") == 3
    assert rc.execute_command("EXISTS", "a", "missing", "a") == 2
    assert rc.execute_command("EXISTS", "missing") == 0
    with raises(arity("exists")):
        rc.execute_command("EXISTS")


def test_type(rc):
    rc.execute_command("SET", "s", "v")
    rc.execute_command("SET", "n", "12")
    assert rc.execute_command("TYPE", "s") == b"string"
    assert rc.execute_command("TYPE", "n") == b"string"
    assert rc.execute_command("TYPE", "missing") == b"none"
    with raises(arity("type")):
        rc.execute_command("TYPE")


@pytest.mark.parametrize("create,name", [
    (("RPUSH", "k", "x"), b"list"),
    (("SADD", "k", "x"), b"set"),
    (("HSET", "k", "f", "v"), b"hash"),
    (("ZADD", "k", "1", "m"), b"zset"),
])
def test_type_other_types(rc, create, name):
    try:
        rc.execute_command(*create)
    except redis.ResponseError as e:
        if str(e).startswith("unknown command"):
            pytest.skip("server has no %s yet" % create[0])
        raise
    assert rc.execute_command("TYPE", "k") == name


def test_type_is_simple_string(server):
    from helpers import Conn
    with Conn(server) as c:
        assert c.call("SET", "typed", "v") == b"+OK\r\n"
        assert c.call("TYPE", "typed") == b"+string\r\n"
        assert c.call("TYPE", "typed-missing") == b"+none\r\n"
        assert c.call("DEL", "typed") == b":1\r\n"


def test_touch(rc):
    rc.execute_command("MSET", "a", "1", "b", "2")
    assert rc.execute_command("TOUCH", "a", "b", "a", "missing") == 3
    assert rc.execute_command("TOUCH", "missing") == 0
    with raises(arity("touch")):
        rc.execute_command("TOUCH")


# ---------------------------------------------------------------- EXPIRE family

def test_expire_ttl_pttl(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("PTTL", "k") == -1
    assert rc.execute_command("TTL", "missing") == -2
    assert rc.execute_command("PTTL", "missing") == -2
    assert rc.execute_command("EXPIRE", "k", "100") == 1
    assert rc.execute_command("TTL", "k") == 100
    assert 99000 < rc.execute_command("PTTL", "k") <= 100000
    assert rc.execute_command("PEXPIRE", "k", "2800") == 1
    assert rc.execute_command("TTL", "k") == 3  # rounded
    assert 2000 < rc.execute_command("PTTL", "k") <= 2800
    assert rc.execute_command("EXPIRE", "missing", "100") == 0
    assert rc.execute_command("PEXPIRE", "missing", "100") == 0


def test_expireat_pexpireat_expiretime(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRETIME", "k") == -1
    assert rc.execute_command("PEXPIRETIME", "k") == -1
    assert rc.execute_command("EXPIRETIME", "missing") == -2
    assert rc.execute_command("PEXPIRETIME", "missing") == -2
    assert rc.execute_command("EXPIREAT", "k", "4000000000") == 1
    assert rc.execute_command("EXPIRETIME", "k") == 4000000000
    assert rc.execute_command("PEXPIRETIME", "k") == 4000000000000
    assert rc.execute_command("PEXPIREAT", "k", "4000000000123") == 1
    assert rc.execute_command("EXPIRETIME", "k") == 4000000000
    assert rc.execute_command("PEXPIRETIME", "k") == 4000000000123
    assert rc.execute_command("EXPIREAT", "missing", "4000000000") == 0
    assert rc.execute_command("PEXPIREAT", "missing", "4000000000000") == 0
    now = int(time.time())
    rc.execute_command("EXPIREAT", "k", now + 50)
    assert 48 <= rc.execute_command("TTL", "k") <= 50


def test_expiretime_rounds_to_the_nearest_second(rc):
    rc.execute_command("SET", "k", "v")
    rc.execute_command("PEXPIREAT", "k", "4000000000700")
    assert rc.execute_command("EXPIRETIME", "k") == 4000000001
    rc.execute_command("PEXPIREAT", "k", "4000000000499")
    assert rc.execute_command("EXPIRETIME", "k") == 4000000000
    assert rc.execute_command("PEXPIRETIME", "k") == 4000000000499


def test_persist(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("PERSIST", "k") == 1
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("PERSIST", "k") == 0
    assert rc.execute_command("PERSIST", "missing") == 0
    assert rc.execute_command("GET", "k") == b"v"


@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "0"), ("EXPIRE", "-1"), ("PEXPIRE", "0"), ("PEXPIRE", "-1"),
    ("EXPIREAT", "1"), ("EXPIREAT", "0"), ("PEXPIREAT", "1"), ("EXPIREAT", "-100"),
])
def test_nonpositive_or_past_expiry_deletes(rc, cmd, arg):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command(cmd, "k", arg) == 1
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("TTL", "k") == -2


def test_expire_nx_xx(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "100", "XX") == 0
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("EXPIRE", "k", "100", "NX") == 1
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("EXPIRE", "k", "200", "NX") == 0
    assert rc.execute_command("EXPIRE", "k", "200", "XX") == 1
    assert rc.execute_command("TTL", "k") == 200
    assert rc.execute_command("EXPIRE", "missing", "100", "NX") == 0


def test_expire_gt_lt(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("EXPIRE", "k", "50", "GT") == 0
    assert rc.execute_command("EXPIRE", "k", "200", "GT") == 1
    assert rc.execute_command("TTL", "k") == 200
    assert rc.execute_command("EXPIRE", "k", "300", "LT") == 0
    assert rc.execute_command("EXPIRE", "k", "100", "LT") == 1
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("EXPIRE", "k", "60", "xx", "gt") == 0
    assert rc.execute_command("EXPIRE", "k", "150", "xx", "gt") == 1
    assert rc.execute_command("TTL", "k") == 150
    assert rc.execute_command("EXPIRE", "k", "50", "xx", "lt") == 1
    assert rc.execute_command("TTL", "k") == 50


def test_expire_gt_lt_on_persistent_key(rc):
    # A key without TTL counts as an infinite TTL: GT never applies, LT always does.
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "100", "GT") == 0
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("PEXPIRE", "k", "100000", "LT") == 1
    assert rc.execute_command("TTL", "k") == 100


def test_expire_lt_on_persistent_key_even_at_the_largest_deadline(rc):
    # Found by the differential test: "no TTL" is not the deadline LLONG_MAX.
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("PEXPIREAT", "k", "9223372036854775807", "LT") == 1
    assert rc.execute_command("PEXPIRETIME", "k") == 9223372036854775807
    assert rc.execute_command("PEXPIREAT", "k", "9223372036854775807", "LT") == 0
    assert rc.execute_command("PEXPIREAT", "k", "9223372036854775807", "GT") == 0


def test_expire_negative_with_condition(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "-5", "GT") == 0
    assert rc.execute_command("EXISTS", "k") == 1
    assert rc.execute_command("EXPIRE", "k", "-5", "XX") == 0
    assert rc.execute_command("EXISTS", "k") == 1
    assert rc.execute_command("EXPIRE", "k", "-5", "LT") == 1
    assert rc.execute_command("EXISTS", "k") == 0
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "-5", "NX") == 1
    assert rc.execute_command("EXISTS", "k") == 0


def test_expire_repeated_option_is_fine(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "100", "NX", "nx") == 1
    assert rc.execute_command("EXPIRE", "k", "200", "GT", "gt") == 1
    assert rc.execute_command("TTL", "k") == 200


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
@pytest.mark.parametrize("opts,msg", [
    (("NX", "XX"), "NX and XX, GT or LT options at the same time are not compatible"),
    (("XX", "NX"), "NX and XX, GT or LT options at the same time are not compatible"),
    (("NX", "GT"), "NX and XX, GT or LT options at the same time are not compatible"),
    (("LT", "NX"), "NX and XX, GT or LT options at the same time are not compatible"),
    (("GT", "LT"), "GT and LT options at the same time are not compatible"),
    (("LT", "GT"), "GT and LT options at the same time are not compatible"),
    (("XX", "GT", "LT"), "GT and LT options at the same time are not compatible"),
    (("FOO",), "Unsupported option FOO"),
    (("NX", "bar"), "Unsupported option bar"),
    (("1",), "Unsupported option 1"),
    (("a\0b",), "Unsupported option a"),  # printed as C's %s does: up to a NUL byte
])
def test_expire_option_errors(rc, cmd, opts, msg):
    rc.execute_command("SET", "k", "v")
    with raises(msg):
        rc.execute_command(cmd, "k", "4000000000000", *opts)
    assert rc.execute_command("TTL", "k") == -1


def test_expire_option_checked_before_value(rc):
    rc.execute_command("SET", "k", "v")
    with raises("Unsupported option foo"):
        rc.execute_command("EXPIRE", "k", "abc", "foo")


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
@pytest.mark.parametrize("val", ["abc", "1.5", "", "9223372036854775808", " 1"])
def test_expire_not_integer(rc, cmd, val):
    rc.execute_command("SET", "k", "v")
    with raises(NOT_INT):
        rc.execute_command(cmd, "k", val)
    assert rc.execute_command("TTL", "k") == -1


@pytest.mark.parametrize("cmd,val", [
    ("EXPIRE", "9223372036854775807"),
    ("EXPIRE", "9223372036854775"),
    ("EXPIRE", "-9223372036854775808"),
    ("PEXPIRE", "9223372036854775807"),
    ("PEXPIRE", "9223372036854775000"),
    ("EXPIREAT", "9223372036854775807"),
    ("EXPIREAT", "-9223372036854775808"),
])
def test_expire_overflow(rc, cmd, val):
    rc.execute_command("SET", "k", "v")
    with raises("invalid expire time in '%s' command" % cmd.lower()):
        rc.execute_command(cmd, "k", val)
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("GET", "k") == b"v"


def test_pexpireat_max_is_accepted(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("PEXPIREAT", "k", "9223372036854775807") == 1
    assert rc.execute_command("PEXPIRETIME", "k") == 9223372036854775807
    assert rc.execute_command("GET", "k") == b"v"


def test_expire_arity(rc):
    with raises(arity("expire")):
        rc.execute_command("EXPIRE", "k")
    with raises(arity("pexpireat")):
        rc.execute_command("PEXPIREAT")
    with raises(arity("ttl")):
        rc.execute_command("TTL", "a", "b")
    with raises(arity("persist")):
        rc.execute_command("PERSIST")
    with raises(arity("expiretime")):
        rc.execute_command("EXPIRETIME", "a", "b")


def test_expire_really_expires(rc):
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    assert rc.execute_command("PEXPIRE", "a", "50") == 1
    now_ms = int(time.time() * 1000)
    assert rc.execute_command("PEXPIREAT", "b", now_ms + 50) == 1
    time.sleep(0.12)
    assert rc.execute_command("EXISTS", "a", "b", "c") == 1
    assert rc.execute_command("TTL", "a") == -2
    assert rc.execute_command("KEYS", "*") == [b"c"]


# ---------------------------------------------------------------- KEYS

KEYSET = ["hello", "hallo", "hxllo", "hllo", "heeeello", "*x", "a?b", "", "h[e]llo", "ab\\c", "h!llo"]


@pytest.mark.parametrize("pattern,expected", [
    ("h?llo", ["hallo", "hello", "hxllo", "h!llo"]),
    ("h*llo", ["h[e]llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "h!llo"]),
    ("h[ae]llo", ["hallo", "hello"]),
    ("h[^e]llo", ["hallo", "hxllo", "h!llo"]),
    ("h[a-b]llo", ["hallo"]),
    ("h[b-a]llo", ["hallo"]),  # reversed ranges are accepted
    ("h[!e]llo", ["hello", "h!llo"]),  # '!' is NOT a negation in Redis globs
    ("\\*x", ["*x"]),
    ("a\\?b", ["a?b"]),
    ("h\\[e\\]llo", ["h[e]llo"]),
    ("ab\\\\c", ["ab\\c"]),
    ("*", KEYSET),
    ("", [""]),
    ("nomatch*", []),
    ("hello", ["hello"]),
    ("*llo", ["h[e]llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "h!llo"]),
    ("h*e*llo", ["h[e]llo", "heeeello", "hello"]),
])
def test_keys_glob(rc, pattern, expected):
    for k in KEYSET:
        rc.execute_command("SET", k, "1")
    got = rc.execute_command("KEYS", pattern)
    assert sorted(got) == sorted(k.encode() for k in expected)
    assert len(got) == len(expected)


def test_keys_does_not_see_other_db_or_expired(rc):
    rc.execute_command("SET", "a", "1")
    rc.execute_command("SET", "gone", "1", "PX", "20")
    rc.execute_command("SELECT", "3")
    rc.execute_command("SET", "b", "1")
    rc.execute_command("SELECT", "0")
    time.sleep(0.06)
    assert rc.execute_command("KEYS", "*") == [b"a"]


def test_keys_arity(rc):
    with raises(arity("keys")):
        rc.execute_command("KEYS")
    with raises(arity("keys")):
        rc.execute_command("KEYS", "a", "b")


# ---------------------------------------------------------------- SCAN

def full_scan(rc, *args, max_iterations=10000):
    cursor = b"0"
    seen = []
    for _ in range(max_iterations):
        cursor, keys = rc.execute_command("SCAN", cursor, *args)
        assert isinstance(cursor, bytes)
        assert cursor.isdigit()
        seen.extend(keys)
        if cursor == b"0":
            return seen
    raise AssertionError("SCAN did not terminate")


def test_scan_empty_db(rc):
    assert rc.execute_command("SCAN", "0") == [b"0", []]


def test_scan_full_iteration_returns_every_key(rc):
    keys = [b"key:%d" % i for i in range(1000)]
    args = []
    for k in keys:
        args += [k, b"v"]
    rc.execute_command("MSET", *args)
    seen = full_scan(rc, "COUNT", "10")
    assert set(seen) == set(keys)
    assert len(seen) >= len(keys)


def test_scan_count_large_returns_all_at_once(rc):
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    cursor, keys = rc.execute_command("SCAN", "0", "COUNT", "1000")
    assert cursor == b"0"
    assert sorted(keys) == [b"a", b"b", b"c"]


def test_scan_match(rc):
    for i in range(100):
        rc.execute_command("SET", "user:%d" % i, "x")
        rc.execute_command("SET", "item:%d" % i, "x")
    seen = full_scan(rc, "MATCH", "user:1?", "COUNT", "7")
    assert sorted(set(seen)) == sorted(b"user:1%d" % i for i in range(10))


def test_scan_type(rc):
    rc.execute_command("SET", "s1", "v")
    rc.execute_command("SET", "s2", "1")
    assert sorted(set(full_scan(rc, "TYPE", "string"))) == [b"s1", b"s2"]
    assert sorted(set(full_scan(rc, "TYPE", "STRING"))) == [b"s1", b"s2"]
    assert full_scan(rc, "TYPE", "list") == []
    assert full_scan(rc, "TYPE", "hash") == []
    assert sorted(set(full_scan(rc, "TYPE", "string", "MATCH", "*2", "COUNT", "100"))) == [b"s2"]


def test_scan_type_with_other_types(rc):
    rc.execute_command("SET", "s1", "v")
    make_list(rc, "l1")
    other = rc.execute_command("TYPE", "l1")  # "list", or "set" before lists exist
    assert other != b"string"
    assert sorted(set(full_scan(rc, "TYPE", "string"))) == [b"s1"]
    assert sorted(set(full_scan(rc, "TYPE", other.decode().upper()))) == [b"l1"]
    assert sorted(set(full_scan(rc, "TYPE", other))) == [b"l1"]


def test_scan_skips_expired(rc):
    rc.execute_command("SET", "live", "1")
    rc.execute_command("SET", "dead", "1", "PX", "20")
    time.sleep(0.06)
    assert full_scan(rc, "COUNT", "100") == [b"live"]


@pytest.mark.parametrize("cursor", ["abc", "1.5", "18446744073709551616", "12abc"])
def test_scan_invalid_cursor(rc, cursor):
    with raises("invalid cursor"):
        rc.execute_command("SCAN", cursor)


def test_scan_empty_cursor_is_zero(rc):
    # Redis parses the cursor with strtoul: an empty string is cursor 0.
    rc.execute_command("SET", "k", "v")
    cursor, keys = rc.execute_command("SCAN", "", "COUNT", "100")
    assert cursor == b"0" and keys == [b"k"]


@pytest.mark.parametrize("args", [
    ("COUNT", "0"), ("COUNT", "-1"), ("COUNT",), ("MATCH",), ("TYPE",), ("FOO",), ("FOO", "bar"),
])
def test_scan_syntax_errors(rc, args):
    with raises(SYNTAX):
        rc.execute_command("SCAN", "0", *args)


def test_scan_count_not_integer(rc):
    with raises(NOT_INT):
        rc.execute_command("SCAN", "0", "COUNT", "abc")


def test_scan_arity(rc):
    with raises(arity("scan")):
        rc.execute_command("SCAN")


# ---------------------------------------------------------------- RENAME / RENAMENX

def test_rename(rc):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command("RENAME", "a", "b") == b"OK"
    assert rc.execute_command("EXISTS", "a") == 0
    assert rc.execute_command("GET", "b") == b"1"


def test_rename_keeps_ttl_and_overwrites(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    rc.execute_command("SET", "b", "old", "EX", "500")
    assert rc.execute_command("RENAME", "a", "b") == b"OK"
    assert rc.execute_command("GET", "b") == b"1"
    assert rc.execute_command("TTL", "b") == 100
    rc.execute_command("SET", "c", "2")
    rc.execute_command("RENAME", "c", "b")
    assert rc.execute_command("TTL", "b") == -1


def test_rename_errors(rc):
    with raises("no such key"):
        rc.execute_command("RENAME", "missing", "x")
    with raises("no such key"):
        rc.execute_command("RENAMENX", "missing", "x")
    with raises("no such key"):
        rc.execute_command("RENAME", "missing", "missing")
    with raises(arity("rename")):
        rc.execute_command("RENAME", "a")


def test_rename_same_key(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("RENAME", "a", "a") == b"OK"
    assert rc.execute_command("GET", "a") == b"1"
    assert rc.execute_command("TTL", "a") == 100
    assert rc.execute_command("RENAMENX", "a", "a") == 0


def test_rename_over_other_type(rc):
    rc.execute_command("SET", "a", "1")
    make_list(rc, "b")
    assert rc.execute_command("RENAME", "a", "b") == b"OK"
    assert rc.execute_command("TYPE", "b") == b"string"
    make_list(rc, "c")
    other = rc.execute_command("TYPE", "c")  # "list", or "set" before lists exist
    assert other != b"string"
    assert rc.execute_command("RENAME", "c", "b") == b"OK"
    assert rc.execute_command("TYPE", "b") == other
    assert rc.execute_command("EXISTS", "c") == 0


def test_renamenx(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    rc.execute_command("SET", "b", "2")
    assert rc.execute_command("RENAMENX", "a", "b") == 0
    assert rc.execute_command("GET", "a") == b"1"
    assert rc.execute_command("RENAMENX", "a", "c") == 1
    assert rc.execute_command("GET", "c") == b"1"
    assert rc.execute_command("TTL", "c") == 100
    assert rc.execute_command("EXISTS", "a") == 0


def test_rename_expired_source(rc):
    rc.execute_command("SET", "a", "1", "PX", "20")
    time.sleep(0.06)
    with raises("no such key"):
        rc.execute_command("RENAME", "a", "b")


# ---------------------------------------------------------------- RANDOMKEY

def test_randomkey(rc):
    assert rc.execute_command("RANDOMKEY") is None
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    for _ in range(20):
        assert rc.execute_command("RANDOMKEY") in (b"a", b"b", b"c")
    with raises(arity("randomkey")):
        rc.execute_command("RANDOMKEY", "x")


def test_randomkey_single_key(rc):
    rc.execute_command("SET", "only", "1")
    assert rc.execute_command("RANDOMKEY") == b"only"


# ---------------------------------------------------------------- COPY

def test_copy_basic(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("COPY", "a", "b") == 1
    assert rc.execute_command("GET", "b") == b"1"
    assert rc.execute_command("TTL", "b") == 100
    # The copy is independent.
    rc.execute_command("APPEND", "b", "x")
    assert rc.execute_command("GET", "a") == b"1"
    assert rc.execute_command("GET", "b") == b"1x"


def test_copy_existing_destination(rc):
    rc.execute_command("SET", "a", "1")
    rc.execute_command("SET", "b", "2", "EX", "100")
    assert rc.execute_command("COPY", "a", "b") == 0
    assert rc.execute_command("GET", "b") == b"2"
    assert rc.execute_command("COPY", "a", "b", "REPLACE") == 1
    assert rc.execute_command("GET", "b") == b"1"
    assert rc.execute_command("TTL", "b") == -1


def test_copy_missing_source(rc):
    assert rc.execute_command("COPY", "missing", "b") == 0
    assert rc.execute_command("EXISTS", "b") == 0


def test_copy_other_db(rc):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command("COPY", "a", "a", "DB", "1") == 1
    assert rc.execute_command("COPY", "a", "a", "DB", "1") == 0
    assert rc.execute_command("COPY", "a", "b", "db", "1", "replace") == 1
    rc.execute_command("SELECT", "1")
    assert sorted(rc.execute_command("KEYS", "*")) == [b"a", b"b"]
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("KEYS", "*") == [b"a"]


def test_copy_errors(rc):
    rc.execute_command("SET", "a", "1")
    with raises("source and destination objects are the same"):
        rc.execute_command("COPY", "a", "a")
    with raises("source and destination objects are the same"):
        rc.execute_command("COPY", "a", "a", "DB", "0")
    with raises(DB_RANGE):
        rc.execute_command("COPY", "a", "b", "DB", "16")
    with raises(DB_RANGE):
        rc.execute_command("COPY", "a", "b", "DB", "-1")
    with raises(NOT_INT):
        rc.execute_command("COPY", "a", "b", "DB", "abc")
    with raises(SYNTAX):
        rc.execute_command("COPY", "a", "b", "DB")
    with raises(SYNTAX):
        rc.execute_command("COPY", "a", "b", "FOO")
    with raises(arity("copy")):
        rc.execute_command("COPY", "a")
    assert rc.execute_command("EXISTS", "b") == 0


# ---------------------------------------------------------------- MOVE

def test_move(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("MOVE", "a", "1") == 1
    assert rc.execute_command("EXISTS", "a") == 0
    rc.execute_command("SELECT", "1")
    assert rc.execute_command("GET", "a") == b"1"
    assert rc.execute_command("TTL", "a") == 100
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("MOVE", "missing", "1") == 0


def test_move_destination_exists(rc):
    rc.execute_command("SET", "a", "src")
    rc.execute_command("SELECT", "2")
    rc.execute_command("SET", "a", "dst")
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("MOVE", "a", "2") == 0
    assert rc.execute_command("GET", "a") == b"src"
    rc.execute_command("SELECT", "2")
    assert rc.execute_command("GET", "a") == b"dst"
    rc.execute_command("SELECT", "0")


def test_move_errors(rc):
    rc.execute_command("SET", "a", "1")
    with raises("source and destination objects are the same"):
        rc.execute_command("MOVE", "a", "0")
    with raises(DB_RANGE):
        rc.execute_command("MOVE", "a", "16")
    with raises(DB_RANGE):
        rc.execute_command("MOVE", "a", "-1")
    with raises(NOT_INT):
        rc.execute_command("MOVE", "a", "x")
    with raises(arity("move")):
        rc.execute_command("MOVE", "a")
    assert rc.execute_command("GET", "a") == b"1"


# ---------------------------------------------------------------- SWAPDB / DBSIZE / FLUSH*

def test_swapdb(rc):
    rc.execute_command("SET", "in0", "x")
    rc.execute_command("SELECT", "1")
    rc.execute_command("MSET", "in1", "y", "also1", "z")
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("SWAPDB", "0", "1") == b"OK"
    assert sorted(rc.execute_command("KEYS", "*")) == [b"also1", b"in1"]
    assert rc.execute_command("DBSIZE") == 2
    rc.execute_command("SELECT", "1")
    assert rc.execute_command("KEYS", "*") == [b"in0"]
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("SWAPDB", "1", "1") == b"OK"


def test_swapdb_is_seen_by_other_connections(server, rc):
    from helpers import raw_client
    rc.execute_command("SET", "k", "db0")
    other = raw_client(server)
    try:
        assert other.execute_command("SELECT", "5") == b"OK"
        assert other.execute_command("GET", "k") is None
        assert rc.execute_command("SWAPDB", "0", "5") == b"OK"
        assert other.execute_command("GET", "k") == b"db0"
        assert rc.execute_command("GET", "k") is None
    finally:
        other.close()


def test_swapdb_errors(rc):
    with raises(DB_RANGE):
        rc.execute_command("SWAPDB", "0", "16")
    with raises(DB_RANGE):
        rc.execute_command("SWAPDB", "-1", "0")
    with raises("invalid first DB index"):
        rc.execute_command("SWAPDB", "a", "1")
    with raises("invalid second DB index"):
        rc.execute_command("SWAPDB", "0", "b")
    with raises(arity("swapdb")):
        rc.execute_command("SWAPDB", "0")


def test_swapdb_index_outside_int_gets_the_commands_own_error(rc):
    with raises("invalid first DB index"):
        rc.execute_command("SWAPDB", "99999999999", "0")
    with raises("invalid second DB index"):
        rc.execute_command("SWAPDB", "0", "99999999999")


def test_dbsize(rc):
    assert rc.execute_command("DBSIZE") == 0
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    assert rc.execute_command("DBSIZE") == 3
    rc.execute_command("SELECT", "1")
    assert rc.execute_command("DBSIZE") == 0
    rc.execute_command("SELECT", "0")
    with raises(arity("dbsize")):
        rc.execute_command("DBSIZE", "x")


def test_flushdb_only_current_db(rc):
    rc.execute_command("SET", "a", "1")
    rc.execute_command("SELECT", "1")
    rc.execute_command("SET", "b", "1")
    assert rc.execute_command("FLUSHDB") == b"OK"
    assert rc.execute_command("DBSIZE") == 0
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("DBSIZE") == 1
    rc.execute_command("SET", "c", "1")
    assert rc.execute_command("FLUSHDB", "ASYNC") == b"OK"
    assert rc.execute_command("DBSIZE") == 0
    rc.execute_command("SET", "c", "1")
    assert rc.execute_command("FLUSHDB", "sync") == b"OK"
    assert rc.execute_command("DBSIZE") == 0


@pytest.mark.parametrize("mode", [None, "ASYNC", "SYNC", "async", "sync"])
def test_flushall(rc, mode):
    rc.execute_command("SET", "a", "1")
    rc.execute_command("SELECT", "7")
    rc.execute_command("SET", "b", "1")
    args = ["FLUSHALL"] + ([mode] if mode else [])
    assert rc.execute_command(*args) == b"OK"
    assert rc.execute_command("DBSIZE") == 0
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("DBSIZE") == 0


@pytest.mark.parametrize("how", [("FLUSHALL", "ASYNC"), ("FLUSHDB", "ASYNC"), ("FLUSHALL",)])
def test_flush_async_frees_a_large_keyspace_after(start_server, how):
    # The keys go at once; their memory soon after (between events); the
    # server serves meanwhile. With lazyfree-lazy-user-flush yes a flush
    # without SYNC or ASYNC is ASYNC.
    server = start_server("--lazyfree-lazy-user-flush", "yes")
    c = server.client()
    assert c.config_get("lazyfree-lazy-user-flush") == {"lazyfree-lazy-user-flush": "yes"}

    def fill():
        pipe = c.pipeline(transaction=False)
        for i in range(100_000):
            pipe.set(f"k:{i}", "v" * 50)
        pipe.execute()
        return c.info("memory")["used_memory"]

    # What a synchronous flush of the same keys leaves (the empty tables'
    # directories, buffers), then the same keys flushed the other way.
    fill()
    c.execute_command("FLUSHALL", "SYNC")
    before = c.info("memory")["used_memory"]
    loaded = fill()
    assert loaded > before + 5_000_000
    assert c.execute_command(*how) is True  # (redis-py maps +OK)
    assert c.dbsize() == 0 and c.get("k:1") is None
    c.set("k:1", "new")
    assert c.get("k:1") == b"new"
    # (Freed within a second or so of 1 ms slices: back near the start;
    # INFO counts what went through the lists.)
    assert wait_for(lambda: c.info("memory")["used_memory"] < before + (loaded - before) // 10)
    assert wait_for(lambda: c.info("memory")["lazyfree_pending_objects"] == 0)
    assert c.info("memory")["lazyfreed_objects"] >= 1
    c.config_resetstat()
    assert c.info("memory")["lazyfreed_objects"] == 0
    c.config_set("lazyfree-lazy-user-flush", "no")
    assert c.config_get("lazyfree-lazy-user-flush") == {"lazyfree-lazy-user-flush": "no"}


@pytest.mark.parametrize("cmd", ["FLUSHALL", "FLUSHDB"])
@pytest.mark.parametrize("args", [("FOO",), ("SYNC", "ASYNC"), ("ASYNC", "x")])
def test_flush_bad_args(rc, cmd, args):
    rc.execute_command("SET", "a", "1")
    with raises(SYNTAX):
        rc.execute_command(cmd, *args)
    assert rc.execute_command("DBSIZE") == 1


# ---------------------------------------------------------------- SELECT

def test_select_isolation(rc):
    rc.execute_command("SET", "k", "db0")
    assert rc.execute_command("SELECT", "1") == b"OK"
    assert rc.execute_command("GET", "k") is None
    rc.execute_command("SET", "k", "db1")
    assert rc.execute_command("SELECT", "15") == b"OK"
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("SELECT", "1") == b"OK"
    assert rc.execute_command("GET", "k") == b"db1"
    assert rc.execute_command("SELECT", "0") == b"OK"
    assert rc.execute_command("GET", "k") == b"db0"


def test_select_is_per_connection(server, rc):
    from helpers import raw_client
    other = raw_client(server)
    try:
        rc.execute_command("SELECT", "4")
        rc.execute_command("SET", "k", "in4")
        assert other.execute_command("GET", "k") is None
        rc.execute_command("SELECT", "0")
    finally:
        other.close()


@pytest.mark.parametrize("idx,msg", [
    ("16", DB_RANGE), ("-1", DB_RANGE), ("100000", DB_RANGE),
    ("abc", NOT_INT), ("1.5", NOT_INT), ("", NOT_INT),
])
def test_select_errors(rc, idx, msg):
    with raises(msg):
        rc.execute_command("SELECT", idx)
    rc.execute_command("SET", "still0", "1")
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("GET", "still0") == b"1"


@pytest.mark.parametrize("cmd", [("SELECT", "{}"), ("MOVE", "k", "{}"), ("COPY", "k", "k2", "DB", "{}")])
def test_db_index_outside_int(rc, cmd):
    rc.execute_command("SET", "k", "v")
    with raises("value is out of range, value must between -2147483648 and 2147483647"):
        rc.execute_command(*[a.format("99999999999") for a in cmd])


def test_select_arity(rc):
    with raises(arity("select")):
        rc.execute_command("SELECT")
    with raises(arity("select")):
        rc.execute_command("SELECT", "1", "2")


@pytest.mark.skipif(IS_REDIS, reason="shards are Peregrine's")
def test_scan_and_keyspace_commands_across_shards(start_server):
    # Four workers, each with its shard (more than this machine's cores, so
    # that cross-thread paths always run): keys spread by slot; SCAN's
    # cursor carries the shard in its low bits.
    s = start_server("--threads", "4")
    c = s.client()
    assert c.config_get("threads") == {"threads": "4"}
    keys = {f"key:{i}" for i in range(3000)}
    p = c.pipeline(transaction=False)
    for k in keys:
        p.set(k, "v")
    p.execute()
    seen, cursor, shards_seen = set(), 0, set()
    while True:
        cursor, batch = c.scan(cursor, count=100)
        seen.update(k.decode() for k in batch)
        if cursor == 0:
            break
        shards_seen.add(cursor & 3)
    assert seen == keys
    assert shards_seen == {0, 1, 2, 3}
    # Whole-keyspace commands see every shard.
    assert c.dbsize() == 3000
    assert len(c.keys("key:1*")) == len([k for k in keys if k.startswith("key:1")])
    assert c.info("keyspace")["db0"]["keys"] == 3000
    assert c.randomkey().decode() in keys
    # Multi-key commands whose keys live on different shards.
    assert c.mget("key:1", "key:2", "key:3", "nokey") == [b"v", b"v", b"v", None]
    c.mset({"a": "1", "b": "2", "c": "3", "d": "4"})
    assert c.mget("a", "b", "c", "d") == [b"1", b"2", b"3", b"4"]
    assert c.exists("a", "b", "c", "d", "nokey") == 4
    assert c.delete("a", "b", "c") == 3
    assert c.msetnx({"d": "x", "e": "y"}) is False
    assert c.msetnx({"e": "y", "f": "z"}) is True
    c.set("src", "moving", ex=1000)
    for i in range(20):  # renames hop from shard to shard
        assert c.rename("src" if i == 0 else f"dst{i - 1}", f"dst{i}")
    assert c.get("dst19") == b"moving" and 990 < c.ttl("dst19") <= 1000
    assert c.copy("dst19", "copy1")
    assert c.get("copy1") == b"moving"
    assert c.move("copy1", 5)
    c5 = s.client(db=5)
    assert c5.get("copy1") == b"moving"
    c.swapdb(0, 5)
    assert c.get("copy1") == b"moving" and c.dbsize() == 1
    c.flushall()
    assert c.dbsize() == 0 and c5.dbsize() == 0
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("threads", "2")


def test_info_keyspace_avg_ttl(r):
    # A running average over the keys active expiry looks at, in ms (Redis's).
    r.flushall()
    assert r.info("keyspace") == {}
    p = r.pipeline(transaction=False)
    for i in range(200):
        p.set(f"t{i}", "v", ex=1000)
    for i in range(200):
        p.set(f"p{i}", "v")
    p.execute()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        db0 = r.info("keyspace")["db0"]
        if db0["avg_ttl"] > 0:
            break
        time.sleep(0.05)
    assert db0["keys"] == 400 and db0["expires"] == 200
    assert 990_000 <= db0["avg_ttl"] <= 1_000_000
    for i in range(200):
        r.persist(f"t{i}")
    time.sleep(0.3)
    assert r.info("keyspace")["db0"]["avg_ttl"] == 0
