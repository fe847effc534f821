// The redis.* API of scripts (Redis 7.2's script_lua.c): redis.call and
// redis.pcall through the worker, the reply helpers, redis.log, setresp,
// set_repl, acl_check_cmd, Redis's pcall and math.random, and the hooks that
// make long scripts busy, kill them, or stop a run that needs every shard.
#include <lua.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/numbers.h"
#include "net/event_loop.h"
#include "protocol/reply.h"
#include "scripting/lua_convert.h"
#include "server/lua_engine_internal.h"
#include "server/acl.h"
#include "server/client.h"
#include "server/command.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine::lua_api {

namespace {

using lua_convert::PushErrorTable;
using lua_convert::PushReply;

thread_local LuaEngine* tls_engine = nullptr;

// A Lua number as Redis's C casts it on x86-64 (out of range or NaN: INT_MIN),
// without their undefined behaviour (redis.log(-1e308, ...) and the like;
// found by the script fuzzer).
int ToInt(lua_Number d) {
  return d >= -2147483648.0 && d < 2147483648.0 ? static_cast<int>(d) : INT_MIN;
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
void KillHook(lua_State* L, lua_Debug*) {
  PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
  lua_error(L);
}

void BusyHook(lua_State* L, lua_Debug*) {
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
        "the %s command. Script name is: %s.",
        static_cast<long long>(elapsed), run->function ? "FUNCTION KILL" : "SCRIPT KILL", run->script->sha.c_str());
    worker.script_busy().Enter(&run->ctx->client, !run->function,
                               run->function ? run->script->sha : "f_" + run->script->sha, run->ctx->args,
                               run->start_ms);
  }
  worker.script_busy().WhileBusy(run->write_dirty);
  if (worker.script_busy().kill_requested()) {
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

// The call needs a shard this run does not hold: before any write the run
// stops (and runs again holding every shard); after one, the call fails
// with `if_wrote`.
int NeedShard(lua_State* L, LuaEngine::Run* run, bool raise, const std::string& if_wrote) {
  if (run->write_dirty) {
    PushErrorTable(L, if_wrote);
    return raise ? RaiseTable(L) : 1;
  }
  run->aborted = true;
  lua_sethook(L, StopHook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  PushErrorTable(L, "Script stopped to run again holding every shard");
  return RaiseTable(L);
}

// Cluster mode: whether the call may touch its keys here (a script keeps to
// its slot; Redis's scriptVerifyClusterState). "" if it may.
std::string ClusterCallError(Worker& worker, LuaEngine::Run& run, const CommandSpec& cmd) {
  ServerState& server = run.ctx->server;
  if (server.cluster() == nullptr) return "";
  auto db_of = [&](std::string_view key) -> Db* {
    const auto s = static_cast<uint32_t>(server.ShardIndexOf(key));
    return server.num_shards() == 1 || worker.HoldsShard(s) ? &server.shard(s).db(0) : nullptr;
  };
  // (A script without a shebang, in Redis 7's compatibility mode, may
  // cross slots as before.)
  const bool cross_slot_ok =
      run.script != nullptr && (run.script->flags & (kScriptAllowCrossSlot | kScriptEvalCompat));
  return worker.cluster_route().ScriptCallError(run.ctx->client, cmd, run.views, db_of, run.ctx->now_ms, &run.slot,
                                                cross_slot_ok);
}

int GenericCall(lua_State* L, bool raise) {
  LuaEngine::Run* run = CurrentRun(L);
  LuaEngine* engine = tls_engine;
  if (!CollectArgs(L, run)) return raise ? RaiseTable(L) : 1;
  Worker& worker = *engine->worker();
  Server& server = worker.server();
  std::string error;
  const CommandSpec* cmd = server.commands().Find(run->views[0]);
  if (cmd != nullptr) cmd = worker.Resolve(run->views, cmd, &error);
  const int argc = static_cast<int>(run->views.size());
  // A call refused before it runs counts as the command's rejected call and
  // as an error reply now, and not again when the script's reply carries
  // it (Redis's scriptCall).
  const auto reject = [&](std::string_view error) {
    worker.CountScriptRejection(cmd, error);
    PushErrorTable(L, error, /*from_command=*/true);
  };
  if (cmd == nullptr) {
    reject("Unknown Redis command called from script");
  } else if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    reject("Wrong number of args calling Redis command from script");
  } else if ((cmd->flags & kCmdNoscript) &&
             !(server.debug().script_disable_deny.load(std::memory_order_relaxed) && cmd->name == "debug" &&
               worker.access().ProtectedAllowed(run->ctx->client))) {
    reject("This Redis command is not allowed from script");
  } else if (std::string denied = worker.access().ScriptAccessError(run->ctx->client, *cmd, run->views); !denied.empty()) {
    reject(denied);
  } else if (run->read_only && (cmd->flags & (kCmdWrite | kCmdMayReplicate))) {
    reject("Write commands are not allowed from read-only scripts.");
  } else if ((cmd->flags & kCmdWrite) && server.NotEnoughGoodReplicas()) {
    reject("-" + std::string(Config::kNoReplicasError));
  } else if ((cmd->flags & kCmdWrite) && server.read_only_replica() && !run->ctx->client.obeyed) {
    reject("-" + std::string(ServerState::kReadOnlyError));
  } else if (!run->allow_oom && run->oom && !run->write_dirty && (cmd->flags & kCmdDenyOom)) {
    reject("-OOM command not allowed when used memory > 'maxmemory'.");
  } else if (std::string error = ClusterCallError(worker, *run, *cmd); !error.empty()) [[unlikely]] {
    reject(error);
  } else {
    // A command over every shard (KEYS, DBSIZE, INFO, FLUSHALL ...) or every
    // worker's subscribers (PUBLISH) needs them all held, as a key of
    // another shard does.
    if (server.num_shards() > 1 && ((cmd->flags & kCmdPublishes) || cmd->NeedsAllShards(run->views))) {
      run->script->MarkAllShards();
      for (uint32_t s = 0; s < server.num_shards(); s++)
        if (!worker.HoldsShard(s))
          return NeedShard(L, run, raise,
                           "Script called '" + cmd->fullname +
                               "', which needs every shard, after it wrote: its next runs hold every shard");
    }
    // Every key must live on a shard this run holds.
    Shard* shard = &run->ctx->shard;
    if (server.num_shards() > 1 && cmd->first_key > 0 && cmd->first_key < argc) {
      const std::span<const std::string_view> args(run->views);
      // (The first key's shard even when the others cannot be read: the
      // command runs there and replies its error.)
      const size_t first = cmd->FirstKeyIndex(args, &run->key_positions);
      cmd->KeyPositions(args, &run->key_positions);
      if (first > 0) run->key_positions.push_back(first);
      for (size_t pos : run->key_positions) {
        const auto s = static_cast<uint32_t>(server.ShardIndexOf(args[pos]));
        if (std::find(run->declared.begin(), run->declared.end(), s) != run->declared.end()) continue;
        // Outside the declared keys' shards: from now on the script runs
        // holding every shard; this run goes on if it holds this one.
        run->script->MarkAllShards();
        if (!worker.HoldsShard(s))
          return NeedShard(L, run, raise,
                           "Script attempted to access key '" + std::string(args[pos]) +
                               "' on a shard it does not hold after it wrote: declare every key the script uses "
                               "in KEYS (its next runs hold every shard)");
      }
      if (first > 0) shard = &server.shard(server.ShardIndexOf(args[first]));
    }
    if (cmd->flags & kCmdWrite) run->write_dirty = true;
    run->reply.Clear();
    ReplyWriter reply(&run->reply, run->resp, &worker);
    worker.ScriptCall(*run->ctx, engine->script_client(), cmd, run->views, reply, *shard);
    if (reply.cut()) {
      // Past the most a request may make the server build (64 MB): the
      // call fails rather than handing the script part of its reply.
      PushErrorTable(L, "The command's reply is over 64 MB, too large for a script");
      return raise ? RaiseTable(L) : 1;
    }
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
  const int flags = ToInt(lua_tonumber(L, -1));
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
  // Whether the script's user may run it (nothing is logged: a question,
  // not a refusal).
  const Client& caller = run->ctx->client;
  bool allowed = true;
  if (caller.user != nullptr && !caller.user->unrestricted) {
    size_t idx = 0;
    allowed = run->ctx->server.acl().Check(*caller.user, *cmd, run->views, &idx) == AclResult::kOk;
  }
  lua_pushboolean(L, allowed);
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
  const int level = ToInt(lua_tonumber(L, 1));
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
  const int resp = ToInt(lua_tonumber(L, -1));
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
      // Redis computes u - l + 1 in int: past INT_MAX it wraps on x86
      // (math.random(-2^31, 2^31 - 1) is always -2^31 there). The same
      // width, without the undefined behaviour.
      const auto width = static_cast<int32_t>(static_cast<uint32_t>(u) - static_cast<uint32_t>(l) + 1U);
      lua_pushnumber(L, std::floor(r * width) + l);
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


}  // namespace

void SetThreadEngine(LuaEngine* engine) { tls_engine = engine; }
LuaEngine* ThreadEngine() { return tls_engine; }

void CountHook(lua_State* L, lua_Debug* ar) { BusyHook(L, ar); }

int RegisterFunction(lua_State* L) {
  LuaEngine* engine = tls_engine;
  if (engine == nullptr) {
    PushErrorTable(L, "redis.register_function can only be called on FUNCTION LOAD command");
    return lua_error(L);
  }
  return engine->RegisterFunction(L);
}

void RegisterRedisApi(lua_State* L) {
  lua_pushcfunction(L, LuaPcall);
  lua_setglobal(L, "pcall");

  lua_newtable(L);
  static constexpr luaL_Reg kFunctions[] = {
      {"call", RedisCall},           {"pcall", RedisPcall},           {"log", RedisLog},
      {"setresp", RedisSetResp},     {"sha1hex", RedisSha1hex},       {"error_reply", RedisErrorReply},
      {"status_reply", RedisStatusReply}, {"set_repl", RedisSetRepl}, {"acl_check_cmd", RedisAclCheckCmd},
      {"breakpoint", RedisBreakpoint}, {"debug", RedisDebug},         {"replicate_commands", RedisReplicateCommands}};
  for (const luaL_Reg& f : kFunctions) SetFunction(L, f.name, f.func);
  static constexpr std::pair<const char*, double> kNumbers[] = {
      {"LOG_DEBUG", 0},  {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2},   {"LOG_WARNING", 3},
      {"REPL_NONE", 0},  {"REPL_AOF", 1},    {"REPL_SLAVE", 2},   {"REPL_REPLICA", 2},
      {"REPL_ALL", 3},   {"REDIS_VERSION_NUM", 0x070204}};
  for (auto [name, v] : kNumbers) SetNumber(L, name, v);
  lua_pushstring(L, "REDIS_VERSION");
  lua_pushstring(L, "7.2.4");
  lua_settable(L, -3);
  lua_setglobal(L, "redis");

  lua_getglobal(L, "math");
  SetFunction(L, "random", MathRandom);
  SetFunction(L, "randomseed", MathRandomseed);
  lua_pop(L, 1);
}

}  // namespace peregrine::lua_api
