// Unit tests for CompactKey: every encoding round-trips, equality and hashing
// agree between lookup probes and stored keys, and flags stay out of both.
#include "core/compact_key.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/memory.h"

namespace peregrine {
namespace {

// A stored key made from `s`, released at scope end.
struct Stored {
  explicit Stored(std::string_view s) { key.Init(CompactKey::MakeProbe(s)); }
  ~Stored() { key.Release(); }
  CompactKey key;
};

std::string RandomKey(std::mt19937_64& rng, size_t len, bool ascii) {
  std::string s(len, '\0');
  for (char& c : s) c = static_cast<char>(ascii ? rng() % 128 : rng() % 256);
  return s;
}

TEST(CompactKey, EncodingsByLengthAndContent) {
  EXPECT_EQ(Stored("").key.kind(), 0);
  EXPECT_EQ(Stored("abc").key.kind(), 3);
  EXPECT_EQ(Stored(std::string(15, 'x')).key.kind(), 15);
  EXPECT_EQ(Stored("key:000000000042").key.kind(), CompactKey::kKindPacked16);
  EXPECT_EQ(Stored("memtier-12345678x").key.kind(), CompactKey::kKindPacked17);
  EXPECT_EQ(Stored(std::string(18, 'x')).key.kind(), CompactKey::kKindHeap);
  // 16/17 bytes with a byte >= 0x80 anywhere cannot be packed.
  for (size_t len : {16, 17})
    for (size_t at = 0; at < len; at++) {
      std::string s(len, 'a');
      s[at] = '\xC3';
      EXPECT_EQ(Stored(s).key.kind(), CompactKey::kKindHeap) << len << " " << at;
    }
  EXPECT_FALSE(Stored("key:000000000042").key.is_heap());
  EXPECT_EQ(Stored("key:000000000042").key.HeapBytes(), 0u);
  EXPECT_GE(Stored(std::string(100, 'x')).key.HeapBytes(), 100u);
}

TEST(CompactKey, EveryLengthRoundTripsAndMatchesOnlyItself) {
  std::mt19937_64 rng(42);
  for (size_t len = 0; len <= 40; len++) {
    for (bool ascii : {true, false}) {
      for (int rep = 0; rep < 50; rep++) {
        const std::string s = RandomKey(rng, len, ascii);
        Stored k(s);
        EXPECT_EQ(k.key.size(), len);
        char scratch[CompactKey::kScratchSize];
        EXPECT_EQ(std::string(k.key.View(scratch)), s);
        EXPECT_EQ(k.key.ToString(), s);
        EXPECT_TRUE(k.key.Matches(CompactKey::MakeProbe(s)));
        // The hash of the stored key agrees with the probe's in bits 24..63.
        EXPECT_EQ(k.key.StoredHash() >> 24, CompactKey::Hash(s) >> 24) << len;
        // A key differing in one byte, or one byte shorter or longer, does not match.
        if (len > 0) {
          std::string t = s;
          t[rng() % len] ^= static_cast<char>(1 + rng() % 127);
          EXPECT_FALSE(k.key.Matches(CompactKey::MakeProbe(t)));
          EXPECT_FALSE(k.key.Matches(CompactKey::MakeProbe(s.substr(0, len - 1))));
        }
        EXPECT_FALSE(k.key.Matches(CompactKey::MakeProbe(s + "x")));
        EXPECT_FALSE(k.key.Matches(CompactKey::MakeProbe(s + '\0')));
      }
    }
  }
}

TEST(CompactKey, PackedKeysKeepEveryCharacterBit) {
  // Each character position and each of its 7 bits is independent.
  for (size_t len : {16, 17}) {
    std::set<std::string> seen;
    for (size_t pos = 0; pos < len; pos++)
      for (int bit = 0; bit < 7; bit++) {
        std::string s(len, '\0');
        s[pos] = static_cast<char>(1 << bit);
        Stored k(s);
        ASSERT_EQ(k.key.kind(), len == 16 ? CompactKey::kKindPacked16 : CompactKey::kKindPacked17);
        EXPECT_EQ(k.key.ToString(), s);
        seen.insert(k.key.ToString());
        Stored zero(std::string(len, '\0'));
        EXPECT_FALSE(zero.key.Matches(CompactKey::MakeProbe(s)));
      }
    EXPECT_EQ(seen.size(), len * 7);
  }
  // 16 and 17 characters with the same first 16 differ.
  EXPECT_FALSE(Stored(std::string(16, 'a')).key.Matches(CompactKey::MakeProbe(std::string(16, 'a') + '\0')));
}

TEST(CompactKey, PackedKeysRoundTripWithEveryBitPattern) {
  // Many bits set at once (the single-bit test above cannot see one
  // position's bits disturbing another's), including all-ones characters.
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20000; round++) {
    const size_t len = 16 + (round & 1);
    std::string s(len, '\0');
    for (auto& c : s) c = static_cast<char>(round < 4 ? 0x7F : rng() & 0x7F);
    Stored k(s);
    ASSERT_EQ(k.key.kind(), len == 16 ? CompactKey::kKindPacked16 : CompactKey::kKindPacked17);
    ASSERT_EQ(k.key.ToString(), s);
    ASSERT_EQ(k.key.size(), len);
    ASSERT_TRUE(k.key.Matches(CompactKey::MakeProbe(s)));
    ASSERT_EQ(k.key.StoredHash() >> 24, CompactKey::Hash(s) >> 24);
  }
}

TEST(CompactKey, FlagsAreNotPartOfTheKey) {
  for (const std::string& s : {std::string("abc"), std::string("key:000000000042"), std::string(40, 'z')}) {
    Stored k(s);
    const uint64_t h = k.key.StoredHash();
    k.key.set_flags(CompactKey::kFlagTtl);
    EXPECT_EQ(k.key.flags(), CompactKey::kFlagTtl);
    EXPECT_TRUE(k.key.Matches(CompactKey::MakeProbe(s)));
    EXPECT_EQ(k.key.StoredHash(), h);
    EXPECT_EQ(k.key.ToString(), s);
    EXPECT_EQ(k.key.size(), s.size());
    k.key.set_flags(0);
    EXPECT_EQ(k.key.flags(), 0);
    EXPECT_TRUE(k.key.Matches(CompactKey::MakeProbe(s)));
  }
}

TEST(CompactKey, HashesSpreadOverTheBitsTheTableUses) {
  // Sequential benchmark-style keys: the table's bits (tag 24..31, home
  // and directory 32..63) take many distinct values.
  std::set<uint64_t> tags, tops;
  for (int i = 0; i < 4096; i++) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "key:%012d", i);
    const uint64_t h = CompactKey::Hash(buf);
    tags.insert((h >> 24) & 0xFF);
    tops.insert(h >> 52);
  }
  EXPECT_GE(tags.size(), 250u);  // 256 values, 4096 draws
  EXPECT_GT(tops.size(), 2500u);  // 4096 keys into 4096 buckets: ~2,590 expected
}

TEST(CompactKey, HeapKeysAreCountedAndReleased) {
  const int64_t before = KeyspaceBytes();
  {
    CompactKey k;
    k.Init(CompactKey::MakeProbe(std::string(1000, 'k')));
    EXPECT_GE(KeyspaceBytes() - before, 1000);
    k.Release();
    EXPECT_EQ(k.size(), 0u);
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(CompactKey, Holes) {
  CompactKey k;
  k.MakeHole(1234);
  EXPECT_TRUE(k.is_hole());
  EXPECT_EQ(k.next_free(), 1234u);
  EXPECT_FALSE(k.Matches(CompactKey::MakeProbe("")));
}

}  // namespace
}  // namespace peregrine
