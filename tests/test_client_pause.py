# CLIENT PAUSE / UNPAUSE (Redis 7): for a time, clients' writes (WRITE) or
# all their commands (ALL) wait, and are not refused. The same tests pass
# against Debian's redis-server (TEST_SERVER=redis).
import threading
import time

import pytest
import redis


def timed(fn):
    """Runs fn() in a thread; returns (thread, box): box gets its result and
    the seconds it took."""
    box = {}

    def run():
        t0 = time.monotonic()
        box["value"] = fn()
        box["seconds"] = time.monotonic() - t0

    t = threading.Thread(target=run)
    t.start()
    return t, box


@pytest.fixture
def other(server):
    c = server.client()
    yield c
    c.close()


def test_pause_write_holds_writes_not_reads(r, other):
    r.set("k", "v")
    assert r.execute_command("CLIENT", "PAUSE", 600, "WRITE") == b"OK"
    t0 = time.monotonic()
    assert other.get("k") == b"v"  # a read goes on
    assert other.ping()
    assert time.monotonic() - t0 < 0.3
    t, box = timed(lambda: other.set("k", "w"))
    t.join(timeout=5)
    assert box["value"] is True
    assert box["seconds"] >= 0.3  # held until the pause's end
    assert r.get("k") == b"w"


def test_pause_write_holds_what_may_replicate_and_exec(r, other):
    r.execute_command("CLIENT", "PAUSE", 400, "WRITE")
    t, box = timed(lambda: other.eval("return 1", 0))
    t.join(timeout=5)
    assert box["value"] == 1 and box["seconds"] >= 0.2
    # A transaction queued before the pause: its EXEC waits.
    tx = other.pipeline(transaction=True)
    tx.set("a", 1)
    tx.get("a")
    r.execute_command("CLIENT", "PAUSE", 400, "WRITE")
    t, box = timed(tx.execute)
    t.join(timeout=5)
    assert box["value"] == [True, b"1"] and box["seconds"] >= 0.2


def test_pause_all_holds_everything(r, other):
    assert r.execute_command("CLIENT", "PAUSE", 500) == b"OK"
    # Every command waits, reads and CLIENT UNPAUSE too (as Redis).
    t, box = timed(lambda: other.get("k"))
    t2, box2 = timed(lambda: r.execute_command("CLIENT", "UNPAUSE"))
    t.join(timeout=5)
    t2.join(timeout=5)
    assert box["seconds"] >= 0.3 and box2["seconds"] >= 0.3
    assert box2["value"] == b"OK"


def test_unpause_lets_held_writes_go(r, other):
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    t, box = timed(lambda: other.set("k", "v"))
    time.sleep(0.3)
    assert t.is_alive()  # held
    assert r.execute_command("CLIENT", "UNPAUSE") == b"OK"
    t.join(timeout=5)
    assert box["value"] is True and box["seconds"] < 5


def test_pause_errors(r):
    with pytest.raises(redis.ResponseError, match="^CLIENT PAUSE mode must be WRITE or ALL$"):
        r.execute_command("CLIENT", "PAUSE", 10, "READ")
    with pytest.raises(redis.ResponseError, match="^timeout is not an integer or out of range$"):
        r.execute_command("CLIENT", "PAUSE", "x")
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        r.execute_command("CLIENT", "PAUSE", -1)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'client|pause' command"):
        r.execute_command("CLIENT", "PAUSE")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'client|unpause' command"):
        r.execute_command("CLIENT", "UNPAUSE", "x")
    assert r.execute_command("CLIENT", "UNPAUSE") == b"OK"  # (none: fine)


def test_refusals_are_answered_during_a_pause(r, other):
    # (Redis answers what it refuses before it looks at the pause.)
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    try:
        t0 = time.monotonic()
        with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'set' command"):
            other.execute_command("SET", "k")
        with pytest.raises(redis.ResponseError, match="unknown command"):
            other.execute_command("NOSUCHCOMMAND")
        assert time.monotonic() - t0 < 2
    finally:
        r.execute_command("CLIENT", "UNPAUSE")


def test_a_pause_that_ran_out_leaves_nothing_held(r, other):
    r.execute_command("CLIENT", "PAUSE", 100, "WRITE")
    time.sleep(0.3)
    t0 = time.monotonic()
    for i in range(50):
        assert other.set(f"k{i}", i)
    assert time.monotonic() - t0 < 2
