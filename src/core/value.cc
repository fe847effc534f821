// Value helpers (see value.h).
#include "core/value.h"

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

std::string_view Value::EncodingName() const {
  switch (str_.encoding()) {
    case CompactString::Encoding::kInt: return "int";
    case CompactString::Encoding::kEmbstr: return "embstr";
    case CompactString::Encoding::kRaw: return "raw";
  }
  return "raw";
}

}  // namespace peregrine
