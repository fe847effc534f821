// Incremental freeing of large containers (see lazy_free.h).
#include "core/lazy_free.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>

#include "core/memory.h"
#include "core/packed_table.h"

namespace peregrine {
namespace lazy_free {
namespace {

// Pages freed between clock reads (a page is at most ~2 KB of entries).
constexpr size_t kPagesPerCheck = 32;

std::atomic<int64_t> g_pending{0};
std::atomic<uint64_t> g_freed{0};

void Done(size_t n) {
  g_pending.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed);
  g_freed.fetch_add(n, std::memory_order_relaxed);
}

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Frees a table (what is left of it) and its own block.
void Finish(PackedTable* t) {
  t->~PackedTable();
  CountedFree(t);
}

bool SomeOfTable(void* obj, size_t pages) {
  PackedTable* t = static_cast<PackedTable*>(obj);
  if (!t->DestroySome(pages)) return false;
  Finish(t);
  return true;
}

struct Job {
  void* obj;
  bool (*some)(void*, size_t);
};

struct Jobs {
  std::deque<Job> jobs;
  // A thread that exits frees what it still holds.
  ~Jobs() {
    for (const Job& j : jobs)
      while (!j.some(j.obj, SIZE_MAX)) {
      }
    Done(jobs.size());
  }
};

Jobs& ThisThread() {
  static thread_local Jobs q;
  return q;
}

}  // namespace

void Queue(void* obj, bool (*some)(void* obj, size_t blocks)) {
  ThisThread().jobs.push_back(Job{obj, some});
  detail::pending++;
  g_pending.fetch_add(1, std::memory_order_relaxed);
}

void FreeTable(PackedTable* t) {
  if (t->size() >= kMinQueuedEntries) {
    Queue(t, SomeOfTable);
    return;
  }
  Finish(t);
}

bool RunSlice(int64_t budget_us) {
  Jobs& q = ThisThread();
  if (q.jobs.empty()) return false;
  const int64_t deadline = NowUs() + budget_us;
  while (!q.jobs.empty()) {
    const Job j = q.jobs.front();
    if (j.some(j.obj, kPagesPerCheck)) {
      q.jobs.pop_front();
      detail::pending--;
      Done(1);
    }
    if (NowUs() >= deadline) break;
  }
  return !q.jobs.empty();
}

void FreeAll() {
  Jobs& q = ThisThread();
  for (const Job& j : q.jobs)
    while (!j.some(j.obj, SIZE_MAX)) {
    }
  Done(q.jobs.size());
  q.jobs.clear();
  detail::pending = 0;
}

int64_t PendingAllThreads() { return std::max<int64_t>(0, g_pending.load(std::memory_order_relaxed)); }
uint64_t FreedAllThreads() { return g_freed.load(std::memory_order_relaxed); }
void ResetFreed() { g_freed.store(0, std::memory_order_relaxed); }

}  // namespace lazy_free
}  // namespace peregrine
