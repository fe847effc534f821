// Bit operations checked against a model that looks at one bit at a time,
// over random strings and every range of small ones.
#include "core/bits.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace peregrine::bits {
namespace {

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

uint64_t ModelCount(const std::string& s, uint64_t first, uint64_t last) {
  uint64_t n = 0;
  for (uint64_t b = first; b <= last && first <= last; b++) n += (static_cast<uint8_t>(s[b / 8]) >> (7 - b % 8)) & 1;
  return n;
}

int64_t ModelFind(const std::string& s, uint64_t first, uint64_t last, bool bit) {
  for (uint64_t b = first; b <= last && first <= last; b++)
    if (((static_cast<uint8_t>(s[b / 8]) >> (7 - b % 8)) & 1) == bit) return static_cast<int64_t>(b);
  return -1;
}

std::string Random(std::mt19937_64& rng, size_t n, int kind) {
  std::string s(n, '\0');
  for (auto& c : s) {
    // Runs of all-zero and all-one bytes, to reach the word skipping.
    const uint64_t r = rng();
    c = static_cast<char>(kind == 0 ? r : kind == 1 ? (r % 50 == 0 ? r >> 8 : 0) : (r % 50 == 0 ? r >> 8 : 0xFF));
  }
  return s;
}

TEST(Bits, CountAndFindMatchTheModel) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; round++) {
    const std::string s = Random(rng, 1 + rng() % 200, round % 3);
    const uint64_t nbits = s.size() * 8;
    for (int k = 0; k < 40; k++) {
      uint64_t a = rng() % nbits, b = rng() % nbits;
      if (a > b) std::swap(a, b);
      ASSERT_EQ(Count(U(s), a, b), ModelCount(s, a, b));
      ASSERT_EQ(Find(U(s), a, b, true), ModelFind(s, a, b, true));
      ASSERT_EQ(Find(U(s), a, b, false), ModelFind(s, a, b, false));
    }
    EXPECT_EQ(Count(U(s), 1, 0), 0u);
    EXPECT_EQ(Find(U(s), 5, 4, true), -1);
  }
  // Every range of a short string.
  const std::string s = "\x0f\xf0\x00\xff\x81";
  for (uint64_t a = 0; a < 40; a++)
    for (uint64_t b = a; b < 40; b++) {
      ASSERT_EQ(Count(U(s), a, b), ModelCount(s, a, b));
      ASSERT_EQ(Find(U(s), a, b, true), ModelFind(s, a, b, true));
      ASSERT_EQ(Find(U(s), a, b, false), ModelFind(s, a, b, false));
    }
}

TEST(Bits, CombineMatchesTheModel) {
  std::mt19937_64 rng(9);
  for (int round = 0; round < 500; round++) {
    std::vector<std::string> src;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; i++) src.push_back(Random(rng, rng() % 70, 0));
    std::vector<std::string_view> views(src.begin(), src.end());
    for (Op op : {Op::kAnd, Op::kOr, Op::kXor, Op::kNot}) {
      const size_t k = op == Op::kNot ? 1 : views.size();
      const std::string got = Combine(op, std::span<const std::string_view>(views.data(), k));
      size_t want_len = 0;
      for (size_t i = 0; i < k; i++) want_len = std::max(want_len, src[i].size());
      ASSERT_EQ(got.size(), want_len);
      for (size_t i = 0; i < want_len; i++) {
        auto at = [&](size_t j) { return i < src[j].size() ? static_cast<uint8_t>(src[j][i]) : uint8_t{0}; };
        uint8_t want = at(0);
        if (op == Op::kNot) want = static_cast<uint8_t>(~want);
        for (size_t j = 1; j < k; j++) {
          if (op == Op::kAnd) want &= at(j);
          if (op == Op::kOr) want |= at(j);
          if (op == Op::kXor) want ^= at(j);
        }
        ASSERT_EQ(static_cast<uint8_t>(got[i]), want) << i;
      }
    }
  }
}

// A missing key is an empty view with no bytes at all (a null pointer).
TEST(Bits, CombineWithEmptySources) {
  const std::string_view none;
  const std::string b = "\x0f";
  const std::string_view views[] = {none, b, none};
  EXPECT_EQ(Combine(Op::kOr, views), "\x0f");
  EXPECT_EQ(Combine(Op::kAnd, views), std::string(1, '\0'));
  EXPECT_EQ(Combine(Op::kNot, std::span<const std::string_view>(views, 1)), "");
}

TEST(Bits, FieldsRoundTrip) {
  std::mt19937_64 rng(11);
  std::string buf(32, '\0');
  uint8_t* p = reinterpret_cast<uint8_t*>(buf.data());
  for (int round = 0; round < 5000; round++) {
    const int width = 1 + static_cast<int>(rng() % 64);
    const uint64_t offset = rng() % (32 * 8 - 64);
    const std::string before = buf;
    const uint64_t v = width == 64 ? rng() : rng() & ((uint64_t{1} << width) - 1);
    SetUnsigned(p, offset, width, v);
    ASSERT_EQ(GetUnsigned(p, offset, width), v);
    const int64_t sv = GetSigned(p, offset, width);
    if (width < 64 && (v >> (width - 1))) {
      ASSERT_LT(sv, 0);
      ASSERT_EQ(static_cast<uint64_t>(sv) & ((uint64_t{1} << width) - 1), v);
    } else {
      ASSERT_EQ(static_cast<uint64_t>(sv), v);
    }
    // The bits around the field did not move.
    for (uint64_t b = 0; b < 256; b++) {
      if (b < offset || b >= offset + width) {
        ASSERT_EQ(Get(p, b), Get(reinterpret_cast<const uint8_t*>(before.data()), b));
      }
    }
  }
}

TEST(Bits, OverflowAsRedis) {
  uint64_t u;
  int64_t s;
  // u8: 250 + 10 wraps to 4, saturates at 255; 5 - 10 underflows.
  EXPECT_EQ(CheckUnsigned(250, 10, 8, Overflow::kWrap, &u), 1);
  EXPECT_EQ(u, 4u);
  EXPECT_EQ(CheckUnsigned(250, 10, 8, Overflow::kSat, &u), 1);
  EXPECT_EQ(u, 255u);
  EXPECT_EQ(CheckUnsigned(5, -10, 8, Overflow::kSat, &u), -1);
  EXPECT_EQ(u, 0u);
  EXPECT_EQ(CheckUnsigned(5, -10, 8, Overflow::kWrap, &u), 1);
  EXPECT_EQ(u, 251u);
  EXPECT_EQ(CheckUnsigned(5, 10, 8, Overflow::kWrap, &u), 0);
  // SET's check (incr 0): a value too large for the width.
  EXPECT_EQ(CheckUnsigned(300, 0, 8, Overflow::kWrap, &u), 1);
  EXPECT_EQ(u, 44u);
  // i8: 120 + 10 wraps to -126, saturates at 127; -120 - 10 at -128.
  EXPECT_EQ(CheckSigned(120, 10, 8, Overflow::kWrap, &s), 1);
  EXPECT_EQ(s, -126);
  EXPECT_EQ(CheckSigned(120, 10, 8, Overflow::kSat, &s), 1);
  EXPECT_EQ(s, 127);
  EXPECT_EQ(CheckSigned(-120, -10, 8, Overflow::kSat, &s), -1);
  EXPECT_EQ(s, -128);
  EXPECT_EQ(CheckSigned(-120, -10, 8, Overflow::kWrap, &s), 1);
  EXPECT_EQ(s, 126);
  EXPECT_EQ(CheckSigned(-100, 10, 8, Overflow::kWrap, &s), 0);
  // i64 at its ends.
  EXPECT_EQ(CheckSigned(INT64_MAX, 1, 64, Overflow::kSat, &s), 1);
  EXPECT_EQ(s, INT64_MAX);
  EXPECT_EQ(CheckSigned(INT64_MAX, 1, 64, Overflow::kWrap, &s), 1);
  EXPECT_EQ(s, INT64_MIN);
  EXPECT_EQ(CheckSigned(INT64_MIN, -1, 64, Overflow::kSat, &s), -1);
  EXPECT_EQ(s, INT64_MIN);
  EXPECT_EQ(CheckSigned(0, INT64_MIN, 64, Overflow::kSat, &s), 0);
  // u63 at its end.
  EXPECT_EQ(CheckUnsigned((uint64_t{1} << 63) - 1, 1, 63, Overflow::kSat, &u), 1);
  EXPECT_EQ(u, (uint64_t{1} << 63) - 1);
}

}  // namespace
}  // namespace peregrine::bits
