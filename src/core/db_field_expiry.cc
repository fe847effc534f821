// The database's work on containers between events (see db.h): hash field
// expiry (the timers of the hashes whose fields have deadlines, the active
// cycle over them, lazy expiry before a command touches a hash) and the
// moves of sorted sets' indexes.
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "core/db.h"

namespace peregrine {

void Db::NoteHashDeadline(std::string_view key, int64_t ms) {
  field_timers_.push_back(FieldTimer{ms, std::string(key)});
  std::push_heap(field_timers_.begin(), field_timers_.end());
  if (field_timers_.size() >= field_timers_compact_at_) CompactFieldTimers();
}

void Db::CompactFieldTimers() {
  // A timer is live when its key holds a hash whose bound is the timer's
  // time; of several live timers for one key, one is enough.
  std::vector<FieldTimer> live;
  for (FieldTimer& t : field_timers_) {
    const Entry* e = FindRaw(t.key);
    if (e != nullptr && e->value.is_hash() && e->value.hash().min_deadline() == t.ms) live.push_back(std::move(t));
  }
  std::sort(live.begin(), live.end(), [](const FieldTimer& a, const FieldTimer& b) {
    return a.key != b.key ? a.key < b.key : a.ms < b.ms;
  });
  live.erase(std::unique(live.begin(), live.end(),
                         [](const FieldTimer& a, const FieldTimer& b) { return a.key == b.key && a.ms == b.ms; }),
             live.end());
  std::make_heap(live.begin(), live.end());
  field_timers_ = std::move(live);
  field_timers_.shrink_to_fit();
  field_timers_compact_at_ = std::max<size_t>(1024, 2 * field_timers_.size());
}

size_t Db::ExpireHashFields(int64_t now_ms, size_t max_hashes) {
  const uint64_t before = expired_fields_;
  for (size_t n = 0; n < max_hashes && HashFieldsDue(now_ms); n++) {
    std::pop_heap(field_timers_.begin(), field_timers_.end());
    FieldTimer t = std::move(field_timers_.back());
    field_timers_.pop_back();
    Entry* e = FindRaw(t.key);
    // A stale timer: the hash went, or its bound moved (another timer has it).
    if (e == nullptr || !e->value.is_hash() || e->value.hash().min_deadline() != t.ms) continue;
    ExpireFieldsNow(e, t.key, now_ms);
  }
  return static_cast<size_t>(expired_fields_ - before);
}

Db::Entry* Db::ExpireFieldsNow(Entry* e, std::string_view key, int64_t now_ms) {
  HashObject& h = e->value.mutable_hash();
  std::vector<std::string> names;
  const size_t gone = h.ExpireFields(now_ms, report_removals_ && observer_ != nullptr ? &names : nullptr);
  if (!names.empty()) [[unlikely]]
    observer_->FieldsRemoved(*this, key, names, h.size() == 0);
  expired_fields_ += gone;
  if (gone > 0) NoteExpired();
  if (h.size() == 0) {
    // Redis deletes a hash whose last field expired.
    Erase(key);
    e = nullptr;
  } else if (h.min_deadline() != 0) {
    NoteHashDeadline(key, h.min_deadline());
  }
  if (gone > 0 && observer_ != nullptr && observer_->active()) [[unlikely]]
    observer_->KeyChanged(*this, key, now_ms);
  return e;
}

bool Db::StepZSetMoves(int64_t budget_us) {
  // Members moved between clock reads (50 us, or some 200 us while the
  // chunks of a new table are allocated).
  constexpr size_t kMembersPerCheck = 512;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(budget_us);
  while (!zset_moves_.empty()) {
    Entry* e = FindRaw(zset_moves_.back());
    if (e != nullptr && e->value.is_zset()) {
      while (e->value.mutable_zset().StepMove(kMembersPerCheck)) {
        if (Clock::now() >= deadline) return true;
      }
    }
    zset_moves_.pop_back();
  }
  return false;
}

}  // namespace peregrine
