// The blocking waits' work (blocking_waits.h, docs/blocking.md): making a
// wait, serving the waits on keys made ready, waking, timing out and
// forgetting them.
#include "server/blocking_waits.h"

#include <algorithm>
#include <charconv>

#include "server/cluster_route.h"
#include "server/server.h"
#include "server/worker.h"
#include "server/worker_internal.h"

namespace peregrine {

BlockingWaits::BlockingWaits(Worker& worker, Server& server)
    : worker_(worker), server_(server), serve_proxy_(&worker, 0, -1) {}

bool BlockingWaits::Holds(uint32_t shard) const {
  const auto held = worker_.held_workers();
  return std::find(held.begin(), held.end(), shard) != held.end();
}

void BlockingWaits::Block(CommandContext& ctx, std::span<const std::string_view> keys, ValueType type,
                          int64_t deadline_ms, CommandHost::NoWaitReply no_wait) {
  if (serving_) {
    // A command run again for a woken client found nothing to serve after
    // all. The list commands cannot (the key was checked first); answered as
    // a timeout rather than blocking a second time from here.
    ctx.reply.NullArray();
    return;
  }
  if (worker_.in_exec()) {
    // Inside a transaction nothing blocks: answered as if the timeout had
    // passed (Redis's CLIENT_DENY_BLOCKING).
    if (no_wait == CommandHost::NoWaitReply::kNull)
      ctx.reply.Null();
    else
      ctx.reply.NullArray();
    return;
  }
  Client& c = ctx.client;
  auto w = std::make_shared<BlockedClient>();
  w->home = c.home;
  w->client_id = c.id;
  w->db = c.db;
  w->resp = c.resp;
  w->type = type;
  w->deadline_ms = deadline_ms;
  w->spec = c.last_cmd;
  for (std::string_view a : ctx.args) {
    w->arg_bytes.append(a);
    w->arg_sizes.push_back(static_cast<uint32_t>(a.size()));
  }
  if (c.last_cmd->KeyPositions(ctx.args, &key_positions_))
    for (size_t pos : key_positions_) w->shards.push_back(static_cast<uint32_t>(server_.ShardIndexOf(ctx.args[pos])));
  std::sort(w->shards.begin(), w->shards.end());
  w->shards.erase(std::unique(w->shards.begin(), w->shards.end()), w->shards.end());
  for (std::string_view key : keys) {
    if (std::any_of(w->keys.begin(), w->keys.end(), [&](const BlockedClient::Key& k) { return k.key == key; }))
      continue;  // BLPOP k k: one wait
    w->keys.push_back({static_cast<uint32_t>(server_.ShardIndexOf(key)), std::string(key)});
  }
  for (size_t i = 0; i < w->keys.size(); i++) server_.shard(w->keys[i].shard).blocking().Add(w, i);
  blocked_now_ = std::move(w);
}

void BlockingWaits::ServeReadyKeys(int64_t now_ms) {
  // Serving may make more keys ready (BLMOVE pushes onto its destination):
  // they are served in turn, until none is left.
  while (!ready_shards_.empty()) {
    Shard& shard = server_.shard(ready_shards_.front());
    int db;
    std::string key;
    if (!shard.blocking().PopReady(&db, &key)) {
      ready_shards_.erase(ready_shards_.begin());
      continue;
    }
    ServeKey(shard, db, key, now_ms);
  }
}

void BlockingWaits::ServeKey(Shard& shard, int db, const std::string& key, int64_t now_ms) {
  BlockingKeys& reg = shard.blocking();
  for (;;) {
    BlockingKeys::Fifo* fifo = reg.Waiters(db, key);
    if (fifo == nullptr) return;
    // Redis's rule: a client is served only by a key of the type it waits
    // for; one of another type (or none: the key went) leaves it waiting.
    const Db::Entry* e = shard.db(db).Find(CompactKey::MakeProbe(key), now_ms, /*touch=*/false);
    if (e == nullptr) return;
    const ValueType type = e->value.type();
    std::shared_ptr<BlockedClient> claimed, gone;
    for (const std::shared_ptr<BlockedClient>& x : *fifo) {
      if (x->type != type) continue;
      if (type == ValueType::kStream && !StreamWaiterReady(*x, key, e->value.stream())) continue;
      uint32_t expected = BlockedClient::kWaiting;
      if (x->state.compare_exchange_strong(expected, BlockedClient::kClaimed, std::memory_order_acq_rel)) {
        claimed = x;
      } else {
        // Given up by its client's worker or served from another shard:
        // whoever did will have it forgotten here too; it goes now.
        gone = x;
      }
      break;
    }
    if (gone != nullptr) {
      reg.Remove(*gone, static_cast<uint32_t>(shard.index()));
      continue;
    }
    if (claimed == nullptr) return;
    Serve(claimed, now_ms);
  }
}

void BlockingWaits::Serve(const std::shared_ptr<BlockedClient>& w, int64_t now_ms) {
  w->ForEachKeyShard([&](uint32_t s) {
    if (Holds(s))
      server_.shard(s).blocking().Remove(*w, s);
    else
      Forget(s, w);
  });
  if (std::all_of(w->shards.begin(), w->shards.end(), [this](uint32_t s) { return Holds(s); })) {
    // Every shard of the command is here: it runs again now, before any
    // other command, as Redis re-runs a blocked client's command; its reply
    // goes to the client's worker.
    std::vector<std::string_view> args = w->Args();
    Client& p = serve_proxy_;
    p.id = w->client_id;
    p.home = w->home;
    p.db = w->db;
    p.resp = w->resp;
    p.last_cmd = w->spec;
    ReplyWriter reply(&w->reply, w->resp, &worker_);
    Shard& first = server_.shard(FirstKeyShard(*w, args));
    CommandContext ctx{server_, worker_, p, first, args, reply, now_ms, nullptr};
    serving_ = true;
    worker_.CallHandler(ctx, w->spec);
    serving_ = false;
  } else {
    // It needs shards this thread cannot take now (taking one below a shard
    // it holds could deadlock): its own worker runs it again, holding them
    // all. Another client may take the item meanwhile; then it blocks again.
    w->rerun = true;
  }
  w->by_mail = w->home != worker_.index();
  w->state.store(BlockedClient::kDone, std::memory_order_release);
  // What it was served (a list's item) may come from a write the
  // replication stream does not have yet: the client hears of it after.
  NotifyWoken(w, worker_.relay_.StreamHoldNow());
}

void BlockingWaits::NotifyWoken(std::shared_ptr<BlockedClient> w, uint64_t hold) {
  if (w->home == worker_.index()) {
    w->stream_hold = hold;
    OnWoken(w);
  } else {
    const uint32_t home = w->home;
    worker_.relay_.SendAfter(hold, home, new BlockMail(Mail::Kind::kWoken, std::move(w)));
  }
}

void BlockingWaits::Forget(uint32_t shard, const std::shared_ptr<BlockedClient>& w) {
  if (shard != worker_.index()) {
    worker_.router_.Send(shard, new BlockMail(Mail::Kind::kForget, w));
  } else if (worker_.router_.lent()) {
    // When the shard is back, with the rest of the mail that waited for it.
    worker_.router_.deferred().push_back(new BlockMail(Mail::Kind::kForget, w));
  } else {
    worker_.shard().blocking().Remove(*w, worker_.index());
  }
}

void BlockingWaits::BlockClient(Client& c, std::shared_ptr<BlockedClient> w) {
  c.blocked = std::move(w);
  if (c.rerun_deadline_ms >= 0) {
    // Blocked again by its command's re-run: the wait keeps its deadline, as
    // in Redis, where a wait ends its timeout after it began. (Only this
    // worker reads a wait's deadline.)
    c.blocked->deadline_ms = c.rerun_deadline_ms;
    c.rerun_deadline_ms = -1;
  }
  blocked_clients_++;
  if (c.blocked->deadline_ms > 0) block_timers_.emplace(c.blocked->deadline_ms, c.id);
  // Served before its worker knew it was blocked (the outcome's notice came
  // first, or the wait was served on this thread): delivered now. Served
  // elsewhere with the notice still on its way: when it comes (OnWoken), as
  // it may wait for the replication stream to take what served the wait.
  if (c.blocked->state.load(std::memory_order_acquire) == BlockedClient::kDone &&
      (!c.blocked->by_mail || c.blocked->noticed))
    FinishBlocked(c);
}

void BlockingWaits::Unblocked(Client& c, const BlockedClient& w) {
  blocked_clients_--;
  if (w.deadline_ms > 0) block_timers_.erase({w.deadline_ms, c.id});
}

void BlockingWaits::OnWoken(const std::shared_ptr<BlockedClient>& w) {
  w->noticed = true;
  auto it = worker_.clients().find(w->client_id);
  if (it == worker_.clients().end() || it->second->closed) return;  // gone: the outcome goes with it
  Client& c = *it->second;
  // Not (yet) this client's wait: the batch that blocked it is still on its
  // way back, and BlockClient delivers it then.
  if (c.blocked == w) FinishBlocked(c);
}

void BlockingWaits::FinishBlocked(Client& c) {
  std::shared_ptr<BlockedClient> w = std::move(c.blocked);
  Unblocked(c, *w);
  if (w->rerun) {
    c.rerun = std::move(w);  // counted when it runs again
  } else {
    // Counted now, as Redis 7.2 counts a command at the end of its wait
    // (served, timed out or unblocked): a call, and a failed one if it
    // replied an error.
    CommandStats& st = worker_.command_stats(*w->spec);
    st.calls++;
    st.ticks += w->ticks;
    if (server_.config().latency_tracking) st.RecordLatency(static_cast<uint64_t>(CycleClock::ToMicros(w->ticks)));
    // (SLOWLOG, as Redis: once its wait is over, its own run's time.)
    if (server_.slowlog().Due(w->ticks)) [[unlikely]] {
      std::vector<std::string_view> args;
      size_t off = 0;
      for (uint32_t n : w->arg_sizes) {
        args.emplace_back(w->arg_bytes.data() + off, n);
        off += n;
      }
      server_.slowlog().Push(*w->spec, args, static_cast<int64_t>(CycleClock::ToMicros(w->ticks)), c.addr,
                             c.name, c.id, true);
    }
    if (!w->reply.view().empty() && w->reply.view()[0] == '-') st.failed_calls++;
    worker_.stats().total_commands_processed++;
    if (!w->quiet) c.out.Append(w->reply.view());
    c.HoldForStream(w->stream_hold);
    if (worker_.io_.OverOutputLimit(c)) return;
    worker_.io_.QueueWrite(c);
  }
  worker_.resume_.push_back(c.id);
}

bool BlockingWaits::Unblock(std::shared_ptr<BlockedClient> w, bool error) {
  uint32_t expected = BlockedClient::kWaiting;
  if (!w->state.compare_exchange_strong(expected, BlockedClient::kClaimed, std::memory_order_acq_rel))
    return false;  // being served, timed out or gone already
  w->ForEachKeyShard([&](uint32_t s) { server_.shard(s).blocking().Remove(*w, s); });
  ReplyWriter reply(&w->reply, w->resp, &worker_);
  if (error)
    reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
  else
    reply.NullArray();
  w->by_mail = w->home != worker_.index();
  w->state.store(BlockedClient::kDone, std::memory_order_release);
  NotifyWoken(std::move(w));
  return true;
}

bool BlockingWaits::CancelBlocked(const std::shared_ptr<BlockedClient>& w) {
  uint32_t expected = BlockedClient::kWaiting;
  if (!w->state.compare_exchange_strong(expected, BlockedClient::kCancelled, std::memory_order_acq_rel))
    return false;
  w->ForEachKeyShard([&](uint32_t s) { Forget(s, w); });
  return true;
}

void BlockingWaits::ExpireBlocked() {
  const int64_t now = UnixTimeMs();
  while (!block_timers_.empty() && block_timers_.begin()->first <= now) {
    const uint64_t id = block_timers_.begin()->second;
    block_timers_.erase(block_timers_.begin());
    auto it = worker_.clients().find(id);
    if (it == worker_.clients().end()) continue;
    Client& c = *it->second;
    if (c.closed || c.blocked == nullptr) continue;
    if (!CancelBlocked(c.blocked)) continue;  // served meanwhile: its outcome is on its way
    // The wait is this worker's now: its outcome is the timeout reply.
    ReplyWriter(&c.blocked->reply, c.resp, &worker_).NullArray();
    FinishBlocked(c);
  }
}

void BlockingWaits::RedirectBlocked(ClusterRoute& route) {
  const uint64_t version = server_.cluster()->routes_version();
  if (version == routes_seen_ || blocked_clients_ == 0) return;
  routes_seen_ = version;
  const int64_t now = UnixTimeMs();
  std::vector<Client*> redirected;
  for (const auto& [id, client] : worker_.clients()) {
    Client& c = *client;
    if (c.closed || c.blocked == nullptr || c.blocked->spec == nullptr) continue;
    const std::vector<std::string_view> args = c.blocked->Args();
    std::string error;
    // (A slot of ours being migrated: still ours, it waits on.)
    if (route.Check(c, *c.blocked->spec, args, nullptr, now, &error) != ClusterRoute::Verdict::kRefuse) continue;
    if (!CancelBlocked(c.blocked)) continue;  // served meanwhile
    ReplyWriter(&c.blocked->reply, c.resp, &worker_).Error(error);
    redirected.push_back(&c);
  }
  for (Client* c : redirected) FinishBlocked(*c);
}

void BlockingWaits::RerunBlocked(Client& c, std::shared_ptr<BlockedClient> w) {
  // (Only with several workers: one holds every shard, and serves in place.)
  std::vector<std::string_view> args = w->Args();
  uint64_t t = CycleClock::Now();
  c.rerun_deadline_ms = w->deadline_ms;
  const uint32_t shard = FirstKeyShard(*w, args);
  if (worker_.Dispatch(c, args, w->spec, nullptr, shard, &t) == Worker::Route::kPause) {
    // (Its shard has write groups to run first: again when it is resumed.)
    c.rerun = std::move(w);
    return;
  }
  worker_.relay_.SendOpen(c);
  if (!c.batch_in_flight) c.rerun_deadline_ms = -1;  // ran here (BlockClient took it if it blocked)
  if (!c.closed && !c.out.empty()) worker_.io_.QueueWrite(c);
}

// XREAD waits for an entry past the ID it gave for the key (written as
// ms-seq when it blocked): entries that came only up to it (the ID of a
// future entry) leave it waiting, as Redis. (XREADGROUP's ">" takes any new
// entry; a group gone meanwhile is its rerun's NOGROUP.)
bool BlockingWaits::StreamWaiterReady(const BlockedClient& w, std::string_view key, const StreamObject& s) {
  if (w.spec->fullname != "xread") return true;
  const std::vector<std::string_view> args = w.Args();
  size_t streams = 0;
  for (size_t i = 1; i < args.size() && streams == 0; i++)
    if (EqualsIgnoreCase(args[i], "streams")) streams = i + 1;  // (COUNT and BLOCK take numbers)
  const size_t n = streams == 0 ? 0 : (args.size() - streams) / 2;
  for (size_t i = 0; i < n; i++) {
    if (args[streams + i] != key) continue;
    const std::string_view id = args[streams + n + i];
    const size_t dash = id.find('-');
    StreamID after;
    if (dash == std::string_view::npos ||
        std::from_chars(id.data(), id.data() + dash, after.ms).ec != std::errc() ||
        std::from_chars(id.data() + dash + 1, id.data() + id.size(), after.seq).ec != std::errc())
      return true;
    return s.size() > 0 && s.EdgeID(false, true) > after;
  }
  return true;
}

uint32_t BlockingWaits::FirstKeyShard(const BlockedClient& w, std::span<const std::string_view> args) {
  // (A blocked command's keys were read once: it has a first key.)
  return static_cast<uint32_t>(server_.ShardIndexOf(args[w.spec->FirstKeyIndex(args, &key_positions_)]));
}

}  // namespace peregrine
