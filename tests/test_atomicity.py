# Atomicity of multi-key commands whose keys live on different shards (issue
# #5): many clients at once for a few seconds, each check one that a
# non-atomic implementation would fail.
#   - MSET writes a pair of keys on two shards to one shared value while
#     other clients MGET the pair: both halves are always equal.
#   - RENAME moves one key along a chain of names on different shards while
#     other clients count the chain with EXISTS: always exactly one.
#   - INCR on a few counters from many clients: nothing lost.
# Run against four workers (--threads 4, one shard each: more threads than
# this machine has cores, so that they interleave); `make test-tsan` runs it
# against the ThreadSanitizer build too.
import threading
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import crc16

DURATION_S = 3.0




def shard_of(key: str, shards: int = 4) -> int:
    return (crc16(key.encode()) % 16384) * shards // 16384


def keys_on_distinct_shards(prefix: str, count: int, shards: int = 4):
    """`count` key names, consecutive ones on different shards."""
    out, i = [], 0
    while len(out) < count:
        k = f"{prefix}{i}"
        if not out or shard_of(k, shards) != shard_of(out[-1], shards):
            out.append(k)
        i += 1
    return out


@pytest.fixture
def sharded(start_server):
    s = start_server() if IS_REDIS else start_server("--threads", "4")
    return s


def run_for(threads):
    for t in threads:
        t.start()
    # (Generous: after the writers stop, test_pipeline_order's consumers
    # drain their queue for about 20 s here, longer on a loaded machine or
    # under a sanitizer; a thread that truly hangs still fails.)
    deadline = time.monotonic() + DURATION_S + 120
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
        assert not t.is_alive(), "a client thread hung"


def test_mset_pairs_are_never_seen_half_written(sharded):
    pairs = [keys_on_distinct_shards(f"pair{p}:", 2) for p in range(8)]
    errors, reads = [], [0]
    deadline = time.monotonic() + DURATION_S

    def writer(n):
        c = sharded.client()
        v = 0
        while time.monotonic() < deadline:
            for a, b in pairs:
                v += 1
                c.mset({a: f"{n}:{v}", b: f"{n}:{v}"})

    def reader():
        c = sharded.client()
        while time.monotonic() < deadline:
            for a, b in pairs:
                x, y = c.mget(a, b)
                reads[0] += 1
                if x != y:
                    errors.append((a, x, y))

    run_for([threading.Thread(target=writer, args=(n,)) for n in range(4)] +
            [threading.Thread(target=reader) for _ in range(4)])
    assert not errors, errors[:5]
    assert reads[0] > 100


def test_rename_chain_never_loses_or_duplicates_the_key(sharded):
    chain = keys_on_distinct_shards("link", 10)
    c0 = sharded.client()
    c0.set(chain[0], "payload")
    errors, counts = [], [0]
    deadline = time.monotonic() + DURATION_S

    def mover():
        c = sharded.client()
        i = 0
        while time.monotonic() < deadline:
            src, dst = chain[i % len(chain)], chain[(i + 1) % len(chain)]
            try:
                c.rename(src, dst)
            except redis.ResponseError as e:
                if "no such key" not in str(e):
                    errors.append(str(e))
            i += 1

    def counter():
        c = sharded.client()
        while time.monotonic() < deadline:
            n = c.exists(*chain)
            counts[0] += 1
            if n != 1:
                errors.append(f"EXISTS saw {n} keys of the chain")

    run_for([threading.Thread(target=mover) for _ in range(3)] +
            [threading.Thread(target=counter) for _ in range(3)])
    assert not errors, errors[:5]
    assert counts[0] > 100
    values = [v for v in c0.mget(*chain) if v is not None]
    assert values == [b"payload"]


def test_incr_from_many_clients_loses_nothing(sharded):
    counters = keys_on_distinct_shards("ctr", 4)
    done = [0] * 8
    deadline = time.monotonic() + DURATION_S

    def incr(n):
        c = sharded.client()
        p = c.pipeline(transaction=False)
        while time.monotonic() < deadline:
            for k in counters:
                p.incr(k)
            p.execute()
            done[n] += 1

    run_for([threading.Thread(target=incr, args=(n,)) for n in range(8)])
    c = sharded.client()
    assert [int(v) for v in c.mget(*counters)] == [sum(done)] * len(counters)
