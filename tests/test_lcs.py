# LCS (issue #21): Redis 7.2's reply forms (the string, LEN, IDX with
# MINMATCHLEN and WITHMATCHLEN, RESP2 and RESP3), errors, keys on different
# shards, and random strings cross-checked with Debian's redis-server.
import random

import pytest

from conftest import IS_REDIS
from helpers import raises, replies


def test_lcs_forms(r):
    r.set("{s}a", "ohmytext")
    r.set("{s}b", "mynewtext")
    assert r.execute_command("LCS", "{s}a", "{s}b") == b"mytext"
    assert r.execute_command("LCS", "{s}a", "{s}b", "LEN") == 6
    assert r.execute_command("LCS", "{s}a", "{s}b", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert r.execute_command("LCS", "{s}a", "{s}b", "IDX", "MINMATCHLEN", 4, "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert r.execute_command("LCS", "{s}a", "{s}b", "idx", "minmatchlen", -5, "withmatchlen") == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]
    # Missing keys are empty strings; keys may live on different shards.
    assert r.execute_command("LCS", "nosuch", "{s}b") == b""
    assert r.execute_command("LCS", "nosuch", "{s}b", "IDX") == [b"matches", [], b"len", 0]
    r.set("x", "mytext")
    r.set("other", 123)  # an integer's decimal text
    assert r.execute_command("LCS", "x", "{s}a") == b"mytext"
    assert r.execute_command("LCS", "other", "x", "LEN") == 0


def test_lcs_resp3(r3):
    r3.set("{s}a", "ohmytext")
    r3.set("{s}b", "mynewtext")
    got = r3.execute_command("LCS", "{s}a", "{s}b", "IDX")
    assert got == {b"matches": [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len": 6}


def test_lcs_errors(r):
    r.set("a", "x")
    r.rpush("l", "y")
    with raises("The specified keys must contain string values"):
        r.execute_command("LCS", "a", "l")
    with raises("If you want both the length and indexes, please just use IDX."):
        r.execute_command("LCS", "a", "a", "LEN", "IDX")
    with raises("syntax error"):
        r.execute_command("LCS", "a", "a", "FOO")
    with raises("syntax error"):
        r.execute_command("LCS", "a", "a", "MINMATCHLEN")
    with raises("value is not an integer or out of range"):
        r.execute_command("LCS", "a", "a", "MINMATCHLEN", "x")
    with raises("wrong number of arguments for 'lcs' command"):
        r.execute_command("LCS", "a")
    r.set("{b}1", "x" * 20000)
    r.set("{b}2", "y" * 20000)
    with raises("Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"):
        r.execute_command("LCS", "{b}1", "{b}2")


@pytest.mark.skipif(IS_REDIS, reason="compares with redis-server")
def test_lcs_matches_redis(server, reference):
    rng = random.Random(21)
    sub, ref = server.client(protocol=2), reference.client(protocol=2)
    for _ in range(300):
        a = "".join(rng.choice("abc") for _ in range(rng.randrange(0, 40)))
        b = "".join(rng.choice("abcd") for _ in range(rng.randrange(0, 40)))
        opts = rng.choice([[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"],
                           ["IDX", "MINMATCHLEN", str(rng.randrange(0, 4)), "WITHMATCHLEN"]])
        for c in (sub, ref):
            c.set("{k}a", a)
            c.set("{k}b", b)
        got, want = replies((sub, ref), "LCS", "{k}a", "{k}b", *opts)
        assert got == want, (a, b, opts)
