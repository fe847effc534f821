#include "scripting/lua_convert.h"

#include <lua.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>
#include <string>

#include "core/numbers.h"
#include "protocol/reply.h"

namespace peregrine::lua_convert {

// --- Errors as Redis 7 raises them: a table {err = "CODE message"} ---

// Pushes the error table for `error` ("-CODE msg", or "msg" which gets the
// code ERR), as Redis's luaPushErrorBuff.
void PushErrorTable(lua_State* L, std::string_view error, bool from_command) {
  std::string code = "ERR", msg;
  if (!error.empty() && error[0] == '-') {
    const size_t sp = error.find(' ');
    if (sp == std::string_view::npos) {
      msg = std::string(error.substr(1));
    } else {
      code = std::string(error.substr(1, sp - 1));
      msg = std::string(error.substr(sp + 1));
    }
  } else {
    msg = std::string(error);
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.erase(0, 1);
  const std::string final_msg = code + " " + msg;
  luaL_checkstack(L, 3, "reached lua stack limit");
  lua_createtable(L, 0, 2);
  lua_pushstring(L, "err");
  lua_pushlstring(L, final_msg.data(), final_msg.size());
  lua_settable(L, -3);
  if (from_command) {
    // Counted in the error statistics when the command replied it.
    lua_pushstring(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_settable(L, -3);
  }
}

std::string NoNewlines(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (ch == '\r' || ch == '\n') ch = ' ';
  return out;
}

// --- RESP reply -> Lua value (Redis's redisProtocolToLuaType) ---
//
// CVE-2021-32626: a reply can be as wide or as deep as a command makes it;
// every value is pushed only after a check that the Lua stack has room for
// what one level pushes (5 slots at most), and nesting stops at
// kMaxReplyDepth, with a Lua error ("reached lua stack limit", where Redis
// panics) rather than a write past the stack. A length is never trusted
// past the bytes there (a reply cut at ReplyWriter::kMaxRequestSized keeps
// its header's count).

static constexpr int kMaxReplyDepth = 1000;

// The line at p (up to CRLF, or to the end without one) and where the next
// item starts.
static std::string_view Line(const char*& p, const char* end) {
  const std::string_view rest(p, static_cast<size_t>(end - p));
  const size_t crlf = rest.find("\r\n");
  if (crlf == std::string_view::npos) {
    p = end;
    return rest;
  }
  p += crlf + 2;
  return rest.substr(0, crlf);
}

static int64_t LineInt(std::string_view s) {
  int64_t v = 0;
  ParseInt64(s, &v);
  return v;
}

// p advanced by n bytes, at most to end.
static const char* Advance(const char* p, const char* end, uint64_t n) {
  return n < static_cast<uint64_t>(end - p) ? p + n : end;
}

// Skips the reply at p (and, for an aggregate, everything in it, without
// recursion); returns where the next one starts.
static const char* SkipReply(const char* p, const char* end) {
  uint64_t pending = 1;  // replies still to skip
  auto add = [&pending](int64_t n, uint64_t per) {
    if (n <= 0) return;
    // (saturating: the bytes run out long before)
    const uint64_t more = static_cast<uint64_t>(n) > (UINT64_MAX - pending) / per ? UINT64_MAX - pending
                                                                                   : static_cast<uint64_t>(n) * per;
    pending += more;
  };
  while (pending > 0 && p < end) {
    pending--;
    const char type = *p++;
    const std::string_view line = Line(p, end);
    switch (type) {
      case '$':
      case '=':
      case '!': {
        const int64_t n = LineInt(line);
        if (n >= 0) p = Advance(p, end, static_cast<uint64_t>(n) + 2);
        break;
      }
      case '*':
      case '>':
      case '~': add(LineInt(line), 1); break;
      case '%': add(LineInt(line), 2); break;
      case '|':  // attributes, then the reply they describe
        add(LineInt(line), 2);
        if (pending < UINT64_MAX) pending++;
        break;
      default: break;  // a one-line reply
    }
  }
  return p;
}

// How many slots to reserve for n elements of which each takes at least
// `min_bytes` of what is left (never more than the bytes can hold).
static int Presize(int64_t n, const char* p, const char* end, int64_t min_bytes) {
  if (n <= 0) return 0;
  return static_cast<int>(std::min<int64_t>({n, (end - p) / min_bytes, INT32_MAX}));
}

static const char* PushValue(lua_State* L, const char* p, const char* end, int depth) {
  if (depth > kMaxReplyDepth || !lua_checkstack(L, 5)) {  // (a verbatim string pushes 5)
    lua_settop(L, 0);  // (room to raise the error; it unwinds them anyway)
    luaL_error(L, "reached lua stack limit");
  }
  if (p >= end) {
    lua_pushnil(L);
    return end;
  }
  const char type = *p++;
  const std::string_view line = Line(p, end);
  switch (type) {
    case '+':
      lua_createtable(L, 0, 1);
      lua_pushstring(L, "ok");
      lua_pushlstring(L, line.data(), line.size());
      lua_settable(L, -3);
      return p;
    case '-':
      PushErrorTable(L, "-" + std::string(line), true);
      return p;
    case ':':
      lua_pushnumber(L, static_cast<lua_Number>(LineInt(line)));
      return p;
    case '(':
      lua_createtable(L, 0, 1);
      lua_pushstring(L, "big_number");
      lua_pushlstring(L, line.data(), line.size());
      lua_settable(L, -3);
      return p;
    case ',': {
      double d = 0;
      ParseDouble(line, &d);
      lua_createtable(L, 0, 1);
      lua_pushstring(L, "double");
      lua_pushnumber(L, d);
      lua_settable(L, -3);
      return p;
    }
    case '#':
      lua_pushboolean(L, line == "t");
      return p;
    case '_':
      lua_pushnil(L);
      return p;
    case '$':
    case '=': {
      const int64_t n = LineInt(line);
      if (n < 0) {  // a null bulk string
        lua_pushboolean(L, 0);
        return p;
      }
      const std::string_view bytes(p, static_cast<size_t>(Advance(p, end, static_cast<uint64_t>(n)) - p));
      p = Advance(p, end, static_cast<uint64_t>(n) + 2);
      if (type == '$') {
        lua_pushlstring(L, bytes.data(), bytes.size());
      } else {  // verbatim: "fmt:text"
        const std::string_view format = bytes.substr(0, 3);
        const std::string_view text = bytes.substr(std::min<size_t>(bytes.size(), 4));  // (never a null pointer)
        lua_createtable(L, 0, 1);
        lua_pushstring(L, "verbatim_string");
        lua_createtable(L, 0, 2);
        lua_pushstring(L, "string");
        lua_pushlstring(L, text.data(), text.size());
        lua_settable(L, -3);
        lua_pushstring(L, "format");
        lua_pushlstring(L, format.data(), format.size());
        lua_settable(L, -3);
        lua_settable(L, -3);
      }
      return p;
    }
    case '*':
    case '>': {
      const int64_t n = LineInt(line);
      if (n < 0) {  // a null array
        lua_pushboolean(L, 0);
        return p;
      }
      lua_createtable(L, Presize(n, p, end, 3), 0);  // (an element takes 3 bytes or more)
      for (int64_t i = 1; i <= n && p < end && i <= INT32_MAX; i++) {
        p = PushValue(L, p, end, depth + 1);
        lua_rawseti(L, -2, static_cast<int>(i));  // (a nil element leaves a hole, as in Redis)
      }
      return p;
    }
    case '%':
    case '~': {
      const int64_t n = LineInt(line);
      lua_createtable(L, 0, 1);
      lua_pushstring(L, type == '%' ? "map" : "set");
      lua_createtable(L, 0, Presize(n, p, end, type == '%' ? 6 : 3));
      for (int64_t i = 0; i < n && p < end; i++) {
        p = PushValue(L, p, end, depth + 1);
        if (type == '%')
          p = PushValue(L, p, end, depth + 1);
        else
          lua_pushboolean(L, 1);
        lua_settable(L, -3);  // (a nil key raises "table index is nil", as in Redis)
      }
      lua_settable(L, -3);
      return p;
    }
    case '|': {  // attributes: skipped, then the reply they describe
      const int64_t n = LineInt(line);
      for (int64_t i = 0; i < 2 * std::min<int64_t>(n, INT64_MAX / 2) && p < end; i++) p = SkipReply(p, end);
      return PushValue(L, p, end, depth);
    }
    default:
      lua_pushnil(L);
      return end;
  }
}

// Pushes the reply at p (or, with push false, only skips it); returns
// where the next one starts.
const char* PushReply(lua_State* L, const char* p, const char* end, bool push) {
  return push ? PushValue(L, p, end, 0) : SkipReply(p, end);
}

// --- Lua value -> reply (Redis's luaReplyToRedisReply) ---
//
// It runs outside any protected call (on the script's result), where a Lua
// error aborts the process; so it makes none: what could allocate (the
// stack it needs, the field names it looks up) is made ready first in a
// protected call (Prepare), and the walk itself only reads (rawget, next,
// rawgeti). A table that holds itself, or one nested past kMaxReplyDepth,
// replies "reached lua stack limit" at that depth.

namespace {

// The field names a table reply is looked up by, in a table of the
// registry (under &kFieldNamesKey) so that pushing one allocates nothing.
char kFieldNamesKey;
enum Field { kErr = 1, kOk, kDoubleField, kBigNumber, kVerbatim, kFormat, kString, kMap, kSet, kIgnoreStats };
constexpr const char* kFieldNames[] = {"err",    "ok",  "double", "big_number", "verbatim_string", "format",
                                       "string", "map", "set",    "ignore_error_stats_update"};

// The most slots one level of the walk holds (a map: its table, a key, a
// value and the key's copy), and what a whole walk may need.
constexpr int kSlotsPerLevel = 4;
constexpr int kWalkStack = kSlotsPerLevel * (kMaxReplyDepth + 2) + 8;

// Through lua_cpcall: grows the stack for a walk and makes the field names'
// table; sets *ud (a bool) once both are done.
int Prepare(lua_State* L) {
  bool* ready = static_cast<bool*>(lua_touserdata(L, 1));
  if (!lua_checkstack(L, kWalkStack)) return 0;
  lua_pushlightuserdata(L, &kFieldNamesKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_isnil(L, -1)) {
    lua_pushlightuserdata(L, &kFieldNamesKey);
    lua_createtable(L, static_cast<int>(std::size(kFieldNames)), 0);
    for (size_t i = 0; i < std::size(kFieldNames); i++) {
      lua_pushstring(L, kFieldNames[i]);
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  *ready = true;
  return 0;
}

// Field `f` of the table at the top, pushed (raw access; names: the stack
// index of the field names' table).
int RawField(lua_State* L, int names, Field f) {
  lua_rawgeti(L, names, f);
  lua_rawget(L, -2);
  return lua_type(L, -1);
}

// The number of pairs of the table at the top.
size_t PairCount(lua_State* L) {
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    n++;
  }
  return n;
}

// A number as Redis replies it, (long long)n, with the value x86-64 gives
// where that cast is undefined: NaN, infinities and numbers out of range
// are -2^63.
int64_t ReplyInteger(lua_Number n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(n >= -kTwo63 && n < kTwo63)) return INT64_MIN;
  return static_cast<int64_t>(n);
}

void Walk(lua_State* L, ReplyWriter& reply, int script_resp, int depth, int names);

void WalkTable(lua_State* L, ReplyWriter& reply, int script_resp, int depth, int names) {
  if (RawField(L, names, kErr) == LUA_TSTRING) {
    const std::string msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    const bool counted = RawField(L, names, kIgnoreStats) == LUA_TBOOLEAN && lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (counted)
      reply.ErrorCounted(msg);
    else
      reply.Error(msg);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, names, kOk) == LUA_TSTRING) {
    reply.SimpleString(NoNewlines(lua_tostring(L, -1)));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, names, kDoubleField) == LUA_TNUMBER) {
    reply.Double(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, names, kBigNumber) == LUA_TSTRING) {
    size_t len;
    const char* s = lua_tolstring(L, -1, &len);
    reply.BigNumber(NoNewlines(std::string_view(s, len)));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, names, kVerbatim) == LUA_TTABLE) {
    bool done = false;
    if (RawField(L, names, kFormat) == LUA_TSTRING) {
      size_t format_len;
      const char* format = lua_tolstring(L, -1, &format_len);
      lua_pushvalue(L, -2);  // the verbatim table again
      if (RawField(L, names, kString) == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, -1, &len);
        reply.Verbatim(std::string_view(s, len), std::string_view(format, format_len).substr(0, 3));
        done = true;
      }
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
    if (done) {
      lua_pop(L, 1);
      return;
    }
  }
  lua_pop(L, 1);
  if (RawField(L, names, kMap) == LUA_TTABLE) {
    reply.MapHeader(PairCount(L));
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pushvalue(L, -2);
      Walk(L, reply, script_resp, depth + 1, names);  // the key
      Walk(L, reply, script_resp, depth + 1, names);  // the value
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (RawField(L, names, kSet) == LUA_TTABLE) {
    reply.SetHeader(PairCount(L));
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      Walk(L, reply, script_resp, depth + 1, names);
    }
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  // An array: elements 1, 2, ... up to the first nil.
  int n = 0;
  while (n < INT32_MAX) {
    lua_rawgeti(L, -1, n + 1);
    const bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (nil) break;
    n++;
  }
  reply.ArrayHeader(static_cast<size_t>(n));
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    Walk(L, reply, script_resp, depth + 1, names);
  }
}

// Replies the value at the top and pops it. REQUIRES: the stack was grown by
// Prepare (for a table), so lua_checkstack here never allocates.
void Walk(lua_State* L, ReplyWriter& reply, int script_resp, int depth, int names) {
  const int type = lua_type(L, -1);
  if (depth > kMaxReplyDepth || (type == LUA_TTABLE && (names == 0 || !lua_checkstack(L, kSlotsPerLevel)))) {
    reply.Error("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  if (reply.Full()) {  // a reply past any sane size (a table that holds itself twice ...)
    lua_pop(L, 1);
    return;
  }
  switch (type) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      reply.Bulk(std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1))
          reply.Integer(1);
        else
          reply.Null();
      } else {
        reply.Bool(lua_toboolean(L, -1) != 0);
      }
      break;
    case LUA_TNUMBER:
      reply.Integer(ReplyInteger(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE:
      WalkTable(L, reply, script_resp, depth, names);
      break;
    default:
      reply.Null();
  }
  lua_pop(L, 1);
}

}  // namespace

// Replies the value at the top of the stack and pops it. `script_resp`:
// the protocol the script speaks (redis.setresp), which decides how a
// boolean replies; the reply itself is in the caller's protocol.
void ReplyValue(lua_State* L, ReplyWriter& reply, int script_resp, int depth) {
  if (lua_type(L, -1) != LUA_TTABLE) {  // (nothing to look up, nothing pushed)
    Walk(L, reply, script_resp, depth, 0);
    return;
  }
  bool ready = false;
  if (lua_cpcall(L, Prepare, &ready) != 0) lua_pop(L, 1);  // (out of memory: the error)
  if (!ready) {
    reply.Error("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  lua_pushlightuserdata(L, &kFieldNamesKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_insert(L, -2);  // the names below the value
  Walk(L, reply, script_resp, depth, lua_gettop(L) - 1);
  lua_pop(L, 1);  // the names
}

}  // namespace peregrine::lua_convert
