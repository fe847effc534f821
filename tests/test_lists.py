# List commands: pushes and pops (counts), LLEN/LINDEX/LSET/LRANGE/LTRIM/LREM/LINSERT/LPOS,
# LMOVE/RPOPLPUSH/LMPOP (also across shards), encodings and their conversions, type checks,
# keyspace operations on lists, and a long randomized run against a Python list model.
import random

import pytest

from conftest import IS_REDIS
from helpers import (  # noqa: F401  (fixtures)
    NOT_INT, SYNTAX, WRONGTYPE, arity, config_set, fails, encoding, raises, rc, rc3)

POSITIVE = "value is out of range, must be positive"

skip_72 = pytest.mark.skipif(
    IS_REDIS, reason="Redis 7.2 behaviour (listpack lists, LPOS rank range); Debian ships 7.0")

# Keys spread over shards (with --threads N) and keys sharing one hash tag.
SPREAD = ("a", "b", "c", "x", "y")


def items(c, key):
    return c.execute_command("LRANGE", key, 0, -1)


def bs(*xs):
    return [x if isinstance(x, bytes) else str(x).encode() for x in xs]


def test_push_and_pop_at_both_ends(rc):
    assert rc.execute_command("RPUSH", "l", "a", "b", "c") == 3
    assert rc.execute_command("LPUSH", "l", "x", "y") == 5
    assert items(rc, "l") == bs("y", "x", "a", "b", "c")
    assert rc.execute_command("LPOP", "l") == b"y"
    assert rc.execute_command("RPOP", "l") == b"c"
    assert rc.execute_command("LLEN", "l") == 3
    assert rc.execute_command("LPOP", "l", 2) == bs("x", "a")
    assert rc.execute_command("RPOP", "l", 5) == bs("b")
    assert rc.execute_command("EXISTS", "l") == 0  # the last item took the key with it
    assert rc.execute_command("LPOP", "l") is None
    assert rc.execute_command("LPOP", "l", 3) is None  # a null array
    assert rc.execute_command("LLEN", "l") == 0


def test_pop_count_rules(rc, rc3):
    rc.execute_command("RPUSH", "l", 1, 2, 3)
    assert rc.execute_command("LPOP", "l", 0) == []
    assert rc.execute_command("LPOP", "nokey", 0) is None
    fails(rc, POSITIVE, ("LPOP", "l", -1), ("RPOP", "l", "x"))
    fails(rc, arity("lpop"), ("LPOP", "l", 1, 2))
    fails(rc, arity("rpop"), ("RPOP", "l", 1, 2))
    assert rc.execute_command("RPOP", "l", 2) == bs(3, 2)
    # RESP3: a missing list is a null either way
    assert rc3.execute_command("LPOP", "nokey") is None
    assert rc3.execute_command("LPOP", "nokey", 2) is None


def test_pushx_only_onto_existing_lists(rc):
    assert rc.execute_command("LPUSHX", "l", "a") == 0
    assert rc.execute_command("RPUSHX", "l", "a", "b") == 0
    assert rc.execute_command("EXISTS", "l") == 0
    rc.execute_command("RPUSH", "l", "m")
    assert rc.execute_command("LPUSHX", "l", "a", "b") == 3
    assert rc.execute_command("RPUSHX", "l", "z") == 4
    assert items(rc, "l") == bs("b", "a", "m", "z")


def test_integers_and_strings_round_trip(rc):
    vals = ["0", "-1", "007", "1e3", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            " 1", "", "x" * 200, "y" * 70000, "-0", "+1", "12345678901234567890"]
    rc.execute_command("RPUSH", "l", *vals)
    assert items(rc, "l") == [v.encode() for v in vals]
    for i, v in enumerate(vals):
        assert rc.execute_command("LINDEX", "l", i) == v.encode()
        assert rc.execute_command("LINDEX", "l", i - len(vals)) == v.encode()


def test_lindex_and_lset(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("LINDEX", "l", 1) == b"b"
    assert rc.execute_command("LINDEX", "l", -1) == b"c"
    assert rc.execute_command("LINDEX", "l", 3) is None
    assert rc.execute_command("LINDEX", "l", -4) is None
    assert rc.execute_command("LINDEX", "nokey", "x") is None  # the key is looked up first
    fails(rc, NOT_INT, ("LINDEX", "l", "x"), ("LSET", "l", "1.5", "v"))
    assert rc.execute_command("LSET", "l", 0, "A") == b"OK"
    assert rc.execute_command("LSET", "l", -1, "C" * 100) == b"OK"
    assert items(rc, "l") == bs("A", "b", "C" * 100)
    fails(rc, "index out of range", ("LSET", "l", 3, "v"), ("LSET", "l", -4, "v"))
    fails(rc, "no such key", ("LSET", "nokey", 0, "v"))


def test_lrange_clamps_as_redis(rc):
    rc.execute_command("RPUSH", "l", *range(10))
    assert items(rc, "l") == bs(*range(10))
    assert rc.execute_command("LRANGE", "l", 2, 4) == bs(2, 3, 4)
    assert rc.execute_command("LRANGE", "l", -3, -1) == bs(7, 8, 9)
    assert rc.execute_command("LRANGE", "l", -100, 1) == bs(0, 1)
    assert rc.execute_command("LRANGE", "l", 8, 100) == bs(8, 9)
    assert rc.execute_command("LRANGE", "l", 5, 4) == []
    assert rc.execute_command("LRANGE", "l", 10, 20) == []
    assert rc.execute_command("LRANGE", "nokey", 0, -1) == []
    fails(rc, NOT_INT, ("LRANGE", "l", "a", 1), ("LRANGE", "l", 0, "b"))


def test_ltrim(rc):
    rc.execute_command("RPUSH", "l", *range(10))
    assert rc.execute_command("LTRIM", "l", 2, -3) == b"OK"
    assert items(rc, "l") == bs(*range(2, 8))
    assert rc.execute_command("LTRIM", "l", -2, 100) == b"OK"
    assert items(rc, "l") == bs(6, 7)
    assert rc.execute_command("LTRIM", "l", 5, 1) == b"OK"  # an empty range deletes the list
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("LTRIM", "nokey", 0, 1) == b"OK"
    fails(rc, NOT_INT, ("LTRIM", "l", 0, "x"))


def test_lrem_both_directions(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a")
    assert rc.execute_command("LREM", "l", 2, "a") == 2
    assert items(rc, "l") == bs("b", "c", "a", "b", "a")
    assert rc.execute_command("LREM", "l", -1, "b") == 1
    assert items(rc, "l") == bs("b", "c", "a", "a")
    assert rc.execute_command("LREM", "l", 0, "a") == 2
    assert rc.execute_command("LREM", "l", 0, "zz") == 0
    assert rc.execute_command("LREM", "l", -5, "b") == 1
    assert rc.execute_command("LREM", "l", 1, "c") == 1
    assert rc.execute_command("EXISTS", "l") == 0
    assert rc.execute_command("LREM", "nokey", 1, "a") == 0
    fails(rc, NOT_INT, ("LREM", "l", "x", "a"))
    rc.execute_command("RPUSH", "n", 1, "01", 1, "1.0")
    assert rc.execute_command("LREM", "n", 0, 1) == 2  # integers compare as their strings
    assert items(rc, "n") == bs("01", "1.0")


def test_linsert(rc):
    rc.execute_command("RPUSH", "l", "a", "c")
    assert rc.execute_command("LINSERT", "l", "BEFORE", "c", "b") == 3
    assert rc.execute_command("LINSERT", "l", "after", "c", "d") == 4
    assert rc.execute_command("LINSERT", "l", "before", "a", "0") == 5
    assert items(rc, "l") == bs("0", "a", "b", "c", "d")
    assert rc.execute_command("LINSERT", "l", "before", "zz", "x") == -1
    assert rc.execute_command("LINSERT", "nokey", "before", "a", "x") == 0
    fails(rc, SYNTAX, ("LINSERT", "l", "middle", "a", "x"), ("LINSERT", "nokey", "middle", "a", "x"))


def test_lpos(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c", "x" * 100, "2", "3", "c", "c")
    assert rc.execute_command("LPOS", "l", "a") == 0
    assert rc.execute_command("LPOS", "l", "c") == 2
    assert rc.execute_command("LPOS", "l", "c", "RANK", 2) == 6
    assert rc.execute_command("LPOS", "l", "c", "RANK", 4) is None
    assert rc.execute_command("LPOS", "l", "c", "RANK", -1) == 7
    assert rc.execute_command("LPOS", "l", "c", "RANK", -2) == 6
    assert rc.execute_command("LPOS", "l", "c", "COUNT", 0) == [2, 6, 7]
    assert rc.execute_command("LPOS", "l", "c", "COUNT", 2) == [2, 6]
    assert rc.execute_command("LPOS", "l", "c", "COUNT", 0, "RANK", 2) == [6, 7]
    assert rc.execute_command("LPOS", "l", "c", "COUNT", 2, "RANK", -1) == [7, 6]
    assert rc.execute_command("LPOS", "l", "a", "COUNT", 0, "MAXLEN", 1) == [0]
    assert rc.execute_command("LPOS", "l", "c", "COUNT", 0, "MAXLEN", 1) == []
    assert rc.execute_command("LPOS", "l", "c", "RANK", -1, "MAXLEN", 2) == 7
    assert rc.execute_command("LPOS", "l", 2) == 4
    assert rc.execute_command("LPOS", "nokey", "c", "COUNT", 0) == []
    assert rc.execute_command("LPOS", "nokey", "c") is None
    assert rc.execute_command("LPOS", "l", "zz", "COUNT", 2, "RANK", -1) == []
    fails(rc, "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative "
          "to start from the end of the list", ("LPOS", "l", "c", "RANK", 0))
    fails(rc, "COUNT can't be negative", ("LPOS", "l", "c", "COUNT", -1), ("LPOS", "l", "c", "COUNT", "x"))
    fails(rc, "MAXLEN can't be negative", ("LPOS", "l", "c", "MAXLEN", -1))
    fails(rc, NOT_INT, ("LPOS", "l", "c", "RANK", "x"))
    fails(rc, SYNTAX, ("LPOS", "l", "c", "FOO", 1), ("LPOS", "l", "c", "RANK"), ("LPOS", "nokey", "c", "COUNT"))


@skip_72
def test_lpos_rank_range_72(rc):
    rc.execute_command("RPUSH", "l", "a")
    fails(rc, "value is out of range, value must between -9223372036854775807 and 9223372036854775807",
          ("LPOS", "l", "a", "RANK", "-9223372036854775808"))


@pytest.mark.parametrize("src,dst", [("{t}s", "{t}d"), ("a", "y"), ("b", "c")])
def test_lmove_and_rpoplpush(rc, src, dst):
    rc.execute_command("RPUSH", src, "1", "2", "3")
    assert rc.execute_command("LMOVE", src, dst, "LEFT", "RIGHT") == b"1"
    assert rc.execute_command("LMOVE", src, dst, "right", "left") == b"3"
    assert items(rc, dst) == bs("3", "1")
    assert rc.execute_command("RPOPLPUSH", src, dst) == b"2"
    assert rc.execute_command("EXISTS", src) == 0
    assert items(rc, dst) == bs("2", "3", "1")
    assert rc.execute_command("RPOPLPUSH", src, dst) is None
    assert rc.execute_command("LMOVE", src, dst, "LEFT", "LEFT") is None
    rc.execute_command("SET", src, "str")
    fails(rc, WRONGTYPE, ("LMOVE", dst, src, "LEFT", "LEFT"), ("LMOVE", src, dst, "LEFT", "LEFT"))
    assert items(rc, dst) == bs("2", "3", "1")  # nothing moved on an error
    fails(rc, SYNTAX, ("LMOVE", dst, src, "UP", "LEFT"), ("LMOVE", dst, src, "LEFT", "DOWN"))


def test_lmove_rotates_one_list(rc):
    rc.execute_command("RPUSH", "l", "a", "b", "c")
    assert rc.execute_command("RPOPLPUSH", "l", "l") == b"c"
    assert items(rc, "l") == bs("c", "a", "b")
    assert rc.execute_command("LMOVE", "l", "l", "LEFT", "RIGHT") == b"c"
    assert items(rc, "l") == bs("a", "b", "c")
    rc.execute_command("RPUSH", "one", "x")
    assert rc.execute_command("LMOVE", "one", "one", "LEFT", "RIGHT") == b"x"
    assert items(rc, "one") == bs("x")


def test_lmpop(rc, rc3):
    rc.execute_command("RPUSH", "b", "1", "2", "3")
    rc.execute_command("RPUSH", "c", "x")
    assert rc.execute_command("LMPOP", 3, "a", "b", "c", "LEFT") == [b"b", [b"1"]]
    assert rc.execute_command("LMPOP", 2, "b", "c", "RIGHT", "COUNT", 10) == [b"b", [b"3", b"2"]]
    assert rc.execute_command("EXISTS", "b") == 0
    assert rc.execute_command("LMPOP", 1, "a", "LEFT") is None
    assert rc3.execute_command("LMPOP", 2, "a", "c", "left", "count", 1) == [b"c", [b"x"]]
    assert rc3.execute_command("LMPOP", 1, "a", "LEFT") is None
    fails(rc, "numkeys should be greater than 0", ("LMPOP", 0, "a", "LEFT"), ("LMPOP", -1, "a", "LEFT"),
          ("LMPOP", "x", "a", "LEFT"))
    fails(rc, SYNTAX, ("LMPOP", 2, "a", "LEFT"), ("LMPOP", 1, "a", "UP"), ("LMPOP", 1, "a", "LEFT", "FOO"),
          ("LMPOP", 1, "a", "LEFT", "COUNT", 1, "COUNT", 2), ("LMPOP", 1, "a", "LEFT", "COUNT"))
    fails(rc, "count should be greater than 0", ("LMPOP", 1, "a", "LEFT", "COUNT", 0),
          ("LMPOP", 1, "a", "LEFT", "COUNT", -1), ("LMPOP", 1, "a", "LEFT", "COUNT", "x"))
    rc.execute_command("SET", "s", "v")
    rc.execute_command("RPUSH", "y", "1")
    fails(rc, WRONGTYPE, ("LMPOP", 2, "s", "y", "LEFT"))
    fails(rc, WRONGTYPE, ("LMPOP", 2, "nokey", "s", "LEFT"))
    assert rc.execute_command("LLEN", "y") == 1


def test_wrong_types(rc):
    rc.execute_command("SET", "s", "v")
    rc.execute_command("RPUSH", "l", "a")
    for cmd in (("LPUSH", "s", "a"), ("RPUSH", "s", "a"), ("LPUSHX", "s", "a"), ("LPOP", "s"), ("RPOP", "s", 1),
                ("LLEN", "s"), ("LINDEX", "s", 0), ("LSET", "s", 0, "v"), ("LRANGE", "s", 0, 1),
                ("LTRIM", "s", 0, 1), ("LREM", "s", 0, "a"), ("LINSERT", "s", "BEFORE", "a", "b"),
                ("LPOS", "s", "a"), ("RPOPLPUSH", "s", "l"), ("RPOPLPUSH", "l", "s"),
                ("GET", "l"), ("INCR", "l"), ("APPEND", "l", "x"), ("SADD", "l", "x"), ("HSET", "l", "f", "v")):
        with raises(WRONGTYPE):
            rc.execute_command(*cmd)
    assert rc.execute_command("MGET", "l", "s") == [None, b"v"]
    assert rc.execute_command("TYPE", "l") == b"list"
    assert rc.execute_command("SCAN", 0, "TYPE", "list")[1] == [b"l"]
    assert items(rc, "l") == [b"a"]


def test_arity(rc):
    for cmd, args in (("lpush", ("l",)), ("rpush", ("l",)), ("llen", ()), ("lindex", ("l",)),
                      ("lset", ("l", 0)), ("lrange", ("l", 0)), ("ltrim", ("l", 0)), ("lrem", ("l", 0)),
                      ("linsert", ("l", "before", "a")), ("lpos", ("l",)), ("lmove", ("a", "b", "left")),
                      ("rpoplpush", ("a",)), ("lmpop", (1, "a"))):
        with raises(arity(cmd)):
            rc.execute_command(cmd, *args)


def test_keyspace_operations_on_lists(rc):
    rc.execute_command("RPUSH", "{k}l", *range(1000))
    assert rc.execute_command("COPY", "{k}l", "{k}c") == 1
    assert rc.execute_command("RPUSH", "{k}c", "extra") == 1001
    assert rc.execute_command("LLEN", "{k}l") == 1000
    assert rc.execute_command("RENAME", "{k}c", "{k}r") == b"OK"
    assert rc.execute_command("LINDEX", "{k}r", -1) == b"extra"
    assert rc.execute_command("MEMORY", "USAGE", "{k}l") > 1000
    assert rc.execute_command("EXPIRE", "{k}r", 100) == 1
    assert rc.execute_command("DEL", "{k}l", "{k}r") == 2


@skip_72
def test_encodings_follow_the_limit(rc, config_set):
    rc.execute_command("RPUSH", "l", "a", "b")
    assert encoding(rc, "l") == b"listpack"
    config_set("list-max-listpack-size", "4")
    rc.execute_command("RPUSH", "l", "c", "d", "e")
    assert encoding(rc, "l") == b"quicklist"
    rc.execute_command("RPOP", "l", 3)  # 2 items: half of 4, back to a listpack
    assert encoding(rc, "l") == b"listpack"
    config_set("list-max-listpack-size", "-2")
    rc.execute_command("RPUSH", "big", "x" * 9000)
    assert encoding(rc, "big") == b"quicklist"  # over 8 KB at once
    rc.execute_command("DEL", "big")
    rc.execute_command("RPUSH", "big", *["v%04d" % i for i in range(2000)])
    assert encoding(rc, "big") == b"quicklist"
    rc.execute_command("LTRIM", "big", 0, 9)
    assert encoding(rc, "big") == b"listpack"
    assert rc.execute_command("CONFIG", "GET", "list-max-ziplist-size") == [b"list-max-ziplist-size", b"-2"]


def test_config_directives(rc, config_set):
    assert rc.execute_command("CONFIG", "GET", "list-max-listpack-size") == [b"list-max-listpack-size", b"-2"]
    assert rc.execute_command("CONFIG", "GET", "list-compress-depth") == [b"list-compress-depth", b"0"]
    config_set("list-max-ziplist-size", "128")
    assert rc.execute_command("CONFIG", "GET", "list-max-listpack-size")[1] == b"128"


@pytest.mark.parametrize("fill,depth", [("-2", 0), ("-1", 0), ("3", 0), ("0", 0), ("3", 1), ("-1", 2), ("1", 1)])
def test_random_operations_match_a_model(rc, config_set, fill, depth):
    config_set("list-max-listpack-size", fill)
    config_set("list-compress-depth", str(depth))
    rng = random.Random(int(fill) + 17 + 100 * depth)
    model = []
    key = "rl"

    def val():
        k = rng.randrange(10)
        if k < 4:
            return str(rng.randrange(-50, 50))
        if k < 6:
            return "s%d" % rng.randrange(30)
        if k < 7:
            return "L" * rng.randrange(100, 300)
        return "v%d" % rng.randrange(100)

    for step in range(1500):
        op = rng.randrange(11)
        if op < 3:
            vs = [val() for _ in range(rng.randrange(1, 5))]
            if rng.randrange(2):
                assert rc.execute_command("LPUSH", key, *vs) == len(model) + len(vs)
                model[:0] = vs[::-1]
            else:
                assert rc.execute_command("RPUSH", key, *vs) == len(model) + len(vs)
                model.extend(vs)
        elif op == 3:
            n = rng.randrange(1, 4)
            got = rc.execute_command("LPOP", key, n)
            assert got == ([v.encode() for v in model[:n]] if model else None)
            del model[:n]
        elif op == 4:
            got = rc.execute_command("RPOP", key)
            assert got == (model.pop().encode() if model else None)
        elif op == 5 and model:
            i = rng.randrange(-len(model), len(model))
            v = val()
            assert rc.execute_command("LSET", key, i, v) == b"OK"
            model[i] = v
        elif op == 6:
            p = val()
            v = val()
            before = rng.randrange(2) == 0
            r = rc.execute_command("LINSERT", key, "BEFORE" if before else "AFTER", p, v)
            if not model:
                assert r == 0
            elif p not in model:
                assert r == -1
            else:
                i = model.index(p)
                model.insert(i if before else i + 1, v)
                assert r == len(model)
        elif op == 7:
            v = val()
            cnt = rng.randrange(-2, 3)
            r = rc.execute_command("LREM", key, cnt, v)
            idx = [i for i, x in enumerate(model) if x == v]
            if cnt < 0:
                idx = idx[::-1][:-cnt]
            elif cnt > 0:
                idx = idx[:cnt]
            for i in sorted(idx, reverse=True):
                del model[i]
            assert r == len(idx)
        elif op == 8 and model:
            a, b_ = rng.randrange(-len(model) - 2, len(model) + 2), rng.randrange(-len(model) - 2, len(model) + 2)
            assert rc.execute_command("LTRIM", key, a, b_) == b"OK"
            n = len(model)
            s, e = (a + n if a < 0 else a), (b_ + n if b_ < 0 else b_)
            s = max(s, 0)
            model[:] = [] if s > e or s >= n else model[s:min(e, n - 1) + 1]
        elif op == 9 and model:
            i = rng.randrange(-len(model), len(model))
            assert rc.execute_command("LINDEX", key, i) == model[i].encode()
        if step % 50 == 0 or op == 10:
            assert items(rc, key) == [v.encode() for v in model]
            assert rc.execute_command("LLEN", key) == len(model)
    assert items(rc, key) == [v.encode() for v in model]


def test_compression_saves_memory_and_reads_back(rc, config_set):
    # 3,000 items of 60 repetitive bytes: about 45 nodes of 4 KB; depth 1
    # keeps the first and last plain and compresses the rest.
    config_set("list-max-listpack-size", "-1")
    vals = [("item:%d:" % (i % 7)) + "z" * 52 for i in range(3000)]
    rc.execute_command("RPUSH", "plain", *vals)
    config_set("list-compress-depth", "1")
    rc.execute_command("RPUSH", "packed", *vals)
    assert encoding(rc, "packed") == b"quicklist"
    plain = rc.execute_command("MEMORY", "USAGE", "plain")
    packed = rc.execute_command("MEMORY", "USAGE", "packed")
    assert packed * 3 < plain, (packed, plain)
    # A list keeps the depth it was made with.
    rc.execute_command("RPUSH", "plain", *vals)
    assert rc.execute_command("MEMORY", "USAGE", "plain") > 1.8 * plain
    model = list(vals)
    assert items(rc, "packed") == [v.encode() for v in model]
    assert rc.execute_command("LINDEX", "packed", 1500) == model[1500].encode()
    assert rc.execute_command("LSET", "packed", 1500, "new") == b"OK"
    model[1500] = "new"
    assert rc.execute_command("LINSERT", "packed", "AFTER", "new", "newer") == 3001
    model.insert(1501, "newer")
    assert rc.execute_command("LREM", "packed", 0, vals[3]) == model.count(vals[3])
    model = [v for v in model if v != vals[3]]
    assert rc.execute_command("LPOS", "packed", "newer") == model.index("newer")
    assert rc.execute_command("LRANGE", "packed", 1000, 1002) == [v.encode() for v in model[1000:1003]]
    assert rc.execute_command("LTRIM", "packed", 100, -100) == b"OK"
    model = model[100:-99]
    assert items(rc, "packed") == [v.encode() for v in model]
    assert rc.execute_command("MEMORY", "USAGE", "packed") * 3 < plain
    rc.execute_command("COPY", "packed", "copy")
    assert items(rc, "copy") == items(rc, "packed")


def test_one_push_of_many_tiny_items(rc, config_set):
    # Redis's node limit counts the arguments' bytes (0 here): the list must still hold them all.
    config_set("list-max-listpack-size", "-5")
    n = 70000
    assert rc.execute_command("RPUSH", "l", *([""] * n)) == n
    assert rc.execute_command("LINSERT", "l", "BEFORE", "", "x") == n + 1
    assert rc.execute_command("LINDEX", "l", 0) == b"x"
    assert rc.execute_command("LPUSH", "l", *([""] * n)) == 2 * n + 1
    assert rc.execute_command("LINDEX", "l", n) == b"x"
    assert rc.execute_command("LRANGE", "l", n - 1, n + 1) == [b"", b"x", b""]
    assert rc.execute_command("LREM", "l", 0, "") == 2 * n
    assert items(rc, "l") == [b"x"]
