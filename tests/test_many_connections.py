# 10,000 concurrent connections held open and served (issue #6): every one
# gets its PING answered while all are open, INFO counts them, and they all
# go away when closed. Loopback only; a few seconds.
import resource
import selectors
import socket
import time

import pytest

N = 10_000


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return True
    if hard != resource.RLIM_INFINITY and hard < want:
        return False
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return True


def connected(c):
    return int(c.info("clients")["connected_clients"])


@pytest.fixture
def many_server(start_server):
    # The test process opens N sockets and the server (which inherits the
    # limit) accepts them: both need the descriptors.
    if not raise_fd_limit(N + 512):
        pytest.skip(f"RLIMIT_NOFILE hard limit below {N + 512}")
    return start_server("--maxclients", str(N + 100))


def test_ten_thousand_connections_served(many_server):
    c = many_server.client()
    socks = []
    try:
        for _ in range(N):
            s = socket.create_connection((many_server.host, many_server.port), timeout=10)
            socks.append(s)
        # Every connection sends PING; every one is answered while all are open.
        for s in socks:
            s.sendall(b"PING\r\n")
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, bytearray())
        answered = 0
        deadline = time.monotonic() + 60
        while answered < N and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                buf = key.data
                chunk = key.fileobj.recv(64)
                assert chunk, "a connection was closed"
                buf += chunk
                if buf.endswith(b"\r\n"):
                    assert bytes(buf) == b"+PONG\r\n"
                    sel.unregister(key.fileobj)
                    answered += 1
        sel.close()
        assert answered == N
        assert connected(c) == N + 1
    finally:
        for s in socks:
            s.close()
    deadline = time.monotonic() + 30
    while connected(c) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert connected(c) == 1
    assert c.ping()
