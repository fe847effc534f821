# Shared helpers for the black-box tests (fixtures are imported by the test modules).
#
# `rc` / `rc3` are redis-py clients with every response callback removed, so a test sees
# the reply exactly as decoded from the wire (b"OK", ints, bytes, lists, None; RESP3 maps
# become dicts) instead of redis-py's conversions (True, dicts built from flat lists...).
# Note: redis-py >= 8 negotiates RESP3 by default, so `rc` pins protocol=2 explicitly.
import re
import socket
import threading
import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


# Redis's error texts that many tests check (without the leading "ERR ").
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "value is not an integer or out of range"
SYNTAX = "syntax error"

# A client's `retry=` that does not retry: redis-py 8 retries a closed
# connection ten times, with seconds of backoff (after SHUTDOWN, say).
NO_RETRY = Retry(NoBackoff(), 0)


def arity(cmd):
    """The wrong-arity error of `cmd` (lowercase, as Redis names it)."""
    return "wrong number of arguments for '%s' command" % cmd


def encoding(c, key):
    return c.execute_command("OBJECT", "ENCODING", key)


def errmatch(text):
    """Regex matching exactly `text` (redis-py strips the leading 'ERR ')."""
    return "^" + re.escape(text) + "$"


def raises(text, exc=redis.ResponseError):
    return pytest.raises(exc, match=errmatch(text))


def replies(clients, *cmd):
    """What each client gets for `cmd`: its reply, or ("error", text)."""
    out = []
    for c in clients:
        try:
            out.append(c.execute_command(*cmd))
        except redis.ResponseError as e:
            out.append(("error", str(e)))
    return out


def make_list(c, key, *values):
    """Create a non-string key for WRONGTYPE / other-type checks: a list (RPUSH), or,
    on a server without lists yet, a set (SADD) with the same members.

    Call sites that need the exact type read it back with TYPE instead of assuming
    "list". Skips the calling test only when the server has neither command.
    """
    values = values or ("x",)
    try:
        return c.execute_command("RPUSH", key, *values)
    except redis.ResponseError as e:
        if not str(e).startswith("unknown command"):
            raise
    try:
        return c.execute_command("SADD", key, *values)
    except redis.ResponseError as e:
        if str(e).startswith("unknown command"):
            pytest.skip("server has neither RPUSH nor SADD (needed to create a non-string key)")
        raise


def fails(c, text, *cmds):
    """Each command (a tuple of arguments) fails with exactly `text`."""
    for cmd in cmds:
        with raises(text):
            c.execute_command(*cmd)


def require_command(c, name):
    """Skip the calling test when the server does not know command `name`."""
    if c.execute_command("COMMAND", "INFO", name) == [None]:
        pytest.skip("server does not implement %s yet" % name.upper())


def fresh_state(conn, resp3=False):
    """A connection back to a clean state (RESET, HELLO 3 if asked) over empty
    databases: the differential tests' start of each example."""
    assert conn.call("RESET") == b"+RESET\r\n"
    if resp3:
        conn.call("HELLO", "3")
    assert conn.call("FLUSHALL") == b"+OK\r\n"


def raw_client(server, protocol=2, **kw):
    c = server.client(protocol=protocol, **kw)
    c.response_callbacks.clear()
    return c


@pytest.fixture
def rc(server):
    """RESP2 client returning undecorated replies; flushall before the test."""
    c = raw_client(server, protocol=2)
    assert c.execute_command("FLUSHALL") == b"OK"
    yield c
    c.close()


@pytest.fixture
def rc3(server):
    """RESP3 client returning undecorated replies; flushall before the test."""
    c = raw_client(server, protocol=3)
    assert c.execute_command("FLUSHALL") == b"OK"
    yield c
    c.close()


@pytest.fixture
def config_set(rc):
    """CONFIG SET for one test: every directive it touched is restored afterwards
    (in reverse order, so that restoring an alias does not undo an earlier restore)."""
    saved = {}

    def set_(name, value):
        if name not in saved:
            saved[name] = rc.execute_command("CONFIG", "GET", name)[1]
        assert rc.execute_command("CONFIG", "SET", name, value) == b"OK"

    yield set_
    for name, value in reversed(list(saved.items())):
        rc.execute_command("CONFIG", "SET", name, value)


def encode(*args):
    """Encode one command as a RESP multibulk request."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, (int, float)):
            a = str(a).encode()
        elif isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """A raw socket connection that can split the byte stream into whole RESP replies."""

    def __init__(self, server, timeout=5.0):
        self.sock = socket.create_connection((server.host, server.port), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("connection closed by server; buffered: %r" % self.buf[:200])
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i + 2], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read_reply(self):
        """Return the raw bytes of exactly one RESP2/RESP3 reply."""
        line = self._line()
        t = line[:1]
        if t in b"+-:_#,(":
            return line
        if t in b"$!=":
            n = int(line[1:-2])
            if n < 0:
                return line
            return line + self._exact(n + 2)
        if t in b"*~>%|":
            n = int(line[1:-2])
            if n < 0:
                return line
            if t in b"%|":
                n *= 2
            parts = [line]
            for _ in range(n):
                parts.append(self.read_reply())
            return b"".join(parts)
        raise AssertionError("unexpected reply type in %r" % line)

    def read_reply_by(self, deadline, timeout_after=10.0):
        """One reply, or None if none came by `deadline` (time.monotonic());
        reads then time out after `timeout_after` seconds."""
        self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            return self.read_reply()
        except socket.timeout:
            return None
        finally:
            self.sock.settimeout(timeout_after)

    def call(self, *args):
        self.send(encode(*args))
        return self.read_reply()

    def inline(self, text):
        self.send(text if isinstance(text, bytes) else text.encode())
        return self.read_reply()

    def read_until_closed(self, timeout=3.0):
        """Read everything until the server closes the connection; fail if it doesn't."""
        deadline = time.monotonic() + timeout
        data, self.buf = self.buf, b""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("server did not close the connection; got %r" % data[:300])
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise AssertionError("server did not close the connection; got %r" % data[:300])
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk

    def nothing_pending(self, wait=0.2):
        """True if the server sends nothing within `wait` seconds (and keeps the socket open)."""
        if self.buf:
            return False
        self.sock.settimeout(wait)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return True
        finally:
            self.sock.settimeout(5.0)
        if chunk:
            self.buf += chunk
        return False


def client_fields(line):
    """Parse one CLIENT LIST / CLIENT INFO line into (ordered list of names, dict)."""
    line = line.decode() if isinstance(line, bytes) else line
    names, d = [], {}
    for tok in line.strip().split(" "):
        k, _, v = tok.partition("=")
        names.append(k)
        d[k] = v
    return names, d


def info_dict(text):
    """Parse an INFO reply into {field: value} (values are strings)."""
    text = text.decode() if isinstance(text, bytes) else text
    d = {}
    for line in text.split("\r\n"):
        if not line or line.startswith("#"):
            continue
        k, _, v = line.partition(":")
        d[k] = v
    return d


def pump(src, dst):
    """One direction of a TCP relay (run on a thread of its own): what `src`
    receives goes to `dst` until either side ends; then both are shut and
    closed, so that the other direction ends too."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def crc16(data: bytes) -> int:
    """CRC16/XMODEM, as Redis Cluster's keyHashSlot (hash tags are the caller's business)."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


# ---------------------------------------------------------------- blocking commands

def blocked_clients(c):
    info = c.execute_command("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    raise AssertionError(info)


def wait_blocked(c, n, timeout=5.0):
    """Wait until exactly `n` clients are blocked."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if blocked_clients(c) == n:
            return
        time.sleep(0.005)
    raise AssertionError("blocked_clients stayed %d, wanted %d" % (blocked_clients(c), n))


class Waiter:
    """A raw connection that sends a blocking command and reads its reply later
    (RESP3 after HELLO 3 with `resp3`; with `wait`, once the server counts it blocked)."""

    def __init__(self, server, rc, *cmd, wait=True, resp3=False):
        self.conn = Conn(server, timeout=10)
        self.id = int(self.conn.call("CLIENT", "ID")[1:-2])
        if resp3:
            self.conn.call("HELLO", "3")
        before = blocked_clients(rc)
        self.conn.send(encode(*cmd))
        if wait:
            wait_blocked(rc, before + 1)

    def reply(self):
        return self.conn.read_reply()

    def close(self):
        self.conn.close()


@pytest.fixture
def waiters(server, rc):
    """make(*cmd, wait=True, resp3=False): a Waiter, closed after the test."""
    made = []

    def make(*cmd, wait=True, resp3=False):
        w = Waiter(server, rc, *cmd, wait=wait, resp3=resp3)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def bulk(v):
    """A RESP bulk string's bytes (str and numbers encoded)."""
    v = v if isinstance(v, bytes) else str(v).encode()
    return b"$%d\r\n%s\r\n" % (len(v), v)


def pop_everything(server, n_producers, per_producer, n_consumers, push, pop):
    """A producer/consumer stress run: producers call push(c, p, j) for j in
    range(per_producer) while consumers call pop(c, i) (the items it took,
    [] when it timed out) until every item is popped or 30 s pass after the
    producers end. Returns the items popped; any client error fails."""
    total = n_producers * per_producer
    got, lock, stop, errors = [], threading.Lock(), threading.Event(), []

    def consumer(i):
        c = raw_client(server)
        try:
            while not stop.is_set():
                items = pop(c, i)
                with lock:
                    got.extend(items)
        except Exception as e:  # noqa: BLE001 (re-raised by the test)
            errors.append(e)
        finally:
            c.close()

    def producer(p):
        c = raw_client(server)
        try:
            for j in range(per_producer):
                push(c, p, j)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            c.close()

    consumers = [threading.Thread(target=consumer, args=(i,)) for i in range(n_consumers)]
    producers = [threading.Thread(target=producer, args=(p,)) for p in range(n_producers)]
    for t in consumers + producers:
        t.start()
    for t in producers:
        t.join(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with lock:
            if len(got) >= total:
                break
        time.sleep(0.02)
    stop.set()
    for t in consumers:
        t.join(30)
    assert not errors, errors
    return got


def wait_for(pred, timeout=10.0):
    """Polls `pred` until it holds or `timeout` seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


class Asking:
    """A replica by hand that has asked for a full sync (PSYNC ? -1) and
    reads what comes only when told to."""

    def __init__(self, server, capa_eof=True, rcvbuf=None):
        self.s = socket.create_connection((server.host, server.port), timeout=20)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        capa = b"REPLCONF capa eof capa psync2\r\n" if capa_eof else b"REPLCONF capa psync2\r\n"
        for cmd in (b"REPLCONF listening-port 7777\r\n", capa):
            self.s.sendall(cmd)
            assert self.s.recv(100) == b"+OK\r\n"
        self.s.sendall(b"PSYNC ? -1\r\n")
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            got = self.s.recv(65536)
            assert got, "closed"
            self.buf += got
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def fullresync(self):
        """The +FULLRESYNC line's offset (the newlines that keep a waiting
        replica's link alive come before it and after it)."""
        line = self._line().lstrip(b"\n")
        m = re.fullmatch(rb"\+FULLRESYNC ([0-9a-f]{40}) (\d+)", line)
        assert m, line
        self.replid = m.group(1).decode()
        return int(m.group(2))

    def payload(self):
        """The snapshot: diskless ($EOF:<mark> ... <mark>) or the file's
        ($<length> and its bytes)."""
        head = self._line().lstrip(b"\n")
        if head.startswith(b"$EOF:"):
            mark = head[5:]
            assert len(mark) == 40, head
            while mark not in self.buf:
                got = self.s.recv(65536)
                assert got, "closed before the snapshot's end"
                self.buf += got
            rdb, self.buf = self.buf.split(mark, 1)
            return rdb
        assert re.fullmatch(rb"\$\d+", head), head
        size = int(head[1:])
        while len(self.buf) < size:
            got = self.s.recv(65536)
            assert got, "closed before the snapshot's end"
            self.buf += got
        rdb, self.buf = self.buf[:size], self.buf[size:]
        return rdb

    def stream_until(self, needle, timeout=10):
        """Reads the stream until `needle` is in it, acknowledging offset 0
        every 0.2 s meanwhile, as a replica does every second (a diskless
        sync's stream waits for the first ACK once the replica is online)."""
        deadline = time.monotonic() + timeout
        self.s.settimeout(0.2)
        try:
            while needle not in self.buf and time.monotonic() < deadline:
                self.s.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n")
                try:
                    self.buf += self.s.recv(65536)
                except TimeoutError:
                    pass
        finally:
            self.s.settimeout(20)
        return self.buf

    def ack(self, offset):
        """REPLCONF ACK <offset>, as a replica sends it."""
        self.s.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%d\r\n" % (len(str(offset)), offset))

    def close(self):
        self.s.close()

    def commands(self):
        """The stream read so far as its commands (lists of bytes), and the
        bytes of an incomplete one left in the buffer."""
        out, at, buf = [], 0, self.buf
        while at < len(buf):
            m = re.match(rb"\*(\d+)\r\n", buf[at:])
            if not m:
                break
            pos, args = at + m.end(), []
            for _ in range(int(m.group(1))):
                n = re.match(rb"\$(\d+)\r\n", buf[pos:])
                if not n or pos + n.end() + int(n.group(1)) + 2 > len(buf):
                    return out
                pos += n.end()
                args.append(buf[pos:pos + int(n.group(1))])
                pos += int(n.group(1)) + 2
            out.append(args)
            at = pos
        return out

