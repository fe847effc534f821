# DEBUG's subcommands that Redis's test suite and operators use, beyond
# SLEEP, RELOAD, OBJECT, PROTOCOL and DIGEST (tested with their features):
# POPULATE, LOG, ERROR, CHANGE-REPL-ID, STRINGMATCH-TEST, and HELP naming
# them. Every test passes against redis-server too (TEST_SERVER=redis).
import pytest

from conftest import ServerProcess
from helpers import info_dict, raw_client


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ServerProcess(["--enable-debug-command", "yes"], tmp_path=tmp_path_factory.mktemp("debug"))
    yield s
    s.stop()


@pytest.fixture
def rc(server):
    c = raw_client(server)
    assert c.execute_command("FLUSHALL") == b"OK"
    yield c
    c.close()


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
                 b"STRINGMATCH-TEST"):
        assert name in lines
