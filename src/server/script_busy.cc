// A worker's script busy mode (script_busy.h, docs/scripting.md "Busy
// scripts"): the busy script's hook answering this worker's clients and
// mail, the serve handshake with the workers it parks, SCRIPT KILL.
#include "server/script_busy.h"

#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "server/worker_internal.h"

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

void ScriptBusy::Enter(const Client* caller, bool eval, std::string name, std::span<const std::string_view> command,
                       int64_t start_ms) {
  Server& server = worker_.server_;
  server.SetRunningScript(
      Server::RunningScript{std::move(name), eval, std::vector<std::string>(command.begin(), command.end()), start_ms});
  server.busy_function().store(!eval, std::memory_order_relaxed);
  server.busy_scripts().fetch_add(1, std::memory_order_relaxed);
  active_ = true;
  caller_ = caller;
  state_.store(static_cast<uint8_t>(1 | (eval ? 0 : kBusyFunctionBit)), std::memory_order_release);
}

void ScriptBusy::Leave() {
  Server& server = worker_.server_;
  server.SetRunningScript(std::nullopt);
  server.busy_scripts().fetch_sub(1, std::memory_order_relaxed);
  active_ = false;
  caller_ = nullptr;
  state_.store(0, std::memory_order_release);
  kill_.store(false, std::memory_order_release);
}

bool ScriptBusy::kill_requested() const {
  return kill_.load(std::memory_order_acquire) || worker_.server_.stopping();
}

CommandHost::KillResult ScriptBusy::Kill(bool eval) {
  using KillResult = CommandHost::KillResult;
  const uint8_t state = state_.load(std::memory_order_acquire);
  if (state == 0) return KillResult::kNotBusy;
  if (((state & kBusyFunctionBit) == 0) != eval) return KillResult::kOtherKind;
  if (state & 2) return KillResult::kWrote;
  kill_.store(true, std::memory_order_release);
  return KillResult::kKilled;
}

void ScriptBusy::WhileBusy(bool wrote) {
  if (wrote) state_.fetch_or(2, std::memory_order_acq_rel);
  worker_.loop_.DispatchReady();
  DrainMail();
  worker_.io_.FlushPending();
  worker_.router_.FlushOutboxes();
  ServeParkedWorkers();
}

void ScriptBusy::ServeParkedWorkers() {
  if (!worker_.holding_) return;
  Server& server = worker_.server_;
  bool asked = false;
  for (uint32_t w : worker_.held_workers()) {
    if (w == worker_.index_) continue;
    Worker& other = server.worker(w);
    other.script_busy_.serve_request_.store(1, std::memory_order_release);
    other.waker_.Notify();
    asked = true;
  }
  if (!asked) return;
  // Each answers at once from its wait (a round of its ready events); one
  // that cannot (a worker parked in the middle of a command acknowledges
  // unserved) or is slow to wake is not asked again before the next hook.
  const int64_t deadline = MonotonicMs() + 50;
  for (uint32_t w : worker_.held_workers()) {
    if (w == worker_.index_) continue;
    std::atomic<uint8_t>& state = server.worker(w).script_busy_.serve_request_;
    while (state.load(std::memory_order_acquire) != 0) {
      uint8_t unanswered = 1;
      if (MonotonicMs() > deadline &&
          state.compare_exchange_strong(unanswered, 0, std::memory_order_acq_rel))
        break;
      std::this_thread::yield();
    }
  }
}

bool ScriptBusy::AnswerServeRequest(bool serve) {
  uint8_t asked = 1;
  if (!serve_request_.compare_exchange_strong(asked, 2, std::memory_order_acq_rel)) return false;
  if (serve && worker_.router_.lent()) ServeWhileParked();
  serve_request_.store(0, std::memory_order_release);
  return true;
}

void ScriptBusy::ServeWhileParked() {
  parked_serving_ = true;
  // Its clients, and (worker 0) the listeners: a new connection is answered
  // -BUSY too, and may send SCRIPT KILL.
  worker_.loop_.DispatchReady([](IoHandler* h) { return h->ServedWhileParked(); });
  parked_serving_ = false;
  worker_.io_.FlushPending();
}

std::unique_ptr<Client> ScriptBusy::ReleaseAdopted(const Client& c) {
  for (auto p = adopted_.begin(); p != adopted_.end(); ++p) {
    if (p->get() != &c) continue;
    std::unique_ptr<Client> kept = std::move(*p);
    adopted_.erase(p);
    return kept;
  }
  return nullptr;
}

void ScriptBusy::AdoptParked() {
  for (auto& c : adopted_) {
    const uint64_t id = c->id;
    worker_.clients_.emplace(id, std::move(c));
  }
  adopted_.clear();
}

void ScriptBusy::ClientEvent(Client& c, uint32_t events) {
  // The script's caller is not touched (its input is being run up the
  // stack); a client whose earlier commands are still out waits its turn.
  if (&c == caller_) return;
  if (events & EPOLLOUT) {
    worker_.FlushAof();
    worker_.io_.Flush(c);
  }
  if (c.closed || !(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  if (c.read_closed || c.filling_big_arg() || !c.big_args.empty()) return;
  char* p = c.in.Reserve(ClientIo::kReadChunk);
  const ssize_t n = ClientIo::ReadSocket(c, p, c.in.writable());
  if (n > 0) {
    c.in.Commit(static_cast<size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    if (parked_serving_) return;  // (closed once the shard is back: the socket says so again)
    if (c.batch_in_flight || c.open_batch != nullptr || c.waiting())
      c.read_closed = true;
    else
      worker_.CloseClient(c);
    return;
  } else {
    return;
  }
  if (c.waiting() || c.batch_in_flight || c.open_batch != nullptr) return;
  while (!c.in.empty() && !c.closed && !c.close_after_reply) {
    const RequestParser::Result r = c.parser.Parse(c.in.data(), c.in.size());
    if (r == RequestParser::Result::kError) {
      if (!parked_serving_) worker_.CloseClient(c);
      return;
    }
    if (r != RequestParser::Result::kCommand) break;
    if (!c.parser.args().empty()) AnswerCommand(c, c.parser.args());
    c.in.Consume(c.parser.consumed());
  }
  if (!c.closed) worker_.io_.QueueWrite(c);
}

void ScriptBusy::AnswerCommand(Client& c, std::span<const std::string_view> args) {
  Server& server = worker_.server_;
  // Redis's order: unknown command, arity, then the busy refusal.
  const CommandSpec* cmd = server.commands().Find(args[0]);
  std::string error;
  const CommandSpec* spec = worker_.Resolve(args, cmd, &error);
  ReplyWriter reply(&c.out, c.resp, &worker_);
  auto refuse = [&](std::string_view msg) {
    if (spec != nullptr) worker_.command_stats_[spec->id].rejected_calls++;
    reply.Error(msg);
    if (c.multi != nullptr) c.multi->aborted = true;  // (Redis's rejectCommand dooms a transaction)
  };
  if (spec == nullptr) return refuse(error);
  c.last_cmd = spec;
  if (!worker_internal::ArityOk(*spec, args.size()))
    return refuse("ERR wrong number of arguments for '" + spec->fullname + "' command");
  if (!c.authenticated || !c.user->unrestricted) {
    const std::string denied = worker_.access_.AccessError(c, *spec, args);
    if (!denied.empty()) return refuse(denied);
  }
  if (!BusyAllowed(*spec, args)) {
    const std::string_view busy = server.busy_function().load(std::memory_order_relaxed) ? kBusyFunction : kBusyEval;
    if (spec->fullname == "exec") {
      // Redis's execCommandAbort: the transaction is discarded, and said so.
      worker_.command_stats_[spec->id].rejected_calls++;
      if (c.multi != nullptr) worker_.DiscardTransaction(c);
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
  CommandContext ctx{server, worker_, c, worker_.shard_, args, reply, UnixTimeMs(), nullptr};
  const uint64_t start = CycleClock::Now();
  spec->handler(ctx);
  worker_.command_stats_[spec->id].calls++;
  worker_.command_stats_[spec->id].ticks += CycleClock::Now() - start;
}

void ScriptBusy::DrainMail() {
  auto handle = [this](uint32_t from, uint64_t word) {
    if (ShardRouter::IsControl(word)) {
      worker_.router_.OnControlMidCommand(from, ShardRouter::ControlOf(word));
      return;
    }
    Mail* m = reinterpret_cast<Mail*>(word);
    if (m->kind == Mail::Kind::kEvictAsk) {  // (answered at once: nothing is evicted while the script runs)
      worker_.AnswerEvictAsk(static_cast<EvictMail*>(m), /*may_change=*/false);
      return;
    }
    // (A write group's part too: it holds its place on this shard, which
    // no -BUSY could give back; it runs once the script is over, and its
    // group's client waits.)
    if (m->kind != Mail::Kind::kExec || static_cast<ExecBatch*>(m)->ticket != 0) {
      worker_.router_.deferred().push_back(m);  // handled once the script is over (BeforeWait)
      return;
    }
    // Another worker's commands for this shard: -BUSY each, as Redis
    // answers every client while a script is busy.
    auto* b = static_cast<ExecBatch*>(m);
    ReplyWriter reply(&b->reply, b->resp, &worker_);
    const bool function = worker_.server_.busy_function().load(std::memory_order_relaxed);
    if (b->transaction) {
      // A whole MULTI ... EXEC: one reply, EXEC's (Redis refuses EXEC so).
      reply.Error(function ? kBusyFunction : kBusyEval);
    } else {
      // (Those that come next for this shard; the rest run on their way.)
      std::vector<std::string_view> args;
      b->RunFrom(worker_.index_, &args, [&](size_t, const ExecBatch::Command& cmd, std::span<const std::string_view>) {
        worker_.command_stats_[cmd.spec->id].rejected_calls++;
        reply.Error(function ? kBusyFunction : kBusyEval);
        return true;
      });
    }
    if (b->from == worker_.index_ && (b->transaction || b->finished())) {
      // A relay that ends at this worker's own client: its replies wait
      // with the rest of the mail until the script is over.
      b->kind = Mail::Kind::kExecDone;
      worker_.router_.deferred().push_back(b);
      return;
    }
    worker_.relay_.PassOn(b, /*stopped=*/b->transaction);
  };
  // (What a mail loop further out took and has yet to handle goes first:
  // one worker's words stay in order.)
  worker_.router_.SpillOuter(handle);
  worker_.router_.Pop(handle);
}

}  // namespace peregrine
