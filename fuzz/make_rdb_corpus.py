#!/usr/bin/env python3
"""Writes the RDB fuzzer's seed corpus (checked in): DUMP payloads of every
type and encoding, and whole RDB files, as Debian's redis-server writes them
(and, when it is built, as Peregrine does).

    python3 fuzz/make_rdb_corpus.py [build/release/peregrine]

A seed's first byte picks the harness's mode (fuzz/rdb_fuzzer.cc): 0 a
DUMP payload's body (its footer cut off), 1 a whole file (3: two workers,
5: with MERGE), 9 an AOF incremental file (11: two workers), 25 an AOF
manifest.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "rdb")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, port, cwd):
    p = subprocess.Popen(argv + ["--port", str(port), "--save", ""], cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            c = redis.Redis(port=port)
            c.ping()
            return p, c
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


def fill(c):
    # Small limits: every container in its large encoding at a small size.
    c.config_set("hash-max-listpack-entries", 4)
    c.config_set("zset-max-listpack-entries", 4)
    c.config_set("set-max-intset-entries", 4)
    c.config_set("list-max-listpack-size", 4)
    c.set("int", 12345)
    c.set("str", "hello world")
    c.set("lzf", "abc" * 40)
    c.set("ttl", "v", px=10_000_000)
    for name, n in (("small", 3), ("big", 9)):
        c.rpush(f"list:{name}", *[f"e{i}" for i in range(n)], 7, -70000)
        c.sadd(f"set:{name}", *[f"m{i}" for i in range(n)])
        c.sadd(f"intset:{name}", *range(n))
        c.zadd(f"zset:{name}", {f"m{i}": i * 1.5 for i in range(n)})
        c.hset(f"hash:{name}", mapping={f"f{i}": f"v{i}" for i in range(n)})
    c.execute_command("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
    # A stream of three nodes (4 entries each at most), a tombstone, fields
    # differing from the master's, a group with pending entries and an
    # idle consumer.
    c.config_set("stream-node-max-entries", 4)
    for i in range(1, 11):
        c.xadd("stream", {"f": i, "g": "x" * i} if i % 3 else {"other": i}, id=f"{i}-{i % 2}")
    c.xdel("stream", "3-1")
    c.xgroup_create("stream", "grp", id="0")
    c.xreadgroup("grp", "alice", {"stream": ">"}, count=3)
    c.xgroup_createconsumer("stream", "grp", "idle")


def seeds_from(argv, label, with_dumps):
    out = {}
    d = tempfile.mkdtemp()
    port = free_port()
    p, c = start(argv + ["--appendonly", "yes"], port, d)
    try:
        fill(c)
        # What the AOF logged for it, and a transaction, a script's effects,
        # an expiry, a pop (the forms the server writes).
        c.execute_command("MULTI")
        c.execute_command("INCR", "n")
        c.execute_command("SELECT", "2")
        c.execute_command("SET", "x", "y")
        c.execute_command("EXEC")
        c.execute_command("SELECT", "0")
        c.eval("redis.call('set', KEYS[1], '1'); redis.call('lpush', KEYS[2], 'a'); return 1", 2, "s1", "s2")
        c.set("short", "v", px=1)
        time.sleep(0.01)
        c.get("short")
        c.spop("set:big")
        c.incrbyfloat("float", "1.25")
        c.set("ex", "v", ex=100)
        aofdir = os.path.join(d, "appendonlydir")
        manifest = open(os.path.join(aofdir, "appendonly.aof.manifest"), "rb").read()
        incr = [line.split()[1].decode() for line in manifest.splitlines() if line.endswith(b" i")][-1]
        aof = open(os.path.join(aofdir, incr), "rb").read()
        out[f"aof-{label}"] = b"\x09" + aof
        out[f"aof-{label}-2workers"] = b"\x0b" + aof
        out[f"aof-{label}-manifest"] = b"\x19" + manifest
        if with_dumps:
            for k in c.keys("*"):
                payload = c.dump(k)
                out[f"dump-{label}-{k.decode()}"] = b"\x00" + payload[:-10]
        c.save()
        data = open(os.path.join(d, "dump.rdb"), "rb").read()
        out[f"file-{label}"] = b"\x01" + data
        out[f"file-{label}-2workers-merge"] = b"\x07" + data
        # An old-style AOF: an RDB preamble, then commands.
        out[f"aof-{label}-preamble"] = b"\x09" + data + aof
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)
    return out


def main():
    seeds = seeds_from(["redis-server"], "redis", True)
    pbin = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "release", "peregrine")
    if os.path.exists(pbin):
        seeds.update(seeds_from([pbin, "--threads", "1"], "peregrine", True))
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(CORPUS, name.replace(":", "_")), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds in {CORPUS}")


if __name__ == "__main__":
    main()
