// Scripting on the worker (docs/scripting.md): the interpreter, the
// commands scripts call, and running a script again holding every shard
// when it touched a key outside its declared keys' shards.
#include "scripting/lua_engine.h"
#include "server/worker_internal.h"

namespace peregrine {

LuaEngine& Worker::lua() {
  if (lua_ == nullptr) lua_ = std::make_unique<LuaEngine>(this);
  return *lua_;
}

void Worker::ScriptCall(CommandContext& caller, Client& script_client, const CommandSpec* cmd,
                        std::span<const std::string_view> args, ReplyWriter& reply, Shard& shard) {
  CommandStats& st = command_stats_[cmd->id];
  script_client.resp = reply.resp();
  script_client.last_cmd = cmd;
  CommandContext ctx{server_, *this, script_client, shard, args, reply, caller.now_ms, nullptr};
  Client* const running = current_client_;
  current_client_ = &script_client;
  const uint64_t start = CycleClock::Now();
  const uint64_t errors_before = stats_.total_error_replies;
  cmd->handler(ctx);
  current_client_ = running;
  st.ticks += CycleClock::Now() - start;
  st.calls++;
  if (stats_.total_error_replies != errors_before) st.failed_calls++;
  stats_.total_commands_processed++;
}

bool Worker::ScriptNeedsAllShards(std::span<const std::string_view> args, const CommandSpec* spec) {
  if (nworkers_ == 1 || args.size() < 2) return false;
  LuaEngine& engine = lua();
  const ScriptInfo* info;
  if (spec->name == "eval" || spec->name == "eval_ro") {
    std::string err;
    info = engine.FindOrLoadBody(args[1], &err);
  } else {
    info = args[1].size() == 40 ? engine.FindSha(args[1]) : nullptr;
  }
  return info != nullptr &&
         (!info->seen.load(std::memory_order_relaxed) || info->all_shards.load(std::memory_order_relaxed));
}

bool Worker::TakeScriptRerun() {
  if (!script_rerun_) return false;
  script_rerun_ = false;
  return true;
}

uint64_t Worker::RerunHoldingAll(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                                 uint64_t start) {
  shard_set_.clear();
  for (uint32_t s = 0; s < nworkers_; s++) shard_set_.push_back(s);
  const uint64_t end = ExecuteHolding(c, args, cmd, nullptr, start);
  TakeScriptRerun();  // (cannot stop again: it holds every shard)
  return end;
}

void Worker::RunPending(Client& c) {
  ExecBatch* b = c.pending;
  // The commands after the one that stopped, with their arguments.
  size_t offset = 0, arg = 0;
  for (size_t i = 0; i < b->commands.size(); i++) {
    const ExecBatch::Command& cmd = b->commands[i];
    if (i < c.pending_next) {
      for (uint32_t j = 0; j < cmd.argc; j++) offset += b->arg_sizes[arg++];
      continue;
    }
    std::vector<std::string_view> args;
    for (uint32_t j = 0; j < cmd.argc; j++, arg++) {
      args.emplace_back(b->bytes.data() + offset, b->arg_sizes[arg]);
      offset += b->arg_sizes[arg];
    }
    uint64_t t = CycleClock::Now();
    const uint32_t shard = cmd.spec->first_key > 0 && static_cast<size_t>(cmd.spec->first_key) < args.size()
                               ? static_cast<uint32_t>(server_.ShardIndexOf(args[static_cast<size_t>(cmd.spec->first_key)]))
                               : index_;
    if (Dispatch(c, args, cmd.spec, nullptr, shard, &t) == Route::kPause) return;
    c.pending_next = i + 1;
    if (c.closed) return;
  }
  c.pending = nullptr;
  c.pending_next = 0;
  RecycleBatch(b);
}

}  // namespace peregrine
