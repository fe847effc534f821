// CompactKey encoding, packing and hashing (see compact_key.h).
#include "core/compact_key.h"

#include "core/splitmix.h"

// xxHash's header-only mode: XXH3 inlined (long keys' hash; short keys have
// their own, in the header).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "core/memory.h"

namespace peregrine {
namespace {

// A per-process seed, so that nobody outside can choose keys that collide
// (the table's groups would fill and its probes grow).
const uint64_t kSeed = [] {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}();

}  // namespace

// The short-key hash's two secrets from the seed.
const std::array<uint64_t, 2> CompactKey::kHashSecret = [] {
  uint64_t x = kSeed;
  const uint64_t first = SplitMix64(x);
  return std::array<uint64_t, 2>{first, SplitMix64(x)};
}();

uint64_t CompactKey::HashLong(std::string_view s) { return XXH3_64bits_withSeed(s.data(), s.size(), kSeed); }

void CompactKey::Init(const Probe& p) {
  if (p.is_short()) {
    w_[0] = p.w0;
    w_[1] = p.w1;
    return;
  }
  const size_t n = p.bytes.size();
  char* block = static_cast<char*>(CountedAlloc(n));
  if (reinterpret_cast<uintptr_t>(block) >> 48 != 0) {  // the heap form keeps 48 bits
    std::fprintf(stderr, "CompactKey: the allocator returned an address above 2^48\n");
    std::abort();
  }
  std::memcpy(block, p.bytes.data(), n);
  w_[0] = reinterpret_cast<uint64_t>(block) | (uint64_t{n} << 48);
  w_[1] = (uint64_t{n} >> 16 & 0xFFFF) | ((p.hash >> 24) << 16) | (uint64_t{kKindHeap} << 56);
}

void CompactKey::Release() {
  if (is_heap()) CountedFree(heap_ptr());
  w_[0] = w_[1] = 0;
}

size_t CompactKey::size() const {
  const uint8_t k = kind();
  if (k <= 15) return k;
  if (k == kKindPacked16) return 16;
  if (k == kKindPacked17) return 17;
  if (k == kKindHeap) return heap_size();
  return 0;
}

std::string_view CompactKey::View(char* scratch) const {
  const uint8_t k = kind();
  if (k <= 15) return {reinterpret_cast<const char*>(w_), k};
  if (k == kKindHeap) return {heap_ptr(), heap_size()};
  if (k == kKindPacked16 || k == kKindPacked17) {
    const uint64_t lo = w_[0] & ~kTopBits;
    const uint64_t hi = (w_[1] & ~(kTopBits | kTagByte)) | (uint64_t{GatherTopBits(w_[1])} << 56);
    std::memcpy(scratch, &lo, 8);
    std::memcpy(scratch + 8, &hi, 8);
    scratch[16] = static_cast<char>(GatherTopBits(w_[0]));
    return {scratch, k == kKindPacked17 ? size_t{17} : size_t{16}};
  }
  return {};
}

uint64_t CompactKey::StoredHash() const {
  if (is_heap()) return ((w_[1] >> 16) & kHash40Mask) << 24;
  return HashShort(w_[0], w_[1] & kNoFlags);
}

size_t CompactKey::HeapBytes() const { return is_heap() ? CountedUsableSize(heap_ptr()) : 0; }

}  // namespace peregrine
