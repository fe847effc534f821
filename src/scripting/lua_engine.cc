#include "scripting/lua_engine.h"

#include <lua.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/numbers.h"
#include "net/event_loop.h"
#include "protocol/reply.h"
#include "scripting/lua_libs.h"
#include "scripting/lua_sandbox.h"
#include "server/client.h"
#include "server/command.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

extern "C" {
int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

namespace peregrine {

// One script's run: what its redis.call()s need.
struct LuaEngine::Run {
  CommandContext* ctx;  // the EVAL's
  const ScriptInfo* script;
  bool read_only;   // write commands refused (EVAL_RO, a no-writes script)
  bool allow_oom;   // denyoom commands allowed over maxmemory
  bool oom;         // over maxmemory when the script started
  bool write_dirty = false;
  bool aborted = false;  // stopped to run again holding every shard
  int resp = 2;          // redis.setresp()
  Buffer reply;          // one redis.call()'s reply
  std::vector<std::string> argv;
  std::vector<std::string_view> views;
  std::vector<size_t> key_positions;
  std::vector<uint32_t> declared;  // the shards of KEYS (several workers only)
  int64_t start_ms = 0;            // monotonic
  int64_t instructions = 0;        // counted by the hook, 100,000 at a time
  bool busy = false;               // past busy-reply-threshold
};

namespace {

// The engine of this thread (one per worker thread): the redis.* functions
// find their run through it.
thread_local LuaEngine* tls_engine = nullptr;

// --- Errors as Redis 7 raises them: a table {err = "CODE message"} ---

// Pushes the error table for `error` ("-CODE msg", or "msg" which gets the
// code ERR), as Redis's luaPushErrorBuff.
void PushErrorTable(lua_State* L, std::string_view error, bool from_command = false) {
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
std::string_view Line(const char*& p, const char* end) {
  const char* start = p;
  while (p + 1 < end && !(p[0] == '\r' && p[1] == '\n')) p++;
  std::string_view line(start, static_cast<size_t>(p - start));
  p = p + 2 <= end ? p + 2 : end;
  return line;
}

int64_t LineInt(std::string_view s) {
  int64_t v = 0;
  ParseInt64(s, &v);
  return v;
}

// Pushes the reply at p (or, with push false, only skips it); returns
// where the next one starts.
const char* PushReply(lua_State* L, const char* p, const char* end, bool push = true) {
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

constexpr int kMaxReplyDepth = 1000;

// Field `name` of the table at the top, pushed (raw access).
int RawField(lua_State* L, const char* name) {
  lua_pushstring(L, name);
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

// --- The redis.* API ---

LuaEngine::Run* CurrentRun(lua_State* L) {
  LuaEngine::Run* run = tls_engine != nullptr ? tls_engine->current_run() : nullptr;
  if (run == nullptr) luaL_error(L, "This function can only be called from a running script");
  return run;
}

// Raises an error table (built by PushErrorTable) at the top.
int RaiseTable(lua_State* L) { return lua_error(L); }

// Copies the call's arguments into run->argv; false (an error table pushed)
// if there are none or one is not a string or a number.
bool CollectArgs(lua_State* L, LuaEngine::Run* run) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "Please specify at least one argument for this redis lib call");
    return false;
  }
  run->argv.resize(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; i++) {
    std::string& a = run->argv[static_cast<size_t>(i - 1)];
    if (lua_type(L, i) == LUA_TNUMBER) {
      // Not lua_tolstring: Lua's "%.14g" loses precision (Redis's fpconv).
      char buf[kMaxDoubleChars];
      a.assign(buf, FormatDouble(static_cast<double>(lua_tonumber(L, i)), buf));
    } else if (lua_type(L, i) == LUA_TSTRING) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      a.assign(s, len);
    } else {
      lua_pop(L, argc);
      PushErrorTable(L, "Lua redis lib command arguments must be strings or integers");
      return false;
    }
  }
  lua_pop(L, argc);
  run->views.assign(run->argv.begin(), run->argv.end());
  return true;
}

// A run past busy-reply-threshold (Redis's luaMaskCountHook, every 100,000
// instructions): the worker answers other clients meanwhile, and SCRIPT
// KILL or SHUTDOWN NOSAVE stops the script.
constexpr int kHookInstructions = 100000;

void KillHook(lua_State* L, lua_Debug*) {
  PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
  lua_error(L);
}

void CountHook(lua_State* L, lua_Debug*) {
  LuaEngine::Run* run = tls_engine != nullptr ? tls_engine->current_run() : nullptr;
  if (run == nullptr) return;
  Worker& worker = *tls_engine->worker();
  const int64_t limit = run->ctx->server.config().script_instruction_limit;
  run->instructions += kHookInstructions;
  if (limit > 0 && run->instructions > limit) {
    lua_sethook(L, KillHook, LUA_MASKLINE, 0);
    KillHook(L, nullptr);
  }
  if (!run->busy) {
    const int64_t threshold = run->ctx->server.config().busy_reply_threshold;
    const int64_t elapsed = MonotonicMs() - run->start_ms;
    if (threshold <= 0 || elapsed < threshold) return;
    run->busy = true;
    Log(LogLevel::kWarning,
        "Slow script detected: still in execution after %lld milliseconds. You can try killing the script using "
        "the SCRIPT KILL command. Script name is: %s.",
        static_cast<long long>(elapsed), run->script->sha.c_str());
    worker.EnterScriptBusy(&run->ctx->client, true);
  }
  worker.WhileScriptBusy(run->write_dirty);
  if (worker.script_kill_requested()) {
    Log(LogLevel::kNotice, "Lua script killed by user with SCRIPT KILL.");
    // On every line from now on: the script's own pcall cannot go on.
    lua_sethook(L, KillHook, LUA_MASKLINE, 0);
    KillHook(L, nullptr);
  }
}

// A hook that raises on every instruction: a run being stopped cannot be
// held up by the script's own pcall.
void StopHook(lua_State* L, lua_Debug*) {
  PushErrorTable(L, "Script stopped to run again holding every shard");
  lua_error(L);
}

int GenericCall(lua_State* L, bool raise) {
  LuaEngine::Run* run = CurrentRun(L);
  LuaEngine* engine = tls_engine;
  if (!CollectArgs(L, run)) return raise ? RaiseTable(L) : 1;
  Worker& worker = *engine->worker();
  Server& server = run->ctx->server;
  std::string error;
  const CommandSpec* cmd = server.commands().Find(run->views[0]);
  if (cmd != nullptr) cmd = worker.Resolve(run->views, cmd, &error);
  const int argc = static_cast<int>(run->views.size());
  if (cmd == nullptr) {
    PushErrorTable(L, "Unknown Redis command called from script");
  } else if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    PushErrorTable(L, "Wrong number of args calling Redis command from script");
  } else if (cmd->flags & kCmdNoscript) {
    PushErrorTable(L, "This Redis command is not allowed from script");
  } else if (run->read_only && (cmd->flags & (kCmdWrite | kCmdMayReplicate))) {
    PushErrorTable(L, "Write commands are not allowed from read-only scripts.");
  } else if (!run->allow_oom && run->oom && !run->write_dirty && (cmd->flags & kCmdDenyOom)) {
    PushErrorTable(L, "-OOM command not allowed when used memory > 'maxmemory'.");
  } else {
    // A command over every shard (KEYS, DBSIZE, INFO, FLUSHALL ...) or every
    // worker's subscribers (PUBLISH) needs them all held, as a key of
    // another shard does.
    if (server.num_shards() > 1 && (cmd->flags & (kCmdAllShards | kCmdPublishes))) {
      const_cast<ScriptInfo*>(run->script)->all_shards.store(true, std::memory_order_relaxed);
      for (uint32_t s = 0; s < server.num_shards(); s++) {
        if (worker.HoldsShard(s)) continue;
        if (run->write_dirty) {
          PushErrorTable(L, "Script called '" + cmd->fullname +
                                "', which needs every shard, after it wrote: its next runs hold every shard");
          return raise ? RaiseTable(L) : 1;
        }
        run->aborted = true;
        lua_sethook(L, StopHook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
        PushErrorTable(L, "Script stopped to run again holding every shard");
        return RaiseTable(L);
      }
    }
    // Every key must live on a shard this run holds.
    Shard* shard = &run->ctx->shard;
    if (server.num_shards() > 1 && cmd->first_key > 0 && cmd->first_key < argc) {
      const std::span<const std::string_view> args(run->views);
      cmd->KeyPositions(args, &run->key_positions);
      run->key_positions.push_back(static_cast<size_t>(cmd->first_key));
      for (size_t pos : run->key_positions) {
        const auto s = static_cast<uint32_t>(server.ShardIndexOf(args[pos]));
        if (std::find(run->declared.begin(), run->declared.end(), s) != run->declared.end()) continue;
        // Outside the declared keys' shards: from now on the script runs
        // holding every shard; this run goes on if it holds this one.
        const_cast<ScriptInfo*>(run->script)->all_shards.store(true, std::memory_order_relaxed);
        if (worker.HoldsShard(s)) continue;
        if (run->write_dirty) {
          PushErrorTable(L, "Script attempted to access key '" + std::string(args[pos]) +
                                "' on a shard it does not hold after it wrote: declare every key the script "
                                "uses in KEYS (its next runs hold every shard)");
          return raise ? RaiseTable(L) : 1;
        }
        run->aborted = true;
        lua_sethook(L, StopHook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
        PushErrorTable(L, "Script stopped to run again holding every shard");
        return RaiseTable(L);
      }
      shard = &server.shard(server.ShardIndexOf(args[static_cast<size_t>(cmd->first_key)]));
    }
    if (cmd->flags & kCmdWrite) run->write_dirty = true;
    run->reply.Clear();
    ReplyWriter reply(&run->reply, run->resp, &worker);
    worker.ScriptCall(*run->ctx, engine->script_client(), cmd, run->views, reply, *shard);
    const char* p = run->reply.data();
    const char* end = p + run->reply.size();
    PushReply(L, p, end);
    if (raise && run->reply.size() > 0 && run->reply.data()[0] == '-') return RaiseTable(L);
    return 1;
  }
  return raise ? RaiseTable(L) : 1;
}

int RedisCall(lua_State* L) { return GenericCall(L, true); }
int RedisPcall(lua_State* L) { return GenericCall(L, false); }

// Lua's pcall, which returns an error table's message rather than the table
// (Redis 7's luaRedisPcall, for scripts written for older versions).
int LuaPcall(lua_State* L) {
  const int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1))
        lua_replace(L, -2);
      else
        lua_pop(L, 1);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

int RedisSha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    PushErrorTable(L, "wrong number of arguments");
    return RaiseTable(L);
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  const std::string hex = Sha1Hex(s == nullptr ? std::string_view() : std::string_view(s, len));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  std::string err = lua_tostring(L, -1);
  if (err.empty() || err[0] != '-') err.insert(0, "-");
  PushErrorTable(L, err);
  return 1;
}

int RedisStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int RedisSetRepl(lua_State* L) {
  CurrentRun(L);
  if (lua_gettop(L) != 1) {
    PushErrorTable(L, "redis.set_repl() requires one argument.");
    return RaiseTable(L);
  }
  const int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~3) != 0) {
    PushErrorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return RaiseTable(L);
  }
  return 0;  // nothing is replicated yet (no replicas, no AOF)
}

int RedisReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int RedisBreakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // no debugger session (SCRIPT DEBUG is not supported)
  return 1;
}

int RedisDebug(lua_State*) { return 0; }

int RedisAclCheckCmd(lua_State* L) {
  LuaEngine::Run* run = CurrentRun(L);
  if (!CollectArgs(L, run)) return RaiseTable(L);
  std::string error;
  const CommandSpec* cmd = run->ctx->server.commands().Find(run->views[0]);
  if (cmd != nullptr) cmd = tls_engine->worker()->Resolve(run->views, cmd, &error);
  if (cmd == nullptr) {
    PushErrorTable(L, "Invalid command passed to redis.acl_check_cmd()");
    return RaiseTable(L);
  }
  lua_pushboolean(L, 1);  // one user, allowed everything (ACL users are issue #22)
  return 1;
}

int RedisLog(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) {
    PushErrorTable(L, "redis.log() requires two arguments or more.");
    return RaiseTable(L);
  }
  if (!lua_isnumber(L, 1)) {
    PushErrorTable(L, "First argument must be a number (log level).");
    return RaiseTable(L);
  }
  const int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) {
    PushErrorTable(L, "Invalid debug level.");
    return RaiseTable(L);
  }
  std::string msg;
  for (int i = 2; i <= argc; i++) {
    size_t len;
    const char* s = lua_tolstring(L, i, &len);
    if (s == nullptr) continue;
    if (i != 2) msg += ' ';
    msg.append(s, len);
  }
  static constexpr LogLevel kLevels[] = {LogLevel::kDebug, LogLevel::kVerbose, LogLevel::kNotice, LogLevel::kWarning};
  Log(kLevels[level], "%s", msg.c_str());
  return 0;
}

int RedisSetResp(lua_State* L) {
  LuaEngine::Run* run = CurrentRun(L);
  if (lua_gettop(L) != 1) {
    PushErrorTable(L, "redis.setresp() requires one argument.");
    return RaiseTable(L);
  }
  const int resp = static_cast<int>(lua_tonumber(L, -1));
  if (resp != 2 && resp != 3) {
    PushErrorTable(L, "RESP version must be 2 or 3.");
    return RaiseTable(L);
  }
  run->resp = resp;
  return 0;
}

// math.random and math.randomseed over POSIX's 48-bit generator (the
// sequence Redis's redisLrand48 gives on every platform), one state per
// interpreter.
thread_local unsigned short tls_rand[3] = {0x330E, 0xABCD, 0x1234};

int MathRandom(lua_State* L) {
  constexpr long kMax = 2147483647L;
  const lua_Number r = static_cast<lua_Number>(nrand48(tls_rand) % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomseed(lua_State* L) {
  const auto seed = static_cast<int32_t>(luaL_checkint(L, 1));
  tls_rand[0] = 0x330E;
  tls_rand[1] = static_cast<unsigned short>(seed & 0xFFFF);
  tls_rand[2] = static_cast<unsigned short>((static_cast<uint32_t>(seed) >> 16) & 0xFFFF);
  return 0;
}

void SetFunction(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushstring(L, name);
  lua_pushcfunction(L, f);
  lua_settable(L, -3);
}

void SetNumber(lua_State* L, const char* name, double v) {
  lua_pushstring(L, name);
  lua_pushnumber(L, v);
  lua_settable(L, -3);
}

// Redis's error handler: the error as a table, with the source and line of
// the Lua code that raised it (the caller's when a C function raised).
constexpr char kErrorHandler[] =
    "local dbg = debug\n"
    "return function(err)\n"
    "  local info = dbg.getinfo(2, 'nSl')\n"
    "  if info and info.what == 'C' then info = dbg.getinfo(3, 'nSl') end\n"
    "  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end\n"
    "  if info then\n"
    "    err['source'] = info.source\n"
    "    err['line'] = info.currentline\n"
    "  end\n"
    "  return err\n"
    "end\n";

}  // namespace

LuaEngine::LuaEngine(Worker* worker) : worker_(worker), script_client_(std::make_unique<Client>(worker, 0, -1)) {
  Setup();
}

LuaEngine::~LuaEngine() {
  if (tls_engine == this) tls_engine = nullptr;
  if (L_ != nullptr) lua_close(L_);
}

void* LuaEngine::Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* self = static_cast<LuaEngine*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    self->lua_bytes_ -= osize;
    return nullptr;
  }
  if (self->lua_byte_limit_ != 0 && nsize > osize && self->lua_bytes_ + (nsize - osize) > self->lua_byte_limit_)
    return nullptr;  // Lua raises "not enough memory"
  void* p = std::realloc(ptr, nsize);
  if (p != nullptr) self->lua_bytes_ = self->lua_bytes_ - osize + nsize;
  return p;
}

void LuaEngine::Setup() {
  lua_byte_limit_ = static_cast<size_t>(worker_->server().config().script_memory_limit);
  L_ = lua_newstate(Allocate, this);
  lua_atpanic(L_, [](lua_State* L) -> int {
    Log(LogLevel::kWarning, "Lua panic: %s", lua_tostring(L, -1));
    std::abort();
  });
  lua_State* L = L_;
  auto open = [L](const char* name, lua_CFunction f) {
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
  };
  open("", luaopen_base);
  open(LUA_TABLIBNAME, luaopen_table);
  open(LUA_STRLIBNAME, luaopen_string);
  open(LUA_MATHLIBNAME, luaopen_math);
  open(LUA_DBLIBNAME, luaopen_debug);
  // cjson and bit as globals whether or not the module sets one itself.
  for (auto [name, f] : {std::pair<const char*, lua_CFunction>{"cjson", luaopen_cjson},
                         std::pair<const char*, lua_CFunction>{"bit", luaopen_bit},
                         std::pair<const char*, lua_CFunction>{"cmsgpack", OpenCmsgpack},
                         std::pair<const char*, lua_CFunction>{"struct", OpenStruct}}) {
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    lua_setglobal(L, name);
  }

  // Redis's deny list: no files, no printing to the server's stdout.
  for (const char* name : {"dofile", "loadfile", "print"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, LuaPcall);
  lua_setglobal(L, "pcall");

  lua_newtable(L);
  SetFunction(L, "call", RedisCall);
  SetFunction(L, "pcall", RedisPcall);
  SetFunction(L, "log", RedisLog);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
  SetNumber(L, "REDIS_VERSION_NUM", 0x070204);
  lua_pushstring(L, "REDIS_VERSION");
  lua_pushstring(L, "7.2.4");
  lua_settable(L, -3);
  SetFunction(L, "setresp", RedisSetResp);
  SetFunction(L, "sha1hex", RedisSha1hex);
  SetFunction(L, "error_reply", RedisErrorReply);
  SetFunction(L, "status_reply", RedisStatusReply);
  SetFunction(L, "set_repl", RedisSetRepl);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  SetFunction(L, "acl_check_cmd", RedisAclCheckCmd);
  SetFunction(L, "breakpoint", RedisBreakpoint);
  SetFunction(L, "debug", RedisDebug);
  SetFunction(L, "replicate_commands", RedisReplicateCommands);
  lua_setglobal(L, "redis");

  lua_getglobal(L, "math");
  SetFunction(L, "random", MathRandom);
  SetFunction(L, "randomseed", MathRandomseed);
  lua_pop(L, 1);

  // The error handler keeps the debug library; scripts do not get it.
  luaL_loadbuffer(L, kErrorHandler, sizeof(kErrorHandler) - 1, "@err_handler_def");
  lua_call(L, 0, 1);
  err_handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushnil(L);
  lua_setglobal(L, "debug");

  // Globals protection (lua_sandbox.h): scripts see a read-only proxy.
  lua_sandbox::Protect(L, &globals_ref_, &real_globals_ref_);
}

void LuaEngine::SyncEpoch() {
  const uint64_t e = worker_->server().scripts().epoch();
  if (e == epoch_) return;
  epoch_ = e;
  for (auto& [sha, c] : by_sha_) luaL_unref(L_, LUA_REGISTRYINDEX, c.ref);
  by_sha_.clear();
  sha_of_body_.clear();
  lua_gc(L_, LUA_GCCOLLECT, 0);
}

const LuaEngine::Compiled* LuaEngine::Compile(std::shared_ptr<ScriptInfo> info, std::string* err) {
  uint32_t flags;
  size_t shebang = 0;
  std::string shebang_err;
  if (!ParseShebang(info->body, &flags, &shebang, &shebang_err)) {
    *err = "ERR " + shebang_err;
    return nullptr;
  }
  lua_rawgeti(L_, LUA_REGISTRYINDEX, globals_ref_);
  lua_replace(L_, LUA_GLOBALSINDEX);
  if (!lua_sandbox::LoadText(L_, std::string_view(info->body).substr(shebang), "@user_script")) {
    *err = std::string("ERR Error compiling script (new function): ") + lua_tostring(L_, -1);
    lua_pop(L_, 1);
    return nullptr;
  }
  info->flags = flags;
  const int ref = luaL_ref(L_, LUA_REGISTRYINDEX);
  auto [it, added] = by_sha_.emplace(info->sha, Compiled{info, ref});
  return &it->second;
}

const ScriptInfo* LuaEngine::FindSha(std::string_view sha) {
  SyncEpoch();
  std::string key(sha);
  for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto it = by_sha_.find(key);
  if (it != by_sha_.end()) return it->second.info.get();
  std::shared_ptr<ScriptInfo> info = worker_->server().scripts().Find(key);
  if (info == nullptr) return nullptr;
  std::string err;
  const Compiled* c = Compile(std::move(info), &err);
  return c == nullptr ? nullptr : c->info.get();
}

const ScriptInfo* LuaEngine::FindBody(std::string_view body) {
  SyncEpoch();
  auto known = sha_of_body_.find(std::string(body));
  if (known != sha_of_body_.end()) {
    auto it = by_sha_.find(known->second);
    if (it != by_sha_.end()) return it->second.info.get();
  }
  const ScriptInfo* info = FindSha(Sha1Hex(body));
  if (info != nullptr) sha_of_body_.emplace(std::string(body), info->sha);
  return info;
}

const ScriptInfo* LuaEngine::FindOrLoadBody(std::string_view body, std::string* err) {
  SyncEpoch();
  auto known = sha_of_body_.find(std::string(body));
  if (known != sha_of_body_.end()) {
    auto it = by_sha_.find(known->second);
    if (it != by_sha_.end()) return it->second.info.get();
  }
  const std::string sha = Sha1Hex(body);
  auto it = by_sha_.find(sha);
  if (it == by_sha_.end()) {
    std::shared_ptr<ScriptInfo> info = worker_->server().scripts().Find(sha);
    const bool fresh = info == nullptr;
    if (fresh) {
      info = std::make_shared<ScriptInfo>();
      info->sha = sha;
      info->body = std::string(body);
    }
    const Compiled* c = Compile(info, err);
    if (c == nullptr) return nullptr;
    if (fresh) worker_->server().scripts().Add(info);
    it = by_sha_.find(sha);
  }
  sha_of_body_.emplace(std::string(body), sha);
  return it->second.info.get();
}

size_t LuaEngine::MemoryBytes() const { return lua_bytes_; }

void LuaEngine::Eval(CommandContext& ctx, const ScriptInfo& script, std::span<const std::string_view> keys,
                     std::span<const std::string_view> args, bool read_only) {
  const bool compat = script.flags & kScriptEvalCompat;
  const bool oom = ctx.server.config().maxmemory > 0 && worker_->OverMaxmemory(ctx.shard);
  if (!compat) {
    if (!(script.flags & kScriptNoWrites) && read_only) {
      ctx.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
      return;
    }
    if (oom && !(script.flags & (kScriptAllowOom | kScriptNoWrites))) {
      ctx.reply.Error("OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
      return;
    }
  }
  auto it = by_sha_.find(script.sha);
  if (it == by_sha_.end()) {  // (FindSha / FindOrLoadBody compiled it)
    ctx.reply.Error("NOSCRIPT No matching script. Please use EVAL.");
    return;
  }
  Run run{.ctx = &ctx,
          .script = &script,
          .read_only = read_only || (!compat && (script.flags & kScriptNoWrites)),
          .allow_oom = !compat && (script.flags & kScriptAllowOom),
          .oom = oom};
  if (ctx.server.num_shards() > 1)
    for (std::string_view k : keys) run.declared.push_back(static_cast<uint32_t>(ctx.server.ShardIndexOf(k)));
  script_client_->db = ctx.client.db;
  script_client_->id = ctx.client.id;
  lua_State* L = L_;
  tls_engine = this;
  run_ = &run;
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_rawgeti(L, LUA_REGISTRYINDEX, err_handler_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, it->second.ref);
  // KEYS and ARGV: globals of the run (in the table behind the proxy).
  lua_rawgeti(L, LUA_REGISTRYINDEX, real_globals_ref_);
  for (auto [name, list] : {std::pair{"KEYS", keys}, std::pair{"ARGV", args}}) {
    lua_pushstring(L, name);
    lua_createtable(L, static_cast<int>(list.size()), 0);
    for (size_t i = 0; i < list.size(); i++) {
      lua_pushlstring(L, list[i].data(), list[i].size());
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
  run.start_ms = MonotonicMs();
  if (ctx.server.config().busy_reply_threshold > 0 || ctx.server.config().script_instruction_limit > 0)
    lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookInstructions);
  const int status = worker_->RunScriptNoBlocking([&] { return lua_pcall(L, 0, 1, -2); });
  lua_sethook(L, nullptr, 0, 0);
  if (run.busy) worker_->LeaveScriptBusy();
  if (++gc_runs_ == 50) {  // a Lua GC step now and then, not a full cycle at a bad time (Redis's rhythm)
    gc_runs_ = 0;
    lua_gc(L, LUA_GCSTEP, 50);
  }
  run_ = nullptr;
  if (run.aborted) {
    // It touched a key of a shard it does not hold before writing: nothing
    // is replied, and it runs again holding every shard (docs/scripting.md).
    worker_->NoteScriptRerun();
    lua_pop(L, 2);  // the error, the handler
    return;
  }
  const_cast<ScriptInfo&>(script).seen.store(true, std::memory_order_relaxed);
  if (status != 0) {
    if (!lua_istable(L, -1)) {
      const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
      ctx.reply.Error("ERR Error running script " + script.sha + ", " + std::string(msg).substr(0, 100));
    } else {
      std::string msg, source, line;
      bool counted = false;
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "source");
      if (lua_isstring(L, -1)) source = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "line");
      if (lua_isstring(L, -1)) line = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "ignore_error_stats_update");
      counted = lua_isboolean(L, -1) && lua_toboolean(L, -1);
      lua_pop(L, 1);
      if (!source.empty() && !line.empty()) msg += " script: " + script.sha + ", on " + source + ":" + line + ".";
      if (counted)
        ctx.reply.Raw("-" + NoNewlines(msg) + "\r\n");
      else
        ctx.reply.Error(msg);
    }
    lua_pop(L, 2);  // the error, the handler
    return;
  }
  ReplyValue(L, ctx.reply, run.resp, 0);
  lua_pop(L, 1);  // the handler
}

}  // namespace peregrine
