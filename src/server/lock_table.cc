// LockTable (see lock_table.h).
#include "server/lock_table.h"

#include <algorithm>
#include <cstring>

namespace peregrine {

std::string LockTable::LockKey(int db, std::string_view key) {
  std::string k(sizeof(db) + key.size(), '\0');
  std::memcpy(k.data(), &db, sizeof(db));
  if (!key.empty()) std::memcpy(k.data() + sizeof(db), key.data(), key.size());
  return k;
}

bool LockTable::Conflicts(const std::string& key, Mode mode) const {
  if (shard_.exclusive > 0 || (mode == Mode::kExclusive && shard_.shared > 0)) return true;
  auto it = keys_.find(key);
  if (it == keys_.end()) return false;
  return it->second.exclusive > 0 || (mode == Mode::kExclusive && it->second.shared > 0);
}

bool LockTable::ShardConflicts(Mode mode) const {
  if (shard_.exclusive > 0 || key_totals_.exclusive > 0) return true;
  return mode == Mode::kExclusive && (shard_.shared > 0 || key_totals_.shared > 0);
}

void LockTable::Count(const Tx& tx, int delta) {
  auto bump = [delta](Counts& c, Mode m) {
    uint32_t& n = m == Mode::kShared ? c.shared : c.exclusive;
    n = static_cast<uint32_t>(static_cast<int64_t>(n) + delta);
  };
  if (tx.whole_shard) bump(shard_, tx.shard_mode);
  for (const auto& [key, mode] : tx.keys) {
    Counts& c = keys_[key];
    bump(c, mode);
    bump(key_totals_, mode);
    if (c.shared == 0 && c.exclusive == 0) keys_.erase(key);
  }
}

bool LockTable::Acquire(TxId tx, std::span<const Intent> intents) {
  Tx t{tx, false, false, Mode::kShared, {}};
  t.keys.reserve(intents.size());
  bool free = true;
  for (const Intent& in : intents) {
    std::string k = LockKey(in.db, in.key);
    // A key named twice by one transaction: the stronger mode, once.
    auto same = std::find_if(t.keys.begin(), t.keys.end(), [&](const auto& p) { return p.first == k; });
    if (same != t.keys.end()) {
      if (in.mode == Mode::kExclusive) same->second = Mode::kExclusive;
      continue;
    }
    t.keys.emplace_back(std::move(k), in.mode);
  }
  for (const auto& [k, mode] : t.keys) free = free && !Conflicts(k, mode);
  t.holds = free;
  Count(t, +1);
  queue_.push_back(std::move(t));
  return free;
}

bool LockTable::AcquireShard(TxId tx, Mode mode) {
  Tx t{tx, !ShardConflicts(mode), true, mode, {}};
  Count(t, +1);
  queue_.push_back(std::move(t));
  return queue_.back().holds;
}

std::vector<LockTable::TxId> LockTable::Release(TxId tx) {
  std::vector<TxId> granted;
  auto it = std::find_if(queue_.begin(), queue_.end(), [tx](const Tx& t) { return t.id == tx; });
  if (it == queue_.end()) return granted;
  Count(*it, -1);
  queue_.erase(it);
  // A waiting transaction holds its locks once everything queued before it
  // has finished: when it is the oldest.
  if (!queue_.empty() && !queue_.front().holds) {
    queue_.front().holds = true;
    granted.push_back(queue_.front().id);
  }
  return granted;
}

bool LockTable::CanRunNow(std::span<const Intent> intents) const {
  if (queue_.empty()) return true;
  for (const Intent& in : intents)
    if (Conflicts(LockKey(in.db, in.key), in.mode)) return false;
  return true;
}

bool LockTable::Holds(TxId tx) const {
  auto it = std::find_if(queue_.begin(), queue_.end(), [tx](const Tx& t) { return t.id == tx; });
  return it != queue_.end() && it->holds;
}

}  // namespace peregrine
