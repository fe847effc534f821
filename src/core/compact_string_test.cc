// Unit tests for CompactString (inline / heap / integer encodings, Redis's
// OBJECT ENCODING names, APPEND and SETRANGE growth) and for Value's use of it.
#include "core/compact_string.h"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/value.h"

namespace peregrine {
namespace {

using Encoding = CompactString::Encoding;
using namespace std::string_literals;

constexpr size_t kMB = 1024 * 1024;

// The string form of any encoding.
std::string StrOf(const CompactString& c) {
  char scratch[CompactString::kIntBufferSize];
  return std::string(c.View(scratch));
}

// n bytes covering every byte value (NUL and 0xFF included), seeded so that
// strings of different sizes differ.
std::string Pattern(size_t n, unsigned seed = 0) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>((i * 131 + seed * 7 + n) & 0xFF);
  return s;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& ch : s) ch = static_cast<char>(rng() & 0xFF);
  return s;
}

// Whether p points into the 16 bytes of c itself (i.e. the data is inline).
bool PointsInside(const CompactString& c, const void* p) {
  auto* base = reinterpret_cast<const char*>(&c);
  auto* q = static_cast<const char*>(p);
  return q >= base && q < base + sizeof(CompactString);
}

// The kinds of value a test may start from.
enum class Kind { kEmpty, kInline, kInline15, kHeapEmbstr, kHeapRaw45, kInt, kNegInt, kRawAppended, kLarge };

struct Sample {
  Kind kind;
  const char* name;
  std::string text;  // the string form
  CompactString Make() const {
    switch (kind) {
      case Kind::kEmpty: return CompactString();
      case Kind::kInline: return CompactString(text);
      case Kind::kInline15: return CompactString(text);
      case Kind::kHeapEmbstr: return CompactString(text);
      case Kind::kHeapRaw45: return CompactString(text);
      case Kind::kInt: return CompactString::FromValue(text);
      case Kind::kNegInt: return CompactString::FromValue(text);
      case Kind::kRawAppended: {
        CompactString c(text.substr(0, 3));
        c.Append(std::string_view(text).substr(3));
        return c;
      }
      case Kind::kLarge: return CompactString(text);
    }
    return CompactString();
  }
};

std::vector<Sample> Samples() {
  return {
      {Kind::kEmpty, "empty", ""},
      {Kind::kInline, "inline", "hello"},
      {Kind::kInline15, "inline15", "abcdefghijklmno"},
      {Kind::kHeapEmbstr, "heap-embstr", "this string is on the heap (30)"},
      {Kind::kHeapRaw45, "heap-raw45", std::string(45, 'r')},
      {Kind::kInt, "int", "123456"},
      {Kind::kNegInt, "neg-int", "-9223372036854775808"},
      {Kind::kRawAppended, "raw-appended", "abc-appended-tail"},
      {Kind::kLarge, "large", RandomBytes(kMB, 7)},
  };
}

// ---------------------------------------------------------------------------
// Layout

TEST(CompactStringTest, SizeofIs16) {
  static_assert(sizeof(CompactString) == 16);
  EXPECT_EQ(sizeof(CompactString), 16u);
  EXPECT_EQ(CompactString::kInlineCapacity, 14u);
  EXPECT_GE(CompactString::kIntBufferSize, 21u);  // FormatInt64 needs 21 bytes
}

TEST(CompactStringTest, TypeTraits) {
  EXPECT_TRUE(std::is_nothrow_move_constructible_v<CompactString>);
  EXPECT_TRUE(std::is_nothrow_move_assignable_v<CompactString>);
  EXPECT_TRUE(std::is_copy_constructible_v<CompactString>);
  EXPECT_TRUE(std::is_copy_assignable_v<CompactString>);
  EXPECT_FALSE((std::is_convertible_v<std::string_view, CompactString>));  // explicit
}

// ---------------------------------------------------------------------------
// Construction and round trips

TEST(CompactStringTest, DefaultIsEmptyEmbstr) {
  CompactString c;
  EXPECT_EQ(c.size(), 0u);
  EXPECT_TRUE(c.empty());
  EXPECT_FALSE(c.is_int());
  EXPECT_EQ(StrOf(c), "");
  EXPECT_TRUE(c.Equals(""));
  EXPECT_FALSE(c.Equals("a"));
  EXPECT_EQ(c.encoding(), Encoding::kEmbstr);
  EXPECT_EQ(c.HeapBytes(), 0u);
  EXPECT_TRUE(PointsInside(c, c.data_address()));
}

TEST(CompactStringTest, RoundTripEverySize0To40) {
  for (size_t n = 0; n <= 40; n++) {
    SCOPED_TRACE("size " + std::to_string(n));
    const std::string s = Pattern(n);
    CompactString c(s);
    EXPECT_FALSE(c.is_int());
    EXPECT_EQ(c.size(), n);
    EXPECT_EQ(c.empty(), n == 0);
    char scratch[CompactString::kIntBufferSize];
    std::string_view v = c.View(scratch);
    EXPECT_EQ(v, s);
    EXPECT_TRUE(c.Equals(s));
    EXPECT_EQ(c.encoding(), Encoding::kEmbstr);  // <= 44 bytes
    if (n <= CompactString::kInlineCapacity) {
      EXPECT_EQ(c.HeapBytes(), 0u);
      EXPECT_TRUE(PointsInside(c, c.data_address()));
      EXPECT_TRUE(PointsInside(c, v.data()));  // not copied into scratch
    } else if (n == CompactString::kPackedSize) {
      // Pattern(15) has bytes above 0x7F: binary 15-byte strings go to the heap.
      EXPECT_GE(c.HeapBytes(), n);
      EXPECT_EQ(c.data_address(), static_cast<const void*>(v.data()));
    } else {
      EXPECT_GE(c.HeapBytes(), n);
      EXPECT_FALSE(PointsInside(c, c.data_address()));
      EXPECT_EQ(c.data_address(), static_cast<const void*>(v.data()));  // not copied
    }
  }
}

TEST(CompactStringTest, RoundTripSourceBufferReused) {
  // The source buffer is overwritten after construction: the copy is owned.
  for (size_t n : {0u, 1u, 15u, 16u, 44u, 45u, 1000u}) {
    std::string buf = Pattern(n, 3);
    const std::string expected = buf;
    CompactString c(buf);
    std::fill(buf.begin(), buf.end(), 'Z');
    EXPECT_EQ(StrOf(c), expected) << n;
  }
}

TEST(CompactStringTest, RoundTripLarge) {
  for (size_t n : {kMB - 1, kMB, kMB + 1, 3 * kMB + 17}) {
    SCOPED_TRACE("size " + std::to_string(n));
    const std::string s = RandomBytes(n, static_cast<uint32_t>(n));
    CompactString c(s);
    EXPECT_EQ(c.size(), n);
    EXPECT_TRUE(StrOf(c) == s);
    EXPECT_TRUE(StrOf(c) == s);
    EXPECT_TRUE(c.Equals(s));
    EXPECT_EQ(c.encoding(), Encoding::kRaw);
    EXPECT_GE(c.HeapBytes(), n);
    std::string other = s;
    other[n / 2] = static_cast<char>(other[n / 2] ^ 1);
    EXPECT_FALSE(c.Equals(other));
  }
}

TEST(CompactStringTest, InlineHeapBoundary) {
  const std::string s15(15, 'a');
  const std::string s16(16, 'a');
  CompactString c15(s15), c16(s16);
  EXPECT_EQ(c15.HeapBytes(), 0u);
  EXPECT_TRUE(PointsInside(c15, c15.data_address()));
  EXPECT_EQ(StrOf(c15), s15);
  EXPECT_EQ(c15.size(), 15u);
  EXPECT_GE(c16.HeapBytes(), 16u);
  EXPECT_FALSE(PointsInside(c16, c16.data_address()));
  EXPECT_EQ(StrOf(c16), s16);
  EXPECT_EQ(c16.size(), 16u);
  EXPECT_EQ(c15.encoding(), Encoding::kEmbstr);
  EXPECT_EQ(c16.encoding(), Encoding::kEmbstr);
  EXPECT_FALSE(c15.Equals(s16));
  EXPECT_FALSE(c16.Equals(s15));
}

// 15-byte strings: ASCII ones are packed inline (so that byte 14 stays the
// owner's), binary ones go to the heap; both read back exactly.
TEST(CompactStringTest, FifteenBytePackedOrHeap) {
  std::mt19937 rng(15);
  for (int i = 0; i < 2000; i++) {
    std::string s(15, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() & 0x7F);  // NUL and DEL included
    CompactString c(s);
    ASSERT_EQ(StrOf(c), s);
    ASSERT_EQ(c.size(), 15u);
    ASSERT_EQ(c.HeapBytes(), 0u);
    ASSERT_TRUE(c.Equals(s));
    ASSERT_EQ(c.encoding(), Encoding::kEmbstr);
    std::string other = s;
    other[static_cast<size_t>(i % 15)] ^= 1;
    ASSERT_FALSE(c.Equals(other));
    CompactString copy(c);
    ASSERT_EQ(StrOf(copy), s);
  }
  for (size_t pos = 0; pos < 15; pos++) {
    std::string s(15, 'a');
    s[pos] = static_cast<char>(0x80 | pos);
    CompactString c(s);
    EXPECT_EQ(StrOf(c), s);
    EXPECT_GE(c.HeapBytes(), 15u) << pos;
  }
  // Appending to a packed string unpacks it.
  CompactString a(std::string(15, 'q'));
  a.Append("r");
  EXPECT_EQ(StrOf(a), std::string(15, 'q') + "r");
  EXPECT_EQ(a.encoding(), Encoding::kRaw);
  CompactString m(std::string(15, 'q'));
  m.MutableBytes(15)[0] = 'Q';
  EXPECT_EQ(StrOf(m), "Q" + std::string(14, 'q'));
}

// Byte 14 is the owner's: every encoding leaves it alone; construction
// zeroes it, copies and moves carry it, assignment keeps the target's.
TEST(CompactStringTest, SpareByteBelongsToTheOwner) {
  const std::vector<std::string> values = {"", "abc", std::string(14, 'x'), std::string(15, 'y'),
                                           std::string(16, 'z'), std::string(100, 'w'), "12345"};
  for (const std::string& s : values) {
    SCOPED_TRACE(s);
    CompactString c = CompactString::FromValue(s);
    EXPECT_EQ(c.spare(), 0);
    c.set_spare(0xA7);
    EXPECT_EQ(StrOf(c), s);
    c.Append("tail");
    EXPECT_EQ(c.spare(), 0xA7);
    EXPECT_EQ(StrOf(c), s + "tail");
    c.MutableBytes(200);
    EXPECT_EQ(c.spare(), 0xA7);
    CompactString copy(c);
    EXPECT_EQ(copy.spare(), 0xA7);
    CompactString moved(std::move(copy));
    EXPECT_EQ(moved.spare(), 0xA7);
    moved = CompactString::FromInt(7);
    EXPECT_EQ(moved.spare(), 0xA7);
    EXPECT_EQ(StrOf(moved), "7");
    moved = CompactString(std::string(15, 'p'));
    EXPECT_EQ(moved.spare(), 0xA7);
    EXPECT_EQ(StrOf(moved), std::string(15, 'p'));
    CompactString target("t");
    target.set_spare(3);
    target = c;
    EXPECT_EQ(target.spare(), 3);
    EXPECT_EQ(StrOf(target), StrOf(c));
  }
  Value v = Value::String("hello");
  v.set_access(9);
  v = Value::String(std::string(40, 'x'));
  EXPECT_EQ(v.access(), 9) << "replacing a key's value keeps its access data";
}

TEST(CompactStringTest, BinaryDataWithNulBytes) {
  const std::vector<std::string> inputs = {
      "\0"s,
      "a\0b"s,
      "\0\0\0"s,
      std::string(15, '\0'),
      std::string(16, '\0'),
      "\xff\xfe\0\x01\x7f\x80"s,
      "0123456789abcd\0"s,        // 15, NUL last
      "0123456789abcde\0"s,       // 16, NUL last
      "\0" + std::string(40, 'x'),  // NUL first, heap, raw-size
      RandomBytes(100, 1),
  };
  for (const auto& s : inputs) {
    SCOPED_TRACE("size " + std::to_string(s.size()));
    CompactString c(s);
    EXPECT_EQ(c.size(), s.size());
    EXPECT_EQ(StrOf(c), s);
    EXPECT_EQ(StrOf(c), s);
    EXPECT_TRUE(c.Equals(s));
    CompactString v = CompactString::FromValue(s);
    EXPECT_FALSE(v.is_int());
    EXPECT_EQ(StrOf(v), s);
  }
  CompactString c("a\0b"s);
  EXPECT_FALSE(c.Equals("a"));
  EXPECT_FALSE(c.Equals("a\0c"s));
  EXPECT_FALSE(c.Equals("a\0"s));
  EXPECT_FALSE(c.Equals("a\0b\0"s));
  CompactString nul15(std::string(15, '\0'));
  EXPECT_FALSE(nul15.Equals(std::string(14, '\0')));
  EXPECT_FALSE(nul15.Equals(std::string(16, '\0')));
  EXPECT_TRUE(nul15.Equals(std::string(15, '\0')));
}

TEST(CompactStringTest, ConstructorNeverIntEncodes) {
  for (const char* s : {"0", "1", "123", "-5", "9223372036854775807"}) {
    CompactString c{std::string_view(s)};
    EXPECT_FALSE(c.is_int()) << s;
    EXPECT_EQ(StrOf(c), s);
    EXPECT_EQ(c.encoding(), Encoding::kEmbstr) << s;
    EXPECT_TRUE(c.Equals(s));
  }
}

TEST(CompactStringTest, EmptyInputs) {
  const std::string_view empty = "";
  CompactString c(empty);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(StrOf(c), "");
  EXPECT_TRUE(c.Equals(empty));
  EXPECT_EQ(c.encoding(), Encoding::kEmbstr);
  CompactString v = CompactString::FromValue(empty);
  EXPECT_FALSE(v.is_int());
  EXPECT_EQ(StrOf(v), "");
  CompactString h(std::string(20, 'h'));
  EXPECT_FALSE(h.Equals(empty));
  CompactString a("abc");
  a.Append(empty);
  EXPECT_EQ(StrOf(a), "abc");
}

TEST(CompactStringTest, DefaultStringViewInputs) {
  // A default-constructed string_view has data() == nullptr; passing it must
  // be well-defined (no memcpy/memcmp with a null pointer, which UBSan flags).
  const std::string_view null_sv;
  CompactString c(null_sv);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(StrOf(c), "");
  EXPECT_TRUE(c.Equals(null_sv));
  CompactString v = CompactString::FromValue(null_sv);
  EXPECT_FALSE(v.is_int());
  EXPECT_EQ(StrOf(v), "");
  CompactString a("abc");
  a.Append(null_sv);
  EXPECT_EQ(StrOf(a), "abc");
}

// ---------------------------------------------------------------------------
// Integer encoding (FromValue / FromInt)

TEST(CompactStringTest, FromValueIntegers) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"0", 0},
      {"1", 1},
      {"-1", -1},
      {"123", 123},
      {"-5", -5},
      {"10", 10},
      {"-10", -10},
      {"1000000", 1000000},
      {"9223372036854775807", LLONG_MAX},
      {"-9223372036854775808", LLONG_MIN},
      {"9223372036854775806", LLONG_MAX - 1},
      {"-9223372036854775807", LLONG_MIN + 1},
      {"4294967296", int64_t{1} << 32},
  };
  for (const auto& [s, n] : cases) {
    SCOPED_TRACE(s);
    CompactString c = CompactString::FromValue(s);
    ASSERT_TRUE(c.is_int());
    EXPECT_EQ(c.int_value(), n);
    EXPECT_EQ(c.encoding(), Encoding::kInt);
    EXPECT_EQ(c.size(), s.size());
    EXPECT_FALSE(c.empty());
    EXPECT_EQ(c.HeapBytes(), 0u);
    char scratch[CompactString::kIntBufferSize];
    std::string_view v = c.View(scratch);
    EXPECT_EQ(v, s);
    EXPECT_EQ(v.data(), scratch);  // formatted into the caller's buffer
  }
}

TEST(CompactStringTest, FromValueNonIntegers) {
  const std::vector<std::string> cases = {
      "",
      "-",
      "01",
      "00",
      "-01",
      "-0",
      "+1",
      "+0",
      " 1",
      "1 ",
      "\t1",
      "1.0",
      "1.",
      ".5",
      "1e3",
      "0x10",
      "abc",
      "12a",
      "1\0"s,
      "\0" "1"s,
      "--1",
      "9223372036854775808",    // LLONG_MAX + 1
      "-9223372036854775809",   // LLONG_MIN - 1
      "18446744073709551615",   // UINT64_MAX (20 chars)
      "18446744073709551616",   // UINT64_MAX + 1 (20 chars)
      "99999999999999999999",   // 20 chars
      "123456789012345678901",  // 21 chars
      "-12345678901234567890",  // 21 chars
      "000000000000000000001",  // 21 chars
      "-000000000000000000001",
      "123456789012345678901234567890",
  };
  for (const auto& s : cases) {
    SCOPED_TRACE("\"" + s + "\"");
    CompactString c = CompactString::FromValue(s);
    EXPECT_FALSE(c.is_int());
    EXPECT_EQ(StrOf(c), s);
    EXPECT_EQ(StrOf(c), s);
    EXPECT_EQ(c.size(), s.size());
    EXPECT_EQ(c.encoding(), Encoding::kEmbstr);
    EXPECT_TRUE(c.Equals(s));
  }
}

TEST(CompactStringTest, FromValueLongDigitStringsAreStrings) {
  // A 45-digit number is neither int nor embstr: it is raw, like Redis.
  const std::string digits45(45, '7');
  CompactString c = CompactString::FromValue(digits45);
  EXPECT_FALSE(c.is_int());
  EXPECT_EQ(StrOf(c), digits45);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  const std::string digits44(44, '7');
  CompactString d = CompactString::FromValue(digits44);
  EXPECT_FALSE(d.is_int());
  EXPECT_EQ(d.encoding(), Encoding::kEmbstr);
}

TEST(CompactStringTest, FromValueAgreesWithParseRules) {
  // Every canonical decimal of a sample of int64 values is integer-encoded,
  // and the same digits with a leading '0' or '+' are not.
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; i++) {
    int64_t v = static_cast<int64_t>(rng());
    if (i % 3 == 0) v >>= (i % 63);
    const std::string s = std::to_string(v);
    CompactString c = CompactString::FromValue(s);
    ASSERT_TRUE(c.is_int()) << s;
    EXPECT_EQ(c.int_value(), v);
    EXPECT_EQ(c.size(), s.size());
    EXPECT_EQ(StrOf(c), s);
    if (v >= 0) {
      EXPECT_FALSE(CompactString::FromValue("0" + s).is_int()) << s;
      EXPECT_FALSE(CompactString::FromValue("+" + s).is_int()) << s;
    }
  }
}

TEST(CompactStringTest, FromInt) {
  for (int64_t v : {int64_t{0}, int64_t{7}, int64_t{-7}, int64_t{100}, int64_t{LLONG_MAX}, int64_t{LLONG_MIN}}) {
    CompactString c = CompactString::FromInt(v);
    ASSERT_TRUE(c.is_int());
    EXPECT_EQ(c.int_value(), v);
    EXPECT_EQ(c.encoding(), Encoding::kInt);
    EXPECT_EQ(StrOf(c), std::to_string(v));
    EXPECT_EQ(c.size(), std::to_string(v).size());
    EXPECT_EQ(c.HeapBytes(), 0u);
  }
}

TEST(CompactStringTest, UnsharedIntMarkIsKeptByCopiesAndClearedByNewIntegers) {
  CompactString c = CompactString::FromInt(5);
  EXPECT_FALSE(c.is_unshared_int());
  c.MarkUnsharedInt();
  EXPECT_TRUE(c.is_unshared_int());
  EXPECT_EQ(c.int_value(), 5);
  EXPECT_EQ(StrOf(c), "5");
  CompactString copy(c);
  EXPECT_TRUE(copy.is_unshared_int());
  CompactString moved(std::move(copy));
  EXPECT_TRUE(moved.is_unshared_int());
  moved = CompactString::FromInt(6);  // INCR stores a new integer
  EXPECT_FALSE(moved.is_unshared_int());
  EXPECT_FALSE(CompactString::FromValue("5").is_unshared_int());
  EXPECT_FALSE(CompactString("5").is_unshared_int());  // not an integer at all
}

TEST(CompactStringTest, SizeOfIntegers) {
  std::vector<int64_t> values = {0, LLONG_MAX, LLONG_MIN, LLONG_MAX - 1, LLONG_MIN + 1};
  int64_t p = 1;
  for (int i = 0; i < 19; i++) {  // every power of ten and its neighbours
    for (int64_t d : {p - 1, p, p + 1}) {
      values.push_back(d);
      values.push_back(-d);
    }
    if (i < 18) p *= 10;
  }
  for (int64_t v : values) {
    const std::string s = std::to_string(v);
    CompactString c = CompactString::FromInt(v);
    EXPECT_EQ(c.size(), s.size()) << s;
    EXPECT_EQ(c.empty(), false) << s;
    CompactString f = CompactString::FromValue(s);
    ASSERT_TRUE(f.is_int()) << s;
    EXPECT_EQ(f.size(), s.size()) << s;
  }
  EXPECT_EQ(CompactString::FromInt(LLONG_MIN).size(), 20u);
  EXPECT_EQ(CompactString::FromInt(LLONG_MAX).size(), 19u);
  EXPECT_EQ(CompactString::FromInt(0).size(), 1u);
  EXPECT_EQ(CompactString::FromInt(-1).size(), 2u);
}

TEST(CompactStringTest, ViewOfIntegerUsesScratch) {
  CompactString c = CompactString::FromValue("-9223372036854775808");
  char scratch[CompactString::kIntBufferSize];
  std::memset(scratch, 'q', sizeof(scratch));
  std::string_view v = c.View(scratch);
  EXPECT_EQ(v.data(), scratch);
  EXPECT_EQ(v, "-9223372036854775808");
  // Formatting does not write past kIntBufferSize (the scratch's tail is intact
  // beyond what FormatInt64 may use).
  EXPECT_EQ(scratch[CompactString::kIntBufferSize - 1], 'q');
  // A second view into another buffer is independent.
  char scratch2[CompactString::kIntBufferSize];
  std::string_view v2 = c.View(scratch2);
  EXPECT_EQ(v2.data(), scratch2);
  EXPECT_EQ(v2, v);
  // The integer itself is unchanged.
  EXPECT_TRUE(c.is_int());
  EXPECT_EQ(c.int_value(), LLONG_MIN);
}

// ---------------------------------------------------------------------------
// encoding()

TEST(CompactStringTest, EncodingBySize) {
  for (size_t n = 0; n <= 100; n++) {
    const std::string s(n, 'x');
    CompactString c(s);
    CompactString v = CompactString::FromValue(s);
    Encoding expected = n <= 44 ? Encoding::kEmbstr : Encoding::kRaw;
    EXPECT_EQ(c.encoding(), expected) << n;
    EXPECT_EQ(v.encoding(), expected) << n;
  }
  EXPECT_EQ(CompactString(std::string(44, 'x')).encoding(), Encoding::kEmbstr);
  EXPECT_EQ(CompactString(std::string(45, 'x')).encoding(), Encoding::kRaw);
  EXPECT_EQ(CompactString::FromValue("42").encoding(), Encoding::kInt);
}

TEST(CompactStringTest, EncodingRawAfterAppend) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    CompactString c = sample.Make();
    c.Append("z");
    EXPECT_EQ(c.encoding(), Encoding::kRaw);
    EXPECT_FALSE(c.is_int());
    EXPECT_EQ(StrOf(c), sample.text + "z");
  }
  // Even an empty APPEND makes the string raw (Redis unshares it first).
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(std::string(sample.name) + " + empty");
    CompactString c = sample.Make();
    c.Append("");
    EXPECT_EQ(c.encoding(), Encoding::kRaw);
    EXPECT_FALSE(c.is_int());
    EXPECT_EQ(StrOf(c), sample.text);
  }
}

TEST(CompactStringTest, EncodingRawAfterMutableBytes) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    {
      CompactString c = sample.Make();
      c.MutableBytes(0);  // within size
      EXPECT_EQ(c.encoding(), Encoding::kRaw);
      EXPECT_FALSE(c.is_int());
      EXPECT_EQ(StrOf(c), sample.text);
    }
    {
      CompactString c = sample.Make();
      c.MutableBytes(sample.text.size());  // exactly the size
      EXPECT_EQ(c.encoding(), Encoding::kRaw);
      EXPECT_EQ(StrOf(c), sample.text);
    }
    {
      CompactString c = sample.Make();
      c.MutableBytes(sample.text.size() + 1);  // growing
      EXPECT_EQ(c.encoding(), Encoding::kRaw);
      EXPECT_EQ(StrOf(c), sample.text + '\0');
    }
  }
}

TEST(CompactStringTest, ResizeGrowsAndCuts) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    for (size_t n : {size_t{0}, sample.text.size() / 2, sample.text.size(), sample.text.size() + 3}) {
      CompactString c = sample.Make();
      char* p = c.Resize(n);
      EXPECT_EQ(c.size(), n);
      EXPECT_EQ(c.encoding(), Encoding::kRaw);
      std::string want = sample.text.substr(0, n);
      want.resize(n, '\0');
      EXPECT_EQ(StrOf(c), want);
      if (n > 0) {
        p[n - 1] = 'z';
        EXPECT_EQ(StrOf(c).back(), 'z');
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Equals()

TEST(CompactStringTest, Equals) {
  for (size_t n : {0u, 1u, 7u, 14u, 15u, 16u, 17u, 44u, 45u, 200u}) {
    SCOPED_TRACE("size " + std::to_string(n));
    const std::string s = Pattern(n, 9);
    CompactString c(s);
    EXPECT_TRUE(c.Equals(s));
    EXPECT_FALSE(c.Equals(s + 'x'));
    EXPECT_FALSE(c.Equals(s + '\0'));
    if (n > 0) {
      EXPECT_FALSE(c.Equals(s.substr(0, n - 1)));
      std::string first = s, last = s;
      first[0] = static_cast<char>(first[0] ^ 0x80);
      last[n - 1] = static_cast<char>(last[n - 1] ^ 1);
      EXPECT_FALSE(c.Equals(first));
      EXPECT_FALSE(c.Equals(last));
    }
  }
  // Equals after Append / MutableBytes sees the new content.
  CompactString c("abc");
  c.Append("def");
  EXPECT_TRUE(c.Equals("abcdef"));
  EXPECT_FALSE(c.Equals("abc"));
  char* p = c.MutableBytes(8);
  p[6] = 'g';
  EXPECT_TRUE(c.Equals("abcdefg\0"s));
}

TEST(CompactStringTest, EqualsOnIntegerComparesStringForm) {
  // Equals is documented as comparing "the string form", which for an
  // integer-encoded value is its decimal form (as View() returns it).
  for (const char* s : {"0", "123", "-5", "9223372036854775807", "-9223372036854775808"}) {
    CompactString c = CompactString::FromValue(s);
    ASSERT_TRUE(c.is_int());
    EXPECT_TRUE(c.Equals(s)) << s;
    EXPECT_FALSE(c.Equals("x")) << s;
    EXPECT_FALSE(c.Equals(std::string(s) + "0")) << s;
  }
}

// ---------------------------------------------------------------------------
// Copy and move

TEST(CompactStringTest, CopyConstructionIsDeepAndIndependent) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    CompactString original = sample.Make();
    const Encoding enc = original.encoding();
    CompactString copy(original);
    EXPECT_EQ(StrOf(copy), sample.text);
    EXPECT_EQ(copy.encoding(), enc);
    EXPECT_EQ(copy.is_int(), original.is_int());
    if (original.HeapBytes() > 0) {
      EXPECT_NE(copy.data_address(), original.data_address());  // own block
      EXPECT_GE(copy.HeapBytes(), sample.text.size());
    } else {
      EXPECT_EQ(copy.HeapBytes(), 0u);
    }
    // Mutating the copy leaves the original alone, and vice versa.
    copy.Append("++");
    if (!sample.text.empty()) copy.MutableBytes(1)[0] = '#';
    EXPECT_EQ(StrOf(original), sample.text);
    EXPECT_EQ(original.encoding(), enc);
    std::string expected_copy = sample.text + "++";
    expected_copy[0] = sample.text.empty() ? '+' : '#';
    EXPECT_EQ(StrOf(copy), expected_copy);
    original.Append("--");
    EXPECT_EQ(StrOf(copy), expected_copy);
    EXPECT_EQ(StrOf(original), sample.text + "--");
  }
}

TEST(CompactStringTest, CopyAssignmentIsDeepAndIndependent) {
  for (const Sample& from : Samples()) {
    for (const Sample& to : Samples()) {
      SCOPED_TRACE(std::string(to.name) + " = " + from.name);
      CompactString src = from.Make();
      CompactString dst = to.Make();
      const Encoding enc = src.encoding();
      dst = src;
      EXPECT_EQ(StrOf(dst), from.text);
      EXPECT_EQ(StrOf(src), from.text);
      EXPECT_EQ(dst.encoding(), enc);
      EXPECT_EQ(dst.is_int(), src.is_int());
      if (src.HeapBytes() > 0) {
        EXPECT_NE(dst.data_address(), src.data_address());
      }
      dst.Append("!");
      EXPECT_EQ(StrOf(src), from.text);
      EXPECT_EQ(StrOf(dst), from.text + "!");
      src.Append("?");
      EXPECT_EQ(StrOf(dst), from.text + "!");
    }
  }
}

TEST(CompactStringTest, CopyAssignmentReturnsSelf) {
  CompactString a("aaa"), b(std::string(30, 'b'));
  CompactString& r = (a = b);
  EXPECT_EQ(&r, &a);
  CompactString& r2 = (a = std::move(b));
  EXPECT_EQ(&r2, &a);
  EXPECT_EQ(StrOf(a), std::string(30, 'b'));
}

TEST(CompactStringTest, SelfCopyAssignment) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    CompactString c = sample.Make();
    const Encoding enc = c.encoding();
    const void* addr = c.data_address();
    CompactString& alias = c;
    c = alias;
    EXPECT_EQ(StrOf(c), sample.text);
    EXPECT_EQ(c.encoding(), enc);
    EXPECT_EQ(c.data_address(), addr);  // nothing reallocated or freed
    c.Append("x");
    EXPECT_EQ(StrOf(c), sample.text + "x");
  }
}

TEST(CompactStringTest, MoveConstructionLeavesSourceEmpty) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    CompactString src = sample.Make();
    const Encoding enc = src.encoding();
    const size_t heap = src.HeapBytes();
    const void* heap_addr = heap > 0 ? src.data_address() : nullptr;
    CompactString dst(std::move(src));
    EXPECT_EQ(StrOf(dst), sample.text);
    EXPECT_EQ(dst.encoding(), enc);
    EXPECT_EQ(dst.HeapBytes(), heap);
    if (heap > 0) {
      EXPECT_EQ(dst.data_address(), heap_addr);  // stolen, not copied
    }
    // The source is a valid empty string (and can be reused).
    EXPECT_FALSE(src.is_int());
    EXPECT_EQ(src.size(), 0u);
    EXPECT_TRUE(src.empty());
    EXPECT_EQ(StrOf(src), "");
    EXPECT_EQ(src.encoding(), Encoding::kEmbstr);
    EXPECT_EQ(src.HeapBytes(), 0u);
    EXPECT_TRUE(src.Equals(""));
    src.Append("reuse");
    EXPECT_EQ(StrOf(src), "reuse");
    EXPECT_EQ(StrOf(dst), sample.text);
  }
}

TEST(CompactStringTest, MoveAssignmentLeavesSourceEmpty) {
  for (const Sample& from : Samples()) {
    for (const Sample& to : Samples()) {
      SCOPED_TRACE(std::string(to.name) + " = move(" + from.name + ")");
      CompactString src = from.Make();
      CompactString dst = to.Make();
      const Encoding enc = src.encoding();
      dst = std::move(src);
      EXPECT_EQ(StrOf(dst), from.text);
      EXPECT_EQ(dst.encoding(), enc);
      EXPECT_FALSE(src.is_int());
      EXPECT_EQ(src.size(), 0u);
      EXPECT_EQ(StrOf(src), "");
      EXPECT_EQ(src.encoding(), Encoding::kEmbstr);
      EXPECT_EQ(src.HeapBytes(), 0u);
      // Both stay usable and independent.
      src = CompactString("again");
      dst.Append("#");
      EXPECT_EQ(StrOf(src), "again");
      EXPECT_EQ(StrOf(dst), from.text + "#");
    }
  }
}

TEST(CompactStringTest, SelfMoveAssignment) {
  for (const Sample& sample : Samples()) {
    SCOPED_TRACE(sample.name);
    CompactString c = sample.Make();
    const Encoding enc = c.encoding();
    CompactString& alias = c;
    c = std::move(alias);
    EXPECT_EQ(StrOf(c), sample.text);
    EXPECT_EQ(c.encoding(), enc);
  }
}

TEST(CompactStringTest, ContainerOfStrings) {
  // Vector growth moves elements; every string must survive intact.
  std::vector<CompactString> v;
  std::vector<std::string> expected;
  for (int i = 0; i < 500; i++) {
    std::string s = Pattern(static_cast<size_t>(i % 60), static_cast<unsigned>(i));
    if (i % 7 == 0) {
      s = std::to_string(i * 1000 - 250000);
      v.push_back(CompactString::FromValue(s));
    } else {
      v.emplace_back(s);
    }
    expected.push_back(s);
  }
  std::vector<CompactString> copy = v;
  for (size_t i = 0; i < v.size(); i++) {
    EXPECT_EQ(StrOf(v[i]), expected[i]) << i;
    EXPECT_EQ(StrOf(copy[i]), expected[i]) << i;
  }
}

// ---------------------------------------------------------------------------
// Append

TEST(CompactStringTest, AppendInline) {
  CompactString c("ab");
  c.Append("cd");
  EXPECT_EQ(StrOf(c), "abcd");
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  EXPECT_GE(c.HeapBytes(), 4u);
  EXPECT_TRUE(c.Equals("abcd"));
}

TEST(CompactStringTest, AppendToEmpty) {
  CompactString c;
  c.Append("x");
  EXPECT_EQ(StrOf(c), "x");
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  CompactString d;
  d.Append(std::string(100, 'y'));
  EXPECT_EQ(StrOf(d), std::string(100, 'y'));
}

TEST(CompactStringTest, AppendAcrossInlineBoundary) {
  for (size_t a = 0; a <= 20; a++) {
    for (size_t b = 0; b <= 20; b++) {
      const std::string sa = Pattern(a, 1), sb = Pattern(b, 2);
      CompactString c(sa);
      c.Append(sb);
      ASSERT_EQ(StrOf(c), sa + sb) << a << "+" << b;
      EXPECT_EQ(c.size(), a + b);
      EXPECT_EQ(c.encoding(), Encoding::kRaw);
      EXPECT_GE(c.HeapBytes(), a + b);
    }
  }
}

TEST(CompactStringTest, AppendHeap) {
  const std::string a(20, 'a'), b(30, 'b');
  CompactString c(a);
  ASSERT_EQ(c.encoding(), Encoding::kEmbstr);
  c.Append(b);
  EXPECT_EQ(StrOf(c), a + b);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  EXPECT_GE(c.HeapBytes(), 50u);
  c.Append("\0tail"s);
  EXPECT_EQ(StrOf(c), a + b + "\0tail"s);
}

TEST(CompactStringTest, AppendBinary) {
  const std::string a = RandomBytes(33, 5), b = RandomBytes(1000, 6);
  CompactString c(a);
  c.Append(b);
  c.Append("\0\0"s);
  EXPECT_EQ(StrOf(c), a + b + "\0\0"s);
}

TEST(CompactStringTest, AppendInteger) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"123", "4"},
      {"-5", "x"},
      {"0", "0"},
      {"9223372036854775807", "1"},
      {"-9223372036854775808", "-"},
      {"42", std::string(100, 'z')},
  };
  for (const auto& [num, tail] : cases) {
    SCOPED_TRACE(num + " + " + tail);
    CompactString c = CompactString::FromValue(num);
    ASSERT_TRUE(c.is_int());
    c.Append(tail);
    EXPECT_FALSE(c.is_int());
    EXPECT_EQ(StrOf(c), num + tail);
    EXPECT_EQ(c.size(), num.size() + tail.size());
    EXPECT_EQ(c.encoding(), Encoding::kRaw);
    EXPECT_GE(c.HeapBytes(), num.size() + tail.size());
  }
  // FromInt too; the result stays a string even if it looks numeric.
  CompactString c = CompactString::FromInt(12);
  c.Append("3");
  EXPECT_FALSE(c.is_int());
  EXPECT_EQ(StrOf(c), "123");
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
}

TEST(CompactStringTest, ManySmallAppendsAreAmortized) {
  constexpr size_t kN = 100'000;
  std::string expected;
  expected.reserve(kN);
  CompactString c;
  std::set<size_t> capacities;
  size_t bad_capacity = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < kN; i++) {
    const char ch = static_cast<char>('a' + i % 26);
    c.Append(std::string_view(&ch, 1));
    expected.push_back(ch);
    const size_t heap = c.HeapBytes();
    capacities.insert(heap);
    if (heap < c.size()) bad_capacity++;
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(c.size(), kN);
  EXPECT_TRUE(StrOf(c) == expected);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  EXPECT_EQ(bad_capacity, 0u);
  // Greedy growth: the block is resized O(log n) times, not every few bytes.
  EXPECT_LT(capacities.size(), 64u) << "capacity changed " << capacities.size() << " times";
  // And it is not wildly oversized (doubling while under 1 MB).
  EXPECT_LE(c.HeapBytes(), 2 * kN + 4096);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 5000);
}

TEST(CompactStringTest, LargeAppendsPastOneMegabyte) {
  std::string expected;
  CompactString c("start");
  expected = "start";
  std::set<size_t> capacities;
  for (int i = 0; i < 6; i++) {
    const std::string chunk = RandomBytes(kMB / 2 + 3, static_cast<uint32_t>(i));
    c.Append(chunk);
    expected += chunk;
    ASSERT_EQ(c.size(), expected.size());
    EXPECT_GE(c.HeapBytes(), c.size());
    // Past 1 MB the preallocation is at most 1 MB beyond the need (sds rule).
    EXPECT_LE(c.HeapBytes(), std::max<size_t>(2 * c.size(), c.size() + kMB) + 4096);
  }
  EXPECT_TRUE(StrOf(c) == expected);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
}

// ---------------------------------------------------------------------------
// MutableBytes (SETRANGE)

TEST(CompactStringTest, MutableBytesGrowsWithZeroPadding) {
  CompactString c("abc");
  char* p = c.MutableBytes(10);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(c.size(), 10u);
  EXPECT_EQ(StrOf(c), "abc\0\0\0\0\0\0\0"s);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  EXPECT_EQ(static_cast<const void*>(p), c.data_address());
  std::memcpy(p + 5, "XY", 2);
  EXPECT_EQ(StrOf(c), "abc\0\0XY\0\0\0"s);
  EXPECT_TRUE(c.Equals("abc\0\0XY\0\0\0"s));
}

TEST(CompactStringTest, MutableBytesFromEmpty) {
  CompactString c;
  char* p = c.MutableBytes(5);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(StrOf(c), std::string(5, '\0'));
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  EXPECT_GE(c.HeapBytes(), 5u);
  p[4] = 'e';
  EXPECT_EQ(StrOf(c), "\0\0\0\0e"s);
}

TEST(CompactStringTest, MutableBytesFromInteger) {
  CompactString c = CompactString::FromValue("12");
  ASSERT_TRUE(c.is_int());
  char* p = c.MutableBytes(5);
  EXPECT_FALSE(c.is_int());
  EXPECT_EQ(StrOf(c), "12\0\0\0"s);
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  p[2] = '3';
  EXPECT_EQ(StrOf(c), "123\0\0"s);

  CompactString n = CompactString::FromValue("-9223372036854775808");
  n.MutableBytes(25);
  EXPECT_EQ(StrOf(n), "-9223372036854775808\0\0\0\0\0"s);
}

TEST(CompactStringTest, MutableBytesFromHeap) {
  const std::string s = Pattern(30, 4);
  CompactString c(s);
  char* p = c.MutableBytes(100);
  EXPECT_EQ(c.size(), 100u);
  EXPECT_EQ(StrOf(c), s + std::string(70, '\0'));
  EXPECT_GE(c.HeapBytes(), 100u);
  p[99] = '!';
  EXPECT_EQ(StrOf(c).back(), '!');
  // Growing again keeps everything written so far.
  c.MutableBytes(kMB);
  EXPECT_EQ(c.size(), kMB);
  EXPECT_EQ(StrOf(c).substr(0, 30), s);
  EXPECT_EQ(StrOf(c).substr(30, 69), std::string(69, '\0'));
  EXPECT_EQ(StrOf(c)[99], '!');
  EXPECT_EQ(StrOf(c).substr(100), std::string(kMB - 100, '\0'));
}

TEST(CompactStringTest, MutableBytesPadsWithZerosAfterAppendSpareCapacity) {
  // Append leaves spare capacity; growing into it must still zero-pad.
  CompactString c(std::string(20, 'a'));
  c.Append(std::string(20, 'b'));
  ASSERT_GT(c.HeapBytes(), 40u);  // greedy growth left room
  const size_t cap = c.HeapBytes();
  c.MutableBytes(cap);
  EXPECT_EQ(StrOf(c), std::string(20, 'a') + std::string(20, 'b') + std::string(cap - 40, '\0'));
}

TEST(CompactStringTest, MutableBytesWithinCurrentSize) {
  CompactString c("hello world");
  char* p = c.MutableBytes(5);
  EXPECT_EQ(c.size(), 11u);  // never shrinks
  EXPECT_EQ(StrOf(c), "hello world");
  EXPECT_EQ(c.encoding(), Encoding::kRaw);
  p[0] = 'J';
  EXPECT_EQ(StrOf(c), "Jello world");

  CompactString h(std::string(30, 'h'));
  ASSERT_EQ(h.encoding(), Encoding::kEmbstr);
  char* q = h.MutableBytes(30);
  EXPECT_EQ(h.size(), 30u);
  EXPECT_EQ(h.encoding(), Encoding::kRaw);
  q[29] = 'H';
  EXPECT_EQ(StrOf(h), std::string(29, 'h') + "H");

  CompactString n = CompactString::FromValue("123");
  char* r = n.MutableBytes(1);
  EXPECT_FALSE(n.is_int());
  EXPECT_EQ(StrOf(n), "123");
  r[0] = '9';
  EXPECT_EQ(StrOf(n), "923");
  EXPECT_EQ(n.encoding(), Encoding::kRaw);
}

TEST(CompactStringTest, MutableBytesThenAppend) {
  CompactString c("ab");
  c.MutableBytes(4)[3] = 'd';
  c.Append("ef");
  EXPECT_EQ(StrOf(c), "ab\0def"s);
  c.MutableBytes(2)[1] = 'B';
  EXPECT_EQ(StrOf(c), "aB\0def"s);
}

// ---------------------------------------------------------------------------
// HeapBytes

TEST(CompactStringTest, HeapBytes) {
  EXPECT_EQ(CompactString().HeapBytes(), 0u);
  EXPECT_EQ(CompactString("abc").HeapBytes(), 0u);
  EXPECT_EQ(CompactString(std::string(15, 'x')).HeapBytes(), 0u);
  EXPECT_EQ(CompactString::FromValue("123").HeapBytes(), 0u);
  EXPECT_EQ(CompactString::FromInt(LLONG_MIN).HeapBytes(), 0u);
  for (size_t n : {16u, 17u, 44u, 45u, 1000u, static_cast<unsigned>(kMB)}) {
    CompactString c(std::string(n, 'y'));
    EXPECT_GE(c.HeapBytes(), n) << n;
    EXPECT_LE(c.HeapBytes(), n + 64) << n;  // sized to fit, no big header
  }
  CompactString a("x");
  a.Append("y");
  EXPECT_GE(a.HeapBytes(), 2u);
}

// ---------------------------------------------------------------------------
// Value

TEST(ValueTest, SizeofIs16) {
  static_assert(sizeof(Value) == 16);
  EXPECT_EQ(sizeof(Value), 16u);
}

TEST(ValueTest, DefaultIsEmptyString) {
  Value v;
  EXPECT_EQ(v.type(), ValueType::kString);
  EXPECT_TRUE(v.is_string());
  EXPECT_EQ(v.str().size(), 0u);
  EXPECT_EQ(v.EncodingName(), "embstr");
}

TEST(ValueTest, StringUsesIntegerEncoding) {
  Value v = Value::String("123");
  ASSERT_TRUE(v.str().is_int());
  EXPECT_EQ(v.str().int_value(), 123);
  EXPECT_EQ(v.EncodingName(), "int");
  EXPECT_EQ(StrOf(v.str()), "123");

  Value m = Value::String("-9223372036854775808");
  ASSERT_TRUE(m.str().is_int());
  EXPECT_EQ(m.str().int_value(), LLONG_MIN);

  for (const char* s : {"01", "+1", " 1", "1.0", "-0", "9223372036854775808", "123456789012345678901"}) {
    Value n = Value::String(s);
    EXPECT_FALSE(n.str().is_int()) << s;
    EXPECT_EQ(StrOf(n.str()), s);
    EXPECT_EQ(n.EncodingName(), "embstr") << s;
  }
}

TEST(ValueTest, EncodingName) {
  EXPECT_EQ(Value::String("42").EncodingName(), "int");
  EXPECT_EQ(Value::String("-1").EncodingName(), "int");
  EXPECT_EQ(Value::String("").EncodingName(), "embstr");
  EXPECT_EQ(Value::String("hello").EncodingName(), "embstr");
  EXPECT_EQ(Value::String(std::string(44, 'e')).EncodingName(), "embstr");
  EXPECT_EQ(Value::String(std::string(45, 'r')).EncodingName(), "raw");
  EXPECT_EQ(Value(CompactString("123")).EncodingName(), "embstr");  // key-style
  EXPECT_EQ(Value(CompactString::FromInt(7)).EncodingName(), "int");

  Value a = Value::String("hello");
  a.mutable_str().Append(" world");
  EXPECT_EQ(a.EncodingName(), "raw");
  EXPECT_EQ(StrOf(a.str()), "hello world");

  Value b = Value::String("99");
  b.mutable_str().MutableBytes(2)[0] = '1';
  EXPECT_EQ(b.EncodingName(), "raw");
  EXPECT_EQ(StrOf(b.str()), "19");
}

TEST(ValueTest, CopyAndMove) {
  Value a = Value::String(std::string(50, 'a'));
  Value b = a;
  b.mutable_str().Append("b");
  EXPECT_EQ(StrOf(a.str()), std::string(50, 'a'));
  EXPECT_EQ(StrOf(b.str()), std::string(50, 'a') + "b");
  Value c = std::move(b);
  EXPECT_EQ(StrOf(c.str()), std::string(50, 'a') + "b");
  EXPECT_EQ(b.str().size(), 0u);
  a = c;
  EXPECT_EQ(StrOf(a.str()), StrOf(c.str()));
  EXPECT_NE(a.str().data_address(), c.str().data_address());
  Value i = Value::String("77");
  a = std::move(i);
  EXPECT_EQ(a.EncodingName(), "int");
  EXPECT_EQ(StrOf(a.str()), "77");
}

TEST(ValueTest, TypeName) {
  EXPECT_EQ(TypeName(ValueType::kString), "string");
  EXPECT_EQ(TypeName(ValueType::kList), "list");
  EXPECT_EQ(TypeName(ValueType::kSet), "set");
  EXPECT_EQ(TypeName(ValueType::kZSet), "zset");
  EXPECT_EQ(TypeName(ValueType::kHash), "hash");
  EXPECT_EQ(TypeName(ValueType::kStream), "stream");
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

// APPEND of a string's own bytes (inline and heap): the argument is copied
// before the storage it points into is overwritten or moved.
TEST(CompactStringSelfAppend, InlineAndHeap) {
  char scratch[CompactString::kIntBufferSize];
  CompactString a("abcdef");
  a.Append(a.View(scratch));  // a view of the inline bytes themselves
  EXPECT_EQ(StrOf(a), "abcdefabcdef");
  CompactString b(std::string(40, 'x') + "y");
  for (int i = 0; i < 6; i++) b.Append(b.View(scratch));  // of the heap block
  EXPECT_EQ(b.size(), 41u * 64);
  EXPECT_EQ(StrOf(b).substr(0, 41), std::string(40, 'x') + "y");
  EXPECT_EQ(StrOf(b).substr(41 * 63), std::string(40, 'x') + "y");
}

}  // namespace
}  // namespace peregrine
