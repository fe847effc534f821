#!/usr/bin/env python3
"""Writes the replica fuzzer's seed corpus (checked in): what a primary
sends on a replication link (fuzz/replica_fuzzer.cc).

    python3 fuzz/make_replica_corpus.py

A seed's first byte picks how the harness cuts the rest into writes (7:
all at once, 0: a byte at a time; 0x87: all at once, loaded diskless). The rest: the replies to PING and the
two REPLCONFs, the PSYNC reply, a snapshot (the RDB files of the rdb
fuzzer's corpus, as Redis and Peregrine write them) in both framings, and
a stream of commands after it; and the ways each step can go wrong.
"""
import os
import shutil

from make_corpus import resp

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "replica")
RDB_CORPUS = os.path.join(HERE, "corpus", "rdb")
WHOLE, BYTEWISE, FIVE, DISKLESS = 0x07, 0x00, 0x03, 0x87
REPLID = b"0123456789abcdef0123456789abcdef01234567"
MARK = b"m" * 20 + b"0123456789abcdefghij"
HANDSHAKE = b"+PONG\r\n+OK\r\n+OK\r\n"


def rdb(name):
    with open(os.path.join(RDB_CORPUS, name), "rb") as f:
        return f.read()[1:]  # (the rdb harness's mode byte)


STREAM = b"".join([
    resp("SELECT", 0),
    resp("SET", "k", "v"),
    resp("SET", "t", "v", "PXAT", 4102444800000),
    resp("PEXPIREAT", "k", 1),
    resp("RPUSH", "l", "a", "b", "c"),
    resp("MULTI"), resp("INCR", "n"), resp("HSET", "h", "f", "v"), resp("EXEC"),
    resp("SELECT", 3),
    resp("SADD", "s", "x"),
    resp("PING"),
    resp("REPLCONF", "GETACK", "*"),
    resp("PUBLISH", "ch", "msg"),
    resp("XADD", "x", "1-1", "f", "v"),
    resp("ZADD", "z", 1, "m"),
    resp("DEL", "k"),
    resp("FLUSHALL"),
    resp("EVAL", "redis.call('set', KEYS[1], ARGV[1])", 1, "e", "1"),
    resp("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)"),
    resp("NOSUCHCOMMAND", "a"),
    resp("GET"),
])


def seeds():
    full = b"+FULLRESYNC " + REPLID + b" 100\r\n"
    for name in ("file-redis", "file-peregrine"):
        body = rdb(name)
        yield f"full-{name}-len", WHOLE, HANDSHAKE + full + b"$%d\r\n" % len(body) + body + STREAM
        yield f"full-{name}-eof", WHOLE, HANDSHAKE + full + b"$EOF:" + MARK + b"\r\n" + body + MARK + STREAM
        yield f"full-{name}-eof-split", FIVE, HANDSHAKE + full + b"\n\n$EOF:" + MARK + b"\r\n" + body + MARK + STREAM
        yield f"full-{name}-diskless-len", DISKLESS, HANDSHAKE + full + b"$%d\r\n" % len(body) + body + STREAM
        yield f"full-{name}-diskless-eof", DISKLESS, HANDSHAKE + full + b"$EOF:" + MARK + b"\r\n" + body + MARK + \
            STREAM
        yield f"full-{name}-diskless-cut", DISKLESS, HANDSHAKE + full + b"$EOF:" + MARK + b"\r\n" + \
            body[: len(body) // 2]
        yield f"full-{name}-diskless-bad-rdb", DISKLESS, HANDSHAKE + full + b"$%d\r\n" % len(body) + body[:20] + \
            b"\xff" * (len(body) - 20) + STREAM
        yield f"full-{name}-cut", WHOLE, HANDSHAKE + full + b"$%d\r\n" % len(body) + body[: len(body) // 2]
        yield f"full-{name}-bad-rdb", WHOLE, HANDSHAKE + full + b"$%d\r\n" % len(body) + body[:20] + \
            b"\xff" * (len(body) - 20) + STREAM
    yield "continue-with-id", WHOLE, HANDSHAKE + b"+CONTINUE " + REPLID + b"\r\n" + STREAM
    yield "continue-bytewise", BYTEWISE, HANDSHAKE + b"+CONTINUE\r\n" + STREAM
    yield "continue-multi-unfinished", WHOLE, HANDSHAKE + b"+CONTINUE\r\n" + resp("MULTI") + resp("SET", "a", 1)
    yield "continue-protocol-error", WHOLE, HANDSHAKE + b"+CONTINUE\r\n" + resp("SET", "a", 1) + b"*2\r\n$x\r\n"
    yield "continue-huge-bulk", WHOLE, HANDSHAKE + b"+CONTINUE\r\n*2\r\n$3\r\nGET\r\n$99999999999\r\nab"
    yield "psync-nomasterlink", WHOLE, HANDSHAKE + b"-NOMASTERLINK Can't SYNC while not connected with my master\r\n"
    yield "psync-error", WHOLE, HANDSHAKE + b"-ERR unknown command 'PSYNC'\r\n"
    yield "fullresync-bad", WHOLE, HANDSHAKE + b"+FULLRESYNC short 1\r\n"
    yield "snapshot-not-dollar", WHOLE, HANDSHAKE + full + b"+what\r\n"
    yield "snapshot-bad-length", WHOLE, HANDSHAKE + full + b"$-5\r\n"
    yield "snapshot-error", WHOLE, HANDSHAKE + full + b"-ERR aborted\r\n"
    yield "ping-error", WHOLE, b"-ERR nope\r\n"
    yield "ping-noauth", WHOLE, b"-NOAUTH Authentication required.\r\n+OK\r\n+OK\r\n+CONTINUE\r\n" + STREAM
    yield "replconf-errors", WHOLE, b"+PONG\r\n-ERR a\r\n-ERR b\r\n+CONTINUE\r\n" + STREAM


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    for name, mode, body in seeds():
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(bytes([mode]) + body)


if __name__ == "__main__":
    main()
