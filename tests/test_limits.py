# Resource limits (issue #6), one black-box test each: maxclients,
# client-query-buffer-limit, proto-max-bulk-len, timeout and tcp-keepalive.
# (client-output-buffer-limit: test_output_limits.py and test_pubsub.py;
# 10,000 connections: test_many_connections.py; 512 MB strings:
# test_strings.py.) Every test also runs against redis-server.
import shutil
import socket
import subprocess
import time

import pytest

from conftest import IS_REDIS
from helpers import Conn, encode, info_dict

MB = 1024 * 1024


def rss(conn):
    text = conn.call("INFO", "memory").split(b"\r\n", 1)[1]
    return int(info_dict(text)["used_memory_rss"])


def read_all(sock, timeout=5.0):
    """Everything the server sends until it closes the connection."""
    sock.settimeout(timeout)
    out = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return out
            out += chunk
    except ConnectionResetError:
        return out


def test_maxclients_refuses_the_next_client(start_server):
    s = start_server("--maxclients", "3")
    held = [Conn(s) for _ in range(3)]
    try:
        for c in held:
            assert c.call("PING") == b"+PONG\r\n"
        extra = socket.create_connection((s.host, s.port), timeout=5)
        assert read_all(extra) == b"-ERR max number of clients reached\r\n"
        extra.close()
        held.pop().close()
        deadline = time.monotonic() + 5
        while True:  # the slot frees once the server has seen the close
            with Conn(s) as c:
                c.send(encode("PING"))
                reply = c.read_reply()
            if reply == b"+PONG\r\n" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert reply == b"+PONG\r\n"
    finally:
        for c in held:
            c.close()


def test_query_buffer_limit_closes_without_allocating_the_announced_bulk(start_server):
    s = start_server("--client-query-buffer-limit", "1mb")
    with Conn(s) as probe:
        before = rss(probe)
        sock = socket.create_connection((s.host, s.port), timeout=5)
        # Announces 100 MB, sends 4 MB of it: the client is closed once its
        # pending request passes 1 MB; the 100 MB are never reserved.
        closed = False
        try:
            sock.sendall(encode("SET", "k", "v")[:-len("$1\r\nv\r\n")] + b"$100000000\r\n")
            for _ in range(40):
                sock.sendall(b"x" * 100_000)
        except (ConnectionResetError, BrokenPipeError):
            closed = True
        if not closed:
            read_all(sock)
        sock.close()
        assert probe.call("EXISTS", "k") == b":0\r\n"
        assert rss(probe) - before < 32 * MB
        if not IS_REDIS:  # a Redis 7.2 field (7.0 lacks it)
            stats = info_dict(probe.call("INFO", "stats").split(b"\r\n", 1)[1])
            assert stats["client_query_buffer_limit_disconnections"] == "1"
        assert probe.call("PING") == b"+PONG\r\n"


def test_proto_max_bulk_len_refuses_a_longer_bulk(start_server):
    s = start_server("--proto-max-bulk-len", "1mb")
    with Conn(s) as probe:
        before = rss(probe)
        sock = socket.create_connection((s.host, s.port), timeout=5)
        sock.sendall(encode("SET", "ok", "1") + b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
        assert read_all(sock) == b"+OK\r\n-ERR Protocol error: invalid bulk length\r\n"
        sock.close()
        # Exactly the limit is accepted.
        value = b"v" * MB
        assert probe.call("SET", "k", value) == b"+OK\r\n"
        assert probe.call("STRLEN", "k") == b":%d\r\n" % MB
        assert rss(probe) - before < 32 * MB


def test_timeout_closes_idle_clients_only(start_server):
    s = start_server("--timeout", "1")
    idle = Conn(s)
    busy = Conn(s)
    try:
        assert idle.call("PING") == b"+PONG\r\n"
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            assert busy.call("PING") == b"+PONG\r\n"  # active: kept
            time.sleep(0.2)
        assert idle.read_until_closed(timeout=5) == b""
        assert busy.call("PING") == b"+PONG\r\n"
    finally:
        idle.close()
        busy.close()


def keepalive_timer(port):
    out = subprocess.run(["ss", "-tnoH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True, timeout=10).stdout
    return out


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
@pytest.mark.parametrize("seconds,expect", [("300", "timer:(keepalive,"), ("0", None)])
def test_tcp_keepalive_on_accepted_sockets(start_server, seconds, expect):
    s = start_server("--tcp-keepalive", seconds)
    with Conn(s) as c:
        assert c.call("PING") == b"+PONG\r\n"
        out = keepalive_timer(s.port)
        assert "127.0.0.1:%d" % s.port in out
        if expect:
            assert expect in out, out
        else:
            assert "keepalive" not in out, out
