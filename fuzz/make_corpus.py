#!/usr/bin/env python3
"""Writes the connection fuzzer's seed corpus and dictionary (checked in).

    python3 fuzz/make_corpus.py      # rewrites fuzz/corpus/connection/ and fuzz/connection.dict

A seed is what a client sends on one connection, after one leading byte that
picks how the harness cuts it into writes (fuzz/connection_fuzzer.cc). The
seeds are real requests for every command Peregrine serves (each with its
options and their error cases), in RESP and inline form, pipelines, RESP3,
and malformed frames of every kind the parser refuses. File names are the
seed's label, so a change here shows in review as a changed file.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "connection")
DICT = os.path.join(HERE, "connection.dict")

# The harness's first byte: low three bits the write size (7: all at once,
# 0: one byte per write), bit 3 two workers instead of one, bit 4 a 1-byte
# maxmemory with the policy in bits 5-6.
WHOLE = 0x07
BYTEWISE = 0x00
TWO_WORKERS = 0x08
TINY_MAXMEMORY = 0x10  # bits 5-6: the eviction policy


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def inline(*args):
    return b" ".join(a if isinstance(a, bytes) else str(a).encode() for a in args) + b"\r\n"


def crc64(data):
    """Redis's CRC-64 (Jones, reflected), for DUMP payloads RESTORE accepts."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x95AC9329AC4BC9B5 if crc & 1 else crc >> 1
    return crc


def payload(body):
    """A DUMP payload: the value's RDB form, version 10, the checksum."""
    data = body + b"\x0a\x00"
    return data + crc64(data).to_bytes(8, "little")


def seq(*cmds):
    return b"".join(resp(*c) for c in cmds)


BIG = "9223372036854775807"
SMALL = "-9223372036854775808"

SEEDS = {
    # --- strings
    "set_get": seq(("SET", "k", "v"), ("GET", "k"), ("GET", "missing")),
    "set_options": seq(("SET", "k", "v", "EX", "10"), ("SET", "k", "v", "PX", "100", "NX"),
                       ("SET", "k", "w", "XX", "GET"), ("SET", "k", "v", "KEEPTTL"),
                       ("SET", "k", "v", "EXAT", "4102444800"), ("SET", "k", "v", "PXAT", "4102444800000"),
                       ("SET", "k", "v", "EX", "0"), ("SET", "k", "v", "EX", "-1"), ("SET", "k", "v", "EX", BIG),
                       ("SET", "k", "v", "NX", "XX"), ("SET", "k", "v", "EX", "1", "PX", "1"),
                       ("SET", "k", "v", "KEEPTTL", "EX", "1"), ("SET", "k", "v", "FOO")),
    "setnx_setex": seq(("SETNX", "a", "1"), ("SETNX", "a", "2"), ("SETEX", "b", "10", "v"),
                       ("PSETEX", "c", "100", "v"), ("SETEX", "b", "0", "v"), ("SETEX", "b", "x", "v")),
    "getset_getdel_getex": seq(("SET", "k", "v"), ("GETSET", "k", "w"), ("GETEX", "k", "EX", "5"),
                               ("GETEX", "k", "PERSIST"), ("GETEX", "k", "PXAT", "1"), ("GETEX", "k", "EX"),
                               ("GETDEL", "k"), ("GETDEL", "k")),
    "mset_mget": seq(("MSET", "a", "1", "b", "2", "{t}c", "3"), ("MGET", "a", "b", "{t}c", "nope"),
                     ("MSETNX", "a", "1", "z", "2"), ("MSET", "a"), ("MGET",)),
    "counters": seq(("INCR", "n"), ("INCRBY", "n", "41"), ("DECR", "n"), ("DECRBY", "n", "-5"),
                    ("INCRBY", "n", BIG), ("DECRBY", "n", SMALL), ("SET", "m", BIG), ("INCR", "m"),
                    ("SET", "s", "abc"), ("INCR", "s"), ("INCRBY", "n", "1.5"),
                    ("INCRBYFLOAT", "f", "1.5"), ("INCRBYFLOAT", "f", "1e308"), ("INCRBYFLOAT", "f", "1e308"),
                    ("INCRBYFLOAT", "f", "inf"), ("INCRBYFLOAT", "f", "nan"), ("INCRBYFLOAT", "f", "0x10")),
    "ranges": seq(("SET", "k", "Hello World"), ("GETRANGE", "k", "0", "4"), ("GETRANGE", "k", "-5", "-1"),
                  ("GETRANGE", "k", SMALL, BIG), ("SUBSTR", "k", "1", "3"), ("SETRANGE", "k", "6", "Redis"),
                  ("SETRANGE", "k", "-1", "x"), ("SETRANGE", "new", "20", "x"), ("SETRANGE", "k", "536870912", "x"),
                  ("STRLEN", "k"), ("APPEND", "k", "!"), ("APPEND", "fresh", "x")),
    "bitmaps": seq(("SETBIT", "b", "7", "1"), ("SETBIT", "b", "100", "1"), ("GETBIT", "b", "100"),
                   ("SETBIT", "b", "4294967296", "1"), ("BITCOUNT", "b"), ("BITCOUNT", "b", "1", "-1", "BIT"),
                   ("BITPOS", "b", "0"), ("BITPOS", "b", "1", "2", "-1", "BYTE"), ("SET", "c", "foobar"),
                   ("BITOP", "AND", "d", "b", "c"), ("BITOP", "NOT", "d", "c"), ("BITOP", "XOR", "d", "b", "c", "x"),
                   ("BITFIELD", "f", "SET", "u8", "0", "200", "INCRBY", "i5", "#3", "-9", "OVERFLOW", "FAIL",
                    "INCRBY", "u8", "0", "100", "GET", "i64", "8"),
                   ("BITFIELD_RO", "f", "GET", "u63", "#2"), ("BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "i64", "0", BIG)),
    "hyperloglog": seq(("PFADD", "h", "a", "b", "c"), ("PFCOUNT", "h"), ("PFADD", "h2", "x"), ("PFCOUNT", "h", "h2"),
                       ("PFMERGE", "h3", "h", "h2", "nokey"), ("PFDEBUG", "ENCODING", "h3"),
                       ("PFDEBUG", "DECODE", "h"), ("PFDEBUG", "TODENSE", "h"), ("PFDEBUG", "GETREG", "h2"),
                       ("APPEND", "h2", "\x83\x7f"), ("PFCOUNT", "h2"), ("PFADD", "h2", "z"),
                       ("SETRANGE", "h3", "20", "\xff\x01"), ("PFCOUNT", "h3"), ("PFMERGE", "h4", "h3"),
                       ("SET", "bad", "HYLL\x01" + "\x00" * 11), ("PFADD", "bad", "x"),
                       ("SET", "s", "plain"), ("PFADD", "s", "x"), ("PFCOUNT", "s", "h")),
    "streams": seq(("XADD", "s", "*", "f", "v"), ("XADD", "s", "MAXLEN", "~", "2", "5-*", "a", "1", "b", "2"),
                   ("XADD", "s", "NOMKSTREAM", "MINID", "=", "0", "99-1", "f", "v"), ("XADD", "s", "0-0", "f", "v"),
                   ("XRANGE", "s", "-", "+", "COUNT", "2"), ("XREVRANGE", "s", "+", "(5-0"), ("XLEN", "s"),
                   ("XDEL", "s", "5-0", "bad"), ("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "10"),
                   ("XSETID", "s", "100-0", "ENTRIESADDED", "9", "MAXDELETEDID", "5-0"),
                   ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", "ENTRIESREAD", "3"),
                   ("XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "NOACK", "STREAMS", "s", ">"),
                   ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"), ("XREAD", "COUNT", BIG, "STREAMS", "s", "$"),
                   ("XACK", "s", "g", "1-0", "2-0"), ("XPENDING", "s", "g", "IDLE", "0", "-", "+", "10", "c"),
                   ("XCLAIM", "s", "g", "d", "0", "1-0", "TIME", BIG, "RETRYCOUNT", SMALL, "FORCE", "JUSTID", "LASTID", "9-9"),
                   ("XAUTOCLAIM", "s", "g", "d", "0", "0", "COUNT", "3", "JUSTID"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "2"),
                   ("XINFO", "GROUPS", "s"), ("XINFO", "CONSUMERS", "s", "g"), ("XGROUP", "DELCONSUMER", "s", "g", "d"),
                   ("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-1"), ("XGROUP", "DESTROY", "s", "g")),
    "sort": seq(("RPUSH", "l", "3", "1", "2", "x"), ("MSET", "w_1", "5", "w_2", "1", "w_3", "2"),
                ("HSET", "o_1", "f", "c"), ("SORT", "l"), ("SORT", "l", "ALPHA", "DESC", "LIMIT", "1", "2"),
                ("SORT", "l", "BY", "w_*", "GET", "#", "GET", "o_*->f", "GET", "nope"),
                ("SORT", "l", "BY", "o_*->f", "ALPHA", "STORE", "dst"), ("SORT", "l", "BY", "nosort", "DESC"),
                ("SORT_RO", "l", "LIMIT", SMALL, BIG), ("SORT", "l", "LIMIT", "x", "1"),
                ("SADD", "s", "b", "a"), ("SORT", "s", "BY", "k", "STORE", "dst"), ("SORT_RO", "s", "STORE", "d"),
                ("ZADD", "z", "1", "a", "2", "b"), ("SORT", "z", "BY", "nosort", "LIMIT", "1", "5")),
    "integers_encoding": seq(("SET", "i", "12345"), ("OBJECT", "ENCODING", "i"), ("APPEND", "i", "6"),
                             ("OBJECT", "ENCODING", "i"), ("SET", "e", "x" * 40), ("OBJECT", "ENCODING", "e"),
                             ("SET", "neg", "-0"), ("INCR", "neg"), ("SET", "lead", "007"), ("INCR", "lead")),
    # --- keys
    "keys_scan": seq(("MSET", "a1", "1", "a2", "2", "b1", "3"), ("KEYS", "a*"), ("KEYS", "[a-b]?"),
                     ("KEYS", "\\*"), ("SCAN", "0"), ("SCAN", "0", "MATCH", "a*", "COUNT", "1"),
                     ("SCAN", "0", "TYPE", "string"), ("SCAN", "0", "COUNT", "0"), ("SCAN", "x"),
                     ("SCAN", BIG), ("RANDOMKEY",), ("DBSIZE",)),
    "expire_family": seq(("SET", "k", "v"), ("EXPIRE", "k", "100"), ("TTL", "k"), ("PTTL", "k"),
                         ("EXPIRE", "k", "50", "GT"), ("EXPIRE", "k", "50", "LT"), ("EXPIRE", "k", "10", "NX"),
                         ("EXPIRE", "k", "10", "XX"), ("EXPIRE", "k", "10", "NX", "XX"),
                         ("PEXPIRE", "k", "100000"), ("EXPIREAT", "k", "4102444800"),
                         ("PEXPIREAT", "k", "4102444800000"), ("EXPIRETIME", "k"), ("PEXPIRETIME", "k"),
                         ("PERSIST", "k"), ("TTL", "k"), ("EXPIRE", "k", BIG), ("EXPIRE", "k", "-1"),
                         ("TTL", "k"), ("EXPIRE", "nokey", "1")),
    "rename_copy_move": seq(("SET", "a", "1"), ("RENAME", "a", "b"), ("RENAMENX", "b", "c"), ("SET", "d", "x"),
                            ("RENAMENX", "c", "d"), ("RENAME", "nope", "x"), ("COPY", "d", "e"),
                            ("COPY", "d", "e"), ("COPY", "d", "e", "REPLACE"), ("COPY", "d", "f", "DB", "3"),
                            ("MOVE", "d", "1"), ("MOVE", "d", "99"), ("SELECT", "1"), ("GET", "d"),
                            ("SWAPDB", "0", "1"), ("SWAPDB", "0", "99")),
    "del_exists": seq(("MSET", "a", "1", "b", "2"), ("EXISTS", "a", "a", "b", "c"), ("TOUCH", "a", "c"),
                      ("DEL", "a", "c"), ("UNLINK", "b"), ("TYPE", "a"), ("TYPE", "b")),
    "object_memory": seq(("SET", "k", "v"), ("OBJECT", "FREQ", "k"), ("OBJECT", "IDLETIME", "k"),
                         ("OBJECT", "REFCOUNT", "k"), ("OBJECT", "HELP"), ("OBJECT", "NOPE", "k"),
                         ("MEMORY", "USAGE", "k"), ("MEMORY", "USAGE", "k", "SAMPLES", "0"), ("MEMORY", "STATS"),
                         ("MEMORY", "DOCTOR"), ("MEMORY", "PURGE"), ("MEMORY", "MALLOC-STATS"),
                         ("MEMORY", "HELP")),
    "flush": seq(("SET", "a", "1"), ("FLUSHDB",), ("FLUSHDB", "ASYNC"), ("FLUSHALL", "SYNC"),
                 ("FLUSHALL", "NOPE")),
    # --- sets
    "sets": seq(("SADD", "s", "b", "a", "c"), ("SADD", "s", "a", "d"), ("SCARD", "s"), ("SISMEMBER", "s", "a"),
                ("SISMEMBER", "s", "z"), ("SMISMEMBER", "s", "a", "z", "a"), ("SMEMBERS", "s"), ("SREM", "s", "a", "z"),
                ("SREM", "s", "b", "c", "d"), ("EXISTS", "s"), ("SREM", "nope", "a"), ("SCARD", "nope"),
                ("SMEMBERS", "nope"), ("SMISMEMBER", "nope", "a"), ("TYPE", "s"), ("SADD", "s", "", "\x00")),
    "sets_errors": seq(("SET", "str", "v"), ("SADD", "str", "a"), ("SREM", "str", "a"), ("SCARD", "str"),
                       ("SISMEMBER", "str", "a"), ("SMEMBERS", "str"), ("SRANDMEMBER", "str"), ("SPOP", "str"),
                       ("SMOVE", "str", "s", "a"), ("SADD", "s", "a"), ("SMOVE", "s", "str", "a"),
                       ("SINTER", "s", "str"), ("SUNIONSTORE", "d", "s", "str"), ("SSCAN", "str", "0"),
                       ("SADD", "s"), ("SREM", "s"), ("SCARD",), ("SISMEMBER", "s"), ("SMISMEMBER", "s"),
                       ("SMOVE", "s", "d"), ("SINTER",), ("SINTERSTORE", "d"), ("SPOP", "s", "1", "2"),
                       ("SRANDMEMBER", "s", "1", "2"), ("SSCAN", "s"), ("GET", "s"), ("INCR", "s"),
                       ("APPEND", "s", "x")),
    "sets_encodings": seq(("SADD", "i", "3", "1", "2"), ("OBJECT", "ENCODING", "i"), ("SADD", "i", BIG, SMALL, "-0"),
                          ("OBJECT", "ENCODING", "i"), ("SREM", "i", "-0"), ("SADD", "l", "a", "1"),
                          ("OBJECT", "ENCODING", "l"), ("SADD", "l", "x" * 65), ("OBJECT", "ENCODING", "l"),
                          ("SADD", "n", "01", "+1", " 1", "1.0", "9223372036854775808"), ("SMEMBERS", "n"),
                          ("SADD", "wide", *["m%d" % i for i in range(129)]), ("OBJECT", "ENCODING", "wide"),
                          ("MEMORY", "USAGE", "wide"), ("SPOP", "wide", "120"), ("OBJECT", "ENCODING", "wide"),
                          ("CONFIG", "SET", "set-max-intset-entries", "10"), ("SADD", "big", *map(str, range(11))),
                          ("OBJECT", "ENCODING", "big"), ("SPOP", "big", "9"), ("OBJECT", "ENCODING", "big")),
    "sets_small_limits": seq(("CONFIG", "SET", "set-max-intset-entries", "2"),
                             ("CONFIG", "SET", "set-max-listpack-entries", "3"),
                             ("CONFIG", "SET", "set-max-listpack-value", "4"), ("SADD", "i", "1", "2"),
                             ("SADD", "i", "3"), ("OBJECT", "ENCODING", "i"), ("SADD", "l", "a", "b"),
                             ("SADD", "l", "abcde"), ("OBJECT", "ENCODING", "l"), ("SADD", "m", "a", "b", "c", "d"),
                             ("SUNIONSTORE", "u", "i", "l"), ("SINTERSTORE", "v", "i", "i"),
                             ("OBJECT", "ENCODING", "u"),
                             ("CONFIG", "SET", "set-max-intset-entries", "0"), ("SADD", "z", "1")),
    "sets_random": seq(("SADD", "s", "1", "2", "3", "a", "b"), ("SRANDMEMBER", "s"), ("SRANDMEMBER", "s", "2"),
                       ("SRANDMEMBER", "s", "10"), ("SRANDMEMBER", "s", "-10"), ("SRANDMEMBER", "s", "0"),
                       ("SRANDMEMBER", "s", SMALL), ("SRANDMEMBER", "s", "x"), ("SRANDMEMBER", "nope", "-5"),
                       ("SPOP", "s"), ("SPOP", "s", "0"), ("SPOP", "s", "2"), ("SPOP", "s", "-1"), ("SPOP", "s", "x"),
                       ("SPOP", "s", BIG), ("SPOP", "s"), ("SPOP", "nope", "3"), ("SADD", "t", *map(str, range(20))),
                       ("SPOP", "t", "18"), ("SADD", "h", *["m%d" % i for i in range(140)]),
                       ("SRANDMEMBER", "h", "100"), ("SRANDMEMBER", "h", "20"), ("SPOP", "h", "130")),
    "sets_multikey": seq(("SADD", "{t}a", "1", "2", "3", "x"), ("SADD", "{t}b", "2", "3", "y"), ("SADD", "c", "3", "z"),
                         ("SINTER", "{t}a", "{t}b", "c"), ("SINTER", "{t}a", "nope"), ("SUNION", "{t}a", "c", "nope"),
                         ("SDIFF", "{t}a", "{t}b"), ("SDIFF", "{t}a", "{t}a"), ("SINTERSTORE", "{t}a", "{t}a", "{t}b"),
                         ("SUNIONSTORE", "c", "c", "{t}b"), ("SDIFFSTORE", "{t}b", "{t}b", "c"),
                         ("SINTERSTORE", "d", "nope", "c"), ("EXISTS", "d"), ("SMOVE", "{t}a", "c", "2"),
                         ("SMOVE", "{t}a", "{t}a", "3"), ("SMOVE", "{t}a", "new", "3"), ("SMOVE", "nope", "c", "1"),
                         ("SINTERCARD", "2", "{t}a", "c"), ("SINTERCARD", "3", "{t}a", "{t}b", "c", "LIMIT", "1"),
                         ("SINTERCARD", "1", "c", "LIMIT", "0"), ("SINTERCARD", "0", "c"), ("SINTERCARD", "-1", "c"),
                         ("SINTERCARD", "5", "c"), ("SINTERCARD", "x", "c"), ("SINTERCARD", "1", "c", "LIMIT"),
                         ("SINTERCARD", "1", "c", "LIMIT", "-1"), ("SINTERCARD", "1", "c", "LIMIT", "x"),
                         ("SINTERCARD", "1", "c", "FOO", "1"), ("SINTERCARD", BIG, "c"), ("SINTERCARD", "1")),
    "sets_scan": seq(("SADD", "s", *["m%d" % i for i in range(140)]), ("SSCAN", "s", "0"),
                     ("SSCAN", "s", "0", "COUNT", "5", "MATCH", "m1*"), ("SSCAN", "s", "7", "COUNT", "1000"),
                     ("SSCAN", "s", "0", "COUNT", "0"), ("SSCAN", "s", "0", "MATCH"), ("SSCAN", "s", "x"),
                     ("SSCAN", "s", "-1"), ("SSCAN", "s", "18446744073709551616"), ("SSCAN", "nope", "0", "COUNT", "0"),
                     ("SADD", "i", "1", "2"), ("SSCAN", "i", "0", "MATCH", "[12]"), ("SSCAN", "i", "0", "NOVALUES")),
    # --- lists
    # --- sorted sets
    "zsets": seq(("ZADD", "z", "1", "a", "2", "b", "1.5", "c", "-inf", "d", "+inf", "e"), ("ZADD", "z", "NX", "CH", "3", "a"),
                 ("ZADD", "z", "XX", "GT", "INCR", "2", "a"), ("ZINCRBY", "z", "-1", "b"), ("ZSCORE", "z", "a"),
                 ("ZMSCORE", "z", "a", "nope"), ("ZRANK", "z", "c", "WITHSCORE"), ("ZREVRANK", "z", "c"),
                 ("ZCOUNT", "z", "(1", "+inf"), ("ZLEXCOUNT", "z", "-", "[c"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
                 ("ZRANGE", "z", "(1", "5", "BYSCORE", "REV", "LIMIT", "0", "2"), ("ZRANGE", "z", "[a", "+", "BYLEX"),
                 ("ZRANGEBYSCORE", "z", "-inf", "(2", "WITHSCORES", "LIMIT", "1", "-1"),
                 ("ZREVRANGEBYLEX", "z", "+", "-"), ("ZRANGESTORE", "d", "z", "0", "1"), ("ZSCAN", "z", "0"),
                 ("ZRANDMEMBER", "z", "-3", "WITHSCORES"), ("ZPOPMIN", "z", "2"), ("ZPOPMAX", "z"),
                 ("ZMPOP", "2", "nope", "z", "MAX", "COUNT", "9"), ("ZREMRANGEBYSCORE", "d", "-inf", "inf"),
                 ("ZADD", "z", "nan", "x"), ("ZADD", "z", "1"), ("ZADD", "z", "NX", "XX", "1", "a")),
    "zsets_algebra": seq(("ZADD", "{a}x", "1", "a", "2", "b"), ("SADD", "{a}s", "b", "c"),
                         ("ZUNIONSTORE", "{a}u", "2", "{a}x", "{a}s", "WEIGHTS", "2", "inf", "AGGREGATE", "MIN"),
                         ("ZINTER", "2", "{a}x", "{a}s", "WITHSCORES"), ("ZDIFF", "2", "{a}x", "{a}s"),
                         ("ZINTERCARD", "2", "{a}x", "{a}s", "LIMIT", "1"), ("ZUNION", "0", "{a}x"),
                         ("ZDIFFSTORE", "{a}x", "1", "{a}nope"), ("BZPOPMIN", "{a}x", "{a}u", "0.01"),
                         ("BZMPOP", "0.01", "1", "{a}nope", "MIN"), ("ZREMRANGEBYRANK", "{a}u", "0", "-1"),
                         ("CONFIG", "SET", "zset-max-listpack-entries", "1"), ("ZADD", "{a}y", "1", "p", "2", "q"),
                         ("OBJECT", "ENCODING", "{a}y"), ("ZREMRANGEBYLEX", "{a}y", "[p", "(q")),
    # --- transactions
    "multi_exec": seq(("MULTI",), ("SET", "{t}a", "1"), ("INCR", "{t}a"), ("LPUSH", "{t}l", "x"), ("BLPOP", "nope", "0"),
                      ("EXEC",), ("MULTI",), ("MULTI",), ("SET", "a"), ("EXEC",), ("EXEC",), ("DISCARD",),
                      ("MULTI",), ("NOSUCH",), ("DISCARD",), ("MULTI",), ("INCR", "{t}a"), ("WATCH", "a"),
                      ("SUBSCRIBE", "c"), ("EXEC",), ("MULTI",), ("FLUSHALL",), ("PUBLISH", "c", "m"), ("EXEC", "x"),
                      ("RESET",)),
    "watch": seq(("WATCH", "{t}a", "b", "{t}a"), ("SET", "b", "1"), ("MULTI",), ("PING",), ("EXEC",),
                 ("WATCH", "x"), ("UNWATCH",), ("WATCH", "y"), ("SET", "y", "1", "PX", "1"), ("MULTI",),
                 ("GET", "y"), ("EXEC",), ("WATCH",), ("WATCH", "s"), ("SWAPDB", "0", "1"), ("FLUSHDB",),
                 ("MULTI",), ("DISCARD",), ("WATCH", "z"), ("DEBUG", "SET-ACTIVE-EXPIRE", "0"), ("RESET",)),
    # --- scripts
    "eval": seq(("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "{t}k", "v"),
                ("EVAL", "return {1, 'a', {2}, redis.call('get', KEYS[1]), true, false, 3.5}", "1", "{t}k"),
                ("EVAL", "redis.setresp(3) return redis.call('hgetall', ARGV[1])", "0", "h"),
                ("EVAL", "return redis.pcall('incr', KEYS[1])", "1", "{t}k"),
                ("EVAL", "return {err='E x'}", "0"), ("EVAL", "return redis.status_reply('S')", "0"),
                ("EVAL", "return cjson.encode({a={1,2}})", "0"), ("EVAL", "return cmsgpack.unpack(ARGV[1])", "0",
                                                                    b"\x93\x01\xa1a\xc0"),
                ("EVAL", "return bit.bxor(5, 3)", "0"),
                ("EVAL", "return {struct.unpack('>I2 s c0', struct.pack('>I2 s b c0', 7, 'ab', 2, 'xy'))}", "0"),
                ("EVAL", "return struct.pack(ARGV[1], 1, 2)", "0", "!4 b i3 x d"), ("EVAL", "return redis.call('get', ARGV[1])", "0", "u"),
                ("SCRIPT", "LOAD", "return 1"), ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
                ("EVALSHA_RO", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"),
                ("EVAL_RO", "return redis.call('set', 'x', 1)", "0"), ("SCRIPT", "EXISTS", "x", "y"),
                ("SCRIPT", "FLUSH", "ASYNC"), ("SCRIPT", "KILL"), ("SCRIPT", "HELP"), ("SCRIPT", "DEBUG", "NO")),
    "functions": seq(("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function(keys, args) "
                                          "return redis.call('incr', keys[1]) end)\n"
                                          "redis.register_function{function_name='g', callback=function() return 1 end, "
                                          "flags={'no-writes'}, description='d'}"),
                     ("FCALL", "f", "1", "k"), ("FCALL_RO", "g", "0"), ("FCALL_RO", "f", "1", "k"), ("FCALL", "x", "0"),
                     ("FCALL", "f", "-1"), ("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "l*"), ("FUNCTION", "STATS"),
                     ("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nreturn 1"), ("FUNCTION", "LOAD", "#!lua name=x"),
                     ("FUNCTION", "LOAD", "#!lua name=y\nredis.register_function('h', function() while true do end end)"),
                     ("FCALL", "h", "0"), ("FUNCTION", "KILL"), ("FUNCTION", "DELETE", "lib"), ("FUNCTION", "FLUSH"),
                     ("FUNCTION", "HELP")),
    "eval_errors": seq(("EVAL", "return (", "0"), ("EVAL", "x = 1", "0"), ("EVAL", "return nope", "0"),
                       ("EVAL", "error('e')", "0"), ("EVAL", "return redis.call()", "0"),
                       ("EVAL", "return redis.call('nosuch')", "0"), ("EVAL", "return 1", "5"),
                       ("EVAL", "return 1", "-1"), ("EVAL", "return 1", "x"), ("EVALSHA", "abc", "0"),
                       ("EVAL", "#!lua flags=no-writes,bogus\nreturn 1", "0"), ("EVAL", "#!lua", "0"),
                       ("EVAL", "local t = {} t[1] = t return t", "0"), ("EVAL", "while true do end", "0"),
                       ("EVAL", "return string.rep('x', 2^30)", "0"), ("EVAL", "rawset(_G, 'a', 1)", "0"),
                       ("EVAL", "return loadstring(string.dump(function() end))", "0"),
                       ("EVAL", "local function f(n) return f(n + 1) end return f(1)", "0"),
                       ("EVAL", "return redis.call('blpop', 'q', 0)", "0"), ("EVAL",),
                       ("MULTI",), ("EVAL", "return redis.call('incr', ARGV[1])", "0", "n"), ("EXEC",)),
    "geo": seq(("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"),
               ("GEOADD", "g", "NX", "CH", "200", "100", "bad"), ("GEODIST", "g", "Palermo", "Catania", "km"),
               ("GEOHASH", "g", "Palermo", "nope"), ("GEOPOS", "g", "Catania", "nope"),
               ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC", "COUNT", "1", "ANY",
                "WITHCOORD", "WITHDIST", "WITHHASH"),
               ("GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "DESC"),
               ("GEOSEARCHSTORE", "{g}d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "mi", "STOREDIST"),
               ("GEORADIUS", "g", "15", "37", "100", "km", "STORE", "{g}e"),
               ("GEORADIUSBYMEMBER_RO", "g", "Palermo", "1", "ft", "WITHDIST"), ("GEODIST", "g", "a", "b", "parsec")),
    "lists": seq(("RPUSH", "l", "a", "b", "c", "1", "2"), ("LPUSH", "l", "x", "y"), ("LPUSHX", "l", "z"),
                 ("RPUSHX", "nope", "z"), ("LLEN", "l"), ("LINDEX", "l", "0"), ("LINDEX", "l", "-1"),
                 ("LINDEX", "l", "99"), ("LSET", "l", "1", "set"), ("LSET", "l", "99", "v"), ("LRANGE", "l", "0", "-1"),
                 ("LRANGE", "l", "-3", "100"), ("LTRIM", "l", "1", "-2"), ("LREM", "l", "0", "a"),
                 ("LINSERT", "l", "BEFORE", "b", "new"), ("LINSERT", "l", "AFTER", "nope", "v"),
                 ("LPOS", "l", "b", "RANK", "-1", "COUNT", "0", "MAXLEN", "5"), ("LPOP", "l", "2"), ("RPOP", "l"),
                 ("LMOVE", "l", "m", "LEFT", "RIGHT"), ("RPOPLPUSH", "m", "l"), ("LMPOP", "2", "nope", "l", "LEFT",
                 "COUNT", "9"), ("EXISTS", "l"), ("LPOP", "nope", "0")),
    "lists_encodings": seq(("CONFIG", "SET", "list-max-listpack-size", "3"), ("RPUSH", "q", "1", "2", "3", "4", "5"),
                           ("OBJECT", "ENCODING", "q"), ("LINSERT", "q", "AFTER", "3", "x" * 70),
                           ("LRANGE", "q", "0", "-1"), ("LTRIM", "q", "0", "1"), ("OBJECT", "ENCODING", "q"),
                           ("CONFIG", "SET", "list-max-listpack-size", "-1"), ("RPUSH", "r", "y" * 5000),
                           ("RPUSH", "r", "z"), ("OBJECT", "ENCODING", "r"), ("LREM", "r", "-1", "z"),
                           ("LSET", "r", "0", SMALL), ("LPOS", "r", SMALL), ("MEMORY", "USAGE", "r")),
    "lists_compressed": seq(("CONFIG", "SET", "list-max-listpack-size", "4"), ("CONFIG", "SET", "list-compress-depth", "1"),
                            ("RPUSH", "c", *["item-item-item-item-item-item-item-item-%d" % i for i in range(24)]),
                            ("LINDEX", "c", "10"), ("LSET", "c", "10", "x"), ("LINSERT", "c", "BEFORE", "x", "y" * 60),
                            ("LREM", "c", "0", "y" * 60), ("LRANGE", "c", "5", "15"), ("LPOS", "c", "x"),
                            ("LTRIM", "c", "1", "-2"), ("LPOP", "c", "9"), ("MEMORY", "USAGE", "c"), ("COPY", "c", "d"),
                            ("RPOP", "d", "20"), ("OBJECT", "ENCODING", "c")),
    "lists_errors": seq(("SET", "s", "v"), ("LPUSH", "s", "a"), ("LPOP", "s"), ("LRANGE", "s", "0", "1"),
                        ("BLPOP", "s", "0"), ("LPUSH", "l", "a"), ("LPOP", "l", "-1"), ("LINDEX", "l", "x"),
                        ("LPOS", "l", "a", "RANK", "0"), ("LPOS", "l", "a", "COUNT", "-1"), ("LINSERT", "l", "UP", "a", "b"),
                        ("LMOVE", "l", "s", "LEFT", "LEFT"), ("LMOVE", "l", "l", "UP", "LEFT"), ("LMPOP", "0", "l", "LEFT"),
                        ("LMPOP", "1", "l", "LEFT", "COUNT", "0"), ("BLPOP", "l", "-1"), ("BLPOP", "l", "nan"),
                        ("BLPOP", "l", "inf"), ("BLMPOP", "0", "2", "l", "LEFT"), ("CLIENT", "UNBLOCK", "x"),
                        ("CLIENT", "UNBLOCK", "1", "later"), ("LPUSH", "l")),
    "blocking": seq(("BLPOP", "q", "q2", "0.001"), ("RPUSH", "q", "a", "b"), ("BLPOP", "q", "0"),
                    ("BRPOP", "q2", "q", "0.01"), ("BLMOVE", "{t}src", "{t}dst", "LEFT", "RIGHT", "0.001"),
                    ("RPUSH", "{t}src", "m"), ("BLMOVE", "{t}src", "other", "RIGHT", "LEFT", "1"),
                    ("BRPOPLPUSH", "other", "{t}dst", "0"), ("BLMPOP", "0.001", "2", "a", "b", "RIGHT", "COUNT", "2"),
                    ("RPUSH", "b", "1", "2", "3"), ("BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "2"),
                    ("CLIENT", "UNBLOCK", "1"), ("CLIENT", "LIST"), ("INFO", "clients"), ("BLPOP", "forever", "0"),
                    ("GET", "after")),
    # --- hashes
    "hashes": seq(("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "3", "c", "4"), ("HSETNX", "h", "a", "9"),
                  ("HSETNX", "h", "d", "5"), ("HMSET", "h", "e", "6", "f", "7"), ("HGET", "h", "a"), ("HGET", "h", "z"),
                  ("HMGET", "h", "a", "z", "b"), ("HLEN", "h"), ("HSTRLEN", "h", "a"), ("HSTRLEN", "h", "z"),
                  ("HEXISTS", "h", "a"), ("HEXISTS", "h", "z"), ("HGETALL", "h"), ("HKEYS", "h"), ("HVALS", "h"),
                  ("HDEL", "h", "a", "z", "a"), ("HDEL", "h", "b", "c", "d", "e", "f"), ("EXISTS", "h"),
                  ("HGETALL", "nope"), ("HLEN", "nope"), ("HDEL", "nope", "a"), ("HSET", "h", "", "")),
    "hashes_errors": seq(("SET", "str", "v"), ("HSET", "str", "a", "1"), ("HGET", "str", "a"), ("HGETALL", "str"),
                         ("HINCRBY", "str", "a", "1"), ("HRANDFIELD", "str"), ("HSCAN", "str", "0"),
                         ("HSET", "h", "a"), ("HSET", "h", "a", "1", "b"), ("HMSET", "h", "a"), ("HSETNX", "h", "a"),
                         ("HGET", "h"), ("HMGET", "h"), ("HDEL", "h"), ("HLEN",), ("HSTRLEN", "h"), ("HEXISTS", "h"),
                         ("HGETALL",), ("HKEYS", "h", "x"), ("HVALS",), ("HINCRBY", "h", "a"), ("HINCRBYFLOAT", "h"),
                         ("HRANDFIELD",), ("HSCAN", "h"), ("HSET", "h", "a", "1"), ("GET", "h"), ("SADD", "h", "x"),
                         ("SMEMBERS", "h"), ("HGETALL", "h")),
    "hashes_incr": seq(("HINCRBY", "h", "n", "5"), ("HINCRBY", "h", "n", "-10"), ("HINCRBY", "h", "n", BIG),
                       ("HINCRBY", "h", "n", SMALL), ("HSET", "h", "m", BIG), ("HINCRBY", "h", "m", "1"),
                       ("HINCRBY", "h", "n", "x"), ("HINCRBY", "h", "n", "1.5"), ("HSET", "h", "s", "abc"),
                       ("HINCRBY", "h", "s", "1"), ("HINCRBYFLOAT", "h", "f", "1.5"),
                       ("HINCRBYFLOAT", "h", "f", "1e308"),
                       ("HINCRBYFLOAT", "h", "f", "1e308"), ("HINCRBYFLOAT", "h", "f", "inf"),
                       ("HINCRBYFLOAT", "h", "f", "nan"), ("HINCRBYFLOAT", "h", "f", "x"),
                       ("HINCRBYFLOAT", "h", "s", "1"), ("HINCRBYFLOAT", "h", "n", "0.1"),
                       ("HINCRBYFLOAT", "h", "g", "5.0e3"),
                       ("HINCRBYFLOAT", "h", "x" * 70, "1"), ("OBJECT", "ENCODING", "h"), ("HGETALL", "h")),
    "hashes_encodings": seq(("HSET", "h", "a", "1"), ("OBJECT", "ENCODING", "h"), ("HSET", "h", "b", "v" * 65),
                            ("OBJECT", "ENCODING", "h"), ("HSET", "k", "f" * 65, "1"), ("OBJECT", "ENCODING", "k"),
                            ("CONFIG", "SET", "hash-max-listpack-entries", "2"),
                            ("CONFIG", "SET", "hash-max-listpack-value", "3"), ("HSET", "s", "a", "1", "b", "2"),
                            ("HSET", "s", "c", "3"), ("OBJECT", "ENCODING", "s"), ("HSET", "t", "abcd", "1"),
                            ("CONFIG", "SET", "hash-max-ziplist-entries", "0"), ("HSET", "u", "a", "1"),
                            ("OBJECT", "ENCODING", "u")),
    "hashes_random": seq(("HSET", "h", "a", "1", "b", "2", "c", "3"), ("HRANDFIELD", "h"), ("HRANDFIELD", "h", "2"),
                         ("HRANDFIELD", "h", "10"), ("HRANDFIELD", "h", "-5"), ("HRANDFIELD", "h", "0"),
                         ("HRANDFIELD", "h", "2", "WITHVALUES"), ("HRANDFIELD", "h", "-4", "WITHVALUES"),
                         ("HRANDFIELD", "h", "-" + BIG, "WITHVALUES"), ("HRANDFIELD", "h", SMALL),
                         ("HRANDFIELD", "h", "1", "WITHVALUE"), ("HRANDFIELD", "h", "1", "WITHVALUES", "x"),
                         ("HRANDFIELD", "h", "x"), ("HRANDFIELD", "nope"), ("HRANDFIELD", "nope", "-3"),
                         ("CONFIG", "SET", "hash-max-listpack-entries", "4"),
                         ("HSET", "w", *[x for i in range(40) for x in ("f%d" % i, "v")]), ("HRANDFIELD", "w", "30"),
                         ("HRANDFIELD", "w", "5", "WITHVALUES"), ("HRANDFIELD", "w", "-50", "WITHVALUES")),
    "hashes_scan": seq(("CONFIG", "SET", "hash-max-listpack-entries", "8"),
                       ("HSET", "h", *[x for i in range(60) for x in ("f%d" % i, str(i))]), ("HSCAN", "h", "0"),
                       ("HSCAN", "h", "0", "COUNT", "50", "MATCH", "f1*"), ("HSCAN", "h", "0", "NOVALUES"),
                       ("HSCAN", "h", "0", "COUNT", "0"), ("HSCAN", "h", "abc"), ("HSCAN", "nope", "0", "MATCH", "*"),
                       ("HSET", "s", "a", "1"), ("HSCAN", "s", "0", "MATCH", "a", "COUNT", "1", "NOVALUES")),
    "hashes_field_expiry": seq(("HSET", "h", "a", "1", "b", "2", "c", "3"), ("HEXPIRE", "h", "100", "FIELDS", "2", "a", "z"),
                               ("HPEXPIRE", "h", "1", "NX", "FIELDS", "1", "b"), ("HEXPIREAT", "h", "0", "FIELDS", "1", "c"),
                               ("HPEXPIREAT", "h", "70368744177664", "FIELDS", "1", "a"),
                               ("HEXPIRE", "h", "-1", "FIELDS", "1", "a"), ("HEXPIRE", "h", "5", "NX", "XX", "FIELDS", "1", "a"),
                               ("HEXPIRE", "h", "5", "FIELDS", "0", "a"), ("HEXPIRE", "h", "5", "FIELDS", "2", "a"),
                               ("HTTL", "h", "FIELDS", "2", "a", "b"), ("HPTTL", "h", "FIELDS", "1", "a"),
                               ("HEXPIRETIME", "h", "FIELDS", "1", "a"), ("HPEXPIRETIME", "h", "FIELDS", "x", "a"),
                               ("HPERSIST", "h", "FIELDS", "1", "a"), ("HGETDEL", "h", "FIELDS", "2", "a", "a"),
                               ("HGETEX", "h", "EX", "10", "FIELDS"), ("HGETEX", "h", "PXAT", "1", "FIELDS", "1", "b"),
                               ("HGETEX", "h", "PERSIST", "FIELDS", "1", "b"),
                               ("HSETEX", "h", "FNX", "KEEPTTL", "FIELDS", "1", "d", "4"),
                               ("HSETEX", "h", "EX", "1", "PX", "1", "FIELDS", "1", "d", "4"),
                               ("HSETEX", "h", "FXX", "PX", "1", "FIELDS", "2", "d", "5", "e", "6"),
                               ("HSETEX", "h", "BOGUS", "FIELDS", "1", "d", "4"), ("OBJECT", "ENCODING", "h"),
                               ("CONFIG", "SET", "hash-max-listpack-entries", "2"),
                               ("HSETEX", "g", "PX", "1", "FIELDS", "3", "a", "1", "b", "2", "c", "3"),
                               ("COPY", "h", "h2"), ("RENAME", "h", "h3"), ("HGETALL", "h3"), ("HLEN", "h2")),
    # --- sets and hashes with the key commands
    "containers_keys": seq(("SADD", "{t}s", "a", "1"), ("HSET", "{t}h", "f", "v"), ("TYPE", "{t}s"), ("TYPE", "{t}h"),
                           ("COPY", "{t}s", "{t}s2"), ("COPY", "{t}h", "{t}h2", "DB", "1"),
                           ("RENAME", "{t}s2", "{t}s3"),
                           ("MOVE", "{t}h", "2"), ("EXPIRE", "{t}s", "100"), ("TTL", "{t}s"), ("PERSIST", "{t}s"),
                           ("OBJECT", "REFCOUNT", "{t}s"), ("OBJECT", "IDLETIME", "{t}h2"), ("OBJECT", "FREQ", "{t}s"),
                           ("MEMORY", "USAGE", "{t}s"), ("SCAN", "0", "TYPE", "set"), ("SCAN", "0", "TYPE", "hash"),
                           ("KEYS", "*"), ("MGET", "{t}s", "{t}h2"), ("DEL", "{t}s", "{t}s3"), ("SWAPDB", "0", "1"),
                           ("HGETALL", "{t}h2"), ("FLUSHALL",)),
    "containers_resp3": seq(("HELLO", "3"), ("SADD", "s", "1", "a"), ("SMEMBERS", "s"), ("SINTER", "s", "s"),
                            ("SUNION", "s", "nope"), ("SDIFF", "s", "nope"), ("SPOP", "s", "1"), ("SPOP", "nope", "1"),
                            ("SRANDMEMBER", "s", "-2"), ("HSET", "h", "f", "v", "g", "w"), ("HGETALL", "h"),
                            ("HGETALL", "nope"), ("HRANDFIELD", "h", "-3", "WITHVALUES"), ("HRANDFIELD", "nope"),
                            ("HGET", "h", "z"), ("HMGET", "h", "f", "z"), ("HINCRBYFLOAT", "h", "n", "2.5"),
                            ("SSCAN", "s", "0"), ("HSCAN", "h", "0")),
    "containers_maxmemory": seq(("SADD", "s", "a"), ("HSET", "h", "f", "v"), ("SADD", "s", "b", "c"),
                                ("HSET", "h", "g", "w"), ("SREM", "s", "a"), ("HDEL", "h", "f"), ("SPOP", "s"),
                                ("SINTERSTORE", "d", "s", "s"), ("SMOVE", "s", "t", "b"), ("HINCRBY", "h", "n", "1"),
                                ("HSETNX", "h", "x", "1"), ("DBSIZE",)),
    # --- connection and server
    "connection": seq(("PING",), ("PING", "hi"), ("ECHO", "x"), ("SELECT", "15"), ("SELECT", "16"),
                      ("SELECT", "-1"), ("CLIENT", "SETNAME", "fuzz"), ("CLIENT", "GETNAME"), ("CLIENT", "ID"),
                      ("CLIENT", "INFO"), ("CLIENT", "LIST"), ("CLIENT", "SETINFO", "LIB-NAME", "x"),
                      ("CLIENT", "SETNAME", "has space"), ("CLIENT", "KILL", "ID", "999"),
                      ("CLIENT", "HELP"), ("AUTH", "pw"), ("RESET",)),
    "hello_resp3": seq(("HELLO", "3"), ("SET", "k", "v"), ("GET", "k"), ("CONFIG", "GET", "hz"),
                       ("INCRBYFLOAT", "f", "1"), ("HELLO", "2", "SETNAME", "n"), ("HELLO", "4"), ("HELLO", "x")),
    "server": seq(("INFO",), ("INFO", "all"), ("INFO", "keyspace", "memory"), ("DBSIZE",), ("TIME",),
                  ("COMMAND", "COUNT"), ("COMMAND", "INFO", "get", "nope"), ("COMMAND", "DOCS", "set"),
                  ("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"), ("COMMAND", "LIST"),
                  ("DEBUG", "SLEEP", "0")),
    "config": seq(("CONFIG", "GET", "*"), ("CONFIG", "SET", "hz", "100"), ("CONFIG", "SET", "maxmemory", "1mb"),
                  ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
                  ("CONFIG", "SET", "client-output-buffer-limit", "normal 1kb 512 1"),
                  ("CONFIG", "SET", "timeout", "x"), ("CONFIG", "SET", "port", "1"), ("CONFIG", "RESETSTAT")),
    "maxmemory_eviction": seq(("CONFIG", "SET", "maxmemory", "1"), ("SET", "a", "1"),
                              ("CONFIG", "SET", "maxmemory-policy", "allkeys-random"), ("SET", "b", "2"),
                              ("CONFIG", "SET", "maxmemory-policy", "volatile-ttl"), ("SET", "c", "3", "EX", "9"),
                              ("CONFIG", "SET", "maxmemory", "0")),
    "pubsub": seq(("SUBSCRIBE", "a", "b"), ("PSUBSCRIBE", "a*"), ("PING",), ("PING", "x"), ("GET", "k"),
                  ("PUBLISH", "a", "m"), ("UNSUBSCRIBE", "a", "zz"), ("UNSUBSCRIBE",), ("PUNSUBSCRIBE",),
                  ("UNSUBSCRIBE",), ("PUBLISH", "a", "m"), ("PUBSUB", "CHANNELS"), ("PUBSUB", "NUMSUB", "a"),
                  ("PUBSUB", "NUMPAT"), ("PUBSUB", "CHANNELS", "a", "b"), ("PUBSUB", "HELP"),
                  ("SUBSCRIBE", "c"), ("RESET",), ("CLIENT", "LIST", "TYPE", "pubsub")),
    "pubsub_resp3": seq(("HELLO", "3"), ("SUBSCRIBE", "a"), ("PSUBSCRIBE", "*"), ("SET", "k", "v"),
                        ("PUBLISH", "a", "self"), ("PUBLISH", "b", "pattern"), ("CLIENT", "KILL", "TYPE", "pubsub"),
                        ("CONFIG", "SET", "client-output-buffer-limit", "pubsub 100 50 0"),
                        ("PUBLISH", "a", "x" * 200), ("PUBLISH", "a", "again")),
    "tiny_maxmemory": seq(("SET", "a", "1"), ("SET", "b", "x" * 100, "EX", "100"), ("MSET", "c", "1", "d", "2"),
                          ("INCR", "n"), ("APPEND", "a", "more"), ("GET", "a"), ("DBSIZE",), ("INFO", "stats"),
                          ("SETRANGE", "e", "100", "x"), ("COPY", "b", "f"), ("GETEX", "b", "PERSIST")),
    "quit_midway": seq(("SET", "a", "1"), ("QUIT",), ("GET", "a")),
    "shutdown": seq(("SET", "a", "1"), ("SHUTDOWN", "NOSAVE")),
    "unknown": seq(("NOSUCH",), ("get",), ("GeT", "k"), ("CLIENT",), ("CLIENT", "NOPE")),
    # --- framing
    "inline": b"".join([inline("SET", "k", '"a b"'), inline("GET", "k"), inline("PING"), b"\r\n",
                        inline("SET", "q", "'x\\'y'"), inline("ECHO", '"\\x41\\n"'), inline("SET", '"unbalanced')]),
    "inline_lf_only": b"PING\nSET k v\nGET k\n",
    "pipeline_mixed": seq(*[("SET", "k%d" % i, i) for i in range(20)]) + inline("MGET", "k1", "k2") +
    seq(*[("INCR", "k%d" % i) for i in range(20)]),
    "resp_empty_multibulk": b"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n",
    "bad_multibulk_len": b"*x\r\n",
    "bad_multibulk_huge": b"*2147483648\r\n",
    "bad_bulk_len": b"*1\r\n$x\r\n",
    "bad_bulk_negative": b"*1\r\n$-5\r\n",
    "bad_bulk_huge": b"*2\r\n$3\r\nGET\r\n$999999999999\r\n",
    "bad_bulk_over_proto_max": b"*2\r\n$3\r\nGET\r\n$2000000\r\nabc",
    "bad_missing_dollar": b"*2\r\n$3\r\nGET\r\nk\r\n",
    "bad_bulk_no_crlf": b"*1\r\n$4\r\nPINGxx",
    "truncated": b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab",
    "nul_bytes": resp("SET", b"k\x00ey", b"v\x00\xff") + resp("GET", b"k\x00ey"),
    "bytewise_pipeline": seq(("SET", "k", "v"), ("GET", "k"), ("DEL", "k")),
    # --- large values: from 64 bytes a bulk argument is read into a block of
    # its own (the harness lowers the threshold), from 1 KB a value is
    # replied by reference; the value changes while replies of it wait.
    "big_args": seq(("SET", "k", "a" * 200, "EX", "100"), ("GET", "k"), ("MSET", "x", "b" * 100, "y", "c" * 150),
                    ("MGET", "x", "y"), ("ECHO", "e" * 300), ("SET", "K" * 100, "v"), ("GET", "K" * 100),
                    ("SETNX", "x", "d" * 90), ("GETSET", "y", "f" * 80), ("APPEND", "z", "g" * 70),
                    ("SET", "k", "h" * 120, "BADOPTION"), ("SETEX", "s", "10", "i" * 64)),
    "big_args_bytewise": seq(("SET", "k", "a" * 200), ("MSET", "x", "b" * 100, "y", "c" * 150), ("GET", "k"),
                             ("PING",)),
    "lent_values": seq(("SET", "k", "v" * 1100), ("GET", "k"), ("GET", "k"), ("SET", "k", "w" * 1200),
                       ("GET", "k"), ("SETRANGE", "k", "5", "XYZ"), ("GET", "k"), ("APPEND", "k", "tail"),
                       ("GET", "k"), ("GETDEL", "k"), ("SET", "k", "u" * 1300), ("SET", "k", "t" * 1024, "GET"),
                       ("GETSET", "k", "s"), ("SET", "k", "r" * 1500), ("GETEX", "k", "PX", "1"),
                       ("MGET", "k", "k"), ("FLUSHALL",)),
    # --- DUMP / RESTORE and snapshots
    "dump_restore": seq(("SET", "s", "hello"), ("DUMP", "s"), ("RPUSH", "l", "a", "1"), ("DUMP", "l"),
                        ("RESTORE", "r1", "0", payload(b"\x00\x05hello")),
                        ("RESTORE", "r2", "1000", payload(b"\x01\x02\x01a\xc0\x07"), "REPLACE", "IDLETIME", "5"),
                        ("RESTORE", "r2", "0", payload(b"\x02\x01\x01m"), "REPLACE", "ABSTTL", "FREQ", "3"),
                        ("RESTORE", "r3", "0", payload(b"\x10\x0d\x0d\x00\x00\x00\x02\x00\x81f\x02\x81v\x02\xff")),
                        ("RESTORE", "r4", "0", payload(b"\x05\x01\x01m\x00\x00\x00\x00\x00\x00\xf0\x3f")),
                        ("RESTORE", "bad", "0", b"\x00\x05hello\x0a\x00" + b"\x00" * 8),
                        ("RESTORE", "bad", "-1", payload(b"\x00\x01x")), ("DUMP", "nope"),
                        ("FUNCTION", "DUMP"), ("FUNCTION", "RESTORE", payload(b""), "FLUSH"),
                        ("LASTSAVE",), ("BGSAVE", "SCHEDULE"), ("BGSAVE",), ("SAVE",), ("DBSIZE",)),
    "acl": seq(("ACL", "SETUSER", "u", "on", ">p", "#" + "a" * 64, "<p", "~k*", "%R~r*", "%W~w*", "&c*",
                "+@string", "-incr", "+client|id", "+select|0", "(+get ~s*)", "(", "+set", "~t*", ")"),
               ("ACL", "SETUSER", "v", "on", "nopass", "allkeys", "allcommands", "-@dangerous", "resetchannels"),
               ("ACL", "GETUSER", "u"), ("ACL", "LIST"), ("ACL", "USERS"), ("ACL", "CAT", "string"),
               ("ACL", "DRYRUN", "u", "GET", "zz"), ("ACL", "GENPASS", "17"), ("ACL", "SETUSER", "u", "bogus"),
               ("ACL", "SETUSER", "u", "(~x"), ("AUTH", "u", "p"), ("AUTH", "v", "x"), ("GET", "k1"),
               ("SET", "r1", "x"), ("INCR", "k1"), ("SELECT", "1"), ("MULTI",), ("SET", "k2", "v"), ("INCR", "k2"),
               ("EXEC",), ("EVAL", "return redis.call('get', KEYS[1])", "1", "k3"), ("SORT", "k1", "BY", "w*"),
               ("PUBLISH", "x", "m"), ("ACL", "LOG", "5"), ("ACL", "WHOAMI"), ("RESET",),
               ("CONFIG", "SET", "requirepass", "pw"), ("AUTH", "bad"), ("PING",), ("AUTH", "pw"),
               ("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "n"), ("ACL", "DELUSER", "u", "v"),
               ("ACL", "LOG", "RESET"), ("ACL", "SAVE"), ("CONFIG", "SET", "requirepass", "")),
    "lent_pipeline": seq(("SET", "k", "p" * 1100), *[("GET", "k")] * 130, ("DEL", "k"), ("GET", "k")),
    # The primary's side of replication (docs/replication.md): the handshake
    # one reply at a time would need a reader; pipelined, PSYNC is refused
    # for pending output, then the same connection asks again alone later.
    "replication": seq(("REPLCONF", "listening-port", "1", "capa", "eof", "capa", "psync2"), ("SET", "a", "1"),
                       ("PSYNC", "?", "-1"), ("ROLE",), ("WAIT", "0", "0"), ("PSYNC", "x", "y"),
                       ("REPLCONF", "ip-address", "1.2.3.4", "rdb-only", "2"), ("MULTI",), ("WAIT", "2", "0"),
                       ("EXEC",), ("WAIT", "1", "5"), ("REPLCONF", "ACK", "5"), ("SYNC",), ("SET", "b", "2"),
                       ("REPLCONF", "ACK", "9"), ("REPLCONF", "GETACK", "*")),
    # Fed a byte at a time (the harness drains the replies between), so that
    # REPLCONF's reply is out before PSYNC arrives: a full resync, the
    # snapshot to this connection from the BGSAVE thread, then the stream.
    "replication_full_sync": seq(("REPLCONF", "capa", "eof", "capa", "psync2"), ("PSYNC", "?", "-1"),
                                 ("SET", "s", "1"), ("REPLCONF", "ACK", "1"), ("WAIT", "1", "5")),
    # The same without capa eof: a disk-based sync (the file, then
    # `$<length>` and its bytes from the BGSAVE thread).
    "replication_disk_sync": seq(("REPLCONF", "capa", "psync2"), ("PSYNC", "?", "-1"), ("SET", "s", "1"),
                                 ("REPLCONF", "ACK", "1")),
}
SEEDS_BYTEWISE = {"bytewise_pipeline", "big_args_bytewise", "replication_full_sync", "replication_disk_sync"}
# Seeds run under each tiny-memory policy (harness bits 4-6).
SEEDS_MAXMEMORY = {"tiny_maxmemory", "containers_maxmemory"}

# Words the fuzzer may splice in: command and subcommand names, options,
# numbers at the edges, RESP framing.
DICT_WORDS = sorted(set("""
psync sync replconf wait role capa eof psync2 rdb-only listening-port ip-address ack getack ? repl-diskless-sync
acl setuser getuser deluser users whoami cat genpass dryrun log nopass resetpass allkeys resetkeys
allchannels resetchannels allcommands nocommands clearselectors sanitize-payload skip-sanitize-payload
on off ~* &* %R~ %W~ %RW~ +@all -@all +@read -@write +@dangerous requirepass protected-mode acllog-max-len
pfadd pfcount pfmerge pfdebug pfselftest getreg decode todense hll-sparse-max-bytes HYLL
sort sort_ro by get store alpha desc asc limit nosort # ->
xadd xlen xrange xrevrange xdel xtrim xsetid xgroup xreadgroup xread xack xpending xclaim xautoclaim xinfo
nomkstream maxlen minid entriesadded maxdeletedid mkstream entriesread createconsumer delconsumer destroy setid
streams group noack block idle time retrycount force justid lastid full consumers groups stream ~ $ > 0-0 *
multi exec discard watch unwatch eval evalsha eval_ro evalsha_ro script load exists flush kill
dump restore absttl idletime freq save bgsave lastsave schedule
function fcall fcall_ro register_function function_name callback description withcode libraryname stats
busy-reply-threshold lua-time-limit set-active-expire redis.call redis.pcall redis.setresp
redis.error_reply redis.status_reply redis.sha1hex redis.log KEYS ARGV cjson cmsgpack bit struct
return local function end while do for then if nil true false pcall error loadstring #!lua flags=
no-writes allow-oom allow-stale no-cluster allow-cross-slot-keys
append auth client getname help id info kill list setinfo setname command count docs getkeys config get
resetstat set copy dbsize debug decr decrby del echo exists expire expireat expiretime flushall flushdb
getdel getex getrange getset hello incr incrby incrbyfloat keys memory malloc-stats purge stats usage mget
move mset msetnx object encoding freq idletime refcount persist pexpire pexpireat pexpiretime ping psetex
pttl quit randomkey rename renamenx reset scan select setex setnx setrange shutdown strlen substr swapdb
time touch ttl type unlink nx xx gt lt ex px exat pxat keepttl persist match replace db async sync
nosave save now force abort samples lib-name lib-ver skipme maxage laddr addr user normal pubsub
maxmemory maxmemory-policy allkeys-lru allkeys-lfu volatile-ttl hz timeout client-output-buffer-limit
proto-max-bulk-len client-query-buffer-limit enable-debug-command sleep string
subscribe unsubscribe psubscribe punsubscribe publish pubsub channels numsub numpat shardchannels shardnumsub
sadd srem scard sismember smismember smembers srandmember spop smove sinter sintercard sinterstore sunion
sunionstore sdiff sdiffstore sscan limit set intset listpack hashtable
hset hsetnx hmset hget hmget hdel hlen hstrlen hexists hgetall hkeys hvals hincrby hincrbyfloat hrandfield hscan
withvalues novalues hash set-max-intset-entries set-max-listpack-entries set-max-listpack-value
hash-max-listpack-entries hash-max-listpack-value hash-max-ziplist-entries hash-max-ziplist-value
hexpire hpexpire hexpireat hpexpireat httl hpttl hexpiretime hpexpiretime hpersist hgetdel hgetex hsetex
fields fnx fxx listpackex
lpush rpush lpushx rpushx lpop rpop llen lindex lset lrange ltrim lrem linsert lpos lmove rpoplpush lmpop
blpop brpop blmove brpoplpush blmpop left right before after rank maxlen unblock error quicklist
list-max-listpack-size list-max-ziplist-size list-compress-depth
zadd zincrby zrem zcard zscore zmscore zrank zrevrank zcount zlexcount zrange zrangestore zrangebyscore
zrevrangebyscore zrangebylex zrevrangebylex zrevrange zremrangebyrank zremrangebyscore zremrangebylex zpopmin
zpopmax zmpop bzpopmin bzpopmax bzmpop zrandmember zscan zunion zunionstore zinter zinterstore zintercard zdiff
zdiffstore ch incr withscore withscores byscore bylex rev weights aggregate sum min max skiplist
zset-max-listpack-entries zset-max-listpack-value inf -inf +inf
geoadd geodist geohash geopos geosearch geosearchstore georadius georadiusbymember georadius_ro
georadiusbymember_ro frommember fromlonlat byradius bybox asc desc any withcoord withdist withhash store storedist
m km mi ft
setbit getbit bitcount bitpos bitop bitfield bitfield_ro and or xor not bit byte overflow wrap sat fail
u8 i8 u63 i64 #0
""".split()))
DICT_RAW = ["\r\n", "*1\r\n", "*2\r\n", "*3\r\n", "$1\r\n", "$-1\r\n", "$0\r\n\r\n",
            "9223372036854775807", "-9223372036854775808", "18446744073709551616", "4294967296",
            "536870912", "1e308", "-inf", "nan", "0x7f", "{tag}"]


# The config fuzzer's seeds: config files as redis.conf writes them.
CONFIG_CORPUS = os.path.join(HERE, "corpus", "config")
CONFIG_SEEDS = {
    "defaults": b"port 6379\nbind 127.0.0.1 -::1\ndatabases 16\nhz 10\nloglevel notice\n",
    "everything": b"""# comment
port 7000
bind 127.0.0.1 ::1
unixsocket /tmp/x.sock
unixsocketperm 700
databases 4
threads 2
maxclients 100
timeout 30
tcp-keepalive 60
tcp-backlog 128
loglevel warning
proto-max-bulk-len 2mb
client-query-buffer-limit 1gb
client-output-buffer-limit normal 1mb 512kb 10
client-output-buffer-limit replica 256mb 64mb 60 pubsub 32mb 8mb 60
hz 100
maxmemory 100mb
maxmemory-policy allkeys-lfu
maxmemory-samples 10
lfu-log-factor 5
lfu-decay-time 2
enable-debug-command local
hash-max-listpack-entries 256
hash-max-listpack-value 32
set-max-intset-entries 1024
set-max-listpack-entries 64
set-max-listpack-value 16
save ""
appendonly no
""",
    "quoting": b"""logfile "a b\\x41\\n"
pidfile 'it\\'s'
bind "127.0.0.1" '::1'
loglevel "unbalanced
""",
    "bad_values": b"port abc\nhz -1\nmaxmemory 1zb\nclient-output-buffer-limit normal 1 2\n",
    "encodings": b"hash-max-ziplist-entries 0\nhash-max-ziplist-value 0\nset-max-intset-entries 0\n"
                 b"set-max-listpack-entries 9223372036854775807\nset-max-listpack-value -1\n"
                 b"hash-max-listpack-entries 1k\n",
}


def main():
    shutil.rmtree(CONFIG_CORPUS, ignore_errors=True)
    os.makedirs(CONFIG_CORPUS)
    for name, body in CONFIG_SEEDS.items():
        with open(os.path.join(CONFIG_CORPUS, name), "wb") as f:
            f.write(body)
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    for name, body in SEEDS.items():
        mode = BYTEWISE if name in SEEDS_BYTEWISE else WHOLE
        # Each seed with one worker, and with two (keys then live on both).
        variants = [("", 0), (".2w", TWO_WORKERS)]
        if name in SEEDS_MAXMEMORY:
            variants = [(".%s" % p, TINY_MAXMEMORY | i << 5)
                        for i, p in enumerate(("noeviction", "lru", "random", "ttl"))]
            variants.append((".lru.2w", TINY_MAXMEMORY | 1 << 5 | TWO_WORKERS))
        for suffix, flags in variants:
            with open(os.path.join(CORPUS, name + suffix), "wb") as f:
                f.write(bytes([mode | flags]) + body)
    with open(DICT, "w") as f:
        f.write("# libFuzzer dictionary for fuzz/connection_fuzzer.cc (written by make_corpus.py)\n")
        for w in DICT_WORDS:
            f.write('"%s"\n' % w)
        for w in DICT_RAW:  # libFuzzer's escapes: \xNN for bytes outside printable ASCII
            f.write('"%s"\n' % "".join(c if " " <= c <= "~" and c not in '"\\' else "\\x%02x" % ord(c) for c in w))
    print("%d seeds in %s, %d dictionary words" % (len(os.listdir(CORPUS)), CORPUS, len(DICT_WORDS) + len(DICT_RAW)))


if __name__ == "__main__":
    main()
