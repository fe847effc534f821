// A worker's cross-thread side: the mailbox to other workers, lending and
// borrowing shards, and batches of commands run for another worker's
// clients (see worker.h and docs/transactions.md).
#include "server/worker.h"

#include <algorithm>

#include "core/lent_blocks.h"
#include "server/log.h"

#include "server/worker_internal.h"

namespace peregrine {

using namespace worker_internal;

bool Worker::Drain() {
  const bool any = router_.Pop([this](uint32_t from, uint64_t word) { Handle(from, word); });
  // Workers may have asked for the shard while this one held it for a
  // command of its own (Drain runs only where lending is safe).
  router_.TryLend();
  return any;
}

void Worker::Handle(uint32_t from, uint64_t word) {
  if (ShardRouter::IsControl(word)) {
    router_.OnControl(from, ShardRouter::ControlOf(word));
    return;
  }
  Mail* m = reinterpret_cast<Mail*>(word);
  // While the shard is lent its holder may read this worker's state: mail
  // waits (in order) until the shard is back.
  if (router_.lent() || !router_.deferred().empty())
    router_.deferred().push_back(m);
  else
    HandleMail(m);
}

void Worker::OnShardBack() {
  // What arrived meanwhile, in order; then the clients killed (the router
  // lends the shard to the next worker waiting for it after this).
  std::deque<Mail*>& deferred = router_.deferred();
  while (!router_.lent() && !deferred.empty()) {
    Mail* m = deferred.front();
    deferred.pop_front();
    HandleMail(m);
  }
  if (!kill_requests_.empty()) {
    std::vector<uint64_t> ids;
    ids.swap(kill_requests_);
    for (uint64_t id : ids) {
      auto it = clients_.find(id);
      if (it != clients_.end()) CloseClient(*it->second);
    }
  }
}

void Worker::BeforeLending() {
  // Replies made so far go out first: once the shard is lent, this worker
  // touches none of its clients until it is back. Those that still refer to
  // values of this shard copy them now: the holder may free or change them.
  io_.FlushPending();
  if (lent_blocks::LentCount() > 0)
    for (auto& [id, c] : clients_) c->out.Flatten();
}

void Worker::HandleMail(Mail* m) {
  switch (m->kind) {
    case Mail::Kind::kExec:
      RunExecBatch(static_cast<ExecBatch*>(m));
      break;
    case Mail::Kind::kExecDone:
      FinishExecBatch(static_cast<ExecBatch*>(m));
      break;
    case Mail::Kind::kWoken:
      waits_.OnWoken(static_cast<BlockMail*>(m)->wait);
      delete m;
      break;
    case Mail::Kind::kForget:
      shard_.blocking().Remove(*static_cast<BlockMail*>(m)->wait, index_);
      delete m;
      break;
    case Mail::Kind::kUnwatch: {
      auto* u = static_cast<UnwatchMail*>(m);
      for (const UnwatchMail::Key& k : u->keys) shard_.watches().Remove(k.db, k.key, u->state.get());
      delete u;
      break;
    }
    case Mail::Kind::kAdopt: {
      auto* a = static_cast<AdoptMail*>(m);
      if (server_.stopping()) {
        close(a->fd);
        connections_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        Adopt(a->fd, a->is_unix, a->id, a->tls);
      }
      delete a;
      break;
    }
  }
}

ExecBatch* Worker::NewBatch() {
  if (free_batches_.empty()) return new ExecBatch();
  ExecBatch* b = free_batches_.back();
  free_batches_.pop_back();
  return b;
}

void Worker::RecycleBatch(ExecBatch* b) {
  if (free_batches_.size() >= kFreeBatches || b->bytes.capacity() > ClientIo::kIdleBufferKeep ||
      b->reply.capacity() > ClientIo::kIdleBufferKeep) {
    delete b;
    return;
  }
  b->Clear();
  free_batches_.push_back(b);
}

void Worker::SendOpenBatch(Client& c) {
  ExecBatch* b = c.open_batch;
  if (b == nullptr) return;
  c.open_batch = nullptr;
  c.batch_in_flight = true;
  stats_.cross_shard_batches++;
  if (b->reads_only && b->commands.size() > 1 && !b->transaction && SendReadGroup(b)) {
    stats_.cross_shard_read_groups++;
    return;
  }
  router_.Send(b->target, b);
}

bool Worker::SendReadGroup(ExecBatch* relay) {
  // (A relay with one stop is one batch already.)
  const uint32_t first_target = relay->commands[0].target;
  if (std::all_of(relay->commands.begin(), relay->commands.end(),
                  [&](const ExecBatch::Command& cmd) { return cmd.target == first_target; }))
    return false;
  uint32_t workers = 0;
  relay->parts.assign(nworkers_, nullptr);
  for (const ExecBatch::Command& cmd : relay->commands) {
    ExecBatch*& part = relay->parts[cmd.target];
    if (part != nullptr) continue;
    part = NewBatch();
    part->from = index_;
    part->target = cmd.target;
    part->client_id = relay->client_id;
    part->db = relay->db;
    part->resp = relay->resp;
    part->user = relay->user;
    part->user_ref = relay->user_ref;
    part->relay = relay;
    workers++;
  }
  // Each part: its worker's commands, in order.
  size_t offset = 0, arg = 0;
  for (const ExecBatch::Command& cmd : relay->commands) {
    ExecBatch* part = relay->parts[cmd.target];
    for (uint32_t j = 0; j < cmd.argc; j++, arg++) {
      part->bytes.append(relay->bytes, offset, relay->arg_sizes[arg]);
      part->arg_sizes.push_back(relay->arg_sizes[arg]);
      offset += relay->arg_sizes[arg];
    }
    part->commands.push_back(cmd);
  }
  relay->parts_out = workers;
  // The shards' versions before anything of the group runs: if they are
  // the same when every part is back, each part read what was there now.
  for (ExecBatch* part : relay->parts)
    if (part != nullptr) part->version = server_.shard(part->target).version();
  for (ExecBatch* part : relay->parts)
    if (part != nullptr && part->target != index_) router_.Send(part->target, part);
  // This worker's part now (the others cannot be back before it).
  if (ExecBatch* here = relay->parts[index_]; here != nullptr) RunExecBatch(here);
  return true;
}

void Worker::FinishReadPart(ExecBatch* part) {
  ExecBatch* relay = part->relay;
  if (--relay->parts_out > 0) return;
  // Every part is back. If no shard they read changed since the group was
  // sent, each read what was there then: the group read at one point in
  // time, between the client's earlier commands and its later ones.
  bool held = true;
  for (ExecBatch* p : relay->parts) {
    if (p == nullptr) continue;
    if (!p->finished() || p->cut || p->reply_ends.size() != p->commands.size() ||
        server_.shard(p->target).version() != p->version)
      held = false;
  }
  auto it = clients_.find(relay->client_id);
  Client* c = it != clients_.end() && !it->second->closed ? it->second.get() : nullptr;
  if (c != nullptr && held) {
    // The replies, in the order of the commands.
    group_cursor_.assign(nworkers_, 0);
    for (const ExecBatch::Command& cmd : relay->commands) {
      const ExecBatch* p = relay->parts[cmd.target];
      const size_t k = group_cursor_[cmd.target]++;
      const size_t begin = k == 0 ? 0 : p->reply_ends[k - 1];
      c->out.Append(std::string_view(p->reply.data() + begin, p->reply_ends[k] - begin));
    }
  }
  for (ExecBatch*& p : relay->parts)
    if (p != nullptr) {
      p->relay = nullptr;
      RecycleBatch(p);
    }
  relay->parts.clear();
  if (c == nullptr) {
    RecycleBatch(relay);
    return;
  }
  if (!held) {
    // Something changed meanwhile: the reads run again, one after another,
    // as a relay (always in order; a busy shard cannot keep them waiting).
    relay->reads_only = false;
    stats_.cross_shard_read_group_reruns++;
    router_.Send(relay->target, relay);
    return;
  }
  c->batch_in_flight = false;
  if (!io_.OverOutputLimit(*c)) {
    io_.QueueWrite(*c);
    resume_.push_back(c->id);
  }
  c->rerun_deadline_ms = -1;
  RecycleBatch(relay);
}

void Worker::RunExecBatch(ExecBatch* b) {
  ApplyConfigIfChanged();
  proxy_.id = b->client_id;
  proxy_.home = b->from;
  proxy_.db = b->db;
  proxy_.resp = b->resp;
  proxy_.user = b->user;
  proxy_.authenticated = true;
  ReplyWriter reply(&b->reply, b->resp, this);
  const int64_t now_ms = UnixTimeMs();
  const uint64_t hard_limit = server_.config().output_buffer_limits[Config::kNormalClients].hard;
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
      in_exec_ = true;
      aof_log_.BeginGather();  // its writes are one transaction in the append-only file
    }
  }
  const bool part = b->relay != nullptr;
  if (!stopped) PrefetchRun(*b);
  if (!stopped) {
    b->RunFrom(index_, &exec_args_, [&](size_t i, const ExecBatch::Command& cmd, std::span<const std::string_view> args) {
      proxy_.last_cmd = cmd.spec;  // error texts name it (ExecuteCommand sets it for its own clients)
      // Its first key as the client's worker encoded and hashed it, the
      // view onto this batch's copy: the handler's hint.
      CompactKey::Probe key;
      const CompactKey::Probe* hint = nullptr;
      if (!cmd.key.bytes.empty()) [[likely]] {
        key = cmd.key;
        key.bytes = args[static_cast<size_t>(cmd.spec->first_key)];
        hint = &key;
      }
      t = Run(proxy_, cmd.spec, args, reply, shard_, hint, now_ms, t);
      if (part) b->reply_ends.push_back(static_cast<uint32_t>(b->reply.size()));
      if (TakeScriptRerun()) [[unlikely]] {
        // A script touched a key of another shard before writing: it and the
        // commands after it go back to the client's worker, which runs them
        // (the script holding every shard) before anything else of the client.
        b->rerun_from = static_cast<uint32_t>(i);
        stopped = true;
        return false;
      }
      if (waits_.blocked_now() != nullptr) [[unlikely]] {
        b->blocked = waits_.TakeBlockedNow();  // the last command of its (sealed) batch
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
  if (in_exec_ && b->transaction) {
    in_exec_ = false;
    aof_log_.EndGather();
    if (waits_.has_ready()) waits_.ServeReadyKeys(now_ms);
  }
  PassOn(b, stopped);
}

void Worker::PrefetchRun(const ExecBatch& b) {
  // Two or more commands that run here next: the prefetches ProcessInput
  // makes for a client's own batch, by the keys' hashes made on the
  // client's worker (every home group, then the arena lines, then the
  // entries), so that their misses overlap.
  const size_t n = b.commands.size();
  if (b.next + 1 >= n || b.commands[b.next + 1].target != index_) return;
  const Db& db = shard_.db(b.db);
  size_t end = b.next;
  while (end < n && b.commands[end].target == index_) end++;
  for (size_t i = b.next; i < end; i++)
    if (!b.commands[i].key.bytes.empty()) db.PrefetchGroup(b.commands[i].key.hash);
  for (size_t i = b.next; i < end; i++)
    if (!b.commands[i].key.bytes.empty()) db.PrefetchArena(b.commands[i].key.hash);
  for (size_t i = b.next; i < end; i++)
    if (!b.commands[i].key.bytes.empty()) db.PrefetchEntry(b.commands[i].key.hash);
}

void Worker::PassOn(ExecBatch* b, bool stopped) {
  if (!stopped && !b->finished()) {
    // The next command runs on another worker (the client's own, maybe):
    // the batch goes there, after what this one ran.
    b->target = b->commands[b->next].target;
    router_.Send(b->target, b);
    return;
  }
  b->kind = Mail::Kind::kExecDone;
  if (b->from == index_) {
    FinishExecBatch(b);  // the relay ended at the client's own worker
    return;
  }
  router_.Send(b->from, b);
}

void Worker::FinishExecBatch(ExecBatch* b) {
  if (b->relay != nullptr) {
    FinishReadPart(b);
    return;
  }
  auto it = clients_.find(b->client_id);
  if (it != clients_.end() && !it->second->closed) {
    Client& c = *it->second;
    c.out.Take(b->reply);
    c.batch_in_flight = false;
    if (b->transaction) Unwatch(c);  // (only now: the watch was checked there)
    if (b->rerun_from != ExecBatch::kNoRerun && !b->cut) [[unlikely]] {
      c.pending = b;
      c.pending_next = b->rerun_from;
      resume_.push_back(c.id);
      io_.QueueWrite(c);
      return;
    }
    if (b->cut) {
      io_.CloseOverLimit(c);
    } else if (!io_.OverOutputLimit(c)) {
      io_.QueueWrite(c);
      if (b->blocked != nullptr && !c.read_closed)
        waits_.BlockClient(c, std::move(b->blocked));
      else
        resume_.push_back(c.id);
    }
    c.rerun_deadline_ms = -1;  // a re-run that came back without blocking
    // Stopped reading meanwhile: the wait goes, unless it was served already
    // (then its outcome is delivered: the client can still read).
    if (b->blocked != nullptr && c.read_closed && !c.closed && !waits_.CancelBlocked(b->blocked))
      waits_.BlockClient(c, std::move(b->blocked));
  }
  // Blocked, but the client went meanwhile.
  if (b->blocked != nullptr) waits_.CancelBlocked(b->blocked);
  RecycleBatch(b);
}

void Worker::ResumeClients() {
  std::vector<uint64_t> ids;
  ids.swap(resume_);
  for (uint64_t id : ids) {
    auto it = clients_.find(id);
    if (it == clients_.end()) continue;
    Client& c = *it->second;
    if (c.closed || c.batch_in_flight || c.blocked != nullptr) continue;
    if (c.pending != nullptr) {
      RunPending(c);
      SendOpenBatch(c);
      if (!c.closed && !c.out.empty()) io_.QueueWrite(c);
      if (c.closed || c.pending != nullptr || c.batch_in_flight || c.blocked != nullptr) continue;
    }
    if (c.rerun != nullptr) {
      std::shared_ptr<BlockedClient> w = std::move(c.rerun);
      waits_.RerunBlocked(c, *w);
      if (c.closed || c.batch_in_flight || c.blocked != nullptr) continue;
    }
    if (!c.in.empty() && !c.close_after_reply) {
      ProcessInput(c, c.in);
      if (!c.closed) io_.StartBigArg(c, c.in);
    }
    if (c.read_closed && !c.batch_in_flight) c.close_after_reply = true;
    if (c.close_after_reply) io_.QueueWrite(c);
  }
}

bool Worker::ServeMail() {
  bool work = Drain();
  // Mail that arrived while a script was busy (ScriptBusy::WhileBusy), in order.
  std::deque<Mail*>& deferred = router_.deferred();
  while (!router_.lent() && !deferred.empty()) {
    Mail* m = deferred.front();
    deferred.pop_front();
    HandleMail(m);
    work = true;
  }
  if (router_.lent()) {
    // Parked: the holder may use this shard and read this worker's state
    // until it gives the shard back. (A busy script there: this worker's
    // clients are answered -BUSY meanwhile, and may kill it.)
    WaitUntil([this] { return !router_.lent(); }, /*serve_parked=*/true);
    script_busy_.AdoptParked();
    ApplyConfigIfChanged();  // the holder may have run CONFIG SET
    work = true;
  }
  return work;
}

void Worker::ServeMailBetweenEvents() {
  // What this worker's clients sent elsewhere leaves now, and what others
  // sent here runs now, rather than after every ready client of this
  // worker (up to 256 of them, each with its whole pipeline): other
  // workers' clients do not wait behind this one's, and their parts run
  // while this worker goes on.
  events_since_mail_ = 0;
  router_.FlushOutboxes();
  ServeMail();
}

int Worker::BeforeWait() {
  if (server_.stopping()) {
    loop_.Stop();
    return 0;
  }
  ApplyConfigIfChanged();
  router_.EndLendPause();
  const uint64_t seen = waker_.Prepare();
  events_since_mail_ = 0;
  bool work = ServeMail();
  if (router_.TakeEvictRequest()) EvictFor(1000);
  if (!resume_.empty()) {
    ResumeClients();
    work = true;
  }
  router_.FlushOutboxes();
  // What the mail made for this worker's clients (replies back from other
  // workers) goes out now, rather than after one more turn of the loop, so
  // that the worker may sleep at once (events that came meanwhile end the
  // wait at once; mail that came after Prepare fails TrySleep).
  if (work) io_.FlushPending();
  if (!waker_.TrySleep(seen)) return 0;
  // A ring was full: try again soon even if nobody wakes this worker.
  int cap = router_.ring_full() ? 1 : -1;
  // A client the mail blocked (a BLPOP that ran elsewhere) times out on time.
  if (work && waits_.has_deadlines()) {
    const int until = static_cast<int>(std::clamp<int64_t>(waits_.next_deadline_ms() - UnixTimeMs(), 0, 1000));
    cap = cap < 0 ? until : std::min(cap, until);
  }
  return cap;
}

}  // namespace peregrine
