// Keyspace memory accounting (see memory.h).
#include "core/memory.h"

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace peregrine {
namespace {

thread_local int64_t tls_bytes = 0;

[[noreturn]] void OutOfMemory(size_t n) {
  std::fprintf(stderr, "Out of memory allocating %zu bytes\n", n);
  std::abort();
}

}  // namespace

int64_t KeyspaceBytes() { return tls_bytes; }

void* CountedAlloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) OutOfMemory(n);
  tls_bytes += static_cast<int64_t>(malloc_usable_size(p));
  return p;
}

void* CountedRealloc(void* p, size_t n) {
  const int64_t before = p != nullptr ? static_cast<int64_t>(malloc_usable_size(p)) : 0;
  void* q = std::realloc(p, n == 0 ? 1 : n);
  if (q == nullptr) OutOfMemory(n);
  tls_bytes += static_cast<int64_t>(malloc_usable_size(q)) - before;
  return q;
}

void* CountedCallocAligned(size_t n, size_t alignment) {
  if (n == 0) n = alignment;
  void* p = std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
  if (p == nullptr) OutOfMemory(n);
  const size_t usable = malloc_usable_size(p);
  std::memset(p, 0, usable);
  tls_bytes += static_cast<int64_t>(usable);
  return p;
}

size_t CountedUsableSize(const void* p) { return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p)); }

void CountedFree(void* p) {
  if (p == nullptr) return;
  tls_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

}  // namespace peregrine
