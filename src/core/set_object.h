// SetObject: a set's members in the encoding Redis 7.2 would pick, with the
// same conversions: an IntSet while every member is an integer and there are
// at most set-max-intset-entries of them; a packed page ("listpack") while
// there are at most set-max-listpack-entries members of at most
// set-max-listpack-value bytes; a PackedTable ("hashtable") beyond. A set
// never converts back to a smaller encoding (as in Redis).
//
// The commands (commands/set_commands.cc) hold one per set key. Not thread-safe,
// like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "core/intset.h"
#include "core/packed.h"
#include "core/packed_page.h"
#include "core/packed_table.h"

namespace peregrine {

// The set-max-* directives.
struct SetLimits {
  size_t max_intset_entries = 512;
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

class SetObject {
 public:
  // The tag byte of a Value holding one (core/value.h): 0x80 | type << 3,
  // the encoding in the low bits.
  static constexpr uint8_t kValueTag = 0x90;
  enum class Encoding : uint8_t { kIntSet, kListpack, kHashtable };

  // An empty set in the encoding Redis creates for a first member `first`
  // with `hint` members to come (SADD's argument count).
  SetObject(std::string_view first, size_t hint, const SetLimits& limits);
  // An empty set for `hint` members with no first member known (Redis
  // 7.2's setTypeCreate(NULL, hint)): a listpack up to
  // set-max-listpack-entries, else a hashtable.
  static SetObject Sized(size_t hint, const SetLimits& limits);
  ~SetObject() { Release(); }
  SetObject(SetObject&& other) noexcept : ptr_(other.ptr_), tag_(other.tag_) { other.ptr_ = nullptr; }
  // The old contents leave with `other` (freed by its destructor).
  SetObject& operator=(SetObject&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(tag_, other.tag_);
    return *this;
  }
  SetObject(const SetObject&) = delete;
  SetObject& operator=(const SetObject&) = delete;
  // A deep copy (COPY), in the same encoding.
  SetObject Clone() const;

  Encoding encoding() const { return static_cast<Encoding>(tag_ & 7); }
  // OBJECT ENCODING's name.
  std::string_view EncodingName() const;
  size_t size() const;
  // Bytes allocated for the members (MEMORY USAGE); O(pages).
  size_t AllocatedBytes() const;

  // The intset of an intset-encoded set (persistence writes it as one
  // block), else nullptr.
  const IntSet* AsIntSet() const { return encoding() == Encoding::kIntSet ? intset() : nullptr; }

  bool Contains(std::string_view member) const;
  // Adds `member`; returns whether it was new. Converts first when the
  // limits say so.
  bool Add(std::string_view member, const SetLimits& limits);
  // Removes `member`; returns whether it was there.
  bool Remove(std::string_view member);
  // SADD's conversion before it adds `hint` members (Redis 7.2's
  // setTypeMaybeConvert): to a hashtable when the hint alone is over the
  // current encoding's limit.
  void MaybeConvert(size_t hint, const SetLimits& limits);
  // A set whose members are all integers, no more than
  // set-max-intset-entries, becomes an intset (Redis 7.2's
  // maybeConvertToIntset, after SINTERSTORE).
  void MaybeConvertToIntSet(const SetLimits& limits);

  // Calls f(std::string_view member) for every member (the view lives for
  // the call only). The set must not change meanwhile.
  template <typename F>
  void ForEach(F&& f) const {
    char scratch[packed::kScratchSize];
    switch (encoding()) {
      case Encoding::kIntSet:
        for (uint32_t i = 0; i < intset()->size(); ++i) f(FormatMember(intset()->At(i), scratch));
        break;
      case Encoding::kListpack: {
        const Page* p = page();
        for (const uint8_t *e = p->entries(), *end = e + p->used; e < end; e += p->EntrySize(e))
          f(packed::View(e, scratch));
        break;
      }
      case Encoding::kHashtable:
        table()->ForEach([&](const uint8_t* e) { f(packed::View(e, scratch)); });
        break;
    }
  }

  // SSCAN: calls f(member) for some members from `cursor` on; returns the
  // next cursor (0: done). The small encodings return everything at once,
  // as Redis does.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    if (encoding() != Encoding::kHashtable) {
      ForEach(f);
      return 0;
    }
    char scratch[packed::kScratchSize];
    return table()->Scan(cursor, count, [&](const uint8_t* e) { f(packed::View(e, scratch)); });
  }

  // A random member (SRANDMEMBER): a view valid until the set changes, an
  // integer formatted into `scratch` (packed::kScratchSize bytes).
  // REQUIRES: size() > 0.
  std::string_view Random(std::mt19937_64& rng, char* scratch) const;
  // Removes a random member and returns it in *out (SPOP). REQUIRES:
  // size() > 0.
  void PopRandom(std::mt19937_64& rng, std::string* out) {
    PopRandom(rng, [out](std::string_view m) { out->assign(m); });
  }
  // The same, calling f(std::string_view member) just before the member
  // goes (SPOP replies from it: no copy).
  template <typename F>
  void PopRandom(std::mt19937_64& rng, F&& f) {
    char scratch[packed::kScratchSize];
    switch (encoding()) {
      case Encoding::kIntSet: {
        const uint32_t i = static_cast<uint32_t>(rng() % intset()->size());
        f(FormatMember(intset()->At(i), scratch));
        ptr_ = IntSet::RemoveAt(intset(), i);
        break;
      }
      case Encoding::kListpack: {
        Page* p = page();
        const Page::Pos pos = p->PosOf(static_cast<uint32_t>(rng() % p->count));
        f(packed::View(p->EntryAt(pos), scratch));
        p->Erase(pos);
        ptr_ = Page::Shrink(p);
        break;
      }
      case Encoding::kHashtable: {
        const PackedTable::Ref ref = table()->Random(rng);
        f(packed::View(ref.entry(), scratch));
        table()->Erase(ref);
        break;
      }
    }
  }

  // The table of the "hashtable" encoding, or null (DEBUG HTSTATS-KEY).
  const PackedTable* hashtable() const { return encoding() == Encoding::kHashtable ? table() : nullptr; }

 private:
  static std::string_view FormatMember(int64_t v, char* scratch);
  IntSet* intset() const { return static_cast<IntSet*>(ptr_); }
  Page* page() const { return static_cast<Page*>(ptr_); }
  PackedTable* table() const { return static_cast<PackedTable*>(ptr_); }
  void Release();
  // Conversions (the members move; nothing is copied twice).
  void IntSetToListpack(size_t extra);
  void ToHashtable();
  SetObject() = default;

  void set_encoding(Encoding e) { tag_ = static_cast<uint8_t>(kValueTag | static_cast<uint8_t>(e)); }

  // 16 bytes laid out as a Value's (core/value.h): the pointer, then
  // unused bytes, the owner's byte (a key's access data) and the tag
  // (kValueTag | encoding).
  void* ptr_ = nullptr;
  [[maybe_unused]] uint8_t unused_[6] = {};
  [[maybe_unused]] uint8_t spare_ = 0;  // the owner's byte: Value reads and writes it
  uint8_t tag_ = kValueTag;
};

static_assert(sizeof(SetObject) == 16);

}  // namespace peregrine
