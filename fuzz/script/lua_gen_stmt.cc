// The script fuzzer's Lua generator (script/lua_gen.h): programs and
// statements.
#include "script/lua_gen.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "script/lua_gen_data.h"

namespace peregrine_fuzz {

// --- Statements ---

std::string LuaGen::Program() {
  std::string s = "local v1, v2, v3, v4, v5\nlocal f1, f2, f3\n";
  for (int i = 1; i <= 3; i++)
    if (!Spent() && in_.ConsumeBool()) s += "v" + std::to_string(i) + " = " + Expr() + "\n";
  s += Block(12);
  s += "return " + Returns() + "\n";
  return s;
}

std::string LuaGen::Block(size_t max) {
  if (block_depth_ >= kMaxBlockDepth) max = std::min<size_t>(max, 1);
  const size_t scope = scope_.size();
  block_depth_++;
  std::string s;
  const size_t n = Spent() ? 0 : Pick(max + 1);
  for (size_t i = 0; i < n && !Spent(); i++) s += Stmt() + ";\n";
  block_depth_--;
  scope_.resize(scope);
  return s;
}

std::string LuaGen::Stmt() {
  nodes_++;
  switch (Pick(24)) {
    case 0:
    case 1:
      return Target() + " = " + Expr();
    case 2:
    case 3:
    case 4:
      return LibCall();
    case 5:
      return RedisCall();
    case 6: {
      std::string s = "if " + Expr() + " then\n" + Block(4);
      if (in_.ConsumeBool()) s += "elseif " + Expr() + " then\n" + Block(3);
      if (in_.ConsumeBool()) s += "else\n" + Block(3);
      return s + "end";
    }
    case 7: {  // a numeric for with small bounds
      static constexpr const char* kFrom[] = {"1", "0", "(-2)", "3", "#KEYS", "0.5"};
      static constexpr const char* kTo[] = {"3", "10", "0", "1", "(-1)", "#ARGV", "2.5", "100", "1000"};
      static constexpr const char* kStep[] = {"", ", 1", ", 2", ", -1", ", 0.5", ", 3"};
      const std::string v = Name('i');
      // (Long loops only outermost.)
      const std::string to = kTo[Pick(Once() ? std::size(kTo) : std::size(kTo) - 2)];
      std::string head = "for " + v + " = " + PickOf(kFrom) + ", " + to + PickOf(kStep) + " do\n";
      return head + LoopBody(v);
    }
    case 8: {  // a bounded while
      const std::string n = Name('n');
      static constexpr const char* kLimit[] = {"3", "10", "1", "100", "1000"};
      return "do local " + n + " = 0 while " + n + " < " + kLimit[Pick(Once() ? 5 : 3)] + " do " + n + " = " + n +
             " + 1\n" + LoopBody(n) + " end";
    }
    case 9: {  // a generic for
      const std::string k = Name('k'), v = Name('e');
      std::string iter;
      switch (Pick(6)) {
        case 0: iter = "pairs(" + Expr() + ")"; break;
        case 1: iter = "ipairs(" + Expr() + ")"; break;
        case 2: iter = "string.gmatch(" + Subject(Pattern()) + ")"; break;
        case 3: iter = "next, " + Expr(); break;
        case 4: iter = "coroutine.wrap(" + Func() + ")"; break;
        default: iter = Expr() + ", " + Expr(); break;
      }
      scope_.push_back(k);
      scope_.push_back(v);
      loop_depth_++;
      std::string s = "for " + k + ", " + v + " in " + iter + " do\n" + Block(4) + "end";
      loop_depth_--;
      scope_.resize(scope_.size() - 2);
      return s;
    }
    case 10:  // pcall / xpcall around statements
      if (in_.ConsumeBool())
        return "local " + Fresh() + ", " + Fresh() + " = pcall(function(...)\n" + Block(5) + "end, " + Args(2) + ")";
      return "xpcall(function()\n" + Block(5) + "end, " + Handler() + ")";
    case 11:  // a field of a table
      return Prefix() + "[" + Expr() + "] = " + Expr();
    case 12:
      return Protected();
    case 13:
      return "f" + std::to_string(1 + Pick(3)) + " = " + Func();
    case 14:
      return Recursion();
    case 15:
      return "do return " + Returns() + " end";
    case 16: {
      const std::string v = Name('t');
      std::string s = "local " + v + " = " + Expr();
      scope_.push_back(v);
      return s;
    }
    case 17:
      switch (Pick(3)) {
        case 0: return "collectgarbage(" + std::string(PickOf(kGcOptions)) + ", " + PickOf(kSmall) + ")";
        case 1: return "error(" + ErrorValue() + ", " + PickOf(kSmall) + ")";
        default: return "assert(" + Expr() + ", " + ErrorValue() + ")";
      }
    case 18: {  // a coroutine, resumed a few times
      const std::string c = Name('c');
      std::string s = "local " + c + " = coroutine.create(" + Func() + ")";
      scope_.push_back(c);
      for (size_t i = 0, n = 1 + Pick(3); i < n; i++) s += " coroutine.resume(" + c + ", " + Args(2) + ")";
      return s;
    }
    case 19: {
      const std::string n = Name('n');
      return "do local " + n + " = 0 repeat " + n + " = " + n + " + 1\n" + LoopBody(n) + " until " + n +
             " >= " + PickOf(kSmall) + " or " + n + " > " + (Once() ? "1000" : "10") + " end";
    }
    case 20:
      if (loop_depth_ > 0) return "do break end";
      return RedisCall();
    case 21:
      return "local " + Fresh() + ", " + Fresh() + " = " + LibCall();
    case 22:
      return Once() ? Special() : RedisCall();
    default:
      return Call() + "(" + Args(3) + ")";
  }
}

std::string LuaGen::LoopBody(const std::string& var) {
  scope_.push_back(var);
  loop_depth_++;
  std::string s = Block(4);
  loop_depth_--;
  scope_.pop_back();
  return s + "end";
}

std::string LuaGen::Fresh() {
  const std::string v = Name('t');
  scope_.push_back(v);
  return v;
}

std::string LuaGen::Var() {
  const size_t n = 5 + scope_.size();
  const size_t i = Pick(n + 5);
  if (i < 5) return "v" + std::to_string(i + 1);
  if (i < n) return scope_[i - 5];
  static constexpr const char* kOther[] = {"KEYS", "ARGV", "KEYS[1]", "ARGV[1]", "..."};
  return kOther[i - n];
}

std::string LuaGen::Target() {
  switch (Pick(5)) {
    case 0: return "v" + std::to_string(1 + Pick(5));
    case 1: return scope_.empty() ? "v1" : scope_[Pick(scope_.size())];
    case 2: return "v" + std::to_string(1 + Pick(5)) + "." + One({"x", "n", "map", "err", "ok", "__index"});
    case 3: return "f" + std::to_string(1 + Pick(3));
    default: return "v" + std::to_string(1 + Pick(5)) + "[" + Expr() + "]";
  }
}

std::string LuaGen::Prefix() {
  switch (Pick(4)) {
    case 0: return "v" + std::to_string(1 + Pick(5));
    case 1: return "(" + Expr() + ")";
    case 2: return scope_.empty() ? "v3" : scope_[Pick(scope_.size())];
    default: return std::string("(") + PickOf(kThings) + ")";
  }
}

// Writes to what the sandbox protects, and reads of what it hides.
std::string LuaGen::Protected() {
  static constexpr const char* kTargets[] = {
      "_G.x", "x", "string.rep", "getmetatable('').__index", "getmetatable('').x", "redis.call", "redis",
      "KEYS", "ARGV", "cjson.encode", "math.pi", "bit.band", "_G._G", "_G.redis.call", "KEYS[1]",
      "getmetatable('').__index.rep", "getmetatable('').__metatable", "cjson.null", "table.sort",
      "coroutine.yield", "pcall", "_G.pcall", "_VERSION", "struct.pack", "cmsgpack.unpack",
      "redis.REDIS_VERSION", "getmetatable(_G).__index", "getmetatable(_G).__newindex"};
  static constexpr const char* kCalls[] = {
      "rawset(_G, 'x', 1)", "setmetatable(_G, nil)", "setmetatable(string, {})", "rawset(string, 'rep', nil)",
      "table.insert(_G, 1)", "table.sort(string)", "table.remove(redis)", "table.setn(math, 5)",
      "rawset(getmetatable(''), '__index', {})", "setmetatable(getmetatable(''), {})",
      "rawset(KEYS, 1, 'x')", "table.insert(KEYS, 'x')", "setfenv(1, {})", "setfenv(0, {})",
      "setfenv(2, {})", "setfenv(print, {})", "getfenv(0).x = 1", "getfenv(1).x = 1",
      "require('os')", "os.exit(1)", "io.write('x')", "debug.sethook()", "loadfile('/etc/passwd')",
      "dofile('/etc/passwd')", "print('x')", "module('x')", "rawset(_G.redis, 'call', print)",
      "setmetatable(KEYS, {__index = function() return 'x' end})", "getmetatable(_G).__index = nil"};
  if (in_.ConsumeBool()) return std::string(PickOf(kTargets)) + " = " + Expr();
  return PickOf(kCalls);
}

// Recursion: deep Lua calls, deep C calls (pcall, metamethods, sort,
// gsub, tostring, coroutines), and both unbounded.
std::string LuaGen::Recursion() {
  static constexpr const char* kDepths[] = {"10", "(0/0)", "(-1)", "100", "199", "200", "250", "1000", "8000",
                                            "20000", "1e6", "(1/0)"};
  const std::string r = Name('r');
  const std::string d = kDepths[Pick(Once() ? std::size(kDepths) : 3)];  // (deep ones run once)
  scope_.push_back(r);
  Nest in_function(&fn_depth_);
  switch (Pick(9)) {
    case 0:
      return "local function " + r + "(n, ...) if n > 0 then return " + r + "(n - 1) end return " + Expr() + " end " +
             r + "(" + d + ")";
    case 1:
      return "local function " + r + "(n, ...) if n > 0 then return pcall(" + r + ", n - 1) end return " + Expr() +
             " end " + r + "(" + d + ")";
    case 2:
      return "local " + r + " = setmetatable({}, {}) getmetatable(" + r + ").__index = function(t, k) return t[k] end "
             "local _ = " + r + ".x";
    case 3:
      return "local " + r + " = setmetatable({}, {}) getmetatable(" + r +
             ").__tostring = function(t) return tostring(t) end local _ = tostring(" + r + ")";
    case 4:
      return "local function " + r + "(n) local t = {3, 1, 2} table.sort(t, function(a, b) if n > 0 then " + r +
             "(n - 1) end return a < b end) return t end " + r + "(" + d + ")";
    case 5:
      return "local function " + r + "(n) return (string.gsub('ab', '.', function(c) if n > 0 then return " + r +
             "(n - 1) end return c end)) end " + r + "(" + d + ")";
    case 6:
      return "local function " + r + "(n) if n <= 0 then return 1 end local co = coroutine.create(" + r +
             ") return coroutine.resume(co, n - 1) end " + r + "(" + d + ")";
    case 7:
      return "local " + r + " = setmetatable({}, {__call = function(self, n) if n > 0 then return self(n - 1) end "
             "return 1 end}) " + r + "(" + d + ")";
    default:
      return "local function " + r + "(n) if n > 0 then return " + r + "(n - 1) .. " + r +
             "(n - 1) end return 'x' end " + r + "(" + One({"10", "20", "24", "30"}) + ")";
  }
}

// Known hard cases, written out.
std::string LuaGen::Special() {
  static constexpr const char* kSpecials[] = {
      // CVE-2025-49844: load's reader collects while the parser runs.
      "local n = 0 local f = load(function() n = n + 1 collectgarbage('collect') "
      "local junk = {} for i = 1, 20 do junk[i] = string.rep('x', i) .. i end collectgarbage('collect') "
      "if n == 1 then return 'return 1 +' elseif n == 2 then return ' nil' end return nil end) "
      "collectgarbage('collect') pcall(f)",
      "local f = loadstring(string.dump(function() return 1 end))",
      "local s = string.dump(function(a) return a end) local f = loadstring(s:sub(1, 12) .. s:sub(13))",
      "local p = newproxy(true) getmetatable(p).__gc = function() redis.call('incr', 'gc') error('in gc') end p = nil "
      "collectgarbage('collect')",
      "for i = 1, 20 do local p = newproxy(true) getmetatable(p).__gc = function() redis.call('incr', 'gc') end end",
      "local p = newproxy(true) getmetatable(p).__gc = function() coroutine.yield() end",
      "local p = newproxy(true) getmetatable(p).__index = function(t, k) return redis.call('get', k) end "
      "local _ = p.k",
      "local t = setmetatable({}, {__mode = 'k'}) for i = 1, 100 do t[{}] = i end collectgarbage('collect')",
      "local t = setmetatable({}, {__mode = 'v'}) t[1] = {} collectgarbage('collect')",
      "local co = coroutine.create(function() redis.call('set', 'co', 1) coroutine.yield(redis.call('get', 'co')) "
      "error('in co') end) coroutine.resume(co) coroutine.resume(co) coroutine.resume(co)",
      "local co = coroutine.wrap(function(...) for i = 1, 3 do coroutine.yield(pcall(redis.call, 'incr', 'c')) end end) "
      "co() co() co() pcall(co) pcall(co)",
      "local co co = coroutine.create(function() return coroutine.resume(co) end) coroutine.resume(co)",
      "pcall(coroutine.yield, 1)",
      "local t = {} for i = 1, 7000 do t[i] = i end pcall(redis.call, 'rpush', 'args', unpack(t))",
      "local t = {} for i = 1, 3000 do t[i] = i end local p = cmsgpack.pack(unpack(t)) cmsgpack.unpack(p)",
      "local t = {} local c = t for i = 1, 10000 do c[1] = {} c = c[1] end cmsgpack.pack(t) pcall(cjson.encode, t)",
      "local t = {} t[1] = t t.x = t pcall(cjson.encode, t) cmsgpack.pack(t)",
      "local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end local s = table.concat(t) "
      "assert(cjson.decode(cjson.encode(s)) == s)",
      "cjson.encode_sparse_array(true, 1, 1) cjson.encode({[1000] = 1})",
      "cjson.encode_max_depth(1000) cjson.decode_max_depth(100000) pcall(cjson.decode, string.rep('[', 100000))",
      "cjson.encode_number_precision(14) cjson.encode_invalid_numbers('null') cjson.encode({0/0, 1/0, -1/0})",
      "local s = string.rep('x', 1e6) local t = {} for i = 1, 40 do t[i] = s end local _ = table.concat(t)",
      "local s = string.rep('a', 1e6) local _ = s .. s .. s .. s .. s .. s .. s .. s",
      "local t = {} for i = 1, 1e7 do t[i] = i end",
      "collectgarbage('stop') local t = {} for i = 1, 1e5 do t[i] = {} end collectgarbage('restart')",
      "collectgarbage('setpause', 0) collectgarbage('setstepmul', 1e9) collectgarbage('step', 1e9)",
      "redis.setresp(3) local r = redis.call('hgetall', 'h') local s = redis.call('smembers', 's')",
      "redis.setresp(3) pcall(redis.call, 'zscore', 'z', 'a') pcall(redis.call, 'debug', 'protocol', 'verbatim')",
      "local r = redis.pcall('nosuch') local e = r.err",
      "for i = 1, 50 do redis.call('rpush', 'big', string.rep('v', 100)) end",
      "redis.call('select', 5) redis.call('set', 'in5', 'v') redis.call('swapdb', 0, 5)",
      "local ok = pcall(redis.call, 'set', 'k' .. math.random(1000), 'v') local _ = redis.call('get', 'k' .. "
      "math.random(1000))",
      "local r = redis.call('keys', '*') local d = redis.call('dbsize')",
      "redis.call('del', unpack(redis.call('keys', '*')))",
      "getmetatable('').__index = function() return 1 end",
      "local mt = getmetatable('') local i = mt.__index i.x = 1",
      "setmetatable(_G, {__index = function() return 1 end})",
      "local a = {} local b = {} setmetatable(a, {__index = b}) setmetatable(b, {__index = a}) local _ = a.x",
      "local t = setmetatable({}, {__newindex = function(t, k, v) t[k] = v end}) t.x = 1",
      "local t = setmetatable({}, {__len = function() return 1e9 end, __index = function() return 1 end}) "
      "local _ = unpack(t)",
      "local t = {n = 2^31} pcall(table.insert, t, 1) pcall(table.getn, t) table.setn(t, 2)",
      "local t = {} t[2^53] = 1 t[-1] = 1 t[0] = 1 table.insert(t, 1) table.remove(t) table.remove(t, 2^31)",
      "local t = {3, 2, 1} table.sort(t, function(a, b) return true end)",
      "local t = {} for i = 1, 100 do t[i] = 101 - i end table.sort(t, function(a, b) t[a] = nil return a < b end)",
      "local t = {} for i = 1, 100 do t[i] = i end table.sort(t, function(a, b) error({}) end)",
      "local t = {1, 'x', {}, true} pcall(table.sort, t) pcall(table.concat, t)",
      "string.format('%s %s', setmetatable({}, {__tostring = function() return {} end}), 1)",
      "tostring(setmetatable({}, {__tostring = function() error('ts') end}))",
      "error(setmetatable({}, {__tostring = function() return redis.call('ping').ok end}))",
      "error(setmetatable({}, {__tostring = function() error('again') end}))",
      "error({err = 'custom'})",
      "error({err = 'x', ignore_error_stats_update = true})",
      "error(coroutine.create(print))",
      "error()",
      "error(nil, 2^31)",
      "local s = string.rep('a', 12) string.find(s, string.rep('a-', 6) .. 'b')",
      "string.rep('x', 2^31)",
      "string.rep(string.rep('x', 1e6), 1e6)",
      "string.format('%99999999d', 1)",
      "string.format('%' .. string.rep('9', 100) .. 'd', 1)",
      "string.char(256) string.char(-1)",
      "local b = string.byte(string.rep('x', 1e6), 1, -1)",
      "unpack({1, 2, 3}, -2, 2147483647)",
      "unpack({1, 2, 3}, 0, 2147483647)",
      "unpack({1, 2, 3}, -2147483648, -2)",
      "unpack({}, 1, 1e6)",
      "select(-1, 1, 2)",
      "select(2^31, 1)",
      "bit.tohex(65535, -2147483648)",
      "bit.tohex(-1, 2^31)",
      "struct.pack('i99999999999999999', 1)",
      "struct.pack('c99999999999999999', 'x')",
      "struct.pack('!99999999999')",
      "struct.unpack('I4294967297', 'abcd')",
      "struct.pack('>I16', 1) struct.pack('i0', 1) struct.unpack('c0', '')",
      "struct.unpack('s', 'abc')",
      "struct.pack('c', string.rep('x', 1e6))",
      "cmsgpack.unpack('\\221\\255\\255\\255\\255')",
      "cmsgpack.unpack('\\223\\255\\255\\255\\255')",
      "cmsgpack.unpack('\\219\\255\\255\\255\\255')",
      "cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2^31, 2^31)",
      "cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)",
      "tonumber('0x', 16) tonumber('1e1', 36) tonumber('zz', 36) tonumber('', 10) tonumber('  ')",
      "local f = loadstring(string.rep('(', 300) .. '1' .. string.rep(')', 300))",
      "local f = loadstring('return ' .. string.rep('{', 300) .. string.rep('}', 300))",
      "local f = loadstring(string.rep('a = 1\\n', 10000))",
      "local f = loadstring('local a' .. string.rep(', a', 300))",
      "local f = loadstring('return [' .. string.rep('=', 1e5) .. '[x]' .. string.rep('=', 1e5) .. ']')",
      "local f = loadstring('return \"' .. string.rep('\\\\300', 10) .. '\"')",
      "redis.call('set', string.rep('k', 1e5), string.rep('v', 1e6))",
      "redis.call('setrange', 'k', 2^31, 'x')",
      "redis.call('setbit', 'b', 2^32, 1)",
      "redis.call('hset', 'h', 'f', 'v') redis.call('expire', 'h', 0)",
      "redis.call('xadd', 'x', '*', 'f', 'v') redis.call('xgroup', 'create', 'x', 'g', '0')",
      "redis.call('lpush', 'l', unpack(redis.call('keys', '*')))",
      "local r = redis.call('eval', 'return 1', 0)",
      "local r = redis.pcall('fcall', 'f', 0)",
      "local r = redis.call('blpop', 'nosuch', 0)",
      "local r = redis.call('brpoplpush', 'nosuch', 'l', 0)",
      "local r = redis.pcall('xread', 'block', 0, 'streams', 'x', '$')",
      "local r = redis.pcall('wait', 0, 0)",
      "local r = redis.pcall('client', 'pause', 1000)",
      "local r = redis.pcall('debug', 'sleep', 1)",
      "local r = redis.pcall('function', 'load', '#!lua name=x\\nredis.register_function(\"x\", function() end)')",
      "local r = redis.pcall('multi') local e = redis.pcall('exec')",
      "redis.set_repl(redis.REPL_ALL) redis.set_repl(4) ",
      "redis.replicate_commands() redis.breakpoint() redis.debug('x', {})",
      "local ok = redis.acl_check_cmd('set', 'k', 'v') local e = pcall(redis.acl_check_cmd, 'nosuch')",
      "redis.log(redis.LOG_WARNING, 'x', {}, nil, 1)",
      "local h = redis.sha1hex(string.rep('x', 1e6))",
      "local x = math.random() math.randomseed(2^31) math.random(2^31, 2^31) math.random(-2^31, 2^31 - 1)",
      "local _ = math.floor(-0.0) .. math.fmod(1, 0) .. math.fmod(-1/0, 1) .. math.ldexp(1, 2^31) .. "
      "math.frexp(0/0) .. math.log(-1) .. tostring(-0.0)",
      "local _ = 2^53 % 0 .. 1 % 0 .. (-1) % (1/0) .. 5 % -0",
      "local _ = #string.format('%5.1q', '\\0\\n\\r') .. string.format('%q', string.rep('\\0', 100))",
      "local _ = string.format('%d %i %c %o %u %x %X', 2^63, -2^63, 2^31, 1e308, -1, 0/0, 1/0)",
      "local _ = string.format('%e %E %f %g %G', 1e308, -1e308, 0/0, 1/0, 4.9e-324)",
      "local _ = string.format('%099.99f', 1e308)",
      "local _ = ('x'):rep(10):upper():lower():reverse():len()",
      "local _ = string.gsub(string.rep('a', 1000), '', '%0%0')",
      "local _ = string.gsub('abc', '(a)(b)(c)', '%4')",
      "local _ = string.gsub('abc', '%w', '%')",
      "local _ = string.gsub('abc', '%w', {a = {}, b = 1})",
      "local _ = string.gsub('abc', '%w', function() return {} end)",
      "local _ = string.find('abc', '%f[%w]%w+', -1e9) .. string.find('abc', 'b', 2^31, true)",
      "local _ = string.match(string.rep('(', 50), string.rep('%(', 33))",
      "local _ = string.match('x', string.rep('(', 33) .. string.rep(')', 33))",
      "local _ = string.match('x', '%b')",
      "local _ = string.match('x', '[%')",
      "for k in string.gmatch(string.rep('a', 1e5), 'a*') do end",
      "local _ = string.sub('abc', -2^31, 2^31) .. string.sub('abc', 0/0) .. string.byte('abc', -1e308, 1e308)",
      "local _ = tostring(nil) .. tostring(1e308) .. tostring(-0) .. tostring(0/0) .. tostring(cjson.null)",
      "local _ = getmetatable('').__index.rep('x', 3)",
      "local _ = select('#', cjson.decode('[1,2,3]')) .. #cjson.decode('\"\\\\u0000\\\\ud800\"')",
      "local _ = cjson.decode('{\"a\":[1,{\"b\":null}],\"c\":1e400,\"d\":-0,\"e\":\"\\\\ud83d\\\\ude00\"}')",
      "local j = cjson.new() j.encode_keep_buffer(false) local _ = j.encode({1, 2, {a = j.null}})",
      "local _ = cmsgpack.unpack(cmsgpack.pack({1, 2, {a = 1, b = {}}, 1.5, -1, 2^40, 'x', true, false, nil}))",
      "local _ = cmsgpack.pack(0/0, 1/0, -1/0, -0.0, 2^64, -2^63, 1e308, 1e-308, 2^31, -2^31-1)",
      "local _ = struct.unpack('<i8>I2!4bBhHlLTfdcsx', string.rep('\\255', 100))",
      "local _ = struct.size('!8i1d')",
      "local _ = bit.band(0/0, 1/0, 2^53, -2^53) .. bit.lshift(1, 2^31) .. bit.rol(1, -1) .. bit.bswap(2^32)",
  };
  return PickOf(kSpecials);
}

}  // namespace peregrine_fuzz
