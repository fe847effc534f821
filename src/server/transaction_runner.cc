// TransactionRunner: MULTI ... EXEC and WATCH on a worker (see
// transaction_runner.h, docs/transactions.md).
#include "server/transaction_runner.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "server/worker_internal.h"

namespace peregrine {

namespace {

// Calls f(spec, args) for each queued command until f returns false.
template <typename F>
void ForEachQueued(const Client::Transaction& t, std::vector<std::string_view>* args, F&& f) {
  worker_internal::ForEachPacked(t.bytes, t.arg_sizes, t.commands, 0, args,
                [&](size_t, const Client::Transaction::Queued& q, std::span<const std::string_view> a) {
                  return f(q.spec, a);
                });
}

}  // namespace

void TransactionRunner::Queue(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd) {
  Client::Transaction& t = *c.multi;
  if (t.aborted) return;  // EXEC fails whatever was queued: nothing to keep (as Redis)
  for (std::string_view a : args) {
    t.bytes.append(a);
    t.arg_sizes.push_back(static_cast<uint32_t>(a.size()));
  }
  t.commands.push_back({cmd, static_cast<uint32_t>(args.size())});
  t.denyoom = t.denyoom || (cmd->flags & kCmdDenyOom) != 0;
  t.writes = t.writes || (cmd->flags & (kCmdWrite | kCmdMayReplicate)) != 0;
}

bool TransactionRunner::Shards(const Client& c, std::vector<uint32_t>* out, bool* keyed) {
  if (c.multi == nullptr || c.multi->aborted || worker_.nworkers_ == 1) return false;
  out->clear();
  *keyed = !c.multi->commands.empty();
  std::vector<std::string_view> args;
  ForEachQueued(*c.multi, &args, [&](const CommandSpec* spec, std::span<const std::string_view> a) {
    if ((spec->flags & (kCmdPublishes | kCmdScript)) || spec->NeedsAllShards(a)) {
      // Every shard (PUBLISH: every worker's subscribers; a script may touch
      // keys it did not declare, and inside EXEC it cannot run again).
      out->clear();
      for (uint32_t s = 0; s < worker_.nworkers_; s++) out->push_back(s);
      *keyed = false;
      return false;
    }
    if (spec->first_key <= 0 || static_cast<size_t>(spec->first_key) >= a.size()) {
      *keyed = false;  // (keyless commands change the connection: SELECT, CLIENT ...)
      return true;
    }
    // The first key's shard even when the others cannot be read (a bad
    // numkeys): the command runs there and replies its error.
    out->push_back(static_cast<uint32_t>(worker_.server_.ShardIndexOf(a[static_cast<size_t>(spec->first_key)])));
    if (spec->KeyPositions(a, &key_positions_))
      for (size_t pos : key_positions_) out->push_back(static_cast<uint32_t>(worker_.server_.ShardIndexOf(a[pos])));
    return true;
  });
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return true;
}

bool TransactionRunner::SendWhole(Client& c, const CommandSpec* exec, std::string_view exec_word, uint32_t target) {
  Client::Transaction& t = *c.multi;
  // Over maxmemory with a command that may add memory: the usual path
  // refuses it with EXECABORT.
  if (t.denyoom && worker_.server_.config().maxmemory > 0 && !worker_.EnforceMaxmemory(worker_.shard_)) return false;
  ExecBatch* b = worker_.relay_.NewBatch();
  b->from = worker_.index_;
  b->target = target;
  b->client_id = c.id;
  b->db = c.db;
  b->resp = c.resp;
  worker_.relay_.NoteOrigin(b, c);
  // (Swapped, not copied: the transaction ends here, and each side keeps
  // the other's room for its next use.)
  b->bytes.swap(t.bytes);
  b->arg_sizes.swap(t.arg_sizes);
  // (CLIENT CACHING holds for the whole transaction: cleared after it.)
  for (const Client::Transaction::Queued& q : t.commands) {
    b->commands.push_back({q.spec, q.argc, target});
    b->commands.back().no_touch = c.no_touch;
    b->commands.back().tracking = c.tracking;
  }
  c.tracking &= static_cast<uint8_t>(~tracking::kCaching);
  b->transaction = true;
  if (worker_.server_.monitors().load(std::memory_order_relaxed) > 0) [[unlikely]]
    b->exec_word = exec_word;
  b->sealed = true;  // nothing of the client joins it
  b->only_publishes = false;
  if (c.watch != nullptr) {
    b->watch = c.watch;
    b->watch_deadline_ms = c.watch->EarliestDeadline();
  }
  c.last_cmd = exec;
  worker_.command_stats_[exec->id].calls++;
  worker_.stats_.total_commands_processed++;
  c.EndTransaction(std::move(c.multi));
  c.open_batch = b;
  return true;
}

void TransactionRunner::Run(CommandContext& ctx) {
  Client& c = ctx.client;
  if (c.multi == nullptr) {
    ctx.reply.Error("ERR EXEC without MULTI");
    return;
  }
  std::unique_ptr<Client::Transaction> t = std::move(c.multi);
  struct Keep {  // the buffers go back to the client whatever the outcome
    Client& c;
    std::unique_ptr<Client::Transaction>& t;
    ~Keep() { c.EndTransaction(std::move(t)); }
  } keep{c, t};
  // A watched key changed, or its deadline passed (Redis 7), since WATCH:
  // a null array, nothing runs. Checked holding the transaction's shards
  // (docs/transactions.md: why the watched keys' own need not be held).
  const bool watch_failed = c.watch != nullptr && (c.watch->Dirty() || c.watch->AnyExpired(ctx.now_ms));
  Unwatch(c);
  if (t->aborted) {
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (watch_failed) {
    ctx.reply.NullArray();
    return;
  }
  const CommandSpec* exec = c.last_cmd;
  Client* const running = worker_.current_client_;
  ctx.reply.ArrayHeader(t->commands.size());
  // Each command as if sent alone (its statistics, its errors in the
  // array), holding what EXEC holds; none blocks, and clients waiting on
  // keys it fills are served after the whole transaction.
  worker_.in_exec_ = true;
  exec_client_ = &c;
  uint64_t now = CycleClock::Now();
  std::vector<std::string_view> args;
  ForEachQueued(*t, &args, [&](const CommandSpec* spec, std::span<const std::string_view> a) {
    now = worker_.ExecuteCommand(c, a, spec, nullptr, now);
    return !c.closed && !c.close_after_reply;
  });
  exec_client_ = nullptr;
  worker_.in_exec_ = false;
  worker_.current_client_ = running;
  c.last_cmd = exec;
}

void TransactionRunner::Unwatch(Client& c) {
  if (c.watch == nullptr) return;
  const std::shared_ptr<WatchState> w = std::move(c.watch);
  // Mail per shard, in the order of the client's keys.
  std::vector<UnwatchMail*> mail;
  for (WatchState::Key& k : w->keys) {
    if (k.shard == worker_.index_ && !worker_.router_.lent()) {
      worker_.shard_.watches().Remove(k.db, k.key, w.get());
      continue;
    }
    if (mail.empty()) mail.resize(worker_.nworkers_, nullptr);
    if (mail[k.shard] == nullptr) mail[k.shard] = new UnwatchMail(w);
    mail[k.shard]->keys.push_back({k.db, std::move(k.key)});
  }
  for (uint32_t s = 0; s < mail.size(); s++) {
    if (mail[s] == nullptr) continue;
    if (s == worker_.index_)
      worker_.router_.deferred().push_back(mail[s]);  // this worker's shard is lent: when it is back
    else
      worker_.router_.Send(s, mail[s]);
  }
}

}  // namespace peregrine
