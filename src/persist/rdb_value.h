// Reading one value of any RDB type (Redis 2.4 to 7.4 forms) into
// Peregrine's containers, which pick their own encodings by the configured
// limits as the value is built.
#pragma once

#include <cstdint>
#include <string>

#include "core/value.h"
#include "persist/rdb_reader.h"

namespace peregrine {

// The container directives values are built with.
struct ContainerLimits {
  ListLimits list;
  SetLimits set;
  HashLimits hash;
  ZSetLimits zset;
};

enum class RdbLoadStatus {
  kOk,
  // The value was empty (an empty container, or a hash whose every field
  // has expired): a file skips the key, RESTORE refuses it.
  kEmpty,
  // Corrupt, or a type Peregrine does not hold (reader.error() says which).
  kError,
};

// Reads a value of RDB type `type` (the byte before the key in a file,
// the first byte of a DUMP payload). Hash fields whose deadline is at or
// before now_ms are dropped, as Redis 7.4 drops them.
RdbLoadStatus LoadRdbObject(RdbReader& reader, int type, const ContainerLimits& limits, int64_t now_ms,
                            Value* out);

// The name of an RDB type for error messages ("stream", "module", ...).
std::string RdbTypeName(int type);

}  // namespace peregrine
