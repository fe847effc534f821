// CompactString (see compact_string.h).
#include "core/compact_string.h"

#include <malloc.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/lent_blocks.h"
#include "core/memory.h"
#include "core/numbers.h"
#include "core/pack7.h"

namespace peregrine {
namespace {

char* Allocate(size_t n) { return static_cast<char*>(CountedAlloc(n)); }

// Strings longer than this are "raw" in Redis even when SET creates them.
constexpr size_t kEmbstrLimit = 44;

// A new value's bytes are written with non-temporal stores once they are
// this long. The block is cold (fresh from the allocator, or an old value's
// being overwritten): ordinary stores first read every line of it from
// memory (read for ownership) and then push the data out of the cache
// anyway. Streaming stores skip the read: SET of 2 KB values at pipeline 64
// went from 1.28 to 1.08 us of server CPU per request, 16 KB values at
// pipeline 16 from 5.27 to 4.43 (interleaved runs, medians of 4). The cost:
// a value read right after it is written comes from memory once, as any
// value not used lately does.
constexpr size_t kStreamingCopyMin = 1024;

// memcpy to a block a value will live in (see above). Written by hand: the
// C library streams only copies larger than a good part of the cache.
void CopyIntoValue(char* dst, const char* src, size_t n) {
#ifdef __SSE2__
  if (n >= kStreamingCopyMin && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
    }
    if (i < n) std::memcpy(dst + i, src + i, n - i);
    _mm_sfence();  // streaming stores are weakly ordered: done before anything follows
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace

void CompactString::Init(std::string_view s) {
  if (s.size() <= kInlineCapacity) {
    if (!s.empty()) std::memcpy(bytes_, s.data(), s.size());
    bytes_[kTag] = static_cast<uint8_t>(s.size());
    return;
  }
  if (s.size() == kPackedSize) {
    uint64_t lo, hi = 0;
    std::memcpy(&lo, s.data(), 8);
    std::memcpy(&hi, s.data() + 8, 7);
    if (IsAscii8(lo | hi)) {
      // 105 bits: chars 0..7 in bits 0..55, chars 8..14 in bits 56..104.
      const uint64_t a = Pack8(lo), b = Pack8(hi);
      const uint64_t w0 = a | (b << 56), w1 = b >> 8;
      std::memcpy(bytes_, &w0, 8);
      std::memcpy(bytes_ + 8, &w1, 6);
      bytes_[kTag] = kTagPacked;
      return;
    }
  }
  char* p = Allocate(s.size());
  CopyIntoValue(p, s.data(), s.size());
  SetHeap(p, s.size(), /*raw=*/false);
}

CompactString::CompactString(const CompactString& other) {
  if (other.bytes_[kTag] & kTagHeap) {
    size_t n = other.heap_size();
    char* p = Allocate(n);
    std::memcpy(p, other.heap_ptr(), n);
    SetHeap(p, n, (other.bytes_[kTag] & kRawFlag) != 0);
    bytes_[kSpare] = other.bytes_[kSpare];
  } else {
    std::memcpy(bytes_, other.bytes_, sizeof(bytes_));
  }
}

CompactString& CompactString::operator=(const CompactString& other) {
  if (this != &other) {
    CompactString copy(other);
    *this = std::move(copy);
  }
  return *this;
}

CompactString CompactString::FromValue(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && ParseInt64(s, &v)) return FromInt(v);
  return CompactString(s);
}

CompactString CompactString::AdoptBlock(char* block, size_t size) {
  CountAdopted(block);
  CompactString c;
  c.SetHeap(block, size, /*raw=*/false);
  return c;
}

bool CompactString::AssignInPlace(std::string_view s) {
  const uint8_t tag = bytes_[kTag];
  if (!(tag & kTagHeap) || s.size() <= kPackedSize) return false;  // short ones are inline
  char* p = heap_ptr();
  if ((tag & kLentFlag) && lent_blocks::IsLent(p)) return false;
  // The block holds at least the current size (its usable size, which asks
  // the allocator and costs a cache miss, is not worth it: overwrites of a
  // cache entry are mostly with a value of the same size).
  const size_t cap = heap_size();
  if (s.size() > cap || cap - s.size() > s.size() / 8) return false;
  CopyIntoValue(p, s.data(), s.size());
  uint64_t n = s.size();
  std::memcpy(bytes_ + 8, &n, 6);
  bytes_[kTag] = kTagHeap;
  return true;
}

void CompactString::ReleaseLent() { lent_blocks::Release(heap_ptr()); }

void CompactString::Unlend() {
  if ((bytes_[kTag] & (kTagHeap | kLentFlag)) != (kTagHeap | kLentFlag)) return;
  char* old = heap_ptr();
  if (lent_blocks::IsLent(old)) {
    const size_t n = heap_size();
    char* p = Allocate(n);
    std::memcpy(p, old, n);
    lent_blocks::Release(old);
    std::memcpy(bytes_, &p, sizeof(p));
  }
  bytes_[kTag] &= static_cast<uint8_t>(~kLentFlag);
}

CompactString CompactString::FromInt(int64_t v) {
  CompactString c;
  std::memcpy(c.bytes_, &v, sizeof(v));
  c.bytes_[kIntUnshared] = 0;
  c.bytes_[kTag] = kTagInt;
  return c;
}

std::string_view CompactString::ViewSlow(char* scratch) const {
  if (is_int()) return {scratch, FormatInt64(int_value(), scratch)};
  uint64_t w0, w1 = 0;
  std::memcpy(&w0, bytes_, 8);
  std::memcpy(&w1, bytes_ + 8, 6);
  const uint64_t lo = Unpack8(w0), hi = Unpack8((w0 >> 56) | (w1 << 8));
  std::memcpy(scratch, &lo, 8);
  std::memcpy(scratch + 8, &hi, 7);
  return {scratch, kPackedSize};
}

size_t CompactString::size() const {
  uint8_t tag = bytes_[kTag];
  if (tag <= kInlineCapacity) return tag;
  if (tag == kTagPacked) return kPackedSize;
  if (tag == kTagInt) {
    char buf[kIntBufferSize];
    return FormatInt64(int_value(), buf);
  }
  return heap_size();
}

CompactString::Encoding CompactString::encoding() const {
  uint8_t tag = bytes_[kTag];
  if (tag == kTagInt) return Encoding::kInt;
  if (tag <= kTagPacked) return Encoding::kEmbstr;
  if ((tag & kRawFlag) || heap_size() > kEmbstrLimit) return Encoding::kRaw;
  return Encoding::kEmbstr;
}

size_t CompactString::HeapBytes() const {
  if (!(bytes_[kTag] & kTagHeap)) return 0;
  return malloc_usable_size(heap_ptr());
}

void CompactString::MakeRaw(size_t capacity) {
  char scratch[kIntBufferSize];
  std::string_view current = View(scratch);
  const size_t size = current.size();
  capacity = std::max(capacity, size);
  if ((bytes_[kTag] & kTagHeap) && malloc_usable_size(heap_ptr()) >= capacity) {
    bytes_[kTag] |= kRawFlag;
    return;
  }
  char* p;
  // A block a reply may still be sending is never moved by realloc (which
  // would free it): it is copied and handed over.
  const bool lent = (bytes_[kTag] & kTagHeap) && (bytes_[kTag] & kLentFlag) && lent_blocks::IsLent(heap_ptr());
  if ((bytes_[kTag] & kTagHeap) && !lent) {
    p = static_cast<char*>(CountedRealloc(heap_ptr(), capacity));
  } else {
    p = Allocate(capacity);
    std::memcpy(p, current.data(), size);
    if (lent) lent_blocks::Release(heap_ptr());
  }
  SetHeap(p, size, /*raw=*/true);
}

void CompactString::Append(std::string_view s) {
  // A view of this very string would be overwritten (inline bytes) or freed
  // (a moved heap block) while growing: copy it out first.
  const char* own = (bytes_[kTag] & kTagHeap) ? heap_ptr() : reinterpret_cast<const char*>(bytes_);
  if (!s.empty() && s.data() >= own && s.data() < own + std::max<size_t>(size(), sizeof(bytes_))) {
    std::string copy(s);
    Append(copy);
    return;
  }
  const size_t size = this->size();
  const size_t need = size + s.size();
  // Greedy growth as Redis's sds: double while small, then 1 MB at a time.
  constexpr size_t kMaxPrealloc = 1024 * 1024;
  const size_t want = need < kMaxPrealloc ? need * 2 : need + kMaxPrealloc;
  size_t cap = (bytes_[kTag] & kTagHeap) ? malloc_usable_size(heap_ptr()) : 0;
  MakeRaw(cap >= need ? cap : want);
  if (!s.empty()) std::memcpy(heap_ptr() + size, s.data(), s.size());
  SetRawSize(need);
}

char* CompactString::MutableBytes(size_t min_size) {
  Unlend();  // the caller writes anywhere: not into bytes a reply still sends
  const size_t size = this->size();
  if (min_size <= size) {
    MakeRaw(size);
    return heap_ptr();
  }
  size_t cap = (bytes_[kTag] & kTagHeap) ? malloc_usable_size(heap_ptr()) : 0;
  MakeRaw(cap >= min_size ? cap : min_size);
  std::memset(heap_ptr() + size, 0, min_size - size);
  SetRawSize(min_size);
  return heap_ptr();
}

char* CompactString::Resize(size_t size) {
  if (size >= this->size()) return MutableBytes(size);
  Unlend();
  MakeRaw(size);
  SetRawSize(size);
  return heap_ptr();
}

}  // namespace peregrine
