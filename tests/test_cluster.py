# Redis Cluster mode (issue #39), black-box: nodes started with
# --cluster-enabled yes on loopback, each in a directory of its own, with its
# bus on port+10000. Error texts are checked against Debian's redis-server
# started the same way (Redis 7.0; where 7.2 changed a text or added a
# subcommand, 7.2's is asserted). Clusters are made by redis-cli --cluster
# create, checked by redis-cli --cluster check, and used through redis-py's
# RedisCluster; one mixes Peregrine and Redis nodes.
#
# With TEST_SERVER=redis every node under test is a redis-server, which is how
# these tests themselves are checked.
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import IS_REDIS, PEREGRINE_BIN, TEST_SERVER, ServerProcess
from helpers import Conn, crc16, encode, info_dict, rc, wait_for  # noqa: F401  (rc: fixture)

NODE_TIMEOUT = 2000  # --cluster-node-timeout (ms)
REDIS_CLI = "/usr/bin/redis-cli"
NUM_SLOTS = 16384


# ---------------------------------------------------------------- nodes

def _bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def port_pair():
    """A free loopback port whose +10000 (the cluster bus) is free too."""
    for _ in range(500):
        p = random.randint(15000, 55000)
        if _bindable(p) and _bindable(p + 10000):
            return p
    raise RuntimeError("no free port pair")


class Node(ServerProcess):
    """One cluster-mode server: `kind` "peregrine" or "redis" (default:
    TEST_SERVER), in `dir`, on `port` (default: a free pair)."""

    def __init__(self, dir, kind=None, args=(), port=None):
        self.fixed_port = port
        super().__init__(args=args, tmp_path=dir, kind=kind)

    def _start(self, args, tmp_path, kind, config):
        self.port = self.fixed_port or port_pair()
        args = list(args)
        self.bus_port = int(args[args.index("--cluster-port") + 1]) if "--cluster-port" in args else self.port + 10000
        self.host = "127.0.0.1"
        self.addr = "127.0.0.1:%d" % self.port
        self.kind = kind or TEST_SERVER
        common = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path),
                  "--cluster-enabled", "yes", "--cluster-node-timeout", str(NODE_TIMEOUT),
                  "--repl-diskless-sync-delay", "0"]
        if self.kind == "redis":
            cmd = ["redis-server"] + common + ["--appendonly", "no"]
        else:
            cmd = [PEREGRINE_BIN] + common + shlex.split(os.environ.get("PEREGRINE_ARGS", ""))
        self.cmd = cmd + list(args)
        self.log_file = tempfile.TemporaryFile()
        self.dir = str(tmp_path)
        self.proc = subprocess.Popen(self.cmd, stdout=self.log_file, stderr=subprocess.STDOUT, cwd=self.dir)
        self._wait_ready()
        self.c = self.client(protocol=2)
        self.c.response_callbacks.clear()  # replies as they come off the wire

    def __call__(self, *cmd):
        return self.c.execute_command(*cmd)

    def raw(self, *cmd):
        """The reply's exact bytes on a fresh connection."""
        with Conn(self) as conn:
            return conn.call(*cmd)

    def myid(self):
        return self("CLUSTER", "MYID").decode()

    def info(self):
        return cluster_info(self)

    def crash(self):
        """SIGKILL: nothing saved on the way out."""
        self.c.close()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.log_file.close()
        self.crashed = True

    def stop(self):
        if getattr(self, "crashed", False):
            return
        try:
            self.c.close()
        except Exception:  # noqa: BLE001
            pass
        super().stop()


def start_nodes(base, kinds, args=()):
    """Nodes of the given kinds, each in a directory of its own under `base`
    (`args` may be a function of the node's index)."""
    nodes = []
    try:
        for i, kind in enumerate(kinds):
            d = os.path.join(str(base), "node%d-%s" % (i, kind))
            os.makedirs(d, exist_ok=True)
            nodes.append(Node(d, kind=kind, args=args(i) if callable(args) else args))
    except BaseException:
        stop_nodes(nodes)
        raise
    return nodes


def stop_nodes(nodes):
    for n in nodes:
        n.stop()


def cluster_info(node):
    text = node("CLUSTER", "INFO").decode()
    d = {}
    for line in text.split("\r\n"):
        if line:
            k, _, v = line.partition(":")
            d[k] = v
    return d


def nodes_lines(node):
    """CLUSTER NODES as lists of fields."""
    return [line.split(" ") for line in node("CLUSTER", "NODES").decode().split("\n") if line]


def myself_line(node):
    lines = [f for f in nodes_lines(node) if "myself" in f[2].split(",")]
    assert len(lines) == 1, nodes_lines(node)
    return lines[0]


def view(node):
    """What `node` knows of the cluster, as comparable across nodes: each
    node's address, role, primary, epoch, link state and slots."""
    out = {}
    for f in nodes_lines(node):
        flags = sorted(x for x in f[2].split(",") if x != "myself")
        out[f[0]] = (f[1], tuple(flags), f[3], f[6], f[7], tuple(f[8:]))
    return out


def key_slot(key):
    """Redis Cluster's keyHashSlot (hash tags honoured)."""
    k = key.encode() if isinstance(key, str) else key
    s = k.find(b"{")
    if s >= 0:
        e = k.find(b"}", s + 1)
        if e > s + 1:
            k = k[s + 1:e]
    return crc16(k) % NUM_SLOTS


def tag_for(pred):
    """A hash tag whose slot satisfies pred(slot)."""
    for i in range(100000):
        t = "t%d" % i
        if pred(key_slot(t)):
            return t
    raise AssertionError("no tag")


def redis_cli(*args, timeout=60):
    p = subprocess.run([REDIS_CLI] + [str(a) for a in args], capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    out = re.sub(r"\x1b\[[0-9;]*m", "", (p.stdout + p.stderr).decode(errors="replace"))
    return p.returncode, out


def create_cluster(nodes, replicas=0):
    rc_, out = redis_cli("--cluster", "create", *[n.addr for n in nodes], "--cluster-replicas", replicas,
                         "--cluster-yes")
    assert rc_ == 0, out
    assert "[OK] All 16384 slots covered" in out, out
    converged(nodes)
    return out


def converged(nodes, timeout=15):
    """Waits until every node sees every node, agrees on the roles and slots,
    and says cluster_state:ok."""
    def done():
        views = [view(n) for n in nodes]
        if any(len(v) != len(nodes) for v in views) or any(v != views[0] for v in views):
            return False
        if any(e[4] != "connected" or "handshake" in e[1] or "noaddr" in e[1] for e in views[0].values()):
            return False
        return all(cluster_info(n)["cluster_state"] == "ok" for n in nodes)
    assert wait_for(done, timeout), [nodes_lines(n) for n in nodes]


def cluster_check(node):
    return redis_cli("--cluster", "check", node.addr)


def hand_over_empty_slot(src, dst, slot):
    """The end of a reshard without MIGRATE: `slot` (no keys) given by
    primary `src` to primary `dst`, with SETSLOT on both sides."""
    assert dst("CLUSTER", "SETSLOT", slot, "IMPORTING", src.myid()) == b"OK"
    assert src("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.myid()) == b"OK"
    assert src("CLUSTER", "GETKEYSINSLOT", slot, 10) == []
    assert dst("CLUSTER", "SETSLOT", slot, "NODE", dst.myid()) == b"OK"
    assert src("CLUSTER", "SETSLOT", slot, "NODE", dst.myid()) == b"OK"


def owner_of(nodes, slot):
    """The primary among `nodes` that serves `slot` (by its own NODES line)."""
    for n in nodes:
        f = myself_line(n)
        if "master" not in f[2]:
            continue
        for r in f[8:]:
            if r.startswith("["):
                continue
            a, _, b = r.partition("-")
            if int(a) <= slot <= int(b or a):
                return n
    raise AssertionError("nobody serves slot %d" % slot)


def normalized(reply, *nodes):
    """`reply` (bytes) with each node's id, port and bus port replaced by
    placeholders of the same length, so two nodes' replies compare."""
    for n in nodes:
        reply = reply.replace(n.myid().encode(), b"I" * 40)
        reply = reply.replace(str(n.bus_port).encode(), b"B" * len(str(n.bus_port)))
        reply = reply.replace(str(n.port).encode(), b"P" * len(str(n.port)))
    return reply


def same(pair, *cmd, expect=None):
    """`cmd` on the node under test and on redis-server: the same bytes (ids and
    ports aside); with `expect`, those bytes (or, given a str, that error)."""
    node, ref = pair
    got, want = normalized(node.raw(*cmd), node), normalized(ref.raw(*cmd), ref)
    assert got == want, (cmd, got, want)
    if expect is not None:
        if isinstance(expect, str):
            expect = b"-" + expect.encode() + b"\r\n"
        assert got == expect, (cmd, got, expect)
    return got


def wait_state(nodes, state="ok", timeout=8):
    assert wait_for(lambda: all(cluster_info(n)["cluster_state"] == state for n in nodes), timeout), \
        [cluster_info(n) for n in nodes]


# ---------------------------------------------------------------- cluster-enabled no

ALL_SUBCOMMANDS = [
    ("INFO",), ("MYID",), ("NODES",), ("SLOTS",), ("SHARDS",), ("REPLICAS", "x"), ("SLAVES", "x"), ("LINKS",),
    ("KEYSLOT", "x"), ("COUNTKEYSINSLOT", 1), ("GETKEYSINSLOT", 1, 1), ("ADDSLOTS", 1), ("ADDSLOTSRANGE", 1, 2),
    ("DELSLOTS", 1), ("DELSLOTSRANGE", 1, 2), ("FLUSHSLOTS",), ("SETSLOT", 1, "STABLE"),
    ("SETSLOT", 1, "NODE", "x"), ("MEET", "127.0.0.1", 1), ("FORGET", "x"), ("REPLICATE", "x"), ("RESET",),
    ("RESET", "HARD"), ("RESET", "SOFT"), ("SAVECONFIG",), ("BUMPEPOCH",), ("SET-CONFIG-EPOCH", 1),
    ("COUNT-FAILURE-REPORTS", "x"), ("HELP",), ("FAILOVER",),
]


def test_cluster_disabled_every_subcommand_refuses(rc, reference):
    ref = reference.client(protocol=2)
    disabled = "This instance has cluster support disabled"
    for cmd in [("CLUSTER",) + s for s in ALL_SUBCOMMANDS] + [("CLUSTER", "MYSHARDID"), ("ASKING",),
                                                               ("READONLY",), ("READWRITE",)]:
        if IS_REDIS and cmd == ("CLUSTER", "MYSHARDID"):
            continue
        with pytest.raises(redis.ResponseError) as e:
            rc.execute_command(*cmd)
        assert str(e.value) == disabled, cmd
        if cmd != ("CLUSTER", "MYSHARDID"):  # (7.2's: Redis 7.0 does not know it)
            with pytest.raises(redis.ResponseError) as e:
                ref.execute_command(*cmd)
            assert str(e.value) == disabled, cmd
    # Arity and unknown subcommands come first, as in Redis.
    for cmd in (("CLUSTER", "INFO", "x"), ("CLUSTER", "NOSUCH"), ("ASKING", "x"), ("READONLY", "x")):
        with pytest.raises(redis.ResponseError) as mine:
            rc.execute_command(*cmd)
        with pytest.raises(redis.ResponseError) as theirs:
            ref.execute_command(*cmd)
        assert str(mine.value) == str(theirs.value), cmd
    # INFO cluster says so too.
    assert info_dict(rc.execute_command("INFO", "cluster"))["cluster_enabled"] == "0"
    ref.close()


# ---------------------------------------------------------------- one node

@pytest.fixture
def pair(tmp_path):
    """A fresh node under test and a fresh redis-server, both in cluster mode,
    no slots."""
    nodes = start_nodes(tmp_path, [TEST_SERVER, "redis"])
    yield nodes
    stop_nodes(nodes)


@pytest.fixture(scope="class")
def served(tmp_path_factory):
    """Like `pair`, each node serving all 16384 slots (cluster_state:ok)."""
    nodes = start_nodes(tmp_path_factory.mktemp("served"), [TEST_SERVER, "redis"])
    try:
        for n in nodes:
            assert n("CLUSTER", "ADDSLOTSRANGE", 0, NUM_SLOTS - 1) == b"OK"
        wait_state(nodes)
        yield nodes
    finally:
        stop_nodes(nodes)


class TestOneNode:
    def test_cluster_info_before_slots_matches_redis(self, pair):
        # A fresh node's CLUSTER INFO is Redis's, field for field, in
        # Redis's order. (Redis 7.0 says cluster_size:1 for a node's first
        # 2 s, an artifact of its clusterInit that 7.2 dropped: 7.2's 0 is
        # asserted.)
        node, ref = pair
        mine, theirs = cluster_info(node), cluster_info(ref)
        assert list(mine) == list(theirs)
        assert mine["cluster_size"] == "0" or IS_REDIS
        mine.pop("cluster_size"), theirs.pop("cluster_size")
        assert mine == theirs

    def test_cluster_info_state_turns_ok_once_every_slot_is_served(self, pair):
        node, ref = pair
        for n in pair:
            info = n.info()
            assert info["cluster_state"] == "fail"
            assert (info["cluster_slots_assigned"], info["cluster_slots_ok"], info["cluster_known_nodes"],
                    info["cluster_current_epoch"], info["cluster_my_epoch"]) == ("0", "0", "1", "0", "0")
        same(pair, "GET", "foo", expect="CLUSTERDOWN Hash slot not served")
        # All slots but one: still down; a served key says so, the other not served.
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 0, NUM_SLOTS - 2, expect=b"+OK\r\n")
        for n in pair:
            assert n.info()["cluster_slots_assigned"] == str(NUM_SLOTS - 1)
        assert key_slot("foo") == 12182
        same(pair, "GET", "foo", expect="CLUSTERDOWN The cluster is down")
        k = "{%s}x" % tag_for(lambda s: s == NUM_SLOTS - 1)
        same(pair, "GET", k, expect="CLUSTERDOWN Hash slot not served")
        same(pair, "CLUSTER", "ADDSLOTS", NUM_SLOTS - 1, expect=b"+OK\r\n")
        # (A fresh primary waits ~2 s before it says ok.)
        t0 = time.monotonic()
        wait_state(pair, timeout=6)
        elapsed = time.monotonic() - t0
        for n in pair:
            info = n.info()
            assert (info["cluster_state"], info["cluster_slots_assigned"], info["cluster_slots_ok"],
                    info["cluster_size"], info["cluster_known_nodes"]) == ("ok", "16384", "16384", "1", "1")
        same(pair, "GET", "foo", expect=b"$-1\r\n")
        same(pair, "SET", "foo", "bar", expect=b"+OK\r\n")
        same(pair, "GET", "foo", expect=b"$3\r\nbar\r\n")
        assert elapsed < 5

    def test_myid_nodes_slots_shards(self, served):
        node, ref = served
        myid = node.myid()
        assert re.fullmatch(r"[0-9a-f]{40}", myid)
        assert node("CLUSTER", "MYID") == node("CLUSTER", "MYID")  # (stable)
        lines = nodes_lines(node)
        assert len(lines) == 1
        f = lines[0]
        # <id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>
        assert len(f) == 9, f
        assert f[0] == myid
        assert re.fullmatch(r"[0-9.]*:%d@%d" % (node.port, node.bus_port), f[1]), f
        assert f[2:] == ["myself,master", "-", "0", "0", "0", "connected", "0-16383"]
        # The whole replies, Redis's byte for byte.
        same(served, "CLUSTER", "NODES")
        same(served, "CLUSTER", "SLOTS")
        same(served, "CLUSTER", "SHARDS")
        same(served, "CLUSTER", "LINKS", expect=b"*0\r\n")
        same(served, "CLUSTER", "REPLICAS", "0" * 40, expect="ERR Unknown node " + "0" * 40)
        slots = node("CLUSTER", "SLOTS")
        assert slots == [[0, 16383, [f[1].split(":")[0].encode(), node.port, myid.encode(), []]]]
        shards = node("CLUSTER", "SHARDS")
        assert len(shards) == 1 and shards[0][0] == b"slots" and shards[0][1] == [0, 16383]
        entry = dict(zip(shards[0][3][0][::2], shards[0][3][0][1::2]))
        assert entry[b"id"] == myid.encode() and entry[b"port"] == node.port
        assert entry[b"role"] == b"master" and entry[b"health"] == b"online"
        # REPLICAS / SLAVES of myself: none; COUNT-FAILURE-REPORTS: none.
        for n in served:
            assert n("CLUSTER", "REPLICAS", n.myid()) == []
            assert n("CLUSTER", "SLAVES", n.myid()) == []
            assert n("CLUSTER", "COUNT-FAILURE-REPORTS", n.myid()) == 0

    @pytest.mark.skipif(IS_REDIS, reason="CLUSTER MYSHARDID is Redis 7.2's")
    def test_myshardid(self, served):
        node = served[0]
        shard = node("CLUSTER", "MYSHARDID").decode()
        assert re.fullmatch(r"[0-9a-f]{40}", shard) and shard != node.myid()
        assert node("CLUSTER", "MYSHARDID").decode() == shard

    def test_help(self, served):
        node, ref = served
        mine = [line.decode() for line in node("CLUSTER", "HELP")]
        theirs = [line.decode() for line in ref("CLUSTER", "HELP")]
        assert mine[0] == theirs[0] == "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
        words = {line.split()[0] for line in mine if not line.startswith(" ")}
        for s in ALL_SUBCOMMANDS + ([] if IS_REDIS else [("MYSHARDID",)]):
            if s[0] != "SLAVES":  # (HELP names REPLICAS only, as Redis)
                assert s[0] in words, s

    def test_keyslot(self, served):
        node, ref = served
        cases = {"foo": 12182, "bar": 5061, "{user1000}.following": 3443, "{user1000}.followers": 3443,
                 "user1000": 3443, "": 0, "{}foo": 9500, "foo{}{bar}": 8363, "foo{{bar}}zap": 4015,
                 "foo{bar}{zap}": 5061, "{foo": key_slot("{foo"), "a{b}c}": key_slot("b")}
        for key, want in cases.items():
            assert key_slot(key) == want, key
            assert node("CLUSTER", "KEYSLOT", key) == want, key
            assert ref("CLUSTER", "KEYSLOT", key) == want, key
        for i in range(200):
            key = "key:%d:%s" % (i, "x" * (i % 7))
            assert node("CLUSTER", "KEYSLOT", key) == key_slot(key)
        binary = b"\x00\xff{\x01}\r\n"
        assert node("CLUSTER", "KEYSLOT", binary) == key_slot(binary) == ref("CLUSTER", "KEYSLOT", binary)

    def test_countkeysinslot_getkeysinslot(self, served):
        for n in served:
            assert n("FLUSHALL") == b"OK"
        tagged = ["{user1000}.k%d" % i for i in range(7)]
        other = ["other:%d" % i for i in range(50)]
        for n in served:
            for k in tagged + other:
                n("SET", k, "v")
        for n in served:
            assert n("CLUSTER", "COUNTKEYSINSLOT", 3443) == 7
            got = n("CLUSTER", "GETKEYSINSLOT", 3443, 100)
            assert sorted(got) == sorted(k.encode() for k in tagged)
            three = n("CLUSTER", "GETKEYSINSLOT", 3443, 3)
            assert len(three) == 3 and set(three) <= set(got)
            assert n("CLUSTER", "GETKEYSINSLOT", 3443, 0) == []
            assert n("CLUSTER", "COUNTKEYSINSLOT", key_slot("nothing-here-{zz}")) == 0
            for k in other[:10]:
                slot = key_slot(k)
                want = sorted(o.encode() for o in other if key_slot(o) == slot)
                assert n("CLUSTER", "COUNTKEYSINSLOT", slot) == len(want)
                assert sorted(n("CLUSTER", "GETKEYSINSLOT", slot, 1000)) == want
            assert n("FLUSHALL") == b"OK"
        # A listing goes on where the last one of the slot stopped (as a
        # reshard takes ten at a time away): still every key, each once,
        # keys added meanwhile too, and all of them when asked for all.
        for n in served:
            keys = {b"{s}k%d" % i for i in range(3000)}
            for k in keys:
                n("SET", k, "v")
            for k in (b"other:%d" % i for i in range(2000)):
                n("SET", k, "v")
            slot = key_slot("{s}")
            seen = []
            first = n("CLUSTER", "GETKEYSINSLOT", slot, 10)
            assert len(first) == 10 and set(first) <= keys
            assert sorted(n("CLUSTER", "GETKEYSINSLOT", slot, 100000)) == sorted(keys)
            while True:
                batch = n("CLUSTER", "GETKEYSINSLOT", slot, 10)
                if not batch:
                    break
                assert len(batch) == len(set(batch)) and not set(batch) & set(seen), batch
                seen += batch
                assert n("DEL", *batch) == len(batch)
                if len(seen) == 1500:
                    keys |= {b"{s}late%d" % i for i in range(100)}
                    for i in range(100):
                        n("SET", b"{s}late%d" % i, "v")
            assert sorted(seen) == sorted(keys) and n("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
            # A listing of a whole slot met the next slots' keys on its way
            # (Peregrine keeps them for the next listings): keys added or
            # removed since are seen as they are now.
            assert n("FLUSHALL") == b"OK"
            by_slot = {}
            for i in range(3000):
                k = b"n:%d" % i
                by_slot.setdefault(key_slot(k), set()).add(k)
                n("SET", k, "v")
            first_slot = min(by_slot)
            following = sorted(x for x in by_slot if first_slot < x <= first_slot + 64)[:3]
            assert sorted(n("CLUSTER", "GETKEYSINSLOT", first_slot, 1000)) == sorted(by_slot[first_slot])
            added, gone, same_ = following
            extra = next(b"x:%d" % i for i in range(100000) if key_slot(b"x:%d" % i) == added)
            n("SET", extra, "v")
            by_slot[added].add(extra)
            dropped = sorted(by_slot[gone])[0]
            n("DEL", dropped)
            by_slot[gone].discard(dropped)
            for x in following:
                assert sorted(n("CLUSTER", "GETKEYSINSLOT", x, 1000)) == sorted(by_slot[x]), x
            assert n("FLUSHALL") == b"OK"
        for cmd, text in ((("COUNTKEYSINSLOT", -1), "ERR Invalid slot"),
                          (("COUNTKEYSINSLOT", 16384), "ERR Invalid slot"),
                          (("COUNTKEYSINSLOT", "x"), "ERR value is not an integer or out of range"),
                          (("GETKEYSINSLOT", 0, -1), "ERR Invalid slot or number of keys"),
                          (("GETKEYSINSLOT", 16384, 1), "ERR Invalid slot or number of keys"),
                          (("GETKEYSINSLOT", "x", 1), "ERR value is not an integer or out of range")):
            same(served, "CLUSTER", *cmd, expect=text)

    def test_slot_assignment_errors(self, pair):
        same(pair, "CLUSTER", "ADDSLOTS", 0, 1, 2, expect=b"+OK\r\n")
        same(pair, "CLUSTER", "ADDSLOTS", 1, expect="ERR Slot 1 is already busy")
        same(pair, "CLUSTER", "ADDSLOTS", 16384, expect="ERR Invalid or out of range slot")
        same(pair, "CLUSTER", "ADDSLOTS", -1, expect="ERR Invalid or out of range slot")
        same(pair, "CLUSTER", "ADDSLOTS", "x", expect="ERR Invalid or out of range slot")
        same(pair, "CLUSTER", "ADDSLOTS", 5, 5, expect="ERR Slot 5 specified multiple times")
        same(pair, "CLUSTER", "ADDSLOTS", 7, 8, 1, expect="ERR Slot 1 is already busy")
        same(pair, "CLUSTER", "DELSLOTS", 100, expect="ERR Slot 100 is already unassigned")
        same(pair, "CLUSTER", "DELSLOTS", 16384, expect="ERR Invalid or out of range slot")
        same(pair, "CLUSTER", "DELSLOTS", 2, 2, expect="ERR Slot 2 specified multiple times")
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 5, 1, expect="ERR start slot number 5 is greater than end slot number 1")
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 5,
             expect="ERR wrong number of arguments for 'cluster|addslotsrange' command")
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 5, 6, 7,
             expect="ERR wrong number of arguments for 'cluster|addslotsrange' command")
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 10, 20, 15, 30, expect="ERR Slot 15 specified multiple times")
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 16000, 16384, expect="ERR Invalid or out of range slot")
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 0, 10, expect="ERR Slot 0 is already busy")
        same(pair, "CLUSTER", "DELSLOTSRANGE", 5, 1, expect="ERR start slot number 5 is greater than end slot number 1")
        same(pair, "CLUSTER", "DELSLOTSRANGE", 5,
             expect="ERR wrong number of arguments for 'cluster|delslotsrange' command")
        same(pair, "CLUSTER", "DELSLOTSRANGE", 0, 5, expect="ERR Slot 3 is already unassigned")
        # Nothing of the refused ones was applied.
        same(pair, "CLUSTER", "NODES")
        assert myself_line(pair[0])[8:] == ["0-2"]
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 100, 199, 300, 300, expect=b"+OK\r\n")
        same(pair, "CLUSTER", "DELSLOTSRANGE", 150, 160, expect=b"+OK\r\n")
        same(pair, "CLUSTER", "DELSLOTS", 1, expect=b"+OK\r\n")
        assert myself_line(pair[0])[8:] == ["0", "2", "100-149", "161-199", "300"]
        same(pair, "CLUSTER", "NODES")
        same(pair, "CLUSTER", "SLOTS")
        same(pair, "CLUSTER", "SHARDS")
        same(pair, "CLUSTER", "FLUSHSLOTS", expect=b"+OK\r\n")
        assert myself_line(pair[0])[8:] == []
        same(pair, "CLUSTER", "SLOTS", expect=b"*0\r\n")
        same(pair, "CLUSTER", "NODES")

    def test_setslot_errors(self, pair):
        same(pair, "CLUSTER", "ADDSLOTS", 10, expect=b"+OK\r\n")
        for args, text in (
                ((0,), "ERR wrong number of arguments for 'cluster|setslot' command"),
                ((0, "foo"), "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"),
                ((0, "migrating"), "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"),
                ((0, "stable", "x"), "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"),
                ((0, "node", "a", "b"), "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"),
                ((16384, "stable"), "ERR Invalid or out of range slot"),
                (("x", "stable"), "ERR Invalid or out of range slot"),
                ((0, "migrating", "abc"), "ERR I'm not the owner of hash slot 0"),
                ((10, "migrating", "abc"), "ERR I don't know about node abc"),
                ((10, "importing", "abc"), "ERR I'm already the owner of hash slot 10"),
                ((0, "importing", "abc"), "ERR I don't know about node abc"),
                ((0, "node", "abc"), "ERR Unknown node abc"),
                ((10, "NODE", "0" * 40), "ERR Unknown node " + "0" * 40)):
            same(pair, "CLUSTER", "SETSLOT", *args, expect=text)
        same(pair, "CLUSTER", "SETSLOT", 10, "STABLE", expect=b"+OK\r\n")
        same(pair, "CLUSTER", "SETSLOT", 0, "stable", expect=b"+OK\r\n")
        # NODE <myself> takes a slot.
        for n in pair:
            assert n("CLUSTER", "SETSLOT", 20, "NODE", n.myid()) == b"OK"
        assert myself_line(pair[0])[8:] == ["10", "20"]
        same(pair, "CLUSTER", "NODES")

    def test_epochs(self, pair):
        same(pair, "CLUSTER", "SET-CONFIG-EPOCH", "x", expect="ERR value is not an integer or out of range")
        same(pair, "CLUSTER", "SET-CONFIG-EPOCH", -1, expect="ERR Invalid config epoch specified: -1")
        same(pair, "CLUSTER", "BUMPEPOCH", expect=b"+BUMPED 1\r\n")
        same(pair, "CLUSTER", "BUMPEPOCH", expect=b"+STILL 1\r\n")
        same(pair, "CLUSTER", "SET-CONFIG-EPOCH", 9, expect="ERR Node config epoch is already non-zero")
        same(pair, "CLUSTER", "RESET", "HARD", expect=b"+OK\r\n")
        for n in pair:
            assert (n.info()["cluster_current_epoch"], n.info()["cluster_my_epoch"]) == ("0", "0")
        same(pair, "CLUSTER", "SET-CONFIG-EPOCH", 5, expect=b"+OK\r\n")
        same(pair, "CLUSTER", "SET-CONFIG-EPOCH", 6, expect="ERR Node config epoch is already non-zero")
        for n in pair:
            info = n.info()
            assert (info["cluster_current_epoch"], info["cluster_my_epoch"]) == ("5", "5")
            assert myself_line(n)[6] == "5"
        same(pair, "CLUSTER", "BUMPEPOCH", expect=b"+STILL 5\r\n")
        same(pair, "CLUSTER", "SAVECONFIG", expect=b"+OK\r\n")

    def test_reset(self, pair):
        before = [n.myid() for n in pair]
        for n in pair:
            assert n("CLUSTER", "ADDSLOTS", 1, 2) == b"OK"
            assert n("CLUSTER", "SET-CONFIG-EPOCH", 3) == b"OK"
        same(pair, "CLUSTER", "RESET", "nope", expect="ERR syntax error")
        same(pair, "CLUSTER", "RESET", "HARD", "x",
             expect="ERR unknown subcommand or wrong number of arguments for 'RESET'. Try CLUSTER HELP.")
        same(pair, "CLUSTER", "RESET", "SOFT", expect=b"+OK\r\n")
        assert [n.myid() for n in pair] == before  # (soft: same id, epoch kept, slots gone)
        for n in pair:
            assert myself_line(n)[8:] == [] and n.info()["cluster_current_epoch"] == "3"
        same(pair, "CLUSTER", "RESET", expect=b"+OK\r\n")
        assert [n.myid() for n in pair] == before
        same(pair, "CLUSTER", "RESET", "HARD", expect=b"+OK\r\n")
        after = [n.myid() for n in pair]
        assert all(a != b and re.fullmatch(r"[0-9a-f]{40}", a) for a, b in zip(after, before))
        for n in pair:
            info = n.info()
            assert (info["cluster_current_epoch"], info["cluster_my_epoch"]) == ("0", "0")
        same(pair, "CLUSTER", "NODES")

    def test_forget_meet_replicate_errors(self, pair):
        for n in pair:
            with pytest.raises(redis.ResponseError, match=r"^I tried hard but I can't forget myself\.\.\.$"):
                n("CLUSTER", "FORGET", n.myid())
            with pytest.raises(redis.ResponseError, match=r"^Can't replicate myself$"):
                n("CLUSTER", "REPLICATE", n.myid())
            assert n("CLUSTER", "COUNT-FAILURE-REPORTS", n.myid()) == 0
        same(pair, "CLUSTER", "FORGET", "abc", expect="ERR Unknown node abc")
        same(pair, "CLUSTER", "FORGET", "0" * 40, expect="ERR Unknown node " + "0" * 40)
        same(pair, "CLUSTER", "REPLICATE", "abc", expect="ERR Unknown node abc")
        same(pair, "CLUSTER", "REPLICAS", "abc", expect="ERR Unknown node abc")
        same(pair, "CLUSTER", "SLAVES", "abc", expect="ERR Unknown node abc")
        same(pair, "CLUSTER", "COUNT-FAILURE-REPORTS", "abc", expect="ERR Unknown node abc")
        for host, port in (("999.1.1.1", 7000), ("localhost", 7000), ("not an address", 7000),
                           ("127.0.0.1", 99999), ("127.0.0.1", -5)):
            same(pair, "CLUSTER", "MEET", host, port, expect="ERR Invalid node address specified: %s:%s" % (host, port))
        same(pair, "CLUSTER", "MEET", "127.0.0.1", 7000, 17000, 1,
             expect="ERR unknown subcommand or wrong number of arguments for 'MEET'. Try CLUSTER HELP.")
        same(pair, "CLUSTER", "MEET", "127.0.0.1", expect="ERR wrong number of arguments for 'cluster|meet' command")
        # (Redis 7.2's texts; 7.0 says "Invalid TCP base port specified: x".)
        node = pair[0]
        for cmd, text in ((("127.0.0.1", "x"), "Invalid base port specified: x"),
                          (("127.0.0.1", 7000, "y"), "Invalid bus port specified: y")):
            if IS_REDIS:
                text = text.replace("Invalid ", "Invalid TCP ")
            with pytest.raises(redis.ResponseError) as e:
                node("CLUSTER", "MEET", *cmd)
            assert str(e.value) == text
        same(pair, "CLUSTER", "FAILOVER", expect="ERR You should send CLUSTER FAILOVER to a replica")
        same(pair, "CLUSTER", "FAILOVER", "nope", expect="ERR syntax error")
        same(pair, "CLUSTER", "NOSUCH", expect="ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP.")
        same(pair, "CLUSTER", "INFO", "x", expect="ERR wrong number of arguments for 'cluster|info' command")
        same(pair, "CLUSTER", "KEYSLOT", expect="ERR wrong number of arguments for 'cluster|keyslot' command")
        # Nobody was met.
        for n in pair:
            assert n.info()["cluster_known_nodes"] == "1"

    def test_asking_readonly_readwrite(self, pair):
        for cmd in (("ASKING",), ("READONLY",), ("READWRITE",)):
            same(pair, *cmd, expect=b"+OK\r\n")
        same(pair, "ASKING", "x", expect="ERR wrong number of arguments for 'asking' command")
        same(pair, "READONLY", "x", expect="ERR wrong number of arguments for 'readonly' command")

    def test_keys_refuse_flushslots_and_reset(self, served):
        for n in served:
            assert n("FLUSHALL") == b"OK"
            assert n("SET", "foo", "bar") == b"OK"
        same(served, "CLUSTER", "FLUSHSLOTS", expect="ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
        for how in ((), ("SOFT",), ("HARD",)):
            same(served, "CLUSTER", "RESET", *how,
                 expect="ERR CLUSTER RESET can't be called with master nodes containing keys")
        same(served, "CLUSTER", "REPLICATE", "abc", expect="ERR Unknown node abc")
        # Nothing changed.
        for n in served:
            assert myself_line(n)[8:] == ["0-16383"] and n.info()["cluster_state"] == "ok"
            assert n("GET", "foo") == b"bar"
            assert n("FLUSHALL") == b"OK"

    def test_one_database_only(self, served):
        for n in served:
            assert n("FLUSHALL") == b"OK"
            assert n("SET", "{k}a", "1") == b"OK"
        same(served, "SELECT", 1, expect="ERR SELECT is not allowed in cluster mode")
        same(served, "SELECT", 0, expect=b"+OK\r\n")
        same(served, "SELECT", "x", expect="ERR value is not an integer or out of range")
        same(served, "MOVE", "{k}a", 1, expect="ERR MOVE is not allowed in cluster mode")
        same(served, "MOVE", "{k}a", 0, expect="ERR MOVE is not allowed in cluster mode")
        same(served, "SWAPDB", 0, 1, expect="ERR SWAPDB is not allowed in cluster mode")
        same(served, "SWAPDB", 0, 0, expect="ERR SWAPDB is not allowed in cluster mode")
        same(served, "COPY", "{k}a", "{k}b", "DB", 1,
             expect="ERR Copying to another database is not allowed in cluster mode")
        same(served, "COPY", "{k}a", "{k}b", "DB", 0, expect=b":1\r\n")
        same(served, "COPY", "{k}a", "{k}c", expect=b":1\r\n")
        same(served, "GET", "{k}c", expect=b"$1\r\n1\r\n")
        same(served, "COPY", "{k}a", "other", "DB", 1,
             expect="CROSSSLOT Keys in request don't hash to the same slot")
        for n in served:
            assert n("DBSIZE") == 3
            assert n("INFO", "keyspace").startswith(b"# Keyspace\r\ndb0:keys=3,")
            assert n("FLUSHALL") == b"OK"

    def test_standalone_replication_commands_refused(self, served):
        # A cluster node follows its primary by CLUSTER REPLICATE and fails
        # over by CLUSTER FAILOVER; a script flagged no-cluster does not run.
        same(served, "REPLICAOF", "127.0.0.1", 1, expect="ERR REPLICAOF not allowed in cluster mode.")
        same(served, "SLAVEOF", "NO", "ONE", expect="ERR REPLICAOF not allowed in cluster mode.")
        same(served, "FAILOVER",
             expect="ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.")
        same(served, "EVAL", "#!lua flags=no-cluster\nreturn 1", 0,
             expect="ERR Can not run script on cluster, 'no-cluster' flag is set.")

    def test_crossslot(self, served):
        for n in served:
            assert n("FLUSHALL") == b"OK"
        assert key_slot("a") != key_slot("b")
        crossslot = "CROSSSLOT Keys in request don't hash to the same slot"
        same(served, "MSET", "a", 1, "b", 2, expect=crossslot)
        same(served, "MGET", "a", "b", expect=crossslot)
        same(served, "DEL", "a", "b", expect=crossslot)
        same(served, "RENAME", "a", "b", expect=crossslot)
        same(served, "SUNIONSTORE", "a", "b", expect=crossslot)
        same(served, "EVAL", "return 1", 2, "a", "b", expect=crossslot)
        same(served, "MSET", "{user}a", 1, "{user}b", 2, expect=b"+OK\r\n")
        same(served, "MGET", "{user}a", "{user}b", expect=b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n")
        same(served, "MSET", "a", 1, "a", 2, expect=b"+OK\r\n")  # (one key twice: one slot)
        same(served, "DEL", "{user}a", "{user}b", "a", expect=crossslot)
        same(served, "DEL", "{user}a", "{user}b", expect=b":2\r\n")
        # A transaction whose commands span slots: EXEC refuses it whole.
        for n in served:
            with Conn(n) as conn:
                assert conn.call("MULTI") == b"+OK\r\n"
                assert conn.call("SET", "a", "x") == b"+QUEUED\r\n"
                assert conn.call("SET", "b", "y") == b"+QUEUED\r\n"
                assert conn.call("EXEC") == b"-" + crossslot.encode() + b"\r\n"
                assert conn.call("MULTI") == b"+OK\r\n"
                assert conn.call("MSET", "a", 1, "b", 2) == b"-" + crossslot.encode() + b"\r\n"
                assert conn.call("EXEC") == \
                    b"-EXECABORT Transaction discarded because of previous errors.\r\n"
            assert n("GET", "a") == b"2" and n("EXISTS", "b") == 0
            assert n("FLUSHALL") == b"OK"

    def test_scripts_keep_to_one_slot(self, served):
        # A script's own calls are routed as a client's: a call whose keys
        # span slots fails (the text varies across Redis versions) and does
        # nothing.
        for n in served:
            assert n("FLUSHALL") == b"OK"
            for script in ("return redis.call('mset','a','1','b','2')", "return redis.call('del','a','b')"):
                with pytest.raises(redis.ResponseError) as e:
                    n("EVAL", script, 0)
                assert re.search(r"(?i)script", str(e.value)) and "hash" in str(e.value) or \
                    "non local key" in str(e.value), str(e.value)
            assert n("EXISTS", "a") == 0 and n("EXISTS", "b") == 0
            assert n("EVAL", "return redis.call('mset','{t}a','1','{t}b','2')", 0) == b"OK"
            assert n("EVAL", "return redis.call('mget',KEYS[1],KEYS[2])", 2, "{t}a", "{t}b") == [b"1", b"2"]
            assert n("FLUSHALL") == b"OK"

    def test_sort_by_get_patterns_refused(self, served):
        # SORT's BY and GET patterns name keys of any slot: Redis refuses
        # them in cluster mode (7.x: any real pattern; 8.0: one whose hash
        # tag is not the sorted key's).
        for n in served:
            assert n("FLUSHALL") == b"OK"
            assert n("RPUSH", "{l}list", 3, 1, 2) == 3
            assert n("SET", "w_1", 1) == b"OK"
            with pytest.raises(redis.ResponseError, match=r"^BY option of SORT denied in Cluster mode"):
                n("SORT", "{l}list", "BY", "w_*")
            with pytest.raises(redis.ResponseError, match=r"^GET option of SORT denied in Cluster mode"):
                n("SORT", "{l}list", "GET", "g_*")
            with pytest.raises(redis.ResponseError, match=r"^GET option of SORT denied in Cluster mode"):
                n("SORT", "{l}list", "BY", "nosort", "GET", "w_*", "STORE", "{l}out")
            assert n("EXISTS", "{l}out") == 0
            # A constant BY pattern (no '*') sorts nothing and reads nothing: allowed.
            assert n("SORT", "{l}list", "BY", "nosort") == [b"3", b"1", b"2"]
            assert n("SORT", "{l}list") == [b"1", b"2", b"3"]
            assert n("FLUSHALL") == b"OK"


def test_coverage_and_reads_when_down(tmp_path):
    # Half the slots served. cluster-require-full-coverage no: the cluster
    # is up for them; cluster-allow-reads-when-down yes: down, but reads
    # served.
    partial = start_nodes(tmp_path / "partial", [TEST_SERVER, "redis"], args=("--cluster-require-full-coverage", "no"))
    try:
        reads = start_nodes(tmp_path / "reads", [TEST_SERVER, "redis"], args=("--cluster-allow-reads-when-down", "yes"))
    except BaseException:
        stop_nodes(partial)
        raise
    try:
        assert key_slot("bar") < 8192 <= key_slot("foo")
        for pair in (partial, reads):
            same(pair, "CLUSTER", "ADDSLOTSRANGE", 0, 8191, expect=b"+OK\r\n")
        # Down, reads allowed.
        for n in reads:
            assert n.info()["cluster_state"] == "fail"
        same(reads, "GET", "bar", expect=b"$-1\r\n")
        same(reads, "MGET", "{bar}1", "{bar}2", expect=b"*2\r\n$-1\r\n$-1\r\n")
        same(reads, "SET", "bar", 1, expect="CLUSTERDOWN The cluster is down and only accepts read commands")
        same(reads, "DEL", "bar", expect="CLUSTERDOWN The cluster is down and only accepts read commands")
        same(reads, "GET", "foo", expect="CLUSTERDOWN Hash slot not served")
        # Shard channels while down: cluster-allow-pubsubshard-when-down
        # (yes by default), then no.
        same(reads, "SPUBLISH", "bar", "m", expect=b":0\r\n")
        same(reads, "SPUBLISH", "foo", "m", expect="CLUSTERDOWN Hash slot not served")
        for n in reads:
            assert n("CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "no") == b"OK"
        same(reads, "SPUBLISH", "bar", "m", expect="CLUSTERDOWN The cluster is down")
        same(reads, "GET", "bar", expect=b"$-1\r\n")
        # A queued SPUBLISH is a key like any other: EXEC with a write is
        # refused while down, the channel letting nothing through.
        for n in reads:
            assert n("CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "yes") == b"OK"
            with Conn(n) as c:
                c.send(encode("MULTI") + encode("SPUBLISH", "{bar}ch", "m") + encode("SET", "{bar}k", "v") +
                       encode("EXEC"))
                got = [c.read_reply() for _ in range(4)]
                assert got == [b"+OK\r\n", b"+QUEUED\r\n",
                               b"-CLUSTERDOWN The cluster is down and only accepts read commands\r\n",
                               b"-EXECABORT Transaction discarded because of previous errors.\r\n"], (n.kind, got)
        # Up on half the slots.
        wait_state(partial, timeout=6)
        same(partial, "SET", "bar", 1, expect=b"+OK\r\n")
        same(partial, "GET", "bar", expect=b"$1\r\n1\r\n")
        same(partial, "GET", "foo", expect="CLUSTERDOWN Hash slot not served")
        for n in partial:
            info = n.info()
            assert (info["cluster_slots_assigned"], info["cluster_state"]) == ("8192", "ok")
    finally:
        stop_nodes(partial + reads)


@pytest.mark.parametrize("args", [
    ("--cluster-announce-hostname", "host-a"),
    ("--cluster-announce-hostname", "host-a", "--cluster-preferred-endpoint-type", "hostname"),
    ("--cluster-preferred-endpoint-type", "hostname"),
    ("--cluster-announce-ip", "127.0.0.1", "--cluster-preferred-endpoint-type", "unknown-endpoint"),
    ("--cluster-announce-hostname", "h", "--cluster-preferred-endpoint-type", "unknown-endpoint"),
], ids=["hostname", "prefer-hostname", "prefer-missing-hostname", "unknown-endpoint", "unknown-with-hostname"])
def test_announced_endpoints(tmp_path, args):
    # What NODES, SLOTS and SHARDS say of a node's endpoints, with
    # cluster-announce-* and cluster-preferred-endpoint-type: Redis's bytes.
    pair = start_nodes(tmp_path, [TEST_SERVER, "redis"], args=args)
    try:
        same(pair, "CLUSTER", "ADDSLOTSRANGE", 0, 99, expect=b"+OK\r\n")
        for sub in ("NODES", "SLOTS", "SHARDS"):
            same(pair, "CLUSTER", sub)
    finally:
        stop_nodes(pair)


# ---------------------------------------------------------------- nodes.conf

def bare_command(port, d):
    """The command line of a cluster node under test in `d`, to run by hand."""
    if IS_REDIS:
        cmd = ["redis-server"]
    else:
        cmd = [PEREGRINE_BIN] + shlex.split(os.environ.get("PEREGRINE_ARGS", ""))
    return cmd + ["--save", "", "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                  "--dir", str(d)]


class TestNodesConf:
    def test_saved_only_when_changed(self, tmp_path):
        # A CLUSTER command that changes the view writes nodes.conf before
        # it replies (a new file renamed over the old one, as Redis 7.2);
        # one that changes nothing leaves the file as it was (Peregrine's;
        # Redis writes it again).
        d = tmp_path / "n"
        d.mkdir()
        node = Node(d)
        try:
            conf = d / "nodes.conf"
            assert node("CLUSTER", "ADDSLOTSRANGE", 0, 99) == b"OK"
            before = conf.stat().st_ino
            assert " 0-99" in conf.read_text()
            for _ in range(3):
                assert node("CLUSTER", "SETSLOT", 5, "STABLE") == b"OK"
            assert IS_REDIS or conf.stat().st_ino == before
            assert node("CLUSTER", "DELSLOTS", 99) == b"OK"
            # (Redis 7.0 writes the file in place: the same inode.)
            assert (IS_REDIS or conf.stat().st_ino != before) and " 0-98" in conf.read_text()
        finally:
            node.stop()

    def test_restart_keeps_id_slots_epoch(self, tmp_path):
        d = tmp_path / "n"
        d.mkdir()
        node = Node(d, args=("--cluster-config-file", "my-nodes.conf"))
        try:
            myid = node.myid()
            assert node("CLUSTER", "ADDSLOTS", *range(0, 100)) == b"OK"
            assert node("CLUSTER", "ADDSLOTSRANGE", 1000, 1999, 16383, 16383) == b"OK"
            assert node("CLUSTER", "SET-CONFIG-EPOCH", 7) == b"OK"
            want_slots = ["0-99", "1000-1999", "16383"]
            node_shard = None if IS_REDIS else node("CLUSTER", "MYSHARDID").decode()
            assert myself_line(node)[8:] == want_slots
            port = node.port
            # Written at once (no clean shutdown needed): kill -9.
            node.crash()
            assert sorted(os.listdir(d)) == ["my-nodes.conf"]
            text = (d / "my-nodes.conf").read_text()
            lines = text.strip("\n").split("\n")
            assert lines[0].startswith(myid + " ") and "myself,master" in lines[0], text
            assert lines[-1].startswith("vars currentEpoch 7 "), text
            node = Node(d, port=port, args=("--cluster-config-file", "my-nodes.conf"))
            assert node.myid() == myid
            assert IS_REDIS or node("CLUSTER", "MYSHARDID").decode() == node_shard
            f = myself_line(node)
            assert f[0] == myid and f[2] == "myself,master" and f[6] == "7" and f[8:] == want_slots, f
            info = node.info()
            assert (info["cluster_current_epoch"], info["cluster_my_epoch"], info["cluster_slots_assigned"]) == \
                ("7", "7", "1101")
            with pytest.raises(redis.ResponseError, match="^Node config epoch is already non-zero$"):
                node("CLUSTER", "SET-CONFIG-EPOCH", 8)
        finally:
            node.stop()
        # A clean stop, then a restart on the default file name in --dir.
        d2 = tmp_path / "m"
        d2.mkdir()
        node = Node(d2)
        try:
            myid = node.myid()
            assert node("CLUSTER", "ADDSLOTSRANGE", 5, 9) == b"OK"
            assert node("CLUSTER", "BUMPEPOCH") == b"BUMPED 1"
            # SAVECONFIG writes it again, whatever happened to it.
            os.remove(d2 / "nodes.conf")
            assert node("CLUSTER", "SAVECONFIG") == b"OK"
            assert (d2 / "nodes.conf").read_text().startswith(myid + " ")
            port = node.port
            node.stop()
            assert os.path.exists(d2 / "nodes.conf")
            node = Node(d2, port=port)
            assert node.myid() == myid
            assert myself_line(node)[6:] == ["1", "connected", "5-9"]
        finally:
            node.stop()

    def test_corrupt_nodes_conf_stops_the_start(self, tmp_path):
        for i, content in enumerate(["garbage line here\n",
                                     "0123 :1@2 myself,master - 0 0 zz connected 0-99999\n"]):
            d = tmp_path / ("d%d" % i)
            d.mkdir()
            (d / "nodes.conf").write_text(content)
            port = port_pair()
            cmd = bare_command(port, d)
            p = subprocess.run(cmd, capture_output=True, timeout=10, cwd=d)
            out = (p.stdout + p.stderr).decode(errors="replace")
            assert p.returncode != 0, out
            assert "corrupted cluster config file" in out, out
            assert (d / "nodes.conf").read_text() == content  # (left as found)

    def test_nodes_conf_in_use_by_another_node(self, tmp_path):
        # Redis locks nodes.conf: a second node on the same file refuses to start.
        node = Node(tmp_path)
        try:
            port = port_pair()
            cmd = bare_command(port, tmp_path)
            try:
                p = subprocess.run(cmd, capture_output=True, timeout=5, cwd=tmp_path)
            except subprocess.TimeoutExpired:
                pytest.fail("a second node started on a nodes.conf in use")
            out = (p.stdout + p.stderr).decode(errors="replace")
            assert p.returncode != 0, out
            assert "nodes.conf is already used by a different" in out, out
            assert node("PING") == b"PONG"
        finally:
            node.stop()


# ---------------------------------------------------------------- three primaries

@pytest.fixture(scope="class")
def trio(tmp_path_factory):
    nodes = start_nodes(tmp_path_factory.mktemp("trio"), [TEST_SERVER] * 3)
    try:
        create_cluster(nodes)
        yield nodes
    finally:
        stop_nodes(nodes)


class TestThreePrimaries:
    def test_check_and_views(self, trio):
        rc_, out = cluster_check(trio[0])
        assert rc_ == 0, out
        assert "[OK] All nodes agree about slots configuration." in out, out
        assert "[OK] All 16384 slots covered." in out, out
        assert "[ERR]" not in out and "[WARNING]" not in out, out
        views = [view(n) for n in trio]
        assert views[0] == views[1] == views[2]
        ids = {n.myid() for n in trio}
        assert set(views[0]) == ids
        covered = []
        for n in trio:
            info = n.info()
            assert (info["cluster_state"], info["cluster_known_nodes"], info["cluster_size"],
                    info["cluster_slots_assigned"], info["cluster_slots_ok"]) == ("ok", "3", "3", "16384", "16384")
            f = myself_line(n)
            assert f[1].startswith(n.addr + "@%d" % n.bus_port), f
            assert f[2] == "myself,master" and f[3] == "-" and f[7] == "connected"
            for r in f[8:]:
                a, _, b = r.partition("-")
                covered += range(int(a), int(b or a) + 1)
        assert sorted(covered) == list(range(NUM_SLOTS))
        # CLUSTER SLOTS: the same on all, each range naming its owner.
        slots = [sorted(n("CLUSTER", "SLOTS")) for n in trio]
        assert slots[0] == slots[1] == slots[2]
        assert len(slots[0]) == 3
        by_port = {n.port: n for n in trio}
        for start, end, owner in slots[0]:
            assert owner[0] == b"127.0.0.1" and owner[2] == by_port[owner[1]].myid().encode()
            assert owner_of(trio, start) is by_port[owner[1]]
        # SHARDS: three, one primary each.
        for n in trio:
            shards = n("CLUSTER", "SHARDS")
            assert len(shards) == 3
            assert sorted(len(dict(zip(s[::2], s[1::2]))[b"nodes"]) for s in shards) == [1, 1, 1]
            # LINKS: to and from each peer (an inbound one once the peer has
            # pinged on it).
            assert wait_for(lambda: len(n("CLUSTER", "LINKS")) == 4, 5), n("CLUSTER", "LINKS")
            links = n("CLUSTER", "LINKS")
            for link in links:
                d = dict(zip(link[::2], link[1::2]))
                assert set(d) == {b"direction", b"node", b"create-time", b"events", b"send-buffer-allocated",
                                  b"send-buffer-used"}
                assert d[b"direction"] in (b"to", b"from") and d[b"node"].decode() in ids - {n.myid()}
            for other in ids - {n.myid()}:
                assert n("CLUSTER", "COUNT-FAILURE-REPORTS", other) == 0

    def test_moved(self, trio):
        for n in trio:
            for i in range(30):
                key = "moved:%d" % i
                slot = key_slot(key)
                owner = owner_of(trio, slot)
                if owner is n:
                    assert n.raw("SET", key, "v") == b"+OK\r\n"
                    assert n.raw("GET", key) == b"$1\r\nv\r\n"
                    assert n.raw("DEL", key) == b":1\r\n"
                else:
                    want = b"-MOVED %d %s\r\n" % (slot, owner.addr.encode())
                    assert n.raw("GET", key) == want
                    assert n.raw("SET", key, "v") == want
                    assert n.raw("MGET", "{%s}a" % key, "{%s}b" % key) == \
                        b"-MOVED %d %s\r\n" % (key_slot("{%s}" % key), owner.addr.encode())

    def test_moved_in_pipelines_and_transactions(self, trio):
        a = trio[0]
        keys = ["pipe:%d" % i for i in range(300)]
        mine = [k for k in keys if owner_of(trio, key_slot(k)) is a]
        assert 30 < len(mine) < 270

        def expect(k, ok):
            owner = owner_of(trio, key_slot(k))
            return ok if owner is a else b"-MOVED %d %s\r\n" % (key_slot(k), owner.addr.encode())
        # One pipeline, served and redirected commands interleaved: the
        # replies in order.
        with Conn(a) as conn:
            conn.send(b"".join(encode("SET", k, k) + encode("GET", k) for k in keys))
            for k in keys:
                assert conn.read_reply() == expect(k, b"+OK\r\n")
                assert conn.read_reply() == expect(k, b"$%d\r\n%s\r\n" % (len(k), k.encode()))
            assert conn.call("DEL", *mine[:1]) == b":1\r\n"
        # MULTI: a redirected command is refused when queued, and EXEC aborts.
        other = next(k for k in keys if k not in mine)
        with Conn(a) as conn:
            assert conn.call("MULTI") == b"+OK\r\n"
            assert conn.call("SET", mine[1], "x") == b"+QUEUED\r\n"
            assert conn.call("SET", other, "x") == expect(other, None)
            assert conn.call("EXEC") == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
            assert conn.call("WATCH", other) == expect(other, None)
            assert conn.call("WATCH", mine[1]) == b"+OK\r\n"
            assert conn.call("MULTI") == b"+OK\r\n"
            assert conn.call("SET", mine[1], "y") == b"+QUEUED\r\n"
            assert conn.call("EXEC") == b"*1\r\n+OK\r\n"
        assert a("GET", mine[1]) == b"y"
        assert a("FLUSHALL") == b"OK"

    def test_rediscluster_2000_keys(self, trio):
        rcl = RedisCluster(host=trio[0].host, port=trio[0].port, socket_timeout=10)
        try:
            pipe = rcl.pipeline(transaction=False)
            for i in range(2000):
                pipe.set("key:%d" % i, "value:%d" % i)
            assert pipe.execute() == [True] * 2000
            for i in range(0, 2000, 97):
                assert rcl.get("key:%d" % i) == b"value:%d" % i
        finally:
            rcl.close()
        # Each key on its slot's owner, none elsewhere.
        expect = {n.port: 0 for n in trio}
        for i in range(2000):
            expect[owner_of(trio, key_slot("key:%d" % i)).port] += 1
        assert {n.port: n("DBSIZE") for n in trio} == expect
        assert all(v > 500 for v in expect.values())
        for i in range(0, 2000, 401):
            slot = key_slot("key:%d" % i)
            owner = owner_of(trio, slot)
            assert owner("CLUSTER", "COUNTKEYSINSLOT", slot) == \
                sum(1 for j in range(2000) if key_slot("key:%d" % j) == slot)
            assert b"key:%d" % i in owner("CLUSTER", "GETKEYSINSLOT", slot, 100)
        # Read back through a client started from another node.
        rcl = RedisCluster(host=trio[2].host, port=trio[2].port, socket_timeout=10)
        try:
            keys = ["key:%d" % i for i in range(2000)]
            assert rcl.mget_nonatomic(keys) == [b"value:%d" % i for i in range(2000)]
            assert rcl.delete(*keys) == 2000
        finally:
            rcl.close()
        assert [n("DBSIZE") for n in trio] == [0, 0, 0]

    def test_ask_and_tryagain_while_a_slot_migrates(self, trio):
        src, dst = trio[0], trio[1]
        tag = tag_for(lambda s: owner_of(trio, s) is src)
        slot = key_slot(tag)
        present, missing, new = "{%s}present" % tag, "{%s}missing" % tag, "{%s}new" % tag
        assert src("SET", present, "here") == b"OK"
        src_id, dst_id = src.myid(), dst.myid()
        ask = b"-ASK %d %s\r\n" % (slot, dst.addr.encode())
        moved = b"-MOVED %d %s\r\n" % (slot, src.addr.encode())
        tryagain = b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n"
        assert src("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) == b"OK"
        assert dst("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) == b"OK"
        try:
            # NODES shows the open slot on each side.
            assert "[%d->-%s]" % (slot, dst_id) in myself_line(src)[8:]
            assert "[%d-<-%s]" % (slot, src_id) in myself_line(dst)[8:]
            rc_, out = cluster_check(src)
            assert "[WARNING] Node %s has slots in migrating state %d" % (src.addr, slot) in out, out
            # The source: keys it has are served, the others are asked for elsewhere.
            assert src.raw("GET", present) == b"$4\r\nhere\r\n"
            assert src.raw("GET", missing) == ask
            assert src.raw("SET", new, "v") == ask
            assert src.raw("MGET", present, missing) == tryagain
            assert src.raw("MGET", present, present) == b"*2\r\n$4\r\nhere\r\n$4\r\nhere\r\n"
            assert src.raw("MGET", missing, new) == ask
            # The target: MOVED back unless ASKING came first, for one command.
            assert dst.raw("GET", missing) == moved
            with Conn(dst) as conn:
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("GET", missing) == b"$-1\r\n"
                assert conn.call("GET", missing) == moved
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("SET", new, "there") == b"+OK\r\n"
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("GET", new) == b"$5\r\nthere\r\n"
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("MGET", new, missing) == tryagain
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("MGET", new, new) == b"*2\r\n$5\r\nthere\r\n$5\r\nthere\r\n"
                assert conn.call("GET", new) == moved
                # A key of another slot: ASKING changes nothing there.
                other = "{%s}x" % tag_for(lambda s: owner_of(trio, s) is src and s != slot)
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("GET", other) == b"-MOVED %d %s\r\n" % (key_slot(other), src.addr.encode())
            # redis-py follows ASK on its own.
            rcl = RedisCluster(host=src.host, port=src.port, socket_timeout=10)
            try:
                assert rcl.get(new) == b"there"
                assert rcl.get(present) == b"here"
            finally:
                rcl.close()
            # The source may not give the slot away while it holds keys of it.
            with pytest.raises(redis.ResponseError) as e:
                src("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
            assert str(e.value) == ("Can't assign hashslot %d to a different node while I still hold keys "
                                    "for this hash slot." % slot)
            with Conn(dst) as conn:
                assert conn.call("ASKING") == b"+OK\r\n"
                assert conn.call("DEL", new) == b":1\r\n"
        finally:
            assert src("CLUSTER", "SETSLOT", slot, "STABLE") == b"OK"
            assert dst("CLUSTER", "SETSLOT", slot, "STABLE") == b"OK"
        assert src.raw("GET", missing) == b"$-1\r\n"
        assert dst.raw("GET", missing) == moved
        assert src.raw("GET", present) == b"$4\r\nhere\r\n"
        assert not any(f.startswith("[") for f in myself_line(src)[8:] + myself_line(dst)[8:])
        assert src("DEL", present) == 1
        rc_, out = cluster_check(src)
        assert rc_ == 0 and "[WARNING]" not in out, out

    def test_setslot_errors_with_peers(self, trio):
        a, b = trio[0], trio[1]
        mine = tag_for(lambda s: owner_of(trio, s) is a)
        slot = key_slot(mine)
        with pytest.raises(redis.ResponseError, match=r"^To set a master the node must be empty and "
                                                      r"without assigned slots\.$"):
            a("CLUSTER", "REPLICATE", b.myid())
        with pytest.raises(redis.ResponseError, match=r"^I'm already the owner of hash slot %d$" % slot):
            a("CLUSTER", "SETSLOT", slot, "IMPORTING", b.myid())
        with pytest.raises(redis.ResponseError, match=r"^I'm not the owner of hash slot %d$" % slot):
            b("CLUSTER", "SETSLOT", slot, "MIGRATING", a.myid())
        with pytest.raises(redis.ResponseError, match=r"^The user can assign a config epoch only when the "
                                                      r"node does not know any other node\.$"):
            a("CLUSTER", "SET-CONFIG-EPOCH", 99)

    def test_script_calls_to_other_nodes_refused(self, trio):
        a = trio[0]
        remote = "{%s}k" % tag_for(lambda s: owner_of(trio, s) is not a)
        local = "{%s}k" % tag_for(lambda s: owner_of(trio, s) is a)
        assert owner_of(trio, key_slot(remote))("SET", remote, "there") == b"OK"
        for script in ("return redis.call('get','%s')" % remote, "return redis.call('set','%s','x')" % remote):
            with pytest.raises(redis.ResponseError) as e:
                a("EVAL", script, 0)
            assert re.fullmatch(r"Script attempted to access a non local key in a cluster node "
                                r"script: [0-9a-f]{40}, on @user_script:1\.", str(e.value)), str(e.value)
        assert owner_of(trio, key_slot(remote))("GET", remote) == b"there"
        assert a("EVAL", "return redis.call('set','%s','here')" % local, 0) == b"OK"
        assert a("GET", local) == b"here"
        # Declared keys of another node: MOVED, as for the command itself.
        with pytest.raises(redis.exceptions.MovedError):
            a("EVAL", "return 1", 1, remote)
        assert a("DEL", local) == 1 and owner_of(trio, key_slot(remote))("DEL", remote) == 1

    def test_setslot_node_moves_an_empty_slot(self, trio):
        # The end of a reshard, without MIGRATE: an empty slot given to
        # another primary with SETSLOT NODE on both sides; the third learns
        # it by gossip. Then back again.
        a, b, c = trio
        slot = key_slot(tag_for(lambda s: owner_of(trio, s) is a))
        key = "{%s}k" % tag_for(lambda s: s == slot)

        def move(src, dst):
            hand_over_empty_slot(src, dst, slot)

            def everyone_agrees():
                return all(r[0] <= slot <= r[1] and r[2][1] == dst.port or not (r[0] <= slot <= r[1])
                           for n in trio for r in n("CLUSTER", "SLOTS"))
            assert wait_for(everyone_agrees, 8), [n("CLUSTER", "SLOTS") for n in trio]
            converged(trio)
            for n in trio:
                if n is dst:
                    assert n.raw("SET", key, "v") == b"+OK\r\n"
                    assert n.raw("DEL", key) == b":1\r\n"
                else:
                    assert n.raw("GET", key) == b"-MOVED %d %s\r\n" % (slot, dst.addr.encode())
            assert not any(f.startswith("[") for n in trio for f in myself_line(n)[8:])
            rc_, out = cluster_check(c)
            assert rc_ == 0 and "[WARNING]" not in out and "[OK] All 16384 slots covered." in out, out
        # (The importer takes a new config epoch, the highest, so that its
        # claim wins.) A client blocked on a key of the slot gets -MOVED
        # once the slot is gone, as Redis redirects blocked clients.
        epoch = int(cluster_info(b)["cluster_current_epoch"])
        blocked = Conn(a)
        blocked.send(encode("BLPOP", key, 0))
        assert wait_for(lambda: a.client().info("clients")["blocked_clients"] == 1, 5)
        move(a, b)
        blocked.sock.settimeout(5)
        assert blocked.read_reply() == b"-MOVED %d %s\r\n" % (slot, b.addr.encode())
        blocked.close()
        assert int(myself_line(b)[6]) > epoch
        epoch = int(cluster_info(a)["cluster_current_epoch"])
        move(b, a)
        assert int(myself_line(a)[6]) > epoch

    def test_reshard_under_a_writer_loses_nothing(self, trio):
        # redis-cli moves 300 slots (MIGRATE ... KEYS with SETSLOT
        # IMPORTING / MIGRATING / NODE) while a RedisCluster client writes:
        # no error reaches the writer, every key written is read back after,
        # and the check is clean.
        a, b, c = trio
        rc_ = RedisCluster(host="127.0.0.1", port=a.port)
        for i in range(3000):
            rc_.set("r:%d" % i, i)
        stop, errors, written = [], [], {}

        def writer():
            w = RedisCluster(host="127.0.0.1", port=b.port)
            i = 0
            while not stop:
                try:
                    w.set("w:%d" % i, i)
                    written["w:%d" % i] = i
                except Exception as e:  # noqa: BLE001
                    errors.append(repr(e))
                i += 1
            w.close()
        t = __import__("threading").Thread(target=writer)
        t.start()
        try:
            code, out = redis_cli("--cluster", "reshard", a.addr, "--cluster-from", a.myid(), "--cluster-to",
                                  b.myid(), "--cluster-slots", 300, "--cluster-yes", timeout=120)
        finally:
            stop.append(1)
            t.join(30)
        assert code == 0, out[-2000:]
        assert not errors, errors[:3]
        assert len(written) > 50
        check = RedisCluster(host="127.0.0.1", port=c.port)
        assert [i for i in range(3000) if check.get("r:%d" % i) != str(i).encode()] == []
        assert [k for k, v in written.items() if check.get(k) != str(v).encode()] == []
        converged(trio)
        code, out = cluster_check(a)
        assert code == 0 and "[WARNING]" not in out and "[OK] All 16384 slots covered." in out, out
        # Back, so that the class's other tests see the first layout.
        code, out = redis_cli("--cluster", "reshard", a.addr, "--cluster-from", b.myid(), "--cluster-to",
                              a.myid(), "--cluster-slots", 300, "--cluster-yes", timeout=120)
        assert code == 0, out[-2000:]
        for k in list(written)[:200] + ["r:%d" % i for i in range(0, 3000, 15)]:
            check.delete(k)
        converged(trio)

    def test_publish_reaches_every_node(self, trio):
        # PUBLISH on one node: every node's subscribers hear it (over the
        # bus); the reply counts this node's own.
        subs = []
        for n in trio:
            p = n.client().pubsub()
            p.subscribe("news")
            assert p.get_message(timeout=2)["type"] == "subscribe"
            subs.append(p)
        try:
            assert trio[0]("PUBLISH", "news", "hello") == 1
            for p in subs:
                m = p.get_message(timeout=3)
                assert m is not None and (m["channel"], m["data"]) == (b"news", b"hello"), m
        finally:
            for p in subs:
                p.close()

    def test_failed_primary_detected_then_rejoins_from_nodes_conf(self, trio):
        # Last in its class. A primary killed: the other two flag it
        # PFAIL, agree on FAIL, and the cluster is down (its slots have no
        # replica). Started again in its directory, it knows the cluster from
        # nodes.conf (written as things changed: kill -9 left no chance to
        # save) and is let back in.
        a, b, c = trio
        myid, port, before = c.myid(), c.port, view(a)
        key = "{%s}k" % tag_for(lambda s: owner_of(trio, s) is c)
        mine = "{%s}k" % tag_for(lambda s: owner_of(trio, s) is a)
        c.crash()

        def flagged(n):
            return "fail" in {f[0]: f for f in nodes_lines(n)}[myid][2].split(",")
        assert wait_for(lambda: flagged(a) and flagged(b), 4 * NODE_TIMEOUT / 1000), \
            (nodes_lines(a), nodes_lines(b))
        wait_state([a, b], "fail", timeout=3)
        for n in (a, b):
            info = n.info()
            assert (info["cluster_slots_fail"], info["cluster_slots_ok"]) == ("5461", "10923"), info
            assert n.raw("GET", mine) == b"-CLUSTERDOWN The cluster is down\r\n"
        trio[2] = c = Node(c.dir, port=port)
        assert c.myid() == myid
        assert c.info()["cluster_known_nodes"] == "3"
        assert {k: v[5] for k, v in view(c).items()} == {k: v[5] for k, v in before.items()}
        converged(trio, timeout=4 * NODE_TIMEOUT / 1000 + 5)
        assert view(a) == before
        rc_, out = cluster_check(a)
        assert rc_ == 0 and "[WARNING]" not in out and "[OK] All 16384 slots covered." in out, out
        assert c.raw("SET", key, "v") == b"+OK\r\n"
        assert a.raw("GET", key) == b"-MOVED %d %s\r\n" % (key_slot(key), c.addr.encode())
        assert c("DEL", key) == 1
        assert a.raw("GET", mine) == b"$-1\r\n"


# ---------------------------------------------------------------- primaries with replicas

@pytest.fixture(scope="class")
def six(tmp_path_factory):
    nodes = start_nodes(tmp_path_factory.mktemp("six"), [TEST_SERVER] * 6)
    try:
        create_cluster(nodes, replicas=1)
        yield nodes
    finally:
        stop_nodes(nodes)


def roles(nodes):
    """{replica node: its primary node}, from each replica's own NODES line."""
    by_id = {n.myid(): n for n in nodes}
    out = {}
    for n in nodes:
        f = myself_line(n)
        if "slave" in f[2]:
            out[n] = by_id[f[3]]
    return out


def wait_replicas_linked(nodes, timeout=15):
    def linked():
        for replica in roles(nodes):
            info = replica.client().info("replication")
            if info.get("master_link_status") != "up":
                return False
        return True
    assert wait_for(linked, timeout)


class TestReplicas:
    def test_check_and_roles(self, six):
        rc_, out = cluster_check(six[0])
        assert rc_ == 0, out
        assert "[OK] All 16384 slots covered." in out and "[WARNING]" not in out, out
        assert "3 additional replica(s)" not in out and out.count("1 additional replica(s)") == 3, out
        rep = roles(six)
        assert len(rep) == 3 and len(set(rep.values())) == 3, [nodes_lines(n) for n in six]
        primaries = set(rep.values())
        for n in six:
            info = n.info()
            assert (info["cluster_state"], info["cluster_known_nodes"], info["cluster_size"]) == ("ok", "6", "3")
            lines = {f[0]: f for f in nodes_lines(n)}
            for replica, primary in rep.items():
                f = lines[replica.myid()]
                assert f[2] in ("slave", "myself,slave") and f[3] == primary.myid() and f[8:] == [], f
                assert lines[primary.myid()][2] in ("master", "myself,master")
        for replica, primary in rep.items():
            # The primary's config epoch, as the replica says it; its shard.
            assert replica.info()["cluster_my_epoch"] == primary.info()["cluster_my_epoch"], \
                (replica.info(), primary.info())
            if not IS_REDIS:  # (MYSHARDID: 7.2's)
                assert wait_for(lambda: replica("CLUSTER", "MYSHARDID") == primary("CLUSTER", "MYSHARDID"), 5)
            for n in six:
                got = n("CLUSTER", "REPLICAS", primary.myid())
                assert len(got) == 1 and got[0].decode().split(" ")[0] == replica.myid(), got
                # (The same line, but for the ping and pong times in it.)
                again = n("CLUSTER", "SLAVES", primary.myid())
                assert [x.split(b" ")[:4] for x in again] == [x.split(b" ")[:4] for x in got], (again, got)
            with pytest.raises(redis.ResponseError, match=r"^The specified node is not a master$"):
                primary("CLUSTER", "REPLICAS", replica.myid())
        # SLOTS: each range names its primary, then its replica (once the
        # replica has a replication offset: Redis leaves out those at 0).
        for primary in rep.values():
            assert primary("SET", "{%s}x" % tag_for(lambda s: owner_of(six, s) is primary), 1) == b"OK"

        def slots_name_replicas():
            for n in six:
                for entry in n("CLUSTER", "SLOTS"):
                    start, owner, others = entry[0], entry[2], entry[3:]
                    primary = owner_of(six, start)
                    assert owner[1] == primary.port
                    if [o[1] for o in others] != [r.port for r, p in rep.items() if p is primary]:
                        return False
            return True
        assert wait_for(slots_name_replicas, 10), [n("CLUSTER", "SLOTS") for n in six]
        for n in six:
            for s in n("CLUSTER", "SHARDS"):
                d = dict(zip(s[::2], s[1::2]))
                members = [dict(zip(m[::2], m[1::2])) for m in d[b"nodes"]]
                assert sorted(m[b"role"] for m in members) == [b"master", b"replica"]
        wait_replicas_linked(six)
        for replica, primary in rep.items():
            info = replica.client().info("replication")
            assert info["role"] == "slave" and info["master_port"] == primary.port

    def test_reads_on_replicas_writes_moved(self, six):
        rep = roles(six)
        wait_replicas_linked(six)
        for replica, primary in rep.items():
            tag = tag_for(lambda s: owner_of(six, s) is primary)
            key = "{%s}k" % tag
            slot = key_slot(key)
            moved = b"-MOVED %d %s\r\n" % (slot, primary.addr.encode())
            assert primary("SET", key, "v1") == b"OK"
            assert replica.raw("SET", key, "v2") == moved
            assert replica.raw("GET", key) == moved
            with Conn(replica) as conn:
                assert conn.call("READONLY") == b"+OK\r\n"
                deadline = time.monotonic() + 5
                while conn.call("GET", key) != b"$2\r\nv1\r\n" and time.monotonic() < deadline:
                    time.sleep(0.02)
                assert conn.call("GET", key) == b"$2\r\nv1\r\n"
                assert conn.call("SET", key, "v3") == moved  # (READONLY: reads only)
                other = "{%s}x" % tag_for(lambda s: owner_of(six, s) is not primary)
                other_owner = owner_of(six, key_slot(other))
                assert conn.call("GET", other) == b"-MOVED %d %s\r\n" % (key_slot(other), other_owner.addr.encode())
                assert conn.call("READWRITE") == b"+OK\r\n"
                assert conn.call("GET", key) == moved
            assert primary("DEL", key) == 1

    def test_replica_errors(self, six):
        rep = roles(six)
        replica, primary = next(iter(rep.items()))
        slot = key_slot(tag_for(lambda s: owner_of(six, s) is primary))
        with pytest.raises(redis.ResponseError, match=r"^Please use SETSLOT only with masters\.$"):
            replica("CLUSTER", "SETSLOT", slot, "STABLE")
        with pytest.raises(redis.ResponseError, match=r"^Can't forget my master!$"):
            replica("CLUSTER", "FORGET", primary.myid())
        other_replica = [r for r in rep if r is not replica][0]
        with pytest.raises(redis.ResponseError, match=r"^I can only replicate a master, not a replica\.$"):
            replica("CLUSTER", "REPLICATE", other_replica.myid())
        with pytest.raises(redis.ResponseError, match=r"^Target node is not a master$"):
            primary("CLUSTER", "SETSLOT", slot, "MIGRATING", replica.myid())
        with pytest.raises(redis.ResponseError, match=r"^Target node is not a master$"):
            primary("CLUSTER", "SETSLOT", slot, "NODE", replica.myid())
        # Nothing changed.
        assert roles(six) == rep
        rc_, out = cluster_check(six[0])
        assert rc_ == 0 and "[WARNING]" not in out, out

    def test_reset_a_replica(self, six):
        # Last in its class: it takes a replica out of the cluster.
        rep = roles(six)
        wait_replicas_linked(six)
        replica, primary = next(iter(rep.items()))
        key = "{%s}k" % tag_for(lambda s: owner_of(six, s) is primary)
        assert primary("SET", key, "v") == b"OK"
        assert wait_for(lambda: replica("DBSIZE") == primary("DBSIZE"), 5)
        myid = replica.myid()
        assert replica("CLUSTER", "RESET", "SOFT") == b"OK"  # (a replica's keys do not stop it)
        assert replica.myid() == myid
        assert replica("DBSIZE") == 0
        f = nodes_lines(replica)
        assert len(f) == 1 and f[0][2] == "myself,master" and f[0][3] == "-" and f[0][8:] == [], f
        assert replica.info()["cluster_known_nodes"] == "1"
        assert wait_for(lambda: replica.client().info("replication")["role"] == "master", 5)
        assert replica.raw("GET", key) == b"-CLUSTERDOWN Hash slot not served\r\n"
        assert primary("GET", key) == b"v" and primary("DEL", key) == 1


# ---------------------------------------------------------------- Peregrine and Redis together

@pytest.fixture(scope="class")
def mixed(tmp_path_factory):
    # Primaries: the first three (two under test, one redis-server); replicas:
    # the last three, of either kind, so replication crosses kinds.
    kinds = [TEST_SERVER, TEST_SERVER, "redis", "redis", TEST_SERVER, "redis"]
    nodes = start_nodes(tmp_path_factory.mktemp("mixed"), kinds)
    try:
        create_cluster(nodes, replicas=1)
        yield nodes
    finally:
        stop_nodes(nodes)


class TestMixed:
    def test_check_and_keys_from_any_node(self, mixed):
        rc_, out = cluster_check(mixed[0])
        assert rc_ == 0, out
        assert "[OK] All 16384 slots covered." in out and "[WARNING]" not in out, out
        rep = roles(mixed)
        assert len(rep) == 3
        assert {p.kind for p in rep.values()} == {TEST_SERVER, "redis"}
        assert IS_REDIS or any(r.kind != p.kind for r, p in rep.items())
        views = [view(n) for n in mixed]
        assert all(v == views[0] for v in views)
        for n in mixed:
            info = n.info()
            assert (info["cluster_state"], info["cluster_known_nodes"], info["cluster_size"]) == ("ok", "6", "3")
        rcl = RedisCluster(host=mixed[0].host, port=mixed[0].port, socket_timeout=10)
        keys = ["mixed:%d" % i for i in range(600)]
        try:
            pipe = rcl.pipeline(transaction=False)
            for k in keys:
                pipe.set(k, k)
            assert pipe.execute() == [True] * len(keys)
        finally:
            rcl.close()
        for n in mixed:
            if n in rep:
                continue
            assert n("DBSIZE") == sum(1 for k in keys if owner_of(mixed, key_slot(k)) is n)
            assert n("DBSIZE") > 100
        for n in mixed:
            rcl = RedisCluster(host=n.host, port=n.port, socket_timeout=10)
            try:
                assert rcl.mget_nonatomic(keys) == [k.encode() for k in keys]
            finally:
                rcl.close()
        # Each replica has its primary's keys, whatever the two kinds.
        wait_replicas_linked(mixed)
        for replica, primary in rep.items():
            assert wait_for(lambda: replica("DBSIZE") == primary("DBSIZE"), 10), (replica.kind, primary.kind)
            mine = [k for k in keys if owner_of(mixed, key_slot(k)) is primary]
            with Conn(replica) as conn:
                assert conn.call("READONLY") == b"+OK\r\n"
                for k in mine[:20]:
                    assert conn.call("GET", k) == b"$%d\r\n%s\r\n" % (len(k), k.encode())
        # MOVED between kinds names the right node.
        for n in mixed:
            for k in keys[:20]:
                owner = owner_of(mixed, key_slot(k))
                if owner is not n and n not in rep:
                    assert n.raw("GET", k) == b"-MOVED %d %s\r\n" % (key_slot(k), owner.addr.encode())


# ---------------------------------------------------------------- MEET and FORGET

@pytest.mark.parametrize("kinds", [(TEST_SERVER, TEST_SERVER), (TEST_SERVER, "redis")], ids=["same", "with-redis"])
def test_meet_and_forget(tmp_path, kinds):
    a, b = nodes = start_nodes(tmp_path, kinds, args=lambda i: ("--cluster-announce-hostname", "host-%d" % i))
    try:
        assert a("CLUSTER", "MEET", "127.0.0.1", b.port) == b"OK"

        def met():
            if any(n.info()["cluster_known_nodes"] != "2" for n in nodes):
                return False
            la, lb = {f[0]: f for f in nodes_lines(a)}, {f[0]: f for f in nodes_lines(b)}
            return (b.myid() in la and a.myid() in lb and la[b.myid()][2] == "master"
                    and lb[a.myid()][2] == "master" and la[b.myid()][7] == lb[a.myid()][7] == "connected")
        assert wait_for(met, 8), [nodes_lines(n) for n in nodes]
        # Each knows the other's address and hostname, and its own address,
        # learnt from the other.
        assert wait_for(lambda: {f[0]: f for f in nodes_lines(a)}[b.myid()][1] ==
                        "%s@%d,host-1" % (b.addr, b.bus_port), 5), nodes_lines(a)
        assert wait_for(lambda: {f[0]: f for f in nodes_lines(b)}[a.myid()][1] ==
                        "%s@%d,host-0" % (a.addr, a.bus_port), 5), nodes_lines(b)
        assert myself_line(a)[1] == "%s@%d,host-0" % (a.addr, a.bus_port)
        assert wait_for(lambda: myself_line(b)[1] == "%s@%d,host-1" % (b.addr, b.bus_port), 5), myself_line(b)
        # Meeting again changes nothing (once the handshake it starts finds
        # a known node).
        assert b("CLUSTER", "MEET", "127.0.0.1", a.port, a.bus_port) == b"OK"
        assert wait_for(lambda: all(len(nodes_lines(n)) == 2 and
                                    not any("handshake" in f[2] for f in nodes_lines(n)) for n in nodes), 5), \
            [nodes_lines(n) for n in nodes]
        # Slots given on one side are seen on the other.
        assert a("CLUSTER", "ADDSLOTSRANGE", 0, 99) == b"OK"
        assert wait_for(lambda: {f[0]: f for f in nodes_lines(b)}[a.myid()][8:] == ["0-99"], 5), nodes_lines(b)
        assert b.raw("GET", "{%s}x" % tag_for(lambda s: s < 100)) == \
            "-CLUSTERDOWN The cluster is down\r\n".encode()
        # FORGET: gone at once, and not learnt again from the other (a
        # minute's ban), even though b still knows a.
        assert a("CLUSTER", "FORGET", b.myid()) == b"OK"
        assert a.info()["cluster_known_nodes"] == "1"
        assert [f[0] for f in nodes_lines(a)] == [a.myid()]
        # Forgetting it again: Redis 7.2 says OK while the ban lasts (the
        # deletion may have come by gossip); 7.0 said Unknown node.
        if IS_REDIS:
            with pytest.raises(redis.ResponseError, match="^Unknown node %s$" % b.myid()):
                a("CLUSTER", "FORGET", b.myid())
        else:
            assert a("CLUSTER", "FORGET", b.myid()) == b"OK"
        with pytest.raises(redis.ResponseError, match="^Unknown node %s$" % ("f" * 40)):
            a("CLUSTER", "FORGET", "f" * 40)
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline:
            assert a.info()["cluster_known_nodes"] == "1"
            time.sleep(0.1)
        assert b("CLUSTER", "FORGET", a.myid()) == b"OK"
        assert b.info()["cluster_known_nodes"] == "1"
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            assert [n.info()["cluster_known_nodes"] for n in nodes] == ["1", "1"]
            time.sleep(0.1)
    finally:
        stop_nodes(nodes)


def test_cluster_port(tmp_path):
    # --cluster-port: the bus elsewhere than port+10000; MEET names it.
    bus = port_pair()
    for d in "ab":
        os.makedirs(tmp_path / d)
    a = Node(tmp_path / "a", args=("--cluster-port", str(bus)))
    nodes = [a]
    try:
        b = Node(tmp_path / "b")
        nodes.append(b)
        assert myself_line(a)[1].endswith(":%d@%d" % (a.port, bus)), myself_line(a)
        assert b("CLUSTER", "MEET", "127.0.0.1", a.port, bus) == b"OK"

        def met():
            lines = {f[0]: f for f in nodes_lines(b)}
            return a.myid() in lines and lines[a.myid()][1] == "%s@%d" % (a.addr, bus) and \
                lines[a.myid()][7] == "connected" and a.info()["cluster_known_nodes"] == "2"
        assert wait_for(met, 8), (nodes_lines(a), nodes_lines(b))
        assert wait_for(lambda: myself_line(a)[1] == "%s@%d" % (a.addr, bus), 5), myself_line(a)
    finally:
        stop_nodes(nodes)


# ---------------------------------------------------------------- MIGRATE

def test_migrate_replies_match_redis(pair):
    # MIGRATE's own checks and answers, from a node under test and from
    # redis-server, to the same target (a redis-server serving every slot).
    node, ref = pair
    target = start_nodes(os.path.join(node.dir, "target"), ["redis"])[0]
    try:
        for n in (node, ref, target):
            assert n("CLUSTER", "ADDSLOTSRANGE", 0, NUM_SLOTS - 1) == b"OK"
        wait_state([node, ref, target])
        closed = port_pair()
        busy = ("SET", "{m}a", "there")
        cases = [
            (("MIGRATE", "127.0.0.1", target.port, "{m}none", 0, 1000), None),                  # NOKEY
            (("MIGRATE", "127.0.0.1", target.port, "{m}a", 0, 1000, "KEYS", "{m}b"), None),     # key not ""
            (("MIGRATE", "127.0.0.1", target.port, "", 0, 1000, "AUTH"), None),                 # syntax
            (("MIGRATE", "127.0.0.1", target.port, "", 0, 1000, "BOGUS"), None),
            (("MIGRATE", "127.0.0.1", target.port, "", "x", 1000, "KEYS", "{m}a"), None),       # not numbers
            (("MIGRATE", "127.0.0.1", target.port, "", 0, "x", "KEYS", "{m}a"), None),
            (("MIGRATE", "127.0.0.1", closed, "{m}a", 0, 200), None),                          # nobody there
            (("MIGRATE", "127.0.0.1", target.port, "", 0, 1000, "COPY", "KEYS", "{m}a", "{m}b"), None),
            (("MIGRATE", "127.0.0.1", target.port, "", 0, 1000, "KEYS", "{m}a", "{m}b"), busy),  # BUSYKEY
            (("MIGRATE", "127.0.0.1", target.port, "", 0, 1000, "REPLACE", "KEYS", "{m}a", "{m}b"), busy),
        ]
        for cmd, prepare in cases:
            replies, after = [], []
            for n in (node, ref):
                target("FLUSHALL")
                if prepare:
                    target(*prepare)
                n("DEL", "{m}a", "{m}b")
                n("SET", "{m}a", "1")
                n("SET", "{m}b", "2")
                replies.append(n.raw(*cmd))
                after.append((n("EXISTS", "{m}a", "{m}b"), target("MGET", "{m}a", "{m}b")))
            assert replies[0] == replies[1], (cmd, replies)
            assert after[0] == after[1], (cmd, after)
        # The last, REPLACE: both keys moved over the one there.
        assert after[0] == (0, [b"1", b"2"])
    finally:
        target.stop()


# ---------------------------------------------------------------- failover

@pytest.fixture
def six_for_failover(tmp_path):
    nodes = start_nodes(tmp_path, [TEST_SERVER] * 6)
    try:
        create_cluster(nodes, replicas=1)
        wait_replicas_linked(nodes)
        yield nodes
    finally:
        stop_nodes(nodes)


def test_failover_of_a_killed_primary_and_a_manual_one(six_for_failover):
    # kill -9 of a primary: its replica is elected within the node timeout
    # and the election's delay, the cluster is ok again, and every key
    # written before is read back. Then CLUSTER FAILOVER on another
    # replica: it and its primary swap roles with nothing lost.
    nodes = six_for_failover
    rc_ = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    for i in range(2000):
        rc_.set("f:%d" % i, i)
    rc_.close()
    rep = roles(nodes)
    replica, primary = next(iter(rep.items()))
    # The replica has the primary's whole stream before the kill.
    assert wait_for(lambda: replica.client().info("replication").get("slave_repl_offset") ==
                    primary.client().info("replication")["master_repl_offset"], 10)
    t0 = time.monotonic()
    primary.crash()
    assert wait_for(lambda: "myself,master" in myself_line(replica)[2], 6 * NODE_TIMEOUT / 1000), \
        nodes_lines(replica)
    took = time.monotonic() - t0
    alive = [n for n in nodes if n is not primary]
    wait_state(alive, timeout=10)
    assert took < 6 * NODE_TIMEOUT / 1000
    check = RedisCluster(host="127.0.0.1", port=replica.port)
    assert [i for i in range(2000) if check.get("f:%d" % i) != str(i).encode()] == []
    check.close()
    # A manual failover on another replica.
    other, its_primary = [(r, p) for r, p in rep.items() if r is not replica][0]
    assert other("CLUSTER", "FAILOVER") == b"OK"
    assert wait_for(lambda: "myself,master" in myself_line(other)[2] and
                    myself_line(its_primary)[2] == "myself,slave" and
                    myself_line(its_primary)[3] == other.myid(), 10), (nodes_lines(other), nodes_lines(its_primary))
    wait_state(alive, timeout=10)
    with pytest.raises(redis.ResponseError, match=r"^You should send CLUSTER FAILOVER to a replica$"):
        other("CLUSTER", "FAILOVER")
    check = RedisCluster(host="127.0.0.1", port=other.port)
    assert [i for i in range(2000) if check.get("f:%d" % i) != str(i).encode()] == []
    check.close()
