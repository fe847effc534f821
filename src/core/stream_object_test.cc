// StreamObject checked against a model: an ordered map of the live entries.
// Random appends (same fields as the node's first entry or not, integers,
// strings over 16 KB), deletions and trims (MAXLEN / MINID, exact or
// approximate, with LIMIT) run on both; every range read both ways, the
// metadata, clones and the RDB node round trip must agree with the model.
#include "core/stream_object.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/stream_groups.h"

namespace peregrine {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;
using Model = std::map<StreamID, Pairs>;

Pairs PairsOf(const StreamObject::EntryView& e) {
  Pairs out;
  e.ForEach([&](std::string_view f, std::string_view v) { out.emplace_back(std::string(f), std::string(v)); });
  return out;
}

std::vector<std::pair<StreamID, Pairs>> Read(const StreamObject& s, StreamID a, StreamID b, bool rev,
                                             size_t count = SIZE_MAX) {
  std::vector<std::pair<StreamID, Pairs>> out;
  s.Range(a, b, rev, [&](const StreamObject::EntryView& e) {
    out.emplace_back(e.id(), PairsOf(e));
    return out.size() < count;
  });
  return out;
}

std::vector<std::pair<StreamID, Pairs>> ReadModel(const Model& m, StreamID a, StreamID b, bool rev) {
  std::vector<std::pair<StreamID, Pairs>> out;
  for (const auto& [id, p] : m)
    if (a <= id && id <= b) out.emplace_back(id, p);
  if (rev) std::reverse(out.begin(), out.end());
  return out;
}

StreamObject RoundTrip(const StreamObject& s) {
  StreamObject t;
  s.ForEachNode([&](StreamID master, std::span<const std::string_view> fields, uint32_t, uint32_t,
                    std::span<const StreamObject::RawEntry> entries) {
    EXPECT_TRUE(t.LoadNode(master, fields, entries));
  });
  t.SetLoadedLength(s.size());
  t.set_last_id(s.last_id());
  return t;
}

class StreamModel : public ::testing::Test {
 protected:
  std::mt19937_64 rng{17};
  std::string Value() {
    switch (rng() % 6) {
      case 0: return std::to_string(static_cast<int64_t>(rng() % 2000000) - 1000000);
      case 1: return "";
      case 2: return std::string(rng() % 100 == 0 ? 20000 : rng() % 300, 'a' + static_cast<char>(rng() % 26));
      default: return "v" + std::to_string(rng() % 1000);
    }
  }
};

TEST_F(StreamModel, RandomOperationsMatchTheModel) {
  for (int round = 0; round < 40; round++) {
    StreamObject s;
    Model m;
    StreamLimits limits;
    limits.node_max_entries = round % 4 == 0 ? 3 : 100;
    limits.node_max_bytes = round % 5 == 0 ? 200 : 4096;
    StreamID next{1, 0};
    uint64_t added = 0;
    for (int step = 0; step < 600; step++) {
      const uint64_t op = rng() % 100;
      if (op < 60) {
        // Same ms (the next sequence) or a later ms.
        if (rng() % 3 == 0) next = {next.ms + 1 + rng() % 1000, rng() % 3};
        Pairs p;
        const bool usual = rng() % 4 != 0;
        const size_t nf = usual ? 2 : 1 + rng() % 4;
        for (size_t i = 0; i < nf; i++)
          p.emplace_back(usual ? (i == 0 ? "name" : "temp") : "f" + std::to_string(rng() % 5), Value());
        std::vector<std::string_view> flat;
        for (const auto& [f, v] : p) {
          flat.push_back(f);
          flat.push_back(v);
        }
        s.Append(next, flat, limits);
        m[next] = p;
        added++;
        IncrStreamID(&next);
      } else if (op < 75 && !m.empty()) {
        // An existing ID or a near miss.
        auto it = m.begin();
        std::advance(it, static_cast<long>(rng() % m.size()));
        StreamID id = it->first;
        if (rng() % 4 == 0) id.seq += 1000;
        const bool live = m.erase(id) > 0;
        ASSERT_EQ(s.Delete(id), live);
        ASSERT_FALSE(s.Delete(id));
      } else if (op < 85) {
        StreamObject::Trim t;
        t.approx = rng() % 2 == 0;
        t.limit = rng() % 3 == 0 ? static_cast<int64_t>(1 + rng() % 50) : 0;
        const size_t before = m.size();
        int64_t removed;
        if (rng() % 2 == 0) {
          t.strategy = StreamObject::Trim::kMaxLen;
          t.maxlen = m.empty() ? 0 : rng() % (m.size() + 5);
          removed = s.TrimEntries(t);
          if (!t.approx && t.limit == 0) {
            ASSERT_EQ(s.size(), std::min<uint64_t>(before, t.maxlen));
          }
          ASSERT_GE(s.size(), std::min<uint64_t>(before, t.maxlen));
        } else {
          t.strategy = StreamObject::Trim::kMinId;
          t.minid = m.empty() ? StreamID{} : std::next(m.begin(), static_cast<long>(rng() % m.size()))->first;
          removed = s.TrimEntries(t);
          if (!t.approx && t.limit == 0) {
            for (const auto& [id, p] : m) ASSERT_TRUE(id >= t.minid || !s.Contains(id));
          }
        }
        ASSERT_EQ(static_cast<size_t>(removed), before - s.size());
        if (t.limit > 0) {
          ASSERT_LE(removed, t.limit);
        }
        // What went is a prefix of the model.
        for (int64_t k = 0; k < removed; k++) m.erase(m.begin());
      }
      ASSERT_EQ(s.size(), m.size());
      ASSERT_EQ(s.entries_added(), added);
      if (!m.empty()) {
        ASSERT_EQ(s.first_id(), m.begin()->first);
        ASSERT_EQ(s.EdgeID(true, true), m.begin()->first);
        ASSERT_EQ(s.EdgeID(false, true), m.rbegin()->first);
      } else {
        ASSERT_EQ(s.first_id(), StreamID{});
      }
      if (step % 50 == 0) {
        ASSERT_EQ(Read(s, {}, StreamID::Max(), false), ReadModel(m, {}, StreamID::Max(), false));
        ASSERT_EQ(Read(s, {}, StreamID::Max(), true), ReadModel(m, {}, StreamID::Max(), true));
        ASSERT_EQ(s.CountLive(), m.size());
      }
      // Random bounds.
      StreamID a{rng() % (next.ms + 2), rng() % 4}, b{rng() % (next.ms + 2), rng() % 4};
      if (b < a) std::swap(a, b);
      const bool rev = rng() % 2 == 0;
      ASSERT_EQ(Read(s, a, b, rev), ReadModel(m, a, b, rev));
      auto first3 = ReadModel(m, a, b, rev);
      if (first3.size() > 3) first3.resize(3);
      ASSERT_EQ(Read(s, a, b, rev, 3), first3);
    }
    StreamObject c = s.Clone();
    ASSERT_EQ(Read(c, {}, StreamID::Max(), false), ReadModel(m, {}, StreamID::Max(), false));
    StreamObject t = RoundTrip(s);
    ASSERT_EQ(Read(t, {}, StreamID::Max(), false), ReadModel(m, {}, StreamID::Max(), false));
    ASSERT_EQ(t.CountLive(), m.size());
    ASSERT_GT(s.AllocatedBytes(), 0u);
  }
}

TEST(Stream, NodesFollowRedisLimits) {
  StreamObject s;
  StreamLimits limits;  // 100 entries, 4096 bytes
  for (uint64_t i = 0; i < 1000; i++) {
    const std::string v = std::to_string(i);
    const std::string_view pairs[] = {"field", v, "other", "x"};
    s.Append({i + 1, 0}, pairs, limits);
  }
  EXPECT_EQ(s.nodes(), 10u);  // 100 small entries a node, as Redis
  StreamObject big;
  const std::string kb(1000, 'x');
  for (uint64_t i = 0; i < 10; i++) {
    const std::string_view pairs[] = {"f", kb};
    big.Append({i + 1, 0}, pairs, limits);
  }
  // About 1 KB each: a node takes entries while its listpack (as Redis
  // would write it) plus the new entry's raw bytes stays under 4096: 4, 4, 2.
  EXPECT_EQ(big.nodes(), 3u);
  // Approximate trimming drops whole nodes only.
  StreamObject::Trim t;
  t.strategy = StreamObject::Trim::kMaxLen;
  t.maxlen = 950;
  t.approx = true;
  EXPECT_EQ(s.TrimEntries(t), 0);
  t.maxlen = 850;
  EXPECT_EQ(s.TrimEntries(t), 100);
  EXPECT_EQ(s.size(), 900u);
  t.approx = false;
  EXPECT_EQ(s.TrimEntries(t), 50);
  EXPECT_EQ(s.first_id(), (StreamID{151, 0}));
}

TEST(Stream, DeletingEveryEntryOfANodeDropsIt) {
  StreamObject s;
  StreamLimits limits;
  limits.node_max_entries = 2;
  for (uint64_t i = 1; i <= 4; i++) {
    const std::string_view pairs[] = {"f", "v"};
    s.Append({i, 0}, pairs, limits);
  }
  EXPECT_EQ(s.nodes(), 2u);
  EXPECT_TRUE(s.Delete({1, 0}));
  EXPECT_EQ(s.first_id(), (StreamID{2, 0}));
  EXPECT_TRUE(s.Delete({2, 0}));
  EXPECT_EQ(s.nodes(), 1u);
  EXPECT_EQ(s.max_deleted_id(), (StreamID{2, 0}));
  EXPECT_TRUE(s.RangeHasTombstones({}, StreamID::Max()) == false);  // the tombstone is before the first entry
  EXPECT_TRUE(s.Delete({4, 0}));
  EXPECT_TRUE(s.RangeHasTombstones({}, StreamID::Max()));
  EXPECT_EQ(s.last_id(), (StreamID{4, 0}));  // the last ID stays
}

TEST(Stream, IdArithmetic) {
  StreamID id{5, UINT64_MAX};
  ASSERT_TRUE(IncrStreamID(&id));
  EXPECT_EQ(id, (StreamID{6, 0}));
  ASSERT_TRUE(DecrStreamID(&id));
  EXPECT_EQ(id, (StreamID{5, UINT64_MAX}));
  StreamID max = StreamID::Max();
  EXPECT_FALSE(IncrStreamID(&max));
  StreamID zero;
  EXPECT_FALSE(DecrStreamID(&zero));
  EXPECT_EQ((StreamID{1, 2}).ToString(), "1-2");
}

TEST(StreamGroupsTest, PendingEntriesFollowTheirConsumers) {
  StreamGroups gs;
  StreamGroup* g = gs.Add("g", {}, 0);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(gs.Add("g", {}, 0), nullptr);
  StreamConsumer* a = g->AddConsumer("a", 10);
  StreamConsumer* b = g->AddConsumer("b", 20);
  EXPECT_EQ(g->AddConsumer("a", 30), nullptr);
  for (uint64_t i = 1; i <= 5; i++) {
    StreamNack& n = g->pel[{i, 0}];
    n.delivery_count = 1;
    g->MoveNack({i, 0}, n, i % 2 ? a : b);
  }
  EXPECT_EQ(a->pending.size(), 3u);
  g->MoveNack({1, 0}, g->pel[{1, 0}], b);
  EXPECT_EQ(a->pending.size(), 2u);
  EXPECT_EQ(b->pending.size(), 3u);
  EXPECT_TRUE(g->Ack({2, 0}));
  EXPECT_FALSE(g->Ack({2, 0}));
  EXPECT_EQ(b->pending.size(), 2u);
  auto c = gs.Clone();
  EXPECT_EQ(c->Find("g")->pel.size(), 4u);
  EXPECT_EQ(c->Find("g")->FindConsumer("b")->pending.size(), 2u);
  EXPECT_EQ(g->RemoveConsumer("b"), 2u);
  EXPECT_EQ(g->pel.size(), 2u);
  EXPECT_EQ(g->RemoveConsumer("b"), 0u);
  EXPECT_TRUE(gs.Remove("g"));
  EXPECT_EQ(gs.size(), 0u);
}

}  // namespace
}  // namespace peregrine
