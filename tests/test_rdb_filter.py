# REPLCONF rdb-filter-only (Redis 7.2; what `redis-cli --functions-rdb`
# asks): a replica's snapshot with only the function libraries, or nothing
# (issue #38, docs/replication.md). Debian's Redis 7.0 does not know the
# option, so these run against Peregrine alone; the snapshot is checked by
# loading it into Debian's redis-server.
import socket
import time

import pytest
import redis

from conftest import IS_REDIS, ServerProcess

pytestmark = pytest.mark.skipif(IS_REDIS, reason="Redis 7.2's option; Debian's redis-server is 7.0")

LIB = "#!lua name=filtered\nredis.register_function('seven', function() return 7 end)"


def ask(server, *commands):
    """A connection that sends each command (RESP) and reads one line back
    for each but the last; returns the socket and those lines."""
    s = socket.create_connection((server.host, server.port), timeout=10)
    lines = []
    for i, cmd in enumerate(commands):
        s.sendall(b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in cmd))
        if i < len(commands) - 1:
            lines.append(read_line(s))
    return s, lines


def read_line(s, buf=None):
    data = b""
    while not data.endswith(b"\r\n"):
        got = s.recv(1)
        assert got, "closed"
        data += got
    return data[:-2]


def read_snapshot(s):
    """+FULLRESYNC, then the diskless payload; the connection then closes
    (rdb-only)."""
    line = read_line(s).lstrip(b"\n")
    assert line.startswith(b"+FULLRESYNC "), line
    head = read_line(s).lstrip(b"\n")
    assert head.startswith(b"$EOF:") and len(head) == 45, head
    mark = head[5:]
    data = b""
    while True:
        got = s.recv(65536)
        if not got:
            break
        data += got
    assert data.endswith(mark), data[-60:]
    return data[:-len(mark)]


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_only_the_functions(start_server, tmp_path, diskless):
    server = start_server("--repl-diskless-sync", diskless)
    c = server.client()
    c.function_load(LIB)
    for i in range(100):
        c.set(f"secret:{i}", "v")
    s, lines = ask(server, [b"REPLCONF", b"capa", b"eof"], [b"REPLCONF", b"rdb-only", b"1"],
                   [b"REPLCONF", b"rdb-filter-only", b"functions"], [b"PSYNC", b"?", b"-1"])
    try:
        assert lines == [b"+OK", b"+OK", b"+OK"]
        rdb = read_snapshot(s)  # (diskless whatever repl-diskless-sync says, as Redis 7.2)
    finally:
        s.close()
    assert rdb.startswith(b"REDIS00") and b"register_function('seven'" in rdb
    assert b"secret:" not in rdb
    # Debian's redis-server loads it: the library, no keys.
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "dump.rdb").write_bytes(rdb)
    ref = ServerProcess(["--dir", str(tmp_path / "r")], kind="redis")
    try:
        rc = ref.client()
        assert rc.dbsize() == 0
        assert rc.fcall("seven", 0) == 7
    finally:
        ref.stop()
    # The primary is unchanged; the rdb-only replica is gone.
    assert c.dbsize() == 100
    assert wait_gone(c)


def wait_gone(c):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if c.info("replication")["connected_slaves"] == 0:
            return True
        time.sleep(0.05)
    return False


def test_an_empty_filter_keeps_nothing(start_server):
    server = start_server()
    c = server.client()
    c.function_load(LIB)
    c.set("k", "v")
    s, lines = ask(server, [b"REPLCONF", b"capa", b"eof"], [b"REPLCONF", b"rdb-only", b"1"],
                   [b"REPLCONF", b"rdb-filter-only", b""], [b"PSYNC", b"?", b"-1"])
    try:
        assert lines == [b"+OK", b"+OK", b"+OK"]
        rdb = read_snapshot(s)
    finally:
        s.close()
    assert rdb.startswith(b"REDIS00") and b"register_function" not in rdb and b"k\x01v" not in rdb
    assert rdb[-9] == 0xFF  # (the end opcode right after the aux fields, then the checksum)


def test_filter_errors(start_server):
    server = start_server()
    c = server.client()
    with pytest.raises(redis.ResponseError, match="^Unsupported rdb-filter-only option: keys$"):
        c.execute_command("REPLCONF", "rdb-filter-only", "functions keys")
    with pytest.raises(redis.ResponseError, match="^Missing rdb-filter-only values$"):
        c.execute_command("REPLCONF", "rdb-filter-only", '"functions')
    # Without capa eof: refused (a filtered snapshot never goes through the file).
    s, lines = ask(server, [b"REPLCONF", b"rdb-filter-only", b"functions"], [b"PSYNC", b"?", b"-1"])
    try:
        assert lines == [b"+OK"]
        assert read_line(s) == b"-ERR Filtered replica requires EOF capability"
    finally:
        s.close()
    assert c.info("stats")["sync_full"] == 0
