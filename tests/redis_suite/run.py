#!/usr/bin/env python3
"""Run Redis's own Tcl test units against a server in external mode.

For each unit the harness starts the server itself (127.0.0.1 only, a free
port, a fresh temp dir), runs
    tclsh tests/test_helper.tcl --host 127.0.0.1 --port P --single UNIT --clients 1
from the Redis source tree, kills everything when the unit's time is up, stops
the server and notes whether it died during the run (a crash). It parses the
[ok]/[err]/[skip]/[ignore]/[exception] lines and writes summary.json,
summary.txt and per unit the raw tclsh output and the server log to --out.

    python3 tests/redis_suite/run.py --server build/release/peregrine \
        --server-args "--threads 1" --out /tmp/suite-out/t1 \
        unit/scripting unit/functions unit/multi
    python3 tests/redis_suite/run.py --server redis-server --out /tmp/suite-out/ref \
        unit/scripting unit/functions unit/multi
    ... --compare /tmp/suite-out/ref/summary.json    # per-unit diff vs a reference
    ... --from-json /tmp/suite-out/t1/summary.json --compare REF.json   # no run

The Redis source defaults to the build/redis-src/redis (or the newest redis-*) (the Makefile
fetches it there with `apt-get source redis`). Every server gets
`--save "" --appendonly no --enable-debug-command yes` (the suite needs DEBUG)
before --server-args. --skiptest/--tags/--durable pass through to the Tcl
suite (--durable turns an exception into a failed test and goes on; write
--tags=-needs:repl with '=', argparse takes a leading '-' for an option).
Several runs may go side by side (each picks its own ports). Exit status: 0
when every unit passed, 1 otherwise. FAILURES.md beside this file is the work
list from the last analysis.
"""
import argparse, collections, glob, json, os, random, re, shlex, shutil, signal, socket
import subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SERVER_ARGS = ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STATUS = re.compile(r"^\[(ok|err|skip|ignore|exception|TIMEOUT)\]: ?(.*)$")
DONE = re.compile(r"^\[\d+/\d+ done\]: ")
# Lines the test server prints that end an [err] / [exception] block.
BLOCK_END = re.compile(r"^(\[(ok|err|skip|ignore|exception|TIMEOUT|ready)\]|\[\d+/\d+ |Testing |"
                       r"\s+The End$|Execution time of|Killing still running|!!! WARNING)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ping(port, timeout=1.0):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def kill_group(proc, sig=signal.SIGKILL):
    """Signal the process group of a child we started (start_new_session)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def start_server(args, port, log_path):
    workdir = tempfile.mkdtemp(prefix="redis-suite-")
    cmd = [args.server, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir]
    cmd += DEFAULT_SERVER_ARGS + shlex.split(args.server_args)
    log = open(log_path, "wb")
    log.write(("# " + shlex.join(cmd) + "\n").encode())
    log.flush()
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 15
    while time.time() < deadline and proc.poll() is None:
        if ping(port):
            return proc, workdir, log
        time.sleep(0.05)
    return proc, workdir, log  # caller sees it is not answering


def stop_server(proc, workdir, log):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.wait()
    log.close()
    shutil.rmtree(workdir, ignore_errors=True)


def parse(text):
    """Turn the Tcl test server's output into a result dict."""
    tests, failures, ignored, skipped, block_errors = [], [], [], [], []
    exception, timeout_state, done = None, None, False
    lines = [ANSI.sub("", l) for l in text.splitlines()]
    i = 0
    while i < len(lines):
        line = lines[i]
        m = STATUS.match(line)
        i += 1
        if DONE.match(line):
            done = True
        if not m:
            continue
        kind, rest = m.groups()
        if kind == "ok":
            tests.append({"name": re.sub(r" \(\d+ ms\)$", "", rest), "status": "ok"})
        elif kind in ("skip", "ignore"):
            (skipped if kind == "skip" else ignored).append(rest)
        else:  # err, exception, TIMEOUT: gather the block that follows
            block = [rest]
            while i < len(lines) and not BLOCK_END.match(lines[i]):
                block.append(lines[i])
                i += 1
            if kind == "err" and re.search(r" in tests/\S+\.tcl$", block[0]):
                name = re.sub(r" in tests/\S+\.tcl$", "", block[0])
                err = "\n".join(block[1:]).strip()
                tests.append({"name": name, "status": "err"})
                failures.append({"name": name, "error": err})
            elif kind == "err":  # --durable: an error outside any test, the rest of
                block_errors.append("\n".join(block[1:]).strip())  # its start_server block is skipped
            elif kind == "exception":
                exception = "\n".join(block).strip()
            else:
                timeout_state = "\n".join(block).strip()
    return dict(tests=tests, failures=failures, ignored=ignored, skipped=skipped,
                block_errors=block_errors, exception=exception, timeout_state=timeout_state, done=done)


def aborting_test(res):
    """Name of the test that was running when the unit aborted, if we can tell."""
    if res["exception"]:
        # The Tcl errorInfo holds the test's source as: "test {NAME} {" or "test "NAME" {"
        m = re.search(r'^"test (?:\{(.+?)\}|"(.+?)") \{', res["exception"], re.M)
        if m:
            return m.group(1) or m.group(2)
    if res["timeout_state"]:  # "sockN => (IN PROGRESS|OK|ERR) NAME [in FILE]" = last status
        m = re.search(r"=> \((IN PROGRESS|OK|ERR)\) (.*?)(?: in tests/\S+\.tcl)?$", res["timeout_state"], re.M)
        if m:
            return m.group(2) if m.group(1) == "IN PROGRESS" else "the test after: " + m.group(2)
    for t in res["failures"]:  # a dead server: the first test that lost its connection
        if re.search(r"I/O error|connection refused|broken pipe|connection reset", t["error"], re.I):
            return t["name"]
    return None


def last_started_test(server_log):
    """Redis/Peregrine log '### Starting test NAME in FILE' on DEBUG LOG."""
    names = re.findall(r"### Starting test (.*) in tests/\S+", server_log)
    return names[-1] if names else None


def run_unit(args, unit, src):
    slug = unit.replace("/", "_")
    port = free_port()
    out_path = os.path.join(args.out, slug + ".out")
    log_path = os.path.join(args.out, slug + ".server.log")
    srv, workdir, log = start_server(args, port, log_path)
    started = time.time()
    r = {"unit": unit, "port": port}
    if not ping(port):
        stop_server(srv, workdir, log)
        r.update(parse(""), status="server-did-not-start", aborted=True, crashed=False,
                 duration=0.0, last_output=open(log_path, errors="replace").read()[-2000:])
        return r
    cmd = ["tclsh", "tests/test_helper.tcl", "--host", "127.0.0.1", "--port", str(port),
           "--single", unit, "--clients", "1", "--timeout", str(args.stall_timeout),
           # the Tcl test server listens on a port in [baseport-32, baseport): pick a
           # random range so that several harness runs can go side by side
           "--baseport", str(random.randrange(20000, 50000))]
    if args.tags:
        cmd += ["--tags", args.tags]
    for t in args.skiptest:
        cmd += ["--skiptest", t]
    if args.durable:
        cmd.append("--durable")
    env = dict(os.environ, TERM="dumb")  # no colour codes
    with open(out_path, "wb") as out:
        out.write(("# cd %s && %s\n" % (src, shlex.join(cmd))).encode())
        out.flush()
        tcl = subprocess.Popen(cmd, cwd=src, stdout=out, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        timed_out = False
        try:
            tcl.wait(args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        kill_group(tcl)  # the Tcl test server spawns a test-client tclsh
        tcl.wait()
    # Did the server die under the suite?  (a dead process, or one that stopped answering)
    crashed = srv.poll() is not None
    hung = not crashed and not ping(port, timeout=3)
    exit_code = srv.returncode
    stop_server(srv, workdir, log)
    text = open(out_path, errors="replace").read()
    res = parse(text)
    server_log = open(log_path, errors="replace").read()
    r.update(res, duration=round(time.time() - started, 1), crashed=crashed,
             server_unresponsive=hung, server_exit=exit_code, tcl_exit=tcl.returncode,
             harness_timeout=timed_out)
    if crashed:
        r["status"] = "crash"
    elif timed_out or res["timeout_state"]:
        r["status"] = "timeout"
    elif res["exception"]:
        r["status"] = "exception"
    elif not res["done"]:
        r["status"] = "incomplete"
    else:
        r["status"] = "failed" if res["failures"] else "ok"
    r["aborted"] = r["status"] not in ("ok", "failed")
    if r["aborted"]:
        r["abort_test"] = aborting_test(res) or last_started_test(server_log)
        if not r["abort_test"] and res["tests"]:
            where = ("outside any test (start_server body), after: " if r["status"] == "exception"
                     else "the test after: ")
            r["abort_test"] = where + res["tests"][-1]["name"]
        reason = (res["exception"] or res["timeout_state"] or "").split("\n")[0]
        if crashed:
            reason = "server exited with %s during the run; %s" % (exit_code, reason)
        elif timed_out:
            reason = "harness timeout after %ds; %s" % (args.timeout, reason)
        r["abort_reason"] = reason.replace("Executing test client: ", "")
        r["last_output"] = "\n".join(ANSI.sub("", text).splitlines()[-40:])
        r["server_log_tail"] = "\n".join(server_log.splitlines()[-30:])
    return r


def counts(u):
    passed = sum(1 for t in u["tests"] if t["status"] == "ok")
    return passed, len(u["failures"]), len(u["skipped"]), len(u["ignored"])


def table(summary):
    rows = ["%-28s %6s %6s %6s %6s  %s" % ("unit", "passed", "failed", "skip", "ignore", "status")]
    for unit, u in summary["units"].items():
        p, f, s, ig = counts(u)
        st = u["status"]
        if u["aborted"]:
            st += " (aborted at: %s)" % (u.get("abort_test") or "?")
        if u.get("server_unresponsive"):
            st += " [server not answering PING afterwards]"
        rows.append("%-28s %6d %6d %6d %6d  %s" % (unit, p, f, s, ig, st))
    lines = ["server: %s %s" % (summary["server"], summary["server_args"]), ""] + rows
    for unit, u in summary["units"].items():
        if u["failures"]:
            lines += ["", "== %s: failed tests" % unit]
            for fl in u["failures"]:
                lines.append("- " + fl["name"])
                lines += ["    " + l for l in fl["error"].splitlines()[:6]]
        for be in u.get("block_errors", []):
            lines += ["", "== %s: error outside a test (rest of its start_server block skipped):" % unit]
            lines += ["    " + l for l in be.splitlines()[:6]]
        if u["aborted"]:
            lines += ["", "== %s: ABORTED (%s) at test: %s" % (unit, u["status"], u.get("abort_test")),
                      "   reason: " + u.get("abort_reason", ""), "   last output:"] + ["    " + l for l in u.get("last_output", "").splitlines()[-15:]]
    return "\n".join(lines)


def compare(summary, ref):
    lines = ["", "%-28s %8s %8s %7s" % ("unit", "here", "ref", "ratio")]
    details = []
    for unit, u in summary["units"].items():
        ru = ref["units"].get(unit)
        if ru is None:
            lines.append("%-28s %8d %8s" % (unit, counts(u)[0], "-"))
            continue
        here, there = counts(u)[0], counts(ru)[0]
        ratio = "%.1f%%" % (100.0 * here / there) if there else "-"
        lines.append("%-28s %8d %8d %7s" % (unit, here, there, ratio))
        ok_here = collections.Counter(t["name"] for t in u["tests"] if t["status"] == "ok")
        ok_ref = collections.Counter(t["name"] for t in ru["tests"] if t["status"] == "ok")
        missing = ok_ref - ok_here  # passed by the reference, failed or never run here
        ran_here = collections.Counter(t["name"] for t in u["tests"])
        failed = [n for n in missing.elements() if ran_here[n] > ok_here[n]]
        notrun = list((missing - collections.Counter(failed)).elements())
        if failed or notrun or u["aborted"]:
            details.append("\n== %s: passed by the reference, not here" % unit)
            details += ["  FAIL    " + n for n in dict.fromkeys(failed)]
            if u["aborted"]:
                hidden = len(ru["tests"]) - len(u["tests"]) - 1
                details.append("  (aborted at %r: about %d tests of the reference run come after it)"
                               % (u.get("abort_test"), max(hidden, 0)))
            notrun = list(dict.fromkeys(notrun))
            details += ["  NOT RUN " + n for n in notrun[:10]]
            if len(notrun) > 10:
                details.append("  NOT RUN ... and %d more (see summary.json)" % (len(notrun) - 10))
    return "\n".join(lines + details)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("units", nargs="*", help="e.g. unit/scripting unit/multi")
    ap.add_argument("--server", default=os.path.join(REPO, "build/release/peregrine"))
    ap.add_argument("--server-args", default="", help='e.g. "--threads 1"')
    ap.add_argument("--redis-src", help="Redis source dir (default: build/redis-src/redis (or the newest redis-*))")
    ap.add_argument("--timeout", type=int, default=900, help="hard limit per unit, seconds")
    ap.add_argument("--stall-timeout", type=int, default=120,
                    help="Tcl --timeout: give up after this long without progress")
    ap.add_argument("--out", default="/tmp/redis-suite-out")
    ap.add_argument("--tags", default="", help='passed to the suite, e.g. "-needs:repl"')
    ap.add_argument("--skiptest", action="append", default=[],
                    help="test name or /regexp to skip (repeatable)")
    ap.add_argument("--durable", action="store_true", help="suite goes on after exceptions")
    ap.add_argument("--compare", help="summary.json of a reference run")
    ap.add_argument("--from-json", help="don't run: load this summary.json (for --compare)")
    args = ap.parse_args()

    if args.from_json:
        summary = json.load(open(args.from_json))
    else:
        if not args.units:
            ap.error("no units given")
        src = args.redis_src
        if not src:
            found = sorted(glob.glob(os.path.join(REPO, "build/redis-src/redis*/")))
            if not found:
                ap.error("no build/redis-src/redis*; run `make redis-suite-src` or pass --redis-src")
            src = found[-1]
        src = os.path.abspath(src)
        if not os.path.isfile(os.path.join(src, "tests/test_helper.tcl")):
            ap.error("%s has no tests/test_helper.tcl" % src)
        server = shutil.which(args.server) or args.server
        args.server = os.path.abspath(server) if os.path.exists(server) else server
        os.makedirs(args.out, exist_ok=True)
        summary = {"server": args.server, "server_args": args.server_args, "redis_src": src,
                   "tags": args.tags, "skiptest": args.skiptest, "durable": args.durable,
                   "units": {}}
        for unit in args.units:
            print("running %s ..." % unit, file=sys.stderr, flush=True)
            u = run_unit(args, unit, src)
            summary["units"][unit] = u
            p, f, _, _ = counts(u)
            print("  %s: %d passed, %d failed, %s (%.0fs)" % (unit, p, f, u["status"], u["duration"]),
                  file=sys.stderr, flush=True)
        with open(os.path.join(args.out, "summary.json"), "w") as fh:
            json.dump(summary, fh, indent=1)
    text = table(summary)
    if args.compare:
        text += "\n" + compare(summary, json.load(open(args.compare)))
    print(text)
    if not args.from_json:
        with open(os.path.join(args.out, "summary.txt"), "w") as fh:
            fh.write(text + "\n")
    bad = any(u["failures"] or u["aborted"] for u in summary["units"].values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
