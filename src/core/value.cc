// Value helpers (see value.h).
#include "core/value.h"

#include <new>

namespace peregrine {

std::string_view TypeName(ValueType type) {
  switch (type) {
    case ValueType::kString: return "string";
    case ValueType::kList: return "list";
    case ValueType::kSet: return "set";
    case ValueType::kZSet: return "zset";
    case ValueType::kHash: return "hash";
    case ValueType::kStream: return "stream";
  }
  return "none";
}

Value::Value(const Value& other) {
  switch (other.type()) {
    case ValueType::kSet: new (&set_) SetObject(other.set_.Clone()); break;
    case ValueType::kHash: new (&hash_) HashObject(other.hash_.Clone()); break;
    case ValueType::kList: new (&list_) ListObject(other.list_.Clone()); break;
    case ValueType::kZSet: new (&zset_) ZSetObject(other.zset_.Clone()); break;
    case ValueType::kStream: new (&stream_) StreamValue(other.stream_.Clone()); break;
    default: new (&str_) CompactString(other.str_); break;
  }
  raw()[kSpare] = other.raw()[kSpare];
}

void Value::DestroyContainer() {
  switch (type()) {
    case ValueType::kSet: set_.~SetObject(); break;
    case ValueType::kHash: hash_.~HashObject(); break;
    case ValueType::kList: list_.~ListObject(); break;
    case ValueType::kZSet: zset_.~ZSetObject(); break;
    case ValueType::kStream: stream_.~StreamValue(); break;
    default: break;
  }
}

std::string_view Value::EncodingName() const {
  switch (type()) {
    case ValueType::kSet: return set_.EncodingName();
    case ValueType::kHash: return hash_.EncodingName();
    case ValueType::kList: return list_.EncodingName();
    case ValueType::kZSet: return zset_.EncodingName();
    case ValueType::kStream: return "stream";
    default: break;
  }
  switch (str_.encoding()) {
    case CompactString::Encoding::kInt: return "int";
    case CompactString::Encoding::kEmbstr: return "embstr";
    case CompactString::Encoding::kRaw: return "raw";
  }
  return "raw";
}

size_t Value::HeapBytes() const {
  switch (type()) {
    case ValueType::kSet: return set_.AllocatedBytes();
    case ValueType::kHash: return hash_.AllocatedBytes();
    case ValueType::kList: return list_.AllocatedBytes();
    case ValueType::kZSet: return zset_.AllocatedBytes();
    case ValueType::kStream: return stream_.AllocatedBytes();
    default: return str_.HeapBytes();
  }
}

}  // namespace peregrine
