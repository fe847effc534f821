# CLIENT TRACKING cross-checked with redis-server: diffgen's random commands
# run on both servers by a client tracking its reads (default mode, its
# invalidations redirected to a RESP2 client subscribed to
# __redis__:invalidate), and the invalidations each command causes are
# compared: the same keys (sorted within a command: Peregrine's shards tell
# of theirs in any order), the same flushes (nulls).
#
# Left out:
# - SPOP, SCAN and the SUBSCRIBE family, as in test_notifications;
# - RESET, HELLO and CLIENT, which would end or change the tracking;
# - scripts (EVAL, FCALL and their _RO forms): when a script's call reads,
#   Redis 7.0 remembers the script's declared keys, and an _RO script's
#   declared keys always; 7.2, which Peregrine follows, only what the calls
#   read (test_tracking.py checks that).
import os
import random
import time

import pytest
from hypothesis import given

import diffgen
from conftest import side_pair
from diffgen import SCAN_ALL, SEVERAL, SPOP
from helpers import Conn, encode, fresh_state

EXAMPLES = int(os.environ.get("TRACKTEST_EXAMPLES", "100"))
SEED = os.environ.get("TRACKTEST_SEED", "")
if SEED == "random":
    SEED = str(random.SystemRandom().randrange(2**32))
SKIPPED_KINDS = (SEVERAL, SCAN_ALL, SPOP)
SKIPPED_NAMES = (b"reset", b"hello", b"client", b"eval", b"evalsha", b"fcall", b"eval_ro", b"evalsha_ro", b"fcall_ro")
TIMEOUT = 3.0  # the server under test's invalidations of one command
QUIET = 0.1    # no more after an example


def invalidation(raw):
    """A message on __redis__:invalidate as ('keys', (k, ...)) or ('flush', null)."""
    head = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
    assert raw.startswith(head), raw
    body = raw[len(head):]
    if body in (b"$-1\r\n", b"_\r\n"):  # (the null of the tracking client's protocol, as Redis)
        return ("flush", body)
    parts = body.split(b"\r\n")
    n = int(parts[0][1:])
    return ("keys", tuple(parts[2 + 2 * i] for i in range(n)))


class Side:
    """One server: the tracking command connection and the redirect target."""

    def __init__(self, name, server):
        self.name, self.server = name, server
        self.conn = self.target = None

    def close(self):
        for c in (self.conn, self.target):
            if c is not None:
                c.close()
        self.conn = self.target = None

    def reset(self, resp3):
        if self.conn is None:
            self.conn = Conn(self.server, timeout=10.0)
            self.target = Conn(self.server, timeout=10.0)
            self.target_id = int(self.target.call("CLIENT", "ID")[1:-2])
            assert self.target.call("SUBSCRIBE", "__redis__:invalidate").endswith(b":1\r\n")
        fresh_state(self.conn, resp3)  # (RESET ends tracking first: no null for this flush)
        assert self.conn.call("CLIENT", "TRACKING", "on", "REDIRECT", str(self.target_id)) == b"+OK\r\n"

    def next_message(self, deadline):
        """The next message, b"pong" for PING's reply, None at the deadline."""
        raw = self.target.read_reply_by(deadline)
        if raw is None:
            return None
        if raw == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n":
            return b"pong"
        return invalidation(raw)

    def until_pong(self):
        """Redis: the invalidations of the command just answered (sent before
        its reply), then PING's reply as a marker."""
        self.target.send(encode("PING"))
        out = []
        while True:
            m = self.next_message(time.monotonic() + 10)
            assert m is not None, "%s: no PING reply on the redirect target" % self.name
            if m == b"pong":
                return out
            out.append(m)

    def take(self, n, timeout):
        out, deadline = [], time.monotonic() + timeout
        while len(out) < n:
            m = self.next_message(deadline)
            if m is None:
                break
            assert m != b"pong"
            out.append(m)
        return out


def normal(messages):
    """Messages compared as one command's: each key told, flushes counted."""
    keys = sorted(k for m in messages if m[0] == "keys" for k in m[1])
    return keys, [m[1] for m in messages if m[0] == "flush"]


@pytest.fixture(scope="module")
def sides():
    with side_pair(Side) as pair:
        yield pair


def run_example(sides, example):
    ref, subject = sides
    lines = []

    def fail(why, ea, eb):
        raise AssertionError(
            "invalidations differ (%s): %s\nReplay: FLUSHALL%s, CLIENT TRACKING on REDIRECT <a client "
            "subscribed to __redis__:invalidate>, then the commands.\n%s\n  %s: %r\n  %s: %r" % (
                " ".join(subject.server.cmd[1:]), why, "; HELLO 3" if example.resp3 else "",
                "\n".join(lines), ref.name, ea, subject.name, eb))

    try:
        for s in sides:
            s.reset(example.resp3)
        for n, cmd in enumerate(example.commands):
            args = diffgen.render(cmd, n)
            if cmd.kind in SKIPPED_KINDS or args[0].lower() in SKIPPED_NAMES:
                continue
            ra = ref.conn.call(*args)
            ea = ref.until_pong()
            rb = subject.conn.call(*args)
            eb = subject.take(len(ea), TIMEOUT)
            lines.append("%4d  %-50s %r | %r  %r" % (n + 1, diffgen.show(args)[:50], ra[:30], rb[:30], normal(ea)))
            if normal(ea) != normal(eb):
                fail("at command %d" % (n + 1), ea, eb)
        deadline = time.monotonic() + QUIET
        extra = [s.take(1, deadline - time.monotonic()) for s in sides]
        if extra != [[], []]:
            fail("after the last command", *extra)
    except BaseException:
        for s in sides:
            s.close()
        raise


@diffgen.example_settings(EXAMPLES, SEED)
@given(example=diffgen.examples())
def test_same_invalidations_as_redis(sides, example):
    run_example(sides, example)
