// CompactKey: a key as the keyspace table stores it, in 16 bytes. Short keys
// live inline: up to 15 bytes as they are, and 16- or 17-character ASCII keys
// (redis-benchmark's "key:000000000042", memtier's "memtier-1234567") packed
// at 7 bits per character. Longer keys live in a heap block, and the 16 bytes
// keep the pointer, the size and 40 bits of the key's hash, so that the table
// can rehash and split without touching the heap block.
//
// Layout (little-endian words w0 = bytes[0..8), w1 = bytes[8..16)):
//   inline  bytes[0..len) the key, zero-padded        tag = len (0..15)
//   packed  w0 = chars 0..7 (56 bits) | chars 8.. << 56,
//           w1 = the rest of chars 8..15, char 16 at bit 48  tag = 16 or 17
//   heap    bytes[0..6) pointer, [6..10) size, [10..15) hash bits 24..63
//                                                     tag = kKindHeap
// The tag is byte 15; its low 5 bits are the kind, its top bits are flags
// that the table keeps with the entry and that are not part of the key.
//
// Every key has exactly one encoding (a short key is never on the heap), so
// two short keys are equal exactly when their 16 bytes are (flags masked),
// and the hash of a short key is computed from its 16 bytes: no decoding on
// the lookup path, and rehashing a stored key reads only the entry.
//
// Not thread-safe; owned by one shard like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/pack7.h"

namespace peregrine {

class CompactKey {
 public:
  // The largest key (the heap form keeps a 32-bit size).
  static constexpr size_t kMaxSize = 0xFFFFFFFFu;
  // Bytes a caller must provide to View() for a packed key.
  static constexpr size_t kScratchSize = 17;

  static constexpr uint8_t kKindMask = 0x1F;
  static constexpr uint8_t kKindPacked16 = 16;
  static constexpr uint8_t kKindPacked17 = 17;
  static constexpr uint8_t kKindHeap = 18;
  // Not a key: a free slot of the table's entry arena.
  static constexpr uint8_t kKindHole = 19;
  // Flags kept in the tag byte's top bits (the table's business).
  static constexpr uint8_t kFlagTtl = 0x80;

  // A key to look up: its canonical 16-byte form (heap keys: the kind only)
  // and its hash, computed once.
  struct Probe {
    uint64_t w0 = 0, w1 = 0;  // flags zero
    std::string_view bytes;
    uint64_t hash = 0;
    bool is_short() const { return (w1 >> 56) != kKindHeap; }
  };

  // Encodes `s` for lookups and hashes it.
  static Probe MakeProbe(std::string_view s) {
    Probe p = Encode(s);
    p.hash = HashProbe(p);
    return p;
  }
  // The hash MakeProbe(s).hash would give. Only bits 24..63 are meaningful
  // to the table (a heap key keeps just those).
  static uint64_t Hash(std::string_view s) { return MakeProbe(s).hash; }

  // The empty key "" (tag 0). REQUIRES for Init: s.size() <= kMaxSize.
  CompactKey() noexcept { w_[0] = w_[1] = 0; }
  // Stores the key `p` was made from (allocating for a long key, counted).
  void Init(const Probe& p);
  // Frees the heap block, if any; the key is then "" with its flags cleared.
  void Release();

  uint8_t kind() const { return tag() & kKindMask; }
  bool is_heap() const { return kind() == kKindHeap; }
  size_t size() const;

  // The key's bytes. A packed key is unpacked into `scratch`
  // (kScratchSize bytes), which must outlive the view.
  std::string_view View(char* scratch) const;
  std::string ToString() const {
    char scratch[kScratchSize];
    return std::string(View(scratch));
  }

  // Equality with a lookup key.
  bool Matches(const Probe& p) const {
    if (p.is_short()) return w_[0] == p.w0 && ((w_[1] ^ p.w1) & kNoFlags) == 0;
    return kind() == kKindHeap && heap_size() == p.bytes.size() && (w_[1] >> 16 & kHash40Mask) == (p.hash >> 24) &&
           std::memcmp(heap_ptr(), p.bytes.data(), p.bytes.size()) == 0;
  }

  // The hash of the stored key, bits 24..63 exact (see Hash()).
  uint64_t StoredHash() const;

  uint8_t flags() const { return tag() & ~kKindMask; }
  void set_flags(uint8_t f) { SetTag(static_cast<uint8_t>(kind() | f)); }

  // Bytes allocated on the heap for this key (0 when inline).
  size_t HeapBytes() const;

  // Hole bookkeeping for the table's arenas: a hole keeps the index of the
  // next free slot.
  void MakeHole(uint32_t next_free) {
    w_[0] = next_free;
    w_[1] = uint64_t{kKindHole} << 56;
  }
  bool is_hole() const { return kind() == kKindHole; }
  uint32_t next_free() const { return static_cast<uint32_t>(w_[0]); }

 private:
  static Probe Encode(std::string_view s) {
    Probe p;
    p.bytes = s;
    const size_t n = s.size();
    if (n <= 15) {
      char buf[16] = {};
      if (n > 0) std::memcpy(buf, s.data(), n);
      buf[15] = static_cast<char>(n);
      std::memcpy(&p.w0, buf, 8);
      std::memcpy(&p.w1, buf + 8, 8);
      return p;
    }
    if (n <= 17) {
      uint64_t lo, hi;
      std::memcpy(&lo, s.data(), 8);
      std::memcpy(&hi, s.data() + 8, 8);
      const uint8_t last = n == 17 ? static_cast<uint8_t>(s[16]) : 0;
      if (IsAscii8(lo | hi) && last < 0x80) {
        const uint64_t a = Pack8(lo), b = Pack8(hi);
        p.w0 = a | (b << 56);
        p.w1 = (b >> 8) | (uint64_t{last} << 48) | (uint64_t{n == 17 ? kKindPacked17 : kKindPacked16} << 56);
        return p;
      }
    }
    p.w1 = uint64_t{kKindHeap} << 56;
    return p;
  }
  static uint64_t HashProbe(const Probe& p);
  static constexpr uint64_t kNoFlags = ~(uint64_t{0xE0} << 56);
  static constexpr uint64_t kHash40Mask = (uint64_t{1} << 40) - 1;

  uint8_t tag() const { return static_cast<uint8_t>(w_[1] >> 56); }
  void SetTag(uint8_t t) { w_[1] = (w_[1] & ~(uint64_t{0xFF} << 56)) | (uint64_t{t} << 56); }
  char* heap_ptr() const { return reinterpret_cast<char*>(w_[0] & ((uint64_t{1} << 48) - 1)); }
  size_t heap_size() const { return static_cast<size_t>((w_[0] >> 48) | ((w_[1] & 0xFFFF) << 16)); }

  uint64_t w_[2];
};

static_assert(sizeof(CompactKey) == 16);

}  // namespace peregrine
