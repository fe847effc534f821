# Black-box test fixtures: start the real server binary on a free loopback port,
# hand tests a redis-py client, stop the server afterwards.
#
# Environment:
#   PEREGRINE_BIN   path of the peregrine binary (default: build/release/peregrine)
#   TEST_SERVER     "peregrine" (default) or "redis" to run the same tests against
#                   Debian's redis-server, which is how the tests themselves are checked.
#   PEREGRINE_ARGS  extra command-line arguments for peregrine (e.g. "--threads 4").
import contextlib
import os
import shlex
import socket
import subprocess
import tempfile
import time

import pytest
import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEREGRINE_BIN = os.environ.get(
    "PEREGRINE_BIN", os.path.join(ROOT, "build", "release", "peregrine"))
TEST_SERVER = os.environ.get("TEST_SERVER", "peregrine")
IS_REDIS = TEST_SERVER == "redis"
# The last line of every HELP reply: Redis 7.2's addReplyHelp says "Print",
# Debian's 7.0 "Prints".
HELP_LAST = b"    Prints this help." if IS_REDIS else b"    Print this help."


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """One running server. `args` are extra '--directive value' arguments; `kind` is
    "peregrine" or "redis" (default: TEST_SERVER); `config`: a config file; `bare`:
    Peregrine given only its port and `args`."""

    def __init__(self, args=(), tmp_path=None, kind=None, config=None, bare=False):
        # (The port is picked free before the server binds it: another
        # socket may take it meanwhile; then again, with another.)
        for attempt in range(3):
            try:
                self.bare = bare
                self._start(args, tmp_path, kind, config)
                return
            except RuntimeError as e:
                if "Address already in use" not in str(e) or attempt == 2:
                    raise

    def _start(self, args, tmp_path, kind, config):
        self.port = free_port()
        self.host = "127.0.0.1"
        self.kind = kind or TEST_SERVER
        if self.kind == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                   "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"]
            if tmp_path is not None:
                cmd += ["--dir", str(tmp_path)]
        else:
            # No snapshots unless a test asks (as for redis-server above):
            # the default schedule would save into the working directory.
            # A diskless sync starts at once (Redis waits 5 s for more
            # replicas by default; tests that look at that ask for it).
            cmd = [PEREGRINE_BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--repl-diskless-sync-delay", "0"]
            cmd += shlex.split(os.environ.get("PEREGRINE_ARGS", ""))
            if self.bare:  # (nothing but the port: the built-in defaults, or a file's)
                cmd = [PEREGRINE_BIN, "--port", str(self.port)]
        if config is not None:
            cmd.insert(1, str(config))  # (a config file comes first)
        cmd += list(args)
        self.cmd = cmd
        # The server's output goes to a file, not a pipe: nobody reads a pipe
        # while the tests run, and a server that filled one (64 KB of log)
        # would block in write() and stop answering.
        self.log_file = tempfile.TemporaryFile()
        # A directory of its own: whatever it saves stays there.
        self.dir = str(tmp_path) if tmp_path is not None else tempfile.mkdtemp(prefix="peregrine-test-")
        self.proc = subprocess.Popen(cmd, stdout=self.log_file, stderr=subprocess.STDOUT, cwd=self.dir)
        self._wait_ready()

    def output(self):
        """What the server has written to stdout and stderr so far."""
        self.log_file.flush()
        self.log_file.seek(0)
        return self.log_file.read().decode(errors="replace")

    def _wait_ready(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early ({self.proc.returncode}): {self.output()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    # (-NOAUTH: up, with a password required.)
                    if s.recv(16).startswith((b"+PONG", b"-NOAUTH")):
                        return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("server did not become ready")

    def client(self, **kw):
        kw.setdefault("socket_timeout", 10)
        return redis.Redis(host=self.host, port=self.port, **kw)

    def stop(self):
        if self.proc.poll() not in (None, 0):
            # It died on its own (a crash, a sanitizer's report): what it
            # wrote is the evidence, shown with the failing test's output.
            print(f"server {self.cmd} exited with {self.proc.returncode}:\n{self.output()}")
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


@pytest.fixture(scope="session")
def server():
    s = ServerProcess()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def reference():
    """Debian's redis-server beside the server under test (cross-checks)."""
    ref = ServerProcess(kind="redis")
    yield ref
    ref.stop()


def alive(server):
    """The shared server must be up: once it died (a crash, a sanitizer's
    report), every later test would fail slowly on its connection, so the
    run stops here with its output."""
    if server.proc.poll() is not None:
        pytest.exit(f"the shared server exited with {server.proc.returncode}:\n{server.output()}", returncode=1)
    return server


@pytest.fixture
def r(server):
    c = alive(server).client(protocol=2)  # redis-py 8 would otherwise speak RESP3
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def r3(server):
    """A RESP3 client (HELLO 3)."""
    c = alive(server).client(protocol=3)
    c.flushall()
    yield c
    c.close()


@contextlib.contextmanager
def server_and_redis():
    """The server under test and a Debian redis-server beside it (the
    differential tests' pair), both stopped at the end."""
    started = []
    try:
        started.append(ServerProcess())
        started.append(ServerProcess(kind="redis"))
        yield started[0], started[1]
    finally:
        for s in started:
            s.stop()


@contextlib.contextmanager
def side_pair(make):
    """server_and_redis() as the pair (make("redis-server", redis), make(kind,
    subject)) of a differential test's sides, each closed at the end."""
    with server_and_redis() as (subject, reference):
        pair = (make("redis-server", reference), make(subject.kind, subject))
        try:
            yield pair
        finally:
            for s in pair:
                s.close()


@pytest.fixture
def start_server(tmp_path):
    """Factory for a dedicated server with extra arguments; stopped after the test."""
    started = []

    def start(*args):
        s = ServerProcess(args, tmp_path=tmp_path)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def raw_command(server, data, read_until_close=False, timeout=5.0):
    """Send raw bytes on a fresh connection and return what the server answered."""
    with socket.create_connection((server.host, server.port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        if read_until_close:
            while True:
                try:
                    b = s.recv(65536)
                except socket.timeout:
                    break
                if not b:
                    break
                chunks.append(b)
        else:
            s.settimeout(0.5)
            while True:
                try:
                    b = s.recv(65536)
                except socket.timeout:
                    break
                if not b:
                    break
                chunks.append(b)
        return b"".join(chunks)
