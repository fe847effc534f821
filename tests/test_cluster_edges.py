# Redis Cluster's edges (issue #39), black-box: CLUSTER FAILOVER FORCE and
# TAKEOVER, MIGRATE to a target that wants a password (AUTH, AUTH2), the
# directives cluster-allow-replica-migration, cluster-migration-barrier,
# cluster-replica-validity-factor and cluster-announce-ip/-port/-bus-port,
# and a hostile peer on the cluster bus. Nodes are test_cluster.py's.
#
# With TEST_SERVER=redis every node under test is a redis-server (Redis
# 7.0), which is how these tests themselves are checked.
import os
import signal
import socket
import struct
import threading
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import IS_REDIS, TEST_SERVER, ServerProcess
from helpers import pump, wait_for
from test_cluster import (NODE_TIMEOUT, Node, cluster_check, cluster_info, converged, create_cluster, key_slot,
                          myself_line, nodes_lines, owner_of, port_pair, roles, start_nodes, stop_nodes, tag_for, view,
                          wait_replicas_linked, wait_state)
from test_cluster import pair, six  # noqa: F401  (fixtures)


def check_clean(node):
    """redis-cli --cluster check from `node`: no warning, every slot covered."""
    rc_, out = cluster_check(node)
    assert rc_ == 0 and "[WARNING]" not in out and "[ERR]" not in out, out
    assert "[OK] All 16384 slots covered." in out, out


def line_of(node, node_id):
    """`node`'s CLUSTER NODES line about the node of that id, as fields."""
    return {f[0]: f for f in nodes_lines(node)}[node_id]


def stop(*nodes):
    """SIGSTOP: the process is there (its sockets open) but says nothing."""
    for n in nodes:
        n.proc.send_signal(signal.SIGSTOP)


def cont(*nodes):
    for n in nodes:
        n.proc.send_signal(signal.SIGCONT)


def write_keys(node, n, prefix):
    rcl = RedisCluster(host=node.host, port=node.port, socket_timeout=10)
    try:
        pipe = rcl.pipeline(transaction=False)
        for i in range(n):
            pipe.set("%s:%d" % (prefix, i), i)
        assert pipe.execute() == [True] * n
    finally:
        rcl.close()


def keys_intact(node, n, prefix):
    rcl = RedisCluster(host=node.host, port=node.port, socket_timeout=10)
    try:
        got = rcl.mget_nonatomic(["%s:%d" % (prefix, i) for i in range(n)])
    finally:
        rcl.close()
    return [i for i in range(n) if got[i] != str(i).encode()]


def caught_up(replica, primary):
    """The replica has its primary's whole stream."""
    return wait_for(lambda: replica.client().info("replication").get("slave_repl_offset") ==
                    primary.client().info("replication")["master_repl_offset"], 10)


# ---------------------------------------------------------------- the cluster bus by hand

# The header of Redis 7's clusterMsg (src/cluster/bus_message.h): signature,
# totlen, ver, port, type, count, currentEpoch, configEpoch, offset, sender,
# myslots, slaveof, myip, extensions, reserved, pport, cport, flags, state,
# mflags.
HEADER = struct.Struct(">4sIHHHHQQQ40s2048s40s46sH30sHHHB3s")
assert HEADER.size == 2256
PING, PONG, GOSSIP_LEN = 0, 1, 104


def bus_message(type_, body=b"", count=0, totlen=None, ver=1):
    """A message from a primary nobody knows (a fresh random id), `body`
    after the header; totlen, unless given, the true length."""
    sender = os.urandom(20).hex().encode()
    if totlen is None:
        totlen = HEADER.size + len(body)
    return HEADER.pack(b"RCmb", totlen, ver, 7000, type_, count, 0, 0, 0, sender, bytes(2048), bytes(40), b"", 0, b"",
                       0, 17000, 1, 0, b"") + body


def read_bus_message(sock):
    def exact(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            assert chunk, "the node closed the bus link"
            data += chunk
        return data
    head = exact(8)
    assert head[:4] == b"RCmb", head
    totlen = struct.unpack(">I", head[4:])[0]
    return HEADER.unpack((head + exact(totlen - 8))[:HEADER.size])


def closed_by_peer(sock, timeout=3.0):
    """True once the other side closes the connection (False: still open after `timeout`)."""
    sock.settimeout(timeout)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def stable_info(node):
    """CLUSTER INFO but its message counters."""
    return {k: v for k, v in cluster_info(node).items() if not k.startswith("cluster_stats_")}


# Each: a name, the bytes, what the node does with the link ("dropped";
# "kept": the next message is read; "waits": for the rest of this one), and
# what it logs: Peregrine's line, and the part Redis 7.0 says too (None where
# it says nothing).
BAD_FRAME = "Bad message length or signature received"
HOSTILE = [
    ("random bytes", b"GARBAGE!" + os.urandom(3000), "dropped", (BAD_FRAME + " on the Cluster bus.", BAD_FRAME)),
    ("totlen too small", b"RCmb" + struct.pack(">I", 100) + bytes(92), "dropped",
     (BAD_FRAME + " on the Cluster bus.", BAD_FRAME)),
    # (Redis has no upper bound: it waits for the 4 GB to come. Peregrine
    # refuses anything over 64 MB.)
    ("totlen huge", b"RCmb" + struct.pack(">I", 0xFFFFFFF0) + bytes(2248), "waits" if IS_REDIS else "dropped",
     (BAD_FRAME + " on the Cluster bus.", None)),
    # A PING that says it carries two gossip sections but has one: its
    # length is wrong for its body. The message is dropped, the link kept.
    ("truncated ping", bus_message(PING, body=bytes(GOSSIP_LEN), count=2), "kept",
     ("Dropped a cluster bus message: Received invalid ping packet of length 2360 but expected length 2464",
      "Received invalid ping packet")),
    ("unknown version", bus_message(PING, ver=9), "kept",
     ("Dropped a cluster bus message: Can't handle messages of protocol version 9 (this node speaks 1)", None)),
    # A type nobody knows, with a body: ignored, the link kept, the next
    # message read where this one ends. (Its log line: the next test.)
    ("unknown type", bus_message(77, body=os.urandom(64)), "kept", (None, None)),
]


def test_unknown_bus_message_type_is_logged(tmp_path):
    # A message of a type nobody knows, well framed: Redis's
    # clusterProcessPacket ends with a warning that names the type.
    node = start_nodes(tmp_path, [TEST_SERVER])[0]
    try:
        with socket.create_connection((node.host, node.bus_port), timeout=5) as s:
            s.sendall(bus_message(77) + bus_message(PING))
            assert read_bus_message(s)[4] == PONG
        assert node("PING") == b"PONG"
        assert wait_for(lambda: "Received unknown packet type: 77" in node.output(), 1), node.output()[-1000:]
    finally:
        stop_nodes([node])


class TestSixNodes:
    # One cluster of three primaries with a replica each, for the bus then
    # the failovers: each test leaves it converged, every slot covered.

    def test_hostile_messages_leave_the_node_as_it_was(self, six):
        # A raw connection to a node's bus port, sending one bad message
        # each time. Afterwards the node answers PING on its client port,
        # its CLUSTER INFO is what it was (state ok, six known nodes), it
        # answers a well-formed PING on the same link with its PONG when
        # the link is kept, and it logs what it dropped.
        converged(six)
        node = six[0]
        before = stable_info(node)
        assert (before["cluster_state"], before["cluster_known_nodes"]) == ("ok", "6")
        for name, data, link, complaints in HOSTILE:
            log_before = node.output()
            with socket.create_connection((node.host, node.bus_port), timeout=5) as s:
                s.sendall(data)
                if link == "dropped":
                    assert closed_by_peer(s), name
                elif link == "waits":
                    assert not closed_by_peer(s, 0.5), name
                else:
                    s.sendall(bus_message(PING))
                    reply = read_bus_message(s)
                    assert (reply[0], reply[4], reply[9].decode()) == (b"RCmb", PONG, node.myid()), (name, reply[:5])
                    assert not closed_by_peer(s, 0.2), name
            assert node("PING") == b"PONG", name
            assert stable_info(node) == before, name
            text = complaints[1] if IS_REDIS else complaints[0]
            if text is not None:
                assert wait_for(lambda: node.output().count(text) > log_before.count(text), 2), (name, text)
            elif not IS_REDIS:
                assert "cluster bus" not in node.output()[len(log_before):], name
        # A message cut off before its end, then the connection closed:
        # nothing of it is acted on.
        with socket.create_connection((node.host, node.bus_port), timeout=5) as s:
            s.sendall(bus_message(PING)[:1000])
        assert node("PING") == b"PONG"
        assert stable_info(node) == before
        # And the others see it as before.
        converged(six)
        check_clean(node)

    # ------------------------------------------------------------ failovers (after the bus)

    def test_replica_validity_factor(self, six):
        # cluster-replica-validity-factor: a replica whose data is older
        # than repl-ping-replica-period + factor x node timeout (counted
        # past the node timeout) does not fail over. Its primary is made
        # to send nothing (a ping period of an hour), the replica's clock
        # is one second of ping period and factor 1 (5 s of silence in all),
        # and the primary is stopped once the replica has heard nothing
        # from it for 4 s: the FAIL comes 2 s later at least, too late.
        # With factor 0 it fails over, the primary not back yet.
        wait_replicas_linked(six)
        replica, primary = next(iter(roles(six).items()))
        key = "{%s}v" % tag_for(lambda s: owner_of(six, s) is primary)
        assert primary("SET", key, "before") == b"OK"
        assert caught_up(replica, primary)
        assert primary("CONFIG", "SET", "repl-ping-replica-period", 3600) == b"OK"
        for k, v in (("repl-ping-replica-period", 1), ("cluster-replica-validity-factor", 1)):
            assert replica("CONFIG", "SET", k, v) == b"OK"
        alive = [n for n in six if n is not primary]
        primary_id = primary.myid()

        def silent_for():
            return int(replica.client().info("replication")["master_last_io_seconds_ago"])
        try:
            assert wait_for(lambda: silent_for() >= 4, 15), replica.client().info("replication")
            stop(primary)
            assert silent_for() >= 4
            assert wait_for(lambda: "fail" in line_of(replica, primary_id)[2].split(","), 4 * NODE_TIMEOUT / 1000), \
                nodes_lines(replica)
            # Failed, but the replica stays one (an election would take a
            # second or two), the primary's slots unserved.
            with pytest.raises(redis.ResponseError,
                               match="^Master is down or failed, please use CLUSTER FAILOVER FORCE$"):
                replica("CLUSTER", "FAILOVER")
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                assert "slave" in myself_line(replica)[2], nodes_lines(replica)
                time.sleep(0.1)
            wait_state(alive, "fail")
            # Factor 0: the data's age does not count.
            assert replica("CONFIG", "SET", "cluster-replica-validity-factor", 0) == b"OK"
            assert wait_for(lambda: "master" in myself_line(replica)[2], 4 * NODE_TIMEOUT / 1000), \
                nodes_lines(replica)
            wait_state(alive, timeout=10)
            assert replica("GET", key) == b"before"
        finally:
            cont(primary)
        # Back, the old primary follows its former replica.
        assert wait_for(lambda: myself_line(primary)[3] == replica.myid(), 10), nodes_lines(primary)
        for n, k, v in ((primary, "repl-ping-replica-period", 10), (replica, "repl-ping-replica-period", 10),
                        (replica, "cluster-replica-validity-factor", 10)):
            assert n("CONFIG", "SET", k, v) == b"OK"
        converged(six)
        wait_replicas_linked(six)
        check_clean(replica)

    def test_failover_force_then_takeover(self, six):
        # FORCE: no handshake with the primary (stopped here, not yet
        # flagged failed), but the other primaries' votes. TAKEOVER: no
        # vote at all (every other primary stopped), a new epoch of its
        # own. Each time the replica serves its primary's slots with every
        # key, and the old primary, back, becomes its replica.
        converged(six)
        wait_replicas_linked(six)
        write_keys(six[0], 500, "ft")
        rep = roles(six)
        (r1, p1), (r2, p2) = list(rep.items())[:2]
        for r, p in rep.items():
            assert caught_up(r, p)
        slots1 = myself_line(p1)[8:]
        assert slots1
        t0 = time.monotonic()
        stop(p1)
        try:
            assert r1("CLUSTER", "FAILOVER", "FORCE") == b"OK"
            assert wait_for(lambda: "master" in myself_line(r1)[2], NODE_TIMEOUT / 1000), nodes_lines(r1)
            # Sooner than p1's node timeout: no failure detection did it.
            assert time.monotonic() - t0 < NODE_TIMEOUT / 1000
            assert myself_line(r1)[8:] == slots1
            others = [n for n in six if n is not p1]
            assert wait_for(lambda: all(line_of(n, r1.myid())[8:] == slots1 for n in others), 5), \
                [nodes_lines(n) for n in others]
        finally:
            cont(p1)
        assert wait_for(lambda: "slave" in myself_line(p1)[2] and myself_line(p1)[3] == r1.myid(), 10), \
            nodes_lines(p1)
        converged(six)
        assert keys_intact(r1, 500, "ft") == []

        # TAKEOVER with the three other primaries stopped.
        wait_replicas_linked(six)
        assert caught_up(r2, p2)
        primaries = [n for n in six if "master" in myself_line(n)[2]]
        assert len(primaries) == 3 and p2 in primaries and r1 in primaries
        slots2 = myself_line(p2)[8:]
        epochs = [int(f[6]) for f in nodes_lines(r2)]
        stop(*primaries)
        try:
            assert r2("CLUSTER", "FAILOVER", "TAKEOVER") == b"OK"
            assert wait_for(lambda: "master" in myself_line(r2)[2], 2), nodes_lines(r2)
            assert myself_line(r2)[8:] == slots2
            # An epoch of its own, past every one it knew of.
            mine = int(cluster_info(r2)["cluster_my_epoch"])
            assert mine > max(epochs) and int(myself_line(r2)[6]) == mine, (mine, epochs)
        finally:
            cont(*primaries)
        assert wait_for(lambda: "slave" in myself_line(p2)[2] and myself_line(p2)[3] == r2.myid(), 10), \
            nodes_lines(p2)
        converged(six)
        wait_replicas_linked(six)
        assert keys_intact(r2, 500, "ft") == []
        assert {p.myid() for p in roles(six).values()} >= {r1.myid(), r2.myid()}
        check_clean(r2)


# ---------------------------------------------------------------- replica migration

def test_replica_migration_directives(tmp_path):
    # Seven nodes: three primaries, one with two replicas. The lone replica
    # of another is killed: its primary is orphaned. With
    # cluster-allow-replica-migration no, nobody comes to it (Redis moves
    # one 5 s after the orphaning); with yes but cluster-migration-barrier
    # 2, neither (its primary would keep one replica only); with the
    # barrier at 1, the rich primary's smaller-id replica moves over.
    nodes = start_nodes(tmp_path, [TEST_SERVER] * 7, args=("--cluster-allow-replica-migration", "no"))
    try:
        create_cluster(nodes, replicas=1)
        wait_replicas_linked(nodes)
        rep = roles(nodes)
        by_primary = {}
        for r, p in rep.items():
            by_primary.setdefault(p, []).append(r)
        rich = next(p for p, rs in by_primary.items() if len(rs) == 2)
        poor, (lone,) = next((p, rs) for p, rs in by_primary.items() if len(rs) == 1)
        mover = min(by_primary[rich], key=lambda n: n.myid())
        lone_id = lone.myid()
        lone.crash()
        alive = [n for n in nodes if n is not lone]
        assert wait_for(lambda: all("fail" in line_of(n, lone_id)[2].split(",") for n in alive),
                        4 * NODE_TIMEOUT / 1000), [nodes_lines(n) for n in alive]

        def still_put(seconds):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                assert roles(alive) == {r: p for r, p in rep.items() if r is not lone}
                time.sleep(0.2)
        still_put(6)  # (past the 5 s a migration waits)
        for n in alive:
            assert n("CONFIG", "SET", "cluster-allow-replica-migration", "yes") == b"OK"
            assert n("CONFIG", "SET", "cluster-migration-barrier", 2) == b"OK"
        still_put(6)
        for n in alive:
            assert n("CONFIG", "SET", "cluster-migration-barrier", 1) == b"OK"
        assert wait_for(lambda: myself_line(mover)[3] == poor.myid(), 8), nodes_lines(mover)
        assert wait_for(lambda: all(line_of(n, mover.myid())[3] == poor.myid() for n in alive), 5)
        after = roles(alive)
        assert sorted(r.port for r, p in after.items() if p is rich) == \
            sorted(r.port for r in by_primary[rich] if r is not mover)
    finally:
        stop_nodes(nodes)


# ---------------------------------------------------------------- cluster-announce-*

class Relay:
    """Forwards each connection to 127.0.0.2:<port> (its own, free) on to
    127.0.0.1:`target`, as a NAT would."""

    def __init__(self, target):
        self.target = target
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.bind(("127.0.0.2", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        self.socks = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                a, _ = self.lsock.accept()
                b = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                return
            self.socks += [a, b]
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=pump, args=(x, y), daemon=True).start()

    def close(self):
        self.lsock.close()
        for s in self.socks:
            s.close()


@pytest.mark.parametrize("observer", ["same", "redis"], ids=["same", "with-redis"])
def test_announced_ip_port_and_bus_port(tmp_path, observer):
    # A node behind a "NAT" (relays on 127.0.0.2) announces that address,
    # port and bus port. Another node, met through them, shows them in
    # CLUSTER NODES, SLOTS and SHARDS and in its MOVED replies; the node
    # shows them for itself too.
    if IS_REDIS and observer == "redis":
        pytest.skip("the same as 'same' when every node is Redis")
    observer = TEST_SERVER if observer == "same" else observer
    port = port_pair()
    relays = [Relay(port), Relay(port + 10000)]
    ann_port, ann_bus = relays[0].port, relays[1].port
    os.makedirs(tmp_path / "a")
    nodes = []
    try:
        a = Node(tmp_path / "a", port=port, args=("--cluster-announce-ip", "127.0.0.2", "--cluster-announce-port",
                                                  str(ann_port), "--cluster-announce-bus-port", str(ann_bus)))
        nodes.append(a)
        b = start_nodes(tmp_path / "b", [observer])[0]
        nodes.append(b)
        announced = "127.0.0.2:%d@%d" % (ann_port, ann_bus)
        assert myself_line(a)[1] == announced
        assert a("CLUSTER", "ADDSLOTSRANGE", 0, 99) == b"OK"
        assert b("CLUSTER", "ADDSLOTSRANGE", 100, 16383) == b"OK"
        assert b("CLUSTER", "MEET", "127.0.0.2", ann_port, ann_bus) == b"OK"
        converged(nodes)
        assert line_of(b, a.myid())[1] == announced
        assert line_of(b, a.myid())[7] == "connected" and line_of(a, b.myid())[7] == "connected"
        assert view(a)[a.myid()] == view(b)[a.myid()]
        slots = {e[0]: e for e in b("CLUSTER", "SLOTS")}
        assert slots[0] == [0, 99, [b"127.0.0.2", ann_port, a.myid().encode(), []]], slots
        shards = [dict(zip(s[::2], s[1::2])) for s in b("CLUSTER", "SHARDS")]
        mine = next(s for s in shards if s[b"slots"] == [0, 99])
        entry = dict(zip(mine[b"nodes"][0][::2], mine[b"nodes"][0][1::2]))
        assert (entry[b"id"], entry[b"port"], entry[b"ip"], entry[b"endpoint"]) == \
            (a.myid().encode(), ann_port, b"127.0.0.2", b"127.0.0.2"), entry
        assert b"tls-port" not in entry
        key = "{%s}k" % tag_for(lambda s: s <= 99)
        assert b.raw("GET", key) == b"-MOVED %d 127.0.0.2:%d\r\n" % (key_slot(key), ann_port)
        # Through the announced port, a client gets there.
        rcl = RedisCluster(host="127.0.0.2", port=ann_port, socket_timeout=10)
        try:
            assert rcl.set(key, "v") and rcl.get(key) == b"v"
        finally:
            rcl.close()
        assert a("GET", key) == b"v"
    finally:
        stop_nodes(nodes)
        for r in relays:
            r.close()


# ---------------------------------------------------------------- MIGRATE to a guarded target

@pytest.fixture
def guarded(pair):
    """`pair` (a node under test and a redis-server, each serving every slot)
    and a client of a standalone redis-server that wants a password
    ("pw"), with ACL users alice (everything) and ro (no writes)."""
    os.makedirs(os.path.join(pair[0].dir, "target"))
    target = ServerProcess(args=("--requirepass", "pw"), tmp_path=os.path.join(pair[0].dir, "target"), kind="redis")
    tc = target.client(password="pw")
    try:
        assert tc.execute_command("ACL", "SETUSER", "alice", "on", ">secret", "~*", "&*", "+@all") == b"OK"
        assert tc.execute_command("ACL", "SETUSER", "ro", "on", ">ro", "~*", "+@all", "-@write") == b"OK"
        for n in pair:
            assert n("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == b"OK"
        wait_state(pair)
        yield pair, target.port, tc
    finally:
        tc.close()
        target.stop()


def migrate_like_redis(guarded, cases):
    """Each (MIGRATE's arguments after host and port, the reply, (keys left
    at the source, the target's {m}a and {m}b)), from the node under test
    and from redis-server, {m}a=1 and {m}b=2 at the source, the target
    empty: both give that reply and leave that. None: any error from the
    target, the same from both. Returns the replies."""
    pair, port, tc = guarded
    got = []
    for args, want, want_after in cases:
        cmd = ("MIGRATE", "127.0.0.1", port) + args
        replies, after = [], []
        for n in pair:
            tc.execute_command("FLUSHALL")
            n("DEL", "{m}a", "{m}b")
            n("SET", "{m}a", "1")
            n("SET", "{m}b", "2")
            replies.append(n.raw(*cmd))
            after.append((n("EXISTS", "{m}a", "{m}b"), tc.execute_command("MGET", "{m}a", "{m}b")))
        assert replies[0] == replies[1], (cmd, replies)
        assert after[0] == after[1], (cmd, after)
        if want is None:
            assert replies[0].startswith(b"-ERR Target instance replied with error: "), (cmd, replies[0])
        else:
            assert replies[0] == want, (cmd, replies[0])
        assert after[0] == want_after, (cmd, after[0])
        got.append(replies[0])
    return got


REFUSED = (2, [None, None])


def test_migrate_with_auth_and_auth2(guarded):
    # MIGRATE to a target that wants a password: none given, the target's
    # NOAUTH; AUTH with it, or AUTH2 with a user's, the keys move (gone
    # from the source, there on the target), or are copied with COPY; a
    # user who may not write, the target's NOPERM and nothing moved. The
    # same replies and outcome as redis-server's as the source.
    got = migrate_like_redis(guarded, [
        (("{m}a", 0, 1000), b"-ERR Target instance replied with error: NOAUTH Authentication required.\r\n",
         REFUSED),
        (("{m}a", 0, 1000, "AUTH2", "ro", "ro"), None, REFUSED),
        (("{m}a", 0, 1000, "AUTH", "pw"), b"+OK\r\n", (1, [b"1", None])),
        (("", 0, 1000, "AUTH2", "alice", "secret", "KEYS", "{m}a", "{m}b"), b"+OK\r\n", (0, [b"1", b"2"])),
        (("", 0, 1000, "COPY", "AUTH2", "alice", "secret", "KEYS", "{m}a", "{m}b"), b"+OK\r\n", (2, [b"1", b"2"])),
        (("{m}b", 0, 1000, "REPLACE", "AUTH", "pw"), b"+OK\r\n", (1, [None, b"2"])),
    ])
    assert b"NOPERM" in got[1], got


def test_migrate_wrong_password_replies_like_redis(guarded):
    # A wrong password, or an unknown user: the target's WRONGPASS, as
    # Redis reports it (the AUTH's error before the SELECT's and the
    # RESTOREs'), and every key stays at the source. (First use of the
    # target: nothing cached, the SELECT sent too.)
    wrongpass = (b"-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is "
                 b"disabled.\r\n")
    migrate_like_redis(guarded, [
        (("{m}a", 0, 1000, "AUTH", "nope"), wrongpass, REFUSED),
        (("", 0, 1000, "AUTH2", "alice", "nope", "KEYS", "{m}a", "{m}b"), wrongpass, REFUSED),
        (("", 0, 1000, "AUTH2", "nobody", "secret", "KEYS", "{m}a"), wrongpass, REFUSED),
    ])
