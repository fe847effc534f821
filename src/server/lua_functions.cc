// FUNCTION libraries in a worker's interpreter (docs/scripting.md): the
// environment their code loads in (only redis.register_function, redis.log
// and the version there, as in Redis), the functions' own globals (the
// scripts' read-only globals, without KEYS and ARGV), loading a library and
// calling one of its functions.
#include <lua.hpp>

#include <cstring>

#include "net/event_loop.h"
#include "protocol/reply.h"
#include "scripting/lua_convert.h"
#include "server/lua_engine.h"
#include "server/lua_engine_internal.h"
#include "scripting/lua_sandbox.h"
#include "server/command.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

namespace {

constexpr int64_t kLoadTimeoutMs = 500;  // Redis's bound on running a library's code

// A Lua string with its NULs (a name cut at one would pass the name check).
std::string ToString(lua_State* L, int idx) {
  size_t len = 0;
  const char* s = lua_tolstring(L, idx, &len);
  return std::string(s, len);
}

void LoadTimeoutRaise(lua_State* L, lua_Debug*) {
  lua_convert::PushErrorTable(L, "FUNCTION LOAD timeout");
  lua_error(L);
}

}  // namespace

LuaEngine::Vm& LuaEngine::FnVm() {
  if (fn_.L == nullptr) SetupFunctions();
  return fn_;
}

void LuaEngine::SetupFunctions() {
  NewState(&fn_);
  lua_State* L = fn_.L;
  // What library code sees while it loads (Redis's library API): only
  // redis.register_function, redis.log with its levels and the version;
  // any other global is "nonexistent".
  lua_newtable(L);  // the library API
  lua_newtable(L);  // its redis table
  lua_pushcfunction(L, lua_api::RegisterFunction);
  lua_setfield(L, -2, "register_function");
  lua_getglobal(L, "redis");
  for (const char* name : {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION_NUM",
                           "REDIS_VERSION"}) {
    lua_getfield(L, -1, name);
    lua_setfield(L, -3, name);
  }
  lua_pop(L, 1);
  lua_sandbox::SetMissingGlobalError(L);
  lua_setfield(L, -2, "redis");
  lua_sandbox::SetMissingGlobalError(L);
  lua_sandbox::ProtectRecursively(L);
  lib_api_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  // The real globals, protected as the scripts' are.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_sandbox::SetMissingGlobalError(L);
  lua_sandbox::ProtectRecursively(L);
  fn_real_globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_sandbox::ProtectBasicTypes(L);
  // The globals functions and library code get: an empty read-only table
  // whose read-only metatable reads the real globals (or, while a library
  // loads, the library API), as Redis's function engine has it.
  lua_newtable(L);
  lua_newtable(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, fn_real_globals_ref_);
  lua_setfield(L, -2, "__index");
  lua_enablereadonlytable(L, -1, 1);
  lua_pushvalue(L, -1);
  fn_meta_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
  lua_enablereadonlytable(L, -1, 1);
  lua_replace(L, LUA_GLOBALSINDEX);
}

void LuaEngine::DropLibraries() {
  if (fn_.L == nullptr) return;
  for (auto& [name, lib] : libraries_)
    for (auto& [fn, ref] : lib.refs) luaL_unref(fn_.L, LUA_REGISTRYINDEX, ref);
  libraries_.clear();
  lua_gc(fn_.L, LUA_GCCOLLECT, 0);
}

bool LuaEngine::RunLibraryCode(FunctionLibrary* lib, std::map<std::string, int>* refs, std::string* err) {
  Vm& vm = FnVm();
  lua_State* L = vm.L;
  auto set_index = [&](int ref) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, fn_meta_ref_);
    lua_enablereadonlytable(L, -1, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_setfield(L, -2, "__index");
    lua_enablereadonlytable(L, -1, 1);
    lua_pop(L, 1);
  };
  const std::string_view body = std::string_view(lib->code).substr(lib->body_at);
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_function") != 0) {
    *err = std::string("ERR Error compiling function: ") + lua_tostring(L, -1);
    lua_pop(L, 1);
    return false;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm.err_handler_ref);
  lua_insert(L, -2);
  set_index(lib_api_ref_);
  Loading loading{lib, refs, MonotonicMs()};
  loading_ = &loading;
  lua_api::SetThreadEngine(this);
  lua_sethook(
      L,
      [](lua_State* L, lua_Debug*) {
        LuaEngine* e = lua_api::ThreadEngine();
        if (e != nullptr && e->loading_ != nullptr && MonotonicMs() - e->loading_->start_ms > kLoadTimeoutMs) {
          lua_sethook(L, LoadTimeoutRaise, LUA_MASKLINE, 0);
          LoadTimeoutRaise(L, nullptr);
        }
      },
      LUA_MASKCOUNT, lua_api::kHookInstructions);
  const int status = CallLimited(vm, 0, 0);
  lua_sethook(L, nullptr, 0, 0);
  loading_ = nullptr;
  set_index(fn_real_globals_ref_);
  if (status != 0 || vm.heap.exceeded) {
    std::string msg;
    if (vm.heap.exceeded) {
      msg = "Script exceeded lua-maxmemory";
    } else if (lua_isstring(L, -1)) {
      msg = std::string("ERR ") + lua_tostring(L, -1);
    } else if (lua_istable(L, -1)) {
      lua_pushliteral(L, "err");  // (raw: the script's table may have metamethods)
      lua_rawget(L, -2);
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 2);  // the error, the handler
    for (auto& [fn, ref] : *refs) luaL_unref(L, LUA_REGISTRYINDEX, ref);
    refs->clear();
    if (vm.heap.exceeded) {
      vm.heap.exceeded = false;
      lua_gc(L, LUA_GCCOLLECT, 0);
    }
    *err = "ERR Error registering functions: " + msg;
    return false;
  }
  lua_pop(L, 1);  // the handler
  return true;
}

bool LuaEngine::LoadLibrary(FunctionLibrary* lib, std::string* err) {
  std::map<std::string, int> refs;
  if (!RunLibraryCode(lib, &refs, err)) return false;
  for (auto& [fn, ref] : refs) luaL_unref(fn_.L, LUA_REGISTRYINDEX, ref);  // (loaded again on first use)
  if (lib->functions.empty()) {
    *err = "ERR No functions registered";
    return false;
  }
  return true;
}

int LuaEngine::RegisterFunction(lua_State* L) {
  if (loading_ == nullptr) {
    lua_convert::PushErrorTable(L, "redis.register_function can only be called on FUNCTION LOAD command");
    return lua_error(L);
  }
  auto fail = [L](const char* msg) {
    lua_convert::PushErrorTable(L, msg);
    return lua_error(L);
  };
  const int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) return fail("wrong number of arguments to redis.register_function");
  std::string name;
  std::optional<std::string> description;
  uint32_t flags = 0;
  bool have_name = false, have_callback = false;
  if (argc == 2) {
    if (!lua_isstring(L, 1)) return fail("first argument to redis.register_function must be a string");
    if (!lua_isfunction(L, 2)) return fail("second argument to redis.register_function must be a function");
    name = ToString(L, 1);
    have_name = have_callback = true;
    lua_pushvalue(L, 2);  // the callback, on top
  } else {
    if (!lua_istable(L, 1))
      return fail(
          "calling redis.register_function with a single argument is only applicable to Lua table (representing "
          "named arguments).");
    lua_pushnil(L);  // the callback's slot, filled below
    lua_pushnil(L);
    while (lua_next(L, 1)) {
      if (!lua_isstring(L, -2)) return fail("named argument key given to redis.register_function is not a string");
      const char* key = lua_tostring(L, -2);
      if (strcasecmp(key, "function_name") == 0) {
        if (!lua_isstring(L, -1)) return fail("function_name argument given to redis.register_function must be a string");
        name = ToString(L, -1);
        have_name = true;
      } else if (strcasecmp(key, "description") == 0) {
        if (!lua_isstring(L, -1)) return fail("description argument given to redis.register_function must be a string");
        description = ToString(L, -1);
      } else if (strcasecmp(key, "callback") == 0) {
        if (!lua_isfunction(L, -1)) return fail("callback argument given to redis.register_function must be a function");
        lua_pushvalue(L, -1);
        lua_replace(L, 2);
        have_callback = true;
      } else if (strcasecmp(key, "flags") == 0) {
        if (!lua_istable(L, -1))
          return fail("flags argument to redis.register_function must be a table representing function flags");
        for (int j = 1;; j++) {
          lua_rawgeti(L, -1, j);
          if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
          }
          const std::optional<uint32_t> f = lua_isstring(L, -1) ? FunctionFlag(lua_tostring(L, -1)) : std::nullopt;
          lua_pop(L, 1);
          if (!f) return fail("unknown flag given");
          flags |= *f;
        }
      } else {
        return fail("unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (!have_name) return fail("redis.register_function must get a function name argument");
    if (!have_callback) return fail("redis.register_function must get a callback argument");
    lua_pushvalue(L, 2);  // the callback, on top
  }
  if (!ValidFunctionName(name))
    return fail("Library names can only contain letters, numbers, or underscores(_) and must be at least one "
                "character long");
  if (loading_->lib->functions.count(name)) return fail("Function already exists in the library");
  auto run = std::make_shared<ScriptInfo>();
  run->sha = name;
  run->flags = flags;
  loading_->lib->functions[name] = FunctionLibrary::Function{run, description};
  (*loading_->refs)[name] = luaL_ref(L, LUA_REGISTRYINDEX);  // pops the callback
  return 0;
}

void LuaEngine::Fcall(CommandContext& ctx, const FunctionRegistry::Found& f, std::span<const std::string_view> keys,
                      std::span<const std::string_view> args, bool read_only) {
  const uint64_t epoch = ctx.server.functions().epoch();
  if (epoch != functions_epoch_) {
    DropLibraries();
    functions_epoch_ = epoch;
  }
  auto it = libraries_.find(f.library->name);
  if (it == libraries_.end() || it->second.id != f.library->id) {
    if (it != libraries_.end()) {
      for (auto& [fn, ref] : it->second.refs) luaL_unref(fn_.L, LUA_REGISTRYINDEX, ref);
      libraries_.erase(it);
    }
    // Loaded here from its code (its functions' descriptions and flags are
    // the registry's; this copy only gives the callbacks).
    FunctionLibrary copy;
    copy.name = f.library->name;
    copy.code = f.library->code;
    copy.body_at = f.library->body_at;
    LoadedLibrary loaded{f.library->id, {}};
    std::string err;
    if (!RunLibraryCode(&copy, &loaded.refs, &err)) {
      ctx.reply.Error(err);
      return;
    }
    it = libraries_.emplace(f.library->name, std::move(loaded)).first;
  }
  auto ref = it->second.refs.find(f.run->sha);
  if (ref == it->second.refs.end()) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  RunScript(ctx, FnVm(), *f.run, ref->second, keys, args, read_only, /*function=*/true);
}

}  // namespace peregrine
