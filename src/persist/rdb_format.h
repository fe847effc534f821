// Redis's RDB format: the constants a file and a DUMP payload are made of
// (as Redis 7.4's rdb.h numbers them; docs/persistence.md describes the
// layout and which of them Peregrine writes).
#pragma once

#include <cstdint>

namespace peregrine::rdb {

// The version Peregrine writes: Redis 7.0's, so that Debian's redis-server
// (7.0) and every later Redis load the file or payload. A value that needs a
// later format (a hash with field deadlines: Redis 7.4's) raises it to
// kVersionFieldTtl.
inline constexpr int kVersion = 10;
inline constexpr int kVersionFieldTtl = 12;
// The newest version Peregrine reads.
inline constexpr int kMaxVersion = 12;

// Length encodings: the two high bits of the first byte.
inline constexpr uint8_t k6BitLen = 0;
inline constexpr uint8_t k14BitLen = 1;
inline constexpr uint8_t k32BitLen = 0x80;
inline constexpr uint8_t k64BitLen = 0x81;
inline constexpr uint8_t kEncVal = 3;
// Special string encodings (kEncVal << 6 | one of these).
inline constexpr uint8_t kEncInt8 = 0;
inline constexpr uint8_t kEncInt16 = 1;
inline constexpr uint8_t kEncInt32 = 2;
inline constexpr uint8_t kEncLzf = 3;

// Value types.
enum Type : uint8_t {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZSet = 3,
  kTypeHash = 4,
  kTypeZSet2 = 5,
  kTypeModulePreGa = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZSetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZSetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
  kTypeSetListpack = 20,
  kTypeStreamListpacks3 = 21,
  kTypeHashMetadataPreGa = 22,
  kTypeHashListpackExPreGa = 23,
  kTypeHashMetadata = 24,
  kTypeHashListpackEx = 25,
};

inline bool IsObjectType(int t) { return (t >= 0 && t <= 7) || (t >= 9 && t <= 25); }

// Opcodes between keys.
enum Opcode : uint8_t {
  kOpSlotInfo = 244,
  kOpFunction2 = 245,
  kOpFunctionPreGa = 246,
  kOpModuleAux = 247,
  kOpIdle = 248,
  kOpFreq = 249,
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireTimeMs = 252,
  kOpExpireTime = 253,
  kOpSelectDb = 254,
  kOpEof = 255,
};

// A quicklist node's container (kTypeListQuicklist2).
inline constexpr uint64_t kQuicklistPlain = 1;
inline constexpr uint64_t kQuicklistPacked = 2;

}  // namespace peregrine::rdb
