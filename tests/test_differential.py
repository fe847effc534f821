# Differential test (#6): random command sequences (tests/diffgen.py) sent to the
# server under test and to Debian's redis-server side by side, over raw RESP
# sockets; the replies must match byte for byte, error texts included, except
# where docs/differential.md says how they are compared instead (orders Redis
# leaves unspecified, clock-dependent numbers) or which Redis 7.0 replies differ
# from Redis 7.2's (Peregrine follows 7.2).
#
# Environment:
#   DIFFTEST_EXAMPLES  number of Hypothesis examples (default 500: CI's budget)
#   DIFFTEST_SEED      unset: derandomized (the same examples on every run);
#                      an integer: that seed; "random": a fresh one (a failure's
#                      message names the seed; `make difftest` prints it first)
#   DIFFTEST_STATS     set: print at the end how often each command got which kind
#                      of reply (run pytest with -s to see it), to judge coverage
# The server under test is the conftest one (PEREGRINE_BIN, PEREGRINE_ARGS; with
# TEST_SERVER=redis it is a second redis-server, which checks the harness itself).
import collections
import os
import random
import time

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

import diffgen
from conftest import ServerProcess
from diffgen import ANY_INT, EXPIRETIME, RANDOMKEY, SCAN_ALL, SEVERAL, TTL, UNORDERED
from helpers import Conn, encode

EXAMPLES = int(os.environ.get("DIFFTEST_EXAMPLES", "500"))
SEED = os.environ.get("DIFFTEST_SEED", "")
if SEED == "random":
    SEED = str(random.SystemRandom().randrange(2**32))
STATS = collections.Counter() if os.environ.get("DIFFTEST_STATS") else None


class Side:
    """One server and the test's connection to it."""

    def __init__(self, name, server):
        self.name = name
        self.server = server
        self.conn = None

    def connect(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = Conn(self.server, timeout=10.0)

    def reset(self, resp3):
        """A clean connection state and empty databases before each example. A
        connection an example left mid-reply (it failed) is replaced first."""
        if self.conn is None:
            self.connect()
        assert self.conn.call("RESET") == b"+RESET\r\n"
        if resp3:
            self.conn.call("HELLO", "3")
        assert self.conn.call("FLUSHALL") == b"+OK\r\n"


@pytest.fixture(scope="module")
def sides():
    started = []
    try:
        subject = ServerProcess()
        started.append(subject)
        reference = ServerProcess(kind="redis")
        started.append(reference)
        pair = (Side(subject.kind, subject), Side("redis-server", reference))
        for s in pair:
            s.connect()
        yield pair
        for s in pair:
            if s.conn is not None:
                s.conn.close()
        if STATS is not None:
            print_stats()
    finally:
        for s in started:
            s.stop()


# ------------------------------------------------------------------ RESP decoding

def parse(raw, i=0):
    """Decodes one RESP2/RESP3 reply from raw[i:] into (type byte, payload), next i."""
    end = raw.index(b"\r\n", i)
    t, line = raw[i:i + 1], raw[i + 1:end]
    i = end + 2
    if t in (b"$", b"!", b"="):
        n = int(line)
        if n < 0:
            return (t, None), i
        return (t, raw[i:i + n]), i + n + 2
    if t in (b"*", b"~", b">", b"%", b"|"):
        n = int(line)
        if n < 0:
            return (t, None), i
        if t in (b"%", b"|"):
            n *= 2
        items = []
        for _ in range(n):
            item, i = parse(raw, i)
            items.append(item)
        return (t, items), i
    return (t, line), i


def decode(raw):
    return parse(raw)[0]


# ------------------------------------------------------------------ comparison

def close_enough(a, b, kind, unit_ms, elapsed_ms):
    """TTL-like integers: both servers' clocks ran while the sequence did, so the
    same deadline reads differently by at most the time the example has run (twice
    for a remaining time: once when it was set, once when it was read), plus one
    for the seconds rounding."""
    slack = elapsed_ms * (2 if kind == TTL else 1) + 5
    return abs(a - b) <= slack / unit_ms + (0 if unit_ms == 1 else 1)


def compare(cmd, args, raw_a, raw_b, example, elapsed_ms):
    """True if two replies to `args` agree under the command's comparison kind."""
    if raw_a == raw_b:
        return True
    ta, va = decode(raw_a)
    tb, vb = decode(raw_b)
    if ta != tb:
        return False
    kind = cmd.kind
    if kind == UNORDERED and ta in (b"*", b"~"):
        return sorted(va) == sorted(vb)
    if kind in (TTL, EXPIRETIME) and ta == b":":
        a, b = int(va), int(vb)
        if a < 0 or b < 0:  # -1 (no deadline) and -2 (no key) are exact
            return False
        if kind == EXPIRETIME and not example.relative:
            return False  # only absolute deadlines: both servers hold the same number
        unit_ms = 1 if args[0].lower().startswith(b"p") else 1000
        return close_enough(a, b, kind, unit_ms, elapsed_ms)
    if kind == ANY_INT and ta == b":":
        return True
    return False


# ------------------------------------------------------------------ running

def quote(arg):
    """One argument as redis-cli reads it."""
    if arg and all(33 <= c < 127 and c not in b'"\'\\' for c in arg):
        return arg.decode()
    out = []
    for c in arg:
        ch = chr(c)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= c < 127:
            out.append(ch)
        else:
            out.append("\\x%02x" % c)
    return '"' + "".join(out) + '"'


def show(raw, limit=300):
    text = repr(raw)
    return text if len(text) <= limit else text[:limit] + "...(%d bytes)" % len(raw)


def count_reply(args, raw):
    name = args[0].decode(errors="replace").lower()
    if name in ("object", "client", "memory", "pubsub") and len(args) > 1:
        name += " " + args[1].decode(errors="replace").lower()
    kind = raw[:1].decode()
    if kind == "-":
        kind = raw.split(b" ")[0][:1].decode() + " " + raw[1:40].decode(errors="replace").strip()
    elif kind in "$*" and raw[1:3] in (b"-1", b"0\r"):
        kind += raw[1:3].decode().strip()
    STATS[(name, kind)] += 1


def print_stats():
    by_command = collections.defaultdict(list)
    for (name, kind), n in STATS.items():
        by_command[name].append((n, kind))
    print("\nreplies per command (reference server):")
    for name in sorted(by_command):
        kinds = sorted(by_command[name], reverse=True)
        print("  %-16s %s" % (name, ", ".join("%d x %s" % (n, k) for n, k in kinds)))


def unsubscribed_all(replies):
    """UNSUBSCRIBE's (PUNSUBSCRIBE's) replies without arguments, each [kind, name,
    count]: the names as a multiset and the counts in order."""
    items = [decode(r) for r in replies]
    if any(t not in (b"*", b">") or v is None or len(v) != 3 for t, v in items[:-1]):
        return replies
    return (sorted((t, v[0], v[1]) for t, v in items[:-1]), [v[2] for _, v in items[:-1]], replies[-1])


def published(replies):
    """PUBLISH's replies when the connection receives the message itself: the
    pushes' kinds in order (message, then pmessage for each matching pattern), the
    pushes as a multiset (Redis goes through its patterns in hash order), the rest."""
    pushes = [r for r in replies if r.startswith(b">")]
    return [decode(r)[1][0] for r in pushes], sorted(pushes), [r for r in replies if not r.startswith(b">")]


class Mismatch(AssertionError):
    pass


class Run:
    """One example against both servers, keeping a transcript for the report."""

    def __init__(self, sides, example):
        self.sides = sides
        self.example = example
        self.lines = []
        self.t0 = time.monotonic()

    def elapsed_ms(self):
        return (time.monotonic() - self.t0) * 1000

    def log(self, n, args, text):
        self.lines.append("%4d  %-60s %s" % (n, " ".join(quote(a) for a in args), text))

    def fail(self, n, args, raw_a, raw_b, why=""):
        a, b = self.sides
        ex = self.example
        self.lines.append(">>>>  %s   %s" % (" ".join(quote(a) for a in args), why))
        self.lines.append("      %s: %s" % (a.name, show(raw_a)))
        self.lines.append("      %s: %s" % (b.name, show(raw_b)))
        head = ("differential mismatch at command %d (%s %s vs %s; %s, %s%s).\n"
                "Replay by hand in redis-cli against each server: FLUSHALL%s, then the commands.\n"
                "  #  command%s replies (identical on both unless marked)\n"
                % (n, a.name, " ".join(a.server.cmd[1:]), b.name, "RESP3" if ex.resp3 else "RESP2",
                   "pipelined" if ex.pipelined else "one at a time",
                   "; DIFFTEST_SEED=%s" % SEED if SEED else "", "; HELLO 3" if ex.resp3 else "",
                   " " * 53))
        raise Mismatch(head + "\n".join(self.lines))

    def check(self, n, cmd, args, raw_a, raw_b):
        if STATS is not None:
            count_reply(args, raw_b)
        if compare(cmd, args, raw_a, raw_b, self.example, self.elapsed_ms()):
            self.log(n, args, show(raw_a, 80) if raw_a == raw_b else "(%s) %s | %s"
                     % (cmd.kind, show(raw_a, 40), show(raw_b, 40)))
        else:
            self.fail(n, args, raw_a, raw_b)

    def batch(self, items, pipelined=None):
        """Plain commands: written at once when pipelined, else one round trip each."""
        if not items:
            return
        a, b = self.sides
        if pipelined or (pipelined is None and self.example.pipelined):
            data = b"".join(encode(*args) for _, _, args in items)
            a.conn.send(data)
            b.conn.send(data)
            replies = [(a.conn.read_reply(), None) for _ in items]
            replies = [(ra, b.conn.read_reply()) for ra, _ in replies]
        else:
            replies = [(a.conn.call(*args), b.conn.call(*args)) for _, _, args in items]
        for (n, cmd, args), (ra, rb) in zip(items, replies):
            self.check(n, cmd, args, ra, rb)

    def randomkey(self, n, cmd, args):
        """RANDOMKEY: nil on both, or a key on both that EXISTS on its own server."""
        a, b = self.sides
        ra, rb = a.conn.call(*args), b.conn.call(*args)
        (ta, va), (tb, vb) = decode(ra), decode(rb)
        if ta == tb == b"$" and va is not None and vb is not None:
            ok = a.conn.call("EXISTS", va) == b.conn.call("EXISTS", vb) == b":1\r\n"
        else:
            ok = ra == rb  # nil (RESP2 or RESP3) or an error
        if not ok:
            self.fail(n, args, ra, rb, "(RANDOMKEY: nil on both, or a key existing on each)")
        if STATS is not None:
            count_reply(args, rb)
        self.log(n, args, "(randomkey) %s | %s" % (show(ra, 40), show(rb, 40)))

    def scan_all(self, n, cmd, args):
        """SCAN 0 <options> iterated until cursor 0 on each server; the key sets compared."""
        found = []
        for side in self.sides:
            cursor, keys, raw = b"0", set(), None
            for _ in range(10000):
                raw = side.conn.call(args[0], cursor, *args[1:])
                t, v = decode(raw)
                if t != b"*":
                    break  # an error: compared exactly below
                cursor = v[0][1]
                keys.update(k for _, k in v[1][1])
                if cursor == b"0":
                    raw = None
                    break
            else:
                raise Mismatch("%s: SCAN did not return to cursor 0 in 10000 calls" % side.name)
            found.append((raw, keys))
        (ra, ka), (rb, kb) = found
        shown_args = [args[0], b"0", *args[1:]]
        if STATS is not None:
            count_reply([b"scan (to 0)"], rb or (b"*%d" % len(kb)))
        if ra != rb or ka != kb:
            self.fail(n, shown_args, ra or repr(sorted(ka)).encode(), rb or repr(sorted(kb)).encode(),
                      "(SCAN to completion: the key sets)")
        self.log(n, shown_args, "(scan to cursor 0) %s" % (show(ra, 80) if ra else sorted(ka)))

    def several(self, n, cmd, args):
        """A command with any number of replies: a PING <token> follows it, and all
        replies up to the PING's are compared. UNSUBSCRIBE and PUNSUBSCRIBE without
        arguments leave every channel (pattern), and PUBLISH delivers to every
        matching pattern, in an order Redis does not specify (see unsubscribed_all,
        published)."""
        token = b"difftest-sentinel-%d" % n
        ends = (b"$%d\r\n%s\r\n" % (len(token), token),  # RESP3, or RESP2 outside subscriptions
                b"*2\r\n$4\r\npong\r\n$%d\r\n%s\r\n" % (len(token), token))  # RESP2 subscribed
        got = []
        for side in self.sides:
            side.conn.send(encode(*args) + encode(b"PING", token))
            replies = []
            while not replies or replies[-1] not in ends:
                replies.append(side.conn.read_reply())
            got.append(replies)
        (ra, rb) = got
        same = ra == rb
        if not same and len(args) == 1 and args[0].lower() in (b"unsubscribe", b"punsubscribe"):
            same = unsubscribed_all(ra) == unsubscribed_all(rb)
        if not same and args[0].lower() == b"publish":
            same = published(ra) == published(rb)
        if STATS is not None:
            count_reply(args, rb[0])
        if not same:
            self.fail(n, args + [b"(then PING %s)" % token], b"".join(ra), b"".join(rb),
                      "(all replies up to the PING's)")
        self.log(n, args, show(b"".join(ra[:-1]), 80) + " (then PING)")

    def run(self):
        try:
            self.run_commands()
        except BaseException:
            for s in self.sides:  # replies may be left unread: fresh connections next time
                s.conn.close()
                s.conn = None
            raise

    def run_commands(self):
        for s in self.sides:
            s.reset(self.example.resp3)
        pending = []
        for n, cmd in enumerate(self.example.commands, 1):
            args = diffgen.render(cmd, n - 1)
            if cmd.kind in (RANDOMKEY, SCAN_ALL, SEVERAL):
                self.batch(pending)
                pending = []
                {RANDOMKEY: self.randomkey, SCAN_ALL: self.scan_all, SEVERAL: self.several}[cmd.kind](n, cmd, args)
            else:
                pending.append((n, cmd, args))
        self.batch(pending)
        first = len(self.example.commands) + 1
        self.lines.append("      (the state left behind, read back:)")
        self.batch([(n, cmd, diffgen.render(cmd, n - 1))
                    for n, cmd in enumerate(diffgen.snapshot(self.example), first)], pipelined=True)


def differential_settings(f):
    f = settings(max_examples=EXAMPLES, derandomize=not SEED, deadline=None, database=None,
                 print_blob=True, phases=[Phase.explicit, Phase.generate, Phase.shrink],
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.large_base_example])(f)
    return seed(int(SEED))(f) if SEED else f


@differential_settings
@given(example=diffgen.examples())
def test_same_replies_as_redis(sides, example):
    Run(sides, example).run()
