// CompactKey: a key as the keyspace table stores it, in 16 bytes. Short keys
// live inline: up to 15 bytes as they are, and 16- or 17-character ASCII keys
// (redis-benchmark's "key:000000000042", memtier's "memtier-1234567") packed
// (the last one or two characters' 7 bits in the others' free top bits).
// Longer keys live in a heap block, and the 16 bytes
// keep the pointer, the size and 40 bits of the key's hash, so that the table
// can rehash and split without touching the heap block.
//
// Layout (little-endian words w0 = bytes[0..8), w1 = bytes[8..16)):
//   inline  bytes[0..len) the key, zero-padded        tag = len (0..15)
//   packed  w0 = chars 0..7 as they are, char 16's 7 bits in their top bits,
//           w1 = chars 8..14 as they are, char 15's 7 bits in their top
//                bits                                        tag = 16 or 17
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

#include <array>
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
  // XXH3 of `s` with the per-process seed: the hash of keys on the heap, and
  // of the containers' members (core/packed.h), all 64 bits good.
  static uint64_t HashLong(std::string_view s);

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
  bool Matches(const Probe& p) const { return p.is_short() ? MatchesShort(p) : MatchesLong(p); }
  // The same, when the caller knows which kind `p` is.
  bool MatchesShort(const Probe& p) const { return w_[0] == p.w0 && ((w_[1] ^ p.w1) << kFlagBits) == 0; }
  bool MatchesLong(const Probe& p) const {
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
    const char* d = s.data();
    if (n <= 15) {
      // The bytes loaded whole words at a time (overlapping for the odd
      // sizes) rather than through a memcpy of variable length, a call.
      if (n >= 8) {
        p.w0 = Load64(d);
        p.w1 = n > 8 ? Load64(d + n - 8) >> (8 * (16 - n)) : 0;
      } else if (n >= 4) {
        p.w0 = Load32(d) | (Load32(d + n - 4) << (8 * (n - 4)));
      } else if (n > 0) {
        p.w0 = uint64_t{static_cast<uint8_t>(d[0])} | (uint64_t{static_cast<uint8_t>(d[n / 2])} << (8 * (n / 2))) |
               (uint64_t{static_cast<uint8_t>(d[n - 1])} << (8 * (n - 1)));
      }
      p.w1 |= uint64_t{n} << 56;
      return p;
    }
    if (n <= 17) {
      const uint64_t lo = Load64(d), hi = Load64(d + 8);
      const uint8_t last = n == 17 ? static_cast<uint8_t>(d[16]) : 0;
      if (IsAscii8(lo | hi) && last < 0x80) {
        // ASCII leaves the top bit of every byte free: the 16th character
        // (byte 15, where the tag goes) and the 17th move into the free
        // top bits of the seven bytes before them. A multiply and a mask
        // each, where packing eight characters to 56 bits is a dozen steps.
        p.w0 = lo | SpreadToTopBits(last);
        p.w1 = (hi & ~kTagByte) | SpreadToTopBits(static_cast<uint8_t>(hi >> 56)) |
               (uint64_t{n == 17 ? kKindPacked17 : kKindPacked16} << 56);
        return p;
      }
    }
    p.w1 = uint64_t{kKindHeap} << 56;
    return p;
  }
  static uint64_t Load64(const char* d) {
    uint64_t x;
    std::memcpy(&x, d, 8);
    return x;
  }
  static uint64_t Load32(const char* d) {
    uint32_t x;
    std::memcpy(&x, d, 4);
    return x;
  }
  // Bit j of a 7-bit `c` to bit 7 of byte j (j = 0..6): copy j of c shifted
  // left by 7j+7 puts its bit j at 8j+7, and the copies (7 bits, 7 apart)
  // never overlap, so the multiply adds no carries.
  static uint64_t SpreadToTopBits(uint8_t c) { return (uint64_t{c} * 0x0002040810204080ull) & kTopBits; }
  // The inverse: bit 8j+7 of `w` to bit j (j = 0..6). Bit 8j+7 shifted left
  // by 49-7j lands on 56+j; the other products land below 56 (each on its
  // own bit, so no carries) or above 63.
  static uint8_t GatherTopBits(uint64_t w) {
    return static_cast<uint8_t>((((w & kTopBits) * 0x0002040810204080ull) >> 56) & 0x7F);
  }
  static constexpr uint64_t kTopBits = 0x0080808080808080ull;
  static constexpr uint64_t kTagByte = uint64_t{0xFF} << 56;
  static uint64_t HashProbe(const Probe& p) { return p.is_short() ? HashShort(p.w0, p.w1) : HashLong(p.bytes); }
  // The hash of a short key's two words (flags clear). Written here rather
  // than calling XXH3 on the 16 bytes: the library's entry point derives its
  // seed-dependent constants and dispatches on the length at every call,
  // about 50 instructions of a lookup's 250, where this is a dozen. The
  // construction is the usual one for two words (wyhash's and XXH3's short
  // inputs): a 64x64->128-bit multiply of the words, each xored with a
  // per-process secret, folded; then the words added back (so that a word
  // equal to its secret does not zero the product for every other word) and
  // a multiply-xorshift finish that spreads the result over the bits the
  // table uses (24..63).
  static uint64_t HashShort(uint64_t w0, uint64_t w1) {
    const unsigned __int128 m = static_cast<unsigned __int128>(w0 ^ kHashSecret[0]) * (w1 ^ kHashSecret[1]);
    uint64_t h = (static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64)) + ((w0 << 29) | (w0 >> 35)) + w1;
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return h;
  }
  // Random per process (see compact_key.cc).
  static const std::array<uint64_t, 2> kHashSecret;
  static constexpr int kFlagBits = 3;  // the tag byte's top bits
  static constexpr uint64_t kNoFlags = ~uint64_t{0} >> kFlagBits;
  static constexpr uint64_t kHash40Mask = (uint64_t{1} << 40) - 1;

  uint8_t tag() const { return static_cast<uint8_t>(w_[1] >> 56); }
  void SetTag(uint8_t t) { w_[1] = (w_[1] & ~(uint64_t{0xFF} << 56)) | (uint64_t{t} << 56); }
  char* heap_ptr() const { return reinterpret_cast<char*>(w_[0] & ((uint64_t{1} << 48) - 1)); }
  size_t heap_size() const { return static_cast<size_t>((w_[0] >> 48) | ((w_[1] & 0xFFFF) << 16)); }

  uint64_t w_[2];
};

static_assert(sizeof(CompactKey) == 16);

}  // namespace peregrine
