#!/usr/bin/env python3
"""The rest of the data model (#21): Peregrine against Debian's redis-server
in one run (MEASURING.md: a fresh server per measurement, rounds
interleaved, server on CPU 0, load generator on CPU 1, medians, ratios).

  pfadd_dense_p16    redis-benchmark -c 50 -P 16 -r 1000000
                     PFADD hll e:__rand_int__ (one HLL, dense after the
                     first thousands of elements)
  pfadd_sparse_p16   redis-benchmark -c 50 -P 16 -r 100000
                     PFADD hll:__rand_int__ e:__rand_int__ (100,000 small
                     HLLs, sparse)
  pfadd_p1           the dense test unpipelined
  xadd_p16           redis-benchmark -c 50 -P 16 XADD stream * sensor
                     __rand_int__ temp 21 (one stream, IDs made by the
                     server)
  xadd_p1            the same unpipelined
  m_stream1m         RSS per entry after 1,000,000 XADDs of two small
                     fields (sensor <n>, temp <n>) to one stream
  consume            a producer (redis-benchmark XADD *, unpipelined, 50
                     connections) while two consumers of one group
                     XREADGROUP COUNT 500 BLOCK 100 and XACK what they got:
                     the entries still pending or unread when the producer
                     stops, and how long the consumers take to drain them

requests/s and server CPU per request, with the null server (which answers
every command at once) as this machine's ceiling and the work share.

    python3 bench/datamodel.py [build/release/peregrine] [--rounds 2] [--quick | --smoke]

Writes bench/results/datamodel.json and the section between the "datamodel"
markers of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from containers import measure_benchmark, ratio  # noqa: E402

BEGIN = "<!-- datamodel:begin -->"
END = "<!-- datamodel:end -->"

TESTS = [
    # id, label, pipeline, requests, redis-benchmark arguments
    ("pfadd_dense_p16", "PFADD one HLL (dense) P16", 16, 2_000_000, ["-r", "1000000", "PFADD", "hll", "e:__rand_int__"]),
    ("pfadd_sparse_p16", "PFADD 100K HLLs (sparse) P16", 16, 2_000_000,
     ["-r", "100000", "PFADD", "hll:__rand_int__", "e:__rand_int__"]),
    ("pfadd_p1", "PFADD one HLL (dense) P1", 1, 300_000, ["-r", "1000000", "PFADD", "hll", "e:__rand_int__"]),
    ("xadd_p16", "XADD * (two fields) P16", 16, 2_000_000,
     ["-r", "100000", "XADD", "stream", "*", "sensor", "__rand_int__", "temp", "21"]),
    ("xadd_p1", "XADD * (two fields) P1", 1, 300_000,
     ["-r", "100000", "XADD", "stream", "*", "sensor", "__rand_int__", "temp", "21"]),
]


def load_stream(port: int, n: int):
    """n XADDs of two small fields to one stream, pipelined."""
    c = bl.RespClient(port, timeout=120)
    try:
        batch = 1000
        for start in range(0, n, batch):
            payload = b"".join(bl.encode("XADD", "stream", "*", "sensor", str(i), "temp", str(i % 40))
                               for i in range(start, min(n, start + batch)))
            c.pipeline_raw(payload, min(n, start + batch) - start)
    finally:
        c.close()


def consumer(port: int, name: str, stop, counts: dict):
    """XREADGROUP + XACK until `stop` is set and nothing more comes."""
    c = bl.RespClient(port, timeout=60)
    got = 0
    try:
        while True:
            reply = c.call("XREADGROUP", "GROUP", "workers", name, "COUNT", "500", "BLOCK", "100",
                           "STREAMS", "jobs", ">")
            entries = reply[0][1] if reply else []
            if entries:
                c.call("XACK", "jobs", "workers", *[e[0] for e in entries])
                got += len(entries)
            elif stop.is_set():
                break
    finally:
        c.close()
        counts[name] = got


def run_consume(spec, workdir, n, rb):
    """A producer and two consumers: what is left when the producer stops,
    and the time to drain it."""
    import threading
    srv = bl.Server(spec, workdir)
    try:
        c = srv.client()
        c.call("XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM")
        stop = threading.Event()
        counts: dict = {}
        threads = [threading.Thread(target=consumer, args=(srv.port, f"w{i}", stop, counts)) for i in range(2)]
        for t in threads:
            t.start()
        start = time.monotonic()
        _, text, rc, _ = bl.run_redis_benchmark(rb, srv.port, ["-c", "50", "-n", str(n), "XADD", "jobs", "*", "f",
                                                                "__rand_int__"], 600)
        produced_s = time.monotonic() - start
        info = c.call("XINFO", "GROUPS", "jobs")
        fields = dict(zip(info[0][::2], info[0][1::2]))
        behind = int(fields[b"lag"] or 0) + int(fields[b"pending"])
        stop.set()
        t0 = time.monotonic()
        for t in threads:
            t.join(120)
        drain_s = time.monotonic() - t0
        c.close()
        return {"server": spec.name, "id": "consume", "produced": n, "produce_s": round(produced_s, 2),
                "behind_at_end": behind, "drain_s": round(drain_s, 2), "consumed": sum(counts.values())}
    finally:
        srv.shutdown()


def run_memory(spec, workdir, n):
    srv = bl.Server(spec, workdir)
    try:
        time.sleep(0.3)
        rss0 = srv.rss_kb()
        load_stream(srv.port, n)
        time.sleep(1.0)
        rss1 = srv.rss_kb()
        return {"server": spec.name, "id": "m_stream1m", "bytes_per_element": (rss1 - rss0) * 1024 / n}
    finally:
        srv.shutdown()


def run_one(spec, workdir, tid, pipeline, n, args, rb):
    srv = bl.Server(spec, workdir)
    try:
        return measure_benchmark(srv, spec, tid, (["-P", str(pipeline)] if pipeline > 1 else []) + args, n, rb)
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    args, scale = bl.parse_bench_args(argv, only=False)
    rb = "redis-benchmark"
    binary, _ = bl.find_binaries(args.peregrine, [rb], "redis-tools")
    records = []
    with tempfile.TemporaryDirectory(prefix="bench-datamodel-") as workdir:
        binary, shown = bl.snapshot_binary(binary, workdir)
        specs = [bl.peregrine_spec(binary), bl.redis_spec()]
        null = bl.null_spec(bl.build_null_server())
        for rnd in range(args.rounds):
            order = (specs if rnd % 2 == 0 else specs[::-1]) + [null]
            for spec in specs if rnd % 2 == 0 else specs[::-1]:
                r = run_memory(spec, workdir, max(1000, int(1_000_000 * scale)))
                records.append(r)
                print(f"{spec.label:9s} m_stream1m {r['bytes_per_element']:.1f} bytes/entry", flush=True)
            for spec in specs if rnd % 2 == 0 else specs[::-1]:
                r = run_consume(spec, workdir, max(1000, int(200_000 * scale)), rb)
                records.append(r)
                print(f"{spec.label:9s} consume   {r['consumed']:,} of {r['produced']:,} in {r['produce_s']} s, "
                      f"{r['behind_at_end']} behind at the end, drained in {r['drain_s']} s", flush=True)
            for tid, _, p, n, rbargs in TESTS:
                for spec in order:
                    r = run_one(spec, workdir, tid, p, max(1000, int(n * scale)), rbargs, rb)
                    records.append(r)
                    print(f"{spec.label:9s} {tid:18s} {r['rps'] or 0:>12,.0f} req/s "
                          f"{r['cpu_us_per_req']:.3f} us CPU/req", flush=True)
    write_report(records, args.rounds, shown, docs=not args.no_docs)
    return 0


def write_report(records, rounds, shown, docs: bool):
    lines = [f"`python3 bench/datamodel.py` ({rounds} rounds, medians; Redis is Debian's redis-server 7.0; "
             f"Peregrine `--threads 1`; server on CPU 0, load on CPU 1).", ""]
    lines += bl.speed_table(records, [(tid, label) for tid, label, *_ in TESTS])
    p = bl.median([r["bytes_per_element"] for r in records if r["id"] == "m_stream1m" and r["server"] == "peregrine"])
    q = bl.median([r["bytes_per_element"] for r in records if r["id"] == "m_stream1m" and r["server"] == "redis"])
    cons = {s: [r for r in records if r["id"] == "consume" and r["server"] == s] for s in ("peregrine", "redis")}
    if cons["peregrine"] and cons["redis"]:
        lines += ["", "| consumers (2, XREADGROUP COUNT 500 + XACK) vs a producer (XADD P1, 50 connections) "
                      "| entries | producer s | behind when it stops | drained in s |", "|---|---|---|---|---|"]
        for s, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
            r = cons[s][-1]
            lines.append(f"| {label} | {r['produced']:,} | {r['produce_s']} | {r['behind_at_end']} | {r['drain_s']} |")
    lines += ["", "| memory | Peregrine bytes/entry | Redis bytes/entry | ratio |", "|---|---|---|---|",
              f"| 1M stream entries of two small fields (RSS) | {bl.num(p, '.1f')} | {bl.num(q, '.1f')} | "
              f"{bl.ratio(p, q)} |"]
    text = "\n".join(lines)
    print(text)
    if docs:  # (a smoke run writes nothing)
        out = bl.REPO / "bench" / "results" / "datamodel.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"machine": bl.machine_info(), "binary": shown, "records": records}, indent=1))
        bl.put_docs_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")


if __name__ == "__main__":
    sys.exit(main())
