# `supervised systemd|upstart|auto|no` (redis-server's directive): the server
# tells a service manager when it is ready and when it stops. Tested with a
# fake NOTIFY_SOCKET that the test reads, as systemd's Type=notify would.
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import IS_REDIS, PEREGRINE_BIN, ServerProcess, free_port
from helpers import NO_RETRY, raises


def notify_socket(tmp_path, abstract=False):
    """A datagram socket like systemd's; its NOTIFY_SOCKET value."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = "\0peregrine-test-%d-%d" % (os.getpid(), time.monotonic_ns())
        s.bind(name)
        value = "@" + name[1:]
    else:
        value = str(tmp_path / "notify.sock")
        s.bind(value)
    s.settimeout(10)
    return s, value


def start(tmp_path, env, *args):
    port = free_port()
    env = {**os.environ, **env}
    proc = subprocess.Popen([PEREGRINE_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--dir", str(tmp_path), *args], env=env, cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return proc, port


def messages(s):
    """What one datagram says, as a dict."""
    data = s.recv(4096).decode()
    assert data.endswith("\n")
    return dict(line.split("=", 1) for line in data.strip("\n").split("\n"))


def wait_exit(proc):
    try:
        return proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def told_stopping_then_exits(s, proc):
    """The server was asked to stop: systemd hears STOPPING=1, then it exits cleanly."""
    try:
        assert messages(s) == {"STOPPING": "1"}
        assert wait_exit(proc) == 0
    finally:
        s.close()


pytestmark = pytest.mark.skipif(IS_REDIS, reason="Peregrine-only: the binary's process behaviour")


@pytest.mark.parametrize("mode", ["systemd", "auto"])
@pytest.mark.parametrize("abstract", [False, True])
def test_systemd_is_told_ready_then_stopping(tmp_path, mode, abstract):
    s, value = notify_socket(tmp_path, abstract)
    # (daemonize yes is ignored under a supervisor, as in Redis: the
    # process stays the one systemd started.)
    proc, port = start(tmp_path, {"NOTIFY_SOCKET": value}, "--supervised", mode, "--daemonize", "yes")
    try:
        m = messages(s)
        assert m == {"STATUS": "Ready to accept connections", "READY": "1"}
        # Ready means served.
        c = redis.Redis(port=port, socket_timeout=5, retry=NO_RETRY)
        assert c.ping()
        assert c.config_get("supervised") == {"supervised": mode}
        assert proc.poll() is None
    except BaseException:
        proc.kill()
        raise
    c.shutdown(nosave=True)  # (redis-py takes the closed connection as success)
    told_stopping_then_exits(s, proc)


def test_ready_comes_after_the_data_is_loaded(tmp_path):
    # A snapshot with keys; the load is slowed so that READY's place shows:
    # it comes once every key is there (no -LOADING after it).
    seed = ServerProcess(["--dir", str(tmp_path)], tmp_path=tmp_path, kind="peregrine")
    try:
        c = seed.client()
        for i in range(200):
            c.set(f"k{i}", i)
        c.save()
    finally:
        seed.stop()
    s, value = notify_socket(tmp_path)
    proc, port = start(tmp_path, {"NOTIFY_SOCKET": value}, "--supervised", "systemd",
                       "--key-load-delay", "2000")
    try:
        t0 = time.monotonic()
        assert messages(s)["READY"] == "1"
        # (200 keys at 2 ms each: not before the load could have ended.)
        assert time.monotonic() - t0 > 0.3
        c = redis.Redis(port=port, socket_timeout=5, retry=NO_RETRY)
        assert c.dbsize() == 200
    except BaseException:
        proc.kill()
        raise
    proc.send_signal(signal.SIGTERM)
    told_stopping_then_exits(s, proc)


def test_a_replica_says_it_waits_for_its_primary_then_that_it_synced(tmp_path):
    primary = ServerProcess([], kind="peregrine")
    s, value = notify_socket(tmp_path)
    proc, port = start(tmp_path, {"NOTIFY_SOCKET": value}, "--supervised", "systemd",
                       "--replicaof", "127.0.0.1", str(primary.port))
    try:
        m = messages(s)
        assert m["READY"] == "1"
        assert m["STATUS"] == ("Ready to accept connections in read-only mode. "
                               "Waiting for MASTER <-> REPLICA sync")
        assert messages(s) == {"STATUS": "MASTER <-> REPLICA sync: Finished with success. "
                                         "Ready to accept connections in read-write mode."}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        primary.stop()
        s.close()


def test_no_notify_socket_means_no_supervisor_and_daemonize_applies(tmp_path):
    # systemd asked for, nobody listening: logged, and daemonize yes forks
    # as without a supervisor (the parent exits at once).
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "UPSTART_JOB")}
    port = free_port()
    log = tmp_path / "log.txt"
    pidfile = tmp_path / "p.pid"
    rc = subprocess.run([PEREGRINE_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                         "--dir", str(tmp_path), "--supervised", "systemd", "--daemonize", "yes",
                         "--logfile", str(log), "--pidfile", str(pidfile)],
                        env=env, timeout=10, stdin=subprocess.DEVNULL).returncode
    assert rc == 0
    c = redis.Redis(port=port, socket_timeout=5, retry=NO_RETRY)
    deadline = time.monotonic() + 10
    while True:
        try:
            assert c.ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    try:
        assert "NOTIFY_SOCKET is not set" in log.read_text()
    finally:
        c.shutdown(nosave=True)


def test_upstart_gets_a_sigstop_once_ready(tmp_path):
    proc, port = start(tmp_path, {"UPSTART_JOB": "peregrine"}, "--supervised", "auto")
    try:
        # The process stops itself; upstart would resume it.
        deadline = time.monotonic() + 10
        while True:
            pid, status = os.waitpid(proc.pid, os.WUNTRACED | os.WNOHANG)
            if pid != 0:
                break
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP
        os.kill(proc.pid, signal.SIGCONT)
        c = redis.Redis(port=port, socket_timeout=5, retry=NO_RETRY)
        assert c.ping()
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_the_directive_takes_redis_values_only(tmp_path):
    p = subprocess.run([PEREGRINE_BIN, "--port", str(free_port()), "--supervised", "sometimes"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10, cwd=str(tmp_path))
    assert p.returncode == 1
    assert b"argument(s) must be one of the following: upstart, systemd, auto, no" in p.stdout


def test_config_set_supervised_is_refused(r):
    assert r.config_get("supervised") == {"supervised": "no"}
    with raises("CONFIG SET failed (possibly related to argument 'supervised') - can't set immutable config"):
        r.config_set("supervised", "systemd")
