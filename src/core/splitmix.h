// SplitMix64 (Steele, Lea and Flood), one step: advances `state` and
// returns 64 well-mixed bits. Used where a few cheap pseudo-random or
// derived values are needed (the key hash's secrets, the containers'
// random picks); not for anything that must be unpredictable.
#pragma once

#include <cstdint>

namespace peregrine {

inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace peregrine
