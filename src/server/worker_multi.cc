// MULTI ... EXEC on the worker (docs/transactions.md): commands queued
// inside MULTI, the shards an EXEC holds, and the queue run as one command.
#include <algorithm>
#include <string_view>
#include <vector>

#include "server/worker_internal.h"

namespace peregrine {

namespace {

// Calls f(spec, args) for each queued command.
template <typename F>
void ForEachQueued(const Client::Transaction& t, std::vector<std::string_view>* args, F&& f) {
  size_t arg = 0, off = 0;
  for (const Client::Transaction::Queued& q : t.commands) {
    args->clear();
    for (uint32_t i = 0; i < q.argc; ++i, ++arg) {
      args->emplace_back(t.bytes.data() + off, t.arg_sizes[arg]);
      off += t.arg_sizes[arg];
    }
    if (!f(q.spec, std::span<const std::string_view>(*args))) return;
  }
}

}  // namespace

void Worker::Queue(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd) {
  Client::Transaction& t = *c.multi;
  if (t.aborted) return;  // EXEC fails whatever was queued: nothing to keep (as Redis)
  for (std::string_view a : args) {
    t.bytes.append(a);
    t.arg_sizes.push_back(static_cast<uint32_t>(a.size()));
  }
  t.commands.push_back({cmd, static_cast<uint32_t>(args.size())});
  t.denyoom = t.denyoom || (cmd->flags & kCmdDenyOom) != 0;
}

bool Worker::TransactionShards(const Client& c, std::vector<uint32_t>* out) {
  if (c.multi == nullptr || c.multi->aborted || nworkers_ == 1) return false;
  out->clear();
  out->push_back(index_);
  std::vector<std::string_view> args;
  ForEachQueued(*c.multi, &args, [&](const CommandSpec* spec, std::span<const std::string_view> a) {
    if (spec->flags & (kCmdAllShards | kCmdPublishes | kCmdScript)) {
      // Every shard (PUBLISH: every worker's subscribers; a script may touch
      // keys it did not declare, and inside EXEC it cannot run again).
      out->clear();
      for (uint32_t s = 0; s < nworkers_; s++) out->push_back(s);
      return false;
    }
    if (spec->first_key <= 0 || static_cast<size_t>(spec->first_key) >= a.size()) return true;
    // The first key's shard even when the others cannot be read (a bad
    // numkeys): the command runs there and replies its error.
    out->push_back(static_cast<uint32_t>(server_.ShardIndexOf(a[static_cast<size_t>(spec->first_key)])));
    if (spec->KeyPositions(a, &key_positions_))
      for (size_t pos : key_positions_) out->push_back(static_cast<uint32_t>(server_.ShardIndexOf(a[pos])));
    return true;
  });
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return out->size() > 1;
}

bool Worker::SendTransaction(Client& c, const CommandSpec* exec) {
  if (nworkers_ == 1 || c.multi == nullptr || c.multi->aborted || c.multi->commands.empty()) return false;
  const Client::Transaction& t = *c.multi;
  int64_t target = -1;
  bool fits = true;
  std::vector<std::string_view> args;
  ForEachQueued(t, &args, [&](const CommandSpec* spec, std::span<const std::string_view> a) {
    if ((spec->flags & (kCmdAllShards | kCmdPublishes | kCmdScript)) || spec->first_key <= 0 ||
        static_cast<size_t>(spec->first_key) >= a.size()) {
      fits = false;  // (keyless commands change the connection: SELECT, CLIENT ...)
      return false;
    }
    key_positions_.clear();
    spec->KeyPositions(a, &key_positions_);
    key_positions_.push_back(static_cast<size_t>(spec->first_key));
    for (size_t pos : key_positions_) {
      const auto s = static_cast<int64_t>(server_.ShardIndexOf(a[pos]));
      if (s == index_ || (target >= 0 && s != target)) {
        fits = false;
        return false;
      }
      target = s;
    }
    return true;
  });
  if (!fits || target < 0) return false;
  // Over maxmemory with a command that may add memory: the usual path
  // refuses it with EXECABORT.
  if (t.denyoom && server_.config().maxmemory > 0 && !EnforceMaxmemory(shard_)) return false;
  ExecBatch* b = NewBatch();
  b->from = index_;
  b->target = static_cast<uint32_t>(target);
  b->client_id = c.id;
  b->db = c.db;
  b->resp = c.resp;
  b->bytes = t.bytes;
  b->arg_sizes = t.arg_sizes;
  for (const Client::Transaction::Queued& q : t.commands) b->commands.push_back({q.spec, q.argc});
  b->transaction = true;
  b->sealed = true;  // nothing of the client joins it
  b->only_publishes = false;
  if (c.watch != nullptr) {
    b->watch = c.watch;
    for (const WatchState::Key& k : c.watch->keys)
      if (k.deadline_ms >= 0 && (b->watch_deadline_ms < 0 || k.deadline_ms < b->watch_deadline_ms))
        b->watch_deadline_ms = k.deadline_ms;
  }
  c.last_cmd = exec;
  command_stats_[exec->id].calls++;
  stats_.total_commands_processed++;
  c.EndTransaction(std::move(c.multi));
  c.open_batch = b;
  return true;
}

void Worker::RunTransactionBatch(ExecBatch* b) {
  proxy_.id = b->client_id;
  proxy_.home = b->from;
  proxy_.db = b->db;
  proxy_.resp = b->resp;
  ReplyWriter reply(&b->reply, b->resp, this);
  const int64_t now_ms = UnixTimeMs();
  const bool watch_failed = b->watch != nullptr && (b->watch->Dirty() || (b->watch_deadline_ms >= 0 &&
                                                                          b->watch_deadline_ms <= now_ms));
  if (watch_failed) {
    reply.NullArray();
  } else {
    reply.ArrayHeader(b->commands.size());
    in_exec_ = true;
    uint64_t t = CycleClock::Now();
    size_t offset = 0, arg = 0;
    for (const ExecBatch::Command& cmd : b->commands) {
      exec_args_.clear();
      for (uint32_t i = 0; i < cmd.argc; i++, arg++) {
        exec_args_.emplace_back(b->bytes.data() + offset, b->arg_sizes[arg]);
        offset += b->arg_sizes[arg];
      }
      proxy_.last_cmd = cmd.spec;
      t = Run(proxy_, cmd.spec, exec_args_, reply, shard_, nullptr, now_ms, t);
      if (reply.cut()) {
        b->cut = true;
        break;
      }
    }
    in_exec_ = false;
    if (!ready_shards_.empty()) ServeReadyKeys(now_ms);
  }
  b->kind = Mail::Kind::kExecDone;
  Send(b->from, reinterpret_cast<uint64_t>(static_cast<Mail*>(b)));
}

void Worker::RunTransaction(CommandContext& ctx) {
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
  Client* const running = current_client_;
  ctx.reply.ArrayHeader(t->commands.size());
  // Each command as if sent alone (its statistics, its errors in the
  // array), holding what EXEC holds; none blocks, and clients waiting on
  // keys it fills are served after the whole transaction.
  in_exec_ = true;
  uint64_t now = CycleClock::Now();
  std::vector<std::string_view> args;
  ForEachQueued(*t, &args, [&](const CommandSpec* spec, std::span<const std::string_view> a) {
    now = ExecuteCommand(c, a, spec, nullptr, now);
    return !c.closed && !c.close_after_reply;
  });
  in_exec_ = false;
  current_client_ = running;
  c.last_cmd = exec;
}

void Worker::Unwatch(Client& c) {
  if (c.watch == nullptr) return;
  const std::shared_ptr<WatchState> w = std::move(c.watch);
  // Mail per shard, in the order of the client's keys.
  std::vector<UnwatchMail*> mail;
  for (WatchState::Key& k : w->keys) {
    if (k.shard == index_ && lent_to_ < 0) {
      shard_.watches().Remove(k.db, k.key, w.get());
      continue;
    }
    if (mail.empty()) mail.resize(nworkers_, nullptr);
    if (mail[k.shard] == nullptr) mail[k.shard] = new UnwatchMail(w);
    mail[k.shard]->keys.push_back({k.db, std::move(k.key)});
  }
  for (uint32_t s = 0; s < mail.size(); s++) {
    if (mail[s] == nullptr) continue;
    if (s == index_)
      deferred_.push_back(mail[s]);  // this worker's shard is lent: when it is back
    else
      Send(s, reinterpret_cast<uint64_t>(static_cast<Mail*>(mail[s])));
  }
}

}  // namespace peregrine
