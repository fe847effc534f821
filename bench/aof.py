#!/usr/bin/env python3
"""The append-only file's cost (#20): Peregrine against Debian's redis-server in
one run, each with no persistence, appendonly everysec and appendonly always
(a fresh server per measurement, server on CPU 0, load on CPU 1, rounds
interleaved, medians reported).

Each measurement: redis-benchmark SET (-c 50, random keys of 1M, 16-byte
values), unpipelined (P1) and pipelined (P16; not for always, whose cost is
the disk's), giving requests/s and the server's CPU per request (user +
system, its threads included: the everysec fsync thread is counted).

    python3 bench/aof.py [build/release/peregrine] [--rounds 3] [--smoke] [--no-docs]

Writes bench/results/aof.json and the section between the "aof" markers of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

BEGIN = "<!-- aof:begin -->"
END = "<!-- aof:end -->"
MODES = {
    "none": [],
    "everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
    "always": ["--appendonly", "yes", "--appendfsync", "always"],
}


def run_once(spec: bl.ServerSpec, mode: str, pipeline: int, requests: int, workdir: str) -> dict:
    s = bl.ServerSpec(spec.name, spec.label, spec.binary, spec.extra + MODES[mode])
    srv = bl.Server(s, workdir)
    try:
        args = ["-c", "50", "-P", str(pipeline), "-n", str(requests), "-r", "1000000", "-d", "16", "-t", "set"]
        t0 = srv.cpu_ticks()
        _, text, rc, _ = bl.run_redis_benchmark("redis-benchmark", srv.port, args, 1800)
        t1 = srv.cpu_ticks()
        parsed = bl.parse_redis_benchmark(text)
        if rc != 0 or not parsed:
            raise bl.BenchError(f"redis-benchmark failed: {text[-800:]}")
        srv.check_alive("the benchmark")
        if mode != "none" and int(srv.info("persistence").get("aof_enabled", "0")) != 1:
            raise bl.BenchError(f"{spec.label}: the AOF is not on")
        ticks = sum(t1) - sum(t0)
        hz = os.sysconf("SC_CLK_TCK")
        return {"rps": parsed[-1].get("rps"), "cpu_us": ticks / hz * 1e6 / requests}
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args(argv)
    if args.smoke:
        args.rounds, args.requests, args.no_docs = 1, 20_000, True
    binary, _ = bl.find_binaries(args.peregrine, ["redis-benchmark"], "redis-tools")
    cases = [(m, p) for m in MODES for p in (1, 16) if not (m == "always" and p == 16)]
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-aof-") as workdir:
        binary, shown = bl.snapshot_binary(binary, workdir)
        specs = (bl.peregrine_spec(binary), bl.redis_spec())
        for rnd in range(args.rounds):
            for mode, pipeline in cases:
                # always is bound by the disk: fewer requests.
                n = args.requests // (10 if mode == "always" else 1)
                for spec in specs:
                    r = run_once(spec, mode, pipeline, n, workdir)
                    results.setdefault(f"{spec.name} {mode} P{pipeline}", []).append(r)
                    print(json.dumps({"round": rnd, "server": spec.name, "mode": mode, "P": pipeline, **r}), flush=True)
    write_report(results, cases, args, shown)
    return 0


def write_report(results, cases, args, shown):
    def med(name, mode, p, key):
        return bl.median([r[key] for r in results.get(f"{name} {mode} P{p}", [])])

    ratio = bl.ratio

    lines = [f"`python3 bench/aof.py --rounds {args.rounds}` (redis-benchmark -c 50 -n {args.requests:,} "
             f"(always: a tenth) -r 1000000 -d 16 -t set; Peregrine `--threads 1`; Debian's redis-server 7.0; "
             f"server on CPU 0, load on CPU 1; medians of {args.rounds} interleaved rounds; CPU is the "
             f"server's, all its threads, per request).", "",
             "| AOF | P | Peregrine req/s | Redis req/s | ratio | Peregrine µs CPU/req | Redis µs CPU/req | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for mode, p in cases:
        pr, rr = med("peregrine", mode, p, "rps"), med("redis", mode, p, "rps")
        pc, rc = med("peregrine", mode, p, "cpu_us"), med("redis", mode, p, "cpu_us")
        lines.append(f"| {mode} | {p} | {bl.num(pr, ',.0f')} | {bl.num(rr, ',.0f')} | {ratio(pr, rr)} | "
                     f"{bl.num(pc, '.2f')} | {bl.num(rc, '.2f')} | {ratio(pc, rc)} |")
    lines.append("")
    for p in (1, 16):
        lines.append(f"- P{p}: Peregrine with everysec / without persistence: req/s "
                     f"{ratio(med('peregrine', 'everysec', p, 'rps'), med('peregrine', 'none', p, 'rps'))}, "
                     f"CPU/req {ratio(med('peregrine', 'everysec', p, 'cpu_us'), med('peregrine', 'none', p, 'cpu_us'))} "
                     f"(Redis: req/s {ratio(med('redis', 'everysec', p, 'rps'), med('redis', 'none', p, 'rps'))}).")
    lines.append(f"- always, P1: Peregrine / Redis req/s "
                 f"{ratio(med('peregrine', 'always', 1, 'rps'), med('redis', 'always', 1, 'rps'))}.")
    text = "\n".join(lines)
    print(text)
    if not args.no_docs:
        out = bl.REPO / "bench" / "results" / "aof.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"machine": bl.machine_info(), "binary": shown, "results": results}, indent=1))
        bl.put_docs_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")


if __name__ == "__main__":
    sys.exit(main())
