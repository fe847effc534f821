// A stored value in 16 bytes: a string (a CompactString: inline up to 14
// bytes, 15 ASCII bytes packed, integers as int64, longer strings on the
// heap) or a container handle (a pointer to the container's block and its
// encoding): a list (ListObject), a set (SetObject), a hash (HashObject) or
// a sorted set (ZSetObject) or a stream (StreamObject).
//
// Byte 15 is the tag that tells them apart: a CompactString's own tags are
// below 0x80; a container's is 0x80 | type << 3 | encoding (the containers
// keep the same layout, kValueTag). Byte 14 of every kind holds the key's
// access data (an LFU counter or an idle-time stamp, see core/access.h) for
// the table, which has no other room for it in its 32-byte entries.
// Replacing the value (assignment) keeps it, as Redis keeps a key's LFU
// counter when SET overwrites it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/compact_string.h"
#include "core/hash_object.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/zset_object.h"

namespace peregrine {

enum class ValueType : uint8_t { kString, kList, kSet, kZSet, kHash, kStream };

// The name TYPE reports ("string", "list", ...).
std::string_view TypeName(ValueType type);

class Value {
 public:
  Value() noexcept : str_() {}
  explicit Value(CompactString s) noexcept : str_(std::move(s)) {}
  explicit Value(SetObject s) noexcept : set_(std::move(s)) {}
  explicit Value(HashObject h) noexcept : hash_(std::move(h)) {}
  explicit Value(ListObject l) noexcept : list_(std::move(l)) {}
  explicit Value(ZSetObject z) noexcept : zset_(std::move(z)) {}
  explicit Value(StreamValue s) noexcept : stream_(std::move(s)) {}
  // A string value as SET stores it (canonical integers integer-encoded).
  static Value String(std::string_view s) { return Value(CompactString::FromValue(s)); }

  ~Value() {
    if (is_string()) [[likely]]
      str_.~CompactString();
    else
      DestroyContainer();
  }
  // Moves leave `other` an empty string.
  Value(Value&& other) noexcept {
    std::memcpy(static_cast<void*>(this), &other, sizeof(Value));
    other.raw()[kTag] = 0;
  }
  // Keeps this value's access byte (see above).
  Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      const uint8_t spare = raw()[kSpare];
      this->~Value();
      std::memcpy(static_cast<void*>(this), &other, sizeof(Value));
      raw()[kSpare] = spare;
      other.raw()[kTag] = 0;
    }
    return *this;
  }
  // A deep copy (COPY): containers are cloned in their encoding.
  Value(const Value& other);
  Value& operator=(const Value& other) {
    if (this != &other) *this = Value(other);
    return *this;
  }

  ValueType type() const {
    const uint8_t tag = raw()[kTag];
    return tag & kContainerFlag ? static_cast<ValueType>((tag >> 3) & 0xF) : ValueType::kString;
  }
  bool is_string() const { return (raw()[kTag] & kContainerFlag) == 0; }
  bool is_set() const { return (raw()[kTag] & kTypeMask) == SetObject::kValueTag; }
  bool is_hash() const { return (raw()[kTag] & kTypeMask) == HashObject::kValueTag; }
  bool is_list() const { return (raw()[kTag] & kTypeMask) == ListObject::kValueTag; }
  bool is_zset() const { return (raw()[kTag] & kTypeMask) == ZSetObject::kValueTag; }
  bool is_stream() const { return (raw()[kTag] & kTypeMask) == StreamValue::kValueTag; }

  // REQUIRES: is_string().
  const CompactString& str() const { return str_; }
  CompactString& mutable_str() { return str_; }
  // REQUIRES: is_set() / is_hash() / is_list() / is_zset().
  const SetObject& set() const { return set_; }
  SetObject& mutable_set() { return set_; }
  const HashObject& hash() const { return hash_; }
  HashObject& mutable_hash() { return hash_; }
  const ListObject& list() const { return list_; }
  ListObject& mutable_list() { return list_; }
  const ZSetObject& zset() const { return zset_; }
  ZSetObject& mutable_zset() { return zset_; }
  const StreamObject& stream() const { return stream_.get(); }
  StreamObject& mutable_stream() { return stream_.get(); }

  // The key's access data (see above).
  uint8_t access() const { return raw()[kSpare]; }
  void set_access(uint8_t a) { raw()[kSpare] = a; }

  // OBJECT ENCODING's name for the representation.
  std::string_view EncodingName() const;
  // Bytes allocated on the heap for the value (MEMORY USAGE).
  size_t HeapBytes() const;

 private:
  static constexpr size_t kSpare = 14;
  static constexpr size_t kTag = 15;
  static constexpr uint8_t kContainerFlag = 0x80;
  static constexpr uint8_t kTypeMask = 0xF8;

  uint8_t* raw() { return reinterpret_cast<uint8_t*>(this); }
  const uint8_t* raw() const { return reinterpret_cast<const uint8_t*>(this); }
  void DestroyContainer();

  union {
    CompactString str_;
    SetObject set_;
    HashObject hash_;
    ListObject list_;
    ZSetObject zset_;
    StreamValue stream_;
  };
};

static_assert(sizeof(Value) == 16);
static_assert((SetObject::kValueTag >> 3 & 0xF) == static_cast<uint8_t>(ValueType::kSet));
static_assert((HashObject::kValueTag >> 3 & 0xF) == static_cast<uint8_t>(ValueType::kHash));
static_assert((ListObject::kValueTag >> 3 & 0xF) == static_cast<uint8_t>(ValueType::kList));
static_assert((ZSetObject::kValueTag >> 3 & 0xF) == static_cast<uint8_t>(ValueType::kZSet));
static_assert((StreamValue::kValueTag >> 3 & 0xF) == static_cast<uint8_t>(ValueType::kStream));

}  // namespace peregrine
