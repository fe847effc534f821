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

namespace {

// What a batch's handling reads first, fetched ahead (ShardRouter::Pop):
// the commands and their arguments where it is to run; the replies back
// home (a write for the reply buffer the batch's run fills here).
void PrefetchMailBody(uint64_t word) {
  const Mail* m = reinterpret_cast<const Mail*>(word);
  if (m->kind == Mail::Kind::kExec) {
    const auto* b = static_cast<const ExecBatch*>(m);
    __builtin_prefetch(b->commands.data());
    if (b->relay != nullptr) {
      // A group's part reads its arguments in its relay, not read yet.
      for (int line = 0; line < 4; line++) __builtin_prefetch(reinterpret_cast<const char*>(b->relay) + 64 * line);
    } else {
      __builtin_prefetch(b->bytes.data());
      __builtin_prefetch(b->arg_sizes.data());
    }
    __builtin_prefetch(b->reply.data(), 1);
  } else if (m->kind == Mail::Kind::kExecDone) {
    const auto* b = static_cast<const ExecBatch*>(m);
    __builtin_prefetch(b->reply.data());
    __builtin_prefetch(b->reply_ends.data());
  }
}

}  // namespace

bool Worker::Drain() {
  // What waited for the replication stream and may go now (before the mail:
  // it may let the shard be lent, TryLend below; and after it: a part run
  // here may have released this shard's own tickets).
  bool any = relay_.ReleaseHeld();
  any |= router_.Pop(
      [this](const uint64_t* words, size_t n) {
        for (size_t i = 0; i < n; i++)
          if (!ShardRouter::IsControl(words[i])) PrefetchMailBody(words[i]);
        // (Not while lent: the shard is another worker's to read then.)
        if (!router_.lent()) relay_.PrefetchKeys(words, n);
      },
      [this](uint32_t from, uint64_t word) { Handle(from, word); });
  any |= relay_.ReleaseHeld();
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
  // A command waits for this answer (lent: nothing to evict here now).
  if (m->kind == Mail::Kind::kEvictAsk) [[unlikely]] {
    AnswerEvictAsk(static_cast<EvictMail*>(m), !router_.lent());
    return;
  }
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
  ServeDeferred();
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
      relay_.Arrive(static_cast<ExecBatch*>(m));
      break;
    case Mail::Kind::kExecDone:
      relay_.Finish(static_cast<ExecBatch*>(m));
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
    case Mail::Kind::kEvents: {
      auto* e = static_cast<EventsMail*>(m);
      DeliverEvents(e->events);
      delete e;
      break;
    }
    case Mail::Kind::kInvalidate: {
      auto* im = static_cast<InvalidateMail*>(m);
      for (Invalidation& inv : im->items) DeliverInvalidation(inv);
      delete im;
      break;
    }
    case Mail::Kind::kEvictAsk:
      AnswerEvictAsk(static_cast<EvictMail*>(m), !router_.lent());
      break;
    case Mail::Kind::kEvictAnswer:
      OnEvictAnswer(static_cast<EvictMail*>(m));
      break;
    case Mail::Kind::kMonitor: {
      auto* mm = static_cast<MonitorMail*>(m);
      monitor_.DeliverHere(mm->lines);
      delete mm;
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

void Worker::ResumeClients() {
  // One client: what it waited to run, then its input.
  auto resume = [this](Client& c) {
    if (c.closed || c.batch_in_flight || c.blocked != nullptr) return;
    if (c.pending != nullptr) {
      RunPending(c);
      relay_.SendOpen(c);
      if (!c.closed && !c.out.empty()) io_.QueueWrite(c);
      if (c.closed || c.pending != nullptr || c.batch_in_flight || c.blocked != nullptr) return;
    }
    if (c.rerun != nullptr) {
      std::shared_ptr<BlockedClient> w = std::move(c.rerun);
      waits_.RerunBlocked(c, std::move(w));
      if (c.closed || c.batch_in_flight || c.blocked != nullptr) return;
    }
    if (!c.in.empty() && !c.close_after_reply) {
      ProcessInput(c, c.in);
      if (!c.closed) io_.StartBigArg(c, c.in);
    }
    if (c.read_closed && !c.batch_in_flight && !c.claim_wait) c.close_after_reply = true;
    if (c.close_after_reply) io_.QueueWrite(c);
  };
  std::vector<uint64_t> ids;
  ids.swap(resume_);
  for (uint64_t id : ids) {
    auto it = clients_.find(id);
    if (it == clients_.end()) continue;
    Client& c = *it->second;
    resume(c);
    // (Whatever it ran, or waits for now: read it again, or not.)
    if (!c.closed) io_.HoldReading(c);
  }
}

bool Worker::ServeDeferred() {
  bool work = false;
  std::deque<Mail*>& deferred = router_.deferred();
  while (!router_.lent() && !deferred.empty()) {
    Mail* m = deferred.front();
    deferred.pop_front();
    HandleMail(m);
    work = true;
  }
  return work;
}

bool Worker::ServeMail() {
  bool work = Drain();
  // Mail that arrived while a script was busy (ScriptBusy::WhileBusy), in
  // order; its write groups' parts may let the shard be lent now.
  if (ServeDeferred()) {
    work = true;
    router_.TryLend();
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
  // Clients that what ResumeClients ran made ready (a write group whose
  // last part ran here, a ticket that let a waiting client go): no sleep
  // before they go on, as nothing else may wake this worker.
  if (!resume_.empty()) return 0;
  // Mail is likely soon (this worker's clients wait for batches out on
  // other workers, or mail just came): watch for it a moment rather than
  // sleep, so that neither side pays for a wake-up (an eventfd write, the
  // sleep, the wake, an interrupt to another core).
  if (spin_ticks_ > 0 && (work || relay_.away() > 0) && SpinForMail(seen)) return 0;
  if (!waker_.TrySleep(seen)) return 0;
  // A ring was full: try again soon even if nobody wakes this worker.
  int cap = router_.ring_full() ? 1 : -1;
  // A client the mail blocked (a BLPOP that ran elsewhere) times out on time.
  if (work && waits_.has_deadlines()) {
    const int until = waits_.WaitMsToNextDeadline(UnixTimeMs());
    cap = cap < 0 ? until : std::min(cap, until);
  }
  return cap;
}

bool Worker::SpinForMail(uint64_t seen) {
  stats_.worker_spins++;
  const uint64_t start = CycleClock::Now();
  // A client's event ends the spin too: the sockets are looked at (a poll
  // of the epoll descriptor) four times over it.
  const uint64_t look_every = spin_ticks_ / 4 + 1;
  uint64_t next_look = start + look_every;
  for (;;) {
    for (int i = 0; i < 8; i++) {
      if (waker_.Prepare() != seen) {  // (every Notify changes the word)
        stats_.worker_spin_hits++;
        return true;
      }
      __builtin_ia32_pause();
    }
    const uint64_t now = CycleClock::Now();
    if (now - start >= spin_ticks_) return false;
    if (now >= next_look) {
      if (loop_.HasReadyEvents()) {
        stats_.worker_spin_hits++;
        return true;
      }
      next_look = now + look_every;
    }
  }
}

}  // namespace peregrine
