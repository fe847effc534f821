// ClientPause: the kind in force is the strongest of the purposes' whose
// time is not up, a later pause only extends the end, and a pause that ran
// out leaves active() false (so that commands stop asking).
#include "server/client_pause.h"

#include <gtest/gtest.h>

namespace peregrine {
namespace {

TEST(ClientPause, KindsEndsAndPurposes) {
  ClientPause p;
  EXPECT_FALSE(p.active());
  EXPECT_EQ(p.Paused(1000), ClientPause::kNone);
  const uint64_t g0 = p.generation();
  p.Pause(ClientPause::kByCommand, 2000, ClientPause::kWrites);
  EXPECT_TRUE(p.active());
  EXPECT_NE(p.generation(), g0);
  int64_t until = 0;
  EXPECT_EQ(p.Paused(1000, &until), ClientPause::kWrites);
  EXPECT_EQ(until, 2000);
  // A later pause replaces the kind and only extends the end.
  p.Pause(ClientPause::kByCommand, 1500, ClientPause::kAll);
  EXPECT_EQ(p.Paused(1000, &until), ClientPause::kAll);
  EXPECT_EQ(until, 2000);
  // Another purpose: the union, the earliest end.
  p.Pause(ClientPause::kForFailover, INT64_MAX, ClientPause::kWrites);
  EXPECT_EQ(p.Paused(1999, &until), ClientPause::kAll);
  EXPECT_EQ(until, 2000);
  // The command's pause runs out: the failover's is left.
  const uint64_t g1 = p.generation();
  EXPECT_EQ(p.Paused(2000, &until), ClientPause::kWrites);
  EXPECT_EQ(until, INT64_MAX);
  EXPECT_NE(p.generation(), g1);
  EXPECT_TRUE(p.active());
  p.Unpause(ClientPause::kForFailover);
  EXPECT_FALSE(p.active());
  EXPECT_EQ(p.Paused(2000), ClientPause::kNone);
}

TEST(ClientPause, APauseThatRanOutIsNoLongerActive) {
  ClientPause p;
  p.Pause(ClientPause::kByCommand, 100, ClientPause::kAll);
  EXPECT_TRUE(p.active());
  EXPECT_EQ(p.Paused(99), ClientPause::kAll);
  EXPECT_EQ(p.Paused(100), ClientPause::kNone);
  EXPECT_FALSE(p.active());
  // (Ran out: a new one starts from nothing, not from the old end.)
  p.Pause(ClientPause::kByCommand, 50, ClientPause::kWrites);
  EXPECT_EQ(p.Paused(10), ClientPause::kWrites);
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

TEST(ClientPause, ASlotScopedPauseHoldsOnlyItsSlotsWrites) {
  ClientPause p;
  std::vector<bool> slots(16384, false);
  slots[7] = true;
  p.Pause(ClientPause::kForSlotMigration, INT64_MAX, ClientPause::kWrites, slots);
  bool scoped = false;
  EXPECT_EQ(p.Paused(1000, nullptr, &scoped), ClientPause::kWrites);
  EXPECT_TRUE(scoped);
  EXPECT_TRUE(p.SlotPaused(7));
  EXPECT_FALSE(p.SlotPaused(8));
  // A pause of every write beside it: no longer scoped, every slot held.
  p.Pause(ClientPause::kByCommand, 2000, ClientPause::kWrites);
  EXPECT_EQ(p.Paused(1000, nullptr, &scoped), ClientPause::kWrites);
  EXPECT_FALSE(scoped);
  EXPECT_TRUE(p.SlotPaused(8));
  // It runs out: scoped again.
  EXPECT_EQ(p.Paused(2000, nullptr, &scoped), ClientPause::kWrites);
  EXPECT_TRUE(scoped);
  EXPECT_FALSE(p.SlotPaused(8));
  // Re-paused with other slots: the new ones replace the old.
  std::vector<bool> other(16384, false);
  other[9] = true;
  p.Pause(ClientPause::kForSlotMigration, INT64_MAX, ClientPause::kWrites, other);
  EXPECT_FALSE(p.SlotPaused(7));
  EXPECT_TRUE(p.SlotPaused(9));
  p.Unpause(ClientPause::kForSlotMigration);
  EXPECT_EQ(p.Paused(2000, nullptr, &scoped), ClientPause::kNone);
  EXPECT_FALSE(scoped);
  EXPECT_FALSE(p.SlotPaused(9));
}

}  // namespace
}  // namespace peregrine
