// Unit tests for Redis-compatible number parsing and formatting.
#include "core/numbers.h"

#include <gtest/gtest.h>

#include <climits>

namespace peregrine {
namespace {

TEST(ParseInt64, AcceptsRedisIntegers) {
  int64_t v;
  ASSERT_TRUE(ParseInt64("0", &v));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(ParseInt64("-1", &v));
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(ParseInt64("9223372036854775807", &v));
  EXPECT_EQ(v, LLONG_MAX);
  ASSERT_TRUE(ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, LLONG_MIN);
}

TEST(ParseInt64, RejectsWhatRedisRejects) {
  int64_t v;
  for (const char* bad : {"", "-", "01", "-0", "+1", " 1", "1 ", "1a", "9223372036854775808",
                          "-9223372036854775809", "99999999999999999999", "1.0"}) {
    EXPECT_FALSE(ParseInt64(bad, &v)) << bad;
  }
}

TEST(FormatLongDoubleHuman, StripsTrailingZeros) {
  std::string s;
  ASSERT_TRUE(FormatLongDoubleHuman(10.5L + 0.1L, &s));
  EXPECT_EQ(s, "10.6");
  ASSERT_TRUE(FormatLongDoubleHuman(3.0e3L, &s));
  EXPECT_EQ(s, "3000");
  ASSERT_TRUE(FormatLongDoubleHuman(-0.0L, &s));
  EXPECT_EQ(s, "0");
  EXPECT_FALSE(FormatLongDoubleHuman(1.0L / 0.0L, &s));
}

TEST(ParseMemorySize, Units) {
  EXPECT_EQ(ParseMemorySize("1k"), 1000u);
  EXPECT_EQ(ParseMemorySize("1kb"), 1024u);
  EXPECT_EQ(ParseMemorySize("512MB"), 512u * 1024 * 1024);
  EXPECT_EQ(ParseMemorySize("2g"), 2000000000u);
  EXPECT_EQ(ParseMemorySize("12"), 12u);
  EXPECT_FALSE(ParseMemorySize("x"));
  EXPECT_FALSE(ParseMemorySize("1tb"));
  EXPECT_FALSE(ParseMemorySize(""));
}

}  // namespace
}  // namespace peregrine
