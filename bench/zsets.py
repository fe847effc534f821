#!/usr/bin/env python3
"""Sorted sets (#18): Peregrine against Debian's redis-server in one run
(MEASURING.md: a fresh server per measurement, rounds interleaved, server on
CPU 0, loaders and redis-benchmark on CPU 1, medians, ratios).

Memory: RSS after loading (and a second to settle) minus RSS when empty,
per member, for
  m_zset1m  1M members of 13 bytes with random scores in one sorted set
            (ZADD, 100 pairs per command)
  m_zset10  100K sorted sets of 10 such members
Speed: redis-benchmark -t zadd and -t zpopmin (on a set filled by zadd
first) with -P 16, and on a set of 1M members (-P 16, -r 1M):
  ZADD big <random score> m:<random>    (updates and inserts)
  ZRANGEBYSCORE big <random> +inf LIMIT 0 10
  ZRANK big m:<random>
requests/s and server CPU per request, with the null server as this
machine's ceiling and the work share.
Grow stall: one sorted set grown to 4M members by ZADDs of 100, one at a
time, while another client PINGs: the slowest ZADD and PING.
Free stall: a sorted set of 10M members deleted while another client PINGs:
the DEL's time and the slowest and p99.9 PING from the DEL on for 500 ms.

    python3 bench/zsets.py [build/release/peregrine] [--rounds 2] [--quick | --smoke] [--only ids]

Writes bench/results/zsets.json and the section between the "zsets"
markers of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from containers import measure_benchmark, ratio, send_all  # noqa: E402
from lists import pings_during, quantile, run_free_stall, run_memory  # noqa: E402

BEGIN = "<!-- zsets:begin -->"
END = "<!-- zsets:end -->"


def member(i: int) -> bytes:
    return b"member:%06d" % i  # 13 bytes


def zadd_commands(n: int, key: str = "bigz"):
    """n members with random scores, 100 to a ZADD."""
    rng = random.Random(7)
    for s in range(0, n, 100):
        pairs = []
        for i in range(s, min(n, s + 100)):
            pairs += [repr(rng.random() * 1e6).encode(), member(i % 1_000_000) + (b"" if i < 1_000_000 else b"%d" % (i // 1_000_000))]
        yield bl.encode("ZADD", key, *pairs)


def load_one_zset(port: int, n: int, key: str = "bigz"):
    send_all(port, zadd_commands(n, key), 20)


def run_grow_stall(spec, workdir, n):
    """One sorted set grown to n members by ZADDs of 100, one at a time,
    while another client PINGs: the slowest ZADD and PING (a table that
    grows all at once stalls both)."""
    srv = bl.Server(spec, workdir)
    try:
        c = bl.RespClient(srv.port, timeout=120)
        cmds = list(zadd_commands(n))

        def grow():
            times = []
            for cmd in cmds:
                t = time.monotonic()
                if c.pipeline_raw(cmd, 1):
                    raise bl.BenchError("error reply while growing")
                times.append((time.monotonic() - t) * 1000)
            return sorted(times)

        try:
            times, _, window = pings_during(srv.port, grow)
        finally:
            c.close()
        return {"server": spec.name, "id": "grow", "members": n, "zadd_max_ms": times[-1],
                "zadd_p999_ms": quantile(times, 0.999), "ping_max_ms": max(window or [0]),
                "ping_p999_ms": quantile(window, 0.999), "pings": len(window)}
    finally:
        srv.shutdown()


def load_small_zsets(port: int, keys: int):
    rng = random.Random(8)

    def cmd(k):
        pairs = []
        for m in range(10):
            pairs += [repr(rng.random() * 1e6).encode(), member(k * 10 + m)]
        return bl.encode("ZADD", b"z:%08d" % k, *pairs)

    send_all(port, (cmd(k) for k in range(keys)))


MEMORY = [
    ("m_zset1m", "1M 13-byte members, random scores, one sorted set", load_one_zset, 1_000_000, 1_000_000, "bigz"),
    ("m_zset10", "100K sorted sets of 10 such members", load_small_zsets, 100_000, 1_000_000, "z:00000000"),
]
MEMORY_TARGET = {"m_zset1m": 0.45, "m_zset10": 0.85}


def speed_tests(scale: float):
    """(id, redis-benchmark args, requests, what to fill first)."""
    n = max(1000, int(1_000_000 * scale))
    big = ["-P", "16", "-r", "1000000"]
    return [
        ("p16_zadd", ["-P", "16", "-t", "zadd"], n, None),
        ("p16_zpopmin", ["-P", "16", "-t", "zpopmin"], n, "fill"),
        ("big_zadd", big + ["ZADD", "bigz", "__rand_int__", "member:__rand_int__"], n, "big"),
        ("big_zrangebyscore", big + ["ZRANGEBYSCORE", "bigz", "__rand_int__", "+inf", "LIMIT", "0", "10"],
         max(1000, n // 2), "big"),
        ("big_zrank", big + ["ZRANK", "bigz", "member:__rand_int__"], n, "big"),
    ]


# Targets (issue #18): requests/s at least, server CPU per request at most.
SPEED_TARGET = {"p16_zadd": (1.5, 0.6), "p16_zpopmin": (1.5, 0.6), "big_zadd": (None, 0.7),
                "big_zrangebyscore": (None, 0.7), "big_zrank": (None, 0.7)}


def run_speed(spec, workdir, tid, args, n, fill, rb, big_n):
    srv = bl.Server(spec, workdir)
    try:
        if spec.name == "null":
            pass
        elif fill == "fill":  # what ZPOPMIN pops (redis-benchmark's "myzset")
            bl.run_redis_benchmark(rb, srv.port, ["-c", "50", "-n", str(n), "-P", "16", "-r", "10000000",
                                                  "-t", "zadd"], 600)
        elif fill == "big":
            load_one_zset(srv.port, big_n)
        return measure_benchmark(srv, spec, tid, args, n, rb)
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    args, scale = bl.parse_bench_args(argv)
    shrink = 100 if args.smoke else 1
    big_n = 1_000_000 // shrink
    rb = "redis-benchmark"
    only = set(filter(None, args.only.split(",")))
    want = lambda tid: not only or tid in only  # noqa: E731
    records = []
    machine = bl.machine_info()
    if bl.have_cpus(bl.CLIENT_CPU, bl.SERVER_CPU):
        os.sched_setaffinity(0, {int(bl.CLIENT_CPU)})
    with tempfile.TemporaryDirectory(prefix="zsets-") as workdir:
        binary, digest = bl.snapshot_binary(args.peregrine, workdir)
        specs = [bl.peregrine_spec(binary), bl.redis_spec()]
        null = bl.null_spec(bl.build_null_server())
        for rnd in range(args.rounds):
            order = specs if rnd % 2 == 0 else specs[::-1]

            def record(r):
                r["round"] = rnd
                records.append(r)
                return r

            for mid, title, loader, arg, items, key in MEMORY:
                if want(mid):
                    for spec in order:
                        r = record(run_memory(spec, workdir, mid, loader, arg // shrink, items // shrink, key))
                        print(f"{spec.label:9s} {mid:9s} {r['bytes_per_element']:6.1f} B/member ({r['encoding']})",
                              flush=True)
            for tid, targs, n, fill in speed_tests(scale):
                if want(tid):
                    for spec in order + [null]:
                        r = record(run_speed(spec, workdir, tid, targs, n, fill, rb, big_n))
                        print(f"{spec.label:9s} {tid:18s} {r['rps'] or 0:>12,.0f} req/s "
                              f"{r['cpu_us_per_req']:.3f} us/req", flush=True)
            if want("grow") and rnd == 0:
                for spec in order:
                    r = record(run_grow_stall(spec, workdir, 4_000_000 // (shrink * (4 if args.quick else 1))))
                    print(f"{spec.label:9s} grow {r['members']:,} ZADD max {r['zadd_max_ms']:.1f} ms "
                          f"p99.9 {r['zadd_p999_ms']:.2f} ms, PING max {r['ping_max_ms']:.1f} ms "
                          f"p99.9 {r['ping_p999_ms']:.2f} ms", flush=True)
            if want("free10m") and rnd == 0:
                for spec in order:
                    r = record(run_free_stall(spec, workdir, 10_000_000 // (shrink * (5 if args.quick else 1)),
                                              load_one_zset, "bigz"))
                    print(f"{spec.label:9s} free10m DEL {r['del_ms']:.1f} ms, PING max {r['ping_max_ms']:.1f} ms "
                          f"p99.9 {r['ping_p999_ms']:.2f} ms over {r['pings']}", flush=True)
    if not args.smoke and not only:
        out = Path(bl.REPO) / "bench" / "results" / "zsets.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"records": records, "binary_sha256": digest, "machine": machine}, indent=1))
    write_report(records, args.rounds, docs=not args.no_docs and not only)
    return 0


def med(records, rid, server, metric):
    return bl.median([r.get(metric) for r in records if r["id"] == rid and r["server"] == server])


def write_report(records, rounds: int, docs: bool):
    lines = [BEGIN, "", "### Sorted sets (#18)", "",
             f"`python3 bench/zsets.py` ({rounds} rounds, medians; Redis is Debian's redis-server 7.0; "
             "Peregrine on one thread). Memory is RSS after loading minus RSS empty, per member.", "",
             "| memory | Peregrine B/member | Redis B/member | ratio | target |", "|---|---|---|---|---|"]
    for mid, title, *_ in MEMORY:
        p, r = med(records, mid, "peregrine", "bytes_per_element"), med(records, mid, "redis", "bytes_per_element")
        if p is not None and r is not None:
            lines.append(f"| {title} | {p:.1f} | {r:.1f} | {ratio(p, r)} | ≤ {MEMORY_TARGET[mid]} |")
    lines += ["", "| redis-benchmark -c 50 | Peregrine req/s | Redis req/s | ratio | null server req/s "
              "| CPU/req ratio | work share | target |", "|---|---|---|---|---|---|---|---|"]
    for tid, targs, n, _ in speed_tests(1.0):
        p, r = med(records, tid, "peregrine", "rps"), med(records, tid, "redis", "rps")
        pc, rc = med(records, tid, "peregrine", "cpu_us_per_req"), med(records, tid, "redis", "cpu_us_per_req")
        z, zc = med(records, tid, "null", "rps"), med(records, tid, "null", "cpu_us_per_req")
        if p is None or r is None:
            continue
        t_rps, t_cpu = SPEED_TARGET[tid]
        target = ", ".join(([f"≥ {t_rps}x"] if t_rps else []) + [f"CPU ≤ {t_cpu}x"])
        share = ratio(pc - zc, rc - zc) if zc is not None and pc is not None and rc is not None else "—"
        ceiling = f"{z:,.0f}" if z is not None else "—"
        lines.append(f"| {' '.join(targs)} | {bl.num(p, ',.0f')} | {bl.num(r, ',.0f')} | {ratio(p, r)} | {ceiling} | {ratio(pc, rc)} "
                     f"| {share} | {target} |")
    f = {s: [r for r in records if r["id"] == "free10m" and r["server"] == s] for s in ("peregrine", "redis")}
    if f["peregrine"] and f["redis"]:
        lines += ["", "Freeing a 10M-member sorted set (DEL) while another client PINGs:", "",
                  "| server | DEL ms | slowest PING ms | PING p99.9 ms |", "|---|---|---|---|"]
        for s, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
            r = f[s][0]
            lines.append(f"| {label} | {r['del_ms']:.1f} | {r['ping_max_ms']:.1f} | {r['ping_p999_ms']:.2f} |")
    g = {s: [r for r in records if r["id"] == "grow" and r["server"] == s] for s in ("peregrine", "redis")}
    if g["peregrine"] and g["redis"]:
        lines += ["", f"Growing one sorted set to {g['peregrine'][0]['members']:,} members by ZADDs of 100, one at "
                  "a time, while another client PINGs:", "",
                  "| server | slowest ZADD ms | ZADD p99.9 ms | slowest PING ms | PING p99.9 ms |",
                  "|---|---|---|---|---|"]
        for s, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
            r = g[s][0]
            lines.append(f"| {label} | {r['zadd_max_ms']:.1f} | {r['zadd_p999_ms']:.2f} | {r['ping_max_ms']:.1f} "
                         f"| {r['ping_p999_ms']:.2f} |")
    lines += ["", END]
    text = "\n".join(lines)
    print(text)
    if docs:
        bl.put_docs_section(BEGIN, END, text)


if __name__ == "__main__":
    sys.exit(main())
