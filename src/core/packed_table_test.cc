// PackedTable against std:: models through growth, shrinking, replacement
// and deadlines; SCAN's guarantee across splits and merges; Random's spread.
#include "core/packed_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/memory.h"

namespace peregrine {
namespace {

std::string ViewString(const uint8_t* item) {
  char scratch[packed::kScratchSize];
  return std::string(packed::View(item, scratch));
}

void Put(PackedTable& t, const std::string& f, const std::string& v) {
  packed::Probe probe(f);
  PackedTable::Ref ref;
  if (t.Find(probe, &ref)) {
    t.ReplaceItem(&ref, 1, packed::ItemPlan(v));
    return;
  }
  packed::ItemPlan items[2] = {packed::ItemPlan(f, probe), packed::ItemPlan(v)};
  t.Insert(probe, items);
}

bool Del(PackedTable& t, const std::string& f) {
  PackedTable::Ref ref;
  if (!t.Find(packed::Probe(f), &ref)) return false;
  t.Erase(ref);
  return true;
}

void CheckAgainst(const PackedTable& t, const std::unordered_map<std::string, std::string>& m) {
  ASSERT_EQ(t.Validate(), "");
  ASSERT_EQ(t.size(), m.size());
  size_t seen = 0;
  t.ForEach([&](const uint8_t* e) {
    const std::string f = ViewString(Page::ItemOf(e, 0));
    auto it = m.find(f);
    ASSERT_NE(it, m.end()) << f;
    ASSERT_EQ(ViewString(Page::ItemOf(e, 1)), it->second);
    seen++;
  });
  ASSERT_EQ(seen, m.size());
}

TEST(PackedTable, AgreesWithAModelThroughGrowthAndShrinking) {
  const int64_t before = KeyspaceBytes();
  {
    std::mt19937_64 rng(11);
    PackedTable t(2);
    std::unordered_map<std::string, std::string> m;
    // Grow to 60,000 fields with overwrites and some deletions, then delete
    // down to nothing: splits, directory doublings, merges and halvings.
    for (int phase = 0; phase < 2; ++phase) {
      for (int step = 0; step < 120000; ++step) {
        const std::string f = (step % 3 ? "field:" : "") + std::to_string(rng() % 80000);
        const bool grow = phase == 0 ? rng() % 10 < 7 : rng() % 10 < 2;
        if (grow) {
          const std::string v = rng() % 50 == 0 ? std::string(20000, 'x') : std::to_string(rng() % 1000);
          Put(t, f, v);
          m[f] = v;
        } else {
          ASSERT_EQ(Del(t, f), m.erase(f) == 1);
        }
        if (step % 20000 == 0) CheckAgainst(t, m);
      }
      CheckAgainst(t, m);
    }
    std::vector<std::string> gone;
    for (auto it = m.begin(); it != m.end(); it = m.erase(it)) {
      ASSERT_TRUE(Del(t, it->first));
      gone.push_back(it->first);
    }
    CheckAgainst(t, m);
    ASSERT_EQ(t.Validate(), "");
    for (const std::string& f : gone) {
      PackedTable::Ref ref;
      ASSERT_FALSE(t.Find(packed::Probe(f), &ref)) << f;
    }
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(PackedTable, LookupsFindWhatIsThereAndNothingElse) {
  PackedTable t(1);
  for (int i = 0; i < 50000; ++i) {
    packed::Probe probe(std::to_string(i));
    packed::ItemPlan item(probe.s, probe);
    t.Insert(probe, &item);
  }
  ASSERT_EQ(t.Validate(), "");
  for (int i = 0; i < 50000; ++i) {
    PackedTable::Ref ref;
    ASSERT_TRUE(t.Find(packed::Probe(std::to_string(i)), &ref));
    int64_t v;
    ASSERT_TRUE(packed::ItemInt(ref.item(0), &v));
    ASSERT_EQ(v, i);
    ASSERT_FALSE(t.Find(packed::Probe(std::to_string(i) + "x"), &ref));
    ASSERT_FALSE(t.Find(packed::Probe("0" + std::to_string(i)), &ref));
  }
}

TEST(PackedTable, ScanReturnsEveryElementPresentThroughoutAcrossResizes) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 6; ++round) {
    // Even rounds grow the table under the cursor (pages split, the
    // directory doubles), odd rounds shrink it (pages merge, the directory
    // halves).
    const bool grow = round % 2 == 0;
    PackedTable t(1);
    std::vector<std::string> stable, volatile_members;
    auto insert = [&](const std::string& s) {
      packed::Probe probe(s);
      packed::ItemPlan item(s, probe);
      t.Insert(probe, &item);
    };
    for (int i = 0; i < 3000; ++i) stable.push_back("s" + std::to_string(i));
    for (const std::string& s : stable) insert(s);
    for (int i = 0; i < 30000; ++i) volatile_members.push_back("v" + std::to_string(round) + ":" + std::to_string(i));
    if (!grow)
      for (const std::string& s : volatile_members) insert(s);
    std::shuffle(volatile_members.begin(), volatile_members.end(), rng);
    size_t next = 0;
    std::set<std::string> seen;
    uint64_t cursor = 0;
    int calls = 0;
    do {
      cursor = t.Scan(cursor, 10, [&](const uint8_t* e) { seen.insert(ViewString(Page::ItemOf(e, 0))); });
      for (int k = 0; k < 300 && next < volatile_members.size(); ++k, ++next) {
        const std::string& s = volatile_members[next];
        if (grow) {
          insert(s);
        } else {
          PackedTable::Ref ref;
          ASSERT_TRUE(t.Find(packed::Probe(s), &ref));
          t.Erase(ref);
        }
      }
      ASSERT_LT(++calls, 100000);
    } while (cursor != 0);
    ASSERT_EQ(t.Validate(), "");
    for (const std::string& s : stable) ASSERT_TRUE(seen.count(s)) << s;
    // The scan saw the table change a lot.
    EXPECT_GT(next, 10000u);
  }
}

TEST(PackedTable, ScanCursorsBeyondTheSpaceEndTheScan) {
  PackedTable t(1);
  packed::Probe probe("a");
  packed::ItemPlan item("a", probe);
  t.Insert(probe, &item);
  int n = 0;
  EXPECT_EQ(t.Scan(uint64_t{1} << 60, 10, [&](const uint8_t*) { n++; }), 0u);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(t.Scan(0, 10, [&](const uint8_t*) { n++; }), 0u);
  EXPECT_EQ(n, 1);
}

TEST(PackedTable, RandomPicksEveryElementAboutEquallyOften) {
  PackedTable t(1);
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    // Sizes vary, so pages hold different numbers of elements.
    const std::string s = std::to_string(i) + std::string(i % 7 == 0 ? 60 : 0, 'p');
    packed::Probe probe(s);
    packed::ItemPlan item(s, probe);
    t.Insert(probe, &item);
  }
  std::mt19937_64 rng(5);
  std::map<std::string, int> hits;
  const int draws = 200 * n;
  for (int i = 0; i < draws; ++i) hits[ViewString(t.Random(rng).item(0))]++;
  ASSERT_EQ(hits.size(), static_cast<size_t>(n));
  int lo = draws, hi = 0;
  for (const auto& [s, c] : hits) {
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  // Expected 200 each; a fair pick stays well within [120, 300] here.
  EXPECT_GT(lo, 120);
  EXPECT_LT(hi, 300);
}

TEST(PackedTable, DeadlinesTravelWithTheirEntries) {
  PackedTable t(2);
  for (int i = 0; i < 5000; ++i) {
    const std::string f = "f" + std::to_string(i);
    packed::Probe probe(f);
    packed::ItemPlan items[2] = {packed::ItemPlan(f, probe), packed::ItemPlan("v")};
    t.Insert(probe, items, i % 3 == 0 ? 1000 + i : Page::kNoDeadline);
  }
  for (int i = 0; i < 5000; i += 5) {
    PackedTable::Ref ref;
    ASSERT_TRUE(t.Find(packed::Probe("f" + std::to_string(i)), &ref));
    t.SetDeadline(&ref, i % 2 ? 7 : Page::kNoDeadline);
  }
  ASSERT_EQ(t.Validate(), "");
  for (int i = 0; i < 5000; ++i) {
    PackedTable::Ref ref;
    ASSERT_TRUE(t.Find(packed::Probe("f" + std::to_string(i)), &ref));
    const int64_t want = i % 5 == 0 ? (i % 2 ? 7 : Page::kNoDeadline) : (i % 3 == 0 ? 1000 + i : Page::kNoDeadline);
    ASSERT_EQ(Page::DeadlineOfEntry(ref.entry()), want) << i;
    ASSERT_EQ(ViewString(ref.item(1)), "v");
  }
}

// Page bounds through growth, shrinking (merges, directory halving) and
// VisitDue against a model of deadlines.
TEST(PackedTable, VisitDueFindsExactlyTheDueEntriesThroughSplitsAndMerges) {
  const int64_t before = KeyspaceBytes();
  std::mt19937_64 rng(5);
  auto* t = new (CountedAlloc(sizeof(PackedTable))) PackedTable(2);
  std::map<std::string, int64_t> m;  // field -> deadline (kNoDeadline: none)
  int64_t now = 100;
  for (int step = 0; step < 60000; ++step) {
    const std::string f = "f" + std::to_string(rng() % 4000);
    const int op = static_cast<int>(rng() % 10);
    // Growth first, then mostly deletions so pages merge and the directory halves.
    const bool shrinking = step > 30000;
    if (op < (shrinking ? 2 : 5)) {
      if (!m.count(f)) {
        packed::Probe probe(f);
        packed::ItemPlan items[2] = {packed::ItemPlan(f, probe), packed::ItemPlan("v")};
        const int64_t d = rng() % 2 ? now + 1 + static_cast<int64_t>(rng() % 500) : Page::kNoDeadline;
        t->Insert(probe, items, d);
        m[f] = d;
      }
    } else if (op < 8) {
      if (m.count(f)) {
        ASSERT_TRUE(Del(*t, f));
        m.erase(f);
      }
    } else if (op == 8) {
      PackedTable::Ref ref;
      if (t->Find(packed::Probe(f), &ref)) {
        const int64_t d = rng() % 4 == 0 ? Page::kNoDeadline : now + 1 + static_cast<int64_t>(rng() % 500);
        t->SetDeadline(&ref, d);
        m[f] = d;
      }
    } else {
      now += static_cast<int64_t>(rng() % 20);
      std::set<std::string> due;
      t->VisitDue(now, [&](const uint8_t* e) { due.insert(ViewString(Page::ItemOf(e, 0))); });
      std::set<std::string> want;
      for (const auto& [k, d] : m)
        if (d != Page::kNoDeadline && d <= now) want.insert(k);
      ASSERT_EQ(due, want) << step;
      for (const std::string& k : due) {
        ASSERT_TRUE(Del(*t, k));
        m.erase(k);
      }
      const int64_t bound = t->MinDeadline();
      ASSERT_TRUE(bound == 0 || bound > now);
      for (const auto& [k, d] : m) {
        if (d != Page::kNoDeadline) {
          ASSERT_LE(bound, d);
        }
      }
    }
    if (step % 1000 == 0) {
      ASSERT_EQ(t->Validate(), "") << step;
    }
  }
  ASSERT_EQ(t->Validate(), "");
  EXPECT_LT(t->size(), 2000u);
  t->~PackedTable();
  CountedFree(t);  // as lazy_free does
  EXPECT_EQ(KeyspaceBytes(), before);
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

TEST(PackedTableDestroy, IncrementalDestructionFreesEveryByte) {
  const int64_t before = KeyspaceBytes();
  auto* t = new (CountedAlloc(sizeof(PackedTable))) PackedTable(1);
  for (int i = 0; i < 20000; ++i) {
    const std::string m = "member:" + std::to_string(i) + std::string(static_cast<size_t>(i % 70), 'x');
    packed::Probe probe(m);
    packed::ItemPlan item(m, probe);
    t->Insert(probe, &item);
  }
  int calls = 0;
  int64_t last = KeyspaceBytes();
  while (!t->DestroySome(3)) {
    ++calls;
    EXPECT_LT(KeyspaceBytes(), last);  // every call frees something
    last = KeyspaceBytes();
  }
  CountedFree(t);
  EXPECT_GT(calls, 10);
  EXPECT_EQ(KeyspaceBytes(), before);
}

}  // namespace
}  // namespace peregrine
