// SetObject against std::set through every encoding and conversion, with
// Redis 7.2's conversion rules checked on their edges.
#include "core/set_object.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/memory.h"

namespace peregrine {
namespace {

std::set<std::string> Members(const SetObject& s) {
  std::set<std::string> out;
  s.ForEach([&](std::string_view m) { EXPECT_TRUE(out.insert(std::string(m)).second) << m; });
  return out;
}

std::string RandomMember(std::mt19937_64& rng, int kind) {
  switch (kind) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng() % 400) - 200);
    case 1:
      return std::to_string(static_cast<int64_t>(rng() >> (rng() % 60)));
    case 2:
      return "m" + std::to_string(rng() % 400);
    default:
      return std::string(rng() % 90, 'x') + std::to_string(rng() % 50);
  }
}

TEST(SetObject, AgreesWithAModelThroughEveryEncoding) {
  const int64_t before = KeyspaceBytes();
  std::mt19937_64 rng(21);
  std::set<std::string_view> encodings_seen;
  for (int round = 0; round < 40; ++round) {
    SetLimits limits;
    limits.max_intset_entries = 1 + rng() % 600;
    limits.max_listpack_entries = 1 + rng() % 200;
    limits.max_listpack_value = 1 + rng() % 80;
    // Some rounds have room enough to stay small to the end.
    if (round % 8 == 0) limits.max_intset_entries = 1000;
    if (round % 8 == 1) {
      limits.max_listpack_entries = 2000;
      limits.max_listpack_value = 200;
    }
    // Integers first (intset), then strings join in some rounds.
    const int kinds = round % 4 == 0 ? 1 : 4;
    std::string first = RandomMember(rng, 0);
    SetObject s(first, 1 + rng() % 3, limits);
    std::set<std::string> m;
    for (int step = 0; step < 1500; ++step) {
      const std::string x = RandomMember(rng, step < 300 ? 0 : static_cast<int>(rng() % kinds));
      switch (rng() % 6) {
        case 0:
          ASSERT_EQ(s.Remove(x), m.erase(x) == 1);
          break;
        case 1:
          if (!m.empty()) {
            std::string popped;
            s.PopRandom(rng, &popped);
            ASSERT_EQ(m.erase(popped), 1u) << popped;
          }
          break;
        default: {
          const auto before_enc = s.encoding();
          ASSERT_EQ(s.Add(x, limits), m.insert(x).second);
          ASSERT_GE(static_cast<int>(s.encoding()), static_cast<int>(before_enc));  // never back
        }
      }
      ASSERT_EQ(s.size(), m.size());
      ASSERT_EQ(s.Contains(x), m.count(x) == 1);
      if (step % 250 == 0) {
        ASSERT_EQ(Members(s), m);
      }
    }
    ASSERT_EQ(Members(s), m);
    encodings_seen.insert(s.EncodingName());
    SetObject copy = s.Clone();
    ASSERT_EQ(copy.encoding(), s.encoding());
    ASSERT_EQ(Members(copy), m);
    if (!m.empty()) {
      char scratch[packed::kScratchSize];
      for (int i = 0; i < 20; ++i) ASSERT_EQ(m.count(std::string(s.Random(rng, scratch))), 1u);
    }
    std::set<std::string> scanned;
    uint64_t cursor = 0;
    do {
      cursor = s.Scan(cursor, 10, [&](std::string_view x) { scanned.insert(std::string(x)); });
    } while (cursor != 0);
    ASSERT_EQ(scanned, m);
  }
  EXPECT_EQ(encodings_seen.size(), 3u);
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(SetObject, ConvertsAsRedisDoes) {
  SetLimits limits;  // 512 / 128 / 64
  {
    SetObject s("1", 1, limits);
    EXPECT_EQ(s.EncodingName(), "intset");
    for (int i = 0; i < 512; ++i) s.Add(std::to_string(i), limits);
    EXPECT_EQ(s.EncodingName(), "intset");
    EXPECT_TRUE(s.Add("512", limits));
    EXPECT_EQ(s.EncodingName(), "hashtable");  // past set-max-intset-entries
  }
  {
    SetObject s("1", 1, limits);
    s.Add("1", limits);
    s.Add("abc", limits);
    EXPECT_EQ(s.EncodingName(), "listpack");  // a string joins a small intset
    EXPECT_TRUE(s.Contains("1"));
    EXPECT_FALSE(s.Contains("01"));
    for (int i = 0; i < 126; ++i) s.Add("m" + std::to_string(i), limits);
    EXPECT_EQ(s.size(), 128u);
    EXPECT_EQ(s.EncodingName(), "listpack");
    s.Add("one more", limits);
    EXPECT_EQ(s.EncodingName(), "hashtable");
    EXPECT_TRUE(s.Contains("1"));
    EXPECT_TRUE(s.Contains("m125"));
  }
  {
    SetObject s("a", 1, limits);
    s.Add("a", limits);
    EXPECT_EQ(s.EncodingName(), "listpack");
    s.Add(std::string(64, 'v'), limits);
    EXPECT_EQ(s.EncodingName(), "listpack");  // set-max-listpack-value is inclusive
    s.Add(std::string(65, 'v'), limits);
    EXPECT_EQ(s.EncodingName(), "hashtable");
  }
  {
    // An intset whose integers are longer than set-max-listpack-value goes
    // straight to a hashtable when a string joins.
    SetLimits tight = limits;
    tight.max_listpack_value = 3;
    SetObject s("1000", 1, tight);
    s.Add("1000", tight);
    s.Add("x", tight);
    EXPECT_EQ(s.EncodingName(), "hashtable");
  }
  {
    // Hints past the limits create the larger encoding (SADD of many members).
    EXPECT_EQ(SetObject("1", 512, limits).EncodingName(), "intset");
    EXPECT_EQ(SetObject("1", 513, limits).EncodingName(), "hashtable");
    SetLimits few_ints = limits;
    few_ints.max_intset_entries = 50;
    EXPECT_EQ(SetObject("1", 100, few_ints).EncodingName(), "listpack");
    EXPECT_EQ(SetObject("a", 129, limits).EncodingName(), "hashtable");
    EXPECT_EQ(SetObject("a", 128, limits).EncodingName(), "listpack");
  }
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

TEST(SetObject, ALongFirstMemberDoesNotSizeTheListpack) {
  // SADD of 128 members whose first is 4 MB: room for 128 members of the
  // longest a listpack keeps, not 128 of 4 MB; the member then converts it.
  const SetLimits limits;
  const std::string big(4 << 20, 'x');
  const int64_t before = KeyspaceBytes();
  SetObject s(big, 128, limits);
  EXPECT_EQ(s.EncodingName(), "listpack");
  EXPECT_LT(KeyspaceBytes() - before, 16 * 1024);
  s.Add(big, limits);
  EXPECT_EQ(s.EncodingName(), "hashtable");
  EXPECT_TRUE(s.Contains(big));
}

TEST(SetObjectConversions, SizedMaybeConvertAndToIntSet) {
  const SetLimits limits;  // 512 / 128 / 64
  SetObject small = SetObject::Sized(3, limits);
  EXPECT_EQ(small.EncodingName(), "listpack");
  EXPECT_EQ(SetObject::Sized(129, limits).EncodingName(), "hashtable");

  for (const char* m : {"3", "1", "2"}) small.Add(m, limits);
  EXPECT_EQ(small.EncodingName(), "listpack");
  small.MaybeConvertToIntSet(limits);
  EXPECT_EQ(small.EncodingName(), "intset");
  EXPECT_EQ(small.size(), 3u);
  EXPECT_TRUE(small.Contains("2"));

  SetObject mixed = SetObject::Sized(2, limits);
  mixed.Add("1", limits);
  mixed.Add("x", limits);
  mixed.MaybeConvertToIntSet(limits);
  EXPECT_EQ(mixed.EncodingName(), "listpack");  // not all integers

  SetObject table = SetObject::Sized(200, limits);
  for (int i = 0; i < 200; ++i) table.Add(std::to_string(i * 3), limits);
  EXPECT_EQ(table.EncodingName(), "hashtable");
  table.MaybeConvertToIntSet(limits);
  EXPECT_EQ(table.EncodingName(), "intset");
  EXPECT_EQ(table.size(), 200u);
  EXPECT_TRUE(table.Contains("597"));

  SetObject ints("1", 2, limits);
  ints.MaybeConvert(512, limits);
  EXPECT_EQ(ints.EncodingName(), "intset");
  ints.MaybeConvert(513, limits);
  EXPECT_EQ(ints.EncodingName(), "hashtable");
  SetObject strs("a", 1, limits);
  strs.Add("a", limits);
  strs.MaybeConvert(129, limits);
  EXPECT_EQ(strs.EncodingName(), "hashtable");
  EXPECT_TRUE(strs.Contains("a"));
}

}  // namespace
}  // namespace peregrine
