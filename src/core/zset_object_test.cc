// ZSetObject against a model (std::set of (score, member) and a std::map of
// member -> score): ZADD's flags, removals, ranks, every range walk in both
// directions, conversions between the encodings, clones.
#include "core/zset_object.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace peregrine {
namespace {

using Entry = std::pair<double, std::string>;

struct Model {
  std::set<Entry> order;
  std::map<std::string, double> scores;
  void Put(const std::string& m, double s) {
    auto it = scores.find(m);
    if (it != scores.end()) order.erase({it->second, m});
    scores[m] = s;
    order.insert({s, m});
  }
  void Drop(const std::string& m) {
    auto it = scores.find(m);
    order.erase({it->second, m});
    scores.erase(it);
  }
};

std::vector<Entry> All(const ZSetObject& z) {
  std::vector<Entry> out;
  z.ForEach([&](std::string_view m, double s) { out.emplace_back(s, std::string(m)); });
  return out;
}

void ExpectSame(const ZSetObject& z, const Model& m) {
  ASSERT_TRUE(z.Validate());
  ASSERT_EQ(z.size(), m.order.size());
  const std::vector<Entry> want(m.order.begin(), m.order.end());
  ASSERT_EQ(All(z), want);
}

std::string Member(std::mt19937_64& rng, int n) {
  // Integers and strings (integers are kept as integers but order as text).
  const uint64_t k = rng() % n;
  return k % 3 == 0 ? std::to_string(k) : "m" + std::to_string(k);
}

TEST(ZSetObjectTest, AddFlagsFollowRedis) {
  ZSetLimits limits;
  ZSetObject z = ZSetObject::Create(1, 1, limits);
  double got = 0;
  EXPECT_EQ(z.Add(1, "a", 0, limits, &got), ZSetObject::AddResult::kAdded);
  EXPECT_EQ(z.Add(1, "a", 0, limits, &got), ZSetObject::AddResult::kNone);
  EXPECT_EQ(z.Add(2, "a", ZSetObject::kNx, limits, &got), ZSetObject::AddResult::kNop);
  EXPECT_EQ(z.Add(2, "b", ZSetObject::kXx, limits, &got), ZSetObject::AddResult::kNop);
  EXPECT_EQ(z.size(), 1u);
  EXPECT_EQ(z.Add(0.5, "a", ZSetObject::kGt, limits, &got), ZSetObject::AddResult::kNop);
  EXPECT_EQ(z.Add(3, "a", ZSetObject::kGt, limits, &got), ZSetObject::AddResult::kUpdated);
  EXPECT_EQ(got, 3);
  EXPECT_EQ(z.Add(4, "a", ZSetObject::kLt, limits, &got), ZSetObject::AddResult::kNop);
  EXPECT_EQ(z.Add(2.5, "a", ZSetObject::kIncr, limits, &got), ZSetObject::AddResult::kUpdated);
  EXPECT_EQ(got, 5.5);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(z.Add(inf, "a", 0, limits, &got), ZSetObject::AddResult::kUpdated);
  EXPECT_EQ(z.Add(-inf, "a", ZSetObject::kIncr, limits, &got), ZSetObject::AddResult::kNaN);
  EXPECT_EQ(z.Add(std::nan(""), "c", 0, limits, &got), ZSetObject::AddResult::kNaN);
  double s;
  ASSERT_TRUE(z.Score("a", &s));
  EXPECT_EQ(s, inf);
  EXPECT_FALSE(z.Score("c", &s));
}

TEST(ZSetObjectTest, ConvertsAtTheLimits) {
  ZSetLimits limits;
  limits.max_listpack_entries = 4;
  limits.max_listpack_value = 8;
  ZSetObject z = ZSetObject::Create(1, 1, limits);
  double got;
  for (int i = 0; i < 4; ++i) z.Add(i, "k" + std::to_string(i), 0, limits, &got);
  EXPECT_EQ(z.EncodingName(), "listpack");
  z.Add(9, "k9", 0, limits, &got);
  EXPECT_EQ(z.EncodingName(), "skiplist");
  ZSetObject w = ZSetObject::Create(1, 1, limits);
  w.Add(1, "123456789", 0, limits, &got);  // a member over the value limit
  EXPECT_EQ(w.EncodingName(), "skiplist");
  EXPECT_EQ(ZSetObject::Create(5, 1, limits).EncodingName(), "skiplist");
  EXPECT_EQ(ZSetObject::Create(4, 9, limits).EncodingName(), "skiplist");
  // Back to a leaf only when asked and when it fits.
  z.Remove("k9");
  EXPECT_EQ(z.EncodingName(), "skiplist");
  z.ConvertToListpackIfNeeded(9, limits);
  EXPECT_EQ(z.EncodingName(), "skiplist");
  z.ConvertToListpackIfNeeded(2, limits);
  EXPECT_EQ(z.EncodingName(), "listpack");
  EXPECT_TRUE(z.Validate());
  EXPECT_EQ(z.size(), 4u);
  z.MaybeConvert(5, limits);
  EXPECT_EQ(z.EncodingName(), "skiplist");
  EXPECT_EQ(z.size(), 4u);
}

// Random adds, increments, removals, rank erasures against the model, for a
// leaf, a tree of a few leaves and one of several levels; ranges checked in
// both directions.
class ZSetObjectModelTest : public ::testing::TestWithParam<std::pair<int, size_t>> {};

TEST_P(ZSetObjectModelTest, MatchesModel) {
  const auto [members, listpack_entries] = GetParam();
  ZSetLimits limits;
  limits.max_listpack_entries = listpack_entries;
  std::mt19937_64 rng(members * 31 + listpack_entries);
  ZSetObject z = ZSetObject::Create(1, 1, limits);
  Model m;
  const int steps = members * 6;
  for (int step = 0; step < steps; ++step) {
    const std::string k = Member(rng, members);
    // Few distinct scores: ties ordered by member.
    const double score = static_cast<double>(static_cast<int>(rng() % 50) - 25) / 4;
    const uint64_t op = rng() % 10;
    double got;
    if (op < 5) {
      const auto r = z.Add(score, k, 0, limits, &got);
      EXPECT_EQ(r == ZSetObject::AddResult::kAdded, m.scores.count(k) == 0);
      m.Put(k, score);
    } else if (op < 7) {
      z.Add(score, k, ZSetObject::kIncr, limits, &got);
      const double want = m.scores.count(k) ? m.scores[k] + score : score;
      EXPECT_EQ(got, want);
      m.Put(k, want);
    } else if (op < 9) {
      EXPECT_EQ(z.Remove(k), m.scores.count(k) == 1);
      if (m.scores.count(k)) m.Drop(k);
    } else if (!m.order.empty() && rng() % 8 == 0) {
      const uint64_t start = rng() % m.order.size();
      const uint64_t count = std::min<uint64_t>(rng() % 5, m.order.size() - start);
      z.EraseRanks(start, count);
      auto it = std::next(m.order.begin(), static_cast<long>(start));
      for (uint64_t i = 0; i < count; ++i) {
        m.scores.erase(it->second);
        it = m.order.erase(it);
      }
    }
    if (step % 97 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectSame(z, m));
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectSame(z, m));
  const std::vector<Entry> all(m.order.begin(), m.order.end());
  char scratch[packed::kScratchSize];
  // Ranks and scores of every member, present or not.
  for (int i = 0; i < members; ++i) {
    const std::string k = i % 3 == 0 ? std::to_string(i) : "m" + std::to_string(i);
    uint64_t rank;
    double s;
    const bool there = z.Rank(k, &rank, &s);
    ASSERT_EQ(there, m.scores.count(k) == 1);
    if (there) {
      EXPECT_EQ(s, m.scores[k]);
      EXPECT_EQ(all[rank].second, k);
    }
  }
  // Score bounds, both exclusivities, walked forwards and backwards.
  for (double b = -8; b <= 8; b += 0.25) {
    for (bool excl : {false, true}) {
      auto first = std::find_if(all.begin(), all.end(), [&](const Entry& e) { return excl ? e.first > b : e.first >= b; });
      ZSetObject::Pos p = z.LowerBoundScore(b, excl);
      ASSERT_EQ(p.valid(), first != all.end());
      if (p.valid()) {
        ASSERT_EQ(p.rank, static_cast<uint64_t>(first - all.begin()));
        EXPECT_EQ(ZSetObject::MemberAt(p, scratch), first->second);
        for (auto it = first; it != all.end(); ++it) {
          ASSERT_TRUE(p.valid());
          EXPECT_EQ(ZSetObject::MemberAt(p, scratch), it->second);
          EXPECT_EQ(ZSetObject::ScoreAt(p), it->first);
          z.Next(&p);
        }
        EXPECT_FALSE(p.valid());
      }
      auto last = std::find_if(all.rbegin(), all.rend(), [&](const Entry& e) { return excl ? e.first < b : e.first <= b; });
      ZSetObject::Pos q = z.UpperBoundScore(b, excl);
      ASSERT_EQ(q.valid(), last != all.rend());
      if (q.valid()) {
        for (auto it = last; it != all.rend(); ++it) {
          ASSERT_TRUE(q.valid());
          EXPECT_EQ(ZSetObject::MemberAt(q, scratch), it->second);
          z.Prev(&q);
        }
        EXPECT_FALSE(q.valid());
      }
    }
  }
  // Lex bounds on a copy holding one score (ZRANGEBYLEX's domain).
  ZSetObject lex = ZSetObject::Create(1, 1, limits);
  std::set<std::string> names;
  for (const auto& [k, s] : m.scores) {
    double got;
    lex.Add(0, k, 0, limits, &got);
    names.insert(k);
  }
  for (const std::string b : {"", "1", "3", "m", "m1", "m5", "m50", "z"}) {
    for (bool excl : {false, true}) {
      auto lo = excl ? names.upper_bound(b) : names.lower_bound(b);
      ZSetObject::Pos p = lex.LowerBoundLex(b, excl);
      ASSERT_EQ(p.valid(), lo != names.end());
      if (p.valid()) {
        EXPECT_EQ(ZSetObject::MemberAt(p, scratch), *lo);
      }
      auto hi = excl ? names.lower_bound(b) : names.upper_bound(b);
      ZSetObject::Pos q = lex.UpperBoundLex(b, excl);
      ASSERT_EQ(q.valid(), hi != names.begin());
      if (q.valid()) {
        EXPECT_EQ(ZSetObject::MemberAt(q, scratch), *std::prev(hi));
      }
    }
  }
  // A clone is equal and independent.
  ZSetObject c = z.Clone();
  EXPECT_EQ(c.EncodingName(), z.EncodingName());
  ASSERT_NO_FATAL_FAILURE(ExpectSame(c, m));
  if (z.size() > 0) {
    c.EraseRanks(0, c.size());
    EXPECT_EQ(c.size(), 0u);
    ASSERT_NO_FATAL_FAILURE(ExpectSame(z, m));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ZSetObjectModelTest,
                         ::testing::Values(std::make_pair(40, size_t{128}), std::make_pair(300, size_t{128}),
                                           std::make_pair(3000, size_t{16}), std::make_pair(200, size_t{0})));

// The index moves to a larger or smaller table a few members a write
// (core/zset_index.h): lookups, score changes across the walk's cursor and
// removals stay right halfway through, and StepMove ends a move that no
// write continues.
TEST(ZSetObjectTest, IndexMovesWithWritesAndBetweenThem) {
  ZSetLimits limits;
  std::mt19937_64 rng(7);
  ZSetObject z = ZSetObject::Create(1000, 1, limits);
  std::unordered_map<std::string, double> m;
  double got;
  auto check_all = [&] {
    ASSERT_TRUE(z.Validate());
    for (const auto& [k, s] : m) {
      ASSERT_TRUE(z.Score(k, &got));
      ASSERT_EQ(got, s);
    }
  };
  int checked_moving = 0;
  for (int i = 0; i < 80000; ++i) {
    const std::string k = "k" + std::to_string(rng() % 40000);
    const double s = static_cast<double>(rng() % 1000);
    if (rng() % 10 < 7) {
      z.Add(s, k, 0, limits, &got);
      m[k] = s;
    } else {
      ASSERT_EQ(z.Remove(k), m.erase(k) == 1);
    }
    if (z.moving() && i % 64 == 0) {
      ASSERT_TRUE(z.Validate());
      checked_moving++;
    }
  }
  EXPECT_GT(checked_moving, 5);
  ASSERT_NO_FATAL_FAILURE(check_all());
  // A move left halfway: ended between events.
  for (int i = 0; !z.moving(); ++i) {
    const std::string k = "n" + std::to_string(i);
    z.Add(static_cast<double>(i), k, 0, limits, &got);
    m[k] = static_cast<double>(i);
  }
  ASSERT_NO_FATAL_FAILURE(check_all());
  int steps = 0;
  while (z.StepMove(100)) steps++;
  EXPECT_GT(steps, 10);
  EXPECT_FALSE(z.moving());
  ASSERT_NO_FATAL_FAILURE(check_all());
  // Most removed: the table shrinks, rank erasures stepping the moves.
  z.EraseRanks(100, z.size() - 3000);
  m.clear();
  char scratch[packed::kScratchSize];
  for (ZSetObject::Pos p = z.AtRank(0); p.valid(); z.Next(&p)) m[std::string(ZSetObject::MemberAt(p, scratch))] = ZSetObject::ScoreAt(p);
  while (z.StepMove(100)) {
  }
  ASSERT_NO_FATAL_FAILURE(check_all());
  EXPECT_LT(z.AllocatedBytes(), 3100 * 60);
}

TEST(ZSetObjectTest, LargeMembersAndIntegersRoundTrip) {
  ZSetLimits limits;
  ZSetObject z = ZSetObject::Create(1, 1, limits);
  const std::string big(20000, 'x');
  double got;
  z.Add(1, big, 0, limits, &got);
  z.Add(2, "-17", 0, limits, &got);
  z.Add(2, "007", 0, limits, &got);  // not canonical: a string
  EXPECT_EQ(z.EncodingName(), "skiplist");
  std::vector<Entry> want = {{1, big}, {2, "-17"}, {2, "007"}};
  EXPECT_EQ(All(z), want);
  ZSetObject c = z.Clone();
  EXPECT_TRUE(z.Remove(big));
  EXPECT_EQ(All(c), want);
  EXPECT_GT(c.AllocatedBytes(), 20000u);
}

}  // namespace
}  // namespace peregrine
