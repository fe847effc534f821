// Scripting on the worker (docs/scripting.md): the interpreter, the
// commands scripts call, and running a script again holding every shard
// when it touched a key outside its declared keys' shards.
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "server/lua_engine.h"
#include "server/worker_internal.h"

namespace peregrine {

LuaEngine& Worker::lua() {
  if (lua_ == nullptr) lua_ = std::make_unique<LuaEngine>(this);
  return *lua_;
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
  RecycleBatch(b);
}

}  // namespace peregrine

namespace peregrine {

namespace {

constexpr std::string_view kBusyEval =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
constexpr std::string_view kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
constexpr uint8_t kBusyFunctionBit = 4;

// What a client may run while a script is busy (Redis's allow-busy
// commands that need no shard: the transaction commands, so that a
// pipelined transaction is not cut in half, and the connection's own).
bool BusyAllowed(const CommandSpec& cmd, std::span<const std::string_view> args) {
  static constexpr std::string_view kAllowed[] = {"script|kill", "function|kill", "function|stats", "multi",
                                                  "discard", "unwatch", "reset", "quit", "hello", "auth"};
  for (std::string_view n : kAllowed)
    if (cmd.fullname == n) return true;
  if (cmd.fullname == "shutdown") {  // SHUTDOWN NOSAVE only, as in Redis
    for (size_t i = 1; i < args.size(); i++)
      if (args[i].size() == 6 && strncasecmp(args[i].data(), "nosave", 6) == 0) return true;
  }
  return false;
}

}  // namespace

void Worker::EnterScriptBusy(const Client* caller, bool eval, std::string name,
                             std::span<const std::string_view> command, int64_t start_ms) {
  server_.SetRunningScript(
      Server::RunningScript{std::move(name), eval, std::vector<std::string>(command.begin(), command.end()), start_ms});
  server_.busy_function().store(!eval, std::memory_order_relaxed);
  server_.busy_scripts().fetch_add(1, std::memory_order_relaxed);
  busy_script_ = true;
  script_caller_ = caller;
  script_busy_state_.store(static_cast<uint8_t>(1 | (eval ? 0 : kBusyFunctionBit)), std::memory_order_release);
}

void Worker::LeaveScriptBusy() {
  server_.SetRunningScript(std::nullopt);
  server_.busy_scripts().fetch_sub(1, std::memory_order_relaxed);
  busy_script_ = false;
  script_caller_ = nullptr;
  script_busy_state_.store(0, std::memory_order_release);
  script_kill_.store(false, std::memory_order_release);
}

bool Worker::script_kill_requested() const {
  return script_kill_.load(std::memory_order_acquire) || server_.stopping();
}

Worker::KillResult Worker::KillBusyScript(bool eval) {
  const uint8_t state = script_busy_state_.load(std::memory_order_acquire);
  if (state == 0) return KillResult::kNotBusy;
  if (((state & kBusyFunctionBit) == 0) != eval) return KillResult::kOtherKind;
  if (state & 2) return KillResult::kWrote;
  script_kill_.store(true, std::memory_order_release);
  return KillResult::kKilled;
}

void Worker::WhileScriptBusy(bool wrote) {
  if (wrote) script_busy_state_.fetch_or(2, std::memory_order_acq_rel);
  loop_.DispatchReady();
  DrainWhileBusy();
  FlushPendingWrites();
  FlushOutboxes();
  ServeParkedWorkers();
}

void Worker::ServeParkedWorkers() {
  if (!holding_) return;
  bool asked = false;
  for (uint32_t w : held_workers()) {
    if (w == index_) continue;
    Worker& other = server_.worker(w);
    other.serve_parked_.store(1, std::memory_order_release);
    other.waker_.Notify();
    asked = true;
  }
  if (!asked) return;
  // Each answers at once from its wait (a round of its ready events); one
  // that cannot (a worker parked in the middle of a command acknowledges
  // unserved) or is slow to wake is not asked again before the next hook.
  const int64_t deadline = MonotonicMs() + 50;
  for (uint32_t w : held_workers()) {
    if (w == index_) continue;
    std::atomic<uint8_t>& state = server_.worker(w).serve_parked_;
    while (state.load(std::memory_order_acquire) != 0) {
      uint8_t unanswered = 1;
      if (MonotonicMs() > deadline &&
          state.compare_exchange_strong(unanswered, 0, std::memory_order_acq_rel))
        break;
      std::this_thread::yield();
    }
  }
}

bool Worker::AnswerServeRequest(bool serve) {
  uint8_t asked = 1;
  if (!serve_parked_.compare_exchange_strong(asked, 2, std::memory_order_acq_rel)) return false;
  if (serve && lent_to_ >= 0) ServeWhileParked();
  serve_parked_.store(0, std::memory_order_release);
  return true;
}

void Worker::ServeWhileParked() {
  parked_busy_ = true;
  // Its clients, and (worker 0) the listeners: a new connection is answered
  // -BUSY too, and may send SCRIPT KILL.
  loop_.DispatchReady([](IoHandler* h) { return h->ServedWhileParked(); });
  parked_busy_ = false;
  FlushPendingWrites();
}

void Worker::AdoptParked() {
  for (auto& c : adopted_while_parked_) {
    const uint64_t id = c->id;
    clients_.emplace(id, std::move(c));
  }
  adopted_while_parked_.clear();
}

void Worker::BusyClientEvent(Client& c, uint32_t events) {
  // The script's caller is not touched (its input is being run up the
  // stack); a client whose earlier commands are still out waits its turn.
  if (&c == script_caller_) return;
  if (events & EPOLLOUT) {
    FlushAof();
    FlushClient(c);
  }
  if (c.closed || !(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  if (c.read_closed || c.filling_big_arg() || !c.big_args.empty()) return;
  char* p = c.in.Reserve(worker_internal::kReadChunk);
  const ssize_t n = ClientIo::ReadSocket(c, p, c.in.writable());
  if (n > 0) {
    c.in.Commit(static_cast<size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    if (parked_busy_) return;  // (closed once the shard is back: the socket says so again)
    if (c.batch_in_flight || c.open_batch != nullptr || c.waiting())
      c.read_closed = true;
    else
      CloseClient(c);
    return;
  } else {
    return;
  }
  if (c.waiting() || c.batch_in_flight || c.open_batch != nullptr) return;
  while (!c.in.empty() && !c.closed && !c.close_after_reply) {
    const RequestParser::Result r = c.parser.Parse(c.in.data(), c.in.size());
    if (r == RequestParser::Result::kError) {
      if (!parked_busy_) CloseClient(c);
      return;
    }
    if (r != RequestParser::Result::kCommand) break;
    if (!c.parser.args().empty()) BusyCommand(c, c.parser.args());
    c.in.Consume(c.parser.consumed());
  }
  if (!c.closed) QueueWrite(c);
}

void Worker::BusyCommand(Client& c, std::span<const std::string_view> args) {
  // Redis's order: unknown command, arity, then the busy refusal.
  const CommandSpec* cmd = server_.commands().Find(args[0]);
  std::string error;
  const CommandSpec* spec = Resolve(args, cmd, &error);
  ReplyWriter reply(&c.out, c.resp, this);
  auto refuse = [&](std::string_view msg) {
    if (spec != nullptr) command_stats_[spec->id].rejected_calls++;
    reply.Error(msg);
    if (c.multi != nullptr) c.multi->aborted = true;  // (Redis's rejectCommand dooms a transaction)
  };
  if (spec == nullptr) return refuse(error);
  c.last_cmd = spec;
  if (!worker_internal::ArityOk(*spec, args.size()))
    return refuse("ERR wrong number of arguments for '" + spec->fullname + "' command");
  if (!c.authenticated || !c.user->unrestricted) {
    const std::string denied = AccessError(c, *spec, args);
    if (!denied.empty()) return refuse(denied);
  }
  if (!BusyAllowed(*spec, args)) {
    const std::string_view busy = server_.busy_function().load(std::memory_order_relaxed) ? kBusyFunction : kBusyEval;
    if (spec->fullname == "exec") {
      // Redis's execCommandAbort: the transaction is discarded, and said so.
      command_stats_[spec->id].rejected_calls++;
      if (c.multi != nullptr) DiscardTransaction(c);
      reply.Error("EXECABORT Transaction discarded because of: " + std::string(busy));
      return;
    }
    return refuse(busy);
  }
  // Allowed: run here without the usual path (which may evict from this
  // worker's shard, lent if it is parked); none of these touches a key.
  if (c.multi != nullptr && !(spec->flags & kCmdNotQueued)) {
    TransactionRunner::Queue(c, args, spec);
    reply.SimpleString("QUEUED");
    return;
  }
  CommandContext ctx{server_, *this, c, shard_, args, reply, UnixTimeMs(), nullptr};
  const uint64_t start = CycleClock::Now();
  spec->handler(ctx);
  command_stats_[spec->id].calls++;
  command_stats_[spec->id].ticks += CycleClock::Now() - start;
}

void Worker::DrainWhileBusy() {
  PopMail([this](uint32_t from, uint64_t word) {
    if (word & 1) {
      // Nothing is lent while a command runs: a request waits its turn.
      switch (static_cast<Control>((word >> 1) & 0x7f)) {
        case Control::kLend: lend_queue_.push_back(from); break;
        case Control::kEvict: evict_requested_ = true; break;
        default: Handle(from, word); break;
      }
      return;
    }
    Mail* m = reinterpret_cast<Mail*>(word);
    if (m->kind != Mail::Kind::kExec) {
      deferred_.push_back(m);  // handled once the script is over (BeforeWait)
      return;
    }
    // Another worker's commands for this shard: -BUSY each, as Redis
    // answers every client while a script is busy.
    auto* b = static_cast<ExecBatch*>(m);
    ReplyWriter reply(&b->reply, b->resp, this);
    const bool function = server_.busy_function().load(std::memory_order_relaxed);
    for (const ExecBatch::Command& cmd : b->commands) {
      command_stats_[cmd.spec->id].rejected_calls++;
      reply.Error(function ? kBusyFunction : kBusyEval);
    }
    b->kind = Mail::Kind::kExecDone;
    Send(b->from, reinterpret_cast<uint64_t>(static_cast<Mail*>(b)));
  });
}

}  // namespace peregrine
