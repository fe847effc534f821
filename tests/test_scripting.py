# EVAL / EVALSHA / EVAL_RO / EVALSHA_RO and SCRIPT (issue #19): Redis 7.2's
# scripting environment as scripts see it — the redis.* API, the conversions
# between replies and Lua values both ways (RESP2 and RESP3), the errors with
# their exact texts, the sandbox and its globals protection, cjson and bit,
# the #!lua shebang flags — and, with several threads, scripts that touch
# keys they did not declare: they still work and stay atomic. Passes against
# TEST_SERVER=redis too.
import threading
import time

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, encode, rc  # noqa: F401  (fixtures)
from test_atomicity import keys_on_distinct_shards, run_for, sharded  # noqa: F401  (fixture)


def ev(c, script, *keys_and_args, numkeys=0):
    return c.execute_command("EVAL", script, numkeys, *keys_and_args)


def err(c, script, *args, numkeys=0):
    with pytest.raises(redis.ResponseError) as e:
        ev(c, script, *args, numkeys=numkeys)
    return str(e.value)


def test_eval_returns_and_conversions_resp2(rc):
    assert ev(rc, "return 1") == 1
    assert ev(rc, "return 3.99") == 3  # numbers are integers
    assert ev(rc, "return -2.5") == -2
    assert ev(rc, "return 'hello'") == b"hello"
    assert ev(rc, "return true") == 1
    assert ev(rc, "return false") is None
    assert ev(rc, "return nil") is None
    assert ev(rc, "return {1, 'two', {3, 'four'}}") == [1, b"two", [3, b"four"]]
    assert ev(rc, "return {1, nil, 3}") == [1]  # an array ends at its first nil
    assert ev(rc, "return {}") == []
    assert ev(rc, "return redis.status_reply('FINE')") == b"FINE"
    assert ev(rc, "return {ok='fine'}") == b"fine"
    assert ev(rc, "return {double=1.5}") == b"1.5"
    assert ev(rc, "return {map={a=1}}") == [b"a", 1]
    assert ev(rc, "return {set={a=true}}") == [b"a"]
    assert ev(rc, "return KEYS[1] .. ARGV[1] .. #KEYS .. #ARGV", "k", "a", "b", numkeys=1) == b"ka12"


def test_redis_call_replies_become_lua_values(rc):
    rc.execute_command("SET", "s", "v")
    rc.execute_command("RPUSH", "l", "a", "b")
    assert ev(rc, "return redis.call('GET', 's')") == b"v"
    assert ev(rc, "return redis.call('get', 'missing') == false and 'f' or 'x'") == b"f"
    assert ev(rc, "return type(redis.call('set', 'x', 1))") == b"table"
    assert ev(rc, "return redis.call('set', 'x', 1)['ok']") == b"OK"
    assert ev(rc, "return redis.call('incr', 'x') + 10") == 12
    assert ev(rc, "return redis.call('lrange', 'l', 0, -1)") == [b"a", b"b"]
    assert ev(rc, "local r = redis.pcall('incr', 's') return r['err']") == \
        b"ERR value is not an integer or out of range"
    # A number argument is formatted without losing precision (7.2's
    # shortest form; Debian's 7.0 prints %.17g).
    assert ev(rc, "redis.call('set', 'n', 0.1) return redis.call('get', 'n')") in (
        (b"0.1", b"0.10000000000000001") if IS_REDIS else (b"0.1",))
    assert ev(rc, "redis.call('set', 'n', 123456789012) return redis.call('get', 'n')") == b"123456789012"


def test_resp3_conversions_with_setresp(rc):
    rc.execute_command("HSET", "h", "f", "v")
    rc.execute_command("SADD", "st", "m")
    assert ev(rc, "redis.setresp(3) local m = redis.call('hgetall', 'h') return m['map']['f']") == b"v"
    assert ev(rc, "redis.setresp(3) local s = redis.call('smembers', 'st') return tostring(s['set']['m'])") == b"true"
    assert ev(rc, "redis.setresp(3) return redis.call('get', 'nothing') == nil and 1 or 0") == 1
    assert ev(rc, "redis.setresp(3) return tostring(redis.call('zscore', 'nothing', 'x'))") == b"nil"
    rc.execute_command("ZADD", "z", "1.5", "a")
    assert ev(rc, "redis.setresp(3) return redis.call('zscore', 'z', 'a')['double']") == 1  # 1.5 as an integer
    # With RESP3 set by the script, booleans reply as booleans (RESP2 caller: 1 / nil).
    assert ev(rc, "redis.setresp(3) return true") == 1
    assert ev(rc, "redis.setresp(3) return false") == 0
    assert "RESP version must be 2 or 3" in err(rc, "redis.setresp(4)")


def test_resp3_caller(server):
    c = server.client(protocol=3)
    try:
        c.response_callbacks.clear()
        assert c.execute_command("EVAL", "return {map={a=1}}", 0) == {b"a": 1}
        assert c.execute_command("EVAL", "return {double=2.5}", 0) == 2.5
        assert c.execute_command("EVAL", "redis.setresp(3) return true", 0) is True
        assert c.execute_command("EVAL", "return false", 0) is None
    finally:
        c.close()


def test_errors_have_redis_texts(rc):
    rc.execute_command("SET", "s", "v")
    assert err(rc, "return redis.call('nosuch')").startswith("Unknown Redis command called from script script: ")
    assert err(rc, "return redis.call('get')").startswith("Wrong number of args calling Redis command from script")
    assert err(rc, "return redis.call()").startswith("Please specify at least one argument for this redis lib call")
    assert err(rc, "return redis.call('get', {})").startswith(
        "Lua redis lib command arguments must be strings or integers")
    assert err(rc, "return redis.call('eval', 'return 1', 0)").startswith(
        "This Redis command is not allowed from script")
    e = err(rc, "return redis.call('incr', 's')")
    assert e.startswith("value is not an integer or out of range script: ") and e.endswith("on @user_script:1.")
    assert err(rc, "error('boom')").startswith("user_script:1: boom script: ")
    assert err(rc, "return {err='MY err'}") == "MY err"
    assert err(rc, "return redis.error_reply('x')") == "x"
    assert err(rc, "return redis.error_reply('-MY x')") == "MY x"
    assert err(rc, "return (") .startswith("Error compiling script (new function): user_script:1:")
    assert err(rc, "return 1", numkeys=2) == "Number of keys can't be greater than number of args"
    assert err(rc, "return 1", numkeys=-1) == "Number of keys can't be negative"
    assert err(rc, "return 1", numkeys="x") == "value is not an integer or out of range"
    with pytest.raises(redis.exceptions.NoScriptError, match="No matching script. Please use EVAL."):
        rc.execute_command("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0)
    with pytest.raises(redis.exceptions.NoScriptError):
        rc.execute_command("EVALSHA", "abc", 0)
    # pcall gives the message of an error table, not the table (Redis 7).
    assert ev(rc, "local ok, e = pcall(redis.call, 'nosuch') return e") == \
        b"ERR Unknown Redis command called from script"


def test_sandbox_and_globals_protection(rc):
    for script in ("x = 1", "redis.call = 1", "cjson.encode = 1", "bit.band = 1", "string.upper = 1",
                   "math.floor = 1", "table.insert = 1", "_G.y = 2", "struct.pack = 1", "cmsgpack.pack = 1",
                   "coroutine.wrap = 1"):
        assert "Attempt to modify a readonly table" in err(rc, script), script
    for script in ("rawset(_G, 'x', 1)", "setmetatable(_G, {})", "table.insert(redis, 1)",
                   "rawset(redis, 'x', 1)", "getmetatable(_G).__index = nil"):
        assert "Attempt to modify a readonly table" in err(rc, script), script
    assert "Script attempted to access nonexistent global variable 'a'" in err(rc, "return a")
    for name in ("print", "dofile", "loadfile", "io", "require", "debug", "package",
                 "newproxy", "setfenv", "getfenv"):  # (the last three: lua-enable-deprecated-api no)
        assert "nonexistent global variable '%s'" % name in err(rc, "return %s" % name), name
    # The globals are the real table: it can be read and walked, not changed.
    assert ev(rc, "local n = 0 for k in pairs(_G) do n = n + 1 end return n") > 20
    assert ev(rc, "return type(getmetatable(_G).__index)") == b"function"
    # The basic types' metatables are read-only (CVE-2025-46818): no script
    # changes what another's string methods do.
    for script in ("getmetatable('').__index = function() return 1 end",
                   "getmetatable('').__index.upper = 1", "setmetatable(getmetatable(''), {})"):
        assert "Attempt to modify a readonly table" in err(rc, script), script
    for script in ("getmetatable(nil).__index = 1", "getmetatable(1).__index = 1",
                   "getmetatable(true).__index = 1", "getmetatable(type).__index = 1",
                   "getmetatable(coroutine.create(function() end)).__index = 1"):
        assert "attempt to index a nil value" in err(rc, script), script
    # Nothing a script did stays for the next one.
    assert ev(rc, "return type(redis.call)") == b"function"
    assert ev(rc, "return ('abc'):upper()") == b"ABC"
    # Precompiled chunks never load (Redis: the bytes are parsed as text).
    assert ev(rc, "return loadstring(string.dump(function() return 1 end))") is None
    assert "attempt to call a nil value" in err(rc, "return loadstring(string.dump(function() return 1 end))()")
    assert ev(rc, "return loadstring('return 7')()") == 7
    if not IS_REDIS:
        # os has os.clock only (issue #35); Redis 7.0 has no os at all.
        assert ev(rc, "return type(os.clock())") == b"number"
        assert "attempt to call field 'execute' (a nil value)" in err(rc, "return os.execute('true')")
        assert "Attempt to modify a readonly table" in err(rc, "os.exit = 1")


def test_self_referencing_table_replies_an_error(server):
    """A table that holds itself: nested arrays down to the stack limit, then
    an error in place of the rest; the server goes on."""
    with Conn(server) as c:
        c.send(b"*3\r\n$4\r\nEVAL\r\n$30\r\nlocal t = {} t[1] = t return t\r\n$1\r\n0\r\n")
        while not c.buf.endswith(b"-ERR reached lua stack limit\r\n"):
            c._fill()
        assert c.buf.startswith(b"*1\r\n*1\r\n")
        c.buf = b""
        assert c.call("PING") == b"+PONG\r\n"


def test_libraries(rc):
    assert ev(rc, "return cjson.encode({1, 2, 3})") == b"[1,2,3]"
    assert ev(rc, "return cjson.decode('{\"a\":[1,2]}')['a'][2]") == 2
    assert ev(rc, "return bit.band(7, 3)") == 3
    assert ev(rc, "return bit.tohex(255)") == b"000000ff"
    assert ev(rc, "return redis.sha1hex('')") == b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert ev(rc, "return string.format('%05d', 42)") == b"00042"
    assert ev(rc, "return ('x'):rep(3)") == b"xxx"
    assert ev(rc, "return math.floor(2.5)") == 2
    assert ev(rc, "return redis.REDIS_VERSION ~= nil and 1 or 0") == 1
    assert ev(rc, "return redis.breakpoint() and 1 or 0") == 0
    assert ev(rc, "redis.debug('x') redis.set_repl(redis.REPL_ALL) return redis.replicate_commands() and 1 or 0") == 1
    assert ev(rc, "redis.log(redis.LOG_NOTICE, 'from a script') return 1") == 1
    assert "Invalid debug level" in err(rc, "redis.log(9, 'x')")
    assert ev(rc, "return redis.acl_check_cmd('set', 'k', 'v') and 1 or 0") == 1
    assert "Invalid command passed to redis.acl_check_cmd()" in err(rc, "redis.acl_check_cmd('nosuch')")


def test_math_random_is_the_rand48_sequence(rc):
    """Redis's math.random: POSIX's 48-bit generator, the same numbers on
    every platform for a seed."""
    a = ev(rc, "math.randomseed(42) return {math.random(1000), math.random(1000), math.random(1000)}")
    b = ev(rc, "math.randomseed(42) return {math.random(1000), math.random(1000), math.random(1000)}")
    assert a == b and len(a) == 3 and all(1 <= x <= 1000 for x in a)


def test_script_load_exists_flush(rc):
    sha = rc.execute_command("SCRIPT", "LOAD", "return 'loaded'")
    assert sha == b"b534286061d4b9e4026607613b95c06c06015ae8"
    assert rc.execute_command("EVALSHA", sha, 0) == b"loaded"
    assert rc.execute_command("EVALSHA", sha.upper(), 0) == b"loaded"  # any case
    assert rc.execute_command("SCRIPT", "EXISTS", sha, "ffffffffffffffffffffffffffffffffffffffff") == [1, 0]
    assert rc.execute_command("SCRIPT", "EXISTS", sha.upper(), sha[:39]) == [1, 0]  # any case, as Redis
    # EVAL caches its script for EVALSHA.
    ev(rc, "return 'by eval'")
    assert rc.execute_command("EVALSHA", _sha(rc, "return 'by eval'"), 0) == b"by eval"
    assert rc.execute_command("SCRIPT", "FLUSH") == b"OK"
    assert rc.execute_command("SCRIPT", "EXISTS", sha) == [0]
    with pytest.raises(redis.exceptions.NoScriptError):
        rc.execute_command("EVALSHA", sha, 0)
    assert rc.execute_command("SCRIPT", "FLUSH", "ASYNC") == b"OK"
    assert rc.execute_command("SCRIPT", "FLUSH", "sync") == b"OK"
    with pytest.raises(redis.ResponseError, match="SCRIPT FLUSH only support SYNC|ASYNC option"):
        rc.execute_command("SCRIPT", "FLUSH", "x")
    with pytest.raises(redis.ResponseError, match="Error compiling script"):
        rc.execute_command("SCRIPT", "LOAD", "return (")
    with pytest.raises(redis.ResponseError, match="NOTBUSY No scripts in execution right now."):
        rc.execute_command("SCRIPT", "KILL")
    assert rc.execute_command("SCRIPT", "HELP")[0].startswith(b"SCRIPT <subcommand>")


def _sha(rc, body):
    return rc.execute_command("EVAL", "return redis.sha1hex(ARGV[1])", 0, body)


def test_script_loaded_on_one_connection_runs_on_another(server, rc):
    sha = rc.execute_command("SCRIPT", "LOAD", "return redis.call('incr', KEYS[1])")
    for _ in range(8):  # (new connections land on different workers)
        c = server.client()
        try:
            assert c.execute_command("EVALSHA", sha, 1, "counter") > 0
        finally:
            c.close()


def test_shebang_flags_and_read_only_forms(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "k") == b"v"
    e = str(pytest.raises(redis.ResponseError, rc.execute_command, "EVAL_RO",
                          "return redis.call('set', KEYS[1], 'x')", 1, "k").value)
    assert e.startswith("Write commands are not allowed from read-only scripts.")
    assert ev(rc, "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "k", numkeys=1) == b"v"
    assert err(rc, "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')", "k", numkeys=1).startswith(
        "Write commands are not allowed from read-only scripts.")
    e = str(pytest.raises(redis.ResponseError, rc.execute_command, "EVAL_RO",
                          "#!lua\nreturn 1", 0).value)
    assert e == "Can not execute a script with write flag using *_ro command."
    assert err(rc, "#!lua flags=bogus\nreturn 1") == "Unexpected flag in script shebang: bogus"
    assert err(rc, "#!python\nreturn 1") == "Unexpected engine in script shebang: #!python"
    assert err(rc, "#!lua x=1\nreturn 1") == "Unknown lua shebang option: x=1"
    assert err(rc, "#!lua") == "Invalid script shebang"
    # Split as Redis's sdssplitargs: quotes are taken off, unbalanced ones refused.
    assert ev(rc, "#!lua flags='no-writes'\nreturn 1") == 1
    assert err(rc, "#!lua \"unbalanced\nreturn 1") == "Invalid engine in script shebang"
    # Line numbers keep counting the shebang's line.
    assert err(rc, "#!lua\nerror('x')").startswith("user_script:2: x")
    assert ev(rc, "#!lua flags=allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1") == 1


def test_scripts_inside_multi_and_watch(server, rc):
    with Conn(server) as c:
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("EVAL", "return redis.call('incr', KEYS[1])", "1", "n") == b"+QUEUED\r\n"
        assert c.call("EVAL", "return redis.call('incr', KEYS[1])", "1", "n") == b"+QUEUED\r\n"
        assert c.call("EXEC") == b"*2\r\n:1\r\n:2\r\n"
        # A script's write is a write for WATCH.
        assert c.call("WATCH", "n") == b"+OK\r\n"
        ev(rc, "return redis.call('incr', KEYS[1])", "n", numkeys=1)
        assert c.call("MULTI") == b"+OK\r\n"
        assert c.call("PING") == b"+QUEUED\r\n"
        assert c.call("EXEC") == b"*-1\r\n"


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 refuses them in scripts; 7.2 runs them without blocking")
def test_blocking_commands_do_not_block_in_scripts(rc):
    assert ev(rc, "return redis.call('blpop', 'nothing', 0)") is None
    assert ev(rc, "return redis.call('brpoplpush', 'nothing', 'x', 0)") is None
    assert ev(rc, "return redis.call('blmove', 'nothing', 'x', 'left', 'left', 0)") is None
    assert ev(rc, "return redis.call('bzpopmin', 'nothing', 0)") is None


def test_undeclared_keys_on_other_shards_still_work(sharded):
    """Keys a script did not declare, on shards it does not hold: the run
    starts again holding every shard (before it wrote), transparently, and in
    order with what the client sent after it in the same pipeline."""
    r = sharded.client()
    keys = keys_on_distinct_shards("u", 8)
    script = "redis.call('incr', ARGV[1]) return redis.call('get', ARGV[1])"
    with r.pipeline(transaction=False) as p:
        for k in keys:
            p.execute_command("EVAL", script, 0, k)
            p.get(k)
            p.execute_command("EVAL", "return redis.call('get', ARGV[1])", 1, keys[0], k)
        out = p.execute()
    for i, k in enumerate(keys):
        assert out[3 * i] == b"1" and out[3 * i + 1] == b"1" and out[3 * i + 2] == b"1"
    # A script that kept to its keys so far and then, in a pipeline, reads a
    # key of another shard before it writes: that run stops and runs again
    # holding every shard, and the commands after it keep their order.
    for n, k in enumerate(keys):
        script = ("-- %d\nif ARGV[1] ~= '' then redis.call('get', ARGV[1]) end "
                  "return redis.call('incr', KEYS[1])" % n)
        assert r.execute_command("EVAL", script, 1, "c%d" % n, "") == 1
        other = keys[(n + 1) % len(keys)]
        with r.pipeline(transaction=False) as p:
            for _ in range(3):
                p.execute_command("EVAL", script, 1, "c%d" % n, other)
                p.incr("c%d" % n)
            assert p.execute() == [2, 3, 4, 5, 6, 7]


def test_cross_shard_script_transfers_stay_atomic(sharded):
    """Scripts move units between accounts on different shards (declared and
    undeclared) while others sum them in a script: the total never moves."""
    accounts = keys_on_distinct_shards("acct", 4)
    r = sharded.client()
    for a in accounts:
        r.set(a, 1000)
    move_declared = ("local n = tonumber(ARGV[1]) redis.call('decrby', KEYS[1], n) "
                     "redis.call('incrby', KEYS[2], n) return 1")
    move_undeclared = ("local n = tonumber(ARGV[3]) redis.call('decrby', ARGV[1], n) "
                       "redis.call('incrby', ARGV[2], n) return 1")
    total = "local s = 0 for i, k in ipairs(ARGV) do s = s + tonumber(redis.call('get', k)) end return s"
    deadline = time.monotonic() + 3.0
    errors, sums = [], [0]

    def mover(n):
        c = sharded.client()
        i = n
        try:
            while time.monotonic() < deadline:
                a, b = accounts[i % 4], accounts[(i + 1) % 4]
                i += 1
                if i % 2:
                    c.execute_command("EVAL", move_declared, 2, a, b, 3)
                else:
                    c.execute_command("EVAL", move_undeclared, 0, a, b, 5)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    def auditor():
        c = sharded.client()
        try:
            while time.monotonic() < deadline:
                s = c.execute_command("EVAL", total, 0, *accounts)
                if s != 4000:
                    errors.append("sum %r" % s)
                    return
                sums[0] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    run_for([threading.Thread(target=mover, args=(n,)) for n in range(3)] + [threading.Thread(target=auditor)])
    assert not errors, errors[:3]
    assert sums[0] > 0
    assert sum(int(r.get(a)) for a in accounts) == 4000


def test_script_commands_show_in_commandstats(rc):
    rc.execute_command("CONFIG", "RESETSTAT")
    ev(rc, "redis.call('set', 'a', 1) redis.call('get', 'a') return 1")
    stats = rc.execute_command("INFO", "commandstats").decode()
    assert "cmdstat_eval:calls=1" in stats
    assert "cmdstat_set:calls=1" in stats and "cmdstat_get:calls=1" in stats


BUSY = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"


@pytest.fixture
def busy_server(start_server):
    """busy-reply-threshold 100 ms (and several workers: every client
    answers -BUSY, wherever it is served)."""
    args = ["--busy-reply-threshold", "100"]
    return start_server(*args) if IS_REDIS else start_server(*args, "--threads", "4")


def wait_busy(conn, deadline_s=5.0):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if conn.call("PING") == BUSY:
            return
        time.sleep(0.02)
    raise AssertionError("the script never got busy")


def test_busy_script_answers_others_and_can_be_killed(busy_server):
    clients = [Conn(busy_server) for _ in range(4)]
    runner, others = clients[0], clients[1:]
    try:
        for n, body in enumerate(("local i = 0 while true do i = i + 1 end",
                                  # pcall cannot swallow the kill
                                  "while true do pcall(function() while true do end end) end")):
            runner.send(encode("EVAL", body, "0"))
            wait_busy(others[0])
            for c in others:
                assert c.call("GET", "x") == BUSY
                assert c.call("PING") == BUSY
            # Transactions go on (pipelined MULTI ... EXEC is not cut in half),
            # but a refused command dooms them, as in Redis.
            assert others[1].call("MULTI") == b"+OK\r\n"
            assert others[1].call("SET", "x", "1") == BUSY
            assert others[1].call("DISCARD") == b"+OK\r\n"
            assert others[2].call("SCRIPT", "KILL") == b"+OK\r\n"
            reply = runner.read_reply()
            assert reply.startswith(b"-ERR Script killed by user with SCRIPT KILL..."), reply
            for c in clients:
                assert c.call("PING") == b"+PONG\r\n"
        assert others[0].call("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
    finally:
        for c in clients:
            c.close()


def test_busy_script_that_wrote_cannot_be_killed_but_shutdown_nosave_works(busy_server):
    runner, other = Conn(busy_server), Conn(busy_server)
    try:
        runner.send(encode("EVAL", "redis.call('set', KEYS[1], 'v') while true do end", "1", "k"))
        wait_busy(other)
        assert other.call("SCRIPT", "KILL").startswith(
            b"-UNKILLABLE Sorry the script already executed write commands against the dataset.")
        assert other.call("SHUTDOWN") == BUSY
        other.send(encode("SHUTDOWN", "NOSAVE"))
        busy_server.proc.wait(timeout=10)
    finally:
        runner.close()
        other.close()


def test_cmsgpack(rc):
    # The bytes Redis's cmsgpack packs: smallest integers, float32 when exact,
    # str8 from 32 bytes, arrays for tables keyed 1..n, maps otherwise.
    assert ev(rc, "return cmsgpack.pack(1, -1, 128, -33, 65536, -129, 2^40)") == \
        bytes.fromhex("01ff cc80 d0df ce00010000 d1ff7f cf0000010000000000".replace(" ", ""))
    assert ev(rc, "return cmsgpack.pack(1.5, 0.1, true, false)") == \
        bytes.fromhex("ca3fc00000 cb3fb999999999999a c3 c2".replace(" ", ""))
    assert ev(rc, "return cmsgpack.pack('abc', string.rep('x', 40))") == b"\xa3abc\xd9\x28" + b"x" * 40
    assert ev(rc, "return cmsgpack.pack({1, 2, 3}, {})") == b"\x93\x01\x02\x03\x90"
    assert ev(rc, "return cmsgpack.pack({a = 1})") == b"\x81\xa1a\x01"
    # Round trips, and a table that holds itself (nil past 16 levels).
    assert ev(rc, "local t = cmsgpack.unpack(cmsgpack.pack({1, 'two', {x = 'y'}})) return {t[1], t[2], t[3].x}") == \
        [1, b"two", b"y"]
    assert ev(rc, "return {cmsgpack.unpack(cmsgpack.pack(1, 2, 3))}") == [1, 2, 3]
    assert ev(rc, "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}") == [2, 2]
    assert ev(rc, "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}") == [2, 1, 2]
    assert ev(rc, "return {cmsgpack.unpack_one(cmsgpack.pack(7))}") == [-1, 7]
    assert ev(rc, "local t = {} t[1] = t return #cmsgpack.pack(t)") == 17
    assert "Bad data format in input." in err(rc, "return cmsgpack.unpack('\\196')")
    assert "Missing bytes in input." in err(rc, "return cmsgpack.unpack(string.char(0x92, 1))")
    assert "MessagePack pack needs input." in err(rc, "return cmsgpack.pack()")
    assert "Start offset 9 greater than input length 1." in err(rc, "return cmsgpack.unpack_one('a', 9)")


def test_info_memory_counts_scripts(rc):
    from helpers import info_dict
    rc.execute_command("SCRIPT", "FLUSH")
    assert info_dict(rc.execute_command("INFO", "memory"))["number_of_cached_scripts"] == "0"
    rc.execute_command("SCRIPT", "LOAD", "return 'one'")
    ev(rc, "return 'two'")
    info = info_dict(rc.execute_command("INFO", "memory"))
    assert info["number_of_cached_scripts"] == "2"
    assert int(info["used_memory_scripts_eval"]) > 0 and int(info["used_memory_lua"]) > 0


def test_struct(rc):
    assert ev(rc, "return struct.pack('>I2', 258)") == b"\x01\x02"
    assert ev(rc, "return struct.pack('<i4 b B h', -2, -1, 255, -300)") == b"\xfe\xff\xff\xff\xff\xff\xd4\xfe"
    assert ev(rc, "return struct.pack('!4 b i', 1, 2)") == b"\x01\x00\x00\x00\x02\x00\x00\x00"
    assert ev(rc, "return struct.pack('s c3 c0', 'ab', 'xyz', 'hi')") == b"ab\x00xyzhi"
    assert ev(rc, "return {struct.unpack('>I2 b', '\\1\\2\\255')}") == [258, -1, 4]
    assert ev(rc, "return {struct.unpack('<i4', struct.pack('<i4', -123456))}") == [-123456, 5]
    assert ev(rc, "return {struct.unpack('s c2', 'ab\\0xy')}") == [b"ab", b"xy", 6]
    assert ev(rc, "return {struct.unpack('b c0', struct.pack('b c0', 3, 'abc'))}") == [b"abc", 5]
    assert ev(rc, "return struct.size('!8 b d i')") == 20
    assert ev(rc, "return {struct.unpack('>d', struct.pack('>d', 3.25))}")[1] == 9
    assert "invalid format option 'q'" in err(rc, "return struct.pack('q', 1)")
    assert "alignment 3 is not a power of 2" in err(rc, "return struct.pack('!3 b', 1)")
    assert "data string too short" in err(rc, "return struct.unpack('i4', 'ab')")
    assert "offset must be 1 or greater" in err(rc, "return struct.unpack('i', 'abcd', 0)")
    assert "integral size 33 is larger than limit of 32" in err(rc, "return struct.pack('i33', 1)")
    assert "string too short" in err(rc, "return struct.pack('c5', 'ab')")
    assert "unfinished string in data" in err(rc, "return struct.unpack('s', 'abc')")
    assert "format 'c0' needs a previous size" in err(rc, "return struct.unpack('c0', 'abc')")
    assert "option 's' has no fixed size" in err(rc, "return struct.size('s')")
    assert "Attempt to modify a readonly table" in err(rc, "struct.pack = nil")


def test_commands_over_every_shard_from_scripts(sharded):
    """KEYS, DBSIZE, INFO, PUBLISH from a script need every shard (every
    worker's subscribers): the script holds them all (after its first run,
    or by running again), with any key declared or none."""
    r = sharded.client()
    keys = keys_on_distinct_shards("e", 4)
    for k in keys:
        r.set(k, "v")
    for n, k in enumerate(keys):
        script = "-- %d\nredis.call('get', KEYS[1]) return {redis.call('dbsize'), #redis.call('keys', 'e*')}" % n
        for _ in range(3):
            assert r.execute_command("EVAL", script, 1, k) == [4, 4]
    # One that kept to its key so far, then (in a pipeline) asks for every shard.
    script = "if ARGV[1] == 'all' then return redis.call('dbsize') end return redis.call('get', KEYS[1])"
    assert r.execute_command("EVAL", script, 1, keys[1], "one") == b"v"
    with r.pipeline(transaction=False) as p:
        for k in keys:
            p.execute_command("EVAL", script, 1, k, "all")
            p.get(k)
        assert p.execute() == [4, b"v"] * 4
    assert r.execute_command("EVAL", "return redis.call('publish', 'ch', 'm')", 0) == 0
