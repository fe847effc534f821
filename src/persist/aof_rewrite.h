// A key as the commands that rebuild it (an append-only file's base written
// without the RDB preamble, aof-use-rdb-preamble no): Redis's
// rewriteAppendOnlyFileRio forms, so that Redis loads it as its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/value.h"

namespace peregrine {

// Items per command for containers (Redis's AOF_REWRITE_ITEMS_PER_CMD).
inline constexpr size_t kAofItemsPerCommand = 64;

// Appends to `out` the commands that make `key` hold `v`: SET, RPUSH, SADD,
// ZADD or HMSET (64 items each), then PEXPIREAT for a deadline
// (`expire_ms` >= 0) and HPEXPIREAT for hash fields with their own.
void AppendKeyCommands(std::string* out, std::string_view key, const Value& v, int64_t expire_ms);

// The same for a large key a part at a time (an atomic slot migration
// sends one part per step of its worker): the items (a string's bytes)
// [from, from + max) in the value's own order, which holds while it does
// not change: the first part makes the key (SET, or the first RPUSH/SADD/
// ZADD/HMSET), the others add to it (APPEND, and the same commands), the
// last adds the deadlines. Returns the items covered; *done once the key
// is whole. A stream goes whole in its first part. A part costs its own
// items, not those before it: a list or sorted set seeks to `from`; a
// hash or set in a table goes by the table's SCAN cursor, kept in *scan
// between parts (0 for the first): its parts end at a page's end, so they
// cover about `max` items. Without `scan`, a table's part passes over the
// items before it.
size_t AppendKeyCommandsPart(std::string* out, std::string_view key, const Value& v, int64_t expire_ms, size_t from,
                             size_t max, bool* done, uint64_t* scan = nullptr);
// Items AppendKeyCommandsPart counts in `v` (a string: its bytes).
size_t KeyItems(const Value& v);

}  // namespace peregrine
