#!/usr/bin/env python3
"""Moving a slot that holds 1 GB, while other clients use both nodes
(`make bench-cluster-migrate`; issue #39's target: the p99.9 latency of the
other clients on both nodes at most 2x idle, and no client sees an error).

    bench/cluster_migrate.py [PEREGRINE_BINARY] [--mb 1024] [--value 1000] [--rate 500] [--rounds 1]
                             [--big-items N] [--spread] [--only redis,peregrine]

For each server, a fresh cluster of three primaries (bench/cluster.py's:
`--threads 1` for Peregrine, every node on CPU 0), the first slot of the
first primary filled with --mb MB of strings (--value bytes each, keys
`{tag}:<n>`, SET in pipelines of 1000), and one more key on each primary,
in slots that do not move. Three probe processes (on CPU 1), one per
primary (the source, the target, and the bystander that takes no part in
the move), each send GET and SET of their key in turn at --rate requests/s
on one connection, open loop: a request's latency counts from when it was
due, so that a stall also counts for the requests it delayed. The
bystander shows what sharing CPU 0 with the two busy nodes costs a node by
itself (on this 2-core machine the three nodes share one core; in a real
cluster each has its own). After 10 s of idle probing the slot moves:

  - Peregrine: CLUSTER MIGRATESLOTS SLOTSRANGE <slot> <slot> NODE <second>
    (atomic slot migration), polled with CLUSTER GETSLOTMIGRATIONS every
    50 ms until it says success;
  - Redis 7.0 (no atomic migration): `redis-cli --cluster reshard
    --cluster-from <first> --cluster-to <second> --cluster-slots 1
    --cluster-pipeline 100 --cluster-yes` (MIGRATE of 100 keys at a time:
    redis-cli's own way, the one Redis has).

With --big-items N the slot also holds one hash of N fields, a large key:
Redis's MIGRATE moves it whole (a DUMP on the source, a RESTORE on the
target, each blocking its node), Peregrine's migration a part per step.
Then 1 s more of probing. Reported per server and node: p50 / p99 / p99.9 /
max latency of the probe during the move against its idle seconds, the
ratio p99.9 move / idle (and against the bystander's), the errors the
probes saw, the move's wall time,
and the keys the target holds after (all of them, or the move failed).
Writes bench/results/cluster_migrate.json and the "Cluster: moving a
1 GB slot" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
from cluster import Cluster, call  # noqa: E402

BEGIN = "<!-- cluster-migrate:begin -->"
END = "<!-- cluster-migrate:end -->"
IDLE_S = 10.0
AFTER_S = 1.0


def crc16(data: bytes) -> int:
    # (CRC16-XMODEM, Redis Cluster's: written here so that the script runs
    # on a machine with nothing but Python, the device run's.)
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def tag_for_slot(slot: int) -> str:
    i = 0
    while True:
        t = f"t{i}"
        if crc16(t.encode()) % 16384 == slot:
            return t
        i += 1


def probe(port: int, key: bytes, rate: float, cpu: str, stop, out):
    """Open-loop GET/SET of `key` at `rate`/s until `stop`; sends back
    (due time, latency s, error) of each request."""
    if bl.have_cpus(cpu):
        os.sched_setaffinity(0, bl.cpu_set(cpu))
    s = socket.create_connection((bl.HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cmds = [bl.encode("GET", key), bl.encode("SET", key, b"v" * 16)]
    interval = 1.0 / rate
    due = time.perf_counter()
    times, lats, errors = [], [], []
    n = 0
    while not stop.is_set():
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        s.sendall(cmds[n & 1])
        buf = b""
        while True:
            buf += s.recv(4096)
            if buf.startswith(b"$") and buf.endswith(b"\r\n") and (buf.count(b"\r\n") >= 2 or buf == b"$-1\r\n"):
                break
            if not buf.startswith(b"$") and buf.endswith(b"\r\n"):
                break
        done = time.perf_counter()
        times.append(due)
        lats.append(done - due)
        if buf.startswith(b"-"):
            errors.append(buf[:200].decode(errors="replace"))
        n += 1
        due += interval
    s.close()
    out.send((times, lats, errors))


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))]


def summary(times, lats, lo, hi) -> dict:
    xs = [lat * 1000 for t, lat in zip(times, lats) if lo <= t < hi]
    return {"n": len(xs), "p50": pct(xs, 0.5), "p99": pct(xs, 0.99), "p99.9": pct(xs, 0.999),
            "max": max(xs) if xs else None}


def load(port: int, tag: str, nkeys: int, value: int):
    c = bl.RespClient(port, timeout=120)
    v = b"x" * value
    try:
        for start in range(0, nkeys, 1000):
            payload = b"".join(bl.encode("SET", f"{{{tag}}}:{i}", v) for i in range(start, min(nkeys, start + 1000)))
            if c.pipeline_raw(payload, min(1000, nkeys - start), expect=b"+OK\r\n"):
                raise bl.BenchError("a SET was not answered +OK while loading")
    finally:
        c.close()


def move(kind: str, cl: Cluster, src: dict, dst: dict, slot: int) -> tuple[float, str]:
    """Moves `slot` from src to dst; (seconds, how)."""
    t0 = time.monotonic()
    if kind == "peregrine":
        r = call(src["port"], "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", slot, slot, "NODE", dst["id"])
        if r != "OK":
            raise bl.BenchError(f"MIGRATESLOTS: {r}")
        while True:
            ms = call(src["port"], "CLUSTER", "GETSLOTMIGRATIONS")
            m = dict(zip(ms[0][::2], ms[0][1::2]))
            state = m[b"state"].decode()
            if state == "success":
                break
            if state in ("failed", "cancelled"):
                raise bl.BenchError(f"the migration {state}: {m[b'message'].decode()}")
            if time.monotonic() - t0 > 600:
                raise bl.BenchError("the migration did not end in 600 s")
            time.sleep(0.05)
        return time.monotonic() - t0, f"CLUSTER MIGRATESLOTS SLOTSRANGE {slot} {slot} NODE <id>"
    argv = bl.taskset(bl.CLIENT_CPU) + ["redis-cli", "--cluster", "reshard", f"{bl.HOST}:{src['port']}",
                                        "--cluster-from", src["id"], "--cluster-to", dst["id"],
                                        "--cluster-slots", "1", "--cluster-pipeline", "100", "--cluster-yes"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise bl.BenchError(f"redis-cli --cluster reshard failed: {(p.stdout + p.stderr)[-800:]}")
    return time.monotonic() - t0, bl.cmd_str(argv[argv.index("redis-cli"):])


def load_big(port: int, tag: str, items: int):
    """One hash of `items` fields in the slot (HSET of 1000 fields at a time):
    a key that Redis's MIGRATE moves whole (DUMP, then RESTORE)."""
    c = bl.RespClient(port, timeout=120)
    try:
        for start in range(0, items, 1000):
            args = ["HSET", f"{{{tag}}}:big"]
            for i in range(start, min(items, start + 1000)):
                args += [f"field:{i}", f"value:{i}"]
            c.call(*args)
    finally:
        c.close()


def measure(kind: str, binary: str, workdir: str, mb: int, value: int, rate: float, spread: bool,
            big_items: int = 0) -> dict:
    cl = Cluster(kind, binary, workdir, 3)
    try:
        prim = cl.primaries()
        src, dst = prim[0], prim[1]
        probe_cpus = [bl.CLIENT_CPU] * 3
        if spread:
            # Each node on a CPU of its own (BENCH_SERVER_CPUS), each probe
            # too (BENCH_CLIENT_CPUS): what a real cluster's nodes have.
            server_cpus = sorted(bl.cpu_set(bl.SERVER_CPU))
            client_cpus = sorted(bl.cpu_set(bl.CLIENT_CPU))
            if len(server_cpus) < 3 or len(client_cpus) < 3:
                raise bl.BenchError("--spread needs 3 CPUs in BENCH_SERVER_CPUS and 3 in BENCH_CLIENT_CPUS")
            for cpu, node in zip(server_cpus, prim):
                subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(cl.by_port(node["port"]).proc.pid)],
                               capture_output=True, check=True)
            probe_cpus = [str(c) for c in client_cpus[:3]]
        slot = int(src["slots"][0].split("-")[0])
        nkeys = mb * (1 << 20) // value
        load(src["port"], tag_for_slot(slot), nkeys, value)
        if big_items:
            load_big(src["port"], tag_for_slot(slot), big_items)
            nkeys += 1
        src_srv = cl.by_port(src["port"])
        rss_mb = bl.read_rss_kb(src_srv.proc.pid) / 1024
        keys = {}
        third = prim[2]
        for name, node in (("source", src), ("target", dst), ("bystander", third)):
            other = int(node["slots"][0].split("-")[0]) + 7
            keys[name] = f"{{{tag_for_slot(other)}}}probe".encode()
            call(node["port"], "SET", keys[name], "v")
        ctx = mp.get_context("fork")
        stop = ctx.Event()
        pipes, procs = {}, {}
        for i, (name, node) in enumerate((("source", src), ("target", dst), ("bystander", third))):
            recv, send = ctx.Pipe(duplex=False)
            pipes[name] = recv
            procs[name] = ctx.Process(target=probe, args=(node["port"], keys[name], rate, probe_cpus[i], stop, send))
            procs[name].start()
        start = time.perf_counter()
        time.sleep(IDLE_S)
        t0 = time.perf_counter()
        try:
            wall, how = move(kind, cl, src, dst, slot)
        finally:
            t1 = time.perf_counter()
            time.sleep(AFTER_S)
            stop.set()
            got = {name: pipes[name].recv() for name in pipes}
            for p in procs.values():
                p.join(10)
        after = call(dst["port"], "CLUSTER", "COUNTKEYSINSLOT", slot)
        left = call(src["port"], "CLUSTER", "COUNTKEYSINSLOT", slot)
        out = {"server": kind, "mb": mb, "value": value, "keys": nkeys, "slot": slot, "wall_s": wall, "how": how,
               "source_rss_mb": rss_mb, "target_keys_after": after, "source_keys_after": left, "nodes": {}}
        if kind == "peregrine":  # (how long the source held writes for the handover, from its log)
            m = re.findall(r"writes paused ([\d.]+) ms: ([\d.]+) to drain, ([\d.]+) for TAKEOVER, ([\d.]+) to give",
                           src_srv.log_tail(20000))
            out["writes_paused_ms"] = float(m[-1][0]) if m else None
            out["paused_parts_ms"] = dict(zip(("drain", "takeover", "give"), map(float, m[-1][1:]))) if m else None
        for name, (times, lats, errors) in got.items():
            out["nodes"][name] = {"idle": summary(times, lats, start + 0.5, t0),
                                  "move": summary(times, lats, t0, t1),
                                  "errors": len(errors), "first_errors": errors[:3]}
        return out
    finally:
        cl.stop()


def fmt(x, spec=".2f"):
    return bl.num(x, spec)


def docs_section(res: list[dict], args, sha: str, versions: dict, machine: dict, command: str) -> str:
    lines = [BEGIN, "## Cluster: moving a 1 GB slot (issue #39)", "",
             f"Measured {time.strftime('%Y-%m-%d')} by `{command}` (`make bench-cluster-migrate`; binary {sha}; "
             f"{versions['redis']}). Three primaries per server, every node on CPU 0 (`--threads 1` for Peregrine); "
             f"the first slot of the first primary holds {args.mb} MB ({args.value}-byte strings); three probes on "
             f"CPU 1, one per primary (the source, the target, and a bystander that takes no part), each GET/SET "
             f"a key of a slot that stays at {args.rate:.0f} requests/s, open loop (latency from when a request "
             "was due). Peregrine moves the slot with CLUSTER MIGRATESLOTS (atomic slot migration); Redis 7.0, "
             "which has none, with `redis-cli --cluster reshard --cluster-slots 1 --cluster-pipeline 100` "
             "(MIGRATE of 100 keys at a time). Latencies in ms: the probe's seconds of moving against its 9.5 idle "
             "seconds before. The three nodes share CPU 0: the bystander's row is what that sharing costs a node "
             "that does nothing of the move.", "",
             "| server | node | idle p50 / p99.9 | moving p50 / p99 / p99.9 / max | p99.9 moving / idle | errors | "
             "move took | keys on the target after |",
             "|---|---|---|---|---|---|---|---|"]
    for r in res:
        label = "Peregrine" if r["server"] == "peregrine" else "Redis"
        for name in ("source", "target", "bystander"):
            n = r["nodes"][name]
            i, m = n["idle"], n["move"]
            ratio = m["p99.9"] / i["p99.9"] if m["p99.9"] and i["p99.9"] else None
            lines.append(f"| {label} | {name} | {fmt(i['p50'], '.3f')} / {fmt(i['p99.9'], '.3f')} | "
                         f"{fmt(m['p50'], '.3f')} / {fmt(m['p99'], '.3f')} / {fmt(m['p99.9'], '.3f')} / "
                         f"{fmt(m['max'], '.2f')} | {fmt(ratio, '.2f')}x | {n['errors']} | {r['wall_s']:.1f} s | "
                         f"{r['target_keys_after']:,} of {r['keys']:,} |")
    lines += ["", f"Machine: {machine.get('cpu', '?')}, {machine.get('nproc', '?')} CPUs. Raw: "
              "bench/results/cluster_migrate.json.", END]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--value", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=500)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="redis,peregrine")
    ap.add_argument("--spread", action="store_true",
                    help="each node on a CPU of its own (BENCH_SERVER_CPUS, 3 or more) and each probe "
                         "(BENCH_CLIENT_CPUS, 3 or more): the figure the target asks for, on a machine with the cores")
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "cluster_migrate.json"))
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--big-items", type=int, default=0,
                    help="also one hash of this many fields in the slot (a large key: Redis's MIGRATE moves it whole)")
    args = ap.parse_args(argv)
    pbin, _ = bl.find_binaries(args.peregrine, ["redis-cli", "redis-server"], "redis-server redis-tools")
    machine = bl.machine_info()
    if bl.have_cpus(bl.CLIENT_CPU):
        os.sched_setaffinity(0, bl.cpu_set(bl.CLIENT_CPU))
    workdir = tempfile.mkdtemp(prefix="peregrine-cluster-migrate-")
    binary, sha = bl.snapshot_binary(pbin, workdir)
    binaries = {"redis": "redis-server", "peregrine": binary}
    versions = {"redis": bl.version_of(["redis-server", "--version"]), "peregrine": bl.version_of([binary, "--version"])}
    kinds = [k for k in ("redis", "peregrine") if k in args.only.split(",")]
    res, failures = [], []
    for rnd in range(1, args.rounds + 1):
        for kind in (kinds if rnd % 2 else kinds[::-1]):
            try:
                r = measure(kind, binaries[kind], workdir, args.mb, args.value, args.rate, args.spread, args.big_items)
            except bl.BenchError as e:
                print(f"{kind} round {rnd}: FAILED: {e}", flush=True)
                failures.append({"server": kind, "round": rnd, "error": str(e)})
                continue
            r["round"] = rnd
            res.append(r)
            for name in ("source", "target", "bystander"):
                n = r["nodes"][name]
                i, m = n["idle"], n["move"]
                print(f"{kind:9s} {name}: idle p50 {fmt(i['p50'], '.3f')} p99.9 {fmt(i['p99.9'], '.3f')} ms | moving "
                      f"p50 {fmt(m['p50'], '.3f')} p99 {fmt(m['p99'], '.3f')} p99.9 {fmt(m['p99.9'], '.3f')} max "
                      f"{fmt(m['max'], '.2f')} ms ({m['n']} requests) | errors {n['errors']} {n['first_errors']}",
                      flush=True)
            paused = (f"; writes paused {r['writes_paused_ms']} ms ({r['paused_parts_ms']})"
                      if r.get("writes_paused_ms") is not None else "")
            print(f"{kind:9s} moved {r['keys']:,} keys ({args.mb} MB) in {r['wall_s']:.1f} s; target has "
                  f"{r['target_keys_after']:,}, source {r['source_keys_after']:,}{paused}", flush=True)
    if failures:
        print(f"servers' logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    command = " ".join(["bench/cluster_migrate.py", bl.display_path(args.peregrine)] +
                       [a for a in (argv if argv is not None else sys.argv[1:]) if a != args.peregrine])
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"binary_sha256": sha, "git": bl.git_describe(), "versions": versions, "command": command,
                   "results": res, "failures": failures, "machine": machine}, f, indent=1)
    if not args.no_docs and not failures and len(kinds) == 2 and not args.spread and not args.big_items:
        bl.put_docs_section(BEGIN, END, docs_section(res, args, sha, versions, machine, command))
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except bl.BenchError as e:
        print(f"cluster_migrate.py: {e}", file=sys.stderr)
        sys.exit(2)
