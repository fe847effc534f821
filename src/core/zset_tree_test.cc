// ZTree and ZLeaf: a randomized model check against std::set of (score,
// member) through inserts and removals that split and merge leaves and
// nodes (small leaves and fanout are not configurable, so the runs are
// large enough to build trees of three levels), ranks, seeks by rank,
// score and member, and walks both ways.
#include "core/zset_tree.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/memory.h"

namespace peregrine {
namespace {

struct KeyLess {
  bool operator()(const std::pair<double, std::string>& a, const std::pair<double, std::string>& b) const {
    return CompareZKey(a.first, a.second, b.first, b.second) < 0;
  }
};
using Model = std::set<std::pair<double, std::string>, KeyLess>;

std::string RandomMember(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0: return std::to_string(static_cast<int64_t>(rng() % 2000) - 1000);  // integers, stored as such
    case 1: return "m:" + std::to_string(rng() % 100000);
    case 2: return std::string(1 + rng() % 40, static_cast<char>('a' + rng() % 3));
    case 3:
      if (rng() % 200 == 0) return std::string(packed::kMaxInline + 1 + rng() % 10, 'X');  // external
      return "";
    default: return "member-" + std::to_string(rng() % 5000);
  }
}

double RandomScore(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return static_cast<double>(rng() % 10);  // many ties
    case 1: return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 2: return rng() % 50 == 0 ? (rng() % 2 ? INFINITY : -INFINITY) : 0.5;
    default: return static_cast<double>(rng() % 100000);
  }
}

void CheckAgainst(const ZTree& t, const Model& m, std::mt19937_64& rng) {
  ASSERT_TRUE(t.Validate());
  ASSERT_EQ(t.size(), m.size());
  char scratch[packed::kScratchSize];
  // The whole walk forwards, then backwards.
  auto it = m.begin();
  ZTree::Pos pos = t.AtRank(0);
  for (uint64_t r = 0; it != m.end(); ++it, ++r) {
    ASSERT_TRUE(pos.valid());
    ASSERT_EQ(pos.rank, r);
    ASSERT_EQ(t.Score(pos), it->first);
    ASSERT_EQ(t.Member(pos, scratch), it->second);
    t.Next(&pos);
  }
  ASSERT_FALSE(pos.valid());
  pos = t.AtRank(m.size());
  for (auto rit = m.rbegin(); rit != m.rend(); ++rit) {
    ASSERT_TRUE(t.Prev(&pos));
    ASSERT_EQ(t.Score(pos), rit->first);
    ASSERT_EQ(t.Member(pos, scratch), rit->second);
  }
  ASSERT_FALSE(t.Prev(&pos));
  // A seek found `want` (m's end: nothing).
  auto expect_at = [&](const ZTree::Pos& p, Model::const_iterator want) {
    if (want == m.end()) {
      ASSERT_FALSE(p.valid());
    } else {
      ASSERT_TRUE(p.valid());
      ASSERT_EQ(p.rank, static_cast<uint64_t>(std::distance(m.begin(), want)));
      ASSERT_EQ(t.Member(p, scratch), want->second);
    }
  };
  // Seeks by score.
  for (int k = 0; k < 20; ++k) {
    const double min = RandomScore(rng);
    const bool excl = rng() % 2;
    auto want = m.begin();
    while (want != m.end() && (excl ? want->first <= min : want->first < min)) ++want;
    ASSERT_NO_FATAL_FAILURE(expect_at(t.LowerBoundScore(min, excl), want));
  }
  // Seeks by (score, member): keys present and absent.
  for (int k = 0; k < 20; ++k) {
    std::pair<double, std::string> key(RandomScore(rng), RandomMember(rng));
    if (k % 2 == 0 && !m.empty()) key = *std::next(m.begin(), static_cast<long>(rng() % m.size()));
    ASSERT_NO_FATAL_FAILURE(expect_at(t.LowerBound(key.first, key.second), m.lower_bound(key)));
  }
}

TEST(ZTree, AgreesWithAModel) {
  std::mt19937_64 rng(1);
  const int64_t before = KeyspaceBytes();
  {
    ZTree t;
    Model m;
    uint32_t max_height = 0;
    for (int step = 0; step < 120000; ++step) {
      // Grow for a while, then shrink, twice: merges as well as splits.
      const bool grow = (step / 30000) % 2 == 0;
      const int op = static_cast<int>(rng() % 100);
      if (op < (grow ? 70 : 30)) {
        std::pair<double, std::string> key(RandomScore(rng), RandomMember(rng));
        if (m.count(key)) continue;  // the tree's keys are unique (a member's score: the index's job)
        t.Insert(key.first, key.second);
        m.insert(key);
      } else if (!m.empty()) {
        auto it = m.begin();
        if (rng() % 4 == 0) {
          it = std::prev(m.end());  // pops at both ends as ZPOPMAX does
        } else if (rng() % 3 != 0) {
          std::advance(it, static_cast<std::ptrdiff_t>(rng() % m.size()));
        }
        uint64_t rank;
        ASSERT_TRUE(t.Find(it->first, it->second, &rank));
        ASSERT_EQ(rank, static_cast<uint64_t>(std::distance(m.begin(), it)));
        ASSERT_TRUE(t.Erase(it->first, it->second));
        ASSERT_FALSE(t.Erase(it->first, it->second));
        m.erase(it);
      }
      max_height = std::max(max_height, t.height());
      if (step == 29999) {  // the peak: a copy of a tree of several levels
        ASSERT_GE(t.height(), 2u);
        ZTree copy = t.Clone();
        CheckAgainst(copy, m, rng);
        if (::testing::Test::HasFatalFailure()) return;
      }
      if (step % 9973 == 0) {
        CheckAgainst(t, m, rng);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    CheckAgainst(t, m, rng);
    EXPECT_GE(max_height, 2u);
    ZTree copy = t.Clone();
    CheckAgainst(copy, m, rng);
  }
  EXPECT_EQ(KeyspaceBytes(), before);  // leaves, nodes, separators and external members all freed
}

TEST(ZTree, RanksAndSeeksByRank) {
  ZTree t;
  for (int i = 0; i < 50000; ++i) t.Insert(i * 0.5, "m" + std::to_string(i));
  ASSERT_TRUE(t.Validate());
  char scratch[packed::kScratchSize];
  for (uint64_t r : {0ull, 1ull, 39ull, 40ull, 12345ull, 49999ull}) {
    const ZTree::Pos p = t.AtRank(r);
    ASSERT_TRUE(p.valid());
    EXPECT_EQ(t.Member(p, scratch), "m" + std::to_string(r));
    uint64_t rank;
    ASSERT_TRUE(t.Find(r * 0.5, "m" + std::to_string(r), &rank));
    EXPECT_EQ(rank, r);
  }
  EXPECT_FALSE(t.AtRank(50000).valid());
  EXPECT_FALSE(t.Find(0.5, "m2"));
}

TEST(ZTree, LexSeeksWithOneScore) {
  std::mt19937_64 rng(2);
  ZTree t;
  std::set<std::string> m;
  for (int i = 0; i < 20000; ++i) {
    std::string s = RandomMember(rng);
    if (m.insert(s).second) t.Insert(0, s);
  }
  char scratch[packed::kScratchSize];
  for (int k = 0; k < 200; ++k) {
    const std::string min = RandomMember(rng);
    const bool excl = rng() % 2;
    auto want = excl ? m.upper_bound(min) : m.lower_bound(min);
    const ZTree::Pos p = t.LowerBoundLex(min, excl);
    if (want == m.end()) {
      EXPECT_FALSE(p.valid());
    } else {
      ASSERT_TRUE(p.valid());
      EXPECT_EQ(t.Member(p, scratch), *want);
      EXPECT_EQ(p.rank, static_cast<uint64_t>(std::distance(m.begin(), want)));
    }
  }
}

// Rising scores (timestamps) and falling ones fill leaves, not half-fill them.
TEST(ZTree, AppendsAndPrependsPackLeaves) {
  for (const bool rising : {true, false}) {
    ZTree t;
    size_t raw = 0;
    for (int i = 0; i < 100000; ++i) {
      const std::string m = "job:" + std::to_string(1000000 + i);
      t.Insert(rising ? i : -i, m);
      raw += 8 + 1 + m.size();
    }
    ASSERT_TRUE(t.Validate());
    EXPECT_LT(static_cast<double>(t.AllocatedBytes()), raw * 1.25) << rising;
  }
}

// Keys falling in the gap between two leaves land at the end of the left
// one, whatever their order: descending ones there must not leave a leaf
// of one entry each behind (only the tree's own end is cut that way).
TEST(ZTree, InsertsIntoAGapFillLeaves) {
  ZTree t;
  for (int i = 0; i < 20000; ++i) t.Insert(i * 1000.0, "member:" + std::to_string(1000000 + i));
  // The last entry of a leaf in the middle: the gap after it.
  ZTree::Pos p = t.AtRank(10000);
  while (p.index + 1 != p.leaf->count) t.Next(&p);
  const double gap = t.Score(p);
  const size_t before = t.AllocatedBytes();
  size_t raw = 0;
  for (int j = 0; j < 5000; ++j) {
    const std::string m = "gap:" + std::to_string(1000000 + j);
    t.Insert(gap + 999.0 - j * 0.1, m);
    raw += 8 + 1 + m.size();
  }
  ASSERT_TRUE(t.Validate());
  // Leaves are whole 1 KB blocks, and the points where the falling keys go
  // leave leaves two thirds full behind them (a full leaf between full
  // neighbours splits two into three).
  EXPECT_LT(static_cast<double>(t.AllocatedBytes() - before), raw * 1.8);
}

// Random inserts keep leaves well filled: a full leaf shares its entries
// with a neighbour before it splits, and splits two into three.
TEST(ZTree, RandomInsertsFillLeaves) {
  ZTree t;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> score(0, 1e9);
  char buf[24];
  for (int i = 0; i < 300000; ++i) {
    std::snprintf(buf, sizeof(buf), "member:%06d", i);
    t.Insert(score(rng), buf);
  }
  ASSERT_TRUE(t.Validate());
  uint64_t leaves = 0, used = 0;
  for (ZTree::Pos p = t.AtRank(0); p.valid(); p = t.AtRank(p.rank + p.leaf->count - p.index)) {
    leaves++;
    used += p.leaf->used;
    EXPECT_LE(p.leaf->used, ZTree::kLeafRoom);
  }
  const double fill = static_cast<double>(used) / static_cast<double>(leaves * ZTree::kLeafRoom);
  EXPECT_GE(fill, 0.84) << leaves << " leaves";
}

// A run of removals that thins one node between two full ones (rising
// inserts fill nodes): it takes children from a neighbour, as it cannot
// merge with one.
TEST(ZTree, ThinNodesBorrowFromFullNeighbours) {
  ZTree t;
  std::vector<std::string> members;
  for (int i = 0; i < 300000; ++i) {
    members.push_back("member:" + std::to_string(1000000 + i));
    t.Insert(i, members.back());
  }
  const uint32_t height = t.height();
  ASSERT_GE(height, 3u);
  for (int i = 100000; i < 103000; ++i) ASSERT_TRUE(t.Erase(i, members[i]));
  ASSERT_TRUE(t.Validate());
  EXPECT_EQ(t.height(), height);
  EXPECT_EQ(t.size(), 297000u);
  char scratch[packed::kScratchSize];
  ZTree::Pos p = t.AtRank(99999);
  EXPECT_EQ(t.Member(p, scratch), members[99999]);
  ASSERT_TRUE(t.Next(&p));
  EXPECT_EQ(t.Member(p, scratch), members[103000]);
  uint64_t rank;
  ASSERT_TRUE(t.Find(200000, members[200000], &rank));
  EXPECT_EQ(rank, 197000u);
}

// Removing most entries at random merges leaves and nodes: the memory left
// follows the entries left.
TEST(ZTree, RemovalsKeepLeavesDense) {
  std::mt19937_64 rng(3);
  ZTree t;
  std::vector<std::pair<double, std::string>> keys;
  for (int i = 0; i < 100000; ++i) {
    keys.emplace_back(static_cast<double>(rng() % 1000000), "member:" + std::to_string(i));
    t.Insert(keys.back().first, keys.back().second);
  }
  std::shuffle(keys.begin(), keys.end(), rng);
  size_t raw = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i < keys.size() * 9 / 10) {
      ASSERT_TRUE(t.Erase(keys[i].first, keys[i].second));
    } else {
      raw += 8 + 1 + keys[i].second.size();
    }
  }
  ASSERT_TRUE(t.Validate());
  EXPECT_LT(static_cast<double>(t.AllocatedBytes()), raw * 2.5);
}

TEST(ZTree, EmptiesBackToOneLeaf) {
  ZTree t;
  for (int i = 0; i < 30000; ++i) t.Insert(i % 7, std::to_string(i));
  EXPECT_GE(t.height(), 2u);
  for (int i = 0; i < 30000; ++i) ASSERT_TRUE(t.Erase(i % 7, std::to_string(i)));
  EXPECT_EQ(t.height(), 0u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.AtRank(0).valid());
  EXPECT_FALSE(t.LowerBoundScore(-INFINITY, false).valid());
  EXPECT_TRUE(t.Validate());
}

}  // namespace
TEST(ZTree, DestroysInSlices) {
  const int64_t before = KeyspaceBytes();
  {
    ZTree t;
    for (int i = 0; i < 30000; ++i) t.Insert(i % 977, "member-" + std::to_string(i));
    ASSERT_GE(t.height(), 2u);
    EXPECT_GT(KeyspaceBytes(), before);
    int calls = 0;
    int64_t last = KeyspaceBytes();
    while (!t.DestroySome(7)) {
      ++calls;
      EXPECT_LT(KeyspaceBytes(), last);  // every slice frees something
      last = KeyspaceBytes();
    }
    EXPECT_GT(calls, 30);  // it took slices, not one go
    EXPECT_EQ(KeyspaceBytes(), before);
    EXPECT_TRUE(t.DestroySome(1));
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

}  // namespace peregrine
