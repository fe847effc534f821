// Incremental freeing of large containers (see lazy_free.h).
#include "core/lazy_free.h"

#include <chrono>
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

struct Queue {
  std::deque<PackedTable*> tables;
  // A thread that exits frees what it still holds.
  ~Queue() {
    for (PackedTable* t : tables) Finish(t);
  }
};

Queue& ThisThread() {
  static thread_local Queue q;
  return q;
}

}  // namespace

void FreeTable(PackedTable* t) {
  if (t->size() >= kMinQueuedEntries) {
    ThisThread().tables.push_back(t);
    detail::pending++;
    return;
  }
  Finish(t);
}

bool RunSlice(int64_t budget_us) {
  Queue& q = ThisThread();
  if (q.tables.empty()) return false;
  const int64_t deadline = NowUs() + budget_us;
  while (!q.tables.empty()) {
    PackedTable* t = q.tables.front();
    if (t->DestroySome(kPagesPerCheck)) {
      Finish(t);
      q.tables.pop_front();
      detail::pending--;
    }
    if (NowUs() >= deadline) break;
  }
  return !q.tables.empty();
}

void FreeAll() {
  Queue& q = ThisThread();
  for (PackedTable* t : q.tables) Finish(t);
  q.tables.clear();
  detail::pending = 0;
}

}  // namespace lazy_free
}  // namespace peregrine
