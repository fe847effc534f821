# Wire protocol: pipelining, fragmentation, inline commands, protocol errors, many clients,
# big values.
import socket
import threading
import time

import pytest

from helpers import Conn, encode, rc  # noqa: F401

PROTO_ERR = b"-ERR Protocol error: "


def send_slowly(conn, data, chunk=1, delay=0.001):
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(0, len(data), chunk):
        conn.send(data[i:i + chunk])
        if delay:
            time.sleep(delay)


# ---------------------------------------------------------------- pipelining

def test_pipeline_10000_commands_in_order(server):
    n = 10000
    payload = b"".join(encode("ECHO", "msg-%d" % i) for i in range(n))
    with Conn(server, timeout=20) as c:
        # Write from a thread so a server that applies back-pressure cannot deadlock us.
        err = []

        def writer():
            try:
                c.send(payload)
            except OSError as e:  # pragma: no cover - reported below
                err.append(e)

        t = threading.Thread(target=writer)
        t.start()
        for i in range(n):
            expected = b"msg-%d" % i
            assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(expected), expected)
        t.join(timeout=20)
        assert not err
        assert c.call("PING") == b"+PONG\r\n"


def test_pipeline_mixed_commands(server):
    cmds = []
    expected = []
    for i in range(500):
        cmds.append(encode("SET", "pipe:%d" % i, "v%d" % i))
        expected.append(b"+OK\r\n")
        cmds.append(encode("INCR", "pipe:counter"))
        expected.append(b":%d\r\n" % (i + 1))
        cmds.append(encode("GET", "pipe:%d" % i))
        v = b"v%d" % i
        expected.append(b"$%d\r\n%s\r\n" % (len(v), v))
    cmds.append(encode("GET", "a", "b"))
    expected.append(b"-ERR wrong number of arguments for 'get' command\r\n")
    cmds.append(encode("FLUSHALL"))
    expected.append(b"+OK\r\n")
    with Conn(server) as c:
        c.send(b"".join(cmds))
        for e in expected:
            assert c.read_reply() == e


def test_pipeline_inline_and_multibulk_mixed(server):
    with Conn(server) as c:
        c.send(b"PING\r\n" + encode("ECHO", "x") + b"ECHO y\r\n" + encode("PING"))
        assert c.read_reply() == b"+PONG\r\n"
        assert c.read_reply() == b"$1\r\nx\r\n"
        assert c.read_reply() == b"$1\r\ny\r\n"
        assert c.read_reply() == b"+PONG\r\n"


# ---------------------------------------------------------------- fragmentation

def test_request_one_byte_at_a_time(server):
    with Conn(server) as c:
        send_slowly(c, encode("SET", "frag-k", "hello\r\nworld"))
        assert c.read_reply() == b"+OK\r\n"
        send_slowly(c, encode("GET", "frag-k"))
        assert c.read_reply() == b"$12\r\nhello\r\nworld\r\n"
        send_slowly(c, b"ECHO slow\r\n")
        assert c.read_reply() == b"$4\r\nslow\r\n"
        assert c.call("DEL", "frag-k") == b":1\r\n"


def test_request_split_in_odd_places(server):
    data = encode("SET", "split-k", "x" * 1000) + encode("GET", "split-k")
    with Conn(server) as c:
        for size in (2, 3, 7, 13, 200):
            send_slowly(c, data, chunk=size, delay=0.0005)
            assert c.read_reply() == b"+OK\r\n"
            assert c.read_reply() == b"$1000\r\n" + b"x" * 1000 + b"\r\n"
        assert c.call("DEL", "split-k") == b":1\r\n"


# ---------------------------------------------------------------- inline commands

def test_inline_basic(server):
    with Conn(server) as c:
        assert c.inline("PING\r\n") == b"+PONG\r\n"
        assert c.inline("ping\n") == b"+PONG\r\n"
        assert c.inline("SET inl-k some-value\r\n") == b"+OK\r\n"
        assert c.inline("GET inl-k\r\n") == b"$10\r\nsome-value\r\n"
        assert c.inline("  GET    inl-k  \r\n") == b"$10\r\nsome-value\r\n"
        assert c.inline("DEL inl-k\r\n") == b":1\r\n"


def test_inline_quoted_args(server):
    with Conn(server) as c:
        assert c.inline('SET "inl a b" "c d"\r\n') == b"+OK\r\n"
        assert c.call("GET", "inl a b") == b"$3\r\nc d\r\n"
        assert c.inline("GET 'inl a b'\r\n") == b"$3\r\nc d\r\n"
        assert c.inline('ECHO ""\r\n') == b"$0\r\n\r\n"
        assert c.inline("ECHO ''\r\n") == b"$0\r\n\r\n"
        assert c.call("DEL", "inl a b") == b":1\r\n"


@pytest.mark.parametrize("line,value", [
    (b'ECHO "\\x41\\x42"\r\n', b"AB"),
    (b'ECHO "a\\nb"\r\n', b"a\nb"),
    (b'ECHO "a\\r\\n\\t\\b\\a"\r\n', b"a\r\n\t\b\a"),
    (b'ECHO "q\\"q"\r\n', b'q"q'),
    (b'ECHO "back\\\\slash"\r\n', b"back\\slash"),
    (b'ECHO "\\xff\\x00"\r\n', b"\xff\x00"),
    (b'ECHO "\\q"\r\n', b"q"),  # unknown escapes drop the backslash
    (b"ECHO 'it\\'s'\r\n", b"it's"),
    (b"ECHO 'a\\nb'\r\n", b"a\\nb"),  # no escapes in single quotes except \'
    (b"ECHO un\\x41quoted\r\n", b"un\\x41quoted"),  # no escapes outside quotes
])
def test_inline_escapes(server, line, value):
    with Conn(server) as c:
        assert c.inline(line) == b"$%d\r\n%s\r\n" % (len(value), value)


def test_inline_empty_lines_ignored(server):
    with Conn(server) as c:
        c.send(b"\r\n\r\n\n   \r\n\t\r\nPING\r\n\r\nECHO x\r\n")
        assert c.read_reply() == b"+PONG\r\n"
        assert c.read_reply() == b"$1\r\nx\r\n"
        assert c.nothing_pending()


def test_inline_wrong_arity_and_unknown(server):
    with Conn(server) as c:
        assert c.inline("GET\r\n") == b"-ERR wrong number of arguments for 'get' command\r\n"
        assert c.inline("nosuch a\r\n") == (
            b"-ERR unknown command 'nosuch', with args beginning with: 'a' \r\n")
        assert c.inline("PING\r\n") == b"+PONG\r\n"


@pytest.mark.parametrize("line", [
    b'SET "a b\r\n',
    b"SET 'a b\r\n",
    b'SET "a"b c\r\n',  # closing quote must be followed by a space
    b'ECHO "abc\\"\r\n',
])
def test_inline_unbalanced_quotes(server, line):
    with Conn(server) as c:
        c.send(line)
        assert c.read_until_closed() == PROTO_ERR + b"unbalanced quotes in request\r\n"


def test_multibulk_empty_and_negative_count_ignored(server):
    with Conn(server) as c:
        c.send(b"*0\r\n*-1\r\nPING\r\n")
        assert c.read_reply() == b"+PONG\r\n"
        assert c.nothing_pending()


# ---------------------------------------------------------------- protocol errors

@pytest.mark.parametrize("data,error", [
    (b"*abc\r\n", b"invalid multibulk length"),
    (b"*1x\r\n", b"invalid multibulk length"),
    (b"*+1\r\n", b"invalid multibulk length"),
    (b"*2147483648\r\n", b"invalid multibulk length"),
    (b"*1\r\nx\r\n", b"expected '$', got 'x'"),
    (b"*2\r\n$4\r\nECHO\r\n:5\r\n", b"expected '$', got ':'"),
    (b"*1\r\n$abc\r\n", b"invalid bulk length"),
    (b"*1\r\n$-1\r\n", b"invalid bulk length"),
    (b"*1\r\n$-5\r\n", b"invalid bulk length"),
    (b"*1\r\n$536870913\r\n", b"invalid bulk length"),
    (b"*1\r\n$99999999999999999999\r\n", b"invalid bulk length"),
])
def test_protocol_errors_close_connection(server, data, error):
    with Conn(server) as c:
        c.send(data)
        assert c.read_until_closed() == PROTO_ERR + error + b"\r\n"


def test_protocol_error_after_valid_commands(server):
    with Conn(server) as c:
        c.send(b"PING\r\n" + encode("ECHO", "ok") + b"*abc\r\nPING\r\n")
        assert c.read_until_closed() == (
            b"+PONG\r\n$2\r\nok\r\n" + PROTO_ERR + b"invalid multibulk length\r\n")


def test_too_big_inline_request(server):
    with Conn(server) as c:
        c.send(b"A" * (64 * 1024 + 100))
        assert c.read_until_closed() == PROTO_ERR + b"too big inline request\r\n"


def test_too_big_count_strings(server):
    with Conn(server) as c:
        c.send(b"*1" + b"1" * (64 * 1024 + 100))
        assert c.read_until_closed() == PROTO_ERR + b"too big mbulk count string\r\n"
    with Conn(server) as c:
        c.send(b"*1\r\n$1" + b"1" * (64 * 1024 + 100))
        assert c.read_until_closed() == PROTO_ERR + b"too big bulk count string\r\n"


def test_malformed_client_does_not_affect_others(server):
    with Conn(server) as good:
        assert good.call("SET", "mal-k", "v") == b"+OK\r\n"
        bad = Conn(server)
        try:
            bad.send(b"*1\r\n$3\r\nGET\r\n")  # incomplete command state...
            bad.read_reply()  # (a complete, wrong-arity command)
            bad.send(b"*3\r\n$3\r\nSET\r\n$5\r\nmal-k")  # ...then half a command
            assert good.call("GET", "mal-k") == b"$1\r\nv\r\n"
            bad.send(b"\r\nxx\r\n")  # garbage where '$' is expected
            assert bad.read_until_closed() == PROTO_ERR + b"expected '$', got 'x'\r\n"
        finally:
            bad.close()
        assert good.call("GET", "mal-k") == b"$1\r\nv\r\n"
        assert good.call("DEL", "mal-k") == b":1\r\n"


def test_client_disconnecting_mid_command(server):
    with Conn(server) as good:
        for _ in range(20):
            bad = Conn(server)
            bad.send(b"*3\r\n$3\r\nSET\r\n$6\r\nhalf-k\r\n$100\r\nabc")
            bad.close()
        assert good.call("EXISTS", "half-k") == b":0\r\n"
        assert good.call("PING") == b"+PONG\r\n"


# ---------------------------------------------------------------- many clients

def test_200_concurrent_clients(server):
    conns = []
    try:
        for _ in range(200):
            conns.append(Conn(server, timeout=10))
        for i, c in enumerate(conns):
            c.send(encode("SET", "mc:%d" % i, "val-%d" % i) + encode("INCR", "mc:counter")
                   + encode("GET", "mc:%d" % i))
        counters = []
        for i, c in enumerate(conns):
            assert c.read_reply() == b"+OK\r\n"
            r = c.read_reply()
            assert r.startswith(b":")
            counters.append(int(r[1:-2]))
            v = b"val-%d" % i
            assert c.read_reply() == b"$%d\r\n%s\r\n" % (len(v), v)
        assert sorted(counters) == list(range(1, 201))
        assert conns[0].call("GET", "mc:counter") == b"$3\r\n200\r\n"
    finally:
        for c in conns:
            c.close()
    with Conn(server) as c:
        c.call("FLUSHALL")


def test_concurrent_clients_threads(server):
    errors = []

    def worker(n):
        try:
            with Conn(server, timeout=10) as c:
                for j in range(50):
                    assert c.call("INCR", "th:counter").startswith(b":")
                    assert c.call("SET", "th:%d" % n, j) == b"+OK\r\n"
                assert c.call("GET", "th:%d" % n) == b"$2\r\n49\r\n"
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    with Conn(server) as c:
        assert c.call("GET", "th:counter") == b"$4\r\n1000\r\n"
        c.call("FLUSHALL")


# ---------------------------------------------------------------- big values

def test_10mb_value_round_trip(rc):
    value = bytes(range(256)) * (10 * 1024 * 1024 // 256)
    assert rc.execute_command("SET", "big", value) == b"OK"
    assert rc.execute_command("STRLEN", "big") == len(value)
    assert rc.execute_command("GET", "big") == value
    assert rc.execute_command("APPEND", "big", b"tail") == len(value) + 4
    assert rc.execute_command("GETRANGE", "big", -4, -1) == b"tail"
    assert rc.execute_command("DEL", "big") == 1


def test_big_value_raw_slow_reader(server):
    value = b"z" * (4 * 1024 * 1024)
    with Conn(server, timeout=20) as c:
        c.send(encode("SET", "big2", value) + encode("GET", "big2") + encode("GET", "big2"))
        assert c.read_reply() == b"+OK\r\n"
        time.sleep(0.2)  # let the output pile up server-side
        for _ in range(2):
            assert c.read_reply() == b"$%d\r\n" % len(value) + value + b"\r\n"
        assert c.call("DEL", "big2") == b":1\r\n"


def test_many_arguments(rc):
    n = 20000
    args = []
    for i in range(n):
        args += [b"many:%d" % i, b"%d" % i]
    assert rc.execute_command("MSET", *args) == b"OK"
    assert rc.execute_command("DBSIZE") == n
    got = rc.execute_command("MGET", *[b"many:%d" % i for i in range(n)])
    assert got == [b"%d" % i for i in range(n)]
