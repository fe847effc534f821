// Bit operations on byte strings (see bits.h).
#include "core/bits.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>

namespace peregrine::bits {
namespace {

// A byte's bits [from, to] (0 = the most significant), the others cleared.
uint8_t ByteMask(int from, int to) { return static_cast<uint8_t>((0xFFu >> from) & (0xFFu << (7 - to))); }

uint64_t Load64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

}  // namespace

// Built twice, the loader picking the POPCNT instruction where the CPU has
// it (the build targets baseline x86-64, whose popcount is a sequence of
// shifts and adds: 4x slower): BITCOUNT at memory speed. Not under
// ThreadSanitizer, whose runtime is not up yet when the loader resolves
// the choice (the process crashes at start).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
[[gnu::target_clones("popcnt", "default")]]
#endif
uint64_t Count(const uint8_t* p, uint64_t first, uint64_t last) {
  if (first > last) return 0;
  uint64_t byte = first >> 3;
  const uint64_t end_byte = last >> 3;
  if (byte == end_byte) return std::popcount(static_cast<unsigned>(p[byte] & ByteMask(first & 7, last & 7)));
  uint64_t n = std::popcount(static_cast<unsigned>(p[byte] & ByteMask(first & 7, 7)));
  byte++;
  // Whole bytes between: 32 at a time (four words), then 8, then one.
  for (; byte + 32 <= end_byte; byte += 32)
    n += std::popcount(Load64(p + byte)) + std::popcount(Load64(p + byte + 8)) +
         std::popcount(Load64(p + byte + 16)) + std::popcount(Load64(p + byte + 24));
  for (; byte + 8 <= end_byte; byte += 8) n += std::popcount(Load64(p + byte));
  for (; byte < end_byte; byte++) n += std::popcount(static_cast<unsigned>(p[byte]));
  return n + std::popcount(static_cast<unsigned>(p[end_byte] & ByteMask(0, last & 7)));
}

int64_t Find(const uint8_t* p, uint64_t first, uint64_t last, bool bit) {
  if (first > last) return -1;
  // A byte with a bit of the kind wanted: as a byte of set bits.
  auto wanted = [bit](uint8_t b) { return static_cast<uint8_t>(bit ? b : ~b); };
  const uint64_t end_byte = last >> 3;
  uint64_t byte = first >> 3;
  auto in_byte = [&](uint64_t i, uint8_t mask) -> int64_t {
    const uint8_t m = wanted(p[i]) & mask;
    return m == 0 ? -1 : static_cast<int64_t>(i * 8 + std::countl_zero(m));
  };
  if (byte == end_byte) return in_byte(byte, ByteMask(first & 7, last & 7));
  if (const int64_t r = in_byte(byte, ByteMask(first & 7, 7)); r >= 0) return r;
  byte++;
  // Whole words that cannot hold the bit are skipped.
  const uint64_t skip = bit ? 0 : ~uint64_t{0};
  while (byte + 8 <= end_byte && Load64(p + byte) == skip) byte += 8;
  for (; byte < end_byte; byte++)
    if (const int64_t r = in_byte(byte, 0xFF); r >= 0) return r;
  return in_byte(end_byte, ByteMask(0, last & 7));
}

std::string Combine(Op op, std::span<const std::string_view> sources) {
  size_t len = 0;
  for (std::string_view s : sources) len = std::max(len, s.size());
  std::string out(len, '\0');
  if (len == 0) return out;
  uint8_t* o = reinterpret_cast<uint8_t*>(out.data());
  const std::string_view first = sources[0];
  if (!first.empty()) std::memcpy(o, first.data(), first.size());  // (the rest is zeros; a missing key has no bytes)
  if (op == Op::kNot) {
    for (size_t i = 0; i < len; i++) o[i] = static_cast<uint8_t>(~o[i]);
    return out;
  }
  for (size_t k = 1; k < sources.size(); k++) {
    const uint8_t* s = reinterpret_cast<const uint8_t*>(sources[k].data());
    const size_t n = sources[k].size();
    switch (op) {
      case Op::kAnd:
        for (size_t i = 0; i < n; i++) o[i] &= s[i];
        std::memset(o + n, 0, len - n);  // past its end it reads as zeros
        break;
      case Op::kOr:
        for (size_t i = 0; i < n; i++) o[i] |= s[i];
        break;
      case Op::kXor:
        for (size_t i = 0; i < n; i++) o[i] ^= s[i];
        break;
      case Op::kNot:
        break;
    }
  }
  return out;
}

uint64_t GetUnsigned(const uint8_t* p, uint64_t offset, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; i++) v = (v << 1) | (Get(p, offset + i) ? 1 : 0);
  return v;
}

int64_t GetSigned(const uint8_t* p, uint64_t offset, int width) {
  uint64_t v = GetUnsigned(p, offset, width);
  // Two's complement: the top bit's sign spreads to the bits above.
  if (width < 64 && (v & (uint64_t{1} << (width - 1)))) v |= ~uint64_t{0} << width;
  return static_cast<int64_t>(v);
}

void SetUnsigned(uint8_t* p, uint64_t offset, int width, uint64_t value) {
  for (int i = 0; i < width; i++) Set(p, offset + i, (value >> (width - 1 - i)) & 1);
}

int CheckUnsigned(uint64_t value, int64_t incr, int width, Overflow ow, uint64_t* limit) {
  const uint64_t max = width == 64 ? UINT64_MAX : (uint64_t{1} << width) - 1;
  const int64_t maxincr = static_cast<int64_t>(max - value);
  const int64_t minincr = static_cast<int64_t>(0 - value);
  int r = 0;
  if (value > max || (incr > 0 && incr > maxincr))
    r = 1;
  else if (incr < 0 && incr < minincr)
    r = -1;
  if (r != 0 && limit != nullptr) {
    if (ow == Overflow::kWrap) {
      const uint64_t mask = width == 64 ? 0 : ~uint64_t{0} << width;
      *limit = (value + static_cast<uint64_t>(incr)) & ~mask;
      return 1;  // (Redis says 1 for a wrap either way)
    }
    if (ow == Overflow::kSat) *limit = r > 0 ? max : 0;
  }
  return r;
}

int CheckSigned(int64_t value, int64_t incr, int width, Overflow ow, int64_t* limit) {
  const int64_t max = width == 64 ? INT64_MAX : (int64_t{1} << (width - 1)) - 1;
  const int64_t min = -max - 1;
  // (Computed unsigned: they may wrap, and are used only when they do not.)
  const int64_t maxincr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const int64_t minincr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  int r = 0;
  if (value > max || (width != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr))
    r = 1;
  else if (value < min || (width != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr))
    r = -1;
  if (r != 0 && limit != nullptr) {
    if (ow == Overflow::kWrap) {
      uint64_t c = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
      if (width < 64) {
        const uint64_t mask = ~uint64_t{0} << width;
        if (c & (uint64_t{1} << (width - 1)))
          c |= mask;
        else
          c &= ~mask;
      }
      *limit = static_cast<int64_t>(c);
      return 1;
    }
    if (ow == Overflow::kSat) *limit = r > 0 ? max : min;
  }
  return r;
}

}  // namespace peregrine::bits
