# Sorted set commands: ZADD (NX XX GT LT CH INCR) and ZINCRBY, score parsing and formatting
# (RESP2 text, RESP3 doubles), the reads (ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANK
# ZREVRANK), ZRANGE in all its forms and the legacy range commands, ZRANGESTORE, the
# removals (ZREM, ZREMRANGEBY*), the pops (ZPOPMIN/MAX, ZMPOP, BZPOPMIN/MAX, BZMPOP),
# ZRANDMEMBER, ZSCAN, the algebra (ZUNION/ZINTER/ZDIFF[STORE], ZINTERCARD; plain sets as
# inputs), encodings and their conversions, type checks, keyspace operations on zsets,
# keys on several shards, and a long randomized run against a Python model.
#
# The `enc` fixture runs a test twice: once with the default configuration (small sets
# are listpacks) and once with zset-max-listpack-entries 0, where every new zset is a
# skiplist, so the same small contents exercise both encodings.
import math
import random
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import (  # noqa: F401  (fixtures)
    NOT_INT, SYNTAX, WRONGTYPE, Conn, arity, config_set, encode, encoding, fails, raises,
    raw_client, require_command, rc, rc3, blocked_clients, bulk, pop_everything, wait_blocked, waiters, Waiter)

NOT_FLOAT = "value is not a valid float"
NAN_RESULT = "resulting score is not a number (NaN)"
RANGE_FLOAT = "min or max is not a float"
RANGE_LEX = "min or max not valid string range item"
LIMIT_RANK = "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
BYLEX_SCORES = "syntax error, WITHSCORES not supported in combination with BYLEX"
XX_NX = "XX and NX options at the same time are not compatible"
GT_LT_NX = "GT, LT, and/or NX options at the same time are not compatible"
INCR_PAIR = "INCR option supports a single increment-element pair"
POSITIVE = "value is out of range, must be positive"
NUMKEYS = "numkeys should be greater than 0"
COUNT_GT0 = "count should be greater than 0"
WEIGHT = "weight value is not a float"
LLONG_RANGE = ("value is out of range, value must between "
               "-9223372036854775807 and 9223372036854775807")
TIMEOUT_FLOAT = "timeout is not a float or out of range"
TIMEOUT_NEG = "timeout is negative"

skip_72 = pytest.mark.skipif(
    IS_REDIS, reason="Redis 7.2 behaviour (WITHSCORE, shortest score text, size hints); Debian ships 7.0")

# Keys spread over shards (with --threads N) and keys sharing one hash tag.
SPREAD = ("a", "b", "c", "x", "y")
TAGGED = ("{t}a", "{t}b", "{t}c", "{t}d", "{t}e")


def bs(*xs):
    return [x if isinstance(x, bytes) else str(x).encode() for x in xs]


def flat(*pairs):
    """[(member, score), ...] as the flat RESP2 WITHSCORES reply."""
    out = []
    for m, s in pairs:
        out += bs(m, s)
    return out


def zall(c, key):
    """The whole zset as [(member, score text)], in order."""
    got = c.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
    return list(zip(got[::2], got[1::2]))


def zmembers(c, key):
    return c.execute_command("ZRANGE", key, 0, -1)


def zadd(c, key, *pairs):
    args = []
    for s, m in pairs:
        args += [s, m]
    return c.execute_command("ZADD", key, *args)


def zscan_all(c, key, *opts):
    """A whole ZSCAN iteration: ([(member, score text)] seen, number of calls)."""
    cursor, seen, calls = b"0", [], 0
    while calls == 0 or cursor != b"0":
        cursor, items = c.execute_command("ZSCAN", key, cursor, *opts)
        assert len(items) % 2 == 0
        seen += list(zip(items[::2], items[1::2]))
        calls += 1
        assert calls < 100000
    return seen, calls


@pytest.fixture(params=["listpack", "skiplist"])
def enc(request, rc, config_set):
    """The encoding new zsets get in this run of the test (see the header)."""
    if request.param == "skiplist":
        config_set("zset-max-listpack-entries", "0")
    return request.param.encode()


# ---------------------------------------------------------------- ZADD

def test_zadd_and_zcard(rc, enc):
    assert rc.execute_command("ZADD", "z", 3, "c", 1, "a", 2, "b") == 3
    assert encoding(rc, "z") == enc
    assert rc.execute_command("TYPE", "z") == b"zset"
    assert zall(rc, "z") == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    assert rc.execute_command("ZADD", "z", 1, "a", 5, "d") == 1  # a unchanged, d new
    assert rc.execute_command("ZADD", "z", 0, "c") == 0  # an update is not counted
    assert zall(rc, "z") == [(b"c", b"0"), (b"a", b"1"), (b"b", b"2"), (b"d", b"5")]
    assert rc.execute_command("ZCARD", "z") == 4
    assert rc.execute_command("ZCARD", "missing") == 0
    # Equal scores are ordered by the members' bytes (integers compare as text).
    rc.execute_command("ZADD", "t", 1, "b", 1, "a", 1, "c", 1, "B", 1, "", 1, "10", 1, "9", 0, "z")
    assert zmembers(rc, "t") == bs("z", "", "10", "9", "B", "a", "b", "c")
    # The same member twice in one call: counted once, the last score wins.
    assert rc.execute_command("ZADD", "d", 1, "x", 2, "x", 3, "x") == 1
    assert rc.execute_command("ZSCORE", "d", "x") == b"3"
    assert rc.execute_command("ZADD", "d", "CH", 4, "x", 4, "x", 5, "x") == 2  # 3->4, 4->5
    assert zall(rc, "d") == [(b"x", b"5")]
    fails(rc, arity("zcard"), ("ZCARD",), ("ZCARD", "z", "x"))


def test_zadd_nx_xx_ch(rc, enc):
    zadd(rc, "z", (1, "a"), (2, "b"))
    assert rc.execute_command("ZADD", "z", "NX", 10, "a", 3, "c") == 1
    assert rc.execute_command("ZADD", "z", "XX", 10, "a", 4, "d") == 0
    assert zall(rc, "z") == [(b"b", b"2"), (b"c", b"3"), (b"a", b"10")]
    assert rc.execute_command("ZADD", "z", "XX", "CH", 11, "a", 5, "e") == 1
    assert rc.execute_command("ZADD", "z", "NX", "CH", 1, "a", 6, "f") == 1
    assert rc.execute_command("ZADD", "z", "CH", 11, "a", 2, "b") == 0  # no change
    assert rc.execute_command("ZADD", "z", "ch", "xx", 12, "a", 12, "b") == 2  # options in any case
    assert rc.execute_command("ZADD", "z", "NX", "NX", 7, "g") == 1  # a repeated option
    assert zall(rc, "z") == [(b"c", b"3"), (b"f", b"6"), (b"g", b"7"), (b"a", b"12"), (b"b", b"12")]
    # XX on a missing key creates nothing.
    assert rc.execute_command("ZADD", "missing", "XX", 1, "a") == 0
    assert rc.execute_command("ZADD", "missing", "XX", "CH", 1, "a", 2, "b") == 0
    assert rc.execute_command("EXISTS", "missing") == 0
    # Option parsing stops at the first argument that is not an option.
    assert rc.execute_command("ZADD", "o", 1, "NX") == 1
    assert rc.execute_command("ZADD", "o", "XX", 2, "NX", 3, "CH") == 0
    assert zall(rc, "o") == [(b"NX", b"2")]


def test_zadd_gt_lt(rc, enc):
    zadd(rc, "z", (5, "a"), (5, "b"))
    # GT/LT only restrict updates: new members are added.
    assert rc.execute_command("ZADD", "z", "GT", "CH", 6, "a", 4, "b", 1, "new") == 2
    assert zall(rc, "z") == [(b"new", b"1"), (b"b", b"5"), (b"a", b"6")]
    assert rc.execute_command("ZADD", "z", "LT", "CH", 7, "a", 3, "b", 2, "new2") == 2
    assert zall(rc, "z") == [(b"new", b"1"), (b"new2", b"2"), (b"b", b"3"), (b"a", b"6")]
    assert rc.execute_command("ZADD", "z", "GT", 100, "a") == 0  # updated, not counted without CH
    assert rc.execute_command("ZSCORE", "z", "a") == b"100"
    assert rc.execute_command("ZADD", "z", "GT", "CH", 100, "a", 3, "b") == 0  # equal is not greater
    assert rc.execute_command("ZADD", "z", "XX", "GT", "CH", 200, "a", 300, "nope") == 1
    assert rc.execute_command("ZADD", "z", "XX", "LT", "CH", 0, "a", 300, "nope") == 1
    assert rc.execute_command("ZSCORE", "z", "nope") is None
    assert rc.execute_command("ZADD", "z", "gt", "ch", "inf", "b") == 1
    assert rc.execute_command("ZADD", "z", "GT", "CH", "-inf", "b", "inf", "b") == 0
    assert rc.execute_command("ZADD", "z", "LT", "CH", "-inf", "b") == 1
    assert zall(rc, "z") == [(b"b", b"-inf"), (b"a", b"0"), (b"new", b"1"), (b"new2", b"2")]


def test_zadd_incr(rc, rc3, enc):
    assert rc.execute_command("ZADD", "z", "INCR", 1.5, "a") == b"1.5"  # a new member
    assert encoding(rc, "z") == enc
    assert rc.execute_command("ZADD", "z", "INCR", 1, "a") == b"2.5"
    assert rc.execute_command("ZADD", "z", "INCR", "NX", 1, "a") is None  # not performed: nil
    assert rc.execute_command("ZADD", "z", "XX", "INCR", 1, "nope") is None
    assert rc.execute_command("ZSCORE", "z", "nope") is None
    assert rc.execute_command("ZADD", "z", "XX", "INCR", 1, "a") == b"3.5"
    assert rc.execute_command("ZADD", "z", "GT", "INCR", -1, "a") is None
    assert rc.execute_command("ZADD", "z", "GT", "INCR", 0, "a") is None  # equal is not greater
    assert rc.execute_command("ZADD", "z", "GT", "INCR", 1, "a") == b"4.5"
    assert rc.execute_command("ZADD", "z", "LT", "INCR", 0, "a") is None
    assert rc.execute_command("ZADD", "z", "LT", "INCR", -0.5, "a") == b"4"
    assert rc.execute_command("ZADD", "z", "NX", "INCR", 1, "new") == b"1"
    assert rc.execute_command("ZADD", "z", "GT", "INCR", 7, "new2") == b"7"  # GT adds new members
    assert rc.execute_command("ZADD", "z", "INCR", "CH", 1, "a") == b"5"  # still the score
    assert rc.execute_command("ZADD", "z", "incr", "xx", "gt", "ch", 1, "a") == b"6"
    assert zall(rc, "z") == [(b"new", b"1"), (b"a", b"6"), (b"new2", b"7")]
    assert rc.execute_command("ZADD", "missing", "XX", "INCR", 1, "a") is None
    assert rc.execute_command("EXISTS", "missing") == 0
    # RESP3: a double, or a null.
    assert rc3.execute_command("ZADD", "z", "INCR", 1, "a") == 7.0
    assert rc3.execute_command("ZADD", "z", "INCR", "NX", 1, "a") is None


def test_zadd_errors(rc):
    fails(rc, arity("zadd"), ("ZADD", "z"), ("ZADD", "z", 1), ("ZADD", "z", "NX"))
    # Pairs are checked first, then the combinations, then the scores, then the key.
    fails(rc, SYNTAX, ("ZADD", "z", "NX", 1), ("ZADD", "z", 1, "a", 2), ("ZADD", "z", "NX", "XX"),
          ("ZADD", "z", "INCR", 1, "a", 2), ("ZADD", "z", "GT", "LT", 1))
    fails(rc, XX_NX, ("ZADD", "z", "NX", "XX", 1, "a"), ("ZADD", "z", "xx", "nx", 1, "a"),
          ("ZADD", "z", "NX", "XX", "GT", 1, "a"), ("ZADD", "z", "NX", "XX", "INCR", 1, "a", 2, "b"))
    fails(rc, GT_LT_NX, ("ZADD", "z", "NX", "GT", 1, "a"), ("ZADD", "z", "NX", "LT", 1, "a"),
          ("ZADD", "z", "GT", "LT", 1, "a"), ("ZADD", "z", "XX", "GT", "LT", 1, "a"),
          ("ZADD", "z", "GT", "LT", "INCR", 1, "a", 2, "b"))
    fails(rc, INCR_PAIR, ("ZADD", "z", "INCR", 1, "a", 2, "b"), ("ZADD", "z", "XX", "INCR", 1, "a", "x", "b"))
    fails(rc, NOT_FLOAT, ("ZADD", "z", "x", "a"), ("ZADD", "z", 1, "a", "x", "b"),
          ("ZADD", "z", "NX", 1, "a", "nan", "b"), ("ZADD", "z", "INCR", "abc", "a"))
    assert rc.execute_command("EXISTS", "z") == 0  # a bad score anywhere adds nothing
    zadd(rc, "z", (1, "a"))
    fails(rc, NOT_FLOAT, ("ZADD", "z", 5, "a", 2, "b", "2x", "c"))
    assert zall(rc, "z") == [(b"a", b"1")]
    rc.execute_command("SET", "str", "v")
    fails(rc, NOT_FLOAT, ("ZADD", "str", "x", "a"), ("ZINCRBY", "str", "x", "a"))
    fails(rc, SYNTAX, ("ZADD", "str", 1, "a", 2))
    fails(rc, XX_NX, ("ZADD", "str", "NX", "XX", 1, "a"))
    fails(rc, WRONGTYPE, ("ZADD", "str", 1, "a"), ("ZADD", "str", "XX", 1, "a"), ("ZINCRBY", "str", 1, "a"))
    assert rc.execute_command("GET", "str") == b"v"


def test_zadd_incr_nan(rc, rc3, enc):
    zadd(rc, "z", ("inf", "a"), ("-inf", "b"), (1, "c"))
    fails(rc, NAN_RESULT, ("ZADD", "z", "INCR", "-inf", "a"), ("ZINCRBY", "z", "-inf", "a"),
          ("ZINCRBY", "z", "+inf", "b"), ("ZADD", "z", "XX", "INCR", "-inf", "a"),
          ("ZADD", "z", "GT", "INCR", "-inf", "a"), ("ZADD", "z", "LT", "INCR", "inf", "b"))
    with raises(NAN_RESULT):
        rc3.execute_command("ZINCRBY", "z", "-inf", "a")
    assert zall(rc, "z") == [(b"b", b"-inf"), (b"c", b"1"), (b"a", b"inf")]
    # NX returns before adding anything: no NaN, a nil.
    assert rc.execute_command("ZADD", "z", "NX", "INCR", "-inf", "a") is None
    assert rc.execute_command("ZADD", "z", "INCR", "inf", "a") == b"inf"
    assert rc.execute_command("ZINCRBY", "z", 1, "a") == b"inf"
    assert rc.execute_command("ZINCRBY", "z", "-1e308", "b") == b"-inf"
    assert rc.execute_command("ZINCRBY", "z", "-inf", "c") == b"-inf"
    # NaN itself is never a score.
    fails(rc, NOT_FLOAT, ("ZADD", "z", "nan", "d"), ("ZADD", "z", "NaN", "d"), ("ZADD", "z", "-nan", "d"),
          ("ZINCRBY", "z", "nan", "c"), ("ZADD", "z", "INCR", "NAN", "c"))
    assert rc.execute_command("ZCARD", "z") == 3


def test_zincrby(rc, rc3, enc):
    assert rc.execute_command("ZINCRBY", "z", 1, "a") == b"1"
    assert encoding(rc, "z") == enc
    assert rc.execute_command("ZINCRBY", "z", 2.5, "a") == b"3.5"
    assert rc.execute_command("ZINCRBY", "z", -3.5, "a") == b"0"
    assert float(rc.execute_command("ZINCRBY", "z", "0.1", "f")) == 0.1
    assert rc.execute_command("ZINCRBY", "z", "0.2", "f") == b"0.30000000000000004"
    assert rc.execute_command("ZINCRBY", "z", "1e308", "g") == b"1e+308"
    assert rc.execute_command("ZINCRBY", "z", "1e308", "g") == b"inf"  # overflow is not an error
    assert rc.execute_command("ZINCRBY", "z", 5, "b") == b"5"
    assert rc.execute_command("ZRANK", "z", "b") == 2
    assert zmembers(rc, "z") == bs("a", "f", "b", "g")
    assert rc3.execute_command("ZINCRBY", "z", 1, "a") == 1.0
    assert rc3.execute_command("ZINCRBY", "z", "-inf", "a") == -math.inf
    fails(rc, NOT_FLOAT, ("ZINCRBY", "z", "x", "a"), ("ZINCRBY", "z", "", "a"), ("ZINCRBY", "z", " 1", "a"))
    fails(rc, arity("zincrby"), ("ZINCRBY", "z", 1), ("ZINCRBY", "z", 1, "a", 2, "b"))


# ---------------------------------------------------------------- scores: parsing and text

@pytest.mark.parametrize("text,value", [
    ("1", 1.0), ("-1.5", -1.5), ("+2", 2.0), (".5", 0.5), ("5.", 5.0), ("1e3", 1000.0), ("1E3", 1000.0),
    ("0x10", 16.0), ("0X1p4", 16.0), ("inf", math.inf), ("+inf", math.inf), ("-inf", -math.inf),
    ("Infinity", math.inf), ("-INF", -math.inf), ("1e-310", 1e-310), ("9007199254740993", 9007199254740992.0),
    ("00012", 12.0), ("-0", 0.0),
])
def test_zadd_accepts_strtod_forms(rc, text, value):
    # Scores are read as strtod does, the whole argument, no leading space.
    assert rc.execute_command("ZADD", "z", text, "m") == 1
    assert float(rc.execute_command("ZSCORE", "z", "m")) == value
    assert rc.execute_command("ZINCRBY", "i", text, "m") is not None


@pytest.mark.parametrize("text", [
    "", " 1", "1 ", "\t1", "1x", "x", "nan", "NaN", "-nan", "1e400", "-1e400", "1e-400", "0x", "1\x00",
    "(1", "[1", "1,5", "--1", "inf ", "1e",
])
def test_zadd_refuses_bad_scores(rc, text):
    # Out of range (overflow, or underflow to zero) is refused, as NaN and any junk.
    fails(rc, NOT_FLOAT, ("ZADD", "z", text, "m"), ("ZINCRBY", "z", text, "m"),
          ("ZADD", "z", "INCR", text, "m"))
    assert rc.execute_command("EXISTS", "z") == 0


# Scores as RESP2 replies print them. These read the same in Redis 7.0 (%.17g) and 7.2
# (integers when exact, else the shortest text that reads back the same).
COMMON_TEXT = [
    ("1", b"1"), ("-1", b"-1"), ("0", b"0"), ("1.5", b"1.5"), ("-0.25", b"-0.25"), ("0.5", b"0.5"),
    ("123.456", b"123.456"), ("12345678.5", b"12345678.5"), ("0.001", b"0.001"),
    ("1e15", b"1000000000000000"), ("1e16", b"10000000000000000"), ("3e15", b"3000000000000000"),
    ("9007199254740993", b"9007199254740992"), ("0.30000000000000004", b"0.30000000000000004"),
    ("1e20", b"1e+20"), ("1e100", b"1e+100"), ("1e-300", b"1e-300"),
    ("1.7976931348623157e308", b"1.7976931348623157e+308"), ("inf", b"inf"), ("+inf", b"inf"),
    ("-inf", b"-inf"), ("0x10", b"16"), ("Infinity", b"inf"),
]

# Redis 7.2's text (src/util.c d2string): an integral value within +-2^62 prints as an
# integer; anything else as the shortest digits that read back the same (fpconv_dtoa,
# deps/fpconv: emit_digits), plain unless that takes 7 or more padding zeros (or, below
# 1, a decimal exponent of -4 or less past the 6th place), else d.ddde+X / d.ddde-X with
# no zero padding in the exponent. Redis 7.0 prints %.17g: 0.10000000000000001, 1e+17,
# 1.0000000000000001e-05, 9.2233720368547758e+18...
TEXT_72 = [
    ("0.1", b"0.1"), ("1.1", b"1.1"), ("-1.1", b"-1.1"), ("0.3", b"0.3"), ("2.675", b"2.675"),
    ("1e17", b"100000000000000000"), ("123456789012345678", b"123456789012345680"),
    ("4611686018427387904", b"4611686018427387904"),  # 2^62: still the integer path
    ("9223372036854775808", b"9223372036854776000"),  # 2^63: shortest digits, padded with zeros
    ("1e-5", b"0.00001"), ("2.5e-5", b"0.000025"), ("1e-6", b"0.000001"), ("1e-7", b"1e-7"),
    ("1.5e-7", b"1.5e-7"), ("0.000123456789", b"1.23456789e-4"), ("0.0123456789", b"0.0123456789"),
]


def check_score_text(c, text, want):
    c.execute_command("DEL", "f")
    c.execute_command("ZADD", "f", text, "m")
    assert c.execute_command("ZSCORE", "f", "m") == want, text
    assert c.execute_command("ZMSCORE", "f", "m", "x") == [want, None], text
    assert c.execute_command("ZRANGE", "f", 0, -1, "WITHSCORES") == [b"m", want], text
    assert c.execute_command("ZRANGEBYSCORE", "f", "-inf", "+inf", "WITHSCORES") == [b"m", want], text
    assert c.execute_command("ZRANDMEMBER", "f", 1, "WITHSCORES") == [b"m", want], text
    assert c.execute_command("ZUNION", 1, "f", "WITHSCORES") == [b"m", want], text
    assert c.execute_command("ZINCRBY", "f", 0, "m") == want, text
    assert c.execute_command("ZADD", "f", "INCR", 0, "m") == want, text
    assert c.execute_command("ZPOPMIN", "f") == [b"m", want], text


def test_score_text(rc, enc):
    for text, want in COMMON_TEXT:
        check_score_text(rc, text, want)


@skip_72
def test_score_text_72(rc, enc):
    for text, want in TEXT_72:
        check_score_text(rc, text, want)
    rc.execute_command("ZADD", "z", "0.1", "a")
    assert rc.execute_command("ZRANK", "z", "a", "WITHSCORE") == [0, b"0.1"]
    # Values that are not tied to a short text still read back exactly.
    for v in (1 / 3, 2 / 3, 5e-324, 2.0 ** 63, 1e-310, 123456.789e-20, -9.87654321e250):
        rc.execute_command("ZADD", "z", repr(v), "v")
        assert float(rc.execute_command("ZSCORE", "z", "v")) == v


def test_negative_zero(rc, rc3, config_set):
    # A listpack keeps an integral score as an integer: -0 comes back as 0.
    rc.execute_command("ZADD", "l", "-0", "m")
    assert encoding(rc, "l") == b"listpack"
    assert rc.execute_command("ZSCORE", "l", "m") == b"0"
    # A skiplist keeps the double: -0 stays -0 (and equals 0).
    config_set("zset-max-listpack-entries", "0")
    rc.execute_command("ZADD", "s", "-0", "m", "0", "n")
    assert encoding(rc, "s") == b"skiplist"
    assert rc.execute_command("ZSCORE", "s", "m") == b"-0"
    got = rc3.execute_command("ZSCORE", "s", "m")
    assert got == 0.0 and math.copysign(1, got) == -1
    assert rc.execute_command("ZADD", "s", "CH", "0", "m") == 0  # the same score: no update
    assert rc.execute_command("ZCOUNT", "s", "0", "0") == 2
    assert rc.execute_command("ZCOUNT", "s", "(-0", "+inf") == 0
    assert rc.execute_command("ZINCRBY", "s", "0", "m") == b"0"  # -0 + 0 is +0


def test_resp3_and_resp2_wire_forms(server, rc):
    with Conn(server) as c:
        c.call("ZADD", "z", 1.5, "a", 2, "b", "inf", "c", "-inf", "d")
        assert c.call("ZSCORE", "z", "a") == b"$3\r\n1.5\r\n"
        assert c.call("ZSCORE", "z", "nope") == b"$-1\r\n"
        assert c.call("ZSCORE", "missing", "a") == b"$-1\r\n"
        assert c.call("ZMSCORE", "z", "b", "nope") == b"*2\r\n$1\r\n2\r\n$-1\r\n"
        assert c.call("ZRANGE", "z", 0, 0, "WITHSCORES") == b"*2\r\n$1\r\nd\r\n$4\r\n-inf\r\n"
        assert c.call("ZPOPMIN", "missing") == b"*0\r\n"
        assert c.call("ZPOPMIN", "missing", 2) == b"*0\r\n"
        assert c.call("ZMPOP", 1, "missing", "MIN") == b"*-1\r\n"
        assert c.call("ZRANDMEMBER", "missing") == b"$-1\r\n"
        assert c.call("ZRANDMEMBER", "missing", 2) == b"*0\r\n"
        assert c.call("ZRANGE", "missing", 0, -1) == b"*0\r\n"
        assert c.call("ZADD", "z", "NX", "INCR", 1, "a") == b"$-1\r\n"
        assert c.call("ZRANK", "z", "nope") == b"$-1\r\n"
        assert c.call("ZADD", "z", "INCR", 1, "b") == b"$1\r\n3\r\n"
        assert c.call("HELLO", "3").startswith(b"%")
        assert c.call("ZSCORE", "z", "a") == b",1.5\r\n"
        assert c.call("ZSCORE", "z", "b") == b",3\r\n"
        assert c.call("ZSCORE", "z", "c") == b",inf\r\n"
        assert c.call("ZSCORE", "z", "d") == b",-inf\r\n"
        assert c.call("ZSCORE", "z", "nope") == b"_\r\n"
        assert c.call("ZMSCORE", "z", "a", "nope") == b"*2\r\n,1.5\r\n_\r\n"
        assert c.call("ZINCRBY", "z", 1, "a") == b",2.5\r\n"
        assert c.call("ZADD", "z", "NX", "INCR", 1, "a") == b"_\r\n"
        assert c.call("ZRANGE", "z", 0, 1, "WITHSCORES") == \
            b"*2\r\n*2\r\n$1\r\nd\r\n,-inf\r\n*2\r\n$1\r\na\r\n,2.5\r\n"
        assert c.call("ZRANGE", "z", 0, 1) == b"*2\r\n$1\r\nd\r\n$1\r\na\r\n"
        assert c.call("ZRANK", "z", "nope") == b"_\r\n"
        assert c.call("ZRANDMEMBER", "missing") == b"_\r\n"
        assert c.call("ZMPOP", 1, "missing", "MIN") == b"_\r\n"
        assert c.call("ZPOPMIN", "z") == b"*2\r\n$1\r\nd\r\n,-inf\r\n"
        assert c.call("ZPOPMAX", "z", 1) == b"*1\r\n*2\r\n$1\r\nc\r\n,inf\r\n"
        assert c.call("ZPOPMIN", "missing") == b"*0\r\n"
        assert c.call("ZSCAN", "z", 0) == b"*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$3\r\n2.5\r\n$1\r\nb\r\n$1\r\n3\r\n"


@skip_72
def test_resp3_double_text_72(server, rc):
    with Conn(server) as c:
        c.call("HELLO", "3")
        c.call("ZADD", "z", "0.1", "a", "1e17", "b")
        assert c.call("ZSCORE", "z", "a") == b",0.1\r\n"
        assert c.call("ZSCORE", "z", "b") == b",100000000000000000\r\n"


# ---------------------------------------------------------------- ZSCORE ZMSCORE ZRANK

def test_zscore_zmscore(rc, rc3, enc):
    zadd(rc, "z", (1, "a"), (2.5, "b"), ("-inf", "c"), (7, "12"))
    assert rc.execute_command("ZSCORE", "z", "b") == b"2.5"
    assert rc.execute_command("ZSCORE", "z", "12") == b"7"
    assert rc.execute_command("ZSCORE", "z", "012") is None
    assert rc.execute_command("ZSCORE", "z", "nope") is None
    assert rc.execute_command("ZSCORE", "missing", "a") is None
    assert rc.execute_command("ZMSCORE", "z", "a", "nope", "c", "a") == [b"1", None, b"-inf", b"1"]
    assert rc.execute_command("ZMSCORE", "missing", "a", "b") == [None, None]
    assert rc3.execute_command("ZSCORE", "z", "b") == 2.5
    assert rc3.execute_command("ZSCORE", "z", "nope") is None
    assert rc3.execute_command("ZMSCORE", "z", "c", "nope", "12") == [-math.inf, None, 7.0]
    fails(rc, arity("zscore"), ("ZSCORE", "z"), ("ZSCORE", "z", "a", "b"))
    fails(rc, arity("zmscore"), ("ZMSCORE", "z"))


def test_zrank_zrevrank(rc, enc):
    zadd(rc, "z", (10, "x"), (20, "y"), (30, "z"), (20, "a"))
    assert [rc.execute_command("ZRANK", "z", m) for m in ("x", "a", "y", "z")] == [0, 1, 2, 3]
    assert [rc.execute_command("ZREVRANK", "z", m) for m in ("x", "a", "y", "z")] == [3, 2, 1, 0]
    assert rc.execute_command("ZRANK", "z", "nope") is None
    assert rc.execute_command("ZREVRANK", "z", "nope") is None
    assert rc.execute_command("ZRANK", "missing", "x") is None
    rc.execute_command("ZADD", "z", 0, "y")
    assert rc.execute_command("ZRANK", "z", "y") == 0
    assert rc.execute_command("ZREVRANK", "z", "y") == 3
    fails(rc, arity("zrank"), ("ZRANK", "z"))
    fails(rc, arity("zrevrank"), ("ZREVRANK", "z"))


@skip_72
def test_zrank_withscore(server, rc, rc3, enc):
    zadd(rc, "z", (10, "x"), (20.5, "y"), (30, "z"))
    assert rc.execute_command("ZRANK", "z", "y", "WITHSCORE") == [1, b"20.5"]
    assert rc.execute_command("ZRANK", "z", "x", "withscore") == [0, b"10"]
    assert rc.execute_command("ZREVRANK", "z", "x", "WITHSCORE") == [2, b"10"]
    assert rc.execute_command("ZRANK", "z", "nope", "WITHSCORE") is None
    assert rc.execute_command("ZRANK", "missing", "x", "WITHSCORE") is None
    assert rc3.execute_command("ZRANK", "z", "y", "WITHSCORE") == [1, 20.5]
    assert rc3.execute_command("ZREVRANK", "z", "z", "WITHSCORE") == [0, 30.0]
    with Conn(server) as c:
        # A missing member is a null array with WITHSCORE, a null bulk without.
        assert c.call("ZRANK", "z", "nope", "WITHSCORE") == b"*-1\r\n"
        assert c.call("ZREVRANK", "missing", "x", "WITHSCORE") == b"*-1\r\n"
        assert c.call("ZRANK", "z", "nope") == b"$-1\r\n"
        assert c.call("ZRANK", "z", "z", "WITHSCORE") == b"*2\r\n:2\r\n$2\r\n30\r\n"
        c.call("HELLO", "3")
        assert c.call("ZRANK", "z", "nope", "WITHSCORE") == b"_\r\n"
        assert c.call("ZRANK", "z", "z", "WITHSCORE") == b"*2\r\n:2\r\n,30\r\n"
    fails(rc, SYNTAX, ("ZRANK", "z", "x", "WITHSCORES"), ("ZREVRANK", "z", "x", "foo"))
    fails(rc, arity("zrank"), ("ZRANK", "z", "x", "WITHSCORE", "x"))
    fails(rc, arity("zrevrank"), ("ZREVRANK", "z", "x", "WITHSCORE", "WITHSCORE"))
    rc.execute_command("SET", "str", "v")
    fails(rc, SYNTAX, ("ZRANK", "str", "x", "foo"))
    fails(rc, WRONGTYPE, ("ZRANK", "str", "x", "WITHSCORE"))


# ---------------------------------------------------------------- ZCOUNT ZLEXCOUNT, range parsing

def test_zcount(rc, enc):
    zadd(rc, "z", ("-inf", "ninf"), (1, "a"), (2, "b"), (2, "b2"), (3, "c"), (4.5, "d"), ("inf", "pinf"))
    for lo, hi, n in (("-inf", "+inf", 7), (2, 2, 2), ("(2", 3, 1), ("(1", "(3", 2), (3, 1, 0),
                      ("(2", "(2", 0), ("(2", "2", 0), ("-inf", "-inf", 1), ("(-inf", "(inf", 5), ("inf", "inf", 1),
                      ("4.4", "4.6", 1), ("-inf", "(1", 1), ("(4.5", "+inf", 1), (0, 0, 0), ("1.5", "2.5", 2)):
        assert rc.execute_command("ZCOUNT", "z", lo, hi) == n, (lo, hi)
    assert rc.execute_command("ZCOUNT", "missing", 0, 1) == 0
    fails(rc, arity("zcount"), ("ZCOUNT", "z", 0), ("ZCOUNT", "z", 0, 1, 2))


@pytest.mark.parametrize("lo,hi,n", [
    ("", "+inf", 4),  # strtod reads "" as 0
    ("(", "+inf", 3),  # "(" alone: exclusive 0
    (" 1", "+inf", 3),  # leading blanks are skipped, unlike ZADD's scores
    ("-inf", "1e400", 4),  # out of range is infinity here, unlike ZADD
    ("1e400", "+inf", 0),
    ("(-1e400", "0", 1),
    ("1e-400", "1", 2),  # underflow: 0
    ("0x2", "0x10", 2),
    ("-INF", "Infinity", 4),
    ("1\x00junk", "2", 2),  # read as a C string: what follows a NUL is not looked at
    ("(0", "(16", 2),
])
def test_score_range_forms(rc, enc, lo, hi, n):
    zadd(rc, "z", (0, "zero"), (1, "a"), (2, "b"), (16, "h"))
    assert rc.execute_command("ZCOUNT", "z", lo, hi) == n
    assert len(rc.execute_command("ZRANGEBYSCORE", "z", lo, hi)) == n
    assert len(rc.execute_command("ZRANGE", "z", hi, lo, "BYSCORE", "REV")) == n


def test_score_range_errors(rc):
    zadd(rc, "z", (1, "a"))
    rc.execute_command("SET", "str", "v")
    bad = ("1 ", "nan", "(nan", "((1", "[1", "abc", "1x", "inf!", "1e", "-", "+")
    for b in bad:
        # Parsed before the key is looked up: also for a missing key or a string.
        for key in ("z", "missing", "str"):
            fails(rc, RANGE_FLOAT, ("ZCOUNT", key, b, 1), ("ZCOUNT", key, 0, b))
        fails(rc, RANGE_FLOAT, ("ZRANGEBYSCORE", "z", b, 1), ("ZREVRANGEBYSCORE", "z", 1, b),
              ("ZRANGE", "z", b, 1, "BYSCORE"), ("ZREMRANGEBYSCORE", "z", 0, b),
              ("ZRANGESTORE", "d", "z", b, 1, "BYSCORE"), ("ZREMRANGEBYSCORE", "str", b, 1))
    assert zall(rc, "z") == [(b"a", b"1")]
    fails(rc, WRONGTYPE, ("ZCOUNT", "str", 0, 1))


def test_zlexcount_and_lex_ranges(rc, enc):
    zadd(rc, "z", *((0, m) for m in ("a", "b", "c", "d", "e", "", "aa", b"\xff")))
    for lo, hi, n in (("-", "+", 8), ("[b", "[d", 3), ("(b", "(d", 1), ("[a", "(b", 2), ("(", "+", 7),
                      ("[", "+", 8), ("-", "[", 1), ("-", "(", 0), ("+", "-", 0), ("[d", "[b", 0),
                      (b"[\xfe", "+", 1), ("-", "-", 0), ("+", "+", 0), ("[aa", "[aa", 1), ("(aa", "[aa", 0),
                      ("[a", "[a", 1), ("(a", "(aa", 0), ("(a", "[aa", 1), ("[e", "+", 2)):
        assert rc.execute_command("ZLEXCOUNT", "z", lo, hi) == n, (lo, hi)
    assert rc.execute_command("ZLEXCOUNT", "missing", "-", "+") == 0
    rc.execute_command("SET", "str", "v")
    for b in ("a", "", "+a", "-a", "++", "--", "1", " [a"):
        for key in ("z", "missing", "str"):
            fails(rc, RANGE_LEX, ("ZLEXCOUNT", key, b, "+"), ("ZLEXCOUNT", key, "-", b))
        fails(rc, RANGE_LEX, ("ZRANGEBYLEX", "z", b, "+"), ("ZREVRANGEBYLEX", "z", "+", b),
              ("ZRANGE", "z", b, "+", "BYLEX"), ("ZREMRANGEBYLEX", "z", "-", b),
              ("ZRANGESTORE", "d", "z", "-", b, "BYLEX"))
    fails(rc, WRONGTYPE, ("ZLEXCOUNT", "str", "-", "+"))
    fails(rc, arity("zlexcount"), ("ZLEXCOUNT", "z", "-"))
    assert rc.execute_command("ZCARD", "z") == 8


# ---------------------------------------------------------------- ZRANGE and the legacy forms

def test_zrange_by_rank(rc, enc):
    zadd(rc, "z", (1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"))
    for start, stop, want in ((0, -1, "abcde"), (1, 3, "bcd"), (-2, -1, "de"), (-100, 1, "ab"), (3, 100, "de"),
                              (2, 1, ""), (5, 10, ""), (-100, -6, ""), (-1, -1, "e"), (0, 0, "a"),
                              (0, "9223372036854775807", "abcde"), ("-9223372036854775808", 0, "a")):
        assert rc.execute_command("ZRANGE", "z", start, stop) == bs(*want), (start, stop)
        assert rc.execute_command("ZRANGE", "z", start, stop, "REV") == bs(*reversed("abcde"))[
            slice(*range_slice(5, start, stop))], (start, stop)
    assert rc.execute_command("ZRANGE", "z", 0, 1, "WITHSCORES") == flat(("a", 1), ("b", 2))
    assert rc.execute_command("ZRANGE", "z", 0, 1, "REV", "WITHSCORES") == flat(("e", 5), ("d", 4))
    assert rc.execute_command("ZREVRANGE", "z", 0, 1, "WITHSCORES") == flat(("e", 5), ("d", 4))
    assert rc.execute_command("ZREVRANGE", "z", 1, -2) == bs("d", "c", "b")
    assert rc.execute_command("ZREVRANGE", "z", -1, -1) == bs("a")
    assert rc.execute_command("ZRANGE", "missing", 0, -1) == []
    assert rc.execute_command("ZREVRANGE", "missing", 0, -1, "WITHSCORES") == []
    fails(rc, NOT_INT, ("ZRANGE", "z", "a", 1), ("ZRANGE", "z", 0, "1.5"), ("ZREVRANGE", "z", "x", 1),
          ("ZRANGE", "z", 0, "9223372036854775808"), ("ZRANGE", "missing", "x", 1))
    fails(rc, SYNTAX, ("ZREVRANGE", "z", 0, 1, "REV"), ("ZREVRANGE", "z", 0, 1, "BYSCORE"),
          ("ZRANGE", "z", 0, 1, "FOO"), ("ZRANGE", "z", 0, 1, "WITHSCORE"))


def range_slice(n, start, stop):
    """ZRANGE's index rules as a Python (start, stop) slice."""
    start, stop = int(start), int(stop)
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    start = max(start, 0)
    if start > stop or start >= n:
        return 0, 0
    return start, min(stop, n - 1) + 1


def test_zrange_byscore(rc, enc):
    zadd(rc, "z", (1, "a"), (2, "c"), (2, "b"), (3, "d"), (4, "e"), ("inf", "f"), ("-inf", "g"))
    every = bs("g", "a", "b", "c", "d", "e", "f")
    assert rc.execute_command("ZRANGE", "z", 2, 3, "BYSCORE") == bs("b", "c", "d")
    assert rc.execute_command("ZRANGE", "z", "(2", "+inf", "BYSCORE") == bs("d", "e", "f")
    assert rc.execute_command("ZRANGE", "z", "-inf", "(2", "BYSCORE", "WITHSCORES") == flat(("g", "-inf"), ("a", 1))
    assert rc.execute_command("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV") == every[::-1]
    assert rc.execute_command("ZRANGE", "z", 3, 2, "BYSCORE", "REV") == bs("d", "c", "b")
    assert rc.execute_command("ZRANGE", "z", 2, 3, "BYSCORE", "REV") == []  # REV takes max first
    assert rc.execute_command("ZRANGE", "z", "(2", "(2", "BYSCORE") == []
    # LIMIT: a negative offset gives nothing, a negative count everything from the offset on.
    for off, cnt, want in ((1, 2, every[1:3]), (0, 0, []), (0, -1, every), (0, -5, every), (2, -1, every[2:]),
                           (-1, 5, []), (-1, -1, []), (7, 1, []), (6, 10, every[6:]), (100, 1, [])):
        rwant = apply_limit(every[::-1], off, cnt)
        assert rc.execute_command("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", off, cnt) == want, (off, cnt)
        assert rc.execute_command("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", off, cnt) == want, (off, cnt)
        assert rc.execute_command("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", off, cnt) == rwant, (off, cnt)
        assert rc.execute_command("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", off, cnt) == rwant
    assert rc.execute_command("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 1, 2) == bs("e", "d")
    assert rc.execute_command("ZRANGEBYSCORE", "z", 2, 3) == bs("b", "c", "d")
    assert rc.execute_command("ZRANGEBYSCORE", "z", 2, 3, "WITHSCORES") == flat(("b", 2), ("c", 2), ("d", 3))
    assert rc.execute_command("ZRANGEBYSCORE", "z", 2, 3, "LIMIT", 1, 1, "WITHSCORES") == flat(("c", 2))
    assert rc.execute_command("ZRANGEBYSCORE", "z", 2, 3, "withscores", "limit", 1, 1) == flat(("c", 2))
    assert rc.execute_command("ZREVRANGEBYSCORE", "z", 3, 2) == bs("d", "c", "b")
    assert rc.execute_command("ZREVRANGEBYSCORE", "z", 2, 3) == []
    assert rc.execute_command("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES", "LIMIT", 0, 2) == \
        flat(("f", "inf"), ("e", 4))
    assert rc.execute_command("ZREVRANGEBYSCORE", "z", "(4", "(1", "LIMIT", 1, 5) == bs("c", "b")
    assert rc.execute_command("ZRANGE", "missing", 0, 1, "BYSCORE") == []
    assert rc.execute_command("ZRANGEBYSCORE", "missing", 0, 1, "WITHSCORES") == []


def test_zrange_bylex(rc, enc):
    words = ["alpha", "bar", "cool", "down", "elephant", "foo", "great", "hill", "omega"]
    zadd(rc, "z", *((0, w) for w in reversed(words)))
    assert rc.execute_command("ZRANGE", "z", "-", "+", "BYLEX") == bs(*words)
    assert rc.execute_command("ZRANGE", "z", "[bar", "[down", "BYLEX") == bs("bar", "cool", "down")
    assert rc.execute_command("ZRANGE", "z", "(bar", "(down", "BYLEX") == bs("cool")
    assert rc.execute_command("ZRANGE", "z", "[cool", "+", "BYLEX", "LIMIT", 1, 2) == bs("down", "elephant")
    assert rc.execute_command("ZRANGE", "z", "+", "-", "BYLEX", "REV", "LIMIT", 0, 3) == bs("omega", "hill", "great")
    assert rc.execute_command("ZRANGE", "z", "[d", "[b", "BYLEX", "REV") == bs("cool", "bar")
    assert rc.execute_command("ZRANGE", "z", "-", "+", "BYLEX", "REV") == []  # REV takes max first
    assert rc.execute_command("ZRANGEBYLEX", "z", "-", "(c") == bs("alpha", "bar")
    assert rc.execute_command("ZRANGEBYLEX", "z", "[f", "+", "LIMIT", 0, 2) == bs("foo", "great")
    assert rc.execute_command("ZRANGEBYLEX", "z", "[b", "[a") == []
    assert rc.execute_command("ZRANGEBYLEX", "z", "[alpha", "[alpha") == bs("alpha")
    assert rc.execute_command("ZRANGEBYLEX", "z", "(alpha", "[alpha") == []
    assert rc.execute_command("ZRANGEBYLEX", "z", "[al", "[alphaz") == bs("alpha")
    assert rc.execute_command("ZREVRANGEBYLEX", "z", "(g", "-") == bs(*reversed(words[:6]))
    assert rc.execute_command("ZREVRANGEBYLEX", "z", "+", "[h", "LIMIT", 1, 1) == bs("hill")
    for off, cnt, want in ((0, -1, words), (2, -3, words[2:]), (-1, 1, []), (0, 0, []), (9, 1, []), (8, 5, words[8:])):
        assert rc.execute_command("ZRANGEBYLEX", "z", "-", "+", "LIMIT", off, cnt) == bs(*want), (off, cnt)
    assert rc.execute_command("ZRANGE", "missing", "-", "+", "BYLEX") == []
    assert rc.execute_command("ZREVRANGEBYLEX", "missing", "+", "-") == []


def test_zrange_option_errors(rc):
    zadd(rc, "z", (1, "a"))
    rc.execute_command("SET", "str", "v")
    for key in ("z", "missing", "str"):  # options are checked before the key
        fails(rc, LIMIT_RANK, ("ZRANGE", key, 0, -1, "LIMIT", 0, 1), ("ZRANGE", key, 0, -1, "REV", "LIMIT", 0, 2),
              ("ZREVRANGE", key, 0, -1, "LIMIT", 0, 1), ("ZRANGESTORE", "d", key, 0, -1, "LIMIT", 0, 1))
        fails(rc, BYLEX_SCORES, ("ZRANGE", key, "-", "+", "BYLEX", "WITHSCORES"),
              ("ZRANGEBYLEX", key, "-", "+", "WITHSCORES"), ("ZREVRANGEBYLEX", key, "+", "-", "WITHSCORES"))
        fails(rc, SYNTAX, ("ZRANGE", key, 0, 1, "BYSCORE", "BYLEX"), ("ZRANGE", key, 0, 1, "BYSCORE", "BYSCORE"),
              ("ZRANGE", key, 0, 1, "REV", "REV"), ("ZRANGE", key, 0, 1, "FOO"), ("ZRANGE", key, 0, 1, "LIMIT", 0),
              ("ZRANGEBYSCORE", key, 0, 1, "REV"), ("ZRANGEBYSCORE", key, 0, 1, "BYSCORE"),
              ("ZRANGEBYLEX", key, "-", "+", "BYLEX"), ("ZREVRANGEBYSCORE", key, 1, 0, "REV"),
              ("ZRANGESTORE", "d", key, 0, -1, "WITHSCORES"), ("ZRANGEBYSCORE", key, 0, 1, "LIMIT", 1),
              ("ZRANGEBYSCORE", key, 0, 1, "WITHSCORE"), ("ZRANGEBYLEX", key, "-", "+", "LIMIT"))
        fails(rc, NOT_INT, ("ZRANGE", key, 0, -1, "BYSCORE", "LIMIT", "x", 1),
              ("ZRANGE", key, 0, -1, "BYSCORE", "LIMIT", 0, "1.5"), ("ZRANGE", key, "a", "b"),
              ("ZRANGE", key, 0, 1, "LIMIT", "x", 1))  # LIMIT's numbers come before its rank check
    # Repeated options are fine; the last LIMIT counts.
    assert rc.execute_command("ZRANGE", "z", 0, -1, "WITHSCORES", "WITHSCORES") == flat(("a", 1))
    assert rc.execute_command("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", 5, 5, "LIMIT", 0, 1) == bs("a")
    # LIMIT with a count of -1 is taken as no LIMIT at all, even by rank.
    assert rc.execute_command("ZRANGE", "z", 0, -1, "LIMIT", 0, -1) == bs("a")
    assert rc.execute_command("ZRANGE", "z", 0, -1, "LIMIT", 3, -1) == bs("a")
    fails(rc, LIMIT_RANK, ("ZRANGE", "z", 0, -1, "LIMIT", 0, -2))
    fails(rc, WRONGTYPE, ("ZRANGE", "str", 0, 1), ("ZRANGE", "str", 0, 1, "BYSCORE"),
          ("ZRANGEBYLEX", "str", "-", "+"), ("ZREVRANGE", "str", 0, 1))
    for cmd, args in (("zrange", ("z", 0)), ("zrangebyscore", ("z", 0)), ("zrevrangebyscore", ("z", 0)),
                      ("zrangebylex", ("z", "-")), ("zrevrangebylex", ("z", "+")), ("zrevrange", ("z", 0)),
                      ("zrangestore", ("d", "z", 0))):
        fails(rc, arity(cmd), (cmd, *args))


@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_zrangestore(rc, keys):
    src, dst, other = keys[:3]
    zadd(rc, src, (1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"))
    assert rc.execute_command("ZRANGESTORE", dst, src, 1, 3) == 3
    assert zall(rc, dst) == [(b"b", b"2"), (b"c", b"3"), (b"d", b"4")]
    assert rc.execute_command("ZRANGESTORE", dst, src, 0, 1, "REV") == 2  # stored in score order
    assert zall(rc, dst) == [(b"d", b"4"), (b"e", b"5")]
    assert rc.execute_command("ZRANGESTORE", dst, src, "(2", "+inf", "BYSCORE", "LIMIT", 1, 2) == 2
    assert zall(rc, dst) == [(b"d", b"4"), (b"e", b"5")]
    assert rc.execute_command("ZRANGESTORE", dst, src, 4, "(2", "BYSCORE", "REV", "LIMIT", 0, 1) == 1
    assert zall(rc, dst) == [(b"d", b"4")]
    assert rc.execute_command("ZRANGESTORE", dst, src, "[b", "[c", "BYLEX") == 2
    assert zall(rc, dst) == [(b"b", b"2"), (b"c", b"3")]
    assert rc.execute_command("ZRANGESTORE", dst, src, "+", "[d", "BYLEX", "REV") == 2
    assert zall(rc, dst) == [(b"d", b"4"), (b"e", b"5")]
    # An empty result deletes the destination.
    assert rc.execute_command("ZRANGESTORE", dst, src, 10, 20) == 0
    assert rc.execute_command("EXISTS", dst) == 0
    rc.execute_command("ZADD", dst, 1, "x")
    assert rc.execute_command("ZRANGESTORE", dst, "missing" + dst, 0, -1) == 0
    assert rc.execute_command("EXISTS", dst) == 0
    # Any type at the destination is replaced, its TTL dropped.
    rc.execute_command("SET", dst, "string", "EX", 100)
    assert rc.execute_command("ZRANGESTORE", dst, src, 0, 0) == 1
    assert rc.execute_command("TYPE", dst) == b"zset" and rc.execute_command("TTL", dst) == -1
    rc.execute_command("SET", other, "string")
    fails(rc, WRONGTYPE, ("ZRANGESTORE", dst, other, 0, -1))
    assert zall(rc, dst) == [(b"a", b"1")]
    # The destination copies: the source stays as it was.
    rc.execute_command("ZADD", dst, 9, "z")
    assert rc.execute_command("ZCARD", src) == 5
    assert rc.execute_command("ZRANGESTORE", src, src, 0, 1) == 2
    assert zall(rc, src) == [(b"a", b"1"), (b"b", b"2")]


# ---------------------------------------------------------------- RESP3 shapes

def test_resp3_shapes(rc3):
    rc3.execute_command("ZADD", "z", 1, "a", 2.5, "b", 3, "c", 4, "d")
    assert rc3.execute_command("ZRANGE", "z", 0, -1) == bs("a", "b", "c", "d")
    pairs = [[b"a", 1.0], [b"b", 2.5], [b"c", 3.0], [b"d", 4.0]]
    assert rc3.execute_command("ZRANGE", "z", 0, -1, "WITHSCORES") == pairs
    assert rc3.execute_command("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "WITHSCORES", "LIMIT", 1, 1) == pairs[1:2]
    assert rc3.execute_command("ZRANGEBYSCORE", "z", 2, 3, "WITHSCORES") == pairs[1:3]
    assert rc3.execute_command("ZREVRANGEBYSCORE", "z", 3, 2, "WITHSCORES") == pairs[2:0:-1]
    assert rc3.execute_command("ZREVRANGE", "z", 0, 0, "WITHSCORES") == [[b"d", 4.0]]
    assert rc3.execute_command("ZRANGE", "z", 5, 10, "WITHSCORES") == []
    assert rc3.execute_command("ZUNION", 1, "z", "WITHSCORES") == pairs
    assert rc3.execute_command("ZINTER", 2, "z", "z", "WITHSCORES", "AGGREGATE", "MAX") == pairs
    assert rc3.execute_command("ZDIFF", 1, "z", "WITHSCORES") == pairs
    assert rc3.execute_command("ZUNION", 1, "z") == bs("a", "b", "c", "d")
    got = rc3.execute_command("ZRANDMEMBER", "z", 2, "WITHSCORES")
    assert len(got) == 2 and all(p in pairs for p in got) and got[0] != got[1]
    assert rc3.execute_command("ZRANDMEMBER", "z", 1, "WITHSCORES")[0] in pairs
    got = rc3.execute_command("ZRANDMEMBER", "z", -5, "WITHSCORES")
    assert len(got) == 5 and all(p in pairs for p in got)
    assert sorted(rc3.execute_command("ZRANDMEMBER", "z", 10, "WITHSCORES")) == pairs
    assert rc3.execute_command("ZRANDMEMBER", "z", 2)[0] in bs("a", "b", "c", "d")
    # Pops: a single pop is flat, a COUNT gives pairs (even COUNT 1).
    assert rc3.execute_command("ZPOPMIN", "z") == [b"a", 1.0]
    assert rc3.execute_command("ZPOPMAX", "z", 1) == [[b"d", 4.0]]
    assert rc3.execute_command("ZPOPMIN", "z", 0) == []
    assert rc3.execute_command("ZMPOP", 1, "z", "MAX") == [b"z", [[b"c", 3.0]]]
    assert rc3.execute_command("ZPOPMIN", "z", 5) == [[b"b", 2.5]]
    assert rc3.execute_command("ZPOPMIN", "z") == []
    rc3.execute_command("ZADD", "z", 1.5, "a", 2, "b")
    assert rc3.execute_command("BZPOPMIN", "z", 0) == [b"z", b"a", 1.5]
    assert rc3.execute_command("BZMPOP", 0, 1, "z", "MIN", "COUNT", 3) == [b"z", [[b"b", 2.0]]]
    # ZSCAN's scores stay strings.
    rc3.execute_command("ZADD", "z", 1.5, "a")
    assert rc3.execute_command("ZSCAN", "z", 0) == [b"0", [b"a", b"1.5"]]


# ---------------------------------------------------------------- removals

def test_zrem(rc, enc):
    zadd(rc, "z", (1, "a"), (2, "b"), (3, "c"), (4, "d"))
    assert rc.execute_command("ZREM", "z", "a", "x", "a") == 1
    assert rc.execute_command("ZREM", "z", "b", "c") == 2
    assert rc.execute_command("ZREM", "z", "nope") == 0
    assert rc.execute_command("ZREM", "missing", "a") == 0
    assert zall(rc, "z") == [(b"d", b"4")]
    assert rc.execute_command("ZREM", "z", "d", "nope") == 1
    assert rc.execute_command("EXISTS", "z") == 0  # the last member takes the key with it
    assert rc.execute_command("TYPE", "z") == b"none"
    fails(rc, arity("zrem"), ("ZREM", "z"))


def test_zremrangebyrank(rc, enc):
    zadd(rc, "z", *((i, c) for i, c in enumerate("abcdef", 1)))
    assert rc.execute_command("ZREMRANGEBYRANK", "z", 0, 0) == 1
    assert rc.execute_command("ZREMRANGEBYRANK", "z", -1, -1) == 1
    assert rc.execute_command("ZREMRANGEBYRANK", "z", 1, -2) == 2
    assert zmembers(rc, "z") == bs("b", "e")
    for start, stop in ((5, 10), (1, 0), (-100, -3), (2, 2)):
        assert rc.execute_command("ZREMRANGEBYRANK", "z", start, stop) == 0
    assert rc.execute_command("ZREMRANGEBYRANK", "z", -100, 100) == 2
    assert rc.execute_command("EXISTS", "z") == 0
    assert rc.execute_command("ZREMRANGEBYRANK", "missing", 0, -1) == 0
    fails(rc, NOT_INT, ("ZREMRANGEBYRANK", "z", "a", 1), ("ZREMRANGEBYRANK", "missing", 0, "x"),
          ("ZREMRANGEBYRANK", "z", "1.0", 1))
    fails(rc, arity("zremrangebyrank"), ("ZREMRANGEBYRANK", "z", 0), ("ZREMRANGEBYRANK", "z", 0, 1, 2))


def test_zremrangebyscore(rc, enc):
    zadd(rc, "z", ("-inf", "n"), (1, "a"), (2, "b"), (3, "c"), (4, "d"), ("inf", "p"))
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "(1", 3) == 2
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", 5, 1) == 0
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "-inf", "-inf") == 1
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "(4", "+inf") == 1
    assert zall(rc, "z") == [(b"a", b"1"), (b"d", b"4")]
    assert rc.execute_command("ZREMRANGEBYSCORE", "missing", "-inf", "+inf") == 0
    assert rc.execute_command("ZREMRANGEBYSCORE", "z", "-inf", "+inf") == 2
    assert rc.execute_command("EXISTS", "z") == 0
    fails(rc, arity("zremrangebyscore"), ("ZREMRANGEBYSCORE", "z", 0))


def test_zremrangebylex(rc, enc):
    zadd(rc, "z", *((0, w) for w in ("alpha", "bar", "cool", "down", "elephant", "foo")))
    assert rc.execute_command("ZREMRANGEBYLEX", "z", "-", "[cool") == 3
    assert rc.execute_command("ZREMRANGEBYLEX", "z", "(down", "(foo") == 1
    assert rc.execute_command("ZREMRANGEBYLEX", "z", "(z", "+") == 0
    assert rc.execute_command("ZREMRANGEBYLEX", "z", "[foo", "[down") == 0
    assert zmembers(rc, "z") == bs("down", "foo")
    assert rc.execute_command("ZREMRANGEBYLEX", "missing", "-", "+") == 0
    assert rc.execute_command("ZREMRANGEBYLEX", "z", "-", "+") == 2
    assert rc.execute_command("EXISTS", "z") == 0
    fails(rc, arity("zremrangebylex"), ("ZREMRANGEBYLEX", "z", "-"))


# ---------------------------------------------------------------- pops

def test_zpopmin_zpopmax(rc, enc):
    zadd(rc, "z", (1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"))
    assert rc.execute_command("ZPOPMIN", "z") == bs("a", 1)
    assert rc.execute_command("ZPOPMAX", "z") == bs("e", 5)
    assert rc.execute_command("ZPOPMIN", "z", 2) == bs("b", 2, "c", 3)
    assert rc.execute_command("ZPOPMIN", "z", 0) == []
    assert rc.execute_command("ZPOPMAX", "z", 10) == bs("d", 4)
    assert rc.execute_command("EXISTS", "z") == 0
    # A missing key: an empty array, with or without a count (not a nil).
    assert rc.execute_command("ZPOPMIN", "z") == []
    assert rc.execute_command("ZPOPMAX", "z", 3) == []
    assert rc.execute_command("ZPOPMIN", "z", 0) == []
    zadd(rc, "t", (1, "b"), (1, "a"), (1, "c"), ("-inf", "n"), ("inf", "p"))
    assert rc.execute_command("ZPOPMIN", "t", 2) == bs("n", "-inf", "a", 1)
    assert rc.execute_command("ZPOPMAX", "t", 2) == bs("p", "inf", "c", 1)
    assert rc.execute_command("ZPOPMAX", "t", "9223372036854775807") == bs("b", 1)
    rc.execute_command("ZADD", "t", 1, "a")
    rc.execute_command("SET", "str", "v")
    for cmd in ("ZPOPMIN", "ZPOPMAX"):
        # The count is checked before the key.
        fails(rc, POSITIVE, *((cmd, k, bad) for k in ("t", "missing", "str")
                              for bad in ("-1", "x", "1.5", "9223372036854775808")))
        fails(rc, SYNTAX, (cmd, "t", 1, 2))
        fails(rc, WRONGTYPE, (cmd, "str"), (cmd, "str", 0))
        fails(rc, arity(cmd.lower()), (cmd,))
    assert zall(rc, "t") == [(b"a", b"1")]


@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_zmpop(rc, keys):
    k1, k2, k3 = keys[:3]
    zadd(rc, k2, (1, "a"), (2, "b"), (3, "c"))
    zadd(rc, k3, (10, "x"))
    assert rc.execute_command("ZMPOP", 3, k1, k2, k3, "MIN") == [k2.encode(), [bs("a", 1)]]
    assert rc.execute_command("ZMPOP", 3, k1, k2, k3, "max", "count", 10) == [k2.encode(), [bs("c", 3), bs("b", 2)]]
    assert rc.execute_command("EXISTS", k2) == 0
    assert rc.execute_command("ZMPOP", 2, k1, k2, "MIN") is None
    assert rc.execute_command("ZMPOP", 3, k1, k2, k3, "MIN", "COUNT", 1) == [k3.encode(), [bs("x", 10)]]
    assert rc.execute_command("EXISTS", k1, k2, k3) == 0
    zadd(rc, k1, (5, "five"))
    assert rc.execute_command("ZMPOP", 2, k1, k1, "MAX", "COUNT", "9223372036854775807") == \
        [k1.encode(), [bs("five", 5)]]


def test_zmpop_errors(rc):
    zadd(rc, "z", (1, "a"))
    fails(rc, NUMKEYS, ("ZMPOP", 0, "z", "MIN"), ("ZMPOP", -1, "z", "MIN"), ("ZMPOP", "x", "z", "MIN"))
    fails(rc, SYNTAX, ("ZMPOP", 2, "z", "MIN"), ("ZMPOP", 1, "z", "MIDDLE"), ("ZMPOP", 1, "z", "MIN", "FOO"),
          ("ZMPOP", 1, "z", "MIN", "COUNT"), ("ZMPOP", 1, "z", "MIN", "COUNT", 1, "COUNT", 1),
          ("ZMPOP", 5, "z", "MIN", "x", "y"))
    fails(rc, COUNT_GT0, ("ZMPOP", 1, "z", "MIN", "COUNT", 0), ("ZMPOP", 1, "z", "MIN", "COUNT", -1),
          ("ZMPOP", 1, "z", "MIN", "COUNT", "x"))
    fails(rc, arity("zmpop"), ("ZMPOP", 1, "z"), ("ZMPOP", 1))
    rc.execute_command("SET", "str", "v")
    fails(rc, COUNT_GT0, ("ZMPOP", 1, "str", "MIN", "COUNT", 0))
    fails(rc, WRONGTYPE, ("ZMPOP", 2, "missing", "str", "MIN"), ("ZMPOP", 2, "str", "z", "MIN"))
    # The first key holding a zset is popped before a later key's type is looked at.
    assert rc.execute_command("ZMPOP", 2, "z", "str", "MIN") == [b"z", [bs("a", 1)]]


# ---------------------------------------------------------------- ZRANDMEMBER

@pytest.mark.parametrize("size", [1, 5, 40])
def test_zrandmember_counts(rc, enc, size):
    want = {("m%d" % i).encode(): str(i).encode() for i in range(size)}
    zadd(rc, "z", *((i, "m%d" % i) for i in range(size)))
    assert encoding(rc, "z") == enc
    check_zrandmember(rc, want)


def test_zrandmember_big(rc):
    # Past the listpack limit; counts near the size and far below it take different paths in Redis.
    want = {("m%d" % i).encode(): str(i).encode() for i in range(300)}
    zadd(rc, "z", *((i, "m%d" % i) for i in range(300)))
    assert encoding(rc, "z") == b"skiplist"
    check_zrandmember(rc, want)


def check_zrandmember(c, want):
    size = len(want)
    assert c.execute_command("ZRANDMEMBER", "z") in want
    for count in sorted({1, 2, size // 3, size // 2, size - 1, size, size + 1, 10 ** 9} - {0}):
        got = c.execute_command("ZRANDMEMBER", "z", count)
        assert len(got) == min(count, size) and len(set(got)) == len(got) and set(got) <= set(want), count
        got = c.execute_command("ZRANDMEMBER", "z", count, "WITHSCORES")
        ps = list(zip(got[::2], got[1::2]))
        assert len(ps) == min(count, size) and len({m for m, _ in ps}) == len(ps), count
        assert all(want[m] == s for m, s in ps)
    got = c.execute_command("ZRANDMEMBER", "z", -3 * size)
    assert len(got) == 3 * size and set(got) <= set(want)
    if size >= 5:
        assert len(set(got)) > size // 2
    got = c.execute_command("ZRANDMEMBER", "z", -7, "withscores")
    assert len(got) == 14 and all(want[m] == s for m, s in zip(got[::2], got[1::2]))
    assert c.execute_command("ZRANDMEMBER", "z", 0) == []
    assert c.execute_command("ZRANDMEMBER", "z", 0, "WITHSCORES") == []
    assert c.execute_command("ZCARD", "z") == size  # nothing removed
    if size >= 5:
        picks = [m for _ in range(60) for m in c.execute_command("ZRANDMEMBER", "z", 3)]
        assert len(set(picks)) > min(size, 180) // 3
        assert len({c.execute_command("ZRANDMEMBER", "z") for _ in range(100)}) > min(size, 100) // 4


def test_zrandmember_missing_and_errors(rc):
    assert rc.execute_command("ZRANDMEMBER", "missing") is None
    assert rc.execute_command("ZRANDMEMBER", "missing", 5) == []
    assert rc.execute_command("ZRANDMEMBER", "missing", -5, "WITHSCORES") == []
    zadd(rc, "z", (1.5, "a"))
    assert rc.execute_command("ZRANDMEMBER", "z", -3) == bs("a", "a", "a")
    assert rc.execute_command("ZRANDMEMBER", "z", -2, "WITHSCORES") == bs("a", 1.5, "a", 1.5)
    assert rc.execute_command("ZRANDMEMBER", "z", "9223372036854775807") == bs("a")
    assert rc.execute_command("ZRANDMEMBER", "z", "4611686018427387903", "WITHSCORES") == bs("a", 1.5)
    rc.execute_command("SET", "str", "v")
    for key in ("z", "missing", "str"):  # the count is parsed before the key is looked up
        fails(rc, NOT_INT, ("ZRANDMEMBER", key, "x"), ("ZRANDMEMBER", key, "1.5"), ("ZRANDMEMBER", key, ""))
        fails(rc, LLONG_RANGE, ("ZRANDMEMBER", key, "-9223372036854775808"))
        fails(rc, SYNTAX, ("ZRANDMEMBER", key, 1, "FOO"), ("ZRANDMEMBER", key, 1, "WITHSCORES", "x"),
              ("ZRANDMEMBER", key, 1, "withscores", "withscores"))
        # WITHSCORES doubles the reply: counts past half the range are refused.
        fails(rc, "value is out of range", ("ZRANDMEMBER", key, "-4611686018427387904", "WITHSCORES"),
              ("ZRANDMEMBER", key, "4611686018427387904", "WITHSCORES"))
    fails(rc, WRONGTYPE, ("ZRANDMEMBER", "str"), ("ZRANDMEMBER", "str", 1), ("ZRANDMEMBER", "str", 0))
    fails(rc, arity("zrandmember"), ("ZRANDMEMBER",))


# ---------------------------------------------------------------- ZSCAN

def test_zscan_full_iteration(rc):
    want = {("m%d" % i).encode(): str(i).encode() for i in range(1500)}
    want.update({str(i).encode(): b"-1.5" for i in range(300)})
    zadd(rc, "z", *((s.decode(), m) for m, s in want.items()))
    assert encoding(rc, "z") == b"skiplist"
    for opts in ((), ("COUNT", 1), ("COUNT", 50), ("count", 100000)):
        seen, calls = zscan_all(rc, "z", *opts)
        assert dict(seen) == want
        assert calls > 1 or opts == ("count", 100000)


def test_zscan_match(rc, enc):
    zadd(rc, "z", *((i, "m%d" % i) for i in range(200)), (7, "other"))
    seen = dict(zscan_all(rc, "z", "MATCH", "m1?")[0])
    assert seen == {("m1%d" % i).encode(): ("1%d" % i).encode() for i in range(10)}
    seen = dict(zscan_all(rc, "z", "MATCH", "*9", "COUNT", 20)[0])
    assert set(seen) == {("m%d" % i).encode() for i in range(200) if i % 10 == 9}
    assert zscan_all(rc, "z", "MATCH", "7")[0] == []  # the pattern is matched against members only
    assert zscan_all(rc, "z", "MATCH", "zz*")[0] == []


def test_zscan_small_set_in_one_call(rc):
    zadd(rc, "z", (3, "c"), (1, "a"), (2.5, "b"), ("inf", "i"), ("1e17", "big"))
    assert encoding(rc, "z") == b"listpack"
    # A listpack comes whole, in order, with cursor 0, whatever the COUNT.
    cursor, items = rc.execute_command("ZSCAN", "z", 0, "COUNT", 1)
    assert cursor == b"0"
    assert items == bs("a", 1, "b", 2.5, "c", 3, "big", "100000000000000000", "i", "inf")
    assert rc.execute_command("ZSCAN", "z", 0, "MATCH", "[ab]*") == [b"0", bs("a", 1, "b", 2.5, "big",
                                                                              "100000000000000000")]
    assert rc.execute_command("ZSCAN", "missing", 0) == [b"0", []]


def test_zscan_score_text(rc, config_set):
    # A skiplist's scores are printed with %.17Lg in ZSCAN (not as ZRANGE prints them).
    config_set("zset-max-listpack-entries", "0")
    zadd(rc, "s", ("1.1", "a"), ("0.5", "b"), ("3", "c"), ("1e17", "d"), ("-inf", "e"), ("0.1", "f"))
    assert dict(zscan_all(rc, "s")[0]) == {b"a": b"1.1000000000000001", b"b": b"0.5", b"c": b"3",
                                           b"d": b"1e+17", b"e": b"-inf", b"f": b"0.10000000000000001"}


@skip_72
def test_zscan_listpack_score_text_72(rc):
    # A listpack stores a non-integral score as its shortest text (7.0: %.17g); ZSCAN shows it.
    zadd(rc, "l", ("1.1", "a"), ("0.1", "b"))
    assert rc.execute_command("ZSCAN", "l", 0) == [b"0", bs("b", "0.1", "a", "1.1")]


def test_zscan_errors(rc):
    zadd(rc, "z", (1, "a"))
    rc.execute_command("SET", "str", "v")
    fails(rc, SYNTAX, ("ZSCAN", "z", 0, "COUNT", 0), ("ZSCAN", "z", 0, "NOVALUES"), ("ZSCAN", "z", 0, "TYPE", "zset"),
          ("ZSCAN", "z", 0, "MATCH"), ("ZSCAN", "z", 0, "COUNT"))
    fails(rc, NOT_INT, ("ZSCAN", "z", 0, "COUNT", "x"))
    for key in ("z", "missing", "str"):
        fails(rc, "invalid cursor", *(("ZSCAN", key, x) for x in ("abc", "1.5", "18446744073709551616", " 1")))
    fails(rc, WRONGTYPE, ("ZSCAN", "str", 0))
    fails(rc, arity("zscan"), ("ZSCAN", "z"))


def test_zscan_while_modifying(rc):
    stable = {("s%d" % i).encode() for i in range(1500)}
    zadd(rc, "z", *((i, m) for i, m in enumerate(sorted(stable))))
    cursor, seen, n = b"0", set(), 0
    while True:
        cursor, items = rc.execute_command("ZSCAN", "z", cursor, "COUNT", 30)
        seen.update(items[::2])
        n += 1
        zadd(rc, "z", *((n, "n%d_%d" % (n, i)) for i in range(30)))
        if n % 2 == 0:
            rc.execute_command("ZREM", "z", *("n%d_%d" % (n - 1, i) for i in range(30)))
        if cursor == b"0":
            break
        assert n < 10000
    assert stable <= seen


# ---------------------------------------------------------------- ZUNION ZINTER ZDIFF

@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_algebra(rc, keys):
    k1, k2, k3, d1, d2 = keys
    zadd(rc, k1, (1, "a"), (2, "b"), (3, "c"))
    zadd(rc, k2, (10, "b"), (20, "c"), (30, "d"))
    rc.execute_command("SADD", k3, "c", "d", "e")  # a plain set: every member scores 1
    assert rc.execute_command("ZUNIONSTORE", d1, 2, k1, k2) == 4
    assert zall(rc, d1) == [(b"a", b"1"), (b"b", b"12"), (b"c", b"23"), (b"d", b"30")]
    assert rc.execute_command("ZUNION", 2, k1, k2, "WITHSCORES") == flat(("a", 1), ("b", 12), ("c", 23), ("d", 30))
    assert rc.execute_command("ZUNION", 2, k1, k2) == bs("a", "b", "c", "d")
    assert rc.execute_command("ZINTERSTORE", d1, 2, k1, k2) == 2
    assert zall(rc, d1) == [(b"b", b"12"), (b"c", b"23")]
    assert rc.execute_command("ZINTER", 3, k1, k2, k3, "WITHSCORES") == flat(("c", 24))
    assert rc.execute_command("ZINTERSTORE", d1, 3, k1, k2, k3) == 1
    assert rc.execute_command("ZDIFFSTORE", d1, 2, k1, k2) == 1
    assert zall(rc, d1) == [(b"a", b"1")]
    assert rc.execute_command("ZDIFF", 2, k2, k1, "WITHSCORES") == flat(("d", 30))
    assert rc.execute_command("ZDIFF", 2, k3, k1, "WITHSCORES") == flat(("d", 1), ("e", 1))
    assert rc.execute_command("ZDIFF", 3, k1, k2, k3) == bs("a")
    assert rc.execute_command("ZUNIONSTORE", d2, 3, k1, k2, k3, "WEIGHTS", 1, 0.5, 10, "AGGREGATE", "MAX") == 5
    assert zall(rc, d2) == [(b"a", b"1"), (b"b", b"5"), (b"c", b"10"), (b"e", b"10"), (b"d", b"15")]
    assert rc.execute_command("ZINTERCARD", 2, k1, k2) == 2
    assert rc.execute_command("ZINTERCARD", 3, k1, k2, k3, "LIMIT", 1) == 1
    assert rc.execute_command("ZUNIONSTORE", d2, 1, k1) == 3  # the result is a copy
    rc.execute_command("ZREM", d2, "a")
    assert rc.execute_command("ZCARD", k1) == 3


def test_weights_and_aggregate(rc):
    a, b = "{t}a", "{t}b"
    zadd(rc, a, (1, "x"), (2, "y"), ("inf", "i"), ("-inf", "j"))
    zadd(rc, b, (3, "y"), (4, "z"), ("-inf", "i"), ("inf", "j"))
    # SUM of inf and -inf is 0 (not NaN), as is a weight of 0 times an infinity.
    assert rc.execute_command("ZUNION", 2, a, b, "WITHSCORES") == \
        flat(("i", 0), ("j", 0), ("x", 1), ("z", 4), ("y", 5))
    assert rc.execute_command("ZINTER", 2, a, b, "WITHSCORES") == flat(("i", 0), ("j", 0), ("y", 5))
    assert rc.execute_command("ZUNION", 2, a, b, "WEIGHTS", 2, 0, "WITHSCORES") == \
        flat(("j", "-inf"), ("z", 0), ("x", 2), ("y", 4), ("i", "inf"))
    assert rc.execute_command("ZUNION", 2, a, b, "WEIGHTS", "inf", 1, "WITHSCORES") == \
        flat(("i", 0), ("j", 0), ("z", 4), ("x", "inf"), ("y", "inf"))
    assert rc.execute_command("ZUNION", 2, a, b, "AGGREGATE", "MIN", "WITHSCORES") == \
        flat(("i", "-inf"), ("j", "-inf"), ("x", 1), ("y", 2), ("z", 4))
    assert rc.execute_command("ZUNION", 2, a, b, "aggregate", "max", "WITHSCORES") == \
        flat(("x", 1), ("y", 3), ("z", 4), ("i", "inf"), ("j", "inf"))
    assert rc.execute_command("ZINTER", 2, a, b, "WEIGHTS", 1, -1, "WITHSCORES") == \
        flat(("j", "-inf"), ("y", -1), ("i", "inf"))
    assert rc.execute_command("ZUNION", 1, a, "WEIGHTS", "0x2", "WITHSCORES") == \
        flat(("j", "-inf"), ("x", 2), ("y", 4), ("i", "inf"))
    assert rc.execute_command("ZUNION", 1, a, "WEIGHTS", 0.5, "WITHSCORES") == \
        flat(("j", "-inf"), ("x", 0.5), ("y", 1), ("i", "inf"))
    # The same key twice: each time with its own weight.
    assert rc.execute_command("ZUNION", 2, a, a, "WITHSCORES") == flat(("j", "-inf"), ("x", 2), ("y", 4), ("i", "inf"))
    assert rc.execute_command("ZINTER", 2, a, a, "WEIGHTS", 1, 2, "WITHSCORES") == \
        flat(("j", "-inf"), ("x", 3), ("y", 6), ("i", "inf"))
    assert rc.execute_command("ZINTER", 2, a, a, "WEIGHTS", 1, 2, "AGGREGATE", "MIN", "WITHSCORES") == \
        flat(("j", "-inf"), ("x", 1), ("y", 2), ("i", "inf"))
    # Repeated options: the last one counts.
    assert rc.execute_command("ZUNION", 1, a, "WEIGHTS", 3, "WEIGHTS", 2, "AGGREGATE", "MIN",
                              "AGGREGATE", "SUM", "WITHSCORES", "WITHSCORES") == \
        flat(("j", "-inf"), ("x", 2), ("y", 4), ("i", "inf"))
    # Results are ordered by score, then member; scores print as ZRANGE prints them.
    zadd(rc, "{t}c", (0.25, "q"), (0.25, "p"))
    assert rc.execute_command("ZUNIONSTORE", "{t}d", 2, "{t}c", a, "WEIGHTS", 3, 1) == 6
    assert zall(rc, "{t}d") == [(b"j", b"-inf"), (b"p", b"0.75"), (b"q", b"0.75"), (b"x", b"1"), (b"y", b"2"),
                                (b"i", b"inf")]


def test_sets_as_inputs(rc):
    rc.execute_command("SADD", "{t}si", 1, 2, 3)  # an intset
    rc.execute_command("SADD", "{t}ss", "a", "b", 1)  # small, with strings
    rc.execute_command("SADD", "{t}sh", *("h%d" % i for i in range(200)), 1)  # a hashtable
    zadd(rc, "{t}z", (5, "1"), (7, "a"))
    assert rc.execute_command("ZUNION", 2, "{t}si", "{t}z", "WITHSCORES") == flat((2, 1), (3, 1), (1, 6), ("a", 7))
    assert rc.execute_command("ZINTER", 2, "{t}ss", "{t}z", "WEIGHTS", 2, 1, "WITHSCORES") == flat((1, 7), ("a", 9))
    assert rc.execute_command("ZINTER", 2, "{t}sh", "{t}z") == bs(1)
    assert rc.execute_command("ZINTER", 3, "{t}si", "{t}ss", "{t}sh", "WITHSCORES") == flat((1, 3))
    assert rc.execute_command("ZDIFF", 2, "{t}si", "{t}z", "WITHSCORES") == flat((2, 1), (3, 1))
    assert rc.execute_command("ZDIFF", 2, "{t}z", "{t}ss") == []
    assert rc.execute_command("ZINTERCARD", 3, "{t}si", "{t}ss", "{t}sh") == 1
    assert rc.execute_command("ZINTERCARD", 2, "{t}sh", "{t}sh", "LIMIT", 10) == 10
    assert rc.execute_command("ZUNION", 1, "{t}si", "WEIGHTS", 3, "AGGREGATE", "MIN", "WITHSCORES") == \
        flat((1, 3), (2, 3), (3, 3))
    assert rc.execute_command("ZUNIONSTORE", "{t}d", 1, "{t}ss") == 3
    assert rc.execute_command("TYPE", "{t}d") == b"zset"
    assert zall(rc, "{t}d") == [(b"1", b"1"), (b"a", b"1"), (b"b", b"1")]
    assert rc.execute_command("ZUNIONSTORE", "{t}d", 2, "{t}sh", "{t}z") == 202
    assert rc.execute_command("ZSCORE", "{t}d", "1") == b"6"
    assert rc.execute_command("ZDIFFSTORE", "{t}d", 2, "{t}sh", "{t}ss") == 200
    assert rc.execute_command("TYPE", "{t}sh") == b"set"  # the sources are untouched


def test_algebra_errors(rc):
    zadd(rc, "{t}a", (1, "x"))
    for cmd, pre in (("ZUNION", ()), ("ZINTER", ()), ("ZDIFF", ()), ("ZUNIONSTORE", ("{t}d",)),
                     ("ZINTERSTORE", ("{t}d",)), ("ZDIFFSTORE", ("{t}d",)), ("ZINTERCARD", ())):
        fails(rc, "at least 1 input key is needed for '%s' command" % cmd.lower(),
              (cmd, *pre, 0, "{t}a"), (cmd, *pre, -1, "{t}a"))
        fails(rc, NOT_INT, (cmd, *pre, "x", "{t}a"), (cmd, *pre, "1.0", "{t}a"))
        fails(rc, SYNTAX, (cmd, *pre, 3, "{t}a", "{t}b"), (cmd, *pre, 1, "{t}a", "FOO"))
        fails(rc, arity(cmd.lower()), (cmd, *pre, 1))
    fails(rc, WEIGHT, ("ZUNION", 1, "{t}a", "WEIGHTS", "x"), ("ZUNION", 1, "{t}a", "WEIGHTS", "nan"),
          ("ZINTERSTORE", "{t}d", 1, "{t}a", "WEIGHTS", "1e400"), ("ZUNION", 1, "{t}a", "WEIGHTS", " 1"),
          ("ZUNION", 2, "{t}a", "{t}b", "WEIGHTS", 1, ""))
    fails(rc, SYNTAX, ("ZUNION", 1, "{t}a", "WEIGHTS"), ("ZUNION", 2, "{t}a", "{t}b", "WEIGHTS", 1),
          ("ZUNION", 1, "{t}a", "WEIGHTS", 1, 2), ("ZUNION", 1, "{t}a", "AGGREGATE", "AVG"),
          ("ZUNION", 1, "{t}a", "AGGREGATE"), ("ZUNIONSTORE", "{t}d", 1, "{t}a", "WITHSCORES"),
          ("ZINTERSTORE", "{t}d", 1, "{t}a", "WITHSCORES"), ("ZDIFFSTORE", "{t}d", 1, "{t}a", "WITHSCORES"),
          ("ZDIFF", 1, "{t}a", "WEIGHTS", 1), ("ZDIFF", 1, "{t}a", "AGGREGATE", "MIN"),
          ("ZINTERCARD", 1, "{t}a", "WEIGHTS", 1), ("ZINTERCARD", 1, "{t}a", "WITHSCORES"),
          ("ZINTERCARD", 1, "{t}a", "AGGREGATE", "SUM"), ("ZINTER", 1, "{t}a", "LIMIT", 1),
          ("ZINTERCARD", 1, "{t}a", "LIMIT"))
    fails(rc, "LIMIT can't be negative", ("ZINTERCARD", 1, "{t}a", "LIMIT", -1),
          ("ZINTERCARD", 1, "{t}a", "LIMIT", "x"))
    # Types are checked before the options are parsed; lists and strings are refused.
    rc.execute_command("SET", "{t}str", "v")
    rc.execute_command("RPUSH", "{t}l", "x")
    fails(rc, WRONGTYPE, ("ZUNION", 2, "{t}a", "{t}str"), ("ZINTER", 2, "{t}missing", "{t}str"),
          ("ZDIFF", 2, "{t}missing", "{t}str"), ("ZINTERCARD", 2, "{t}missing", "{t}str"),
          ("ZUNION", 1, "{t}str", "WEIGHTS", "x"), ("ZINTERCARD", 1, "{t}l", "LIMIT", "x"),
          ("ZUNIONSTORE", "{t}d", 1, "{t}l"), ("ZDIFFSTORE", "{t}d", 2, "{t}a", "{t}str"))
    assert rc.execute_command("EXISTS", "{t}d") == 0


def test_zintercard(rc):
    zadd(rc, "{t}a", *((i, "m%d" % i) for i in range(300)))
    zadd(rc, "{t}b", *((i, "m%d" % i) for i in range(0, 600, 2)))
    assert rc.execute_command("ZINTERCARD", 2, "{t}a", "{t}b") == 150
    assert rc.execute_command("ZINTERCARD", 2, "{t}a", "{t}b", "LIMIT", 0) == 150
    assert rc.execute_command("ZINTERCARD", 2, "{t}a", "{t}b", "limit", 17) == 17
    assert rc.execute_command("ZINTERCARD", 2, "{t}a", "{t}b", "LIMIT", 1000) == 150
    assert rc.execute_command("ZINTERCARD", 2, "{t}a", "{t}b", "LIMIT", 1, "LIMIT", 5) == 5
    assert rc.execute_command("ZINTERCARD", 1, "{t}a") == 300
    assert rc.execute_command("ZINTERCARD", 2, "{t}a", "{t}missing") == 0


@pytest.mark.parametrize("keys", [TAGGED, SPREAD], ids=["tagged", "spread"])
def test_store_destination_rules(rc, keys):
    k1, k2, missing, d1, d2 = keys
    zadd(rc, k1, (1, "a"), (2, "b"))
    zadd(rc, k2, (3, "b"), (4, "c"))
    # An empty result deletes the destination (of any type) and replies 0.
    for cmd in (("ZINTERSTORE", d1, 2, k1, missing), ("ZDIFFSTORE", d1, 2, k1, k1),
                ("ZUNIONSTORE", d1, 1, missing), ("ZRANGESTORE", d1, k1, 5, 10)):
        for setup in (("ZADD", d1, 1, "old"), ("SET", d1, "string"), ("HSET", d1, "f", "v"),
                      ("SADD", d1, "m")):
            rc.execute_command(*setup)
            assert rc.execute_command(*cmd) == 0, (cmd, setup)
            assert rc.execute_command("EXISTS", d1) == 0, (cmd, setup)
    # A result replaces a destination of another type and drops its TTL.
    rc.execute_command("SET", d2, "string", "EX", 100)
    assert rc.execute_command("ZUNIONSTORE", d2, 2, k1, k2) == 3
    assert rc.execute_command("TYPE", d2) == b"zset" and rc.execute_command("TTL", d2) == -1
    rc.execute_command("ZADD", d2, 1, "x")
    rc.execute_command("EXPIRE", d2, 100)
    assert rc.execute_command("ZINTERSTORE", d2, 2, k1, k2) == 1
    assert zall(rc, d2) == [(b"b", b"5")] and rc.execute_command("TTL", d2) == -1
    # The destination may be a source.
    assert rc.execute_command("ZUNIONSTORE", k1, 2, k1, k2) == 3
    assert zall(rc, k1) == [(b"a", b"1"), (b"c", b"4"), (b"b", b"5")]
    assert rc.execute_command("ZDIFFSTORE", k2, 2, k2, k1) == 0
    assert rc.execute_command("EXISTS", k2) == 0
    assert rc.execute_command("ZINTERSTORE", k1, 1, k1, "WEIGHTS", 2) == 3
    assert zall(rc, k1) == [(b"a", b"2"), (b"c", b"8"), (b"b", b"10")]
    # The empty name is a key like any other (it was once taken for "no
    # destination": a ZUNION reply).
    assert rc.execute_command("ZUNIONSTORE", "", 1, k1) == 3
    assert rc.execute_command("ZCARD", "") == 3
    assert rc.execute_command("ZINTERSTORE", "", 1, missing) == 0
    assert rc.execute_command("EXISTS", "") == 0


def test_store_result_encodings(rc, config_set):
    zadd(rc, "{t}big", *((i, "m%d" % i) for i in range(200)))
    zadd(rc, "{t}most", *((i, "m%d" % i) for i in range(195)))
    zadd(rc, "{t}long", (1, "x" * 65), (2, "a"))
    # Z*STORE picks the encoding by the result: a small one is a listpack, whatever the sources.
    assert rc.execute_command("ZDIFFSTORE", "{t}d", 2, "{t}big", "{t}most") == 5
    assert rc.execute_command("ZINTERSTORE", "{t}i", 2, "{t}big", "{t}long") == 0
    assert rc.execute_command("ZINTERSTORE", "{t}i", 2, "{t}big", "{t}most", "WEIGHTS", 1, 0) == 195
    assert rc.execute_command("ZUNIONSTORE", "{t}u", 1, "{t}long") == 2
    assert rc.execute_command("ZUNIONSTORE", "{t}u2", 2, "{t}d", "{t}d") == 5
    rc.execute_command("ZREM", "{t}big", *("m%d" % i for i in range(190)))  # a skiplist of 10
    assert encoding(rc, "{t}big") == b"skiplist"
    assert rc.execute_command("ZUNIONSTORE", "{t}u3", 1, "{t}big") == 10
    assert rc.execute_command("ZRANGESTORE", "{t}r1", "{t}most", 0, 127) == 128
    assert rc.execute_command("ZRANGESTORE", "{t}r2", "{t}most", 0, 128) == 129
    # BYSCORE/BYLEX results too (Redis 7.2.0-7.2.4 made these skiplists; fixed in 7.2.5).
    assert rc.execute_command("ZRANGESTORE", "{t}r3", "{t}most", 0, "+inf", "BYSCORE", "LIMIT", 0, 128) == 128
    assert rc.execute_command("ZRANGESTORE", "{t}r4", "{t}most", 0, "+inf", "BYSCORE", "LIMIT", 0, 129) == 129
    assert rc.execute_command("ZRANGESTORE", "{t}r5", "{t}long", "-", "+", "BYLEX") == 2
    assert rc.execute_command("ZRANGESTORE", "{t}r6", "{t}long", 1, 1) == 1
    got = {k: encoding(rc, "{t}" + k) for k in ("d", "i", "u", "u2", "u3", "r1", "r2", "r3", "r4", "r5", "r6")}
    assert got == {"d": b"listpack", "i": b"skiplist", "u": b"skiplist", "u2": b"listpack", "u3": b"listpack",
                   "r1": b"listpack", "r2": b"skiplist", "r3": b"listpack", "r4": b"skiplist", "r5": b"skiplist",
                   "r6": b"listpack"}
    config_set("zset-max-listpack-entries", "4")
    config_set("zset-max-listpack-value", "3")
    zadd(rc, "{t}s1", (1, "a"), (2, "b"))
    zadd(rc, "{t}s2", (1, "c"), (2, "d"), (3, "e"))
    assert rc.execute_command("ZUNIONSTORE", "{t}v1", 2, "{t}s1", "{t}s2") == 5
    assert rc.execute_command("ZDIFFSTORE", "{t}v2", 1, "{t}s2") == 3
    zadd(rc, "{t}s3", (1, "abcd"))
    assert rc.execute_command("ZUNIONSTORE", "{t}v3", 2, "{t}s3", "{t}s1") == 3
    assert rc.execute_command("ZUNIONSTORE", "{t}v4", 1, "{t}s1") == 2
    assert rc.execute_command("ZRANGESTORE", "{t}v5", "{t}s2", 0, -1) == 3
    got = {k: encoding(rc, "{t}" + k) for k in ("s3", "v1", "v2", "v3", "v4", "v5")}
    assert got == {"s3": b"skiplist", "v1": b"skiplist", "v2": b"listpack", "v3": b"skiplist",
                   "v4": b"listpack", "v5": b"listpack"}


# ---------------------------------------------------------------- encodings

def test_encoding_conversions(rc):
    zadd(rc, "z", *((i, "m%d" % i) for i in range(128)))
    assert encoding(rc, "z") == b"listpack"
    rc.execute_command("ZADD", "z", 1, "m0", 2, "m1")  # updates add nothing
    assert encoding(rc, "z") == b"listpack"
    rc.execute_command("ZADD", "z", 1, "m128")
    assert encoding(rc, "z") == b"skiplist"
    rc.execute_command("ZREM", "z", *("m%d" % i for i in range(120)))  # never converts back
    assert encoding(rc, "z") == b"skiplist" and rc.execute_command("ZCARD", "z") == 9
    rc.execute_command("ZPOPMIN", "z", 8)
    assert encoding(rc, "z") == b"skiplist"
    assert zall(rc, "z") == [(b"m127", b"127")]
    rc.execute_command("ZADD", "v", 1, "x" * 64)
    assert encoding(rc, "v") == b"listpack"
    rc.execute_command("ZADD", "v", 1, "y" * 65)
    assert encoding(rc, "v") == b"skiplist"
    rc.execute_command("ZADD", "v2", 1, "y" * 65)  # created as a skiplist
    rc.execute_command("ZADD", "v3", 1, "a", 2, "y" * 65)
    rc.execute_command("ZINCRBY", "v4", 1, "y" * 65)
    rc.execute_command("ZADD", "v5", "XX", 1, "a")
    rc.execute_command("ZADD", "v5", "INCR", 1, "a")
    rc.execute_command("ZADD", "v5", "XX", 1, "y" * 65)  # XX adds nothing: no conversion
    for i in range(129):
        rc.execute_command("ZINCRBY", "v6", 1, i)
    got = {k: encoding(rc, k) for k in ("v2", "v3", "v4", "v5", "v6")}
    assert got == {"v2": b"skiplist", "v3": b"skiplist", "v4": b"skiplist", "v5": b"listpack", "v6": b"skiplist"}
    # Copies and renames keep the encoding.
    assert rc.execute_command("COPY", "z", "zc") == 1 and encoding(rc, "zc") == b"skiplist"
    assert rc.execute_command("RENAME", "v", "vr") == b"OK" and encoding(rc, "vr") == b"skiplist"
    zadd(rc, "small", (1, "a"))
    assert rc.execute_command("COPY", "small", "sc") == 1 and encoding(rc, "sc") == b"listpack"


def test_config_zset_max_listpack(rc, config_set):
    # (A pattern may list an alias or not, depending on Redis's dict order: ask by name.)
    for name, v in (("zset-max-listpack-entries", b"128"), ("zset-max-listpack-value", b"64"),
                    ("zset-max-ziplist-entries", b"128"), ("zset-max-ziplist-value", b"64")):
        assert rc.execute_command("CONFIG", "GET", name) == [name.encode(), v]
    config_set("zset-max-listpack-entries", "4")
    zadd(rc, "z", (1, "a"), (2, "b"), (3, "c"), (4, "d"))
    assert encoding(rc, "z") == b"listpack"
    rc.execute_command("ZADD", "z", 5, "e")
    assert encoding(rc, "z") == b"skiplist"
    config_set("zset-max-listpack-value", "3")
    rc.execute_command("ZADD", "v", 1, "abc", 2, "123")
    assert encoding(rc, "v") == b"listpack"
    rc.execute_command("ZADD", "v", 1, "1234")  # an integer-like member counts its digits
    assert encoding(rc, "v") == b"skiplist"
    assert zall(rc, "v") == [(b"1234", b"1"), (b"abc", b"1"), (b"123", b"2")]
    config_set("zset-max-ziplist-value", "0")  # the old names are aliases
    assert rc.execute_command("CONFIG", "GET", "zset-max-listpack-value") == [b"zset-max-listpack-value", b"0"]
    rc.execute_command("ZADD", "e", 1, "")
    rc.execute_command("ZADD", "e2", 1, "a")
    assert encoding(rc, "e") == b"listpack" and encoding(rc, "e2") == b"skiplist"
    config_set("zset-max-listpack-value", "64")
    config_set("zset-max-listpack-entries", "0")
    rc.execute_command("ZADD", "s", 1, "a")
    assert encoding(rc, "s") == b"skiplist"


@skip_72
def test_zadd_sizes_the_set_for_its_pairs_72(rc, config_set):
    # Redis 7.2 picks the encoding from the number of pairs before adding (duplicates or not).
    dup = [a for _ in range(129) for a in (1, "a")]
    rc.execute_command("ZADD", "n", *dup)
    zadd(rc, "e", (1, "a"))
    rc.execute_command("ZADD", "e", *dup)
    zadd(rc, "e2", (1, "a"))
    rc.execute_command("ZADD", "e2", *dup[:256])
    rc.execute_command("ZADD", "x", "XX", *dup)  # XX on a missing key creates nothing
    got = {k: encoding(rc, k) for k in ("n", "e", "e2")}
    assert got == {"n": b"skiplist", "e": b"skiplist", "e2": b"listpack"}
    assert rc.execute_command("EXISTS", "x") == 0
    # Only the first member's length is the size hint of a new key.
    rc.execute_command("ZADD", "v", 1, "x" * 65, 2, "a")
    assert encoding(rc, "v") == b"skiplist"


# ---------------------------------------------------------------- types and arity

ZSET_COMMANDS = [
    ("ZADD", "k", "1", "m"), ("ZADD", "k", "INCR", "1", "m"), ("ZINCRBY", "k", "1", "m"), ("ZREM", "k", "m"),
    ("ZCARD", "k"), ("ZCOUNT", "k", "0", "1"), ("ZLEXCOUNT", "k", "-", "+"), ("ZSCORE", "k", "m"),
    ("ZMSCORE", "k", "m"), ("ZRANK", "k", "m"), ("ZREVRANK", "k", "m"), ("ZRANGE", "k", "0", "-1"),
    ("ZRANGE", "k", "0", "1", "BYSCORE"), ("ZRANGE", "k", "-", "+", "BYLEX"), ("ZRANGESTORE", "d", "k", "0", "-1"),
    ("ZRANGEBYSCORE", "k", "0", "1"), ("ZREVRANGEBYSCORE", "k", "1", "0"), ("ZRANGEBYLEX", "k", "-", "+"),
    ("ZREVRANGEBYLEX", "k", "+", "-"), ("ZREVRANGE", "k", "0", "-1"), ("ZREMRANGEBYRANK", "k", "0", "1"),
    ("ZREMRANGEBYSCORE", "k", "0", "1"), ("ZREMRANGEBYLEX", "k", "-", "+"), ("ZPOPMIN", "k"), ("ZPOPMAX", "k", "2"),
    ("ZMPOP", "1", "k", "MIN"), ("ZRANDMEMBER", "k"), ("ZRANDMEMBER", "k", "2"),
    ("ZRANDMEMBER", "k", "-2", "WITHSCORES"), ("ZSCAN", "k", "0"), ("ZUNION", "1", "k"),
    ("ZUNIONSTORE", "d", "1", "k"), ("ZINTER", "1", "k"), ("ZINTERSTORE", "d", "1", "k"), ("ZINTERCARD", "1", "k"),
    ("ZDIFF", "1", "k"), ("ZDIFFSTORE", "d", "1", "k"), ("BZPOPMIN", "k", "0"), ("BZPOPMAX", "k", "0"),
    ("BZMPOP", "0", "1", "k", "MAX"),
]
SET_ACCEPTED = {"ZUNION", "ZUNIONSTORE", "ZINTER", "ZINTERSTORE", "ZINTERCARD", "ZDIFF", "ZDIFFSTORE"}


@pytest.mark.parametrize("cmd", ZSET_COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("kind", ["string", "hash", "list", "set"])
def test_zset_commands_wrongtype(rc, cmd, kind):
    setup = {"string": ("SET", "k", "v"), "hash": ("HSET", "k", "f", "v"), "list": ("RPUSH", "k", "x"),
             "set": ("SADD", "k", "m")}[kind]
    rc.execute_command(*setup)
    if kind == "set" and cmd[0] in SET_ACCEPTED:
        rc.execute_command(*cmd)  # a plain set is an input of the algebra
    else:
        fails(rc, WRONGTYPE, cmd)
    assert rc.execute_command("TYPE", "k") == kind.encode()
    stored = kind == "set" and cmd[0] in SET_ACCEPTED and cmd[0].endswith("STORE")
    assert rc.execute_command("EXISTS", "d") == (1 if stored else 0)


@pytest.mark.parametrize("cmd", [
    ("GET", "z"), ("INCR", "z"), ("APPEND", "z", "x"), ("SET", "z", "v", "GET"), ("STRLEN", "z"),
    ("HSET", "z", "f", "v"), ("HGETALL", "z"), ("SADD", "z", "m"), ("SMEMBERS", "z"), ("SINTER", "z"),
    ("SUNIONSTORE", "d", "z"), ("LPUSH", "z", "x"), ("LRANGE", "z", "0", "-1"), ("BLPOP", "z", "0"),
], ids=lambda c: " ".join(c))
def test_other_commands_against_zset(rc, cmd):
    rc.execute_command("ZADD", "z", 1, "m")
    fails(rc, WRONGTYPE, cmd)
    assert zall(rc, "z") == [(b"m", b"1")]


@pytest.mark.parametrize("cmd,args", [
    ("zadd", ("z", "1")), ("zincrby", ("z", "1")), ("zrem", ("z",)), ("zcard", ()), ("zcard", ("z", "x")),
    ("zcount", ("z", "0")), ("zlexcount", ("z", "-", "+", "x")), ("zscore", ("z",)), ("zmscore", ("z",)),
    ("zrank", ("z",)), ("zrevrank", ("z",)), ("zrange", ("z", "0")), ("zrangestore", ("d", "z", "0")),
    ("zrangebyscore", ("z", "0")), ("zrevrangebyscore", ("z", "0")), ("zrangebylex", ("z", "-")),
    ("zrevrangebylex", ("z", "+")), ("zrevrange", ("z", "0")), ("zremrangebyrank", ("z", "0")),
    ("zremrangebyscore", ("z", "0", "1", "2")), ("zremrangebylex", ("z", "-")), ("zpopmin", ()), ("zpopmax", ()),
    ("zmpop", ("1", "z")), ("zrandmember", ()), ("zscan", ("z",)), ("zunion", ("1",)), ("zunionstore", ("d", "1")),
    ("zinter", ("1",)), ("zinterstore", ("d", "1")), ("zintercard", ("1",)), ("zdiff", ("1",)),
    ("zdiffstore", ("d", "1")), ("bzpopmin", ("z",)), ("bzpopmax", ("z",)), ("bzmpop", ("0", "1", "z")),
])
def test_arity(rc, cmd, args):
    fails(rc, arity(cmd), (cmd, *args))
    fails(rc, arity(cmd), (cmd.upper(), *args))


def test_command_info(rc):
    infos = rc.execute_command("COMMAND", "INFO", "zadd", "zrange", "zrangestore", "zunionstore", "zunion",
                               "zmpop", "bzmpop", "zscan", "zpopmin", "zscore", "zremrangebyscore", "zintercard")
    got = {i[0].decode(): (i[1], i[2], i[3], i[4], i[5], i[6]) for i in infos}
    ss = b"@sortedset"
    assert got == {
        "zadd": (-4, [b"write", b"denyoom", b"fast"], 1, 1, 1, [b"@write", ss, b"@fast"]),
        "zrange": (-4, [b"readonly"], 1, 1, 1, [b"@read", ss, b"@slow"]),
        "zrangestore": (-5, [b"write", b"denyoom"], 1, 2, 1, [b"@write", ss, b"@slow"]),
        "zunionstore": (-4, [b"write", b"denyoom", b"movablekeys"], 1, 1, 1, [b"@write", ss, b"@slow"]),
        "zunion": (-3, [b"readonly", b"movablekeys"], 0, 0, 0, [b"@read", ss, b"@slow"]),
        "zmpop": (-4, [b"write", b"movablekeys"], 0, 0, 0, [b"@write", ss, b"@slow"]),
        "bzmpop": (-5, [b"write", b"blocking", b"movablekeys"], 0, 0, 0, [b"@write", ss, b"@slow", b"@blocking"]),
        "zscan": (-3, [b"readonly"], 1, 1, 1, [b"@read", ss, b"@slow"]),
        "zpopmin": (-2, [b"write", b"fast"], 1, 1, 1, [b"@write", ss, b"@fast"]),
        "zscore": (3, [b"readonly", b"fast"], 1, 1, 1, [b"@read", ss, b"@fast"]),
        "zremrangebyscore": (4, [b"write"], 1, 1, 1, [b"@write", ss, b"@slow"]),
        "zintercard": (-3, [b"readonly", b"movablekeys"], 0, 0, 0, [b"@read", ss, b"@slow"]),
    }
    for cmd, keys in ((("ZUNIONSTORE", "d", 2, "a", "b", "WEIGHTS", 1, 2), bs("d", "a", "b")),
                      (("ZINTER", 2, "a", "b"), bs("a", "b")), (("ZDIFFSTORE", "d", 1, "a"), bs("d", "a")),
                      (("ZMPOP", 2, "a", "b", "MIN"), bs("a", "b")),
                      (("BZMPOP", 0, 2, "a", "b", "MIN", "COUNT", 2), bs("a", "b")),
                      (("ZRANGESTORE", "d", "s", 0, 1), bs("d", "s")), (("BZPOPMIN", "a", "b", 0), bs("a", "b")),
                      (("ZINTERCARD", 2, "a", "b", "LIMIT", 1), bs("a", "b"))):
        assert rc.execute_command("COMMAND", "GETKEYS", *cmd) == keys, cmd


@skip_72
def test_command_info_72(rc):
    infos = rc.execute_command("COMMAND", "INFO", "zrank", "zrevrank", "bzpopmin", "bzpopmax")
    got = {i[0].decode(): (i[1], i[2], i[6]) for i in infos}
    assert got == {
        "zrank": (-3, [b"readonly", b"fast"], [b"@read", b"@sortedset", b"@fast"]),
        "zrevrank": (-3, [b"readonly", b"fast"], [b"@read", b"@sortedset", b"@fast"]),
        "bzpopmin": (-3, [b"write", b"blocking", b"fast"], [b"@write", b"@sortedset", b"@fast", b"@blocking"]),
        "bzpopmax": (-3, [b"write", b"blocking", b"fast"], [b"@write", b"@sortedset", b"@fast", b"@blocking"]),
    }


# ---------------------------------------------------------------- keyspace operations

def test_zset_keyspace(rc):
    rc.execute_command("ZADD", "z", 1, "m")
    rc.execute_command("SET", "str", "v")
    assert rc.execute_command("TYPE", "z") == b"zset"
    assert rc.execute_command("MGET", "z", "str") == [None, b"v"]
    for k in SPREAD:
        rc.execute_command("ZADD", "zset" + k, 1, k)
        rc.execute_command("SADD", "set" + k, k)
    cursor, keys = b"0", set()
    while True:
        cursor, batch = rc.execute_command("SCAN", cursor, "TYPE", "zset")
        keys.update(batch)
        if cursor == b"0":
            break
    assert keys == {b"z"} | {b"zset" + k.encode() for k in SPREAD}
    assert rc.execute_command("DEL", "z", "zseta") == 2
    assert rc.execute_command("EXISTS", "z", "zseta", "zsetb") == 1
    rc.execute_command("ZADD", "z", 1, "m")
    assert rc.execute_command("SET", "z", "now a string") == b"OK"
    assert rc.execute_command("TYPE", "z") == b"string"


@pytest.mark.parametrize("src,dst", [("{t}a", "{t}b"), ("a", "x"), ("y", "c")])
@pytest.mark.parametrize("size", [10, 300])
def test_rename_copy_zset(rc, src, dst, size):
    want = [(("m%03d" % i).encode(), str(i / 4).encode() if i % 4 else str(i // 4).encode()) for i in range(size)]
    zadd(rc, src, *((s.decode(), m) for m, s in want))
    enc = encoding(rc, src)
    assert enc == (b"listpack" if size < 128 else b"skiplist")
    rc.execute_command("EXPIRE", src, 1000)
    assert rc.execute_command("RENAME", src, dst) == b"OK"
    assert rc.execute_command("EXISTS", src) == 0
    assert zall(rc, dst) == want and encoding(rc, dst) == enc
    assert 990 < rc.execute_command("TTL", dst) <= 1000
    assert rc.execute_command("COPY", dst, src) == 1
    assert encoding(rc, src) == enc and rc.execute_command("TTL", src) > 990
    rc.execute_command("ZADD", src, 7, "new")
    rc.execute_command("ZINCRBY", src, 100, "m001")
    rc.execute_command("ZREM", src, "m000", "m002")
    assert zall(rc, dst) == want  # the copy is deep
    assert rc.execute_command("ZCARD", src) == size - 1
    assert rc.execute_command("COPY", dst, src) == 0
    assert rc.execute_command("COPY", dst, src, "REPLACE") == 1
    assert zall(rc, src) == want


def test_move_zset(rc):
    zadd(rc, "z", (1, "a"), (2, "b"))
    assert rc.execute_command("MOVE", "z", "1") == 1
    assert rc.execute_command("EXISTS", "z") == 0
    rc.execute_command("SELECT", "1")
    assert zall(rc, "z") == [(b"a", b"1"), (b"b", b"2")]
    rc.execute_command("FLUSHDB")
    rc.execute_command("SELECT", "0")


def test_expire_and_del_zset(rc):
    zadd(rc, "z", (1, "a"))
    zadd(rc, "big", *((i, "m%d" % i) for i in range(1000)))
    assert rc.execute_command("PEXPIRE", "z", 600) == 1
    assert rc.execute_command("PEXPIRE", "big", 600) == 1
    assert rc.execute_command("ZADD", "z", 2, "b") == 1  # a write keeps the TTL
    assert rc.execute_command("ZPOPMIN", "z") == bs("a", 1)
    assert 0 < rc.execute_command("PTTL", "z") <= 600
    deadline = time.monotonic() + 3
    while rc.execute_command("EXISTS", "z", "big") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rc.execute_command("EXISTS", "z", "big") == 0
    assert rc.execute_command("ZCARD", "big") == 0
    assert rc.execute_command("ZRANGE", "z", 0, -1) == []
    zadd(rc, "d", (1, "a"))
    assert rc.execute_command("DEL", "d") == 1 and rc.execute_command("ZSCORE", "d", "a") is None


# ---------------------------------------------------------------- member values

def test_integer_like_and_binary_members(rc, enc):
    ms = [b"1", b"01", b"-0", b"+1", b"1.0", b" 1", b"9223372036854775807", b"-9223372036854775808",
          b"18446744073709551616", b"", b"\x00", b"a\x00b", b"\xff", b"\r\n", b"0", b"-1"]
    assert rc.execute_command("ZADD", "z", *(a for m in ms for a in (0, m))) == len(ms)
    assert rc.execute_command("ZCARD", "z") == len(ms)
    assert zmembers(rc, "z") == sorted(ms)
    assert rc.execute_command("ZRANGE", "z", "-", "+", "BYLEX") == sorted(ms)
    for i, m in enumerate(sorted(ms)):
        assert rc.execute_command("ZSCORE", "z", m) == b"0"
        assert rc.execute_command("ZRANK", "z", m) == i
    assert rc.execute_command("ZREM", "z", "1") == 1
    assert rc.execute_command("ZSCORE", "z", "01") == b"0"
    assert rc.execute_command("ZSCORE", "z", "1") is None
    assert rc.execute_command("ZREM", "z", b"", b"\x00") == 2
    assert rc.execute_command("ZSCORE", "z", b"a\x00b") == b"0"
    zadd(rc, "n", (0, 10), (0, 9), (0, 100), (0, -5))
    assert zmembers(rc, "n") == bs(-5, 10, 100, 9)
    assert rc.execute_command("ZRANGEBYLEX", "n", "[1", "(2") == bs(10, 100)
    assert rc.execute_command("ZRANGEBYLEX", "n", b"[1\x00", "+") == bs(10, 100, 9)


def test_large_members(rc):
    big = bytes(random.Random(3).getrandbits(8) for _ in range(20 * 1024))
    m65 = b"x" * 65
    assert rc.execute_command("ZADD", "z", 1, big, 2, m65, 3, "small") == 3
    assert encoding(rc, "z") == b"skiplist"
    assert rc.execute_command("ZSCORE", "z", big) == b"1"
    assert rc.execute_command("ZSCORE", "z", big[:-1]) is None
    assert zmembers(rc, "z") == [big, m65, b"small"]
    assert rc.execute_command("ZRANK", "z", big) == 0
    assert rc.execute_command("ZMSCORE", "z", m65, big + b"x") == [b"2", None]
    zadd(rc, "lex", (0, big), (0, m65), (0, b"a" * 70))
    assert rc.execute_command("ZRANGEBYLEX", "lex", b"[" + big, b"[" + big) == [big]
    assert rc.execute_command("ZRANGEBYLEX", "lex", b"(" + big[:-1], b"[" + big) == [big]
    assert rc.execute_command("ZLEXCOUNT", "lex", "-", b"(" + big) == sum(1 for m in (m65, b"a" * 70) if m < big)
    assert rc.execute_command("ZPOPMIN", "z") == [big, b"1"]
    assert rc.execute_command("ZREM", "lex", big) == 1
    assert rc.execute_command("ZCARD", "lex") == 2


def test_large_members_in_store_commands(rc):
    big = b"B" * (20 * 1024)
    zadd(rc, "{s}a", (1, big), (2, "b"))
    zadd(rc, "{s}b", (10, big))
    assert rc.execute_command("ZUNIONSTORE", "{s}u", 2, "{s}a", "{s}b") == 2
    assert zall(rc, "{s}u") == [(b"b", b"2"), (big, b"11")]
    assert encoding(rc, "{s}u") == b"skiplist"
    assert rc.execute_command("ZINTER", 2, "{s}a", "{s}b", "WITHSCORES") == [big, b"11"]
    assert rc.execute_command("ZRANGESTORE", "{s}r", "{s}a", 0, 0) == 1
    assert zall(rc, "{s}r") == [(big, b"1")] and encoding(rc, "{s}r") == b"skiplist"


# ---------------------------------------------------------------- blocking pops

def bzpop_reply(key, member, score):
    return b"*3\r\n" + bulk(key) + bulk(member) + bulk(score)


def bzmpop_reply(key, *pairs):
    out = b"*2\r\n" + bulk(key) + b"*%d\r\n" % len(pairs)
    for m, s in pairs:
        out += b"*2\r\n" + bulk(m) + bulk(s)
    return out


def test_bzpop_immediate(rc):
    zadd(rc, "z", (1, "a"), (2, "b"), (3, "c"))
    assert rc.execute_command("BZPOPMIN", "missing", "z", 0) == bs("z", "a", 1)
    assert rc.execute_command("BZPOPMAX", "z", "missing", 1) == bs("z", "c", 3)
    assert rc.execute_command("BZMPOP", 0, 2, "missing", "z", "MIN", "COUNT", 5) == [b"z", [bs("b", 2)]]
    assert rc.execute_command("EXISTS", "z") == 0
    zadd(rc, "k2", (1.5, "two"))
    zadd(rc, "k3", (3, "three"))
    assert rc.execute_command("BZPOPMIN", "k1", "k3", "k2", 0) == bs("k3", "three", 3)  # argument order
    assert rc.execute_command("BZPOPMAX", "k1", "k2", "k2", 0) == bs("k2", "two", 1.5)
    zadd(rc, "m", (1, "a"), (2, "b"), (3, "c"))
    assert rc.execute_command("BZMPOP", 1, 1, "m", "max") == [b"m", [bs("c", 3)]]
    assert rc.execute_command("BZMPOP", "0.5", 1, "m", "MAX", "COUNT", 1) == [b"m", [bs("b", 2)]]


def test_bzpop_timeouts(server, rc):
    for cmd in (("BZPOPMIN", "q", 0.05), ("BZPOPMAX", "q", "q2", "0.05"), ("BZMPOP", 0.05, 1, "q", "MIN"),
                ("BZMPOP", ".05", 2, "q", "q2", "MAX", "COUNT", 3)):
        t = time.monotonic()
        assert rc.execute_command(*cmd) is None
        elapsed = time.monotonic() - t
        assert 0.04 <= elapsed < 1.0, (cmd, elapsed)
    with Conn(server, timeout=10) as c:
        assert c.call("BZPOPMIN", "q", 0.01) == b"*-1\r\n"
        assert c.call("BZMPOP", 0.01, 1, "q", "MAX") == b"*-1\r\n"
        assert c.call("HELLO", "3").startswith(b"%")
        assert c.call("BZPOPMAX", "q", 0.01) == b"_\r\n"
        assert c.call("BZMPOP", 0.01, 1, "q", "MIN") == b"_\r\n"
    assert blocked_clients(rc) == 0
    assert rc.execute_command("EXISTS", "q", "q2") == 0


def test_bzpop_timeout_errors(rc):
    fails(rc, TIMEOUT_FLOAT, ("BZPOPMIN", "q", "abc"), ("BZPOPMIN", "q", "nan"), ("BZPOPMIN", "q", " 1"),
          ("BZPOPMIN", "q", ""), ("BZPOPMAX", "q", "1x"), ("BZMPOP", "x", 1, "q", "MIN"))
    fails(rc, TIMEOUT_NEG, ("BZPOPMIN", "q", -1), ("BZPOPMAX", "q", "-0.5"), ("BZMPOP", -1, 1, "q", "MIN"))
    rc.execute_command("SET", "s", "x")
    fails(rc, TIMEOUT_NEG, ("BZPOPMIN", "s", -1))  # checked before the keys
    # BZMPOP reads its other arguments first.
    fails(rc, NUMKEYS, ("BZMPOP", -1, 0, "q", "MIN"), ("BZMPOP", "x", "y", "q", "MIN"))
    fails(rc, SYNTAX, ("BZMPOP", -1, 1, "q", "MIDDLE"), ("BZMPOP", "x", 2, "q", "MIN"),
          ("BZMPOP", 0, 1, "q", "MIN", "COUNT"), ("BZMPOP", 0, 1, "q", "MIN", "COUNT", 1, "COUNT", 1))
    fails(rc, COUNT_GT0, ("BZMPOP", "x", 1, "q", "MIN", "COUNT", 0), ("BZMPOP", 0, 1, "q", "MAX", "COUNT", -2))
    # Between -1 ms and 0 rounds to 0 (for ever); strtold reads hex.
    zadd(rc, "q", (1, "a"), (2, "b"))
    assert rc.execute_command("BZPOPMIN", "q", "-0.0001") == bs("q", "a", 1)
    assert rc.execute_command("BZPOPMIN", "q", "0x10") == bs("q", "b", 2)
    assert blocked_clients(rc) == 0


@skip_72
def test_bzpop_timeout_out_of_range_72(rc):
    # Redis 7.0 casts these to a negative number; 7.2 says what they are.
    fails(rc, "timeout is out of range", ("BZPOPMIN", "q", "inf"), ("BZPOPMAX", "q", "1e18"),
          ("BZPOPMIN", "q", "9223372036854775"), ("BZMPOP", "1e400", 1, "q", "MIN"))


@pytest.mark.parametrize("key", SPREAD)
def test_bzpop_served_by_zadd(rc, waiters, key):
    w = waiters("BZPOPMIN", key, 5)
    assert rc.execute_command("ZADD", key, 2, "b", 1, "a") == 2
    assert w.reply() == bzpop_reply(key, "a", 1)
    assert zall(rc, key) == [(b"b", b"2")]
    w = waiters("BZPOPMAX", key + "2", key + "3", 0)
    rc.execute_command("ZADD", key + "3", 1, "x", 2.5, "y")
    assert w.reply() == bzpop_reply(key + "3", "y", 2.5)
    w = waiters("BZMPOP", 5, 2, key + "4", key + "5", "MAX", "COUNT", 2)
    rc.execute_command("ZADD", key + "5", 1, "a", 2, "b", 3, "c")
    assert w.reply() == bzmpop_reply(key + "5", ("c", 3), ("b", 2))
    assert zall(rc, key + "5") == [(b"a", b"1")]
    w = waiters("BZPOPMIN", key + "6", 5, resp3=True)
    rc.execute_command("ZINCRBY", key + "6", 1.5, "m")
    assert w.reply() == b"*3\r\n" + bulk(key + "6") + bulk("m") + b",1.5\r\n"
    assert rc.execute_command("EXISTS", key + "6") == 0
    assert blocked_clients(rc) == 0


def test_bzpop_serving_order(rc, waiters):
    ws = [waiters("BZPOPMIN", "q", 5) for _ in range(3)]
    # One ZADD of several members serves several clients, the oldest first, each the
    # smallest at its turn.
    assert rc.execute_command("ZADD", "q", 2, "b", 1, "a") == 2
    assert ws[0].reply() == bzpop_reply("q", "a", 1)
    assert ws[1].reply() == bzpop_reply("q", "b", 2)
    wait_blocked(rc, 1)
    assert rc.execute_command("EXISTS", "q") == 0
    rc.execute_command("ZADD", "q", 4, "d", 3, "c")
    assert ws[2].reply() == bzpop_reply("q", "c", 3)
    assert zall(rc, "q") == [(b"d", b"4")]
    # MIN and MAX waiters on one key, in arrival order.
    a = waiters("BZPOPMAX", "r", 5)
    b = waiters("BZPOPMIN", "r", 5)
    c = waiters("BZMPOP", 5, 1, "r", "MIN", "COUNT", 5)
    rc.execute_command("ZADD", "r", 1, "x", 2, "y", 3, "z", 4, "w")
    assert a.reply() == bzpop_reply("r", "w", 4)
    assert b.reply() == bzpop_reply("r", "x", 1)
    assert c.reply() == bzmpop_reply("r", ("y", 2), ("z", 3))
    assert rc.execute_command("EXISTS", "r") == 0
    assert blocked_clients(rc) == 0


def test_bzpop_wrongtype(rc, waiters):
    rc.execute_command("SET", "s", "x")
    fails(rc, WRONGTYPE, ("BZPOPMIN", "s", 0), ("BZPOPMAX", "missing", "s", 0), ("BZMPOP", 0, 2, "missing", "s", "MIN"))
    zadd(rc, "z", (1, "a"))
    assert rc.execute_command("BZPOPMIN", "z", "s", 0) == bs("z", "a", 1)  # a zset before the string serves
    # A waiter stays blocked while its key holds another type, and is served by a zset later.
    w = waiters("BZPOPMIN", "k", 5)
    rc.execute_command("SET", "k", "string")
    rc.execute_command("DEL", "k")
    rc.execute_command("SADD", "k", "member")
    rc.execute_command("DEL", "k")
    rc.execute_command("RPUSH", "k", "item")
    time.sleep(0.05)
    assert blocked_clients(rc) == 1
    rc.execute_command("DEL", "k")
    rc.execute_command("ZADD", "k", 7, "v")
    assert w.reply() == bzpop_reply("k", "v", 7)


def test_bzpop_served_by_other_writes(rc, waiters):
    zadd(rc, "{k}src", (1, "a"), (2, "b"))
    w = waiters("BZPOPMIN", "{k}d1", 5)
    assert rc.execute_command("ZUNIONSTORE", "{k}d1", 1, "{k}src") == 2
    assert w.reply() == bzpop_reply("{k}d1", "a", 1)
    w = waiters("BZPOPMAX", "{k}d2", 5)
    assert rc.execute_command("ZRANGESTORE", "{k}d2", "{k}src", 0, -1) == 2
    assert w.reply() == bzpop_reply("{k}d2", "b", 2)
    w = waiters("BZMPOP", 5, 1, "{k}d3", "MIN", "COUNT", 10)
    assert rc.execute_command("ZADD", "{k}d3", "INCR", 5, "m") == b"5"
    assert w.reply() == bzmpop_reply("{k}d3", ("m", 5))
    w = waiters("BZPOPMIN", "{k}d4", 5)
    assert rc.execute_command("RENAME", "{k}src", "{k}d4") == b"OK"
    assert w.reply() == bzpop_reply("{k}d4", "a", 1)
    w = waiters("BZPOPMIN", "{k}d5", 5)
    assert rc.execute_command("COPY", "{k}d4", "{k}d5") == 1
    assert w.reply() == bzpop_reply("{k}d5", "b", 2)
    assert zall(rc, "{k}d4") == [(b"b", b"2")]
    # Writes that add nothing wake no one.
    w = waiters("BZPOPMIN", "{k}d6", 5)
    rc.execute_command("ZADD", "{k}d6", "XX", 1, "a")
    rc.execute_command("ZINTERSTORE", "{k}d6", 2, "{k}d4", "{k}missing")
    time.sleep(0.05)
    assert blocked_clients(rc) == 1
    rc.execute_command("ZADD", "{k}d6", 3, "c")
    assert w.reply() == bzpop_reply("{k}d6", "c", 3)


def test_bzpop_keys_on_several_shards(rc, waiters):
    w = waiters("BZPOPMIN", *SPREAD, 5)
    rc.execute_command("ZADD", "y", 1, "from-y")
    assert w.reply() == bzpop_reply("y", "from-y", 1)
    w = waiters("BZMPOP", 5, len(SPREAD), *SPREAD, "MAX", "COUNT", 2)
    rc.execute_command("ZADD", "c", 1, "a", 2, "b", 3, "c")
    assert w.reply() == bzmpop_reply("c", ("c", 3), ("b", 2))
    # Served by a store command that reads other shards.
    w = waiters("BZPOPMIN", "x", 5)
    rc.execute_command("ZADD", "a", 1, "m")
    assert rc.execute_command("ZUNIONSTORE", "x", 2, "a", "c") == 2
    assert w.reply() == bzpop_reply("x", "a", 1)
    w = waiters("BZPOPMAX", "b", 5)
    assert rc.execute_command("ZRANGESTORE", "b", "x", 0, -1) == 1
    assert w.reply() == bzpop_reply("b", "m", 1)
    assert blocked_clients(rc) == 0


def test_bzpop_client_unblock_and_disconnect(rc, waiters):
    w = waiters("BZPOPMIN", "q", 0)
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id) == 1
    assert w.reply() == b"*-1\r\n"
    w = waiters("BZMPOP", 0, 1, "q", "MIN")
    assert rc.execute_command("CLIENT", "UNBLOCK", w.id, "ERROR") == 1
    assert w.reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    w1 = waiters("BZPOPMAX", "q", 0)
    w2 = waiters("BZPOPMAX", "q", 0)
    w1.close()
    wait_blocked(rc, 1)
    rc.execute_command("ZADD", "q", 1, "a", 2, "b")
    assert w2.reply() == bzpop_reply("q", "b", 2)
    assert zall(rc, "q") == [(b"a", b"1")]


def test_bzpop_inside_multi(rc, waiters):
    require_command(rc, "multi")
    # A blocking pop in a transaction never blocks: nil at once.
    pipe = rc.pipeline(transaction=True)
    pipe.execute_command("BZPOPMIN", "q", 0)
    pipe.execute_command("BZMPOP", 0, 1, "q", "MIN")
    pipe.execute_command("ZADD", "p", 1, "a")
    pipe.execute_command("BZPOPMAX", "q", "p", 0)
    assert pipe.execute() == [None, None, 1, bs("p", "a", 1)]
    # Waiters are served after the transaction, from what it left.
    w = waiters("BZPOPMIN", "k", 5)
    pipe = rc.pipeline(transaction=True)
    pipe.execute_command("ZADD", "k", 1, "a")
    pipe.execute_command("ZREM", "k", "a")
    pipe.execute()
    time.sleep(0.05)
    assert blocked_clients(rc) == 1
    pipe = rc.pipeline(transaction=True)
    pipe.execute_command("ZADD", "k", 5, "x")
    pipe.execute_command("ZADD", "k", 2, "y")
    pipe.execute()
    assert w.reply() == bzpop_reply("k", "y", 2)


def test_stress_every_member_popped_once(server, rc):
    # Producers add numbered members to zsets on several shards while blocked and
    # non-blocked consumers pop them (BZPOPMIN/BZPOPMAX over all keys, BZMPOP and
    # ZMPOP with a COUNT). Every member is popped exactly once, with its score.
    keys = ["sz:%s" % k for k in SPREAD[:4]]
    n_producers, per_producer, n_consumers = 3, 200, 6
    total = n_producers * per_producer

    def pop(c, i):
        kind = i % 4
        if kind == 0:
            r = c.execute_command("BZPOPMIN", *keys, 0.2)
            return [(r[1], r[2])] if r else []
        if kind == 1:
            r = c.execute_command("BZPOPMAX", *keys[::-1], 0.2)
            return [(r[1], r[2])] if r else []
        if kind == 2:
            r = c.execute_command("BZMPOP", 0.2, len(keys), *keys, "MIN", "COUNT", 3)
            return [tuple(p) for p in r[1]] if r else []
        r = c.execute_command("ZMPOP", len(keys), *keys, "MAX", "COUNT", 2)
        if not r:
            time.sleep(0.005)
        return [tuple(p) for p in r[1]] if r else []

    got = pop_everything(server, n_producers, per_producer, n_consumers,
                         lambda c, p, j: c.execute_command("ZADD", keys[(p + j) % len(keys)], j, "%d:%d" % (p, j)),
                         pop)
    assert len(got) == total, (len(got), total)
    assert {m for m, _ in got} == {b"%d:%d" % (p, j) for p in range(n_producers) for j in range(per_producer)}
    assert all(m.split(b":")[1] == s for m, s in got)  # each with its own score
    assert rc.execute_command("EXISTS", *keys) == 0
    wait_blocked(rc, 0)


# ---------------------------------------------------------------- long randomized run

def fmt(x):
    """Redis's text for the scores the model uses (integers and quarters below 1e6, infinities)."""
    if math.isinf(x):
        return b"inf" if x > 0 else b"-inf"
    if x == int(x):
        return str(int(x)).encode()
    return repr(x).encode()


class Model:
    def __init__(self):
        self.d = {}
        self.enc = None  # the encoding Redis should report, None when the key is missing

    def items(self):
        return sorted(self.d.items(), key=lambda kv: (kv[1], kv[0]))

    def drop_if_empty(self):
        if not self.d:
            self.enc = None


def score_in(s, lo, hi):
    lo_ex, lo_v = lo
    hi_ex, hi_v = hi
    return (s > lo_v if lo_ex else s >= lo_v) and (s < hi_v if hi_ex else s <= hi_v)


def lex_ge(m, b):
    if b == b"-":
        return True
    if b == b"+":
        return False
    return m > b[1:] if b[:1] == b"(" else m >= b[1:]


def lex_le(m, b):
    if b == b"+":
        return True
    if b == b"-":
        return False
    return m < b[1:] if b[:1] == b"(" else m <= b[1:]


def apply_limit(items, off, cnt):
    if off < 0:
        return []
    items = items[off:]
    return items if cnt < 0 else items[:cnt]


def with_scores(items, ws):
    out = []
    for m, s in items:
        out += [m, fmt(s)] if ws else [m]
    return out


VARIANTS = {
    # name: (entries, value, member pool size, long members, steps, size the adds aim at)
    "listpack": (128, 64, 60, False, 5000, 40),
    "skiplist": (128, 64, 400, False, 4000, 260),
    "lowered": (16, 12, 40, True, 6000, 12),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_random_ops_match_model(rc, config_set, variant):
    entries, value, pool, long_members, steps, target = VARIANTS[variant]
    if entries != 128:
        config_set("zset-max-listpack-entries", str(entries))
        config_set("zset-max-listpack-value", str(value))
    rng = random.Random("zsets-" + variant)
    S, L = b"{r}s", b"{r}l"  # S: random scores; L: every score 0, for the lex commands
    models = {S: Model(), L: Model()}
    members = [b"m%d" % i for i in range(pool * 2 // 3)] + [b"%d" % i for i in range(pool // 3)]
    if long_members:
        members += [b"long-member-%d" % i for i in range(4)]  # past zset-max-listpack-value
    lex_members = sorted({bytes(rng.choice(b"abcde") for _ in range(rng.randint(1, 3))) for _ in range(40)}) + \
        [b"%d" % i for i in range(8)] + ([b"long-lex-member" + b"z" * 5] if long_members else [])

    def rscore():
        k = rng.random()
        if k < 0.02:
            return rng.choice([math.inf, -math.inf])
        if k < 0.5:
            return float(rng.randint(-20, 20))
        return rng.randint(-200, 200) / 4

    def score_bound(m):
        k = rng.random()
        if k < 0.1:
            v = rng.choice([math.inf, -math.inf])
        elif k < 0.5 and m.d:
            v = rng.choice(list(m.d.values()))
        else:
            v = rng.randint(-120, 120) / 4
        ex = rng.random() < 0.3
        return (ex, v), (b"(" if ex else b"") + fmt(v)

    def lex_bound():
        k = rng.random()
        if k < 0.15:
            return rng.choice([b"-", b"+"])
        base = rng.choice(lex_members) if k < 0.7 else bytes(rng.choice(b"abcdef") for _ in range(rng.randint(0, 2)))
        return rng.choice([b"[", b"("]) + base

    def added(m, member):
        """A member was inserted: convert as Redis does."""
        if m.enc is None:
            # A new key: a skiplist at once when the first member is too long (or no listpack allowed).
            m.enc = b"skiplist" if entries == 0 or len(first[0]) > value else b"listpack"
        if m.enc == b"listpack" and (len(m.d) > entries or len(member) > value):
            m.enc = b"skiplist"

    pipe = rc.pipeline(transaction=False)
    expected = []

    def send(want, *cmd):
        pipe.execute_command(*cmd)
        expected.append((want, cmd))

    first = [b""]

    def op_zadd(key, m, pool_, many=False):
        flags = []
        cond = rng.random()
        nx = xx = gt = lt = False
        if cond < 0.15:
            nx = True
        elif cond < 0.3:
            xx = True
        mode = rng.random()
        if not nx and mode < 0.15:
            gt = True
        elif not nx and mode < 0.3:
            lt = True
        ch = rng.random() < 0.3
        incr = rng.random() < 0.15 and key == S
        for f, on in (("NX", nx), ("XX", xx), ("GT", gt), ("LT", lt), ("CH", ch), ("INCR", incr)):
            if on:
                flags.append(f)
        rng.shuffle(flags)
        npairs = 1 if incr else rng.randint(1, 8 if many else 4)
        pairs = [(rscore() if key == S else 0.0, rng.choice(pool_)) for _ in range(npairs)]
        args = []
        for s, mem in pairs:
            args += [fmt(s), mem]
        first[0] = pairs[0][1]
        if incr:
            inc, mem = pairs[0]
            if mem in m.d:
                cur = m.d[mem]
                new = cur + inc
                if nx:
                    want = None
                elif math.isnan(new):
                    want = redis.ResponseError(NAN_RESULT)
                elif (lt and new >= cur) or (gt and new <= cur):
                    want = None
                else:
                    m.d[mem] = new
                    want = fmt(new)
            elif xx:
                want = None
            else:
                m.d[mem] = inc
                added(m, mem)
                want = fmt(inc)
            send(want, "ZADD", key, *flags, *args)
            return
        n_added = n_updated = 0
        for s, mem in pairs:
            if mem in m.d:
                if nx:
                    continue
                cur = m.d[mem]
                if (lt and s >= cur) or (gt and s <= cur):
                    continue
                if s != cur:
                    m.d[mem] = s
                    n_updated += 1
            elif not xx:
                m.d[mem] = s
                n_added += 1
                added(m, mem)
        send(n_added + n_updated if ch else n_added, "ZADD", key, *flags, *args)

    def op_write(key, m):
        k = rng.random()
        pool_ = members if key == S else lex_members
        if len(m.d) < (target if key == S else min(target, 30)) and rng.random() < 0.5:
            op_zadd(key, m, pool_, many=True)  # grow towards the target size
        elif k < 0.4:
            op_zadd(key, m, pool_)
        elif k < 0.5 and key == S:
            inc, mem = rscore(), rng.choice(pool_)
            if mem in m.d and math.isnan(m.d[mem] + inc):
                send(redis.ResponseError(NAN_RESULT), "ZINCRBY", key, fmt(inc), mem)
                return
            first[0] = mem
            if mem in m.d:
                m.d[mem] += inc
            else:
                m.d[mem] = inc
                added(m, mem)
            send(fmt(m.d[mem]), "ZINCRBY", key, fmt(inc), mem)
        elif k < 0.62:
            ms = [rng.choice(pool_) for _ in range(rng.randint(1, 3))]
            n = 0
            for mem in ms:
                if mem in m.d:
                    del m.d[mem]
                    n += 1
            send(n, "ZREM", key, *ms)
        elif k < 0.68:
            items = m.items()
            start = rng.randint(-len(m.d) - 2, len(m.d) + 1)
            stop = start + rng.randint(0, 3)
            a, b_ = range_slice(len(items), start, stop)
            for mem, _ in items[a:b_]:
                del m.d[mem]
            send(b_ - a, "ZREMRANGEBYRANK", key, start, stop)
        elif k < 0.74 and key == S:
            (lo, lot) = score_bound(m)
            hi = (rng.random() < 0.3, lo[1] + rng.randint(0, 8) / 4)  # a narrow range
            hit = (b"(" if hi[0] else b"") + fmt(hi[1])
            gone = [mem for mem, s in m.d.items() if score_in(s, lo, hi)]
            for mem in gone:
                del m.d[mem]
            send(len(gone), "ZREMRANGEBYSCORE", key, lot, hit)
        elif k < 0.74:
            lo, hi = lex_bound(), lex_bound()
            gone = [mem for mem in m.d if lex_ge(mem, lo) and lex_le(mem, hi)]
            for mem in gone:
                del m.d[mem]
            send(len(gone), "ZREMRANGEBYLEX", key, lo, hi)
        elif k < 0.84:
            items = m.items()
            cmd = rng.choice(["ZPOPMIN", "ZPOPMAX"])
            if cmd == "ZPOPMAX":
                items = items[::-1]
            if rng.random() < 0.5:
                taken = items[:1]
                send(with_scores(taken, True), cmd, key)
            else:
                cnt = rng.randint(0, 5)
                taken = items[:cnt]
                send(with_scores(taken, True), cmd, key, cnt)
            for mem, _ in taken:
                del m.d[mem]
        elif k < 0.88:
            items = m.items()
            where = rng.choice(["MIN", "MAX"])
            if where == "MAX":
                items = items[::-1]
            cnt = rng.randint(1, 4)
            taken = items[:cnt]
            for mem, _ in taken:
                del m.d[mem]
            want = [key, [[mem, fmt(s)] for mem, s in taken]] if taken else None
            send(want, "ZMPOP", 2, key + b"-missing", key, where, "COUNT", cnt)
        elif k < (0.9 if variant == "lowered" else 0.885) and variant != "skiplist":
            send(len(m.d), "ZREMRANGEBYRANK", key, 0, -1)  # empty it: it starts over as a new key
            m.d.clear()
        else:
            op_zadd(key, m, pool_)
        m.drop_if_empty()

    def op_read(key, m):
        items = m.items()
        n = len(items)
        k = rng.randrange(6)
        ws = rng.random() < 0.5
        if k == 0:
            send(n, "ZCARD", key)
        elif k == 1:
            mem = rng.choice(members if key == S else lex_members)
            send(fmt(m.d[mem]) if mem in m.d else None, "ZSCORE", key, mem)
            rank = [x for x, _ in items].index(mem) if mem in m.d else None
            send(rank, "ZRANK", key, mem)
            send(None if rank is None else n - 1 - rank, "ZREVRANK", key, mem)
        elif k == 2:
            ms = [rng.choice(members if key == S else lex_members) for _ in range(rng.randint(1, 4))]
            send([fmt(m.d[x]) if x in m.d else None for x in ms], "ZMSCORE", key, *ms)
        elif k == 3:
            start, stop = rng.randint(-10, 10), rng.randint(-10, 10)
            rev = rng.random() < 0.5
            seq = items[::-1] if rev else items
            got = seq[slice(*range_slice(n, start, stop))]
            opts = (["REV"] if rev else []) + (["WITHSCORES"] if ws else [])
            rng.shuffle(opts)
            send(with_scores(got, ws), "ZRANGE", key, start, stop, *opts)
            if rev:
                send(with_scores(got, ws), "ZREVRANGE", key, start, stop, *(["WITHSCORES"] if ws else []))
        elif k in (4, 5) and key == S:
            (lo, lot), (hi, hit) = score_bound(m), score_bound(m)
            inr = [(x, s) for x, s in items if score_in(s, lo, hi)]
            send(len(inr), "ZCOUNT", key, lot, hit)
            off, cnt = (rng.randint(-1, 6), rng.randint(-2, 6)) if rng.random() < 0.5 else (0, -1)
            lim = ["LIMIT", off, cnt] if (off, cnt) != (0, -1) or rng.random() < 0.3 else []
            fwd = apply_limit(inr, off, cnt)
            rev = apply_limit(inr[::-1], off, cnt)
            w = ["WITHSCORES"] if ws else []
            send(with_scores(fwd, ws), "ZRANGE", key, lot, hit, "BYSCORE", *lim, *w)
            send(with_scores(rev, ws), "ZRANGE", key, hit, lot, "BYSCORE", "REV", *w, *lim)
            send(with_scores(fwd, ws), "ZRANGEBYSCORE", key, lot, hit, *w, *lim)
            send(with_scores(rev, ws), "ZREVRANGEBYSCORE", key, hit, lot, *lim, *w)
        elif k in (4, 5):
            lo, hi = lex_bound(), lex_bound()
            inr = [x for x, _ in items if lex_ge(x, lo) and lex_le(x, hi)]
            send(len(inr), "ZLEXCOUNT", key, lo, hi)
            off, cnt = (rng.randint(-1, 6), rng.randint(-2, 6)) if rng.random() < 0.5 else (0, -1)
            lim = ["LIMIT", off, cnt] if (off, cnt) != (0, -1) or rng.random() < 0.3 else []
            send(apply_limit(inr, off, cnt), "ZRANGE", key, lo, hi, "BYLEX", *lim)
            send(apply_limit(inr[::-1], off, cnt), "ZRANGE", key, hi, lo, "REV", "BYLEX", *lim)
            send(apply_limit(inr, off, cnt), "ZRANGEBYLEX", key, lo, hi, *lim)
            send(apply_limit(inr[::-1], off, cnt), "ZREVRANGEBYLEX", key, hi, lo, *lim)
        else:
            send(n, "ZCARD", key)

    def check_pipe():
        got = pipe.execute(raise_on_error=False)
        assert len(got) == len(expected)
        for g, (want, cmd) in zip(got, expected):
            if isinstance(want, Exception):
                assert isinstance(g, redis.ResponseError) and str(g) == str(want), (cmd, g)
            else:
                assert g == want, cmd
        expected.clear()

    def checkpoint():
        check_pipe()
        for key, m in models.items():
            assert zall(rc, key) == [(x, fmt(s)) for x, s in m.items()], key
            assert rc.execute_command("EXISTS", key) == (1 if m.d else 0)
            if m.d:
                assert encoding(rc, key) == m.enc, key
            assert sorted(zscan_all(rc, key, "COUNT", 7)[0]) == sorted((x, fmt(s)) for x, s in m.d.items())
            if m.d:
                got = rc.execute_command("ZRANDMEMBER", key, 5, "WITHSCORES")
                ps = list(zip(got[::2], got[1::2]))
                assert len(ps) == min(5, len(m.d)) and all(fmt(m.d[x]) == s for x, s in ps)
        s, l_ = models[S].d, models[L].d
        union = dict(s)
        for x in l_:
            union[x] = union.get(x, 0.0) + 0.0
        want = sorted(union.items(), key=lambda kv: (kv[1], kv[0]))
        assert rc.execute_command("ZUNION", 2, S, L, "WITHSCORES") == with_scores(want, True)
        inter = sorted(((x, max(s[x], 0.0)) for x in s if x in l_), key=lambda kv: (kv[1], kv[0]))
        assert rc.execute_command("ZINTER", 2, S, L, "AGGREGATE", "MAX", "WITHSCORES") == with_scores(inter, True)
        assert rc.execute_command("ZINTERCARD", 2, S, L) == len(inter)
        diff = sorted(((x, v) for x, v in s.items() if x not in l_), key=lambda kv: (kv[1], kv[0]))
        assert rc.execute_command("ZDIFF", 2, S, L, "WITHSCORES") == with_scores(diff, True)

    if variant == "skiplist":  # start past the listpack limit
        first[0] = members[0]
        for x in members[:200]:
            models[S].d[x] = float(rng.randint(-50, 50))
            added(models[S], x)
        zadd(rc, S, *((fmt(v), x) for x, v in models[S].d.items()))
    for step in range(steps):
        key = S if rng.random() < 0.65 else L
        op_write(key, models[key])
        if rng.random() < 0.3:
            send(models[key].enc, "OBJECT", "ENCODING", key)  # None once the key is gone
        op_read(key, models[key])
        if step % 500 == 499:
            checkpoint()
    checkpoint()
    if variant == "skiplist":
        assert models[S].enc == b"skiplist"


def test_index_moves_keep_every_score(rc):
    """A set grown past a few thousand members moves its member -> score
    table to a larger one a few members a write and between events; adds,
    score changes, removals and a RENAME halfway through lose nothing."""
    rng = random.Random(11)
    model = {}
    for batch in range(300):
        pairs = {f"m{rng.randrange(40000)}": rng.randrange(-500, 500) for _ in range(100)}
        rc.zadd("big", pairs)
        model.update(pairs)
        if batch % 3 == 0:
            gone = [f"m{rng.randrange(40000)}" for _ in range(30)]
            rc.zrem("big", *gone)
            for m in gone:
                model.pop(m, None)
        if batch == 150:
            rc.rename("big", "big2")
            rc.rename("big2", "big")
    assert rc.zcard("big") == len(model)
    assert [float(x) for x in rc.zmscore("big", list(model))] == [float(v) for v in model.values()]
    flat = rc.execute_command("ZRANGE", "big", 0, -1, "WITHSCORES")
    got = [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]
    assert got == sorted(((m.encode(), float(s)) for m, s in model.items()), key=lambda kv: (kv[1], kv[0]))
    # Most removed: the table shrinks, and the set still answers.
    keep = set(list(model)[:500])
    rc.zrem("big", *[m for m in model if m not in keep])
    model = {m: s for m, s in model.items() if m in keep}
    time.sleep(0.2)
    assert rc.zcard("big") == len(model)
    assert [float(x) for x in rc.zmscore("big", list(model))] == [float(v) for v in model.values()]


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's footprint (Redis's skiplist costs over 100 bytes a member)")
def test_index_move_ends_between_events(rc):
    """A move nobody's writes go on with ends between events: the old table
    goes (MEMORY USAGE falls back to what a settled set costs)."""
    rc.zadd("z", {f"member:{i:06d}": i for i in range(3000)})
    settled = rc.memory_usage("z", samples=0)
    for n in range(3100, 60000, 100):
        rc.zadd("z", {f"member:{i:06d}": i for i in range(n - 100, n)})
        usage = rc.memory_usage("z", samples=0)
        if usage > settled * 1.3:  # a new table on top of the old one
            break
        settled = usage
    else:
        pytest.fail("the table never grew")
    deadline = time.monotonic() + 5
    while rc.memory_usage("z", samples=0) > settled * 1.3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rc.memory_usage("z", samples=0) <= settled * 1.3
    assert float(rc.zscore("z", "member:000000")) == 0 and rc.zcard("z") == n
