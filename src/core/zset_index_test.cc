// ZIndex: a model check against std::unordered_map through inserts, score
// changes and removals across growth and shrinking, with real hashes and
// with hashes forced to share a few home groups and tags (long probe runs,
// overflow counts, candidates that the confirmation must turn down).
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
      // Few homes, all at the table's last groups (runs wrap), few tags
      // (0xFF among them: the byte a full overflow count holds).
      static constexpr uint8_t kTags[] = {0xFF, 0xFE, 0x01, 0x80};
      return few_fragments ? (uint64_t{0xFFFFFFF0u | (h % 16)} << 32) | ((h >> 8) & 0xFFFFFF00) | kTags[h % 4] : h;
    };
    // The index's rebuild walks the model (the tree in a sorted set).
    auto each = [&](auto&& f) {
      for (const auto& [member, score] : m) f(hash(member), score);
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
          index.Insert(hash(member), score, each);
          m[member] = score;
        } else {
          // The confirmation asks for the old score (the model changes after).
          const double old = m[member];
          const uint32_t slot = index.FindSlot(hash(member), confirm(member));
          ASSERT_NE(slot, ZIndex::kNone);
          ASSERT_EQ(index.ScoreAt(slot), old);
          index.SetScore(slot, score);
          m[member] = score;
        }
      } else if (present) {
        const uint32_t slot = index.FindSlot(hash(member), confirm(member));
        ASSERT_NE(slot, ZIndex::kNone);
        m.erase(member);  // gone from the "tree" before the index
        index.EraseSlot(hash(member), slot, each);
        ASSERT_EQ(index.FindSlot(hash(member), confirm(member)), ZIndex::kNone);
      }
      ASSERT_EQ(index.size(), m.size());
      max_size = std::max(max_size, m.size());
      if (step % 4999 == 0) {
        ASSERT_TRUE(index.Validate(each));
      }
    }
    ASSERT_TRUE(index.Validate(each));
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
  std::vector<std::string> members;
  auto each = [&](auto&& f) {
    for (const std::string& m : members) f(packed::Hash(m), 1.0);
  };
  for (uint64_t i = 0; i < 100000; ++i) {
    index.Insert(packed::Hash(std::to_string(i)), 1.0, each);
    members.push_back(std::to_string(i));
  }
  EXPECT_LE(index.size() * 8, index.capacity() * 7);
  EXPECT_GE(index.size() * 16, index.capacity() * 9);  // grown by half: at least 58% full
  EXPECT_TRUE(index.Validate(each));
  while (members.size() > 1000) {
    const std::string s = members.back();
    const uint32_t slot = index.FindSlot(packed::Hash(s), [](double) { return true; });
    ASSERT_NE(slot, ZIndex::kNone);
    members.pop_back();
    index.EraseSlot(packed::Hash(s), slot, each);
  }
  EXPECT_TRUE(index.Validate(each));
  EXPECT_LE(index.capacity(), index.size() * 5 * 2);
}

// A two-group table whose groups both passed members on (one round the
// table's end): a lookup of an absent member still ends.
TEST(ZIndex, AbsentLookupEndsWhenEveryGroupOverflowed) {
  ZIndex index;
  std::unordered_map<uint64_t, double> m;
  auto each = [&](auto&& f) {
    for (const auto& [h, s] : m) f(h, s);
  };
  auto confirm = [&](uint64_t h) { return [&m, h](double s) { return m.count(h) && m.at(h) == s; }; };
  const uint64_t kLast = uint64_t{0xFFFFFFFF} << 32;  // homed in the last group
  auto add = [&](uint64_t h) {  // the index first: a rebuild walks the members already in
    const double score = static_cast<double>(m.size());
    index.Insert(h, score, each);
    m[h] = score;
  };
  // 8 homed in the last group (the 8th wraps into the first) and 4 in the
  // first: two groups, 12 members (7/8 of 14).
  for (uint64_t i = 0; i < 8; ++i) add(kLast | (i << 8) | 0x42);
  for (uint64_t i = 0; i < 4; ++i) add((i << 8) | 0x43);
  ASSERT_EQ(index.capacity(), 14u);
  // Three of the last group's own go; the first group fills and passes one
  // on to the last: now both groups count members passed on.
  for (uint64_t i = 0; i < 3; ++i) {
    const uint64_t h = kLast | (i << 8) | 0x42;
    const uint32_t slot = index.FindSlot(h, confirm(h));
    ASSERT_NE(slot, ZIndex::kNone);
    m.erase(h);
    index.EraseSlot(h, slot, each);
  }
  for (uint64_t i = 4; i < 7; ++i) add((i << 8) | 0x43);
  ASSERT_EQ(index.capacity(), 14u);
  EXPECT_EQ(index.size(), m.size());
  ASSERT_TRUE(index.Validate(each));
  for (const auto& [h, s] : m) {
    double got;
    ASSERT_TRUE(index.Find(h, confirm(h), &got));
    EXPECT_EQ(got, s);
  }
  double got;
  EXPECT_FALSE(index.Find(kLast | 0x42, confirm(kLast | 0x42), &got));
  EXPECT_FALSE(index.Find(0x44, [](double) { return false; }, &got));
}

}  // namespace
}  // namespace peregrine
