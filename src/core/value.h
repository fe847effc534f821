// A stored value in 16 bytes: a type tag and its payload. Only strings exist
// so far, held as a CompactString (inline up to 14 bytes, and 15 ASCII bytes
// packed; integers as int64; longer strings on the heap). Lists, hashes, sets, sorted sets and streams
// will be further tags with a pointer to their container.
//
// Byte 14 of every encoding holds the key's access data (an LFU counter or
// an idle-time stamp, see core/access.h) for the table, which has no other
// room for it in its 32-byte entries. Replacing the value (assignment) keeps
// it, as Redis keeps a key's LFU counter when SET overwrites it.
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

  // The key's access data (see above). Any future container type must leave
  // byte 14 of its encoding free as well.
  uint8_t access() const { return str_.spare(); }
  void set_access(uint8_t a) { str_.set_spare(a); }

  // OBJECT ENCODING's name for the representation.
  std::string_view EncodingName() const;

 private:
  CompactString str_;
};

static_assert(sizeof(Value) == 16);

}  // namespace peregrine
