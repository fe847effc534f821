"""Cluster clients of four languages work unchanged against a cluster (issue
#39): redis-py RedisCluster, go-redis ClusterClient, ioredis Cluster and Jedis
JedisCluster each write 10,000 keys spread over the slots while
`redis-cli --cluster reshard` moves 1,000 slots from one primary to another,
and nothing is lost.

Each client is a small program under tests/clients/<language>/ (its
dependencies pinned: go.sum, package-lock.json, exact versions in pom.xml).
It is given one node's address and discovers the rest; from 4 workers, at
RATE indexes a second, it writes PREFIX:i = value(i) (spread over the slots:
MOVED once their slot has moved), every 4th index also {HOT}PREFIX:i (HOT: a
tag in the last slot the reshard moves, which so holds a few thousand keys,
written to while they are migrated: ASK, ASKING), every 25th a hash-tagged
pair with MSET / MGET, spread or in HOT's slot (TRYAGAIN while it is half
moved); it reads back its own earlier writes, follows the redirections
through its client library (see each program for what its library leaves to
the application), and keeps going (past N) until the test closes its
standard input once the reshard is over. It prints a JSON line of counts and
exits non-zero on any error or wrong read-back. The test then reads every
key through redis-py RedisCluster, counts the keys on every node and in
their slots (nothing lost, nothing left twice or in a slot not the node's),
and wants `redis-cli --cluster check` clean.

The programs are built once into PEREGRINE_CLIENTS_DIR (default:
build/clients/<language>/, rebuilt when their sources change): `go build`,
`npm ci`, `mvn -q -B package`, from the Go module proxy, the npm registry and
Maven Central the first time (then from ~/go/pkg/mod, ~/.npm and ~/.m2).

A missing toolchain (go, node + npm, java + mvn) FAILS its test with a
message naming it: these tests exist to prove the clients work, and a CI
that lacks a toolchain would otherwise go green having proved nothing. Where
that is intended (a developer's machine without Java, say), set
PEREGRINE_CLIENT_TESTS=skip-missing and those tests are skipped instead. A
failed build fails either way.

With TEST_SERVER=redis the nodes are Debian's redis-server (as in
tests/test_cluster.py), which is how this test itself is checked.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
from redis.cluster import RedisCluster

from conftest import ROOT, TEST_SERVER
from helpers import wait_for
from test_cluster import (NUM_SLOTS, cluster_check, converged, create_cluster, key_slot, myself_line, redis_cli,
                          start_nodes, stop_nodes, tag_for)

N = 10_000  # keys each client writes at least
RATE = 2000  # indexes a second: 5 s for N, long enough to overlap the reshard
MOVED_SLOTS = 1000
HOT_EVERY, MULTI_EVERY = 4, 25  # as in the writers
SRC = os.path.join(ROOT, "tests", "clients")
CLIENTS_DIR = os.environ.get("PEREGRINE_CLIENTS_DIR", os.path.join(ROOT, "build", "clients"))
BUILD_TIMEOUT = 600  # s, per build (the first one downloads its dependencies)


def value(prefix, i):
    """What the writers store under PREFIX:i and {HOT}PREFIX:i."""
    return "%s=%d#%d" % (prefix, i, (i * i) % 1000003)


def expected(prefix, hot, count):
    """Every key (and its value) that a writer which took indexes 0..count-1
    leaves behind."""
    want = {}
    for i in range(count):
        want["%s:%d" % (prefix, i)] = value(prefix, i)
        if i % HOT_EVERY == 1:
            want["{%s}%s:%d" % (hot, prefix, i)] = value(prefix, i)
        if i % MULTI_EVERY == 0:
            tag = "{%s:m%d}" % (prefix, i) if i % (2 * MULTI_EVERY) == 0 else "{%s}%s:m%d" % (hot, prefix, i)
            want[tag + "a"], want[tag + "b"] = "a:%d" % i, "b:%d" % i
    return want


# ---------------------------------------------------------------- the programs

def _tool(name):
    path = shutil.which(name)
    if path is None and name == "go" and os.access("/usr/local/go/bin/go", os.X_OK):
        path = "/usr/local/go/bin/go"  # (the Go project's own install, often left off PATH)
    if path is None:
        msg = ("%s is not installed: this test needs it to build its client program (see "
               "tests/test_cluster_clients.py; PEREGRINE_CLIENT_TESTS=skip-missing skips instead)" % name)
        if os.environ.get("PEREGRINE_CLIENT_TESTS") == "skip-missing":
            pytest.skip(msg)
        pytest.fail(msg)
    return path


def _sources_digest(lang):
    """A digest of tests/clients/<lang>/'s sources (what a build depends on)."""
    h = hashlib.sha256()
    top = os.path.join(SRC, lang)
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x not in ("node_modules", "target"))
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(os.path.relpath(p, top).encode() + b"\0")
            with open(p, "rb") as fh:
                h.update(fh.read() + b"\0")
    return h.hexdigest()


def _run_build(cmd, cwd, what):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail("%s: %s took more than %d s" % (what, " ".join(cmd), BUILD_TIMEOUT))
    if p.returncode != 0:
        out = (p.stdout + p.stderr).decode(errors="replace")
        pytest.fail("%s: %s failed (%d):\n%s" % (what, " ".join(cmd), p.returncode, out[-4000:]))


def _copy_sources(lang, out):
    """tests/clients/<lang>/ copied to `out` (build outputs left alone)."""
    top = os.path.join(SRC, lang)
    for name in os.listdir(top):
        if name in ("node_modules", "target", ".gitignore"):
            continue
        src, dst = os.path.join(top, name), os.path.join(out, name)
        if os.path.isdir(src):
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)


class _Client:
    """One writer program: the sources under tests/clients/`lang`/, the
    tools that build it and those that run it, its keys' prefix."""

    def __init__(self, lang, prefix, build_tools=(), run_tools=()):
        self.lang, self.prefix, self.build_tools, self.run_tools = lang, prefix, build_tools, run_tools

    def build(self, out, tools):
        pass

    def command(self, out, tools):
        raise NotImplementedError


class _Go(_Client):
    def build(self, out, tools):
        _run_build([tools["go"], "build", "-mod=readonly", "-o", os.path.join(out, "writer"), "."],
                   os.path.join(SRC, "go"), "go-redis writer")

    def command(self, out, tools):
        return [os.path.join(out, "writer")]


class _Node(_Client):
    def build(self, out, tools):
        _copy_sources("node", out)
        _run_build([tools["npm"], "ci", "--no-audit", "--no-fund", "--loglevel=error"], out, "ioredis writer")

    def command(self, out, tools):
        return [tools["node"], os.path.join(out, "writer.js")]


class _Java(_Client):
    def build(self, out, tools):
        _copy_sources("java", out)
        _run_build([tools["mvn"], "-q", "-B", "-Dstyle.color=never", "package"], out, "Jedis writer")

    def command(self, out, tools):
        cp = os.path.join(out, "target", "classes") + ":" + os.path.join(out, "target", "lib", "*")
        return [tools["java"], "-cp", cp, "peregrine.tests.Writer"]


class _Python(_Client):
    def command(self, out, tools):
        return [sys.executable, os.path.join(SRC, "python", "writer.py")]


CLIENTS = {
    "redis-py": _Python("python", "py"),
    "go-redis": _Go("go", "go", build_tools=("go",)),
    "ioredis": _Node("node", "js", build_tools=("npm",), run_tools=("node",)),
    "jedis": _Java("java", "java", build_tools=("mvn",), run_tools=("java",)),
}
_commands = {}


def writer_command(name):
    """The command line that runs client `name`'s writer, built on first use
    (and again only when its sources changed since the last build there)."""
    if name not in _commands:
        client = CLIENTS[name]
        out = os.path.join(CLIENTS_DIR, client.lang)
        os.makedirs(out, exist_ok=True)
        stamp = os.path.join(out, ".built-from")
        digest = _sources_digest(client.lang)
        fresh = False
        if os.path.exists(stamp):
            with open(stamp) as f:
                fresh = f.read() == digest
        tools = {t: _tool(t) for t in client.run_tools + (() if fresh else client.build_tools)}
        if not fresh:
            if os.path.exists(stamp):
                os.remove(stamp)
            client.build(out, tools)
            with open(stamp, "w") as f:
                f.write(digest)
        _commands[name] = client.command(out, tools)
    return _commands[name]


# ---------------------------------------------------------------- the test

def owned_slots(node):
    """The slots `node` serves, by its own CLUSTER NODES line."""
    slots = set()
    for r in myself_line(node)[8:]:
        if r.startswith("["):
            continue
        a, _, b = r.partition("-")
        slots.update(range(int(a), int(b or a) + 1))
    return slots


def dbsize_total(nodes):
    return sum(n("DBSIZE") for n in nodes)


def asking_calls(node):
    """How many ASKING `node` has served (INFO commandstats)."""
    m = re.search(rb"cmdstat_asking:calls=(\d+)", node("INFO", "commandstats"))
    return int(m.group(1)) if m else 0


def read_all(cluster, keys):
    """GET of every key, through the cluster client, 1,000 to a pipeline."""
    got = []
    for s in range(0, len(keys), 1000):
        p = cluster.pipeline()
        for k in keys[s:s + 1000]:
            p.get(k)
        got += p.execute()
    return got


@pytest.mark.parametrize("client", list(CLIENTS))
def test_cluster_client_writes_through_a_reshard(client, tmp_path):
    cmd = writer_command(client)  # (first: a build does not eat into the cluster's time)
    prefix = CLIENTS[client].prefix
    nodes = start_nodes(tmp_path, [TEST_SERVER] * 3)
    writer = None
    out_path, err_path = tmp_path / "writer.out", tmp_path / "writer.err"
    try:
        create_cluster(nodes)
        src, dst, seed = nodes
        src_slots, dst_slots = owned_slots(src), owned_slots(dst)
        # redis-cli moves the source's lowest slots first: HOT's is the last
        # of them, so that it has gathered keys by the time it moves.
        hot_slot = sorted(src_slots)[MOVED_SLOTS - 1]
        hot = tag_for(lambda s: s == hot_slot)
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            # Seeded with the third node only, which takes no part in the move.
            writer = subprocess.Popen(cmd + [seed.addr, str(N), prefix, str(RATE), hot], stdin=subprocess.PIPE,
                                      stdout=out, stderr=err, cwd=str(tmp_path))

        def writer_said():
            return "exit status %s; stdout:\n%s\nstderr:\n%s" % (
                writer.poll(), out_path.read_text(errors="replace")[-3000:],
                err_path.read_text(errors="replace")[-3000:])

        # Some keys first (JVM and cluster discovery take a moment), so that
        # the reshard has keys of its own to MIGRATE as well as new ones to
        # redirect.
        assert wait_for(lambda: writer.poll() is not None or dbsize_total(nodes) >= 1000, 60), writer_said()
        assert writer.poll() is None, writer_said()
        t0 = time.monotonic()
        code, reshard_out = redis_cli("--cluster", "reshard", src.addr, "--cluster-from", src.myid(),
                                      "--cluster-to", dst.myid(), "--cluster-slots", MOVED_SLOTS, "--cluster-yes",
                                      timeout=300)
        reshard_s = time.monotonic() - t0
        assert code == 0, reshard_out[-3000:]
        # The writer was still at it when the last slot moved: it stops only
        # when told to, below.
        assert writer.poll() is None, writer_said()
        writer.stdin.close()
        try:
            writer.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail("the writer did not finish within 120 s of the reshard's end; " + writer_said())
        assert writer.returncode == 0, writer_said()
        lines = out_path.read_text().strip().splitlines()
        assert lines, writer_said()
        report = json.loads(lines[-1])
        print("%s: %s; reshard of %d slots in %.1f s; ASKING on the target: %d" % (
            client, report, MOVED_SLOTS, reshard_s, asking_calls(dst)))
        count = report["keys"]
        want = expected(prefix, hot, count)
        pairs = len(range(0, count, MULTI_EVERY))
        assert count >= N, report
        assert (report["errors"], report["mismatches"], report["writes_ok"], report["multi_ok"]) == \
            (0, 0, len(want) - 2 * pairs, pairs), report
        # The writes met the reshard where it is hardest: keys of the slot
        # being moved, sent to the target under ASKING.
        assert asking_calls(dst) > 0

        # The slots went where they were sent, HOT's with them.
        moved = src_slots - owned_slots(src)
        assert len(moved) == MOVED_SLOTS and hot_slot in moved, (len(moved), myself_line(src))
        assert owned_slots(dst) == dst_slots | moved

        # Every key there with its value, read through the cluster...
        converged(nodes)
        check = RedisCluster(host="127.0.0.1", port=dst.port, decode_responses=True, socket_timeout=30)
        try:
            names = list(want)
            got = dict(zip(names, read_all(check, names)))
        finally:
            check.close()
        wrong = [(k, got[k], v) for k, v in want.items() if got[k] != v]
        assert not wrong, (len(wrong), wrong[:5])
        # ... and nothing else, nor anything twice (a key MIGRATE copied but
        # left behind would count twice), nor in a slot not its node's.
        assert dbsize_total(nodes) == len(want), [n("DBSIZE") for n in nodes]
        for n in nodes:
            assert sum(int(n("CLUSTER", "COUNTKEYSINSLOT", s)) for s in owned_slots(n)) == n("DBSIZE"), n.addr
        assert int(dst("CLUSTER", "COUNTKEYSINSLOT", hot_slot)) > 1000
        code, check_out = cluster_check(src)
        assert code == 0, check_out
        assert "[OK] All nodes agree about slots configuration." in check_out, check_out
        assert "[OK] All %d slots covered." % NUM_SLOTS in check_out, check_out
        assert "[WARNING]" not in check_out and "[ERR]" not in check_out, check_out
    finally:
        if writer is not None and writer.poll() is None:
            writer.kill()
            writer.wait(timeout=10)
        stop_nodes(nodes)
