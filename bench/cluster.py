#!/usr/bin/env python3
"""Redis Cluster side by side with Redis (`make bench-cluster`; issue #39).

    bench/cluster.py [PEREGRINE_BINARY] [--rounds 3] [--requests 2000000] [--p1-requests 300000]
                     [--failover-keys 10000] [--reshard-keys 100000] [--reshard-slots 1000]

A cluster of Debian redis-server 7.0 nodes against a cluster of Peregrine
nodes (`--threads 1`: one worker each, as a Redis node), every node started
fresh with `--cluster-enabled yes --cluster-config-file <tmp>/nodes-<port>.conf
--dir <tmp> --save '' --appendonly no`, on 127.0.0.1, with a free port and an
explicit `--cluster-port` (another free port: port + 10000 can be past 65535
for the ports the kernel hands out), made a cluster by `redis-cli --cluster
create ... --cluster-yes` and waited for until every node says
cluster_state:ok. Each part runs --rounds rounds, the two servers
alternated (Redis first in odd rounds, Peregrine first in even ones), a fresh
cluster for every measurement; the tables give the medians and every value.

  1. Throughput of 3 primaries: redis-benchmark (Debian redis-tools 7.0)
     `--cluster -t set` then `-t get` (two runs, so that each test has its own
     CPU figure; the same workload as `-t set,get` in one), `-r 1000000 -d 16
     -c 50 --threads 2 -q`, at `-P 16` (--requests requests) and `-P 1`
     (--p1-requests): requests/s, and the nodes' CPU per request: user +
     system of every thread of the three node processes
     (benchlib.read_cpu_ticks) over the run, over the requests the nodes
     counted (INFO commandstats, summed; it should equal -n). Requests/s is
     the rate of that count, sampled every 100 ms, between 10% and 90% of
     the run: with --threads, redis-benchmark ends a run on its 250 ms
     progress tick, so its own figure (kept beside it) reads low by up to
     250 ms over the run's length.
     All three nodes are pinned to CPU 0 and redis-benchmark to CPU 1, as
     MEASURING.md does for one server: on a 2-core machine the only other
     choice is to share the load generator's core, which would measure
     redis-benchmark as much as the nodes. Three single-threaded nodes on
     one core cost both servers the same extra context switches; the
     figures are the cluster's throughput on one core, so the comparison
     holds where the absolute numbers (of a 3-core cluster) do not.
  2. Failover: 3 primaries + 3 replicas (`--cluster-replicas 1`,
     `--cluster-node-timeout 2000` on both servers, all six nodes on CPU 0),
     --failover-keys keys written through redis-py's RedisCluster, the
     replicas waited for until their offsets equal their primaries', then
     the primary of slot 0 is killed (SIGKILL) and its replica polled every
     20 ms: the time from the kill until its CLUSTER NODES says
     `myself,master`, and until also another primary says cluster_state:ok
     and lists it as a master. Then every surviving node is waited for to
     say cluster_state:ok and every key is read back through a new
     RedisCluster client: keys missing or with a wrong value are reported.
  3. Resharding: 3 primaries holding --reshard-keys keys (16-byte values,
     written per node with pipelines, routed by CRC16), then `redis-cli
     --cluster reshard <first node> --cluster-from <id of the first>
     --cluster-to <id of the second> --cluster-slots 1000 --cluster-yes`
     (redis-cli's default `--cluster-pipeline 10`: MIGRATE of 10 keys at a
     time), on CPU 1: its wall time, the keys the destination gained, keys
     moved per second; then the mean round trip of a CLUSTER SETSLOT (40
     MIGRATING + STABLE pairs on the third primary: redis-cli sends five
     SETSLOTs per slot moved), `redis-cli --cluster check` and the total key
     count.

On this 2-core machine, with other work running beside it, the figures
compare the two servers in the same run; they are not absolutes. Writes
bench/results/cluster.json and the "Cluster" section of docs/benchmarks.md
(between <!-- cluster:begin --> and <!-- cluster:end -->).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

BEGIN = "<!-- cluster:begin -->"
END = "<!-- cluster:end -->"
VALUE = 16
NODE_TIMEOUT_MS = 2000
POLL_S = 0.02
SETSLOT_PAIRS = 40


# --------------------------------------------------------------------------
# A cluster of nodes
# --------------------------------------------------------------------------

_used_ports: set[int] = set()


def fresh_port() -> int:
    """A free loopback port not handed out before in this run."""
    for _ in range(100):
        p = bl.free_port()
        if p not in _used_ports:
            _used_ports.add(p)
            return p
    raise bl.BenchError("no free port")


@dataclass
class NodeSpec(bl.ServerSpec):
    """A server in cluster mode; the cluster files of all the cluster's nodes
    in one directory."""
    cluster_dir: str = ""
    node_timeout_ms: int | None = None

    def argv(self, port: int) -> list[str]:
        _used_ports.add(port)     # (so that the bus port differs from it)
        a = super().argv(port) + ["--cluster-enabled", "yes", "--cluster-port", str(fresh_port()),
                                  "--cluster-config-file", f"{self.cluster_dir}/nodes-{port}.conf",
                                  "--dir", self.cluster_dir]
        if self.node_timeout_ms is not None:
            a += ["--cluster-node-timeout", str(self.node_timeout_ms)]
        return a


def call(port: int, *args, timeout: float = 5.0):
    c = bl.RespClient(port, timeout=timeout)
    try:
        return c.call(*args)
    finally:
        c.close()


def parse_nodes(raw) -> list[dict]:
    """CLUSTER NODES: id, addr, port, flags (a set), master, link, slots."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 8:
            continue
        addr = f[1].split("@")[0].split(",")[0]
        out.append({"id": f[0], "addr": addr, "port": int(addr.rsplit(":", 1)[1]),
                    "flags": set(f[2].split(",")), "master": f[3], "link": f[7], "slots": f[8:]})
    return out


def parse_info_text(raw) -> dict[str, str]:
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    out = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v.strip()
    return out


class Cluster:
    """`n` fresh nodes of one server on SERVER_CPU (CPU 0), made a cluster by
    redis-cli --cluster create."""

    def __init__(self, kind: str, binary: str, workdir: str, n: int, replicas: int = 0,
                 node_timeout_ms: int | None = None):
        self.kind = kind
        self.dir = tempfile.mkdtemp(prefix=f"{kind}-cluster-", dir=workdir)
        extra = ["--threads", "1"] if kind == "peregrine" else []
        label = "Peregrine" if kind == "peregrine" else "Redis"
        spec = NodeSpec(kind, label, binary, extra, cluster_dir=self.dir, node_timeout_ms=node_timeout_ms)
        self.nodes: list[bl.Server] = []
        try:
            for _ in range(n):
                self.nodes.append(bl.Server(spec, self.dir))
            argv = bl.taskset(bl.CLIENT_CPU) + ["redis-cli", "--cluster", "create"]
            argv += [f"{bl.HOST}:{s.port}" for s in self.nodes]
            if replicas:
                argv += ["--cluster-replicas", str(replicas)]
            argv += ["--cluster-yes"]
            p = subprocess.run(argv, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                raise bl.BenchError(f"{label}: redis-cli --cluster create failed (rc={p.returncode}): "
                                    f"{(p.stdout + p.stderr)[-1500:]}")
            self.wait_ok(self.nodes, 60)
        except BaseException:
            self.stop()
            raise

    @property
    def label(self) -> str:
        return "Peregrine" if self.kind == "peregrine" else "Redis"

    def alive_nodes(self) -> list[bl.Server]:
        return [s for s in self.nodes if s.alive()]

    def wait_ok(self, nodes: list[bl.Server], timeout: float) -> float:
        """Until every node of `nodes` says cluster_state:ok; the seconds waited."""
        t0 = time.monotonic()
        deadline = t0 + timeout
        pending = list(nodes)
        last = {}
        while pending:
            for s in list(pending):
                try:
                    st = parse_info_text(call(s.port, "CLUSTER", "INFO", timeout=2)).get("cluster_state")
                except (OSError, bl.BenchError) as e:
                    st = repr(e)
                last[s.port] = st
                if st == "ok":
                    pending.remove(s)
            if not pending:
                break
            if time.monotonic() > deadline:
                raise bl.BenchError(f"{self.label}: cluster_state not ok after {timeout:.0f} s: {last}; "
                                    f"log of {pending[0].port}: {pending[0].log_tail(800)}")
            time.sleep(0.05)
        return time.monotonic() - t0

    def topology(self, via: bl.Server | None = None) -> list[dict]:
        s = via or self.alive_nodes()[0]
        return parse_nodes(call(s.port, "CLUSTER", "NODES"))

    def by_port(self, port: int) -> bl.Server:
        return next(s for s in self.nodes if s.port == port)

    def primaries(self) -> list[dict]:
        """The primaries with slots, in the order of their first slot."""
        ms = [n for n in self.topology() if "master" in n["flags"] and n["slots"]]
        return sorted(ms, key=lambda n: int(n["slots"][0].split("-")[0]))

    def slot_map(self) -> list[int]:
        """The port of each of the 16384 slots' primary (CLUSTER SLOTS)."""
        owner = [0] * 16384
        for entry in call(self.alive_nodes()[0].port, "CLUSTER", "SLOTS"):
            lo, hi, master = entry[0], entry[1], entry[2]
            for slot in range(lo, hi + 1):
                owner[slot] = master[1]
        if 0 in owner:
            raise bl.BenchError(f"{self.label}: CLUSTER SLOTS does not cover every slot")
        return owner

    def cpu_ticks(self) -> int:
        return sum(s.cpu_ticks()[0] for s in self.alive_nodes())

    def dbsize(self, s: bl.Server) -> int:
        return call(s.port, "DBSIZE")

    def stop(self):
        for s in self.nodes:
            try:
                s.shutdown(timeout=15)
            except Exception:  # noqa: BLE001  (whatever happens, the others are stopped too)
                s.kill()


# --------------------------------------------------------------------------
# 1. Throughput
# --------------------------------------------------------------------------

_Q_RE = re.compile(r"^\s*([A-Za-z_ ]+): ([0-9.]+) requests per second(?:, p50=([0-9.]+) msec)?")


def parse_quiet(text: str) -> dict[str, dict]:
    """redis-benchmark -q's final lines: {test: {rps, p50}}."""
    out = {}
    for line in text.replace("\r", "\n").split("\n"):
        m = _Q_RE.match(line)
        if m:
            out[m.group(1).strip()] = {"rps": float(m.group(2)),
                                       "p50_ms": float(m.group(3)) if m.group(3) else None}
    return out


def commands_served(conns: list[bl.RespClient], cmd: str) -> int:
    total = 0
    for c in conns:
        stats = bl.parse_cmdstats(c.info("commandstats"))
        total += stats.get(cmd, {}).get("calls", 0)
    return total


class Sampler(threading.Thread):
    """The nodes' count of `cmd` (INFO commandstats, summed) every 100 ms
    while redis-benchmark runs."""

    def __init__(self, cl: Cluster, cmd: str):
        super().__init__(daemon=True)
        self.conns = [bl.RespClient(s.port, timeout=10) for s in cl.nodes]
        self.cmd = cmd
        self.stop = threading.Event()
        self.samples: list[tuple[float, int]] = []
        self.base = commands_served(self.conns, cmd)

    def run(self):
        while not self.stop.is_set():
            try:
                self.samples.append((time.monotonic(), commands_served(self.conns, self.cmd) - self.base))
            except (OSError, bl.BenchError):
                pass
            self.stop.wait(0.1)

    def finish(self) -> int:
        self.stop.set()
        self.join(15)
        total = commands_served(self.conns, self.cmd) - self.base
        for c in self.conns:
            c.close()
        return total

    def middle_rate(self, total: int) -> float | None:
        """Requests per second between the samples at 10% and 90% of the
        requests: the rate itself, without redis-benchmark's start and end."""
        a = next(((t, n) for t, n in self.samples if n >= 0.1 * total), None)
        b = next(((t, n) for t, n in reversed(self.samples) if n <= 0.9 * total), None)
        if a is None or b is None or b[0] - a[0] < 0.2:
            return None
        return (b[1] - a[1]) / (b[0] - a[0])


def throughput_run(cl: Cluster, rb: str, test: str, pipeline: int, requests: int) -> dict:
    args = ["--cluster", "-t", test, "-n", str(requests), "-r", "1000000", "-d", str(VALUE),
            "-P", str(pipeline), "-c", "50", "--threads", "2", "-q"]
    sampler = Sampler(cl, test)
    t0 = cl.cpu_ticks()
    w0 = time.monotonic()
    sampler.start()
    try:
        argv, text, rc, _ = bl.run_redis_benchmark(rb, cl.nodes[0].port, args, timeout=180)
    finally:
        wall = time.monotonic() - w0
        ticks = cl.cpu_ticks() - t0
        served = sampler.finish()
    parsed = parse_quiet(text).get(test.upper())
    errors = bl.interesting_lines(text)
    if rc != 0 or parsed is None:
        raise bl.BenchError(f"{cl.label}: redis-benchmark {test} -P {pipeline} failed (rc={rc}): {text[-1000:]}")
    for s in cl.nodes:
        s.check_alive(f"redis-benchmark {test}")
    if served != requests:
        errors.append(f"the nodes counted {served:,} {test.upper()}s of {requests:,}")
    # (The sampler's own INFO calls are not in the count: commandstats of SET/GET only.)
    return {"test": test.upper(), "pipeline": pipeline, "requests": requests, "served": served,
            "rps": sampler.middle_rate(served), "rps_redis_benchmark": parsed["rps"], "p50_ms": parsed["p50_ms"],
            "wall_s": wall, "cpu_s": ticks / bl.CLK_TCK,
            "cpu_us_per_req": ticks / bl.CLK_TCK * 1e6 / (served or requests),
            "errors": errors, "command": bl.cmd_str(argv[argv.index(rb):])}


def measure_throughput(kind: str, binary: str, workdir: str, rb: str, requests: int, p1_requests: int) -> list[dict]:
    cl = Cluster(kind, binary, workdir, 3)
    try:
        out = []
        for pipeline, n in ((16, requests), (1, p1_requests)):
            for test in ("set", "get"):
                r = throughput_run(cl, rb, test, pipeline, n)
                r["server"] = kind
                out.append(r)
        return out
    finally:
        cl.stop()


# --------------------------------------------------------------------------
# 2. Failover
# --------------------------------------------------------------------------

def fo_key(i: int) -> str:
    return f"fo:{i}"


def fo_value(i: int) -> bytes:
    return b"%016d" % i


def redis_cluster_client(ports: list[int]):
    from redis.cluster import ClusterNode, RedisCluster
    return RedisCluster(startup_nodes=[ClusterNode(bl.HOST, p) for p in ports], socket_timeout=5,
                        socket_connect_timeout=2)


def write_keys_rc(ports: list[int], nkeys: int):
    rc = redis_cluster_client(ports)
    try:
        for start in range(0, nkeys, 1000):
            pipe = rc.pipeline(transaction=False)
            for i in range(start, min(nkeys, start + 1000)):
                pipe.set(fo_key(i), fo_value(i))
            res = pipe.execute()
            if not all(res):
                raise bl.BenchError("a SET through RedisCluster did not answer OK")
    finally:
        rc.close()


def read_keys_rc(ports: list[int], nkeys: int, timeout: float = 30) -> tuple[int, int, int, list[str]]:
    """Every key read back through a fresh RedisCluster: (found with the right
    value, missing, wrong value, errors seen meanwhile and retried)."""
    from redis.exceptions import RedisError
    deadline = time.monotonic() + timeout
    errors: list[str] = []
    while True:
        rc = None
        try:
            rc = redis_cluster_client(ports)
            found = missing = wrong = 0
            for start in range(0, nkeys, 1000):
                idx = range(start, min(nkeys, start + 1000))
                pipe = rc.pipeline(transaction=False)
                for i in idx:
                    pipe.get(fo_key(i))
                for i, v in zip(idx, pipe.execute()):
                    if v is None:
                        missing += 1
                    elif v != fo_value(i):
                        wrong += 1
                    else:
                        found += 1
            return found, missing, wrong, errors
        except RedisError as e:
            errors.append(f"{type(e).__name__}: {e}"[:200])
            if time.monotonic() > deadline:
                raise bl.BenchError(f"cannot read the keys back after {timeout:.0f} s: {errors[-3:]}")
            time.sleep(0.2)
        finally:
            if rc is not None:
                rc.close()


def wait_replicas_synced(cl: Cluster, replicas: int, timeout: float = 30) -> float:
    """Until `replicas` nodes say (in their own CLUSTER NODES) that they are
    replicas, with master_link_status:up and an offset equal to their
    primary's (writes stopped); the seconds waited."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    while True:
        behind = []
        nrep = 0
        for s in cl.alive_nodes():
            try:
                me = next(n for n in cl.topology(s) if "myself" in n["flags"])
                if "slave" not in me["flags"]:
                    continue
                nrep += 1
                primary = next(n for n in cl.topology(s) if n["id"] == me["master"])
                rinfo = parse_info_text(call(s.port, "INFO", "replication"))
                pinfo = parse_info_text(call(primary["port"], "INFO", "replication"))
            except (OSError, bl.BenchError, StopIteration) as e:
                behind.append(f"{s.port}: {e!r}")
                continue
            if rinfo.get("master_link_status") != "up" or \
                    rinfo.get("slave_repl_offset") != pinfo.get("master_repl_offset"):
                behind.append(f"{s.port}: link {rinfo.get('master_link_status')}, offset "
                              f"{rinfo.get('slave_repl_offset')} of {pinfo.get('master_repl_offset')}")
        if not behind and nrep == replicas:
            return time.monotonic() - t0
        if time.monotonic() > deadline:
            raise bl.BenchError(f"{cl.label}: {nrep} of {replicas} replicas, not all in sync after "
                                f"{timeout:.0f} s: {behind}")
        time.sleep(0.05)


def measure_failover(kind: str, binary: str, workdir: str, nkeys: int, timeout: float = 30) -> dict:
    cl = Cluster(kind, binary, workdir, 6, replicas=1, node_timeout_ms=NODE_TIMEOUT_MS)
    conns: list[bl.RespClient] = []
    try:
        prim = cl.primaries()
        if len(prim) != 3:
            raise bl.BenchError(f"{cl.label}: {len(prim)} primaries with slots, not 3")
        sync_wait_s = wait_replicas_synced(cl, 3)
        write_keys_rc([p["port"] for p in prim], nkeys)
        wait_replicas_synced(cl, 3)
        victim = prim[0]
        topo = cl.topology()
        reps = [n for n in topo if n["master"] == victim["id"] and "slave" in n["flags"]]
        if len(reps) != 1:
            raise bl.BenchError(f"{cl.label}: the primary {victim['addr']} has {len(reps)} replicas")
        replica, other = reps[0], prim[1]
        victim_srv = cl.by_port(victim["port"])
        victim_keys = cl.dbsize(victim_srv)
        replica_keys = cl.dbsize(cl.by_port(replica["port"]))
        rconn = bl.RespClient(replica["port"], timeout=2)
        oconn = bl.RespClient(other["port"], timeout=2)
        conns += [rconn, oconn]
        t0 = time.monotonic()
        victim_srv.proc.kill()          # kill -9
        promoted = done = None
        last_state = ""
        deadline = t0 + timeout
        poll_errors: list[str] = []
        while time.monotonic() < deadline:
            now = time.monotonic()
            try:
                if promoted is None:
                    me = next((n for n in parse_nodes(rconn.call("CLUSTER", "NODES")) if "myself" in n["flags"]),
                              None)
                    if me and "master" in me["flags"]:
                        promoted = now - t0
                if promoted is not None:
                    state = parse_info_text(oconn.call("CLUSTER", "INFO")).get("cluster_state")
                    seen = next((n for n in parse_nodes(oconn.call("CLUSTER", "NODES")) if n["id"] == replica["id"]),
                                None)
                    last_state = f"{state}, replica flags {sorted(seen['flags']) if seen else None}"
                    if state == "ok" and seen and "master" in seen["flags"]:
                        done = time.monotonic() - t0
                        break
            except (OSError, bl.BenchError) as e:
                # (A slow answer: a new connection, the poll goes on.)
                poll_errors.append(f"{time.monotonic() - t0:.2f} s: {e!r}"[:200])
                for c in (rconn, oconn):
                    c.close()
                conns.clear()
                rconn = bl.RespClient(replica["port"], timeout=2)
                oconn = bl.RespClient(other["port"], timeout=2)
                conns += [rconn, oconn]
            time.sleep(POLL_S)
        victim_srv.proc.wait(10)
        out = {"server": kind, "keys": nkeys, "victim_keys": victim_keys, "node_timeout_ms": NODE_TIMEOUT_MS,
               "replica_keys": replica_keys,
               "replicas_ready_s": sync_wait_s, "promoted_s": promoted, "failover_s": done, "poll_errors": poll_errors}
        if done is None:
            out["error"] = (f"no failover within {timeout:.0f} s of the kill: replica "
                            f"{'promoted at %.2f s' % promoted if promoted is not None else 'not promoted'}"
                            f"{'; other primary: ' + last_state if last_state else ''}; replica log: "
                            f"{cl.by_port(replica['port']).log_tail(600)}")
            return out
        survivors = cl.alive_nodes()
        out["all_ok_s"] = done + cl.wait_ok(survivors, 20)
        out["promoted_keys"] = cl.dbsize(cl.by_port(replica["port"]))
        ports = [n["port"] for n in cl.primaries()]
        found, missing, wrong, errs = read_keys_rc(ports, nkeys)
        out.update(found=found, lost=missing, wrong=wrong, read_retries=errs)
        return out
    finally:
        for c in conns:
            c.close()
        cl.stop()


# --------------------------------------------------------------------------
# 3. Resharding
# --------------------------------------------------------------------------

def load_by_slot(cl: Cluster, nkeys: int):
    """SET key:000000000000 .. with 16-byte values, each key sent to its
    slot's primary, 1000 to a round trip."""
    from redis.crc import key_slot
    owner = cl.slot_map()
    per: dict[int, list[int]] = {}
    for i in range(nkeys):
        per.setdefault(owner[key_slot(bl.key_name(i))], []).append(i)
    vpart = b"$%d\r\n%s\r\n" % (VALUE, b"v" * VALUE)
    for port, idx in per.items():
        c = bl.RespClient(port, timeout=60)
        try:
            for start in range(0, len(idx), 1000):
                chunk = idx[start:start + 1000]
                payload = b"".join(b"*3\r\n$3\r\nSET\r\n$16\r\n" + bl.key_name(i) + b"\r\n" + vpart for i in chunk)
                if c.pipeline_raw(payload, len(chunk), expect=b"+OK\r\n"):
                    raise bl.BenchError(f"{cl.label}: a SET was not answered +OK while loading")
        finally:
            c.close()


def measure_reshard(kind: str, binary: str, workdir: str, nkeys: int, slots: int) -> dict:
    cl = Cluster(kind, binary, workdir, 3)
    try:
        load_by_slot(cl, nkeys)
        prim = cl.primaries()
        src, dst = prim[0], prim[1]
        src_srv, dst_srv = cl.by_port(src["port"]), cl.by_port(dst["port"])
        before = {s.port: cl.dbsize(s) for s in cl.nodes}
        if sum(before.values()) != nkeys:
            raise bl.BenchError(f"{cl.label}: {sum(before.values())} keys after loading {nkeys}")
        argv = bl.taskset(bl.CLIENT_CPU) + ["redis-cli", "--cluster", "reshard", f"{bl.HOST}:{src['port']}",
                                            "--cluster-from", src["id"], "--cluster-to", dst["id"],
                                            "--cluster-slots", str(slots), "--cluster-yes"]
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise bl.BenchError(f"{cl.label}: redis-cli --cluster reshard did not finish in 180 s")
        wall = time.monotonic() - t0
        if p.returncode != 0:
            raise bl.BenchError(f"{cl.label}: redis-cli --cluster reshard failed (rc={p.returncode}): "
                                f"{(p.stdout + p.stderr)[-1500:]}")
        after = {s.port: cl.dbsize(s) for s in cl.nodes}
        moved = after[dst_srv.port] - before[dst_srv.port]
        # What one CLUSTER SETSLOT costs (redis-cli sends five per slot:
        # IMPORTING, MIGRATING, then NODE to each primary): a MIGRATING and a
        # STABLE on the third primary, which the reshard did not touch.
        third = prim[2]
        lo = int(third["slots"][0].split("-")[0])
        c = bl.RespClient(third["port"], timeout=30)
        try:
            t1 = time.monotonic()
            for slot in range(lo, lo + SETSLOT_PAIRS):
                c.call("CLUSTER", "SETSLOT", slot, "MIGRATING", src["id"])
                c.call("CLUSTER", "SETSLOT", slot, "STABLE")
            setslot_ms = (time.monotonic() - t1) / (2 * SETSLOT_PAIRS) * 1000
        finally:
            c.close()
        chk = subprocess.run(["redis-cli", "--cluster", "check", f"{bl.HOST}:{src['port']}"], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
        chk_text = re.sub(r"\x1b\[[0-9;]*m", "", chk.stdout + chk.stderr)
        problems = [l.strip() for l in chk_text.splitlines() if l.startswith("[ERR]") or l.startswith("[WARNING]")]
        return {"server": kind, "keys": nkeys, "slots": slots, "wall_s": wall, "moved": moved,
                "left_on_source": after[src_srv.port],
                "source_lost": before[src_srv.port] - after[src_srv.port] - moved,
                "keys_after": sum(after.values()), "keys_per_s": moved / wall if wall > 0 else None,
                "setslot_ms": setslot_ms,
                "check_rc": chk.returncode, "check_problems": problems,
                "command": bl.cmd_str(argv[argv.index("redis-cli"):])}
    finally:
        cl.stop()


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

def fmt_rps(x):
    if x is None:
        return "—"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}K"


def each(vals, spec):
    return ", ".join(bl.num(v, spec) for v in vals)


def docs_section(res: dict, args, sha: str, versions: dict, machine: dict, command: str) -> str:
    lines = [BEGIN, "## Cluster (issue #39)", "",
             f"Measured {time.strftime('%Y-%m-%d')} by `{command}` (`make bench-cluster`; binary {sha}, "
             f"{args.rounds} round{'s' if args.rounds != 1 else ''}, Redis and Peregrine alternated, a fresh cluster for every measurement). "
             f"Machine: {machine.get('nproc')} CPUs ({machine.get('cpu', '?')}), kernel {machine.get('kernel')}, "
             f"{machine.get('memory', '?')}; shared, with other work running beside: the figures compare the two "
             "clusters in one run, they are not absolutes. "
             f"Redis: `{versions['redis']}` (Debian); Peregrine: `{versions['peregrine']}`, `--threads 1` per node; "
             f"load generator `{versions['redis-benchmark']}` (Debian redis-tools). "
             "Every node: `--cluster-enabled yes --cluster-config-file <tmp>/nodes-<port>.conf --dir <tmp> --save '' "
             "--appendonly no` and an explicit `--cluster-port`, on 127.0.0.1, the cluster made by "
             "`redis-cli --cluster create`. Medians, then every round's value. Raw: `bench/results/cluster.json`.", ""]
    # 1. throughput
    tp = res["throughput"]
    lines += ["### Throughput of 3 primaries", "",
              "All three nodes pinned to CPU 0, redis-benchmark to CPU 1: `redis-benchmark --cluster -t set|get "
              f"-n N -r 1000000 -d 16 -P 16|1 -c 50 --threads 2 -q` (N = {args.requests:,} at P16, "
              f"{args.p1_requests:,} at P1; SET then GET, each its own run). CPU: user + system of every thread "
              "of the three nodes over the run, per request the nodes counted. Requests/s: the rate of the "
              "nodes' own count (INFO commandstats, sampled every 100 ms) between 10% and 90% of the run; "
              "redis-benchmark's own figure (last column) ends on its 250 ms progress tick when it runs "
              "threads, so a short run reads low by up to 250 ms. With three nodes on one core the "
              "throughput is the cluster's on one core; at P16 the load generator's one core limits both.", "",
              "| test | Peregrine req/s | Redis req/s | ratio | Peregrine CPU µs/req | Redis CPU µs/req | CPU ratio "
              "| Peregrine req/s, each round | Redis req/s, each round | redis-benchmark's req/s, Peregrine / Redis |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for pipeline in (16, 1):
        for test in ("SET", "GET"):
            p = [r for r in tp if r["server"] == "peregrine" and r["test"] == test and r["pipeline"] == pipeline]
            q = [r for r in tp if r["server"] == "redis" and r["test"] == test and r["pipeline"] == pipeline]
            if not p or not q:
                continue
            prps, qrps = bl.median([r["rps"] for r in p]), bl.median([r["rps"] for r in q])
            pcpu, qcpu = bl.median([r["cpu_us_per_req"] for r in p]), bl.median([r["cpu_us_per_req"] for r in q])
            prb = bl.median([r["rps_redis_benchmark"] for r in p])
            qrb = bl.median([r["rps_redis_benchmark"] for r in q])
            lines.append(f"| {test} P{pipeline} | {fmt_rps(prps)} | {fmt_rps(qrps)} | {bl.ratio(prps, qrps)} | "
                         f"{bl.num(pcpu, '.3f')} | {bl.num(qcpu, '.3f')} | {bl.ratio(pcpu, qcpu)} | "
                         f"{', '.join(fmt_rps(r['rps']) for r in p)} | {', '.join(fmt_rps(r['rps']) for r in q)} | "
                         f"{fmt_rps(prb)} / {fmt_rps(qrb)} ({bl.ratio(prb, qrb)}) |")
    errs = [f"{r['server']} {r['test']} P{r['pipeline']}: {e}" for r in tp for e in r.get("errors", [])]
    errs += [f"{f['server']} round {f['round']}: {f['error']}" for f in res.get("failures", []) if f["part"] == "throughput"]
    if errs:
        lines += ["", "Errors seen: " + "; ".join(errs[:10])]
    # 2. failover
    lines += ["", "### Failover", "",
              f"3 primaries + 3 replicas (`--cluster-replicas 1`, `--cluster-node-timeout {NODE_TIMEOUT_MS}`), all "
              f"on CPU 0; {args.failover_keys:,} keys written through redis-py's RedisCluster and the replicas in "
              "sync, then the primary of slot 0 killed with SIGKILL and its replica polled every 20 ms. "
              "*Promoted*: from the kill until the replica's CLUSTER NODES says `myself,master`; *failover*: until "
              "also another primary says cluster_state:ok and lists the replica as a master. Then every key read "
              "back through a fresh RedisCluster client.", "",
              "| server | promoted | failover | failover, each round | keys read back (lost) |",
              "|---|---|---|---|---|"]
    fo = res["failover"]
    med = {}
    for kind, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
        rs = [r for r in fo if r["server"] == kind]
        if not rs:
            continue
        med[kind] = bl.median([r.get("failover_s") for r in rs])
        back = ", ".join(f"{r['found']:,}/{r['keys']:,} ({r['lost'] + r['wrong']})" if "found" in r else "—" for r in rs)
        lines.append(f"| {label} | {bl.num(bl.median([r.get('promoted_s') for r in rs]), '.2f')} s | "
                     f"{bl.num(med[kind], '.2f')} s | {each([r.get('failover_s') for r in rs], '.2f')} s | {back} |")
    lines += ["", f"Failover time, Peregrine / Redis: {bl.ratio(med.get('peregrine'), med.get('redis'))} "
              "(issue #39's target: no slower than Redis with the same node timeout, so <= 1)."]
    errs = [f"{r['server']}: {r['error']}" for r in fo if r.get("error")]
    errs += [f"{f['server']} round {f['round']}: {f['error']}" for f in res.get("failures", []) if f["part"] == "failover"]
    if errs:
        lines += ["", "Failures: " + "; ".join(e.replace("\n", " ")[:400] for e in errs)]
    # 3. reshard
    rsd = res["reshard"]
    lines += ["", "### Resharding", "",
              f"3 primaries holding {args.reshard_keys:,} keys of {VALUE} bytes; `redis-cli --cluster reshard "
              f"<first> --cluster-from <first's id> --cluster-to <second's id> --cluster-slots {args.reshard_slots} "
              "--cluster-yes` (MIGRATE 10 keys at a time, redis-cli's default) on CPU 1, the nodes on CPU 0. "
              "Keys moved: what the destination gained. redis-cli sends five CLUSTER SETSLOTs per slot "
              "(IMPORTING, MIGRATING, then NODE to each primary) besides GETKEYSINSLOT and MIGRATE; *SETSLOT*: "
              f"the mean round trip of {SETSLOT_PAIRS} SETSLOT MIGRATING + SETSLOT STABLE pairs on the third primary "
              "after the reshard.", "",
              "| server | wall time | keys moved | keys/s | wall time, each round | SETSLOT | `--cluster check` |",
              "|---|---|---|---|---|---|---|"]
    rmed = {}
    for kind, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
        rs = [r for r in rsd if r["server"] == kind]
        if not rs:
            continue
        rmed[kind] = bl.median([r["wall_s"] for r in rs])
        checks = "clean" if all(r["check_rc"] == 0 and not r["check_problems"] for r in rs) else \
            "; ".join(sorted({p for r in rs for p in r["check_problems"]}) or {"rc != 0"})
        lines.append(f"| {label} | {bl.num(rmed[kind], '.2f')} s | {bl.num(bl.median([r['moved'] for r in rs]), ',.0f')} | "
                     f"{bl.num(bl.median([r['keys_per_s'] for r in rs]), ',.0f')} | {each([r['wall_s'] for r in rs], '.2f')} s "
                     f"| {bl.num(bl.median([r['setslot_ms'] for r in rs]), '.2f')} ms | {checks} |")
    lines += ["", f"Resharding time, Peregrine / Redis: {bl.ratio(rmed.get('peregrine'), rmed.get('redis'))}."]
    errs = [f"{f['server']} round {f['round']}: {f['error']}" for f in res.get("failures", []) if f["part"] == "reshard"]
    lost = [f"{r['server']}: {r['source_lost']} keys left the source without reaching the destination"
            for r in rsd if r.get("source_lost")]
    if errs or lost:
        lines += ["", "Failures: " + "; ".join(e.replace("\n", " ")[:400] for e in errs + lost)]
    lines += ["", END]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=2_000_000, help="requests of each P16 run")
    ap.add_argument("--p1-requests", type=int, default=300_000, help="requests of each P1 run")
    ap.add_argument("--failover-keys", type=int, default=10_000)
    ap.add_argument("--reshard-keys", type=int, default=100_000)
    ap.add_argument("--reshard-slots", type=int, default=1000)
    ap.add_argument("--only", default="throughput,failover,reshard", help="comma-separated parts")
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "cluster.json"))
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = ap.parse_args(argv)
    pbin, (rb, _, _) = bl.find_binaries(args.peregrine, [args.redis_benchmark, "redis-cli", "redis-server"],
                                        "redis-server redis-tools")
    try:
        import redis  # noqa: F401  (redis-py: RedisCluster, redis.crc)
    except ImportError:
        raise bl.BenchError("redis-py is missing: run it with .venv/bin/python (make pydeps)")
    machine = bl.machine_info()   # (before pinning: nproc counts the CPUs this process may use)
    if bl.have_cpus(bl.CLIENT_CPU):
        os.sched_setaffinity(0, bl.cpu_set(bl.CLIENT_CPU))
    parts = set(args.only.split(","))
    workdir = tempfile.mkdtemp(prefix="peregrine-cluster-")
    binary, sha = bl.snapshot_binary(pbin, workdir)
    binaries = {"redis": "redis-server", "peregrine": binary}
    versions = {"redis": bl.version_of(["redis-server", "--version"]),
                "peregrine": bl.version_of([binary, "--version"]),
                "redis-benchmark": bl.version_of([rb, "--version"])}
    res: dict = {"throughput": [], "failover": [], "reshard": [], "failures": []}
    started = time.monotonic()

    def attempt(part: str, kind: str, rnd: int, fn):
        try:
            return fn()
        except bl.BenchError as e:
            print(f"  {kind} {part} round {rnd}: FAILED: {e}", flush=True)
            res["failures"].append({"part": part, "server": kind, "round": rnd, "error": str(e)})
            return None

    for rnd in range(1, args.rounds + 1):
        order = ["redis", "peregrine"] if rnd % 2 else ["peregrine", "redis"]
        print(f"round {rnd} ({' then '.join(order)})", flush=True)
        if "throughput" in parts:
            for kind in order:
                rs = attempt("throughput", kind, rnd, lambda: measure_throughput(
                    kind, binaries[kind], workdir, rb, args.requests, args.p1_requests))
                for r in rs or []:
                    r["round"] = rnd
                    res["throughput"].append(r)
                    print(f"  {kind:9s} {r['test']} P{r['pipeline']:<2d} {bl.num(r['rps'], '>10,.0f')} req/s "
                          f"(redis-benchmark: {r['rps_redis_benchmark']:,.0f})  "
                          f"{r['cpu_us_per_req']:.3f} µs CPU/req  (served {r['served']:,})"
                          f"{'  errors: ' + '; '.join(r['errors']) if r['errors'] else ''}", flush=True)
        if "failover" in parts:
            for kind in order:
                r = attempt("failover", kind, rnd, lambda: measure_failover(
                    kind, binaries[kind], workdir, args.failover_keys))
                if r:
                    r["round"] = rnd
                    res["failover"].append(r)
                    print(f"  {kind:9s} failover: promoted {bl.num(r['promoted_s'], '.3f')} s, cluster ok "
                          f"{bl.num(r['failover_s'], '.3f')} s, keys {r.get('found', '—')}/{r['keys']} "
                          f"(lost {r.get('lost', '—')}, wrong {r.get('wrong', '—')})"
                          f"{'  ERROR: ' + r['error'] if r.get('error') else ''}", flush=True)
        if "reshard" in parts:
            for kind in order:
                r = attempt("reshard", kind, rnd, lambda: measure_reshard(
                    kind, binaries[kind], workdir, args.reshard_keys, args.reshard_slots))
                if r:
                    r["round"] = rnd
                    res["reshard"].append(r)
                    print(f"  {kind:9s} reshard {r['slots']} slots: {r['wall_s']:.2f} s, {r['moved']:,} keys moved "
                          f"({bl.num(r['keys_per_s'], ',.0f')}/s), SETSLOT {r['setslot_ms']:.2f} ms, "
                          f"{r['keys_after']:,} keys after, check rc "
                          f"{r['check_rc']}{' ' + '; '.join(r['check_problems']) if r['check_problems'] else ''}",
                          flush=True)
    elapsed = time.monotonic() - started
    if res["failures"]:
        print(f"servers' logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)   # (the binary's copy and the nodes' files)
    print(f"{elapsed / 60:.1f} minutes")
    command = " ".join(["bench/cluster.py", bl.display_path(args.peregrine)] +
                       [a for a in (argv if argv is not None else sys.argv[1:]) if a != args.peregrine])
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "versions": versions, "rounds": args.rounds,
                   "requests": args.requests, "p1_requests": args.p1_requests, "failover_keys": args.failover_keys,
                   "reshard_keys": args.reshard_keys, "reshard_slots": args.reshard_slots,
                   "node_timeout_ms": NODE_TIMEOUT_MS, "server_cpu": bl.SERVER_CPU, "client_cpu": bl.CLIENT_CPU,
                   "command": " ".join(sys.argv), "minutes": elapsed / 60, "results": res, "machine": machine},
                  f, indent=1)
    print(f"raw results: {args.json}")
    if not args.no_docs and parts == {"throughput", "failover", "reshard"}:
        bl.put_docs_section(BEGIN, END, docs_section(res, args, sha, versions, machine, command))
    return 1 if res["failures"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except bl.BenchError as e:
        print(f"cluster.py: {e}", file=sys.stderr)
        sys.exit(2)
