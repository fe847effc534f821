// A stored value: a type tag and its payload. Only strings exist so far; the
// tag leaves room for lists, hashes, sets, sorted sets and streams. The compact
// 16-byte encoding (inline short strings, integers as integers) is issue #4.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace peregrine {

enum class ValueType : uint8_t { kString, kList, kSet, kZSet, kHash, kStream };

// The name TYPE reports ("string", "list", ...).
std::string_view TypeName(ValueType type);

class Value {
 public:
  static Value String(std::string_view s) { return Value(ValueType::kString, std::string(s)); }
  static Value String(std::string&& s) { return Value(ValueType::kString, std::move(s)); }

  ValueType type() const { return type_; }
  bool is_string() const { return type_ == ValueType::kString; }

  // REQUIRES: is_string().
  const std::string& str() const { return str_; }
  std::string& mutable_str() { return str_; }

 private:
  Value(ValueType type, std::string s) : type_(type), str_(std::move(s)) {}

  ValueType type_;
  std::string str_;
};

}  // namespace peregrine
