// LockTable: one shard's key locks for commands that span shards
// (docs/transactions.md, "Atomicity"). A multi-shard transaction takes its
// locks shard by shard in increasing shard index; on each shard it records
// all its intents on that shard's keys at once and is queued in arrival
// order. It holds its locks at once if no transaction queued before it has a
// conflicting intent; otherwise it waits until it is the oldest transaction
// in the queue (the VLL rule: everything before it has finished). Shared
// intents are compatible with each other; exclusive ones with nothing.
// Whole-shard intents (KEYS, DBSIZE, FLUSHALL, ...) conflict with every key
// intent of the other mode, or of any mode when exclusive.
//
// Single-shard commands do not queue while nothing conflicts with them
// (CanRunNow); --threads 1 never builds a LockTable.
//
// Owned by its shard's thread; not thread-safe. Holds a few entries (the
// keys of transactions in flight), so plain std containers suffice.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace peregrine {

class LockTable {
 public:
  using TxId = uint64_t;
  enum class Mode : uint8_t { kShared, kExclusive };
  struct Intent {
    int db = 0;
    std::string_view key;
    Mode mode = Mode::kShared;
  };

  // Queues `tx` (not already queued) with its intents on this shard's keys.
  // True if it holds its locks now; false if it waits, and a later Release()
  // will name it.
  bool Acquire(TxId tx, std::span<const Intent> intents);
  // The same for the whole shard.
  bool AcquireShard(TxId tx, Mode mode);

  // `tx` has finished on this shard: its intents go. Returns the waiting
  // transactions that now hold their locks, oldest first.
  std::vector<TxId> Release(TxId tx);

  // The single-shard fast path: whether a command with these intents could
  // run now without being queued (nothing held or queued conflicts).
  bool CanRunNow(std::span<const Intent> intents) const;

  // No transaction is queued or running here.
  bool idle() const { return queue_.empty(); }
  size_t queued() const { return queue_.size(); }
  // Whether `tx` holds its locks (false if waiting or unknown).
  bool Holds(TxId tx) const;

 private:
  struct Counts {
    uint32_t shared = 0;
    uint32_t exclusive = 0;
  };
  struct Tx {
    TxId id;
    bool holds;            // granted (running) or still waiting
    bool whole_shard;
    Mode shard_mode;
    std::vector<std::pair<std::string, Mode>> keys;  // LockKey() strings
  };

  static std::string LockKey(int db, std::string_view key);
  bool Conflicts(const std::string& key, Mode mode) const;
  bool ShardConflicts(Mode mode) const;
  void Count(const Tx& tx, int delta);

  std::deque<Tx> queue_;  // arrival order
  std::unordered_map<std::string, Counts> keys_;
  Counts key_totals_;  // over all keys: what a whole-shard intent must wait for
  Counts shard_;       // whole-shard intents
};

}  // namespace peregrine
