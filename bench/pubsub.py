#!/usr/bin/env python3
"""PUBLISH throughput, Peregrine against Redis (`make bench-pubsub`).

    bench/pubsub.py [PEREGRINE_BINARY] [--rounds 3] [--requests 300000]

Three servers, fresh per run, alternating over the rounds: Redis, Peregrine
`--threads 1` and `--threads 2`, unpinned (servers, load generator and the
subscribers share this machine's cores, as in bench/threads.py). Per run:
SUBSCRIBERS raw-socket subscribers of one channel (threads of this process
that read and count everything), then redis-benchmark (50 connections,
2 threads) sending `PUBLISH bench:channel <16 bytes>` at pipeline 1 and 16,
and the same with no subscriber at all. Checked: every subscriber received
every message. Reported: median requests/s. Writes bench/results/pubsub.json.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from threads import Unpinned, setup  # noqa: E402

CHANNEL = b"bench:channel"
PAYLOAD = b"0123456789abcdef"
SUBSCRIBERS = 2
# One message as a RESP2 subscriber receives it.
MESSAGE = b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(CHANNEL), CHANNEL, len(PAYLOAD), PAYLOAD)


class Subscriber(threading.Thread):
    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.sock = socket.create_connection((bl.HOST, port), timeout=30)
        self.sock.sendall(bl.encode("SUBSCRIBE", CHANNEL))
        want = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(CHANNEL), CHANNEL)
        got = b""
        while len(got) < len(want):
            got += self.sock.recv(len(want) - len(got))
        if got != want:
            raise bl.BenchError(f"unexpected SUBSCRIBE reply {got!r}")
        self.bytes = 0
        self.stop = False

    def run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            if not chunk:
                break
            self.bytes += len(chunk)

    def close(self):
        self.stop = True
        self.join(5)
        self.sock.close()


def run_one(spec: bl.ServerSpec, workdir: str, rb: str, pipeline: int, n: int, subscribers: int) -> float:
    srv = Unpinned(spec, workdir)
    subs = []
    try:
        subs = [Subscriber(srv.port) for _ in range(subscribers)]
        for s in subs:
            s.start()
        argv = [rb, "-h", bl.HOST, "-p", str(srv.port), "--threads", "2", "-c", "50", "-P", str(pipeline),
                "-n", str(n), "PUBLISH", CHANNEL.decode(), PAYLOAD.decode()]
        p = subprocess.run(argv, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
        text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        tests = bl.parse_redis_benchmark(text)
        if p.returncode != 0 or not tests:
            raise bl.BenchError(f"{spec.label}: redis-benchmark failed: {text[-800:]}")
        # Every subscriber must get every message (redis-benchmark may send a
        # few more than -n at pipeline > 1, never fewer).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(s.bytes < n * len(MESSAGE) for s in subs):
            time.sleep(0.05)
        for s in subs:
            if s.bytes < n * len(MESSAGE) or s.bytes % len(MESSAGE) != 0:
                raise bl.BenchError(f"{spec.label}: a subscriber got {s.bytes} bytes, "
                                    f"{s.bytes / len(MESSAGE):.1f} messages of {n}")
        return tests[0]["rps"]
    finally:
        for s in subs:
            s.close()
        srv.shutdown()


def main(argv=None) -> int:
    args, specs, rb, workdir, sha = setup(argv, __doc__, "pubsub", 300_000)
    cases = [(p, s) for p in (1, 16) for s in (SUBSCRIBERS, 0)]
    results: dict = {}
    t0 = time.monotonic()
    for rnd in range(args.rounds):
        order = specs if rnd % 2 == 0 else list(reversed(specs))
        for pipeline, nsubs in cases:
            for spec in order:
                rps = run_one(spec, workdir, rb, pipeline, args.requests, nsubs)
                results.setdefault(f"{spec.name} P{pipeline} subs{nsubs}", []).append(rps)
                print(f"  round {rnd + 1} P{pipeline:<2d} {nsubs} subscribers {spec.label:22s} {rps:>10,.0f} req/s",
                      flush=True)
    med = {k: bl.median(v) for k, v in results.items()}
    print()
    print(f"{'PUBLISH':22s}{'Redis':>11s}{'P --threads 1':>15s}{'P --threads 2':>15s}{'t1 / Redis':>12s}{'t2 / Redis':>12s}")
    for pipeline, nsubs in cases:
        r, a, b = (med[f"{n} P{pipeline} subs{nsubs}"] for n in ("redis", "peregrine-1", "peregrine-2"))
        print(f"P{pipeline:<3d}{nsubs} subscribers{'':6s}{r:11,.0f}{a:15,.0f}{b:15,.0f}{a / r:12.2f}{b / r:12.2f}")
    print(f"{(time.monotonic() - t0) / 60:.1f} min")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "requests": args.requests,
                   "rounds": args.rounds, "subscribers": SUBSCRIBERS, "median": med, "runs": results,
                   "machine": bl.machine_info()}, f, indent=1)
    print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
