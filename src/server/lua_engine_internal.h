// What lua_engine.cc and lua_api.cc share (private to src/server/lua_*.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/buffer.h"
#include "server/lua_engine.h"

struct lua_State;

namespace peregrine {

struct CommandContext;

// One script's run: what its redis.call()s need. The engine keeps one and
// resets it for each run (Start); the buffers keep their room.
struct LuaEngine::Run {
  CommandContext* ctx = nullptr;  // the EVAL's
  const ScriptInfo* script = nullptr;
  bool read_only = false;  // write commands refused (EVAL_RO, a no-writes script)
  bool allow_oom = false;  // denyoom commands allowed over maxmemory
  bool oom = false;        // over maxmemory when the script started
  bool write_dirty = false;
  bool aborted = false;  // stopped to run again holding every shard
  int resp = 2;          // redis.setresp()
  int64_t start_ms = 0;        // monotonic
  int64_t instructions = 0;    // counted by the hook, 100,000 at a time
  bool busy = false;           // past busy-reply-threshold
  bool function = false;       // FCALL (FUNCTION KILL kills it)
  std::vector<uint32_t> declared;  // the shards of KEYS (several workers only)
  int slot = -1;  // cluster mode: the slot of its keys (ClusterRoute::ScriptCallError)
  // Scratch of each redis.call().
  Buffer reply;
  std::vector<std::string> argv;
  std::vector<std::string_view> views;
  std::vector<size_t> key_positions;

  void Start(CommandContext* c, const ScriptInfo* s, bool ro, bool oom_allowed, bool over, bool fn) {
    ctx = c;
    script = s;
    read_only = ro;
    allow_oom = oom_allowed;
    oom = over;
    function = fn;
    write_dirty = aborted = busy = false;
    resp = 2;
    instructions = 0;
    declared.clear();
    slot = -1;
  }
};

namespace lua_api {

// The engine whose script this thread runs (one per worker thread): the
// redis.* functions find their run through it.
void SetThreadEngine(LuaEngine* engine);
LuaEngine* ThreadEngine();

// Registers the redis table, Redis's pcall and math.random / randomseed in
// the state's globals.
void RegisterRedisApi(lua_State* L);

// Instructions between two runs of the count hook.
inline constexpr int kHookInstructions = 100000;
// busy-reply-threshold's and the fuzzer's bound's hook (every
// kHookInstructions): answers other clients once busy, stops a killed run.
void CountHook(lua_State* L, struct lua_Debug* ar);
// redis.register_function, in the library API (calls the thread's engine).
int RegisterFunction(lua_State* L);

}  // namespace lua_api
}  // namespace peregrine
