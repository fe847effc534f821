# Key specs: COMMAND INFO's tenth element (each command's key specs, as Redis
# 7.2 declares them) and COMMAND GETKEYS / GETKEYSANDFLAGS, which find keys
# and their flags from them (or from the command's own parser: SET's GET,
# SORT's STORE, MIGRATE's KEYS ...). Checked against Debian's redis-server
# 7.0, whose key specs are 7.2's for every command both have.
import pytest

from conftest import IS_REDIS
from helpers import Conn, arity, encode, raises, raw_client, rc, rc3, require_command  # noqa: F401


@pytest.fixture(scope="module")
def ref2(reference):
    c = raw_client(reference, protocol=2)
    yield c
    c.close()


@pytest.fixture(scope="module")
def ref3(reference):
    c = raw_client(reference, protocol=3)
    yield c
    c.close()


def by_name(entries):
    """COMMAND's entries, subcommands included, by full name."""
    out = {}

    def walk(e):
        out[e[0]] = e
        for sub in e[9]:
            walk(sub)

    for e in entries:
        walk(e)
    return out


# ---------------------------------------------------------------- COMMAND INFO

def test_key_specs_equal_redis_for_every_command(rc, ref2):
    # (Redis 7.0.15 and 7.2 declare the same key specs for every command
    # both have: no command is left out of this comparison.)
    ours = by_name(rc.execute_command("COMMAND"))
    theirs = by_name(ref2.execute_command("COMMAND"))
    common = sorted(set(ours) & set(theirs))
    assert len(common) > 300
    with_specs = 0
    for name in common:
        assert ours[name][8] == theirs[name][8], name
        with_specs += bool(theirs[name][8])
    assert with_specs > 190


def test_legacy_key_ranges_equal_redis_for_every_command(rc, ref2):
    # (first key, last key, step: what clients before key specs read.)
    ours = by_name(rc.execute_command("COMMAND"))
    theirs = by_name(ref2.execute_command("COMMAND"))
    common = sorted(set(ours) & set(theirs))
    assert len(common) > 300
    for name in common:
        assert ours[name][3:6] == theirs[name][3:6], name
    assert ours[b"xread"][3:6] == [0, 0, 0]
    assert ours[b"mset"][3:6] == [1, -1, 2]


def test_acl_categories_equal_redis_for_every_command(rc, ref2):
    # (What ACL rules such as -@dangerous take away: Redis's categories.)
    ours = by_name(rc.execute_command("COMMAND"))
    theirs = by_name(ref2.execute_command("COMMAND"))
    for name in sorted(set(ours) & set(theirs)):
        assert sorted(ours[name][6]) == sorted(theirs[name][6]), name


def test_minus_dangerous_takes_away_what_it_does_in_redis(rc, ref2):
    for c in (rc, ref2):
        c.execute_command("ACL", "SETUSER", "nodanger", "on", "nopass", "~*", "+@all", "-@dangerous")
    try:
        for cmd in (("flushall",), ("flushdb",), ("keys", "*"), ("swapdb", "0", "1"), ("info",), ("get", "k"),
                    ("command", "count")):
            replies = []
            for c in (rc, ref2):
                # (Allowed or not: 7.2's text names the user, 7.0's says "This user".)
                reply = c.execute_command("ACL", "DRYRUN", "nodanger", *cmd)
                replies.append(b"denied" if b"has no permissions to run" in reply else reply)
            assert replies[0] == replies[1], cmd
    finally:
        for c in (rc, ref2):
            c.execute_command("ACL", "DELUSER", "nodanger")


def test_key_specs_equal_redis_resp3(rc3, ref3):
    # (RESP3: the specs and their flags are sets, each spec a map.)
    names = ["set", "lmove", "sort", "migrate", "xreadgroup", "zunionstore", "georadius", "bitfield", "eval",
             "object|freq", "spublish", "get", "ping"]
    ours = rc3.execute_command("COMMAND", "INFO", *names)
    theirs = ref3.execute_command("COMMAND", "INFO", *names)
    for name, a, b in zip(names, ours, theirs):
        assert a[8] == b[8], name


def test_key_specs_raw_shape(server, reference):
    # The exact bytes: notes first, flags as simple strings, Redis's order.
    for srv in (server, reference):
        with Conn(srv) as conn:
            reply = conn.call("COMMAND", "INFO", "set")
        assert (b"*1\r\n*8\r\n$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n"
                b"$5\r\nflags\r\n*4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n"
                b"$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n"
                b"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n"
                b"*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n") in reply


def spec(flags, begin, find, notes=None):
    """A key spec as COMMAND INFO gives it over RESP2."""
    kind, value = begin
    if kind == "index":
        b = [b"type", b"index", b"spec", [b"index", value]]
    else:
        b = [b"type", b"keyword", b"spec", [b"keyword", value[0].encode(), b"startfrom", value[1]]]
    kind, value = find
    if kind == "range":
        f = [b"type", b"range", b"spec", [b"lastkey", value[0], b"keystep", value[1], b"limit", value[2]]]
    else:
        f = [b"type", b"keynum", b"spec", [b"keynumidx", value[0], b"firstkey", value[1], b"keystep", value[2]]]
    out = [b"notes", notes.encode()] if notes else []
    return out + [b"flags", [x.encode() for x in flags.split()], b"begin_search", b, b"find_keys", f]


def key_specs(c, name):
    (entry,) = c.execute_command("COMMAND", "INFO", name)
    return entry[8]


@pytest.mark.parametrize("name,specs", [
    ("set", [spec("RW access update variable_flags", ("index", 1), ("range", (0, 1, 0)),
                  "RW and ACCESS due to the optional `GET` argument")]),
    ("lmove", [spec("RW access delete", ("index", 1), ("range", (0, 1, 0))),
               spec("RW insert", ("index", 2), ("range", (0, 1, 0)))]),
    ("mset", [spec("OW update", ("index", 1), ("range", (-1, 2, 0)))]),
    ("zunionstore", [spec("OW update", ("index", 1), ("range", (0, 1, 0))),
                     spec("RO access", ("index", 2), ("keynum", (0, 1, 1)))]),
    ("xreadgroup", [spec("RO access", ("keyword", ("STREAMS", 4)), ("range", (-1, 1, 2)))]),
    ("migrate", [spec("RW access delete", ("index", 3), ("range", (0, 1, 0))),
                 spec("RW access delete incomplete", ("keyword", ("KEYS", -2)), ("range", (-1, 1, 0)))]),
    ("spublish", [spec("not_key", ("index", 1), ("range", (0, 1, 0)))]),
    ("ping", []),
])
def test_key_specs_of(rc, name, specs):
    assert key_specs(rc, name) == specs


def test_sort_unknown_specs(rc):
    specs = key_specs(rc, "sort")
    assert len(specs) == 3
    d = dict(zip(specs[2][0::2], specs[2][1::2]))
    assert d[b"flags"] == [b"OW", b"update"]
    assert d[b"begin_search"] == [b"type", b"unknown", b"spec", []]
    assert d[b"find_keys"] == [b"type", b"unknown", b"spec", []]
    assert d[b"notes"].startswith(b"For the optional STORE keyword.")


@pytest.mark.parametrize("name,flags", [
    # Redis 7.4's hash field TTL commands, Redis 8.0's HGETDEL, HGETEX, HSETEX.
    ("hexpire", "RW update"), ("hpexpireat", "RW update"), ("hpersist", "RW update"),
    ("httl", "RO access"), ("hpexpiretime", "RO access"),
    ("hgetdel", "RW access delete"), ("hsetex", "RW update"),
])
def test_key_specs_of_later_redis(rc, name, flags):
    require_command(rc, name)
    assert key_specs(rc, name) == [spec(flags, ("index", 1), ("range", (0, 1, 0)))]


def test_key_specs_of_hgetex(rc):
    require_command(rc, "hgetex")
    assert key_specs(rc, "hgetex") == [spec("RW access update", ("index", 1), ("range", (0, 1, 0)),
                                            "RW and UPDATE because it changes the TTL")]


# ---------------------------------------------------------------- GETKEYSANDFLAGS

def keys_and_flags(c, *args):
    return [[k.decode(), [f.decode() for f in flags]]
            for k, flags in c.execute_command("COMMAND", "GETKEYSANDFLAGS", *args)]


def test_getkeysandflags_redis_cases(rc):
    # Redis's own (tests/unit/introspection-2.tcl).
    assert keys_and_flags(rc, "set", "k1", "v1") == [["k1", ["OW", "update"]]]
    assert keys_and_flags(rc, "mset", "k1", "v1", "k2", "v2") == [["k1", ["OW", "update"]], ["k2", ["OW", "update"]]]
    assert keys_and_flags(rc, "LMOVE", "k1", "k2", "left", "right") == [
        ["k1", ["RW", "access", "delete"]], ["k2", ["RW", "insert"]]]
    assert keys_and_flags(rc, "sort", "k1", "store", "k2") == [["k1", ["RO", "access"]], ["k2", ["OW", "update"]]]


def test_getkeysandflags_flags_from_the_arguments(rc):
    assert keys_and_flags(rc, "set", "k", "v", "GET") == [["k", ["RW", "access", "update"]]]
    assert keys_and_flags(rc, "bitfield", "k", "GET", "u8", "0") == [["k", ["RO", "access"]]]
    assert keys_and_flags(rc, "bitfield", "k", "SET", "u8", "0", "1") == [["k", ["RW", "access", "update"]]]
    assert keys_and_flags(rc, "sort", "k", "BY", "w*") == [["k", ["RO", "access"]]]
    assert keys_and_flags(rc, "migrate", "h", "1", "", "0", "5", "KEYS", "a", "b") == [
        ["a", ["RW", "access", "delete"]], ["b", ["RW", "access", "delete"]]]
    assert keys_and_flags(rc, "eval", "return 1", "0") == []
    assert keys_and_flags(rc, "eval", "return 1", "1x", "k") == [["k", []]]  # (numkeys read as atoi does)


@pytest.mark.parametrize("args,msg", [
    (("nosuchcmd", "a"), "Invalid command specified"),
    (("object", "nosuch", "k"), "Invalid command specified"),
    (("ping", "x"), "The command has no key arguments"),
    (("spublish", "ch", "m"), "The command has no key arguments"),
    (("set", "a"), "Invalid number of arguments specified for command"),
    (("get", "a", "b"), "Invalid number of arguments specified for command"),
    (("zunion", "0", "a"), "Invalid arguments specified for command"),
    (("zunionstore", "dst", "5", "a"), "Invalid arguments specified for command"),
    (("xread", "BLOCK", "0", "x"), "Invalid arguments specified for command"),
])
def test_getkeysandflags_errors(rc, args, msg):
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        with raises(msg):
            rc.execute_command("COMMAND", sub, *args)


def test_getkeysandflags_arity(rc):
    with raises(arity("command|getkeysandflags")):
        rc.execute_command("COMMAND", "GETKEYSANDFLAGS")


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.2 behaviour (COMMAND GETKEYSANDFLAGS arity -3); Debian's 7.0 has -4")
def test_getkeysandflags_command_without_args(rc):
    with raises("Invalid number of arguments specified for command"):
        rc.execute_command("COMMAND", "GETKEYSANDFLAGS", "get")
    # (A container alone is itself: it has no key arguments.)
    with raises("The command has no key arguments"):
        rc.execute_command("COMMAND", "GETKEYSANDFLAGS", "object")


# Invocations whose keys (and flags) must be Redis's exactly.
INVOCATIONS = [
    ("get", "k"), ("set", "k", "v"), ("set", "k", "v", "EX", "1", "get"), ("getex", "k", "PERSIST"),
    ("mset", "a", "1", "b", "2"), ("msetnx", "a", "1"), ("mget", "a", "b"), ("del", "a", "b"), ("exists", "a"),
    ("lcs", "a", "b"), ("copy", "a", "b", "DB", "1"), ("rename", "a", "b"), ("renamenx", "a", "b"),
    ("lmove", "a", "b", "LEFT", "RIGHT"), ("blmove", "a", "b", "LEFT", "RIGHT", "0"), ("rpoplpush", "a", "b"),
    ("blpop", "a", "b", "0"), ("lmpop", "2", "a", "b", "LEFT"), ("blmpop", "0", "1", "a", "LEFT"),
    ("lmpop", "0", "a", "LEFT"), ("smove", "a", "b", "m"), ("sintercard", "2", "a", "b"),
    ("sinterstore", "d", "a", "b"), ("zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
    ("zinterstore", "d", "1x", "a"), ("zdiff", "2", "a", "b"), ("zintercard", "1", "a", "LIMIT", "1"),
    ("zmpop", "1", "a", "MIN"), ("bzmpop", "0", "1", "a", "MAX"), ("zrangestore", "d", "s", "0", "-1"),
    ("bzpopmin", "a", "b", "0"), ("sort", "k"), ("sort", "k", "BY", "w", "GET", "#", "STORE", "d"),
    ("sort", "k", "LIMIT", "0", "1", "STORE", "d1", "STORE", "d2"), ("sort", "k", "BY", "store", "x"),
    ("sort_ro", "k", "BY", "w"), ("bitfield", "k", "GET", "u8", "0", "OVERFLOW", "SAT"),
    ("bitfield", "k", "INCRBY", "u8", "0", "1"), ("bitfield", "k", "GET", "u8"), ("bitfield_ro", "k", "GET", "u8", "0"),
    ("bitop", "AND", "d", "a", "b"), ("pfcount", "a", "b"), ("pfmerge", "d", "a"),
    ("migrate", "h", "1", "k", "0", "5"), ("migrate", "h", "1", "", "0", "5", "COPY", "AUTH", "p", "KEYS", "a", "b"),
    ("migrate", "h", "1", "", "0", "5", "AUTH2", "u", "keys", "KEYS", "a"),
    ("migrate", "h", "1", "k", "0", "5", "KEYS", "a"),
    ("eval", "return 1", "2", "a", "b", "c"), ("eval", "return 1", "0"), ("eval", "return 1", "-1"),
    ("eval", "return 1", " 1", "a"), ("evalsha_ro", "abc", "1", "a"), ("fcall", "f", "1", "a"), ("fcall_ro", "f", "0"),
    ("georadius", "k", "0", "0", "1", "km", "STORE", "d"), ("georadius", "k", "0", "0", "1", "km", "STOREDIST", "d"),
    ("georadius", "k", "0", "0", "1", "km", "STORE"), ("georadiusbymember", "k", "m", "1", "km", "STORE", "d"),
    ("georadius_ro", "k", "0", "0", "1", "km"), ("geosearchstore", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"),
    ("xread", "COUNT", "1", "STREAMS", "a", "b", "0", "0"), ("xread", "STREAMS", "a", "b", "c"),
    ("xreadgroup", "GROUP", "g", "c", "STREAMS", "s", ">"), ("xadd", "s", "*", "f", "v"),
    ("xgroup", "create", "s", "g", "$"), ("xinfo", "stream", "s"), ("object", "freq", "k"), ("memory", "usage", "k"),
    ("touch", "a", "b"), ("watch", "a"), ("unlink", "a"), ("restore", "k", "0", "x"), ("pfdebug", "encoding", "k"),
    ("object", "help"), ("memory", "stats"), ("publish", "ch", "m"), ("ssubscribe", "a"),
]


@pytest.mark.parametrize("args", INVOCATIONS, ids=lambda a: " ".join(a))
def test_getkeys_and_flags_as_redis(rc, ref2, args):
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        for c in (rc, ref2):
            try:
                got = c.execute_command("COMMAND", sub, *args)
            except Exception as e:  # noqa: BLE001 (the error text is compared)
                got = ("error", str(e))
            if c is rc:
                ours = got
            else:
                assert ours == got, (sub, args)


def test_getkeysandflags_resp3_as_redis(rc3, ref3):
    for args in (("set", "k", "v"), ("lmove", "a", "b", "LEFT", "RIGHT"), ("eval", "return 1", "1x", "k")):
        assert rc3.execute_command("COMMAND", "GETKEYSANDFLAGS", *args) == \
            ref3.execute_command("COMMAND", "GETKEYSANDFLAGS", *args)


def test_command_help_lists_getkeysandflags(rc, reference):
    ours = rc.execute_command("COMMAND", "HELP")
    with Conn(reference) as conn:
        conn.send(encode("COMMAND", "HELP"))
        theirs = conn.read_reply()
    assert b"GETKEYSANDFLAGS <full-command>" in ours
    # (The last line: 7.2's "Print this help.", 7.0's "Prints".)
    assert ours[-1] == (b"    Prints this help." if IS_REDIS else b"    Print this help.")
    lines = [line for line in theirs.split(b"\r\n") if line.startswith(b"+")]
    assert ours[:-1] == [line[1:] for line in lines][:-1]
