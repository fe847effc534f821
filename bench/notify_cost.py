#!/usr/bin/env python3
"""What keyspace notifications cost when nobody subscribes, in instructions
per SET under callgrind (`make bench-notify`): SET at pipeline 16, as
bench/instr.py measures it (the SET run minus the start-up-and-shutdown run),
with notify-keyspace-events off and with everything on (`KEA` plus `n` and
`m`), on Peregrine and on Redis. Issue #40's target: on/off <= 1.1 for
Peregrine.

    bench/notify_cost.py [PEREGRINE] [--requests 20000] [--repeat 3]
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

ALL_ON = ["--notify-keyspace-events", "KEAnm"]


def main(argv=None) -> int:
    args, pbin = bl.cost_arguments(__doc__, argv)
    args.idle = 0
    args.auth = None
    workdir = tempfile.mkdtemp(prefix="peregrine-notifycost-")
    stream = instr.build_stream(args.requests, args.pipeline)
    rows = {}
    try:
        pcopy, _ = bl.snapshot_binary(pbin, workdir)
        p = bl.peregrine_spec(pcopy)
        r = bl.redis_spec(args.redis_server)
        for spec, name in ((p, "Peregrine"), (r, "Redis")):
            on = bl.ServerSpec(spec.name, spec.label, spec.binary, spec.extra + ALL_ON)
            rows[(name, "off")] = instr.cost_per_request(spec, "set", args, stream, workdir)
            rows[(name, "on")] = instr.cost_per_request(on, "set", args, stream, workdir)
    except bl.BenchError as e:
        print(f"notify_cost: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nIr per SET (pipeline {args.pipeline}, {args.requests} SETs, median of {args.repeat}; "
          f"no subscriber):")
    bl.print_cost_table(rows, "notifications {mode:3s}", "on", "off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
