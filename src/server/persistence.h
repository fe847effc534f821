// Persistence as the server runs it (docs/persistence.md): RDB files saved
// from and loaded into every shard, the state INFO persistence reports,
// and the container limits values are rebuilt with.
#pragma once

#include <cstdint>
#include <string>

#include "persist/rdb_value.h"
#include "server/config.h"

namespace peregrine {

class Server;

// The container directives of `config`, for values read from RDB data.
ContainerLimits ContainerLimitsOf(const Config& config);

}  // namespace peregrine
