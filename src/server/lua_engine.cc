#include "server/lua_engine.h"

#include <lua.hpp>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include "net/event_loop.h"
#include "protocol/reply.h"
#include "scripting/lua_convert.h"
#include "server/lua_engine_internal.h"
#include "scripting/lua_libs.h"
#include "scripting/lua_sandbox.h"
#include "server/client.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

namespace {

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

// Pushes field `name` of the table at the top without its metamethods (an
// error table comes from the script: its __index could raise where nothing
// protects the call, and abort the process).
void RawField(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  lua_rawget(L, -2);
}

// The memory error's hook: once a run met lua-maxmemory it raises on every
// instruction, so that the script's own pcall cannot carry on.
void MemoryHook(lua_State* L, lua_Debug*) {
  lua_convert::PushErrorTable(L, "Script exceeded lua-maxmemory");
  lua_error(L);
}

// os with os.clock only (the processor time the server has used).
int OsClock(lua_State* L) {
  lua_pushnumber(L, static_cast<lua_Number>(std::clock()) / static_cast<lua_Number>(CLOCKS_PER_SEC));
  return 1;
}

int OpenOs(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, OsClock);
  lua_setfield(L, -2, "clock");
  return 1;
}

}  // namespace


LuaEngine::LuaEngine(Worker* worker) : worker_(worker), script_client_(std::make_unique<Client>(worker, 0, -1)) {
  script_client_->is_script = true;
}

LuaEngine::~LuaEngine() {
  if (lua_api::ThreadEngine() == this) lua_api::SetThreadEngine(nullptr);
  CloseState(&eval_);
  CloseState(&fn_);
}

void* LuaEngine::Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* heap = static_cast<Heap*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    heap->bytes -= osize;
    return nullptr;
  }
  // (Only growth can fail: Lua counts on shrinking never failing.)
  if (heap->limit != 0 && nsize > osize && heap->bytes + (nsize - osize) > heap->limit) {
    if (!heap->exceeded && heap->L != nullptr) {
      heap->exceeded = true;
      lua_sethook(heap->L, MemoryHook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
    }
    return nullptr;  // Lua raises "not enough memory"
  }
  void* p = std::realloc(ptr, nsize);
  if (p != nullptr) heap->bytes = heap->bytes - osize + nsize;
  return p;
}

void LuaEngine::NewState(Vm* vm) {
  lua_State* L = lua_newstate(Allocate, &vm->heap);
  if (L == nullptr) {
    Log(LogLevel::kWarning, "Lua: out of memory making an interpreter");
    std::abort();
  }
  vm->L = vm->heap.L = L;
  lua_atpanic(L, [](lua_State* L) -> int {
    Log(LogLevel::kWarning, "Lua panic: %s", lua_tostring(L, -1));
    std::abort();
  });
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
  // The other libraries as globals whether or not a module sets one itself.
  for (auto [name, f] : {std::pair<const char*, lua_CFunction>{"cjson", OpenCjson},
                         std::pair<const char*, lua_CFunction>{"bit", OpenBit},
                         std::pair<const char*, lua_CFunction>{"cmsgpack", OpenCmsgpack},
                         std::pair<const char*, lua_CFunction>{"struct", OpenStruct},
                         std::pair<const char*, lua_CFunction>{"os", OpenOs}}) {
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    lua_setglobal(L, name);
  }
  lua_sandbox::RemoveDenied(L, worker_->server().config().lua_enable_deprecated_api);
  lua_api::RegisterRedisApi(L);
  // The error handler keeps the debug library; scripts do not get it.
  luaL_loadbuffer(L, kErrorHandler, sizeof(kErrorHandler) - 1, "@err_handler_def");
  lua_call(L, 0, 1);
  vm->err_handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushnil(L);
  lua_setglobal(L, "debug");
}

void LuaEngine::CloseState(Vm* vm) {
  if (vm->L == nullptr) return;
  // A full collection first, as Redis does since CVE-2024-46981: finalizers
  // run while everything they may reach is still there.
  lua_gc(vm->L, LUA_GCCOLLECT, 0);
  lua_close(vm->L);
  vm->L = vm->heap.L = nullptr;
  vm->heap.bytes = 0;
}

LuaEngine::Vm& LuaEngine::EvalVm() {
  if (eval_.L != nullptr) return eval_;
  NewState(&eval_);
  lua_State* L = eval_.L;
  // Redis's globals protection: the globals and every table they reach
  // read-only, a missing global an error.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_sandbox::SetMissingGlobalError(L);
  lua_sandbox::ProtectRecursively(L);
  lua_pop(L, 1);
  lua_sandbox::ProtectBasicTypes(L);
  return eval_;
}

int LuaEngine::CallLimited(Vm& vm, int nargs, int nresults) {
  vm.heap.limit = static_cast<size_t>(worker_->server().config().lua_maxmemory);
  vm.heap.exceeded = false;
  const int status = lua_pcall(vm.L, nargs, nresults, -(nargs + 2));
  vm.heap.limit = 0;
  return status;
}

void LuaEngine::SyncEpoch() {
  const uint64_t e = worker_->server().scripts().epoch();
  if (e == epoch_) return;
  epoch_ = e;
  // SCRIPT FLUSH: a new interpreter, as Redis makes one (whatever scripts
  // left in the old one, globals they could not set aside, goes with it).
  by_sha_.clear();
  sha_of_body_.clear();
  CloseState(&eval_);
}

const LuaEngine::Compiled* LuaEngine::Compile(std::shared_ptr<ScriptInfo> info, bool fresh, std::string* err) {
  uint32_t flags;
  size_t shebang = 0;
  std::string shebang_err;
  if (!ParseShebang(info->body, &flags, &shebang, &shebang_err)) {
    *err = "ERR " + shebang_err;
    return nullptr;
  }
  lua_State* L = EvalVm().L;
  const std::string_view text = std::string_view(info->body).substr(shebang);
  if (luaL_loadbuffer(L, text.data(), text.size(), "@user_script") != 0) {
    *err = std::string("ERR Error compiling script (new function): ") + lua_tostring(L, -1);
    lua_pop(L, 1);
    return nullptr;
  }
  // A script from the shared cache has its flags (set before it was added
  // there, from the same body) and other workers read them: not written.
  if (fresh) info->flags = flags;
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  auto [it, added] = by_sha_.emplace(info->sha, Compiled{info, ref});
  return &it->second;
}

const LuaEngine::Compiled* LuaEngine::FindSha(std::string_view sha) {
  SyncEpoch();
  if (sha.size() != 40) return nullptr;
  char lower[40];
  for (size_t i = 0; i < 40; i++) lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(sha[i])));
  const std::string_view key(lower, 40);
  auto it = by_sha_.find(key);
  if (it != by_sha_.end()) return &it->second;
  std::shared_ptr<ScriptInfo> info = worker_->server().scripts().Find(key);
  if (info == nullptr) return nullptr;
  std::string err;
  return Compile(std::move(info), /*fresh=*/false, &err);
}

const LuaEngine::Compiled* LuaEngine::KnownBody(std::string_view body) {
  SyncEpoch();
  auto known = sha_of_body_.find(body);
  return known != sha_of_body_.end() ? known->second : nullptr;
}

const LuaEngine::Compiled* LuaEngine::FindBody(std::string_view body) {
  if (const Compiled* c = KnownBody(body)) return c;
  const Compiled* c = FindSha(Sha1Hex(body));
  if (c != nullptr) sha_of_body_.emplace(std::string(body), c);
  return c;
}

const LuaEngine::Compiled* LuaEngine::FindOrLoadBody(std::string_view body, std::string* err) {
  if (const Compiled* c = KnownBody(body)) return c;
  const std::string sha = Sha1Hex(body);
  const Compiled* c = FindSha(sha);
  if (c == nullptr) {
    auto info = std::make_shared<ScriptInfo>();
    info->sha = sha;
    info->body = std::string(body);
    c = Compile(info, /*fresh=*/true, err);  // (a body that does not compile is not added)
    if (c == nullptr) return nullptr;
    // Another worker may have added it meanwhile: theirs is the one kept,
    // so that what runs learn about the script is shared.
    std::shared_ptr<ScriptInfo> kept = worker_->server().scripts().Add(info);
    if (kept != info) by_sha_.find(sha)->second.info = std::move(kept);
  }
  sha_of_body_.emplace(std::string(body), c);
  return c;
}

void LuaEngine::Eval(CommandContext& ctx, const Compiled& script, std::span<const std::string_view> keys,
                     std::span<const std::string_view> args, bool read_only) {
  RunScript(ctx, EvalVm(), *script.info, script.ref, keys, args, read_only, /*function=*/false);
}

void LuaEngine::RunScript(CommandContext& ctx, Vm& vm, const ScriptInfo& script, int ref,
                          std::span<const std::string_view> keys, std::span<const std::string_view> args,
                          bool read_only, bool function) {
  const bool compat = script.flags & kScriptEvalCompat;
  const bool oom = ctx.server.config().maxmemory > 0 && worker_->OverMaxmemory(ctx.shard);
  if (!compat) {
    if ((script.flags & kScriptNoCluster) && ctx.server.cluster() != nullptr) {
      ctx.reply.Error("ERR Can not run script on cluster, 'no-cluster' flag is set.");
      return;
    }
    if (!(script.flags & kScriptNoWrites) && read_only) {
      ctx.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
      return;
    }
    if (!(script.flags & kScriptNoWrites) && ctx.server.NotEnoughGoodReplicas()) {
      ctx.reply.Error(Config::kNoReplicasError);
      return;
    }
    if (!(script.flags & kScriptNoWrites) && ctx.server.read_only_replica() && !ctx.client.obeyed) {
      ctx.reply.Error("READONLY Can not run script with write flag on readonly replica");
      return;
    }
    if (oom && !(script.flags & (kScriptAllowOom | kScriptNoWrites))) {
      ctx.reply.Error("OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
      return;
    }
  }
  if (run_storage_ == nullptr) run_storage_ = std::make_unique<Run>();
  Run& run = *run_storage_;
  run.Start(&ctx, &script, read_only || (!compat && (script.flags & kScriptNoWrites)),
            !compat && (script.flags & kScriptAllowOom), oom, function);
  if (ctx.server.num_shards() > 1)
    for (std::string_view k : keys) run.declared.push_back(static_cast<uint32_t>(ctx.server.ShardIndexOf(k)));
  if (ctx.server.cluster() != nullptr && !keys.empty()) run.slot = static_cast<int>(SlotOf(keys[0]));
  script_client_->db = ctx.client.db;
  script_client_->id = ctx.client.id;
  script_client_->no_touch = ctx.client.no_touch;
  lua_State* L = vm.L;
  lua_api::SetThreadEngine(this);
  run_ = &run;
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm.err_handler_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  auto push_list = [L](std::span<const std::string_view> list) {
    lua_createtable(L, static_cast<int>(list.size()), 0);
    for (size_t i = 0; i < list.size(); i++) {
      lua_pushlstring(L, list[i].data(), list[i].size());
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
  };
  // KEYS and ARGV: globals of the run (set in the read-only globals, as
  // Redis's luaSetGlobalArray does), or a function's two arguments.
  auto set_globals = [L](auto&& set) {
    lua_enablereadonlytable(L, LUA_GLOBALSINDEX, 0);
    set();
    lua_enablereadonlytable(L, LUA_GLOBALSINDEX, 1);
  };
  if (function) {
    push_list(keys);
    push_list(args);
  } else {
    set_globals([&] {
      push_list(keys);
      lua_setfield(L, LUA_GLOBALSINDEX, "KEYS");
      push_list(args);
      lua_setfield(L, LUA_GLOBALSINDEX, "ARGV");
    });
  }
  run.start_ms = MonotonicMs();
  if (ctx.server.config().busy_reply_threshold > 0 || ctx.server.config().script_instruction_limit > 0)
    lua_sethook(L, lua_api::CountHook, LUA_MASKCOUNT, lua_api::kHookInstructions);
  const int nargs = function ? 2 : 0;
  const int status = worker_->RunScriptNoBlocking([&] { return CallLimited(vm, nargs, 1); });
  lua_sethook(L, nullptr, 0, 0);
  if (!function) {  // (functions never see an EVAL's KEYS and ARGV)
    set_globals([&] {
      lua_pushnil(L);
      lua_setfield(L, LUA_GLOBALSINDEX, "KEYS");
      lua_pushnil(L);
      lua_setfield(L, LUA_GLOBALSINDEX, "ARGV");
    });
  }
  if (run.busy) worker_->script_busy().Leave();
  run_ = nullptr;
  if (vm.heap.exceeded) {
    // lua-maxmemory: the run is over whatever it did meanwhile; what it
    // held is collected now.
    lua_pop(L, 2);  // the error (or the result), the handler
    lua_gc(L, LUA_GCCOLLECT, 0);
    vm.heap.exceeded = false;
    if (run.aborted) worker_->NoteScriptRerun();  // (to run again, where it will meet the limit again)
    ctx.reply.Error("ERR Script exceeded lua-maxmemory (" +
                    std::to_string(ctx.server.config().lua_maxmemory) + " bytes) script: " + script.sha);
    return;
  }
  if (++gc_runs_ == 50) {  // a Lua GC step now and then, not a full cycle at a bad time (Redis's rhythm)
    gc_runs_ = 0;
    lua_gc(L, LUA_GCSTEP, 50);
  }
  if (run.aborted) {
    // It touched a key of a shard it does not hold before writing: nothing
    // is replied, and it runs again holding every shard (docs/scripting.md).
    worker_->NoteScriptRerun();
    lua_pop(L, 2);  // the error, the handler
    return;
  }
  script.seen.store(true, std::memory_order_relaxed);
  if (status != 0) {
    ReplyError(ctx, vm, script);
    lua_pop(L, 2);  // the error, the handler
    return;
  }
  lua_convert::ReplyValue(L, ctx.reply, run.resp, 0);
  lua_pop(L, 1);  // the handler
}

void LuaEngine::ReplyError(CommandContext& ctx, Vm& vm, const ScriptInfo& script) {
  lua_State* L = vm.L;
  if (!lua_istable(L, -1)) {
    const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    ctx.reply.Error("ERR Error running script " + script.sha + ", " + std::string(msg).substr(0, 100));
    return;
  }
  std::string msg, source, line;
  RawField(L, "err");
  if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
  lua_pop(L, 1);
  RawField(L, "source");
  if (lua_isstring(L, -1)) source = lua_tostring(L, -1);
  lua_pop(L, 1);
  RawField(L, "line");
  if (lua_isstring(L, -1)) line = lua_tostring(L, -1);
  lua_pop(L, 1);
  RawField(L, "ignore_error_stats_update");
  const bool counted = lua_isboolean(L, -1) && lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (msg.empty()) msg = "ERR unknown error";  // (a table raised without an err field)
  if (!source.empty() && !line.empty()) msg += " script: " + script.sha + ", on " + source + ":" + line + ".";
  if (counted)
    ctx.reply.ErrorCounted(msg);
  else
    ctx.reply.Error(msg);
}

}  // namespace peregrine
