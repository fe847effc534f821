#!/usr/bin/env python3
"""Requests per second with two worker threads on this 2-core machine
(`make bench-threads`; issue #5).

    bench/threads.py [PEREGRINE_BINARY] [--rounds 3] [--requests 1000000]

Three servers, each fresh per run, in alternating order over the rounds:
Redis (one thread), Peregrine `--threads 1` and Peregrine `--threads 2`.
Nothing is pinned: the servers and the load generator (redis-benchmark with
two threads, 50 connections) share both cores, which is the honest setting
on a 2-core machine — a second worker thread competes with the load
generator for the same two cores. For each server, the keyspace (100,000
keys, 8-byte values) is loaded first; then `-t set,get` at pipeline 1 and 16
over random keys of that keyspace. Reported: median requests/s, and the
server's CPU seconds per request (all its threads, /proc/PID/stat). Writes
bench/results/threads.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

KEYS = 100_000


class Unpinned(bl.Server):
    """A benchlib server without the CPU pin (it inherits both cores)."""

    def __init__(self, spec: bl.ServerSpec, workdir: str):
        saved = bl.taskset
        bl.taskset = lambda cpu: []
        try:
            super().__init__(spec, workdir)
        finally:
            bl.taskset = saved


def run_one(spec: bl.ServerSpec, workdir: str, rb: str, pipeline: int, n: int) -> dict:
    srv = Unpinned(spec, workdir)
    try:
        bl.load_keys(srv.port, KEYS, 8)
        out = {}
        for test in ("set", "get"):
            t0 = srv.cpu_ticks()
            argv = [rb, "-h", bl.HOST, "-p", str(srv.port), "--threads", "2", "-c", "50", "-P", str(pipeline),
                    "-n", str(n), "-r", str(KEYS), "-d", "8", "-t", test]
            p = subprocess.run(argv, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
            t1 = srv.cpu_ticks()
            text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
            tests = bl.parse_redis_benchmark(text)
            if p.returncode != 0 or not tests:
                raise bl.BenchError(f"{spec.label}: redis-benchmark failed: {text[-800:]}")
            ticks = (t1[0] + t1[1]) - (t0[0] + t0[1])
            out[test] = {"rps": tests[0]["rps"],
                         "cpu_us_per_req": ticks / os.sysconf("SC_CLK_TCK") * 1e6 / n}
        return out
    finally:
        srv.shutdown()


def setup(argv, doc: str, name: str, requests: int):
    """The command line and the three servers of a Redis / --threads 1 /
    --threads 2 comparison (this file and bench/pubsub.py). Returns (args,
    specs, redis-benchmark path, workdir, binary sha256)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=requests)
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / f"{name}.json"))
    args = ap.parse_args(argv)
    pbin, (rs, rb) = bl.find_binaries(args.peregrine, [args.redis_server, args.redis_benchmark], "redis-server")
    workdir = tempfile.mkdtemp(prefix=f"peregrine-{name}-")
    binary, sha = bl.snapshot_binary(pbin, workdir)
    specs = [bl.redis_spec(rs),
             bl.ServerSpec("peregrine-1", "Peregrine --threads 1", binary, ["--threads", "1"]),
             bl.ServerSpec("peregrine-2", "Peregrine --threads 2", binary, ["--threads", "2"])]
    return args, specs, rb, workdir, sha


def main(argv=None) -> int:
    args, specs, rb, workdir, sha = setup(argv, __doc__, "threads", 1_000_000)
    results: dict = {}
    t0 = time.monotonic()
    for rnd in range(args.rounds):
        order = specs if rnd % 2 == 0 else list(reversed(specs))
        for pipeline in (1, 16):
            for spec in order:
                r = run_one(spec, workdir, rb, pipeline, args.requests)
                for test, v in r.items():
                    results.setdefault(f"{spec.name} {test} P{pipeline}", []).append(v)
                print(f"  round {rnd + 1} P{pipeline:<2d} {spec.label:22s} "
                      + "  ".join(f"{t} {v['rps']:>10,.0f} req/s {v['cpu_us_per_req']:.2f} µs/req"
                                  for t, v in r.items()), flush=True)
    med = {k: {"rps": bl.median([x["rps"] for x in v]),
               "cpu_us_per_req": bl.median([x["cpu_us_per_req"] for x in v])} for k, v in results.items()}
    print()
    print(f"{'':8s}{'Redis':>12s}{'P --threads 1':>16s}{'P --threads 2':>16s}{'2 thr / 1':>11s}{'2 thr / Redis':>15s}")
    for pipeline in (1, 16):
        for test in ("set", "get"):
            r, a, b = (med[f"{n} {test} P{pipeline}"]["rps"] for n in ("redis", "peregrine-1", "peregrine-2"))
            print(f"{test.upper()} P{pipeline:<3d}{r:12,.0f}{a:16,.0f}{b:16,.0f}{b / a:11.2f}{b / r:15.2f}")
    print(f"{(time.monotonic() - t0) / 60:.1f} min")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "requests": args.requests,
                   "rounds": args.rounds, "median": med, "runs": results, "machine": bl.machine_info(),
                   "cores": os.cpu_count()}, f, indent=1)
    print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
