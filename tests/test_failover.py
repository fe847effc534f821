# FAILOVER (Redis 6.2+; issue #38): a primary hands over to a replica that
# has its whole stream, and follows it. Against Debian's redis-server too
# (TEST_SERVER=redis), which is where the shapes come from.
import threading
import time

import pytest
import redis

from conftest import TEST_SERVER
from test_replica import replicated_pair, servers, start, wait_link  # noqa: F401 (servers: a fixture)
from test_replication import snapshot, wait_caught_up, write_every_type


def lagging_replica(replica, p):
    """The replica stops applying for 1.5 s (a thread that joins after):
    its acknowledged offset stays behind the primary's."""
    sleeper = threading.Thread(target=lambda: replica.client().execute_command("DEBUG", "SLEEP", 1.5))
    sleeper.start()
    time.sleep(0.1)
    p.set("k", "v")
    return sleeper


def wait_state(c, state, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if c.info("replication")["master_failover_state"] == state:
            return
        time.sleep(0.02)
    raise AssertionError(c.info("replication"))


@pytest.mark.parametrize("replica_kind", ["redis", TEST_SERVER])
def test_failover_hands_over_to_a_replica(servers, tmp_path, replica_kind):
    primary, replica, p, r = replicated_pair(servers, tmp_path, replica_kind=replica_kind)
    before = r.info("stats")
    assert p.execute_command("FAILOVER") == b"OK"
    wait_state(p, "no-failover")
    assert r.info("replication")["role"] == "master"
    info = p.info("replication")
    assert info["role"] == "slave" and info["master_port"] == replica.port
    wait_link(p)
    # It continued the history: a partial resync, no full one.
    after = r.info("stats")
    assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
    assert after["sync_full"] == before["sync_full"]
    r.set("after", "1")
    wait_caught_up(r, p)
    assert p.get("after") == b"1"
    assert snapshot(p) == snapshot(r)
    with pytest.raises(redis.ResponseError, match="read only replica"):
        p.set("x", 1)


def test_failover_to_a_named_replica(servers, tmp_path):
    primary, replica, p, r = replicated_pair(servers, tmp_path)
    assert p.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port, "TIMEOUT", 5000) == b"OK"
    wait_state(p, "no-failover")
    assert r.execute_command("ROLE")[0] == b"master"
    assert p.execute_command("ROLE")[0] == b"slave"


def test_failover_errors(servers, tmp_path):
    primary = start(tmp_path, "p")
    servers.append(primary)
    p = primary.client()
    with pytest.raises(redis.ResponseError, match="^FAILOVER requires connected replicas.$"):
        p.execute_command("FAILOVER")
    with pytest.raises(redis.ResponseError, match="^No failover in progress.$"):
        p.execute_command("FAILOVER", "ABORT")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        p.execute_command("FAILOVER", "ABORT", "FORCE")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        p.execute_command("FAILOVER", "TO", "127.0.0.1")
    with pytest.raises(redis.ResponseError, match="^FAILOVER timeout must be greater than 0$"):
        p.execute_command("FAILOVER", "TIMEOUT", 0)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        p.execute_command("FAILOVER", "TO", "127.0.0.1", "port")
    replica = start(tmp_path, "r")
    servers.append(replica)
    r = replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    with pytest.raises(redis.ResponseError, match="^FAILOVER target HOST and PORT is not a replica.$"):
        p.execute_command("FAILOVER", "TO", "127.0.0.1", 1)
    with pytest.raises(redis.ResponseError,
                       match="^FAILOVER with force option requires both a timeout and target HOST and IP.$"):
        p.execute_command("FAILOVER", "FORCE")
    with pytest.raises(redis.ResponseError, match="^FAILOVER is not valid when server is a replica.$"):
        r.execute_command("FAILOVER")
    with pytest.raises(redis.ResponseError, match="^PSYNC FAILOVER can't be sent to a master.$"):
        p.execute_command("PSYNC", "x" * 40, 1, "FAILOVER")


def test_a_failover_that_waits_pauses_writes_and_can_be_aborted(servers, tmp_path):
    primary, replica, p, r = replicated_pair(servers, tmp_path)
    sleeper = lagging_replica(replica, p)
    assert p.execute_command("FAILOVER") == b"OK"
    assert p.info("replication")["master_failover_state"] == "waiting-for-sync"
    # Writes wait (paused), reads go on.
    writer = p.connection_pool.get_connection()
    writer.send_command("SET", "held", "1")
    assert p.get("k") == b"v"
    assert not writer.can_read(timeout=0.3)
    assert p.execute_command("FAILOVER", "ABORT") == b"OK"
    assert writer.read_response() == b"OK"
    p.connection_pool.release(writer)
    assert p.info("replication")["master_failover_state"] == "no-failover"
    assert p.info("replication")["role"] == "master"
    sleeper.join()


def test_a_failover_times_out(servers, tmp_path):
    primary, replica, p, r = replicated_pair(servers, tmp_path)
    sleeper = lagging_replica(replica, p)
    assert p.execute_command("FAILOVER", "TIMEOUT", 300) == b"OK"
    wait_state(p, "no-failover", timeout=5)
    assert p.info("replication")["role"] == "master"
    assert p.set("k2", "v")  # writes go on
    sleeper.join()


# ---------------------------------------------------------------- WAITAOF (Redis 7.2; Debian's is 7.0)

needs_waitaof = pytest.mark.skipif(TEST_SERVER == "redis", reason="Debian's redis-server 7.0 has no WAITAOF")


@needs_waitaof
def test_waitaof_errors_and_without_a_file(servers, tmp_path):
    primary = start(tmp_path, "p")
    servers.append(primary)
    p = primary.client()
    with pytest.raises(redis.ResponseError, match="^WAITAOF cannot be used when numlocal is set but appendonly is "
                                                  "disabled.$"):
        p.execute_command("WAITAOF", 1, 0, 0)
    with pytest.raises(redis.ResponseError, match="^value is out of range, value must between 0 and 1$"):
        p.execute_command("WAITAOF", 2, 0, 0)
    with pytest.raises(redis.ResponseError, match="^value is out of range, must be positive$"):
        p.execute_command("WAITAOF", 0, -1, 0)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        p.execute_command("WAITAOF", "x", 0, 0)
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        p.execute_command("WAITAOF", 0, 0, -1)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'waitaof' command"):
        p.execute_command("WAITAOF", 0, 0)
    assert p.execute_command("WAITAOF", 0, 0, 0) == [0, 0]


@needs_waitaof
def test_waitaof_local_and_replicas(servers, tmp_path):
    primary = start(tmp_path, "p", args=["--appendonly", "yes"])
    replica = start(tmp_path, "r", args=["--appendonly", "yes"])
    other = start(tmp_path, "o", kind="redis")  # (7.0: no FACK)
    servers += [primary, replica, other]
    p, r, o = primary.client(), replica.client(), other.client()
    p.set("k", "v")
    assert p.execute_command("WAITAOF", 1, 0, 0) == [1, 0]  # (everysec: within a second)
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    o.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    wait_caught_up(p, o)
    p.set("k2", "v")
    t0 = time.monotonic()
    assert p.execute_command("WAITAOF", 1, 1, 5000) == [1, 1]
    assert time.monotonic() - t0 < 4
    # Two replicas asked for, one can say so: the timeout's count.
    assert p.execute_command("WAITAOF", 0, 2, 300) == [1, 1]
    with pytest.raises(redis.ResponseError, match="^WAITAOF cannot be used with replica instances"):
        r.execute_command("WAITAOF", 0, 0, 0)


@needs_waitaof
def test_waitaof_when_the_file_goes_off(servers, tmp_path):
    primary = start(tmp_path, "p", args=["--appendonly", "yes", "--appendfsync", "no"])
    servers.append(primary)
    p = primary.client()
    p.set("k", "v")
    # (appendfsync no: nothing is made durable by itself.)
    assert p.execute_command("WAITAOF", 1, 0, 100) == [0, 0]
    waiter = p.connection_pool.get_connection()
    waiter.send_command("WAITAOF", 1, 0, 0)
    assert not waiter.can_read(timeout=0.3)
    primary.client().config_set("appendonly", "no")
    with pytest.raises(redis.ResponseError, match="^WAITAOF cannot be used when numlocal is set but appendonly is "
                                                  "disabled.$"):
        waiter.read_response()
    p.connection_pool.release(waiter)
