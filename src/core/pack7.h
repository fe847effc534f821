// Seven-bit packing of ASCII text: eight characters (one per byte of a
// little-endian word, top bits clear) into 56 bits and back. CompactString
// packs 15-character values with it, so that they fit in 16 bytes beside
// their tag; CompactKey only uses IsAscii8 (its 16/17-character keys move
// one character's bits into the others' free top bits instead, which is
// cheaper on the lookup path).
#pragma once

#include <cstdint>

namespace peregrine {

// True if none of the eight bytes of `x` has its top bit set.
inline bool IsAscii8(uint64_t x) { return (x & 0x8080808080808080ull) == 0; }

// Eight 7-bit characters into 56 bits: three merge steps of neighbouring
// fields (what BMI2's pext does, portably). REQUIRES: IsAscii8(x).
inline uint64_t Pack8(uint64_t x) {
  x = (x & 0x007F007F007F007Full) | ((x & 0x7F007F007F007F00ull) >> 1);
  x = (x & 0x00003FFF00003FFFull) | ((x & 0x3FFF00003FFF0000ull) >> 2);
  x = (x & 0x000000000FFFFFFFull) | ((x & 0x0FFFFFFF00000000ull) >> 4);
  return x;
}

// The inverse of Pack8 (bits above 56 are ignored).
inline uint64_t Unpack8(uint64_t y) {
  y = (y & 0x000000000FFFFFFFull) | ((y & 0x00FFFFFFF0000000ull) << 4);
  y = (y & 0x00003FFF00003FFFull) | ((y & 0x0FFFC0000FFFC000ull) << 2);
  y = (y & 0x007F007F007F007Full) | ((y & 0x3F803F803F803F80ull) << 1);
  return y;
}

}  // namespace peregrine
