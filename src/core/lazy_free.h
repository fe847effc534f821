// Freeing large containers off the request path. A DEL (or an overwrite, a
// FLUSHALL, an expiry) of a million-member set would otherwise free a
// million entries' pages while every other client of the shard waits (tens
// of milliseconds): a large container's table is instead queued on the
// calling thread's list and freed in slices of bounded time between events
// (Redis's lazyfree, without a background thread: the pages go back to the
// thread that frees them, and nothing is shared). Its bytes stay counted
// until they are freed, as Redis's lazyfree counts them.
//
// Not thread-safe: each thread has its own list.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peregrine {

class PackedTable;

namespace lazy_free {

// Tables of at least this many entries (some 100 pages) are queued; smaller
// ones are freed at once (well under 100 us).
inline constexpr size_t kMinQueuedEntries = 4096;

// Frees `t` (a table placed in a CountedAlloc block) now, or queues it.
void FreeTable(PackedTable* t);
// Queues a container of at least kMinQueuedEntries: some(obj, n) frees n
// more of its blocks (about a page's worth of entries each) and returns
// true once it has freed the last, `obj` included.
void Queue(void* obj, bool (*some)(void* obj, size_t blocks));
// Frees queued tables for about `budget_us` microseconds; returns whether
// any are left.
bool RunSlice(int64_t budget_us);
// Tables queued on this thread (PendingAllThreads: every thread's). Inline
// and constant-initialized: the event loop asks on every iteration.
namespace detail {
inline thread_local size_t pending = 0;
}  // namespace detail
inline size_t Pending() { return detail::pending; }
// Frees every queued table now (eviction: the memory must be gone before
// the limit is checked again).
void FreeAll();
// Every thread's: what is queued, and what was freed from the lists since
// the start or ResetFreed (INFO's lazyfree_pending_objects and
// lazyfreed_objects; CONFIG RESETSTAT).
int64_t PendingAllThreads();
uint64_t FreedAllThreads();
void ResetFreed();

}  // namespace lazy_free
}  // namespace peregrine
