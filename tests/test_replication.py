# Replication (issue #38, docs/replication.md). So far: a primary with no
# replica attached answers as Redis 7 does (INFO replication, ROLE, the
# backlog's directives). The same tests run against Debian's redis-server
# (TEST_SERVER=redis), which is where these shapes come from.
import contextlib
import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import IS_REDIS, ServerProcess, raw_command
from helpers import NO_RETRY, Asking, wait_for

ZEROS = "0" * 40


def test_info_replication_of_a_primary_without_replicas(r, server):
    # (Unparsed: redis-py would read forty zeros as the number 0.)
    text = raw_command(server, b"INFO replication\r\n").decode()
    lines = [line for line in text.splitlines()[1:] if line and not line.startswith("#")]  # (after "$<len>")
    fields = dict(line.split(":", 1) for line in lines)
    # Every field, in Redis's order (Sentinel and redis_exporter read them).
    assert [line.split(":", 1)[0] for line in lines] == [
        "role", "connected_slaves", "master_failover_state", "master_replid", "master_replid2",
        "master_repl_offset", "second_repl_offset", "repl_backlog_active", "repl_backlog_size",
        "repl_backlog_first_byte_offset", "repl_backlog_histlen"]
    assert fields["role"] == "master"
    assert fields["connected_slaves"] == "0"
    assert fields["master_failover_state"] == "no-failover"
    assert re.fullmatch("[0-9a-f]{40}", fields["master_replid"])
    assert fields["master_replid2"] == ZEROS
    assert fields["second_repl_offset"] == "-1"
    # No replica has attached: no backlog, no stream, whatever was written.
    r.set("k", "v")
    again = r.info("replication")
    assert again["master_repl_offset"] == 0
    assert again["repl_backlog_active"] == 0
    assert again["repl_backlog_histlen"] == 0
    assert again["repl_backlog_first_byte_offset"] == 0
    # The replication ID is not the run ID, and stays until a failover.
    assert again["master_replid"] == fields["master_replid"]
    assert r.info("server")["run_id"] != fields["master_replid"]


def test_role_of_a_primary_without_replicas(r):
    assert r.execute_command("ROLE") == [b"master", 0, []]
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'role' command"):
        r.execute_command("ROLE", "x")


def test_role_is_allowed_in_scripts_never(r):
    with pytest.raises(redis.ResponseError, match="This Redis command is not allowed from script"):
        r.eval("return redis.call('ROLE')", 0)


def test_backlog_directives(r):
    assert r.config_get("repl-backlog-size") == {"repl-backlog-size": "1048576"}
    assert r.config_get("repl-backlog-ttl") == {"repl-backlog-ttl": "3600"}
    try:
        r.config_set("repl-backlog-size", "10mb")
        assert r.info("replication")["repl_backlog_size"] == 10 * 1024 * 1024
        r.config_set("repl-backlog-ttl", "0")
        assert r.config_get("repl-backlog-ttl") == {"repl-backlog-ttl": "0"}
        with pytest.raises(redis.ResponseError, match="repl-backlog-size"):
            r.config_set("repl-backlog-size", "lots")
        with pytest.raises(redis.ResponseError, match="repl-backlog-ttl"):
            r.config_set("repl-backlog-ttl", "-1")
        assert r.info("replication")["repl_backlog_size"] == 10 * 1024 * 1024
    finally:
        r.config_set("repl-backlog-size", "1mb")
        r.config_set("repl-backlog-ttl", "3600")


# ---------------------------------------------------------------- a Redis replica of this server

def snapshot(c, dbs=(0, 3)):
    """Every key of `dbs` as (db, key) -> (type, value, has a deadline)."""
    out = {}
    for db in dbs:
        c.execute_command("SELECT", db)
        for k in c.scan_iter(count=1000):
            t = c.type(k).decode()
            if t == "string":
                v = c.get(k)
            elif t == "list":
                v = tuple(c.lrange(k, 0, -1))
            elif t == "set":
                v = frozenset(c.smembers(k))
            elif t == "zset":
                v = tuple(c.zrange(k, 0, -1, withscores=True))
            elif t == "hash":
                v = frozenset(c.hgetall(k).items())
            elif t == "stream":
                v = tuple(c.xrange(k))
            else:
                v = None
            out[(db, k)] = (t, v, c.pttl(k) > 0)
    c.execute_command("SELECT", 0)
    return out


def write_every_type(c, prefix, n):
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"{prefix}:s:{i}", f"v{i}")
        pipe.rpush(f"{prefix}:l:{i % 50}", i)
        pipe.sadd(f"{prefix}:set:{i % 50}", i)
        pipe.zadd(f"{prefix}:z:{i % 50}", {f"m{i}": i / 3})
        pipe.hset(f"{prefix}:h:{i % 50}", f"f{i}", i)
        if i % 10 == 0:
            pipe.xadd(f"{prefix}:x", {"i": i})
            pipe.set(f"{prefix}:ttl:{i}", i, ex=1000)
            pipe.incr(f"{prefix}:n")
        if i % 7 == 0:
            pipe.delete(f"{prefix}:s:{i - 1}")
    pipe.execute()
    c.execute_command("SELECT", 3)
    c.set(f"{prefix}:db3", "x", px=500000)
    c.execute_command("SELECT", 0)
    # A transaction and a script: their effects.
    t = c.pipeline(transaction=True)
    t.incr(f"{prefix}:n")
    t.lpop(f"{prefix}:l:1")
    t.execute()
    c.eval("redis.call('set', KEYS[1], 'from-script'); redis.call('spop', KEYS[2]); return 1", 2,
           f"{prefix}:script", f"{prefix}:set:2")


def wait_caught_up(primary, replica, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = replica.info("replication")
        if info.get("master_link_status") == "up" and \
                info.get("slave_repl_offset") == primary.info("replication")["master_repl_offset"]:
            return
        time.sleep(0.05)
    raise AssertionError(f"replica not caught up: {replica.info('replication')} vs "
                         f"{primary.info('replication')}")


def end_slowed_sync(p, r, n_after):
    """A sync slowed by rdb-key-save-delay goes at full speed; once the
    replica has caught up, writes (and a DEL) follow in the stream, and it
    ends equal."""
    p.config_set("rdb-key-save-delay", "0")
    wait_caught_up(p, r)
    write_every_type(p, "after", n_after)
    p.delete("before:n")
    wait_caught_up(p, r)
    assert snapshot(r) == snapshot(p)


@pytest.fixture
def primary(start_server):
    return start_server()


def start_replica(tmp_path, primary):
    return ServerProcess(["--replicaof", primary.host, str(primary.port), "--dir", str(tmp_path)],
                         kind="redis")


def test_a_redis_replica_ends_equal(primary, tmp_path):
    p = primary.client()
    write_every_type(p, "before", 3000)
    # Slow enough that the writes below land during the snapshot.
    p.config_set("rdb-key-save-delay", "20")
    replica = start_replica(tmp_path, primary)
    try:
        r = replica.client()
        writer_done = threading.Event()

        def writer():
            c = primary.client()
            write_every_type(c, "during", 1000)
            writer_done.set()

        t = threading.Thread(target=writer)
        t.start()
        t.join(timeout=60)
        assert writer_done.is_set()
        end_slowed_sync(p, r, 500)
        info = p.info("replication")
        assert info["connected_slaves"] == 1
        assert info["slave0"]["state"] == "online"
        assert info["repl_backlog_active"] == 1
        assert info["repl_backlog_first_byte_offset"] >= 1
        assert p.info("stats")["sync_full"] == 1
        # The snapshot and the stream were sent: replication's share of the
        # output bytes (and the replica, a redis-server, read as much).
        stats = p.info("stats")
        assert stats["total_net_output_bytes"] >= stats["total_net_repl_output_bytes"] > 100_000
        assert r.info("stats")["total_net_repl_input_bytes"] >= stats["total_net_repl_output_bytes"] * 0.9
        role = p.execute_command("ROLE")
        assert role[0] == b"master" and role[1] == info["master_repl_offset"]
        assert role[2] == [[b"127.0.0.1", str(replica.port).encode(), str(role[2][0][2].decode()).encode()]]
    finally:
        replica.stop()


@pytest.mark.parametrize("replica_kind", ["redis", "peregrine"])
def test_pipelines_over_shards_reach_a_replica_in_order(start_server, tmp_path, replica_kind):
    # A client's pipelined writes over several shards run as write groups,
    # which reach the stream whole (docs/replication.md "Order across
    # shards"), so a reader of the replica never sees a later write of the
    # pipeline without an earlier one: each id in the queue has its data.
    if IS_REDIS and replica_kind == "peregrine":
        pytest.skip("the same run as with a Redis replica")
    primary = start_server() if IS_REDIS else start_server("--threads", "4")
    p = primary.client()
    replica = ServerProcess(["--replicaof", primary.host, str(primary.port), "--dir", str(tmp_path)],
                            kind=replica_kind)
    try:
        r = replica.client()
        wait_caught_up(p, r)
        before = p.info("peregrine")
        stop = threading.Event()
        errors, reads = [], [0]

        def reader():
            c = replica.client()
            while not stop.is_set():
                ids = c.lrange("wg:queue", 0, 63)
                if ids and c.exists(*[f"wg:data:{int(i)}" for i in ids]) != len(ids):
                    errors.append(sorted(int(i) for i in ids))
                reads[0] += 1

        t = threading.Thread(target=reader)
        t.start()
        try:
            for batch in range(300):
                pipe = p.pipeline(transaction=False)
                for i in range(batch * 8, batch * 8 + 8):
                    pipe.set(f"wg:data:{i}", i)
                    pipe.lpush("wg:queue", i)
                pipe.execute()
        finally:
            stop.set()
            t.join(timeout=30)
        assert not errors, f"ids without their data on the replica: {errors[:3]}"
        assert reads[0] > 0
        if not IS_REDIS:
            assert p.info("peregrine")["cross_shard_write_groups"] - before["cross_shard_write_groups"] >= 100
        wait_caught_up(p, r)
        assert snapshot(r) == snapshot(p)
        # What the replica read of its primary's stream, counted apart (and
        # in the total), as Redis counts it.
        rstats = r.info("stats")
        assert rstats["total_net_input_bytes"] >= rstats["total_net_repl_input_bytes"] > 10_000
    finally:
        replica.stop()


def test_what_a_client_saw_reaches_the_stream_before_what_it_did_next(start_server):
    # A reply never leaves before what it acknowledges, or shows, is in the
    # replication stream (docs/replication.md "Order across shards"). Two
    # writers run write groups: SET ack:data:i with a slow command on
    # another shard (LINSERT scanning a long list for a pivot it lacks), so
    # that the groups' parts run well apart; each then pushes i onto
    # ack:queue on its own. A watcher polls ack:data:i on the primary and,
    # once it is there, pushes i onto ack:seen. A marker pipelines SET
    # ack:mark:i and LPUSH ack:marks i (the SET runs on its worker's shard
    # while a part there may wait for its sibling, the push on another). In
    # the stream a replica gets, every push must come after its SET. A
    # feeder pipelines SET ack:fd:i, the slow command and LPUSH ack:bq i,
    # which a consumer blocked in BLPOP takes at once; it then sets
    # ack:got:i, which must come after ack:fd:i.
    primary = start_server() if IS_REDIS else start_server("--threads", "4")
    p = primary.client()
    for k in range(4):
        for chunk in range(0, 100000, 10000):
            p.rpush(f"ack:slow:{k}", *range(chunk, chunk + 10000))
    for chunk in range(0, 600000, 20000):
        p.rpush("ack:slower", *range(chunk, chunk + 20000))
    raw = Asking(primary)
    try:
        raw.fullresync()
        raw.payload()
        stop = threading.Event()
        done = [0]
        n = 600

        def watcher():
            c = primary.client()
            for i in range(n):
                while c.get(f"ack:data:{i}") is None:
                    if stop.is_set():
                        return
                c.lpush("ack:seen", i)
                done[0] += 1

        fed = 200

        def consumer():
            c = primary.client()
            got = 0
            while got < fed and not stop.is_set():
                item = c.blpop("ack:bq", timeout=1)
                if item is not None:
                    c.set(f"ack:got:{int(item[1])}", 1)
                    got += 1

        def feeder():
            c = primary.client()
            for i in range(fed):
                pipe = c.pipeline(transaction=False)
                pipe.set(f"ack:fd:{i}", i)
                pipe.linsert("ack:slower", "BEFORE", "no-such-pivot", "x")
                pipe.lpush("ack:bq", i)
                pipe.execute()
                deadline = time.monotonic() + 5
                while c.get(f"ack:got:{i}") is None and time.monotonic() < deadline:
                    pass

        def marker():
            c = primary.client()
            for i in range(n):
                if stop.is_set():
                    return
                pipe = c.pipeline(transaction=False)
                pipe.set(f"ack:mark:{i}", i)
                pipe.lpush("ack:marks", i)
                pipe.execute()

        def writer(first):
            c = primary.client()
            for i in range(first, n, 2):
                pipe = c.pipeline(transaction=False)
                pipe.set(f"ack:data:{i}", i)
                pipe.linsert(f"ack:slow:{i % 4}", "BEFORE", "no-such-pivot", "x")
                pipe.set(f"ack:other:{i}", i)
                pipe.execute()
                c.lpush("ack:queue", i)

        before = p.info("peregrine")
        w = threading.Thread(target=watcher)
        w.start()
        consuming = threading.Thread(target=consumer)
        consuming.start()
        writers = [threading.Thread(target=writer, args=(k,)) for k in range(2)]
        writers.append(threading.Thread(target=marker))
        writers.append(threading.Thread(target=feeder))
        try:
            for t in writers:
                t.start()
            for t in writers:
                t.join(timeout=120)
            w.join(timeout=60)
            consuming.join(timeout=60)
        finally:
            stop.set()
            w.join(timeout=10)
            consuming.join(timeout=10)
        assert done[0] == n
        p.set("ack:end", "1")
        raw.stream_until(b"ack:end", timeout=30)
        # (A MULTI ... EXEC is one step for a replica: its commands count as
        # at once, whatever their order inside.)
        units, unit, in_multi = [], [], False
        for cmd in raw.commands():
            name = cmd[0].upper()
            if name == b"MULTI":
                in_multi = True
            elif name == b"EXEC":
                in_multi = False
            else:
                unit.append(cmd)
            if not in_multi:
                units.append(unit)
                unit = []
        set_at, late = {b"data": set(), b"mark": set(), b"fd": set()}, []
        for unit in units:
            for cmd in unit:
                if cmd[0].upper() == b"SET" and cmd[1].startswith(b"ack:"):
                    kind, _, i = cmd[1][4:].partition(b":")
                    if kind in set_at:
                        set_at[kind].add(int(i))
            for cmd in unit:
                if cmd[0].upper() == b"LPUSH" and cmd[1] in (b"ack:queue", b"ack:seen", b"ack:marks"):
                    kind = b"mark" if cmd[1] == b"ack:marks" else b"data"
                    late.extend((cmd[1], int(i)) for i in cmd[2:] if int(i) not in set_at[kind])
                if cmd[0].upper() == b"SET" and cmd[1].startswith(b"ack:got:"):
                    i = int(cmd[1][8:])
                    if i not in set_at[b"fd"]:
                        late.append((b"ack:got", i))
        assert len(set_at[b"data"]) == n and len(set_at[b"mark"]) == n and len(set_at[b"fd"]) == fed
        assert not late, f"pushed before their SET in the stream: {late[:5]} ({len(late)} in all)"
        if not IS_REDIS:
            assert p.info("peregrine")["cross_shard_write_groups"] - before["cross_shard_write_groups"] >= n // 2
    finally:
        raw.close()


def test_a_replica_that_half_closes_its_connection_is_dropped(primary):
    # Its stream never ends, so it cannot be "done with its replies" as a
    # client that half-closes is: Redis frees it at once, and so does
    # Peregrine (the fuzzer found it kept for ever, waiting for the 5 s delay).
    p = primary.client()
    p.config_set("repl-diskless-sync-delay", "5")
    try:
        raw = Asking(primary)
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
        raw.s.sendall(b"*3\r\n$3\r\nSET\r\n")  # (a command cut short, left unread)
        raw.s.shutdown(socket.SHUT_WR)
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 0, timeout=3)
        raw.s.settimeout(3)
        while raw.s.recv(65536):
            pass  # (the newlines that keep a waiting replica's link alive, then the close)
        raw.close()
    finally:
        p.config_set("repl-diskless-sync-delay", "0")


def test_a_dropped_link_continues_from_the_backlog(primary, tmp_path):
    p = primary.client()
    write_every_type(p, "a", 500)
    replica = start_replica(tmp_path, primary)
    try:
        r = replica.client()
        wait_caught_up(p, r)
        before = p.info("stats")
        # The replica loses its link and asks to continue where it was.
        r.execute_command("CLIENT", "KILL", "TYPE", "master")
        write_every_type(p, "b", 200)
        wait_caught_up(p, r)
        after = p.info("stats")
        assert after["sync_full"] == before["sync_full"]
        assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
        assert snapshot(r) == snapshot(p)
    finally:
        replica.stop()


def test_client_list_and_kill_of_type_replica(primary, tmp_path):
    # A replica's connection is of the replica type (flags S), not normal.
    p = primary.client()
    p.set("k", "v")
    replica = start_replica(tmp_path, primary)
    try:
        r = replica.client()
        wait_caught_up(p, r)
        listed = p.execute_command("CLIENT", "LIST", "TYPE", "replica").decode().splitlines()
        assert len(listed) == 1 and " flags=S " in listed[0], listed
        assert "flags=S" not in p.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
        assert p.execute_command("CLIENT", "LIST", "TYPE", "master") == b""
        assert p.execute_command("CLIENT", "KILL", "TYPE", "master") == 0  # (a primary has none)
        before = p.info("stats")["sync_partial_ok"]
        assert p.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
        p.set("k", "w")
        wait_caught_up(p, r)
        assert r.get("k") == b"w" and p.info("stats")["sync_partial_ok"] == before + 1
    finally:
        replica.stop()


def test_psync_errors(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'psync' command"):
        r.execute_command("PSYNC", "?")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("PSYNC", "?", "x")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("REPLCONF", "listening-port")
    with pytest.raises(redis.ResponseError, match="Unrecognized REPLCONF option: nope"):
        r.execute_command("REPLCONF", "nope", "1")
    assert r.execute_command("REPLCONF", "listening-port", "1234", "capa", "eof", "capa", "whatever") == b"OK"

    with pytest.raises(redis.ResponseError, match="REPLCONF ip-address provided by replica instance is too long"):
        r.execute_command("REPLCONF", "ip-address", "x" * 300)
    assert r.info("replication")["connected_slaves"] == 0


def test_psync_with_replies_pending_is_refused(server):
    # As Redis: the stream must start on an empty output.
    got = raw_command(server, b"REPLCONF capa eof\r\nPSYNC ? -1\r\n")
    assert got == b"+OK\r\n-ERR SYNC and PSYNC are invalid with pending output\r\n", got


def test_a_replica_gone_during_its_sync_harms_nothing(primary, tmp_path):
    p = primary.client()
    write_every_type(p, "k", 2000)
    p.config_set("rdb-key-save-delay", "500")  # (about 2 s of snapshot)
    replica = start_replica(tmp_path, primary)
    try:
        deadline = time.monotonic() + 10
        while p.info("replication")["connected_slaves"] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.info("persistence")["rdb_bgsave_in_progress"] == 1
    finally:
        replica.proc.kill()
        replica.proc.wait()
        replica.stop()
    p.config_set("rdb-key-save-delay", "0")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (p.info("replication")["connected_slaves"] != 0 or
                                           p.info("persistence")["rdb_bgsave_in_progress"] != 0):
        time.sleep(0.05)
    assert p.info("replication")["connected_slaves"] == 0
    assert p.info("persistence")["rdb_bgsave_in_progress"] == 0
    # Still serving, and the next replica syncs.
    p.set("after", "1")
    assert p.bgsave() in (True, b"Background saving started")
    again = start_replica(tmp_path, primary)
    try:
        r = again.client()
        wait_caught_up(p, r)
        assert snapshot(r) == snapshot(p)
    finally:
        again.stop()


def test_shutdown_with_a_stuck_replica_is_prompt(start_server):
    # A replica that asks for a full resync and never reads: the snapshot's
    # thread waits for its socket; SHUTDOWN does not wait for it.
    server = start_server()
    p = server.client()
    for i in range(300):
        p.set(f"big:{i}", os.urandom(100_000))  # (30 MB the compression cannot shrink)
    s = socket.create_connection((server.host, server.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"REPLCONF capa eof capa psync2\r\n")
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(b"PSYNC ? -1\r\n")
    try:
        deadline = time.monotonic() + 10
        while p.info("replication")["connected_slaves"] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        assert p.info("persistence")["rdb_bgsave_in_progress"] == 1
        # (Without redis-py's retries: their backoff would be timed too.)
        once = server.client(retry=NO_RETRY)
        t0 = time.monotonic()
        try:
            once.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        server.proc.wait(timeout=10)
        assert time.monotonic() - t0 < 5
    finally:
        s.close()


class FakeReplica(Asking):
    """A replica by hand: asks for a full resync and reads the snapshot (the
    socket's bytes after it stay unread); then reads the stream only when
    told to, and acknowledges only when told to."""

    def __init__(self, server, rcvbuf=None):
        super().__init__(server, rcvbuf=rcvbuf)
        self.offset = self.fullresync()
        self.rdb = self.payload()
        assert self.rdb.startswith(b"REDIS00"), self.rdb[:9]


@pytest.mark.skipif(IS_REDIS, reason="the replica's handshake by hand, timed as Peregrine's cron")
def test_silent_replicas_min_replicas_and_the_backlogs_end(start_server):
    server = start_server("--repl-timeout", "2", "--repl-backlog-ttl", "2")
    p = server.client()
    p.config_set("min-replicas-to-write", "1")
    p.config_set("min-replicas-max-lag", "1")
    with pytest.raises(redis.ResponseError, match="NOREPLICAS Not enough good replicas to write."):
        p.set("k", "v")
    fake = FakeReplica(server)
    try:
        first_id = p.info("replication")["master_replid"]
        assert fake.replid == first_id
        assert p.info("stats")["sync_full"] == 1
        # Acknowledging: a good replica, so writes go.
        fake.ack(fake.offset)
        assert wait_for(lambda: _writes_allowed(p))
        info = p.info("replication")
        assert info["slave0"]["port"] == 7777 and info["slave0"]["state"] == "online"
        # Silent past min-replicas-max-lag: writes refused again; past
        # repl-timeout: dropped.
        assert wait_for(lambda: not _writes_allowed(p))
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 0)
        # repl-backlog-ttl after the last replica: no backlog, a new ID.
        assert p.info("replication")["repl_backlog_active"] == 1
        assert wait_for(lambda: p.info("replication")["repl_backlog_active"] == 0)
        assert p.info("replication")["master_replid"] != first_id
    finally:
        fake.close()
        p.config_set("min-replicas-to-write", "0")


def _writes_allowed(c):
    try:
        c.set("probe", "1")
        return True
    except redis.ResponseError as e:
        assert "NOREPLICAS" in str(e)
        return False


@pytest.mark.skipif(IS_REDIS, reason="the replica's handshake by hand")
def test_a_replica_over_its_output_limit_is_dropped(start_server):
    server = start_server()
    p = server.client()
    p.config_set("client-output-buffer-limit", "replica 1mb 0 0")
    fake = FakeReplica(server, rcvbuf=4096)  # (then reads nothing more)
    try:
        before = p.info("stats")["client_output_buffer_limit_disconnections"]
        value = os.urandom(100_000)
        for i in range(100):  # 10 MB of stream it does not read
            p.set(f"v{i}", value)
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 0)
        assert p.info("stats")["client_output_buffer_limit_disconnections"] == before + 1
        p.set("still", "serving")
        assert p.get("still") == b"serving"
    finally:
        fake.close()


@pytest.mark.skipif(IS_REDIS, reason="Redis shares the BGSAVE with a disk-based sync instead")
def test_a_full_resync_waits_for_a_bgsave_running(start_server, tmp_path):
    server = start_server("--dir", str(tmp_path))
    p = server.client()
    write_every_type(p, "k", 1000)
    p.config_set("rdb-key-save-delay", "2000")  # (the BGSAVE takes seconds)
    p.bgsave()
    # One replica that goes while it waits, one that stays.
    gone = FakeReplicaWaiting(server)
    assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
    assert p.info("replication")["slave0"]["state"] == "wait_bgsave"
    time.sleep(1.2)
    assert gone.got_newlines()  # (Redis's keep-alive while it waits)
    gone.close()
    assert wait_for(lambda: p.info("replication")["connected_slaves"] == 0)
    (tmp_path / "r").mkdir()
    replica = start_replica(tmp_path / "r", server)
    try:
        r = replica.client()
        time.sleep(0.5)
        assert p.info("persistence")["rdb_bgsave_in_progress"] == 1
        p.config_set("rdb-key-save-delay", "0")
        wait_caught_up(p, r)
        assert snapshot(r) == snapshot(p)
        assert p.info("replication")["connected_slaves"] == 1
    finally:
        replica.stop()


class FakeReplicaWaiting:
    """A replica by hand that asks for a full resync and only listens."""

    def __init__(self, server):
        self.s = socket.create_connection((server.host, server.port), timeout=10)
        self.s.sendall(b"REPLCONF capa eof\r\n")
        assert self.s.recv(100) == b"+OK\r\n"
        self.s.sendall(b"PSYNC ? -1\r\n")

    def got_newlines(self):
        self.s.settimeout(0.5)
        data = self.s.recv(100)
        return data != b"" and set(data) == {ord("\n")}

    def close(self):
        self.s.close()


def test_redis_cli_rdb_and_replica(primary, tmp_path):
    # The tools that speak the protocol before PSYNC: redis-cli --rdb
    # (REPLCONF rdb-only 1, SYNC: the snapshot alone) and --replica (SYNC,
    # then the stream printed).
    p = primary.client()
    write_every_type(p, "cli", 300)
    path = tmp_path / "cli.rdb"
    out = subprocess.run(["redis-cli", "-p", str(primary.port), "--rdb", str(path)], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    assert path.read_bytes().startswith(b"REDIS00")
    (tmp_path / "load").mkdir()
    loaded = ServerProcess(["--dir", str(tmp_path), "--dbfilename", "cli.rdb"], kind="redis")
    try:
        assert snapshot(loaded.client()) == snapshot(p)
    finally:
        loaded.stop()
    # (The rdb-only connection closed after its snapshot: no replica left.)
    assert wait_for(lambda: p.info("replication")["connected_slaves"] == 0)
    cli = subprocess.Popen(["redis-cli", "-p", str(primary.port), "--replica"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
        assert wait_for(lambda: p.info("replication")["slave0"]["state"] == "online")
        p.set("from-the-stream", "yes")
        p.config_set("repl-timeout", "1")  # (a SYNC replica sends no ACKs: never timed out)
        time.sleep(2.5)
        assert p.info("replication")["connected_slaves"] == 1
    finally:
        p.config_set("repl-timeout", "60")
        cli.terminate()
        text = cli.communicate(timeout=10)[0]
    assert "SYNC done" in text, text
    assert '"set","from-the-stream","yes"' in text.lower(), text


def test_a_disk_based_sync(start_server, tmp_path):
    # repl-diskless-sync no: a BGSAVE to dbfilename, then `$<length>` and the
    # file's bytes (Redis 7's disk-based sync); what is written meanwhile
    # follows in the stream. redis-cli --rdb gets the file too.
    server = start_server("--dir", str(tmp_path), "--repl-diskless-sync", "no")
    p = server.client()
    write_every_type(p, "before", 1000)
    p.config_set("rdb-key-save-delay", "1000")  # (the file takes about a second)
    (tmp_path / "r").mkdir()
    replica = start_replica(tmp_path / "r", server)
    try:
        r = replica.client()
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
        assert p.info("replication")["slave0"]["state"] == "wait_bgsave"
        write_every_type(p, "during", 300)
        end_slowed_sync(p, r, 200)
        assert p.info("replication")["slave0"]["state"] == "online"
        assert (tmp_path / "dump.rdb").read_bytes().startswith(b"REDIS00")
        assert p.info("persistence")["rdb_last_bgsave_status"] == "ok"
        log = server.output()
        assert "Starting BGSAVE for SYNC with target: disk" in log
        assert "Synchronization with replica 127.0.0.1:%d succeeded" % replica.port in log
        path = tmp_path / "cli.rdb"
        out = subprocess.run(["redis-cli", "-p", str(server.port), "--rdb", str(path)], capture_output=True,
                             text=True, timeout=30)
        assert out.returncode == 0, out.stdout + out.stderr
        assert path.read_bytes().startswith(b"REDIS00")
        assert wait_for(lambda: p.info("replication")["connected_slaves"] == 1)
    finally:
        replica.stop()


def test_a_replica_without_capa_eof_gets_the_file(start_server, tmp_path):
    # (Redis 7: a replica that cannot read the diskless form syncs from the
    # file, whatever repl-diskless-sync says.)
    server = start_server("--dir", str(tmp_path))
    p = server.client()
    p.set("k", "v")
    with socket.create_connection((server.host, server.port), timeout=10) as s:
        s.sendall(b"REPLCONF capa psync2\r\n")
        assert s.recv(100) == b"+OK\r\n"
        s.sendall(b"PSYNC ? -1\r\n")
        buf = b""
        while buf.lstrip(b"\n").count(b"\r\n") < 2:
            buf += s.recv(65536)
        full, bulk, rest = buf.split(b"\r\n", 2)
        assert re.fullmatch(rb"\+FULLRESYNC [0-9a-f]{40} \d+", full), full
        bulk = bulk.lstrip(b"\n")
        assert re.fullmatch(rb"\$\d+", bulk), bulk
        size = int(bulk[1:])
        while len(rest) < size:
            rest += s.recv(65536)
        assert rest.startswith(b"REDIS00") and rest[size - 9] == 0xFF  # (the RDB's end, then its checksum)
        p.set("from-the-stream", "1")
        while b"from-the-stream" not in rest:
            rest += s.recv(65536)


def test_wait_without_replicas(r):
    assert r.execute_command("WAIT", 0, 0) == 0
    t0 = time.monotonic()
    assert r.execute_command("WAIT", 1, 150) == 0
    assert time.monotonic() - t0 >= 0.14
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("WAIT", "x", 1)
    with pytest.raises(redis.ResponseError, match="timeout is not an integer or out of range"):
        r.execute_command("WAIT", 1, "x")
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        r.execute_command("WAIT", 1, -1)
    if not IS_REDIS:  # (Redis 7.2's check; Debian's 7.0 overflows and waits for ever)
        with pytest.raises(redis.ResponseError, match="timeout is out of range"):
            r.execute_command("WAIT", 1, 2**63 - 1)
    # Inside MULTI it does not wait: the count at EXEC.
    t = r.pipeline(transaction=True)
    t.set("k", "v")
    t.execute_command("WAIT", 5, 0)
    assert t.execute() == [True, 0]


def test_wait_for_a_redis_replica(primary, tmp_path):
    p = primary.client()
    replica = start_replica(tmp_path, primary)
    try:
        r = replica.client()
        wait_caught_up(p, r)
        # A write, then WAIT: the replica has it when WAIT answers 1.
        for i in range(20):
            pipe = p.pipeline(transaction=False)
            pipe.set(f"w{i}", i)
            pipe.incr("n")
            pipe.execute_command("WAIT", 1, 0)
            pipe.get("n")  # (answered after WAIT: its input waited)
            assert pipe.execute() == [True, i + 1, 1, str(i + 1).encode()]
            assert r.get(f"w{i}") == str(i).encode()
        t0 = time.monotonic()
        assert p.execute_command("WAIT", 2, 200) == 1
        assert time.monotonic() - t0 >= 0.19
        # A client that goes while it waits harms nothing.
        c = primary.client()
        s = socket.create_connection((primary.host, primary.port))
        s.sendall(b"WAIT 3 0\r\n")
        time.sleep(0.2)
        s.close()
        assert c.set("after", "1") and c.execute_command("WAIT", 1, 0) == 1
    finally:
        replica.stop()


def test_client_unblock_ends_a_wait(r, server):
    for reason, expect in (("TIMEOUT", b":0\r\n"), ("ERROR", b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")):
        s = socket.create_connection((server.host, server.port), timeout=10)
        s.sendall(b"CLIENT ID\r\n")
        ident = int(s.recv(100)[1:-2])
        s.sendall(b"WAIT 1 0\r\nPING\r\n")
        # Blocked, as Redis counts and flags it.
        assert wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
        assert "b" in next(l for l in r.execute_command("CLIENT", "LIST").decode().splitlines()
                           if l.startswith(f"id={ident} ")).split(" flags=")[1].split(" ")[0]
        assert wait_for(lambda: r.execute_command("CLIENT", "UNBLOCK", ident, reason) == 1)
        got = b""
        while got.count(b"\r\n") < 2:
            got += s.recv(1000)
        assert got == expect + b"+PONG\r\n", got
        assert r.execute_command("CLIENT", "UNBLOCK", ident, reason) == 0  # (not waiting any more)
        s.close()


# ---------------------------------------------------------------- SHUTDOWN and lagging replicas

@contextlib.contextmanager
def lagging_replica(start_server, timeout_s):
    """A server with shutdown-timeout `timeout_s` and a replica online (it
    acknowledged its snapshot) that acknowledges nothing after: once
    something is written, it lags. Yields (server, client, replica)."""
    server = start_server("--shutdown-timeout", str(timeout_s))
    p = server.client()
    fake = FakeReplica(server)

    def drain():  # (reads the stream, acknowledges nothing: a server exits without waiting to flush it)
        try:
            while fake.s.recv(65536):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    try:
        fake.ack(fake.offset)
        assert wait_for(lambda: p.info("replication").get("slave0", {}).get("state") == "online")
        p.set("lag", "1")
        yield server, p, fake
    finally:
        fake.close()


def _shutdown_in_thread(server):
    out = {}

    def run():
        try:
            server.client(socket_timeout=60, retry=Retry(NoBackoff(), 0)).execute_command("SHUTDOWN", "NOSAVE")
            out["r"] = "answered"
        except redis.ConnectionError:
            out["r"] = "closed"
        except redis.ResponseError as e:
            out["r"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    return t, out


def _seconds_to_exit(server, *args):
    """SHUTDOWN `args` (which do not wait): the seconds until the process is gone."""
    t0 = time.monotonic()
    with socket.create_connection((server.host, server.port), timeout=30) as s:  # (no client retries)
        s.sendall(" ".join(("SHUTDOWN",) + args).encode() + b"\r\n")
        assert s.recv(100) == b""
    server.proc.wait(timeout=20)
    return time.monotonic() - t0


def test_shutdown_waits_for_a_lagging_replica_up_to_shutdown_timeout(start_server):
    with lagging_replica(start_server, 2) as (server, p, _):
        assert p.config_get("shutdown-timeout") == {"shutdown-timeout": "2"}
        t0 = time.monotonic()
        t, out = _shutdown_in_thread(server)
        t.join(30)
        server.proc.wait(timeout=10)
        assert out["r"] == "closed"
        assert 1.5 <= time.monotonic() - t0 < 8


def test_shutdown_ends_when_the_replica_catches_up(start_server):
    with lagging_replica(start_server, 60) as (server, p, fake):
        t, out = _shutdown_in_thread(server)
        time.sleep(0.5)
        assert server.proc.poll() is None  # (waiting)
        assert p.get("lag") == b"1"  # (reads go on)
        assert 50000 <= p.info("server")["shutdown_in_milliseconds"] <= 60000
        fake.ack(p.info("replication")["master_repl_offset"])
        t0 = time.monotonic()
        server.proc.wait(timeout=20)
        t.join(10)
        assert out["r"] == "closed"
        assert time.monotonic() - t0 < 10


def test_shutdown_abort_while_waiting_for_replicas(start_server):
    with lagging_replica(start_server, 60) as (server, p, _):
        with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
            p.execute_command("SHUTDOWN", "ABORT")
        t, out = _shutdown_in_thread(server)
        time.sleep(0.5)
        # A write waits for the shutdown's end (writes are paused).
        wrote = {}
        w = threading.Thread(target=lambda: wrote.setdefault("r", server.client(socket_timeout=30).set("w", "1")))
        w.start()
        time.sleep(0.3)
        assert "r" not in wrote
        assert p.execute_command("SHUTDOWN", "ABORT") in (True, b"OK")
        t.join(10)
        assert "Errors trying to SHUTDOWN" in out["r"], out
        w.join(10)
        assert wrote["r"] is True
        assert p.ping() and p.get("w") == b"1"
        with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
            p.execute_command("SHUTDOWN", "ABORT")
        # NOW does not wait.
        assert _seconds_to_exit(server, "NOW", "NOSAVE") < 1.5


def test_shutdown_timeout_0_does_not_wait(start_server):
    with lagging_replica(start_server, 0) as (server, _, _):
        assert _seconds_to_exit(server, "NOSAVE") < 1.5


def test_shutdown_goes_on_when_its_client_leaves(start_server):
    with lagging_replica(start_server, 2) as (server, _, _):
        s = socket.create_connection((server.host, server.port))
        s.sendall(b"SHUTDOWN NOSAVE\r\n")
        time.sleep(0.3)
        s.close()  # (its waiting client gone: the server still shuts down)
        server.proc.wait(timeout=20)


def test_sigterm_waits_for_a_lagging_replica_and_sigint_insists(start_server):
    with lagging_replica(start_server, 2) as (server, _, _):
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=20) == 0
        assert 1.5 <= time.monotonic() - t0 < 8
    with lagging_replica(start_server, 60) as (server, p, _):
        server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert server.proc.poll() is None and p.ping()  # (waiting)
        server.proc.send_signal(signal.SIGTERM)  # (changes nothing)
        time.sleep(0.5)
        assert server.proc.poll() is None and p.ping()
        # A SIGINT meanwhile: out at once, with an error status.
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(timeout=20) == 1
        assert time.monotonic() - t0 < 5


def test_a_sync_stream_starts_with_the_writes_not_a_ping(primary):
    # As Redis's test suite reads it (attach_to_replication_stream): with
    # repl-ping-replica-period far away, the first thing after the snapshot
    # is the first write, not a keep-alive PING sent on attaching.
    c = primary.client()
    c.config_set("repl-ping-replica-period", 3600)
    s = socket.create_connection((primary.host, primary.port), timeout=10)
    try:
        s.sendall(b"SYNC\r\n")
        f = s.makefile("rb")
        line = f.readline()
        while not line.strip():  # (newlines keep it alive while the snapshot is made)
            line = f.readline()
        assert line.startswith(b"$")
        f.read(int(line[1:]))
        time.sleep(1.5)  # (a cron tick or more)
        c.set("first", "1")
        assert f.readline() == b"*2\r\n"  # SELECT 0
        for _ in range(4):
            f.readline()
        assert f.readline() == b"*3\r\n" and f.readline() == b"$3\r\n" and f.readline().upper() == b"SET\r\n"
    finally:
        s.close()
