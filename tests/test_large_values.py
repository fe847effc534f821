# Large values (issue #15): values from 0 bytes to 64 MB set in one write and
# in pieces of every size (a large argument is read straight into the block
# that keeps it), replies of large values sent from the value's own block (a
# reference), and what must hold for them: a value overwritten, deleted,
# expired, changed in place or flushed while a reply of it is still waiting
# to be written is sent as it was; output limits count those replies; the
# server's memory does not grow with the replies waiting. Every test also
# runs against redis-server (TEST_SERVER=redis).
import os
import random
import socket
import time

import pytest

from conftest import IS_REDIS
from helpers import Conn, encode

KB = 1024
MB = 1024 * 1024
_args = os.environ.get("PEREGRINE_ARGS", "").split()
THREADS = int(_args[_args.index("--threads") + 1]) if "--threads" in _args else 0


def pattern(n, seed=0):
    """n bytes in which every offset is told apart (a shifted or cut value
    cannot compare equal)."""
    rnd = random.Random(seed)
    block = bytes(rnd.getrandbits(8) for _ in range(4096))
    reps = n // len(block) + 1
    out = bytearray(block * reps)[:n]
    for i in range(0, n, 4096):  # the block's offset written into each copy
        stamp = b"%010d" % i
        out[i:i + len(stamp)] = stamp[:max(0, min(len(stamp), n - i))]
    return bytes(out)


def send_in_pieces(sock, data, rnd, smallest, largest):
    i = 0
    while i < len(data):
        n = rnd.randint(smallest, largest)
        sock.sendall(data[i:i + n])
        i += n


SIZES = [0, 1, 14, 15, 16, 44, 45, 1023, 1024, 1025, 4096, 16383, 16384, 32767, 32768, 32769,
         100_000, MB, 16 * MB, 64 * MB]


@pytest.mark.parametrize("size", SIZES)
def test_set_and_get_in_one_write(server, size):
    v = pattern(size, size)
    with Conn(server, timeout=60) as c:
        c.send(encode("SET", "lv:one", v) + encode("GET", "lv:one") + encode("STRLEN", "lv:one"))
        assert c.read_reply() == b"+OK\r\n"
        assert c.read_reply() == b"$%d\r\n%s\r\n" % (size, v)
        assert c.read_reply() == b":%d\r\n" % size
        assert c.call("DEL", "lv:one") == b":1\r\n"


@pytest.mark.parametrize("size", SIZES)
def test_set_in_pieces(server, size):
    """The request arrives in pieces: tiny ones for small values (every
    header split somewhere), up to 256 KB for the largest."""
    rnd = random.Random(size)
    v = pattern(size, size + 1)
    largest = 7 if size <= 100_000 else (4096 if size <= MB else 256 * KB)
    with Conn(server, timeout=60) as c:
        send_in_pieces(c.sock, encode("SET", "lv:pieces", v, "EX", "1000") + encode("GET", "lv:pieces"),
                       rnd, 1, largest)
        assert c.read_reply() == b"+OK\r\n"
        assert c.read_reply() == b"$%d\r\n%s\r\n" % (size, v)
        ttl = int(c.call("TTL", "lv:pieces")[1:-2])
        assert 990 <= ttl <= 1000
        c.call("DEL", "lv:pieces")


def test_large_arguments_of_every_kind(server):
    """Large arguments that are stored, replied, compared or dropped."""
    a, b = pattern(40_000, 1), pattern(70_000, 2)
    with Conn(server, timeout=30) as c:
        assert c.call("MSET", "lv:a", a, "lv:b", b) == b"+OK\r\n"
        assert c.call("MGET", "lv:a", "lv:b") == b"*2\r\n$40000\r\n%s\r\n$70000\r\n%s\r\n" % (a, b)
        assert c.call("SETNX", "lv:a", b) == b":0\r\n"  # not stored
        assert c.call("GET", "lv:a") == b"$40000\r\n%s\r\n" % a
        assert c.call("GETSET", "lv:a", b) == b"$40000\r\n%s\r\n" % a
        assert c.call("GET", "lv:a") == b"$70000\r\n%s\r\n" % b
        assert c.call("ECHO", a) == b"$40000\r\n%s\r\n" % a
        assert c.call("APPEND", "lv:new", a) == b":40000\r\n"
        assert c.call("APPEND", "lv:new", b) == b":110000\r\n"
        assert c.call("GET", "lv:new") == b"$110000\r\n%s\r\n" % (a + b)
        key = pattern(50_000, 3)  # a large key
        assert c.call("SET", key, "small") == b"+OK\r\n"
        assert c.call("GET", key) == b"$5\r\nsmall\r\n"
        assert c.call("EXISTS", key) == b":1\r\n"
        assert c.call("SETEX", "lv:ex", "100", a) == b"+OK\r\n"
        assert c.call("PSETEX", "lv:px", "100000", b) == b"+OK\r\n"
        assert c.call("MGET", "lv:ex", "lv:px") == b"*2\r\n$40000\r\n%s\r\n$70000\r\n%s\r\n" % (a, b)
        # An error reply for a command with a large argument; the connection goes on.
        assert c.call("SET", "lv:a", a, "NOSUCHOPTION").startswith(b"-ERR syntax error")
        assert c.call("GET", "lv:a") == b"$70000\r\n%s\r\n" % b
        c.call("DEL", "lv:a", "lv:b", "lv:new", key, "lv:ex", "lv:px")


def test_pipeline_of_large_sets_and_gets(server):
    vals = [pattern(30_000 + 9_000 * i, i) for i in range(24)]
    req = b"".join(encode("SET", "lv:p%d" % i, v) for i, v in enumerate(vals))
    req += b"".join(encode("GET", "lv:p%d" % i) for i in range(len(vals)))
    with Conn(server, timeout=30) as c:
        send_in_pieces(c.sock, req, random.Random(5), 1, 100_000)
        for _ in vals:
            assert c.read_reply() == b"+OK\r\n"
        for v in vals:
            assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(v), v)
        c.call("DEL", *["lv:p%d" % i for i in range(len(vals))])


def test_replies_in_one_pipeline_see_each_change(server):
    a, b = pattern(3 * MB, 7), pattern(2 * MB, 8)
    with Conn(server, timeout=30) as c:
        c.call("SET", "lv:k", a)
        c.send(encode("GET", "lv:k") + encode("SET", "lv:k", b) + encode("GET", "lv:k") +
               encode("SETRANGE", "lv:k", 0, "XYZ") + encode("GET", "lv:k") + encode("DEL", "lv:k") +
               encode("GET", "lv:k"))
        assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(a), a)
        assert c.read_reply() == b"+OK\r\n"
        assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(b), b)
        assert c.read_reply() == b":%d\r\n" % len(b)
        assert c.read_reply() == b"$%d\r\nXYZ%s\r\n" % (len(b), b[3:])
        assert c.read_reply() == b":1\r\n"
        assert c.read_reply() == b"$-1\r\n"


def test_commands_that_reply_the_old_value_and_change_it(server):
    a, b = pattern(500 * KB, 9), pattern(300 * KB, 10)
    with Conn(server, timeout=30) as c:
        c.call("SET", "lv:g", a)
        assert c.call("GETSET", "lv:g", b) == b"$%d\r\n%s\r\n" % (len(a), a)
        assert c.call("SET", "lv:g", a, "GET") == b"$%d\r\n%s\r\n" % (len(b), b)
        assert c.call("GETDEL", "lv:g") == b"$%d\r\n%s\r\n" % (len(a), a)
        assert c.call("EXISTS", "lv:g") == b":0\r\n"
        c.call("SET", "lv:g", b)
        assert c.call("GETEX", "lv:g", "PX", "1") == b"$%d\r\n%s\r\n" % (len(b), b)
        time.sleep(0.05)
        assert c.call("GET", "lv:g") == b"$-1\r\n"


def stuck_reader(server, key, n):
    """A connection that sends n GETs of `key` and does not read yet: with a
    small receive buffer most of the replies wait in the server."""
    s = socket.create_connection((server.host, server.port), timeout=30)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * KB)
    s.sendall(b"".join(encode("GET", key) for _ in range(n)))
    return s


def read_replies(sock, n, value):
    want = (b"$%d\r\n" % len(value) + value + b"\r\n") * n
    sock.settimeout(30)
    got = bytearray()
    while len(got) < len(want):
        chunk = sock.recv(4 * MB)
        assert chunk, "connection closed after %d of %d bytes" % (len(got), len(want))
        got += chunk
    assert bytes(got) == want


CHANGES = {
    "overwritten": lambda c: c.set("lv:s", b"other"),
    "deleted": lambda c: c.delete("lv:s"),
    "unlinked": lambda c: c.unlink("lv:s"),
    "expired": lambda c: (c.pexpire("lv:s", 1), time.sleep(0.05), c.get("lv:s")),
    "changed in place": lambda c: c.setrange("lv:s", 10, b"CHANGED"),
    "appended to": lambda c: [c.append("lv:s", b"+" * 100_000) for _ in range(30)],
    "renamed over": lambda c: (c.set("lv:t", b"t"), c.rename("lv:t", "lv:s")),
    "flushed": lambda c: c.flushall(),
    "overwritten by a multi-key command": lambda c: c.mset({"lv:s": b"m", "{x}other": b"o", "zz": b"z"}),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_waiting_replies_keep_the_value_as_it_was(server, change):
    value = pattern(4 * MB, 11)
    c = server.client()
    try:
        c.set("lv:s", value)
        s = stuck_reader(server, "lv:s", 6)  # 24 MB of replies
        try:
            time.sleep(0.3)  # the GETs have run; most replies wait
            CHANGES[change](c)
            assert c.ping()
            read_replies(s, 6, value)
        finally:
            s.close()
    finally:
        c.delete("lv:s", "lv:t")
        c.close()


def test_many_waiting_replies_do_not_copy_the_value(server):
    """Twenty clients each wait for eight replies of one 8 MB value (1.3 GB
    of replies): they refer to the value, so the server's memory stays near
    the value's size. Redis copies every reply, so it is not held to this;
    nor is Peregrine with several threads, where a client on another thread
    than the key's gets a copy (docs/large-values.md)."""
    value = pattern(8 * MB, 12)
    c = server.client()
    try:
        c.set("lv:shared", value)
        before = int(c.info("memory")["used_memory_rss"])
        socks = [stuck_reader(server, "lv:shared", 8) for _ in range(20)]
        try:
            time.sleep(0.5)
            grown = int(c.info("memory")["used_memory_rss"]) - before
            if not IS_REDIS and THREADS == 1:
                assert grown < 200 * MB, "RSS grew by %d MB" % (grown // MB)
            c.delete("lv:shared")  # the replies keep it alive
            for s in socks[:3]:
                read_replies(s, 8, value)
        finally:
            for s in socks:
                s.close()
        assert c.ping()
    finally:
        c.close()


def test_output_limit_counts_replies_sent_by_reference(start_server):
    server = start_server()
    c = server.client()
    c.set("lv:2k", b"r" * 2048)
    c.config_set("client-output-buffer-limit", "normal 4mb 0 0")
    s = stuck_reader(server, "lv:2k", 20_000)  # 40 MB of 2 KB replies
    try:
        deadline = time.monotonic() + 10
        closed = False
        s.settimeout(0.2)
        while time.monotonic() < deadline and not closed:
            try:
                closed = s.recv(1 << 20) == b""
            except socket.timeout:
                pass
            except ConnectionResetError:
                closed = True
            # (The server may have closed it with megabytes of replies still
            # in the kernel's buffers, which this slow reader takes seconds
            # to drain before it sees the end: the server's word is enough.)
            if not IS_REDIS and int(c.info("stats")["client_output_buffer_limit_disconnections"]) == 1:
                closed = len(c.client_list()) == 1
        assert closed, "the client was not closed at the output limit"
    finally:
        s.close()
    assert c.ping()
    if not IS_REDIS:  # a Redis 7.2 field
        assert int(c.info("stats")["client_output_buffer_limit_disconnections"]) == 1
    c.close()


def test_client_closed_with_replies_waiting(server):
    """Replies waiting (by reference) when the client goes: nothing leaks or
    breaks, and the value can still be changed and read."""
    value = pattern(2 * MB, 13)
    c = server.client()
    try:
        c.set("lv:c", value)
        for _ in range(5):
            s = stuck_reader(server, "lv:c", 10)
            time.sleep(0.1)
            s.close()
        c.setrange("lv:c", 0, b"new")
        assert c.get("lv:c") == b"new" + value[3:]
    finally:
        c.delete("lv:c")
        c.close()


def test_slow_large_argument_is_not_idle(start_server):
    """A large value sent more slowly than the client timeout allows between
    reads of a silent client: the client is sending, so it is not idle (the
    server waits for the rest of a large argument without a wake-up per
    segment, but still reads at least once a second)."""
    server = start_server("--timeout", "3")
    v = pattern(200_000, 14)
    req = encode("SET", "lv:slow", v)
    with Conn(server, timeout=20) as c:
        head = len(req) - len(v) - 2
        c.send(req[:head + 1000])
        pos = head + 1000
        for _ in range(10):  # 5 s of 20 KB every half second
            time.sleep(0.5)
            c.send(req[pos:pos + 20_000])
            pos += 20_000
        c.send(req[pos:])
        assert c.read_reply() == b"+OK\r\n"
        assert c.call("STRLEN", "lv:slow") == b":200000\r\n"


@pytest.mark.parametrize("size", [40_000, 300_000])
def test_large_argument_complete_before_its_line_end(start_server, tmp_path, size):
    """The value's bytes all arrive, its "\\r\\n" later (over a Unix socket
    the server is woken for every piece): the command must wait for the
    line end with the value intact, then store it whole."""
    path = str(tmp_path / "lv.sock")
    server = start_server("--unixsocket", path)
    v = pattern(size, 15)
    req = encode("SET", "lv:crlf", v)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    try:
        s.sendall(req[:-2])
        time.sleep(0.2)
        s.sendall(req[-2:])
        time.sleep(0.05)
        s.sendall(encode("GET", "lv:crlf"))
        want = b"+OK\r\n" + b"$%d\r\n%s\r\n" % (size, v)
        got = b""
        while len(got) < len(want):
            chunk = s.recv(1 << 20)
            assert chunk
            got += chunk
        assert got == want
    finally:
        s.close()
