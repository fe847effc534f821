#!/usr/bin/env python3
"""Hashes and sets (#16): memory per element and speed, Peregrine against
Debian's redis-server in one run (MEASURING.md: fresh server per run, rounds
interleaved, server on CPU 0, loaders and redis-benchmark on CPU 1, medians,
ratios).

Memory: RSS after loading (and a second to settle) minus RSS when empty,
divided by the elements, for
  m_hash1m   1M fields in one hash, 13-byte fields, 8-byte values
  m_set1m    1M 16-byte members in one set
  m_int1m    1M integers in one set
  m_hash10   100K hashes of 10 small fields (6-byte fields, 8-byte values)
  m_set10    100K sets of 10 small members (8-byte members)
Speed: redis-benchmark -t sadd,hset,spop with -P 16 and without pipelining
(SPOP runs on the set SADD filled), HGETALL of a 100-field hash and SMEMBERS
of a 100-member set (custom commands), requests/s and server CPU per request.

    python3 bench/containers.py [build/release/peregrine] [--rounds 2] [--quick | --smoke] [--report]

Writes bench/results/containers.json and the section between the
"containers" markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

BEGIN = "<!-- containers:begin -->"
END = "<!-- containers:end -->"


def send_all(port: int, commands, per_batch: int = 200):
    """Sends the commands (encoded) in pipelined batches; errors are fatal."""
    c = bl.RespClient(port, timeout=300)
    try:
        batch = []
        for cmd in commands:
            batch.append(cmd)
            if len(batch) == per_batch:
                if c.pipeline_raw(b"".join(batch), len(batch)):
                    raise bl.BenchError("error replies while loading")
                batch = []
        if batch and c.pipeline_raw(b"".join(batch), len(batch)):
            raise bl.BenchError("error replies while loading")
    finally:
        c.close()


def load_hash1m(port, n):
    per = 100
    for_cmds = (bl.encode("HSET", "bighash", *[x for i in range(s, min(n, s + per))
                                                 for x in (b"field:%07d" % i, b"v%07d" % i)])
                for s in range(0, n, per))
    send_all(port, for_cmds, 20)


def load_set1m(port, n):
    per = 100
    send_all(port, (bl.encode("SADD", "bigset", *[b"member:%09d" % i for i in range(s, min(n, s + per))])
                    for s in range(0, n, per)), 20)


def load_int1m(port, n):
    per = 100
    send_all(port, (bl.encode("SADD", "intset", *[b"%d" % (i * 7919 % 100_000_000) for i in range(s, min(n, s + per))])
                    for s in range(0, n, per)), 20)


def load_hash10(port, keys):
    send_all(port, (bl.encode("HSET", b"user:%08d" % k, *[x for f in range(10)
                                                           for x in (b"field%d" % f, b"v%07d" % k)])
                    for k in range(keys)))


def load_set10(port, keys):
    send_all(port, (bl.encode("SADD", b"tags:%08d" % k, *[b"tag:%04d" % ((k + m * 37) % 10000) for m in range(10)])
                    for k in range(keys)))


MEMORY = [
    # id, title, loader, argument, elements
    ("m_hash1m", "1M fields in one hash (13 B field, 8 B value)", load_hash1m, 1_000_000, 1_000_000),
    ("m_set1m", "1M 16-byte members in one set", load_set1m, 1_000_000, 1_000_000),
    ("m_int1m", "1M integers in one set", load_int1m, 1_000_000, 1_000_000),
    ("m_hash10", "100K hashes of 10 small fields", load_hash10, 100_000, 1_000_000),
    ("m_set10", "100K sets of 10 small members", load_set10, 100_000, 1_000_000),
]
# Targets: Peregrine / Redis at most this (issue #16).
MEMORY_TARGET = {"m_hash1m": 0.45, "m_set1m": 0.42, "m_int1m": 0.25, "m_hash10": 0.8, "m_set10": 0.2}


def speed_tests(scale: float):
    """The speed tests; `scale` shrinks the request counts (--quick, --smoke)."""
    n = max(1000, int(1_000_000 * scale))
    n1 = max(1000, int(200_000 * scale))
    return [
        # id, redis-benchmark args, requests
        ("p16_sadd", ["-P", "16", "-r", "1000000", "-t", "sadd"], n),
        ("p16_hset", ["-P", "16", "-r", "1000000", "-t", "hset"], n),
        ("p16_spop", ["-P", "16", "-t", "spop"], n // 2),
        ("p1_sadd", ["-r", "1000000", "-t", "sadd"], n1),
        ("p1_hset", ["-r", "1000000", "-t", "hset"], n1),
        ("p1_spop", ["-t", "spop"], n1 // 2),
        ("hgetall100", ["-P", "16", "HGETALL", "h100"], n // 4),
        ("smembers100", ["-P", "16", "SMEMBERS", "s100"], n // 4),
    ]


def run_memory(spec, workdir, mid, loader, arg, elements):
    srv = bl.Server(spec, workdir)
    try:
        time.sleep(0.3)
        rss0 = srv.rss_kb()
        t0 = time.monotonic()
        loader(srv.port, arg)
        load_s = time.monotonic() - t0
        time.sleep(1.0)
        rss1 = srv.rss_kb()
        c = srv.client()
        try:
            enc = c.call("OBJECT", "ENCODING", {"m_hash1m": "bighash", "m_set1m": "bigset", "m_int1m": "intset",
                                                "m_hash10": "user:00000000", "m_set10": "tags:00000000"}[mid])
            # Freeing the largest container: the longest a DEL keeps other clients waiting.
            # Then the slowest PING of the next 300 ms: the stall a client
            # sees while the container's memory is being freed.
            del_ms = ping_ms = None
            if mid in ("m_hash1m", "m_set1m"):
                t = time.monotonic()
                c.call("DEL", "bighash" if mid == "m_hash1m" else "bigset")
                del_ms = (time.monotonic() - t) * 1000
                ping_ms = 0.0
                end = time.monotonic() + 0.3
                while time.monotonic() < end:
                    t = time.monotonic()
                    c.call("PING")
                    ping_ms = max(ping_ms, (time.monotonic() - t) * 1000)
        finally:
            c.close()
        return {"server": spec.name, "id": mid, "bytes_per_element": (rss1 - rss0) * 1024 / elements,
                "encoding": enc.decode() if isinstance(enc, bytes) else enc, "load_s": round(load_s, 2),
                "del_ms": del_ms, "ping_ms": ping_ms}
    finally:
        srv.shutdown()


def run_speed(spec, workdir, tid, args, n, rb):
    srv = bl.Server(spec, workdir)
    try:
        c = srv.client()
        try:
            if tid == "hgetall100":
                c.call("HSET", "h100", *[x for i in range(100) for x in (f"field:{i}", f"value:{i}")])
            if tid == "smembers100":
                c.call("SADD", "s100", *[f"member:{i}" for i in range(100)])
        finally:
            c.close()
        if "spop" in tid:  # fill the set SPOP pops from (redis-benchmark's "myset")
            bl.run_redis_benchmark(rb, srv.port, ["-c", "50", "-n", str(n * 2), "-P", "16", "-r", "10000000",
                                                  "-t", "sadd"], 600)
        return measure_benchmark(srv, spec, tid, args, n, rb)
    finally:
        srv.shutdown()


def measure_benchmark(srv, spec, tid, args, n, rb):
    """redis-benchmark -c 50 -n n `args` against `srv`: its requests/s and the
    server's CPU per request."""
    t0, _ = srv.cpu_ticks()
    argv, text, rc, _ = bl.run_redis_benchmark(rb, srv.port, ["-c", "50", "-n", str(n)] + args, 600)
    t1, _ = srv.cpu_ticks()
    parsed = bl.parse_redis_benchmark(text)
    if rc != 0 or not parsed:
        raise bl.BenchError(f"redis-benchmark failed: {text[-800:]}")
    return {"server": spec.name, "id": tid, "rps": parsed[-1].get("rps"),
            "cpu_us_per_req": (t1 - t0) / bl.CLK_TCK * 1e6 / n,
            "command": "redis-benchmark " + " ".join(["-c", "50", "-n", str(n)] + args)}


ratio = bl.ratio


def sides(records, rid):
    """The records of one test: Peregrine's, Redis's."""
    return ([r for r in records if r["id"] == rid and r["server"] == "peregrine"],
            [r for r in records if r["id"] == rid and r["server"] == "redis"])


def make_plot(records, scale: float, path: Path) -> bool:
    """Bars of Peregrine's and Redis's medians: bytes per element for the memory
    rows, server CPU per request for the speed rows. Returns whether it wrote."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    colors = {"peregrine": "#1f77b4", "redis": "#d62728"}
    labels = {"peregrine": "Peregrine", "redis": "Redis 7.0"}
    panels = [("bytes_per_element", "memory: bytes per element (RSS)", [(m[0], m[1]) for m in MEMORY]),
              ("cpu_us_per_req", "server CPU µs per request", [(t[0], " ".join(t[1])) for t in speed_tests(scale)])]
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5))
    wrote = False
    for ax, (metric, title, rows) in zip(axes, panels):
        rows = [(rid, label) for rid, label in rows
                if all(any(r["id"] == rid and r["server"] == s for r in records) for s in colors)]
        if not rows:
            continue
        wrote = True
        for i, server in enumerate(colors):
            vals = [bl.median([r[metric] for r in records if r["id"] == rid and r["server"] == server]) or 0
                    for rid, _ in rows]
            ys = [k + (i - 0.5) * 0.38 for k in range(len(rows))]
            bars = ax.barh(ys, vals, height=0.38, color=colors[server], label=labels[server])
            for b, v in zip(bars, vals):
                ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {v:.2f}" if v < 10 else f" {v:.0f}",
                        va="center", fontsize=8)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([label for _, label in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(title)
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_xlim(right=ax.get_xlim()[1] * 1.1)
    if wrote:
        fig.suptitle("Hashes and sets (#16): bench/containers.py, medians over rounds")
        handles, names = max((ax.get_legend_handles_labels() for ax in axes), key=lambda hn: len(hn[0]))
        fig.legend(handles, names, loc="upper right", fontsize=9)
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        fig.savefig(path, dpi=100)
    plt.close(fig)
    return wrote


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer requests (a check, not a measurement)")
    ap.add_argument("--smoke", action="store_true",
                    help="1%% of the elements, a few requests, one round, no docs: that it all runs (make bench-smoke)")
    ap.add_argument("--only", default="", help="comma-separated test ids")
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--report", action="store_true",
                    help="measure nothing: rewrite the docs section and plot from bench/results/containers.json")
    args = ap.parse_args(argv)
    out = Path(bl.REPO) / "bench" / "results" / "containers.json"
    if args.report:
        saved = json.loads(out.read_text())
        rounds = 1 + max(r["round"] for r in saved["records"])
        write_report(saved["records"], rounds, 0.2 if args.quick else 1.0, docs=True)
        return 0
    scale = 0.002 if args.smoke else 0.2 if args.quick else 1.0
    if args.smoke:
        args.rounds, args.no_docs = 1, True
    shrink = 100 if args.smoke else 1  # the memory tests' elements
    rb = "redis-benchmark"
    only = set(filter(None, args.only.split(",")))
    records = []
    with tempfile.TemporaryDirectory(prefix="containers-") as workdir:
        binary, digest = bl.snapshot_binary(args.peregrine, workdir)
        specs = [bl.peregrine_spec(binary), bl.redis_spec()]
        for rnd in range(args.rounds):
            order = specs if rnd % 2 == 0 else specs[::-1]
            for mid, title, loader, arg, elements in MEMORY:
                if only and mid not in only:
                    continue
                for spec in order:
                    r = run_memory(spec, workdir, mid, loader, arg // shrink, elements // shrink)
                    r["round"] = rnd
                    records.append(r)
                    print(f"{spec.label:9s} {mid:9s} {r['bytes_per_element']:6.1f} B/element "
                          f"({r['encoding']}), DEL {r['del_ms'] or 0:.1f} ms, "
                          f"slowest PING after {r['ping_ms'] or 0:.1f} ms", flush=True)
            for tid, targs, n in speed_tests(scale):
                if only and tid not in only:
                    continue
                for spec in order:
                    r = run_speed(spec, workdir, tid, targs, n, rb)
                    r["round"] = rnd
                    records.append(r)
                    print(f"{spec.label:9s} {tid:12s} {r['rps'] or 0:>12,.0f} req/s "
                          f"{r['cpu_us_per_req']:.3f} us/req", flush=True)
    if not args.smoke:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"records": records, "binary_sha256": digest,
                                   "machine": bl.machine_info()}, indent=1))
    write_report(records, args.rounds, scale, docs=not args.no_docs and not only)
    return 0


def write_report(records, rounds: int, scale: float, docs: bool):
    """Prints the docs section (medians over rounds; of two, their mean) and,
    with docs, puts it in docs/benchmarks.md and draws the plot beside it."""
    lines = [BEGIN, "", "### Hashes and sets (#16)", "",
             f"`python3 bench/containers.py` ({rounds} rounds, medians; Redis is Debian's redis-server "
             "7.0, whose small sets of strings are hashtables: 7.2's set listpacks are newer). Memory is RSS "
             "after loading minus RSS empty, per element; DEL is the time a DEL of the 1M-element container "
             "took to answer, and in brackets the slowest PING in the 300 ms after it (Peregrine frees a large "
             "container in 1 ms slices between events, `core/lazy_free.h`).", "",
             "| memory | Peregrine B/elem | Redis B/elem | ratio | target | encodings (P / R) | DEL ms (P / R) (slowest PING after) |",
             "|---|---:|---:|---:|---:|---|---|"]
    for mid, title, *_ in MEMORY:
        p, q = sides(records, mid)
        if not p or not q:
            continue
        pm, qm = bl.median([r["bytes_per_element"] for r in p]), bl.median([r["bytes_per_element"] for r in q])
        dp, dq = bl.median([r["del_ms"] for r in p]), bl.median([r["del_ms"] for r in q])
        pp, pq = bl.median([r["ping_ms"] for r in p]), bl.median([r["ping_ms"] for r in q])
        dels = f"{dp:.1f} / {dq:.1f} ({pp:.1f} / {pq:.1f})" if dp is not None and dq is not None else ""
        lines.append(f"| {title} | {bl.num(pm, '.1f')} | {bl.num(qm, '.1f')} | {ratio(pm, qm)} | ≤ {MEMORY_TARGET[mid]} | "
                     f"{p[0]['encoding']} / {q[0]['encoding']} | {dels} |")
    lines += ["", "| speed | Peregrine req/s | Redis req/s | ratio | Peregrine CPU us/req | Redis CPU us/req | "
              "CPU ratio |", "|---|---:|---:|---:|---:|---:|---:|"]
    for tid, *_ in speed_tests(scale):
        p, q = sides(records, tid)
        if not p or not q:
            continue
        pr, qr = bl.median([r["rps"] for r in p]), bl.median([r["rps"] for r in q])
        pc, qc = bl.median([r["cpu_us_per_req"] for r in p]), bl.median([r["cpu_us_per_req"] for r in q])
        lines.append(f"| `{p[0]['command']}` | {bl.num(pr, ',.0f')} | {bl.num(qr, ',.0f')} | {ratio(pr, qr)} | "
                     f"{bl.num(pc, '.2f')} | {bl.num(qc, '.2f')} | {ratio(pc, qc)} |")
    if docs and make_plot(records, scale, Path(bl.REPO) / "docs" / "bench_containers.png"):
        lines += ["", "![hashes and sets: memory per element and CPU per request](bench_containers.png)"]
    lines += ["", END]
    section = "\n".join(lines)
    print(section)
    if docs:
        bl.put_docs_section(BEGIN, END, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
