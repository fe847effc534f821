#!/usr/bin/env python3
"""What crossing shards costs in server CPU, on this 2-core machine
(`make bench-shards`; issue #37).

    bench/shard_cost.py [PEREGRINE_BINARY] [--rounds 3] [--p1 300000] [--p32 3000000]

Two servers, each fresh per run, alternated over the rounds: Peregrine
`--threads 1` and `--threads 2`, both pinned to CPU 0 (so the two workers of
the second share one core: what they cost above one worker is what routing,
the mailbox and the extra thread cost, not what a second core buys; being
more workers than cores, they run as SCHED_BATCH: `worker-sched-policy
auto`). The load
generator, redis-benchmark with 1 thread and 25 connections, runs on CPU 1.
The keyspace (100,000 keys, 8-byte values) is loaded first; then random GETs
over it at pipeline 1 and 32 (with two workers, half of them for the other
worker's shard), and random SETs at pipeline 32 (whose pipelines over both
shards run as write groups). Reported: the server's CPU per request (all its threads,
/proc/PID/task/*/stat, user + system), its median over the rounds, and the
ratio `--threads 2` / `--threads 1` (issue #37's targets: at most 1.2 at
pipeline 1, 1.3 at pipeline 32, for GETs). Writes bench/results/shard_cost.json and
the "Crossing shards" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

KEYS = 100_000
CONNS = 25
# (command, pipeline) runs, in this order on each server.
RUNS = (("get", 1), ("get", 32), ("set", 32))
BEGIN = "<!-- shard-cost:begin -->"
END = "<!-- shard-cost:end -->"


def run_one(spec: bl.ServerSpec, workdir: str, rb: str, requests: dict[int, int]) -> dict:
    srv = bl.Server(spec, workdir)  # (pinned to CPU 0 by benchlib)
    try:
        bl.load_keys(srv.port, KEYS, 8)
        out = {}
        for command, pipeline in RUNS:
            n = requests[pipeline]
            cpu_us, wall_rps, test = bl.cpu_per_request(
                srv, rb, ["--threads", "1", "-c", str(CONNS), "-P", str(pipeline), "-n", str(n),
                          "-r", str(KEYS), "-t", command], n, timeout=600)
            out[f"{command} P{pipeline}"] = {"rps": test["rps"], "wall_rps": wall_rps, "cpu_us_per_req": cpu_us}
        return out
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--p1", type=int, default=300_000, help="requests at pipeline 1")
    ap.add_argument("--p32", type=int, default=3_000_000, help="requests at pipeline 32")
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "shard_cost.json"))
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = ap.parse_args(argv)
    if not bl.have_cpus("0", "1"):
        raise bl.BenchError("needs CPUs 0 and 1 (the servers on one, the load on the other)")
    pbin, (rb,) = bl.find_binaries(args.peregrine, [args.redis_benchmark], "redis-tools")
    workdir = tempfile.mkdtemp(prefix="peregrine-shard-cost-")
    binary, sha = bl.snapshot_binary(pbin, workdir)
    specs = [bl.ServerSpec("threads-1", "Peregrine --threads 1", binary, ["--threads", "1"]),
             bl.ServerSpec("threads-2", "Peregrine --threads 2", binary, ["--threads", "2"])]
    requests = {1: args.p1, 32: args.p32}
    runs: dict = {}
    t0 = time.monotonic()
    for rnd in range(args.rounds):
        for spec in (specs if rnd % 2 == 0 else list(reversed(specs))):
            r = run_one(spec, workdir, rb, requests)
            for k, v in r.items():
                runs.setdefault(f"{spec.name} {k}", []).append(v)
            print(f"  round {rnd + 1} {spec.label:22s} "
                  + "  ".join(f"{k} {v['rps']:>10,.0f} req/s {v['cpu_us_per_req']:.3f} µs/req" for k, v in r.items()),
                  flush=True)
    med = {k: {f: bl.median([x[f] for x in v]) for f in ("rps", "wall_rps", "cpu_us_per_req")}
           for k, v in runs.items()}
    rows = []
    for command, p in RUNS:
        one, two = med[f"threads-1 {command} P{p}"], med[f"threads-2 {command} P{p}"]
        rows.append((command, p, one, two, two["cpu_us_per_req"] / one["cpu_us_per_req"]))
    print()
    for command, p, one, two, ratio in rows:
        print(f"{command.upper()} P{p:<3d} --threads 1 {one['cpu_us_per_req']:.3f} µs/req ({one['rps']:,.0f} req/s)   "
              f"--threads 2 {two['cpu_us_per_req']:.3f} µs/req ({two['rps']:,.0f} req/s)   ratio {ratio:.2f}")
    print(f"{(time.monotonic() - t0) / 60:.1f} min")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "requests": requests, "rounds": args.rounds,
                   "connections": CONNS, "keys": KEYS, "median": med, "runs": runs,
                   "machine": bl.machine_info()}, f, indent=1)
    print(f"raw results: {args.json}")
    if not args.no_docs:
        lines = [BEGIN, "## Crossing shards on one core (issue #37)", "",
                 f"Measured {time.strftime('%Y-%m-%d')} by `make bench-shards` (`bench/shard_cost.py`, "
                 f"binary {sha}, {args.rounds} alternating rounds, median): both servers pinned to CPU 0, "
                 f"redis-benchmark (1 thread, {CONNS} connections) on CPU 1, random GETs over "
                 f"{KEYS:,} keys (and random SETs at pipeline 32). Server CPU per request (all threads, "
                 f"user + system):", "",
                 "| command, pipeline | `--threads 1` | `--threads 2`, one core | ratio (target) |",
                 "|---|---|---|---|"]
        for command, p, one, two, ratio in rows:
            target = "" if command != "get" else " (≤ 1.2)" if p == 1 else " (≤ 1.3)"
            lines.append(f"| {command.upper()}, {p} | {one['cpu_us_per_req']:.3f} µs ({one['rps']:,.0f} req/s) | "
                         f"{two['cpu_us_per_req']:.3f} µs ({two['rps']:,.0f} req/s) | {ratio:.2f}{target} |")
        lines += ["", END]
        bl.put_docs_section(BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
