// Unit tests for CRC16 and key -> cluster hash slot mapping (Redis Cluster spec).
#include "core/slot.h"

#include <gtest/gtest.h>

#include <string>

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
