// Keyspace memory accounting. Every allocation that holds data of the
// keyspace (the table's arenas, index groups, segment headers and directory,
// key and value bytes) goes through these
// functions, which count the allocator's usable size — what the bytes really
// cost — in a per-thread counter. Only its thread writes it (a plain load and
// store, no read-modify-write); other threads read it to sum the process's
// keyspace (maxmemory, INFO). A command that spans shards may allocate for
// another shard's keys on its own thread (docs/transactions.md), so a
// thread's figure is not exactly its shard's: only the sum is.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peregrine {

// Bytes the calling thread's keyspace holds.
int64_t KeyspaceBytes();
// Bytes the keyspace holds over all threads (those that have exited
// included), read without stopping them.
int64_t TotalKeyspaceBytes();

// Bytes the C++ heap holds over all threads (every operator new not yet
// deleted, at the allocator's usable size; 0 in sanitized builds). With the
// keyspace, the clients' buffers and the scripts' interpreters it makes
// INFO's used_memory.
int64_t TotalHeapBytes();
void CountHeap(int64_t delta);
// Both, in one pass (what maxmemory bounds).
int64_t TotalCountedBytes();

// malloc / realloc / free with accounting. Running out of memory is fatal
// (as Redis's zmalloc): there is no sane way to continue a half-done command.
void* CountedAlloc(size_t n);
void* CountedRealloc(void* p, size_t n);
// The same when the caller knows the block's usable size: one query less.
void* CountedRealloc(void* p, size_t n, size_t old_usable);
// The same, also telling the new block's usable size (a caller that keeps
// its capacity asks the allocator no more).
void* CountedAlloc(size_t n, size_t* usable);
void* CountedRealloc(void* p, size_t n, size_t old_usable, size_t* usable);
void CountedFree(void* p);
// Zeroed memory aligned to `alignment` (a power of two); freed with CountedFree.
void* CountedCallocAligned(size_t n, size_t alignment);
// The usable size of a block from the functions above.
size_t CountedUsableSize(const void* p);
// A block from plain malloc joins the keyspace's count (a large argument read
// straight into the block that becomes the value); freed with CountedFree.
void CountAdopted(void* p);
// A counted block leaves the count without being freed (a lent block that a
// reply still sends, core/lent_blocks.h); then freed with plain free.
void ForgetCounted(void* p);

// An allocator for standard containers whose memory is keyspace data (a
// stream's node index): their blocks are counted like the rest.
template <typename T>
struct CountedAllocator {
  using value_type = T;
  CountedAllocator() = default;
  template <typename U>
  CountedAllocator(const CountedAllocator<U>&) noexcept {}  // NOLINT: converting, as std::allocator
  T* allocate(size_t n) { return static_cast<T*>(CountedAlloc(n * sizeof(T))); }
  void deallocate(T* p, size_t) noexcept { CountedFree(p); }
  template <typename U>
  bool operator==(const CountedAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace peregrine
