// HashObject against std::map through both encodings and the conversion.
#include "core/hash_object.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(HashObject, AValueThatShrinksGivesItsRoomBack) {
  for (const HashLimits limits : {HashLimits{512, 100000}, HashLimits{1, 100000}}) {
    HashObject h;
    h.Set("a", "1", limits);
    h.Set("b", std::string(16000, 'v'), limits);  // inline (up to 16,383 bytes)
    EXPECT_EQ(h.EncodingName(), limits.max_listpack_entries == 1 ? "hashtable" : "listpack");
    const size_t big = h.AllocatedBytes();
    h.Set("b", "x", limits);
    EXPECT_LT(h.AllocatedBytes(), big / 8) << h.EncodingName();
    char scratch[packed::kScratchSize];
    std::string_view v;
    ASSERT_TRUE(h.Get("b", &v, scratch));
    EXPECT_EQ(v, "x");
  }
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

// Field deadlines against a model: fields with times, through both
// encodings, conversion, copies and expiry as the clock moves.
TEST(HashObject, FieldDeadlinesAgreeWithAModel) {
  const int64_t before = KeyspaceBytes();
  std::mt19937_64 rng(77);
  for (int round = 0; round < 20; ++round) {
    const HashLimits limits{round % 2 == 0 ? size_t{16} : size_t{100000}, round % 3 == 0 ? size_t{8} : size_t{64}};
    HashObject h;
    struct Field {
      std::string value;
      int64_t deadline = HashObject::kNoDeadline;
    };
    std::map<std::string, Field> m;
    int64_t now = 1000;
    for (int step = 0; step < 1500; ++step) {
      const std::string f = "f" + std::to_string(rng() % 60);
      switch (rng() % 7) {
        case 0: {
          const std::string v = RandomString(rng);
          ASSERT_EQ(h.Set(f, v, limits), m.count(f) == 0);
          m[f] = Field{v};  // HSET drops the deadline
          break;
        }
        case 1: {
          const std::string v = RandomString(rng);
          ASSERT_EQ(h.SetKeepDeadline(f, v, limits), m.count(f) == 0);
          m[f].value = v;  // HINCRBY keeps it
          break;
        }
        case 2:
          ASSERT_EQ(h.Delete(f), m.erase(f) == 1);
          break;
        case 3:
        case 4: {
          const int64_t d = rng() % 5 == 0 ? HashObject::kNoDeadline : now + 1 + static_cast<int64_t>(rng() % 200);
          ASSERT_EQ(h.SetDeadline(f, d), m.count(f) == 1);
          if (m.count(f)) m[f].deadline = d;
          break;
        }
        case 5: {
          now += static_cast<int64_t>(rng() % 30);
          size_t due = 0;
          for (auto it = m.begin(); it != m.end();) {
            if (it->second.deadline != HashObject::kNoDeadline && it->second.deadline <= now) {
              it = m.erase(it);
              due++;
            } else {
              ++it;
            }
          }
          ASSERT_EQ(h.ExpireFields(now), due);
          // After expiry nothing is due: the bound is past now (a listpack's
          // is exact; a hashtable's is its pages' least bound, which a
          // removed deadline may leave low).
          int64_t min = 0;
          for (const auto& [k, fv] : m)
            if (fv.deadline != HashObject::kNoDeadline && (min == 0 || fv.deadline < min)) min = fv.deadline;
          ASSERT_FALSE(h.FieldsDue(now));
          if (h.encoding() == HashObject::Encoding::kListpack) {
            ASSERT_EQ(h.min_deadline(), min);
          }
          break;
        }
        default: {
          int64_t d;
          ASSERT_EQ(h.GetDeadline(f, &d), m.count(f) == 1);
          if (m.count(f)) {
            ASSERT_EQ(d, m[f].deadline);
          }
        }
      }
      ASSERT_EQ(h.size(), m.size());
      // The bound never passes a field's deadline.
      for (const auto& [k, fv] : m)
        if (fv.deadline != HashObject::kNoDeadline) {
          ASSERT_NE(h.min_deadline(), 0);
          ASSERT_LE(h.min_deadline(), fv.deadline);
        }
    }
    std::map<std::string, std::string> values;
    for (const auto& [k, fv] : m) values[k] = fv.value;
    ASSERT_EQ(Contents(h), values);
    HashObject copy = h.Clone();
    ASSERT_EQ(copy.encoding(), h.encoding());
    ASSERT_EQ(Contents(copy), values);
    for (const auto& [k, fv] : m) {
      int64_t d;
      ASSERT_TRUE(copy.GetDeadline(k, &d));
      ASSERT_EQ(d, fv.deadline) << k;
    }
    // Converting keeps the deadlines.
    copy.ConvertToHashtable();
    for (const auto& [k, fv] : m) {
      int64_t d;
      ASSERT_TRUE(copy.GetDeadline(k, &d));
      ASSERT_EQ(d, fv.deadline) << k;
    }
    HashObject moved = std::move(copy);
    ASSERT_EQ(moved.min_deadline() == 0, std::none_of(m.begin(), m.end(), [](const auto& kv) {
      return kv.second.deadline != HashObject::kNoDeadline;
    }));
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(HashObject, ExpiringEveryFieldEmptiesTheHash) {
  const HashLimits limits{4, 64};
  for (int n : {3, 50}) {  // listpack, hashtable (a few long values, stored outside the pages)
    HashObject h;
    for (int i = 0; i < n; ++i) {
      h.Set("f" + std::to_string(i), std::string(n > 4 && i % 2 ? 20000 : 3, 'v'), limits);
      ASSERT_TRUE(h.SetDeadline("f" + std::to_string(i), 100 + i));
    }
    ASSERT_EQ(h.EncodingName(), n > 4 ? "hashtable" : "listpack");
    EXPECT_EQ(h.min_deadline(), 100);
    EXPECT_EQ(h.ExpireFields(99), 0u);
    EXPECT_EQ(h.ExpireFields(100 + n / 2), static_cast<size_t>(n / 2 + 1));
    EXPECT_EQ(h.min_deadline(), 100 + n / 2 + 1);
    EXPECT_EQ(h.ExpireFields(1000), static_cast<size_t>(n - n / 2 - 1));
    EXPECT_EQ(h.size(), 0u);
    EXPECT_EQ(h.min_deadline(), 0);
  }
}

}  // namespace
}  // namespace peregrine
