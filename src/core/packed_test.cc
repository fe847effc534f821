// Packed items and pages: every encoding round-trips, and a page agrees with
// a std:: model through appends, erases, replacements and deadlines.
#include "core/packed.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/memory.h"
#include "core/packed_page.h"

namespace peregrine {
namespace {

std::string RoundTrip(std::string_view s, size_t* size) {
  packed::ItemPlan plan(s);
  std::vector<uint8_t> buf(plan.size + 8, 0xEE);
  uint8_t* end = packed::Write(buf.data(), plan);
  *size = static_cast<size_t>(end - buf.data());
  EXPECT_EQ(*size, plan.size);
  EXPECT_EQ(packed::ItemSize(buf.data()), plan.size);
  char scratch[packed::kScratchSize];
  std::string out(packed::View(buf.data(), scratch));
  EXPECT_TRUE(packed::Equals(buf.data(), packed::Probe(s)));
  packed::FreeItem(buf.data());
  return out;
}

TEST(PackedItem, EveryEncodingRoundTrips) {
  const std::vector<std::string> cases = {
      "", "a", "0", "-1", "127", "128", "-128", "-129", "32767", "32768", "9223372036854775807",
      "-9223372036854775808", "9223372036854775808", "007", "+1", " 1", "1 ", "-0", "1.5",
      std::string(127, 'x'), std::string(128, 'y'), std::string(packed::kMaxInline, 'z'),
      std::string(packed::kMaxInline + 1, 'w'), std::string(100000, 'v'), std::string("a\0b", 3)};
  for (const std::string& s : cases) {
    size_t size = 0;
    EXPECT_EQ(RoundTrip(s, &size), s) << s.substr(0, 20);
  }
}

TEST(PackedItem, IntegersAreStoredInTheFewestBytes) {
  size_t size = 0;
  RoundTrip("5", &size);
  EXPECT_EQ(size, 2u);
  RoundTrip("-128", &size);
  EXPECT_EQ(size, 2u);
  RoundTrip("128", &size);
  EXPECT_EQ(size, 3u);
  RoundTrip("1000000", &size);
  EXPECT_EQ(size, 4u);
  RoundTrip("-9223372036854775808", &size);
  EXPECT_EQ(size, 9u);
  RoundTrip("007", &size);  // not canonical: a string
  EXPECT_EQ(size, 4u);
}

TEST(PackedItem, EqualsTellsIntegersFromLookalikes) {
  packed::ItemPlan plan("12");
  uint8_t buf[16];
  packed::Write(buf, plan);
  EXPECT_TRUE(packed::Equals(buf, packed::Probe("12")));
  EXPECT_FALSE(packed::Equals(buf, packed::Probe("012")));
  EXPECT_FALSE(packed::Equals(buf, packed::Probe("13")));
  EXPECT_FALSE(packed::Equals(buf, packed::Probe("12 ")));
  packed::Write(buf, packed::ItemPlan("ab"));
  EXPECT_FALSE(packed::Equals(buf, packed::Probe("12")));
  EXPECT_TRUE(packed::Equals(buf, packed::Probe("ab")));
}

TEST(PackedItem, ExternalStringsAreCountedAndFreed) {
  const int64_t before = KeyspaceBytes();
  const std::string big(50000, 'q');
  packed::ItemPlan plan(big);
  uint8_t buf[packed::kExternalItemSize];
  packed::Write(buf, plan);
  EXPECT_GE(KeyspaceBytes() - before, 50000);
  EXPECT_GE(packed::ExternalBytes(buf), 50000u);
  packed::FreeItem(buf);
  EXPECT_EQ(KeyspaceBytes(), before);
}

// A page against a model: field -> (value, deadline), in insertion order.
struct PageModel {
  std::vector<std::pair<std::string, std::pair<std::string, int64_t>>> entries;
  int Find(const std::string& f) const {
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].first == f) return static_cast<int>(i);
    return -1;
  }
};

std::string RandomString(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng() % 2000) - 1000);
    case 1:
      return std::to_string(static_cast<int64_t>(rng()));
    case 2:
      return std::string(rng() % 300, static_cast<char>('a' + rng() % 26));
    case 3:
      return std::string(packed::kMaxInline + 1 + rng() % 100, 'E');
    default: {
      std::string s = "f" + std::to_string(rng() % 500);
      return s;
    }
  }
}

void CheckPage(const Page* p, const PageModel& m) {
  ASSERT_EQ(p->count, m.entries.size());
  Page::Pos pos;
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const uint8_t* e = p->EntryAt(pos);
    char s1[packed::kScratchSize], s2[packed::kScratchSize];
    ASSERT_EQ(packed::View(Page::ItemOf(e, 0), s1), m.entries[i].first);
    ASSERT_EQ(packed::View(Page::ItemOf(e, 1), s2), m.entries[i].second.first);
    ASSERT_EQ(Page::DeadlineOfEntry(e), m.entries[i].second.second);
    ASSERT_EQ(p->tags()[i], packed::Probe(m.entries[i].first).tag());
    pos = p->Next(pos);
  }
  ASSERT_EQ(pos.offset, p->used);
  // The capacity the page keeps is the allocator's (0 = it asks).
  ASSERT_EQ(p->capacity(), CountedUsableSize(p));
  ASSERT_LE(p->bytes(), p->capacity());
}

TEST(PackedPage, AgreesWithAModel) {
  std::mt19937_64 rng(7);
  const int64_t before = KeyspaceBytes();
  Page* p = Page::Create(2, 0);
  PageModel m;
  for (int step = 0; step < 20000; ++step) {
    const std::string f = RandomString(rng);
    packed::Probe probe(f);
    Page::Pos pos;
    const bool found = p->Find(probe, &pos);
    const int mi = m.Find(f);
    ASSERT_EQ(found, mi >= 0) << f;
    if (found) {
      ASSERT_EQ(pos.index, static_cast<uint32_t>(mi));
    }
    const int op = static_cast<int>(rng() % 10);
    if (!found) {
      if (op < 6 && p->count < 300) {
        const std::string v = RandomString(rng);
        const int64_t deadline = rng() % 4 == 0 ? static_cast<int64_t>(rng() % 1000000) : Page::kNoDeadline;
        packed::ItemPlan items[2] = {packed::ItemPlan(f, probe), packed::ItemPlan(v)};
        p = Page::Append(p, probe.tag(), items, deadline);
        m.entries.push_back({f, {v, deadline}});
      }
    } else if (op < 4) {
      p->Erase(pos);
      m.entries.erase(m.entries.begin() + mi);
      if (rng() % 8 == 0) p = Page::Shrink(p);
    } else if (op < 7) {
      const std::string v = RandomString(rng);
      p = Page::ReplaceItem(p, pos, 1, packed::ItemPlan(v));
      m.entries[mi].second.first = v;
    } else {
      const int64_t deadline = rng() % 2 ? static_cast<int64_t>(rng() % 1000000) : Page::kNoDeadline;
      p = Page::SetDeadline(p, pos, deadline);
      m.entries[mi].second.second = deadline;
    }
    if (step % 97 == 0) CheckPage(p, m);
  }
  CheckPage(p, m);
  Page::Destroy(p);
  EXPECT_EQ(KeyspaceBytes(), before);  // external items freed with the page
}

TEST(PackedPage, SetsHoldOneItemPerEntry) {
  Page* p = Page::Create(1, 0);
  for (int i = 0; i < 100; ++i) {
    const std::string s = i % 2 ? std::to_string(i) : "m" + std::to_string(i);
    packed::Probe probe(s);
    packed::ItemPlan item(s, probe);
    p = Page::Append(p, probe.tag(), &item);
  }
  EXPECT_EQ(p->count, 100);
  Page::Pos pos;
  ASSERT_TRUE(p->Find(packed::Probe("51"), &pos));
  EXPECT_EQ(pos.index, 51u);
  ASSERT_TRUE(p->Find(packed::Probe("m50"), &pos));
  EXPECT_EQ(pos.index, 50u);
  EXPECT_FALSE(p->Find(packed::Probe("m51"), &pos));
  EXPECT_EQ(p->PosOf(50).offset, pos.offset);
  Page::Destroy(p);
}

}  // namespace
}  // namespace peregrine
