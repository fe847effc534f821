// Bit operations on byte strings, as Redis's bitops.c numbers bits: bit 0 is
// the most significant bit of byte 0. For the bitmap commands (SETBIT,
// BITCOUNT, BITPOS, BITOP, BITFIELD) over string values; pure functions of
// bytes, unit-tested against a bit-at-a-time model (bits_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace peregrine::bits {

inline bool Get(const uint8_t* p, uint64_t bit) { return (p[bit >> 3] >> (7 - (bit & 7))) & 1; }
inline void Set(uint8_t* p, uint64_t bit, bool on) {
  const uint8_t mask = static_cast<uint8_t>(1u << (7 - (bit & 7)));
  if (on)
    p[bit >> 3] |= mask;
  else
    p[bit >> 3] &= static_cast<uint8_t>(~mask);
}

// Set bits in bits [first, last] of p (inclusive; last < 8 * the size),
// a word at a time in the middle.
uint64_t Count(const uint8_t* p, uint64_t first, uint64_t last);

// The first bit equal to `bit` in [first, last], or -1.
int64_t Find(const uint8_t* p, uint64_t first, uint64_t last, bool bit);

// BITOP: the sources combined byte by byte, as long as the longest (the
// shorter ones read as zero bytes past their end). kNot takes one source.
enum class Op : uint8_t { kAnd, kOr, kXor, kNot };
std::string Combine(Op op, std::span<const std::string_view> sources);

// BITFIELD's integers: `width` bits (1..64) from bit `offset` of p, which
// must hold them.
uint64_t GetUnsigned(const uint8_t* p, uint64_t offset, int width);
int64_t GetSigned(const uint8_t* p, uint64_t offset, int width);
void SetUnsigned(uint8_t* p, uint64_t offset, int width, uint64_t value);

// Redis's checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow: 0
// if value + incr fits in `width` bits, 1 on overflow, -1 on underflow;
// then *limit (when not null) is what WRAP or SAT stores (FAIL: nothing).
enum class Overflow : uint8_t { kWrap, kSat, kFail };
int CheckUnsigned(uint64_t value, int64_t incr, int width, Overflow ow, uint64_t* limit);
int CheckSigned(int64_t value, int64_t incr, int width, Overflow ow, int64_t* limit);

}  // namespace peregrine::bits
