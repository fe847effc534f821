# maxmemory-clients and CLIENT NO-EVICT (Redis 7's client eviction,
# server/client_eviction.h): the option's forms and errors, the largest
# connections closed while the clients' memory passes the limit, NO-EVICT
# ones spared, evicted_clients counted; with every worker count the suite
# runs (PEREGRINE_ARGS).
import socket
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import wait_for


def closed(sock):
    """Whether the server closed `sock` (it reads EOF or a reset)."""
    sock.settimeout(0.05)
    try:
        return sock.recv(1 << 16) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def big_pending_argument(port, size=2_000_000, no_evict=False):
    """A connection in the middle of sending a large SET: its query buffer
    holds `size` bytes (the argument is 3 MB; the rest never comes)."""
    s = socket.create_connection(("127.0.0.1", port))
    if no_evict:
        s.sendall(b"CLIENT NO-EVICT on\r\n")
        assert s.recv(100) == b"+OK\r\n"
    s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"x" * size)
    return s


def test_maxmemory_clients_forms_and_errors(r):
    old = r.config_get("maxmemory-clients")["maxmemory-clients"]
    try:
        assert old == "0"
        r.config_set("maxmemory-clients", "10%")
        assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "10%"}
        r.config_set("maxmemory-clients", "1mb")
        assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "1048576"}
        with pytest.raises(redis.ResponseError, match=r"^CONFIG SET failed \(possibly related to argument "
                           r"'maxmemory-clients'\) - percentage argument must be less or equal to 100$"):
            r.config_set("maxmemory-clients", "200%")
        for bad in ("abc", "-1%", "%", "-5"):
            with pytest.raises(redis.ResponseError, match="argument must be a memory or percent value"):
                r.config_set("maxmemory-clients", bad)
        # A failed CONFIG SET of several changes none (Redis's rollback).
        with pytest.raises(redis.ResponseError, match="percentage argument"):
            r.execute_command("CONFIG", "SET", "maxmemory", "10000001", "maxmemory-clients", "200%")
        assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "1048576"}
        assert r.config_get("maxmemory") == {"maxmemory": "0"}
    finally:
        r.config_set("maxmemory-clients", old)


def test_client_no_evict(r):
    assert r.execute_command("CLIENT", "NO-EVICT", "on") == b"OK"
    assert "e" in r.client_info()["flags"]
    assert r.execute_command("CLIENT", "NO-EVICT", "OFF") == b"OK"
    assert "e" not in r.client_info()["flags"]
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("CLIENT", "NO-EVICT", "maybe")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("CLIENT", "NO-EVICT")
    if not IS_REDIS:  # (RESET ends it from 7.2 on; Debian's redis-server is 7.0)
        r.execute_command("CLIENT", "NO-EVICT", "on")
        assert r.execute_command("RESET") in (b"RESET", "RESET")
        assert "e" not in r.client_info()["flags"]


def test_the_largest_client_goes_and_no_evict_ones_stay(start_server):
    s = start_server("--maxmemory-clients", "1mb")
    r = s.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    before = r.info("stats")["evicted_clients"]
    small = socket.create_connection(("127.0.0.1", s.port))
    small.sendall(b"PING\r\n")
    assert small.recv(100) == b"+PONG\r\n"
    big = big_pending_argument(s.port)
    assert wait_for(lambda: closed(big))
    assert r.info("stats")["evicted_clients"] == before + 1
    assert not closed(small)
    # A NO-EVICT client over the limit stays; while the total is over, every
    # evictable client goes, the small one too (as Redis's evictClients).
    spared = big_pending_argument(s.port, no_evict=True)
    assert wait_for(lambda: closed(small))
    assert r.info("stats")["evicted_clients"] == before + 2
    assert not closed(spared)
    assert "e" in next(c for c in r.client_list() if int(c["tot-mem"]) > 1_000_000)["flags"]
    # Its argument completes: the command runs.
    spared.sendall(b"x" * 1_000_000 + b"\r\n")
    spared.settimeout(5)
    assert spared.recv(100) == b"+OK\r\n"
    assert r.strlen("k") == 3_000_000
    spared.close()


def test_a_client_that_reads_no_replies_is_evicted(start_server):
    s = start_server("--maxmemory-clients", "2mb")
    r = s.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.set("big", "v" * 100_000)
    reader = socket.create_connection(("127.0.0.1", s.port))
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    # 100 GETs of 100 KB, never read: the replies pile up in its output.
    reader.sendall(b"GET big\r\n" * 100)
    assert wait_for(lambda: r.info("stats")["evicted_clients"] == 1)
    assert r.ping()
    reader.close()


def test_percent_of_maxmemory_and_off(start_server):
    # 10% of 10 MB: a 2 MB query buffer passes it; 0 turns eviction off.
    s = start_server("--maxmemory", "10mb", "--maxmemory-clients", "10%")
    r = s.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    big = big_pending_argument(s.port)
    assert wait_for(lambda: closed(big))
    r.config_set("maxmemory-clients", "0")
    kept = big_pending_argument(s.port)
    time.sleep(0.5)
    assert not closed(kept)
    assert r.info("stats")["evicted_clients"] == 1
    kept.close()
