// Unit tests for Redis-compatible number parsing and formatting.
#include "core/numbers.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include <climits>
#include <cmath>
#include <limits>
#include <string>

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

TEST(ParseUint64, AcceptsDigitsWithLeadingZeros) {
  uint64_t v;
  ASSERT_TRUE(ParseUint64("0", &v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(ParseUint64("42", &v));
  EXPECT_EQ(v, 42u);
  ASSERT_TRUE(ParseUint64("007", &v));
  EXPECT_EQ(v, 7u);
  ASSERT_TRUE(ParseUint64("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
}

TEST(ParseUint64, RejectsSignsSpacesJunkAndOverflow) {
  uint64_t v = 12345;
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1a", "0x10", "1.0", "18446744073709551616",
                          "99999999999999999999999"}) {
    EXPECT_FALSE(ParseUint64(bad, &v)) << bad;
  }
  EXPECT_FALSE(ParseUint64(std::string_view("1\0", 2), &v));
}

TEST(ParseLongDouble, AcceptsWhatStrtoldAccepts) {
  long double v;
  ASSERT_TRUE(ParseLongDouble("1.5", &v));
  EXPECT_EQ(v, 1.5L);
  ASSERT_TRUE(ParseLongDouble("-2", &v));
  EXPECT_EQ(v, -2.0L);
  ASSERT_TRUE(ParseLongDouble("5.0e3", &v));
  EXPECT_EQ(v, 5000.0L);
  ASSERT_TRUE(ParseLongDouble("1E-2", &v));
  EXPECT_NEAR(static_cast<double>(v), 0.01, 1e-15);
  ASSERT_TRUE(ParseLongDouble(".5", &v));
  EXPECT_EQ(v, 0.5L);
  ASSERT_TRUE(ParseLongDouble("5.", &v));
  EXPECT_EQ(v, 5.0L);
  ASSERT_TRUE(ParseLongDouble("+3", &v));
  EXPECT_EQ(v, 3.0L);
}

TEST(ParseLongDouble, AcceptsInfinity) {
  long double v = 0;
  ASSERT_TRUE(ParseLongDouble("inf", &v));
  EXPECT_TRUE(std::isinf(v));
  EXPECT_GT(v, 0);
  ASSERT_TRUE(ParseLongDouble("-inf", &v));
  EXPECT_TRUE(std::isinf(v));
  EXPECT_LT(v, 0);
  ASSERT_TRUE(ParseLongDouble("+inf", &v));
  EXPECT_TRUE(std::isinf(v));
}

TEST(ParseLongDouble, RejectsSpacesJunkNanAndOverflow) {
  long double v = 7;
  for (const char* bad : {"", " 1", "\t1", "\n1", "1 ", "1x", "1.5abc", "abc", "nan", "NaN", "-nan",
                          "1e99999", "-1e99999", "1e-99999"}) {
    EXPECT_FALSE(ParseLongDouble(bad, &v)) << bad;
  }
  EXPECT_FALSE(ParseLongDouble(std::string_view("1\0", 2), &v));
  EXPECT_EQ(v, 7) << "a rejected parse must not write the output";
  // Redis refuses numbers of MAX_LONG_DOUBLE_CHARS (5k) or more characters.
  EXPECT_FALSE(ParseLongDouble(std::string(6000, '1'), &v));
}

TEST(ParseDouble, AcceptsAndRejectsLikeString2d) {
  double v;
  ASSERT_TRUE(ParseDouble("5.0e3", &v));
  EXPECT_EQ(v, 5000.0);
  ASSERT_TRUE(ParseDouble("-0.25", &v));
  EXPECT_EQ(v, -0.25);
  ASSERT_TRUE(ParseDouble("inf", &v));
  EXPECT_TRUE(std::isinf(v));
  ASSERT_TRUE(ParseDouble("-inf", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  for (const char* bad :
       {"", " 1", "\t2.5", "1 ", "1.0x", "nan", "-nan", "NAN", "1e400", "-1e400", "1e-400"}) {
    EXPECT_FALSE(ParseDouble(bad, &v)) << bad;
  }
}

TEST(FormatDouble, ShortestRoundTripForm) {
  EXPECT_EQ(FormatDouble(1.5), "1.5");
  EXPECT_EQ(FormatDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatDouble(123.456), "123.456");
  EXPECT_EQ(FormatDouble(3.0), "3");
  EXPECT_EQ(FormatDouble(-17.0), "-17");
  EXPECT_EQ(FormatDouble(100.0), "100");
  EXPECT_EQ(FormatDouble(0.001), "0.001");
  EXPECT_EQ(FormatDouble(0.0), "0");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
  EXPECT_EQ(FormatDouble(1e300), "1e+300");
  EXPECT_EQ(FormatDouble(1e21), "1e+21");
  EXPECT_EQ(FormatDouble(1.234e-10), "1.234e-10");
  EXPECT_EQ(FormatDouble(1.7976931348623157e308), "1.7976931348623157e+308");
  // Every finite output parses back to the same double.
  for (double d : {1.5, 0.1, 1.0 / 3, 2.0 / 3, 1e-300, 6.02214076e23, -9.87654321e-5}) {
    double back;
    ASSERT_TRUE(ParseDouble(FormatDouble(d), &back)) << d;
    EXPECT_EQ(back, d);
  }
}

TEST(FormatDouble, RandomDoublesRoundTripWithinTheBuffer) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    if (std::isnan(d)) continue;
    if (i % 2) d = std::ldexp(static_cast<double>(rng() % 1000000) - 500000, static_cast<int>(rng() % 80) - 40);
    char buf[kMaxDoubleChars];
    const size_t n = FormatDouble(d, buf);
    ASSERT_LE(n, kMaxDoubleChars);
    const std::string s(buf, n);
    ASSERT_EQ(s, FormatDouble(d));
    if (std::isinf(d)) continue;
    double back;
    ASSERT_TRUE(ParseDouble(s, &back)) << s;
    ASSERT_EQ(back, d) << s;
  }
}

TEST(FormatDouble, InfAndNan) {
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::quiet_NaN()), "nan");
}

// Redis 7.2's d2string prints a double that holds an integer in
// [-LLONG_MAX/2, LLONG_MAX/2] with ll2string, and otherwise uses fpconv_dtoa
// (grisu), which writes plain decimals for exponents down to 1e-6 and a
// one-digit exponent with no zero padding ("1.5e-7", not "1.5e-07").
TEST(FormatDouble, MatchesRedisD2stringForIntegersAndSmallValues) {
  EXPECT_EQ(FormatDouble(1e6), "1000000");
  EXPECT_EQ(FormatDouble(1e10), "10000000000");
  EXPECT_EQ(FormatDouble(-1e6), "-1000000");
  EXPECT_EQ(FormatDouble(1e18), "1000000000000000000");
  EXPECT_EQ(FormatDouble(0.0001), "0.0001");
  EXPECT_EQ(FormatDouble(1.5e-5), "0.000015");
  EXPECT_EQ(FormatDouble(1.5e-7), "1.5e-7");
  EXPECT_EQ(FormatDouble(5e18), "5e+18");
}

TEST(FormatInt64, ExtremesAndSmallValues) {
  char buf[32];
  size_t n = FormatInt64(LLONG_MIN, buf);
  EXPECT_EQ(std::string(buf, n), "-9223372036854775808");
  EXPECT_EQ(n, 20u);
  n = FormatInt64(LLONG_MAX, buf);
  EXPECT_EQ(std::string(buf, n), "9223372036854775807");
  EXPECT_EQ(n, 19u);
  n = FormatInt64(0, buf);
  EXPECT_EQ(std::string(buf, n), "0");
  n = FormatInt64(-1, buf);
  EXPECT_EQ(std::string(buf, n), "-1");
  EXPECT_EQ(Int64ToString(LLONG_MIN), "-9223372036854775808");
  EXPECT_EQ(Int64ToString(LLONG_MAX), "9223372036854775807");
  EXPECT_EQ(Int64ToString(1000), "1000");
}

TEST(FormatInt64, RoundTripsThroughParseInt64) {
  for (int64_t v : {LLONG_MIN, LLONG_MIN + 1, -1000000007LL, -1LL, 0LL, 1LL, 10LL, 99LL,
                    123456789012345LL, LLONG_MAX - 1, LLONG_MAX}) {
    int64_t back;
    ASSERT_TRUE(ParseInt64(Int64ToString(v), &back)) << v;
    EXPECT_EQ(back, v);
  }
}

}  // namespace
}  // namespace peregrine
