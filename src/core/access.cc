// AccessTracker: LFU counters and idle-time stamps in one byte (see access.h).
#include "core/access.h"

#include <algorithm>

namespace peregrine {
namespace {

// The LRU stamp clocks, finest first: codes [base, base + mod) hold the
// clock's value mod `mod`; a stamp `convert_at` units old moves on.
struct Clock {
  uint8_t base;
  uint8_t mod;
  uint32_t unit_s;
  uint32_t convert_at;
};
constexpr Clock kClocks[] = {
    {0, 128, 1, 64},
    {128, 64, 60, 48},
    {192, 32, 3600, 24},
    {224, 32, 86400, 30},  // the last: pinned at 30 days
};
constexpr int kLastClock = 3;

int ClockOf(uint8_t a) { return a < 128 ? 0 : a < 192 ? 1 : a < 224 ? 2 : 3; }

uint64_t ClockNow(const Clock& c, int64_t now_s) { return static_cast<uint64_t>(now_s) / c.unit_s; }

// Units of clock c between the stamp in `a` and now.
uint64_t AgeUnits(const Clock& c, uint8_t a, int64_t now_s) {
  return (ClockNow(c, now_s) - (a - c.base)) % c.mod;
}

// The stamp of clock c for the unit holding time `at_s`.
uint8_t StampAt(const Clock& c, int64_t at_s) {
  return static_cast<uint8_t>(c.base + ClockNow(c, at_s) % c.mod);
}

// Seconds from the start of the stamp's unit to now: the idle time, exact on
// the seconds clock and overstated by less than one unit on the others.
uint64_t Idle(uint8_t a, int64_t now_s) {
  const Clock& c = kClocks[ClockOf(a)];
  return AgeUnits(c, a, now_s) * c.unit_s + static_cast<uint64_t>(now_s) % c.unit_s;
}

}  // namespace

void AccessTracker::Configure(Mode mode, int64_t lfu_log_factor, int64_t lfu_decay_minutes) {
  const int64_t decay_ms = std::max<int64_t>(0, lfu_decay_minutes) * 60'000;
  // Decay periods are counted from the next pass on: a new period length
  // must not turn the time since the last boundary into many short periods.
  if (mode != mode_ || decay_ms != decay_ms_) decay_anchor_ms_ = -1;
  // The byte means something else now: the next pass starts every key over
  // (counter 5, or idle 0) rather than reading one meaning as the other.
  if (mode != mode_) reset_pending_ = true;
  mode_ = mode;
  log_factor_ = std::max<int64_t>(0, lfu_log_factor);
  decay_ms_ = decay_ms;
  RebuildSweptTable();
}

// The clocks count from this many seconds before the monotonic clock's zero
// (a whole number of days: every clock's units stay aligned), so that a
// stamp placed up to kMaxIdleSeconds in the past (RESTORE ... IDLETIME) is
// never before zero, even on a machine booted moments ago.
constexpr int64_t kClockOriginS = 32 * 86400;
static_assert(kClockOriginS >= static_cast<int64_t>(AccessTracker::kMaxIdleSeconds) && kClockOriginS % 86400 == 0);

void AccessTracker::Advance(int64_t now_ms) {
  const int64_t now_s = now_ms / 1000 + kClockOriginS;
  if (now_s == now_s_) return;
  now_s_ = now_s;
  now_code_ = StampAt(kClocks[0], now_s_);
  RebuildSweptTable();
}

void AccessTracker::RebuildSweptTable() {
  for (int a = 0; a < 256; a++) swept_[a] = ComputeSwept(static_cast<uint8_t>(a));
}

uint64_t AccessTracker::IdleSeconds(uint8_t a) const { return std::min(Idle(a, now_s_), kMaxIdleSeconds); }

uint8_t AccessTracker::StampForIdle(uint64_t idle_s) const {
  idle_s = std::min(idle_s, kMaxIdleSeconds);
  const int64_t at_s = now_s_ - static_cast<int64_t>(idle_s);
  for (int t = 0; t < kLastClock; t++) {
    const Clock& c = kClocks[t];
    // The stamp's age in units once placed, which must stay below the
    // point where the sweep would move it on.
    if (ClockNow(c, now_s_) - ClockNow(c, at_s) < c.convert_at) return StampAt(c, at_s);
  }
  return StampAt(kClocks[kLastClock], at_s);
}

void AccessTracker::BeginPass(int64_t now_ms) {
  pass_decay_ = 0;
  pass_resets_ = reset_pending_;
  reset_pending_ = false;
  if (mode_ != Mode::kLfu || decay_ms_ == 0 || decay_anchor_ms_ < 0) {
    decay_anchor_ms_ = now_ms;
  } else if (const int64_t periods = (now_ms - decay_anchor_ms_) / decay_ms_; periods > 0) {
    decay_anchor_ms_ += periods * decay_ms_;
    pass_decay_ = static_cast<uint8_t>(std::min<int64_t>(periods, 255));
  }
  RebuildSweptTable();
}

uint8_t AccessTracker::ComputeSwept(uint8_t a) const {
  if (pass_resets_) return Initial();
  if (mode_ == Mode::kLfu) return a > pass_decay_ ? static_cast<uint8_t>(a - pass_decay_) : 0;
  const int t = ClockOf(a);
  const Clock& c = kClocks[t];
  const uint64_t age = AgeUnits(c, a, now_s_);
  if (age < c.convert_at) return a;
  if (t == kLastClock) return static_cast<uint8_t>(c.base + (ClockNow(c, now_s_) - c.convert_at) % c.mod);
  // Onto the next clock: the unit holding the start of the current stamp's
  // unit, so that the idle time read never shrinks.
  const int64_t since = now_s_ - static_cast<int64_t>(Idle(a, now_s_));
  return StampAt(kClocks[t + 1], since);
}

uint8_t AccessTracker::LfuIncrement(uint8_t counter) {
  if (counter == 255) return counter;
  // Redis: incremented with probability 1 / ((counter - 5) * factor + 1).
  const int64_t base = std::max(0, counter - kLfuInitial);
  const uint64_t d = static_cast<uint64_t>(base * log_factor_) + 1;
  if (d == 1) return static_cast<uint8_t>(counter + 1);
  if (d > (uint64_t{1} << 32)) return counter;
  const uint64_t r = NextRandom() >> 32;  // uniform in [0, 2^32)
  return r * d < (uint64_t{1} << 32) ? static_cast<uint8_t>(counter + 1) : counter;
}

}  // namespace peregrine
