#!/usr/bin/env python3
"""Persistence (#20): Peregrine against Debian's redis-server in one run
(a fresh server per measurement, server on CPU 0, load on CPU 1).

For N keys of 16-byte values (SET key:%012d), each server:
  save      SAVE: seconds, keys/s, MB/s of the file
  load      a fresh server started on that file until it answers PING
  bgsave    BGSAVE with no load: seconds, keys/s; peak memory during it
            (Peregrine: its RSS; Redis: the parent's RSS plus the child's
            private pages, i.e. what the fork costs) over RSS before
  load+bg   redis-benchmark SET (-c 50, random keys of the same N) for a
            fixed number of requests, once without a save and once with a
            BGSAVE started at its beginning: p99.9 latency of both, peak
            memory during the one with the save over RSS before

    python3 bench/persistence.py [build/release/peregrine] [--keys 10000000] [--smoke] [--no-docs]

Writes bench/results/persistence.json and the section between the
"persistence" markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

BEGIN = "<!-- persistence:begin -->"
END = "<!-- persistence:end -->"
VALUE = 16


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def private_kb(pid: int) -> int:
    """A process's private pages (smaps_rollup): what it holds that no other does."""
    kb = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    kb += int(line.split()[1])
    except OSError:
        pass
    return kb


class PeakMemory:
    """Samples the server's memory every 5 ms: its RSS plus its children's
    private pages (Redis's fork), and keeps the highest."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, 0, False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            kb = bl.read_rss_kb(self.pid) + sum(private_kb(c) for c in children(self.pid))
            self.peak = max(self.peak, kb)
            time.sleep(0.005)

    def done(self) -> int:
        self.stop = True
        self.t.join()
        return self.peak


def wait_bgsave(c: bl.RespClient, timeout: float = 1800) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if c.info("persistence").get("rdb_bgsave_in_progress") == "0":
            return time.monotonic() - t0
        time.sleep(0.002)
    raise bl.BenchError("BGSAVE did not finish")


def set_benchmark(port: int, nkeys: int, n: int) -> dict:
    args = ["-c", "50", "-n", str(n), "-r", str(nkeys), "-d", str(VALUE), "-t", "set"]
    argv, text, rc, _ = bl.run_redis_benchmark("redis-benchmark", port, args, 1800)
    parsed = bl.parse_redis_benchmark(text)
    if rc != 0 or not parsed:
        raise bl.BenchError(f"redis-benchmark failed: {text[-800:]}")
    return parsed[-1]


def measure(spec: bl.ServerSpec, workdir: str, nkeys: int, requests: int) -> dict:
    r = {"server": spec.name}
    srv = bl.Server(spec, workdir, ready_timeout=600)
    try:
        bl.load_keys(srv.port, nkeys, VALUE)
        c = srv.client(timeout=1800)
        rss0 = srv.rss_kb()
        r["rss_before_kb"] = rss0
        t0 = time.monotonic()
        if c.call("SAVE") != "OK":
            raise bl.BenchError("SAVE failed")
        r["save_s"] = time.monotonic() - t0
        size = os.path.getsize(os.path.join(srv.dir, "dump.rdb"))
        r["file_bytes"] = size
        peak = PeakMemory(srv.pid)
        t0 = time.monotonic()
        c.call("BGSAVE")
        r["bgsave_s"] = wait_bgsave(c) + 0.0
        r["bgsave_peak_kb"] = peak.done()
        # Latency of writes, without and with a BGSAVE going on.
        r["base"] = set_benchmark(srv.port, nkeys, requests)
        rss1 = srv.rss_kb()
        peak = PeakMemory(srv.pid)
        done = {}

        def start_bgsave():
            time.sleep(0.2)
            cc = srv.client(timeout=60)
            cc.call("BGSAVE")
            done["s"] = wait_bgsave(cc)
            cc.close()

        th = threading.Thread(target=start_bgsave)
        th.start()
        r["during"] = set_benchmark(srv.port, nkeys, requests)
        th.join()
        r["during_bgsave_s"] = done.get("s")
        r["during_rss_before_kb"] = rss1
        r["during_peak_kb"] = peak.done()
        c.close()
        srv.check_alive("the measurements")
        saved_dir = srv.dir
    finally:
        srv.shutdown()
    # Load: a fresh server on the file.
    spec2 = bl.ServerSpec(spec.name, spec.label, spec.binary, spec.extra + ["--dir", saved_dir])
    t0 = time.monotonic()
    srv = bl.Server(spec2, workdir, ready_timeout=1800)
    r["load_s"] = time.monotonic() - t0
    try:
        c = srv.client()
        if int(c.call("DBSIZE")) != nkeys:
            raise bl.BenchError(f"{spec.label} loaded {c.call('DBSIZE')} keys, not {nkeys}")
        c.close()
    finally:
        srv.shutdown()
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--requests", type=int, default=0, help="SET requests per latency run (default: 2x keys, at least 1M)")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args(argv)
    if args.smoke:
        args.keys, args.no_docs = 20_000, True
    requests = args.requests or (50_000 if args.smoke else max(1_000_000, 2 * args.keys))
    binary, _ = bl.find_binaries(args.peregrine, ["redis-benchmark"], "redis-tools")
    records = []
    with tempfile.TemporaryDirectory(prefix="bench-persistence-") as workdir:
        binary, shown = bl.snapshot_binary(binary, workdir)
        for spec in (bl.peregrine_spec(binary), bl.redis_spec()):
            r = measure(spec, workdir, args.keys, requests)
            records.append(r)
            print(json.dumps(r), flush=True)
    write_report(records, args.keys, requests, shown, docs=not args.no_docs)
    return 0


def write_report(records, nkeys, requests, shown, docs: bool):
    p = next(r for r in records if r["server"] == "peregrine")
    q = next(r for r in records if r["server"] == "redis")

    def rate(r, key):
        return nkeys / r[key]

    def mb(r, key):
        return r["file_bytes"] / r[key] / 1e6

    ratio = bl.ratio

    def div(a, b):
        return a / b if a is not None and b else None

    def get(r, run, key):
        return r[run].get(key)

    rows = [
        ("SAVE keys/s", f"{rate(p, 'save_s'):,.0f}", f"{rate(q, 'save_s'):,.0f}", ratio(rate(p, 'save_s'), rate(q, 'save_s'))),
        ("SAVE MB/s", f"{mb(p, 'save_s'):,.0f}", f"{mb(q, 'save_s'):,.0f}", ratio(mb(p, 'save_s'), mb(q, 'save_s'))),
        ("BGSAVE keys/s (idle)", f"{rate(p, 'bgsave_s'):,.0f}", f"{rate(q, 'bgsave_s'):,.0f}",
         ratio(rate(p, 'bgsave_s'), rate(q, 'bgsave_s'))),
        ("load keys/s (start-up to PING)", f"{rate(p, 'load_s'):,.0f}", f"{rate(q, 'load_s'):,.0f}",
         ratio(rate(p, 'load_s'), rate(q, 'load_s'))),
        ("load MB/s", f"{mb(p, 'load_s'):,.0f}", f"{mb(q, 'load_s'):,.0f}", ratio(mb(p, 'load_s'), mb(q, 'load_s'))),
        ("file MB", f"{p['file_bytes'] / 1e6:,.1f}", f"{q['file_bytes'] / 1e6:,.1f}", ratio(p['file_bytes'], q['file_bytes'])),
        ("RSS before, MB", f"{p['rss_before_kb'] / 1024:,.0f}", f"{q['rss_before_kb'] / 1024:,.0f}",
         ratio(p['rss_before_kb'], q['rss_before_kb'])),
        ("peak memory during BGSAVE (idle) / before", f"{p['bgsave_peak_kb'] / p['rss_before_kb']:.3f}",
         f"{q['bgsave_peak_kb'] / q['rss_before_kb']:.3f}", "—"),
        ("peak memory during BGSAVE under SET load / before", f"{p['during_peak_kb'] / p['during_rss_before_kb']:.3f}",
         f"{q['during_peak_kb'] / q['during_rss_before_kb']:.3f}", "—"),
        ("SET p99.9 ms, no save", bl.num(get(p, 'base', 'p99.9'), '.3f'), bl.num(get(q, 'base', 'p99.9'), '.3f'),
         ratio(get(p, 'base', 'p99.9'), get(q, 'base', 'p99.9'))),
        ("SET p99.9 ms, during BGSAVE", bl.num(get(p, 'during', 'p99.9'), '.3f'), bl.num(get(q, 'during', 'p99.9'), '.3f'),
         ratio(get(p, 'during', 'p99.9'), get(q, 'during', 'p99.9'))),
        ("p99.9 during / without", bl.num(div(get(p, 'during', 'p99.9'), get(p, 'base', 'p99.9')), '.2f'),
         bl.num(div(get(q, 'during', 'p99.9'), get(q, 'base', 'p99.9')), '.2f'), "—"),
        ("SET req/s, no save", bl.num(get(p, 'base', 'rps'), ',.0f'), bl.num(get(q, 'base', 'rps'), ',.0f'),
         ratio(get(p, 'base', 'rps'), get(q, 'base', 'rps'))),
        ("SET req/s, during BGSAVE", bl.num(get(p, 'during', 'rps'), ',.0f'), bl.num(get(q, 'during', 'rps'), ',.0f'),
         ratio(get(p, 'during', 'rps'), get(q, 'during', 'rps'))),
        ("BGSAVE seconds under SET load", f"{p['during_bgsave_s'] or 0:.2f}", f"{q['during_bgsave_s'] or 0:.2f}", "—"),
    ]
    lines = [f"`python3 bench/persistence.py --keys {nkeys}` ({nkeys:,} keys of {VALUE}-byte values; SET load: "
             f"redis-benchmark -c 50 -n {requests} -r {nkeys} -d {VALUE} -t set; Redis is Debian's redis-server 7.0, "
             f"its BGSAVE a fork; Peregrine `--threads 1`, its BGSAVE forkless; server on CPU 0, load on CPU 1; "
             f"one run).", "",
             "| measure | Peregrine | Redis | ratio |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    text = "\n".join(lines)
    print(text)
    if docs:
        out = bl.REPO / "bench" / "results" / "persistence.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"machine": bl.machine_info(), "binary": shown, "keys": nkeys,
                                   "records": records}, indent=1))
        bl.put_docs_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")


if __name__ == "__main__":
    sys.exit(main())
