// Two Lua 5.1 interpreters per worker, one for scripts and one for
// functions (docs/scripting.md): Redis's scripting environment (the
// redis.* API, cjson, bit, the sandbox and its globals protection), the
// scripts compiled into it, and a run of one script: its
// redis.call()s executed through the worker, RESP replies turned into Lua
// values and the script's result turned back into a reply, as Redis 7.2's
// script_lua.c converts them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/buffer.h"
#include "scripting/functions.h"
#include "scripting/script_cache.h"

struct lua_State;

namespace peregrine {

class Worker;
struct CommandContext;
struct Client;

class LuaEngine {
 public:
  explicit LuaEngine(Worker* worker);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // A script compiled here: what the server knows of it, and the function
  // in the Lua registry.
  struct Compiled {
    std::shared_ptr<ScriptInfo> info;
    int ref;
  };
  // The script with this SHA (any case), compiled here (from the server's
  // cache the first time), or null if the server does not know it.
  const Compiled* FindSha(std::string_view sha);
  // The script with this body: compiled and added to the server's cache if
  // new. Null with *err (the reply's text) if it does not compile.
  const Compiled* FindOrLoadBody(std::string_view body, std::string* err);
  // The script with this body if the server knows it (nothing is added).
  const Compiled* FindBody(std::string_view body);

  // EVAL / EVALSHA of a found script: checks its flags against the command
  // (read_only: the _RO forms), runs it with `keys` and `args` and replies
  // the result (or the error) to ctx.reply.
  void Eval(CommandContext& ctx, const Compiled& script, std::span<const std::string_view> keys,
            std::span<const std::string_view> args, bool read_only);

  // FUNCTION LOAD's check: runs the library's code here (its
  // redis.register_function calls fill lib->functions); false with *err
  // (the reply's text). The code is not kept here.
  bool LoadLibrary(FunctionLibrary* lib, std::string* err);
  // FCALL / FCALL_RO of a function of the registry (its library loaded
  // here first if it is not yet).
  void Fcall(CommandContext& ctx, const FunctionRegistry::Found& f, std::span<const std::string_view> keys,
             std::span<const std::string_view> args, bool read_only);
  // redis.register_function (lua_functions.cc).
  int RegisterFunction(lua_State* L);

  // The interpreters' memory: the scripts' (INFO used_memory_vm_eval) and
  // the functions' (used_memory_vm_functions); 0 for one not made yet.
  size_t EvalMemoryBytes() const { return eval_.heap.bytes; }
  size_t FunctionMemoryBytes() const { return fn_.heap.bytes; }

  // Drops the compiled scripts, and the interpreter, if the server's cache
  // was flushed (SCRIPT FLUSH).
  void SyncEpoch();

  // For the C functions of the redis.* API (lua_engine.cc).
  struct Run;
  Run* current_run() { return run_; }
  Worker* worker() { return worker_; }
  Client& script_client() { return *script_client_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // One interpreter: scripts (EVAL & co.) have one, functions another, as
  // in Redis; each made at its first use. Its heap counts every block its
  // allocator holds; while a script or library code runs on it, `limit` is
  // lua-maxmemory (0: none) and an allocation that would pass it fails
  // (Lua raises "not enough memory") and stops the run (lua_engine.cc).
  struct Heap {
    size_t bytes = 0;
    size_t limit = 0;
    bool exceeded = false;  // the run met the limit
    lua_State* L = nullptr;
  };
  struct Vm {
    lua_State* L = nullptr;
    Heap heap;
    int err_handler_ref = 0;  // Redis's error handler (the error as a table with source and line)
  };
  static void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize);
  // Makes `vm` an interpreter with Redis's libraries, the redis.* API and
  // the error handler (its globals not protected yet).
  void NewState(Vm* vm);
  static void CloseState(Vm* vm);
  Vm& EvalVm();
  Vm& FnVm();
  // Runs a prepared call (the function and its arguments above the error
  // handler, `nargs` of them) with lua-maxmemory armed; Lua's status.
  int CallLimited(Vm& vm, int nargs, int nresults);
  // Compiles `info` into this interpreter; `fresh`: a script no other
  // worker can see yet, whose flags this sets.
  const Compiled* Compile(std::shared_ptr<ScriptInfo> info, bool fresh, std::string* err);
  void RunScript(CommandContext& ctx, Vm& vm, const ScriptInfo& script, int ref,
                 std::span<const std::string_view> keys, std::span<const std::string_view> args, bool read_only,
                 bool function);
  // The reply of a run that failed (the error at the top).
  void ReplyError(CommandContext& ctx, Vm& vm, const ScriptInfo& script);
  // Functions (lua_functions.cc): their interpreter's environment, and the
  // libraries loaded here (by name: the registry's id and each function's
  // callback).
  void SetupFunctions();
  bool RunLibraryCode(FunctionLibrary* lib, std::map<std::string, int>* refs, std::string* err);
  void DropLibraries();
  struct LoadedLibrary {
    uint64_t id;
    std::map<std::string, int> refs;
  };
  std::unordered_map<std::string, LoadedLibrary> libraries_;
  uint64_t functions_epoch_ = 0;
  int fn_meta_ref_ = 0;       // the metatable of the functions' globals (__index: the real globals, or the library API while a library loads)
  int fn_real_globals_ref_ = 0;
  int lib_api_ref_ = 0;       // what library code sees while it loads
  struct Loading {
    FunctionLibrary* lib;
    std::map<std::string, int>* refs;
    int64_t start_ms;
  };
  Loading* loading_ = nullptr;

  Worker* worker_;
  Vm eval_;
  Vm fn_;
  uint64_t epoch_ = 0;
  std::unordered_map<std::string, Compiled, Hash, std::equal_to<>> by_sha_;  // (nodes: pointers stay)
  // EVAL's bodies already seen: the SHA without hashing the body again.
  std::unordered_map<std::string, const Compiled*, Hash, std::equal_to<>> sha_of_body_;
  const Compiled* KnownBody(std::string_view body);
  Run* run_ = nullptr;
  // The run's state, kept from one run to the next (its buffers keep their
  // room: a script run allocates nothing once warm).
  std::unique_ptr<Run> run_storage_;
  int gc_runs_ = 0;
  std::unique_ptr<Client> script_client_;  // the client redis.call()s run as
};

}  // namespace peregrine
