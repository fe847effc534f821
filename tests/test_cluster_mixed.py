# Redis Cluster (issue #39): a mixed cluster of three Peregrine nodes and three
# Debian redis-server nodes, built by hand the way an operator would (CLUSTER
# MEET, ADDSLOTSRANGE, CLUSTER REPLICATE; no redis-cli --cluster create),
# passes the same checks as a cluster of one kind: redis-cli --cluster check
# is clean, redis-cli --cluster reshard under a writing cluster client loses
# nothing when slots go from a Peregrine primary to a redis-server primary and
# back, and a primary killed with kill -9 is replaced by its replica, in both
# directions (a Peregrine primary with a redis-server replica, a redis-server
# primary with a Peregrine replica), with its keys readable after.
#
# The tests share one cluster and run in order: each but the last leaves it
# whole (every node up, every slot served) for the next, and says what it
# changed.
#
# With TEST_SERVER=redis every node is a redis-server, which is how these
# tests themselves are checked.
import threading
import time

import pytest
from redis.cluster import RedisCluster

from conftest import IS_REDIS, TEST_SERVER
from helpers import Conn, wait_for
from test_cluster import (NODE_TIMEOUT, NUM_SLOTS, Node, cluster_check, cluster_info, converged, key_slot,
                          myself_line, nodes_lines, owner_of, redis_cli, roles, start_nodes, stop_nodes, tag_for,
                          wait_replicas_linked, wait_state)

# The layout: three primaries, each with one replica of the other kind but
# the last (so that three nodes are of each kind).
#   0 A   primary   TEST_SERVER   slots 0-5460       replica 3 A2 redis
#   1 B   primary   redis         slots 5461-10922   replica 4 B2 TEST_SERVER
#   2 C   primary   TEST_SERVER   slots 10923-16383  replica 5 C2 redis
KINDS = [TEST_SERVER, "redis", TEST_SERVER, "redis", TEST_SERVER, "redis"]
RANGES = [(0, 5460), (5461, 10922), (10923, NUM_SLOTS - 1)]
A, B, C, A2, B2, C2 = range(6)
RESHARD_SLOTS = 300


def slot_count(node):
    """How many slots `node` serves, by its own NODES line."""
    n = 0
    for r in myself_line(node)[8:]:
        if r.startswith("["):
            continue
        a, _, b = r.partition("-")
        n += int(b or a) - int(a) + 1
    return n


def assert_check_clean(node, primaries=3, replicas=3):
    """redis-cli --cluster check from `node`: no error, no warning, every
    slot covered, and it found the expected number of primaries (M:) and
    replicas (S:)."""
    code, out = cluster_check(node)
    assert code == 0, out
    assert "[OK] All nodes agree about slots configuration." in out, out
    assert "[OK] All 16384 slots covered." in out, out
    assert "[ERR]" not in out and "[WARNING]" not in out, out
    assert out.count("\nM: ") == primaries and out.count("\nS: ") == replicas, out
    return out


def tails(nodes):
    """The last lines each node logged (shown when an assertion fails)."""
    return {n.addr + " " + n.kind: n.output()[-1500:] for n in nodes if not getattr(n, "crashed", False)}


@pytest.fixture(scope="module")
def met(tmp_path_factory):
    nodes = start_nodes(tmp_path_factory.mktemp("mixed-meet"), KINDS)
    try:
        yield nodes
    finally:
        stop_nodes(nodes)


def test_built_by_meet_and_replicate(met):
    # MEET goes both ways between kinds: A (under test) meets B (redis) and
    # C; B meets the three replicas. Nobody is told of the others: they
    # learn them by gossip, and every node comes to know all six, connected.
    nodes = met
    for src, dst in ((A, B), (A, C), (B, A2), (B, B2), (B, C2)):
        assert nodes[src]("CLUSTER", "MEET", "127.0.0.1", nodes[dst].port) == b"OK"

    def all_met():
        for n in nodes:
            lines = nodes_lines(n)
            if len(lines) != 6 or any("handshake" in f[2] or f[7] != "connected" for f in lines):
                return False
        return True
    assert wait_for(all_met, 15), [nodes_lines(n) for n in nodes]
    # Slots by hand on the primaries; each replica then follows its primary
    # (known to it, by gossip, as a primary serving those slots).
    for i, (lo, hi) in enumerate(RANGES):
        assert nodes[i]("CLUSTER", "ADDSLOTSRANGE", lo, hi) == b"OK"
    for replica, primary in ((A2, A), (B2, B), (C2, C)):
        r, p = nodes[replica], nodes[primary]
        assert wait_for(lambda: {f[0]: f for f in nodes_lines(r)}[p.myid()][8:] == ["%d-%d" % RANGES[primary]], 10), \
            nodes_lines(r)
        assert r("CLUSTER", "REPLICATE", p.myid()) == b"OK"
    # All three primaries began at config epoch 0: the collision is
    # resolved between kinds as in Redis, each primary ending with an
    # epoch of its own (which later failovers and reshards depend on).
    assert wait_for(lambda: len({myself_line(nodes[i])[6] for i in (A, B, C)}) == 3, 15), \
        [myself_line(nodes[i]) for i in (A, B, C)]
    converged(nodes, timeout=20)
    wait_replicas_linked(nodes)
    assert roles(nodes) == {nodes[A2]: nodes[A], nodes[B2]: nodes[B], nodes[C2]: nodes[C]}
    for n in nodes:
        info = cluster_info(n)
        assert (info["cluster_state"], info["cluster_known_nodes"], info["cluster_size"],
                info["cluster_slots_assigned"], info["cluster_slots_ok"]) == ("ok", "6", "3", "16384", "16384"), info
    # Every node's view checks out with redis-cli.
    for n in nodes:
        assert_check_clean(n)
    # Keys through a cluster client go to their primaries, are read back
    # from every node, and reach each replica whatever the two kinds.
    keys = ["m:%d" % i for i in range(1000)]
    rcl = RedisCluster(host="127.0.0.1", port=nodes[B2].port, socket_timeout=10)
    try:
        pipe = rcl.pipeline(transaction=False)
        for k in keys:
            pipe.set(k, k)
        assert pipe.execute() == [True] * len(keys)
    finally:
        rcl.close()
    for n in nodes:
        rcl = RedisCluster(host="127.0.0.1", port=n.port, socket_timeout=10)
        try:
            assert rcl.mget_nonatomic(keys) == [k.encode() for k in keys]
        finally:
            rcl.close()
    for replica, primary in roles(nodes).items():
        mine = [k for k in keys if owner_of(nodes, key_slot(k)) is primary]
        assert len(mine) > 200
        assert primary("DBSIZE") == len(mine)
        assert wait_for(lambda: replica("DBSIZE") == len(mine), 10), (replica.kind, primary.kind)
        with Conn(replica) as conn:
            assert conn.call("READONLY") == b"+OK\r\n"
            for k in mine[:20]:
                assert conn.call("GET", k) == b"$%d\r\n%s\r\n" % (len(k), k.encode())


def test_reshard_between_kinds_both_ways_under_a_writer(met):
    # redis-cli moves 300 slots from A (under test) to B (redis-server), then
    # 300 from B back to A, while a RedisCluster client writes all along:
    # MIGRATE and RESTORE-ASKING cross kinds both ways, and each primary's
    # replica (of the other kind) follows. No error reaches the writer,
    # every key is read back after, no key is left twice, and the check is
    # clean. redis-cli takes a source's lowest slots first, so both moves
    # carry slots 0-299; one of them, HOT, holds a few hundred keys and is
    # written to while it migrates (ASK, TRYAGAIN: redis-py follows them).
    nodes = met
    a, b = nodes[A], nodes[B]
    hot = tag_for(lambda s: s == RESHARD_SLOTS - 1)
    rcl = RedisCluster(host="127.0.0.1", port=nodes[C2].port, socket_timeout=10)
    pipe = rcl.pipeline(transaction=False)
    for i in range(3000):
        pipe.set("r:%d" % i, i)
    for i in range(400):
        pipe.set("{%s}r:%d" % (hot, i), i)
    assert all(pipe.execute())
    rcl.close()
    before = {i: slot_count(nodes[i]) for i in (A, B, C)}
    assert before == {A: 5461, B: 5462, C: 5461}
    stop, errors, written = [], [], {}

    def writer():
        w = RedisCluster(host="127.0.0.1", port=nodes[C].port, socket_timeout=10)
        i = 0
        while not stop:
            k = "{%s}w:%d" % (hot, i) if i % 4 == 0 else "w:%d" % i
            try:
                w.set(k, i)
                written[k] = i
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
            i += 1
        w.close()
    t = threading.Thread(target=writer)
    t.start()
    try:
        code, out = redis_cli("--cluster", "reshard", a.addr, "--cluster-from", a.myid(), "--cluster-to", b.myid(),
                              "--cluster-slots", RESHARD_SLOTS, "--cluster-yes", timeout=120)
        assert code == 0, out[-2000:]
        # Moved: B serves the 300 slots (HOT among them), A no longer.
        assert wait_for(lambda: slot_count(a) == 5461 - RESHARD_SLOTS and
                        slot_count(b) == 5462 + RESHARD_SLOTS, 5), (myself_line(a), myself_line(b))
        assert owner_of(nodes, key_slot(hot)) is b
        assert a("CLUSTER", "COUNTKEYSINSLOT", key_slot(hot)) == 0
        assert b("CLUSTER", "COUNTKEYSINSLOT", key_slot(hot)) >= 400
        written_between = len(written)
        # (redis-cli reshards only once every node agrees on the slots.)
        converged(nodes)
        code, out = redis_cli("--cluster", "reshard", a.addr, "--cluster-from", b.myid(), "--cluster-to", a.myid(),
                              "--cluster-slots", RESHARD_SLOTS, "--cluster-yes", timeout=120)
        assert code == 0, out[-2000:]
    finally:
        stop.append(1)
        t.join(30)
    assert not errors, errors[:3]
    # The writer was busy during both moves.
    assert written_between > 50 and len(written) - written_between > 50, (written_between, len(written))
    assert wait_for(lambda: {i: slot_count(nodes[i]) for i in (A, B, C)} == before, 5), \
        [myself_line(nodes[i]) for i in (A, B, C)]
    assert owner_of(nodes, key_slot(hot)) is a
    converged(nodes)
    assert_check_clean(a)
    assert_check_clean(b)
    check = RedisCluster(host="127.0.0.1", port=nodes[A2].port, socket_timeout=10)
    try:
        want = {"r:%d" % i: i for i in range(3000)}
        want.update({"{%s}r:%d" % (hot, i): i for i in range(400)})
        want.update(written)
        names = list(want)
        got = check.mget_nonatomic(names)
        assert [k for k, v in zip(names, got) if v != str(want[k]).encode()] == []
    finally:
        check.close()
    # Nothing left twice: the primaries together hold exactly those keys
    # (plus the first test's 1000), and each replica its primary's.
    total = len(want) + 1000
    assert sum(nodes[i]("DBSIZE") for i in (A, B, C)) == total, [nodes[i]("DBSIZE") for i in (A, B, C)]
    for replica, primary in roles(nodes).items():
        assert wait_for(lambda: replica("DBSIZE") == primary("DBSIZE"), 10), \
            (replica.kind, replica("DBSIZE"), primary.kind, primary("DBSIZE"))
        with Conn(replica) as conn:
            assert conn.call("READONLY") == b"+OK\r\n"
            if primary is a:
                k = "{%s}r:7" % hot
                assert conn.call("GET", k) == b"$1\r\n7\r\n"


def fail_over_by_kill(nodes, primary_i, replica_i):
    """kill -9 of nodes[primary_i]: nodes[replica_i] is elected within
    6 node timeouts (the timeout, the FAIL agreement, the election's
    delay and votes, on a loaded machine); the cluster is ok again without
    it and every key is read back, those of the killed primary's slots
    from its successor. Then the killed node, started again in its
    directory, rejoins as the replica of its successor, resynced from it
    (writes made since included). Leaves the two swapped."""
    primary, replica = nodes[primary_i], nodes[replica_i]
    assert roles(nodes)[replica] is primary
    rcl = RedisCluster(host="127.0.0.1", port=nodes[C].port, socket_timeout=10)
    keys = {"f%d:%d" % (primary_i, i): i for i in range(2000)}
    pipe = rcl.pipeline(transaction=False)
    for k, v in keys.items():
        pipe.set(k, v)
    assert all(pipe.execute())
    rcl.close()
    theirs = [k for k in keys if owner_of(nodes, key_slot(k)) is primary]
    assert len(theirs) > 400
    # The replica has the primary's whole stream before the kill.
    assert wait_for(lambda: replica.client().info("replication").get("slave_repl_offset") ==
                    primary.client().info("replication")["master_repl_offset"], 10), \
        (replica.client().info("replication"), primary.client().info("replication"))
    old_epoch = int(myself_line(primary)[6])
    slots = myself_line(primary)[8:]
    myid, port, dir_, kind = primary.myid(), primary.port, primary.dir, primary.kind
    t0 = time.monotonic()
    primary.crash()
    assert wait_for(lambda: "myself,master" in myself_line(replica)[2], 6 * NODE_TIMEOUT / 1000), \
        (nodes_lines(replica), tails([replica]))
    took = time.monotonic() - t0
    alive = [n for n in nodes if n is not primary]
    wait_state(alive, timeout=10)
    # Not before the node timeout: the replica waited for the FAIL.
    assert NODE_TIMEOUT / 1000 <= took < 6 * NODE_TIMEOUT / 1000, took
    # The successor serves the slots under a new, greater config epoch, and
    # every live node says so.
    assert myself_line(replica)[8:] == slots
    assert int(myself_line(replica)[6]) > old_epoch
    for n in alive:
        assert wait_for(lambda: {f[0]: f for f in nodes_lines(n)}[replica.myid()][8:] == slots and
                        "fail" in {f[0]: f for f in nodes_lines(n)}[myid][2].split(","), 5), nodes_lines(n)
    # (Writes to it once it says role:master at the replication layer too:
    # Redis switches both at once; see the last test for Peregrine.)
    assert wait_for(lambda: replica.client().info("replication")["role"] == "master", 5)
    check = RedisCluster(host="127.0.0.1", port=replica.port, socket_timeout=10)
    try:
        names = list(keys)
        got = check.mget_nonatomic(names)
        assert [k for k, v in zip(names, got) if v != str(keys[k]).encode()] == []
        after = "{%s}after" % tag_for(lambda s: owner_of(alive, s) is replica)
        assert check.set(after, "new") is True
    finally:
        check.close()
    assert replica("GET", theirs[0]) == str(keys[theirs[0]]).encode()
    # Back in its directory: it knows the cluster from nodes.conf, is told
    # its slots went on, and follows its successor.
    back = nodes[primary_i] = Node(dir_, kind=kind, port=port)
    assert back.myid() == myid
    assert wait_for(lambda: myself_line(back)[2] == "myself,slave" and myself_line(back)[3] == replica.myid(),
                    4 * NODE_TIMEOUT / 1000 + 5), (nodes_lines(back), tails([back]))
    converged(nodes, timeout=4 * NODE_TIMEOUT / 1000 + 10)
    wait_replicas_linked(nodes)
    assert roles(nodes)[back] is replica
    assert wait_for(lambda: back("DBSIZE") == replica("DBSIZE"), 10), (back("DBSIZE"), replica("DBSIZE"))
    with Conn(back) as conn:
        assert conn.call("READONLY") == b"+OK\r\n"
        assert conn.call("GET", after) == b"$3\r\nnew\r\n"
        assert conn.call("GET", theirs[0]) == b"$%d\r\n%d\r\n" % (len(str(keys[theirs[0]])), keys[theirs[0]])
    assert_check_clean(back)
    assert_check_clean(replica)
    return keys


def test_failover_of_a_killed_primary_under_test_to_a_redis_replica(met):
    # A (under test) dies; A2 (redis-server) takes over; A comes back as
    # A2's replica.
    fail_over_by_kill(met, A, A2)
    assert roles(met) == {met[A]: met[A2], met[B2]: met[B], met[C2]: met[C]}


def test_failover_of_a_killed_redis_primary_to_a_replica_under_test(met):
    # B (redis-server) dies; B2 (under test) takes over; B comes back as
    # B2's replica. The earlier failover's keys are all still there.
    before = {"f%d:%d" % (A, i): i for i in range(2000)}
    fail_over_by_kill(met, B, B2)
    assert roles(met) == {met[A]: met[A2], met[B]: met[B2], met[C2]: met[C]}
    check = RedisCluster(host="127.0.0.1", port=met[A].port, socket_timeout=10)
    try:
        names = list(before)
        assert check.mget_nonatomic(names) == [str(before[k]).encode() for k in names]
    finally:
        check.close()


def test_an_elected_replica_takes_writes_once_it_says_it_is_primary(met):
    # Last: it leaves a primary dead. A replica under test (A, after the
    # failovers above) is elected in place of its killed primary. Redis
    # promotes a replica in one step (clusterFailoverReplaceYourMaster
    # calls replicationUnsetMaster before it announces itself): from the
    # moment CLUSTER NODES says myself,master, a write to one of its slots
    # succeeds. CLUSTER NODES is polled without pause and a SET sent the
    # moment it says so. (hz 1 on the replica, a setting Redis allows, only
    # widens a window that exists at any hz, so that the check is steady.)
    pairs = [(r, p) for r, p in roles(met).items() if r.kind == TEST_SERVER]
    assert pairs, roles(met)
    replica, primary = pairs[0]
    key = "{%s}w" % tag_for(lambda s: owner_of(met, s) is primary)
    assert primary("SET", key, "before") == b"OK"
    assert replica("CONFIG", "SET", "hz", 1) == b"OK"
    assert wait_for(lambda: replica.client().info("replication").get("slave_repl_offset") ==
                    primary.client().info("replication")["master_repl_offset"], 10)
    primary.crash()
    with Conn(replica) as conn:
        deadline = time.monotonic() + 6 * NODE_TIMEOUT / 1000
        while b" myself,master " not in conn.call("CLUSTER", "NODES") and time.monotonic() < deadline:
            pass
        assert b" myself,master " in conn.call("CLUSTER", "NODES"), nodes_lines(replica)
        reply = conn.call("SET", key, "after")
        read = conn.call("GET", key)
    assert reply == b"+OK\r\n", (reply, read, replica.output()[-1500:])
    assert read == b"$5\r\nafter\r\n"
    # (Soon after, it does take writes.)
    assert wait_for(lambda: replica.raw("SET", key, "later") == b"+OK\r\n", 5)
