// Redis-compatible number parsing and formatting (see numbers.h).
#include "core/numbers.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

namespace peregrine {

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  bool negative = false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (i == s.size()) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    if (v > std::numeric_limits<uint64_t>::max() / 10) return false;
    v *= 10;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > std::numeric_limits<uint64_t>::max() - d) return false;
    v += d;
  }
  if (negative) {
    constexpr uint64_t kMinMagnitude = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1;
    if (v > kMinMagnitude) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool ParseUint64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

namespace {
// strto(l)d needs a NUL-terminated string; numbers longer than this are refused,
// as Redis refuses them (MAX_LONG_DOUBLE_CHARS).
constexpr size_t kMaxFloatChars = 5 * 1024;
}  // namespace

namespace {

// Redis's string2ld / string2d: strto(l)d over the whole input, no leading
// space, no NaN, no overflow to infinity or underflow to zero.
template <typename Float>
bool ParseFloat(std::string_view s, Float* out, Float (*strto)(const char*, char**), Float huge) {
  if (s.empty() || s.size() >= kMaxFloatChars) return false;
  if (std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char buf[kMaxFloatChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  Float v = strto(buf, &end);
  if (end != buf + s.size()) return false;  // also catches an embedded NUL
  if (errno == ERANGE && (v == huge || v == -huge || std::fpclassify(v) == FP_ZERO)) return false;
  if (std::isnan(v)) return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseLongDouble(std::string_view s, long double* out) { return ParseFloat<long double>(s, out, strtold, HUGE_VALL); }

bool ParseDouble(std::string_view s, double* out) { return ParseFloat<double>(s, out, strtod, HUGE_VAL); }

size_t FormatInt64(int64_t v, char* buf) {
  auto [ptr, ec] = std::to_chars(buf, buf + 21, v);
  return static_cast<size_t>(ptr - buf);
}

std::string Int64ToString(int64_t v) {
  char buf[24];
  return std::string(buf, FormatInt64(v, buf));
}

bool FormatLongDoubleHuman(long double v, std::string* out) {
  if (!std::isfinite(v)) return false;
  char buf[kMaxFloatChars];
  int len = snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return false;
  if (std::memchr(buf, '.', static_cast<size_t>(len)) != nullptr) {
    while (len > 0 && buf[len - 1] == '0') len--;
    if (len > 0 && buf[len - 1] == '.') len--;
  }
  if (len == 2 && buf[0] == '-' && buf[1] == '0') {  // "-0.000" prints as "0"
    buf[0] = '0';
    len = 1;
  }
  out->assign(buf, static_cast<size_t>(len));
  return true;
}

size_t FormatDouble(double v, char* out) {
  auto put = [out](std::string_view s) {
    std::memcpy(out, s.data(), s.size());
    return s.size();
  };
  if (std::isnan(v)) return put("nan");
  if (std::isinf(v)) return put(v > 0 ? "inf" : "-inf");
  if (v == 0) return put(std::signbit(v) ? "-0" : "0");
  // Integral values within +-LLONG_MAX/2 print as integers (Redis's double2ll range).
  constexpr double kIntRange = static_cast<double>(std::numeric_limits<int64_t>::max() / 2);
  if (v >= -kIntRange && v <= kIntRange && v == std::trunc(v)) return FormatInt64(static_cast<int64_t>(v), out);
  // Otherwise the shortest round-trip digits, laid out as Redis 7.2 lays them
  // out: plain decimals for moderate exponents, else d.ddde[+-]x.
  char sci[32];
  const char* end = std::to_chars(sci, sci + sizeof(sci), std::fabs(v), std::chars_format::scientific).ptr;
  char digits[24];
  int n = 0;
  const char* p = sci;
  for (; p < end && *p != 'e'; ++p)
    if (*p != '.') digits[n++] = *p;
  int exp10 = 0;
  std::from_chars(p + (p[1] == '+' ? 2 : 1), end, exp10);  // v = d.ddd * 10^exp10
  const int k = exp10 - (n - 1);  // v = digits * 10^k
  const int abs_exp = std::abs(exp10);
  char* o = out;
  if (v < 0) *o++ = '-';
  auto digits_from = [&](int from, int to) {
    std::memcpy(o, digits + from, static_cast<size_t>(to - from));
    o += to - from;
  };
  if (k >= 0 && abs_exp < n + 7) {
    digits_from(0, n);
    std::memset(o, '0', static_cast<size_t>(k));
    o += k;
  } else if (k < 0 && (k > -7 || abs_exp < 4)) {
    const int point = n + k;  // digits before the decimal point
    if (point <= 0) {
      *o++ = '0';
      *o++ = '.';
      std::memset(o, '0', static_cast<size_t>(-point));
      o += -point;
      digits_from(0, n);
    } else {
      digits_from(0, point);
      *o++ = '.';
      digits_from(point, n);
    }
  } else {
    *o++ = digits[0];
    if (n > 1) {
      *o++ = '.';
      digits_from(1, n);
    }
    *o++ = 'e';
    *o++ = exp10 < 0 ? '-' : '+';
    o += FormatInt64(abs_exp, o);
  }
  return static_cast<size_t>(o - out);
}

std::string FormatDouble(double v) {
  char buf[kMaxDoubleChars];
  return std::string(buf, FormatDouble(v, buf));
}

std::optional<uint64_t> ParseMemorySize(std::string_view s) {
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') digits++;
  if (digits == 0) return std::nullopt;
  std::string unit;
  for (char c : s.substr(digits)) unit.push_back(static_cast<char>(std::tolower(c)));
  uint64_t mul;
  if (unit.empty() || unit == "b") mul = 1;
  else if (unit == "k") mul = 1000;
  else if (unit == "kb") mul = 1024;
  else if (unit == "m") mul = 1000ULL * 1000;
  else if (unit == "mb") mul = 1024ULL * 1024;
  else if (unit == "g") mul = 1000ULL * 1000 * 1000;
  else if (unit == "gb") mul = 1024ULL * 1024 * 1024;
  else return std::nullopt;
  uint64_t v;
  if (!ParseUint64(s.substr(0, digits), &v)) return std::nullopt;
  if (v > std::numeric_limits<uint64_t>::max() / mul) return std::nullopt;
  return v * mul;
}

std::string HexOf(const unsigned char* data, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; i++) {
    out[i * 2] = kHex[data[i] >> 4];
    out[i * 2 + 1] = kHex[data[i] & 15];
  }
  return out;
}

std::string RandomHex(size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::string s(n, '0');
  for (char& c : s) c = kHex[rng() & 15];
  return s;
}

}  // namespace peregrine
