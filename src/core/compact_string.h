// CompactString: a byte string in 16 bytes. Up to 14 bytes live inline, and
// 15-byte ASCII strings too (packed at 7 bits per character); longer strings
// (and 15-byte binary ones) live in one heap block sized to fit (no separate
// header); an integer can be kept as an int64 (Redis's "int" encoding: INCR
// on it allocates nothing). String values are CompactStrings.
//
// Layout (the last byte is the tag):
//   inline:  bytes[0..len) data,                   tag = len (0..14)
//   packed:  bytes[0..14) 15 characters (pack7.h), tag = kTagPacked
//   heap:    bytes[0..8) pointer, [8..14) size,    tag = kTagHeap (| kRawFlag | kLentFlag)
//   integer: bytes[0..8) int64, [8] unshared mark, tag = kTagInt
// Byte 14 is never part of the string: it is the owner's (the keyspace keeps
// a key's access data there, see Value). Construction sets it to 0 (copies
// copy it); assignment and every mutation leave it as it was.
//
// A heap block may be lent to replies being written (core/lent_blocks.h): the
// lent flag says so, and freeing or changing the block in place then goes
// through the thread's table of lent blocks (a block still lent is handed
// over, or copied before a change), so a reply sends the value as it was.
//
// Not thread-safe; owned by one shard like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/memory.h"

namespace peregrine {

class CompactString {
 public:
  // The longest string kept inline in any case (15-byte ASCII strings are
  // inline too, packed).
  static constexpr size_t kInlineCapacity = 14;
  // Bytes a caller must provide to View() for a packed string.
  static constexpr size_t kPackedSize = 15;
  // Bytes a caller must provide to View() to hold an integer's decimal form.
  static constexpr size_t kIntBufferSize = 24;
  // The largest size a string can have (48 bits).
  static constexpr uint64_t kMaxSize = (uint64_t{1} << 48) - 1;

  // How Redis's OBJECT ENCODING names the representation.
  enum class Encoding : uint8_t { kInt, kEmbstr, kRaw };

  CompactString() noexcept {
    bytes_[kSpare] = 0;
    bytes_[kTag] = 0;
  }
  // A string as given (never integer-encoded).
  explicit CompactString(std::string_view s) {
    bytes_[kSpare] = 0;
    Init(s);
  }
  ~CompactString() { Release(); }

  CompactString(const CompactString& other);
  CompactString& operator=(const CompactString& other);
  CompactString(CompactString&& other) noexcept {
    std::memcpy(bytes_, other.bytes_, sizeof(bytes_));
    other.bytes_[kTag] = 0;
  }
  CompactString& operator=(CompactString&& other) noexcept {
    if (this != &other) {
      Release();
      const uint8_t spare = bytes_[kSpare];
      std::memcpy(bytes_, other.bytes_, sizeof(bytes_));
      bytes_[kSpare] = spare;
      other.bytes_[kTag] = 0;
    }
    return *this;
  }

  // A string value as SET stores it: a canonical integer (Redis's string2ll
  // rules, at most 20 characters) is kept as an int64.
  static CompactString FromValue(std::string_view s);
  static CompactString FromInt(int64_t v);

  bool is_int() const { return bytes_[kTag] == kTagInt; }
  // REQUIRES: is_int().
  int64_t int_value() const {
    int64_t v;
    std::memcpy(&v, bytes_, sizeof(v));
    return v;
  }

  // Redis shares one object per integer 0..9999 between keys (OBJECT REFCOUNT
  // reports it), except a copy made by COPY, which is an object of its own.
  // This mark says an integer is such a copy: FromInt / FromValue clear it,
  // copies and moves keep it. REQUIRES: is_int() for the setter.
  void MarkUnsharedInt() { bytes_[kIntUnshared] = 1; }
  bool is_unshared_int() const { return is_int() && bytes_[kIntUnshared] != 0; }

  // Length of the string form.
  size_t size() const;
  bool empty() const { return size() == 0; }

  // The string form of any encoding; an integer or a packed string is
  // written into `scratch` (kIntBufferSize bytes), which must outlive the
  // view. Inline and heap strings are not copied.
  std::string_view View(char* scratch) const {
    const uint8_t tag = bytes_[kTag];
    if (tag <= kInlineCapacity) return {reinterpret_cast<const char*>(bytes_), tag};
    if (tag & kTagHeap) return {heap_ptr(), heap_size()};
    return ViewSlow(scratch);
  }

  // Compares the string form with `s`.
  bool Equals(std::string_view s) const {
    char scratch[kIntBufferSize];
    return View(scratch) == s;
  }

  // Whether the bytes live in a heap block of their own (not inline, packed
  // or an integer), and its size (0 when not).
  bool is_heap() const { return (bytes_[kTag] & kTagHeap) != 0; }
  size_t heap_size_or_zero() const { return is_heap() ? heap_size() : 0; }
  // Lends the heap block to a reply that will send it from where it is
  // (core/lent_blocks.h: the caller takes a reference) and returns it.
  // REQUIRES: is_heap().
  const char* LendBlock() {
    bytes_[kTag] |= kLentFlag;
    return heap_ptr();
  }
  // Stores `s` in this string's own heap block, as a new string (not raw),
  // when it is no longer than the current string and at most an eighth
  // shorter (the block's size class is what a new block would have) and no
  // reply has the block lent: SET over a value of about the same
  // size then neither allocates nor frees. Returns false, changing nothing,
  // otherwise. `s` is stored as given: a caller wanting SET's integer
  // encoding checks for an integer first. REQUIRES: `s` is not a view of
  // this string.
  bool AssignInPlace(std::string_view s);
  // A string made of `block` as its heap block, without copying: `size`
  // bytes allocated by plain malloc (a large argument read straight into the
  // block that becomes the value); it joins the keyspace's count.
  static CompactString AdoptBlock(char* block, size_t size);

  // The owner's byte (see the layout above).
  uint8_t spare() const { return bytes_[kSpare]; }
  void set_spare(uint8_t b) { bytes_[kSpare] = b; }

  Encoding encoding() const;
  // Bytes allocated on the heap for this string (0 if inline or integer).
  size_t HeapBytes() const;
  // The address of the heap block, or of the inline bytes (for prefetching).
  const void* data_address() const { return bytes_[kTag] & kTagHeap ? static_cast<const void*>(heap_ptr()) : bytes_; }

  // APPEND: the string grows (greedily, so that repeated appends are
  // amortized O(1)) and becomes "raw". Integers are converted first. `s` may
  // be a view of this string itself.
  void Append(std::string_view s);
  // SETRANGE: makes the string at least `min_size` bytes (zero-padded),
  // "raw", and returns its bytes for writing.
  char* MutableBytes(size_t min_size);
  // Makes the string exactly `size` bytes (zero-padded or cut), "raw",
  // and returns its bytes for writing; the block is kept when it fits.
  char* Resize(size_t size);

 private:
  static constexpr size_t kSpare = 14;
  static constexpr size_t kTag = 15;
  static constexpr uint8_t kTagPacked = 15;
  static constexpr uint8_t kTagHeap = 0x40;
  static constexpr uint8_t kRawFlag = 0x01;
  static constexpr uint8_t kLentFlag = 0x02;  // the block has been lent (it may still be)
  static constexpr uint8_t kTagInt = 0x20;
  static constexpr size_t kIntUnshared = 8;

  // Stores `s` (bytes 0..13 and the tag; the spare byte is left alone).
  void Init(std::string_view s);
  std::string_view ViewSlow(char* scratch) const;
  void Release() {
    if (bytes_[kTag] & kTagHeap) {
      if (bytes_[kTag] & kLentFlag)
        ReleaseLent();
      else
        CountedFree(heap_ptr());
    }
  }
  void ReleaseLent();
  // Before a change in place: a block still lent is replaced by a copy.
  void Unlend();
  char* heap_ptr() const {
    char* p;
    std::memcpy(&p, bytes_, sizeof(p));
    return p;
  }
  size_t heap_size() const {
    uint64_t n = 0;
    std::memcpy(&n, bytes_ + 8, 6);
    return static_cast<size_t>(n);
  }
  // A new size for the same block, which becomes raw (its lent flag stays).
  void SetRawSize(size_t size) {
    uint64_t n = size;
    std::memcpy(bytes_ + 8, &n, 6);
    bytes_[kTag] |= kRawFlag;
  }
  // A new block (not lent).
  void SetHeap(char* p, size_t size, bool raw) {
    std::memcpy(bytes_, &p, sizeof(p));
    uint64_t n = size;
    std::memcpy(bytes_ + 8, &n, 6);
    bytes_[kTag] = static_cast<uint8_t>(kTagHeap | (raw ? kRawFlag : 0));
  }
  // Turns any encoding into a raw heap string with room for `capacity` bytes.
  void MakeRaw(size_t capacity);

  alignas(8) uint8_t bytes_[16];
};

static_assert(sizeof(CompactString) == 16);

}  // namespace peregrine
