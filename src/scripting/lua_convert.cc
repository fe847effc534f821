#include "scripting/lua_convert.h"

#include <lua.hpp>

#include <algorithm>
#include <cstdint>

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
  lua_newtable(L);
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

// --- RESP reply -> Lua value (Redis's redisProtocolToLuaType) ---

// The line at p (up to CRLF) and where the next item starts.
static std::string_view Line(const char*& p, const char* end) {
  const char* start = p;
  while (p + 1 < end && !(p[0] == '\r' && p[1] == '\n')) p++;
  std::string_view line(start, static_cast<size_t>(p - start));
  p = p + 2 <= end ? p + 2 : end;
  return line;
}

static int64_t LineInt(std::string_view s) {
  int64_t v = 0;
  ParseInt64(s, &v);
  return v;
}

// Pushes the reply at p (or, with push false, only skips it); returns
// where the next one starts.
const char* PushReply(lua_State* L, const char* p, const char* end, bool push) {
  if (p >= end) {
    if (push) lua_pushnil(L);
    return end;
  }
  if (push) luaL_checkstack(L, 5, "reached lua stack limit");
  const char type = *p++;
  const std::string_view line = Line(p, end);
  switch (type) {
    case '+':
      if (push) {
        lua_newtable(L);
        lua_pushstring(L, "ok");
        lua_pushlstring(L, line.data(), line.size());
        lua_settable(L, -3);
      }
      return p;
    case '-':
      if (push) PushErrorTable(L, "-" + std::string(line), true);
      return p;
    case ':':
      if (push) lua_pushnumber(L, static_cast<lua_Number>(LineInt(line)));
      return p;
    case '(':
      if (push) {
        lua_newtable(L);
        lua_pushstring(L, "big_number");
        lua_pushlstring(L, line.data(), line.size());
        lua_settable(L, -3);
      }
      return p;
    case ',': {
      if (push) {
        double d = 0;
        ParseDouble(line, &d);
        lua_newtable(L);
        lua_pushstring(L, "double");
        lua_pushnumber(L, d);
        lua_settable(L, -3);
      }
      return p;
    }
    case '#':
      if (push) lua_pushboolean(L, line == "t");
      return p;
    case '_':
      if (push) lua_pushnil(L);
      return p;
    case '$':
    case '=': {
      const int64_t n = LineInt(line);
      if (n < 0) {  // a null bulk string
        if (push) lua_pushboolean(L, 0);
        return p;
      }
      const size_t len = std::min(static_cast<size_t>(n), static_cast<size_t>(end - p));
      std::string_view bytes(p, len);
      p = std::min(end, p + len + 2);
      if (!push) return p;
      if (type == '$') {
        lua_pushlstring(L, bytes.data(), bytes.size());
      } else {  // verbatim: "fmt:text"
        const std::string_view format = bytes.substr(0, 3);
        const std::string_view text = bytes.size() > 4 ? bytes.substr(4) : std::string_view();
        lua_newtable(L);
        lua_pushstring(L, "verbatim_string");
        lua_newtable(L);
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
        if (push) lua_pushboolean(L, 0);
        return p;
      }
      if (push) lua_newtable(L);
      for (int64_t i = 0; i < n; i++) {
        if (push) lua_pushnumber(L, static_cast<lua_Number>(i + 1));
        p = PushReply(L, p, end, push);
        if (push) lua_settable(L, -3);  // (a nil element leaves a hole, as in Redis)
      }
      return p;
    }
    case '%':
    case '~': {
      const int64_t n = LineInt(line);
      if (push) {
        lua_newtable(L);
        lua_pushstring(L, type == '%' ? "map" : "set");
        lua_newtable(L);
      }
      for (int64_t i = 0; i < n; i++) {
        p = PushReply(L, p, end, push);
        if (type == '%')
          p = PushReply(L, p, end, push);
        else if (push)
          lua_pushboolean(L, 1);
        if (push) lua_settable(L, -3);
      }
      if (push) lua_settable(L, -3);
      return p;
    }
    case '|': {  // attributes: skipped, then the reply they describe
      const int64_t n = LineInt(line);
      for (int64_t i = 0; i < 2 * n; i++) p = PushReply(L, p, end, false);
      return PushReply(L, p, end, push);
    }
    default:
      if (push) lua_pushnil(L);
      return end;
  }
}

// --- Lua value -> reply (Redis's luaReplyToRedisReply) ---

static constexpr int kMaxReplyDepth = 1000;

// Field `name` of the table at the top, pushed (raw access).
static int RawField(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  lua_rawget(L, -2);
  return lua_type(L, -1);
}

// The number of pairs of the table at the top.
static size_t PairCount(lua_State* L) {
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    n++;
  }
  return n;
}

std::string NoNewlines(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (ch == '\r' || ch == '\n') ch = ' ';
  return out;
}

// Replies the value at the top of the stack and pops it. `script_resp`:
// the protocol the script speaks (redis.setresp), which decides how a
// boolean replies; the reply itself is in the caller's protocol.
void ReplyValue(lua_State* L, ReplyWriter& reply, int script_resp, int depth) {
  if (depth > kMaxReplyDepth || !lua_checkstack(L, 4)) {
    reply.Error("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  if (reply.Full()) {  // a reply past any sane size (a table that holds itself twice ...)
    lua_pop(L, 1);
    return;
  }
  switch (lua_type(L, -1)) {
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
      reply.Integer(static_cast<int64_t>(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE: {
      if (RawField(L, "err") == LUA_TSTRING) {
        const std::string msg = lua_tostring(L, -1);
        lua_pop(L, 1);
        const bool counted = RawField(L, "ignore_error_stats_update") == LUA_TBOOLEAN && lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (counted)
          reply.Raw("-" + NoNewlines(msg) + "\r\n");
        else
          reply.Error(msg);
        break;
      }
      lua_pop(L, 1);
      if (RawField(L, "ok") == LUA_TSTRING) {
        reply.SimpleString(NoNewlines(lua_tostring(L, -1)));
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      if (RawField(L, "double") == LUA_TNUMBER) {
        reply.Double(lua_tonumber(L, -1));
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      if (RawField(L, "big_number") == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, -1, &len);
        reply.BigNumber(NoNewlines(std::string_view(s, len)));
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      if (RawField(L, "verbatim_string") == LUA_TTABLE) {
        bool done = false;
        if (RawField(L, "format") == LUA_TSTRING) {
          const std::string format = lua_tostring(L, -1);
          if (RawField(L, "string") == LUA_TSTRING) {
            size_t len;
            const char* s = lua_tolstring(L, -1, &len);
            reply.Verbatim(std::string_view(s, len), std::string_view(format).substr(0, 3));
            done = true;
          }
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
        if (done) {
          lua_pop(L, 1);
          break;
        }
      }
      lua_pop(L, 1);
      if (RawField(L, "map") == LUA_TTABLE) {
        reply.MapHeader(PairCount(L));
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pushvalue(L, -2);
          ReplyValue(L, reply, script_resp, depth + 1);  // the key
          ReplyValue(L, reply, script_resp, depth + 1);  // the value
        }
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      if (RawField(L, "set") == LUA_TTABLE) {
        reply.SetHeader(PairCount(L));
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pop(L, 1);
          lua_pushvalue(L, -1);
          ReplyValue(L, reply, script_resp, depth + 1);
        }
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      // An array: elements 1, 2, ... up to the first nil.
      size_t n = 0;
      while (true) {
        lua_rawgeti(L, -1, static_cast<int>(n + 1));
        const bool nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nil) break;
        n++;
      }
      reply.ArrayHeader(n);
      for (size_t i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, static_cast<int>(i));
        ReplyValue(L, reply, script_resp, depth + 1);
      }
      break;
    }
    default:
      reply.Null();
  }
  lua_pop(L, 1);
}


}  // namespace peregrine::lua_convert
