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

}  // namespace peregrine
