# A script past busy-reply-threshold makes the whole server busy, as Redis's
# (issue #35): every client on every worker — connections made meanwhile
# included — gets -BUSY at once; SCRIPT KILL / FUNCTION KILL from any of them
# stops a read-only script; FUNCTION STATS names the running one; EXEC of a
# transaction queued before answers EXECABORT and leaves MULTI; afterwards
# the server serves normally. With one worker and with more workers than
# cores, for a script's first run (it holds every shard) and for a known one
# (it holds none). Passes against TEST_SERVER=redis too.
import threading
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, encode

BUSY_EVAL = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
BUSY_FN = b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
SPIN = "local i = 0 while true do i = i + 1 end"


@pytest.fixture(params=[1, 4], ids=["threads1", "threads4"])
def busy_server(request, start_server):
    args = ["--busy-reply-threshold", "100"]
    if IS_REDIS:
        if request.param != 1:
            pytest.skip("one thread is Redis's only mode")
        return start_server(*args)
    return start_server(*args, "--threads", str(request.param))


def wait_busy(conn, busy, deadline_s=5.0):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if conn.call("PING") == busy:
            return
        time.sleep(0.02)
    raise AssertionError("the script never got busy")


@pytest.mark.parametrize("warm", [False, True], ids=["first-run", "known"])
def test_every_client_busy_and_new_connections_can_kill(busy_server, warm):
    body = SPIN + " -- " + ("warm" if warm else "cold")
    with Conn(busy_server) as runner, Conn(busy_server) as queued:
        if warm:
            # Its first run learnt that it keeps to its (no) keys: this run
            # holds no shard, and every other worker is free to run.
            runner.send(encode("SCRIPT", "LOAD", body))
            runner.read_reply()
        assert queued.call("MULTI") == b"+OK\r\n"
        assert queued.call("INCR", "n") == b"+QUEUED\r\n"
        runner.send(encode("EVAL", body, "0"))
        fresh = [Conn(busy_server) for _ in range(8)]
        try:
            wait_busy(fresh[0], BUSY_EVAL)
            t0 = time.monotonic()
            for c in fresh[1:]:  # connections made while busy, spread over every worker
                assert c.call("GET", "k") == BUSY_EVAL
            late = [Conn(busy_server) for _ in range(8)]
            for c in late:
                assert c.call("PING") == BUSY_EVAL
            assert time.monotonic() - t0 < 3.0  # at once, not when the script ends
            # (FUNCTION STATS describes a busy function, not a script.)
            assert late[0].call("FUNCTION", "STATS") == BUSY_EVAL
            # The transaction queued before: EXECABORT, and MULTI is over.
            assert queued.call("EXEC") == (
                b"-EXECABORT Transaction discarded because of: " + BUSY_EVAL[1:])
            # (Any EXEC is, as Redis's rejectCommand answers it.)
            assert queued.call("EXEC") == b"-EXECABORT Transaction discarded because of: " + BUSY_EVAL[1:]
            assert late[-1].call("SCRIPT", "KILL") == b"+OK\r\n"
            assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
            for c in fresh + late + [runner, queued]:
                assert c.call("PING") == b"+PONG\r\n"
            assert queued.call("EXEC") == b"-ERR EXEC without MULTI\r\n"
            assert late[1].call("INCR", "n") == b":1\r\n"  # the transaction never ran
            for c in late:
                c.close()
        finally:
            for c in fresh:
                c.close()


def test_busy_function_killed_from_a_new_connection(busy_server):
    with Conn(busy_server) as c:
        c.call("FUNCTION", "FLUSH")
        assert c.call("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function{function_name='spin', "
                      "callback=function() " + SPIN + " end, flags={'no-writes'}}") == b"$4\r\nspin\r\n"
    with Conn(busy_server) as runner:
        runner.send(encode("FCALL", "spin", "0"))
        with Conn(busy_server) as other:
            wait_busy(other, BUSY_FN)
        with Conn(busy_server) as late:
            stats = late.call("FUNCTION", "STATS")
            assert b"$4\r\nname\r\n$4\r\nspin\r\n" in stats
            assert b"$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n" in stats.replace(b"fcall", b"FCALL")
            assert late.call("SCRIPT", "KILL").startswith(b"-BUSY")  # a function needs FUNCTION KILL
            assert late.call("FUNCTION", "KILL") == b"+OK\r\n"
        assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
        assert runner.call("FUNCTION", "STATS").startswith(b"*4\r\n$14\r\nrunning_script\r\n$-1\r\n")
        assert runner.call("FCALL", "spin_x", "0").startswith(b"-ERR Function not found")
        assert runner.call("PING") == b"+PONG\r\n"


@pytest.mark.skipif(IS_REDIS, reason="Redis cannot stop a script inside a library function")
@pytest.mark.parametrize("stuck", [
    # exponential backtracking inside string.find's matcher
    "return string.find(string.rep('a', 5000), string.rep('a*', 30) .. 'b')",
    # a plain search of 4e12 byte compares
    "local s = string.rep('a', 4000000) return string.find(s, string.rep('a', 2000000) .. 'b', 1, true)",
    # 2^31 shifts of table.insert at a position far below 1
    "local t = {} table.insert(t, -2^31, 1) return 1",
], ids=["pattern", "plain-find", "table-insert"])
def test_script_inside_a_library_function_can_be_killed(busy_server, stuck):
    """The count hook reaches long loops inside library functions
    (patches/lua5.1/0010): busy-reply-threshold and SCRIPT KILL work there."""
    with Conn(busy_server) as runner:
        runner.send(encode("EVAL", stuck, "0"))
        with Conn(busy_server) as other:
            wait_busy(other, BUSY_EVAL)
            assert other.call("SCRIPT", "KILL") == b"+OK\r\n"
        assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
        assert runner.call("PING") == b"+PONG\r\n"


def test_busy_script_publishing_reaches_every_worker(busy_server):
    """A busy script that publishes writes into other workers' subscribers
    while those workers answer their clients -BUSY: they take turns (the
    parked workers answer from the script's hook), the messages arrive
    meanwhile, and the script can still be killed (PUBLISH is no write)."""
    subs = [Conn(busy_server) for _ in range(6)]  # spread over every worker
    try:
        for s in subs:
            assert s.call("SUBSCRIBE", "ch").startswith(b"*3\r\n$9\r\nsubscribe\r\n")
        with Conn(busy_server) as runner:
            runner.send(encode("EVAL", "local n = 0 while true do n = n + 1 "
                               "if n % 200000 == 0 then redis.call('publish', 'ch', n) end end", "0"))
            with Conn(busy_server) as other:
                wait_busy(other, BUSY_EVAL)
                for s in subs:  # messages published while the script is busy
                    for _ in range(3):
                        msg = s.read_reply()
                        assert msg.startswith(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n"), msg
                assert other.call("GET", "k") == BUSY_EVAL
                assert other.call("SCRIPT", "KILL") == b"+OK\r\n"
            assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
            assert runner.call("PING") == b"+PONG\r\n"
    finally:
        for s in subs:
            s.close()


def test_write_groups_across_busy_scripts_leave_every_shard_serving(busy_server):
    # Pipelines of writes over every shard (write groups with several
    # workers) keep coming while a known script (it holds no shard) spins
    # and is killed, again and again. A group's part that reaches the
    # script's worker meanwhile waits for the script's end (it holds its
    # place on that shard, docs/transactions.md): answered -BUSY instead,
    # its place was lost and the shard waited for it for ever.
    body = SPIN + " -- writes"
    stop = threading.Event()
    errors, rounds_done = [], [0]

    def writer(w):
        c = redis.Redis(host=busy_server.host, port=busy_server.port, socket_timeout=20)
        try:
            while not stop.is_set():
                p = c.pipeline(transaction=False)
                for i in range(32):
                    p.set(f"bw:{w}:{i}", i)
                for r in p.execute(raise_on_error=False):
                    if r is not True and "BUSY" not in str(r):
                        errors.append(repr(r))
                rounds_done[0] += 1
        except redis.RedisError as e:
            errors.append(f"writer {w}: {e!r}")

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    with Conn(busy_server) as runner, Conn(busy_server) as killer:
        runner.send(encode("SCRIPT", "LOAD", body))
        runner.read_reply()
        for t in threads:
            t.start()
        try:
            for _ in range(6):
                runner.send(encode("EVAL", body, "0"))
                wait_busy(killer, BUSY_EVAL)
                time.sleep(0.15)
                assert killer.call("SCRIPT", "KILL") == b"+OK\r\n"
                assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
                time.sleep(0.1)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)
        assert not any(t.is_alive() for t in threads), "a writer's pipeline never came back"
        assert not errors, errors[:5]
        assert rounds_done[0] > 6
        # Every shard serves, alone and together.
        keys = [f"after:{i}" for i in range(64)]
        c = redis.Redis(host=busy_server.host, port=busy_server.port, socket_timeout=10)
        assert c.mset({k: k for k in keys})
        assert c.mget(keys) == [k.encode() for k in keys]
        assert killer.call("PING") == b"+PONG\r\n"
