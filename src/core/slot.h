// Key → hash slot, exactly as Redis Cluster computes it: CRC16 (XMODEM) of the
// key, or of the part inside the first non-empty {hash tag}, modulo 16384.
#pragma once

#include <cstdint>
#include <string_view>

namespace peregrine {

inline constexpr uint32_t kNumSlots = 16384;

uint16_t Crc16(std::string_view data);
uint16_t SlotOf(std::string_view key);

}  // namespace peregrine
