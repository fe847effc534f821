#!/usr/bin/env python3
"""What the permission check costs, in instructions per request under
callgrind (`make bench-acl`): GET and SET at pipeline 16, as bench/instr.py
measures them, for

  default     the default user (every permission: one branch per command)
  restricted  a typical application user: AUTH app ..., `~key:* +@read
              +@write -@dangerous` (a command bit, one key pattern per key)

on this binary, on a BASELINE binary built before ACL users existed (the same
request stream; optional), and on Redis with the same two users.

    bench/acl_cost.py [PEREGRINE] [--baseline OLD_PEREGRINE] [--requests 20000] [--repeat 3]
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
import instr  # noqa: E402

USER = ["--user", "app", "on", ">apppass", "~key:*", "+@read", "+@write", "-@dangerous"]


def measure(spec, args, stream, workdir, auth):
    args.auth = auth
    return instr.cost_per_request(spec, "setget", args, stream, workdir)


def main(argv=None) -> int:
    args, pbin = bl.cost_arguments(__doc__, argv,
                                   baseline="a Peregrine binary from before ACL users (the default user's cost)")
    args.idle = 0
    workdir = tempfile.mkdtemp(prefix="peregrine-aclcost-")
    stream = instr.build_stream(args.requests, args.pipeline)
    rows = []
    try:
        pcopy, _ = bl.snapshot_binary(pbin, workdir)
        p = bl.peregrine_spec(pcopy)
        p_user = bl.ServerSpec(p.name, p.label, p.binary, p.extra + USER)
        r = bl.redis_spec(args.redis_server)
        r_user = bl.ServerSpec(r.name, r.label, r.binary, USER)
        if args.baseline:
            bdir = os.path.join(workdir, "baseline")
            os.mkdir(bdir)
            bcopy, _ = bl.snapshot_binary(args.baseline, bdir)
            rows.append(("Peregrine before ACL, default", measure(bl.peregrine_spec(bcopy), args, stream, workdir, None)))
        rows.append(("Peregrine, default user", measure(p, args, stream, workdir, None)))
        rows.append(("Peregrine, restricted user", measure(p_user, args, stream, workdir, ("app", "apppass"))))
        rows.append(("Redis, default user", measure(r, args, stream, workdir, None)))
        rows.append(("Redis, restricted user", measure(r_user, args, stream, workdir, ("app", "apppass"))))
    except bl.BenchError as e:
        print(f"acl_cost: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nIr per request (GET and SET, pipeline {args.pipeline}, {args.requests} of each, median of {args.repeat}):")
    for name, (ir, spread) in rows:
        print(f"  {name:32s} {ir:10,.0f}  (spread {spread:,.0f})")
    d = dict((n, v[0]) for n, v in rows)
    if "Peregrine before ACL, default" in d:
        print(f"  default user vs before ACL: {d['Peregrine, default user'] / d['Peregrine before ACL, default']:.4f}")
    print(f"  restricted / default: Peregrine {d['Peregrine, restricted user'] / d['Peregrine, default user']:.3f}, "
          f"Redis {d['Redis, restricted user'] / d['Redis, default user']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
