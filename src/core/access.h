// AccessTracker: what a key's one byte of access data (Value::access())
// means, for OBJECT FREQ and OBJECT IDLETIME. The 32-byte table entry has no
// room for Redis's 24-bit LRU clock or LFU time-and-counter, so one byte
// carries either:
//
//   LFU mode (an allkeys-lfu / volatile-lfu policy): Redis's logarithmic
//     access counter, exactly (lfu-log-factor, new keys start at 5). Redis
//     decays it lazily from a per-key time; here a sweep over all keys takes
//     one off every counter per lfu-decay-time minutes (same rate, applied
//     at period boundaries rather than a whole period after each access).
//   LRU mode (every other policy): when the key was last accessed, as a stamp
//     of one of four clocks, finer for recent accesses:
//       codes   0..127  seconds clock mod 128   (idle < 64 s, exact)
//       codes 128..191  minutes clock mod 64    (idle < 48 min)
//       codes 192..223  hours clock mod 32      (idle < 24 h)
//       codes 224..255  days clock mod 32       (idle up to 30 days)
//     An access writes the current seconds stamp; the sweep moves a stamp to
//     the next coarser clock before it can wrap (to the unit holding the
//     start of its old unit). The idle time read is the time since the start
//     of the stamp's unit: exact on the seconds clock, overstated by less
//     than one unit on the others, and it never goes backwards. It stops
//     growing at 30 days.
//
// The sweep (Db::SweepAccess) must visit every key at least once a minute
// for the seconds stamps to stay right; the shard starts a pass every
// kSweepPeriodMs and gives a pass that runs late more time. (A stall of the
// whole shard for over a minute, e.g. DEBUG SLEEP 120, can still make keys
// touched just before it read as idle for less time than they were.)
//
// Switching between an LFU and a non-LFU policy resets every key's byte
// (counter 5, idle 0) in the next pass; until it has passed a key, FREQ or
// IDLETIME may read the other meaning (Redis warns the same in its errors).
//
// Owned by a shard and used by its databases from the shard's thread only.
#pragma once

#include <cstdint>

namespace peregrine {

class AccessTracker {
 public:
  enum class Mode : uint8_t { kLru, kLfu };
  // Redis's LFU_INIT_VAL: the counter of a new key.
  static constexpr uint8_t kLfuInitial = 5;
  // How often the shard starts a sweep pass over all keys.
  static constexpr int64_t kSweepPeriodMs = 10'000;
  // The largest idle time reported (30 days).
  static constexpr uint64_t kMaxIdleSeconds = 30 * 86400;

  AccessTracker() { RebuildSweptTable(); }

  // lfu-log-factor >= 0, lfu-decay-time in minutes (0: counters never
  // decay). A change of mode makes the next pass reset every key's byte
  // (reset_pending()); the owner should start one at once.
  void Configure(Mode mode, int64_t lfu_log_factor, int64_t lfu_decay_minutes);
  Mode mode() const { return mode_; }
  bool reset_pending() const { return reset_pending_; }
  // No key has a byte of the old meaning (the shard was empty at the
  // switch): no pass resets them, nor the keys made after it.
  void CancelReset() { reset_pending_ = false; }

  // The current time in ms of a monotonic clock (idle times are
  // differences, and must not jump with the wall clock); the cron calls
  // this every tick, before anything reads the clock.
  void Advance(int64_t now_ms);

  // The byte of a new key.
  uint8_t Initial() const { return mode_ == Mode::kLfu ? kLfuInitial : now_code_; }
  // The byte of a key after an access (LFU: Redis's probabilistic increment).
  uint8_t Touched(uint8_t a) {
    if (mode_ == Mode::kLru) return now_code_;
    return LfuIncrement(a);
  }

  // LRU mode: seconds since the key was last accessed.
  uint64_t IdleSeconds(uint8_t a) const;
  // LRU mode: the byte of a key last accessed `idle_s` seconds ago
  // (RESTORE ... IDLETIME, an RDB file's idle times); the idle time read
  // back is idle_s on the seconds clock, and at most one unit more on the
  // coarser ones. Capped at 30 days.
  uint8_t StampForIdle(uint64_t idle_s) const;
  // The byte of a key that arrives with an idle time or an LFU counter
  // (RESTORE's IDLETIME / FREQ, an RDB file's IDLE / FREQ; -1: not given):
  // each counts only in its own mode, as Redis's objectSetLRUOrLFU; else
  // `current`.
  uint8_t Restored(uint8_t current, int64_t idle_s, int64_t freq) const {
    if (freq >= 0 && mode_ == Mode::kLfu) return static_cast<uint8_t>(freq);
    if (idle_s >= 0 && mode_ == Mode::kLru) return StampForIdle(static_cast<uint64_t>(idle_s));
    return current;
  }
  // LFU mode: the counter (OBJECT FREQ).
  static uint8_t Frequency(uint8_t a) { return a; }

  // A sweep pass starts: fixes how much LFU counters decay during it (the
  // decay periods completed since the previous pass).
  void BeginPass(int64_t now_ms);
  // What the sweep makes of a key's byte (often the byte itself): a table
  // lookup, rebuilt when the pass starts and when the second changes.
  uint8_t Swept(uint8_t a) const { return swept_[a]; }

 private:
  uint8_t LfuIncrement(uint8_t counter);
  uint8_t ComputeSwept(uint8_t a) const;
  void RebuildSweptTable();
  uint64_t NextRandom() {
    // xorshift64*: the LFU increment's coin (Redis uses rand()).
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545F4914F6CDD1Dull;
  }

  Mode mode_ = Mode::kLru;
  int64_t log_factor_ = 10;
  int64_t decay_ms_ = 60'000;
  int64_t now_s_ = 0;
  uint8_t now_code_ = 0;     // the seconds stamp of now_s_
  int64_t decay_anchor_ms_ = -1;  // the last decay period boundary applied
  uint8_t pass_decay_ = 0;   // what the current pass takes off LFU counters
  bool reset_pending_ = false;  // the mode changed since the last pass began
  bool pass_resets_ = false;    // the current pass sets every key to Initial()
  uint8_t swept_[256] = {};     // ComputeSwept() of every byte
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace peregrine
