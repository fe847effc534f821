#!/usr/bin/env python3
"""Scaling over many cores, side by side (issue #37): Peregrine `--threads 1`
and `--threads S`, Redis (one process), a Redis Cluster of S processes and,
when present, Valkey with `io-threads S`; each server pinned to the first S
cores, the load generator to the others.

    bench/scale.py bundle DIR [PEREGRINE_BINARY]
    bench/scale.py run --bundle DIR [--server-cores 8] [--client-threads 8] ...

`bundle` copies the binaries it finds (peregrine, redis-server, redis-cli,
redis-benchmark, and memtier_benchmark and valkey-server when installed)
into DIR/bin, with every shared library `ldd` lists and the dynamic loader
into DIR/lib, so that `run` works on a machine with nothing installed (it
starts each binary as `lib/ld-linux-x86-64.so.2 --library-path lib bin/X`).
`run --bundle system` uses the installed binaries instead.

Each server starts fresh, gets KEYS keys of SIZE bytes loaded, then GET and
SET at pipeline 1 and PIPELINE, over random keys, for SECS seconds each, by
memtier_benchmark (THREADS x CONNS connections; --cluster-mode for the
cluster) or, without memtier in the bundle, redis-benchmark (--threads
THREADS, THREADS x CONNS connections; --cluster). Reported per (server,
workload): requests/s, p50 and p99 latency (memtier), and the server's CPU
per request (user + system of all its processes' threads). Writes JSON
(--json) and prints a table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# (taskset: the other device scripts pin with it, and a bare machine may lack it.)
TOOLS = ["peregrine", "redis-server", "redis-cli", "redis-benchmark", "memtier_benchmark", "valkey-server", "perf",
         "taskset"]


# --- bundle -----------------------------------------------------------------

def libraries_of(binary: str) -> list[str]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+ld-linux\S*)", line)
        if m:
            libs.append(m.group(1))
    return libs


def make_bundle(dest: str, peregrine: str, extra: list[str], without: list[str]) -> None:
    os.makedirs(os.path.join(dest, "bin"), exist_ok=True)
    os.makedirs(os.path.join(dest, "lib"), exist_ok=True)
    found = []
    named = dict(e.split("=", 1) for e in extra)  # --tool NAME=PATH: a binary not on the PATH
    for tool in (t for t in TOOLS if t not in without):
        path = peregrine if tool == "peregrine" else named.get(tool) or shutil.which(tool)
        if path is None or not os.path.exists(path):
            continue
        shutil.copy2(os.path.realpath(path), os.path.join(dest, "bin", tool))
        if shutil.which("strip"):  # (debug info off, symbols kept for perf: the bundle travels)
            subprocess.run(["strip", "--strip-debug", os.path.join(dest, "bin", tool)], check=False)
        for lib in libraries_of(path):
            name = "ld-linux-x86-64.so.2" if "ld-linux" in os.path.basename(lib) else os.path.basename(lib)
            target = os.path.join(dest, "lib", name)
            if not os.path.exists(target):
                shutil.copy2(os.path.realpath(lib), target)
        found.append(tool)
    print(f"bundle {dest}: {', '.join(found)}")
    for need in ("peregrine", "redis-server", "redis-cli"):
        if need not in found:
            raise SystemExit(f"{need} not found: the bundle cannot run")


# --- run --------------------------------------------------------------------

class Runner:
    def __init__(self, bundle: str):
        self.bundle = bundle

    def has(self, tool: str) -> bool:
        if self.bundle == "system":
            return shutil.which(tool) is not None
        return os.path.exists(os.path.join(self.bundle, "bin", tool))

    def argv(self, tool: str, args: list[str]) -> list[str]:
        if self.bundle == "system":
            return [shutil.which(tool) or tool] + args
        lib = os.path.join(self.bundle, "lib")
        return [os.path.join(lib, "ld-linux-x86-64.so.2"), "--library-path", lib,
                os.path.join(self.bundle, "bin", tool)] + args


def pinned_set(cores: str) -> set[int]:
    cpus = set()
    for part in cores.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def pinned(cores: str):
    """A preexec_fn that pins the child to cores ("0-7", "3", "8-15"): what taskset -c does,
    without needing taskset on a bare machine."""
    cpus = pinned_set(cores)
    return lambda: os.sched_setaffinity(0, cpus)


def free_port() -> int:
    """A free port whose cluster-bus port (+10000) is free too: the kernel's ephemeral
    ports go past 55535, where the bus port would not exist."""
    import random
    while True:
        port = random.randrange(20000, 45000)
        try:
            for p in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue


def wait_ready(port: int, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"no server on port {port} after {timeout} s")


def thread_cpu(pids: list[int]) -> dict[str, float]:
    """user + system seconds of every thread of these processes, by pid/tid."""
    out = {}
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                out[f"{pid}/{tid}"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except OSError:
                pass
    return out


def cpu_seconds(pids: list[int]) -> float:
    return sum(thread_cpu(pids).values())


class Servers:
    """One server under test: one process, or a cluster of them."""

    def __init__(self, r: Runner, kind: str, cores: str, n: int, workdir: str):
        # KIND+name=value+...: the server with `--name value` added (variants side by side).
        kind, *extras = kind.split("+")
        extra = [x for e in extras for x in ("--" + e.split("=", 1)[0], e.split("=", 1)[1])]
        self.procs, self.ports, self.cluster = [], [], kind == "rcluster"
        # "apart": S processes of one worker each, one per core, each with its own load
        # generator and its share of the keys (no hops: the ceiling of S workers here).
        self.apart = kind == "apart"
        count = n if self.cluster or self.apart else 1
        for i in range(count):
            port = free_port()
            d = tempfile.mkdtemp(prefix=f"{kind}-{i}-", dir=workdir)
            if kind.startswith("peregrine"):
                args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                        "--dir", d, "--threads", kind[len("peregrine"):] if kind[-1].isdigit() else str(n)]
                tool = "peregrine"
            elif self.apart:
                args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                        "--dir", d, "--threads", "1"]
                tool = "peregrine"
            else:
                tool = "valkey-server" if kind == "valkey" else "redis-server"
                args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                        "--dir", d, "--protected-mode", "no"]
                if kind == "valkey":
                    args += ["--io-threads", str(n)]
                if self.cluster:
                    args += ["--cluster-enabled", "yes", "--cluster-config-file", os.path.join(d, "nodes.conf")]
            # A cluster: one process per core; otherwise every server core.
            pin = str(i % (os.cpu_count() or 1)) if self.cluster or self.apart else cores
            self.procs.append(subprocess.Popen(r.argv(tool, args + extra), preexec_fn=pinned(pin),
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.ports.append(port)
        try:
            for p in self.ports:
                wait_ready(p)
        except Exception:
            self.stop()
            raise
        if self.cluster:
            subprocess.run(r.argv("redis-cli", ["--cluster", "create"] + [f"127.0.0.1:{p}" for p in self.ports] +
                                  ["--cluster-replicas", "0", "--cluster-yes"]),
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            end = time.monotonic() + 30
            while time.monotonic() < end:
                out = subprocess.run(r.argv("redis-cli", ["-p", str(self.ports[0]), "cluster", "info"]),
                                     capture_output=True, text=True).stdout
                if "cluster_state:ok" in out:
                    break
                time.sleep(0.2)

    def stop(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait(10)


def load_generator(r: Runner, a, ccores: str, port: int, cluster: bool, cmd: str, pipeline: int,
                   secs: int, prefill: bool = False) -> dict:
    conns = a.client_threads * a.conns
    if r.has("memtier_benchmark"):
        fd, out = tempfile.mkstemp(suffix=".json", prefix="memtier-")
        os.close(fd)
        args = ["-s", "127.0.0.1", "-p", str(port), "--hide-histogram", "--json-out-file", out,
                "-t", str(a.client_threads), "-c", str(a.conns), "--pipeline", str(pipeline),
                "--key-maximum", str(a.keys), "-d", str(a.size), "--distinct-client-seed"]
        if cluster:
            args.append("--cluster-mode")
        if prefill:
            args += ["--ratio", "1:0", "--key-pattern", "P:P", "--requests", "allkeys", "-t", "1", "-c", "1"]
        else:
            args += ["--ratio", "0:1" if cmd == "get" else "1:0", "--key-pattern", "R:R", "--test-time", str(secs)]
        subprocess.run(r.argv("memtier_benchmark", args), preexec_fn=pinned(ccores), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=secs + 600)
        t = json.load(open(out))["ALL STATS"]["Totals"]
        pct = t.get("Percentile Latencies", {})
        # (memtier's own Ops/sec divides by a duration that some versions get wrong, 1 s
        # for a 2 s run: the count over the test's time is used instead.)
        return {"rps": t["Count"] / secs, "p50_ms": pct.get("p50.00"), "p99_ms": pct.get("p99.00"),
                "p999_ms": pct.get("p99.90"),
                "requests": t["Count"]}
    n = a.keys if prefill else int(a.expect_rps * secs)
    args = ["-h", "127.0.0.1", "-p", str(port), "-c", str(conns), "--threads", str(a.client_threads),
            "-P", str(pipeline), "-n", str(n), "-r", str(a.keys), "-d", str(a.size), "-t", cmd, "-q"]
    if cluster:
        args.append("--cluster")
    if prefill:
        args = ["-h", "127.0.0.1", "-p", str(port), "-c", "8", "-P", "64", "-n", str(a.keys),
                "-r", str(a.keys), "-d", str(a.size), "-t", "set", "-q"] + (["--cluster"] if cluster else [])
    p = subprocess.run(r.argv("redis-benchmark", args), preexec_fn=pinned(ccores), capture_output=True,
                       text=True, timeout=secs * 20 + 600)
    m = re.findall(r"([\d.]+) requests per second(?:, p50=([\d.]+) msec)?", p.stdout + p.stderr)
    if not m:
        raise RuntimeError(f"redis-benchmark: {(p.stdout + p.stderr)[-500:]}")
    rps, p50 = m[-1]
    return {"rps": float(rps), "p50_ms": float(p50) if p50 else None, "p99_ms": None, "requests": n}


def load_apart(r: Runner, a, ccores: list[int], ports: list[int], cmd: str, pipeline: int, secs: int,
               prefill: bool = False) -> dict:
    """One memtier (one thread, --conns connections) per server of an "apart" set, each
    pinned to a core of its own, over that server's share of the keys; run together."""
    runs = []
    share = a.keys // len(ports)
    for i, port in enumerate(ports):
        fd, out = tempfile.mkstemp(suffix=".json", prefix="memtier-")
        os.close(fd)
        args = ["-s", "127.0.0.1", "-p", str(port), "--hide-histogram", "--json-out-file", out, "-t", "1",
                "-c", "1" if prefill else str(a.conns), "--pipeline", str(pipeline), "--key-minimum", "1",
                "--key-maximum", str(share), "-d", str(a.size), "--distinct-client-seed"]
        if prefill:
            args += ["--ratio", "1:0", "--key-pattern", "P:P", "--requests", "allkeys"]
        else:
            args += ["--ratio", "0:1" if cmd == "get" else "1:0", "--key-pattern", "R:R", "--test-time", str(secs)]
        runs.append((subprocess.Popen(r.argv("memtier_benchmark", args), preexec_fn=pinned(str(ccores[i % len(ccores)])),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out))
    total, p50s, p99s, p999s = 0, [], [], []
    for proc, out in runs:
        proc.wait(secs + 600)
        t = json.load(open(out))["ALL STATS"]["Totals"]
        pct = t.get("Percentile Latencies", {})
        total += t["Count"]
        p50s.append(pct.get("p50.00") or 0)
        p99s.append(pct.get("p99.00") or 0)
        p999s.append(pct.get("p99.90") or 0)
    # (Latencies: the median of the processes' p50s, the worst p99 and p99.9.)
    return {"rps": total / secs, "p50_ms": sorted(p50s)[len(p50s) // 2], "p99_ms": max(p99s),
            "p999_ms": max(p999s), "requests": total}


PER_REQUEST = ("cross_shard_batches", "worker_wakeups", "worker_spins", "worker_spin_hits",
               "total_reads_processed", "total_writes_processed")


def server_info(r: Runner, port: int) -> dict[str, int]:
    out = subprocess.run(r.argv("redis-cli", ["-p", str(port), "info", "stats", "peregrine"]), capture_output=True,
                         text=True, timeout=30).stdout
    vals = dict(l.strip().split(":", 1) for l in out.splitlines() if ":" in l)
    return {k: int(vals[k]) for k in PER_REQUEST if k in vals}


def profile(a, pid: int, name: str, cmd: str, pipeline: int, r: Runner, ccores: str, port: int) -> str:
    """perf record (cpu-clock, call graphs) of the server over a second run of the
    workload; the report goes to a file beside --json (the bundle's perf: DIR/bin/perf)."""
    perf = os.path.abspath(a.perf)
    lib = os.path.join(os.path.dirname(os.path.dirname(perf)), "lib")
    base = [os.path.join(lib, "ld-linux-x86-64.so.2"), "--library-path", lib, perf]
    data = os.path.join(os.path.dirname(os.path.abspath(a.json or "x")), f"perf-{name}-{cmd}{pipeline}.data")
    rec = subprocess.Popen(base + ["record", "-e", "cpu-clock", "-F", "1999", "-g", "-p", str(pid), "-o", data],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    load_generator(r, a, ccores, port, False, cmd, pipeline, max(3, a.secs // 2))
    rec.send_signal(2)
    err = rec.communicate(timeout=120)[1]
    report = os.path.join(os.path.dirname(data), f"perf-{name}-{cmd}{pipeline}.txt")
    with open(report, "w") as f:
        for sort in ("dso,sym", "sym"):
            f.write(f"=== --no-children --sort {sort}\n")
            f.flush()
            subprocess.run(base + ["report", "-i", data, "--stdio", "--no-children", "--sort", sort,
                                   "-g", "none", "--percent-limit", "0.3"],
                           stdout=f, stderr=subprocess.STDOUT, timeout=300)
        f.write("=== callers, --children\n")
        f.flush()
        subprocess.run(base + ["report", "-i", data, "--stdio", "--children", "--sort", "sym",
                               "-g", "caller,0.5,callee", "--percent-limit", "2"],
                       stdout=f, stderr=subprocess.STDOUT, timeout=300)
    os.unlink(data)
    return f"{report} ({err.strip()[-200:]})"


def run(a) -> int:
    r = Runner(a.bundle if a.bundle == "system" else os.path.abspath(a.bundle))
    ncpu = os.cpu_count() or 1
    s = a.server_cores
    scores = f"0-{min(s, ncpu) - 1}"
    ccores = f"{s}-{ncpu - 1}" if s < ncpu else str(ncpu - 1)  # (a smoke run on few cores shares one)
    # (Valkey only if bundled; redis-cli makes a cluster of 3 processes or more.)
    kinds = [k for k in a.servers.split(",")
             if (not k.startswith("valkey") or r.has("valkey-server")) and (k != "rcluster" or s >= 3)]
    workdir = tempfile.mkdtemp(prefix="peregrine-scale-")
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    machine = f"{ncpu} CPUs ({model}), kernel {os.uname().release}"
    print(f"machine: {machine}; servers on {scores}, load generator on {ccores}", flush=True)
    results = []
    for rnd in range(a.rounds):
        for kind in (kinds if rnd % 2 == 0 else list(reversed(kinds))):
            try:
                srv = Servers(r, kind, scores, s, workdir)
            except Exception as e:  # (one server that fails to start does not end the run)
                print(f"  {kind}: did not start: {e}", flush=True)
                continue
            try:
                cluster = kind == "rcluster"
                info_before = server_info(r, srv.ports[0]) if kind.startswith("peregrine") else {}
                ccore_list = sorted(pinned_set(ccores))
                if srv.apart:
                    load_apart(r, a, ccore_list, srv.ports, "set", 64, a.secs, prefill=True)
                else:
                    load_generator(r, a, ccores, srv.ports[0], cluster, "set", 64, a.secs, prefill=True)
                for wl in a.workloads.split(","):
                    cmd, pipeline = wl[:3], (1 if wl.endswith("1") else a.pipeline)
                    t0 = thread_cpu([p.pid for p in srv.procs])
                    if srv.apart:
                        res = load_apart(r, a, ccore_list, srv.ports, cmd, pipeline, a.secs)
                    else:
                        res = load_generator(r, a, ccores, srv.ports[0], cluster, cmd, pipeline, a.secs)
                    t1 = thread_cpu([p.pid for p in srv.procs])
                    per_thread = sorted((t1[k] - t0.get(k, 0.0) for k in t1), reverse=True)
                    cpu = sum(per_thread)
                    # How the work spread: the busiest threads' CPU seconds (a worker that is
                    # the bottleneck shows as one thread near the run's length).
                    res["thread_cpu_s"] = [round(x, 2) for x in per_thread[:12] if x > 0]
                    if kind.startswith("peregrine"):  # (mail counters per request: wake-ups, spins)
                        info = server_info(r, srv.ports[0])
                        res["per_request"] = {k: round((v - info_before.get(k, 0)) / max(1, res["requests"]), 4)
                                              for k, v in info.items()}
                        info_before = info
                    if a.perf and kind in a.perf_server.split(",") and wl in a.perf_workload.split(","):
                        res["profile"] = profile(a, srv.procs[0].pid, re.sub(r"[^A-Za-z0-9]+", "_", kind), cmd,
                                                 pipeline, r, ccores, srv.ports[0])
                        info_before = server_info(r, srv.ports[0])
                    res.update(server=kind, workload=f"{cmd.upper()} P{pipeline}", round=rnd + 1,
                               cpu_us_per_req=cpu * 1e6 / max(1, res["requests"]))
                    results.append(res)
                    if a.json:  # (written as it goes: a run cut short keeps what it measured)
                        with open(a.json, "w") as f:
                            json.dump({"machine": machine, "cores": ncpu, "server_cores": s, "args": vars(a), "results": results}, f,
                                      indent=1)
                    print(f"  {kind:11s} {res['workload']:8s} {res['rps']:>12,.0f} req/s  p50 {res['p50_ms']}  "
                          f"p99 {res['p99_ms']}  {res['cpu_us_per_req']:.2f} µs CPU/req  "
                          f"threads {res['thread_cpu_s'][:9]}", flush=True)
            except Exception as e:
                print(f"  {kind}: {e}", flush=True)
            finally:
                srv.stop()
    print(f"\n| server ({s} cores) | " + " | ".join(w.upper() for w in a.workloads.split(",")) + " |")
    for kind in kinds:
        cells = []
        for wl in a.workloads.split(","):
            cmd, pipeline = wl[:3].upper(), (1 if wl.endswith("1") else a.pipeline)
            xs = sorted(x["rps"] for x in results if x["server"] == kind and x["workload"] == f"{cmd} P{pipeline}")
            cells.append(f"{xs[len(xs) // 2]:,.0f}" if xs else "-")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "cores": ncpu, "server_cores": s, "args": vars(a), "results": results}, f, indent=1)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("bundle")
    b.add_argument("dir")
    b.add_argument("--tool", action="append", default=[], metavar="NAME=PATH",
                   help="bundle this binary for NAME (memtier_benchmark, valkey-server) instead of the PATH's")
    b.add_argument("peregrine", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                "..", "build", "release", "peregrine"))
    b.add_argument("--without", action="append", default=[], metavar="NAME",
                   help="leave this tool out (perf and its libraries are about 20 MB of the 64 MB a device call carries)")
    rp = sub.add_parser("run")
    rp.add_argument("--bundle", required=True)
    rp.add_argument("--server-cores", type=int, default=8)
    rp.add_argument("--client-threads", type=int, default=8)
    rp.add_argument("--conns", type=int, default=25, help="connections per load-generator thread")
    rp.add_argument("--pipeline", type=int, default=32)
    rp.add_argument("--secs", type=int, default=8)
    rp.add_argument("--keys", type=int, default=1_000_000)
    rp.add_argument("--size", type=int, default=16)
    rp.add_argument("--rounds", type=int, default=1)
    rp.add_argument("--servers", default="redis,rcluster,valkey,peregrine1,peregrineN")
    rp.add_argument("--workloads", default="get1,set1,getP,setP")
    rp.add_argument("--expect-rps", type=float, default=2e6,
                    help="redis-benchmark only: requests per run = this x secs")
    rp.add_argument("--json")
    rp.add_argument("--perf", help="a bundled perf (DIR/bin/perf, its libraries in DIR/lib): profile one run")
    rp.add_argument("--perf-server", default="peregrineN")
    rp.add_argument("--perf-workload", default="get1")
    a = ap.parse_args(argv)
    if a.what == "bundle":
        make_bundle(a.dir, a.peregrine, a.tool, a.without)
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
