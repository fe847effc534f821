// Shard housekeeping (see shard.h).
#include "server/shard.h"

#include <algorithm>

#include "core/lazy_free.h"
#include "server/notify.h"
#include "net/event_loop.h"

namespace peregrine {

bool Shard::ActiveExpire(int64_t now_ms, int64_t budget_us) {
  constexpr size_t kKeysPerStep = 64;
  const int64_t start = MonotonicUs();
  for (size_t n = 0; n < dbs_.size(); n++) {
    Db& db = *dbs_[expire_db_];
    // Hash fields first (Db::ExpireHashFields): every hash whose earliest
    // field deadline has passed, a few at a time.
    while (db.HashFieldsDue(now_ms)) {
      db.ExpireHashFields(now_ms, 16);
      if (MonotonicUs() - start > budget_us) return true;
    }
    // One pass over the keys with a deadline, at most, per database.
    const size_t total = db.expires_count();
    size_t walked = 0;
    while (db.expires_count() > 0 && walked < total) {
      stats_.expire_checked += std::min(kKeysPerStep, db.expires_count());
      stats_.expire_deleted += db.ActiveExpire(now_ms, kKeysPerStep);
      walked += kKeysPerStep;
      if (MonotonicUs() - start > budget_us) return db.expires_count() > 0;
    }
    expire_db_ = (expire_db_ + 1) % dbs_.size();
  }
  return false;
}

bool Shard::StepZSetMoves(int64_t budget_us) {
  const int64_t start = MonotonicUs();
  bool left = false;
  for (auto& db : dbs_) {
    const int64_t budget = budget_us - (MonotonicUs() - start);
    if (budget <= 0) return true;
    left = db->StepZSetMoves(budget) || left;
  }
  return left;
}

void Shard::MaintainTables(int64_t budget_us) {
  // Round-robin from where the last tick stopped, so that a busy database
  // cannot keep the others from being repacked.
  const int64_t start = MonotonicUs();
  for (size_t n = 0; n < dbs_.size(); n++) {
    const int64_t left = budget_us - (MonotonicUs() - start);
    if (left <= 0) return;
    if (!dbs_[maintain_db_]->Maintain(left)) maintain_db_ = (maintain_db_ + 1) % dbs_.size();
  }
}

void Shard::ConfigureAccess(const Config& config, int64_t now_ms) {
  access_.Configure(IsLfuPolicy(config.maxmemory_policy) ? AccessTracker::Mode::kLfu : AccessTracker::Mode::kLru, config.lfu_log_factor,
                    config.lfu_decay_time);
  access_.Advance(now_ms);
  // (At start the mode changes from the default with no key yet: a reset
  // pass would then reset keys made before it ran, with their accesses.)
  if (access_.reset_pending() &&
      std::all_of(dbs_.begin(), dbs_.end(), [](const auto& db) { return db->size() == 0; }))
    access_.CancelReset();
  if (access_.reset_pending()) {
    // A new pass now, to reset the bytes to the new policy's meaning.
    sweeping_ = false;
    sweep_started_ms_ = now_ms - AccessTracker::kSweepPeriodMs;
  }
}

void Shard::AccessCron(int64_t now_ms, int64_t budget_us) {
  access_.Advance(now_ms);
  if (!sweeping_ && now_ms - sweep_started_ms_ >= AccessTracker::kSweepPeriodMs) {
    access_.BeginPass(now_ms);
    for (auto& db : dbs_) db->BeginAccessSweep();
    sweeping_ = true;
    sweep_started_ms_ = now_ms;
  }
  if (!sweeping_) return;
  // A pass must reach every key within a minute (AccessTracker): one that
  // has run for over 20 s (a large keyspace) gets ten times the budget.
  if (now_ms - sweep_started_ms_ > 2 * AccessTracker::kSweepPeriodMs) budget_us *= 10;
  constexpr size_t kKeysPerStep = 4096;
  const int64_t start = MonotonicUs();
  // Every database until none has keys left in this pass. Not simply in
  // index order: SWAPDB exchanges databases with their sweep positions, so a
  // database behind the current one may have been swapped in unfinished.
  for (size_t n = 0; n < dbs_.size(); n++) {
    while (dbs_[sweep_db_]->SweepAccess(kKeysPerStep)) {
      if (MonotonicUs() - start > budget_us) return;
    }
    sweep_db_ = (sweep_db_ + 1) % dbs_.size();
  }
  sweeping_ = false;
}

bool Shard::EvictOne(MaxmemoryPolicy policy, int samples) {
  using P = MaxmemoryPolicy;
  const bool volatile_only = IsVolatilePolicy(policy);
  const Db::EvictFrom from = volatile_only ? Db::EvictFrom::kVolatile : Db::EvictFrom::kAllKeys;
  for (size_t n = 0; n < dbs_.size(); n++) {
    Db& db = *dbs_[evict_db_];
    evict_db_ = (evict_db_ + 1) % dbs_.size();
    bool done;
    if (policy == P::kVolatileTtl)
      done = db.EvictSoonestExpiring(static_cast<size_t>(samples), rng_);
    else if (policy == P::kVolatileRandom || policy == P::kAllKeysRandom)
      done = db.EvictRandom(from, rng_);
    else  // the LRU and LFU policies
      done = db.EvictSieve(from);
    if (done) {
      BumpVersion();  // (a read group that read before this no longer holds)
      // An evicted key's memory must be gone before the limit is checked
      // again (else a large container, freed lazily, would make eviction
      // take more keys): as Redis without lazyfree-lazy-eviction.
      lazy_free::FreeAll();
      return true;
    }
  }
  return false;
}

}  // namespace peregrine

namespace peregrine {

void Shard::WatchObserver::KeyRemoved(const Db&, std::string_view key, bool evicted) {
  if (log) aof_->Add(db_, {"DEL", key});
  // (An evicted key reaches the table as a change: KeyChanged.)
  if (track && !evicted) table_->Expired(key);
  if (notify) [[unlikely]]
    if (KeyspaceEvents* ev = KeyspaceEvents::Current(); ev != nullptr) {
      if (evicted)
        ev->Add(notify::kEvicted, db_, "evicted", key);
      else
        ev->Add(notify::kExpired, db_, "expired", key);
    }
}

void Shard::WatchObserver::FieldsRemoved(const Db&, std::string_view key, std::span<const std::string> fields,
                                         bool key_gone) {
  if (log) {
    std::vector<std::string_view> args = {"HDEL", key};
    args.insert(args.end(), fields.begin(), fields.end());
    aof_->Add(db_, args);
  }
  if (notify) [[unlikely]]
    if (KeyspaceEvents* ev = KeyspaceEvents::Current(); ev != nullptr) {
      ev->Add(notify::kHash, db_, "hexpired", key);
      if (key_gone) ev->Add(notify::kGeneric, db_, "del", key);
    }
}

}  // namespace peregrine
