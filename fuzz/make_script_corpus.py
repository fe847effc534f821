#!/usr/bin/env python3
"""Writes the script fuzzer's seed corpus and dictionary (checked in).

    python3 fuzz/make_script_corpus.py   # rewrites fuzz/corpus/script/ and fuzz/script.dict

A seed is three header bytes and a body (fuzz/script_fuzzer.cc): in text mode
the body is a Lua script sent as it is; in grammar mode it is the stream of
choices the harness's generator turns into a program. The text seeds are the
public reproducers of the CVEs against Redis's Lua (and the classes of
src/scripting/'s own hardening), scripts as real applications write them
(rate limiters, queues, locks, counters, leaderboards), the cases of
tests/test_scripting.py, tests/test_script_hardening.py and
tests/test_functions.py, and one script per library; each is sent through a
few of the harness's paths (EVAL, EVALSHA, FCALL, MULTI, RESP3, two
workers). The grammar seeds are fixed pseudo-random bytes under every header.
File names are the seed's label, so a change shows in review as a changed
file.
"""
import os
import random
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "script")
DICT = os.path.join(HERE, "script.dict")

# Deliveries (byte 0, bits 3-5).
EVAL, EVAL_RO, EVALSHA, EVALSHA_RO, FCALL, FCALL_RO, SHEBANG, MULTI = range(8)


def header(grammar=False, two=False, resp3=False, delivery=EVAL, twice=False, populate=False,
           numkeys=0, nargs=0, deprecated=False, flush=False, numkeys_mode=0,
           keyrot=0, argrot=0, select9=False, variant=False):
    """The harness's three header bytes (see the comment at the top of
    fuzz/script_fuzzer.cc). numkeys_mode: 3 a hostile numkeys, 2 a 1-byte
    maxmemory."""
    b0 = (grammar << 0) | (two << 1) | (resp3 << 2) | (delivery << 3) | (twice << 6) | (populate << 7)
    b1 = numkeys | (nargs << 2) | (deprecated << 4) | (flush << 5) | (numkeys_mode << 6)
    b2 = keyrot | (argrot << 3) | (select9 << 6) | (variant << 7)
    return bytes([b0, b1, b2])


# EVAL's keys and ARGV as the harness picks them (rotation 0): keys k, {a}1,
# l; ARGV 1, 0, -1 (argrot 1: 0, -1, abc; argrot 7: v, nan, -inf).

# --- The CVEs' public reproducers and the hardening classes ---
CVE = {
    # CVE-2024-31449: bit.tohex with INT_MIN digits overflowed a buffer.
    "cve-2024-31449-bit-tohex": "return bit.tohex(65535, -2147483648)",
    "cve-2024-31449-bit-tohex-all": "return {bit.tohex(65535, 2147483647), bit.tohex(65535, -2147483647), "
                                    "bit.tohex(-1, 3), bit.tohex(1, 0), bit.tohex(1, 2^31), bit.tohex(1, 0/0)}",
    # CVE-2025-46817: unpack's element count overflowed.
    "cve-2025-46817-unpack": "return {unpack({1,2,3}, -2, 2147483647)}",
    "cve-2025-46817-unpack-0": "return {unpack({1,2,3}, 0, 2147483647)}",
    "cve-2025-46817-unpack-neg": "return {unpack({1,2,3}, -2147483648, -2)}",
    "cve-2025-46817-unpack-edges": "local function l(t, i, j) local n, v = select('#', unpack(t, i, j)), {unpack(t, i, j)} "
                                   "for k = 1, n do v[k] = v[k] or '_NIL_' end return v end "
                                   "return {l({1,2,3}, -1, 5), l({1,2,3}, -2147483648, -2147483646), "
                                   "l({1,2,3}, 2147483645, 2147483647)}",
    # CVE-2025-49844: load's chunk name freed by a collection in the reader.
    "cve-2025-49844-load-gc": """
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
""",
    # CVE-2025-46819: long-bracket separators and the lexer.
    "cve-2025-46819-long-brackets": "return {loadstring('return [==[x]==]')(), loadstring('return [[a]] .. [=[b]=]')(), "
                                    "loadstring('--[==[ long\\ncomment ]==] return 5')(), "
                                    "select(2, loadstring('return [==x')), select(2, loadstring('return [==[x]=]')), "
                                    "select(2, loadstring('--[[ x'))}",
    "cve-2025-46819-big-separator": "local s = string.rep('=', 1024 * 1024) "
                                    "local code = table.concat({'return [', s, '[x]', s, ']'}) "
                                    "return #loadstring(code)()",
    "cve-2025-46819-many-lines": "local fn, e = loadstring(string.rep('\\n', 4 * 1024 * 1024)) return e",
    # CVE-2025-46818: the basic types' metatables.
    "cve-2025-46818-string-metatable": "getmetatable('').__index = function() return 1 end",
    "cve-2025-46818-string-index": "getmetatable('').__index.rep = nil",
    "cve-2025-46818-others": "local r = {} for _, v in ipairs({1, true, print, coroutine.create(print)}) do "
                             "r[#r + 1] = tostring(pcall(function() getmetatable(v).__index = 1 end)) end return r",
    # CVE-2024-46981: finalizers after SCRIPT FLUSH (with the deprecated API).
    "cve-2024-46981-gc-after-flush": """
for i = 1, 50 do
    local p = newproxy(true)
    getmetatable(p).__gc = function() redis.call('incr', 'gc-ran') error('from a finalizer') end
end
return 1""",
    "cve-2024-46981-gc-now": "local p = newproxy(true) getmetatable(p).__gc = function() error('x') end p = nil "
                             "collectgarbage('collect') return 1",
    # CVE-2022-24834: cjson's output size.
    "cve-2022-24834-cjson-every-byte": "local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end "
                                       "local s = table.concat(t) local e = cjson.encode(s) "
                                       "assert(cjson.decode(e) == s) return e",
    "cve-2022-24834-cjson-escapes": "return #cjson.encode(string.rep('\\1', 1000000))",
    "cve-2022-24834-cjson-big": "local s = string.rep('a', 10000000) return #cjson.encode(s .. s)",
    # CVE-2021-32626: the Lua stack (wide and deep values).
    "cve-2021-32626-wide-args": "local t = {} for i = 1, 7000 do t[i] = i end return redis.call('rpush', 'args', unpack(t))",
    "cve-2021-32626-too-wide": "local t = {} for i = 1, 100000 do t[i] = i end return redis.call('rpush', 'args', unpack(t))",
    "cve-2021-32626-wide-reply": "for i = 1, 100 do redis.call('rpush', 'big', unpack({1,2,3,4,5,6,7,8,9,10})) end "
                                 "return redis.call('lrange', 'big', 0, -1)",
    "cve-2021-32626-deep-reply": "local t = {} local c = t for i = 1, 100 do c[1] = {} c = c[1] end return t",
    "cve-2021-32626-deeper-reply": "local t = {} local c = t for i = 1, 5000 do c[1] = {} c = c[1] end return t",
    # CVE-2020-14147: struct's size parser.
    "cve-2020-14147-struct": "return struct.pack('i99999999999999999', 1)",
    "cve-2020-14147-struct-c": "return struct.pack('c99999999999999999', 'x')",
    "cve-2020-14147-struct-align": "return struct.pack('!99999999999', 1)",
    "cve-2020-14147-struct-unpack": "return struct.unpack('I4294967297', 'abcd')",
    "cve-2020-14147-struct-edges": "return {#struct.pack('>I16', 1), #struct.pack('i0', 1), "
                                   "pcall(struct.pack, 'i33', 1), pcall(struct.unpack, 'c10', 'abc'), "
                                   "struct.unpack('>i2', struct.pack('>i2', -2))}",
    # CVE-2018-11218 / 11219: cmsgpack's stack and lengths.
    "cve-2018-11218-cmsgpack-array32": "return cmsgpack.unpack('\\221\\255\\255\\255\\255')",
    "cve-2018-11218-cmsgpack-map32": "return cmsgpack.unpack('\\223\\255\\255\\255\\255')",
    "cve-2018-11218-cmsgpack-str32": "return cmsgpack.unpack('\\219\\255\\255\\255\\255')",
    "cve-2018-11218-cmsgpack-short": "local r = {} for _, raw in ipairs({'\\196\\255', '\\217\\255', '\\145', "
                                     "'\\129\\001', '\\220\\255\\255', '\\222\\000\\001'}) do "
                                     "r[#r + 1] = tostring(pcall(cmsgpack.unpack, raw)) end return r",
    "cve-2018-11219-cmsgpack-many": "local t = {} for i = 1, 3000 do t[i] = i end "
                                    "return select('#', cmsgpack.unpack(cmsgpack.pack(unpack(t))))",
    "cve-2018-11219-cmsgpack-too-many": "local t = {} for i = 1, 7000 do t[i] = i end return cmsgpack.pack(unpack(t))",
    "cve-2018-11219-cmsgpack-deep": "local t = {} local c = t for i = 1, 10000 do c[1] = {} c = c[1] end "
                                    "return #cmsgpack.pack(t)",
    # CVE-2025-67733: CR/LF in error and status texts.
    "cve-2025-67733-error-crlf": "return redis.error_reply('bad\\r\\n+INJECTED')",
    "cve-2025-67733-status-crlf": "return redis.status_reply('ok\\r\\n+INJECTED')",
    "cve-2025-67733-table-crlf": "return {err = 'x\\r\\n:1', ok = 'y'}",
    # CVE-2015-4335: loadstring of bytecode.
    "cve-2015-4335-bytecode": "return loadstring(string.dump(function() return 1 end))",
    "cve-2015-4335-bytecode-header": "return {loadstring('\\27Lua'), loadstring('\\27LuaQ\\0\\1\\4\\8\\4\\8\\0')}",
    # Self-referencing tables as replies.
    "self-reference-array": "local t = {} t[1] = t return t",
    "self-reference-map": "local t = {} t.map = t return t",
    "self-reference-set": "local t = {} t.set = {} t.set[t] = true return t",
    # lua-maxmemory.
    "maxmemory-array": "local t = {} for i = 1, 1e8 do t[i] = i end return #t",
    "maxmemory-string": "local s = string.rep('x', 2^30) return #s",
    "maxmemory-pcall": "local ok = pcall(function() local t = {} for i = 1, 1e8 do t[i] = i end end) "
                       "return {ok, #string.rep('x', 10)}",
    "maxmemory-concat": "local s = 'x' for i = 1, 40 do s = s .. s end return #s",
    # The instruction limit.
    "endless-loop": "while true do end",
    "endless-pcall": "while true do pcall(function() while true do end end) end",
    "endless-recursion": "local function f() return f() end return f()",
}

# --- Scripts as applications write them ---
APPS = {
    "rate-limiter-fixed-window": """
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if current > tonumber(ARGV[2] or '10') then return 0 end
return 1""",
    "rate-limiter-token-bucket": """
local key = KEYS[1]
local rate = tonumber(ARGV[1]) or 1
local capacity = tonumber(ARGV[2]) or 10
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local data = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(data[1]) or capacity
local ts = tonumber(data[2]) or now
tokens = math.min(capacity, tokens + (now - ts) * rate / 1000)
local allowed = tokens >= 1
if allowed then tokens = tokens - 1 end
redis.call('HSET', key, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', key, math.ceil(capacity / math.max(rate, 0.001) * 1000))
return {allowed and 1 or 0, tostring(tokens)}""",
    "rate-limiter-sliding-window": """
local key = KEYS[1]
local now = tonumber(ARGV[1]) or 0
local window = 60000
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < 100 then
  redis.call('ZADD', key, now, now .. '-' .. math.random(1000000))
  redis.call('PEXPIRE', key, window)
  return 1
end
return 0""",
    "lock-release": """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
else
  return 0
end""",
    "lock-acquire": "return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', 30000)",
    "lock-extend": """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2] or 1000)
end
return 0""",
    "queue-reliable-pop": """
local item = redis.call('RPOPLPUSH', KEYS[1], KEYS[2])
if item then redis.call('HSET', KEYS[3] or 'inflight', item, ARGV[1] or 0) end
return item""",
    "queue-delayed-move": """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] or '+inf', 'LIMIT', 0, 100)
for _, item in ipairs(due) do
  redis.call('ZREM', KEYS[1], item)
  redis.call('LPUSH', KEYS[2], item)
end
return #due""",
    "counter-with-cap": """
local v = redis.call('INCRBY', KEYS[1], ARGV[1] or 1)
if v > 1000 then redis.call('SET', KEYS[1], 1000) v = 1000 end
return v""",
    "leaderboard": """
redis.call('ZINCRBY', KEYS[1], ARGV[1] or 1, ARGV[2] or 'player')
local top = redis.call('ZREVRANGE', KEYS[1], 0, 9, 'WITHSCORES')
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[2] or 'player')
return {rank, top}""",
    "idempotency-key": """
local existing = redis.call('GET', KEYS[1])
if existing then return {1, existing} end
redis.call('SET', KEYS[1], ARGV[1] or 'result', 'EX', 86400)
return {0, ARGV[1]}""",
    "json-document-update": """
local raw = redis.call('GET', KEYS[1])
local doc = raw and cjson.decode(raw) or {}
doc.count = (doc.count or 0) + 1
doc.tags = doc.tags or {}
table.insert(doc.tags, ARGV[1] or 'tag')
doc.nested = {a = {b = {c = cjson.null}}}
local out = cjson.encode(doc)
redis.call('SET', KEYS[1], out)
return out""",
    "msgpack-cache": """
local packed = cmsgpack.pack({id = 1, name = 'x', list = {1, 2, 3}, f = 1.5, neg = -100000, big = 2^40})
redis.call('SET', KEYS[1], packed)
local t = cmsgpack.unpack(redis.call('GET', KEYS[1]))
return {t.id, t.name, #t.list, tostring(t.f), t.neg, tostring(t.big)}""",
    "bloom-filter": """
local bits = 8192
local added = 0
for i = 1, #ARGV do
  local h = redis.sha1hex(ARGV[i])
  for j = 0, 2 do
    local idx = tonumber(string.sub(h, j * 8 + 1, j * 8 + 8), 16) % bits
    added = added + redis.call('SETBIT', KEYS[1] or 'bloom', idx, 1)
  end
end
return added""",
    "hash-to-struct": """
local s = struct.pack('>I4i8dc3', 7, -2, 1.5, 'abc')
redis.call('HSET', KEYS[1] or 'h', 'packed', s)
local a, b, c, d, nxt = struct.unpack('>I4i8dc3', redis.call('HGET', KEYS[1] or 'h', 'packed'))
return {a, b, tostring(c), d, nxt, struct.size('>I4i8dc3')}""",
    "stream-consumer": """
pcall(redis.call, 'XGROUP', 'CREATE', KEYS[1], 'g', '0', 'MKSTREAM')
for i = 1, 5 do redis.call('XADD', KEYS[1], '*', 'n', i) end
local r = redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 3, 'STREAMS', KEYS[1], '>')
local ids = {}
for _, e in ipairs(r[1][2]) do ids[#ids + 1] = e[1] end
redis.call('XACK', KEYS[1], 'g', unpack(ids))
return redis.call('XPENDING', KEYS[1], 'g')""",
    "set-ops": """
redis.call('SADD', KEYS[1], 'a', 'b', 'c')
redis.call('SADD', KEYS[2] or 's2', 'b', 'c', 'd')
return {redis.call('SINTER', KEYS[1], KEYS[2] or 's2'), redis.call('SUNION', KEYS[1], KEYS[2] or 's2'),
        redis.call('SDIFF', KEYS[1], KEYS[2] or 's2')}""",
    "scan-all-keys": """
local cursor = '0'
local n = 0
repeat
  local r = redis.call('SCAN', cursor, 'COUNT', 10)
  cursor = r[1]
  n = n + #r[2]
until cursor == '0'
return n""",
    "resp3-types": """
redis.setresp(3)
redis.call('HSET', 'h3', 'f', 'v')
redis.call('SADD', 's3', 'm')
redis.call('ZADD', 'z3', 1.5, 'a')
return {redis.call('HGETALL', 'h3'), redis.call('SMEMBERS', 's3'), redis.call('ZSCORE', 'z3', 'a'),
        redis.call('GET', 'nothing'), {double = 3.5}, {big_number = '123456789012345678901234567890'},
        {verbatim_string = {format = 'txt', string = 'hello'}}, {map = {a = 1, b = {set = {x = true}}}}, true, false}""",
    "resp3-verbatim": "return {verbatim_string = {format = 'txt', string = 'x'}}",
    "hyperloglog": "redis.call('PFADD', KEYS[1], 'a', 'b', 'c') return redis.call('PFCOUNT', KEYS[1])",
    "geo": "redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'Palermo', 15.087269, 37.502669, 'Catania') "
           "return redis.call('GEODIST', KEYS[1], 'Palermo', 'Catania', 'km')",
    "undeclared-keys": "for i = 1, 20 do redis.call('INCR', 'undeclared:' .. i) end return redis.call('MGET', 'undeclared:1', 'undeclared:20')",
    "data-dependent-key": "local k = redis.call('GET', KEYS[1]) or 'other' return redis.call('INCR', k .. ':x')",
    "write-then-undeclared": "redis.call('SET', KEYS[1], 1) return redis.call('GET', 'somewhere-else')",
    "keys-and-flushall": "redis.call('SET', 'a', 1) local k = redis.call('KEYS', '*') redis.call('FLUSHALL') return k",
    "publish": "return redis.call('PUBLISH', 'channel', ARGV[1] or 'msg')",
    "select-db": "redis.call('SELECT', 5) redis.call('SET', 'in5', 'v') return redis.call('GET', 'in5')",
    "blocking-in-script": "return {redis.call('BLPOP', 'empty', 0), redis.call('BRPOPLPUSH', 'empty', 'x', 0)}",
    "error-texts": "local r = {} for _, c in ipairs({{'nosuch'}, {'get'}, {'get', {}}, {'eval', 'return 1', 0}, "
                   "{'incr', 'h'}}) do r[#r + 1] = redis.pcall(unpack(c)) end return r",
    "pcall-error-table": "local ok, e = pcall(redis.call, 'nosuch') return e",
    "error-with-table": "error({err = 'MY custom error'})",
    "error-plain": "error('boom')",
    "compile-error": "return (",
    "return-types": "return {1, 3.99, -2.5, 'hello', true, false, nil, {1, 'two', {3, 'four'}}, {ok = 'fine'}, "
                    "{double = 1.5}, {map = {a = 1}}, {set = {a = true}}}",
    "sandbox-writes": "local r = {} for _, s in ipairs({'x = 1', 'redis.call = 1', 'cjson.encode = 1', "
                      "'rawset(_G, \"x\", 1)', 'setmetatable(_G, {})', 'table.insert(redis, 1)'}) do "
                      "r[#r + 1] = select(2, pcall(loadstring(s))) end return r",
    "sandbox-reads": "return {pcall(function() return a end), type(getmetatable(_G).__index), os.clock() >= 0, "
                     "pcall(function() return os.execute end)}",
    "math-random": "math.randomseed(42) return {math.random(1000), math.random(1000), math.random(), "
                   "pcall(math.random, 2, 1)}",
    "acl-check": "return {redis.acl_check_cmd('set', 'k', 'v'), pcall(redis.acl_check_cmd, 'nosuch')}",
    "redis-log": "redis.log(redis.LOG_WARNING, 'from a script', 1, nil, {}) return pcall(redis.log, 9, 'x')",
    "sha1hex": "return {redis.sha1hex(''), redis.sha1hex(string.rep('x', 100000)), pcall(redis.sha1hex)}",
    "set-repl": "redis.set_repl(redis.REPL_ALL) redis.set_repl(redis.REPL_NONE) "
                "return {pcall(redis.set_repl, 4), redis.replicate_commands(), redis.breakpoint()}",
    "setresp-junk": "return {pcall(redis.setresp, 4), pcall(redis.setresp, 'x'), pcall(redis.setresp)}",
}

# --- One script per library, with hostile arguments ---
LIBS = {
    "lib-base": """
local r = {}
r[#r + 1] = tostring(tonumber('0x10')) .. tostring(tonumber('z', 36)) .. tostring(tonumber('1e1', 2))
r[#r + 1] = select('#', 1, 2, 3) .. type(nil) .. tostring(rawequal(r, r))
r[#r + 1] = tostring(next({})) .. tostring(rawget({1}, 1)) .. #({pcall(error)})
r[#r + 1] = gcinfo() > 0 and 'gc' or 'nogc'
r[#r + 1] = collectgarbage('count') > 0 and 'count' or 'x'
collectgarbage('step', 100) collectgarbage('setpause', 200) collectgarbage('setstepmul', 200)
r[#r + 1] = tostring(xpcall(function() error('x') end, function(e) return 'handled: ' .. e end))
r[#r + 1] = tostring(select(2, pcall(setmetatable, 1, {})))
r[#r + 1] = _VERSION
for i, v in ipairs({1, 2, nil, 4}) do r[#r + 1] = i end
for k, v in pairs({a = 1}) do r[#r + 1] = k end
return r""",
    "lib-coroutine": """
local co = coroutine.create(function(a, b)
  local c = coroutine.yield(a + b)
  local d, e = coroutine.yield(c * 2)
  return d + e
end)
local r = {}
r[#r + 1] = select(2, coroutine.resume(co, 1, 2))
r[#r + 1] = select(2, coroutine.resume(co, 10))
r[#r + 1] = select(2, coroutine.resume(co, 3, 4))
r[#r + 1] = coroutine.status(co)
r[#r + 1] = select(2, coroutine.resume(co))
local w = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(redis.call('incr', 'co')) end end)
r[#r + 1] = w() + w() + w()
r[#r + 1] = tostring(coroutine.running())
r[#r + 1] = tostring(pcall(coroutine.yield, 1))
return r""",
    "lib-string": """
local s = 'Hello, World'
return {s:byte(1, -1), string.char(72, 105), s:find('World'), s:find('o', 1, true), string.format('%5.2f|%d|%s|%q|%x', 3.14159, 42, 'x', 'a\\0b', 255),
  s:gsub('o', '0'), s:gsub('(%w+)', '<%1>'), s:gsub('%w', {H = 'h'}), s:gsub('.', function(c) return c:upper() end, 3),
  s:len(), s:lower(), s:match('(%a+), (%a+)'), s:rep(3, '-'), s:reverse(), s:sub(-5, -2), s:upper(),
  select(2, pcall(string.dump, print)), #string.dump(function() return 1 end) > 0}""",
    "lib-string-gmatch": "local r = {} for k, v in string.gmatch('a=1, b=2, c=3', '(%w+)=(%w+)') do r[#r + 1] = k .. v end "
                         "for w in ('one two'):gmatch('%a+') do r[#r + 1] = w end return r",
    "lib-string-format-hostile": "local r = {} for _, f in ipairs({'%d', '%5.1s', '%-10q', '%c', '%o', '%e', '%g', "
                                 "'%099.99f', '%#x', '%+d', '% d', '%i', '%u', '%X', '%E', '%G', '%%', '%z', '%', "
                                 "'%10.99d'}) do r[#r + 1] = tostring(select(2, pcall(string.format, f, 2^53))) end return r",
    "lib-string-patterns-hostile": "local r = {} for _, p in ipairs({'[a', '%', '(()', '%b', '%f', '(%1)', '[^]', "
                                   "'((((((((((((((((((((((((((((((((((x))))))))))))))))))))))))))))))))))', '%g', "
                                   "'[%a-z]', '%bxy', '%f[%w]%w+'}) do r[#r + 1] = tostring(select(2, pcall(string.find, "
                                   "'abc xyz', p))) end return r",
    "lib-table": """
local t = {5, 3, 8, 1}
table.sort(t)
table.sort(t, function(a, b) return a > b end)
table.insert(t, 9) table.insert(t, 1, 0) table.remove(t) table.remove(t, 1)
local r = {table.concat(t, ','), table.maxn({[10] = 1}), table.getn(t)}
table.foreach({a = 1}, function(k, v) r[#r + 1] = k end)
table.foreachi({7, 8}, function(i, v) r[#r + 1] = v end)
r[#r + 1] = tostring(pcall(table.sort, {1, 'x', 2}))
r[#r + 1] = tostring(pcall(table.sort, {3, 2, 1}, function(a, b) return true end))
r[#r + 1] = tostring(pcall(table.concat, {1, {}, 3}))
r[#r + 1] = tostring(pcall(table.insert, {}, 1, 2, 3))
r[#r + 1] = tostring(pcall(table.setn, {}, 5))
return r""",
    "lib-math": """
local r = {}
for _, f in ipairs({'abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'deg', 'exp', 'floor', 'frexp', 'log',
                    'log10', 'modf', 'rad', 'sin', 'sinh', 'sqrt', 'tan', 'tanh'}) do
  for _, x in ipairs({0, -0, 1, -1, 0.5, 2^31, -2^31, 2^53, 1e308, -1e308, 1/0, -1/0, 0/0, 4.9e-324}) do
    r[#r + 1] = tostring(math[f](x))
  end
end
r[#r + 1] = tostring(math.atan2(1, 0)) .. tostring(math.fmod(1, 0)) .. tostring(math.ldexp(1, 2^31))
r[#r + 1] = tostring(math.max(1, 0/0, 2)) .. tostring(math.min(0/0, 1)) .. tostring(math.pow(-8, 1/3))
r[#r + 1] = tostring(math.mod(5, -3)) .. math.pi .. math.huge
return r""",
    "lib-cjson": """
local r = {}
r[#r + 1] = cjson.encode({1, 2, 3, {a = {b = cjson.null}}, 'x\\0y', 1.5, -0, 1e300})
r[#r + 1] = tostring(pcall(cjson.encode, {[1] = 1, [1000] = 2}))
cjson.encode_sparse_array(true, 2, 3)
r[#r + 1] = tostring(pcall(cjson.encode, {[1] = 1, [1000] = 2}))
cjson.encode_max_depth(5) cjson.decode_max_depth(5)
r[#r + 1] = tostring(pcall(cjson.decode, '[[[[[[[[[[1]]]]]]]]]]'))
cjson.encode_number_precision(3)
r[#r + 1] = cjson.encode(math.pi)
cjson.encode_invalid_numbers('null') cjson.decode_invalid_numbers(true)
r[#r + 1] = cjson.encode({0/0, 1/0})
r[#r + 1] = tostring(cjson.decode('[NaN, Infinity, -Infinity, 1e400]')[1])
cjson.encode_keep_buffer(false)
local j = cjson.new()
r[#r + 1] = j.encode({x = 1})
r[#r + 1] = tostring(pcall(cjson.decode, '{"a":'))
r[#r + 1] = tostring(pcall(cjson.decode, '"\\\\ud800"'))
r[#r + 1] = tostring(pcall(cjson.decode, '\\0'))
r[#r + 1] = tostring(pcall(cjson.encode, function() end))
r[#r + 1] = tostring(pcall(cjson.encode_sparse_array, 'x'))
r[#r + 1] = tostring(pcall(cjson.encode_max_depth, 0))
r[#r + 1] = tostring(pcall(cjson.encode_number_precision, 15))
return r""",
    "lib-cmsgpack": """
local p = cmsgpack.pack(1, -1, 127, 128, -32, -33, 255, 256, 65535, 65536, 2^32, -2^31 - 1, -2^63, 2^64, 1.5, 0.1,
                        '', string.rep('x', 31), string.rep('x', 32), string.rep('x', 256), string.rep('x', 65536),
                        {}, {1, 2}, {a = 1}, true, false, nil, 0/0, 1/0)
local r = {cmsgpack.unpack(p)}
local off, v = cmsgpack.unpack_one(p)
r[#r + 1] = off
r[#r + 1] = select('#', cmsgpack.unpack_limit(p, 3))
r[#r + 1] = select('#', cmsgpack.unpack_limit(p, 2, 5))
r[#r + 1] = tostring(pcall(cmsgpack.unpack, '\\193'))
r[#r + 1] = tostring(pcall(cmsgpack.unpack, '\\199\\1\\1x'))
r[#r + 1] = tostring(pcall(cmsgpack.unpack_one, p, -1))
r[#r + 1] = tostring(pcall(cmsgpack.unpack_limit, p, -1, 2^31))
r[#r + 1] = tostring(pcall(cmsgpack.pack))
return r""",
    "lib-struct": """
local r = {}
for _, f in ipairs({'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I', 'i1', 'i2', 'i4', 'i8', 'I3', 'I7', 'f', 'd',
                    '<i4', '>i4', '=i4', '!4i1i4', 'x', 'Xi4'}) do
  local ok, s = pcall(struct.pack, f, 1)
  r[#r + 1] = tostring(ok) .. (ok and #s or s)
  r[#r + 1] = tostring(pcall(struct.unpack, f, string.rep('\\255', 16)))
  r[#r + 1] = tostring(pcall(struct.size, f))
end
r[#r + 1] = tostring(pcall(struct.pack, 'c', 'abc'))
r[#r + 1] = tostring(pcall(struct.pack, 's', 'a\\0b'))
r[#r + 1] = tostring(pcall(struct.unpack, 's', 'abc'))
r[#r + 1] = tostring(pcall(struct.unpack, 'c0', 'abc'))
r[#r + 1] = tostring(pcall(struct.unpack, 'i4', 'abcd', 100))
r[#r + 1] = tostring(pcall(struct.unpack, 'i4', 'abcd', -1))
r[#r + 1] = tostring(pcall(struct.size, 's'))
return r""",
    "lib-bit": """
local r = {}
for _, x in ipairs({0, 1, -1, 2^31, -2^31, 2^32, 2^53, 0/0, 1/0, 0x7fffffff, 1.5, -0.5, 2^52 + 0.5}) do
  r[#r + 1] = bit.tobit(x) .. bit.bnot(x) .. bit.band(x, 0xff) .. bit.bor(x, 1) .. bit.bxor(x, x)
  r[#r + 1] = bit.lshift(x, 31) .. bit.rshift(x, 33) .. bit.arshift(x, -1) .. bit.rol(x, 7) .. bit.ror(x, 100)
  r[#r + 1] = bit.bswap(x) .. bit.tohex(x) .. bit.tohex(x, -3) .. bit.tohex(x, 9)
end
return r""",
    "lib-load": """
local r = {}
r[#r + 1] = tostring(loadstring('return 1 + 1')())
r[#r + 1] = tostring(select(2, loadstring('return +')))
local parts = {'return ', '1', ' + ', '2'}
local i = 0
r[#r + 1] = tostring(load(function() i = i + 1 return parts[i] end)())
r[#r + 1] = tostring(select(2, load(function() return {} end)))
r[#r + 1] = tostring(select(2, load('x', 'chunkname')))
r[#r + 1] = tostring(pcall(loadstring(string.rep('(', 300) .. '1' .. string.rep(')', 300))))
return r""",
    "lib-metatables": """
local mt = {__index = function(t, k) return k .. '!' end, __newindex = function(t, k, v) rawset(t, k, v * 2) end,
            __call = function(self, a) return a + 1 end, __tostring = function() return 'T' end,
            __len = function() return 42 end, __eq = function() return true end, __lt = function() return true end,
            __le = function() return false end, __concat = function() return 'cat' end, __unm = function() return 0 end,
            __add = function() return 1 end, __metatable = 'locked'}
local t = setmetatable({}, mt)
t.x = 2
return {t.y, t.x, t(1), tostring(t), #t, t .. 'x', -t, t + 1, getmetatable(t), pcall(setmetatable, t, {}), t < t, t <= t}""",
    "lib-weak-tables": "local t = setmetatable({}, {__mode = 'kv'}) for i = 1, 1000 do t[{}] = {} end "
                       "collectgarbage('collect') local n = 0 for _ in pairs(t) do n = n + 1 end return n",
    "lib-deprecated": "local p = newproxy(true) getmetatable(p).__index = function() return 7 end "
                      "return {p.x, type(getfenv(1)), pcall(setfenv, 1, {})}",
    "lib-setfenv-globals": "setfenv(0, {redis = redis}) return 1",
}

# --- Function libraries (FUNCTION LOAD bodies are made by the harness) ---
FUNCTIONS = {
    "fn-counter": "return redis.call('INCR', KEYS[1] or 'fnc')",
    "fn-args": "return {KEYS, ARGV, ...}",
    "fn-globals": "return {type(redis.register_function), type(redis.setresp), pcall(function() return KEYS end)}",
}

# Which headers each text seed is written with: one worker EVAL, and one
# other path chosen per seed.
VARIANTS = [
    ("", dict()),
    (".2w", dict(two=True, twice=True)),
    (".resp3", dict(resp3=True)),
    (".evalsha", dict(delivery=EVALSHA, twice=True)),
    (".fcall", dict(delivery=FCALL)),
    (".multi", dict(delivery=MULTI, two=True)),
    (".ro", dict(delivery=EVAL_RO)),
    (".shebang", dict(delivery=SHEBANG, keyrot=1)),
    (".fcall-ro", dict(delivery=FCALL_RO, resp3=True)),
    (".populated", dict(populate=True, two=True)),
    (".flush", dict(twice=True, flush=True, delivery=EVALSHA)),
    (".tiny-maxmemory", dict(numkeys_mode=2, delivery=SHEBANG)),
]

# Lua words and fragments for the dictionary.
LUA_WORDS = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local", "nil", "not",
    "or", "repeat", "return", "then", "true", "until", "while", "...", "..", "==", "~=", "<=", ">=", "=", "(", ")",
    "{", "}", "[", "]", ";", ":", ",", ".", "#", "^", "%", "--", "--[[", "]]", "[[", "[==[", "]==]", "[=[", "]=]",
    "\\0", "\\255", "\\n", "\\r\\n", "\\\\", "'", '"', "local function ", "function(...) ", " end", "return ",
    "for i = 1, 10 do ", "while true do ", "repeat until ", "if x then ", "KEYS[1]", "ARGV[1]", "#KEYS", "KEYS",
    "ARGV", "_G", "_VERSION", "self", "setmetatable({}, {__index = ", "__index", "__newindex", "__call",
    "__tostring", "__len", "__eq", "__lt", "__le", "__concat", "__unm", "__add", "__gc", "__mode", "__metatable",
    "'k'", "'v'", "{}", "{1, 2, 3}", "{map = {}}", "{set = {}}", "{err = 'x'}", "{ok = 'x'}", "{double = 1.5}",
    "{big_number = '1'}", "{verbatim_string = {format = 'txt', string = 'x'}}", "ignore_error_stats_update",
    "cjson.null", "redis.LOG_WARNING", "redis.REPL_ALL", "redis.REDIS_VERSION", "redis.REDIS_VERSION_NUM",
    "math.huge", "math.pi", "coroutine.running()", "getmetatable('')",
]
NUMBERS = [
    "0", "-0", "1", "-1", "2^31", "-2^31", "2^31-1", "2^32", "2^53", "2^63", "2^64", "1e308", "-1e308", "1/0", "-1/0",
    "0/0", "0.5", "4.9e-324", "2147483647", "2147483648", "-2147483648", "4294967295", "4294967296",
    "9007199254740993", "9223372036854775807", "9223372036854775808", "0x7fffffff", "0xffffffff", "1e400",
    "99999999999999999", "4294967297", "1e6", "1e7", "7000", "8000",
]
FORMATS = ["%s", "%d", "%i", "%c", "%o", "%u", "%x", "%X", "%e", "%E", "%f", "%g", "%G", "%q", "%a", "%%", "%5.2f",
           "%-99s", "%099d", "%.99f", "%1$s", "%n", "%*d", "%#x", "%+d", "% d"]
PATTERNS = ["%a", "%d", "%s", "%w", "%x", "%p", "%c", "%u", "%l", "%z", "%b()", "%f[%w]", "(.-)", "(a*)", "[^]",
            "[%w_]+", "^(.-)$", "%1", "()", "(()", "[a", ".-", ".*", "+", "?"]
STRUCT = ["<", ">", "=", "!", "!4", "b", "B", "h", "H", "l", "L", "T", "i", "I", "i4", "I8", "i16", "i33", "f", "d",
          "c", "c0", "s", "x", "X", "Xi4"]
MSGPACK_RAW = ["\x90", "\x91", "\x9f", "\x80", "\x81", "\xa0", "\xbf", "\xc0", "\xc1", "\xc2", "\xc3", "\xc4", "\xc5",
               "\xc6", "\xc7", "\xca", "\xcb", "\xcc", "\xcd", "\xce", "\xcf", "\xd0", "\xd3", "\xd4", "\xd9", "\xda",
               "\xdb", "\xdc", "\xdd", "\xde", "\xdf", "\xe0", "\xff", "\xdd\xff\xff\xff\xff", "\xdb\xff\xff\xff\xff"]
REDIS_COMMANDS = [
    "set", "get", "incr", "incrby", "incrbyfloat", "del", "exists", "expire", "pexpire", "ttl", "type", "keys",
    "scan", "dbsize", "select", "swapdb", "flushall", "flushdb", "append", "getrange", "setrange", "strlen", "mset",
    "mget", "setbit", "getbit", "bitcount", "bitop", "bitfield", "lpush", "rpush", "lpop", "rpop", "lrange", "llen",
    "lindex", "lset", "linsert", "lrem", "ltrim", "lmove", "rpoplpush", "blpop", "brpop", "blmove", "hset", "hget",
    "hgetall", "hdel", "hincrby", "hincrbyfloat", "hkeys", "hvals", "hscan", "hrandfield", "sadd", "srem",
    "smembers", "sismember", "scard", "spop", "srandmember", "sinter", "sunionstore", "zadd", "zrange",
    "zrangebyscore", "zrangebylex", "zincrby", "zscore", "zrank", "zrem", "zcard", "zpopmin", "zunionstore",
    "zrandmember", "xadd", "xrange", "xrevrange", "xlen", "xdel", "xtrim", "xread", "xreadgroup", "xgroup", "xack",
    "xpending", "xclaim", "xautoclaim", "xinfo", "pfadd", "pfcount", "pfmerge", "geoadd", "geodist", "geosearch",
    "publish", "ping", "echo", "time", "info", "config", "command", "eval", "evalsha", "script", "function", "fcall",
    "multi", "exec", "watch", "subscribe", "client", "debug", "object", "memory", "sort", "sort_ro", "dump",
    "restore", "rename", "copy", "move", "wait", "shutdown", "hello", "auth", "quit", "reset", "lcs", "getex",
    "getdel", "lpos", "lmpop", "zmpop", "sintercard", "smismember", "zrangestore", "randomkey", "persist", "touch",
    "unlink", "expiretime", "withscores", "limit", "byscore", "bylex", "rev", "nx", "xx", "gt", "lt", "ch", "incr",
    "ex", "px", "keepttl", "mkstream", "maxlen", "count", "streams", "group", "match", "-inf", "+inf", "(1", "[a",
    "*", "$", ">", "~",
]


def lib_words():
    """Every library function, as `name(` and `lib.name(`."""
    libs = {
        "": ["assert", "collectgarbage", "error", "gcinfo", "getmetatable", "ipairs", "load", "loadstring", "next",
             "pairs", "pcall", "rawequal", "rawget", "rawset", "select", "setmetatable", "tonumber", "tostring",
             "type", "unpack", "xpcall", "newproxy", "setfenv", "getfenv"],
        "coroutine": ["create", "resume", "running", "status", "wrap", "yield"],
        "string": ["byte", "char", "dump", "find", "format", "gmatch", "gsub", "len", "lower", "match", "rep",
                   "reverse", "sub", "upper"],
        "table": ["concat", "insert", "maxn", "remove", "sort", "getn", "setn", "foreach", "foreachi"],
        "math": ["abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor", "fmod",
                 "frexp", "ldexp", "log", "log10", "max", "min", "mod", "modf", "pow", "rad", "random", "randomseed",
                 "sin", "sinh", "sqrt", "tan", "tanh"],
        "os": ["clock"],
        "cjson": ["encode", "decode", "encode_keep_buffer", "encode_max_depth", "decode_max_depth",
                  "encode_number_precision", "encode_sparse_array", "encode_invalid_numbers",
                  "decode_invalid_numbers", "new"],
        "cmsgpack": ["pack", "unpack", "unpack_one", "unpack_limit"],
        "struct": ["pack", "unpack", "size"],
        "bit": ["tobit", "tohex", "bnot", "band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "ror",
                "bswap"],
        "redis": ["call", "pcall", "sha1hex", "error_reply", "status_reply", "log", "setresp", "set_repl",
                  "replicate_commands", "breakpoint", "debug", "acl_check_cmd", "register_function"],
    }
    words = []
    for lib, names in libs.items():
        for n in names:
            words.append(n + "(")
            if lib:
                words.append("%s.%s(" % (lib, n))
                if lib == "string":
                    words.append(":%s(" % n)
    return words


def dict_escape(w):
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "\\x%02x" % ord(c) for c in w)


def main():
    shutil.rmtree(CORPUS, ignore_errors=True)
    os.makedirs(CORPUS)
    seeds = {}

    def text(name, script, **h):
        seeds[name] = header(**h) + script.encode("latin-1")

    # Every text seed with EVAL on one worker (keys k, {a}1, l; ARGV 1, 0,
    # -1), and with one more header from VARIANTS, in turn.
    all_scripts = list(CVE.items()) + list(APPS.items()) + list(LIBS.items()) + list(FUNCTIONS.items())
    for i, (name, script) in enumerate(all_scripts):
        h = dict(numkeys=2, nargs=3)
        if name.startswith(("cve-2024-46981", "lib-deprecated", "lib-setfenv")):
            h["deprecated"] = True
        if name.startswith("fn-"):
            h["delivery"] = FCALL
        text(name, script, **h)
        suffix, extra = VARIANTS[1 + i % (len(VARIANTS) - 1)]
        text(name + suffix, script, **{**h, **extra})
    # The CVE-2024-46981 sequence: finalizers pending across SCRIPT FLUSH.
    text("cve-2024-46981-gc-after-flush.flush", CVE["cve-2024-46981-gc-after-flush"], deprecated=True, twice=True,
         flush=True)
    text("resp3-verbatim.resp3", APPS["resp3-verbatim"], resp3=True)
    text("fn-load-time-body", "for i = 1, 10 do redis.log(redis.LOG_WARNING, i) end redis.call('ping')",
         delivery=FCALL, variant=True)
    text("fn-load-time-loop", "while true do end", delivery=FCALL, variant=True)
    text("fn-escape-wrapper", "end) redis.register_function('g', function() return 2 end) (function()",
         delivery=FCALL)
    text("hostile-numkeys", "return {KEYS, ARGV}", numkeys=1, nargs=2, numkeys_mode=3, argrot=0)
    text("hostile-numkeys-big", "return {KEYS, ARGV}", numkeys=1, nargs=2, numkeys_mode=3, argrot=3)
    text("shebang-no-writes-write", "return redis.call('set', 'k', 1)", delivery=SHEBANG, keyrot=1)
    text("shebang-bad-flag", "return 1", delivery=SHEBANG, keyrot=7, argrot=4)
    text("select9-script", "return redis.call('dbsize')", select9=True, populate=True)
    text("two-workers-cross-shard", "return {redis.call('incr', KEYS[1]), redis.call('incr', KEYS[2]), "
         "redis.call('incr', 'undeclared')}", numkeys=2, two=True, twice=True, keyrot=0)
    text("two-workers-keys-all-shards", "redis.call('set', 'a', 1) return redis.call('keys', '*')", numkeys=1,
         two=True, twice=True, delivery=MULTI)

    # Grammar seeds: fixed pseudo-random choice streams under headers that
    # cover every delivery, one and two workers, RESP2 and RESP3.
    rng = random.Random(35)
    for i in range(48):
        delivery = i % 8
        h = header(grammar=True, two=bool(i & 8), resp3=bool(i & 16), delivery=delivery, twice=bool(i & 32),
                   populate=bool(i % 3 == 0), numkeys=i % 4, nargs=(i // 4) % 4, deprecated=bool(i % 5 == 0),
                   flush=bool(i % 7 == 0), keyrot=i % 8, argrot=(i // 8) % 8)
        size = rng.choice([16, 64, 256, 512, 1024, 2048, 4000])
        seeds["grammar-%02d" % i] = h + bytes(rng.randrange(256) for _ in range(size))

    for name, body in seeds.items():
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(body)

    words = LUA_WORDS + lib_words() + NUMBERS + FORMATS + PATTERNS + STRUCT + REDIS_COMMANDS + \
        ["'%s'" % c for c in REDIS_COMMANDS[:40]] + MSGPACK_RAW
    seen = set()
    with open(DICT, "w") as f:
        f.write("# libFuzzer dictionary for fuzz/script_fuzzer.cc (written by make_script_corpus.py)\n")
        for w in words:
            if w in seen:
                continue
            seen.add(w)
            f.write('"%s"\n' % dict_escape(w))
    print("%d seeds in %s, %d dictionary words" % (len(seeds), CORPUS, len(seen)))


if __name__ == "__main__":
    main()
