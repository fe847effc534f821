// A worker's side of maxmemory (docs/storage.md): eviction before a
// command, in the cron, and for another worker that asks (worker.h).
#include "server/worker.h"

#include <algorithm>

#include "server/server.h"

namespace peregrine {

bool Worker::EnforceMaxmemory(Shard& shard) {
  const Config& config = server_.config();
  // (maxmemory bounds what the process allocated but the clients' buffers:
  // the keyspace and the heap, docs/storage.md.)
  auto over = [&] { return static_cast<uint64_t>(std::max<int64_t>(TotalCountedBytes(), 0)) > config.maxmemory; };
  if (!over() || (server_.is_replica() && config.replica_ignore_maxmemory)) return true;
  // Nothing is evicted while clients are paused (as Redis: no change may
  // reach the stream meanwhile).
  if (server_.client_pause().active() && server_.client_pause().Paused(UnixTimeMs()) != 0) return true;
  if (config.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return false;
  // One limit for the whole process: a command evicts from the shard it runs on (its worker's, or one
  // it holds; keys spread evenly by slot), each cron from its own, while the total is over; a bounded
  // number of keys per command keeps its latency bounded.
  bool progress = false;
  const int64_t evict_start = MonotonicUs();
  for (int i = 0; i < 256 && over(); i++) {
    if (!shard.EvictOne(config.maxmemory_policy, config.maxmemory_samples)) break;
    progress = true;
  }
  server_.latency().AddIfNeeded("eviction-cycle", (MonotonicUs() - evict_start) / 1000);
  if (progress || !over()) return true;
  // Nothing left in that shard that the policy may take (hash-tagged keys
  // can fill one shard): this worker's own shard if it is another one, then
  // the shards of other workers that have some (they evict at once), and the
  // write goes on as it would in Redis. Refused only when no shard can evict.
  if (&shard != &shard_) {
    for (int i = 0; i < 256 && over(); i++) {
      if (!shard_.EvictOne(config.maxmemory_policy, config.maxmemory_samples)) break;
      progress = true;
    }
    if (progress || !over()) return true;
  }
  PublishEvictable();
  bool elsewhere = false;
  for (uint32_t w = 0; w < nworkers_; w++) {
    if (w == index_ || static_cast<int>(w) == shard.index() || !server_.worker(w).evictable()) continue;
    router_.Send(w, ShardRouter::ControlWord(index_, ShardRouter::Control::kEvict));
    elsewhere = true;
  }
  if (elsewhere) router_.FlushOutboxes();
  return elsewhere;
}

void Worker::EvictFor(int64_t budget_us) {
  const Config& config = server_.config();
  if (config.maxmemory == 0 || config.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return;
  if (server_.is_replica() && config.replica_ignore_maxmemory) return;
  if (server_.client_pause().active() && server_.client_pause().Paused(UnixTimeMs()) != 0) return;
  const int64_t deadline = MonotonicUs() + budget_us;
  while (static_cast<uint64_t>(std::max<int64_t>(TotalCountedBytes(), 0)) > config.maxmemory) {
    bool evicted = false;
    for (int i = 0; i < 64; i++) evicted |= shard_.EvictOne(config.maxmemory_policy, config.maxmemory_samples);
    if (!evicted || MonotonicUs() >= deadline) break;
  }
  PublishEvictable();
}

void Worker::PublishEvictable() {
  const bool volatile_only = IsVolatilePolicy(server_.config().maxmemory_policy);
  bool any = false;
  for (int d = 0; d < shard_.num_dbs() && !any; d++)
    any = volatile_only ? shard_.db(d).expires_count() > 0 : shard_.db(d).size() > 0;
  evictable_.store(any, std::memory_order_relaxed);
}

}  // namespace peregrine
