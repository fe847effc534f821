// ListObject and ListNode: a randomized model check against std::deque
// through pushes and pops at both ends, inserts, replacements, removals and
// trims, across node splits and encoding conversions both ways, with the
// limits Redis offers (counts and -1..-5 sizes).
#include "core/list_object.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "core/memory.h"

namespace peregrine {
namespace {

std::string RandomItem(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: return std::to_string(static_cast<int64_t>(rng() % 100000) - 50000);
    case 1: return std::to_string(static_cast<int64_t>(rng()));
    case 2: return std::string(rng() % 300, static_cast<char>('a' + rng() % 26));
    case 3:
      if (rng() % 20 == 0) return std::string(packed::kMaxInline + 1 + rng() % 100, 'E');
      return "x";
    default: return "item:" + std::to_string(rng() % 1000);
  }
}

void CheckList(const ListObject& l, const std::deque<std::string>& m) {
  ASSERT_TRUE(l.Validate());
  ASSERT_EQ(l.size(), m.size());
  char scratch[packed::kScratchSize];
  // Forward, backward, and by index.
  size_t i = 0;
  if (!m.empty()) {
    for (ListObject::Pos p = l.First(); !l.AtEnd(p); p = l.Next(p), ++i) ASSERT_EQ(l.View(p, scratch), m[i]);
    ASSERT_EQ(i, m.size());
    ListObject::Pos p = l.EndPos();
    i = m.size();
    while (l.Prev(&p)) ASSERT_EQ(l.View(p, scratch), m[--i]);
    ASSERT_EQ(i, 0u);
  }
  for (int k = 0; k < 5 && !m.empty(); ++k) {
    const size_t at = (k * 7919u) % m.size();
    ASSERT_EQ(l.View(l.Seek(at), scratch), m[at]) << at;
  }
}

void RunModel(const ListLimits& limits, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  const int64_t before = KeyspaceBytes();
  {
    ListObject l;
    std::deque<std::string> m;
    bool saw_quicklist = false, saw_back = false;
    char scratch[packed::kScratchSize];
    for (int step = 0; step < steps; ++step) {
      const int op = static_cast<int>(rng() % 100);
      // Grow more than shrink early, the other way later: both conversions.
      const bool grow = (step / 2000) % 2 == 0;
      if (op < (grow ? 40 : 20)) {
        std::vector<std::string> items(1 + rng() % 4);
        for (auto& s : items) s = RandomItem(rng);
        std::vector<std::string_view> views(items.begin(), items.end());
        const bool head = rng() % 2;
        l.Push(head ? ListObject::End::kHead : ListObject::End::kTail, views, limits);
        for (auto& s : items) head ? m.push_front(s) : m.push_back(s);
      } else if (op < 60) {
        if (m.empty()) continue;
        const bool head = rng() % 2;
        std::string got;
        l.Pop(head ? ListObject::End::kHead : ListObject::End::kTail, [&](std::string_view v) { got = v; });
        ASSERT_EQ(got, head ? m.front() : m.back());
        head ? m.pop_front() : m.pop_back();
      } else if (op < 70) {
        if (m.empty()) continue;
        const size_t at = rng() % m.size();
        const std::string v = RandomItem(rng);
        l.Set(l.Seek(at), v, limits);
        m[at] = v;
      } else if (op < 80) {
        if (m.empty()) continue;
        const size_t at = rng() % m.size();
        const bool after = rng() % 2;
        const std::string v = RandomItem(rng);
        l.Insert(l.Seek(at), after, v, limits);
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(at + (after ? 1 : 0)), v);
      } else if (op < 90) {
        // Remove a run of items from a random place (LREM's walk).
        if (m.empty()) continue;
        size_t at = rng() % m.size();
        ListObject::Pos p = l.Seek(at);
        for (int k = 0; k < 3 && at < m.size(); ++k) {
          ASSERT_EQ(l.View(p, scratch), m[at]);
          p = l.Erase(p);
          m.erase(m.begin() + static_cast<std::ptrdiff_t>(at));
          if (at < m.size()) {
            ASSERT_FALSE(l.AtEnd(p));
          } else {
            ASSERT_TRUE(l.AtEnd(p));
          }
        }
      } else {
        if (m.empty()) continue;
        const size_t n = rng() % (m.size() / 4 + 2);
        const bool head = rng() % 2;
        l.Trim(head ? ListObject::End::kHead : ListObject::End::kTail, n);
        for (size_t k = 0; k < n && !m.empty(); ++k) head ? m.pop_front() : m.pop_back();
      }
      if (l.encoding() == ListObject::Encoding::kQuicklist) saw_quicklist = true;
      if (saw_quicklist && l.encoding() == ListObject::Encoding::kListpack) saw_back = true;
      if (op >= 20 && op < 60) l.MaybeShrinkEncoding(limits);
      if (step % 61 == 0) CheckList(l, m);
      if (::testing::Test::HasFatalFailure()) return;
    }
    CheckList(l, m);
    EXPECT_TRUE(saw_quicklist);
    EXPECT_TRUE(saw_back);
    ListObject copy = l.Clone();
    CheckList(copy, m);
  }
  EXPECT_EQ(KeyspaceBytes(), before);  // nodes, deques and external items all freed
}

TEST(ListObject, AgreesWithAModelBySize) { RunModel(ListLimits{-2}, 1, 12000); }
TEST(ListObject, AgreesWithAModelSmallNodes) { RunModel(ListLimits{-1}, 2, 12000); }
TEST(ListObject, AgreesWithAModelByCount) { RunModel(ListLimits{5}, 3, 12000); }
TEST(ListObject, AgreesWithAModelOneItemNodes) { RunModel(ListLimits{0}, 4, 6000); }

TEST(ListObject, EncodingFollowsRedisLimits) {
  const ListLimits limits{4};
  ListObject l;
  const std::string_view three[] = {"a", "b", "c"};
  l.Push(ListObject::End::kTail, three, limits);
  EXPECT_EQ(l.EncodingName(), "listpack");
  const std::string_view two[] = {"d", "e"};
  l.Push(ListObject::End::kTail, two, limits);  // 5 > 4
  EXPECT_EQ(l.EncodingName(), "quicklist");
  EXPECT_EQ(l.nodes(), 2u);
  l.Trim(ListObject::End::kTail, 3);  // one node of 2 = half of 4
  l.MaybeShrinkEncoding(limits);
  EXPECT_EQ(l.EncodingName(), "listpack");
  EXPECT_EQ(l.size(), 2u);
}

TEST(ListObject, TinyItemsNeverOverfillANode) {
  // Empty strings: Redis's limit check counts the arguments' bytes, 0 here,
  // so only the node's own bound (ListNode::kMaxBytes) stops one push of
  // more entries than a node could count.
  const ListLimits limits{-5};
  std::vector<std::string_view> empties(ListNode::kMaxCount + 1, std::string_view());
  ListObject l;
  l.Push(ListObject::End::kTail, empties, limits);
  ASSERT_TRUE(l.Validate());
  EXPECT_EQ(l.size(), ListNode::kMaxCount + 1u);
  EXPECT_EQ(l.EncodingName(), "quicklist");
  l.Insert(l.Seek(100), false, "x", limits);
  l.Push(ListObject::End::kHead, empties, limits);
  ASSERT_TRUE(l.Validate());
  EXPECT_EQ(l.size(), 2 * (ListNode::kMaxCount + 1u) + 1);
  char scratch[packed::kScratchSize];
  EXPECT_EQ(l.View(l.Seek(ListNode::kMaxCount + 1 + 100), scratch), "x");
}

TEST(ListObject, ExceedsLimitAsRedis) {
  EXPECT_FALSE(ListNodeExceedsLimit(-2, 8192, 1000000));
  EXPECT_TRUE(ListNodeExceedsLimit(-2, 8193, 1));
  EXPECT_TRUE(ListNodeExceedsLimit(-1, 4097, 1));
  EXPECT_FALSE(ListNodeExceedsLimit(-5, 65536, 1));
  EXPECT_FALSE(ListNodeExceedsLimit(-9, 65536, 1));  // beyond -5 means -5
  EXPECT_TRUE(ListNodeExceedsLimit(128, 100, 129));
  EXPECT_TRUE(ListNodeExceedsLimit(128, 8193, 2));  // the safety limit
  EXPECT_TRUE(ListNodeExceedsLimit(0, 10, 2));      // 0: one entry per node
}

TEST(ListNode, BackLengthsWalkBothWays) {
  ListNode* n = ListNode::Create(0);
  const std::string big(200, 'b');
  const packed::ItemPlan items[] = {packed::ItemPlan("1"), packed::ItemPlan(big), packed::ItemPlan("abc")};
  uint32_t at;
  for (const auto& p : items) n = ListNode::Insert(n, n->end, p, &at);
  char scratch[packed::kScratchSize];
  uint32_t off = n->LastOf();
  EXPECT_EQ(n->View(off, scratch), "abc");
  off = n->PrevOf(off);
  EXPECT_EQ(n->View(off, scratch), big);
  off = n->PrevOf(off);
  EXPECT_EQ(n->View(off, scratch), "1");
  EXPECT_EQ(off, n->begin);
  ListNode::Destroy(n);
}

}  // namespace
}  // namespace peregrine
