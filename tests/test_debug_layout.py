# DEBUG's subcommands about layout and the switches Redis's test suite
# turns: QUICKLIST-PACKED-THRESHOLD, LISTPACK, QUICKLIST, HTSTATS,
# HTSTATS-KEY, SET-SKIP-CHECKSUM-VALIDATION, REPLYBUFFER and
# CONFIG-REWRITE-FORCE-ALL. What both servers share runs against
# redis-server too (TEST_SERVER=redis); what follows Peregrine's own
# structures (docs/debug.md) is skipped there.
import re
import time

import pytest

from conftest import IS_REDIS, ServerProcess
from helpers import raw_client, rc  # noqa: F401 (fixture)

peregrine_only = pytest.mark.skipif(IS_REDIS, reason="Peregrine's own structures and buffer policy")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ServerProcess(["--enable-debug-command", "yes"], tmp_path=tmp_path_factory.mktemp("debug_layout"))
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def default_switches(server):
    """What a test turned is turned back after it."""
    yield
    c = raw_client(server)
    c.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0")
    c.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0")
    c.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET")
    c.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "1")
    c.close()


def error_of(rc, *args):
    with pytest.raises(Exception) as e:
        rc.execute_command(*args)
    return str(e.value)


# ---- QUICKLIST-PACKED-THRESHOLD --------------------------------------------------------

@pytest.mark.parametrize("size", ["5gb", "4294967296", "abc", "-1", "1x"])
def test_packed_threshold_refuses_what_redis_refuses(rc, size):
    assert error_of(rc, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", size) == \
        "argument must be a memory value bigger than 1 and smaller than 4gb"


def test_plain_nodes_keep_every_list_command_right(rc):
    # Redis's own plain-node tests, with every item at or over the threshold.
    assert rc.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b") == b"OK"
    a, b, c, d = (ch * 500 for ch in "abcd")
    for v in (a, b, c, d):
        rc.execute_command("LPUSH", "l", v)
    for v in ("e", "f", "g", "j"):
        rc.execute_command("LINSERT", "l", "AFTER", d, v * 500)
    assert [x.decode() for x in rc.execute_command("LRANGE", "l", 0, -1)] == \
        [d, "j" * 500, "g" * 500, "f" * 500, "e" * 500, c, b, a]
    rc.execute_command("LSET", "l", 2, "short")
    rc.execute_command("LTRIM", "l", 1, -2)
    assert rc.execute_command("LRANGE", "l", 0, -1) == [b"j" * 500, b"short", b"f" * 500, b"e" * 500, c.encode(),
                                                        b.encode()]
    assert rc.execute_command("LREM", "l", 0, b"f" * 500) == 1
    assert rc.execute_command("LPOS", "l", c) == 3
    assert rc.execute_command("LMOVE", "l", "m", "LEFT", "RIGHT") == b"j" * 500
    assert rc.execute_command("LLEN", "l") == 4
    assert rc.execute_command("DEBUG", "RELOAD") == b"OK"
    assert rc.execute_command("LRANGE", "l", 0, -1) == [b"short", b"e" * 500, c.encode(), b.encode()]
    # LSET between packed and plain, both ways, splitting a node in the middle.
    assert rc.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5b") == b"OK"
    rc.execute_command("RPUSH", "s", "aa", "bb", "cc", "dd", "ee")
    rc.execute_command("LSET", "s", 2, "e" * 10)
    rc.execute_command("LSET", "s", 0, "d" * 50001)
    rc.execute_command("LSET", "s", 0, "xy")
    assert rc.execute_command("LRANGE", "s", 0, -1) == [b"xy", b"bb", b"e" * 10, b"dd", b"ee"]


@peregrine_only
def test_large_items_are_nodes_of_their_own(rc, server):
    assert rc.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100b") == b"OK"
    # Three nodes of small items (8 KB each, list-max-listpack-size -2).
    rc.execute_command("RPUSH", "l", *[f"item:{i:05}" for i in range(2000)])
    assert rc.execute_command("OBJECT", "ENCODING", "l") == b"quicklist"

    def nodes():
        assert rc.execute_command("DEBUG", "QUICKLIST", "l", "1") == b"Quicklist structure printed on stdout"
        time.sleep(0.1)
        lens = re.findall(r'\{quicklist "l"\} \{count (\d+)\} \{len (\d+)\}', server.output())
        return int(lens[-1][1])

    before = nodes()
    rc.execute_command("RPUSH", "l", "L" * 100)
    rc.execute_command("RPUSH", "l", "after")
    rc.execute_command("LINSERT", "l", "AFTER", "item:00003", "M" * 200)
    assert nodes() == before + 4  # the pushed one, the one after it, and a node split around the insert
    assert rc.execute_command("LINDEX", "l", 4) == b"M" * 200
    assert "{packed_threshold 100}" in server.output()
    # A one-node quicklist of a large item stays a quicklist, as in Redis.
    rc.execute_command("DEL", "l")
    rc.execute_command("RPUSH", "l", *[f"item:{i:05}" for i in range(2000)])
    rc.execute_command("RPUSH", "l", "L" * 100)
    rc.execute_command("LTRIM", "l", -1, -1)
    assert rc.execute_command("OBJECT", "ENCODING", "l") == b"quicklist"
    rc.execute_command("LSET", "l", 0, "small")
    rc.execute_command("RPUSH", "l", "x")
    rc.execute_command("RPOP", "l")
    assert rc.execute_command("OBJECT", "ENCODING", "l") == b"listpack"


# ---- LISTPACK and QUICKLIST -------------------------------------------------------------

def test_listpack_and_quicklist_replies_and_errors(rc):
    rc.execute_command("HSET", "h", "f1", "v1", "f2", "v2")
    rc.execute_command("SET", "str", "x")
    assert rc.execute_command("DEBUG", "LISTPACK", "h") == b"Listpack structure printed on stdout"
    assert error_of(rc, "DEBUG", "LISTPACK", "nosuch") == "no such key"
    assert error_of(rc, "DEBUG", "LISTPACK", "str") == "Not a listpack encoded object."
    assert error_of(rc, "DEBUG", "QUICKLIST", "h") == "Not a quicklist encoded object."
    assert error_of(rc, "DEBUG", "QUICKLIST", "nosuch") == "no such key"
    rc.execute_command("RPUSH", "big", *[f"item:{i:05}" for i in range(3000)])
    assert rc.execute_command("DEBUG", "QUICKLIST", "big") == b"Quicklist structure printed on stdout"
    assert rc.execute_command("DEBUG", "QUICKLIST", "big", "2") == b"Quicklist structure printed on stdout"
    # An expired key is no key.
    rc.execute_command("HSET", "gone", "f", "v")
    rc.execute_command("PEXPIRE", "gone", 1)
    time.sleep(0.05)
    assert error_of(rc, "DEBUG", "LISTPACK", "gone") == "no such key"


@peregrine_only
def test_listpack_writes_the_entries_to_the_log(rc, server):
    rc.execute_command("RPUSH", "lp", "first", "12345", "\x01bin")
    rc.execute_command("ZADD", "z", "1.5", "m")
    rc.execute_command("DEBUG", "LISTPACK", "lp")
    rc.execute_command("DEBUG", "LISTPACK", "z")
    time.sleep(0.1)
    out = server.output()
    assert '{listpack "lp"} {total_bytes' in out and "{num_entries 3}" in out
    assert '{ element[0]: "first" }' in out and '{ element[1]: "12345" }' in out
    assert '{ element[2]: "\\x01bin" }' in out
    assert '{listpack "z"} {num_entries 2}' in out and '{ element[1]: 1.5 }' in out


# ---- HTSTATS and HTSTATS-KEY ------------------------------------------------------------

def full_arg():
    return [] if IS_REDIS else ["full"]


def dictionary_elements(text):
    main = text.split("[Expires HT]")[0]
    return sum(int(n) for n in re.findall(r"number of elements: (\d+)", main))


def test_htstats_counts_the_keys_of_the_database(rc):
    assert b"No stats available for empty dictionaries" in rc.execute_command("DEBUG", "HTSTATS", "0")
    rc.execute_command("DEBUG", "POPULATE", "3000")
    rc.execute_command("SELECT", "9")
    rc.execute_command("SET", "other", "db")
    rc.execute_command("SELECT", "0")
    text = rc.execute_command("DEBUG", "HTSTATS", "0").decode()
    assert text.startswith("[Dictionary HT]\n") and "[Expires HT]" in text
    assert dictionary_elements(text) == 3000
    assert "table size:" in text
    # (FULL is Redis 7.2's.)
    assert dictionary_elements(rc.execute_command("DEBUG", "HTSTATS", "9", *full_arg()).decode()) == 1
    assert error_of(rc, "DEBUG", "HTSTATS", "16") == "Out of range database"
    assert error_of(rc, "DEBUG", "HTSTATS", "-1") == "Out of range database"
    assert error_of(rc, "DEBUG", "HTSTATS", "x") == "value is not an integer or out of range"


def test_htstats_key(rc):
    rc.execute_command("SADD", "bigset", *[f"member:{i}" for i in range(500)])
    rc.execute_command("HSET", "bighash", *[x for i in range(300) for x in (f"f{i}", "v" * 70)])
    rc.execute_command("HSET", "small", "f", "v")  # (listpack: a small set is a hashtable in Redis 7.0)
    # (Redis's table may be rehashing: its two tables hold them.)
    text = rc.execute_command("DEBUG", "HTSTATS-KEY", "bigset").decode()
    assert dictionary_elements(text) == 500 and "table size:" in text
    assert dictionary_elements(rc.execute_command("DEBUG", "HTSTATS-KEY", "bighash", *full_arg()).decode()) == 300
    assert error_of(rc, "DEBUG", "HTSTATS-KEY", "small") == \
        "The value stored at the specified key is not represented using an hash table"
    assert error_of(rc, "DEBUG", "HTSTATS-KEY", "nosuch") == "no such key"


# ---- SET-SKIP-CHECKSUM-VALIDATION -------------------------------------------------------

def test_skip_checksum_validation_lets_restore_take_a_bad_crc(rc):
    rc.execute_command("RPUSH", "src", "a", "b", "c")
    payload = bytearray(rc.execute_command("DUMP", "src"))
    payload[-1] ^= 0xFF  # the CRC's last byte
    assert error_of(rc, "RESTORE", "dst", 0, bytes(payload)) == "DUMP payload version or checksum are wrong"
    assert rc.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1") == b"OK"
    assert rc.execute_command("RESTORE", "dst", 0, bytes(payload)) == b"OK"
    assert rc.execute_command("LRANGE", "dst", 0, -1) == [b"a", b"b", b"c"]
    # The version is still checked.
    bad_version = bytes(payload[:-10]) + b"\xff\xff" + bytes(payload[-8:])
    assert error_of(rc, "RESTORE", "dst2", 0, bad_version) == "DUMP payload version or checksum are wrong"
    assert rc.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0") == b"OK"
    assert error_of(rc, "RESTORE", "dst3", 0, bytes(payload)) == "DUMP payload version or checksum are wrong"


# ---- REPLYBUFFER -----------------------------------------------------------------------

def reply_buffer_size(rc, name):
    for line in rc.execute_command("CLIENT", "LIST").decode().splitlines():
        if f" name={name} " in line:
            return int(re.search(r" rbs=(\d+)", line).group(1))
    raise AssertionError(f"no client {name}")


def test_replybuffer_errors(rc):
    assert error_of(rc, "DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "soon") == \
        "value is not an integer or out of range"
    assert error_of(rc, "DEBUG", "REPLYBUFFER", "SHAPE", "1") == \
        "unknown subcommand or wrong number of arguments for 'REPLYBUFFER'. Try DEBUG HELP."
    assert rc.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "250") == b"OK"
    assert rc.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "0") == b"OK"


@peregrine_only
def test_replybuffer_decides_when_idle_buffers_go_back(rc, server):
    # (A reply written into the buffer: a large string value would be
    # referenced, not copied.)
    rc.execute_command("RPUSH", "biglist", *[f"item:{i:06}" for i in range(4000)])
    other = raw_client(server)
    try:
        other.execute_command("CLIENT", "SETNAME", "watched")

        def after_big_reply(idle_s):
            assert len(other.execute_command("LRANGE", "biglist", 0, -1)) == 4000
            time.sleep(idle_s)
            return reply_buffer_size(rc, "watched")

        # Given back after 100 ms idle; never; kept while RESIZING is 0.
        assert rc.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"OK"
        assert after_big_reply(0.6) == 0
        assert rc.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == b"OK"
        assert after_big_reply(0.6) == 16384
        assert rc.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"OK"
        assert rc.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "0") == b"OK"
        assert after_big_reply(0.6) == 16384
        assert rc.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", "1") == b"OK"
        assert after_big_reply(0.6) == 0
    finally:
        other.close()


# ---- CONFIG-REWRITE-FORCE-ALL ----------------------------------------------------------

def test_config_rewrite_force_all_writes_every_directive_and_reads_back(tmp_path):
    conf = tmp_path / "server.conf"
    conf.write_text("# mine\nhz 15\n")
    s = ServerProcess(["--enable-debug-command", "yes"], tmp_path=tmp_path, config=conf)
    try:
        c = s.client()
        c.config_set("maxmemory-policy", "allkeys-lru")
        before = c.config_get("*")
        assert c.execute_command("DEBUG", "CONFIG-REWRITE-FORCE-ALL") == b"OK"
        text = conf.read_text()
        assert text.startswith("# mine\nhz 15\n")
        # Defaults too (a plain CONFIG REWRITE leaves them out).
        for line in ("maxmemory-policy allkeys-lru", "timeout 0", "databases 16", "lazyfree-lazy-user-flush no"):
            assert f"\n{line}\n" in text
        c.close()
    finally:
        s.stop()
    # The server starts from it, with the same configuration.
    s = ServerProcess(["--enable-debug-command", "yes"], tmp_path=tmp_path, config=conf)
    try:
        after = s.client().config_get("*")
        volatile = {"port"}  # (each start takes a free port)
        assert {k: v for k, v in after.items() if k not in volatile} == \
            {k: v for k, v in before.items() if k not in volatile}
    finally:
        s.stop()


def test_config_rewrite_force_all_without_a_file(rc):
    assert "CONFIG-REWRITE-FORCE-ALL failed" in error_of(rc, "DEBUG", "CONFIG-REWRITE-FORCE-ALL")


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.2's help lines (HTSTATS [full]); Debian ships 7.0")
def test_help_names_them(rc):
    lines = rc.execute_command("DEBUG", "HELP")
    for name in (b"QUICKLIST-PACKED-THRESHOLD <size>", b"LISTPACK <key>", b"HTSTATS <dbid> [full]",
                 b"HTSTATS-KEY <key> [full]", b"SET-SKIP-CHECKSUM-VALIDATION <0|1>", b"REPLYBUFFER RESIZING <0|1>",
                 b"CONFIG-REWRITE-FORCE-ALL"):
        assert any(line.startswith(name) for line in lines), name
