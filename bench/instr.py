#!/usr/bin/env python3
"""Instructions per GET and per SET, Peregrine vs Redis, under callgrind
(`make bench-instr`).

    bench/instr.py [PEREGRINE_BINARY] [--requests 20000] [--pipeline 16] [--repeat 3]

Each server is started under `valgrind --tool=callgrind` (pinned to CPU 0) and
fed the same fixed request stream from a Python raw-socket client over one
connection; then it is stopped with SHUTDOWN NOSAVE and the total instruction
count (Ir) is read from the callgrind output.  Four runs per server:

  base    start, one PING (the readiness check), SHUTDOWN NOSAVE
  idle    as base, plus IDLE seconds doing nothing (measures the timer/cron
          cost per second, which is then removed from the other runs)
  set     as base, plus N SETs (8-byte values, keys key:%012d drawn from a
          100K keyspace with a fixed seed) at pipeline P
  setget  as set, then N GETs of keys that were set (all hit)

  Ir/SET = (set - base) / N,  Ir/GET = (setget - set) / N,
  Ir/request (GET+SET) = (setget - base) / 2N,
each after removing idle_rate x the wall time of the request phase.  Runs are
repeated and the median taken.  Writes bench/results/instr.json and the
"Instructions per request" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

KEYSPACE = 100_000
VALUE = b"x" * 8
SEED = 12345


def build_stream(n: int, pipeline: int):
    """Deterministic batches: [(payload, count, kind)] for the SETs and the GETs."""
    rng = random.Random(SEED)
    set_ids = [rng.randrange(KEYSPACE) for _ in range(n)]
    get_ids = [rng.choice(set_ids) for _ in range(n)]
    sets, gets = [], []
    for i in range(0, n, pipeline):
        chunk = set_ids[i:i + pipeline]
        sets.append((b"".join(bl.encode(b"SET", bl.key_name(k), VALUE) for k in chunk), len(chunk)))
    for i in range(0, n, pipeline):
        chunk = get_ids[i:i + pipeline]
        gets.append((b"".join(bl.encode(b"GET", bl.key_name(k)) for k in chunk), len(chunk)))
    return sets, gets


def read_total_ir(path: str) -> int:
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                v = int(line.split()[1])
                total = v if total is None else max(total, v)
    if total is None:
        raise bl.BenchError(f"no totals/summary line in {path}")
    return total


def one_run(spec: bl.ServerSpec, kind: str, args, stream, workdir: str, attach=None) -> dict:
    """`attach(srv)`, when given, runs once the server is up (a MONITOR
    client: bench/monitor_cost.py) and returns what to call at the end."""
    out = os.path.join(workdir, f"callgrind.{spec.name}.{kind}.{time.monotonic_ns()}.out")
    wrapper = [args.valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"]
    srv = bl.Server(spec, workdir, wrapper=wrapper, ready_timeout=120)
    phase = 0.0
    misses = 0
    detach = attach(srv) if attach is not None else None
    try:
        c = srv.client(timeout=300)
        try:
            auth = getattr(args, "auth", None)
            if auth:  # run as this ACL user (bench/acl_cost.py)
                c.sock.sendall(bl.encode(b"AUTH", auth[0].encode(), auth[1].encode()))
                r = c.read_reply()
                if r != "OK":
                    raise bl.BenchError(f"{spec.label}: AUTH {auth[0]} replied {r}")
            t0 = time.monotonic()
            if kind == "idle":
                time.sleep(args.idle)
            if kind in ("set", "setget"):
                for payload, cnt in stream[0]:
                    bad = c.pipeline_raw(payload, cnt, expect=b"+OK\r\n")
                    if bad:
                        raise bl.BenchError(f"{spec.label}: {bad} SET replies not +OK")
            if kind == "setget":
                for payload, cnt in stream[1]:
                    c.sock.sendall(payload)
                    for _ in range(cnt):
                        r = c.read_reply()
                        if isinstance(r, bl.BenchError):
                            raise bl.BenchError(f"{spec.label}: GET error {r}")
                        if r != VALUE:
                            misses += 1
            phase = time.monotonic() - t0
            if auth:  # (back to the default user, who may shut down)
                c.sock.sendall(bl.encode(b"AUTH", b"default", b"any"))
                c.read_reply()
            bl.send_shutdown_nosave(c)
        finally:
            c.close()
        try:
            srv.proc.wait(120)
        except subprocess.TimeoutExpired:
            raise bl.BenchError(f"{spec.label} did not exit within 120 s of SHUTDOWN NOSAVE")
        rc = srv.proc.returncode
    finally:
        if detach is not None:
            detach()
        if srv.alive():
            srv.kill()
        srv.log.close()
    if rc != 0:
        raise bl.BenchError(f"{spec.label} {kind}: exit code {rc} after SHUTDOWN NOSAVE; "
                            f"log tail: {srv.log_tail()}")
    return {"server": spec.name, "kind": kind, "ir": read_total_ir(out), "phase_s": round(phase, 3),
            "get_misses": misses, "callgrind_out": out}


def cost_per_request(spec: bl.ServerSpec, kind: str, args, stream, workdir: str, attach=None):
    """The callgrind cost scripts' figure: (median, spread) over args.repeat
    of the `kind` run's instructions minus the base run's, per request
    (a setget run has two per key: SET and GET)."""
    per = args.requests * (2 if kind == "setget" else 1)
    per_rep = []
    for _ in range(args.repeat):
        rs = {k: one_run(spec, k, args, stream, workdir, attach=attach) for k in ("base", kind)}
        per_rep.append((rs[kind]["ir"] - rs["base"]["ir"]) / per)
    return bl.median(per_rep), max(per_rep) - min(per_rep)


def cost_by_flags(args, pbin: str, modes: dict, kind: str = "set", name: str = "cost") -> dict:
    """The callgrind cost scripts' rows: cost_per_request of the `kind` run
    for Peregrine and Redis under each of `modes` (mode -> the server's extra
    flags), as rows[(server, mode)]. Raises bl.BenchError."""
    args.idle = 0
    args.auth = None
    workdir = tempfile.mkdtemp(prefix=f"peregrine-{name}-")
    try:
        stream = build_stream(args.requests, args.pipeline)
        pcopy, _ = bl.snapshot_binary(pbin, workdir)
        rows = {}
        for spec, server in ((bl.peregrine_spec(pcopy), "Peregrine"), (bl.redis_spec(args.redis_server), "Redis")):
            for mode, extra in modes.items():
                flagged = bl.ServerSpec(spec.name, spec.label, spec.binary, spec.extra + extra)
                rows[(server, mode)] = cost_per_request(flagged, kind, args, stream, workdir)
        return rows
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def top_functions_diff(path: str, base: str, n: int, nreq: int,
                       binary: str = "") -> list[tuple[float, str]]:
    """The n functions with the most own (exclusive) instructions per request:
    (Ir in the setget run - Ir in the base run) / requests, per function."""
    a = dict((f, ir) for ir, f in function_costs(path))
    b = dict((f, ir) for ir, f in function_costs(base))
    rows = [((ir - b.get(f, 0)) / nreq, tidy(f, binary)) for f, ir in a.items()]
    rows.sort(key=lambda r: -r[0])
    return rows[:n]


def tidy(fn: str, binary: str = "") -> str:
    def obj(m):
        if m.group(1) == binary:
            return " [peregrine]"
        name = os.path.basename(m.group(1))
        # Debian's redis-server is a link to redis-check-rdb (one binary).
        return " [redis-server]" if name == "redis-check-rdb" else f" [{name}]"
    fn = re.sub(r" \[(.*?)\]$", obj, fn)
    fn = fn.replace("std::basic_string_view<char, std::char_traits<char> >", "std::string_view")
    fn = fn.replace("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
                    "std::string")
    return re.sub(r"^\./[^:]*/", "", fn)


def function_costs(path: str) -> list[tuple[int, str]]:
    """Exclusive Ir per function (callgrind_annotate), every function."""
    try:
        p = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=no", "--threshold=100", path],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return []
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\([\s\d.]+%\)\s+)?(\S.*)$", line)
        if m and ":" in m.group(2) and "PROGRAM TOTALS" not in line and not m.group(2).startswith("=>"):
            try:
                rows.append((int(m.group(1).replace(",", "")), m.group(2).strip()))
            except ValueError:
                pass
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(bl.DEFAULT_PEREGRINE))
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--requests", type=int, default=20_000, help="SETs, and then GETs, per run")
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--idle", type=float, default=3.0, help="seconds of the idle run")
    ap.add_argument("--annotate", type=int, default=12, help="top functions to list (0 = none)")
    ap.add_argument("--docs", default=str(bl.REPO / "docs" / "benchmarks.md"))
    ap.add_argument("--json", default=str(bl.REPO / "bench" / "results" / "instr.json"))
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--binary-note", metavar="TEXT",
                    help="say this about the binary's provenance instead of HEAD and build time")
    ap.add_argument("--shown-as", metavar="PATH",
                    help="name this path for the binary in the report (when measuring a saved copy)")
    args = ap.parse_args(argv)

    try:
        pbin, (args.redis_server, args.valgrind) = bl.find_binaries(
            args.peregrine, [args.redis_server, args.valgrind], "valgrind redis-server")
    except bl.BenchError as e:
        print(f"instr: {e}", file=sys.stderr)
        return 2
    machine = bl.machine_info()
    git_at_start = bl.git_describe()
    built = _dt.datetime.fromtimestamp(os.stat(pbin).st_mtime, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    if bl.have_cpus(bl.CLIENT_CPU, bl.SERVER_CPU):
        os.sched_setaffinity(0, {int(bl.CLIENT_CPU)})

    workdir = tempfile.mkdtemp(prefix="peregrine-instr-")
    pcopy, psha = bl.snapshot_binary(pbin, workdir)
    specs = [bl.peregrine_spec(pcopy), bl.redis_spec(args.redis_server)]
    stream = build_stream(args.requests, args.pipeline)
    records = []
    t_start = time.monotonic()
    try:
        for rep in range(args.repeat):
            order = specs if rep % 2 == 0 else list(reversed(specs))
            for spec in order:
                for kind in ("base", "idle", "set", "setget"):
                    r = one_run(spec, kind, args, stream, workdir)
                    r["repeat"] = rep
                    records.append(r)
                    print(f"  {spec.label:9s} {kind:6s} rep {rep}: Ir {r['ir']:>14,}  "
                          f"request phase {r['phase_s']:.2f}s"
                          + (f"  GET misses {r['get_misses']}" if r["get_misses"] else ""), flush=True)
        top = {}
        if args.annotate:
            for spec in specs:
                rs = {r["kind"]: r for r in records if r["server"] == spec.name and r["repeat"] == 0}
                top[spec.name] = top_functions_diff(rs["setget"]["callgrind_out"],
                                                    rs["base"]["callgrind_out"], args.annotate,
                                                    2 * args.requests, binary=pcopy)
    except bl.BenchError as e:
        print(f"instr: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    n = args.requests
    results = {}
    for spec in specs:
        per_rep = []
        for rep in range(args.repeat):
            rs = {r["kind"]: r for r in records if r["server"] == spec.name and r["repeat"] == rep}
            idle_rate = max(0.0, (rs["idle"]["ir"] - rs["base"]["ir"]) / args.idle)

            def corr(k):
                return rs[k]["ir"] - idle_rate * rs[k]["phase_s"]
            per_rep.append({
                "idle_ir_per_s": idle_rate,
                "set": (corr("set") - rs["base"]["ir"]) / n,
                "get": (corr("setget") - corr("set")) / n,
                "both": (corr("setget") - rs["base"]["ir"]) / (2 * n),
                "set_raw": (rs["set"]["ir"] - rs["base"]["ir"]) / n,
                "get_raw": (rs["setget"]["ir"] - rs["set"]["ir"]) / n,
                "base": rs["base"]["ir"],
                "idle_corr_share": idle_rate * rs["setget"]["phase_s"]
                                   / max(1, rs["setget"]["ir"] - rs["base"]["ir"]),
            })
        results[spec.name] = {k: bl.median([p[k] for p in per_rep]) for k in per_rep[0]}
        results[spec.name]["spread_both"] = (max(p["both"] for p in per_rep)
                                             - min(p["both"] for p in per_rep))
        results[spec.name]["top"] = top.get(spec.name, [])
        results[spec.name]["get_misses"] = sum(r["get_misses"] for r in records if r["server"] == spec.name)

    P, R = results["peregrine"], results["redis"]
    print()
    print(f"{'':12s} {'Peregrine':>12s} {'Redis':>12s} {'ratio':>7s}")
    for k, label in (("get", "Ir/GET"), ("set", "Ir/SET"), ("both", "Ir/request")):
        print(f"{label:12s} {P[k]:12,.0f} {R[k]:12,.0f} {P[k] / R[k]:7.2f}")
    print(f"{'start-up Ir':12s} {P['base']:12,.0f} {R['base']:12,.0f}")
    print(f"{'idle Ir/s':12s} {P['idle_ir_per_s']:12,.0f} {R['idle_ir_per_s']:12,.0f}")
    dur = (time.monotonic() - t_start) / 60
    print(f"{len(records)} callgrind runs in {dur:.1f} min")

    meta = {"date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine,
            "peregrine_version": bl.version_of([pbin, "--version"]), "git": args.binary_note or f"HEAD {git_at_start} at the start, binary built {built}",
            "peregrine_sha256": psha,
            "redis_version": bl.version_of([args.redis_server, "--version"]),
            "valgrind_version": bl.version_of([args.valgrind, "--version"]),
            "requests": n, "pipeline": args.pipeline, "repeat": args.repeat, "idle_s": args.idle,
            "server_argv": {s.name: bl.cmd_str(["valgrind", "--tool=callgrind", "--callgrind-out-file=OUT"]
                                               + [{pcopy: args.shown_as or bl.display_path(pbin)}.get(a, a).replace("/usr/bin/", "")
                                                  for a in s.argv(0)]).replace(" 0 ", " $PORT ")
                            for s in specs}}
    jpath = Path(args.json)
    jpath.parent.mkdir(parents=True, exist_ok=True)
    for r in records:
        r.pop("callgrind_out", None)
    jpath.write_text(json.dumps({"meta": meta, "results": results, "records": records}, indent=1))
    print(f"raw results: {jpath}")
    if not args.no_docs:
        write_section(Path(args.docs), meta, results, specs)
        print(f"updated {args.docs}")
    return 0


def write_section(docs: Path, meta, results, specs):
    P, R = results["peregrine"], results["redis"]
    n, pl = meta["requests"], meta["pipeline"]
    L = [bl.INSTR_BEGIN, "## Instructions per request (callgrind)", "",
         f"Measured by `make bench-instr` (`bench/instr.py`) on {meta['date']}: "
         f"{meta['valgrind_version']}; {meta['peregrine_version']}, binary sha256 "
         f"{meta['peregrine_sha256']}… ({meta['git']}); "
         f"{meta['redis_version']}. User-space instructions only (callgrind does not see the "
         "kernel), all threads of the server.", "",
         "| | Peregrine | Redis | Peregrine/Redis |", "|---|---|---|---|"]
    for k, label in (("get", "instructions per GET"), ("set", "instructions per SET"),
                     ("both", "instructions per request, GET+SET mix")):
        L.append(f"| {label} | {P[k]:,.0f} | {R[k]:,.0f} | {P[k] / R[k]:.2f} |")
    L.append(f"| start-up + one PING + SHUTDOWN (Ir, subtracted) | {P['base']:,.0f} | {R['base']:,.0f} | "
             f"{P['base'] / R['base']:.2f} |")
    L.append(f"| idle cost (Ir per second, subtracted) | {P['idle_ir_per_s']:,.0f} | "
             f"{R['idle_ir_per_s']:,.0f} | — |")
    L.append("")
    L.append(f"Stream: {n:,} `SET key:%012d xxxxxxxx` (keys drawn from a {KEYSPACE:,} keyspace with a "
             f"fixed seed), then {n:,} `GET` of keys that were set (all hit), pipeline {pl}, one "
             "connection, from a Python raw-socket client; the same bytes for both servers. Each "
             "server runs four times under `valgrind --tool=callgrind`: *base* (start, the "
             "readiness PING, `SHUTDOWN NOSAVE`), *idle* (base plus "
             f"{meta['idle_s']:g} s idle, giving the cron/timer cost per second), *set* (base plus the "
             "SETs) and *setget* (set plus the GETs). Ir/SET = (set − base)/N, Ir/GET = (setget − "
             "set)/N, each after removing the idle cost for the wall time of the request phase "
             f"({P['idle_corr_share'] * 100:.2f}% of the setget request Ir for Peregrine, "
             f"{R['idle_corr_share'] * 100:.2f}% for Redis). {meta['repeat']} repetitions, alternating the server order; medians. "
             f"The spread of Ir/request over repetitions was {P['spread_both']:.0f} (Peregrine) and "
             f"{R['spread_both']:.0f} (Redis) instructions.")
    L.append("")
    L.append("For reference, MEASURING.md gives Redis 7 at about 4,000 instructions per request and "
             "a null server (frames RESP, stores nothing) at about 650.")
    L.append("")
    L.append("```sh")
    L.append("make bench-instr   # = python3 bench/instr.py build/release/peregrine")
    for s in specs:
        L.append("taskset -c 0 " + meta["server_argv"][s.name])
    L.append("```")
    L.append("")
    for name, label in (("peregrine", "Peregrine"), ("redis", "Redis")):
        top = results[name].get("top") or []
        if top:
            L.append(f"<details><summary>{label}: where the instructions go — own instructions "
                     "per request (GET+SET mix) by function, setget run minus base run, first "
                     "repetition</summary>")
            L.append("")
            L.append("| Ir/request | function |")
            L.append("|---|---|")
            for ir, fn in top:
                L.append(f"| {ir:,.0f} | `{fn[:140]}` |")
            L.append("")
            L.append("</details>")
            L.append("")
    L.append(bl.INSTR_END)
    section = "\n".join(L)
    if docs.exists():
        body, _ = bl.split_instr_section(docs.read_text())
    else:
        body = "# Benchmarks: Peregrine vs Redis\n\nRun `make bench` for the throughput tables.\n"
    docs.parent.mkdir(parents=True, exist_ok=True)
    docs.write_text(body.rstrip() + "\n\n" + section + "\n")


if __name__ == "__main__":
    sys.exit(main())
