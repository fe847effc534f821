#!/usr/bin/env python3
"""Lists and blocking pops (#17): Peregrine against Debian's redis-server in
one run (MEASURING.md: a fresh server per measurement, rounds interleaved,
server on CPU 0, loaders and redis-benchmark on CPU 1, medians, ratios).

Memory: RSS after loading (and a second to settle) minus RSS when empty,
per item, for
  m_list1m   1M 8-byte items in one list (RPUSH, 100 per command)
  m_list10   100K lists of 10 such items
  m_list1mz  m_list1m with list-compress-depth 1 (LZF, both servers)
  m_text1mz  1M log-like ~60-byte items, list-compress-depth 1
Speed: redis-benchmark LPUSH, RPUSH, LPOP, RPOP (on a list filled first),
LRANGE 0 99 and LRANGE 0 599 of a 600-item list, with -P 16 and without
pipelining: requests/s and server CPU per request, with the null server
(bench/null_server.cc: LRANGE answered with as many "xxx" items) as the
ceiling of this machine and load generator, and the work share (Peregrine's
CPU per request above the ceiling's, over Redis's above it).
Queue: 8 redis-benchmark clients in BRPOP on one list while 4 others LPUSH
to it (messages/s, and the consumers' p50/p99 BRPOP latency: the hand-off),
also with Peregrine on 2 worker threads (producers and consumers then sit
on both).
Hand-off: one client process (the harness, pinned to CPU 1, no other load) keeps 8
connections in BRPOP and LPUSHes one message at a time on a ninth; the time
from sending the LPUSH to the BRPOP reply's arrival, p50/p99/p99.9 over 20K
messages. The queue rows' BRPOP latency is mostly the two redis-benchmark
processes taking turns on one CPU (both servers' p99 sit near 4 ms, a
scheduler slice); this one is the server's hand-off.
Free stall: a list of 10M items deleted while another client PINGs: the
DEL's time and the slowest and p99.9 PING from the DEL on for 500 ms.

    python3 bench/lists.py [build/release/peregrine] [--rounds 2] [--quick | --smoke] [--only ids]

Writes bench/results/lists.json and the section between the "lists"
markers of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import random
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from containers import measure_benchmark, ratio, send_all  # noqa: E402

BEGIN = "<!-- lists:begin -->"
END = "<!-- lists:end -->"


def load_one_list(port: int, n: int, key: str = "biglist"):
    send_all(port, (bl.encode("RPUSH", key, *[b"v%07d" % i for i in range(s, min(n, s + 100))])
                    for s in range(0, n, 100)), 20)


def load_one_list_compressed(port: int, n: int):
    send_all(port, [bl.encode("CONFIG", "SET", "list-compress-depth", "1")])
    load_one_list(port, n)


WORDS = [b"order", b"shipped", b"customer", b"payment", b"refund", b"pending", b"warehouse", b"berlin", b"paris",
         b"lisbon", b"express", b"standard", b"item", b"quantity", b"total", b"status"]


def load_text_list_compressed(port: int, n: int):
    """n log-like items of about 60 bytes (a random number and three
    word:number pairs; LZF takes them to about 60%), list-compress-depth 1."""
    rng = random.Random(5)

    def item():
        return b"%d" % rng.getrandbits(64) + b"".join(
            b" %s:%d" % (rng.choice(WORDS), rng.randrange(100000)) for _ in range(3))

    send_all(port, [bl.encode("CONFIG", "SET", "list-compress-depth", "1")])
    send_all(port, (bl.encode("RPUSH", "biglist", *[item() for _ in range(s, min(n, s + 100))])
                    for s in range(0, n, 100)), 20)


def load_small_lists(port: int, keys: int):
    send_all(port, (bl.encode("RPUSH", b"q:%08d" % k, *[b"v%07d" % (k + m) for m in range(10)])
                    for k in range(keys)))


MEMORY = [
    # id, title, loader, argument, items, a key to look at
    ("m_list1m", "1M 8-byte items in one list", load_one_list, 1_000_000, 1_000_000, "biglist"),
    ("m_list10", "100K lists of 10 items", load_small_lists, 100_000, 1_000_000, "q:00000000"),
    ("m_list1mz", "1M 8-byte items in one list, list-compress-depth 1", load_one_list_compressed, 1_000_000,
     1_000_000, "biglist"),
    ("m_text1mz", "1M ~60-byte log-like items in one list, list-compress-depth 1", load_text_list_compressed,
     1_000_000, 1_000_000, "biglist"),
]
# Targets: Peregrine / Redis at most this (issue #17; compressed: ours).
MEMORY_TARGET = {"m_list1m": 1.0, "m_list10": 0.6, "m_list1mz": 1.0, "m_text1mz": 1.0}


def speed_tests(scale: float):
    """(id, redis-benchmark args, requests, what to fill first)."""
    n = max(1000, int(1_000_000 * scale))
    n1 = max(1000, int(200_000 * scale))
    tests = []
    for tag, pipe, reqs in (("p16", ["-P", "16"], n), ("p1", [], n1)):
        tests += [
            (f"{tag}_lpush", pipe + ["-t", "lpush"], reqs, None),
            (f"{tag}_rpush", pipe + ["-t", "rpush"], reqs, None),
            (f"{tag}_lpop", pipe + ["-t", "lpop"], reqs, "fill"),
            (f"{tag}_rpop", pipe + ["-t", "rpop"], reqs, "fill"),
            (f"{tag}_lrange100", pipe + ["LRANGE", "mylist", "0", "99"], max(1000, reqs // 4), "fill600"),
            (f"{tag}_lrange600", pipe + ["LRANGE", "mylist", "0", "599"], max(1000, reqs // 10), "fill600"),
        ]
    return tests


# Targets (issue #17): -P 16 at least 1.5x Redis's requests/s at most 0.6x
# its CPU per request; without pipelining at least 1.0x.
SPEED_TARGET = {"p16": (1.5, 0.6), "p1": (1.0, None)}


def run_memory(spec, workdir, mid, loader, arg, items, key):
    srv = bl.Server(spec, workdir)
    try:
        time.sleep(0.3)
        rss0 = srv.rss_kb()
        loader(srv.port, arg)
        time.sleep(1.0)
        rss1 = srv.rss_kb()
        c = srv.client()
        try:
            enc = c.call("OBJECT", "ENCODING", key)
        finally:
            c.close()
        return {"server": spec.name, "id": mid, "bytes_per_element": (rss1 - rss0) * 1024 / items,
                "encoding": enc.decode() if isinstance(enc, bytes) else enc}
    finally:
        srv.shutdown()


def run_speed(spec, workdir, tid, args, n, fill, rb):
    srv = bl.Server(spec, workdir)
    try:
        if spec.name == "null":
            pass  # it stores nothing: no fill
        elif fill == "fill":  # what LPOP/RPOP pop (redis-benchmark's "mylist")
            bl.run_redis_benchmark(rb, srv.port, ["-c", "50", "-n", str(n), "-P", "16", "-t", "lpush"], 600)
        elif fill == "fill600":
            c = srv.client()
            try:
                c.call("RPUSH", "mylist", *[b"x" * 3] * 600)
            finally:
                c.close()
        return measure_benchmark(srv, spec, tid, args, n, rb)
    finally:
        srv.shutdown()


def wait_blocked(srv, n, timeout=20):
    """Until `n` clients are blocked (INFO blocked_clients)."""
    deadline = time.monotonic() + timeout
    while int(srv.info("clients").get("blocked_clients", 0)) < n:
        if time.monotonic() > deadline:
            raise bl.BenchError("the consumers did not block")
        time.sleep(0.01)


def quantile(sorted_values, q):
    """The q-quantile of sorted values (nearest rank below), None if none."""
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def run_queue(spec, workdir, qid, n, rb, consumers=8, producers=4):
    """Consumers BRPOP one list while producers LPUSH to it; both redis-benchmark."""
    srv = bl.Server(spec, workdir)
    try:
        cons_argv = bl.taskset(bl.CLIENT_CPU) + [rb, "-h", bl.HOST, "-p", str(srv.port), "-c", str(consumers),
                                                  "-n", str(n), "BRPOP", "queue", "30"]
        cons = subprocess.Popen(cons_argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        wait_blocked(srv, consumers)
        t0, _ = srv.cpu_ticks()
        _, ptext, prc, _ = bl.run_redis_benchmark(rb, srv.port, ["-c", str(producers), "-n", str(n),
                                                                  "LPUSH", "queue", "message-0123456789"], 600)
        out, _ = cons.communicate(timeout=600)
        t1, _ = srv.cpu_ticks()
        ctext = out.decode(errors="replace")
        cp, pp = bl.parse_redis_benchmark(ctext), bl.parse_redis_benchmark(ptext)
        if prc != 0 or cons.returncode != 0 or not cp or not pp:
            raise bl.BenchError(f"queue run failed: {ctext[-600:]} {ptext[-600:]}")
        return {"server": spec.name, "id": qid, "rps": cp[-1].get("rps"), "p50_ms": cp[-1].get("p50"),
                "p99_ms": cp[-1].get("p99"), "push_p99_ms": pp[-1].get("p99"),
                "cpu_us_per_req": (t1 - t0) / bl.CLK_TCK * 1e6 / (2 * n)}
    finally:
        srv.shutdown()


def run_handoff(spec, workdir, hid, n, consumers=8):
    """Push-to-pop latency of one message with `consumers` clients blocked in
    BRPOP (see the module's docstring)."""
    srv = bl.Server(spec, workdir)
    cons = []
    try:
        cons = [bl.RespClient(srv.port) for _ in range(consumers)]
        prod = bl.RespClient(srv.port)
        cons.append(prod)
        brpop = bl.encode("BRPOP", "queue", "30")
        for c in cons[:consumers]:
            c.sock.sendall(brpop)
        wait_blocked(srv, consumers)
        by_fd = {c.sock.fileno(): c for c in cons[:consumers]}
        poller = select.poll()
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        msg = b"message-0123456789"
        push = bl.encode("LPUSH", "queue", msg)
        lat = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            prod.sock.sendall(push)
            ready = poller.poll(10_000)
            t1 = time.perf_counter_ns()
            if not ready:
                raise bl.BenchError("no consumer got the message")
            c = by_fd[ready[0][0]]
            if c.read_reply() != [b"queue", msg]:
                raise bl.BenchError("unexpected BRPOP reply")
            c.sock.sendall(brpop)
            prod.read_reply()
            lat.append((t1 - t0) / 1e6)
        lat.sort()
        return {"server": spec.name, "id": hid, "messages": n, "p50_ms": quantile(lat, 0.5),
                "p99_ms": quantile(lat, 0.99), "p999_ms": quantile(lat, 0.999)}
    finally:
        for c in cons:
            c.close()
        srv.shutdown()


def pings_during(port: int, action):
    """Runs action() while another client PINGs; returns its result, the
    time it started and the PINGs as (sent at, ms) from just before it on
    (a PING that waited behind it counts)."""
    lat = []
    stop = threading.Event()
    started = threading.Event()

    def pinger():
        s = socket.create_connection((bl.HOST, port), timeout=30)
        try:
            while not stop.is_set():
                t = time.monotonic()
                s.sendall(b"PING\r\n")
                buf = b""
                while not buf.endswith(b"\r\n"):
                    buf += s.recv(64)
                lat.append((t, (time.monotonic() - t) * 1000))
                started.set()
        finally:
            s.close()

    th = threading.Thread(target=pinger)
    th.start()
    try:
        started.wait(10)
        time.sleep(0.2)
        t0 = time.monotonic()
        result = action()
        time.sleep(0.5)
    finally:
        stop.set()
        th.join(30)
    return result, t0, sorted(ms for t, ms in lat if t >= t0 - 0.05)


def run_free_stall(spec, workdir, items, loader=None, key="biglist"):
    """DEL of a container of `items` elements at `key` (a list, or what
    loader(port, items) makes) while another client PINGs."""
    srv = bl.Server(spec, workdir)
    try:
        (loader or load_one_list)(srv.port, items)
        c = srv.client(timeout=120)

        def delete():
            t = time.monotonic()
            c.call("DEL", key)
            return (time.monotonic() - t) * 1000

        try:
            del_ms, _, window = pings_during(srv.port, delete)
        finally:
            c.close()
        return {"server": spec.name, "id": "free10m", "del_ms": del_ms, "ping_max_ms": max(window or [0]),
                "ping_p999_ms": quantile(window, 0.999), "pings": len(window)}
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    args, scale = bl.parse_bench_args(argv)
    shrink = 100 if args.smoke else 1
    rb = "redis-benchmark"
    only = set(filter(None, args.only.split(",")))
    want = lambda tid: not only or tid in only  # noqa: E731
    records = []
    machine = bl.machine_info()  # before pinning: nproc honours the affinity mask
    # The harness (loaders, the hand-off client, the PING thread) on the
    # client CPU, as redis-benchmark.
    if bl.have_cpus(bl.CLIENT_CPU, bl.SERVER_CPU):
        os.sched_setaffinity(0, {int(bl.CLIENT_CPU)})
    with tempfile.TemporaryDirectory(prefix="lists-") as workdir:
        binary, digest = bl.snapshot_binary(args.peregrine, workdir)
        per = bl.peregrine_spec(binary)
        per2 = replace(per, extra=["--threads", "2"], label="Peregrine (2 threads)", name="peregrine2")
        specs = [per, bl.redis_spec()]
        null = bl.null_spec(bl.build_null_server())
        for rnd in range(args.rounds):
            order = specs if rnd % 2 == 0 else specs[::-1]

            def record(r):
                r["round"] = rnd
                records.append(r)
                return r

            for mid, title, loader, arg, items, key in MEMORY:
                if want(mid):
                    for spec in order:
                        r = record(run_memory(spec, workdir, mid, loader, arg // shrink, items // shrink, key))
                        print(f"{spec.label:9s} {mid:9s} {r['bytes_per_element']:6.1f} B/item ({r['encoding']})",
                              flush=True)
            for tid, targs, n, fill in speed_tests(scale):
                if want(tid):
                    for spec in order + [null]:
                        r = record(run_speed(spec, workdir, tid, targs, n, fill, rb))
                        print(f"{spec.label:9s} {tid:14s} {r['rps'] or 0:>12,.0f} req/s "
                              f"{r['cpu_us_per_req']:.3f} us/req", flush=True)
            if want("queue"):
                for spec in order + [per2]:
                    r = record(run_queue(spec, workdir, "queue", max(2000, int(200_000 * scale)), rb))
                    print(f"{spec.label:9s} queue {r['rps'] or 0:>12,.0f} msg/s p50 {r['p50_ms']} ms "
                          f"p99 {r['p99_ms']} ms (LPUSH p99 {r['push_p99_ms']} ms)", flush=True)
            if want("handoff"):
                for spec in order + [per2]:
                    r = record(run_handoff(spec, workdir, "handoff", max(500, int(20_000 * scale))))
                    print(f"{spec.label:9s} handoff p50 {r['p50_ms']:.3f} ms p99 {r['p99_ms']:.3f} ms "
                          f"p99.9 {r['p999_ms']:.3f} ms", flush=True)
            if want("free10m") and rnd == 0:
                for spec in order:
                    r = record(run_free_stall(spec, workdir, 10_000_000 // (shrink * (5 if args.quick else 1))))
                    print(f"{spec.label:9s} free10m DEL {r['del_ms']:.1f} ms, PING max {r['ping_max_ms']:.1f} ms "
                          f"p99.9 {r['ping_p999_ms']:.2f} ms over {r['pings']}", flush=True)
    if not args.smoke:
        out = Path(bl.REPO) / "bench" / "results" / "lists.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"records": records, "binary_sha256": digest, "machine": machine},
                                  indent=1))
    write_report(records, args.rounds, docs=not args.no_docs and not only)
    return 0


def med(records, rid, server, metric):
    return bl.median([r.get(metric) for r in records if r["id"] == rid and r["server"] == server])


def server_table(records, rid, metrics, formats, caption, header):
    """A table of one row per server (Peregrine, on 2 threads, Redis) of the
    medians of `metrics`; nothing when Redis has no record of `rid`."""
    rows = {s: [med(records, rid, s, m) for m in metrics] for s in ("peregrine", "peregrine2", "redis")}
    if rows["redis"][0] is None:
        return []
    out = ["", caption, "", header, "|---" * len(header.strip("|").split("|")) + "|"]
    for s, label in (("peregrine", "Peregrine"), ("peregrine2", "Peregrine, 2 threads"), ("redis", "Redis")):
        if rows[s][0] is not None:
            out.append(f"| {label} | " + " | ".join(format(v, f) for v, f in zip(rows[s], formats)) + " |")
    return out


def write_report(records, rounds: int, docs: bool):
    lines = [BEGIN, "", "### Lists and blocking pops (#17)", "",
             f"`python3 bench/lists.py` ({rounds} rounds, medians; Redis is Debian's redis-server 7.0; "
             "Peregrine on one thread unless said). Memory is RSS after loading minus RSS empty, per item.", "",
             "| memory | Peregrine B/item | Redis B/item | ratio | target |", "|---|---|---|---|---|"]
    for mid, title, *_ in MEMORY:
        p, r = med(records, mid, "peregrine", "bytes_per_element"), med(records, mid, "redis", "bytes_per_element")
        if p is not None and r is not None:
            lines.append(f"| {title} | {p:.1f} | {r:.1f} | {ratio(p, r)} | ≤ {MEMORY_TARGET[mid]} |")
    lines += ["", "| redis-benchmark -c 50 | Peregrine req/s | Redis req/s | ratio | null server req/s "
              "| CPU/req ratio | work share | target |", "|---|---|---|---|---|---|---|---|"]
    for tid, targs, n, _ in speed_tests(1.0):
        p, r = med(records, tid, "peregrine", "rps"), med(records, tid, "redis", "rps")
        pc, rc = med(records, tid, "peregrine", "cpu_us_per_req"), med(records, tid, "redis", "cpu_us_per_req")
        z, zc = med(records, tid, "null", "rps"), med(records, tid, "null", "cpu_us_per_req")
        if p is None or r is None:
            continue
        t_rps, t_cpu = SPEED_TARGET[tid.split("_")[0]]
        target = f"≥ {t_rps}x" + (f", CPU ≤ {t_cpu}x" if t_cpu else "")
        share = ratio(pc - zc, rc - zc) if zc is not None and pc is not None and rc is not None else "—"
        ceiling = f"{z:,.0f}" if z is not None else "—"
        lines.append(f"| {' '.join(targs)} | {bl.num(p, ',.0f')} | {bl.num(r, ',.0f')} | {ratio(p, r)} | {ceiling} | {ratio(pc, rc)} "
                     f"| {share} | {target} |")
    lines += server_table(records, "queue", ("rps", "p50_ms", "p99_ms"), (",.0f", ".3f", ".3f"),
                          "Queue: 8 clients `BRPOP queue 30` while 4 others `LPUSH queue <18 bytes>` "
                          "(redis-benchmark, no pipelining, both on CPU 1: their BRPOP latency is mostly the two "
                          "taking turns on that CPU).",
                          "| server | messages/s | BRPOP p50 ms | BRPOP p99 ms |")
    lines += server_table(records, "handoff", ("p50_ms", "p99_ms", "p999_ms"), (".3f", ".3f", ".3f"),
                          "Hand-off: 8 connections in `BRPOP queue 30`, one message `LPUSH`ed at a time from a "
                          "ninth, all in one client process on CPU 1: from sending the LPUSH to the BRPOP reply's "
                          "arrival (20K messages; with 2 threads the connections sit on both workers).",
                          "| server | p50 ms | p99 ms | p99.9 ms |")
    f = {s: [r for r in records if r["id"] == "free10m" and r["server"] == s] for s in ("peregrine", "redis")}
    if f["peregrine"] and f["redis"]:
        lines += ["", "Freeing a 10M-item list (DEL) while another client PINGs:", "",
                  "| server | DEL ms | slowest PING ms | PING p99.9 ms |", "|---|---|---|---|"]
        for s, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
            r = f[s][0]
            lines.append(f"| {label} | {r['del_ms']:.1f} | {r['ping_max_ms']:.1f} | {r['ping_p999_ms']:.2f} |")
    lines += ["", END]
    text = "\n".join(lines)
    print(text)
    if docs:
        bl.put_docs_section(BEGIN, END, text)


if __name__ == "__main__":
    sys.exit(main())
