// Packed items: how one string (a hash's field or value, a set's member) is
// written inside the containers' packed blocks (core/packed_page.h). A
// header byte, then the bytes; a canonical integer is kept as an integer of
// 1 to 8 bytes; a string too long to move around with its neighbours lives
// in a heap block of its own.
//
//   header      what follows
//   0x00..0x7F  a string of 0..127 bytes
//   0x80..0xBF  one more length byte: a string of ((h & 0x3F) << 8 | next)
//               bytes (128..16,383)
//   0xC0..0xC7  an integer of (h - 0xBF) bytes, little-endian, sign-extended
//   0xC8        an external string: 6 bytes of length, 8 bytes of pointer to
//               a counted heap block (strings longer than kMaxInline)
//   0xC9        a deadline: 8 bytes, unix ms (before an entry's items; a hash
//               field with a time to live)
//
// An item is an integer exactly when its string form is a canonical integer
// (ParseInt64: Redis's string2ll), so two items are equal when their headers
// agree on the kind and their payloads are equal. Not thread-safe, like
// everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace peregrine::packed {

constexpr size_t kMaxInline = 16383;
constexpr uint8_t kHeaderInt = 0xC0;
constexpr uint8_t kHeaderExternal = 0xC8;
constexpr uint8_t kHeaderDeadline = 0xC9;
constexpr size_t kExternalItemSize = 15;
constexpr size_t kDeadlineSize = 9;
// Bytes a caller must provide to View() for an integer's decimal form.
constexpr size_t kScratchSize = 24;

// Whether `s` is kept as an integer: a canonical integer (ParseInt64,
// Redis's string2ll) of at most 20 characters.
bool AsInt(std::string_view s, int64_t* v);

// The 64-bit hash of a string (XXH3 with a per-process seed). Containers
// pick pages by its top bits and tags by its low byte.
uint64_t Hash(std::string_view s);

// A string looked for: its bytes, its hash, and its integer value when it is
// a canonical integer (compared without formatting).
struct Probe {
  std::string_view s;
  uint64_t hash = 0;
  int64_t int_value = 0;
  bool is_int = false;

  explicit Probe(std::string_view str);
  uint8_t tag() const { return static_cast<uint8_t>(hash); }
};

// How a string will be written: its encoded size first, so that the caller
// can make room, then Write(). It keeps a view of the string, which must
// outlive the Write.
struct ItemPlan {
  std::string_view s;
  int64_t int_value = 0;
  uint32_t size = 0;  // bytes the item takes in the block
  uint8_t int_bytes = 0;  // 1..8 for an integer, 0 for a string

  explicit ItemPlan(std::string_view str);
  ItemPlan(std::string_view str, const Probe& p);  // reuses p's integer check
  // An integer value, as an integer (HINCRBY's result).
  static ItemPlan Int(int64_t v);
};

// Writes the item planned (allocating its external block when it has one)
// and returns the byte after it.
uint8_t* Write(uint8_t* out, const ItemPlan& plan);

// The bytes the item at `p` takes.
inline size_t ItemSize(const uint8_t* p) {
  const uint8_t h = p[0];
  if (h < 0x80) return 1 + h;
  if (h < 0xC0) return 2 + ((size_t{h} & 0x3F) << 8 | p[1]);
  if (h < kHeaderExternal) return 1 + (h - kHeaderInt + 1);
  return h == kHeaderExternal ? kExternalItemSize : kDeadlineSize;
}

// Whether the item at `p` is an integer, and its value.
bool ItemInt(const uint8_t* p, int64_t* v);

// The string form of the item at `p`. An integer is formatted into
// `scratch` (kScratchSize bytes), which must outlive the view.
std::string_view View(const uint8_t* p, char* scratch);

// Whether the item at `p` equals the probe's string.
inline bool Equals(const uint8_t* p, const Probe& probe) {
  const uint8_t h = p[0];
  if (h < 0x80) return !probe.is_int && h == probe.s.size() && std::memcmp(p + 1, probe.s.data(), h) == 0;
  if (h >= kHeaderInt && h < kHeaderExternal) {
    int64_t v;
    return probe.is_int && ItemInt(p, &v) && v == probe.int_value;
  }
  char scratch[kScratchSize];
  return !probe.is_int && View(p, scratch) == probe.s;
}

// The heap bytes the item at `p` holds outside the block (an external
// string's block; 0 otherwise).
size_t ExternalBytes(const uint8_t* p);

// Frees what the item at `p` holds outside the block (an external string's
// block). The item's bytes are left as they are.
void FreeItem(const uint8_t* p);

// A deadline item's value. REQUIRES: p[0] == kHeaderDeadline.
inline int64_t DeadlineOf(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p + 1, 8);
  return v;
}
inline uint8_t* WriteDeadline(uint8_t* out, int64_t ms) {
  out[0] = kHeaderDeadline;
  std::memcpy(out + 1, &ms, 8);
  return out + kDeadlineSize;
}

}  // namespace peregrine::packed
