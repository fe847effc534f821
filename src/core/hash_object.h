// HashObject: a hash's fields and values in the encoding Redis 7.2 would
// pick: a packed page of field/value entries ("listpack") while there are at
// most hash-max-listpack-entries fields and no field or value is longer than
// hash-max-listpack-value bytes, a PackedTable ("hashtable") beyond. A hash
// never converts back (as in Redis).
//
// The commands (commands/hashes.cc) hold one per hash key. Not thread-safe,
// like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <utility>

#include "core/packed.h"
#include "core/packed_page.h"
#include "core/packed_table.h"

namespace peregrine {

// The hash-max-listpack-* directives.
struct HashLimits {
  size_t max_listpack_entries = 512;
  size_t max_listpack_value = 64;
};

class HashObject {
 public:
  // The tag byte of a Value holding one (core/value.h): 0x80 | type << 3,
  // the encoding in the low bits.
  static constexpr uint8_t kValueTag = 0xA0;
  enum class Encoding : uint8_t { kListpack, kHashtable };

  // An empty hash ("listpack").
  HashObject();
  ~HashObject() { Release(); }
  HashObject(HashObject&& other) noexcept : ptr_(other.ptr_), tag_(other.tag_) { other.ptr_ = nullptr; }
  // The old contents leave with `other` (freed by its destructor).
  HashObject& operator=(HashObject&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(tag_, other.tag_);
    return *this;
  }
  HashObject(const HashObject&) = delete;
  HashObject& operator=(const HashObject&) = delete;
  // A deep copy (COPY), in the same encoding. Field deadlines are not
  // copied yet: nothing sets them before field expiry (HEXPIRE) is built,
  // which must copy entries with their deadline items.
  HashObject Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(tag_ & 7); }
  std::string_view EncodingName() const { return encoding() == Encoding::kListpack ? "listpack" : "hashtable"; }
  size_t size() const { return encoding() == Encoding::kListpack ? page()->count : table()->size(); }
  // Bytes allocated for the fields and values (MEMORY USAGE); O(pages).
  size_t AllocatedBytes() const;

  // The value of `field` into *value (a view valid until the hash changes;
  // an integer is formatted into `scratch`, packed::kScratchSize bytes).
  bool Get(std::string_view field, std::string_view* value, char* scratch) const;
  // Sets `field` to `value`; returns whether the field is new. Converts to
  // a hashtable when the limits say so. REQUIRES: neither view points into
  // this hash.
  bool Set(std::string_view field, std::string_view value, const HashLimits& limits);
  // Removes `field`; returns whether it was there.
  bool Delete(std::string_view field);
  // Converts to a hashtable now (HSET checks its arguments' lengths first,
  // as Redis does, so that a long value converts before anything is written).
  void ConvertToHashtable();

  // Calls f(std::string_view field, std::string_view value) for every field
  // (views valid for the call only). The hash must not change meanwhile.
  template <typename F>
  void ForEach(F&& f) const {
    auto visit = [&](const uint8_t* e) {
      char s0[packed::kScratchSize], s1[packed::kScratchSize];
      f(packed::View(Page::ItemOf(e, 0), s0), packed::View(Page::ItemOf(e, 1), s1));
    };
    if (encoding() == Encoding::kHashtable) {
      table()->ForEach(visit);
      return;
    }
    const Page* p = page();
    for (const uint8_t *e = p->entries(), *end = e + p->used; e < end; e += p->EntrySize(e)) visit(e);
  }

  // HSCAN: as SetObject::Scan, with f(field, value).
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    if (encoding() != Encoding::kHashtable) {
      ForEach(f);
      return 0;
    }
    return table()->Scan(cursor, count, [&](const uint8_t* e) {
      char s0[packed::kScratchSize], s1[packed::kScratchSize];
      f(packed::View(Page::ItemOf(e, 0), s0), packed::View(Page::ItemOf(e, 1), s1));
    });
  }

  // A random field's entry (HRANDFIELD): the views are valid until the hash
  // changes. REQUIRES: size() > 0.
  void Random(std::mt19937_64& rng, std::string_view* field, std::string_view* value, char* scratch0,
              char* scratch1) const;

 private:
  Page* page() const { return static_cast<Page*>(ptr_); }
  PackedTable* table() const { return static_cast<PackedTable*>(ptr_); }
  void Release();

  void set_encoding(Encoding e) { tag_ = static_cast<uint8_t>(kValueTag | static_cast<uint8_t>(e)); }

  // 16 bytes laid out as a Value's (core/value.h): the pointer, then
  // unused bytes, the owner's byte (a key's access data) and the tag
  // (kValueTag | encoding).
  void* ptr_ = nullptr;
  uint8_t unused_[6] = {};
  uint8_t spare_ = 0;
  uint8_t tag_ = kValueTag;
};

static_assert(sizeof(HashObject) == 16);

}  // namespace peregrine
