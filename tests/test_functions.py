# FUNCTION and FCALL (issue #19): libraries loaded once and callable from
# every connection, Redis 7.2's load-time environment and errors, function
# flags (FCALL_RO, no-writes), LIST / STATS / DELETE / FLUSH, FUNCTION KILL
# of a busy function, and functions whose keys live on several shards.
# Passes against TEST_SERVER=redis too.
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, encode, rc  # noqa: F401  (fixtures)
from test_atomicity import keys_on_distinct_shards, sharded  # noqa: F401  (fixture)

LIB = """#!lua name=mylib
redis.register_function('setit', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function{function_name='getit', callback=function(keys, args) return redis.call('get', keys[1]) end,
                        flags={'no-writes'}, description='reads a key'}
redis.register_function('count', function(keys, args) return #keys + #args end)
"""


def load(c, code, replace=False):
    return c.execute_command("FUNCTION", "LOAD", *(["REPLACE"] if replace else []), code)


def err(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


@pytest.fixture
def fc(rc):
    rc.execute_command("FUNCTION", "FLUSH")
    yield rc
    rc.execute_command("FUNCTION", "FLUSH")


def test_load_and_call(fc):
    assert load(fc, LIB) == b"mylib"
    assert fc.execute_command("FCALL", "setit", 1, "k", "v") == b"OK"
    assert fc.execute_command("FCALL", "getit", 1, "k") == b"v"
    assert fc.execute_command("FCALL_RO", "getit", 1, "k") == b"v"
    assert fc.execute_command("FCALL", "count", 2, "a", "b", "c") == 3
    assert err(fc, "FCALL_RO", "setit", 1, "k", "v") == "Can not execute a script with write flag using *_ro command."
    assert err(fc, "FCALL", "nosuch", 0) == "Function not found"
    assert err(fc, "FCALL", "getit", "x") == "Bad number of keys provided"
    assert err(fc, "FCALL", "getit", 5) == "Number of keys can't be greater than number of args"
    assert err(fc, "FCALL", "getit", -1) == "Number of keys can't be negative"
    # KEYS and ARGV are not globals in functions.
    load(fc, "#!lua name=g\nredis.register_function('k', function() return KEYS end)")
    assert "nonexistent global variable 'KEYS'" in err(fc, "FCALL", "k", 0)


def test_load_errors(fc):
    load(fc, LIB)
    assert err(fc, "FUNCTION", "LOAD", LIB) == "Library 'mylib' already exists"
    assert load(fc, LIB, replace=True) == b"mylib"
    cases = [
        ("return 1", "Missing library metadata"),
        ("#!lua", "Invalid library metadata"),
        ("#!lua name=bad-name\nreturn 1", "Library names can only contain letters, numbers, or underscores(_) and "
                                          "must be at least one character long"),
        ("#!lua name=x foo=1\nreturn 1", "Invalid metadata value given: foo=1"),
        ("#!lua name=x name=y\nreturn 1", "Invalid metadata value, name argument was given multiple times"),
        ("#!lua\nreturn 1", "Library name was not given"),
        ("#!js name=x\nreturn 1", "Engine 'js' not found"),
        ("#!lua name=x\nreturn 1", "No functions registered"),
        ("#!lua name=x\nredis.register_function('setit', function() return 1 end)", "Function setit already exists"),
        ("#!lua name=x\nreturn (", "Error compiling function: user_function:2: unexpected symbol near '<eof>'"),
        ("#!lua name=x\nredis.call('set', 'a', 'b')",
         "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable "
         "'call'"),
        ("#!lua name=x\nlocal n = string.len('x')",
         "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable "
         "'string'"),
        ("#!lua name=x\nredis.register_function()",
         "Error registering functions: ERR wrong number of arguments to redis.register_function"),
        ("#!lua name=x\nredis.register_function('a b', function() end)",
         "Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and "
         "must be at least one character long"),
        ("#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags={'bogus'}}",
         "Error registering functions: ERR unknown flag given"),
        ("#!lua name=x\nredis.register_function{function_name='f'}",
         "Error registering functions: ERR redis.register_function must get a callback argument"),
        ("#!lua name=x\nredis.register_function{callback=function() end}",
         "Error registering functions: ERR redis.register_function must get a function name argument"),
        ("#!lua name=x\nredis.register_function{function_name='f', callback=function() end, bogus=1}",
         "Error registering functions: ERR unknown argument given to redis.register_function"),
        ("#!lua name=x\nredis.register_function('f', 'g')",
         "Error registering functions: ERR second argument to redis.register_function must be a function"),
        ("#!lua name=x\nredis.register_function('f', function() end)\nredis.register_function('f', function() end)",
         "Error registering functions: ERR Function already exists in the library"),
    ]
    for code, want in cases:
        assert err(fc, "FUNCTION", "LOAD", code) == want, code
    assert err(fc, "FUNCTION", "LOAD", "BOGUS", LIB) == "Unknown option given: BOGUS"
    # The first line is split as Redis's sdssplitargs: quotes come off.
    assert load(fc, "#!lua name='quoted'\nredis.register_function('q1', function() return 1 end)") == b"quoted"
    assert err(fc, "FUNCTION", "LOAD", "#!lua \"name=z\nredis.register_function('q2', function() end)") == \
        "Invalid library metadata"
    # Nothing of a failed load stays.
    assert sorted(l[1] for l in fc.execute_command("FUNCTION", "LIST")) == [b"mylib", b"quoted"]
    # register_function only at load time.
    load(fc, "#!lua name=late\nredis.register_function('late', function() "
             "return redis.register_function('x', function() end) end)")
    assert "attempt to call field 'register_function'" in err(fc, "FCALL", "late", 0) or \
        "can only be called on FUNCTION LOAD command" in err(fc, "FCALL", "late", 0)


def test_list_stats_delete_flush(fc):
    load(fc, LIB)
    load(fc, "#!lua name=other\nredis.register_function('o', function() return 'o' end)")
    libs = {l[1]: l for l in fc.execute_command("FUNCTION", "LIST")}
    assert set(libs) == {b"mylib", b"other"}
    mylib = libs[b"mylib"]
    assert mylib[0] == b"library_name" and mylib[2:4] == [b"engine", b"LUA"] and mylib[4] == b"functions"
    functions = {f[1]: f for f in mylib[5]}
    assert functions[b"getit"] == [b"name", b"getit", b"description", b"reads a key", b"flags", [b"no-writes"]]
    assert functions[b"setit"] == [b"name", b"setit", b"description", None, b"flags", []]
    only = fc.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "MY*", "WITHCODE")
    assert len(only) == 1 and only[0][6] == b"library_code" and only[0][7] == LIB.encode()
    assert err(fc, "FUNCTION", "LIST", "LIBRARYNAME") == "library name argument was not given"
    assert err(fc, "FUNCTION", "LIST", "FOO") == "Unknown argument FOO"
    assert fc.execute_command("FUNCTION", "STATS") == [
        b"running_script", None, b"engines", [b"LUA", [b"libraries_count", 2, b"functions_count", 4]]]
    assert err(fc, "FUNCTION", "DELETE", "nosuch") == "Library not found"
    assert fc.execute_command("FUNCTION", "DELETE", "other") == b"OK"
    assert err(fc, "FCALL", "o", 0) == "Function not found"
    assert err(fc, "FUNCTION", "FLUSH", "x") == "FUNCTION FLUSH only supports SYNC|ASYNC option"
    assert fc.execute_command("FUNCTION", "FLUSH", "ASYNC") == b"OK"
    assert fc.execute_command("FUNCTION", "LIST") == []
    assert fc.execute_command("FUNCTION", "HELP")[0].startswith(b"FUNCTION <subcommand>")


def test_functions_everywhere_and_inside_multi(server, fc):
    load(fc, LIB)
    for _ in range(6):  # (new connections land on different workers)
        c = server.client()
        try:
            assert c.execute_command("FCALL", "setit", 1, "k", "w") == b"OK"
        finally:
            c.close()
    # A replaced library is what every connection calls next.
    load(fc, LIB.replace("return redis.call('get', keys[1])", "return 'new'"), replace=True)
    c = server.client()
    try:
        assert c.execute_command("FCALL", "getit", 1, "k") == b"new"
    finally:
        c.close()
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("FCALL", "setit", "1", "k", "x") == b"+QUEUED\r\n"
        assert c.call("FCALL", "count", "0", "a") == b"+QUEUED\r\n"
        assert c.call("EXEC") == b"*2\r\n+OK\r\n:1\r\n"


def test_functions_across_shards(sharded):
    r = sharded.client()
    r.execute_command("FUNCTION", "LOAD", """#!lua name=moves
redis.register_function('move', function(keys, args)
  redis.call('decrby', keys[1], args[1]) return redis.call('incrby', keys[2], args[1]) end)
redis.register_function('touch_any', function(keys, args) return redis.call('incr', args[1]) end)
""")
    a, b, c, d = keys_on_distinct_shards("f", 4)
    r.mset({a: 10, b: 10})
    for _ in range(3):
        assert r.execute_command("FCALL", "move", 2, a, b, 1) in (11, 12, 13)
    assert int(r.get(a)) + int(r.get(b)) == 20
    for _ in range(3):
        for k in (c, d):
            r.execute_command("FCALL", "touch_any", 0, k)
    assert r.get(c) == b"3" and r.get(d) == b"3"


def test_function_kill(start_server):
    args = ["--busy-reply-threshold", "100"]
    srv = start_server(*args) if IS_REDIS else start_server(*args, "--threads", "4")
    r = srv.client()
    r.execute_command("FUNCTION", "LOAD", "#!lua name=loop\n"
                      "redis.register_function{function_name='spin', callback=function() while true do end end, "
                      "flags={'no-writes'}}")
    with Conn(srv) as runner, Conn(srv) as other:
        runner.send(encode("FCALL", "spin", "0"))
        deadline = time.monotonic() + 5
        busy = b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
        while other.call("PING") != busy:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert other.call("SCRIPT", "KILL").startswith(b"-BUSY")  # a function: FUNCTION KILL
        assert other.call("FUNCTION", "KILL") == b"+OK\r\n"
        assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
        assert other.call("FUNCTION", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"


OTHER = """#!lua name=other
redis.register_function('twice', function(keys, args) return args[1] .. args[1] end)
"""
CLASH = """#!lua name=clash
redis.register_function('setit', function(keys, args) return 1 end)
"""


def names(c):
    return sorted(lib[1].decode() for lib in c.execute_command("FUNCTION", "LIST"))


def test_dump_and_restore_policies(fc):
    load(fc, LIB)
    load(fc, OTHER)
    payload = fc.execute_command("FUNCTION", "DUMP")
    assert payload[-10:-8] == b"\x0a\x00"
    fc.execute_command("FUNCTION", "FLUSH")
    assert fc.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
    assert names(fc) == ["mylib", "other"]
    assert fc.execute_command("FCALL", "twice", 0, "ab") == b"abab"
    # APPEND (the default) refuses a library that exists, and changes nothing.
    assert "Library mylib already exists" in err(fc, "FUNCTION", "RESTORE", payload)
    assert "Library mylib already exists" in err(fc, "FUNCTION", "RESTORE", payload, "APPEND")
    assert fc.execute_command("FUNCTION", "RESTORE", payload, "REPLACE") == b"OK"
    assert names(fc) == ["mylib", "other"]
    # FLUSH: the payload's libraries become the only ones.
    fc.execute_command("FUNCTION", "DELETE", "other")
    one = fc.execute_command("FUNCTION", "DUMP")
    load(fc, OTHER)
    assert fc.execute_command("FUNCTION", "RESTORE", one, "FLUSH") == b"OK"
    assert names(fc) == ["mylib"]
    # A function of another library with the same name: refused, all or nothing.
    fc.execute_command("FUNCTION", "FLUSH")
    load(fc, CLASH)
    assert "Function setit already exists" in err(fc, "FUNCTION", "RESTORE", payload, "REPLACE")
    assert names(fc) == ["clash"]
    # An empty registry dumps to a payload that restores to nothing.
    fc.execute_command("FUNCTION", "FLUSH")
    empty = fc.execute_command("FUNCTION", "DUMP")
    assert fc.execute_command("FUNCTION", "RESTORE", empty) == b"OK"
    assert names(fc) == []


def test_restore_errors(fc):
    load(fc, LIB)
    payload = fc.execute_command("FUNCTION", "DUMP")
    assert "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE." in err(
        fc, "FUNCTION", "RESTORE", payload, "BOGUS")
    assert "unknown subcommand or wrong number of arguments" in err(
        fc, "FUNCTION", "RESTORE", payload, "FLUSH", "x")
    assert "DUMP payload version or checksum are wrong" in err(fc, "FUNCTION", "RESTORE", payload[:-1] + b"\x00")
    assert "DUMP payload version or checksum are wrong" in err(fc, "FUNCTION", "RESTORE", b"x")
    # A key's payload is not a function.
    fc.set("k", "v")
    assert "given type is not a function" in err(fc, "FUNCTION", "RESTORE", fc.dump("k"))
    assert names(fc) == ["mylib"]


def test_payloads_move_between_redis_and_here(fc):
    from conftest import ServerProcess
    ref = ServerProcess(kind="redis")
    try:
        rr = ref.client()
        load(rr, LIB)
        fc.execute_command("FUNCTION", "RESTORE", rr.execute_command("FUNCTION", "DUMP"))
        fc.set("k", "v")
        assert fc.execute_command("FCALL", "getit", 1, "k") == b"v"
        load(fc, OTHER)
        rr.execute_command("FUNCTION", "RESTORE", fc.execute_command("FUNCTION", "DUMP"), "REPLACE")
        assert rr.execute_command("FCALL", "twice", 0, "x") == b"xx"
        rr.close()
    finally:
        ref.stop()
