// Unit tests for CRC16 and key -> cluster hash slot mapping (Redis Cluster spec).
#include "core/slot.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace peregrine {
namespace {

TEST(Crc16, XmodemTestVector) {
  // The reference check value of CRC-16/XMODEM (the one in Redis's crc16.c).
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

TEST(Crc16, BinarySafe) {
  EXPECT_NE(Crc16(std::string("a\0b", 3)), Crc16("ab"));
  EXPECT_EQ(Crc16(std::string("a\0b", 3)), Crc16(std::string("a\0b", 3)));
}

// Bit by bit, as the polynomial says: the reference the sliced tables must
// agree with, at every length (whole blocks of 8 and the bytes after).
uint16_t Crc16BitByBit(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) {
    crc = static_cast<uint16_t>(crc ^ (c << 8));
    for (int bit = 0; bit < 8; bit++)
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

TEST(Crc16, SlicedMatchesBitByBitAtEveryLength) {
  uint32_t x = 12345;
  for (size_t len = 0; len <= 70; len++) {
    for (int trial = 0; trial < 20; trial++) {
      std::string s(len, '\0');
      for (char& c : s) {
        x = x * 1103515245 + 12345;
        c = static_cast<char>(x >> 16);
      }
      ASSERT_EQ(Crc16(s), Crc16BitByBit(s)) << "length " << len;
    }
  }
}

TEST(SlotOf, KnownSlots) {
  // Values as CLUSTER KEYSLOT reports them.
  EXPECT_EQ(SlotOf("foo"), 12182);
  EXPECT_EQ(SlotOf("bar"), 5061);
  EXPECT_EQ(SlotOf("somekey"), 11058);
  EXPECT_EQ(SlotOf("hello"), 866);
  EXPECT_EQ(SlotOf("123456789"), 0x31C3 & 0x3FFF);
  EXPECT_EQ(SlotOf(""), 0);
}

TEST(SlotOf, AlwaysBelowNumSlots) {
  for (int i = 0; i < 5000; i++) {
    std::string key = "key:" + std::to_string(i);
    EXPECT_LT(SlotOf(key), kNumSlots);
    EXPECT_EQ(SlotOf(key), Crc16(key) % kNumSlots);
  }
}

TEST(SlotOf, HashTagsGroupKeys) {
  EXPECT_EQ(SlotOf("{user1000}.following"), SlotOf("{user1000}.followers"));
  EXPECT_EQ(SlotOf("{user1000}.following"), SlotOf("user1000"));
  EXPECT_EQ(SlotOf("{user1000}"), SlotOf("user1000"));
  EXPECT_EQ(SlotOf("prefix{foo}suffix"), SlotOf("foo"));
  EXPECT_EQ(SlotOf("{foo}"), 12182);
}

TEST(SlotOf, EmptyTagHashesWholeKey) {
  // The first '{' is followed directly by '}': no tag, the whole key counts.
  EXPECT_EQ(SlotOf("foo{}{bar}"), Crc16("foo{}{bar}") & 0x3FFF);
  EXPECT_NE(SlotOf("foo{}{bar}"), SlotOf("bar"));
  EXPECT_EQ(SlotOf("{}"), Crc16("{}") & 0x3FFF);
}

TEST(SlotOf, TagIsBetweenFirstOpenAndNextClose) {
  EXPECT_EQ(SlotOf("foo{{bar}}zap"), Crc16("{bar") & 0x3FFF);
  EXPECT_EQ(SlotOf("foo{{bar}}zap"), SlotOf("{{bar}"));
  EXPECT_EQ(SlotOf("foo{bar}{zap}"), SlotOf("bar"));
  EXPECT_EQ(SlotOf("foo{bar}{zap}"), Crc16("bar") & 0x3FFF);
}

TEST(SlotOf, UnclosedOrReversedBracesHashWholeKey) {
  EXPECT_EQ(SlotOf("foo{bar"), Crc16("foo{bar") & 0x3FFF);
  EXPECT_EQ(SlotOf("foo}bar{"), Crc16("foo}bar{") & 0x3FFF);
  EXPECT_EQ(SlotOf("{"), Crc16("{") & 0x3FFF);
  EXPECT_EQ(SlotOf("}{x}"), SlotOf("x"));
}

}  // namespace
}  // namespace peregrine
