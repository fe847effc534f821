"""Shared pieces of the Peregrine benchmark scripts (run_bench.py, instr.py).

Standard library only: starting and stopping a server on a free loopback port,
reading its CPU time and RSS from /proc, a minimal RESP client and bulk loader,
running/parsing redis-benchmark 7.0, and building the null server
(bench/null_server.cc, the ceiling of /work/shared/MEASURING.md) with g++.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PEREGRINE = REPO / "build" / "release" / "peregrine"
CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST = "127.0.0.1"
# taskset -c lists: the server's, redis-benchmark's and the Python loaders',
# and a replica's (bench/replication.py). The environment may set others
# (bench/replication_device.sh on a many-core machine); the other scripts
# pin themselves to CLIENT_CPU and expect one CPU there.
SERVER_CPU = os.environ.get("BENCH_SERVER_CPUS", "0")
CLIENT_CPU = os.environ.get("BENCH_CLIENT_CPUS", "1")
REPLICA_CPU = os.environ.get("BENCH_REPLICA_CPUS", CLIENT_CPU)


class BenchError(RuntimeError):
    pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


try:
    # Taken at import, before the harness pins itself to the client CPU.
    _INITIAL_AFFINITY = frozenset(os.sched_getaffinity(0))
except AttributeError:
    _INITIAL_AFFINITY = frozenset()


def cpu_set(spec: str) -> set[int]:
    """The CPUs of a taskset -c list ("0", "0-1", "2,4-7")."""
    out: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def have_cpus(*cpus: str) -> bool:
    return all(cpu_set(c) <= _INITIAL_AFFINITY for c in cpus)


def taskset(cpu: str) -> list[str]:
    """`taskset -c CPU` prefix, or nothing if that CPU is not available."""
    if have_cpus(cpu) and shutil.which("taskset"):
        return ["taskset", "-c", cpu]
    return []


def find_binaries(peregrine: str, tools: list[str], packages: str) -> tuple[str, list[str]]:
    """The Peregrine binary's absolute path and the full paths of tools (looked
    up on PATH); BenchError naming the first one missing."""
    pbin = os.path.abspath(peregrine)
    if not os.access(pbin, os.X_OK):
        raise BenchError(f"no executable Peregrine at {pbin} (build it first)")
    found = []
    for t in tools:
        path = shutil.which(t)
        if not path:
            raise BenchError(f"{t} not found (apt-get install {packages})")
        found.append(path)
    return pbin, found


def cost_arguments(doc: str, argv, baseline: str | None = None):
    """The options of the callgrind cost scripts (acl_cost, script_cost,
    notify_cost): the Peregrine binary, an optional --baseline (its help
    text), redis-server, valgrind, requests, pipeline, repeat. Returns the
    parsed options (tools resolved to full paths) and Peregrine's path; the
    process is pinned to the load generator's CPU when it can be."""
    import argparse
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peregrine", nargs="?", default=str(DEFAULT_PEREGRINE))
    if baseline is not None:
        ap.add_argument("--baseline", help=baseline)
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    pbin, (args.redis_server, args.valgrind) = find_binaries(
        args.peregrine, [args.redis_server, args.valgrind], "valgrind redis-server")
    if have_cpus(CLIENT_CPU, SERVER_CPU):
        os.sched_setaffinity(0, {int(CLIENT_CPU)})
    return args, pbin


def print_cost_table(rows: dict, label: str, num: str, den: str) -> None:
    """The callgrind cost scripts' table: rows[(server, mode)] = (Ir per
    request, spread), a line each (`label` formats the mode), then each
    server's ratio of mode `num` to mode `den`."""
    for (name, mode), (ir, spread) in rows.items():
        print(f"  {name:10s} {label.format(mode=mode)} {ir:10,.0f}  (spread {spread:,.0f})")
    for name in dict.fromkeys(n for n, _ in rows):
        print(f"  {name}: {num} / {den} = {rows[(name, num)][0] / rows[(name, den)][0]:.4f}")


def cmd_str(argv: list[str]) -> str:
    return " ".join(a if a == "$PORT" else shlex.quote(a) for a in argv)


# --------------------------------------------------------------------------
# A minimal RESP2 client: enough for PING/INFO/DBSIZE/SHUTDOWN and for bulk
# loading with pipelines.
# --------------------------------------------------------------------------

def encode(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = b"%d" % a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RespClient:
    def __init__(self, port: int, timeout: float = 30.0):
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _fill(self):
        if self.pos > 1 << 20:
            del self.buf[: self.pos]
            self.pos = 0
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def read_reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return BenchError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            data = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n + 2
            return data
        if t == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self.read_reply() for _ in range(n)]
        raise BenchError(f"unexpected RESP line {line[:80]!r}")

    def call(self, *args):
        self.sock.sendall(encode(*args))
        r = self.read_reply()
        if isinstance(r, BenchError):
            raise r
        return r

    def pipeline_raw(self, payload: bytes, nreplies: int, expect: bytes | None = None):
        """Send pre-encoded commands, read nreplies replies.  If every reply is
        known to be the same short simple string (e.g. b'+OK\\r\\n'), pass it as
        expect for a fast path; returns the number of replies that differed."""
        self.sock.sendall(payload)
        if expect is not None:
            want = len(expect) * nreplies
            while len(self.buf) - self.pos < want:
                self._fill()
            got = bytes(self.buf[self.pos:self.pos + want])
            self.pos += want
            if got == expect * nreplies:
                return 0
            return nreplies - got.count(expect)
        bad = 0
        for _ in range(nreplies):
            if isinstance(self.read_reply(), BenchError):
                bad += 1
        return bad

    def info(self, section: str | None = None) -> dict[str, str]:
        raw = self.call("INFO", section) if section else self.call("INFO")
        out = {}
        for line in raw.decode(errors="replace").splitlines():
            if line and not line.startswith("#") and ":" in line:
                k, v = line.split(":", 1)
                out[k] = v.strip()
        return out


def send_shutdown_nosave(c: RespClient):
    """SHUTDOWN NOSAVE over `c`; the server closes the connection (no reply)."""
    c.sock.sendall(encode("SHUTDOWN", "NOSAVE"))
    try:
        c.read_reply()
    except (OSError, ConnectionError, BenchError):
        pass


def key_name(i: int) -> bytes:
    """The key redis-benchmark uses for random number i (zero-padded to 12)."""
    return b"key:%012d" % i


LOAD_BATCH = 1000   # commands per round trip in load_keys (docs/benchmarks.md says so)


def load_keys(port: int, nkeys: int, value_size: int, ttl: int | None = None) -> float:
    """SET key:000000000000 .. key:<nkeys-1> with a value of value_size bytes
    (and EX ttl if given), LOAD_BATCH commands (at most ~4 MB) per round trip.  Small batches
    keep the server's query/output buffers small, so they do not inflate its
    RSS.  Returns the wall time taken."""
    value = b"x" * value_size
    vpart = b"$%d\r\n%s\r\n" % (value_size, value)
    if ttl is None:
        head, tail = b"*3\r\n$3\r\nSET\r\n", vpart
    else:
        t = b"%d" % ttl
        head = b"*5\r\n$3\r\nSET\r\n"
        tail = vpart + b"$2\r\nEX\r\n$%d\r\n%s\r\n" % (len(t), t)
    kh = b"$%d\r\n" % len(key_name(0))
    c = RespClient(port, timeout=120)
    t0 = time.monotonic()
    batch = max(1, min(LOAD_BATCH, (4 << 20) // max(1, value_size)))  # at most ~4 MB per round trip
    try:
        for start in range(0, nkeys, batch):
            end = min(nkeys, start + batch)
            payload = b"".join(head + kh + key_name(i) + b"\r\n" + tail
                               for i in range(start, end))
            bad = c.pipeline_raw(payload, end - start, expect=b"+OK\r\n")
            if bad:
                raise BenchError(f"{bad} SET replies were not +OK while loading")
    finally:
        c.close()
    return time.monotonic() - t0


# --------------------------------------------------------------------------
# Servers
# --------------------------------------------------------------------------

@dataclass
class ServerSpec:
    name: str                 # "peregrine" / "redis" / "null"
    label: str                # "Peregrine" / "Redis" / "null server"
    binary: str
    extra: list[str] = field(default_factory=list)

    def argv(self, port: int) -> list[str]:
        a = [self.binary, "--port", str(port), "--bind", HOST]
        if self.name in ("redis", "peregrine"):
            a += ["--save", "", "--appendonly", "no"]
        return a + self.extra


def peregrine_spec(binary: str) -> ServerSpec:
    """Adds --threads 1 only if `peregrine --help` mentions threads."""
    extra = []
    try:
        h = subprocess.run([binary, "--help"], capture_output=True, text=True,
                           timeout=10)
        text = h.stdout + h.stderr
        if re.search(r"--threads\b|\bthreads\b", text):
            extra = ["--threads", "1"]
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError(f"cannot run {binary} --help: {e}")
    return ServerSpec("peregrine", "Peregrine", binary, extra)


def snapshot_binary(path: str, workdir: str) -> tuple[str, str]:
    """Copy the binary into workdir so a rebuild during the run cannot change
    what is measured; returns (copy, first 12 hex digits of its sha256)."""
    dst = os.path.join(workdir, os.path.basename(path))
    shutil.copy2(path, dst)
    h = hashlib.sha256()
    with open(dst, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return dst, h.hexdigest()[:12]


def display_path(path: str) -> str:
    """A binary's path relative to the repository when it is inside it."""
    path = os.path.abspath(path)
    return os.path.relpath(path, REPO) if path.startswith(str(REPO) + "/") else path


def redis_spec(binary: str = "redis-server") -> ServerSpec:
    return ServerSpec("redis", "Redis", binary)


NULL_SERVER_SRC = REPO / "bench" / "null_server.cc"
NULL_SERVER_DIR = REPO / "build" / "null-server"


def null_server_compile_argv(out: str) -> list[str]:
    return ["g++", "-O2", "-std=c++20", "-o", out, str(NULL_SERVER_SRC)]


def build_null_server() -> str:
    """Compile bench/null_server.cc (the ceiling of MEASURING.md) into
    build/null-server/null_server, or a temporary directory if build/ is not
    writable, when the binary is missing or older than the source.  Returns the
    binary's path.  Compiles to a temporary name and renames, so two harnesses
    started at once do not see a half-written binary."""
    dirs = [NULL_SERVER_DIR, Path(tempfile.gettempdir()) / f"peregrine-null-server-{os.getuid()}"]
    src_mtime = os.stat(NULL_SERVER_SRC).st_mtime
    last = None
    for d in dirs:
        binary = d / "null_server"
        try:
            if binary.is_file() and os.stat(binary).st_mtime >= src_mtime and os.access(binary, os.X_OK):
                return str(binary)
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".null_server.{os.getpid()}"
            p = subprocess.run(null_server_compile_argv(str(tmp)), capture_output=True, text=True,
                               timeout=300)
            if p.returncode != 0:
                tmp.unlink(missing_ok=True)
                raise BenchError(f"compiling {NULL_SERVER_SRC} failed:\n{(p.stdout + p.stderr)[-2000:]}")
            os.replace(tmp, binary)
            return str(binary)
        except OSError as e:   # not writable: try the next directory
            last = e
    raise BenchError(f"cannot build the null server: {last}")


def null_spec(binary: str) -> ServerSpec:
    """The null server: frames RESP exactly, answers +OK / $-1 / +PONG, stores nothing."""
    return ServerSpec("null", "null server", binary)


def read_cpu_ticks(pid: int) -> tuple[int, int]:
    """(sum of utime+stime over /proc/PID/task/*/stat, utime+stime of
    /proc/PID/stat), in clock ticks.  The second also counts threads that have
    already exited; the first is what the method asks for."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                total += _utime_stime(f.read())
        except FileNotFoundError:
            pass
    with open(f"/proc/{pid}/stat") as f:
        whole = _utime_stime(f.read())
    return total, whole


def _utime_stime(stat: str) -> int:
    # The command name (field 2) may contain spaces: split after the last ')'.
    rest = stat[stat.rindex(")") + 2:].split()
    # rest[0] is field 3 (state); utime is field 14, stime field 15.
    return int(rest[11]) + int(rest[12])


def read_busy_ticks() -> int:
    """Non-idle clock ticks of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        parts = f.readline().split()
    v = [int(x) for x in parts[1:]]
    # user nice system idle iowait irq softirq steal (guest counted in user)
    return v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)


def read_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise BenchError(f"no VmRSS for pid {pid}")


class Server:
    """One fresh server process on a free port, pinned to SERVER_CPU."""

    def __init__(self, spec: ServerSpec, workdir: str, wrapper: list[str] | None = None,
                 ready_timeout: float = 15.0):
        self.spec = spec
        self.port = free_port()
        self.argv = spec.argv(self.port)
        self.full_argv = taskset(SERVER_CPU) + (wrapper or []) + self.argv
        self.dir = tempfile.mkdtemp(prefix=f"{spec.name}-", dir=workdir)
        self.logpath = os.path.join(self.dir, "server.log")
        self.log = open(self.logpath, "wb")
        self.proc = subprocess.Popen(self.full_argv, cwd=self.dir, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self._wait_ready(ready_timeout)

    def _wait_ready(self, timeout: float):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"{self.spec.label} exited at start-up "
                                 f"(rc={self.proc.returncode}): {self.log_tail()}")
            try:
                c = RespClient(self.port, timeout=5)
                try:
                    if c.call("PING") == "PONG":
                        return
                finally:
                    c.close()
            except (OSError, BenchError) as e:
                last = e
            time.sleep(0.05)
        self.kill()
        raise BenchError(f"{self.spec.label} not ready after {timeout}s: {last}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def check_alive(self, what: str):
        if not self.alive():
            raise BenchError(f"{self.spec.label} died during {what} "
                             f"(rc={self.proc.returncode}): {self.log_tail()}")

    def cpu_ticks(self) -> tuple[int, int]:
        return read_cpu_ticks(self.pid)

    def rss_kb(self) -> int:
        return read_rss_kb(self.pid)

    def cpus_allowed(self) -> str:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return line.split(":", 1)[1].strip()
        return "?"

    def client(self, timeout: float = 30.0) -> RespClient:
        return RespClient(self.port, timeout=timeout)

    def info(self, section: str | None = None) -> dict[str, str]:
        c = self.client()
        try:
            return c.info(section)
        finally:
            c.close()

    def log_tail(self, n: int = 2000) -> str:
        try:
            self.log.flush()
            with open(self.logpath, "rb") as f:
                data = f.read()
            return data[-n:].decode(errors="replace").strip()
        except OSError:
            return ""

    def shutdown(self, timeout: float = 30.0) -> int | None:
        """SHUTDOWN NOSAVE, then wait; SIGTERM/SIGKILL if it does not exit."""
        if self.alive():
            try:
                c = RespClient(self.port, timeout=5)
                try:
                    c.sock.sendall(encode("SHUTDOWN", "NOSAVE"))
                    try:
                        c.read_reply()
                    except (OSError, ConnectionError, BenchError):
                        pass
                finally:
                    c.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.kill()
        self.log.close()
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass


def parse_cmdstats(info: dict[str, str]) -> dict[str, dict[str, int]]:
    out = {}
    for k, v in info.items():
        if k.startswith("cmdstat_"):
            d = {}
            for part in v.split(","):
                if "=" in part:
                    a, b = part.split("=", 1)
                    try:
                        d[a] = int(b)
                    except ValueError:
                        pass
            out[k[len("cmdstat_"):]] = d
    return out


# --------------------------------------------------------------------------
# redis-benchmark
# --------------------------------------------------------------------------

_PCT_RE = re.compile(r"^\s*([0-9.]+)% <= ([0-9.]+) milliseconds")
_THR_RE = re.compile(r"throughput summary:\s*([0-9.]+) requests per second")
_DONE_RE = re.compile(r"(\d+) requests completed in ([0-9.]+) seconds")
_HDR_RE = re.compile(r"^====== (.*) ======\s*$")


def parse_redis_benchmark(text: str) -> list[dict]:
    """Parse redis-benchmark 7.0's default (non -q, non --csv) output: one
    section per test, '====== NAME ======', with 'N requests completed in T
    seconds', the percentile distribution, and the summary.  p50/p95/p99 come
    from the summary (exact HDR values); p99.9 is the first point of the
    percentile distribution at or above 99.9% (i.e. the latency that at least
    99.9% of requests did not exceed, at the histogram's resolution)."""
    # Progress lines are separated by '\r'; keep only whole lines.
    lines = text.replace("\r", "\n").split("\n")
    tests = []
    cur = None
    mode = None
    summary_hdr = None
    for line in lines:
        m = _HDR_RE.match(line)
        if m:
            cur = {"test": m.group(1).strip(), "pcts": []}
            tests.append(cur)
            mode = None
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("Latency by percentile distribution"):
            mode = "pct"
            continue
        if s.startswith("Cumulative distribution of latencies"):
            mode = None
            continue
        if mode == "pct":
            m = _PCT_RE.match(line)
            if m:
                cur["pcts"].append((float(m.group(1)), float(m.group(2))))
            continue
        m = _DONE_RE.search(line)
        if m:
            cur["completed"] = int(m.group(1))
            cur["seconds"] = float(m.group(2))
            continue
        m = _THR_RE.search(line)
        if m:
            cur["rps"] = float(m.group(1))
            continue
        if s.startswith("latency summary"):
            mode = "sumhdr"
            continue
        if mode == "sumhdr" and s:
            summary_hdr = s.split()
            mode = "sumval"
            continue
        if mode == "sumval" and s:
            vals = s.split()
            if len(vals) == len(summary_hdr):
                for k, v in zip(summary_hdr, vals):
                    cur[k] = float(v)
            mode = None
            continue
    for t in tests:
        # A run too short for redis-benchmark to print its throughput (it
        # says "inf", or nothing): from the count and the time, if there is one.
        if t.get("rps") is None and t.get("completed") and t.get("seconds"):
            t["rps"] = t["completed"] / t["seconds"]
        p999 = None
        for pct, ms in t["pcts"]:
            if pct >= 99.9:
                p999 = ms
                break
        if p999 is None and t["pcts"]:
            p999 = t["pcts"][-1][1]
        t["p99.9"] = p999
        if "p50" not in t and t["pcts"]:
            # Fallback if the summary is missing: from the distribution.
            for q in (50.0, 95.0, 99.0):
                t[f"p{q:g}"] = next((ms for pct, ms in t["pcts"] if pct >= q), None)
        del t["pcts"]
    return tests


def check_parsed(t: dict) -> list[str]:
    """Names of the fields a parsed test is missing."""
    need = ["rps", "p50", "p99", "p99.9", "completed"]
    return [k for k in need if t.get(k) is None]


_ERR_RE = re.compile(r"(error|err |wrong|unknown|denied|warning|refused|reset)", re.I)


def interesting_lines(text: str) -> list[str]:
    """Lines of redis-benchmark output that look like errors or warnings."""
    out = []
    for line in text.replace("\r", "\n").split("\n"):
        s = line.strip()
        if s and _ERR_RE.search(s) and "rps=" not in s:
            out.append(s[:300])
    # de-duplicate, keep order
    seen = set()
    return [x for x in out if not (x in seen or seen.add(x))]


def run_redis_benchmark(binary: str, port: int, args: list[str], timeout: float
                        ) -> tuple[list[str], str, int, float]:
    """(argv, stdout + stderr, exit code, redis-benchmark's CPU seconds)."""
    argv = taskset(CLIENT_CPU) + [binary, "-h", HOST, "-p", str(port)] + args
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        raise BenchError(f"redis-benchmark timed out after {timeout}s: {cmd_str(argv)}\n"
                         f"{out[-1500:].decode(errors='replace')}")
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    text = p.stdout.decode(errors="replace") + "\n" + p.stderr.decode(errors="replace")
    return argv, text, p.returncode, cpu_s


def cpu_per_request(srv: "Server", binary: str, args: list[str], requests: int,
                    timeout: float = 900) -> tuple[float, float, dict]:
    """Runs redis-benchmark `args` (`requests` of them) against `srv`: the
    server's CPU per request in µs (all its threads, user + system, as
    MEASURING.md asks), requests per second by the wall clock, and
    redis-benchmark's first parsed test."""
    t0 = srv.cpu_ticks()[0]
    w0 = time.monotonic()
    _, text, rc, _ = run_redis_benchmark(binary, srv.port, args, timeout=timeout)
    wall = time.monotonic() - w0
    ticks = srv.cpu_ticks()[0] - t0
    tests = parse_redis_benchmark(text)
    if rc != 0 or not tests:
        raise BenchError(f"{srv.spec.label}: no result from redis-benchmark: {text[-800:]}")
    return ticks / CLK_TCK * 1e6 / requests, requests / wall, tests[0]


def num(x, spec: str) -> str:
    """x formatted with `spec`, or a dash when a run measured nothing."""
    return "—" if x is None else format(x, spec)


def ratio(a, b) -> str:
    """a / b to two places, or a dash when either is missing (a run too short to measure)."""
    return f"{a / b:.2f}" if a is not None and b else "—"


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def machine_info() -> dict[str, str]:
    info = {"nproc": str(os.cpu_count())}
    try:
        info["nproc"] = subprocess.run(["nproc"], capture_output=True, text=True,
                                       timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=5).stdout
        for line in out.splitlines():
            if line.lower().startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except (OSError, subprocess.TimeoutExpired):
        pass
    info["kernel"] = os.uname().release
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        info["memory"] = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return info


def version_of(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        return (p.stdout + p.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


def git_describe() -> str:
    """Read-only: the commit of the tree and whether it has local changes."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        st = subprocess.run(["git", "--no-optional-locks", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=10).stdout
        dirty = any(l[3:].startswith(("src/", "CMakeLists.txt")) for l in st.splitlines())
        return head + (" (with uncommitted changes under src/)" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


# Markers so that run_bench.py and instr.py can each rewrite their own part of
# docs/benchmarks.md without destroying the other's.
INSTR_BEGIN = "<!-- instr:begin (written by bench/instr.py) -->"
# The threads section of docs/benchmarks.md (hand-written from
# `make bench-threads` and `make bench-cross`), kept by the generated parts.
THREADS_BEGIN = "<!-- threads:begin (from make bench-threads and make bench-cross) -->"
THREADS_END = "<!-- threads:end -->"
INSTR_END = "<!-- instr:end -->"


def split_instr_section(text: str) -> tuple[str, str]:
    """(document without the instr section, the instr section or '')."""
    return split_section(text, INSTR_BEGIN, INSTR_END)


def speed_table(records, rows) -> list[str]:
    """The markdown table of speed tests against Redis and the null server:
    for each (id, label) of `rows`, the medians of requests/s and server CPU
    per request of Peregrine and Redis, their ratios, the null server's CPU
    per request and the work share (MEASURING.md)."""
    lines = ["| test | Peregrine req/s | Redis req/s | ratio | Peregrine CPU µs/req | Redis CPU µs/req | CPU ratio "
             "| null server CPU µs/req | work share |",
             "|---|---|---|---|---|---|---|---|---|"]
    for tid, label in rows:
        p = [r for r in records if r["id"] == tid and r["server"] == "peregrine"]
        q = [r for r in records if r["id"] == tid and r["server"] == "redis"]
        z = [r for r in records if r["id"] == tid and r["server"] == "null"]
        if not p or not q:
            continue
        zcpu = median([r["cpu_us_per_req"] for r in z]) if z else None
        prps, qrps = median([r["rps"] for r in p]), median([r["rps"] for r in q])
        pcpu, qcpu = median([r["cpu_us_per_req"] for r in p]), median([r["cpu_us_per_req"] for r in q])
        share = (ratio(pcpu - zcpu, qcpu - zcpu) if None not in (zcpu, pcpu, qcpu) and qcpu > zcpu else "—")
        lines.append(f"| {label} | {num(prps, ',.0f')} | {num(qrps, ',.0f')} | {ratio(prps, qrps)} | "
                     f"{num(pcpu, '.3f')} | {num(qcpu, '.3f')} | {ratio(pcpu, qcpu)} | "
                     f"{num(zcpu, '.3f')} | {share} |")
    return lines


def put_docs_section(begin: str, end: str, section: str):
    """Puts `section` (markers included) in docs/benchmarks.md in place of the
    one between the same markers, or at the end."""
    path = REPO / "docs" / "benchmarks.md"
    text = path.read_text()
    if begin in text and end in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def split_section(text: str, begin: str, end: str) -> tuple[str, str]:
    """(document without the section between the markers, the section or '')."""
    i = text.find(begin)
    if i < 0:
        return text, ""
    j = text.find(end, i)
    j = len(text) if j < 0 else j + len(end)
    return (text[:i].rstrip() + "\n" + text[j:].lstrip("\n")).rstrip() + "\n", text[i:j]


def parse_bench_args(argv, only: bool = True):
    """The command line the container benchmarks share: the binary, --rounds,
    --quick, --smoke (tiny sizes, one round, no docs), [--only], --no-docs.
    Returns (args, scale): the request counts' factor."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("peregrine", nargs="?", default=str(DEFAULT_PEREGRINE))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="fewer requests (a check, not a measurement)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round, no docs: that it all runs")
    if only:
        ap.add_argument("--only", default="", help="comma-separated test ids")
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args(argv)
    scale = 0.002 if args.smoke else 0.2 if args.quick else 1.0
    if args.smoke:
        args.rounds, args.no_docs = 1, True
    return args, scale
