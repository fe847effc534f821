// ClaimBoard: tickets of write groups (see claims.h).
#include "server/claims.h"

namespace peregrine {

bool ClaimBoard::Register(std::span<const uint32_t> shards, uint64_t* tickets) {
  // One lock for all shards (rather than one per shard, taken in order):
  // a group holds it for a few loads and stores, and the order it gives is
  // the same on every shard by construction.
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t s : shards)
    if (slots_[s].closed.load(std::memory_order_relaxed)) return false;
  for (size_t i = 0; i < shards.size(); i++) {
    std::atomic<uint64_t>& r = slots_[shards[i]].registered;
    tickets[i] = r.load(std::memory_order_relaxed) + 1;
    r.store(tickets[i], std::memory_order_release);
  }
  return true;
}

void ClaimBoard::SetClosed(uint32_t shard, bool closed) {
  if (!closed) {
    slots_[shard].closed.store(false, std::memory_order_relaxed);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  slots_[shard].closed.store(true, std::memory_order_relaxed);
}

}  // namespace peregrine
