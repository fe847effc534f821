// Keyspace memory accounting (see memory.h).
#include "core/memory.h"

#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <cstdlib>
#include <cstring>
#include <new>

namespace peregrine {
namespace {

// Each thread counts in a slot of its own, on its own cache line. A thread
// takes a slot the first time it allocates and gives it back when it exits
// (its count moves to `g_retired`); slots beyond kSlots share the last one
// with atomic adds.
constexpr int kSlots = 512;
struct alignas(64) Slot {
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> heap{0};  // the rest of the process's (operator new), the same way
  bool taken = false;            // under g_mutex
};
Slot g_slots[kSlots];
std::atomic<int> g_high{0};  // slots ever taken: the sum reads [0, g_high)
std::atomic<int64_t> g_retired{0};
std::atomic<int64_t> g_retired_heap{0};
std::mutex g_mutex;          // taking and returning slots only

Slot* TakeSlot();

struct SlotOwner {
  Slot* slot = nullptr;
  ~SlotOwner() {
    if (slot == nullptr || slot == &g_slots[kSlots - 1]) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_retired.fetch_add(slot->bytes.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
    g_retired_heap.fetch_add(slot->heap.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
    slot->taken = false;
    // What the thread's later destructors free counts in the shared slot.
    SetShared();
  }
  static void SetShared();
};
thread_local Slot* tls_slot = nullptr;  // trivial: no guard on the hot path
void SlotOwner::SetShared() { tls_slot = &g_slots[kSlots - 1]; }
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

inline void Add(std::atomic<int64_t> Slot::*counter, int64_t delta) {
  Slot* s = tls_slot;
  if (__builtin_expect(s == nullptr, 0)) s = TakeSlot();
  std::atomic<int64_t>& c = s->*counter;
  if (__builtin_expect(s == &g_slots[kSlots - 1], 0)) {
    c.fetch_add(delta, std::memory_order_relaxed);
  } else {
    c.store(c.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
}
inline void Count(int64_t delta) { Add(&Slot::bytes, delta); }

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

int64_t TotalHeapBytes() {
  int64_t sum = g_retired_heap.load(std::memory_order_relaxed);
  const int high = g_high.load(std::memory_order_acquire);
  for (int i = 0; i < high; i++) sum += g_slots[i].heap.load(std::memory_order_relaxed);
  return sum;
}

int64_t TotalCountedBytes() {
  int64_t sum = g_retired.load(std::memory_order_relaxed) + g_retired_heap.load(std::memory_order_relaxed);
  const int high = g_high.load(std::memory_order_acquire);
  for (int i = 0; i < high; i++)
    sum += g_slots[i].bytes.load(std::memory_order_relaxed) + g_slots[i].heap.load(std::memory_order_relaxed);
  return sum;
}

void CountHeap(int64_t delta) { Add(&Slot::heap, delta); }

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

// The C++ heap, counted (TotalHeapBytes): every operator new and delete of
// the process goes through these, which take the block from malloc (the
// allocator the server ships) and count its usable size. Not in sanitized
// builds, whose runtimes check new and delete themselves.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PEREGRINE_COUNT_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define PEREGRINE_COUNT_HEAP 0
#endif
#endif
#ifndef PEREGRINE_COUNT_HEAP
#define PEREGRINE_COUNT_HEAP 1
#endif

#if PEREGRINE_COUNT_HEAP
namespace {

void* HeapAlloc(size_t n, size_t alignment, bool nothrow) {
  for (;;) {
    void* p = alignment <= alignof(std::max_align_t)
                  ? std::malloc(n == 0 ? 1 : n)
                  : std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
    if (p != nullptr) {
      peregrine::CountHeap(static_cast<int64_t>(malloc_usable_size(p)));
      return p;
    }
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    h();
  }
}

void HeapFree(void* p) noexcept {
  if (p == nullptr) return;
  peregrine::CountHeap(-static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}

}  // namespace

void* operator new(size_t n) { return HeapAlloc(n, 0, false); }
void* operator new[](size_t n) { return HeapAlloc(n, 0, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return HeapAlloc(n, 0, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return HeapAlloc(n, 0, true); }
void* operator new(size_t n, std::align_val_t a) { return HeapAlloc(n, static_cast<size_t>(a), false); }
void* operator new[](size_t n, std::align_val_t a) { return HeapAlloc(n, static_cast<size_t>(a), false); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return HeapAlloc(n, static_cast<size_t>(a), true);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return HeapAlloc(n, static_cast<size_t>(a), true);
}
void operator delete(void* p) noexcept { HeapFree(p); }
void operator delete[](void* p) noexcept { HeapFree(p); }
void operator delete(void* p, size_t) noexcept { HeapFree(p); }
void operator delete[](void* p, size_t) noexcept { HeapFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { HeapFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { HeapFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { HeapFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { HeapFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { HeapFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { HeapFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { HeapFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { HeapFree(p); }
#endif
