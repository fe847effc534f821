#!/usr/bin/env python3
"""Peregrine vs Redis benchmark (`make bench`).

    bench/run_bench.py [PEREGRINE_BINARY] [--rounds 3] [--only w1,w3] [--smoke]

Rotates a fresh Peregrine, a fresh redis-server (persistence off) and, for
workloads 1-5, a fresh null server (bench/null_server.cc, compiled here when
missing or stale: the ceiling of /work/shared/MEASURING.md) for every run, over
several interleaved rounds (A B C, then B C A, then C A B, ...), server pinned
to CPU 0 and redis-benchmark to CPU 1.  Per run it records redis-benchmark's
requests/s and latency percentiles, the server's CPU time per request (from
/proc/PID/task/*/stat) and its RSS; the medians over rounds, the
Peregrine/Redis ratios and the work share against the ceiling measured in the
same run go to docs/benchmarks.md, plots to docs/bench_*.png and the raw
measurements to bench/results/bench.json.

--smoke runs one tiny workload once per server (a few seconds, the null server
included), checks that redis-benchmark's output parses and that every request
was served, prints the figures and writes nothing.  That is what CI may run;
the full run is not for CI.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

LONG_KEY_PREFIX = "key:some-long-prefix-to-make-it-over-40-bytes:"   # + 12 digits = 58 bytes
CLIENTS = 50


@dataclass
class Test:
    name: str             # "SET", "GET", ...
    command: str          # the command counted in INFO commandstats
    args: list[str]       # redis-benchmark arguments except -h -p -c -n
    n: int


@dataclass
class Unit:
    """One run: a fresh server, optional seeding, then the tests in order."""
    id: str
    workload: str         # w1..w5
    pipeline: int
    tests: list[Test]
    seed: tuple[int, int] | None = None   # (keys, value bytes) loaded first


@dataclass
class MemUnit:
    id: str
    keys: int
    value_size: int
    ttl: int | None
    workload: str = "w6"


WORKLOAD_TITLES = {
    "w1": "1. No pipelining: SET and GET, 50 clients, 8-byte values, 100K keyspace",
    "w2": "2. Pipeline 16: SET and GET, 64-byte values, 200K keys pre-seeded",
    "w3": "3. Pipeline sweep 1 / 10 / 100 / 500: SET and GET, 8-byte values, 1M keys pre-seeded",
    "w4": "4. Bandwidth: pipeline 64, 2 KB values, 100K keys pre-seeded",
    "w5": "5. Long keys: SET only, pipeline 16, 128-byte values, 58-byte keys, 1M keyspace",
    "w6": "6. Memory: RSS per key, 1M keys with 8-byte and with 2 KB values",
    "w7": "7. Large values: pipeline 16, 16 KB values, 20K keys pre-seeded",
    "w8": "8. Very large values: 100 KB and 1 MB, pipeline 1 and 8",
}


def bench_args(pipeline: int, keyspace: int, value: int, t: str) -> list[str]:
    a = ["-t", t, "-r", str(keyspace), "-P", str(pipeline)]
    if t == "set":
        a += ["-d", str(value)]
    return a


def setget(pipeline: int, keyspace: int, value: int, n: int) -> list[Test]:
    return [Test("SET", "set", bench_args(pipeline, keyspace, value, "set"), n),
            Test("GET", "get", bench_args(pipeline, keyspace, value, "get"), n)]


def full_plan(scale: float) -> tuple[list[Unit], list[MemUnit]]:
    def n(x):
        return max(1000, int(x * scale))
    units = [
        Unit("w1", "w1", 1, setget(1, 100_000, 8, n(200_000)), seed=(100_000, 8)),
        Unit("w2", "w2", 16, setget(16, 200_000, 64, n(1_500_000)), seed=(200_000, 64)),
    ]
    sweep_n = {1: 200_000, 10: 1_000_000, 100: 3_000_000, 500: 4_000_000}
    for p, k in sweep_n.items():
        units.append(Unit(f"w3_p{p}", "w3", p, setget(p, 1_000_000, 8, n(k)),
                          seed=(1_000_000, 8)))
    units.append(Unit("w4", "w4", 64, setget(64, 100_000, 2048, n(600_000)),
                      seed=(100_000, 2048)))
    long_set = ["-r", "1000000", "-P", "16", "SET", LONG_KEY_PREFIX + "__rand_int__", "v" * 128]
    units.append(Unit("w5", "w5", 16, [Test("SET", "set", long_set, n(1_500_000))]))
    units.append(Unit("w7", "w7", 16, setget(16, 20_000, 16384, n(300_000)), seed=(20_000, 16384)))
    # About 200 MB of values each; request counts for a few seconds per test.
    for size, label, keys, n1, n8 in ((100_000, "100k", 2_000, 30_000, 60_000),
                                      (1_000_000, "1m", 200, 3_000, 6_000)):
        for p, k in ((1, n1), (8, n8)):
            units.append(Unit(f"w8_{label}_p{p}", "w8", p, setget(p, keys, size, n(k)), seed=(keys, size)))
    mem = [MemUnit("w6_nottl", 1_000_000, 8, None),
           MemUnit("w6_ttl", 1_000_000, 8, 1_000_000),
           MemUnit("w6_2k", 1_000_000, 2048, None)]
    return units, mem


def smoke_plan() -> tuple[list[Unit], list[MemUnit]]:
    return [Unit("smoke", "smoke", 16, setget(16, 10_000, 8, 100_000), seed=(10_000, 8)),
            Unit("smoke_large", "smoke", 8, setget(8, 100, 100_000, 2_000), seed=(100, 100_000))], []


# --------------------------------------------------------------------------

class Runner:
    def __init__(self, args, specs, workdir, display: dict[str, str] | None = None):
        self.args = args
        self.specs = specs
        self.workdir = workdir
        self.display = display or {}   # binary copy -> path to show in commands
        self.records: list[dict] = []
        self.problems: list[str] = []
        self.commands: dict[str, list[str]] = {}
        self.busy_notes: list[str] = []
        self.wait_budget = 300.0   # seconds of waiting for a quiet machine, whole run

    def note_problem(self, msg: str):
        print("  !! " + msg.replace("\n", "\n     "), flush=True)
        self.problems.append(msg)

    def _template(self, argv: list[str], port: int) -> str:
        def short(a):
            if a in self.display:
                return self.display[a]
            if a == str(port):
                return "$PORT"
            if a.startswith(str(bl.REPO) + "/"):
                return os.path.relpath(a, bl.REPO)
            if a.startswith("/usr/bin/"):
                return a[len("/usr/bin/"):]
            return a
        return bl.cmd_str([short(a) for a in argv])

    def run_unit(self, unit: Unit, spec: bl.ServerSpec, rnd: int):
        if spec.name == "null" and unit.seed:
            # The floor of a workload that returns values: GETs answered with
            # a value of the seeded size (from one buffer, always in cache).
            spec = dataclasses.replace(spec, extra=spec.extra + ["--get-bulk", str(unit.seed[1])])
        srv = bl.Server(spec, self.workdir)
        self.check_pinning(srv)
        self.commands.setdefault(f"server:{spec.name}", [self._template(srv.full_argv, srv.port)])
        try:
            if unit.seed and spec.name != "null":   # the null server stores nothing
                nkeys, vsize = unit.seed
                t = bl.load_keys(srv.port, nkeys, vsize)
                srv.check_alive("seeding")
                c = srv.client()
                try:
                    dbs = c.call("DBSIZE")
                finally:
                    c.close()
                if dbs != nkeys:
                    self.note_problem(f"{spec.label} {unit.id}: DBSIZE {dbs} after seeding {nkeys} keys")
                print(f"    seeded {nkeys} keys x {vsize} B in {t:.1f}s", flush=True)
            for test in unit.tests:
                self.run_test(unit, test, srv, spec, rnd)
        finally:
            alive = srv.alive()
            rc = srv.shutdown()
            if not alive:
                self.note_problem(f"{spec.label} {unit.id} round {rnd}: server was dead at the "
                                  f"end of the run (rc={rc}); log tail:\n{srv.log_tail()}")
            elif rc not in (0, None):
                self.note_problem(f"{spec.label} {unit.id} round {rnd}: SHUTDOWN NOSAVE exit "
                                  f"code {rc}; log tail:\n{srv.log_tail()}")
            if not self.args.keep_logs:
                shutil.rmtree(srv.dir, ignore_errors=True)

    def check_pinning(self, srv: bl.Server):
        if bl.have_cpus(bl.SERVER_CPU, bl.CLIENT_CPU) and srv.cpus_allowed() != bl.SERVER_CPU:
            msg = f"{srv.spec.label} runs on CPUs {srv.cpus_allowed()}, not {bl.SERVER_CPU}"
            if msg not in self.problems:
                self.note_problem(msg)

    def run_test(self, unit: Unit, test: Test, srv: bl.Server, spec: bl.ServerSpec, rnd: int):
        args = ["-c", str(self.args.clients), "-n", str(test.n)] + test.args
        pre_info = srv.info()
        pre_cmd = bl.parse_cmdstats(srv.info("commandstats"))
        cpu0, whole0 = srv.cpu_ticks()
        busy0 = bl.read_busy_ticks()
        t0 = time.monotonic()
        argv, text, rc, client_cpu = bl.run_redis_benchmark(self.args.redis_benchmark, srv.port, args,
                                                            timeout=self.args.test_timeout)
        wall = time.monotonic() - t0
        if not srv.alive():
            self.note_problem(f"{spec.label} CRASHED during {unit.id} {test.name} round {rnd} "
                              f"(rc={srv.proc.returncode}); command: {bl.cmd_str(argv)}\n"
                              f"log tail:\n{srv.log_tail()}")
            raise bl.BenchError("server died")
        cpu1, whole1 = srv.cpu_ticks()
        busy1 = bl.read_busy_ticks()
        rss = srv.rss_kb()
        post_cmd = bl.parse_cmdstats(srv.info("commandstats"))
        post_info = srv.info()
        self.commands.setdefault(f"{unit.id}:{test.name}", [self._template(argv, srv.port)])

        parsed = bl.parse_redis_benchmark(text)
        lines = bl.interesting_lines(text)
        if rc != 0:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: redis-benchmark exit code {rc}; "
                              f"command: {bl.cmd_str(argv)}; output: {' | '.join(lines[:5])}")
        if lines:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: redis-benchmark printed: "
                              + " | ".join(lines[:5]))
        if len(parsed) != 1:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: expected 1 test section in "
                              f"redis-benchmark output, found {len(parsed)}")
            if not parsed:
                raise bl.BenchError("unparseable redis-benchmark output:\n" + text[-1500:])
        r = parsed[0]
        missing = bl.check_parsed(r)
        if missing:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: could not parse {missing} "
                              f"from redis-benchmark output")

        def cmd_delta(k):
            return (post_cmd.get(test.command, {}).get(k, 0)
                    - pre_cmd.get(test.command, {}).get(k, 0))
        served = cmd_delta("calls")
        failed = cmd_delta("failed_calls") + cmd_delta("rejected_calls")
        err_delta = (int(post_info.get("total_error_replies", 0))
                     - int(pre_info.get("total_error_replies", 0)))
        if served != test.n:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: server counted {served} "
                              f"{test.command} calls, redis-benchmark -n was {test.n}")
        if failed or err_delta:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: {failed} failed/rejected calls, "
                              f"{err_delta} error replies")
        ticks = cpu1 - cpu0
        wticks = whole1 - whole0
        if abs(wticks - ticks) > 2:
            self.note_problem(f"{spec.label} {unit.id} {test.name}: per-thread CPU sum {ticks} ticks "
                              f"but /proc/PID/stat says {wticks} (a thread exited?)")
        denom = served if served > 0 else test.n
        # CPU used by anything other than the server and redis-benchmark (e.g. a build).
        other = ((busy1 - busy0 - ticks) / bl.CLK_TCK - client_cpu) / wall if wall > 0 else 0
        if other > BUSY:
            msg = (f"{spec.label} {unit.id} {test.name} round {rnd}: other processes used "
                   f"{other:.0%} of a core during the test; this round of {unit.id} is left out")
            print("  .. " + msg, flush=True)
            self.busy_notes.append(msg)
        rec = {
            "server": spec.name, "round": rnd, "unit": unit.id, "workload": unit.workload,
            "pipeline": unit.pipeline, "test": test.name, "n": test.n,
            "rps": r.get("rps"), "avg_ms": r.get("avg"), "p50_ms": r.get("p50"),
            "p95_ms": r.get("p95"), "p99_ms": r.get("p99"), "p999_ms": r.get("p99.9"),
            "max_ms": r.get("max"), "completed": r.get("completed"), "bench_seconds": r.get("seconds"),
            "wall_s": round(wall, 3), "cpu_ticks": ticks, "cpu_ticks_whole": wticks,
            "served": served, "cpu_us_per_req": ticks / bl.CLK_TCK * 1e6 / denom,
            "cpu_util": ticks / bl.CLK_TCK / wall if wall > 0 else None,
            "client_cpu_util": client_cpu / wall if wall > 0 else None,
            "other_cpu_util": round(other, 3),
            "rss_kb": rss, "error_replies": err_delta, "bench_rc": rc,
        }
        self.records.append(rec)
        print(f"    {test.name:4s} {rec['rps'] or 0:>12,.0f} req/s  p50 {rec['p50_ms']} "
              f"p99 {rec['p99_ms']} p99.9 {rec['p999_ms']} ms  "
              f"CPU {rec['cpu_us_per_req']:.3f} us/req (server {rec['cpu_util']:.0%}, "
              f"client {rec['client_cpu_util'] or 0:.0%})  "
              f"RSS {rss / 1024:.1f} MB", flush=True)

    def run_mem(self, mu: MemUnit, spec: bl.ServerSpec, rnd: int):
        srv = bl.Server(spec, self.workdir)
        self.check_pinning(srv)
        try:
            c = srv.client()
            try:
                c.call("PING")
                time.sleep(0.3)
                rss0 = srv.rss_kb()
                used0 = int(c.info("memory").get("used_memory", 0))
                t = bl.load_keys(srv.port, mu.keys, mu.value_size, ttl=mu.ttl)
                srv.check_alive("loading")
                time.sleep(1.0)
                rss1 = srv.rss_kb()
                used1 = int(c.info("memory").get("used_memory", 0))
                dbs = c.call("DBSIZE")
                ttl_probe = c.call("TTL", bl.key_name(mu.keys // 2))
            finally:
                c.close()
            if dbs != mu.keys:
                self.note_problem(f"{spec.label} {mu.id}: DBSIZE {dbs}, expected {mu.keys}")
            want_ttl = mu.ttl is not None
            if want_ttl != (isinstance(ttl_probe, int) and ttl_probe > 0):
                self.note_problem(f"{spec.label} {mu.id}: TTL of a loaded key is {ttl_probe}")
            rec = {
                "server": spec.name, "round": rnd, "unit": mu.id, "workload": "w6",
                "keys": mu.keys, "value_size": mu.value_size, "ttl": mu.ttl,
                "rss_empty_kb": rss0, "rss_kb": rss1, "dbsize": dbs,
                "bytes_per_key": (rss1 - rss0) * 1024 / mu.keys,
                "used_memory_per_key": (used1 - used0) / mu.keys,
                "load_s": round(t, 2),
            }
            self.records.append(rec)
            print(f"    {mu.keys} keys{' +TTL' if mu.ttl else ''}: RSS {rss0 / 1024:.1f} -> "
                  f"{rss1 / 1024:.1f} MB = {rec['bytes_per_key']:.1f} B/key "
                  f"(used_memory {rec['used_memory_per_key']:.1f} B/key), loaded in {t:.1f}s",
                  flush=True)
        finally:
            alive = srv.alive()
            rc = srv.shutdown()
            if not alive or rc not in (0, None):
                self.note_problem(f"{spec.label} {mu.id} round {rnd}: exit code {rc}; log tail:\n"
                                  f"{srv.log_tail()}")
            if not self.args.keep_logs:
                shutil.rmtree(srv.dir, ignore_errors=True)

    def warm_up(self):
        for spec in self.specs:
            srv = bl.Server(spec, self.workdir)
            try:
                bl.run_redis_benchmark(self.args.redis_benchmark, srv.port,
                                       ["-c", "50", "-n", "100000", "-t", "set,get", "-P", "4"],
                                       timeout=60)
            finally:
                srv.shutdown()
                shutil.rmtree(srv.dir, ignore_errors=True)

    def wait_quiet(self, limit: float = 0.3, max_wait: float = 180.0):
        """Before a pair of runs: wait (up to max_wait) until other processes use
        less than `limit` of a core, so that a build or test run elsewhere on
        the machine does not land in the measurement."""
        # At most max_wait per pair and self.wait_budget seconds over the whole run.
        start = time.monotonic()
        deadline = start + min(max_wait, max(0.0, self.wait_budget))
        try:
            self._wait_until(limit, deadline, max_wait)
        finally:
            self.wait_budget -= time.monotonic() - start

    def _wait_until(self, limit, deadline, max_wait):
        said = False
        while True:
            b0 = bl.read_busy_ticks()
            time.sleep(0.3)
            used = (bl.read_busy_ticks() - b0) / bl.CLK_TCK / 0.3
            if used < limit:
                return
            if time.monotonic() > deadline:
                print(f"    machine still busy ({used:.1f} cores); not waiting longer", flush=True)
                return
            if not said:
                print(f"    machine busy ({used:.1f} cores used by other processes); waiting",
                      flush=True)
                said = True
            time.sleep(2)

    def run_pair(self, u, order, rnd):
        if self.args.wait_quiet:
            self.wait_quiet()
        for spec in order:
            if isinstance(u, MemUnit) and spec.name == "null":
                continue   # the null server stores nothing: no memory workload
            print(f"  [{u.id}] {spec.label}", flush=True)
            try:
                if isinstance(u, MemUnit):
                    self.run_mem(u, spec, rnd)
                else:
                    self.run_unit(u, spec, rnd)
            except bl.BenchError as e:
                self.note_problem(f"{spec.label} {u.id} round {rnd}: {e}")

    def order(self, rnd: int) -> list:
        """Round rnd's order: the servers rotated by rnd, so each takes each
        place in turn (with two servers, A B then B A)."""
        k = rnd % len(self.specs)
        return self.specs[k:] + self.specs[:k]

    def run(self, units, mems, rounds):
        if rounds > 1:
            print("== warm-up (not recorded)", flush=True)
            self.warm_up()
        for rnd in range(rounds):
            order = self.order(rnd)
            print(f"== round {rnd + 1}/{rounds}: order {' then '.join(s.label for s in order)}",
                  flush=True)
            for u in units + mems:
                self.run_pair(u, order, rnd)
        # Runs disturbed by other processes are left out of the medians; make
        # up for them with extra rounds of the units concerned.
        want = min(3, rounds)
        for extra in range(self.args.max_extra if rounds > 1 else 0):
            clean = clean_rounds(self.records)
            short = [u for u in units if len(clean.get(u.id, ())) < want]
            if not short:
                break
            rnd = rounds + extra
            order = self.order(rnd)
            print(f"== extra round {extra + 1} for {', '.join(u.id for u in short)} "
                  f"(fewer than {want} undisturbed rounds)", flush=True)
            for u in short:
                self.run_pair(u, order, rnd)


# --------------------------------------------------------------------------
# Aggregation and output
# --------------------------------------------------------------------------

METRICS = [  # key, label, format, better
    ("rps", "requests/s", "rate", "higher"),
    ("cpu_us_per_req", "server CPU µs/request", "f3", "lower"),
    ("p50_ms", "p50 latency (ms)", "f3", "lower"),
    ("p99_ms", "p99 latency (ms)", "f3", "lower"),
    ("p999_ms", "p99.9 latency (ms)", "f3", "lower"),
    ("rss_kb", "server RSS after the test (MB)", "mb", "lower"),
    ("cpu_util", "server CPU busy (share of one core)", "pct", "info"),
    ("client_cpu_util", "redis-benchmark CPU busy (share of one core)", "pct", "info"),
]


BUSY = 0.15   # share of a core used by other processes that disqualifies a run


def clean_rounds(records: list[dict]) -> dict[str, set]:
    """unit -> rounds in which Peregrine and Redis were both measured and no
    measurement of the unit (the null server's included) was disturbed by
    other processes."""
    ok: dict = {}
    servers: dict = {}
    for r in records:
        k = (r["unit"], r["round"])
        ok[k] = ok.get(k, True) and (r.get("other_cpu_util") or 0) <= BUSY
        servers.setdefault(k, set()).add(r["server"])
    out: dict = {}
    for (unit, rnd), good in ok.items():
        if good and {"peregrine", "redis"} <= servers[(unit, rnd)]:
            out.setdefault(unit, set()).add(rnd)
    return out


def aggregate(records: list[dict]) -> dict:
    """{(unit, test): {server: {metric: (median, min, max, count)}, "_rounds": (used, total)}}
    Medians over the undisturbed rounds when there are at least two of them,
    else over every round."""
    clean = clean_rounds(records)
    all_rounds: dict = {}
    for r in records:
        all_rounds.setdefault(r["unit"], set()).add(r["round"])
    use = {u: (clean.get(u, set()) if len(clean.get(u, ())) >= 2 else rs)
           for u, rs in all_rounds.items()}
    groups: dict = {}
    for r in records:
        if r["round"] not in use[r["unit"]]:
            continue
        key = (r["unit"], r.get("test", "mem"))
        groups.setdefault(key, {}).setdefault(r["server"], []).append(r)
    out = {}
    for key, by_server in groups.items():
        out[key] = {}
        for server, recs in by_server.items():
            m = {}
            for field_ in set().union(*[r.keys() for r in recs]):
                vals = [r.get(field_) for r in recs]
                nums = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
                if nums and len(nums) == len([v for v in vals if v is not None]):
                    m[field_] = (bl.median(nums), min(nums), max(nums), len(nums))
            out[key][server] = m
        out[key]["_rounds"] = (len(use[key[0]]), len(all_rounds[key[0]]))
    return out


def fmt(v, kind):
    if v is None:
        return "—"
    if kind == "rate":
        if v >= 1e6:
            return f"{v / 1e6:.2f}M"
        return f"{v / 1e3:.1f}K"
    if kind == "mb":
        return f"{v / 1024:.1f}"
    if kind == "pct":
        return f"{v * 100:.0f}%"
    if kind == "f1":
        return f"{v:.1f}"
    if kind == "f3":
        if v >= 100:
            return f"{v:.0f}"
        if v >= 10:
            return f"{v:.1f}"
        return f"{v:.3f}"
    return str(v)


def cell(stats, metric, kind):
    if not stats or metric not in stats:
        return "—"
    med, lo, hi, cnt = stats[metric]
    s = fmt(med, kind)
    if cnt > 1 and med and kind != "pct":
        spread = (hi - lo) / 2 / abs(med) * 100
        if spread >= 0.5:
            s += f" ±{spread:.0f}%"
    return s


def med(agg_entry, server, metric):
    """The median of metric for server in an aggregate() entry, or None."""
    return agg_entry.get(server, {}).get(metric, (None,))[0]


def ratio(agg_entry, metric):
    p, r = med(agg_entry, "peregrine", metric), med(agg_entry, "redis", metric)
    if p is None or not r:
        return None
    return p / r


def fratio(x):
    return "—" if x is None else f"{x:.2f}"


def write_docs(runner: Runner, agg: dict, meta: dict, units, mems, docs: Path, plots: list[str]):
    L = []
    L.append("# Benchmarks: Peregrine vs Redis")
    L.append("")
    L.append(f"Generated by `make bench` (`bench/run_bench.py`) on {meta['date']}, "
             f"{meta['rounds']} rounds, {meta['duration_min']:.1f} minutes, {meta['clients']} clients. "
             "Raw per-run measurements: `bench/results/bench.json`. "
             "Every figure is the **median over rounds**; ±x% is half the range over rounds "
             "relative to the median (omitted when under 0.5%). The ratio is "
             "Peregrine / Redis: above 1 is better for Peregrine in requests/s, below 1 is "
             "better in everything else.")
    L.append("")
    L.append("## Machine and software")
    L.append("")
    m = meta["machine"]
    L.append(f"- CPUs (`nproc`): {m.get('nproc')}; model (`lscpu`): {m.get('cpu', '?')}; "
             f"kernel {m.get('kernel')}; memory {m.get('memory', '?')}. A shared, noisy VM: "
             "absolute figures move from run to run, the ratios within one run hold.")
    L.append(f"- Peregrine: `{meta['peregrine_version']}`, HEAD {meta['git']}, binary "
             f"`{meta['peregrine_binary']}` (sha256 {meta['peregrine_sha256']}…, copied before the "
             "run so a rebuild cannot change it mid-run).")
    L.append(f"- Redis: `{meta['redis_version']}` (Debian).")
    L.append(f"- Load generator: `{meta['benchmark_version']}` (Debian redis-tools), one thread.")
    if meta.get("null_server"):
        L.append(f"- Null server (the ceiling): `bench/null_server.cc` (sha256 "
                 f"{meta['null_server'].get('source_sha256', '?')}…), built with "
                 f"`{meta['null_server'].get('compile', '?')}`.")
    L.append("")

    # Summary
    L.append("## Summary")
    L.append("")
    L.append("The null server is the ceiling of this machine and load generator (see *Method*); "
             "it stores nothing, so its GETs answer nil.")
    L.append("")
    L.append("| workload | test | Peregrine req/s | Redis req/s | ratio | null req/s | "
             "Peregrine CPU µs/req | Redis CPU µs/req | ratio | null CPU µs/req | "
             "Peregrine p99 ms | Redis p99 ms | ratio |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for u in units:
        for t in u.tests:
            e = agg.get((u.id, t.name), {})
            p, r, z = e.get("peregrine"), e.get("redis"), e.get("null")
            L.append(f"| {u.workload} | P{u.pipeline} {t.name} | "
                     f"{cell(p, 'rps', 'rate')} | {cell(r, 'rps', 'rate')} | {fratio(ratio(e, 'rps'))} | "
                     f"{cell(z, 'rps', 'rate')} | "
                     f"{cell(p, 'cpu_us_per_req', 'f3')} | {cell(r, 'cpu_us_per_req', 'f3')} | "
                     f"{fratio(ratio(e, 'cpu_us_per_req'))} | {cell(z, 'cpu_us_per_req', 'f3')} | "
                     f"{cell(p, 'p99_ms', 'f3')} | {cell(r, 'p99_ms', 'f3')} | {fratio(ratio(e, 'p99_ms'))} |")
    for mu in mems:
        e = agg.get((mu.id, "mem"), {})
        p, r = e.get("peregrine"), e.get("redis")
        L.append(f"| w6 | RSS bytes/key, 1M keys{'' if mu.value_size == 8 else f' × {mu.value_size:,} B'}"
                 f"{' + TTL' if mu.ttl else ''} | "
                 f"{cell(p, 'bytes_per_key', 'f1')} | {cell(r, 'bytes_per_key', 'f1')} | "
                 f"{fratio(ratio(e, 'bytes_per_key'))} | | | | | | | | |")
    L.append("")
    L.append(work_share_section(agg, units))

    # Per workload
    by_w: dict[str, list[Unit]] = {}
    for u in units:
        by_w.setdefault(u.workload, []).append(u)
    for w, us in by_w.items():
        L.append(f"## {WORKLOAD_TITLES.get(w, w)}")
        L.append("")
        L.append(NOTES.get(w, ""))
        L.append("")
        used = []
        for u in us:
            e = agg.get((u.id, u.tests[0].name), {})
            if "_rounds" in e:
                used.append(f"P{u.pipeline}: {e['_rounds'][0]} of {e['_rounds'][1]}"
                            if len(us) > 1 else f"{e['_rounds'][0]} of {e['_rounds'][1]}")
        if used:
            L.append("Rounds in the medians (undisturbed / run): " + ", ".join(used) + ".")
            L.append("")
        L.append("| pipeline | test | metric | Peregrine | Redis | Peregrine/Redis | null server |")
        L.append("|---|---|---|---|---|---|---|")
        for u in us:
            for t in u.tests:
                e = agg.get((u.id, t.name), {})
                for key, label, kind, better in METRICS:
                    L.append(f"| {u.pipeline} | {t.name} | {label} | "
                             f"{cell(e.get('peregrine'), key, kind)} | {cell(e.get('redis'), key, kind)} | "
                             f"{fratio(ratio(e, key)) if better != 'info' else ''} | "
                             f"{cell(e.get('null'), key, kind)} |")
        L.append("")
        if w == "w3" and "bench_pipeline.png" in plots:
            L.append("![throughput and CPU per request vs pipeline depth](bench_pipeline.png)")
            L.append("")
    if "bench_latency.png" in plots:
        L.append("### Latency percentiles, all workloads")
        L.append("")
        L.append("![latency percentiles](bench_latency.png)")
        L.append("")

    if mems:
        L.append(f"## {WORKLOAD_TITLES['w6']}")
        L.append("")
        L.append("A fresh server; VmRSS from `/proc/PID/status` after one PING (empty), then "
                 "1,000,000 `SET key:%012d <8 or 2,048 x> [EX 1000000]` from a Python raw-socket "
                 "loader (pipelines of 1,000, so client buffers stay small), one second of rest, "
                 "VmRSS again. bytes/key = (RSS after − RSS empty) / 1,000,000. "
                 "`INFO memory` used_memory per key is shown too; it is not comparable between "
                 "the two servers (Peregrine reports the allocator's in-use total).")
        L.append("")
        L.append("| keys | metric | Peregrine | Redis | Peregrine/Redis |")
        L.append("|---|---|---|---|---|")
        for mu in mems:
            e = agg.get((mu.id, "mem"), {})
            name = f"1M, {mu.value_size:,} B values" + (", TTL on every key" if mu.ttl else ", no TTL")
            for key, label, kind in [("bytes_per_key", "RSS bytes/key", "f1"),
                                     ("rss_empty_kb", "RSS empty (MB)", "mb"),
                                     ("rss_kb", "RSS loaded (MB)", "mb"),
                                     ("used_memory_per_key", "used_memory bytes/key", "f1")]:
                L.append(f"| {name} | {label} | {cell(e.get('peregrine'), key, kind)} | "
                         f"{cell(e.get('redis'), key, kind)} | {fratio(ratio(e, key))} |")
        L.append("")
        if "bench_memory.png" in plots:
            L.append("![bytes per key](bench_memory.png)")
            L.append("")

    L.append("## Method")
    L.append("")
    L.extend(METHOD)
    L.append("")
    L.append("## Exact commands")
    L.append("")
    L.append("`$PORT` is a free loopback port picked for each fresh server.")
    L.append("")
    L.append("```sh")
    L.append(f"# the whole benchmark (this run: {meta['duration_min']:.0f} minutes)")
    L.append("make bench        # = python3 bench/run_bench.py build/release/peregrine")
    L.append("# servers (one fresh process per run, in a temporary directory)")
    for k in ("server:peregrine", "server:redis", "server:null"):
        if k in runner.commands:
            L.append(runner.commands[k][0])
    if "server:null" in runner.commands and meta.get("null_server"):
        L.append("# the null server is compiled by the harness when missing or older than its source:")
        L.append("# " + meta["null_server"].get("compile", ""))
    L.append("# load generator, one invocation per test (after seeding where stated)")
    for u in units:
        for t in u.tests:
            k = f"{u.id}:{t.name}"
            if k in runner.commands:
                L.append(runner.commands[k][0])
    L.append("```")
    L.append("")
    L.append("Seeding (workloads 1–4; not the null server, which stores nothing) and the memory "
             "loads use `bench/benchlib.py:load_keys`: "
             "`SET key:%012d <value>` for every key of the keyspace — the same names "
             "redis-benchmark's `-r` generates — in pipelines of 1,000 over one connection, "
             "so every GET hits.")
    L.append("")
    L.append("## Problems seen in this run")
    L.append("")
    busy = runner.busy_notes
    if busy:
        L.append(f"- Disturbed measurements (another process used more than {BUSY:.0%} of a core "
                 f"during the test; the round is left out of that workload's medians): {len(busy)}.")
    if runner.problems:
        for pr in runner.problems:
            L.append("- " + pr.replace("\n", " ").replace("|", "\\|")[:1000])
    else:
        if busy:
            L.append("")
        L.append(("Nothing else: every" if busy else "None: every") + " redis-benchmark invocation exited 0 with nothing on its error "
                 "output, every request was counted by the server's `INFO commandstats`, no "
                 "error replies, no crash, every server exited 0 on `SHUTDOWN NOSAVE`.")
    L.append("")

    text = "\n".join(L)
    old_instr = old_threads = ""
    if docs.exists():
        _, old_instr = bl.split_instr_section(docs.read_text())
        _, old_threads = bl.split_section(docs.read_text(), bl.THREADS_BEGIN, bl.THREADS_END)
    if old_threads:
        text = text.rstrip() + "\n\n" + old_threads.strip() + "\n"
    if old_instr:
        text = text.rstrip() + "\n\n" + old_instr.strip() + "\n"
    else:
        text = (text.rstrip() + "\n\n" + bl.INSTR_BEGIN + "\n## Instructions per request\n\n"
                "Not measured yet: run `make bench-instr` (`bench/instr.py`).\n" + bl.INSTR_END + "\n")
    docs.write_text(text)


METHOD = [
    "- **Alternation.** Every run starts a fresh server on a free 127.0.0.1 port in an empty "
    "temporary directory. For each workload, the servers are run back to back — Peregrine, Redis "
    "and the null server for workloads 1–5, Peregrine and Redis for workload 6 — in an order "
    "rotated every round (Peregrine Redis null, then Redis null Peregrine, then null Peregrine "
    "Redis, …), so each server takes each place in turn and slow drift of the machine hits all "
    "alike. Medians over rounds are reported.",
    "- **The ceiling: a null server.** `bench/null_server.cc`, compiled by the harness with "
    "`g++ -O2 -std=c++20` (into `build/null-server/`, when missing or older than its source), is "
    "the null server of `/work/shared/MEASURING.md`: one thread, an epoll loop, reads of up to "
    "256 KB, exact framing of every RESP request, replies batched into one write per client per "
    "loop iteration, and nothing stored: `+OK` to SET (and any other write), `$-1` to GET, "
    "`+PONG` to PING, and redis-benchmark's two start-up `CONFIG GET`s answered. It counts calls "
    "per command and reports them in `INFO`, so the served-requests check applies to it too. "
    "A real server should not use less CPU per request on this machine with this load "
    "generator; but the null server is never the bottleneck (its core is about half idle, "
    "redis-benchmark's saturated), so it finds fewer ready clients per wake-up than a busy "
    "server, and at pipeline 1, where the kernel dominates, single rounds of the three overlap. "
    "It is not seeded; **its GETs answer a value of the workload's size** (`--get-bulk N`, N the "
    "seeded value size; nil in workload 5, which has no GETs), copied into its reply buffer from "
    "one buffer that stays in cache: its figures are a floor for receiving requests and sending "
    "replies of that size, not for fetching values from memory.",
    "- **Pinning.** The server runs under `taskset -c 0`; redis-benchmark and the Python "
    "seeding/loading client under CPU 1 (the harness pins itself to CPU 1).",
    "- **Servers.** `peregrine --port $PORT --bind 127.0.0.1 --threads 1` (one worker thread, "
    "as Redis runs commands on one; it has no persistence), `redis-server --port $PORT --bind "
    "127.0.0.1 --save '' --appendonly no` and `null_server --port $PORT --bind 127.0.0.1 "
    "[--get-bulk N]`.",
    "- **Load.** redis-benchmark 7.0 with 50 clients, one test per invocation so each has its own "
    "CPU reading; default output is parsed: requests/s from the throughput summary, p50 and p99 "
    "from the latency summary (exact HDR values), p99.9 from the percentile distribution (the "
    "first point at or above 99.9%, i.e. at histogram resolution). With pipelining, "
    "redis-benchmark's latency is that of a whole pipeline round trip.",
    "- **Server CPU per request** = Δ(utime + stime) summed over `/proc/PID/task/*/stat` around "
    "the redis-benchmark invocation, divided by the requests the server counted for that command "
    "(Δ calls in `INFO commandstats`, which is checked to equal `-n`). It includes the server's "
    "handling of the 50 connections' set-up, which is negligible at these request counts. The "
    "clock tick is 10 ms, so each Peregrine or Redis figure has ±0.5% resolution or better at "
    "these run lengths; the null server uses far less CPU, so its figures are coarser (about 30 "
    "ticks, ±3%, at pipeline 100).",
    "- **RSS** is VmRSS from `/proc/PID/status` right after the test.",
    "- **Who is the bottleneck.** Each table also gives how busy the server's core and the "
    "load generator's core were (CPU seconds / wall seconds of the invocation; the client's from "
    "`getrusage(RUSAGE_CHILDREN)`). Without pipelining redis-benchmark's core is the limit "
    "(≈ 100% busy) and requests/s ratios stay near 1; with pipelining the server's core is. "
    "Server CPU per request shows what each server costs in either case.",
    "- **Warm-up.** One short, unrecorded run against each server precedes round 1.",
    "- **A quiet machine.** Before each pair of runs the harness waits until other processes use "
    "less than 30% of a core. During each test it measures the CPU used by anything other than the "
    "server and redis-benchmark (from `/proc/stat`); a round in which that exceeds 15% of a core "
    "for any server is left out of the medians (when at least two clean rounds remain) and the "
    "workload gets an extra round, up to three.",
    "- **Errors.** Each invocation's output is scanned for error lines, its exit code checked, and "
    "the server's error-reply counter compared before and after; anything found is listed under "
    "*Problems seen*.",
]


NOTES = {
    "w1": "Keyspace 100K pre-seeded with 8-byte values; `SET` then `GET` on the same server, "
          "`-d 8 -r 100000`, no pipelining. This is the kernel-bound case: one read and one write "
          "per request.",
    "w2": "200K keys pre-seeded with 64-byte values; `-P 16 -d 64 -r 200000`.",
    "w3": "A fresh server per depth, 1M keys pre-seeded with 8-byte values; `-P {1,10,100,500} "
          "-d 8 -r 1000000`. Request counts grow with depth so each test lasts a few seconds.",
    "w4": "100K keys pre-seeded with 2,048-byte values; `-P 64 -d 2048 -r 100000` (≈ 200 MB of "
          "data, replies and requests of 2 KB).",
    "w7": "20K keys pre-seeded with 16,384-byte values; `-P 16 -d 16384 -r 20000` (≈ 330 MB of data; "
          "a pipeline of SETs is 256 KB of requests, of GETs 256 KB of replies).",
    "w8": "A fresh server per size and depth: 2,000 keys pre-seeded with 100,000-byte values, or 200 keys "
          "with 1,000,000-byte values (≈ 200 MB either way); `-P {1,8} -d {100000,1000000} -r {2000,200}`. "
          "Values this large are read into blocks of their own and sent from them (docs/large-values.md).",
    "w5": "No seeding; `-P 16 -r 1000000 SET key:some-long-prefix-to-make-it-over-40-bytes:__rand_int__ "
          "<128 × 'v'>`. redis-benchmark 7.0 replaces `__rand_int__` in a custom command with a "
          "12-digit zero-padded random number below `-r`, so keys are 58 bytes. The command is "
          "counted as `set` in commandstats.",
}


# The null-server ceiling that /work/shared/MEASURING.md measured with memtier_benchmark
# (1 thread, 50 clients), server CPU µs/request.  Only quoted as a note: the work
# share uses the null server measured in the same run with redis-benchmark.
MEMTIER_CEILING_US = {1: 8.5, 16: 0.62, 100: 0.15}

KERNEL_BOUND = 0.15   # Redis − ceiling below this share of Redis's CPU/req: the share is mostly noise


def work_share(agg_entry):
    """(Peregrine − null) / (Redis − null) of the median CPU µs/request, or None."""
    p, r, c = (med(agg_entry, s, "cpu_us_per_req") for s in ("peregrine", "redis", "null"))
    if None in (p, r, c) or r - c <= 0:
        return None
    return (p - c) / (r - c)


def work_share_section(agg, units) -> str:
    rows = []
    for u in units:
        for t in u.tests:
            e = agg.get((u.id, t.name), {})
            p, r, c = (med(e, s, "cpu_us_per_req") for s in ("peregrine", "redis", "null"))
            if None in (p, r, c):
                continue
            gap = r - c
            share = work_share(e)
            notes = []
            if gap <= KERNEL_BOUND * r:
                notes.append("kernel-bound: Redis is within "
                             f"{gap / r:.0%} of the ceiling, the share is mostly noise")
            if share is not None and share < 0:
                notes.append("below the ceiling: the null server copies each value into its reply "
                             "buffer, Peregrine sends it from where it is")
            rows.append(f"| {u.id.replace('_', ' ')} | {u.pipeline} | {t.name} | {p:.3f} | "
                        f"{r:.3f} | {c:.3f} | {fratio(share)} | {'; '.join(notes)} |")
    memtier = ", ".join(f"P{k} {v} µs" for k, v in MEMTIER_CEILING_US.items())
    if not rows:
        return ("**Work share** (MEASURING.md): not computed — this run has no null-server "
                f"measurements. (MEASURING.md's memtier_benchmark ceiling: {memtier}.)\n")
    return "\n".join([
        "**Work share** (MEASURING.md): (Peregrine CPU/req − ceiling) / (Redis CPU/req − ceiling), "
        "with the ceiling the null server's CPU/req measured in this run, on the same workload "
        "with the same redis-benchmark invocation (medians over rounds). Redis = 1, null server "
        "= 0; the aim is ≤ 0.25. The null server answers every GET with a value of the workload's "
        "size (`--get-bulk`, from one buffer that stays in cache), so the ceiling includes sending "
        "the values but not fetching them from memory.",
        "",
        "| run | pipeline | test | Peregrine µs/req | Redis µs/req | ceiling µs/req | work share | note |",
        "|---|---|---|---|---|---|---|---|",
        *rows, "",
        f"For reference only: MEASURING.md's ceiling measured with memtier_benchmark (1 thread, "
        f"50 clients) was {memtier} per request; redis-benchmark drives the null server harder, "
        "so that ceiling is not used here.", ""])


# --------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------

COLORS = {"peregrine": "#1f77b4", "redis": "#d62728", "null": "#7f7f7f"}
LABELS = {"peregrine": "Peregrine", "redis": "Redis 7.0", "null": "null server (ceiling)"}


def make_plots(agg, units, mems, docs_dir: Path) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter, FixedLocator
    made = []

    # 1. Pipeline sweep
    sweep = [u for u in units if u.workload == "w3"]
    if sweep:
        depths = [u.pipeline for u in sweep]
        fig, axes = plt.subplots(1, 2, figsize=(12, 5))
        for server in ("peregrine", "redis", "null"):
            for test, style in (("SET", "-o"), ("GET", "--s")):
                rps = [med(agg.get((u.id, test), {}), server, "rps") for u in sweep]
                cpu = [med(agg.get((u.id, test), {}), server, "cpu_us_per_req") for u in sweep]
                if all(v is None for v in cpu):
                    continue
                lab = f"{LABELS[server]} {test}" + (" (nil replies)" if server == "null" and test == "GET" else "")
                axes[0].plot(depths, [x / 1e6 if x else None for x in rps], style,
                             color=COLORS[server], label=lab, lw=2, ms=7)
                axes[1].plot(depths, cpu, style, color=COLORS[server], label=lab, lw=2, ms=7)
        axes[0].set_title("Throughput vs pipeline depth\n(redis-benchmark, 50 clients, 8 B values, 1M keys)")
        axes[0].set_ylabel("million requests / s (median)")
        axes[1].set_title("Server CPU per request vs pipeline depth")
        axes[1].set_ylabel("server CPU µs / request (median, log scale)")
        axes[1].set_yscale("log")
        axes[1].yaxis.set_major_locator(FixedLocator([0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 20]))
        axes[1].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axes[1].yaxis.set_minor_formatter(NullFormatter())
        lo = axes[1].get_ylim()[0]
        axes[1].set_ylim(bottom=max([t for t in (0.05, 0.1, 0.2, 0.3, 0.5, 1) if t <= lo] or [lo]))
        for ax in axes:
            ax.set_xscale("log")
            ax.set_xticks(depths)
            ax.set_xticklabels([str(d) for d in depths])
            ax.set_xlabel("pipeline depth (-P)")
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=9)
        axes[0].set_ylim(bottom=0)
        fig.tight_layout()
        fig.savefig(docs_dir / "bench_pipeline.png", dpi=110)
        plt.close(fig)
        made.append("bench_pipeline.png")

    # 2. Latency percentiles
    rows = []
    for u in units:
        for t in u.tests:
            e = agg.get((u.id, t.name), {})
            if "peregrine" in e or "redis" in e:
                label = {"w1": "w1", "w2": "w2", "w4": "w4 2KB", "w5": "w5 longkey", "w7": "w7 16KB",
                         "w8": u.id.replace("w8_", "w8 ").replace("_p1", "").replace("_p8", "").upper()
                         .replace("W8", "w8")}.get(u.workload, u.workload)
                rows.append((f"{label} P{u.pipeline} {t.name}", e))
    if rows:
        import numpy as np
        fig, axes = plt.subplots(1, 3, figsize=(15, 0.42 * len(rows) + 2), sharey=True)
        y = np.arange(len(rows))
        h = 0.38
        for ax, (metric, title) in zip(axes, [("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")]):
            for i, server in enumerate(("peregrine", "redis")):
                vals = [med(e, server, metric) or 0 for _, e in rows]
                ax.barh(y + (i - 0.5) * h, vals, height=h, color=COLORS[server], label=LABELS[server])
            ax.set_xscale("log")
            ax.set_title(f"{title} latency (ms, log scale)")
            ax.grid(True, axis="x", which="major", alpha=0.3)
            ax.xaxis.set_major_locator(FixedLocator([0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        axes[0].set_yticks(y)
        axes[0].set_yticklabels([r[0] for r in rows])
        axes[0].invert_yaxis()
        axes[0].legend(loc="lower right", fontsize=9)
        fig.suptitle("redis-benchmark latency percentiles, 50 clients (median over rounds; "
                     "with -P, latency of a whole pipeline)")
        fig.tight_layout()
        fig.savefig(docs_dir / "bench_latency.png", dpi=100)
        plt.close(fig)
        made.append("bench_latency.png")

    # 3. Memory
    if mems:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        cats = [f"1M keys, {mu.value_size:,} B values\n" + ("TTL on every key" if mu.ttl else "no TTL")
                for mu in mems]
        import numpy as np
        x = np.arange(len(mems))
        w = 0.36
        for i, server in enumerate(("peregrine", "redis")):
            vals = [med(agg.get((mu.id, "mem"), {}), server, "bytes_per_key") or 0 for mu in mems]
            bars = ax.bar(x + (i - 0.5) * w, vals, width=w, color=COLORS[server], label=LABELS[server])
            for b, v in zip(bars, vals):
                ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{v:.0f}", ha="center",
                        va="bottom", fontsize=10)
        ax.set_xticks(x)
        ax.set_xticklabels(cats)
        ax.set_ylabel("RSS bytes per key")
        ax.set_title("Memory: (RSS loaded − RSS empty) / keys")
        ax.legend()
        ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
        ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(docs_dir / "bench_memory.png", dpi=110)
        plt.close(fig)
        made.append("bench_memory.png")
    return made


# --------------------------------------------------------------------------

def print_summary(agg, units, mems):
    print("\n" + "=" * 132)
    print(f"{'run':10s} {'test':4s} {'Peregrine req/s':>16s} {'Redis req/s':>12s} {'ratio':>6s} "
          f"{'null req/s':>12s} {'P CPU us':>9s} {'R CPU us':>9s} {'ratio':>6s} {'null CPU us':>11s} "
          f"{'share':>6s} {'P p99':>7s} {'R p99':>7s} {'ratio':>6s}")
    def f(v, spec):
        return format(v, spec) if v is not None else "-".rjust(int(spec.split(",")[0].split(".")[0]))
    for u in units:
        for t in u.tests:
            e = agg.get((u.id, t.name), {})
            print(f"{u.id:10s} {t.name:4s} {f(med(e, 'peregrine', 'rps'), '16,.0f')} {f(med(e, 'redis', 'rps'), '12,.0f')} "
                  f"{fratio(ratio(e, 'rps')):>6s} {f(med(e, 'null', 'rps'), '12,.0f')} "
                  f"{f(med(e, 'peregrine', 'cpu_us_per_req'), '9.3f')} {f(med(e, 'redis', 'cpu_us_per_req'), '9.3f')} "
                  f"{fratio(ratio(e, 'cpu_us_per_req')):>6s} {f(med(e, 'null', 'cpu_us_per_req'), '11.3f')} "
                  f"{fratio(work_share(e)):>6s} "
                  f"{f(med(e, 'peregrine', 'p99_ms'), '7.3f')} {f(med(e, 'redis', 'p99_ms'), '7.3f')} "
                  f"{fratio(ratio(e, 'p99_ms')):>6s}")
    for mu in mems:
        e = agg.get((mu.id, "mem"), {})
        p, r = med(e, "peregrine", "bytes_per_key"), med(e, "redis", "bytes_per_key")
        if p is not None and r is not None:
            print(f"{mu.id:10s} mem  bytes/key Peregrine {p:.1f}  Redis {r:.1f}  "
                  f"ratio {fratio(ratio(e, 'bytes_per_key'))}")


def regenerate(args) -> int:
    data = json.loads(Path(args.from_json).read_text())
    meta = data["meta"]
    units, mems = full_plan(meta.get("scale", 1.0))
    present = {r["unit"] for r in data["records"]}
    units = [u for u in units if u.id in present]
    mems = [m for m in mems if m.id in present]
    runner = Runner(args, [], "")
    runner.records, runner.problems, runner.commands = data["records"], data["problems"], data["commands"]
    runner.busy_notes = data.get("busy_notes", [])
    agg = aggregate(runner.records)
    docs = Path(args.docs)
    plots = make_plots(agg, units, mems, docs.parent)
    write_docs(runner, agg, meta, units, mems, docs, plots)
    print_summary(agg, units, mems)
    print(f"wrote {docs} and {', '.join(plots)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE),
                    help="Peregrine binary (default: build/release/peregrine)")
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--no-null-server", dest="null_server", action="store_false",
                    help="leave out the null server (the ceiling; compiled from bench/null_server.cc)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated run ids or workloads (w1..w6, w3_p100)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every -n by this")
    ap.add_argument("--clients", type=int, default=CLIENTS)
    ap.add_argument("--test-timeout", type=float, default=180.0, help="seconds per redis-benchmark run")
    ap.add_argument("--smoke", action="store_true", help="tiny CI check: one workload, once per server, no files written")
    ap.add_argument("--docs", default=str(bl.REPO / "docs" / "benchmarks.md"))
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "bench.json"))
    ap.add_argument("--no-docs", action="store_true", help="do not write docs/ (still writes JSON)")
    ap.add_argument("--keep-logs", action="store_true")
    ap.add_argument("--no-wait-quiet", dest="wait_quiet", action="store_false",
                    help="do not wait for other processes to go quiet before each pair of runs")
    ap.add_argument("--max-extra", type=int, default=3,
                    help="extra rounds for units with fewer than 3 undisturbed rounds")
    ap.add_argument("--from-json", metavar="FILE",
                    help="do not measure: rewrite docs/ and the plots from a saved bench.json")
    args = ap.parse_args(argv)

    if args.from_json:
        return regenerate(args)

    try:
        pbin, (args.redis_server, args.redis_benchmark) = bl.find_binaries(
            args.peregrine, [args.redis_server, args.redis_benchmark], "redis-server redis-tools")
    except bl.BenchError as e:
        print(f"run_bench: {e}", file=sys.stderr)
        return 2

    null_bin = None
    if args.null_server:
        try:
            null_bin = bl.build_null_server()
        except bl.BenchError as e:
            print(f"run_bench: {e}", file=sys.stderr)
            return 2

    machine = bl.machine_info()   # before pinning: nproc honours the affinity mask
    git_at_start = bl.git_describe()
    built = _dt.datetime.fromtimestamp(os.stat(pbin).st_mtime, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    # The harness itself (and so the Python loader and redis-benchmark) on the client CPU.
    if bl.have_cpus(bl.CLIENT_CPU, bl.SERVER_CPU):
        os.sched_setaffinity(0, {int(bl.CLIENT_CPU)})
    else:
        print("run_bench: CPUs 0 and 1 are not both available; running unpinned", file=sys.stderr)

    workdir = tempfile.mkdtemp(prefix="peregrine-bench-")
    pcopy, psha = bl.snapshot_binary(pbin, workdir)
    specs = [bl.peregrine_spec(pcopy), bl.redis_spec(args.redis_server)]
    display = {pcopy: bl.display_path(pbin)}
    null_meta = None
    if null_bin:
        ncopy, _ = bl.snapshot_binary(null_bin, workdir)
        specs.append(bl.null_spec(ncopy))
        display[ncopy] = bl.display_path(null_bin)
        null_meta = {"source_sha256": hashlib.sha256(bl.NULL_SERVER_SRC.read_bytes()).hexdigest()[:12],
                     "compile": bl.cmd_str(bl.null_server_compile_argv(bl.display_path(null_bin)))
                     .replace(str(bl.REPO) + "/", "")}
    if args.smoke:
        units, mems = smoke_plan()
        rounds = 1
        args.wait_quiet = False   # CI: never wait for the machine
    else:
        units, mems = full_plan(args.scale)
        rounds = args.rounds
        if args.only:
            sel = {s.strip() for s in args.only.split(",") if s.strip()}
            units = [u for u in units if u.id in sel or u.workload in sel]
            mems = [m for m in mems if m.id in sel or m.workload in sel]

    runner = Runner(args, specs, workdir, display)
    t0 = time.monotonic()
    try:
        runner.run(units, mems, rounds)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    duration = time.monotonic() - t0
    agg = aggregate(runner.records)
    print_summary(agg, units, mems)
    print(f"\n{len(runner.records)} measurements in {duration / 60:.1f} min; "
          f"{len(runner.problems)} problems")

    if args.smoke:
        ok = True
        for spec in specs:
            recs = [r for r in runner.records if r["server"] == spec.name]
            if len(recs) != sum(len(u.tests) for u in units):
                print(f"smoke: {spec.label}: {len(recs)} measurements, expected "
                      f"{sum(len(u.tests) for u in units)}", file=sys.stderr)
                ok = False
            for r in recs:
                bad = [k for k in ("rps", "p50_ms", "p99_ms", "p999_ms", "cpu_us_per_req", "rss_kb")
                       if r.get(k) is None]
                if bad or r["served"] != r["n"]:
                    print(f"smoke: {spec.label} {r['test']}: missing {bad}, served {r['served']}/{r['n']}",
                          file=sys.stderr)
                    ok = False
        if runner.problems:
            ok = False
        print("smoke: " + ("OK" if ok else "FAILED"))
        return 0 if ok else 1

    meta = {
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "rounds": rounds, "duration_min": duration / 60,
        "machine": machine,
        "peregrine_version": bl.version_of([pbin, "--version"]),
        "peregrine_sha256": psha,
        "peregrine_binary": bl.display_path(pbin),
        "git": f"{git_at_start} at the start of the run; binary built {built}",
        "redis_version": bl.version_of([args.redis_server, "--version"]),
        "benchmark_version": bl.version_of([args.redis_benchmark, "--version"]),
        "clients": args.clients, "scale": args.scale,
        "null_server": null_meta,
    }
    jpath = Path(args.json)
    jpath.parent.mkdir(parents=True, exist_ok=True)
    jpath.write_text(json.dumps({"meta": meta, "records": runner.records, "problems": runner.problems,
                                 "busy_notes": runner.busy_notes,
                                 "commands": runner.commands}, indent=1))
    print(f"raw results: {jpath}")
    if not args.no_docs:
        docs = Path(args.docs)
        docs.parent.mkdir(parents=True, exist_ok=True)
        try:
            plots = make_plots(agg, units, mems, docs.parent)
        except ImportError as e:
            print(f"run_bench: no plots ({e}); pip install -r bench/requirements.txt", file=sys.stderr)
            plots = []
        write_docs(runner, agg, meta, units, mems, docs, plots)
        print(f"wrote {docs} and {', '.join(plots) or 'no plots'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
