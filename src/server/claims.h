// The order of write groups over several shards (docs/transactions.md,
// "Writes side by side"). A client's pipelined commands over several
// workers' shards, writes among them, run as one part per worker at once; so
// that no observer can see one part's effect and then another part's shard
// without it, every such group takes a ticket on each of its shards before
// any part runs, all under one lock, so that every shard sees the groups in
// the same order. A shard runs the parts in ticket order, and anything else
// that reads or writes it (its own clients' commands, other workers' relays)
// first waits for the tickets taken before it looked (BatchRelay).
//
// A shard that is lent or held for a command over several shards, or is
// about to be, is closed: no group may take a ticket on it (the group then
// runs as a relay, one shard after another), and it is lent only once every
// ticket taken on it has run. So a command that holds several shards sees
// each group whole or not at all.
//
// Shared by every worker: Register and SetClosed under the lock;
// registered() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

namespace peregrine {

class ClaimBoard {
 public:
  explicit ClaimBoard(uint32_t nshards) : slots_(std::make_unique<Slot[]>(nshards)), nshards_(nshards) {}

  // One ticket on each of `shards` (distinct indexes) into tickets[i]; false,
  // taking none, if one of them is closed.
  bool Register(std::span<const uint32_t> shards, uint64_t* tickets);
  // Closes or opens a shard to registrations (its own worker's thread).
  // Closing takes the lock: once it returns, no registration that missed
  // it can still take a ticket there, so the tickets to wait for before
  // lending are all counted in registered(). Opening need not (a
  // registration that still finds it closed runs as a relay).
  void SetClosed(uint32_t shard, bool closed);
  // The last ticket taken on the shard (tickets start at 1). Taken before
  // the shard's worker acts on what it read: every group registered before
  // this load is at or below it.
  uint64_t registered(uint32_t shard) const { return slots_[shard].registered.load(std::memory_order_acquire); }
  const std::atomic<uint64_t>& registered_ref(uint32_t shard) const { return slots_[shard].registered; }
  uint32_t nshards() const { return nshards_; }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> registered{0};
    std::atomic<bool> closed{false};  // set under mu_, cleared without it
  };
  std::mutex mu_;
  std::unique_ptr<Slot[]> slots_;
  const uint32_t nshards_;
};

}  // namespace peregrine
