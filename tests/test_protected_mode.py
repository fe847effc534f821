# protected-mode from a non-loopback address: the server runs in a network
# namespace of the test's own (unshare -n, root), where 10.99.0.1 is added
# to that namespace's loopback device; a connection from 10.99.0.1 is not
# from 127.* or ::1. Nothing leaves the machine. Skipped where a namespace
# cannot be made (the decision itself has a unit test: Acl.ProtectedMode).
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import IS_REDIS, PEREGRINE_BIN

DENIED = ("-DENIED Redis is running in protected mode because protected mode is enabled and no password is set "
          "for the default user.")

# Runs inside the namespace: starts the server bound to every address with
# the given arguments, then reports what a client from 10.99.0.1 and one from
# 127.0.0.1 get for PING.
INSIDE = textwrap.dedent('''
    import socket, subprocess, sys, time
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", "10.99.0.1/32", "dev", "lo"], check=True)
    server = sys.argv[1:]
    p = subprocess.Popen(server, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    def ping(src):
        for _ in range(100):
            try:
                s = socket.create_connection(("10.99.0.1" if src != "127.0.0.1" else "127.0.0.1", 7777),
                                             timeout=5, source_address=(src, 0))
                break
            except OSError:
                time.sleep(0.05)
        # A refused connection gets its text at once: read before sending.
        s.settimeout(0.5)
        data = b""
        try:
            data = s.recv(4096)
        except socket.timeout:
            pass
        s.settimeout(5)
        try:
            if not data:
                s.sendall(b"PING\\r\\n")
            while True:
                if data.endswith(b"\\r\\n") and not data.startswith(b"-DENIED"):
                    break
                b = s.recv(4096)
                if not b:
                    data += b"<closed>"
                    break
                data += b
        except (socket.timeout, ConnectionResetError):
            data += b"<closed>"
        s.close()
        return data.decode(errors="replace")
    try:
        print(repr((ping("10.99.0.1"), ping("127.0.0.1"))))
    finally:
        p.terminate()
        p.wait(10)
''')


def run_in_namespace(server_args):
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs root, unshare and ip for a network namespace")
    binary = ["redis-server"] if IS_REDIS else [PEREGRINE_BIN, "--threads", "2"]
    # (In a directory of its own: a dump.rdb where the tests run would be
    # loaded, and PING answered -LOADING meanwhile.)
    with tempfile.TemporaryDirectory(prefix="peregrine-protected-") as d:
        cmd = ["unshare", "-n", sys.executable, "-c", INSIDE] + binary + [
            "--port", "7777", "--bind", "*", "--save", "", "--dir", d] + list(server_args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 and "unshare" in r.stderr:
        pytest.skip("cannot make a network namespace here: " + r.stderr.strip()[:200])
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


def test_protected_mode_refuses_non_loopback():
    remote, local = run_in_namespace([])
    assert remote.startswith(DENIED) and remote.endswith("<closed>"), remote
    assert local == "+PONG\r\n"


def test_protected_mode_off_or_password():
    remote, local = run_in_namespace(["--protected-mode", "no"])
    assert remote == "+PONG\r\n" and local == "+PONG\r\n"
    remote, local = run_in_namespace(["--requirepass", "pw"])
    assert remote == "-NOAUTH Authentication required.\r\n"
    assert local == "-NOAUTH Authentication required.\r\n"
