// WATCH (docs/transactions.md): what a client watches and each shard's
// table of the watchers of its keys. A write to a watched key (a command's
// SignalModifiedKey, eviction, field expiry, FLUSHDB / FLUSHALL / SWAPDB)
// marks its watchers dirty, and their next EXEC replies a null array.
//
// Who touches what: a WatchState is created by its client's worker and its
// `keys` are that worker's alone; `dirty` is set by whichever thread holds a
// shard with the state in its table. A shard's WatchTable is touched only by
// the thread holding the shard. Entries name the state by shared_ptr, so a
// table may outlive the client's interest: a client that stops watching
// takes a new state for its next WATCH, and its old entries are removed by
// mail (Worker::Unwatch); until then they only mark a state nobody reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/tracking.h"

namespace peregrine {

class Db;

// One client's WATCH, from its first WATCH to EXEC, DISCARD, UNWATCH, RESET
// or its end.
struct WatchState {
  std::atomic<bool> dirty{false};
  struct Key {
    uint32_t shard;
    int db;
    std::string key;
    // The key's deadline when it was watched (unix ms), or -1: without one,
    // or already expired then (Redis 7 ignores those at EXEC). EXEC fails if
    // it has passed: a change of deadline would have marked the state dirty.
    int64_t deadline_ms;
  };
  std::vector<Key> keys;  // the client's worker only
  bool Dirty() const { return dirty.load(std::memory_order_acquire); }
  void MarkDirty() { dirty.store(true, std::memory_order_release); }
  // The earliest watched deadline (unix ms), or -1.
  int64_t EarliestDeadline() const {
    int64_t earliest = -1;
    for (const Key& k : keys)
      if (k.deadline_ms >= 0 && (earliest < 0 || k.deadline_ms < earliest)) earliest = k.deadline_ms;
    return earliest;
  }
  // Whether a watched key's deadline has passed at now_ms.
  bool AnyExpired(int64_t now_ms) const {
    const int64_t earliest = EarliestDeadline();
    return earliest >= 0 && earliest <= now_ms;
  }
};

// An atomic slot migration's record of this shard (docs/cluster.md,
// "Atomic slot migration"): the keys of the slots it moves that changed
// since it last sent them, as the table hears of every change. Touched
// only by the thread holding the shard.
struct MovingKeys {
  std::vector<bool> slots;  // (kNumSlots)
  std::unordered_set<std::string> changed;
  bool emptied = false;  // database 0 was flushed or swapped
};

// The watchers of one shard's keys, by database and key.
class WatchTable {
 public:
  explicit WatchTable(int databases) : dbs_(static_cast<size_t>(databases)) {}
  WatchTable(const WatchTable&) = delete;
  WatchTable& operator=(const WatchTable&) = delete;

  // Whether anything is watched here (the hot paths test this first).
  bool empty() const { return keys_ == 0; }
  // Whether changes are looked at (a watch, a slot migration's record, or
  // CLIENT TRACKING's table of the shard).
  bool tracking() const { return keys_ != 0 || !moving_.empty() || (clients_ != nullptr && clients_->active()); }
  // Distinct keys watched (INFO total_watched_keys).
  size_t keys() const { return keys_; }

  // Whether `w` watches `key` of database `db` here.
  bool Watches(int db, std::string_view key, const WatchState* w) const;
  // `w` watches `key`; `expired`: the key exists but its deadline has
  // passed (Redis's watchedKey.expired: deleting it is no change). False
  // (nothing added) if `w` watches it already.
  bool Add(int db, std::string_view key, const std::shared_ptr<WatchState>& w, bool expired);
  // `w` no longer watches `key` (nothing if it did not).
  void Remove(int db, std::string_view key, const WatchState* w);

  // `key` of database `db` (the shard's `d`) changed: its watchers are
  // dirty, except those that watched it expired while it is still missing
  // or expired (Redis's touchWatchedKey).
  void Touch(int db, std::string_view key, const Db& d, int64_t now_ms) {
    if (tracking()) [[unlikely]]
      TouchSlow(db, key, d, now_ms);
  }
  // The shard's CLIENT TRACKING table, told of every change Touch hears of,
  // and of keys that expired (Expired).
  void set_client_tracking(TrackingTable* t) { clients_ = t; }
  void Expired(std::string_view key) {
    if (clients_ != nullptr && clients_->active()) clients_->Changed(key, /*by_command=*/false);
  }
  // A slot migration records the changes of its slots' keys here from now
  // on (AddMoving), until RemoveMoving (each job its own). The caller keeps
  // `m`, and counts itself in the server-wide counter below while it
  // records (so that commands call Touch).
  void AddMoving(MovingKeys* m) { moving_.push_back(m); }
  void RemoveMoving(MovingKeys* m) { std::erase(moving_, m); }
  // Database `db` (the shard's `emptied`) is about to be emptied (FLUSHDB,
  // FLUSHALL) or, with `replaced_with`, swapped with another (SWAPDB, called
  // for each side): the watchers of the keys that exist in either are
  // dirty, as Redis's touchAllWatchedKeysInDb decides.
  void TouchAll(int db, const Db& emptied, const Db* replaced_with, int64_t now_ms);

  // The server-wide count of watched keys (Server::watching()), kept by
  // every table: commands skip the lookup while it is 0.
  void set_counter(std::atomic<int64_t>* c) { counter_ = c; }

 private:
  struct Watcher {
    std::shared_ptr<WatchState> state;
    bool expired;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, std::vector<Watcher>, Hash, std::equal_to<>>;

  void TouchSlow(int db, std::string_view key, const Db& d, int64_t now_ms);
  void Count(int64_t delta);

  std::vector<Map> dbs_;
  size_t keys_ = 0;
  std::atomic<int64_t>* counter_ = nullptr;
  std::vector<MovingKeys*> moving_;
  TrackingTable* clients_ = nullptr;
};

}  // namespace peregrine
