# client-output-buffer-limit (issue #6): the directive's syntax and Redis's
# error texts, and a client that pipelines GETs of 1 MB values without ever
# reading is closed once its pending replies pass the hard limit, or stay
# past the soft limit for longer than its seconds, with the server's memory
# bounded. Every test also runs against redis-server (TEST_SERVER=redis).
import socket
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import encode, wait_for

MB = 1024 * 1024
DEFAULT = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


def limit(c):
    return c.config_get("client-output-buffer-limit")["client-output-buffer-limit"]


def test_config_get_default_and_set(server):
    c = server.client(decode_responses=True)
    assert limit(c) == DEFAULT
    c.config_set("client-output-buffer-limit", "normal 1mb 512kb 10")
    assert limit(c) == ("normal 1048576 524288 10 slave 268435456 67108864 60 "
                        "pubsub 33554432 8388608 60")
    # Several classes in one value; "replica" is "slave"; classes not named keep theirs.
    c.config_set("client-output-buffer-limit", "pubsub 0 0 0 replica 1 2 3")
    assert limit(c) == "normal 1048576 524288 10 slave 1 2 3 pubsub 0 0 0"
    c.config_set("client-output-buffer-limit", "")  # accepted, changes nothing
    assert limit(c) == "normal 1048576 524288 10 slave 1 2 3 pubsub 0 0 0"
    c.config_set("client-output-buffer-limit", DEFAULT)
    assert limit(c) == DEFAULT


@pytest.mark.parametrize("value,why", [
    ("normal 1mb 512kb", "Wrong number of arguments in buffer limit configuration."),
    ("foo 1 1 1", "Invalid client class specified in buffer limit configuration."),
    ("normal x 1 1", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
    ("normal 1 1 -1", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
    ("normal 1 1 1 pubsub 1 1 x", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
])
def test_config_set_errors_change_nothing(server, value, why):
    c = server.client(decode_responses=True)
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("client-output-buffer-limit", value)
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument "
                            "'client-output-buffer-limit') - " + why)
    assert limit(c) == DEFAULT


def test_config_file_directive(start_server):
    if IS_REDIS:
        s = start_server("--client-output-buffer-limit", "normal 2mb 1mb 5")
    else:
        s = start_server("--client-output-buffer-limit", "normal", "2mb", "1mb", "5")
    assert limit(s.client(decode_responses=True)).startswith("normal 2097152 1048576 5 ")


def client_ids(c):
    return {int(line.split()[0][3:]) for line in c.execute_command("CLIENT", "LIST").decode().splitlines()}


def slow_reader(server, db_client, n):
    """A raw connection that sends n GETs of the 1 MB value and never reads.
    Returns (socket, its client id)."""
    s = socket.create_connection((server.host, server.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.sendall(encode("CLIENT", "ID"))
    time.sleep(0.2)
    cid = int(s.recv(64).split(b":")[1].split(b"\r")[0])
    assert cid in client_ids(db_client)
    s.sendall(b"".join(encode("GET", "big") for _ in range(n)))
    return s, cid


def rss(c):
    return int(c.info("memory")["used_memory_rss"])


@pytest.fixture
def big(server):
    """A client, the 1 MB value under "big"; the limits are reset after (the
    server is shared by the session)."""
    c = server.client()
    c.set("big", b"v" * MB)
    yield c
    c.config_set("client-output-buffer-limit", DEFAULT)


def test_hard_limit_closes_a_client_that_never_reads(server, big):
    c = big
    c.config_set("client-output-buffer-limit", "normal 4mb 0 0")
    before = rss(c)
    # The server is shared by the session: earlier tests may have closed clients too.
    closed_before = None if IS_REDIS else int(c.info("stats")["client_output_buffer_limit_disconnections"])
    s, cid = slow_reader(server, c, 300)  # 300 MB of replies if nothing stopped it
    try:
        assert wait_for(lambda: cid not in client_ids(c)), "the client was not closed"
        if not IS_REDIS:  # Redis 7.0 has no such INFO field (7.2 does)
            assert int(c.info("stats")["client_output_buffer_limit_disconnections"]) == closed_before + 1
        assert rss(c) - before < 64 * MB
        assert c.ping()  # the server is fine, and so are other clients
        assert len(c.get("big")) == MB
    finally:
        s.close()


def test_soft_limit_closes_only_after_its_seconds(server, big):
    c = big
    c.config_set("client-output-buffer-limit", "normal 0 2mb 1")
    s, cid = slow_reader(server, c, 20)
    try:
        time.sleep(0.5)
        assert cid in client_ids(c), "closed before the soft limit's seconds"
        time.sleep(1.8)
        # Judged when replies are added: one more GET after the seconds.
        s.sendall(encode("GET", "big"))
        assert wait_for(lambda: cid not in client_ids(c)), "the client was not closed"
    finally:
        s.close()


def test_no_limit_by_default_for_normal_clients(server, big):
    c = big
    s, cid = slow_reader(server, c, 12)
    try:
        time.sleep(0.5)
        assert cid in client_ids(c)
        # It can still read every reply.
        s.settimeout(10)
        want = 12 * (len(b"$1048576\r\n") + MB + 2)
        got = 0
        while got < want:
            chunk = s.recv(1 << 20)
            assert chunk
            got += len(chunk)
        assert got == want
    finally:
        s.close()
