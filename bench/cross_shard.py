#!/usr/bin/env python3
"""What a command costs when its keys live on another worker's shard, in
instructions under callgrind (`make bench-cross`; issue #5).

    bench/cross_shard.py [PEREGRINE_BINARY] [--requests 10000] [--repeat 3]

Peregrine runs with `--threads 2` under `valgrind --tool=callgrind` (which
runs the threads one at a time and counts the user-space instructions of
both). One connection is opened; the acceptor gives it to worker 0 (the
least loaded, ties to the lowest index) — which the figures confirm: the
local GETs cost what GETs cost with `--threads 1`. Runs (each a fresh
server):

  base          start, PING, SHUTDOWN NOSAVE
  idle          as base plus IDLE seconds (the two crons' cost per second)
  get-local     N GETs of keys on worker 0's shard (its own: no message)
  get-remote    N GETs of keys on worker 1's shard (a batch over the mailbox
                and its reply back)
  mget-local    N MGETs of two keys, both on shard 0 (one shard: fast path)
  mget-cross    N MGETs of two keys, one on each shard (borrowing shard 1)
  get-1thread   the get-local requests against `--threads 1` (the reference:
                no mailbox, no Waker; its own base, idle and load runs)

each at pipeline 1 (every command its own round trip: the worst case for the
mailbox, one batch per command) and at pipeline 16 (one batch carries 16
remote GETs). Keys are loaded before the measured phase in the same process
(a SET per key, counted in `load` and removed).  Ir/command = (run - load -
idle_rate x phase) / N, median of the repeats.  Syscalls (the eventfd
wake-ups) are not in callgrind's count; the script reports user-space
instructions only.  Writes bench/results/cross_shard.json.
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
from instr import read_total_ir  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers import crc16  # noqa: E402  (Redis Cluster's key hash, shared with the tests)

VALUE = b"x" * 8
SHARDS = 2


def shard_of(key: bytes) -> int:
    return (crc16(key) % 16384) * SHARDS // 16384


def keys_on(shard: int, n: int, prefix: bytes) -> list[bytes]:
    out, i = [], 0
    while len(out) < n:
        k = prefix + b"%d" % i
        if shard_of(k) == shard:
            out.append(k)
        i += 1
    return out


def run(binary: str, valgrind: str, kind: str, n: int, pipeline: int, idle: float, workdir: str,
        threads: int = SHARDS) -> dict:
    out = os.path.join(workdir, f"callgrind.{kind}.{pipeline}.{threads}.{time.monotonic_ns()}.out")
    spec = bl.ServerSpec("peregrine", "Peregrine", binary, ["--threads", str(threads)])
    srv = bl.Server(spec, workdir, wrapper=[valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"],
                    ready_timeout=120)
    phase = 0.0
    try:
        c = srv.client(timeout=300)
        try:
            local = keys_on(0, 64, b"k:")
            remote = keys_on(1, 64, b"k:")
            if kind != "base" and kind != "idle":
                for k in local + remote:  # the load, in every measured run alike
                    if c.call("SET", k, VALUE) != "OK":
                        raise bl.BenchError("SET failed")
            cmds = {
                "get-local": [bl.encode(b"GET", local[i % 64]) for i in range(n)],
                "get-remote": [bl.encode(b"GET", remote[i % 64]) for i in range(n)],
                "mget-local": [bl.encode(b"MGET", local[i % 64], local[(i + 1) % 64]) for i in range(n)],
                "mget-cross": [bl.encode(b"MGET", local[i % 64], remote[i % 64]) for i in range(n)],
            }.get(kind, [])
            t0 = time.monotonic()
            if kind == "idle":
                time.sleep(idle)
            for i in range(0, len(cmds), pipeline):
                chunk = cmds[i:i + pipeline]
                c.sock.sendall(b"".join(chunk))
                for _ in chunk:
                    r = c.read_reply()
                    if isinstance(r, bl.BenchError):
                        raise bl.BenchError(f"{kind}: error reply {r}")
            phase = time.monotonic() - t0
            bl.send_shutdown_nosave(c)
        finally:
            c.close()
        srv.proc.wait(120)
    finally:
        if srv.alive():
            srv.kill()
        srv.log.close()
    return {"kind": kind, "pipeline": pipeline, "ir": read_total_ir(out), "phase_s": round(phase, 3)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "cross_shard.json"))
    args = ap.parse_args(argv)
    pbin, (args.valgrind,) = bl.find_binaries(args.peregrine, [args.valgrind], "valgrind")
    workdir = tempfile.mkdtemp(prefix="peregrine-cross-")
    binary, sha = bl.snapshot_binary(pbin, workdir)
    t0 = time.monotonic()
    base = bl.median([run(binary, args.valgrind, "base", 0, 1, 0, workdir)["ir"] for _ in range(args.repeat)])
    idle_runs = [run(binary, args.valgrind, "idle", 0, 1, args.idle, workdir) for _ in range(args.repeat)]
    idle_rate = bl.median([(r["ir"] - base) / max(r["phase_s"], 1e-9) for r in idle_runs])
    # The load (128 SETs) is in every measured run: measured once with no
    # requests after it ("load") and removed.
    base1 = bl.median([run(binary, args.valgrind, "base", 0, 1, 0, workdir, 1)["ir"] for _ in range(args.repeat)])
    idle1 = bl.median([(r["ir"] - base1) / max(r["phase_s"], 1e-9)
                       for r in [run(binary, args.valgrind, "idle", 0, 1, args.idle, workdir, 1)
                                 for _ in range(args.repeat)]])
    rows = {}
    kinds = ("get-1thread", "get-local", "get-remote", "mget-local", "mget-cross")
    for pipeline in (1, 16):
        load = bl.median([run(binary, args.valgrind, "load", 0, pipeline, 0, workdir)["ir"]
                          for _ in range(args.repeat)])
        load1 = bl.median([run(binary, args.valgrind, "load", 0, pipeline, 0, workdir, 1)["ir"]
                           for _ in range(args.repeat)])
        for kind in kinds:
            one = kind == "get-1thread"
            per = []
            for _ in range(args.repeat):
                r = run(binary, args.valgrind, "get-local" if one else kind, args.requests, pipeline, 0, workdir,
                        1 if one else SHARDS)
                per.append((r["ir"] - (load1 if one else load) - (idle1 if one else idle_rate) * r["phase_s"])
                           / args.requests)
            rows[f"{kind} P{pipeline}"] = round(bl.median(per))
            print(f"  {kind:11s} P{pipeline:<3d} {rows[f'{kind} P{pipeline}']:8,d} Ir/command", flush=True)
    dur = (time.monotonic() - t0) / 60
    print(f"\n{'':12s}{'P1':>10s}{'P16':>10s}")
    for kind in kinds:
        print(f"{kind:12s}{rows[kind + ' P1']:10,d}{rows[kind + ' P16']:10,d}")
    for p in (1, 16):
        print(f"remote/local GET at P{p}: {rows[f'get-remote P{p}'] / rows[f'get-local P{p}']:.2f}x, "
              f"cross/local MGET: {rows[f'mget-cross P{p}'] / rows[f'mget-local P{p}']:.2f}x")
    print(f"idle Ir/s {idle_rate:,.0f}; {dur:.1f} min")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "requests": args.requests,
                   "repeat": args.repeat, "threads": SHARDS, "ir_per_command": rows,
                   "idle_ir_per_s": round(idle_rate), "machine": bl.machine_info()}, f, indent=1)
    print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
