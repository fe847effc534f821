#!/usr/bin/env python3
"""Expiry storm: N keys (default 1M) all expire at the same millisecond.

Measures the latency of GETs from another client in a control window before
the deadline and in the 3 s window around it, for Peregrine and redis-server
(each a fresh server pinned to CPU 0). The claim to check: p99.9 during the
storm stays within 2x of the control window.

    python3 bench/expire_storm.py [build/release/peregrine] [--keys N]
"""
import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

LOAD_BATCH = 2000
GET_PROBE = bl.encode("GET", "probe")


def load_expiring(port, nkeys, deadline_ms):
    """SET exp:0 .. exp:<nkeys-1> v PXAT deadline_ms, LOAD_BATCH per round trip."""
    d = b"%d" % deadline_ms
    c = bl.RespClient(port, timeout=30)
    try:
        for start in range(0, nkeys, LOAD_BATCH):
            end = min(nkeys, start + LOAD_BATCH)
            payload = b"".join(
                b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n$4\r\nPXAT\r\n$%d\r\n%s\r\n"
                % (len(k), k, len(d), d) for k in (b"exp:%d" % i for i in range(start, end)))
            bad = c.pipeline_raw(payload, end - start, expect=b"+OK\r\n")
            if bad:
                raise bl.BenchError(f"{bad} SET ... PXAT replies were not +OK while loading")
    finally:
        c.close()


def probe(c, seconds):
    """GET probe back to back for `seconds`; latency percentiles in ms."""
    lat = []
    end = time.time() + seconds
    while time.time() < end:
        t = time.perf_counter()
        c.sock.sendall(GET_PROBE)
        c.read_reply()
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {"n": len(lat), "p50": lat[len(lat) // 2], "p99": lat[int(len(lat) * 0.99)],
            "p99.9": lat[int(len(lat) * 0.999)], "max": lat[-1]}


def measure(spec, workdir, nkeys):
    srv = bl.Server(spec, workdir)
    try:
        c = srv.client(timeout=10)
        try:
            c.call("SET", "probe", "v")
            deadline_ms = int(time.time() * 1000) + 10000
            load_expiring(srv.port, nkeys, deadline_ms)
            left_s = deadline_ms / 1000 - time.time()
            if left_s < 2.0:
                print(f"{spec.label}: loading left only {left_s:.1f} s before the deadline; "
                      "the control window is too short (fewer --keys?)", file=sys.stderr)
            control = probe(c, max(0.5, left_s - 1.5))
            time.sleep(max(0.0, deadline_ms / 1000 - time.time() - 0.2))
            storm = probe(c, 3.0)
            remaining = c.call("DBSIZE")
        finally:
            c.close()
        return control, storm, remaining
    finally:
        srv.shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--keys", type=int, default=1_000_000)
    args = ap.parse_args()
    try:
        pbin, (redis,) = bl.find_binaries(args.peregrine, ["redis-server"], "redis-server")
    except bl.BenchError as e:
        sys.exit(f"expire_storm: {e}")
    workdir = tempfile.mkdtemp(prefix="peregrine-expire-")
    try:
        for spec in (bl.peregrine_spec(pbin), bl.redis_spec(redis)):
            control, storm, remaining = measure(spec, workdir, args.keys)
            for label, r in (("control", control), ("storm", storm)):
                print(f"{spec.label:9} {label:7} n={r['n']:6} p50={r['p50']:.3f} p99={r['p99']:.3f} "
                      f"p99.9={r['p99.9']:.3f} max={r['max']:.3f} ms")
            print(f"{spec.label:9} p99.9 storm/control = {storm['p99.9'] / control['p99.9']:.2f}; "
                  f"keys left after the window: {remaining - 1}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
