// Incremental freeing of large containers (see lazy_free.h).
#include "core/lazy_free.h"

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
  q.jobs.clear();
  detail::pending = 0;
}

}  // namespace lazy_free
}  // namespace peregrine
