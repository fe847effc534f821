# Details of Redis's scripting that its own test units check (issue #35):
# function names without case, names with NUL bytes refused, FUNCTION
# FLUSH's errors, commands refused inside scripts counted as Redis counts
# them (rejected calls, error stats, the script's failed call), and DEBUG's
# PROTOCOL / OBJECT / SET-DISABLE-DENY-SCRIPTS (DEBUG callable from scripts
# then). Passes against TEST_SERVER=redis too.
import pytest
import redis

from helpers import rc  # noqa: F401  (fixture)


@pytest.fixture
def fc(rc):
    rc.execute_command("FUNCTION", "FLUSH")
    yield rc
    rc.execute_command("FUNCTION", "FLUSH")


def cmdstat(c, name):
    line = c.execute_command("INFO", "commandstats").decode()
    for l in line.split("\r\n"):
        if l.startswith("cmdstat_%s:" % name):
            return dict(kv.split("=") for kv in l.split(":", 1)[1].split(","))
    return {}


def test_function_names_have_no_case(fc):
    fc.execute_command("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('test', function() return 'hello1' end)")
    assert fc.execute_command("FCALL", "TEST", 0) == b"hello1"
    assert fc.execute_command("FCALL", "Test", 0) == b"hello1"
    with pytest.raises(redis.ResponseError, match="Function TEST already exists"):
        fc.execute_command("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('TEST', function() end)")


def test_function_name_with_a_nul_is_refused(fc):
    with pytest.raises(redis.ResponseError, match="Library names can only contain letters, numbers, or underscores"):
        fc.execute_command("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('test\\0test', function() end)")
    assert fc.execute_command("FUNCTION", "LIST") == []


def test_function_flush_errors(fc):
    with pytest.raises(redis.ResponseError,
                       match="unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP."):
        fc.execute_command("FUNCTION", "flush", "sync", "extra")
    with pytest.raises(redis.ResponseError, match="FUNCTION FLUSH only supports SYNC|ASYNC option"):
        fc.execute_command("FUNCTION", "FLUSH", "maybe")


def test_refused_calls_count_as_redis_counts_them(rc):
    rc.execute_command("CONFIG", "RESETSTAT")
    rc.execute_command("CONFIG", "SET", "maxmemory", "1")
    try:
        with pytest.raises(redis.ResponseError, match="command not allowed when used memory"):
            rc.execute_command("EVAL", "return redis.call('set','x','y')", 1, "x")
        info = rc.execute_command("INFO", "stats").decode()
        assert "total_error_replies:1\r\n" in info
        assert cmdstat(rc, "set")["rejected_calls"] == "1" and cmdstat(rc, "set")["calls"] == "0"
        assert cmdstat(rc, "eval")["failed_calls"] == "1"
        # Caught by pcall: the refusal still counts, the script did not fail.
        rc.execute_command("CONFIG", "RESETSTAT")
        assert rc.execute_command("EVAL", "local t = redis.pcall('set','x','y') "
                                  "return t['err'] == \"OOM command not allowed when used memory > 'maxmemory'.\" "
                                  "and 1 or 0", 1, "x") == 1
        assert "total_error_replies:1\r\n" in rc.execute_command("INFO", "stats").decode()
        assert "errorstat_OOM:count=1" in rc.execute_command("INFO", "errorstats").decode()
        assert cmdstat(rc, "set")["rejected_calls"] == "1"
        assert cmdstat(rc, "eval")["failed_calls"] == "0"
        # Returned (not raised): the reply is the error, counted once, and
        # the script failed.
        rc.execute_command("CONFIG", "RESETSTAT")
        with pytest.raises(redis.ResponseError, match="command not allowed when used memory"):
            rc.execute_command("EVAL", "return redis.pcall('set','x','y')", 1, "x")
        assert "total_error_replies:1\r\n" in rc.execute_command("INFO", "stats").decode()
        assert cmdstat(rc, "eval")["failed_calls"] == "1"
    finally:
        rc.execute_command("CONFIG", "SET", "maxmemory", "0")
    # A command's own error: counted once, as the command's failed call.
    rc.execute_command("CONFIG", "RESETSTAT")
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        rc.execute_command("EVAL", "return redis.call('select',99)", 0)
    assert "total_error_replies:1\r\n" in rc.execute_command("INFO", "stats").decode()
    assert cmdstat(rc, "select")["failed_calls"] == "1" and cmdstat(rc, "eval")["failed_calls"] == "1"
    # Unknown commands count as an error (ERR) with no command to blame.
    rc.execute_command("CONFIG", "RESETSTAT")
    assert rc.execute_command("EVAL", "return redis.pcall('nosuch')['err']", 0) == \
        b"ERR Unknown Redis command called from script"
    assert "errorstat_ERR:count=1" in rc.execute_command("INFO", "errorstats").decode()


@pytest.fixture
def debug_rc(start_server):
    srv = start_server("--enable-debug-command", "yes")
    c = srv.client()
    c.response_callbacks.clear()
    return c


def test_debug_protocol_and_scripts(debug_rc):
    c = debug_rc
    assert str(c.execute_command("DEBUG", "PROTOCOL", "bignum")).strip("b'") == "1234567999999999999999999999999999999"
    assert c.execute_command("DEBUG", "PROTOCOL", "array") == [0, 1, 2]
    assert float(c.execute_command("DEBUG", "PROTOCOL", "double")) == 3.141
    with pytest.raises(redis.ResponseError, match="Wrong protocol type name"):
        c.execute_command("DEBUG", "PROTOCOL", "nosuch")
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        c.execute_command("EVAL", "return redis.call('debug', 'protocol', 'map')", 0)
    assert c.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1) == b"OK"
    try:
        assert str(c.execute_command("EVAL", "redis.setresp(3) return redis.call('debug', 'protocol', 'bignum')",
                                     0)).strip("b'") == "1234567999999999999999999999999999999"
        assert c.execute_command("EVAL", "redis.setresp(3) local m = redis.call('debug', 'protocol', 'map') "
                                 "return {tostring(m.map[0]), tostring(m.map[1]), tostring(m.map[2])}", 0) == \
            [b"false", b"true", b"false"]
        assert c.execute_command("EVAL", "redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')", 0) == \
            b"Some real reply following the attribute"
        # Time stands still while a script runs (the key set with PX 1 lives on).
        assert c.execute_command("EVAL", "redis.call('set', 'key', 'value', 'px', 1) redis.call('debug', 'sleep', 0.01) "
                                 "return redis.call('exists', 'key')", 0) == 1
    finally:
        c.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)
    # Only DEBUG goes through then: the others would re-enter the scripting
    # or transaction machinery (Redis lets every no-script command through).


def test_debug_object(debug_rc):
    c = debug_rc
    c.execute_command("SET", "k", "value")
    line = c.execute_command("DEBUG", "OBJECT", "k").decode()
    assert line.startswith("Value at:") and " refcount:1 encoding:embstr serializedlength:" in line
    assert "lru_seconds_idle:" in line
    with pytest.raises(redis.ResponseError, match="no such key"):
        c.execute_command("DEBUG", "OBJECT", "missing")


def test_min_replicas_to_write_without_replicas(rc):
    """With min-replicas-to-write above 0 and no replica, writes are refused
    (NOREPLICAS), in scripts as Redis refuses them: a script with flags but
    without no-writes at once, an old-style one at its first write."""
    rc.execute_command("SET", "x", "some value")
    rc.execute_command("CONFIG", "SET", "min-replicas-to-write", 1)
    try:
        assert rc.execute_command("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", 1, "x") == \
            b"some value"
        assert rc.execute_command("EVAL", "return redis.call('get','x')", 1, "x") == b"some value"
        with pytest.raises(redis.ResponseError, match="Not enough good replicas to write"):
            rc.execute_command("EVAL", "#!lua\nreturn redis.call('get','x')", 1, "x")
        with pytest.raises(redis.ResponseError, match="Not enough good replicas to write"):
            rc.execute_command("EVAL", "return redis.call('set','x', 1)", 1, "x")
        with pytest.raises(redis.ResponseError, match="Not enough good replicas to write"):
            rc.execute_command("SET", "x", 2)
        assert rc.execute_command("GET", "x") == b"some value"
    finally:
        rc.execute_command("CONFIG", "SET", "min-replicas-to-write", 0)
    assert rc.execute_command("SET", "x", 3) == b"OK"


def test_cluster_without_cluster_mode(rc):
    for args in (("INFO",), ("RESET", "HARD"), ("KEYSLOT", "x"), ("NODES",)):
        with pytest.raises(redis.ResponseError, match="This instance has cluster support disabled"):
            rc.execute_command("CLUSTER", *args)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'cluster' command"):
        rc.execute_command("CLUSTER")
    # CLUSTER RESET may not run in a script; the others may (and say the same).
    assert rc.execute_command("EVAL", "return redis.pcall('cluster', 'reset', 'hard')['err']", 0) == \
        b"ERR This Redis command is not allowed from script"
    assert rc.execute_command("EVAL", "return redis.pcall('cluster', 'info')['err']", 0) == \
        b"ERR This instance has cluster support disabled"
