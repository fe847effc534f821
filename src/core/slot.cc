// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), table-driven.
// Written here because it is a dozen lines and Debian ships no library for it.
#include "core/slot.h"

#include <array>

namespace peregrine {
namespace {

constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (uint32_t i = 0; i < 256; i++) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; bit++)
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
    table[i] = crc;
  }
  return table;
}

// Slicing by 8: kSlices[k][b] is the CRC of byte b followed by k zero bytes
// (kSlices[0] is the byte-wise table). The CRC is linear, so 8 bytes at a
// time are 8 independent lookups XORed together, the register's two bytes
// folded into the first two: about 4x the byte-wise loop on a 16-byte key,
// which the dispatcher hashes once per command with more than one worker.
using SliceTables = std::array<std::array<uint16_t, 256>, 8>;
constexpr SliceTables MakeSliceTables() {
  SliceTables t{};
  t[0] = MakeCrc16Table();
  for (size_t k = 1; k < 8; k++)
    for (size_t i = 0; i < 256; i++) {
      const uint16_t prev = t[k - 1][i];
      t[k][i] = static_cast<uint16_t>((prev << 8) ^ t[0][prev >> 8]);
    }
  return t;
}

constexpr SliceTables kSlices = MakeSliceTables();

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) {
    crc = static_cast<uint16_t>(kSlices[7][p[0] ^ (crc >> 8)] ^ kSlices[6][p[1] ^ (crc & 0xff)] ^
                                kSlices[5][p[2]] ^ kSlices[4][p[3]] ^ kSlices[3][p[4]] ^ kSlices[2][p[5]] ^
                                kSlices[1][p[6]] ^ kSlices[0][p[7]]);
  }
  for (; n > 0; n--, p++) crc = static_cast<uint16_t>((crc << 8) ^ kSlices[0][((crc >> 8) ^ *p) & 0xff]);
  return crc;
}

uint16_t SlotOf(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1)
      key = key.substr(open + 1, close - open - 1);
  }
  return Crc16(key) & (kNumSlots - 1);
}

}  // namespace peregrine
