# DEBUG's subcommands that Redis's test suite and operators use, beyond
# SLEEP, RELOAD, OBJECT, PROTOCOL and DIGEST (tested with their features):
# POPULATE, LOG, ERROR, CHANGE-REPL-ID, STRINGMATCH-TEST, LOADAOF,
# PAUSE-CRON, and HELP naming them. Every test passes against redis-server
# too (TEST_SERVER=redis).
import time

import pytest

from conftest import ServerProcess
from helpers import info_dict, rc  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ServerProcess(["--enable-debug-command", "yes"], tmp_path=tmp_path_factory.mktemp("debug"))
    yield s
    s.stop()




def test_populate_makes_keys_and_leaves_existing_ones(rc):
    rc.execute_command("SET", "key:3", "mine")
    assert rc.execute_command("DEBUG", "POPULATE", "100") == b"OK"
    assert rc.execute_command("DBSIZE") == 100
    assert rc.execute_command("GET", "key:0") == b"value:0"
    assert rc.execute_command("GET", "key:99") == b"value:99"
    assert rc.execute_command("GET", "key:3") == b"mine"  # (left alone)
    # A prefix, a size: the value cut, or padded with zero bytes.
    assert rc.execute_command("DEBUG", "POPULATE", "3", "p", "4") == b"OK"
    assert rc.execute_command("GET", "p:2") == b"valu"
    assert rc.execute_command("DEBUG", "POPULATE", "2", "q", "10") == b"OK"
    assert rc.execute_command("GET", "q:1") == b"value:1\0\0\0"
    assert rc.execute_command("DEBUG", "POPULATE", "0") == b"OK"
    # The client's database only.
    rc.execute_command("SELECT", "2")
    assert rc.execute_command("DEBUG", "POPULATE", "5") == b"OK"
    assert rc.execute_command("DBSIZE") == 5
    rc.execute_command("FLUSHDB")
    rc.execute_command("SELECT", "0")
    assert rc.execute_command("DBSIZE") == 105


@pytest.mark.parametrize("args, error", [
    (("-1",), "ERR value is out of range, must be positive"),
    (("x",), "ERR value is out of range, must be positive"),
    (("1", "k", "-5"), "ERR value is out of range, must be positive"),
])
def test_populate_errors(rc, args, error):
    with pytest.raises(Exception) as e:
        rc.execute_command("DEBUG", "POPULATE", *args)
    assert str(e.value) == error.removeprefix("ERR ")  # (redis-py drops "ERR ")
    assert rc.execute_command("DBSIZE") == 0


def test_populate_tells_watchers(rc, server):
    other = server.client(protocol=2)
    try:
        other.execute_command("WATCH", "key:1")
        rc.execute_command("DEBUG", "POPULATE", "2")
        other.execute_command("MULTI")
        other.execute_command("PING")
        assert other.execute_command("EXEC") is None  # key:1 was made
    finally:
        other.close()


def test_log_error_and_stringmatch(rc):
    assert rc.execute_command("DEBUG", "LOG", "hello from the test") == b"OK"
    with pytest.raises(Exception) as e:
        rc.execute_command("DEBUG", "ERROR", "MYCODE some\r\ntext")
    assert str(e.value) == "MYCODE some  text"
    # Written raw, as Redis does: not an error reply it counts.
    assert "errorstat_MYCODE" not in info_dict(rc.execute_command("INFO", "errorstats"))
    assert rc.execute_command("DEBUG", "STRINGMATCH-TEST") == b"Apparently Redis did not crash: test passed"


def test_change_repl_id(rc):
    before = info_dict(rc.execute_command("INFO", "replication"))
    assert rc.execute_command("DEBUG", "CHANGE-REPL-ID") == b"OK"
    after = info_dict(rc.execute_command("INFO", "replication"))
    assert after["master_replid"] != before["master_replid"] and len(after["master_replid"]) == 40
    assert after["master_replid2"] == "0" * 40


def test_help_names_them(rc):
    lines = rc.execute_command("DEBUG", "HELP")
    for name in (b"CHANGE-REPL-ID", b"ERROR <string>", b"LOG <message>", b"POPULATE <count> [<prefix>] [<size>]",
                 b"STRINGMATCH-TEST", b"LOADAOF", b"PAUSE-CRON <0|1>"):
        assert name in lines


def wait_rewrite(rc):
    deadline = time.monotonic() + 30
    while info_dict(rc.execute_command("INFO", "persistence"))["aof_rewrite_in_progress"] != "0":
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_loadaof_replaces_the_data_with_the_files(rc):
    # With the AOF off, BGREWRITEAOF still writes the files (Redis's too).
    rc.execute_command("CONFIG", "SET", "aof-use-rdb-preamble", "no")
    for i in range(50):
        rc.execute_command("SET", "k%d" % i, i)
    rc.execute_command("RPUSH", "{k}l", "a", "b")
    rc.execute_command("SET", "px", "v", "PX", 1_000_000)
    assert rc.execute_command("BGREWRITEAOF").startswith(b"Background append only file rewriting")
    wait_rewrite(rc)
    digest = rc.execute_command("DEBUG", "DIGEST")
    rc.execute_command("SET", "late", "not in the files")
    assert rc.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert rc.execute_command("EXISTS", "late") == 0
    assert rc.execute_command("DEBUG", "DIGEST") == digest
    assert 900_000 < rc.execute_command("PTTL", "px") <= 1_000_000
    # With the AOF on, what was just written is in the file too.
    try:
        rc.execute_command("CONFIG", "SET", "appendonly", "yes")
        wait_rewrite(rc)
        rc.execute_command("SET", "x", "1", "EX", 1000)
        rc.execute_command("LPUSH", "{k}l", "z")
        digest = rc.execute_command("DEBUG", "DIGEST")
        assert rc.execute_command("DEBUG", "LOADAOF") == b"OK"
        assert rc.execute_command("DEBUG", "DIGEST") == digest
        assert rc.execute_command("LRANGE", "{k}l", 0, -1) == [b"z", b"a", b"b"]
        assert 900 < rc.execute_command("TTL", "x") <= 1000
    finally:
        rc.execute_command("CONFIG", "SET", "appendonly", "no")
        rc.execute_command("CONFIG", "SET", "aof-use-rdb-preamble", "yes")


def test_pause_cron_stops_active_expiry(rc):
    rc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    try:
        assert rc.execute_command("DEBUG", "PAUSE-CRON", "1") == b"OK"
        before = int(info_dict(rc.execute_command("INFO", "stats"))["expired_keys"])
        for i in range(20):
            rc.execute_command("SET", "e%d" % i, "v", "PX", 10)
        time.sleep(0.5)
        assert int(info_dict(rc.execute_command("INFO", "stats"))["expired_keys"]) == before
        assert rc.execute_command("DEBUG", "PAUSE-CRON", "0") == b"OK"
        deadline = time.monotonic() + 10
        while int(info_dict(rc.execute_command("INFO", "stats"))["expired_keys"]) < before + 20:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        rc.execute_command("DEBUG", "PAUSE-CRON", "0")
