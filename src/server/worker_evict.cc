// A worker's side of maxmemory (docs/storage.md): eviction before a
// command, in the cron, and for another worker that asks (worker.h); and
// the asks of tracking-table-max-keys before a command (docs/tracking.md).
#include <poll.h>

#include <algorithm>

#include "server/server.h"
#include "server/worker.h"
#include "server/worker_internal.h"

namespace peregrine {

namespace {

bool Over(const Config& config) {
  // (maxmemory bounds what the process allocated but the clients' buffers:
  // the keyspace and the heap, docs/storage.md.)
  return static_cast<uint64_t>(std::max<int64_t>(TotalCountedBytes(), 0)) > config.maxmemory;
}

// Whether nothing may be evicted now: a replica that leaves maxmemory to
// its primary, or clients paused (as Redis: no change may reach the stream
// meanwhile).
bool EvictionSuspended(Server& server, const Config& config) {
  return (server.is_replica() && config.replica_ignore_maxmemory) ||
         (server.client_pause().active() && server.client_pause().Paused(UnixTimeMs()) != 0);
}

// How long a command waits for the other workers' answers to its ask
// (AwaitEvictAnswers). Answers come within microseconds from a worker that
// serves its mail; one in the middle of a long command (a script short of
// busy-reply-threshold, DEBUG SLEEP) is not waited for beyond this: its
// invalidations then come after the reply instead of before it.
constexpr int64_t kEvictAnswerWaitUs = 50'000;

// Whether a command of `c` waits for the other workers' answers: the
// invalidations written before a reply reach only a RESP3 client that
// tracks keys and does not redirect them (Worker::WriteOwnInvalidations,
// and DeliverInvalidation for the worker's own clients); the others get
// theirs the usual way, and nobody waits for them. Nor does a command
// `alone` cannot wait: of EXEC's queue (no push inside its array), of a
// group's part (its replies may be made again, its log must not leave
// before it ends), or with one worker.
bool WantsPushesFirst(const Client& c, bool alone, TrackingRegistry& registry, TrackingInvalidations& pending) {
  if (alone || !(c.tracking & tracking::kOn) || c.resp < 3) return false;
  if (registry.keys().load(std::memory_order_relaxed) <= 0 && !registry.bcast()) return false;
  TrackingRegistry::Redirect r;
  return !(registry.any_redirect() && pending.RedirectOf(c.id, &r));
}

}  // namespace

bool Worker::EvictSlice(Shard& shard) {
  const Config& config = server_.config();
  // A bounded number of keys per command keeps its latency bounded.
  bool progress = false;
  const int64_t evict_start = MonotonicUs();
  for (int i = 0; i < 256 && Over(config); i++) {
    if (!shard.EvictOne(config.maxmemory_policy, config.maxmemory_samples)) break;
    progress = true;
  }
  server_.latency().AddIfNeeded("eviction-cycle", (MonotonicUs() - evict_start) / 1000);
  return progress;
}

bool Worker::EnforceMaxmemory(Shard& shard, const Client* asker) {
  const Config& config = server_.config();
  if (!Over(config) || EvictionSuspended(server_, config)) return true;
  if (config.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return false;
  // One limit for the whole process: a command evicts from the shard it runs
  // on (its worker's, or one it holds; keys spread evenly by slot), each cron
  // from its own, while the total is over.
  if (EvictSlice(shard) || !Over(config)) return true;
  // Nothing left in that shard that the policy may take (hash-tagged keys
  // can fill one shard): this worker's own shard if it is another one, then
  // the shards of other workers that have some, and the write goes on as it
  // would in Redis. Refused only when no shard can evict.
  if (&shard != &shard_ && (EvictSlice(shard_) || !Over(config))) return true;
  PublishEvictable();
  // A tracking client is told of what goes before the command's reply, as
  // Redis evicts before it runs a command: the other workers evict now and
  // hand back its invalidations (AskAndAwait). Others' commands do not
  // wait: those workers evict in their next turn (kEvict).
  std::vector<uint32_t> others;
  for (uint32_t w = 0; w < nworkers_; w++) {
    if (w == index_ || static_cast<int>(w) == shard.index() || !server_.worker(w).evictable()) continue;
    if (holding_ && HoldsShard(w)) continue;  // (lent to this command: its worker cannot evict it now)
    others.push_back(w);
  }
  if (others.empty()) return false;
  if (asker != nullptr && WantsPushesFirst(*asker, in_exec_ || in_part_ || nworkers_ == 1, server_.tracking(),
                                           invalidations_)) {
    AskAndAwait(*asker, /*trim=*/false, others);
  } else {
    for (uint32_t w : others) router_.Send(w, ShardRouter::ControlWord(index_, ShardRouter::Control::kEvict));
    router_.FlushOutboxes();
  }
  return true;
}

void Worker::LimitTrackingTables(const Client& c) {
  TrackingRegistry& registry = server_.tracking();
  const uint64_t max = registry.max_keys();
  auto over = [&] { return max != 0 && registry.keys().load(std::memory_order_relaxed) > static_cast<int64_t>(max); };
  if (!over()) return;
  // Redis's effort (trackingLimitUsedSlots): 100 keys a command. The
  // tables this worker may touch (its shard, those the command holds),
  // then, for a tracking client, the other workers' at once: the
  // invalidations for it come back and go before its reply.
  for (uint32_t s : held_workers()) server_.shard(s).tracking().Limit(100);
  if (over() && WantsPushesFirst(c, in_exec_ || in_part_ || nworkers_ == 1, registry, invalidations_)) {
    std::vector<uint32_t> others;
    for (uint32_t w = 0; w < nworkers_; w++)
      if (w != index_ && !(holding_ && HoldsShard(w))) others.push_back(w);
    AskAndAwait(c, /*trim=*/true, others);
  }
  if (!invalidations_.empty() && !in_exec_) DeliverInvalidations();
}

void Worker::AskAndAwait(const Client& c, bool trim, std::span<const uint32_t> workers) {
  evict_asks_.Begin();
  for (uint32_t w : workers)
    if (EvictMail* ask = evict_asks_.Make(index_, w, c, trim); ask != nullptr)
      router_.Send(w, ask);  // (else it owes an earlier ask its answer: it evicts then)
  router_.FlushOutboxes();
  if (evict_asks_.done()) return;  // (none asked)
  // In the middle of a command: nothing else of this worker may run, so
  // only the answers and other workers' asks (answered without evicting:
  // two workers asking each other at once never wait for each other) are
  // handled; lend requests are kept, other mail waits in order (deferred)
  // until this worker next serves its mail, as while a script is busy.
  // (No kReturn comes meanwhile: a command runs holding its worker's shard.)
  auto handle = [this](uint32_t from, uint64_t word) {
    if (ShardRouter::IsControl(word)) {
      router_.OnControlMidCommand(from, ShardRouter::ControlOf(word));
      return;
    }
    Mail* m = reinterpret_cast<Mail*>(word);
    if (m->kind == Mail::Kind::kEvictAnswer) {
      OnEvictAnswer(static_cast<EvictMail*>(m));
    } else if (m->kind == Mail::Kind::kEvictAsk) {
      AnswerEvictAsk(static_cast<EvictMail*>(m), /*may_change=*/false);
    } else {
      router_.deferred().push_back(m);
    }
  };
  // What a mail loop further out took from a ring and has yet to handle
  // goes first (this command may run from its handling of an earlier word):
  // one worker's mail stays in the order it was sent.
  router_.SpillOuter(handle);
  const int64_t deadline = MonotonicUs() + kEvictAnswerWaitUs;
  while (!evict_asks_.done() && MonotonicUs() < deadline && !server_.stopping()) {
    router_.FlushOutboxes();
    const uint64_t seen = waker_.Prepare();
    if (router_.Pop(handle) || evict_asks_.done()) continue;
    if (waker_.TrySleep(seen)) {
      pollfd p{waker_.fd(), POLLIN, 0};
      poll(&p, 1, 1);
      waker_.Woke();
    }
  }
}

void Worker::AnswerEvictAsk(EvictMail* m, bool may_change) {
  const Config& config = server_.config();
  // (Not in the middle of a command, nor while the shard is lent.)
  may_change = may_change && !router_.lent() && !server_.any_loading();
  const bool evict = !m->trim && config.maxmemory > 0 && config.maxmemory_policy != MaxmemoryPolicy::kNoEviction &&
                     !EvictionSuspended(server_, config);
  if (may_change && (evict || m->trim)) {
    // What was pending goes its usual way first: the answer carries only
    // what this eviction (or trim) made for the asker's client (redirected
    // ones go to the client they redirect to, as usual).
    if (!invalidations_.empty()) DeliverInvalidations();
    if (evict) {
      EvictSlice(shard_);
      PublishEvictable();
      if (!shard_.aof().empty()) aof_log_.NoteUnflushed();  // (the DELs leave with the flush below)
    } else {
      shard_.tracking().Limit(100);
    }
    // (The others are delivered before this worker sleeps.)
    TrackingRegistry::Redirect r;
    if (!invalidations_.empty() && !(server_.tracking().any_redirect() && invalidations_.RedirectOf(m->client, &r)))
      m->items = invalidations_.TakeFor(m->client, m->home);
  } else if (evict) {
    router_.KeepEvictRequest();  // (it evicts once it may, as for kEvict)
  }
  const uint32_t to = m->from;
  m->kind = Mail::Kind::kEvictAnswer;
  router_.Send(to, m);
  // Between commands the answer leaves now; in the middle of one, with the
  // loop that handles it (the log of a command part-way must not leave).
  if (may_change) router_.FlushOutboxes();
}

void Worker::OnEvictAnswer(EvictMail* m) {
  evict_asks_.Answered(*m);
  // The running command writes them before its reply (Worker::Run); a late
  // answer's go out as any other.
  for (Invalidation& inv : m->items) invalidations_.Add(std::move(inv));
  delete m;
}

void Worker::EvictFor(int64_t budget_us) {
  const Config& config = server_.config();
  if (config.maxmemory == 0 || config.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return;
  if (EvictionSuspended(server_, config)) return;
  const int64_t deadline = MonotonicUs() + budget_us;
  while (Over(config)) {
    bool evicted = false;
    for (int i = 0; i < 64; i++) evicted |= shard_.EvictOne(config.maxmemory_policy, config.maxmemory_samples);
    if (!evicted || MonotonicUs() >= deadline) break;
  }
  PublishEvictable();
}

void Worker::PublishEvictable() {
  const MaxmemoryPolicy policy = server_.config().maxmemory_policy;
  bool any = false;
  for (int d = 0; d < shard_.num_dbs() && !any; d++) any = HasEvictable(shard_.db(d), policy);
  evictable_.store(any, std::memory_order_relaxed);
}

}  // namespace peregrine
