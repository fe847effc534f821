// Unit tests for AccessTracker: idle-time stamps on their four clocks (exact
// when recent, never going backwards, within one unit, capped at 30 days),
// Redis's LFU counter growth and its decay by sweep passes.
#include "core/access.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace peregrine {
namespace {

using Mode = AccessTracker::Mode;

// A tracker in LFU mode whose first pass (which resets every byte after the
// switch from the default LRU mode) has run at `start_ms`.
AccessTracker Lfu(int64_t factor, int64_t decay_minutes, int64_t start_ms) {
  AccessTracker t;
  t.Configure(Mode::kLfu, factor, decay_minutes);
  t.BeginPass(start_ms);
  EXPECT_EQ(t.Swept(77), AccessTracker::kLfuInitial);
  return t;
}

constexpr int64_t kStart = 1'700'000'123'456;  // an arbitrary unix time in ms

AccessTracker Lru(int64_t now_ms) {
  AccessTracker t;
  t.Configure(Mode::kLru, 10, 1);
  t.Advance(now_ms);
  return t;
}

TEST(AccessTrackerTest, RecentIdleTimesAreExactWithoutASweep) {
  AccessTracker t = Lru(kStart);
  const uint8_t a = t.Initial();
  for (int64_t s = 0; s < 64; s++) {
    t.Advance(kStart + s * 1000);
    EXPECT_EQ(t.IdleSeconds(a), static_cast<uint64_t>(s));
    EXPECT_EQ(t.Swept(a), a) << "a stamp under 64 s old stays on the seconds clock";
  }
  EXPECT_EQ(t.IdleSeconds(t.Touched(a)), 0u);
}

// A key left alone for 40 days, swept every `period` seconds: IDLETIME never
// decreases, is within one unit of its clock of the truth, and stops at 30 days.
void IdleForFortyDays(int64_t period_s) {
  SCOPED_TRACE("sweep every " + std::to_string(period_s) + " s");
  AccessTracker t = Lru(kStart);
  uint8_t a = t.Initial();
  uint64_t last = 0;
  for (int64_t s = 0; s <= 40 * 86400; s += period_s) {
    t.Advance(kStart + s * 1000);
    t.BeginPass(kStart + s * 1000);
    a = t.Swept(a);
    const uint64_t idle = t.IdleSeconds(a);
    ASSERT_GE(idle, last) << "at " << s;
    last = idle;
    // Exact while on the seconds clock, then over by less than one unit of
    // the clock the stamp is on (it moves on a unit early at worst).
    const uint64_t truth = static_cast<uint64_t>(s);
    const uint64_t slack = truth < 64 ? 0 : truth < 47 * 60 ? 59 : truth < 23 * 3600 ? 3599 : 86399;
    if (truth <= AccessTracker::kMaxIdleSeconds) {
      ASSERT_GE(idle, truth) << "at " << s;
      ASSERT_LE(idle, truth + slack) << "at " << s;
    }
  }
  EXPECT_EQ(last, AccessTracker::kMaxIdleSeconds);
}

TEST(AccessTrackerTest, LongIdleTimesMoveToCoarserClocks) {
  IdleForFortyDays(30);
  IdleForFortyDays(10);
  IdleForFortyDays(59);
}

TEST(AccessTrackerTest, TouchAfterLongIdleStartsOver) {
  AccessTracker t = Lru(kStart);
  uint8_t a = t.Initial();
  for (int64_t s = 0; s <= 5 * 86400; s += 10) {
    t.Advance(kStart + s * 1000);
    a = t.Swept(a);
  }
  EXPECT_GE(t.IdleSeconds(a), 4u * 86400);
  a = t.Touched(a);
  EXPECT_EQ(t.IdleSeconds(a), 0u);
  t.Advance(kStart + 5 * 86400 * 1000LL + 7000);
  EXPECT_EQ(t.IdleSeconds(a), 7u);
}

// RESTORE ... IDLETIME: a stamp placed for a given idle time reads back as
// that time (within one unit of its clock), and ages as a touched key does.
TEST(AccessTrackerTest, StampForIdleReadsBackTheIdleTime) {
  AccessTracker t = Lru(kStart);
  for (uint64_t idle : {0ull, 1ull, 63ull, 64ull, 3000ull, 7200ull, 90000ull, 29ull * 86400, 90ull * 86400}) {
    const uint64_t want = std::min<uint64_t>(idle, AccessTracker::kMaxIdleSeconds);
    const uint64_t got = t.IdleSeconds(t.StampForIdle(idle));
    const uint64_t slack = want < 64 ? 0 : want < 48 * 60 ? 59 : want < 24 * 3600 ? 3599 : 86399;
    EXPECT_GE(got, want) << idle;
    EXPECT_LE(got, want + slack) << idle;
  }
  const uint8_t a = t.StampForIdle(10);
  t.Advance(kStart + 5000);
  EXPECT_EQ(t.IdleSeconds(a), 15u);
}

// The monotonic clock starts near zero on a machine booted moments ago: an
// idle time longer than the uptime still reads back (the clocks do not
// count from before their zero).
TEST(AccessTrackerTest, StampForIdleLongerThanTheUptime) {
  for (int64_t now_ms : {int64_t{0}, int64_t{787'000}}) {
    AccessTracker t = Lru(now_ms);
    for (uint64_t idle : {uint64_t{1000}, uint64_t{7200}, uint64_t{29} * 86400, AccessTracker::kMaxIdleSeconds}) {
      const uint64_t got = t.IdleSeconds(t.StampForIdle(idle));
      const uint64_t slack = idle < 48 * 60 ? 59 : idle < 24 * 3600 ? 3599 : 86399;
      EXPECT_GE(got, idle) << now_ms << " " << idle;
      EXPECT_LE(got, idle + slack) << now_ms << " " << idle;
    }
  }
}

TEST(AccessTrackerTest, LfuCounterStartsAtFiveAndGrowsLogarithmically) {
  AccessTracker t;
  t.Configure(Mode::kLfu, 10, 1);
  t.Advance(kStart);
  EXPECT_EQ(t.Initial(), AccessTracker::kLfuInitial);
  // Below the initial value every access counts.
  EXPECT_EQ(t.Touched(0), 1);
  EXPECT_EQ(t.Touched(4), 5);
  // Redis's table for lfu-log-factor 10 (redis.conf): 100 hits -> 10,
  // 1K -> 18, 100K -> 142, 1M -> 255. The expected counter after n hits
  // solves 5b^2 + 6b = n (b = counter - 5): 8.9, 18.6, 145.8; averaged over
  // 20 keys the spread is about +-2.
  auto mean_after = [&](int hits) {
    double sum = 0;
    for (int k = 0; k < 20; k++) {
      uint8_t c = t.Initial();
      for (int i = 0; i < hits; i++) c = t.Touched(c);
      sum += c;
    }
    return sum / 20;
  };
  EXPECT_NEAR(mean_after(100), 8.9, 1.5);
  EXPECT_NEAR(mean_after(1000), 18.6, 2);
  EXPECT_NEAR(mean_after(100'000), 145.8, 6);
  uint8_t c = t.Initial();
  for (int i = 0; i < 1'000'000; i++) c = t.Touched(c);
  EXPECT_EQ(c, 255);
  EXPECT_EQ(t.Touched(255), 255) << "saturates";
}

TEST(AccessTrackerTest, LfuFactorZeroCountsEveryAccess) {
  AccessTracker t;
  t.Configure(Mode::kLfu, 0, 1);
  uint8_t c = t.Initial();
  for (int i = 0; i < 100; i++) c = t.Touched(c);
  EXPECT_EQ(c, 105);
  // A huge factor: the counter practically stops at the initial value.
  t.Configure(Mode::kLfu, 2'147'483'647, 1);
  c = 6;
  for (int i = 0; i < 100'000; i++) c = t.Touched(c);
  EXPECT_EQ(c, 6);
}

TEST(AccessTrackerTest, LfuDecaysOnePerPeriodAcrossPasses) {
  AccessTracker t = Lfu(10, 2, kStart);  // one off every 2 minutes
  t.BeginPass(kStart + 1000);
  EXPECT_EQ(t.Swept(100), 100);
  // Passes every 10 s for 10 minutes: 5 periods, 5 off in all.
  uint8_t c = 100;
  for (int64_t s = 10; s <= 600; s += 10) {
    t.BeginPass(kStart + s * 1000);
    c = t.Swept(c);
  }
  EXPECT_EQ(c, 95);
  // A long gap between passes takes off every period in it, down to 0.
  t.BeginPass(kStart + 600'000 + 7 * 120'000 + 5'000);
  EXPECT_EQ(t.Swept(c), 88);
  EXPECT_EQ(t.Swept(3), 0);
}

TEST(AccessTrackerTest, LfuDecayTimeZeroNeverDecays) {
  AccessTracker t = Lfu(10, 0, kStart);
  t.BeginPass(kStart + 86'400'000);
  EXPECT_EQ(t.Swept(42), 42);
}

TEST(AccessTrackerTest, SwitchingPoliciesResetsTheBytesInTheNextPass) {
  AccessTracker t = Lfu(10, 1, kStart);
  EXPECT_FALSE(t.reset_pending());
  t.BeginPass(kStart + 500);
  t.Advance(kStart);
  EXPECT_EQ(t.Swept(200), 200);
  t.Configure(Mode::kLru, 10, 1);
  EXPECT_TRUE(t.reset_pending());
  t.BeginPass(kStart + 1000);
  EXPECT_EQ(t.IdleSeconds(t.Swept(200)), 0u) << "a counter of 200 is not a stamp: idle starts over";
  t.BeginPass(kStart + 2000);
  const uint8_t fresh = t.Touched(0);
  EXPECT_EQ(t.Swept(fresh), fresh) << "only the first pass after the switch resets";
  // Back to LFU after an hour: counters start at 5, and the hour spent
  // under LRU is not decay time.
  t.Configure(Mode::kLfu, 10, 1);
  t.BeginPass(kStart + 3'600'000);
  EXPECT_EQ(t.Swept(50), AccessTracker::kLfuInitial);
  t.BeginPass(kStart + 3'600'000 + 1000);
  EXPECT_EQ(t.Swept(50), 50);
  t.BeginPass(kStart + 3'600'000 + 61'000);
  EXPECT_EQ(t.Swept(50), 49);
}

TEST(AccessTrackerTest, ChangingTheDecayTimeStartsCountingAfresh) {
  AccessTracker t = Lfu(10, 60, kStart);  // one off per hour
  t.BeginPass(kStart + 59 * 60'000);
  EXPECT_EQ(t.Swept(200), 200);
  // To one minute: the 59 minutes since the last hourly boundary are not
  // 59 one-minute periods.
  t.Configure(Mode::kLfu, 10, 1);
  t.BeginPass(kStart + 59 * 60'000 + 10'000);
  EXPECT_EQ(t.Swept(200), 200);
  t.BeginPass(kStart + 60 * 60'000 + 10'000);
  EXPECT_EQ(t.Swept(200), 199);
  // Setting the same value again changes nothing.
  t.Configure(Mode::kLfu, 10, 1);
  t.BeginPass(kStart + 61 * 60'000 + 10'000);
  EXPECT_EQ(t.Swept(200), 199);
}

}  // namespace
}  // namespace peregrine
