// A shard: one slice of the keyspace with its own databases and statistics.
// Only the thread that owns a shard touches it, or a thread its owner lent it
// to (one shard per worker thread; docs/transactions.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/db.h"
#include "persist/aof_format.h"
#include "server/blocking.h"
#include "server/config.h"
#include "server/watch.h"

namespace peregrine {

struct ShardStats {
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t expire_checked = 0, expire_deleted = 0;  // active expiry's keys looked at, deleted
};

class Shard {
 public:
  Shard(int index, int databases)
      : index_(index),
        dbs_(static_cast<size_t>(databases)),
        rng_(0x9e3779b97f4a7c15ULL + index),
        blocking_(databases),
        watches_(databases) {
    watches_.set_client_tracking(&tracking_);
    observers_.reserve(dbs_.size());
    for (size_t i = 0; i < dbs_.size(); i++) {
      dbs_[i] = std::make_unique<Db>();
      dbs_[i]->set_access_tracker(&access_);
      observers_.push_back(std::make_unique<WatchObserver>(&watches_, &aof_, static_cast<int>(i)));
      dbs_[i]->set_key_observer(observers_.back().get());
      dbs_[i]->set_change_counter(&version_);
    }
  }

  int index() const { return index_; }
  int num_dbs() const { return static_cast<int>(dbs_.size()); }
  // REQUIRES: 0 <= i < num_dbs().
  Db& db(int i) { return *dbs_[static_cast<size_t>(i)]; }
  // A replica's swapdb load (docs/replication.md): databases built beside
  // the live ones (no observer: nobody watches them yet), whose contents
  // take the live ones' place when the load ends well (Db::Swap, as
  // SWAPDB), or dropped. What goes is freed later, between the calling
  // thread's events (Db::ClearLater). Holding the shard.
  void BeginStaging() {
    staged_.clear();
    for (size_t i = 0; i < dbs_.size(); i++) {
      staged_.push_back(std::make_unique<Db>());
      staged_.back()->set_access_tracker(&access_);
      staged_.back()->set_change_counter(&version_);
    }
  }
  Db& staged(int i) { return *staged_[static_cast<size_t>(i)]; }
  void SwapStaged() {
    for (size_t i = 0; i < dbs_.size(); i++) dbs_[i]->Swap(*staged_[i]);
    DropStaged();
    BumpVersion();
  }
  void DropStaged() {
    for (auto& db : staged_) db->ClearLater();
    staged_.clear();
  }
  ShardStats& stats() { return stats_; }
  // Changes to this shard's keys since the start (Redis's server.dirty, per
  // shard, for the save schedules and rdb_changes_since_last_save): bumped
  // by whoever holds the shard, read by any thread.
  uint64_t dirty() const { return dirty_.load(std::memory_order_relaxed); }
  void AddDirty(uint64_t n = 1) { dirty_.store(dirty_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  // Advanced after anything that may have changed the keys: a command that
  // is not read-only, an eviction, keys or fields expiring (the databases
  // advance it), a borrower giving the shard back. A read
  // group (docs/transactions.md, "Pipelines and reply order") compares it
  // with the value it read at, to know that nothing changed since. Written
  // by whoever holds the shard, read by any thread.
  // (Release and acquire suffice: a change the group must see happened on
  // the thread of a part before the part ran, or reached it through the
  // mail, and the part's return carries it home.)
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void BumpVersion() { version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  // CONFIG RESETSTAT: the shard's counters and its databases'.
  void ResetStats() {
    stats_ = ShardStats{};
    for (auto& db : dbs_) db->ResetStats();
  }
  std::mt19937_64& rng() { return rng_; }
  // The clients blocked on this shard's keys (blocking.h): touched by the
  // thread holding the shard, as the keys are.
  BlockingKeys& blocking() { return blocking_; }
  // The clients WATCHing this shard's keys (watch.h): touched by the thread
  // holding the shard.
  WatchTable& watches() { return watches_; }

  // One slice of active expiry: walks the databases' keys with deadlines, deleting
  // expired keys, for at most `budget_us` microseconds and at most one pass
  // over each database. Returns true if the budget ran out with keys with
  // deadlines left unvisited (the caller should come back soon).
  bool ActiveExpire(int64_t now_ms, int64_t budget_us);

  // Evicts one key by `policy` (not noeviction), trying the databases in
  // turn. False if nothing could go.
  bool EvictOne(MaxmemoryPolicy policy, int samples);

  uint64_t evicted_keys() const {
    uint64_t n = 0;
    for (const auto& db : dbs_) n += db->evicted_keys();
    return n;
  }

  // Table housekeeping (Db::Maintain: repacking segments left sparse by
  // deletions) for at most about `budget_us` in all.
  void MaintainTables(int64_t budget_us);
  // Sorted sets' index moves (Db::StepZSetMoves) for about `budget_us`;
  // returns whether any are left.
  bool HasZSetMoves() const {
    for (const auto& db : dbs_)
      if (db->HasZSetMoves()) return true;
    return false;
  }
  bool StepZSetMoves(int64_t budget_us);

  // The commands this shard's holders logged for the append-only file and
  // not yet written to it (worker_aof.cc): touched by the thread holding
  // the shard.
  AofChunk& aof() { return aof_; }
  // Whether keys the databases delete by themselves (expiry, eviction) are
  // logged as DEL (the append-only file is on). Holding the shard.
  void SetLogRemovals(bool on) {
    for (auto& o : observers_) o->log = on;
    ReportRemovals();
  }
  // Whether they make keyspace events (notify-keyspace-events has x, e or
  // h). Holding the shard.
  void SetNotifyRemovals(bool on) {
    for (auto& o : observers_) o->notify = on;
    ReportRemovals();
  }
  // Whether expired keys reach the CLIENT TRACKING table (it tracks keys, or
  // a client is in BCAST mode). Holding the shard.
  void SetTrackRemovals(bool on) {
    if (observers_.empty() || observers_[0]->track == on) return;
    for (auto& o : observers_) o->track = on;
    ReportRemovals();
  }
  bool track_removals() const { return !observers_.empty() && observers_[0]->track; }
  // CLIENT TRACKING's table of this shard's keys (tracking.h): touched by
  // the thread holding the shard.
  TrackingTable& tracking() { return tracking_; }
  // A replica's shard: keys past their deadline are hidden, not deleted
  // (Db::set_hide_expired). Holding the shard.
  void SetHideExpired(bool on) {
    for (auto& db : dbs_) db->set_hide_expired(on);
  }

  // The keys' access data (OBJECT FREQ / IDLETIME).
  AccessTracker& access() { return access_; }
  // maxmemory-policy, lfu-log-factor and lfu-decay-time as they are now.
  void ConfigureAccess(const Config& config, int64_t now_ms);
  // The cron's share of access tracking: advances the tracker's clock and
  // goes on with the sweep over all keys (a pass every
  // AccessTracker::kSweepPeriodMs) for at most about `budget_us`.
  void AccessCron(int64_t now_ms, int64_t budget_us);

  uint64_t expired_fields() const {
    uint64_t n = 0;
    for (const auto& db : dbs_) n += db->expired_fields();
    return n;
  }
  uint64_t expired_keys() const {
    uint64_t n = 0;
    for (const auto& db : dbs_) n += db->expired_keys();
    return n;
  }

 private:
  // Tells the watch table of keys a database changes by itself (eviction,
  // field expiry), and logs the keys it deletes by itself for the
  // append-only file (as Redis propagates an expired or evicted key's DEL).
  // Tells the keyspace events of those keys (expired, evicted, hexpired)
  // when notifications of those classes are on.
  class WatchObserver final : public Db::KeyObserver {
   public:
    WatchObserver(WatchTable* t, AofChunk* aof, int db) : table_(t), aof_(aof), db_(db) {}
    bool active() const override { return table_->tracking(); }
    void KeyChanged(const Db& d, std::string_view key, int64_t now_ms) override {
      table_->Touch(db_, key, d, now_ms);
    }
    void KeyRemoved(const Db&, std::string_view key, bool evicted) override;
    void FieldsRemoved(const Db&, std::string_view key, std::span<const std::string> fields, bool key_gone) override;
    bool log = false, notify = false, track = false;  // what reports removals (Db::set_report_removals)

   private:
    WatchTable* table_;
    AofChunk* aof_;
    int db_;
  };

  void ReportRemovals() {
    for (size_t i = 0; i < dbs_.size(); i++)
      dbs_[i]->set_report_removals(observers_[i]->log || observers_[i]->notify || observers_[i]->track);
  }

  int index_;
  std::vector<std::unique_ptr<Db>> dbs_;
  std::vector<std::unique_ptr<Db>> staged_;  // (BeginStaging)
  ShardStats stats_;
  std::atomic<uint64_t> dirty_{0};
  alignas(64) std::atomic<uint64_t> version_{0};  // (its own line: other threads read it)
  AofChunk aof_;
  std::mt19937_64 rng_;
  AccessTracker access_;
  BlockingKeys blocking_;
  TrackingTable tracking_;  // (before watches_, which points at it)
  WatchTable watches_;
  std::vector<std::unique_ptr<WatchObserver>> observers_;
  bool sweeping_ = false;
  size_t sweep_db_ = 0;          // the database the running sweep pass is in
  int64_t sweep_started_ms_ = 0;  // when the last pass started
  size_t expire_db_ = 0;  // the database the next active-expiry pass starts at
  size_t evict_db_ = 0;   // the database eviction tries first
  size_t maintain_db_ = 0;  // the database the next table housekeeping starts at
};

}  // namespace peregrine
