# Scripts cannot crash the server (issue #35): a test for every class of
# public CVE Redis fixed in its Lua and libraries, with the public reproducer
# or one written from the CVE's description — each answered with an error (or
# Redis's result) while the server stays up — and the limits beyond Redis
# (lua-maxmemory), the interpreters' memory in INFO, SELECT inside scripts,
# redis.acl_check_cmd and lua-enable-deprecated-api. The black-box side of
# what src/scripting/*_test.cc checks at the unit level. Tests marked
# large_memory need several GB and run only with PEREGRINE_LARGE_TESTS=1.
# Passes against TEST_SERVER=redis too (Debian's 7.0.15 carries the fixes),
# except where a test says otherwise.
import os

import pytest
import redis

from conftest import IS_REDIS
from helpers import Conn, rc  # noqa: F401  (fixtures)

class Conn3(Conn):
    """A raw connection in RESP3 to rc's server."""

    def __init__(self, rc):
        kw = rc.connection_pool.connection_kwargs
        super().__init__(type("S", (), {"host": kw["host"], "port": kw["port"]})())
        self.call("HELLO", "3")


large_memory = pytest.mark.skipif(os.environ.get("PEREGRINE_LARGE_TESTS") != "1",
                                  reason="needs several GB (PEREGRINE_LARGE_TESTS=1)")


def ev(c, script, *keys_and_args, numkeys=0):
    return c.execute_command("EVAL", script, numkeys, *keys_and_args)


def err(c, script, *args, numkeys=0):
    with pytest.raises(redis.ResponseError) as e:
        ev(c, script, *args, numkeys=numkeys)
    return str(e.value)


def alive(c):
    assert c.execute_command("PING") == b"PONG"


def test_cve_2024_31449_bit_tohex(rc):
    # The public one-liner: INT_MIN digits made tohex write past its buffer.
    assert ev(rc, "return bit.tohex(65535, -2147483648)") == b"0000FFFF"
    assert ev(rc, "return bit.tohex(65535, 2147483647)") == b"0000ffff"
    assert ev(rc, "return bit.tohex(65535, -2147483647)") == b"0000FFFF"
    assert ev(rc, "return bit.tohex(-1, 3)") == b"fff"
    assert ev(rc, "return bit.tohex(1, 0)") == b""
    alive(rc)


def test_cve_2025_46817_unpack(rc):
    # Redis's own reproducers: far-apart bounds overflowed unpack's count.
    for args in ("-2, 2147483647", "0, 2147483647", "-2147483648, -2"):
        assert "too many results to unpack" in err(rc, "return {unpack({1,2,3}, %s)}" % args)
    assert ev(rc, "return {unpack({1,2,3}, -1, -2)}") == []
    assert ev(rc, "return {unpack({1,2,3}, 1, -1)}") == []
    to_list = ("local function l(t, i, j) local n, v = select('#', unpack(t, i, j)), {unpack(t, i, j)} "
               "for k = 1, n do v[k] = v[k] or '_NIL_' end return v end ")
    assert ev(rc, to_list + "return l({1,2,3}, -1, 5)") == [b"_NIL_", b"_NIL_", 1, 2, 3, b"_NIL_", b"_NIL_"]
    assert ev(rc, to_list + "return l({1,2,3}, -2147483648, -2147483646)") == [b"_NIL_"] * 3
    assert ev(rc, to_list + "return l({1,2,3}, 2147483645, 2147483647)") == [b"_NIL_"] * 3
    alive(rc)


def test_cve_2025_49844_parser_keeps_its_chunk_name(rc):
    # load()'s chunk name is a string nothing else refers to; its reader runs
    # full collections while the parser holds it (the use after free).
    script = """
        local n = 0
        local f, e = load(function()
            n = n + 1
            collectgarbage('collect')
            local junk = {} for i = 1, 200 do junk[i] = string.rep('x', i) .. i end
            collectgarbage('collect')
            if n == 1 then return 'return 1 +' elseif n == 2 then return ' nil' end
            return nil
        end)
        collectgarbage('collect')
        local ok, err = pcall(f)
        return err
    """
    assert b"(load)" in ev(rc, script)
    alive(rc)


def test_cve_2025_46819_lexer_long_brackets(rc):
    assert ev(rc, "return loadstring('return [==[x]==]')()") == b"x"
    assert ev(rc, "return loadstring('return [[a]] .. [=[b]=]')()") == b"ab"
    assert ev(rc, "return loadstring('--[==[ long\\ncomment ]==] return 5')()") == 5
    assert b"invalid long string delimiter" in ev(rc, "return select(2, loadstring('return [==x'))")
    assert b"unfinished long string" in ev(rc, "return select(2, loadstring('return [==[x]=]'))")
    assert b"unfinished long comment" in ev(rc, "return select(2, loadstring('--[[ x'))")
    alive(rc)


@large_memory
def test_cve_2025_46819_gigabyte_separators(rc):
    # Redis's large-memory tests: a separator of 2^30 '=' (the count went
    # negative in an int), and 2^31 newlines (the error before any token).
    assert ev(rc, """
        local s = string.rep('=', 1024 * 1024)
        local t = {} for i = 1, 1024 do t[i] = s end
        local sep = table.concat(t)
        collectgarbage('collect')
        local code = table.concat({'return [', sep, '[x]', sep, ']'})
        collectgarbage('collect')
        return #loadstring(code)()""") == 1
    assert ev(rc, """
        local s = string.rep('\\n', 1024 * 1024)
        local t = {} for i = 1, 2048 do t[#t + 1] = s end
        local fn, e = loadstring(table.concat(t))
        return e""").endswith(b"chunk has too many lines")


def test_cve_2025_46818_basic_type_metatables_are_read_only(rc):
    assert "Attempt to modify a readonly table" in err(rc, "getmetatable('').__index = function() return 1 end")
    assert "Attempt to modify a readonly table" in err(rc, "getmetatable('').__index.rep = nil")
    # The next script still has the real string methods.
    assert ev(rc, "return ('ab'):rep(2)") == b"abab"


@pytest.mark.skipif(IS_REDIS, reason="Debian's redis-server 7.0.15 exits on this script's SCRIPT FLUSH")
def test_cve_2024_46981_collector_after_script_flush(start_server):
    """newproxy's finalizers (only with lua-enable-deprecated-api yes) run at
    whatever time the collector picks: after SCRIPT FLUSH, during another
    script, erroring, calling redis.call outside any script. The server
    goes on (Redis 7.0.15 exits: the reason the API is off by default)."""
    srv = start_server("--lua-enable-deprecated-api", "yes")
    c = srv.client()
    ev(c, """
        for i = 1, 50 do
            local p = newproxy(true)
            getmetatable(p).__gc = function() redis.call('incr', 'gc-ran') error('from a finalizer') end
        end
        return 1""")
    for _ in range(3):
        assert c.execute_command("SCRIPT", "FLUSH") == b"OK"
        assert ev(c, "collectgarbage('collect') return 'after'") == b"after"
    ev(c, "local p = newproxy(true) getmetatable(p).__gc = function() error('x') end p = nil "
          "collectgarbage('collect') return 1")
    assert c.execute_command("PING") is True
    assert ev(c, "return type(getfenv) .. type(setfenv)") == b"functionfunction"


def test_cve_2022_24834_cjson_escapes_and_sizes(rc):
    # Every byte through the encoder (the worst case is six bytes out per
    # byte in: the size computation that overflowed).
    out = ev(rc, "local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end "
                 "local s = table.concat(t) local e = cjson.encode(s) "
                 "assert(cjson.decode(e) == s) return e")
    assert out.startswith(b'"\\u0000\\u0001') and b'\\/' in out
    assert ev(rc, "return #cjson.encode(string.rep('\\1', 1000000))") == 6000002
    assert ev(rc, "return #cjson.encode(string.rep('a', 10000000))") == 10000002
    alive(rc)


@large_memory
def test_cve_2022_24834_cjson_string_over_2gb(rc):
    # Redis's large-memory test.
    assert ev(rc, "local s = string.rep('a', 1024 * 1024 * 1024) return #cjson.encode(s .. s .. s)") == 3221225474


def test_cve_2021_32626_lua_stack(rc):
    """Wide and deep values between replies and Lua: nothing is pushed past
    the Lua stack."""
    rc.execute_command("RPUSH", "big", *range(50000))
    rc.execute_command("RPUSH", "big", *range(50000))
    assert ev(rc, "return #redis.call('lrange', KEYS[1], 0, -1)", "big", numkeys=1) == 100000
    assert len(ev(rc, "return redis.call('lrange', KEYS[1], 0, -1)", "big", numkeys=1)) == 100000
    # As many arguments as Lua's C stack takes, and more.
    assert ev(rc, "local t = {} for i = 1, 7000 do t[i] = i end "
                  "return redis.call('rpush', 'args', unpack(t))") == 7000
    assert "too many results to unpack" in err(rc, "local t = {} for i = 1, 100000 do t[i] = i end "
                                                   "return redis.call('rpush', 'args', unpack(t))")
    # A reply nested deeper than Lua's stack: an error, not an overflow.
    assert ev(rc, "local t = {} local c = t for i = 1, 500 do c[1] = {} c = c[1] end return 1") == 1
    nested = ev(rc, "local t = {} local c = t for i = 1, 100 do c[1] = {} c = c[1] end return t")
    depth = 0
    while isinstance(nested, list) and nested:
        nested, depth = nested[0], depth + 1
    assert depth == 100
    alive(rc)


def test_cve_2020_14147_struct(rc):
    # Sizes that overflowed struct's number parser (and wrote past a buffer).
    for fmt in ("i99999999999999999", "c99999999999999999", "!99999999999", "I4294967297"):
        assert "integral size overflow" in err(rc, "return struct.pack('%s', 1)" % fmt), fmt
        assert "integral size overflow" in err(rc, "return struct.unpack('%s', 'abcd')" % fmt), fmt
    assert ev(rc, "return #struct.pack('>I16', 1)") == 16
    assert ev(rc, "return #struct.pack('i0', 1)") == 0
    assert "integral size 33 is larger than limit of 32" in err(rc, "return struct.pack('i33', 1)")
    assert "data string too short" in err(rc, "return struct.unpack('c10', 'abc')")
    assert "data string too short" in err(rc, "return struct.unpack('i4', 'ab')")
    assert ev(rc, "return {struct.unpack('>i2', struct.pack('>i2', -2))}") == [-2, 3]
    alive(rc)


def test_cve_2018_11218_and_11219_cmsgpack(rc):
    # Many values at once (stack), huge declared lengths (reads past the input).
    assert ev(rc, "local t = {} for i = 1, 3000 do t[i] = i end return #cmsgpack.pack(unpack(t))") > 3000
    assert ev(rc, "local t = {} for i = 1, 3000 do t[i] = i end "
                  "return select('#', cmsgpack.unpack(cmsgpack.pack(unpack(t))))") == 3000
    assert "Too many arguments for MessagePack pack" in err(rc, "local t = {} for i = 1, 7000 do t[i] = i end "
                                                            "return cmsgpack.pack(unpack(t))")
    # (Lua 5.1 strings: decimal escapes.) array32, map32, str32 of 2^32-1
    # elements or bytes; bin8 (refused); str8; an array and a map cut short.
    for raw in ("\\221\\255\\255\\255\\255", "\\223\\255\\255\\255\\255", "\\219\\255\\255\\255\\255",
                "\\196\\255", "\\217\\255", "\\145", "\\129\\001"):
        r = rc.execute_command("EVAL", "local ok, e = pcall(cmsgpack.unpack, '%s') return tostring(ok)" % raw, 0)
        assert r in (b"false", b"true"), raw
    assert "Missing bytes in input" in err(rc, "return cmsgpack.unpack('\\221\\255\\255\\255\\255')")
    # Deep nesting packs as nil past 16 levels (Redis's rule), never overflowing.
    assert ev(rc, "local t = {} local c = t for i = 1, 10000 do c[1] = {} c = c[1] end "
                  "return #cmsgpack.pack(t)") > 0
    alive(rc)


def test_error_tables_with_metamethods_and_huge_replies(rc):
    # The error table is the script's: its metamethods never run where
    # nothing protects them (Redis 7.0.15 dies on this one).
    if not IS_REDIS:
        e = err(rc, "error(setmetatable({}, {__index = function() error('boom') end}))")
        assert e.startswith("unknown error script: "), e
        alive(rc)
        # A reply past 64 MB reaches no script (it would be cut short).
        rc.execute_command("SADD", "s", "a", "b")
        assert "too large for a script" in err(rc, "return #redis.call('srandmember', 's', -100000000000)")
        alive(rc)


def test_script_fuzzer_findings(rc):
    """What the script fuzzer found (fuzz/regressions/script/): numbers out
    of int range where the API takes an int, string.rep of 2^31 times, and a
    verbatim string whose format is not three bytes."""
    assert "Invalid debug level" in err(rc, "redis.log(-1e308, 'x')")
    assert "Invalid replication flags" in err(rc, "redis.set_repl(1e308)")
    assert "RESP version must be 2 or 3" in err(rc, "redis.setresp(0/0)")
    assert ev(rc, "return string.rep('x', 2^31)") == b""
    assert ev(rc, "return #string.rep('', 2^31 - 1)") == 0  # (at once: nothing is appended)
    # u - l + 1 wraps in Redis's int arithmetic (x86): the interval's width is 0
    assert ev(rc, "return math.random(-2^31, 2^31 - 1)") == -2147483648
    assert ev(rc, "local t = {} table.insert(t, 0, 'x') return {#t, t[0], t[1] == nil}") == [0, b"x", 1]
    # string.format's unsigned conversions give x86-64's results for numbers
    # out of range (the plain cast is undefined behaviour in C)
    cases = ["1e25", "-1e25", "-1", "0/0", "2^63", "2^64", "2^64 - 2^11", "-2^63 - 2^12", "1/0", "-1/0",
             "2^63 + 2^11"]
    got = ev(rc, "local r = {} for _, e in ipairs(ARGV) do local n = loadstring('return ' .. e)() "
                 "r[#r + 1] = string.format('%x %d %o', n, n, n) end return r", *cases)
    assert got == [b"0 -9223372036854775808 0",
                   b"8000000000000000 -9223372036854775808 1000000000000000000000",
                   b"ffffffffffffffff -1 1777777777777777777777",
                   b"8000000000000000 -9223372036854775808 1000000000000000000000",
                   b"8000000000000000 -9223372036854775808 1000000000000000000000",
                   b"0 -9223372036854775808 0",
                   b"fffffffffffff800 -9223372036854775808 1777777777777777774000",
                   b"8000000000000000 -9223372036854775808 1000000000000000000000",
                   b"0 -9223372036854775808 0",
                   b"8000000000000000 -9223372036854775808 1000000000000000000000",
                   b"8000000000000800 -9223372036854775808 1000000000000000004000"]
    if not IS_REDIS:  # (both crash Redis 7.0.15: match() recursed without a limit)
        assert "pattern too complex" in err(rc, "return string.find(string.rep('a', 300), string.rep('a?', 300))")
        assert "pattern too complex" in err(rc, "return string.gsub(string.rep('a', 300), string.rep('a-', 250) .. '$', '')")
        assert ev(rc, "return string.find(string.rep('a', 150), string.rep('a?', 150))") == 1
    if not IS_REDIS:  # (Redis copies three bytes whatever the format's length)
        with Conn3(rc) as c:
            assert c.call("EVAL", "redis.setresp(3) return {verbatim_string = {format = '', string = 'x'}}", "0") \
                == b"=5\r\n   :x\r\n"
    alive(rc)


def test_reply_strings_carry_no_newlines(rc):
    # CVE-2025-67733: a script's error or status text with CR/LF must not
    # cut the protocol (the rest would read as another reply).
    assert err(rc, "return redis.error_reply('bad\\r\\n+INJECTED')") == "bad  +INJECTED"
    assert ev(rc, "return redis.status_reply('ok\\r\\n+INJECTED')") == b"ok  +INJECTED"
    alive(rc)


@pytest.mark.skipif(IS_REDIS, reason="lua-maxmemory is Peregrine's")
def test_lua_maxmemory_stops_a_script_that_passes_it(start_server):
    srv = start_server("--threads", "2")
    c = srv.client()
    assert c.config_get("lua-maxmemory") == {"lua-maxmemory": "0"}
    c.config_set("lua-maxmemory", "8mb")
    assert c.config_get("lua-maxmemory") == {"lua-maxmemory": "8388608"}
    for script in ("local t = {} for i = 1, 1e8 do t[i] = i end return #t",
                   "return #string.rep('x', 100 * 1024 * 1024)",
                   # its own pcall does not keep it going
                   "local ok = pcall(function() local t = {} for i = 1, 1e8 do t[i] = i end end) "
                   "local t = {} for i = 1, 10 do t[i] = i end return 'went on'"):
        with pytest.raises(redis.ResponseError, match=r"Script exceeded lua-maxmemory \(8388608 bytes\)"):
            c.eval(script, 0)
        info = c.info("memory")
        assert int(info["used_memory_vm_eval"]) < 4 * 1024 * 1024, info["used_memory_vm_eval"]
        assert c.eval("return 'fine'", 0) == b"fine"
    # Functions' interpreter too, at load and at call.
    with pytest.raises(redis.ResponseError, match="lua-maxmemory"):
        c.execute_command("FUNCTION", "LOAD", "#!lua name=big\nlocal t = {} for i = 1, 1e8 do t[i] = i end\n"
                          "redis.register_function('f', function() return 1 end)")
    c.execute_command("FUNCTION", "LOAD", "#!lua name=grow\nredis.register_function('grow', function() "
                      "local t = {} for i = 1, 1e8 do t[i] = i end end)")
    with pytest.raises(redis.ResponseError, match="lua-maxmemory"):
        c.execute_command("FCALL", "grow", 0)
    c.config_set("lua-maxmemory", "0")
    assert c.eval("local t = {} for i = 1, 1e6 do t[i] = i end return #t", 0) == 1000000
    assert c.ping()


@pytest.mark.skipif(IS_REDIS, reason="Peregrine's split of the interpreters' memory")
def test_info_reports_each_interpreter(start_server):
    srv = start_server("--threads", "1")
    c = srv.client()
    info = c.info("memory")
    assert info["used_memory_vm_eval"] == 0 and info["used_memory_vm_functions"] == 0
    c.eval("return 1", 0)
    c.execute_command("FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function() return 1 end)")
    info = c.info("memory")
    vm_eval, vm_fn = int(info["used_memory_vm_eval"]), int(info["used_memory_vm_functions"])
    assert vm_eval > 10000 and vm_fn > 10000
    assert int(info["used_memory_vm_total"]) == vm_eval + vm_fn
    assert info["used_memory_lua"] == info["used_memory_vm_eval"]
    assert int(info["number_of_functions"]) == 1 and int(info["number_of_libraries"]) == 1
    assert int(info["used_memory_functions"]) > 0
    assert int(info["used_memory_scripts"]) == int(info["used_memory_scripts_eval"]) + int(info["used_memory_functions"])
    # SCRIPT FLUSH gives the scripts' interpreter back (a new one is made at the next script).
    c.execute_command("SCRIPT", "FLUSH")
    assert c.info("memory")["used_memory_vm_eval"] == 0


def test_select_inside_a_script_changes_only_the_script_db(rc):
    assert ev(rc, "redis.call('select', 5) redis.call('set', 'in5', 'v') return redis.call('get', 'in5')") == b"v"
    assert rc.execute_command("GET", "in5") is None  # the caller is still in db 0
    rc.execute_command("SELECT", 5)
    try:
        assert rc.execute_command("GET", "in5") == b"v"
        # The next script starts in its caller's db again.
        assert ev(rc, "return redis.call('get', 'in5')") == b"v"
    finally:
        rc.execute_command("SELECT", 0)
    assert "DB index is out of range" in err(rc, "return redis.call('select', 99999)")


def test_acl_check_cmd_asks_the_scripts_user(start_server):
    srv = start_server()
    admin = srv.client()
    admin.execute_command("ACL", "SETUSER", "reader", "on", "nopass", "~*", "+@read", "+eval", "+select")
    c = srv.client(username="reader", password="x")
    assert c.eval("return redis.acl_check_cmd('get', 'k')", 0) == 1
    assert c.eval("return redis.acl_check_cmd('set', 'k', 'v')", 0) is None
    with pytest.raises(redis.ResponseError, match="Invalid command passed to redis.acl_check_cmd"):
        c.eval("return redis.acl_check_cmd('nosuch')", 0)
