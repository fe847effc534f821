// IntSet against std::set through adds, removes and widening.
#include "core/intset.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/memory.h"

namespace peregrine {
namespace {

void Check(const IntSet* s, const std::set<int64_t>& m) {
  ASSERT_EQ(s->size(), m.size());
  uint32_t i = 0;
  for (int64_t v : m) ASSERT_EQ(s->At(i++), v);
}

TEST(IntSet, AgreesWithAModel) {
  const int64_t before = KeyspaceBytes();
  std::mt19937_64 rng(9);
  IntSet* s = IntSet::Create();
  std::set<int64_t> m;
  for (int step = 0; step < 50000; ++step) {
    int64_t v;
    switch (rng() % 8) {
      case 0:
        v = static_cast<int64_t>(rng());  // 8 bytes
        break;
      case 1:
        v = static_cast<int32_t>(rng());  // 4 bytes
        break;
      default:
        v = static_cast<int64_t>(rng() % 600) - 300;
    }
    // Widening happens late so that the narrow widths are exercised too.
    if (step < 20000 && (v > 32767 || v < -32768)) v %= 30000;
    if (rng() % 3 != 0) {
      bool added;
      s = IntSet::Add(s, v, &added);
      ASSERT_EQ(added, m.insert(v).second);
    } else {
      bool removed;
      s = IntSet::Remove(s, v, &removed);
      ASSERT_EQ(removed, m.erase(v) == 1);
    }
    ASSERT_EQ(s->Contains(v), m.count(v) == 1);
    if (step % 1000 == 0) Check(s, m);
  }
  Check(s, m);
  EXPECT_EQ(s->width, 8);
  IntSet::Destroy(s);
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(IntSet, WideningPutsTheNewValueAtTheRightEnd) {
  IntSet* s = IntSet::Create();
  bool added;
  for (int64_t v : {5, -3, 100}) s = IntSet::Add(s, v, &added);
  EXPECT_EQ(s->width, 2);
  s = IntSet::Add(s, -100000, &added);
  EXPECT_EQ(s->width, 4);
  EXPECT_EQ(s->At(0), -100000);
  s = IntSet::Add(s, int64_t{1} << 40, &added);
  EXPECT_EQ(s->width, 8);
  EXPECT_EQ(s->At(4), int64_t{1} << 40);
  EXPECT_EQ(s->At(1), -3);
  EXPECT_TRUE(s->Contains(100));
  EXPECT_FALSE(s->Contains(101));
  IntSet::Destroy(s);
}

}  // namespace
}  // namespace peregrine
