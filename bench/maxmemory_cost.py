#!/usr/bin/env python3
"""What a maxmemory setting costs a write that evicts nothing, in
instructions per SET under callgrind (`make bench-maxmemory`): SET at
pipeline 16, as bench/instr.py measures it, with no maxmemory, with
`maxmemory 1gb` and allkeys-lru, and with `maxmemory 1gb` and volatile-lru
(no key has a deadline: each write looks whether it made its shard's first
evictable key), on Peregrine and on Redis.

    bench/maxmemory_cost.py [PEREGRINE] [--requests 20000] [--repeat 3]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
import instr  # noqa: E402

MODES = {
    "none": [],
    "allkeys": ["--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru"],
    "volatile": ["--maxmemory", "1gb", "--maxmemory-policy", "volatile-lru"],
}


def main(argv=None) -> int:
    args, pbin = bl.cost_arguments(__doc__, argv)
    try:
        rows = instr.cost_by_flags(args, pbin, MODES, name="maxmemorycost")
    except bl.BenchError as e:
        print(f"maxmemory_cost: {e}", file=sys.stderr)
        return 1
    print(f"\nIr per SET (pipeline {args.pipeline}, {args.requests} SETs, median of {args.repeat}):")
    bl.print_cost_table(rows, "maxmemory {mode:8s}", "volatile", "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
