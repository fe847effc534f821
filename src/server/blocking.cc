// The registry of blocked clients per shard (blocking.h, docs/blocking.md).
#include "server/blocking.h"

#include <algorithm>

namespace peregrine {

std::vector<std::string_view> BlockedClient::Args() const {
  std::vector<std::string_view> args;
  args.reserve(arg_sizes.size());
  size_t offset = 0;
  for (uint32_t n : arg_sizes) {
    args.emplace_back(arg_bytes.data() + offset, n);
    offset += n;
  }
  return args;
}

void BlockingKeys::Add(const std::shared_ptr<BlockedClient>& w, size_t i) {
  BlockedClient::Key& k = w->keys[i];
  Map& m = dbs_[static_cast<size_t>(w->db)];
  auto it = m.find(std::string_view(k.key));
  if (it == m.end()) {
    it = m.emplace(k.key, Fifo()).first;
    keys_++;
  }
  it->second.push_back(w);
  k.where = std::prev(it->second.end());
  k.registered = true;
}

void BlockingKeys::Remove(BlockedClient& w, uint32_t shard) {
  Map& m = dbs_[static_cast<size_t>(w.db)];
  for (BlockedClient::Key& k : w.keys) {
    if (k.shard != shard || !k.registered) continue;
    auto it = m.find(std::string_view(k.key));
    k.registered = false;
    if (it == m.end()) continue;  // (cannot happen: registered means listed)
    it->second.erase(k.where);
    if (it->second.empty()) {
      m.erase(it);
      keys_--;
    }
  }
}

BlockingKeys::Fifo* BlockingKeys::Waiters(int db, std::string_view key) {
  Map& m = dbs_[static_cast<size_t>(db)];
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

bool BlockingKeys::Signal(int db, std::string_view key) {
  if (keys_ == 0 || Waiters(db, key) == nullptr) return false;
  for (size_t i = ready_head_; i < ready_.size(); i++)
    if (ready_[i].first == db && ready_[i].second == key) return false;
  ready_.emplace_back(db, std::string(key));
  return true;
}

bool BlockingKeys::SignalAll(int db) {
  bool any = false;
  for (const auto& [key, fifo] : dbs_[static_cast<size_t>(db)]) any |= Signal(db, key);
  return any;
}

bool BlockingKeys::PopReady(int* db, std::string* key) {
  if (ready_head_ == ready_.size()) return false;
  *db = ready_[ready_head_].first;
  *key = std::move(ready_[ready_head_].second);
  if (++ready_head_ == ready_.size()) {
    ready_.clear();
    ready_head_ = 0;
  }
  return true;
}

}  // namespace peregrine
