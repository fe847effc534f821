// CLIENT PAUSE and FAILOVER's pause (Redis 7's pauseActions): for a time,
// clients' write commands (and those that may replicate: EVAL, PUBLISH ...)
// or all their commands wait, not refused; replicas never do. Each purpose
// (the command, a failover) has its own end and kind; the pause in force is
// their union. Changed by any thread (under a mutex); read by every worker
// on each command through one atomic (active()).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace peregrine {

class ClientPause {
 public:
  enum Purpose : uint8_t { kByCommand, kForFailover, kForShutdown, kForSlotMigration, kPurposes };
  enum Actions : uint8_t { kNone = 0, kWrites = 1, kAll = 2 };

  // Whether any pause may be in force (the fast check before a command).
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // What is paused at `now_ms` (kAll, kWrites or kNone), and until when
  // (*until_ms: the earliest end among what is in force). A pause whose
  // time is up is over: once none is left, active() is false again.
  // *scoped (if given): whether every pause in force holds only the writes
  // of some slots (SlotPaused tells which).
  uint8_t Paused(int64_t now_ms, int64_t* until_ms = nullptr, bool* scoped = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    uint8_t actions = kNone;
    int64_t until = INT64_MAX;
    bool all_scoped = true;
    for (Entry& e : entries_) {
      if (e.actions != kNone && e.end_ms <= now_ms) {
        e = Entry{};
        generation_.fetch_add(1, std::memory_order_relaxed);
      }
      if (e.actions == kNone) continue;
      actions = actions > e.actions ? actions : e.actions;
      until = until < e.end_ms ? until : e.end_ms;
      all_scoped = all_scoped && !e.slots.empty();
    }
    if (actions == kNone) active_.store(false, std::memory_order_relaxed);
    if (until_ms != nullptr) *until_ms = until;
    if (scoped != nullptr) *scoped = actions != kNone && all_scoped;
    return actions;
  }
  // As Redis: the kind is replaced, the end only moves later. `slots`, if
  // not empty, scopes it to the writes of those slots (a bit per slot:
  // an atomic slot migration's handover, kWrites only); empty, it holds
  // every write (or every command).
  void Pause(Purpose p, int64_t end_ms, uint8_t actions, std::vector<bool> slots = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[p].actions = actions;
    entries_[p].slots = std::move(slots);
    if (entries_[p].end_ms < end_ms) entries_[p].end_ms = end_ms;
    active_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_relaxed);
  }
  // Whether a write to `slot` waits: some pause in force holds every write,
  // or its slots include this one.
  bool SlotPaused(uint32_t slot) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (e.actions == kNone) continue;
      if (e.slots.empty() || (slot < e.slots.size() && e.slots[slot])) return true;
    }
    return false;
  }
  void Unpause(Purpose p) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[p] = Entry{};
    bool any = false;
    for (const Entry& e : entries_) any = any || e.actions != kNone;
    active_.store(any, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_relaxed);
  }
  // Whether pause `p` is on (its end not passed yet counted as on).
  bool PausedFor(Purpose p) const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_[p].actions != kNone;
  }
  // Moves at every change (a worker holding clients looks at them again).
  uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    int64_t end_ms = 0;
    uint8_t actions = kNone;
    std::vector<bool> slots;  // (empty: not scoped)
  };
  mutable std::mutex mu_;
  Entry entries_[kPurposes];
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> generation_{0};
};

}  // namespace peregrine
