#!/usr/bin/env python3
"""What a MONITOR client costs the server, in instructions per request under
callgrind (`make bench-monitor`): SET then GET at pipeline 16, as
bench/instr.py's setget run (minus its start-up-and-shutdown run), with no
monitor and with one MONITOR client attached that reads everything, on
Peregrine and on Redis. Every thread of the server counts: the monitor's
lines are formatted and written by the workers. Issue #40's target: with /
without <= 2 for Peregrine.

    bench/monitor_cost.py [PEREGRINE] [--requests 20000] [--repeat 3]
"""
from __future__ import annotations

import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
import instr  # noqa: E402


def monitor(srv):
    """Attaches a MONITOR client that drains its stream on a thread; returns
    the function that detaches it (and checks that lines came)."""
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=300)
    sock.sendall(b"MONITOR\r\n")
    first = sock.recv(5)
    if first != b"+OK\r\n":
        raise bl.BenchError(f"MONITOR replied {first!r}")
    got = [0]

    def drain():
        try:
            while True:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    return
                got[0] += len(chunk)
        except OSError:
            return

    t = threading.Thread(target=drain, daemon=True)
    t.start()

    def detach():
        t.join(60)  # (the server closes it at SHUTDOWN)
        sock.close()
    detach.got = got
    return detach


def main(argv=None) -> int:
    args, pbin = bl.cost_arguments(__doc__, argv)
    args.idle = 0
    args.auth = None
    workdir = tempfile.mkdtemp(prefix="peregrine-monitorcost-")
    stream = instr.build_stream(args.requests, args.pipeline)
    rows = {}
    try:
        pcopy, _ = bl.snapshot_binary(pbin, workdir)
        for spec, name in ((bl.peregrine_spec(pcopy), "Peregrine"), (bl.redis_spec(args.redis_server), "Redis")):
            rows[(name, "without")] = instr.cost_per_request(spec, "setget", args, stream, workdir)
            rows[(name, "with")] = instr.cost_per_request(spec, "setget", args, stream, workdir, attach=monitor)
    except bl.BenchError as e:
        print(f"monitor_cost: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nIr per request (SET then GET, pipeline {args.pipeline}, {args.requests} of each, "
          f"median of {args.repeat}):")
    bl.print_cost_table(rows, "{mode:7s} MONITOR", "with", "without")
    return 0


if __name__ == "__main__":
    sys.exit(main())
