// Unit tests for Db's per-slot key counts (CountSlots, KeysInSlot: Redis
// Cluster's COUNTKEYSINSLOT): every way a key comes or goes keeps them, and
// a table turned on with keys in it counts those.
#include <gtest/gtest.h>

#include <string>

#include "core/db.h"
#include "core/slot.h"

namespace peregrine {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

Value V() { return Value::String(std::string_view("v")); }

TEST(DbSlotCounts, InsertsRemovalsExpiryAndClear) {
  Db db;
  db.Insert("before", V());
  EXPECT_EQ(db.KeysInSlot(SlotOf("before")), 0u);  // (not counting yet)
  db.CountSlots();
  EXPECT_EQ(db.KeysInSlot(SlotOf("before")), 1u);
  // Keys of one slot (a hash tag) and of another.
  for (int i = 0; i < 100; i++) db.Insert("{t}" + std::to_string(i), V());
  db.Insert("{u}x", V(), kNow + 10);
  const uint32_t t = SlotOf("{t}"), u = SlotOf("{u}");
  EXPECT_EQ(db.KeysInSlot(t), 100u);
  EXPECT_EQ(db.KeysInSlot(u), 1u);
  EXPECT_TRUE(db.Erase("{t}7"));
  EXPECT_FALSE(db.Erase("{t}7"));
  EXPECT_EQ(db.KeysInSlot(t), 99u);
  // An expired key counts until it is removed (as Redis's), then not.
  EXPECT_EQ(db.KeysInSlot(u), 1u);
  EXPECT_EQ(db.Find("{u}x", kNow + 20), nullptr);
  EXPECT_EQ(db.KeysInSlot(u), 0u);
  // Growth (many keys, splits) keeps them.
  for (int i = 100; i < 20000; i++) db.Insert("{t}" + std::to_string(i), V());
  EXPECT_EQ(db.KeysInSlot(t), 19999u);
  uint64_t total = 0;
  for (uint32_t s = 0; s < kNumSlots; s++) total += db.KeysInSlot(s);
  EXPECT_EQ(total, db.size());
  db.Clear();
  EXPECT_TRUE(db.counts_slots());
  EXPECT_EQ(db.KeysInSlot(t), 0u);
  EXPECT_EQ(db.KeysInSlot(SlotOf("before")), 0u);
}

TEST(DbSlotCounts, SwapCountsWhatEachTableNowHolds) {
  Db live, staged;
  live.CountSlots();
  live.Insert("{a}1", V());
  staged.Insert("{b}1", V());
  staged.Insert("{b}2", V());
  live.Swap(staged);
  EXPECT_TRUE(live.counts_slots());
  EXPECT_FALSE(staged.counts_slots());
  EXPECT_EQ(live.KeysInSlot(SlotOf("{b}")), 2u);
  EXPECT_EQ(live.KeysInSlot(SlotOf("{a}")), 0u);
}

}  // namespace
}  // namespace peregrine
