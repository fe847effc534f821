// HashObject: a hash's fields and values in the encoding Redis 7.2 would
// pick: a packed page of field/value entries ("listpack") while there are at
// most hash-max-listpack-entries fields and no field or value is longer than
// hash-max-listpack-value bytes, a PackedTable ("hashtable") beyond. A hash
// never converts back (as in Redis).
//
// The commands (commands/hash_commands.cc) hold one per hash key. Not thread-safe,
// like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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
  HashObject(HashObject&& other) noexcept : ptr_(other.ptr_), tag_(other.tag_) {
    std::memcpy(min_deadline_, other.min_deadline_, sizeof(min_deadline_));
    other.ptr_ = nullptr;
  }
  // The old contents leave with `other` (freed by its destructor).
  HashObject& operator=(HashObject&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(min_deadline_, other.min_deadline_);
    std::swap(tag_, other.tag_);
    return *this;
  }
  HashObject(const HashObject&) = delete;
  HashObject& operator=(const HashObject&) = delete;
  // A deep copy (COPY), in the same encoding, field deadlines included.
  HashObject Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(tag_ & kEncodingBit); }
  // Redis's names; a listpack that field expiry has touched is "listpackex"
  // from then on (MarkFieldExpiry), as in Redis 7.4.
  std::string_view EncodingName() const {
    if (encoding() == Encoding::kHashtable) return "hashtable";
    return (tag_ & kExBit) ? "listpackex" : "listpack";
  }
  // Field expiry has been used on this hash (HEXPIRE and the like): a
  // listpack reports "listpackex". Nothing else changes.
  void MarkFieldExpiry() {
    if (encoding() == Encoding::kListpack) tag_ |= kExBit;
  }
  size_t size() const { return encoding() == Encoding::kListpack ? page()->count : table()->size(); }
  // Bytes allocated for the fields and values (MEMORY USAGE); O(pages).
  size_t AllocatedBytes() const;

  // The value of `field` into *value (a view valid until the hash changes;
  // an integer is formatted into `scratch`, packed::kScratchSize bytes).
  bool Get(std::string_view field, std::string_view* value, char* scratch) const;
  // Sets `field` to `value`; returns whether the field is new. Converts to
  // a hashtable when the limits say so. REQUIRES: neither view points into
  // this hash.
  bool Set(std::string_view field, std::string_view value, const HashLimits& limits) {
    return SetImpl(field, value, limits, false);
  }
  // The same, keeping the deadline of a field that exists (HINCRBY): Set
  // removes it, as Redis's HSET does.
  bool SetKeepDeadline(std::string_view field, std::string_view value, const HashLimits& limits) {
    return SetImpl(field, value, limits, true);
  }
  // Removes `field`; returns whether it was there.
  bool Delete(std::string_view field);

  // Field expiry (HEXPIRE and its family). A field may have a deadline, an
  // absolute unix time in ms, kept in its entry (packed.h's deadline item:
  // a field without one costs nothing). The hash keeps a lower bound of its
  // fields' deadlines, min_deadline(): 0 when no field has one, and when it
  // is due, ExpireFields() removes the fields whose time has come and makes
  // the bound exact again. Until then fields past their deadline are still
  // here: the commands call ExpireFields() before they look (see
  // commands/hash_commands.cc), and the database's active cycle calls it for the
  // hashes whose bound has passed (Db::ExpireHashFields).
  static constexpr int64_t kNoDeadline = Page::kNoDeadline;
  int64_t min_deadline() const {
    uint64_t v = 0;
    std::memcpy(&v, min_deadline_, sizeof(min_deadline_));
    return static_cast<int64_t>(v);
  }
  // Whether `field` exists, and its deadline into *ms (kNoDeadline if none).
  bool GetDeadline(std::string_view field, int64_t* ms) const;
  // Sets (ms > 0) or removes (kNoDeadline) the deadline of `field`; returns
  // false if there is no such field. REQUIRES: ms < 2^48.
  bool SetDeadline(std::string_view field, int64_t ms);
  // Removes the fields whose deadline is at or before now_ms and makes
  // min_deadline() exact; returns how many went. A listpack is walked
  // whole; a hashtable looks only at the pages whose own bound has passed
  // (PackedTable::VisitDue) and its pages' bounds: O(pages + due pages).
  // With `names`, the removed fields are appended to it.
  size_t ExpireFields(int64_t now_ms, std::vector<std::string>* names = nullptr);
  // Whether ExpireFields(now_ms) has work (or a stale bound to refresh).
  bool FieldsDue(int64_t now_ms) const {
    const int64_t m = min_deadline();
    return m != 0 && m <= now_ms;
  }
  // Converts to a hashtable now (HSET checks its arguments' lengths first,
  // as Redis does, so that a long value converts before anything is written).
  void ConvertToHashtable();

  // Calls f(std::string_view field, std::string_view value) for every field
  // (views valid for the call only). The hash must not change meanwhile.
  template <typename F>
  void ForEach(F&& f) const {
    ForEachEntry([&](const uint8_t* e) {
      char s0[packed::kScratchSize], s1[packed::kScratchSize];
      f(packed::View(Page::ItemOf(e, 0), s0), packed::View(Page::ItemOf(e, 1), s1));
    });
  }
  // Calls f(const uint8_t* entry) for every entry (core/packed_page.h).
  template <typename F>
  void ForEachEntry(F&& f) const {
    if (encoding() == Encoding::kHashtable) {
      table()->ForEach(f);
      return;
    }
    const Page* p = page();
    for (const uint8_t *e = p->entries(), *end = e + p->used; e < end; e += p->EntrySize(e)) f(e);
  }

  // As Scan, with f(const uint8_t* entry) (its deadline included).
  template <typename F>
  uint64_t ScanEntries(uint64_t cursor, size_t count, F&& f) const {
    if (encoding() != Encoding::kHashtable) {
      ForEachEntry(f);
      return 0;
    }
    return table()->Scan(cursor, count, f);
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

  // The table of the "hashtable" encoding, or null (DEBUG HTSTATS-KEY).
  const PackedTable* hashtable() const { return encoding() == Encoding::kHashtable ? table() : nullptr; }

 private:
  static constexpr uint8_t kEncodingBit = 1;
  static constexpr uint8_t kExBit = 2;
  Page* page() const { return static_cast<Page*>(ptr_); }
  PackedTable* table() const { return static_cast<PackedTable*>(ptr_); }
  void Release();

  void set_encoding(Encoding e) { tag_ = static_cast<uint8_t>(kValueTag | static_cast<uint8_t>(e)); }
  bool SetImpl(std::string_view field, std::string_view value, const HashLimits& limits, bool keep_deadline);
  // The entry of `field` (core/packed_page.h), or nullptr.
  const uint8_t* FindEntry(std::string_view field) const;
  // Lowers the bound to ms if it is below it (ms > 0).
  void NoteDeadline(int64_t ms) {
    const int64_t m = min_deadline();
    if (m == 0 || ms < m) set_min_deadline(ms);
  }
  void set_min_deadline(int64_t ms) {
    const uint64_t v = static_cast<uint64_t>(ms);
    std::memcpy(min_deadline_, &v, sizeof(min_deadline_));
  }

  // 16 bytes laid out as a Value's (core/value.h): the pointer, the
  // earliest field deadline's lower bound (48 bits, little-endian), the
  // owner's byte (a key's access data) and the tag (kValueTag | encoding).
  void* ptr_ = nullptr;
  uint8_t min_deadline_[6] = {};
  [[maybe_unused]] uint8_t spare_ = 0;  // the owner's byte: Value reads and writes it
  uint8_t tag_ = kValueTag;
};

static_assert(sizeof(HashObject) == 16);

}  // namespace peregrine
