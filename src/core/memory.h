// Keyspace memory accounting. Every allocation that holds data of the
// keyspace (the table's arenas, index groups, segment headers and directory,
// key and value bytes) goes through these
// functions, which count the allocator's usable size — what the bytes really
// cost — in a per-thread counter. A shard lives on one thread, so the counter
// is the shard's own figure: no sharing, no atomics (DESIGN.md §4).
#pragma once

#include <cstddef>
#include <cstdint>

namespace peregrine {

// Bytes the calling thread's keyspace holds.
int64_t KeyspaceBytes();

// malloc / realloc / free with accounting. Running out of memory is fatal
// (as Redis's zmalloc): there is no sane way to continue a half-done command.
void* CountedAlloc(size_t n);
void* CountedRealloc(void* p, size_t n);
void CountedFree(void* p);
// Zeroed memory aligned to `alignment` (a power of two); freed with CountedFree.
void* CountedCallocAligned(size_t n, size_t alignment);
// The usable size of a block from the functions above.
size_t CountedUsableSize(const void* p);

}  // namespace peregrine
