# String commands: GET/SET family, counters, ranges, expiry, binary safety.
import time

import pytest

from helpers import NOT_INT, SYNTAX, WRONGTYPE, arity, make_list, raises, rc, rc3  # noqa: F401  (fixtures)

NOT_FLOAT = "value is not a valid float"


# ---------------------------------------------------------------- GET / SET basics

def test_get_missing_returns_nil(rc):
    assert rc.execute_command("GET", "nope") is None


def test_set_then_get(rc):
    assert rc.execute_command("SET", "k", "v") == b"OK"
    assert rc.execute_command("GET", "k") == b"v"
    assert rc.execute_command("SET", "k", "v2") == b"OK"
    assert rc.execute_command("GET", "k") == b"v2"


def test_set_empty_value(rc):
    assert rc.execute_command("SET", "k", "") == b"OK"
    assert rc.execute_command("GET", "k") == b""
    assert rc.execute_command("EXISTS", "k") == 1
    assert rc.execute_command("STRLEN", "k") == 0


def test_get_set_arity(rc):
    with raises(arity("get")):
        rc.execute_command("GET")
    with raises(arity("get")):
        rc.execute_command("GET", "a", "b")
    with raises(arity("set")):
        rc.execute_command("SET", "k")
    with raises(arity("set")):
        rc.execute_command("SET")


def test_get_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("GET", "l")


def test_set_overwrites_other_type(rc):
    make_list(rc, "l")
    assert rc.execute_command("SET", "l", "v") == b"OK"
    assert rc.execute_command("TYPE", "l") == b"string"
    assert rc.execute_command("GET", "l") == b"v"


def test_command_names_are_case_insensitive(rc):
    assert rc.execute_command("sEt", "k", "v") == b"OK"
    assert rc.execute_command("get", "k") == b"v"
    assert rc.execute_command("SET", "k2", "v", "ex", "100", "nX") == b"OK"
    assert rc.execute_command("TTL", "k2") == 100


# ---------------------------------------------------------------- SET options

def test_set_nx(rc):
    assert rc.execute_command("SET", "k", "1", "NX") == b"OK"
    assert rc.execute_command("SET", "k", "2", "NX") is None
    assert rc.execute_command("GET", "k") == b"1"


def test_set_xx(rc):
    assert rc.execute_command("SET", "k", "1", "XX") is None
    assert rc.execute_command("EXISTS", "k") == 0
    rc.execute_command("SET", "k", "1")
    assert rc.execute_command("SET", "k", "2", "XX") == b"OK"
    assert rc.execute_command("GET", "k") == b"2"


def test_set_ex_px(rc):
    assert rc.execute_command("SET", "k", "v", "EX", "100") == b"OK"
    assert rc.execute_command("TTL", "k") == 100
    assert 99000 < rc.execute_command("PTTL", "k") <= 100000
    assert rc.execute_command("SET", "k", "v", "PX", "5000") == b"OK"
    assert 4000 < rc.execute_command("PTTL", "k") <= 5000
    assert rc.execute_command("TTL", "k") == 5


def test_set_exat_pxat(rc):
    now = int(time.time())
    assert rc.execute_command("SET", "k", "v", "EXAT", now + 1000) == b"OK"
    assert rc.execute_command("EXPIRETIME", "k") == now + 1000
    assert rc.execute_command("PEXPIRETIME", "k") == (now + 1000) * 1000
    assert 998 <= rc.execute_command("TTL", "k") <= 1000
    pxat = now * 1000 + 500123
    assert rc.execute_command("SET", "k", "v", "PXAT", pxat) == b"OK"
    assert rc.execute_command("PEXPIRETIME", "k") == pxat
    assert rc.execute_command("EXPIRETIME", "k") == pxat // 1000


def test_set_exat_in_the_past_deletes(rc):
    rc.execute_command("SET", "k", "old")
    assert rc.execute_command("SET", "k", "v", "EXAT", "1") == b"OK"
    assert rc.execute_command("GET", "k") is None
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("SET", "k", "v", "PXAT", "1") == b"OK"
    assert rc.execute_command("EXISTS", "k") == 0


def test_set_clears_ttl_unless_keepttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("SET", "k", "v2", "KEEPTTL") == b"OK"
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("GET", "k") == b"v2"
    assert rc.execute_command("SET", "k", "v3") == b"OK"
    assert rc.execute_command("TTL", "k") == -1


def test_set_get_option(rc):
    assert rc.execute_command("SET", "k", "v1", "GET") is None
    assert rc.execute_command("GET", "k") == b"v1"
    assert rc.execute_command("SET", "k", "v2", "GET") == b"v1"
    assert rc.execute_command("GET", "k") == b"v2"


def test_set_get_with_nx_and_xx(rc):
    # NX + GET is allowed since 7.0: returns the old value and does not set.
    assert rc.execute_command("SET", "k", "a", "NX", "GET") is None
    assert rc.execute_command("GET", "k") == b"a"
    assert rc.execute_command("SET", "k", "b", "NX", "GET") == b"a"
    assert rc.execute_command("GET", "k") == b"a"
    assert rc.execute_command("SET", "k", "c", "XX", "GET") == b"a"
    assert rc.execute_command("GET", "k") == b"c"
    assert rc.execute_command("SET", "missing", "c", "XX", "GET") is None
    assert rc.execute_command("EXISTS", "missing") == 0


def test_set_get_keepttl_and_ex(rc):
    rc.execute_command("SET", "k", "a", "EX", "100")
    assert rc.execute_command("SET", "k", "b", "KEEPTTL", "GET") == b"a"
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("SET", "k", "c", "GET", "EX", "200") == b"b"
    assert rc.execute_command("TTL", "k") == 200


def test_set_get_wrongtype_leaves_key(rc):
    make_list(rc, "l")
    other = rc.execute_command("TYPE", "l")  # "list", or "set" before lists exist
    assert other != b"string"
    with raises(WRONGTYPE):
        rc.execute_command("SET", "l", "v", "GET")
    assert rc.execute_command("TYPE", "l") == other


def test_set_options_case_insensitive_and_repeatable(rc):
    assert rc.execute_command("SET", "k", "v", "ex", "10", "EX", "20") == b"OK"
    assert rc.execute_command("TTL", "k") == 20
    assert rc.execute_command("SET", "k", "v", "nx", "NX") is None
    assert rc.execute_command("SET", "k", "v", "get", "GET") == b"v"


@pytest.mark.parametrize("opts", [
    ("NX", "XX"),
    ("XX", "NX"),
    ("EX", "10", "PX", "100"),
    ("PX", "100", "EX", "10"),
    ("EX", "10", "EXAT", "99999999999"),
    ("PX", "10", "PXAT", "99999999999999"),
    ("EXAT", "99999999999", "PXAT", "99999999999999"),
    ("EX", "10", "KEEPTTL"),
    ("KEEPTTL", "PX", "10"),
    ("KEEPTTL", "EXAT", "99999999999"),
    ("PXAT", "99999999999999", "KEEPTTL"),
    ("EX",),
    ("PX",),
    ("EXAT",),
    ("PXAT",),
    ("FOO",),
    ("NX", "FOO"),
    ("EX", "10", "20"),
])
def test_set_syntax_errors(rc, opts):
    with raises(SYNTAX):
        rc.execute_command("SET", "k", "v", *opts)
    assert rc.execute_command("EXISTS", "k") == 0


@pytest.mark.parametrize("opts", [
    ("EX", "0"),
    ("EX", "-1"),
    ("PX", "0"),
    ("PX", "-100"),
    ("EXAT", "0"),
    ("EXAT", "-5"),
    ("PXAT", "0"),
    ("EX", "9999999999999999"),
    ("EX", "9223372036854775807"),
    ("PX", "9223372036854775807"),
])
def test_set_invalid_expire_time(rc, opts):
    with raises("invalid expire time in 'set' command"):
        rc.execute_command("SET", "k", "v", *opts)
    assert rc.execute_command("EXISTS", "k") == 0


@pytest.mark.parametrize("val", ["abc", "1.5", "", "10s", "9223372036854775808"])
def test_set_expire_not_integer(rc, val):
    with raises(NOT_INT):
        rc.execute_command("SET", "k", "v", "EX", val)
    with raises(NOT_INT):
        rc.execute_command("SET", "k", "v", "PX", val)


# ---------------------------------------------------------------- SETNX / SETEX / PSETEX / GETSET / GETDEL

def test_setnx(rc):
    assert rc.execute_command("SETNX", "k", "1") == 1
    assert rc.execute_command("SETNX", "k", "2") == 0
    assert rc.execute_command("GET", "k") == b"1"
    with raises(arity("setnx")):
        rc.execute_command("SETNX", "k")


def test_setex_psetex(rc):
    assert rc.execute_command("SETEX", "k", "100", "v") == b"OK"
    assert rc.execute_command("GET", "k") == b"v"
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("PSETEX", "p", "5000", "v") == b"OK"
    assert 4000 < rc.execute_command("PTTL", "p") <= 5000
    with raises(arity("setex")):
        rc.execute_command("SETEX", "k", "100")
    with raises(arity("psetex")):
        rc.execute_command("PSETEX", "k", "100", "v", "x")


@pytest.mark.parametrize("cmd", ["SETEX", "PSETEX"])
def test_setex_invalid_expire(rc, cmd):
    for bad in ("0", "-5"):
        with raises("invalid expire time in '%s' command" % cmd.lower()):
            rc.execute_command(cmd, "k", bad, "v")
    with raises(NOT_INT):
        rc.execute_command(cmd, "k", "abc", "v")
    assert rc.execute_command("EXISTS", "k") == 0


def test_getset(rc):
    assert rc.execute_command("GETSET", "k", "a") is None
    assert rc.execute_command("GETSET", "k", "b") == b"a"
    assert rc.execute_command("GET", "k") == b"b"
    rc.execute_command("EXPIRE", "k", "100")
    rc.execute_command("GETSET", "k", "c")
    assert rc.execute_command("TTL", "k") == -1


def test_getset_wrongtype(rc):
    make_list(rc, "l")
    other = rc.execute_command("TYPE", "l")  # "list", or "set" before lists exist
    assert other != b"string"
    with raises(WRONGTYPE):
        rc.execute_command("GETSET", "l", "v")
    assert rc.execute_command("TYPE", "l") == other


def test_getdel(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETDEL", "k") == b"v"
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("GETDEL", "k") is None
    with raises(arity("getdel")):
        rc.execute_command("GETDEL", "a", "b")


def test_getdel_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("GETDEL", "l")
    assert rc.execute_command("EXISTS", "l") == 1


# ---------------------------------------------------------------- GETEX

def test_getex_no_options_keeps_ttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("GETEX", "k") == b"v"
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("GETEX", "missing") is None


def test_getex_ex_px_exat_pxat_persist(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "EX", "100") == b"v"
    assert rc.execute_command("TTL", "k") == 100
    assert rc.execute_command("GETEX", "k", "PX", "50000") == b"v"
    assert 49000 < rc.execute_command("PTTL", "k") <= 50000
    t = int(time.time()) + 1000
    assert rc.execute_command("GETEX", "k", "EXAT", t) == b"v"
    assert rc.execute_command("EXPIRETIME", "k") == t
    assert rc.execute_command("GETEX", "k", "PXAT", t * 1000 + 7) == b"v"
    assert rc.execute_command("PEXPIRETIME", "k") == t * 1000 + 7
    assert rc.execute_command("GETEX", "k", "PERSIST") == b"v"
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("GET", "k") == b"v"


def test_getex_past_timestamp_deletes(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "EXAT", "1") == b"v"
    assert rc.execute_command("EXISTS", "k") == 0
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("GETEX", "k", "PXAT", "1") == b"v"
    assert rc.execute_command("EXISTS", "k") == 0


@pytest.mark.parametrize("opts", [
    ("PERSIST", "EX", "1"),
    ("EX", "1", "PERSIST"),
    ("EX", "1", "PX", "1"),
    ("EXAT", "1", "PXAT", "1"),
    ("FOO",),
    ("EX",),
    ("PX",),
    ("KEEPTTL",),
    ("EX", "10", "20"),
])
def test_getex_syntax_errors(rc, opts):
    rc.execute_command("SET", "k", "v")
    with raises(SYNTAX):
        rc.execute_command("GETEX", "k", *opts)
    assert rc.execute_command("TTL", "k") == -1


@pytest.mark.parametrize("opts", [
    ("EX", "0"), ("EX", "-1"), ("PX", "0"), ("EXAT", "-1"), ("PXAT", "0"),
    ("EX", "9999999999999999"),
])
def test_getex_invalid_expire(rc, opts):
    rc.execute_command("SET", "k", "v")
    with raises("invalid expire time in 'getex' command"):
        rc.execute_command("GETEX", "k", *opts)
    assert rc.execute_command("GET", "k") == b"v"
    assert rc.execute_command("TTL", "k") == -1


def test_getex_missing_key_checks_syntax_but_not_expire_value(rc):
    # Redis parses the option words first, then looks the key up, and only validates
    # the expire value when the key exists.
    with raises(SYNTAX):
        rc.execute_command("GETEX", "missing", "FOO")
    assert rc.execute_command("GETEX", "missing", "EX", "-1") is None


def test_getex_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("GETEX", "l")
    with raises(WRONGTYPE):
        rc.execute_command("GETEX", "l", "PERSIST")


# ---------------------------------------------------------------- MGET / MSET / MSETNX

def test_mget(rc):
    rc.execute_command("SET", "a", "1")
    rc.execute_command("SET", "b", "2")
    assert rc.execute_command("MGET", "a", "missing", "b", "a") == [b"1", None, b"2", b"1"]
    with raises(arity("mget")):
        rc.execute_command("MGET")


def test_mget_other_type_is_nil(rc):
    rc.execute_command("SET", "a", "1")
    make_list(rc, "l")
    assert rc.execute_command("MGET", "a", "l") == [b"1", None]


def test_mset(rc):
    assert rc.execute_command("MSET", "a", "1", "b", "2", "a", "3") == b"OK"
    assert rc.execute_command("MGET", "a", "b") == [b"3", b"2"]
    rc.execute_command("EXPIRE", "b", "100")
    rc.execute_command("MSET", "b", "x")
    assert rc.execute_command("TTL", "b") == -1
    with raises(arity("mset")):
        rc.execute_command("MSET", "a", "1", "b")
    with raises(arity("mset")):
        rc.execute_command("MSET", "a")
    with raises(arity("mset")):
        rc.execute_command("MSET")


def test_msetnx(rc):
    assert rc.execute_command("MSETNX", "a", "1", "b", "2") == 1
    assert rc.execute_command("MSETNX", "b", "x", "c", "3") == 0
    assert rc.execute_command("MGET", "a", "b", "c") == [b"1", b"2", None]
    with raises(arity("msetnx")):
        rc.execute_command("MSETNX", "a", "1", "b")
    with raises(arity("msetnx")):
        rc.execute_command("MSETNX", "a")


def test_msetnx_any_existing_type_blocks(rc):
    make_list(rc, "l")
    assert rc.execute_command("MSETNX", "x", "1", "l", "2") == 0
    assert rc.execute_command("EXISTS", "x") == 0


# ---------------------------------------------------------------- APPEND / STRLEN

def test_append_strlen(rc):
    assert rc.execute_command("APPEND", "k", "Hello") == 5
    assert rc.execute_command("APPEND", "k", " World") == 11
    assert rc.execute_command("GET", "k") == b"Hello World"
    assert rc.execute_command("STRLEN", "k") == 11
    assert rc.execute_command("STRLEN", "missing") == 0
    assert rc.execute_command("APPEND", "k", "") == 11


def test_append_to_integer_value_and_keeps_ttl(rc):
    rc.execute_command("SET", "k", "10", "EX", "100")
    assert rc.execute_command("APPEND", "k", "5") == 3
    assert rc.execute_command("INCR", "k") == 106
    assert rc.execute_command("TTL", "k") == 100


def test_strlen_of_integer_encoded_value(rc):
    rc.execute_command("SET", "k", "-12345")
    assert rc.execute_command("STRLEN", "k") == 6
    rc.execute_command("INCRBY", "n", "1000")
    assert rc.execute_command("STRLEN", "n") == 4


def test_append_strlen_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("APPEND", "l", "x")
    with raises(WRONGTYPE):
        rc.execute_command("STRLEN", "l")


# ---------------------------------------------------------------- INCR family

def test_incr_decr_basic(rc):
    assert rc.execute_command("INCR", "n") == 1
    assert rc.execute_command("INCR", "n") == 2
    assert rc.execute_command("DECR", "n") == 1
    assert rc.execute_command("DECR", "m") == -1
    assert rc.execute_command("INCRBY", "n", "10") == 11
    assert rc.execute_command("INCRBY", "n", "-20") == -9
    assert rc.execute_command("DECRBY", "n", "5") == -14
    assert rc.execute_command("DECRBY", "n", "-14") == 0
    assert rc.execute_command("GET", "n") == b"0"
    assert rc.execute_command("GET", "m") == b"-1"


def test_incr_keeps_ttl(rc):
    rc.execute_command("SET", "n", "5", "EX", "100")
    assert rc.execute_command("INCR", "n") == 6
    assert rc.execute_command("TTL", "n") == 100


def test_incr_on_value_set_as_string(rc):
    rc.execute_command("SET", "n", "-41")
    assert rc.execute_command("INCR", "n") == -40
    rc.execute_command("SET", "n", "9223372036854775806")
    assert rc.execute_command("INCR", "n") == 9223372036854775807
    assert rc.execute_command("GET", "n") == b"9223372036854775807"


@pytest.mark.parametrize("val", [
    "01", " 1", "1 ", "+1", "-0", "", "abc", "1.0", "1e3", "0x1", "9223372036854775808",
    "-9223372036854775809", "1\x00",
])
def test_incr_rejects_non_canonical_integers(rc, val):
    rc.execute_command("SET", "n", val)
    with raises(NOT_INT):
        rc.execute_command("INCR", "n")
    with raises(NOT_INT):
        rc.execute_command("DECRBY", "n", "1")
    assert rc.execute_command("GET", "n") == val.encode()


@pytest.mark.parametrize("val", ["01", "+1", "-0", " 1", "1.5", "abc", "", "9223372036854775808"])
def test_incrby_rejects_bad_increment(rc, val):
    with raises(NOT_INT):
        rc.execute_command("INCRBY", "n", val)
    with raises(NOT_INT):
        rc.execute_command("DECRBY", "n", val)
    assert rc.execute_command("EXISTS", "n") == 0


def test_incr_overflow(rc):
    rc.execute_command("SET", "n", "9223372036854775807")
    with raises("increment or decrement would overflow"):
        rc.execute_command("INCR", "n")
    with raises("increment or decrement would overflow"):
        rc.execute_command("INCRBY", "n", "1")
    with raises("increment or decrement would overflow"):
        rc.execute_command("DECRBY", "n", "-1")
    assert rc.execute_command("INCRBY", "n", "0") == 9223372036854775807
    rc.execute_command("SET", "n", "-9223372036854775808")
    with raises("increment or decrement would overflow"):
        rc.execute_command("DECR", "n")
    with raises("increment or decrement would overflow"):
        rc.execute_command("INCRBY", "n", "-1")
    assert rc.execute_command("GET", "n") == b"-9223372036854775808"
    assert rc.execute_command("INCRBY", "n", "9223372036854775807") == -1


def test_decrby_llong_min_has_its_own_error(rc):
    # DECRBY cannot negate LLONG_MIN; Redis reports a distinct message for it.
    with raises("decrement would overflow"):
        rc.execute_command("DECRBY", "n", "-9223372036854775808")
    assert rc.execute_command("INCRBY", "n", "-9223372036854775808") == -9223372036854775808


def test_incr_wrongtype(rc):
    make_list(rc, "l")
    for cmd in (("INCR", "l"), ("DECR", "l"), ("INCRBY", "l", "1"), ("DECRBY", "l", "1")):
        with raises(WRONGTYPE):
            rc.execute_command(*cmd)


def test_incr_arity(rc):
    with raises(arity("incr")):
        rc.execute_command("INCR")
    with raises(arity("incr")):
        rc.execute_command("INCR", "a", "b")
    with raises(arity("incrby")):
        rc.execute_command("INCRBY", "a")
    with raises(arity("decrby")):
        rc.execute_command("DECRBY", "a", "1", "2")


# ---------------------------------------------------------------- INCRBYFLOAT

@pytest.mark.parametrize("start,incr,expected", [
    ("10.5", "0.1", b"10.6"),
    ("3.0e3", "0", b"3000"),
    ("3.0e3", "200", b"3200"),
    (None, "5.0e3", b"5000"),
    (None, "1.0", b"1"),
    ("1.5", "-1.5", b"0"),
    ("0.1", "0.2", b"0.3"),
    ("10", "1.5", b"11.5"),
    (None, "1e5", b"100000"),
    (None, "-1e-5", b"-0.00001"),
    (None, "1e20", b"100000000000000000000"),
    ("5", "-10", b"-5"),
    (None, "+1", b"1"),
    (None, ".5", b"0.5"),
    ("-2.5", "2E0", b"-0.5"),
])
def test_incrbyfloat_formatting(rc, start, incr, expected):
    if start is not None:
        rc.execute_command("SET", "f", start)
    assert rc.execute_command("INCRBYFLOAT", "f", incr) == expected
    assert rc.execute_command("GET", "f") == expected


def test_incrbyfloat_result_usable_by_incr(rc):
    assert rc.execute_command("INCRBYFLOAT", "f", "2.0") == b"2"
    assert rc.execute_command("INCR", "f") == 3


@pytest.mark.parametrize("incr", ["abc", "", " 1", "1 ", "1.5x", "nan", "1,5"])
def test_incrbyfloat_bad_increment(rc, incr):
    rc.execute_command("SET", "f", "1")
    with raises(NOT_FLOAT):
        rc.execute_command("INCRBYFLOAT", "f", incr)
    assert rc.execute_command("GET", "f") == b"1"


@pytest.mark.parametrize("val", ["abc", "1.5.5", " 1", ""])
def test_incrbyfloat_bad_stored_value(rc, val):
    rc.execute_command("SET", "f", val)
    with raises(NOT_FLOAT):
        rc.execute_command("INCRBYFLOAT", "f", "1")


@pytest.mark.parametrize("incr", ["inf", "-inf", "+inf", "Infinity"])
def test_incrbyfloat_infinity(rc, incr):
    rc.execute_command("SET", "f", "1")
    with raises("increment would produce NaN or Infinity"):
        rc.execute_command("INCRBYFLOAT", "f", incr)
    assert rc.execute_command("GET", "f") == b"1"


def test_incrbyfloat_keeps_ttl_and_arity(rc):
    rc.execute_command("SET", "f", "1", "EX", "100")
    assert rc.execute_command("INCRBYFLOAT", "f", "0.5") == b"1.5"
    assert rc.execute_command("TTL", "f") == 100
    with raises(arity("incrbyfloat")):
        rc.execute_command("INCRBYFLOAT", "f")


def test_incrbyfloat_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("INCRBYFLOAT", "l", "1")


def test_incrbyfloat_is_bulk_string_in_resp3(rc3):
    assert rc3.execute_command("INCRBYFLOAT", "f", "1.25") == b"1.25"


# ---------------------------------------------------------------- GETRANGE / SUBSTR

@pytest.mark.parametrize("start,end,expected", [
    (0, 4, b"Hello"),
    (-5, -1, b"World"),
    (0, -1, b"Hello World"),
    (6, 100, b"World"),
    (10, 100, b"d"),
    (5, 3, b""),
    (-1, -5, b""),
    (100, 200, b""),
    (11, 11, b""),
    (-100, 100, b"Hello World"),
    (-100, 2, b"Hel"),
    (0, 0, b"H"),
    (-1, -1, b"d"),
    (-3, 2, b""),
    (3, -100, b""),
    # A negative end beyond the start of the string is clamped to 0, so this
    # returns the first byte (long-standing Redis behaviour kept in 7.2).
    (0, -100, b"H"),
    (-100, -99, b"H"),
    (0, 9223372036854775807, b"Hello World"),
    (-9223372036854775808, -1, b"Hello World"),
])
def test_getrange(rc, start, end, expected):
    rc.execute_command("SET", "s", "Hello World")
    assert rc.execute_command("GETRANGE", "s", start, end) == expected
    assert rc.execute_command("SUBSTR", "s", start, end) == expected


def test_getrange_missing_and_empty(rc):
    assert rc.execute_command("GETRANGE", "missing", 0, -1) == b""
    rc.execute_command("SET", "e", "")
    assert rc.execute_command("GETRANGE", "e", 0, -1) == b""
    assert rc.execute_command("GETRANGE", "e", -1, -1) == b""
    assert rc.execute_command("GETRANGE", "e", 0, 0) == b""


def test_getrange_of_integer_encoded_value(rc):
    rc.execute_command("SET", "n", "123456")
    assert rc.execute_command("GETRANGE", "n", 1, 3) == b"234"


def test_getrange_errors(rc):
    rc.execute_command("SET", "s", "abc")
    with raises(NOT_INT):
        rc.execute_command("GETRANGE", "s", "a", "1")
    with raises(NOT_INT):
        rc.execute_command("GETRANGE", "s", "0", "1.5")
    with raises(arity("getrange")):
        rc.execute_command("GETRANGE", "s", "0")
    with raises(arity("substr")):
        rc.execute_command("SUBSTR", "s", "0", "1", "2")


def test_getrange_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("GETRANGE", "l", 0, 1)


# ---------------------------------------------------------------- SETRANGE

def test_setrange_overwrite(rc):
    rc.execute_command("SET", "s", "Hello World")
    assert rc.execute_command("SETRANGE", "s", 6, "Redis") == 11
    assert rc.execute_command("GET", "s") == b"Hello Redis"
    assert rc.execute_command("SETRANGE", "s", 10, "!!!") == 13
    assert rc.execute_command("GET", "s") == b"Hello Redi!!!"


def test_setrange_pads_with_zero_bytes(rc):
    assert rc.execute_command("SETRANGE", "n", 5, "ab") == 7
    assert rc.execute_command("GET", "n") == b"\x00\x00\x00\x00\x00ab"
    rc.execute_command("SET", "s", "x")
    assert rc.execute_command("SETRANGE", "s", 3, "y") == 4
    assert rc.execute_command("GET", "s") == b"x\x00\x00y"


def test_setrange_integer_encoded_value(rc):
    rc.execute_command("SET", "n", "1234")
    assert rc.execute_command("SETRANGE", "n", 1, "99") == 4
    assert rc.execute_command("GET", "n") == b"1994"
    assert rc.execute_command("INCR", "n") == 1995


def test_setrange_empty_value(rc):
    # Empty value on a missing key: returns 0 and does not create the key,
    # even with an offset that would otherwise be too large.
    assert rc.execute_command("SETRANGE", "missing", 0, "") == 0
    assert rc.execute_command("SETRANGE", "missing", 536870912, "") == 0
    assert rc.execute_command("EXISTS", "missing") == 0
    rc.execute_command("SET", "s", "abc")
    assert rc.execute_command("SETRANGE", "s", 100, "") == 3
    assert rc.execute_command("GET", "s") == b"abc"


def test_setrange_keeps_ttl(rc):
    rc.execute_command("SET", "s", "abc", "EX", "100")
    assert rc.execute_command("SETRANGE", "s", 1, "X") == 3
    assert rc.execute_command("TTL", "s") == 100


def test_setrange_errors(rc):
    rc.execute_command("SET", "s", "abc")
    with raises("offset is out of range"):
        rc.execute_command("SETRANGE", "s", -1, "x")
    with raises("offset is out of range"):
        rc.execute_command("SETRANGE", "missing", -1, "x")
    with raises(NOT_INT):
        rc.execute_command("SETRANGE", "s", "abc", "x")
    with raises(arity("setrange")):
        rc.execute_command("SETRANGE", "s", "1")
    assert rc.execute_command("GET", "s") == b"abc"


def test_setrange_wrongtype(rc):
    make_list(rc, "l")
    with raises(WRONGTYPE):
        rc.execute_command("SETRANGE", "l", 0, "x")
    with raises(WRONGTYPE):
        rc.execute_command("SETRANGE", "l", 0, "")


@pytest.mark.parametrize("offset,value", [
    (536870911, "ab"),
    (536870912, "a"),
    (9223372036854775807, "a"),
])
def test_setrange_max_size_checked_before_allocating(rc, offset, value):
    msg = "string exceeds maximum allowed size (proto-max-bulk-len)"
    with raises(msg):
        rc.execute_command("SETRANGE", "missing", offset, value)
    assert rc.execute_command("EXISTS", "missing") == 0
    rc.execute_command("SET", "s", "abc")
    with raises(msg):
        rc.execute_command("SETRANGE", "s", offset, value)
    assert rc.execute_command("GET", "s") == b"abc"


# ---------------------------------------------------------------- binary safety

BIN_KEY = b"k\x00\r\n\xff\x01 key"
BIN_VAL = b"\x00v\r\nal\xff\xfe\x00\n\r"


def test_binary_keys_and_values(rc):
    assert rc.execute_command("SET", BIN_KEY, BIN_VAL) == b"OK"
    assert rc.execute_command("GET", BIN_KEY) == BIN_VAL
    assert rc.execute_command("STRLEN", BIN_KEY) == len(BIN_VAL)
    assert rc.execute_command("EXISTS", BIN_KEY) == 1
    assert rc.execute_command("EXISTS", b"k") == 0
    assert rc.execute_command("KEYS", "*") == [BIN_KEY]
    assert rc.execute_command("APPEND", BIN_KEY, b"\x00") == len(BIN_VAL) + 1
    assert rc.execute_command("GETRANGE", BIN_KEY, 0, 4) == BIN_VAL[:5]
    assert rc.execute_command("MGET", BIN_KEY, b"\x00") == [BIN_VAL + b"\x00", None]


def test_binary_all_byte_values(rc):
    val = bytes(range(256)) * 4
    assert rc.execute_command("SET", b"\xff\x00", val) == b"OK"
    assert rc.execute_command("GET", b"\xff\x00") == val
    assert rc.execute_command("SETRANGE", b"\xff\x00", 1, b"\r\n") == len(val)
    assert rc.execute_command("GETRANGE", b"\xff\x00", 0, 3) == b"\x00\r\n\x03"


def test_empty_key_name(rc):
    assert rc.execute_command("SET", "", "empty") == b"OK"
    assert rc.execute_command("GET", "") == b"empty"
    assert rc.execute_command("EXISTS", "") == 1
    assert rc.execute_command("DEL", "") == 1


# ---------------------------------------------------------------- expiry really expires

def test_px_key_disappears(rc):
    assert rc.execute_command("SET", "k", "v", "PX", "50") == b"OK"
    assert rc.execute_command("GET", "k") == b"v"
    time.sleep(0.1)
    assert rc.execute_command("GET", "k") is None
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("TTL", "k") == -2
    assert rc.execute_command("KEYS", "*") == []


def test_psetex_getex_expiry_disappears(rc):
    rc.execute_command("PSETEX", "a", "50", "v")
    rc.execute_command("SET", "b", "v")
    assert rc.execute_command("GETEX", "b", "PX", "50") == b"v"
    rc.execute_command("SET", "c", "v", "PX", "50")
    time.sleep(0.1)
    assert rc.execute_command("MGET", "a", "b", "c") == [None, None, None]
    # An expired key behaves as missing for writes too.
    assert rc.execute_command("SETNX", "a", "new") == 1
    assert rc.execute_command("APPEND", "b", "xy") == 2
    assert rc.execute_command("INCR", "c") == 1


def test_expired_key_is_not_returned_by_set_get(rc):
    rc.execute_command("SET", "k", "old", "PX", "30")
    time.sleep(0.08)
    assert rc.execute_command("SET", "k", "new", "GET") is None
    assert rc.execute_command("SET", "k2", "x", "PX", "30")
    time.sleep(0.08)
    assert rc.execute_command("SET", "k2", "y", "XX") is None
    assert rc.execute_command("EXISTS", "k2") == 0
