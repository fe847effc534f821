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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
import instr  # noqa: E402

ALL_ON = ["--notify-keyspace-events", "KEAnm"]


def main(argv=None) -> int:
    args, pbin = bl.cost_arguments(__doc__, argv)
    try:
        rows = instr.cost_by_flags(args, pbin, {"off": [], "on": ALL_ON}, name="notifycost")
    except bl.BenchError as e:
        print(f"notify_cost: {e}", file=sys.stderr)
        return 1
    print(f"\nIr per SET (pipeline {args.pipeline}, {args.requests} SETs, median of {args.repeat}; "
          f"no subscriber):")
    bl.print_cost_table(rows, "notifications {mode:3s}", "on", "off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
