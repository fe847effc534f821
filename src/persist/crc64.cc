// CRC-64/Jones, slice-by-8 (see crc64.h).
#include "persist/crc64.h"

#include <array>
#include <cstring>

namespace peregrine {
namespace {

// The polynomial with its bits reversed: the table walks the register from
// its low end, which is what reflecting input and output amounts to.
constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint64_t i = 0; i < 256; i++) {
    uint64_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kReflectedPoly : c >> 1;
    t[0][i] = c;
  }
  // t[k][i]: the contribution of byte i followed by k zero bytes.
  for (size_t k = 1; k < 8; k++)
    for (size_t i = 0; i < 256; i++) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}

constexpr Tables kTables = MakeTables();

}  // namespace

uint64_t Crc64(uint64_t crc, const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (len >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);  // little-endian hosts only, as the rest of the server
    w ^= crc;
    crc = kTables[7][w & 0xff] ^ kTables[6][(w >> 8) & 0xff] ^ kTables[5][(w >> 16) & 0xff] ^
          kTables[4][(w >> 24) & 0xff] ^ kTables[3][(w >> 32) & 0xff] ^ kTables[2][(w >> 40) & 0xff] ^
          kTables[1][(w >> 48) & 0xff] ^ kTables[0][w >> 56];
    p += 8;
    len -= 8;
  }
  while (len-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace peregrine
