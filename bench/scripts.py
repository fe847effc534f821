#!/usr/bin/env python3
"""Transactions and scripts (#19): Peregrine against Debian's redis-server in
one run (MEASURING.md: a fresh server per measurement, rounds interleaved,
server on CPU 0, load generators on CPU 1, medians, ratios).

  evalsha_p1 / evalsha_p16   redis-benchmark -c 50 -r 100000 [-P 16]
                             EVALSHA <sha> 1 counter:__rand_int__ of a
                             two-command script (GET, then INCR, of its one
                             declared key)
  multi_p16                  MULTI / INCR / INCR / EXEC over one connection,
                             16 transactions in flight (a Python loader:
                             redis-benchmark has no transactions), keys from
                             100,000

requests/s (a transaction counts once) and server CPU per request, with the
null server (which answers every command at once) as this machine's
ceiling and the work share (MEASURING.md).

    python3 bench/scripts.py [build/release/peregrine] [--rounds 2] [--quick | --smoke]

Writes bench/results/scripts.json and the section between the "scripts"
markers of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from containers import measure_benchmark, ratio  # noqa: E402

BEGIN = "<!-- scripts:begin -->"
END = "<!-- scripts:end -->"
SCRIPT = "local v = redis.call('GET', KEYS[1]) return redis.call('INCR', KEYS[1])"


def run_evalsha(spec, workdir, tid, pipeline, n, rb):
    srv = bl.Server(spec, workdir)
    try:
        c = bl.RespClient(srv.port)
        sha = c.call("SCRIPT", "LOAD", SCRIPT)  # (the null server answers OK: it then answers OK to EVALSHA OK)
        sha = sha.decode() if isinstance(sha, bytes) else sha
        c.close()
        args = ["-r", "100000"] + (["-P", str(pipeline)] if pipeline > 1 else []) + \
               ["EVALSHA", sha, "1", "counter:__rand_int__"]
        return measure_benchmark(srv, spec, tid, args, n, rb)
    finally:
        srv.shutdown()


def run_multi(spec, workdir, n, depth=16):
    """n MULTI/INCR/INCR/EXEC transactions, `depth` in flight on one
    connection: their rate and the server's CPU per transaction."""
    srv = bl.Server(spec, workdir)
    try:
        c = bl.RespClient(srv.port, timeout=120)
        rng = random.Random(3)
        batches = []
        for _ in range(32):  # reused: building requests is not what is measured
            parts = []
            for _ in range(depth):
                k = b"c:%d" % rng.randrange(100_000)
                parts += [bl.encode("MULTI"), bl.encode("INCR", k), bl.encode("INCR", k), bl.encode("EXEC")]
            batches.append(b"".join(parts))
        t0, _ = srv.cpu_ticks()
        start = time.monotonic()
        done = 0
        i = 0
        while done < n:
            if c.pipeline_raw(batches[i % len(batches)], 4 * depth):
                raise bl.BenchError("error replies in the transactions")
            done += depth
            i += 1
        elapsed = time.monotonic() - start
        t1, _ = srv.cpu_ticks()
        c.close()
        return {"server": spec.name, "id": "multi_p16", "rps": done / elapsed,
                "cpu_us_per_req": (t1 - t0) / bl.CLK_TCK * 1e6 / done,
                "command": f"MULTI/INCR/INCR/EXEC x {done}, {depth} in flight on one connection (bench/scripts.py)"}
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    args, scale = bl.parse_bench_args(argv, only=False)
    rb = "redis-benchmark"
    binary, _ = bl.find_binaries(args.peregrine, [rb], "redis-tools")
    records = []
    with tempfile.TemporaryDirectory(prefix="bench-scripts-") as workdir:
        binary, shown = bl.snapshot_binary(binary, workdir)
        specs = [bl.peregrine_spec(binary), bl.redis_spec()]
        null = bl.null_spec(bl.build_null_server())
        for rnd in range(args.rounds):
            order = (specs if rnd % 2 == 0 else specs[::-1]) + [null]
            for tid, p, n in (("evalsha_p1", 1, 300_000), ("evalsha_p16", 16, 2_000_000)):
                for spec in order:
                    r = run_evalsha(spec, workdir, tid, p, max(1000, int(n * scale)), rb)
                    records.append(r)
                    print(f"{spec.label:9s} {tid:12s} {r['rps'] or 0:>12,.0f} req/s "
                          f"{r['cpu_us_per_req']:.3f} us CPU/req", flush=True)
            for spec in order:
                r = run_multi(spec, workdir, max(1000, int(400_000 * scale)))
                records.append(r)
                print(f"{spec.label:9s} multi_p16    {r['rps']:>12,.0f} tx/s  "
                      f"{r['cpu_us_per_req']:.3f} us CPU/tx", flush=True)
    write_report(records, args.rounds, shown, docs=not args.no_docs)
    return 0


def write_report(records, rounds, shown, docs: bool):
    lines = [f"`python3 bench/scripts.py` ({rounds} rounds, medians; Redis is Debian's redis-server 7.0; "
             f"Peregrine `--threads 1`; server on CPU 0, load on CPU 1).", ""]
    lines += bl.speed_table(records, [("evalsha_p1", "EVALSHA (GET+INCR script) P1"),
                                      ("evalsha_p16", "EVALSHA (GET+INCR script) P16"),
                                      ("multi_p16", "MULTI/INCR/INCR/EXEC, 16 in flight")])
    text = "\n".join(lines)
    print(text)
    if docs:  # (a smoke run writes nothing)
        out = bl.REPO / "bench" / "results" / "scripts.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"machine": bl.machine_info(), "binary": shown, "records": records}, indent=1))
        bl.put_docs_section(BEGIN, END, f"{BEGIN}\n{text}\n{END}")


if __name__ == "__main__":
    sys.exit(main())
