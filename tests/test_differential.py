# Differential test (#6): random command sequences (tests/diffgen.py) sent to the
# server under test and to Debian's redis-server side by side, over raw RESP
# sockets; the replies must match byte for byte, error texts included, except
# where docs/differential.md says how they are compared instead (orders Redis
# leaves unspecified, clock-dependent numbers, random picks) or which Redis 7.0
# replies differ from Redis 7.2's (Peregrine follows 7.2).
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
from hypothesis import given

import diffgen
from conftest import server_and_redis
from diffgen import ANY_INT, ENCODING, EXPIRETIME, HASH_ALL, RANDOM, RANDOMKEY, SCAN_ALL, SEVERAL, SPOP, TTL, UNORDERED
from helpers import Conn, encode, fresh_state

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
        fresh_state(self.conn, resp3)


@pytest.fixture(scope="module")
def sides():
    with server_and_redis() as (subject, reference):
        pair = (Side(subject.kind, subject), Side("redis-server", reference))
        for s in pair:
            s.connect()
        yield pair
        for s in pair:
            if s.conn is not None:
                s.conn.close()
        if STATS is not None:
            print_stats()


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


def elements(payload):
    """The payloads of an array's (set's, map's) elements."""
    return [v for _, v in payload]


def pairs(flat):
    return list(zip(flat[0::2], flat[1::2]))


def fits_listpack(raw_members):
    """Whether the set in a SMEMBERS reply fits Redis 7.2's listpack encoding
    (set-max-listpack-entries 128, set-max-listpack-value 64)."""
    t, v = decode(raw_members)
    return t in (b"*", b"~") and len(v) <= 128 and all(len(m) <= 64 for m in elements(v))


def compare(cmd, args, raw_a, raw_b, example, elapsed_ms, peek=None):
    """True if two replies to `args` agree under the command's comparison kind.
    `peek`: both servers' replies to the command cmd.peek names (ENCODING, HASH_ALL)."""
    if raw_a == raw_b:
        return True
    # A HELP reply's last line: 7.2's addReplyHelp says "Print this help.",
    # 7.0 (the reference) "Prints".
    if raw_a.endswith(b"+    Print this help.\r\n") and raw_b.endswith(b"+    Prints this help.\r\n"):
        return raw_a[:-len(b"    Print this help.\r\n")] == raw_b[:-len(b"    Prints this help.\r\n")]
    ta, va = decode(raw_a)
    tb, vb = decode(raw_b)
    if ta != tb:
        return False
    kind = cmd.kind
    if kind == UNORDERED and ta in (b"*", b"~"):
        return sorted(va) == sorted(vb)
    if kind == ENCODING and ta == b"$" and peek is not None:
        # A set of strings: "hashtable" in Redis 7.0 (the reference), "listpack" in 7.2
        # while it fits one (peek: the reference's SMEMBERS of the key).
        if va == b"listpack" and vb == b"quicklist":
            return True  # a list: Redis 7.0 has no listpack lists (7.2 and Peregrine do)
        return va == b"listpack" and vb == b"hashtable" and fits_listpack(peek[1])
    if kind == HASH_ALL and ta in (b"*", b"%") and peek is not None:
        if decode(peek[1]) == (b"$", b"listpack"):
            return False  # a listpack: insertion order, on both servers
        a, b = elements(va), elements(vb)
        if args[0].lower() == b"hgetall":
            a, b = pairs(a), pairs(b)
        return sorted(a) == sorted(b)
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
    if kind == "(":  # a note from the harness: how a reply that differed matched
        kind = raw.decode()
    elif kind == "-":
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


def picks(raw):
    """The members (fields) a random reply picked: one bulk string, or an array."""
    t, v = decode(raw)
    return [v] if t == b"$" else elements(v)


def random_pick_error(args, raw, content):
    """Why a reply to SRANDMEMBER, HRANDFIELD or SPOP (args) cannot come from a set
    or hash holding `content` (a set, a dict, None for none); None if it can."""
    t, v = decode(raw)
    name = args[0].lower()
    if t == b"-" or content is None:
        return "an error, or a reply for a missing key, that differs"
    if len(args) == 2:  # one pick
        if t != b"$" or v not in content:
            return "%r is not in %r" % (v, content)
        return None
    try:
        count = int(args[2])
    except ValueError:
        return "a count that is not an integer accepted"
    withvalues = name == b"hrandfield" and len(args) == 4 and args[3].lower() == b"withvalues"
    if t not in (b"*", b"~"):
        return "not an array"
    got = elements(v)
    if withvalues and v and v[0][0] == b"*":  # RESP3: [field, value] pairs
        if any(pt != b"*" or len(pv) != 2 for pt, pv in v):
            return "not [field, value] pairs"
        got = [tuple(elements(pv)) for _, pv in v]
    elif withvalues:  # RESP2: flat
        if len(got) % 2:
            return "an odd number of elements"
        got = pairs(got)
    fields = [g[0] for g in got] if withvalues else got
    want = min(count, len(content)) if count >= 0 else -count
    if len(got) != want:
        return "%d picks, expected %d" % (len(got), want)
    if count >= 0 and len(set(fields)) != len(fields):
        return "repeated picks"
    if any(f not in content for f in fields):
        return "a pick is not in %r" % (content,)
    if withvalues and any(content[f] != val for f, val in got):
        return "a field with another value"
    return None


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

    def check(self, n, cmd, args, raw_a, raw_b, peek=None):
        if STATS is not None:
            count_reply(args, raw_b)
        if compare(cmd, args, raw_a, raw_b, self.example, self.elapsed_ms(), peek):
            if STATS is not None and raw_a != raw_b:
                count_reply(args, b"(differed: matched as %s)" % cmd.kind.encode())
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
        for i, ((n, cmd, args), (ra, rb)) in enumerate(zip(items, replies)):
            # the generator emits a peeking command together with the one it peeks at
            peek = replies[i + cmd.peek] if cmd.peek and 0 <= i + cmd.peek < len(replies) else None
            self.check(n, cmd, args, ra, rb, peek)

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
        """SCAN 0 <options> (SSCAN/HSCAN key 0 <options>) iterated until cursor 0 on
        each server; the sets of keys (members, field-value pairs) compared."""
        name = args[0].lower()
        at = 1 if name == b"scan" else 2  # where the cursor goes
        found = []
        for side in self.sides:
            cursor, got, raw = b"0", set(), None
            for _ in range(10000):
                raw = side.conn.call(*args[:at], cursor, *args[at:])
                t, v = decode(raw)
                if t != b"*":
                    break  # an error: compared exactly below
                cursor = v[0][1]
                page = elements(v[1][1])
                got.update(pairs(page) if name == b"hscan" else page)
                if cursor == b"0":
                    raw = None
                    break
            else:
                raise Mismatch("%s: %s did not return to cursor 0 in 10000 calls" % (side.name, name.decode()))
            found.append((raw, got))
        (ra, ka), (rb, kb) = found
        shown_args = [*args[:at], b"0", *args[at:]]
        if STATS is not None:
            count_reply([name + b" (to 0)"], rb or (b"*%d" % len(kb)))
        if ra != rb or ka != kb:
            self.fail(n, shown_args, ra or repr(sorted(ka)).encode(), rb or repr(sorted(kb)).encode(),
                      "(%s to completion: the sets of what it returned)" % name.decode().upper())
        self.log(n, shown_args, "(scan to cursor 0) %s" % (show(ra, 80) if ra else sorted(ka)))

    def contents(self, key, of_hash):
        """Each server's set (or hash, as a dict) at `key`, read off the transcript;
        None where it holds none (missing keys, other types, RESP2 subscribed)."""
        out = []
        for side in self.sides:
            t, v = decode(side.conn.call(b"HGETALL" if of_hash else b"SMEMBERS", key))
            if t not in (b"*", b"~", b"%") or not v:
                out.append(None)
            else:
                flat = elements(v)
                out.append(dict(pairs(flat)) if of_hash else set(flat))
        return out

    def random(self, n, cmd, args):
        """SRANDMEMBER, HRANDFIELD: equal replies, or on each server a reply of the same
        shape whose picks are members (fields with their values) of its set (hash),
        distinct for a positive count; both servers' sets (hashes) then compared."""
        a, b = self.sides
        ra, rb = a.conn.call(*args), b.conn.call(*args)
        if STATS is not None:
            count_reply(args, rb)
        if ra != rb:
            of_hash = args[0].lower() == b"hrandfield"
            ca, cb = self.contents(args[1], of_hash)
            why = (random_pick_error(args, ra, ca) or
                   random_pick_error(args, rb, cb))
            if why is None and ca != cb:
                why = "the two servers' %s differ: %r | %r" % ("hashes" if of_hash else "sets", ca, cb)
            if why is None and decode(ra)[0] != decode(rb)[0]:
                why = "reply types differ"
            if why is not None:
                self.fail(n, args, ra, rb, "(%s: %s)" % (cmd.kind, why))
        if STATS is not None and ra != rb:
            count_reply(args, b"(differed: matched as random)")
        self.log(n, args, show(ra, 80) if ra == rb else "(random) %s | %s" % (show(ra, 40), show(rb, 40)))

    def spop(self, n, cmd, args):
        """SPOP: checked as random(); where the servers popped different members, the
        server under test is brought to the reference's set: SADD of what only it
        popped, then SREM of what only the reference popped (in the transcript as a
        "resync" line). Neither converts the set's encoding (the members were in it
        just before) nor empties it (the reference's set is what remains)."""
        a, b = self.sides
        key = args[1]
        ca, cb = self.contents(key, False)
        ra, rb = a.conn.call(*args), b.conn.call(*args)
        if STATS is not None:
            count_reply(args, rb)
        if ra == rb:
            self.log(n, args, show(ra, 80))
            return
        why = (random_pick_error(args, ra, ca) or
               random_pick_error(args, rb, cb))
        if why is None and ca != cb:
            why = "the two servers' sets differ before it: %r | %r" % (ca, cb)
        if why is None and decode(ra)[0] != decode(rb)[0]:
            why = "reply types differ"
        if why is not None:
            self.fail(n, args, ra, rb, "(SPOP: %s)" % why)
        self.log(n, args, "(random) %s | %s" % (show(ra, 40), show(rb, 40)))
        pa, pb = set(picks(ra)), set(picks(rb))
        add, rem = sorted(pa - pb), sorted(pb - pa)
        if STATS is not None:
            count_reply(args, b"(differed: resynced)" if add else b"(differed: matched as random)")
        if add:
            line = "      (resync %s: SADD %s %s; SREM %s %s)" % (
                a.name, quote(key), " ".join(map(quote, add)), quote(key), " ".join(map(quote, rem)))
            self.lines.append(line)
            added, removed = a.conn.call(b"SADD", key, *add), a.conn.call(b"SREM", key, *rem)
            if (added, removed) != (b":%d\r\n" % len(add), b":%d\r\n" % len(rem)):
                self.fail(n, args, added + removed, b":%d\r\n:%d\r\n" % (len(add), len(rem)),
                          "(the resync's SADD and SREM after it)")

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
            special = {RANDOMKEY: self.randomkey, SCAN_ALL: self.scan_all, SEVERAL: self.several,
                       RANDOM: self.random, SPOP: self.spop}.get(cmd.kind)
            if special is not None:
                self.batch(pending)
                pending = []
                special(n, cmd, args)
            else:
                pending.append((n, cmd, args))
        self.batch(pending)
        first = len(self.example.commands) + 1
        self.lines.append("      (the state left behind, read back:)")
        self.batch([(n, cmd, diffgen.render(cmd, n - 1))
                    for n, cmd in enumerate(diffgen.snapshot(self.example), first)], pipelined=True)


@diffgen.example_settings(EXAMPLES, SEED)
@given(example=diffgen.examples())
def test_same_replies_as_redis(sides, example):
    Run(sides, example).run()
