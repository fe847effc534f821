// ListObject and ListNode: a randomized model check against std::deque
// through pushes and pops at both ends, inserts, replacements, removals and
// trims, across node splits and encoding conversions both ways, with the
// limits Redis offers (counts and -1..-5 sizes), with compression
// (list-compress-depth) off and on.
#include "core/list_object.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
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

// `long_trims`: LTRIM's share of a quarter of the list (false: a few items
// at most, so that lists grow to many nodes of 4-8 KB).
// `sure`: the run is long enough to see every conversion and, with a
// depth, a compressed node.
void RunModel(const ListLimits& limits, uint64_t seed, int steps, bool long_trims = true, bool sure = true) {
  std::mt19937_64 rng(seed);
  const int64_t before = KeyspaceBytes();
  {
    ListObject l;
    std::deque<std::string> m;
    bool saw_quicklist = false, saw_back = false, saw_compressed = false;
    uint32_t max_nodes = 0;
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
        const size_t n = rng() % (long_trims ? m.size() / 4 + 2 : 8);
        const bool head = rng() % 2;
        l.Trim(head ? ListObject::End::kHead : ListObject::End::kTail, n);
        for (size_t k = 0; k < n && !m.empty(); ++k) head ? m.pop_front() : m.pop_back();
      }
      if (l.encoding() == ListObject::Encoding::kQuicklist) saw_quicklist = true;
      if (saw_quicklist && l.encoding() == ListObject::Encoding::kListpack) saw_back = true;
      if (op >= 20 && op < 60) l.MaybeShrinkEncoding(limits);
      if (op >= 60 && rng() % 2 == 0) l.Settle();  // as LSET, LINSERT and LREM end (not always: loose nodes too)
      if (l.CompressedNodes() > 0) saw_compressed = true;
      max_nodes = std::max(max_nodes, l.nodes());
      if (step % 61 == 0) CheckList(l, m);
      if (::testing::Test::HasFatalFailure()) return;
    }
    CheckList(l, m);
    if (sure) {
      EXPECT_TRUE(saw_quicklist);
      EXPECT_TRUE(saw_back);
      EXPECT_EQ(saw_compressed, limits.compress_depth > 0) << max_nodes;
    }
    ListObject copy = l.Clone();
    CheckList(copy, m);
  }
  EXPECT_EQ(KeyspaceBytes(), before);  // nodes, deques and external items all freed
}

TEST(ListObject, AgreesWithAModelBySize) { RunModel(ListLimits{-2}, 1, 12000); }
TEST(ListObject, AgreesWithAModelSmallNodes) { RunModel(ListLimits{-1}, 2, 12000); }
TEST(ListObject, AgreesWithAModelByCount) { RunModel(ListLimits{5}, 3, 12000); }
TEST(ListObject, AgreesWithAModelOneItemNodes) { RunModel(ListLimits{0}, 4, 6000); }
TEST(ListObject, AgreesWithAModelCompressedDepth1) { RunModel(ListLimits{-1, 1}, 5, 12000, false); }
TEST(ListObject, AgreesWithAModelCompressedDepth2ByCount) { RunModel(ListLimits{20, 2}, 6, 12000); }
TEST(ListObject, AgreesWithAModelCompressedDepth3) { RunModel(ListLimits{-1, 3}, 7, 12000, false); }
TEST(ListObject, AgreesWithAModelCompressedOneItemNodes) { RunModel(ListLimits{0, 1}, 8, 6000); }
TEST(ListObject, AgreesWithAModelCompressedManySeeds) {
  const ListLimits shapes[] = {{-1, 1}, {8, 1}, {20, 2}, {1, 1}, {-1, 2}, {3, 4}};
  for (uint64_t seed = 100; seed < 130; ++seed) {
    for (const ListLimits& limits : shapes) {
      RunModel(limits, seed, 1500, seed % 2 == 0, /*sure=*/false);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// DEBUG QUICKLIST-PACKED-THRESHOLD: items at or over the threshold are
// plain nodes (thresholds under the random items' sizes, with and without
// compression, by size and by count).
TEST(ListObject, AgreesWithAModelPlainNodes) {
  const ListLimits shapes[] = {{-2, 0, 1}, {-2, 0, 5}, {-1, 1, 100}, {20, 2, 10}, {5, 0, 250}, {-2, 3, 1}};
  for (uint64_t seed = 200; seed < 210; ++seed) {
    for (const ListLimits& limits : shapes) {
      RunModel(limits, seed, 2000, seed % 2 == 0, /*sure=*/false);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(ListObject, LargeItemsAreNodesOfTheirOwn) {
  const ListLimits limits{-2, 0, 10};
  ListObject l;
  // A quicklist of small items (about 18 KB: three nodes).
  std::vector<std::string> small;
  for (int i = 0; i < 3000; ++i) small.push_back("s" + std::to_string(i));
  for (const std::string& s : small) l.Push(ListObject::End::kTail, s, limits);
  ASSERT_EQ(l.encoding(), ListObject::Encoding::kQuicklist);
  const uint32_t nodes = l.nodes();
  // A large item pushed at an end: a node of its own; a small one after it
  // does not join it.
  l.Push(ListObject::End::kTail, std::string(10, 'L'), limits);
  EXPECT_EQ(l.nodes(), nodes + 1);
  l.Push(ListObject::End::kTail, "t", limits);
  EXPECT_EQ(l.nodes(), nodes + 2);
  // Inserted in the middle of a node: it splits around the item.
  l.Insert(l.Seek(3), true, std::string(12, 'M'), limits);
  EXPECT_EQ(l.nodes(), nodes + 4);
  char scratch[packed::kScratchSize];
  EXPECT_EQ(l.View(l.Seek(4), scratch), std::string(12, 'M'));
  // LSET of a small item with a large one: the same.
  l.Set(l.Seek(1), std::string(11, 'N'), limits);
  EXPECT_EQ(l.nodes(), nodes + 6);
  EXPECT_EQ(l.View(l.Seek(1), scratch), std::string(11, 'N'));
  EXPECT_TRUE(l.Validate());
  // Under the default threshold, nothing of the kind (in the last node,
  // which has room).
  ListObject d;
  for (int i = 0; i < 2000; ++i) d.Push(ListObject::End::kTail, small[i], ListLimits{});
  const uint32_t dn = d.nodes();
  ASSERT_GE(dn, 2u);
  d.Push(ListObject::End::kTail, std::string(10, 'L'), ListLimits{});
  d.Insert(d.Seek(d.size() - 3), true, std::string(12, 'M'), ListLimits{});
  EXPECT_EQ(d.nodes(), dn);
}

// A one-node quicklist holding a plain node stays a quicklist (Redis).
TEST(ListObject, APlainNodeDoesNotTurnBackIntoAListpack) {
  const ListLimits limits{-2, 0, 5};
  ListObject l;
  for (int i = 0; i < 3000; ++i) l.Push(ListObject::End::kTail, "x" + std::to_string(i), limits);
  l.Push(ListObject::End::kTail, "large item", limits);
  l.Trim(ListObject::End::kHead, 3000);
  l.MaybeShrinkEncoding(limits);
  EXPECT_EQ(l.encoding(), ListObject::Encoding::kQuicklist);
  l.Set(l.First(), "sm", limits);
  l.MaybeShrinkEncoding(limits);
  EXPECT_EQ(l.encoding(), ListObject::Encoding::kListpack);
}

TEST(ListObject, CompressesTheInteriorOnly) {
  // 2,000 items of 40 repetitive bytes in 4 KB nodes: depth 2 leaves two
  // nodes plain at each end and compresses the rest.
  const ListLimits limits{-1, 2};
  ListObject l, plain;
  std::deque<std::string> m;
  for (int i = 0; i < 2000; ++i) {
    std::string v = "user:" + std::to_string(i % 10) + std::string(35, 'p');
    l.Push(ListObject::End::kTail, v, limits);
    plain.Push(ListObject::End::kTail, v, ListLimits{-1, 0});
    m.push_back(v);
  }
  ASSERT_GT(l.nodes(), 10u);
  EXPECT_EQ(l.CompressedNodes(), l.nodes() - 4);
  EXPECT_EQ(plain.CompressedNodes(), 0u);
  EXPECT_LT(l.AllocatedBytes() * 4, plain.AllocatedBytes());
  CheckList(l, m);
  // A write in the middle unpacks one node until Settle.
  l.Set(l.Seek(1000), "changed", limits);
  m[1000] = "changed";
  EXPECT_EQ(l.CompressedNodes(), l.nodes() - 5);
  l.Settle();
  EXPECT_EQ(l.CompressedNodes(), l.nodes() - 4);
  CheckList(l, m);
  // Pops move the boundary: nodes that reach an end are unpacked.
  for (int i = 0; i < 1500; ++i) {
    l.Pop(ListObject::End::kHead, [](std::string_view) {});
    m.pop_front();
  }
  CheckList(l, m);
  EXPECT_EQ(l.CompressedNodes(), l.nodes() > 4 ? l.nodes() - 4 : 0u);
  // A list keeps the depth it was made with.
  l.Push(ListObject::End::kHead, "x", ListLimits{-1, 0});
  EXPECT_EQ(l.CompressedNodes(), l.nodes() > 4 ? l.nodes() - 4 : 0u);
}

// Text that compresses to more than half its size (about 62% here) still
// saves memory: the compressed block is allocated at the result's size.
TEST(ListObject, CompressionSavesMemoryOnText) {
  std::mt19937_64 rng(10);
  const char* words[] = {"order", "shipped", "customer", "payment", "refund", "pending", "warehouse", "berlin",
                         "paris", "lisbon", "express", "standard", "item", "quantity", "total", "status"};
  ListObject packed_list, plain;
  for (int i = 0; i < 20000; ++i) {
    std::string v = std::to_string(rng());
    for (int w = 0; w < 3; ++w) v += std::string(" ") + words[rng() % 16] + ":" + std::to_string(rng() % 100000);
    packed_list.Push(ListObject::End::kTail, v, ListLimits{-2, 1});
    plain.Push(ListObject::End::kTail, v, ListLimits{-2, 0});
  }
  ASSERT_GT(packed_list.CompressedNodes(), 10u);
  EXPECT_LT(static_cast<double>(packed_list.AllocatedBytes()), 0.8 * static_cast<double>(plain.AllocatedBytes()))
      << packed_list.AllocatedBytes() << " " << plain.AllocatedBytes();
  // A read of a compressed node keeps a plain copy until DropCache.
  const int64_t before = KeyspaceBytes();
  char scratch[packed::kScratchSize];
  EXPECT_FALSE(packed_list.View(packed_list.Seek(10000), scratch).empty());
  EXPECT_GT(KeyspaceBytes(), before);
  packed_list.DropCache();
  EXPECT_EQ(KeyspaceBytes(), before);
  ASSERT_TRUE(packed_list.Validate());
}

TEST(ListObject, IncompressibleNodesStayPlain) {
  std::mt19937_64 rng(9);
  const ListLimits limits{-1, 1};
  ListObject l;
  std::deque<std::string> m;
  for (int i = 0; i < 500; ++i) {
    std::string v(32, '\0');
    for (char& c : v) c = static_cast<char>(rng());
    l.Push(ListObject::End::kHead, v, limits);
    m.push_front(v);
  }
  EXPECT_GT(l.nodes(), 3u);
  EXPECT_EQ(l.CompressedNodes(), 0u);
  CheckList(l, m);
}

TEST(ListNodeLzf, KeepsOffsetsAndExternalItems) {
  ListNode* n = ListNode::Create(0, true);
  const std::string big(packed::kMaxInline + 10, 'B');
  uint32_t at;
  for (int i = 0; i < 30; ++i) n = ListNode::Insert(n, n->begin, packed::ItemPlan(i == 7 ? big : "abcabcabc"), &at);
  const int64_t before = KeyspaceBytes();
  ListNodeLzf* z = ListNodeLzf::Compress(n);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->begin, n->begin);
  ListNode* copy = z->Decompress();
  ASSERT_EQ(copy->begin, n->begin);
  ASSERT_EQ(copy->end, n->end);
  EXPECT_EQ(std::memcmp(copy->data() + copy->begin, n->data() + n->begin, n->used()), 0);
  char scratch[packed::kScratchSize];
  EXPECT_EQ(copy->View(copy->LastOf(), scratch), "abcabcabc");
  ListNode::DestroyShallow(copy);
  ListNode::DestroyShallow(n);  // z holds the external item now
  EXPECT_LT(KeyspaceBytes(), before);
  ListNodeLzf::Destroy(z);  // frees the big item too
  EXPECT_LT(KeyspaceBytes(), before - static_cast<int64_t>(packed::kMaxInline));
}

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
