// Scripting on the worker (docs/scripting.md): the interpreter, the
// commands scripts call, and running a script again holding every shard
// when it touched a key outside its declared keys' shards. (A script past
// busy-reply-threshold: script_busy.{h,cc}.)
#include "server/lua_engine.h"
#include "server/worker_internal.h"

namespace peregrine {

LuaEngine& Worker::lua() {
  if (lua_ == nullptr) lua_ = std::make_unique<LuaEngine>(this);
  return *lua_;
}

bool Worker::HoldsShard(uint32_t s) const {
  if (nworkers_ == 1) return true;
  for (uint32_t h : held_workers())
    if (h == s) return true;
  return false;
}

size_t Worker::LuaEvalBytes() const { return lua_ == nullptr ? 0 : lua_->EvalMemoryBytes(); }
void Worker::SyncScripts() {
  if (lua_ != nullptr) lua_->SyncEpoch();
}

size_t Worker::LuaFunctionBytes() const { return lua_ == nullptr ? 0 : lua_->FunctionMemoryBytes(); }

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
  CallHandler(ctx, cmd);
  // CLIENT TRACKING: a read of the script is remembered for its caller.
  if (caller.client.track_reads && (cmd->flags & kCmdReadonly)) [[unlikely]]
    RememberReads(caller.client.id, caller.client.home, cmd, args);
  if (server_.monitors().load(std::memory_order_relaxed) > 0 && !(cmd->flags & (kCmdSkipMonitor | kCmdAdmin)))
    [[unlikely]] monitor_.Feed(script_client, script_client.db, *cmd, args);  // ("[db lua]")
  current_client_ = running;
  st.ticks += CycleClock::Now() - start;
  st.calls++;
  if (stats_.total_error_replies != errors_before) st.failed_calls++;
  script_errors_ += stats_.total_error_replies - errors_before;
  stats_.total_commands_processed++;
}

void Worker::CountScriptRejection(const CommandSpec* cmd, std::string_view error) {
  if (cmd != nullptr) command_stats_[cmd->id].rejected_calls++;
  // (The error's code: its first word after a '-', else ERR.)
  OnErrorReply(!error.empty() && error[0] == '-' ? error.substr(1) : std::string_view("ERR"));
  script_errors_++;
}

bool Worker::ScriptNeedsAllShards(std::span<const std::string_view> args, const CommandSpec* spec) {
  if (nworkers_ == 1 || args.size() < 2) return false;
  if (spec->name == "fcall" || spec->name == "fcall_ro") {
    const auto f = server_.functions().Find(args[1]);
    return f && f->run->NeedsAllShards();  // (none: "Function not found", here)
  }
  const bool eval = spec->name == "eval" || spec->name == "eval_ro";
  // (EVAL's script is not loaded here: EVAL checks its arguments first.)
  const LuaEngine::Compiled* c = eval ? lua().FindBody(args[1]) : lua().FindSha(args[1]);
  if (c == nullptr) return eval;  // a new script's first run holds every shard; NOSCRIPT here
  return c->info->NeedsAllShards();
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
  // The commands from the one that stopped on, in order; a pause keeps the
  // rest for when the client can go on.
  bool paused = false;
  std::vector<std::string_view> args;
  worker_internal::ForEachPacked(b->bytes, b->arg_sizes, b->commands, c.pending_next, &args,
                [&](size_t i, const ExecBatch::Command& cmd, std::span<const std::string_view> a) {
    uint64_t t = CycleClock::Now();
    const uint32_t shard = cmd.spec->first_key > 0 && static_cast<size_t>(cmd.spec->first_key) < a.size()
                               ? static_cast<uint32_t>(server_.ShardIndexOf(a[static_cast<size_t>(cmd.spec->first_key)]))
                               : index_;
    if (Dispatch(c, a, cmd.spec, nullptr, shard, &t) == Route::kPause) {
      paused = true;
      return false;
    }
    c.pending_next = i + 1;
    return !c.closed;
  });
  if (paused || c.closed) return;
  c.pending = nullptr;
  c.pending_next = 0;
  relay_.Recycle(b);
}

}  // namespace peregrine
