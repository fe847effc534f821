# Command-line / process behaviour of the peregrine binary itself (not applicable to redis-server).
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import IS_REDIS, PEREGRINE_BIN, free_port
from helpers import NO_RETRY

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Peregrine-only: command-line behaviour of the binary")

RUN_TIMEOUT = 10


def run(*args, timeout=RUN_TIMEOUT):
    """Run peregrine to completion; return (exit code, stdout+stderr as text)."""
    p = subprocess.run([PEREGRINE_BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout, cwd=tempfile.mkdtemp(prefix="peregrine-test-"))
    return p.returncode, p.stdout.decode(errors="replace")


def start(*args):
    # Its own working directory: a snapshot saved at exit stays there.
    return subprocess.Popen([PEREGRINE_BIN, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=tempfile.mkdtemp(prefix="peregrine-test-"))


def stop(proc):
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=RUN_TIMEOUT)
    if proc.stdout:
        proc.stdout.close()


def wait_tcp(proc, port, timeout=RUN_TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError("server exited early (%s): %s"
                                 % (proc.returncode, proc.stdout.read().decode(errors="replace")))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.settimeout(1)
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.02)
    raise AssertionError("server did not become ready on port %d" % port)


# ---------------------------------------------------------------- --version / --help

def test_version():
    code, out = run("--version")
    assert code == 0
    assert out.splitlines()[0].startswith("Peregrine server v=")


def test_help():
    code, out = run("--help")
    assert code == 0
    assert "Usage:" in out


# ---------------------------------------------------------------- bad command lines

def test_unknown_directive():
    code, out = run("--port", str(free_port()), "--no-such-directive", "1")
    assert code != 0
    assert "no-such-directive" in out
    assert "Bad directive or wrong number of arguments" in out


@pytest.mark.parametrize("directive,value", [
    ("port", "abc"),
    ("port", "70000"),
    ("databases", "0"),
    ("databases", "abc"),
    ("maxclients", "0"),
    ("enable-debug-command", "sometimes"),
    ("worker-sched-policy", "fifo"),
])
def test_bad_directive_value(directive, value):
    args = ["--port", str(free_port()), "--bind", "127.0.0.1", "--" + directive, value]
    code, out = run(*args)
    assert code != 0
    assert directive in out


# ---------------------------------------------------------------- config file

def test_config_file_first_argument(tmp_path):
    port = free_port()
    conf = tmp_path / "peregrine.conf"
    conf.write_text("# a comment line\n\nport %d\nbind 127.0.0.1\ndatabases 4\n" % port)
    proc = start(str(conf))
    try:
        wait_tcp(proc, port)
        c = redis.Redis(host="127.0.0.1", port=port, protocol=2, socket_timeout=5)
        assert c.execute_command("SELECT", "3") in (b"OK", True, "OK")
        with pytest.raises(redis.ResponseError, match=r"^DB index is out of range$"):
            c.execute_command("SELECT", "4")
        assert c.config_get("databases") == {"databases": "4"}
        c.close()
    finally:
        stop(proc)


def test_command_line_overrides_config_file(tmp_path):
    port = free_port()
    conf = tmp_path / "peregrine.conf"
    conf.write_text("port %d\nbind 127.0.0.1\ndatabases 4\n" % free_port())
    proc = start(str(conf), "--port", str(port), "--databases", "8")
    try:
        wait_tcp(proc, port)
        c = redis.Redis(host="127.0.0.1", port=port, protocol=2, socket_timeout=5)
        assert c.config_get("databases") == {"databases": "8"}
        c.close()
    finally:
        stop(proc)


def test_config_file_bad_directive(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port %d\nno-such-directive yes\n" % free_port())
    code, out = run(str(conf))
    assert code != 0
    assert "no-such-directive" in out
    assert "Bad directive or wrong number of arguments" in out


def test_missing_config_file(tmp_path):
    code, out = run(str(tmp_path / "does-not-exist.conf"))
    assert code != 0
    assert "does-not-exist.conf" in out


# ---------------------------------------------------------------- listening

def test_port_already_in_use():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        code, out = run("--port", str(port), "--bind", "127.0.0.1")
    assert code != 0
    assert "Address already in use" in out


def test_unixsocket(tmp_path):
    path = os.path.join(str(tmp_path), "p.sock")
    port = free_port()
    proc = start("--port", str(port), "--bind", "127.0.0.1", "--unixsocket", path)
    try:
        wait_tcp(proc, port)
        deadline = time.monotonic() + RUN_TIMEOUT
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.02)
        c = redis.Redis(unix_socket_path=path, protocol=2, socket_timeout=5)
        assert c.ping() is True
        assert c.set("via-unix", "1") is True
        c.close()
        tcp = redis.Redis(host="127.0.0.1", port=port, protocol=2, socket_timeout=5)
        assert tcp.get("via-unix") == b"1"
        assert tcp.config_get("unixsocket") == {"unixsocket": path}
        tcp.close()
    finally:
        stop(proc)


# ---------------------------------------------------------------- signals

def test_sigterm_exits_zero():
    port = free_port()
    proc = start("--port", str(port), "--bind", "127.0.0.1")
    try:
        wait_tcp(proc, port)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=RUN_TIMEOUT) == 0
    finally:
        stop(proc)


def test_sigint_exits_zero():
    port = free_port()
    proc = start("--port", str(port), "--bind", "127.0.0.1")
    try:
        wait_tcp(proc, port)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=RUN_TIMEOUT) == 0
    finally:
        stop(proc)


# ---------------------------------------------------------------- workers and cores

def start_on_cores(cores, *args):
    """Start peregrine allowed to run only on `cores` (its affinity, as taskset
    or a container's cpuset gives it); return (process, port)."""
    port = free_port()
    p = subprocess.Popen([PEREGRINE_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         cwd=tempfile.mkdtemp(prefix="peregrine-test-"),
                         preexec_fn=lambda: os.sched_setaffinity(0, cores))
    wait_tcp(p, port)
    return p, port


def thread_policies(proc):
    return {os.sched_getscheduler(int(t)) for t in os.listdir(f"/proc/{proc.pid}/task")}


def test_default_threads_are_the_cores_the_process_may_use():
    p, port = start_on_cores({0})
    try:
        c = redis.Redis(port=port)
        assert c.config_get("threads") == {"threads": "1"}
        assert c.config_get("worker-sched-policy") == {"worker-sched-policy": "auto"}
        assert thread_policies(p) == {os.SCHED_OTHER}
    finally:
        stop(p)


@pytest.mark.parametrize("policy,cores,threads,expect", [
    ("auto", {0}, 3, os.SCHED_BATCH),     # more workers than cores: batch
    ("auto", None, 1, os.SCHED_OTHER),    # as many or fewer: as any process
    ("batch", None, 2, os.SCHED_BATCH),
    ("normal", {0}, 3, os.SCHED_OTHER),
])
def test_worker_sched_policy(policy, cores, threads, expect):
    # A worker that wakes while others share its core does not preempt them
    # mid-batch (docs/transactions.md, "Cost").
    p, port = start_on_cores(cores or os.sched_getaffinity(0), "--threads", str(threads),
                             "--worker-sched-policy", policy)
    try:
        c = redis.Redis(port=port)
        assert c.config_get("worker-sched-policy") == {"worker-sched-policy": policy}
        assert len(os.listdir(f"/proc/{p.pid}/task")) >= threads
        assert thread_policies(p) == {expect}
        # Fixed, as threads: CONFIG SET refuses another value.
        other = "batch" if policy == "normal" else "normal"
        with pytest.raises(redis.ResponseError, match="can't set immutable config"):
            c.config_set("worker-sched-policy", other)
        assert c.config_set("worker-sched-policy", policy)
        c.set("k", "v")
        assert c.get("k") == b"v"
    finally:
        stop(p)


# ---------------------------------------------------------------- CONFIG REWRITE

def test_config_rewrite_keeps_the_file_and_restarts_the_same(tmp_path):
    port = free_port()
    conf = tmp_path / "peregrine.conf"
    conf.write_text("# a comment line\n\nport %d\nbind 127.0.0.1\n# about memory\nmaxmemory 10mb\n"
                    "save 900 1\nsave 300 10\nhz 15\nhz 16\nuser alice on nopass ~* +@all\n" % port)
    proc = start(str(conf))
    try:
        wait_tcp(proc, port)
        c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5, retry=NO_RETRY)
        c.config_set("maxmemory", "20mb")
        c.config_set("hz", "20")
        c.config_set("save", "")
        c.config_set("appendfsync", "no")
        c.config_set("client-output-buffer-limit", "replica 100mb 10mb 30")
        c.config_set("repl-backlog-size", "2mb")
        c.config_set("proto-max-bulk-len", "100mb")
        assert c.execute_command("CONFIG", "REWRITE") == b"OK"
        before = c.config_get("*")
        c.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    finally:
        stop(proc)
    text = conf.read_text()
    lines = text.splitlines()
    # What it did not manage stays where it was; a directive's first line
    # has its value, its later lines are gone; the rest comes after the
    # signature, only what differs from the defaults.
    assert lines[:4] == ["# a comment line", "", "port %d" % port, "bind 127.0.0.1"]
    assert lines[4:9] == ["# about memory", "maxmemory 20971520", 'save ""', "hz 20",
                          "user alice on nopass ~* +@all"]
    assert lines[9] == "# Generated by CONFIG REWRITE"
    assert "appendfsync no" in lines[10:] and "repl-backlog-size 2097152" in lines[10:]
    assert not any(l.startswith(("hz", "threads", "databases")) for l in lines[10:])
    # Started again from it: the same configuration.
    proc = start(str(conf))
    try:
        wait_tcp(proc, port)
        c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
        assert c.config_get("*") == before
        assert c.execute_command("ACL", "USERS") == [b"alice", b"default"]
    finally:
        stop(proc)


def test_config_rewrite_without_a_config_file(tmp_path):
    port = free_port()
    proc = start("--port", str(port), "--bind", "127.0.0.1")
    try:
        wait_tcp(proc, port)
        c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
        with pytest.raises(redis.ResponseError, match="^The server is running without a config file$"):
            c.execute_command("CONFIG", "REWRITE")
    finally:
        stop(proc)
