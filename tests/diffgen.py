# What the differential test (test_differential.py) sends: Hypothesis strategies
# for random command sequences over a small keyspace, covering every deterministic
# command docs/commands.md marks supported, with arguments drawn to reach both the
# happy paths and the error paths. docs/differential.md says what is left out, and why.
#
# A command is a Cmd: its arguments (bytes, or Rel placeholders for relative expiry
# times, made concrete by render()) and how its replies are compared (`kind`).
import dataclasses
import hashlib

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis import strategies as st

# Eight keys: three share the hash tag {t} (one slot), x and {x}z share another
# slot, the rest spread over the shards of --threads 4 (slot * 4 / 16384: b -> 0,
# c -> 1, y -> 2, x and {t} -> 3), so multi-key commands cross shards.
KEYS = [b"{t}a", b"{t}b", b"{t}c", b"b", b"c", b"y", b"x", b"{x}z"]

LLONG_MAX = 2**63 - 1
LLONG_MIN = -2**63

# How replies are compared (test_differential.compare):
EXACT = "exact"            # byte for byte, error text included
UNORDERED = "unordered"    # an array compared as a multiset (KEYS)
TTL = "ttl"                # TTL/PTTL: remaining time, within what the clocks can drift apart
EXPIRETIME = "expiretime"  # EXPIRETIME/PEXPIRETIME: exact unless relative deadlines exist
ANY_INT = "any_int"        # any integer matches any integer (OBJECT IDLETIME, MEMORY USAGE)
RANDOMKEY = "randomkey"    # nil on both, or each server's key exists there
SCAN_ALL = "scan_all"      # SCAN/SSCAN/HSCAN iterated to cursor 0, keys (members, pairs) as a set
SEVERAL = "several"        # any number of replies (SUBSCRIBE & co, PUBLISH to oneself in RESP3)
ENCODING = "encoding"      # OBJECT ENCODING: exact, but a set Redis 7.0 keeps as "hashtable" may be
                           # "listpack" if its members (the peeked SMEMBERS reply) fit one
HASH_ALL = "hash_all"      # HGETALL/HKEYS/HVALS: exact if the hash is a listpack (the peeked OBJECT
                           # ENCODING reply), else the fields (pairs) as a multiset
RANDOM = "random"          # SRANDMEMBER/HRANDFIELD: the reply's shape, each pick a member (field, value)
SPOP = "spop"              # SPOP: as RANDOM, then the server under test brought to the reference's set


def show(args):
    """A command's arguments for a failure's listing (unprintable ones as Python writes them)."""
    return " ".join(a.decode() if a and all(33 <= ch < 127 for ch in a) else repr(a) for a in args)


def example_settings(examples, seed_value):
    """The Hypothesis settings of the tests that run diffgen's examples on two
    servers (test_differential, test_notifications): `examples` of them,
    derandomized unless `seed_value` (an integer, as a string) is given."""
    def apply(f):
        f = settings(max_examples=examples, derandomize=not seed_value, deadline=None, database=None,
                     print_blob=True, phases=[Phase.explicit, Phase.generate, Phase.shrink],
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.large_base_example])(f)
        return seed(int(seed_value))(f) if seed_value else f
    return apply


@dataclasses.dataclass(frozen=True)
class Rel:
    """A relative expiry time of at least 200 s: render() adds 10 s per position in
    the sequence, so that no two relative deadlines are closer than 10 s and GT/LT
    between them cannot depend on the milliseconds between commands."""
    seconds: int
    ms: bool


@dataclasses.dataclass(frozen=True)
class Cmd:
    args: tuple
    kind: str = EXACT
    # ENCODING and HASH_ALL: the position, relative to this command, of the one whose
    # reference reply the comparison reads (the generator emits them together).
    peek: int = 0


@dataclasses.dataclass(frozen=True)
class Example:
    resp3: bool       # HELLO 3 before the sequence
    pipelined: bool   # runs of plain commands written at once, replies read after
    relative: bool    # relative expiry times (EX, PX, EXPIRE ...) appear
    commands: tuple
    keys: tuple       # the keys the commands use (for the snapshot after them)


def render(cmd, index):
    """The command's arguments as bytes, relative times made concrete."""
    out = []
    for a in cmd.args:
        if isinstance(a, Rel):
            s = a.seconds + 10 * index
            a = str(s * 1000 + 123 if a.ms else s).encode()
        out.append(a)
    return out


SUBSCRIBES = (b"subscribe", b"psubscribe")


def snapshot(example):
    """What an example leaves behind, read back after its commands: every key of
    its keyspace in databases 0-2 (value, deadline, encoding, refcount), the key
    counts and the connection's name; first a RESET if it may have subscribed
    (RESP2 allows nothing else then). A difference in state shows here even when
    no command of the sequence happened to look at it."""
    keys = example.keys
    out = []
    if any(c.args[0].lower() in SUBSCRIBES for c in example.commands):
        out.append(Cmd((b"RESET",)))
    for db in (b"0", b"1", b"2"):
        out += [Cmd((b"SELECT", db)), Cmd((b"DBSIZE",))]
        for k in keys:
            out += [Cmd((b"GET", k)), Cmd((b"PTTL", k), TTL), *hash_read(b"HGETALL", k),
                    Cmd((b"OBJECT", b"REFCOUNT", k)), Cmd((b"XRANGE", k, b"-", b"+"))]
    out.append(Cmd((b"CLIENT", b"GETNAME")))
    return out


def object_encoding(k, name=b"OBJECT", sub=b"ENCODING"):
    """OBJECT ENCODING of k, then SMEMBERS of k: a set of strings is "hashtable" in
    Redis 7.0 and "listpack" in 7.2 (Peregrine) while it fits one, which the
    comparison (ENCODING) reads from the reference's SMEMBERS reply."""
    return (Cmd((name, sub, k), ENCODING, peek=1), Cmd((b"SMEMBERS", k), UNORDERED))


def hash_read(name, k):
    """HGETALL, HKEYS or HVALS of k after its OBJECT ENCODING (and SMEMBERS, see
    object_encoding): a listpack's order is its insertion order on both servers
    (compared exactly), a hash table's is each server's own."""
    return (*object_encoding(k), Cmd((name, k), HASH_ALL, peek=-2))


# ------------------------------------------------------------------ building blocks

def word(w):
    """A keyword in upper, lower or mixed case."""
    return st.sampled_from([w.upper().encode(), w.lower().encode(), w.capitalize().encode()])


def weighted(n, strategy):
    """n copies of a strategy for st.one_of, which draws its (distinct) branches
    alike: Hypothesis caches strategies built from equal arguments, and one_of
    drops a branch it already has."""
    return [strategy.map(lambda x: x) for _ in range(n)]


def flatten_commands(items):
    out = []
    for c in items:
        out.extend(c if isinstance(c, tuple) else [c])
    return out


def flatten(parts):
    out = []
    for p in parts:
        if isinstance(p, (list, tuple)):
            out.extend(flatten(p))
        else:
            out.append(p)
    return out


def cmd(name, *args, kind=EXACT):
    """A command strategy: the name (in a random case) and the argument strategies."""
    return st.tuples(word(name), *args).map(lambda t: Cmd(tuple(flatten(t)), kind))


def seq(*parts):
    """Several tokens drawn together (an option and its value)."""
    return st.tuples(*parts).map(list)


def options(*choices, max_size=4):
    return st.lists(st.one_of(*choices), max_size=max_size).map(flatten)


def ints(*values):
    return st.sampled_from([str(v).encode() for v in values])


# The keys an example uses: all eight (some more often than others, so that a
# sequence comes back to what it wrote; the empty key rarely), or only two or
# three, so that commands keep meeting each other's results. Each small set has
# keys on two shards.
KEYSPACE_KEYS = [KEYS + [b""], [b"{t}a", b"b"], [b"{t}a", b"{t}b", b"x"]]
KEYSPACES = [
    st.sampled_from(KEYS[:1] * 8 + KEYS[1:2] * 5 + KEYS[3:4] * 5 + KEYS[6:7] * 4 + KEYS * 2 + [b""]),
    st.sampled_from(KEYSPACE_KEYS[1]),
    st.sampled_from(KEYSPACE_KEYS[2]),
]

SPECIAL_VALUES = [
    b"", b"0", b"1", b"-1", b"42", b"9999", b"10000", b"-10000", b"100",
    b"9223372036854775807", b"-9223372036854775808", b"9223372036854775806",
    b"-9223372036854775807", b"9223372036854775808", b"-9223372036854775809",
    b"12345678901234567890", b"18446744073709551616",
    b"+1", b"01", b"-0", b" 1", b"1 ", b"0x10", b"1e3", b"1.", b".5",
    b"1.5", b"-0.0", b"3.0", b"0.1", b"5.0e3", b"1e308", b"1.7976931348623157e308",
    b"1e-320", b"inf", b"-inf", b"nan", b"+inf", b"1e4000", b"-1e4900", b"1e5000",
    b"a", b"hello", b"hello world", b"\x00", b"a\x00b", b"\r\n", b"\xff\xfe", "é€".encode(),
    b"x" * 20, b"x" * 21, b"x" * 44, b"x" * 45, b"y" * 100, b"1" * 19, b"1" * 20, b"1" * 21,
]
value = st.one_of(
    st.sampled_from(SPECIAL_VALUES),
    st.integers(min_value=LLONG_MIN - 10, max_value=LLONG_MAX + 10).map(lambda i: str(i).encode()),
    st.integers(min_value=-20000, max_value=20000).map(lambda i: str(i).encode()),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: repr(f).encode()),
    st.binary(max_size=50),
    st.lists(st.sampled_from(b"abc{}*?[]^-\\ \x00"), max_size=8).map(bytes),
)

BAD_INTS = [b"", b"abc", b"1.5", b"1e3", b" 1", b"1 ", b"+5", b"0x1", b"9223372036854775808",
            b"-9223372036854775809", b"99999999999999999999"]
bad_int = st.sampled_from(BAD_INTS)

# INCRBY / DECRBY amounts: small, near the int64 limits, and not integers.
delta = st.one_of(
    ints(0, 1, -1, 5, -5, 100, LLONG_MAX, LLONG_MIN, LLONG_MAX - 1, LLONG_MIN + 1, 2**62, -2**62),
    st.integers(min_value=LLONG_MIN, max_value=LLONG_MAX).map(lambda i: str(i).encode()),
    st.integers(min_value=-1000, max_value=1000).map(lambda i: str(i).encode()),
    bad_int,
)

# GETRANGE indexes: small, negative, huge.
small_index = st.integers(min_value=-60, max_value=60).map(lambda i: str(i).encode())
index = st.one_of(*weighted(3, small_index),
                  ints(LLONG_MAX, LLONG_MIN, 2**31, -2**31, 2**32, -2**32, 536870912), bad_int)
# SETRANGE offsets: small, or large enough that offset + length exceeds
# proto-max-bulk-len (512 MB), so that nothing large is ever allocated.
small_offset = st.integers(min_value=-5, max_value=60).map(lambda i: str(i).encode())
offset = st.one_of(*weighted(3, small_offset),
                   ints(536870912, 2**31, 2**32, LLONG_MAX, LLONG_MAX - 1, LLONG_MIN, -1), bad_int)
setrange_value = st.one_of(st.just(b""), value)

# Bitmaps: bit offsets small, or past the 512 MB limit (never one that would
# allocate near it); BITCOUNT / BITPOS ranges and units; BITFIELD's types,
# offsets (#n included) and operations.
bit_offset = st.one_of(*weighted(3, st.integers(min_value=0, max_value=200).map(lambda i: str(i).encode())),
                       ints(-1, 4294967296, 2**40, LLONG_MAX, LLONG_MIN), bad_int)
bit_value = st.one_of(*weighted(3, ints(0, 1)), ints(2, -1, 10), bad_int)
bit_unit = st.sampled_from([b"BIT", b"byte", b"bits", b""])
bit_range = st.one_of(st.just([]), seq(small_index), seq(small_index, small_index),
                      seq(small_index, small_index, bit_unit), seq(small_index, small_index, bit_unit, bit_unit))
bitop_name = st.sampled_from([b"AND", b"or", b"Xor", b"NOT", b"nand"])
field_type = st.sampled_from([b"u8", b"i8", b"u1", b"i1", b"i64", b"u63", b"u64", b"i65", b"i5", b"u0", b"x8"])
field_offset = st.one_of(*weighted(3, st.integers(min_value=0, max_value=100).map(lambda i: str(i).encode())),
                         st.sampled_from([b"#0", b"#3", b"-1", b"#-1", b"#536870912", b"#"]))
bitfield_op = st.one_of(
    st.tuples(word("get"), field_type, field_offset).map(list),
    st.tuples(word("set"), field_type, field_offset, delta).map(list),
    st.tuples(word("incrby"), field_type, field_offset, delta).map(list),
    st.tuples(word("overflow"), st.sampled_from([b"WRAP", b"sat", b"Fail", b"nope"])).map(list),
)

# Stream IDs: small, partial, with `*` sequences, the edges, junk.
stream_id = st.one_of(*weighted(3, st.tuples(st.integers(0, 30), st.integers(0, 3)).map(
    lambda t: f"{t[0]}-{t[1]}".encode())), st.integers(0, 30).map(lambda i: str(i).encode()),
    st.sampled_from([b"5-*", b"0-0", b"18446744073709551615-18446744073709551615", b"x", b"-1", b"1-x"]))
stream_bound = st.one_of(stream_id, st.sampled_from([b"-", b"+", b"(3-0", b"(-"]))

# Expiry times. Absolute ones are long past (the key is deleted at once, or
# lingers until touched) or far in the future; relative ones are Rel (>= 200 s, so
# nothing expires during an example). Everything that would expire within an
# example's lifetime is left out: the two servers could not agree on it.
PAST_SECONDS = [1, 1000, 1600000000]
FUTURE_SECONDS = [4102444800, 32503680000]
# Near the int64 limits: each either fails, or (relative) lands in the past, or
# (absolute) is a fixed deadline. LLONG_MAX // 1000 milliseconds from now would
# be a valid deadline that depends on the clock, so relative milliseconds leave
# those two out.
OVERFLOW = [LLONG_MAX, LLONG_MIN, LLONG_MAX // 1000, LLONG_MAX // 1000 + 1, LLONG_MIN // 1000,
            LLONG_MIN // 1000 - 1, LLONG_MAX - 1000]
RELATIVE_MS_OVERFLOW = [v for v in OVERFLOW if v not in (LLONG_MAX // 1000, LLONG_MAX // 1000 + 1)]
NOT_POSITIVE = [0, -1, -100]
REL_SECONDS = [200, 3000, 40000, 500000, 6000000]


def expiry(unit, allowed):
    """A time for `unit`: ex/px (SET and GETEX options, SETEX, PSETEX, EXPIRE,
    PEXPIRE) or exat/pxat (the options, EXPIREAT, PEXPIREAT). `allowed`: whether
    relative ones may set a deadline."""
    ms = unit in ("px", "pxat")
    if unit in ("exat", "pxat"):
        scale = 1000 if ms else 1
        timed, overflow = ints(*[s * scale for s in PAST_SECONDS + FUTURE_SECONDS]), OVERFLOW
    else:
        timed = st.sampled_from([Rel(s, ms) for s in REL_SECONDS]) if allowed else ints(*NOT_POSITIVE)
        overflow = RELATIVE_MS_OVERFLOW if ms else OVERFLOW
    return st.one_of(*weighted(3, timed), ints(*NOT_POSITIVE, *overflow), bad_int)


PAST_VALUES = {str(s * m).encode() for s in PAST_SECONDS for m in (1, 1000)}


def touch_if_past(set_cmd):
    """SET with EXAT/PXAT in the past stores a key that is already expired; both
    servers keep it (counted by DBSIZE) until a lookup or active expiry removes it,
    so the time it lingers differs. An EXISTS right after removes it on both."""
    if any(a in PAST_VALUES for a in set_cmd.args[3:]):
        return (set_cmd, Cmd((b"EXISTS", set_cmd.args[1])))
    return set_cmd


def expire_option(allowed):
    return st.one_of(*[seq(word(u), expiry(u, allowed)) for u in ("ex", "px", "exat", "pxat")])


junk = st.sampled_from([b"foo", b"", b"NXX", b"1", b"a\x00b"])

db_index = st.one_of(ints(0, 0, 0, 1, 1, 2, 15), ints(0, 1), ints(16, -1, 2**31, LLONG_MAX), bad_int)

PATTERNS = [b"*", b"*", b"{t}*", b"\\{t\\}*", b"x", b"?", b"[xy]", b"[^x]*", b"[a-c]", b"*a*", b"*z",
            b"", b"[", b"\\", b"**", b"[!b]", b"{x}*", b"y*", b"[c-a]"]
# Glob patterns: chosen ones, and random ones over the keys' characters and every
# glob metacharacter (ranges, negation, escapes, unterminated classes).
pattern = st.one_of(st.sampled_from(PATTERNS),
                    st.lists(st.sampled_from(b"{}tabcxyz*?[]^!-\\"), max_size=8).map(bytes))

# Arities of the commands in scope (Redis 7.2's command table), for wrong-arity calls.
ARITY = {
    "get": 2, "set": -3, "setnx": 3, "setex": 4, "psetex": 4, "getset": 3, "getdel": 2, "getex": -2,
    "mget": -2, "mset": -3, "msetnx": -3, "append": 3, "strlen": 2, "incr": 2, "decr": 2, "incrby": 3,
    "decrby": 3, "incrbyfloat": 3, "getrange": 4, "substr": 4, "setrange": 4, "del": -2, "unlink": -2,
    "lcs": -3, "setbit": 4, "getbit": 3, "bitcount": -2, "bitpos": -3, "bitop": -4, "bitfield": -2, "bitfield_ro": -2,
    "exists": -2, "type": 2, "touch": -2, "expire": -3, "pexpire": -3, "expireat": -3, "pexpireat": -3,
    "expiretime": 2, "pexpiretime": 2, "ttl": 2, "pttl": 2, "persist": 2, "keys": 2, "scan": -2,
    "rename": 3, "renamenx": 3, "randomkey": 1, "copy": -3, "move": 3, "swapdb": 3, "dbsize": 1,
    "flushdb": -1, "flushall": -1, "echo": 2, "select": 2, "auth": -2, "reset": 1, "object": -2,
    "client": -2, "memory": -2, "object encoding": 3, "object refcount": 3, "object freq": 3,
    "object idletime": 3, "object help": 2, "client getname": 2, "client setname": 3, "memory usage": -3,
    "subscribe": -2, "psubscribe": -2, "publish": 3, "pubsub": -2, "pubsub numpat": 2, "pubsub help": 2,
    "sadd": -3, "srem": -3, "scard": 2, "sismember": 3, "smismember": -3, "smembers": 2, "srandmember": -2,
    "spop": -2, "smove": 4, "sinter": -2, "sintercard": -3, "sinterstore": -3, "sunion": -2, "sunionstore": -3,
    "sdiff": -2, "sdiffstore": -3, "sscan": -3,
    "hset": -4, "hsetnx": 4, "hmset": -4, "hget": 3, "hmget": -3, "hdel": -3, "hlen": 2, "hstrlen": 3,
    "hexists": 3, "hgetall": 2, "hkeys": 2, "hvals": 2, "hincrby": 4, "hincrbyfloat": 4, "hrandfield": -2,
    "hscan": -3,
}


# The commands that a wrong number of arguments can reach (not those of arity -1).
ARITY_ERRORS = sorted(n for n, a in ARITY.items() if a > 0 or -a - 1 >= len(n.split()))


@st.composite
def wrong_arity(draw, key):
    name = draw(st.sampled_from(ARITY_ERRORS))
    arity = ARITY[name]
    words = name.split()
    if arity > 0:
        count = draw(st.sampled_from([n for n in range(len(words), arity + 3) if n != arity]))
    else:
        count = draw(st.integers(min_value=len(words), max_value=-arity - 1))
    head = [draw(word(w)) for w in words]
    return Cmd(tuple(head + draw(st.lists(key, min_size=count - len(words), max_size=count - len(words)))))


# Pub/Sub: one connection subscribes, publishes (to itself) and asks.
channel = st.sampled_from([b"ch1", b"ch2", b"news.a", b"news.b", b""])
channel_pattern = st.sampled_from([b"news.*", b"ch?", b"*", b"[", b"ch[12]", b"news.a", b"\\*"])


def pubsub_commands():
    return [
        cmd("subscribe", st.lists(channel, min_size=1, max_size=3), kind=SEVERAL),
        cmd("psubscribe", st.lists(channel_pattern, min_size=1, max_size=3), kind=SEVERAL),
        cmd("unsubscribe", st.lists(channel, max_size=2), kind=SEVERAL),
        cmd("punsubscribe", st.lists(channel_pattern, max_size=2), kind=SEVERAL),
        cmd("publish", channel, value, kind=SEVERAL),
        cmd("pubsub", word("channels"), options(channel_pattern, max_size=2), kind=UNORDERED),
        cmd("pubsub", word("numsub"), st.lists(channel, max_size=3)),
        cmd("pubsub", word("numpat")),
        cmd("pubsub", word("shardchannels"), options(channel_pattern, max_size=1)),
        cmd("pubsub", word("shardnumsub"), st.lists(channel, max_size=2)),
        cmd("pubsub", st.sampled_from([b"help", b"HELP", b"foo", b""])),
    ]


# ------------------------------------------------------------------ sets and hashes

# Set members: integers (an intset while every member is one, at most 512), strings
# that look like integers but are not canonical (a string member, so a listpack in
# Redis 7.2, a hash table in 7.0), 64 and 65 bytes (the listpack's value limit),
# binary, and a few random ones. Drawn from small pools, so that commands on the
# same key meet each other's members.
INT_MEMBERS = [0, 1, 2, 3, 5, 7, -1, -7, 10, 42, 100, 1000, 65535, 65536, -65536, 2**31, -2**31 - 1,
               2**32, 12345678901, LLONG_MAX, LLONG_MIN, int("1" * 19)]
STR_MEMBERS = [b"a", b"b", b"c", b"d", b"", b"hello", b"\x00", b"a\x00b", b"\r\n", "é".encode(), b"*", b"[a]",
               b"01", b"+1", b"-0", b" 1", b"1 ", b"1.5", b"1e3", b"0x10", b"9223372036854775808",
               b"-9223372036854775809", b"1" * 20, b"m" * 64, b"m" * 65, b"7" * 64, b"7" * 65]
int_member = st.one_of(ints(*INT_MEMBERS), st.integers(min_value=-20, max_value=20).map(lambda i: str(i).encode()))
member = st.one_of(*weighted(2, int_member), st.sampled_from(STR_MEMBERS), st.sampled_from(STR_MEMBERS[:6]), value)
members = st.lists(member, min_size=1, max_size=5)

# Hash fields and values: a few names (64 and 65 bytes: the listpack's limit), values
# of every kind (integers for HINCRBY, floats for HINCRBYFLOAT, long ones).
FIELDS = [b"f", b"g", b"h", b"a", b"1", b"-5", b"", b"\x00", b"f" * 64, b"f" * 65]
field = st.one_of(st.sampled_from(FIELDS), st.sampled_from(FIELDS[:5]), member)
hvalue = st.one_of(value, ints(0, 1, -1, 10, LLONG_MAX, LLONG_MIN, 2**62), st.sampled_from([b"1.5", b"v" * 64,
                                                                                            b"v" * 65]))
field_values = st.lists(seq(field, hvalue), min_size=1, max_size=4)

# Counts for SRANDMEMBER and HRANDFIELD: a negative one asks for that many picks
# (repeats allowed), so only small ones; -LLONG_MAX would ask for 2^63 - 1 picks.
# LLONG_MIN is out of range (an error), a large positive count means the whole set.
rand_count = st.one_of(st.integers(min_value=-8, max_value=8).map(lambda i: str(i).encode()),
                       ints(1, 2, 3, 20, 200, LLONG_MAX, 0, -1, -2, -20))
bad_rand_count = st.sampled_from([str(LLONG_MIN).encode()] + BAD_INTS)
# HRANDFIELD ... WITHVALUES also refuses beyond +-LLONG_MAX / 2 (errors, never huge replies).
bad_withvalues_count = st.sampled_from([str(v).encode() for v in (-LLONG_MAX, LLONG_MAX // 2 + 1, LLONG_MAX,
                                                                  -(LLONG_MAX // 2) - 1, LLONG_MIN)] + BAD_INTS)


def big_fill(key):
    """Sets and hashes at the encoding limits: 127-140 members (128: a set
    listpack's), 117-516 integers (512: the intset's), 300-513 fields (512: a hash
    listpack's). Members and fields distinct: Redis 7.2 picks a SADD's (an HSET's)
    encoding from its argument count before adding, so duplicates would make it
    differ from 7.0."""
    ints_set = st.tuples(key, st.sampled_from([120, 128, 129, 511, 512, 513]), st.integers(-3, 3)).map(
        lambda t: Cmd((b"SADD", t[0], *[str(i + t[2]).encode() for i in range(t[1])])))
    strs_set = st.tuples(key, st.sampled_from([127, 128, 129, 140])).map(
        lambda t: Cmd((b"SADD", t[0], *[b"m%d" % i for i in range(t[1])])))
    hash_ = st.tuples(key, st.sampled_from([300, 511, 512, 513])).map(
        lambda t: Cmd((b"HSET", t[0], *[x for i in range(t[1]) for x in (b"f%d" % i, b"%d" % i)])))
    zset = st.tuples(key, st.sampled_from([127, 128, 129, 140])).map(
        lambda t: Cmd((b"ZADD", t[0], *[x for i in range(t[1]) for x in (b"%d" % (i % 7), b"m%d" % i)])))
    return st.one_of(ints_set, strs_set, hash_, zset)


def srandmember(key):
    form = st.one_of(*weighted(2, st.tuples(key)), *weighted(3, st.tuples(key, rand_count)),
                     st.tuples(key, bad_rand_count), st.tuples(key, rand_count, junk))
    return cmd("srandmember", form, kind=RANDOM)


def hrandfield(key):
    form = st.one_of(*weighted(2, st.tuples(key)), *weighted(2, st.tuples(key, rand_count)),
                     st.tuples(key, bad_rand_count),
                     *weighted(3, st.tuples(key, rand_count, word("withvalues"))),
                     st.tuples(key, bad_withvalues_count, word("withvalues")),
                     st.tuples(key, rand_count, st.sampled_from([b"withvalue", b"values", b""])),
                     st.tuples(key, st.one_of(rand_count, bad_withvalues_count), word("withvalues"), junk))
    return cmd("hrandfield", form, kind=RANDOM)


def spop(key):
    """SPOP: the reply checked as a random pick (RANDOM); where the two servers popped
    different members, the harness brings the server under test to the reference's
    set (SADD what only it popped, then SREM what only the reference popped:
    neither converts an encoding, and the set never empties). Counts 1-4 never
    reach Redis's "remaining <= count / 5" case, which builds the rest into a new
    set whose encoding differs between 7.0 and 7.2 (and in 7.0 on its random
    picks): larger counts, which may be below the set's size, are followed by a
    DEL of the key (docs/differential.md)."""
    small = st.one_of(*weighted(2, st.tuples(key)), *weighted(2, st.tuples(key, ints(1, 1, 2, 3, 4))),
                      st.tuples(key, ints(0, 1, 2, 3, 4, 1000, LLONG_MAX)),
                      st.tuples(key, st.one_of(ints(-1, -5, LLONG_MIN), bad_int)),
                      st.tuples(key, ints(1, 2), junk))
    large = st.tuples(key, ints(5, 6, 10, 50, 130, 600))
    return st.one_of(
        cmd("spop", small, kind=SPOP),
        cmd("spop", large, kind=SPOP).map(lambda c: (c, Cmd((b"DEL", c.args[1]))))
    )


def sintercard(key):
    keys = st.lists(key, min_size=1, max_size=4)
    good_limit = st.lists(seq(word("limit"), ints(0, 1, 2, 3, 100)), max_size=2).map(flatten)
    bad_limit = options(seq(word("limit"), st.one_of(ints(-1, LLONG_MIN), bad_int)), word("limit"), junk,
                        max_size=2)
    good = st.tuples(keys, good_limit).map(lambda t: [str(len(t[0])).encode(), *t[0], *t[1]])
    bad_options = st.tuples(keys, bad_limit).map(lambda t: [str(len(t[0])).encode(), *t[0], *t[1]])
    # numkeys 0, negative, not an integer, or more than the arguments.
    bad = st.tuples(st.one_of(ints(0, -1, 5, 2**31, LLONG_MAX, LLONG_MIN), bad_int), keys, good_limit).map(flatten)
    # numkeys fewer than the keys given: the rest are options (a syntax error).
    fewer = st.tuples(keys, key, good_limit).map(lambda t: [str(len(t[0])).encode(), *t[0], t[1], *t[2]])
    return cmd("sintercard", st.one_of(*weighted(3, good), bad_options, bad, fewer))


def store(name, key):
    """SINTERSTORE, SUNIONSTORE, SDIFFSTORE; also with the destination among the
    sources (the result replaces a set it was computed from)."""
    sources = st.lists(key, min_size=1, max_size=4)
    into_source = st.tuples(word(name), key, sources, st.integers(min_value=0, max_value=4)).map(
        lambda t: Cmd((t[0], t[1], *t[2][:t[3]], t[1], *t[2][t[3]:])))
    return st.one_of(cmd(name, key, sources), into_source)


# Glob patterns for SSCAN/HSCAN's MATCH, over members and fields.
member_pattern = st.one_of(st.sampled_from([b"*", b"a*", b"[0-9]*", b"1*", b"?", b"", b"*1", b"-*", b"f*", b"[^a]",
                                            b"m*", b"\\*", b"[", b"*\x00*"]), pattern)

# Options of SSCAN/HSCAN that fail (COUNT 0, a MATCH without pattern, unknown words):
# Redis looks the key up before it parses them (a missing key gives an empty page,
# another type WRONGTYPE); False leaves them out.
KEY_SCAN_OPTION_ERRORS = True


def key_scan(name, key):
    """SSCAN / HSCAN iterated to cursor 0 (SCAN_ALL); cursors that are not numbers."""
    good = options(seq(word("match"), member_pattern), seq(word("count"), ints(1, 2, 3, 10, 1000)), max_size=3)
    opts = good
    if KEY_SCAN_OPTION_ERRORS:
        opts = options(seq(word("match"), member_pattern), seq(word("count"), ints(1, 2, 3, 10, 1000)),
                       seq(word("count"), st.one_of(ints(0, -1), bad_int)), word("match"), junk, max_size=3)
    return st.one_of(
        cmd(name, key, opts, kind=SCAN_ALL), cmd(name, key, good, kind=SCAN_ALL),
        # not a cursor (strtoul's: "-1" is one), parsed first: an error whatever the key
        cmd(name, key, st.sampled_from([b"abc", b"1x", b" 1", b"18446744073709551616", b"-", b"1-"]),
            options(seq(word("count"), ints(1, 0)), max_size=1)),
    )


def set_commands(key):
    keys = st.lists(key, min_size=1, max_size=4)
    return [
        cmd("sadd", key, members), cmd("sadd", key, members),
        cmd("sadd", key, st.lists(int_member, min_size=1, max_size=6)),
        cmd("srem", key, members), cmd("srem", key, members),
        cmd("scard", key),
        cmd("sismember", key, member),
        cmd("smismember", key, members),
        cmd("smembers", key, kind=UNORDERED),
        srandmember(key), srandmember(key),
        spop(key), spop(key),
        cmd("smove", key, key, member),
        cmd("sinter", keys, kind=UNORDERED), cmd("sunion", keys, kind=UNORDERED),
        cmd("sdiff", keys, kind=UNORDERED),
        store("sinterstore", key), store("sunionstore", key), store("sdiffstore", key),
        sintercard(key),
        key_scan("sscan", key),
    ]


def hash_commands(key):
    fields = st.lists(field, min_size=1, max_size=4)
    return [
        cmd("hset", key, field_values), cmd("hset", key, field_values),
        cmd("hset", key, fields),  # an odd number of arguments, mostly
        cmd("hsetnx", key, field, hvalue),
        cmd("hmset", key, field_values), cmd("hmset", key, fields),
        cmd("hget", key, field), cmd("hmget", key, fields),
        cmd("hdel", key, fields), cmd("hdel", key, fields),
        cmd("hlen", key), cmd("hstrlen", key, field), cmd("hexists", key, field),
        *[st.tuples(word(name), key).map(lambda t: hash_read(*t)) for name in ("hgetall", "hkeys", "hvals")],
        cmd("hincrby", key, field, delta),
        cmd("hincrbyfloat", key, field, st.one_of(value, delta)),
        hrandfield(key), hrandfield(key),
        key_scan("hscan", key),
    ]


# List indexes and counts: small, negative, the int64 limits, not integers.
list_index = st.one_of(*weighted(3, st.integers(min_value=-8, max_value=8).map(lambda i: str(i).encode())),
                       ints(LLONG_MAX, LLONG_MIN, 2**31), bad_int)
list_count = st.one_of(ints(0, 1, 2, 3, 10, LLONG_MAX, -1, LLONG_MIN), bad_int)
list_end = st.one_of(*weighted(2, st.sampled_from([b"LEFT", b"right", b"Left", b"RIGHT"])), junk)
# Blocking timeouts that never wait long: 10 ms or less (a key with no list then
# times out on both servers alike), or errors. Never 0 (for ever), nor the
# overflows Redis 7.0 reports as negative and 7.2 as out of range.
block_timeout = st.sampled_from([b"0.01", b"0.001", b".005", b"-1", b"-0.5", b"abc", b"nan", b" 1", b"1x", b""])


def mpop(name, key, timeout=()):
    """LMPOP / BLMPOP: numkeys and keys (numkeys right, or wrong), an end, options."""
    keys = st.lists(key, min_size=1, max_size=3)
    count = options(seq(word("count"), list_count), word("count"), junk, max_size=2)
    good = st.tuples(keys, list_end, count).map(lambda t: [str(len(t[0])).encode(), *t[0], t[1], *t[2]])
    bad = st.tuples(st.one_of(ints(0, -1, 4, LLONG_MAX), bad_int), keys, list_end).map(flatten)
    return cmd(name, *timeout, st.one_of(*weighted(3, good), bad))


def list_commands(key):
    """Every list command, the blocking ones with timeouts of at most 10 ms."""
    keys = st.lists(key, min_size=1, max_size=3)
    items = st.lists(member, min_size=1, max_size=6)
    pop_count = options(list_count, max_size=1)
    lpos_option = st.one_of(seq(word("rank"), st.one_of(ints(1, 2, -1, -3, 0, LLONG_MAX), bad_int)),
                            seq(word("count"), st.one_of(ints(0, 1, 2, -1), bad_int)),
                            seq(word("maxlen"), st.one_of(ints(0, 1, 3, -1), bad_int)), word("rank"), junk)
    return [
        cmd("lpush", key, items), cmd("rpush", key, items), cmd("rpush", key, items),
        cmd("lpushx", key, items), cmd("rpushx", key, items),
        cmd("lpop", key, pop_count), cmd("rpop", key, pop_count),
        cmd("llen", key), cmd("lindex", key, list_index), cmd("lset", key, list_index, member),
        cmd("lrange", key, list_index, list_index), cmd("lrange", key, ints(0), ints(-1)),
        cmd("ltrim", key, list_index, list_index),
        cmd("lrem", key, list_index, member),
        cmd("linsert", key, st.one_of(word("before"), word("after"), junk), member, member),
        cmd("lpos", key, member, options(lpos_option, max_size=3)),
        cmd("lmove", key, key, list_end, list_end), cmd("rpoplpush", key, key),
        mpop("lmpop", key),
        cmd("blpop", keys, block_timeout), cmd("brpop", keys, block_timeout),
        cmd("blmove", key, key, list_end, list_end, block_timeout),
        cmd("brpoplpush", key, key, block_timeout),
        mpop("blmpop", key, (block_timeout,)),
    ]


# ------------------------------------------------------------------ sorted sets

# Scores that Redis 7.0 (%.17g) and 7.2 (shortest round trip) print alike: small
# integers and binary fractions, infinities; "-0" is left out (7.0's listpack keeps
# it as text, 7.2's as the integer 0). Bad ones: NaN, junk, out of range, blanks.
score = st.sampled_from([b"0", b"1", b"-1", b"2", b"3", b"1.5", b"-2.5", b"0.25", b"100", b"inf", b"-inf",
                         b"+inf", b"1e3", b"0x10"])
bad_score = st.sampled_from([b"nan", b"abc", b"", b" 1", b"1e400", b"1x", b"-nan"])
any_score = st.one_of(*weighted(6, score), bad_score)
score_pairs = st.lists(seq(any_score, member), min_size=1, max_size=5)
score_bound = st.one_of(*weighted(3, st.sampled_from([b"-inf", b"+inf", b"0", b"1", b"(1", b"(0", b"2.5", b"(2",
                                                      b"-1", b"(-inf", b"100", b"(", b""])),
                        st.sampled_from([b"abc", b"nan", b"(nan", b"[1", b"1x"]))
lex_bound = st.one_of(*weighted(4, st.sampled_from([b"-", b"+", b"[a", b"(a", b"[b", b"(c", b"[1", b"[", b"(",
                                                    b"[m" * 2])),
                      st.sampled_from([b"a", b"", b"--", b"+a", b"1"]))
zadd_flag = st.one_of(word("nx"), word("xx"), word("gt"), word("lt"), word("ch"), word("incr"))
limit = seq(word("limit"), st.one_of(ints(0, 1, 2, -1, 5), bad_int), st.one_of(ints(0, 1, 3, -1, -5), bad_int))
weight = st.sampled_from([b"1", b"2", b"0.5", b"-1", b"0", b"inf", b"x"])
aggregate = seq(word("aggregate"), st.one_of(st.sampled_from([b"sum", b"MIN", b"max"]), junk))


def zalgebra(name, key, dst):
    """ZUNION/ZINTER/ZDIFF[STORE], ZINTERCARD: numkeys right or wrong, options."""
    keys = st.lists(key, min_size=1, max_size=3)
    extra = [word("withscores")] if not dst and name != "zintercard" else []
    if name == "zintercard":
        opts = options(limit.map(lambda l: l[:2]), junk, max_size=2)
    else:
        opts = options(aggregate, st.lists(weight, min_size=1, max_size=3).map(lambda w: [b"weights", *w]),
                       *extra, junk, max_size=3)
    good = st.tuples(keys, opts).map(lambda t: [str(len(t[0])).encode(), *t[0], *t[1]])
    bad = st.tuples(st.one_of(ints(0, -1, 4), bad_int), keys).map(flatten)
    head = (key,) if dst else ()
    return cmd(name, *head, st.one_of(*weighted(3, good), bad))


def zset_commands(key):
    """Every sorted set command but ZRANDMEMBER (checked in tests/test_zsets.py) and
    ZRANK's WITHSCORE (7.2 only), the blocking ones with timeouts of at most 10 ms."""
    keys = st.lists(key, min_size=1, max_size=3)
    members_ = st.lists(member, min_size=1, max_size=4)
    range_option = st.one_of(word("byscore"), word("bylex"), word("rev"), word("withscores"), limit, junk)
    count = options(st.one_of(ints(0, 1, 2, 5, -1), bad_int), max_size=1)
    zmpop_good = st.tuples(keys, st.one_of(word("min"), word("max"), junk),
                           options(seq(word("count"), st.one_of(ints(1, 2, 10, 0, -1), bad_int)), max_size=1)
                           ).map(lambda t: [str(len(t[0])).encode(), *t[0], t[1], *t[2]])
    zmpop_bad = st.tuples(st.one_of(ints(0, -1, 5), bad_int), keys, word("min")).map(flatten)
    zmpop = st.one_of(*weighted(3, zmpop_good), zmpop_bad)
    return [
        cmd("zadd", key, options(zadd_flag, max_size=2), score_pairs),
        cmd("zadd", key, score_pairs), cmd("zadd", key, score_pairs),
        cmd("zincrby", key, any_score, member),
        cmd("zrem", key, members_),
        cmd("zcard", key), cmd("zscore", key, member), cmd("zmscore", key, members_),
        cmd("zrank", key, member), cmd("zrevrank", key, member),
        cmd("zcount", key, score_bound, score_bound), cmd("zlexcount", key, lex_bound, lex_bound),
        cmd("zrange", key, list_index, list_index, options(range_option, max_size=3)),
        cmd("zrange", key, score_bound, score_bound, word("byscore"), options(range_option, max_size=2)),
        cmd("zrange", key, lex_bound, lex_bound, word("bylex"), options(range_option, max_size=2)),
        cmd("zrangestore", key, key, score_bound, score_bound, options(range_option, max_size=3)),
        cmd("zrangebyscore", key, score_bound, score_bound, options(range_option, max_size=2)),
        cmd("zrevrangebyscore", key, score_bound, score_bound, options(range_option, max_size=2)),
        cmd("zrangebylex", key, lex_bound, lex_bound, options(range_option, max_size=2)),
        cmd("zrevrangebylex", key, lex_bound, lex_bound, options(range_option, max_size=2)),
        cmd("zrevrange", key, list_index, list_index, options(range_option, max_size=2)),
        cmd("zremrangebyrank", key, list_index, list_index),
        cmd("zremrangebyscore", key, score_bound, score_bound),
        cmd("zremrangebylex", key, lex_bound, lex_bound),
        cmd("zpopmin", key, count), cmd("zpopmax", key, count),
        cmd("zmpop", zmpop),
        cmd("bzpopmin", keys, block_timeout), cmd("bzpopmax", keys, block_timeout),
        cmd("bzmpop", block_timeout, zmpop),
        zalgebra("zunion", key, False), zalgebra("zinter", key, False), zalgebra("zdiff", key, False),
        zalgebra("zintercard", key, False),
        zalgebra("zunionstore", key, True), zalgebra("zinterstore", key, True), zalgebra("zdiffstore", key, True),
        key_scan("zscan", key),
    ]


_FOCUSED = {}


def focused(key):
    """A set, hash, list or sorted set made at one key (after a DEL, or over what is there),
    then a few commands on it, mostly at that key: in the general mix, a
    container command seldom finds a container of a few members at its key."""
    def at(k):
        if (id(key), k) not in _FOCUSED:
            same = st.one_of(*weighted(3, st.just(k)), key)
            fresh = st.lists(st.just(Cmd((b"DEL", k))), max_size=1)
            make_set = st.one_of(cmd("sadd", st.just(k), st.lists(member, min_size=1, max_size=8)),
                                 cmd("sadd", st.just(k), st.lists(int_member, min_size=1, max_size=8)))
            make_hash = cmd("hset", st.just(k), st.lists(seq(field, hvalue), min_size=1, max_size=6))
            make_list = cmd("rpush", st.just(k), st.lists(member, min_size=1, max_size=8))
            make_zset = cmd("zadd", st.just(k), st.lists(seq(score, member), min_size=1, max_size=8))
            on_set = st.one_of(*set_commands(same), same.map(object_encoding))
            on_hash = st.one_of(*hash_commands(same), same.map(object_encoding))
            on_list = st.one_of(*list_commands(same))
            on_zset = st.one_of(*zset_commands(same), same.map(object_encoding))
            _FOCUSED[id(key), k] = st.one_of(
                st.tuples(fresh, make_set, st.lists(on_set, min_size=1, max_size=5)),
                st.tuples(fresh, make_hash, st.lists(on_hash, min_size=1, max_size=5)),
                st.tuples(fresh, make_list, st.lists(on_list, min_size=1, max_size=6)),
                st.tuples(fresh, make_zset, st.lists(on_zset, min_size=1, max_size=6)),
            ).map(lambda t: tuple(flatten_commands(t[0] + [t[1]] + t[2])))
        return _FOCUSED[id(key), k]
    return key.flatmap(at)


# Scripts whose replies are the same bytes on Redis 7.0 and 7.2 (no
# fractional numbers passed to redis.call: 7.0 prints them with %.17g).
SCRIPTS = [
    b"return redis.call('get', KEYS[1])",
    b"return redis.call('incr', KEYS[1])",
    b"redis.call('set', KEYS[1], ARGV[1]) return redis.call('strlen', KEYS[1])",
    b"return {redis.call('exists', KEYS[1]), redis.pcall('lpush', KEYS[1], 'x')}",
    b"return redis.pcall('hset', KEYS[1], 'f', ARGV[1])",
    b"local v = redis.call('get', KEYS[1]) if v then return v .. ARGV[1] end return false",
    b"return redis.call('type', KEYS[1])['ok']",
    b"return {1, 'two', {3, nil, 4}, true, false, redis.status_reply('ok'), 3.7}",
    b"return redis.call('nosuch')",
    b"return redis.error_reply('MY error')",
    b"x = 1",
    b"return (",
    b"error('failed')",
    b"return redis.call('set', KEYS[1])",
    b"return redis.call('del', unpack(KEYS))",
    b"#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
    b"#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')",
    b"return cjson.encode({KEYS[1], ARGV[1]})",
    b"return cmsgpack.pack(KEYS[1], 42, ARGV[1])",
    b"return redis.sha1hex(ARGV[1])",
]


FUNCTION_LIBRARY = (b"#!lua name=difflib\n"
                    b"redis.register_function('dget', function(k, a) return redis.call('get', k[1]) end)\n"
                    b"redis.register_function('dset', function(k, a) return redis.call('set', k[1], a[1]) end)\n"
                    b"redis.register_function{function_name='dro', callback=function(k) "
                    b"return redis.call('exists', k[1]) end, flags={'no-writes'}}")


def script_commands(key):
    """EVAL, EVAL_RO, EVALSHA (of scripts loaded by EVAL or SCRIPT LOAD, or not),
    SCRIPT's subcommands, and FCALL / FCALL_RO of a library's functions (loaded
    or deleted in the sequence)."""
    script = st.sampled_from(SCRIPTS)
    sha = st.one_of(script.map(lambda b: hashlib.sha1(b).hexdigest().encode()),
                    st.sampled_from([b"ffffffffffffffffffffffffffffffffffffffff", b"abc"]))
    keys_args = st.tuples(st.lists(key, max_size=3), st.lists(value, max_size=2)).map(
        lambda t: [str(len(t[0])).encode(), *t[0], *t[1]])
    bad_numkeys = st.tuples(st.one_of(ints(-1, 9), bad_int), st.lists(key, max_size=2)).map(flatten)
    body_args = st.one_of(*weighted(4, keys_args), bad_numkeys)
    function = st.sampled_from([b"dget", b"dset", b"dro", b"nosuch"])
    return [
        cmd("function", word("load"), word("replace"), st.just(FUNCTION_LIBRARY)),
        cmd("function", word("delete"), st.sampled_from([b"difflib", b"nolib"])),
        cmd("fcall", function, body_args), cmd("fcall", function, body_args), cmd("fcall_ro", function, body_args),
        cmd("eval", script, body_args), cmd("eval", script, body_args),
        cmd("eval_ro", script, body_args),
        cmd("evalsha", sha, body_args), cmd("evalsha_ro", sha, body_args),
        cmd("script", word("load"), script),
        cmd("script", word("exists"), st.lists(sha, min_size=1, max_size=3)),
        cmd("script", word("flush"), options(word("sync"), word("async"), junk, max_size=1)),
    ]


def transaction_commands(key):
    """MULTI ... EXEC (or DISCARD) around commands whose replies compare
    exactly, and WATCH / UNWATCH between them."""
    inner = st.one_of(
        cmd("get", key), cmd("set", key, value), cmd("incr", key), cmd("del", key), cmd("append", key, value),
        cmd("lpush", key, value), cmd("rpop", key), cmd("sadd", key, members), cmd("hset", key, field_values),
        cmd("zadd", key, score_pairs), cmd("exists", key), cmd("type", key), cmd("strlen", key),
        cmd("setnx", key, value), cmd("incr"), cmd("nosuch", key), cmd("watch", key), cmd("multi"),
        cmd("unwatch"))
    end = st.one_of(*weighted(4, st.just(Cmd((b"EXEC",)))), st.just(Cmd((b"DISCARD",))))
    block = st.tuples(st.just(Cmd((b"MULTI",))), st.lists(inner, max_size=4), end).map(
        lambda t: (t[0], *t[1], t[2]))
    return [
        block, block,
        cmd("watch", st.lists(key, min_size=1, max_size=3)),
        cmd("unwatch"),
        cmd("exec"), cmd("discard"),
    ]


def container_commands(key):
    """The set, hash, list and sorted set commands, over the same keys as the strings (WRONGTYPE
    both ways)."""
    return [
        *set_commands(key),
        *hash_commands(key),
        *list_commands(key),
        *zset_commands(key),
        *script_commands(key),
        *transaction_commands(key),
        key.map(object_encoding),
        big_fill(key),
        *[focused(key) for _ in range(3)],
    ]


def commands(allowed, key):
    """Every command in scope, over the keys `key` draws; `allowed` says whether
    relative expiry times may appear."""
    keys = st.lists(key, min_size=1, max_size=5)
    set_option = st.one_of(word("nx"), word("xx"), word("get"), word("keepttl"), expire_option(allowed),
                           word("ex"), word("pxat"), junk)
    getex_option = st.one_of(expire_option(allowed), word("persist"), word("persist"), word("ex"), junk,
                             word("nx"))
    expire_flag = st.one_of(word("nx"), word("xx"), word("gt"), word("lt"), junk)
    expire_flags = options(expire_flag, max_size=2)
    return st.one_of(
        # strings
        cmd("get", key),
        cmd("set", key, value, options(set_option)).map(touch_if_past),
        cmd("set", key, value, options(set_option)).map(touch_if_past),
        cmd("setnx", key, value),
        cmd("setex", key, expiry("ex", allowed), value),
        cmd("psetex", key, expiry("px", allowed), value),
        cmd("getset", key, value),
        cmd("getdel", key),
        cmd("getex", key, options(getex_option, max_size=3)),
        cmd("mget", keys),
        cmd("mset", st.lists(seq(key, value), min_size=1, max_size=4)),
        cmd("msetnx", st.lists(seq(key, value), min_size=1, max_size=4)),
        cmd("mset", keys),  # an odd number of arguments, mostly
        cmd("msetnx", keys),
        cmd("append", key, value),
        cmd("strlen", key),
        cmd("incr", key), cmd("decr", key),
        cmd("incrby", key, delta), cmd("decrby", key, delta),
        cmd("incrbyfloat", key, st.one_of(value, delta)),
        cmd("getrange", key, index, index),
        cmd("substr", key, index, index),
        cmd("setrange", key, offset, setrange_value),
        # bitmaps
        cmd("setbit", key, bit_offset, bit_value),
        cmd("getbit", key, bit_offset),
        cmd("bitcount", key, bit_range),
        cmd("bitpos", key, bit_value, bit_range),
        cmd("bitop", bitop_name, key, keys),
        cmd("bitfield", key, options(bitfield_op, max_size=3)),
        cmd("bitfield_ro", key, options(bitfield_op, max_size=2)),
        cmd("lcs", key, key, options(word("len"), word("idx"), word("withmatchlen"),
                                     seq(word("minmatchlen"), st.one_of(small_index, bad_int)), max_size=3)),
        # HyperLogLog (strings in Redis's HLL bytes: compared byte for byte)
        cmd("pfadd", key, st.lists(value, max_size=6)),
        cmd("pfadd", key, st.lists(value, max_size=6)),
        cmd("pfcount", keys),
        cmd("pfmerge", key, st.lists(key, max_size=3)),
        cmd("pfdebug", st.sampled_from([b"encoding", b"decode", b"todense", b"nope"]), key),
        # SORT (no BY: a set's own order BY a constant is not Redis's, and
        # Redis leaves the order of ALPHA BY ties unspecified)
        cmd("sort", key, options(seq(word("limit"), small_index, small_index), word("desc"), word("asc"),
                                 word("alpha"), seq(word("get"), st.sampled_from([b"#", b"*", b"x*->f", b"nope"])),
                                 seq(word("store"), key), word("limit"), junk, max_size=4)),
        cmd("sort_ro", key, options(word("desc"), word("alpha"), seq(word("store"), key), max_size=2)),
        # streams (explicit IDs: `*` would be each server's clock)
        cmd("xadd", key, options(word("nomkstream"), seq(word("maxlen"), st.sampled_from([b"~", b"="]), small_index),
                                 seq(word("minid"), stream_id), max_size=1), stream_id,
            st.lists(seq(value, value), min_size=1, max_size=3)),
        cmd("xadd", key, stream_id, st.lists(value, min_size=1, max_size=3)),  # odd: arity errors
        cmd("xrange", key, stream_bound, stream_bound, options(seq(word("count"), small_index), max_size=1)),
        cmd("xrevrange", key, stream_bound, stream_bound, options(seq(word("count"), small_index), max_size=1)),
        cmd("xlen", key), cmd("xdel", key, st.lists(stream_id, min_size=1, max_size=3)),
        cmd("xtrim", key, st.sampled_from([b"MAXLEN", b"minid", b"LIMIT"]), st.sampled_from([b"~", b"=", b""]),
            st.one_of(small_index, stream_id)),
        # (above every ID used: below a deleted one Redis 7.2 refuses where 7.0 takes it)
        cmd("xsetid", key, st.sampled_from([b"31-0", b"40-5"])),
        cmd("xgroup", word("create"), key, st.sampled_from([b"g", b"h"]), st.one_of(stream_id, st.just(b"$")),
            options(word("mkstream"), seq(word("entriesread"), small_index), max_size=2)),
        # (consumers e, f: XCLAIM makes c and d at once in 7.2, in 7.0 only
        # when it claims, which CREATECONSUMER's reply would show)
        cmd("xgroup", st.sampled_from([b"destroy", b"createconsumer", b"delconsumer", b"setid", b"nope"]), key,
            st.sampled_from([b"g", b"h"]), options(st.sampled_from([b"e", b"f", b"0", b"$"]), max_size=1)),
        cmd("xreadgroup", word("group"), st.sampled_from([b"g", b"h"]), st.sampled_from([b"c", b"d"]),
            options(seq(word("count"), small_index), word("noack"), max_size=2), word("streams"), key,
            st.sampled_from([b">", b"0", b"$", b"1-1"])),
        cmd("xread", options(seq(word("count"), small_index), max_size=1), word("streams"), key,
            st.one_of(stream_id, st.just(b"$"))),
        cmd("xack", key, st.sampled_from([b"g", b"h"]), st.lists(stream_id, min_size=1, max_size=3)),
        cmd("xpending", key, st.sampled_from([b"g", b"h"])),
        cmd("xclaim", key, st.sampled_from([b"g", b"h"]), st.sampled_from([b"c", b"d"]), ints(0),
            st.lists(stream_id, min_size=1, max_size=2), word("time"), ints(1000), word("force"),
            options(word("justid"), seq(word("retrycount"), small_index), max_size=1)),
        # keys
        cmd("del", keys), cmd("unlink", keys), cmd("exists", keys), cmd("touch", keys),
        cmd("type", key),
        cmd("expire", key, expiry("ex", allowed), expire_flags),
        cmd("pexpire", key, expiry("px", allowed), expire_flags),
        cmd("expireat", key, expiry("exat", allowed), expire_flags),
        cmd("pexpireat", key, expiry("pxat", allowed), expire_flags),
        cmd("ttl", key, kind=TTL), cmd("pttl", key, kind=TTL),
        cmd("expiretime", key, kind=EXPIRETIME), cmd("pexpiretime", key, kind=EXPIRETIME),
        cmd("persist", key),
        cmd("keys", pattern, kind=UNORDERED),
        cmd("scan", options(seq(word("match"), pattern), seq(word("count"), ints(1, 2, 3, 10, 1000)),
                            seq(word("type"), st.sampled_from([b"string", b"STRING", b"none", b"list",
                                                               b"set", b"hash", b"Hash", b"foo"])),
                            seq(word("count"), st.one_of(ints(0, -1), bad_int)), word("match"), junk,
                            max_size=3), kind=SCAN_ALL),
        cmd("scan", st.sampled_from([b"abc", b"1x", b" 1", b"18446744073709551616", b"-"])),
        cmd("rename", key, key), cmd("renamenx", key, key),
        cmd("randomkey", kind=RANDOMKEY),
        cmd("copy", key, key, options(seq(word("db"), db_index), word("replace"), junk, word("db"),
                                      max_size=3)),
        cmd("move", key, db_index),
        cmd("swapdb", db_index, db_index),
        cmd("dbsize"), cmd("dbsize"),
        cmd("flushdb", options(word("async"), word("sync"), junk, max_size=2)),
        cmd("flushall", options(word("async"), word("sync"), junk, max_size=2)),
        st.tuples(word("object"), word("encoding"), key).map(lambda t: object_encoding(t[2], t[0], t[1])),
        cmd("object", word("refcount"), key),
        cmd("object", word("freq"), key),
        cmd("object", word("idletime"), key, kind=ANY_INT),
        cmd("object", word("help")),
        cmd("object", st.sampled_from([b"foo", b"encodings", b"", b"a\x00b"]), key),
        cmd("memory", word("usage"), key, options(seq(word("samples"), st.one_of(ints(0, 1, 5, -1), bad_int)),
                                                  junk, max_size=2), kind=ANY_INT),
        # connection
        cmd("select", db_index), cmd("select", db_index),
        cmd("ping", options(value, max_size=2)),
        cmd("echo", value),
        cmd("auth", st.sampled_from([[b"x"], [b"default", b"x"], [b"nouser", b"x"], [b"a", b"b", b"c"]])),
        cmd("client", word("setname"), st.sampled_from([b"name", b"", b"a b", b"a\nb", b"\xe9", b"n-1"])),
        cmd("client", word("getname")),
        cmd("client", st.sampled_from([b"foo", b"setnam", b"", b"\x00"])),
        cmd("reset"),
        hello_error(),
        *pubsub_commands(),
        # unknown commands and wrong arities
        st.tuples(st.sampled_from([b"GETT", b"foo", b"SETT", b"gett"]), st.lists(value, max_size=3)).map(
            lambda t: Cmd((t[0], *t[1]))),
        wrong_arity(key),
        *container_commands(key),
    )


def hello_error():
    """HELLO forms that fail (a successful HELLO replies each server's own version).

    One failing option, last, and before it at most an AUTH of the default user:
    Redis 7.0 applies AUTH and SETNAME as it parses them and stops at the first
    failing option, Redis 7.2 checks every option first, then authenticates with
    the last AUTH, then sets the name (docs/differential.md)."""
    failing = st.sampled_from([[b"AUTH", b"nouser", b"x"], [b"SETNAME", b"a b"], [b"FOO"], [b"AUTH", b"x"],
                               [b"SETNAME"], [b"a\x00b"]])
    before = st.lists(st.just([b"AUTH", b"default", b"x"]), max_size=1)
    good_version = st.tuples(ints(2, 3), before, failing).map(flatten)
    bad_version = st.tuples(ints(4, 1, 0, -1), st.lists(st.sampled_from([[b"SETNAME", b"ok"], [b"FOO"]]),
                                                         max_size=1)).map(flatten)
    not_int = st.tuples(st.sampled_from([b"abc", b"99999999999999999999", b"3.0"]),
                        st.lists(failing, max_size=1)).map(flatten)
    return cmd("hello", st.one_of(good_version, bad_version, not_int))


# Commands whose reply in Redis 7.0 differs from Redis 7.2's (docs/differential.md).
# Each entry: a predicate on the rendered arguments.
SEVEN_TWO_ONLY = []


COMMANDS = {(allowed, k): commands(allowed, key) for allowed in (False, True)
            for k, key in enumerate(KEYSPACES)}
# A few plain SETs, SADDs and HSETs first, so that the commands after them find keys
# (of every type) to work on.
FILL = [st.lists(st.one_of(cmd("set", key, value), cmd("set", key, value), cmd("sadd", key, members),
                           cmd("sadd", key, st.lists(int_member, min_size=1, max_size=5)),
                           cmd("hset", key, field_values)), max_size=6) for key in KEYSPACES]


def sized_lists(strategy, max_size):
    """Lists of a length drawn first (st.lists alone keeps them short: a handful of
    commands on average, too few for commands to meet each other's results)."""
    return st.integers(min_value=1, max_value=max_size).flatmap(
        lambda n: st.lists(strategy, min_size=n, max_size=n))


def examples(max_commands=40):
    def build(flags):
        resp3, pipelined, allowed, keyspace = flags
        return st.tuples(FILL[keyspace], sized_lists(COMMANDS[allowed, keyspace], max_commands)).map(
            lambda t: Example(resp3, pipelined, allowed, tuple(flatten_commands(t[0] + t[1])),
                              tuple(KEYSPACE_KEYS[keyspace])))
    flags = st.tuples(st.sampled_from([False, False, False, True]), st.booleans(), st.booleans(),
                      st.sampled_from(range(len(KEYSPACES))))
    return flags.flatmap(build)
