// Keyspace memory accounting (see memory.h).
#include "core/memory.h"

#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <cstdlib>
#include <cstring>

namespace peregrine {
namespace {

// Each thread counts in a slot of its own, on its own cache line. A thread
// takes a slot the first time it allocates and gives it back when it exits
// (its count moves to `g_retired`); slots beyond kSlots share the last one
// with atomic adds.
constexpr int kSlots = 512;
struct alignas(64) Slot {
  std::atomic<int64_t> bytes{0};
  bool taken = false;  // under g_mutex
};
Slot g_slots[kSlots];
std::atomic<int> g_high{0};  // slots ever taken: the sum reads [0, g_high)
std::atomic<int64_t> g_retired{0};
std::mutex g_mutex;          // taking and returning slots only

Slot* TakeSlot();

struct SlotOwner {
  Slot* slot = nullptr;
  ~SlotOwner() {
    if (slot == nullptr || slot == &g_slots[kSlots - 1]) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_retired.fetch_add(slot->bytes.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
    slot->taken = false;
  }
};
thread_local Slot* tls_slot = nullptr;  // trivial: no guard on the hot path
thread_local SlotOwner tls_owner;       // touched once per thread, to return the slot

Slot* TakeSlot() {
  Slot* s = &g_slots[kSlots - 1];
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (int i = 0; i < kSlots - 1; i++) {
      if (!g_slots[i].taken) {
        g_slots[i].taken = true;
        s = &g_slots[i];
        int high = g_high.load(std::memory_order_relaxed);
        while (high < i + 1 && !g_high.compare_exchange_weak(high, i + 1)) {
        }
        break;
      }
    }
  }
  if (s == &g_slots[kSlots - 1]) g_high.store(kSlots);
  tls_owner.slot = s;
  tls_slot = s;
  return s;
}

inline void Count(int64_t delta) {
  Slot* s = tls_slot;
  if (__builtin_expect(s == nullptr, 0)) s = TakeSlot();
  if (__builtin_expect(s == &g_slots[kSlots - 1], 0)) {
    s->bytes.fetch_add(delta, std::memory_order_relaxed);
  } else {
    s->bytes.store(s->bytes.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
}

[[noreturn]] void OutOfMemory(size_t n) {
  std::fprintf(stderr, "Out of memory allocating %zu bytes\n", n);
  std::abort();
}

}  // namespace

int64_t KeyspaceBytes() {
  Slot* s = tls_slot;
  return s == nullptr ? 0 : s->bytes.load(std::memory_order_relaxed);
}

int64_t TotalKeyspaceBytes() {
  int64_t sum = g_retired.load(std::memory_order_relaxed);
  const int high = g_high.load(std::memory_order_acquire);
  for (int i = 0; i < high; i++) sum += g_slots[i].bytes.load(std::memory_order_relaxed);
  return sum;
}

void* CountedAlloc(size_t n, size_t* usable) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) OutOfMemory(n);
  *usable = malloc_usable_size(p);
  Count(static_cast<int64_t>(*usable));
  return p;
}

void* CountedAlloc(size_t n) {
  size_t usable;
  return CountedAlloc(n, &usable);
}

void* CountedRealloc(void* p, size_t n, size_t old_usable, size_t* usable) {
  void* q = std::realloc(p, n == 0 ? 1 : n);
  if (q == nullptr) OutOfMemory(n);
  *usable = malloc_usable_size(q);
  Count(static_cast<int64_t>(*usable) - static_cast<int64_t>(old_usable));
  return q;
}

void* CountedRealloc(void* p, size_t n, size_t old_usable) {
  size_t usable;
  return CountedRealloc(p, n, old_usable, &usable);
}

void* CountedRealloc(void* p, size_t n) { return CountedRealloc(p, n, CountedUsableSize(p)); }

void* CountedCallocAligned(size_t n, size_t alignment) {
  if (n == 0) n = alignment;
  void* p = std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
  if (p == nullptr) OutOfMemory(n);
  const size_t usable = malloc_usable_size(p);
  std::memset(p, 0, usable);
  Count(static_cast<int64_t>(usable));
  return p;
}

size_t CountedUsableSize(const void* p) { return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p)); }

void CountAdopted(void* p) {
  if (p != nullptr) Count(static_cast<int64_t>(malloc_usable_size(p)));
}

void ForgetCounted(void* p) {
  if (p != nullptr) Count(-static_cast<int64_t>(malloc_usable_size(p)));
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  Count(-static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}

}  // namespace peregrine
