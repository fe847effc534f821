#!/usr/bin/env python3
"""Soak test (`make soak`, not in CI; issue #6): SECONDS of mixed load,
connection churn and bad input against one Peregrine server, which must keep
answering with its RSS flat after warm-up and nothing alarming in its log.

    bench/soak.py [PEREGRINE_BINARY] [--seconds 600] [--threads N]

Load, all at once, all on 127.0.0.1:
  - redis-benchmark in rounds: SET, GET, INCR, MSET, plus SET with EX (keys
    that expire), over 200,000 random keys, 50 connections, pipelines of 1
    and 16;
  - connection churn: a client that connects, runs a few commands (some
    multi-key over several shards, some with a deadline) and disconnects,
    over and over;
  - bad input: fresh connections sending malformed requests (bad lengths,
    wrong types, truncated frames, random bytes, unknown commands, huge
    announced bulks never sent), each expected to get an error or a close,
    never to crash anything.
Every 10 s: the server's RSS (/proc/PID/status), used_memory, and a PING's
round trip from a separate client. Pass: the server answered every PING,
RSS at the end within 5% of RSS at the end of warm-up (the first fifth of
the run, at least 60 s), no line in its log above notice level other than
the expected start and shutdown ones. Writes bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

KEYS = 200_000


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def benchmark_loop(rb: str, port: int, stop: threading.Event, errors: list):
    tests = [["-t", "set,get,incr,mset"], ["-t", "set,get"]]
    i = 0
    while not stop.is_set():
        pipeline = "16" if i % 2 else "1"
        argv = [rb, "-h", bl.HOST, "-p", str(port), "-c", "50", "-n", "200000", "-r", str(KEYS), "-P", pipeline,
                "-q"] + tests[i % len(tests)]
        if i % 3 == 2:  # keys with deadlines: expiry runs all along
            argv = [rb, "-h", bl.HOST, "-p", str(port), "-c", "20", "-n", "50000", "-r", str(KEYS), "-q",
                    "SET", "ttl:__rand_int__", "v", "EX", "2"]
        p = subprocess.run(argv, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            errors.append(f"redis-benchmark exited {p.returncode}: {p.stderr[-300:]!r}")
        i += 1


def churn_loop(port: int, stop: threading.Event, errors: list, counts: dict):
    rng = random.Random(1)
    while not stop.is_set():
        try:
            c = bl.RespClient(port, timeout=10)
            try:
                for _ in range(rng.randint(1, 8)):
                    k = [f"churn:{rng.randrange(KEYS)}" for _ in range(3)]
                    c.call("MSET", k[0], "a", k[1], "b", k[2], "c")
                    c.call("MGET", *k)
                    c.call("SET", k[0], "x", "PX", str(rng.randint(1, 3000)))
                    c.call("DEL", k[1], k[2])
                counts["churn"] += 1
            finally:
                c.close()
        except (OSError, bl.BenchError) as e:
            errors.append(f"churn: {e}")
            time.sleep(0.1)


BAD = [
    b"*2\r\n$3\r\nGET\r\n$-5\r\nk\r\n",
    b"*1\r\n$999999999999\r\n",
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nshort\r\n",
    b"*-1\r\n*0\r\n*1\r\n$4\r\nPING\r\n",
    b"$5\r\nhello\r\n",
    b"*1\r\n$4\r\nPI",
    b"NOSUCHCOMMAND a b c\r\n",
    b"SET k\r\n",
    b'SET "unterminated\r\n',
    b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n" * 3,
    b"*1\r\n$536870913\r\n",
    b"\x00\xff\r\n\r\n*\r\n",
]


def bad_input_loop(port: int, stop: threading.Event, errors: list, counts: dict):
    rng = random.Random(2)
    while not stop.is_set():
        try:
            s = socket.create_connection((bl.HOST, port), timeout=5)
            try:
                payload = rng.choice(BAD) if rng.random() < 0.8 else bytes(rng.randrange(256)
                                                                          for _ in range(rng.randint(1, 200)))
                s.sendall(payload)
                s.settimeout(0.5)
                try:
                    s.recv(4096)
                except socket.timeout:
                    pass  # a truncated frame waits for more: fine
                counts["bad"] += 1
            finally:
                s.close()
        except OSError as e:
            errors.append(f"bad input: {e}")
            time.sleep(0.1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--threads", type=int, default=0, help="worker threads (0: the server's default)")
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "soak.json"))
    args = ap.parse_args(argv)
    pbin, (rb,) = bl.find_binaries(args.peregrine, [args.redis_benchmark], "redis-tools")
    workdir = tempfile.mkdtemp(prefix="peregrine-soak-")
    binary, sha = bl.snapshot_binary(pbin, workdir)
    extra = ["--threads", str(args.threads)] if args.threads else []
    port = bl.free_port()
    log_path = os.path.join(workdir, "server.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", bl.HOST, "--save", ""] + extra, cwd=workdir,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while True:
        try:
            probe = bl.RespClient(port, timeout=5)
            probe.call("PING")
            break
        except (OSError, bl.BenchError):
            if time.monotonic() > deadline or proc.poll() is not None:
                print("soak: the server did not start", file=sys.stderr)
                return 2
            time.sleep(0.05)
    stop = threading.Event()
    errors: list = []
    counts = {"churn": 0, "bad": 0}
    workers = [threading.Thread(target=benchmark_loop, args=(rb, port, stop, errors), daemon=True),
               threading.Thread(target=churn_loop, args=(port, stop, errors, counts), daemon=True),
               threading.Thread(target=bad_input_loop, args=(port, stop, errors, counts), daemon=True)]
    for t in workers:
        t.start()
    warmup = max(60, args.seconds // 5)
    samples = []
    t0 = time.monotonic()
    pings_failed = 0
    while time.monotonic() - t0 < args.seconds:
        time.sleep(10)
        if proc.poll() is not None:
            errors.append(f"the server exited with {proc.returncode}")
            break
        try:
            a = time.monotonic()
            probe.call("PING")
            ping_ms = (time.monotonic() - a) * 1000
            used = int(probe.info("memory")["used_memory"])
        except (OSError, bl.BenchError) as e:
            pings_failed += 1
            errors.append(f"probe: {e}")
            try:
                probe = bl.RespClient(port, timeout=5)
            except OSError:
                pass
            continue
        samples.append({"t": round(time.monotonic() - t0), "rss_kb": rss_kb(proc.pid), "used_memory": used,
                        "ping_ms": round(ping_ms, 2)})
        s = samples[-1]
        print(f"  {s['t']:5d}s  RSS {s['rss_kb'] / 1024:7.1f} MB  used_memory {used / 2**20:7.1f} MB  "
              f"PING {ping_ms:6.2f} ms  churned {counts['churn']}  bad inputs {counts['bad']}", flush=True)
    stop.set()
    for t in workers:
        t.join(timeout=660)
    alive = proc.poll() is None
    if alive:
        try:
            bl.send_shutdown_nosave(probe)
        except OSError:
            pass
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            errors.append("the server did not exit on SHUTDOWN")
    log.close()
    text = Path(log_path).read_text(errors="replace")
    expected = re.compile(r"starting, pid=|Ready to accept|User requested shutdown|ready to exit")
    alarming = [line for line in text.splitlines()
                if re.search(r" [#] ", line) and not expected.search(line)
                or re.search(r"AddressSanitizer|runtime error|Segmentation|Assertion", line)]
    after_warmup = [s for s in samples if s["t"] >= warmup]
    growth = None
    if len(after_warmup) >= 2:
        growth = (after_warmup[-1]["rss_kb"] - after_warmup[0]["rss_kb"]) / after_warmup[0]["rss_kb"]
    ok = alive and pings_failed == 0 and not alarming and growth is not None and growth < 0.05 and \
        proc.returncode == 0 and not [e for e in errors if not e.startswith("redis-benchmark")]
    print()
    print(f"seconds {args.seconds}, warm-up {warmup} s; RSS after warm-up "
          f"{after_warmup[0]['rss_kb'] / 1024 if after_warmup else 0:.1f} MB -> end "
          f"{after_warmup[-1]['rss_kb'] / 1024 if after_warmup else 0:.1f} MB "
          f"(growth {growth * 100 if growth is not None else float('nan'):.2f}%); "
          f"max PING {max((s['ping_ms'] for s in samples), default=0):.1f} ms; "
          f"connections churned {counts['churn']}, bad inputs {counts['bad']}; "
          f"alarming log lines {len(alarming)}; errors {len(errors)}")
    for e in errors[:10]:
        print("  error:", e)
    for line in alarming[:10]:
        print("  log:", line)
    print("PASS" if ok else "FAIL")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "seconds": args.seconds, "warmup_s": warmup,
                   "threads": args.threads or "default", "samples": samples, "rss_growth": growth,
                   "churned": counts["churn"], "bad_inputs": counts["bad"], "errors": errors[:50],
                   "alarming_log_lines": alarming[:50], "pass": ok, "machine": bl.machine_info()}, f, indent=1)
    print(f"raw results: {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
