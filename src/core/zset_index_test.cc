// ZIndex: a model check against std::unordered_map through inserts, score
// changes and removals across growth and shrinking, with real hashes and
// with hashes forced to share a few fragments (long probe runs, candidates
// that the confirmation must turn down).
#include "core/zset_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/memory.h"
#include "core/packed.h"

namespace peregrine {
namespace {

void RunModel(bool few_fragments, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  const int64_t before = KeyspaceBytes();
  {
    ZIndex index;
    std::unordered_map<std::string, double> m;
    auto hash = [&](const std::string& s) {
      const uint64_t h = packed::Hash(s);
      // Few fragments, all homed at the table's last slots: runs wrap.
      return few_fragments ? (0xFFFFFFF0u | (h % 16)) << 32 | (h & 0xFFFFFFFF) : h;
    };
    // What the tree would answer: is (score, member) in the set?
    auto confirm = [&](const std::string& member) {
      return [&m, member](double score) {
        auto it = m.find(member);
        return it != m.end() && it->second == score;
      };
    };
    size_t max_size = 0;
    for (int step = 0; step < steps; ++step) {
      const bool grow = (step / (steps / 4)) % 2 == 0;
      const std::string member = "m" + std::to_string(rng() % 20000);
      const double score = static_cast<double>(rng() % 8);  // scores shared by many members
      const int op = static_cast<int>(rng() % 100);
      double got;
      const bool present = m.count(member) > 0;
      ASSERT_EQ(index.Find(hash(member), confirm(member), &got), present);
      if (present) {
        ASSERT_EQ(got, m[member]);
      }
      if (op < (grow ? 60 : 25)) {
        if (!present) {
          index.Insert(hash(member), score);
          m[member] = score;
        } else {
          // The confirmation asks for the old score (the model changes after).
          const double old = m[member];
          ASSERT_TRUE(index.Update(hash(member), [&](double s) { return s == old; }, score));
          m[member] = score;
        }
      } else if (present) {
        ASSERT_TRUE(index.Erase(hash(member), confirm(member)));
        m.erase(member);
        ASSERT_FALSE(index.Erase(hash(member), confirm(member)));
      }
      ASSERT_EQ(index.size(), m.size());
      max_size = std::max(max_size, m.size());
      if (step % 4999 == 0) {
        ASSERT_TRUE(index.Validate());
      }
    }
    ASSERT_TRUE(index.Validate());
    EXPECT_GT(max_size, 2000u);  // grown well past the first sizes
    ZIndex copy = index.Clone();
    for (const auto& [member, score] : m) {
      double got;
      ASSERT_TRUE(copy.Find(hash(member), confirm(member), &got));
      EXPECT_EQ(got, score);
    }
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(ZIndex, AgreesWithAModel) { RunModel(false, 1, 200000); }
TEST(ZIndex, AgreesWithAModelWhenFragmentsCollide) { RunModel(true, 2, 20000); }

TEST(ZIndex, LoadStaysBetweenBounds) {
  ZIndex index;
  for (uint64_t i = 0; i < 100000; ++i) index.Insert(packed::Hash(std::to_string(i)), 1.0);
  EXPECT_LE(index.size() * 5, index.capacity() * 4);
  EXPECT_GE(index.size() * 2, index.capacity());  // grown by half: at least 53% full
  for (uint64_t i = 0; i < 99000; ++i) {
    const std::string s = std::to_string(i);
    ASSERT_TRUE(index.Erase(packed::Hash(s), [](double) { return true; }));
  }
  EXPECT_TRUE(index.Validate());
  EXPECT_LE(index.capacity(), index.size() * 5 * 2);
}

}  // namespace
}  // namespace peregrine
