#!/usr/bin/env python3
"""What a script run costs, in instructions per EVALSHA under callgrind
(`make bench-script-cost`): bench/scripts.py's script (GET, then INCR, of its
one declared key, keys from 100,000) at pipeline 16, on this binary, on a
BASELINE binary (another build, e.g. from before a change to the scripting
runtime; optional) and on Redis — one request stream for all, each run's
cost less the same run without the EVALSHAs (start-up, SCRIPT LOAD and
shutdown), median of --repeat. Instruction counts do not depend on what else
the machine does (MEASURING.md), so a few percent are measurable here where
CPU time per request is not.

    bench/script_cost.py [PEREGRINE] [--baseline OLD_PEREGRINE] [--requests 20000] [--repeat 3]
"""
from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
import instr  # noqa: E402

SCRIPT = "local v = redis.call('GET', KEYS[1]) return redis.call('INCR', KEYS[1])"  # (bench/scripts.py's)


def build_stream(sha: str, requests: int, pipeline: int, seed: int = 7):
    rng = random.Random(seed)
    batches = []
    for start in range(0, requests, pipeline):
        cnt = min(pipeline, requests - start)
        payload = b"".join(bl.encode(b"EVALSHA", sha.encode(), b"1", b"counter:%d" % rng.randrange(100_000))
                           for _ in range(cnt))
        batches.append((payload, cnt))
    return batches


def one_run(spec: bl.ServerSpec, with_calls: bool, args, workdir: str) -> int:
    out = os.path.join(workdir, f"callgrind.{spec.name}.{int(with_calls)}.{time.monotonic_ns()}.out")
    wrapper = [args.valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"]
    srv = bl.Server(spec, workdir, wrapper=wrapper, ready_timeout=120)
    try:
        c = srv.client(timeout=300)
        try:
            c.sock.sendall(bl.encode(b"SCRIPT", b"LOAD", SCRIPT.encode()))
            sha = c.read_reply()
            sha = sha.decode() if isinstance(sha, bytes) else sha
            if with_calls:
                for payload, cnt in build_stream(sha, args.requests, args.pipeline):
                    c.sock.sendall(payload)
                    for _ in range(cnt):
                        r = c.read_reply()
                        if isinstance(r, bl.BenchError) or not isinstance(r, int):
                            raise bl.BenchError(f"{spec.label}: EVALSHA replied {r!r}")
            bl.send_shutdown_nosave(c)
        finally:
            c.close()
        srv.proc.wait(120)
    finally:
        if srv.alive():
            srv.kill()
        srv.log.close()
    return instr.read_total_ir(out)


def measure(spec, args, workdir):
    per_rep = []
    for _ in range(args.repeat):
        base = one_run(spec, False, args, workdir)
        full = one_run(spec, True, args, workdir)
        per_rep.append((full - base) / args.requests)
    return bl.median(per_rep), max(per_rep) - min(per_rep)


def main(argv=None) -> int:
    args, pbin = bl.cost_arguments(__doc__, argv, baseline="another Peregrine binary to compare with")
    workdir = tempfile.mkdtemp(prefix="peregrine-scriptcost-")
    rows = []
    try:
        pcopy, _ = bl.snapshot_binary(pbin, workdir)
        if args.baseline:
            bdir = os.path.join(workdir, "baseline")
            os.mkdir(bdir)
            bcopy, _ = bl.snapshot_binary(args.baseline, bdir)
            rows.append(("Peregrine baseline", measure(bl.peregrine_spec(bcopy), args, workdir)))
        rows.append(("Peregrine", measure(bl.peregrine_spec(pcopy), args, workdir)))
        rows.append(("Redis", measure(bl.redis_spec(args.redis_server), args, workdir)))
    except bl.BenchError as e:
        print(f"script_cost: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nIr per EVALSHA (pipeline {args.pipeline}, {args.requests} requests, median of {args.repeat}):")
    for name, (ir, spread) in rows:
        print(f"  {name:20s} {ir:10,.0f}  (spread {spread:,.0f})")
    d = dict((n, v[0]) for n, v in rows)
    if "Peregrine baseline" in d:
        print(f"  Peregrine / baseline: {d['Peregrine'] / d['Peregrine baseline']:.4f}")
    print(f"  Peregrine / Redis: {d['Peregrine'] / d['Redis']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
