# worker-spin-us (docs/transactions.md, "Cost"): a worker about to sleep while
# its clients' batches are out on other workers, or that just had mail,
# watches its mailbox for that long first, and only when the workers have a
# core each. Peregrine's own directive: these tests do not run against Redis.
import os
import threading

import pytest
import redis

from conftest import IS_REDIS

pytestmark = pytest.mark.skipif(IS_REDIS, reason="a Peregrine directive")

CORES = len(os.sched_getaffinity(0))  # (the server inherits this process's affinity)


def _hammer(server, clients=4, rounds=300):
    """P1 and pipelined traffic over every shard from several clients at once; each
    client checks every reply."""
    errors = []

    def one(n):
        try:
            c = server.client()
            for i in range(rounds):
                k = f"spin:{n}:{i}"
                c.set(k, i)
                if c.get(k) != str(i).encode():
                    errors.append(f"{k}: {c.get(k)!r}")
                if i % 50 == 0:
                    p = c.pipeline(transaction=False)
                    for j in range(32):
                        p.incr(f"spin:ctr:{n}:{j}")
                    got = p.execute()
                    if got != [i // 50 + 1] * 32:
                        errors.append(f"pipeline {i}: {got}")
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    ts = [threading.Thread(target=one, args=(n,)) for n in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors[:5]


def test_default_is_off_and_immutable(start_server):
    s = start_server("--threads", "2")
    c = s.client()
    assert c.config_get("worker-spin-us") == {"worker-spin-us": "0"}
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("worker-spin-us", "10")
    _hammer(s, rounds=100)
    st = c.info("peregrine")
    assert int(st["worker_spins"]) == 0
    assert int(st["worker_spin_hits"]) == 0
    assert int(st["cross_shard_batches"]) > 0


def test_out_of_range_is_refused_at_start(start_server):
    with pytest.raises(Exception):
        start_server("--threads", "2", "--worker-spin-us", "-1")


@pytest.mark.skipif(CORES < 2, reason="spinning needs a core per worker")
def test_spinning_workers_answer_every_request(start_server):
    s = start_server("--threads", "2", "--worker-spin-us", "200")
    c = s.client()
    assert c.config_get("worker-spin-us") == {"worker-spin-us": "200"}
    _hammer(s)
    st = c.info("peregrine")
    spins, hits = int(st["worker_spins"]), int(st["worker_spin_hits"])
    assert spins > 0
    assert 0 <= hits <= spins
    # A client that comes after a quiet moment is answered (a spin ends, or
    # its socket's event ends it).
    c2 = s.client()
    for i in range(50):
        assert c2.set(f"late:{i}", i)
        assert c2.get(f"late:{i}") == str(i).encode()


def test_no_spinning_when_workers_outnumber_cores(start_server):
    n = CORES + 1
    s = start_server("--threads", str(n), "--worker-spin-us", "200")
    _hammer(s, rounds=100)
    st = s.client().info("peregrine")
    assert int(st["worker_spins"]) == 0
    assert int(st["cross_shard_batches"]) > 0
