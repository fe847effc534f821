// A stored value in 16 bytes: a type tag and its payload. Only strings exist
// so far, held as a CompactString (inline up to 15 bytes, integers as int64,
// longer strings on the heap). Lists, hashes, sets, sorted sets and streams
// will be further tags with a pointer to their container.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "core/compact_string.h"

namespace peregrine {

enum class ValueType : uint8_t { kString, kList, kSet, kZSet, kHash, kStream };

// The name TYPE reports ("string", "list", ...).
std::string_view TypeName(ValueType type);

class Value {
 public:
  Value() = default;
  explicit Value(CompactString s) : str_(std::move(s)) {}
  // A string value as SET stores it (canonical integers integer-encoded).
  static Value String(std::string_view s) { return Value(CompactString::FromValue(s)); }

  ValueType type() const { return ValueType::kString; }
  bool is_string() const { return true; }

  // REQUIRES: is_string().
  const CompactString& str() const { return str_; }
  CompactString& mutable_str() { return str_; }

  // OBJECT ENCODING's name for the representation.
  std::string_view EncodingName() const;

 private:
  CompactString str_;
};

static_assert(sizeof(Value) == 16);

}  // namespace peregrine
