# The replica side of replication (issue #38, docs/replication.md): the
# server under test follows a primary (Debian's redis-server, or itself),
# with REPLICAOF. With TEST_SERVER=redis every server is redis-server, which
# is how these shapes were checked.
import os
import re
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from conftest import IS_REDIS, TEST_SERVER, ServerProcess
from helpers import pump, wait_for
from test_replication import snapshot, wait_caught_up, write_every_type

ZEROS = "0" * 40


def start(tmp_path, name, kind=None, args=()):
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    base = ["--dir", str(d)]
    if (kind or TEST_SERVER) == "redis":
        base += ["--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes"]
    else:
        base += ["--enable-debug-command", "yes"]
    return ServerProcess(base + list(args), tmp_path=d, kind=kind)


@pytest.fixture
def servers():
    started = []
    yield started
    for s in started:
        s.stop()


def wait_link(c, status="up", timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if c.info("replication").get("master_link_status") == status:
            return
        time.sleep(0.05)
    raise AssertionError(f"link not {status}: {c.info('replication')}")


@pytest.mark.parametrize("primary_kind", ["redis", TEST_SERVER])
def test_a_replica_ends_equal_and_refuses_writes(servers, tmp_path, primary_kind):
    primary = start(tmp_path, "p", kind=primary_kind)
    servers.append(primary)
    p = primary.client()
    write_every_type(p, "before", 2000)
    replica = start(tmp_path, "r")
    servers.append(replica)
    r = replica.client()
    assert r.execute_command("REPLICAOF", "127.0.0.1", primary.port) == b"OK"
    write_every_type(p, "during", 500)
    wait_caught_up(p, r)
    write_every_type(p, "after", 300)
    p.delete("before:n")
    wait_caught_up(p, r)
    assert snapshot(r) == snapshot(p)
    # The same deadlines (within the time the comparison takes).
    assert abs(r.pttl("before:ttl:0") - p.pttl("before:ttl:0")) < 2000
    # Writes refused, reads and scripts without writes allowed.
    with pytest.raises(redis.ResponseError, match="^You can't write against a read only replica.$"):
        r.set("x", 1)
    with pytest.raises(redis.ResponseError, match="You can't write against a read only replica."):
        r.eval("return redis.call('set', 'x', 1)", 0)
    assert r.eval("return redis.call('get', KEYS[1])", 1, "before:s:1") == b"v1"
    t = r.pipeline(transaction=True)
    t.get("before:s:1")
    t.set("x", 1)
    with pytest.raises(redis.ResponseError, match="SET x 1.*You can't write against a read only replica"):
        t.execute()
    with pytest.raises(redis.ResponseError, match="WAIT cannot be used with replica instances"):
        r.execute_command("WAIT", 1, 0)
    # ROLE and INFO replication, as Redis shows a replica.
    role = r.execute_command("ROLE")
    assert role[:4] == [b"slave", b"127.0.0.1", primary.port, b"connected"]
    assert role[4] == p.info("replication")["master_repl_offset"]
    info = r.info("replication")
    assert info["role"] == "slave"
    assert info["master_host"] == "127.0.0.1" and info["master_port"] == primary.port
    assert info["master_link_status"] == "up"
    assert info["master_sync_in_progress"] == 0
    assert info["slave_read_only"] == 1 and info["slave_priority"] == 100
    assert info["master_replid"] == p.info("replication")["master_replid"]
    assert info["slave_repl_offset"] == info["master_repl_offset"]
    # The primary sees it online.
    pinfo = p.info("replication")
    assert pinfo["connected_slaves"] == 1 and pinfo["slave0"]["state"] == "online"
    # A transaction and a script of the primary arrive whole.
    t = p.pipeline(transaction=True)
    t.set("t1", "a")
    t.incr("t2")
    t.execute()
    p.eval("redis.call('lpush', 'sl', 'a', 'b'); redis.call('hset', 'sh', 'f', 'v')", 0)
    wait_caught_up(p, r)
    assert r.mget("t1", "t2") == [b"a", b"1"]
    assert r.lrange("sl", 0, -1) == [b"b", b"a"] and r.hgetall("sh") == {b"f": b"v"}


def assert_continued(p, r, stats_before):
    """The replica caught up with a partial resync (no full one) and is equal."""
    wait_caught_up(p, r)
    after = p.info("stats")
    assert after["sync_full"] == stats_before["sync_full"]
    assert after["sync_partial_ok"] == stats_before["sync_partial_ok"] + 1
    assert snapshot(r) == snapshot(p)


def replicated_pair(servers, tmp_path, primary_kind=None, replica_kind=None, writes=300):
    """A primary with every type written (`writes` rounds of it), and a
    replica caught up with it (the primary sees it online): (primary,
    replica, their clients)."""
    primary = start(tmp_path, "p", kind=primary_kind)
    replica = start(tmp_path, "r", kind=replica_kind)
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    if writes:
        write_every_type(p, "a", writes)
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    deadline = time.monotonic() + 10
    while p.info("replication").get("slave0", {}).get("state") != "online" and time.monotonic() < deadline:
        time.sleep(0.02)
    return primary, replica, p, r


def test_a_killed_link_continues_where_it_was(servers, tmp_path):
    primary, replica, p, r = replicated_pair(servers, tmp_path, primary_kind="redis")
    before = p.info("stats")
    p.execute_command("CLIENT", "KILL", "TYPE", "replica")
    write_every_type(p, "b", 300)
    assert_continued(p, r, before)


@pytest.mark.parametrize("primary_kind", ["redis", TEST_SERVER])
def test_client_kill_type_master_drops_the_link_which_continues(servers, tmp_path, primary_kind):
    # On the replica: its link to the primary goes, and comes back with a
    # partial resync (Redis's master client killed).
    primary, replica, p, r = replicated_pair(servers, tmp_path, primary_kind=primary_kind)
    before = p.info("stats")
    assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    write_every_type(p, "b", 300)
    assert_continued(p, r, before)


def master_line(r, *args):
    lines = r.execute_command("CLIENT", "LIST", *args).decode().splitlines()
    found = [dict(f.split("=", 1) for f in line.split(" ")) for line in lines if " flags=M " in line]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize("primary_kind", ["redis", TEST_SERVER])
def test_client_list_shows_the_primarys_connection(servers, tmp_path, primary_kind):
    # Redis's master client: flags=M, the primary's address, the database
    # and command of the stream, no user (the superuser); listed by TYPE
    # master and by its ID, killed by ID or ADDR, and the same after the
    # link continues.
    primary, replica, p, r = replicated_pair(servers, tmp_path, primary_kind=primary_kind)
    p.execute_command("SELECT", "3")
    p.set("in-three", "1")
    wait_caught_up(p, r)
    m = master_line(r)
    assert m is not None
    assert m["addr"] == f"127.0.0.1:{primary.port}"
    assert m["db"] == "3" and m["cmd"] in ("set", "ping") and m["user"] == "(superuser)"
    assert m["multi"] == "-1" and m["resp"] == "2" and m["fd"] != "-1"
    # The primary sees the same connection from the other end.
    seen = p.execute_command("CLIENT", "LIST", "TYPE", "replica").decode()
    assert f"addr={m['laddr']} " in seen
    assert master_line(r, "TYPE", "master")["id"] == m["id"]
    assert master_line(r, "ID", m["id"])["id"] == m["id"]
    assert master_line(r, "TYPE", "normal") is None
    assert master_line(r, "ID", str(int(m["id"]) + 1000)) is None
    assert r.execute_command("CLIENT", "KILL", "TYPE", "normal", "ADDR", m["addr"]) == 0
    before = p.info("stats")
    assert r.execute_command("CLIENT", "KILL", "ID", m["id"]) == 1
    write_every_type(p, "b", 50)
    assert_continued(p, r, before)
    again = master_line(r)
    assert again is not None and again["id"] == m["id"] and again["laddr"] != m["laddr"]
    before = p.info("stats")
    assert r.execute_command("CLIENT", "KILL", "ADDR", m["addr"]) == 1
    write_every_type(p, "c", 50)
    assert_continued(p, r, before)


def test_a_restarted_replica_continues_where_it_was(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis")
    servers.append(primary)
    p = primary.client()
    write_every_type(p, "a", 300)
    args = ["--replicaof", "127.0.0.1", str(primary.port)]
    replica = start(tmp_path, "r", args=args)
    r = replica.client()
    wait_caught_up(p, r)
    try:
        r.execute_command("SHUTDOWN", "SAVE")
    except redis.ConnectionError:
        pass
    replica.proc.wait(timeout=10)
    replica.stop()
    write_every_type(p, "b", 100)
    before = p.info("stats")
    replica = start(tmp_path, "r", args=args)
    servers.append(replica)
    assert_continued(p, replica.client(), before)


def test_promotion_and_the_old_primary_following_it(servers, tmp_path):
    primary, replica, p, r = replicated_pair(servers, tmp_path)
    old = p.info("replication")
    # The replica takes over: a new ID, the old one reachable up to here.
    assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    info = r.info("replication")
    assert info["role"] == "master"
    assert info["master_replid"] != old["master_replid"]
    assert info["master_replid2"] == old["master_replid"]
    assert info["second_repl_offset"] == old["master_repl_offset"] + 1
    assert r.set("new", "1")
    assert r.execute_command("ROLE")[0] == b"master"
    # The old primary follows it, continuing its own history.
    before = r.info("stats")
    p.execute_command("REPLICAOF", "127.0.0.1", replica.port)
    wait_caught_up(r, p)
    after = r.info("stats")
    assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
    assert after["sync_full"] == before["sync_full"]
    assert p.get("new") == b"1"
    assert snapshot(r) == snapshot(p)
    assert p.info("replication")["master_replid"] == r.info("replication")["master_replid"]


def test_a_chain_of_replicas(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis")
    middle = start(tmp_path, "m")
    leaf = start(tmp_path, "l", kind="redis")
    servers += [primary, middle, leaf]
    p, m, l = primary.client(), middle.client(), leaf.client()
    write_every_type(p, "a", 300)
    m.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, m)
    l.execute_command("REPLICAOF", "127.0.0.1", middle.port)
    write_every_type(p, "b", 300)
    wait_caught_up(p, m)
    wait_caught_up(p, l)
    assert snapshot(l) == snapshot(p)
    # The same history all along the chain.
    ids = {c.info("replication")["master_replid"] for c in (p, m, l)}
    assert len(ids) == 1


def test_keys_past_their_deadline_wait_for_the_primarys_del(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis")
    replica = start(tmp_path, "r")
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    p.set("soon", "v", px=300)
    p.set("kept", "v")
    wait_caught_up(p, r)
    assert r.get("soon") == b"v"
    time.sleep(0.5)
    # Hidden from reads, but still there until the primary deletes it.
    assert r.get("soon") is None
    assert r.exists("soon") == 0
    assert r.dbsize() == 2
    assert p.dbsize() == 2
    # The primary's access deletes it, and its DEL reaches the replica.
    assert p.get("soon") is None
    wait_caught_up(p, r)
    assert r.dbsize() == 1


def test_replicaof_errors_and_repeats(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis")
    replica = start(tmp_path, "r")
    servers += [primary, replica]
    r = replica.client()
    with pytest.raises(redis.ResponseError, match="^Invalid master port$"):
        r.execute_command("REPLICAOF", "127.0.0.1", "port")
    with pytest.raises(redis.ResponseError, match="^Invalid master port$"):
        r.execute_command("REPLICAOF", "127.0.0.1", "70000")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'replicaof' command"):
        r.execute_command("REPLICAOF", "127.0.0.1")
    assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"  # (already a primary: nothing)
    assert r.info("replication")["role"] == "master"
    assert r.execute_command("SLAVEOF", "127.0.0.1", primary.port) is True  # (redis-py reads +OK so)
    assert r.execute_command("REPLICAOF", "127.0.0.1", primary.port) == b"OK Already connected to specified master"
    wait_link(r)
    assert r.config_get("replicaof") == {"replicaof": f"127.0.0.1 {primary.port}"}
    assert r.execute_command("REPLICAOF", "no", "one") == b"OK"
    assert r.config_get("replicaof") == {"replicaof": ""}
    assert r.set("x", 1)


def test_stale_data_and_a_primary_that_is_not_there(servers, tmp_path):
    replica = start(tmp_path, "r")
    servers.append(replica)
    r = replica.client()
    r.set("k", "v")
    # (Port 1: nothing listens there, and no connection can be made to
    # itself, as one to a free ephemeral port can.)
    r.execute_command("REPLICAOF", "127.0.0.1", 1)
    info = r.info("replication")
    assert info["master_link_status"] == "down"
    assert info["master_link_down_since_seconds"] == -1  # (never up)
    assert r.get("k") == b"v"  # (replica-serve-stale-data yes)
    r.config_set("replica-serve-stale-data", "no")
    with pytest.raises(redis.ResponseError, match="^Link with MASTER is down and replica-serve-stale-data is set "
                                                  "to 'no'.$"):
        r.get("k")
    assert r.info("replication")["role"] == "slave"  # (INFO is allowed)
    assert r.execute_command("ROLE")[3] in (b"connect", b"connecting")
    r.execute_command("REPLICAOF", "NO", "ONE")
    assert r.get("k") == b"v"


def test_masterauth(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis", args=["--requirepass", "secret"])
    replica = start(tmp_path, "r")
    servers += [primary, replica]
    p = primary.client(password="secret")
    r = replica.client()
    p.set("k", "v")
    r.config_set("masterauth", "wrong")
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    time.sleep(1.5)
    assert r.info("replication")["master_link_status"] == "down"
    r.config_set("masterauth", "secret")
    wait_link(r)
    wait_caught_up(p, r)
    assert r.get("k") == b"v"


def _next_message(sub, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = sub.get_message(timeout=max(0.01, deadline - time.monotonic()))
        if msg is not None and msg["type"] in ("message", "pmessage"):
            return msg
    return None


@pytest.mark.parametrize("primary_kind", ["redis", TEST_SERVER])
@pytest.mark.parametrize("replica_kind", ["redis", TEST_SERVER])
def test_subscribers_of_a_replica_hear_the_primarys_publish(servers, tmp_path, primary_kind, replica_kind):
    primary, replica, p, r = replicated_pair(servers, tmp_path, primary_kind=primary_kind,
                                             replica_kind=replica_kind, writes=0)
    sub = r.pubsub()
    sub.subscribe("news")
    sub.psubscribe("n*")
    for _ in range(2):
        assert sub.get_message(timeout=5)["type"] in ("subscribe", "psubscribe")
    assert p.publish("news", "hello") == 0  # (nobody subscribed on the primary)
    # From another database and inside a transaction too: PUBLISH goes down
    # the stream whatever the client's database, and in the order it ran.
    p3 = primary.client(db=3)
    with p3.pipeline(transaction=True) as t:
        t.set("k3", "v3")
        t.publish("news", "in-multi")
        t.execute()
    got = [(m["type"], m["data"]) for m in (_next_message(sub) for _ in range(4)) if m is not None]
    assert sorted(got) == sorted([("message", b"hello"), ("pmessage", b"hello"),
                                  ("message", b"in-multi"), ("pmessage", b"in-multi")]), got
    wait_caught_up(p, r)
    assert replica.client(db=3).get("k3") == b"v3"
    sub.close()


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's workers")
@pytest.mark.parametrize("replica_kind", ["redis", TEST_SERVER])
def test_a_replica_subscriber_finds_what_was_written_before_the_publish(servers, tmp_path, replica_kind):
    # A producer pipelines SET data:<i> then PUBLISH jobs <i> over a primary
    # of 4 workers (the keys on every shard); a subscriber on the replica
    # reads data:<i> when it hears <i>: the stream must carry the PUBLISH
    # after the SET, whichever worker ran each.
    primary = start(tmp_path, "p", args=["--threads", "4"])
    replica = start(tmp_path, "r", kind=replica_kind)
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    sub = r.pubsub()
    sub.subscribe("jobs")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    reader = replica.client()
    n, missing = 200, []
    for start_i in range(0, n, 20):
        with p.pipeline(transaction=False) as pipe:
            for i in range(start_i, start_i + 20):
                pipe.set(f"data:{i}", f"v{i}")
                pipe.publish("jobs", str(i))
            pipe.execute()
    # And from scripts and transactions: the PUBLISH in its place in their
    # MULTI/EXEC, after their writes.
    for i in range(n, n + 50):
        p.eval("redis.call('SET', KEYS[1], ARGV[2]); redis.call('PUBLISH', 'jobs', ARGV[1])", 1,
               f"data:{i}", str(i), f"v{i}")
    for i in range(n + 50, n + 100):
        with p.pipeline(transaction=True) as t:
            t.set(f"data:{{t{i}}}", "x").set(f"data:{i}", f"v{i}").publish("jobs", str(i)).execute()
    heard = 0
    while heard < n + 100:
        msg = _next_message(sub, timeout=10)
        assert msg is not None, f"heard {heard} of {n + 100}"
        heard += 1
        i = int(msg["data"])
        if reader.get(f"data:{i}") != f"v{i}".encode():
            missing.append(i)
    assert missing == []
    sub.close()


@pytest.mark.skipif(IS_REDIS, reason="reads Peregrine's own AOF files")
def test_publish_goes_to_replicas_not_to_the_append_only_file(servers, tmp_path):
    primary = start(tmp_path, "p", args=["--appendonly", "yes"])
    replica = start(tmp_path, "r", kind="redis")
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    p.set("before", "1")
    p.publish("news", "not-logged")
    p.eval("redis.call('SET', 'in-script', '1'); redis.call('PUBLISH', 'news', 'not-logged')", 0)
    p.eval("redis.call('PUBLISH', 'news', 'not-logged')", 0)
    p.set("after", "2")
    wait_caught_up(p, r)
    assert r.get("after") == b"2"
    logged = b""
    for root, _, files in os.walk(tmp_path / "p"):
        for f in files:
            if ".aof" in f:
                with open(os.path.join(root, f), "rb") as fh:
                    logged += fh.read()
    assert b"after" in logged and b"in-script" in logged
    assert b"not-logged" not in logged and b"PUBLISH" not in logged.upper()
    assert r.get("in-script") == b"1"


def test_a_writable_replica(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis")
    replica = start(tmp_path, "r", args=["--replica-read-only", "no"])
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    p.set("soon", "old", px=200)
    wait_caught_up(p, r)
    time.sleep(0.4)
    assert r.info("replication")["slave_read_only"] == 0
    # A local write to a key past its deadline replaces it, once.
    assert r.set("soon", "local")
    assert r.get("soon") == b"local"
    assert r.execute_command("DBSIZE") == 1
    assert r.set("mine", "x") and r.get("mine") == b"x"


class CuttingProxy:
    """A loopback TCP proxy to `port` that cuts every connection through it
    at random moments while `cutting` is set."""

    def __init__(self, port, seed):
        import random
        import socket
        import threading
        self.target = port
        self.rng = random.Random(seed)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.conns = []
        self.lock = threading.Lock()
        self.cutting = threading.Event()
        self.done = threading.Event()
        self.cuts = 0
        self.threads = [threading.Thread(target=self._accept, daemon=True),
                        threading.Thread(target=self._cut, daemon=True)]
        for t in self.threads:
            t.start()

    def _accept(self):
        import socket
        import threading
        self.listener.settimeout(0.1)
        while not self.done.is_set():
            try:
                a, _ = self.listener.accept()
            except OSError:
                continue
            b = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.conns.append((a, b))
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=pump, args=(x, y), daemon=True).start()

    def _cut(self):
        import socket
        while not self.done.is_set():
            time.sleep(self.rng.uniform(0.02, 0.4))
            if not self.cutting.is_set():
                continue
            with self.lock:
                conns, self.conns = self.conns, []
            for pair in conns:
                self.cuts += 1
                for s in pair:
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    def close(self):
        self.done.set()
        for t in self.threads:
            t.join(timeout=5)
        self.listener.close()


@pytest.mark.parametrize("primary_kind,load", [("redis", "disabled"), (TEST_SERVER, "swapdb")])
def test_links_cut_at_random_points_end_equal(servers, tmp_path, primary_kind, load):
    # A small backlog on the primary: some cuts end in a full resync, some
    # continue; a slowed snapshot: some cuts land in the middle of one (with
    # swapdb, in the middle of a load from the socket).
    primary = start(tmp_path, "p", kind=primary_kind, args=["--repl-backlog-size", "16kb"])
    replica = start(tmp_path, "r", args=["--repl-diskless-load", load])
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    write_every_type(p, "base", 1500)
    proxy = CuttingProxy(primary.port, seed=38)
    try:
        r.execute_command("REPLICAOF", "127.0.0.1", proxy.port)
        proxy.cutting.set()
        deadline = time.monotonic() + 6
        round_ = 0
        while time.monotonic() < deadline:
            write_every_type(p, f"w{round_ % 5}", 60)
            p.incr("counter")
            # Pipelined writes over the shards: write groups, whole in the
            # stream, while the link is cut under them.
            pipe = p.pipeline(transaction=False)
            for k in range(16):
                pipe.set(f"grp:{round_ % 7}:{k}", round_)
                pipe.lpush(f"grpq:{k % 3}", round_)
            pipe.execute()
            round_ += 1
        proxy.cutting.clear()
        wait_caught_up(p, r, timeout=60)
        assert snapshot(r) == snapshot(p)
        assert r.get("counter") == p.get("counter")
        stats = p.info("stats")
        assert proxy.cuts >= 5, proxy.cuts
        assert stats["sync_full"] + stats["sync_partial_ok"] >= 2
    finally:
        proxy.close()


@pytest.mark.parametrize("primary_kind", ["redis", TEST_SERVER])
def test_a_diskless_load_ends_equal(servers, tmp_path, primary_kind):
    # repl-diskless-load on-empty-db: an empty replica loads the snapshot as
    # it comes from the socket (no file); one with keys through a file, as
    # Redis chooses.
    primary = start(tmp_path, "p", kind=primary_kind)
    replica = start(tmp_path, "r", args=["--repl-diskless-load", "on-empty-db"])
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    write_every_type(p, "a", 1500)
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    write_every_type(p, "b", 200)
    wait_caught_up(p, r)
    assert snapshot(r) == snapshot(p)
    assert abs(r.pttl("a:ttl:0") - p.pttl("a:ttl:0")) < 2000
    log = replica.output()
    assert "from master with EOF to parser" in log or "bytes from master to parser" in log
    assert "to disk" not in log
    # Redis's role letter after the pid: S while a replica.
    loads = [line for line in log.splitlines() if "to parser" in line]
    assert loads and all(re.match(r"\d+:S \d", line) for line in loads), loads
    assert not [f for f in os.listdir(tmp_path / "r") if f.startswith("temp-")]
    # Its own history now (a full sync again), with keys: through a file.
    r.execute_command("REPLICAOF", "NO", "ONE")
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    write_every_type(p, "c", 100)
    wait_caught_up(p, r)
    assert snapshot(r) == snapshot(p)
    assert "to disk" in replica.output()
    assert r.config_get("repl-diskless-load") == {"repl-diskless-load": "on-empty-db"}


@pytest.mark.parametrize("load", ["disabled", "on-empty-db"])
def test_a_replica_loading_its_snapshot_answers_loading(servers, tmp_path, load):
    # While the snapshot loads (from the file, or as it comes from the
    # socket) the replica answers: -LOADING to what may not run then (PING
    # too: Sentinel takes that answer for a live server), INFO with
    # loading:1; then the data, as Redis's.
    primary = start(tmp_path, "p")
    replica = start(tmp_path, "r", args=["--repl-diskless-load", load, "--key-load-delay", "40"])
    servers += [primary, replica]
    p = primary.client()
    r = replica.client(socket_timeout=5, retry=Retry(NoBackoff(), 0))
    pipe = p.pipeline(transaction=False)
    for i in range(40000):
        pipe.set(f"k:{i}", os.urandom(200))  # (8 MB the compression cannot shrink: Redis answers every 2 MB)
    pipe.execute()
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    assert wait_for(lambda: r.info("persistence")["loading"] == 1, timeout=20)
    got = {"get": [], "set": [], "ping": []}
    t0 = time.monotonic()
    while r.info("persistence")["loading"] == 1 and time.monotonic() - t0 < 20:
        assert r.info("replication")["role"] == "slave"
        for name, call in (("get", lambda: r.get("k:1")), ("set", lambda: r.set("x", "1")), ("ping", r.ping)):
            try:
                call()
                got[name].append("answered")
            except redis.BusyLoadingError as e:  # (redis-py's name for -LOADING)
                assert str(e) == "Redis is loading the dataset in memory"
                got[name].append("loading")
            except redis.ReadOnlyError:
                got[name].append("read-only")  # (once loaded)
        time.sleep(0.05)
    # (About 2 s of load, answered throughout: each answer is -LOADING but
    # for the last ones, which may come once the load is over; Redis answers
    # only every 2 MB it loads.)
    if IS_REDIS:
        assert "loading" in got["get"] + got["set"] + got["ping"], got
    else:
        for name in got:
            assert got[name].count("loading") >= 5 and "answered" not in got[name][:-1], got
    wait_caught_up(p, r)
    assert r.dbsize() == 40000 and r.get("k:39999") == p.get("k:39999")


def test_swapdb_serves_the_old_data_while_the_same_history_loads(servers, tmp_path):
    # repl-diskless-load swapdb, and a full sync of the history the replica
    # already follows (its PSYNC came too late for the backlog): the old
    # data is served until the new is whole (async_loading:1), then
    # swapped in; BGSAVE and the like are refused meanwhile. As Redis 7.
    primary = start(tmp_path, "p", args=["--repl-backlog-size", "16kb"])
    replica = start(tmp_path, "r", args=["--repl-diskless-load", "swapdb"])
    servers += [primary, replica]
    p = primary.client()
    r = replica.client(retry=Retry(NoBackoff(), 0))
    pipe = p.pipeline(transaction=False)
    for i in range(40000):
        pipe.set(f"k:{i}", os.urandom(200))  # (8 MB: Redis answers every 2 MB it loads)
    pipe.set("marker", "old")
    pipe.execute()
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    assert r.get("marker") == b"old"
    replid = r.info("replication")["master_replid"]
    r.config_set("key-load-delay", "40")  # (about 2 s of load)
    # The link cut, and more written at once than the backlog holds: the
    # replica's PSYNC gets a full sync of the same history.
    pipe = p.pipeline(transaction=False)
    pipe.execute_command("CLIENT", "KILL", "TYPE", "replica")
    pipe.set("marker", "new")
    for i in range(100):
        pipe.set(f"filler:{i}", "x" * 1000)
    pipe.execute()
    assert wait_for(lambda: r.info("persistence")["async_loading"] == 1, timeout=20)
    assert r.info("persistence")["loading"] == 0
    seen = []
    while True:
        info = r.info("persistence")
        if info["async_loading"] == 0:
            break
        assert info["loading"] == 0
        seen.append(r.get("marker"))
        try:
            r.bgsave()
            seen.append("bgsave ran")
        except redis.BusyLoadingError:
            pass
        time.sleep(0.05)
    # (Each answer came during the load but the last ones, which may come
    # once it is over.)
    assert seen and seen[0] == b"old", seen
    assert all(v == b"old" for v in seen[:-2] if v != "bgsave ran"), seen
    assert "bgsave ran" not in seen[:-2], seen
    wait_caught_up(p, r)
    assert r.get("marker") == b"new" and r.get("filler:99") == b"x" * 1000
    assert r.dbsize() == p.dbsize()
    assert r.info("replication")["master_replid"] == replid
    log = replica.output()
    assert "Swapping active DB with loaded DB" in log or IS_REDIS


def fake_primary_link(r):
    """A primary by hand for replica `r`: REPLICAOF it, answer the
    handshake (PING, REPLCONF listening-port, capa) and read up to its
    PSYNC; the listener and the link's socket, for the test to answer."""
    import socket
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(10)
    r.execute_command("REPLICAOF", "127.0.0.1", listener.getsockname()[1])
    conn, _ = listener.accept()
    conn.settimeout(10)
    got = b""
    for token, answer in ((b"PING", b"+PONG\r\n"), (b"listening-port", b"+OK\r\n"), (b"capa", b"+OK\r\n"),
                          (b"PSYNC", b"")):
        while token not in got:
            data = conn.recv(4096)
            assert data, got
            got += data
        conn.sendall(answer)
    return listener, conn


@pytest.mark.skipif(IS_REDIS, reason="Redis's main thread waits for the socket inside its load")
@pytest.mark.parametrize("history", ["other", "same"])
def test_a_load_from_a_stalled_primary_keeps_answering(servers, tmp_path, history):
    # repl-diskless-load swapdb: the snapshot loads from the socket as it
    # comes. A primary that stops sending halfway leaves the replica
    # answering meanwhile (its slices wait for bytes holding no shard):
    # -LOADING, or with the replica's own history the old data (async
    # loading). When the link goes, the half-loaded data goes, the old data
    # and its history stay.
    source = start(tmp_path, "src")
    servers.append(source)
    s = source.client()
    pipe = s.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"k:{i}", os.urandom(100))
    pipe.execute()
    s.save()
    rdb = (tmp_path / "src" / "dump.rdb").read_bytes()
    replica = start(tmp_path, "r", args=["--repl-diskless-load", "swapdb", "--threads", "2"])
    servers.append(replica)
    r = replica.client(socket_timeout=2, retry=Retry(NoBackoff(), 0))  # (no retries of -LOADING)
    r.set("mine", "1")
    replid = r.info("replication")["master_replid"].encode()
    listener, conn = fake_primary_link(r)
    said = replid if history == "same" else b"a" * 40
    conn.sendall(b"+FULLRESYNC " + said + b" 0\r\n$EOF:" + b"m" * 40 + b"\r\n" + rdb[:len(rdb) * 2 // 3])
    field = "async_loading" if history == "same" else "loading"
    try:
        assert wait_for(lambda: r.info("persistence")[field] == 1)
        t0 = time.monotonic()
        answers = 0
        while time.monotonic() - t0 < 2:
            t = time.monotonic()
            assert r.info("persistence")[field] == 1
            if history == "same":
                assert r.get("mine") == b"1" and r.get("k:1") is None
            else:
                with pytest.raises(redis.BusyLoadingError):
                    r.get("k:1")
            assert time.monotonic() - t < 1.0  # (answered, not held up until the bytes come)
            answers += 1
            time.sleep(0.1)
        assert answers >= 10
    finally:
        conn.close()
        listener.close()
    assert wait_for(lambda: r.info("persistence")[field] == 0)
    if history == "same":  # (the old data's history goes on: a later sync can be async again)
        assert r.info("replication")["master_replid"].encode() == replid
    r.execute_command("REPLICAOF", "NO", "ONE")
    assert r.dbsize() == 1 and r.get("mine") == b"1"


def test_a_primary_before_redis_7_sends_relative_deadlines(servers, tmp_path):
    # A primary of Redis 6.2 and before sends EXPIRE, SETEX, SET ... EX as
    # given: the replica's clock makes them deadlines. A fake primary says
    # +CONTINUE and sends such a stream.
    replica = start(tmp_path, "r")
    servers.append(replica)
    r = replica.client()
    listener, conn = fake_primary_link(r)

    def resp(*args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        return out

    conn.sendall(b"+CONTINUE\r\n" + b"".join([
        resp("SELECT", 0), resp("SET", "a", 1), resp("EXPIRE", "a", 100), resp("SETEX", "b", 100, "v"),
        resp("PSETEX", "c", 100000, "v"), resp("SET", "d", "v", "EX", 100), resp("SET", "e", "v", "PX", 100000),
        resp("SET", "f", "v"), resp("PEXPIRE", "f", 100000), resp("REPLCONF", "GETACK", "*")]))
    deadline = time.monotonic() + 10
    while r.pttl("f") < 0 and time.monotonic() < deadline:  # (applied in order: f is last)
        time.sleep(0.02)
    for k in "abcdef":
        assert 90000 < r.pttl(k) <= 100000, (k, r.pttl(k))
    assert r.get("a") == b"1" and r.get("d") == b"v"
    conn.close()
    listener.close()
    r.execute_command("REPLICAOF", "NO", "ONE")


def test_a_client_blocked_on_a_replica_is_served_by_the_primarys_write(servers, tmp_path):
    # (BLPOP writes: refused on a read-only replica. XREAD BLOCK reads.)
    primary, replica, p, r = replicated_pair(servers, tmp_path, primary_kind="redis", writes=0)
    import threading
    box = {}

    def reader(k):
        box[k] = replica.client().xread({k: "$"}, block=10000)

    waiters = [threading.Thread(target=reader, args=(k,)) for k in ("s1", "s2", "s3")]
    for t in waiters:
        t.start()
    deadline = time.monotonic() + 5
    while r.info("clients")["blocked_clients"] < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    for k in ("s1", "s2", "s3"):
        p.xadd(k, {"f": k}, id="1-1")
    for t in waiters:
        t.join(timeout=10)
    assert box == {k: [[k.encode(), [(b"1-1", {b"f": k.encode()})]]] for k in ("s1", "s2", "s3")}


def test_a_replicas_own_aof_keeps_the_primarys_transactions_whole(servers, tmp_path):
    primary = start(tmp_path, "p", kind="redis")
    replica = start(tmp_path, "r", args=["--appendonly", "yes", "--appendfsync", "always"])
    servers += [primary, replica]
    p, r = primary.client(), replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
    wait_caught_up(p, r)
    deadline = time.monotonic() + 10
    while r.info("persistence")["aof_rewrite_in_progress"] and time.monotonic() < deadline:
        time.sleep(0.05)
    t = p.pipeline(transaction=True)
    t.set("tx:a", "1")
    t.incr("tx:b")
    t.execute()
    wait_caught_up(p, r)
    aof_dir = tmp_path / "r" / "appendonlydir"
    text = b"".join(f.read_bytes() for f in sorted(aof_dir.glob("*.incr.aof")))
    at = text.find(b"tx:a")
    assert at > 0, text[-500:]
    assert text.rfind(b"MULTI", 0, at) > text.rfind(b"EXEC", 0, at), text[-500:]
    assert text.find(b"EXEC", at) > text.find(b"tx:b", at) > at, text[-500:]
