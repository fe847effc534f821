// BatchRelay: relays, read groups and the batches other workers send (see
// batch_relay.h, docs/transactions.md "Pipelines and reply order").
#include "server/batch_relay.h"

#include <algorithm>

#include "server/worker.h"
#include "server/worker_internal.h"

namespace peregrine {

BatchRelay::~BatchRelay() {
  for (ExecBatch* b : free_batches_) delete b;
  // (At shutdown: parts and batches still waiting for their turn.)
  for (auto& [ticket, b] : early_) delete b;
  for (const Waiting& w : waiting_) delete w.batch;
  for (const Held& h : held_) delete h.mail;
}

void BatchRelay::Add(Client& c, std::span<const std::string_view> args, const CommandSpec* spec,
                     const CompactKey::Probe* key, uint32_t target, bool remote_publish, size_t published_here) {
  const bool detached = c.closed;
  ExecBatch* b = detached ? nullptr : c.open_batch;
  if (b == nullptr) {
    b = NewBatch();
    b->from = worker_.index_;
    b->target = target;
    b->client_id = c.id;
    b->db = c.db;
    b->resp = c.resp;
    b->user = c.user;
    b->user_ref = c.user_ref;  // (null for the default user: no reference counting)
    NoteOrigin(b, c);
    if (!detached) c.open_batch = b;
  }
  uint32_t argc = static_cast<uint32_t>(args.size());
  for (std::string_view a : args) {
    b->bytes.append(a);
    b->arg_sizes.push_back(static_cast<uint32_t>(a.size()));
  }
  if (remote_publish) {
    // The count here travels as a fourth argument, which PUBLISH's handler
    // adds to the target's (a client cannot send one: the arity was checked
    // above).
    const std::string local = std::to_string(published_here);
    b->bytes.append(local);
    b->arg_sizes.push_back(static_cast<uint32_t>(local.size()));
    argc++;
  } else {
    b->only_publishes = false;
  }
  b->commands.push_back({spec, argc, target, key != nullptr ? *key : CompactKey::Probe{}});
  if (!(spec->flags & kCmdReadonly) || (spec->flags & (kCmdScript | kCmdBlocking)) || remote_publish)
    b->reads_only = false;
  if ((spec->flags & (kCmdScript | kCmdBlocking)) || remote_publish) b->plain = false;
  // Nothing of the client runs after a blocking command before its outcome.
  if (spec->flags & kCmdBlocking) b->sealed = true;
  if (detached) {
    away_++;
    // (After what it ran here, if the stream has yet to have that.)
    if (c.stream_hold != 0 && !StreamOut(c.stream_hold))
      held_.push_back({c.stream_hold, b, 0, Held::How::kOpen});
    else
      worker_.router_.Send(target, b);
    return;
  }
  c.last_cmd = spec;
}

void BatchRelay::NoteOrigin(ExecBatch* b, const Client& c) {
  if (worker_.server_.monitors().load(std::memory_order_relaxed) > 0) [[unlikely]]
    b->origin = c.is_unix ? "unix:" + worker_.server_.config().unixsocket : c.addr;
  else
    b->origin.clear();
}

ExecBatch* BatchRelay::NewBatch() {
  if (free_batches_.empty()) return new ExecBatch();
  ExecBatch* b = free_batches_.back();
  free_batches_.pop_back();
  pool_low_ = std::min(pool_low_, free_batches_.size());
  return b;
}

void BatchRelay::TrimPool() {
  const size_t spare = std::min(pool_low_, free_batches_.size());
  if (spare > worker_internal::kFreeBatches) {
    const size_t n = spare - worker_internal::kFreeBatches;
    for (size_t i = 0; i < n; i++) delete free_batches_[i];  // (the bottom of the stack: least recently used)
    free_batches_.erase(free_batches_.begin(), free_batches_.begin() + static_cast<ptrdiff_t>(n));
  }
  pool_low_ = free_batches_.size();
}

void BatchRelay::Recycle(ExecBatch* b) {
  using namespace worker_internal;
  const bool small = b->bytes.capacity() <= kSmallBatchBytes && b->reply.capacity() <= kSmallBatchBytes &&
                     b->commands.capacity() * sizeof(ExecBatch::Command) <= kSmallBatchBytes &&
                     b->arg_sizes.capacity() * sizeof(uint32_t) <= kSmallBatchBytes;
  if (free_batches_.size() >= kFreeSmallBatches ||
      (!small && (free_batches_.size() >= kFreeBatches || b->bytes.capacity() > ClientIo::kIdleBufferKeep ||
                  b->reply.capacity() > ClientIo::kIdleBufferKeep))) {
    delete b;
    return;
  }
  b->Clear();
  free_batches_.push_back(b);
}

void BatchRelay::SendOpen(Client& c) {
  ExecBatch* b = c.open_batch;
  if (b == nullptr) return;
  c.open_batch = nullptr;
  c.batch_in_flight = true;
  away_++;
  worker_.stats_.cross_shard_batches++;
  // The client's earlier commands here wait for the replication stream
  // (stream_hold): what it writes elsewhere must reach the stream after
  // them. As a write group with a part here (empty if need be) it does:
  // StreamOrder takes the group after what this shard logged before.
  // Reads change nothing; anything else waits until the stream has them.
  const uint64_t hold = c.stream_hold != 0 && !StreamOut(c.stream_hold) ? c.stream_hold : 0;
  if (hold != 0 && !b->reads_only && !b->transaction && b->plain && SendWriteGroup(b, true)) {
    worker_.stats_.cross_shard_write_groups++;
    return;
  }
  if (hold != 0 && !b->reads_only) {
    held_.push_back({hold, b, 0, Held::How::kOpen});
    return;
  }
  Launch(b);
}

void BatchRelay::Launch(ExecBatch* b) {
  if (b->commands.size() > 1 && !b->transaction && b->plain) {
    if (b->reads_only ? SendReadGroup(b) : SendWriteGroup(b, false)) {
      (b->reads_only ? worker_.stats_.cross_shard_read_groups : worker_.stats_.cross_shard_write_groups)++;
      return;
    }
  }
  worker_.router_.Send(b->target, b);
}

bool BatchRelay::Split(ExecBatch* relay, bool here) {
  // (A relay with one stop is one batch already, unless a part here is
  // wanted: then an empty one.)
  const uint32_t first_target = relay->commands[0].target;
  if ((!here || first_target == worker_.index_) &&
      std::all_of(relay->commands.begin(), relay->commands.end(),
                  [&](const ExecBatch::Command& cmd) { return cmd.target == first_target; }))
    return false;
  uint32_t workers = 0;
  relay->parts.assign(worker_.nworkers_, nullptr);
  auto make = [&](uint32_t target) {
    ExecBatch*& part = relay->parts[target];
    if (part != nullptr) return;
    part = NewBatch();
    part->SameClientAs(*relay);
    part->target = target;
    part->relay = relay;
    workers++;
  };
  for (const ExecBatch::Command& cmd : relay->commands) make(cmd.target);
  if (here) make(worker_.index_);
  // Each part: its worker's commands, in order, with where their
  // arguments are in the relay's (ExecBatch::RunFrom).
  size_t offset = 0;
  uint32_t arg = 0;
  for (const ExecBatch::Command& cmd : relay->commands) {
    ExecBatch::Command& pc = relay->parts[cmd.target]->commands.emplace_back(cmd);
    pc.arg0 = arg;
    pc.byte0 = offset;
    for (uint32_t j = 0; j < cmd.argc; j++) offset += relay->arg_sizes[arg++];
  }
  relay->parts_out = workers;
  return true;
}

void BatchRelay::DropParts(ExecBatch* relay) {
  for (ExecBatch*& p : relay->parts)
    if (p != nullptr) {
      p->relay = nullptr;  // (its destructor would count it out of the relay)
      Recycle(p);
    }
  relay->parts.clear();
  relay->parts_out = 0;
}

bool BatchRelay::SendReadGroup(ExecBatch* relay) {
  if (!Split(relay, false)) return false;
  // The shards' versions before anything of the group runs: if they are
  // the same when every part is back, each part read what was there now.
  for (ExecBatch* part : relay->parts)
    if (part != nullptr) part->version = worker_.server_.shard(part->target).version();
  for (ExecBatch* part : relay->parts)
    if (part != nullptr && part->target != worker_.index_) worker_.router_.Send(part->target, part);
  // This worker's part now (the others cannot be back before it).
  if (ExecBatch* here = relay->parts[worker_.index_]; here != nullptr) Arrive(here);
  return true;
}

bool BatchRelay::SendWriteGroup(ExecBatch* relay, bool here) {
  if (!Split(relay, here)) return false;
  group_shards_.clear();
  for (ExecBatch* part : relay->parts)
    if (part != nullptr) group_shards_.push_back(part->target);
  group_tickets_.resize(group_shards_.size());
  // A ticket on every shard of the group before any part runs: whoever
  // sees one part's effect then finds the others' tickets taken on their
  // shards, and waits for them (claims.h).
  if (!worker_.server_.claims().Register(group_shards_, group_tickets_.data())) {
    DropParts(relay);  // a shard is lent or held: one shard after another
    return false;
  }
  // While replicas follow the stream, the group reaches it whole (its parts
  // log apart, StreamOrder): a reader there sees all of it or none, as on
  // this server (docs/replication.md, "Order across shards"). The id: this
  // worker's index over a count of its groups.
  ReplicationPrimary& repl = worker_.server_.replication();
  const bool apart = repl.logs();
  const uint64_t group = apart ? (uint64_t{worker_.index_} << 40) | (++groups_sent_ & ((uint64_t{1} << 40) - 1)) : 0;
  const uint64_t epoch = apart ? repl.order_epoch() : 0;
  for (size_t i = 0; i < group_shards_.size(); i++) {
    ExecBatch* part = relay->parts[group_shards_[i]];
    part->ticket = group_tickets_[i];
    part->group = group;
    part->group_parts = static_cast<uint32_t>(group_shards_.size());
    part->group_epoch = epoch;
  }
  for (ExecBatch* part : relay->parts)
    if (part != nullptr && part->target != worker_.index_) worker_.router_.Send(part->target, part);
  if (ExecBatch* here = relay->parts[worker_.index_]; here != nullptr) Arrive(here);
  return true;
}

void BatchRelay::MergeReplies(const ExecBatch& relay, Client& c) {
  // Every part's replies, written on other workers: fetched in one sweep.
  for (const ExecBatch* p : relay.parts)
    if (p != nullptr) {
      __builtin_prefetch(p->reply.data());
      __builtin_prefetch(p->reply_ends.data());
    }
  group_cursor_.assign(worker_.nworkers_, 0);
  for (const ExecBatch::Command& cmd : relay.commands) {
    const ExecBatch* p = relay.parts[cmd.target];
    const size_t k = group_cursor_[cmd.target]++;
    if (k >= p->reply_ends.size()) continue;  // (a part that stopped: the client is being closed)
    const size_t begin = k == 0 ? 0 : p->reply_ends[k - 1];
    c.out.Append(std::string_view(p->reply.data() + begin, p->reply_ends[k] - begin));
  }
}

void BatchRelay::FinishPart(ExecBatch* part) {
  ExecBatch* relay = part->relay;
  if (--relay->parts_out > 0) return;
  away_--;  // (out again below if it runs after all)
  // Every part is back. A read group's replies stand if no shard they read
  // changed since the group was sent: each read what was there then, and
  // the group read at one point in time, between the client's earlier
  // commands and its later ones. A write group's always do (its tickets
  // put it at one point on every shard).
  const bool writes = !relay->reads_only;
  bool held = true, stopped = false;
  for (ExecBatch* p : relay->parts) {
    if (p == nullptr) continue;
    if (!p->finished() || p->cut || p->reply_ends.size() != p->commands.size()) stopped = true;
    if (!writes && worker_.server_.shard(p->target).version() != p->version) held = false;
  }
  if (!writes && stopped) held = false;
  auto it = worker_.clients_.find(relay->client_id);
  Client* c = it != worker_.clients_.end() && !it->second->closed ? it->second.get() : nullptr;
  if (c != nullptr) ResolveSlow(*c);
  if (c != nullptr && held) MergeReplies(*relay, *c);
  DropParts(relay);
  if (c == nullptr) {
    Recycle(relay);
    return;
  }
  if (!held) {
    // Something changed meanwhile: the reads run again, one after another,
    // as a relay (always in order; a busy shard cannot keep them waiting).
    worker_.stats_.cross_shard_read_group_reruns++;
    away_++;
    worker_.router_.Send(relay->target, relay);
    return;
  }
  c->batch_in_flight = false;
  c->ReleasePushes();
  worker_.io_.HoldReading(*c);
  c->rerun_deadline_ms = -1;
  Recycle(relay);
  // A write group's part stops only for a reply over the output limits.
  if (writes && stopped) {
    worker_.io_.CloseOverLimit(*c);
    return;
  }
  if (!worker_.io_.OverOutputLimit(*c)) {
    worker_.io_.QueueWrite(*c);
    worker_.resume_.push_back(c->id);
  }
}

bool BatchRelay::HoldClientSlow(Client& c) {
  if (c.claim_wait) return true;
  // What the client sent before it waited can know of no group registered
  // after it did: the tickets it waited for are enough (without this a
  // steady flow of groups onto this shard could keep it waiting for ever).
  if (c.claim_ticket != 0 && c.claim_ticket <= done_) return false;
  const uint64_t registered = registered_.load(std::memory_order_acquire);
  if (registered == done_) return false;
  c.claim_wait = true;
  c.claim_ticket = registered;
  waiting_.push_back({registered, nullptr, c.id});
  worker_.io_.HoldReading(c);  // (nothing sent after this waits on these tickets only)
  return true;
}

void BatchRelay::Arrive(ExecBatch* b) {
  if (b->ticket != 0) {
    if (b->ticket != done_ + 1) {
      early_.emplace(b->ticket, b);  // (its turn comes when the one before it has run)
      return;
    }
    Run(b);
    done_++;
    Advance();
    return;
  }
  // Waits for the tickets taken before it arrived: a group a part of which
  // its client may have seen has its ticket here among them.
  const uint64_t registered = registered_.load(std::memory_order_acquire);
  if (!waiting_.empty() || registered != done_) {
    waiting_.push_back({registered, b, 0});
    return;
  }
  Run(b);
}

void BatchRelay::Advance() {
  for (auto it = early_.begin(); it != early_.end() && it->first == done_ + 1; it = early_.begin()) {
    ExecBatch* p = it->second;
    early_.erase(it);
    Run(p);
    done_++;
  }
  while (!waiting_.empty() && waiting_.front().ticket <= done_) {
    const Waiting w = waiting_.front();
    waiting_.pop_front();
    if (w.batch != nullptr) {
      Run(w.batch);
      continue;
    }
    auto it = worker_.clients_.find(w.client_id);
    if (it == worker_.clients_.end()) continue;
    it->second->claim_wait = false;
    worker_.resume_.push_back(w.client_id);
  }
}

void BatchRelay::Run(ExecBatch* b) {
  worker_.ApplyConfigIfChanged();
  worker_.proxy_.id = b->client_id;
  worker_.proxy_.home = b->from;
  worker_.proxy_.db = b->db;
  worker_.proxy_.resp = b->resp;
  worker_.proxy_.user = b->user;
  worker_.proxy_.authenticated = true;
  if (!b->origin.empty() || !worker_.proxy_.addr.empty()) [[unlikely]]
    worker_.proxy_.addr = b->origin;
  ReplyWriter reply(&b->reply, b->resp, &worker_);
  const int64_t now_ms = UnixTimeMs();
  const uint64_t hard_limit = worker_.server_.config().output_buffer_limits[Config::kNormalClients].hard;
  uint64_t t = CycleClock::Now();
  bool stopped = false;  // the rest does not run: the batch goes home now
  if (b->transaction) [[unlikely]] {
    // A whole MULTI ... EXEC (SendTransaction): one array, or a null array
    // if the client's WATCH failed; nothing blocks, woken clients wait for
    // its end.
    if (b->watch != nullptr &&
        (b->watch->Dirty() || (b->watch_deadline_ms >= 0 && b->watch_deadline_ms <= now_ms))) {
      reply.NullArray();
      stopped = true;  // nothing runs
    } else {
      reply.ArrayHeader(b->commands.size());
      worker_.in_exec_ = true;
      worker_.aof_log_.BeginGather();  // its writes are one transaction in the append-only file
    }
  }
  const bool part = b->relay != nullptr;
  worker_.in_part_ = part || b->group != 0;  // (a group's part: its replies may be made again, its log kept whole)
  // A write group's part logs apart when its group was made while the
  // stream was fed (SendWriteGroup).
  const bool part_apart = b->group != 0;
  if (part_apart) {
    worker_.aof_log_.BeginPart();
    running_ticket_ = b->ticket;  // (what it tells a blocked client or subscriber waits for it)
  }
  if (!stopped) Prefetch(*b);
  if (!stopped) {
    // (A load starts and ends only while every shard is held: not during
    // this batch's run.)
    const bool loading = worker_.server_.loading();
    b->RunFrom(worker_.index_, &exec_args_, [&](size_t i, const ExecBatch::Command& cmd,
                                                 std::span<const std::string_view> args) {
      worker_.proxy_.last_cmd = cmd.spec;  // error texts name it (ExecuteCommand sets it for its own clients)
      worker_.proxy_.tracking = cmd.tracking;
      worker_.proxy_.track_reads = tracking::TracksReads(cmd.tracking);
      worker_.proxy_.no_touch = cmd.no_touch;
      // Its first key as the client's worker encoded and hashed it, the
      // view onto this batch's copy: the handler's hint.
      CompactKey::Probe key;
      const CompactKey::Probe* hint = nullptr;
      if (!cmd.key.bytes.empty()) [[likely]] {
        key = cmd.key;
        key.bytes = args[static_cast<size_t>(cmd.spec->first_key)];
        hint = &key;
      }
      if (loading && !(cmd.spec->flags & kCmdLoading)) [[unlikely]]
        reply.Error("LOADING Redis is loading the dataset in memory");  // (sent before a replica's load began)
      else
        t = worker_.Run(worker_.proxy_, cmd.spec, args, reply, worker_.shard_, hint, now_ms, t);
      if (part) b->reply_ends.push_back(static_cast<uint32_t>(b->reply.size()));
      if (worker_.TakeScriptRerun()) [[unlikely]] {
        // A script touched a key of another shard before writing: it and the
        // commands after it go back to the client's worker, which runs them
        // (the script holding every shard) before anything else of the client.
        b->rerun_from = static_cast<uint32_t>(i);
        stopped = true;
        return false;
      }
      if (worker_.waits_.blocked_now() != nullptr) [[unlikely]] {
        b->blocked = worker_.waits_.TakeBlockedNow();  // the last command of its (sealed) batch
        stopped = true;
        return false;
      }
      if (reply.cut()) {  // the client is closed when the batch returns
        b->cut = true;
        stopped = true;
        return false;
      }
      // Past the output buffer's hard limit the client is closed when the
      // replies reach it, without running the rest (Redis stops reading a
      // client it will close): do not build replies nobody will get.
      if (hard_limit != 0 && b->reply.size() >= hard_limit) stopped = true;
      return !stopped;
    });
  }
  worker_.in_part_ = false;
  worker_.proxy_.tracking = 0;
  if (worker_.in_exec_ && b->transaction) {
    worker_.in_exec_ = false;
    worker_.aof_log_.EndGather();
    if (worker_.waits_.has_ready()) worker_.waits_.ServeReadyKeys(UnixTimeMs());  // (as after a command)
  }
  if (b->transaction) [[unlikely]]
    FinishTransaction(*b);
  if (part_apart) {
    running_ticket_ = 0;
    // (This worker's own tickets released too: Worker::Drain looks again.)
    for (uint32_t w : worker_.aof_log_.EndPart(b->group, b->group_parts, b->ticket, b->group_epoch))
      if (w != worker_.index_) worker_.router_.WakeLater(w);
  } else if (b->ticket != 0) {
    local_out_ = b->ticket;  // (logged as the shard's own: nothing to wait for)
  }
  PassOn(b, stopped);
}

void BatchRelay::FinishTransaction(const ExecBatch& b) {
  // MONITOR's EXEC line, after its commands' (it ran here, not at home),
  // with the word the client sent; the transaction's keyspace events and
  // lines go before its reply.
  if (worker_.server_.monitors().load(std::memory_order_relaxed) > 0) [[unlikely]] {
    const std::string_view exec[] = {b.exec_word.empty() ? std::string_view("EXEC") : std::string_view(b.exec_word)};
    worker_.monitor_.Feed(worker_.proxy_, worker_.proxy_.db, *worker_.server_.commands().FindAny("exec"), exec);
  }
  if (!worker_.events_.empty() || !worker_.invalidations_.empty()) worker_.DeliverEvents();
  if (worker_.monitor_.pending()) worker_.monitor_.Deliver();
}

void BatchRelay::PrefetchKeys(const uint64_t* words, size_t n) {
  constexpr size_t kMaxKeys = 128;
  prefetch_keys_.clear();
  for (size_t w = 0; w < n && prefetch_keys_.size() < kMaxKeys; w++) {
    if (ShardRouter::IsControl(words[w])) continue;
    const Mail* m = reinterpret_cast<const Mail*>(words[w]);
    if (m->kind != Mail::Kind::kExec) continue;
    const auto* b = static_cast<const ExecBatch*>(m);
    const Db& db = worker_.shard_.db(b->db);
    for (size_t i = b->next; i < b->commands.size() && prefetch_keys_.size() < kMaxKeys; i++) {
      const ExecBatch::Command& cmd = b->commands[i];
      if (cmd.target != worker_.index_) break;
      if (!cmd.key.bytes.empty()) prefetch_keys_.emplace_back(&db, cmd.key.hash);
    }
  }
  if (prefetch_keys_.size() >= 2) PrefetchStages();
}

void BatchRelay::PrefetchStages() {
  // Every home group, then the arena lines, then the entries (each stage
  // reads what the one before fetched), so that the keys' misses overlap.
  for (const auto& [db, hash] : prefetch_keys_) db->PrefetchGroup(hash);
  for (const auto& [db, hash] : prefetch_keys_) db->PrefetchArena(hash);
  for (const auto& [db, hash] : prefetch_keys_) db->PrefetchEntry(hash);
}

void BatchRelay::Prefetch(const ExecBatch& b) {
  // Two or more commands that run here next: the prefetches ProcessInput
  // makes for a client's own batch, by the keys' hashes made on the
  // client's worker.
  const size_t n = b.commands.size();
  if (b.next + 1 >= n || b.commands[b.next + 1].target != worker_.index_) return;
  const Db& db = worker_.shard_.db(b.db);
  prefetch_keys_.clear();
  for (size_t i = b.next; i < n && b.commands[i].target == worker_.index_; i++)
    if (!b.commands[i].key.bytes.empty()) prefetch_keys_.emplace_back(&db, b.commands[i].key.hash);
  PrefetchStages();
}

void BatchRelay::PassOn(ExecBatch* b, bool stopped) {
  // What it ran may show what a write group's part did here, which is not
  // in the replication stream until the whole group is: it waits for that
  // (its own ticket if a part, else the last that ran here).
  const uint64_t upto = b->ticket != 0 ? b->ticket : done_;
  if (upto > local_out_ && !StreamOut(upto)) [[unlikely]] {
    held_.push_back({upto, b, 0, stopped ? Held::How::kPassOnStopped : Held::How::kPassOn});
    return;
  }
  PassOnNow(b, stopped);
}

bool BatchRelay::StreamOut(uint64_t upto) {
  if (upto <= local_out_) return true;
  ReplicationPrimary& repl = worker_.server_.replication();
  if (repl.released(worker_.index_) >= upto) return true;
  repl.WantRelease(worker_.index_);
  return repl.released(worker_.index_) >= upto;  // (released meanwhile: nobody will wake us for it)
}

bool BatchRelay::HoldOutput(Client& c) {
  if (StreamOut(c.stream_hold)) {
    c.stream_hold = 0;
    return false;
  }
  if (!c.stream_listed) {
    c.stream_listed = true;
    held_clients_.push_back(c.id);
  }
  return true;
}

void BatchRelay::SendAfter(uint64_t upto, uint32_t to, Mail* m) {
  // (Behind what waits already: mail to a worker keeps its order.)
  if (held_.empty() && (upto == 0 || StreamOut(upto))) {
    worker_.router_.Send(to, m);
    return;
  }
  held_.push_back({upto, m, to, Held::How::kSend});
}

bool BatchRelay::ReleaseHeldSlow() {
  // (Not while the shard is lent: the holder may read this worker's state.)
  if (worker_.router_.lent()) return false;
  ReplicationPrimary& repl = worker_.server_.replication();
  bool any = false;
  for (;;) {
    const uint64_t out = std::max(local_out_, repl.released(worker_.index_));
    while (!held_.empty() && held_.front().upto <= out) {
      const Held h = held_.front();
      held_.pop_front();
      any = true;
      switch (h.how) {
        case Held::How::kPassOn:
        case Held::How::kPassOnStopped:
          PassOnNow(static_cast<ExecBatch*>(h.mail), h.how == Held::How::kPassOnStopped);
          break;
        case Held::How::kOpen:
          Launch(static_cast<ExecBatch*>(h.mail));  // (a client's relay: SendOpen)
          break;
        case Held::How::kSend:
          worker_.router_.Send(h.to, h.mail);
          break;
      }
    }
    size_t keep = 0;
    for (uint64_t id : held_clients_) {
      auto it = worker_.clients_.find(id);
      if (it == worker_.clients_.end()) continue;
      Client& c = *it->second;
      if (c.stream_hold > out) {
        held_clients_[keep++] = id;
        continue;
      }
      // Its replies go, and what it sent after them runs (it may have
      // paused before a command for another shard: Worker::Dispatch).
      c.stream_listed = false;
      c.stream_hold = 0;
      any = true;
      if (c.closed) continue;
      // (With a batch out, its replies go with the batch's: Finish.)
      if (!c.batch_in_flight && (!c.out.empty() || c.close_after_reply)) worker_.io_.QueueWrite(c);
      worker_.resume_.push_back(id);
    }
    held_clients_.resize(keep);
    if (held_.empty() && held_clients_.empty()) return any;
    // Still waiting: woken when the next ticket is released (unless it was
    // just now: look again).
    repl.WantRelease(worker_.index_);
    if (repl.released(worker_.index_) <= out) return any;
  }
}

void BatchRelay::PassOnNow(ExecBatch* b, bool stopped) {
  if (!stopped && !b->finished()) {
    // The next command runs on another worker (the client's own, maybe):
    // the batch goes there, after what this one ran.
    b->target = b->commands[b->next].target;
    worker_.router_.Send(b->target, b);
    return;
  }
  b->kind = Mail::Kind::kExecDone;
  if (b->from == worker_.index_) {
    Finish(b);  // the relay ended at the client's own worker
    return;
  }
  worker_.router_.Send(b->from, b);
}

void BatchRelay::ResolveSlow(const Client& c) {
  SlowLog& log = worker_.server_.slowlog();
  if (log.unresolved()) [[unlikely]]
    log.Resolve(c.id, c.addr, c.name);
}

void BatchRelay::Finish(ExecBatch* b) {
  if (b->relay != nullptr) {
    FinishPart(b);
    return;
  }
  away_--;
  auto it = worker_.clients_.find(b->client_id);
  if (it != worker_.clients_.end() && !it->second->closed) {
    Client& c = *it->second;
    ResolveSlow(c);
    c.out.Take(b->reply);
    c.batch_in_flight = false;
    c.ReleasePushes();
    worker_.io_.HoldReading(c);
    if (b->transaction) worker_.Unwatch(c);  // (only now: the watch was checked there)
    if (b->rerun_from != ExecBatch::kNoRerun && !b->cut) [[unlikely]] {
      c.pending = b;
      c.pending_next = b->rerun_from;
      worker_.resume_.push_back(c.id);
      worker_.io_.QueueWrite(c);
      return;
    }
    if (b->cut) {
      worker_.io_.CloseOverLimit(c);
    } else if (!worker_.io_.OverOutputLimit(c)) {
      worker_.io_.QueueWrite(c);
      if (b->blocked != nullptr && !c.read_closed)
        worker_.waits_.BlockClient(c, std::move(b->blocked));
      else
        worker_.resume_.push_back(c.id);
    }
    c.rerun_deadline_ms = -1;  // a re-run that came back without blocking
    // Stopped reading meanwhile: the wait goes, unless it was served already
    // (then its outcome is delivered: the client can still read).
    if (b->blocked != nullptr && c.read_closed && !c.closed && !worker_.waits_.CancelBlocked(b->blocked))
      worker_.waits_.BlockClient(c, std::move(b->blocked));
  }
  // Blocked, but the client went meanwhile.
  if (b->blocked != nullptr) worker_.waits_.CancelBlocked(b->blocked);
  Recycle(b);
}

}  // namespace peregrine
