// Persistence as the server runs it (see persistence.h).
#include "server/persistence.h"

#include <algorithm>

namespace peregrine {

ContainerLimits ContainerLimitsOf(const Config& c) {
  ContainerLimits l;
  l.list = ListLimits{c.list_max_listpack_size, c.list_compress_depth};
  // Redis 7.2 caps an intset at 2^30 members whatever the directive says.
  l.set = SetLimits{std::min<size_t>(c.set_max_intset_entries, size_t{1} << 30), c.set_max_listpack_entries,
                    c.set_max_listpack_value};
  l.hash = HashLimits{c.hash_max_listpack_entries, c.hash_max_listpack_value};
  l.zset = ZSetLimits{c.zset_max_listpack_entries, c.zset_max_listpack_value};
  return l;
}

}  // namespace peregrine
