#!/usr/bin/env python3
"""Expiry storm: N keys (default 1M) all expire at the same millisecond.

Measures the latency of GETs from another client in a control window before
the deadline and in the 3 s window around it, for Peregrine and redis-server
(each a fresh server pinned to CPU 0). The claim to check: p99.9 during the
storm stays within 2x of the control window.

    python3 bench/expire_storm.py [build/release/peregrine] [--keys N]
"""
import argparse
import socket
import subprocess
import time

import benchlib as bl


def measure(cmd, port, nkeys):
    proc = subprocess.Popen(["taskset", "-c", "0"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                time.sleep(0.05)

        def call(req):
            s.sendall(req)
            buf = b""
            while not buf.endswith(b"\r\n"):
                buf += s.recv(65536)
            return buf

        call(b"SET probe v\r\n")
        deadline_ms = int(time.time() * 1000) + 10000
        loader = socket.create_connection(("127.0.0.1", port), timeout=30)
        d = b"%d" % deadline_ms
        batch = []
        for i in range(nkeys):
            k = b"exp:%d" % i
            batch.append(b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n$4\r\nPXAT\r\n$%d\r\n%s\r\n" % (len(k), k, len(d), d))
            if len(batch) == 2000 or i == nkeys - 1:
                loader.sendall(b"".join(batch))
                got = b""
                while got.count(b"\r\n") < len(batch):
                    got += loader.recv(1 << 20)
                batch = []
        loader.close()

        def probe(seconds):
            lat = []
            end = time.time() + seconds
            while time.time() < end:
                t = time.perf_counter()
                call(b"GET probe\r\n")
                lat.append((time.perf_counter() - t) * 1000)
            lat.sort()
            return {"n": len(lat), "p50": lat[len(lat) // 2], "p99": lat[int(len(lat) * 0.99)],
                    "p99.9": lat[int(len(lat) * 0.999)], "max": lat[-1]}

        left_s = deadline_ms / 1000 - time.time()
        control = probe(max(0.5, left_s - 1.5))
        time.sleep(max(0.0, deadline_ms / 1000 - time.time() - 0.2))
        storm = probe(3.0)
        remaining = int(call(b"DBSIZE\r\n")[1:])
        return control, storm, remaining
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--keys", type=int, default=1_000_000)
    args = ap.parse_args()
    for name, cmd in (("Peregrine", [args.peregrine]),
                      ("Redis", ["redis-server", "--save", "", "--appendonly", "no"])):
        port = bl.free_port()
        control, storm, remaining = measure(cmd + ["--port", str(port), "--bind", "127.0.0.1"], port, args.keys)
        for label, r in (("control", control), ("storm", storm)):
            print(f"{name:9} {label:7} n={r['n']:6} p50={r['p50']:.3f} p99={r['p99']:.3f} "
                  f"p99.9={r['p99.9']:.3f} max={r['max']:.3f} ms")
        print(f"{name:9} p99.9 storm/control = {storm['p99.9'] / control['p99.9']:.2f}; "
              f"keys left after the window: {remaining - 1}")


if __name__ == "__main__":
    main()
