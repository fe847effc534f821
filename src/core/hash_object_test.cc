// HashObject against std::map through both encodings and the conversion.
#include "core/hash_object.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "core/memory.h"

namespace peregrine {
namespace {

std::map<std::string, std::string> Contents(const HashObject& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) {
    EXPECT_TRUE(out.emplace(std::string(f), std::string(v)).second) << f;
  });
  return out;
}

std::string RandomString(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return std::to_string(static_cast<int64_t>(rng() % 300) - 100);
    case 1: return "f" + std::to_string(rng() % 300);
    case 2: return std::string(rng() % 100, 'y');
    default: return std::string(rng() % 3 == 0 ? 20000 : 5, 'z') + std::to_string(rng() % 10);
  }
}

TEST(HashObject, AgreesWithAModelThroughBothEncodings) {
  const int64_t before = KeyspaceBytes();
  std::mt19937_64 rng(31);
  int converted = 0, stayed_small = 0;
  for (int round = 0; round < 30; ++round) {
    HashLimits limits{1 + rng() % 200, 1 + rng() % 100};
    if (round % 5 == 0) limits = HashLimits{100000, 100000};
    HashObject h;
    std::map<std::string, std::string> m;
    for (int step = 0; step < 1000; ++step) {
      const std::string f = RandomString(rng);
      if (rng() % 4 == 0) {
        ASSERT_EQ(h.Delete(f), m.erase(f) == 1);
      } else {
        const std::string v = RandomString(rng);
        ASSERT_EQ(h.Set(f, v, limits), m.count(f) == 0);
        m[f] = v;
      }
      ASSERT_EQ(h.size(), m.size());
      char scratch[packed::kScratchSize];
      std::string_view got;
      ASSERT_EQ(h.Get(f, &got, scratch), m.count(f) == 1);
      if (m.count(f)) {
        ASSERT_EQ(got, m[f]);
      }
    }
    ASSERT_EQ(Contents(h), m);
    (h.encoding() == HashObject::Encoding::kHashtable ? converted : stayed_small)++;
    HashObject copy = h.Clone();
    ASSERT_EQ(copy.encoding(), h.encoding());
    ASSERT_EQ(Contents(copy), m);
    std::map<std::string, std::string> scanned;
    uint64_t cursor = 0;
    do {
      cursor = h.Scan(cursor, 10, [&](std::string_view f, std::string_view v) { scanned[std::string(f)] = v; });
    } while (cursor != 0);
    ASSERT_EQ(scanned, m);
    if (!m.empty()) {
      char s0[packed::kScratchSize], s1[packed::kScratchSize];
      std::string_view f, v;
      h.Random(rng, &f, &v, s0, s1);
      ASSERT_EQ(m.at(std::string(f)), v);
    }
  }
  EXPECT_GT(converted, 0);
  EXPECT_GT(stayed_small, 0);
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(HashObject, ConvertsAsRedisDoes) {
  const HashLimits limits{128, 64};
  HashObject h;
  EXPECT_EQ(h.EncodingName(), "listpack");
  for (int i = 0; i < 128; ++i) h.Set("f" + std::to_string(i), "v", limits);
  EXPECT_EQ(h.EncodingName(), "listpack");
  h.Set("f127", "changed", limits);  // an overwrite adds nothing
  EXPECT_EQ(h.EncodingName(), "listpack");
  h.Set("f128", "v", limits);
  EXPECT_EQ(h.EncodingName(), "hashtable");  // past hash-max-listpack-entries

  HashObject a;
  a.Set("f", std::string(64, 'v'), limits);
  EXPECT_EQ(a.EncodingName(), "listpack");  // the value limit is inclusive
  a.Set(std::string(65, 'k'), "v", limits);
  EXPECT_EQ(a.EncodingName(), "hashtable");  // a long field converts too
  char scratch[packed::kScratchSize];
  std::string_view v;
  ASSERT_TRUE(a.Get("f", &v, scratch));
  EXPECT_EQ(v, std::string(64, 'v'));
}

}  // namespace
}  // namespace peregrine
