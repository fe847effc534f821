// A packed page: the entries of a small hash or set (Redis's "listpack"
// encoding) or of one page of a large one (core/packed_table.h), in one heap
// block. An entry is one item (a set's member) or two (a hash's field and
// value), encoded as core/packed.h says, optionally preceded by a deadline
// item. In front of the entries sits one tag byte per entry, the low byte of
// the first item's hash: a lookup scans the tags (memchr) and compares
// strings only where a tag matches, walking the entries just as far as the
// last match.
//
//   +-----------+-------------------+---------------------------------+-------+
//   | header 12 | tags[tag_cap]     | entry 0 | entry 1 | … | entry n-1 | slack |
//   +-----------+-------------------+---------------------------------+-------+
//     used: bytes of entries, count: entries, tag_cap: room for tags,
//     depth: the large table's local depth, arity: items per entry (1 or 2),
//     flags: kHasDeadlines once an entry got a deadline, cap8: the block's
//     usable size / 8 (0 if that does not fit: then the allocator is asked)
//
// Entries stay in insertion order; erasing one moves the ones after it.
// Growing reallocates to the size needed (the allocator's size class is the
// slack), so a Page* moves: the functions that may grow the page return it.
// Not thread-safe, like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/packed.h"

namespace peregrine {

struct Page {
  static constexpr uint16_t kHasDeadlines = 1;
  static constexpr int64_t kNoDeadline = -1;
  // The most entries a page holds (count is 16 bits).
  static constexpr size_t kMaxCount = 65535;

  uint32_t used;     // bytes of entries
  uint16_t count;    // entries
  uint16_t tag_cap;  // room for tags
  uint8_t depth;     // local depth in a PackedTable (0 otherwise)
  uint8_t arity;     // items per entry: 1 or 2
  uint16_t flags : 1;
  // The block's usable size in 8-byte units, when it is a multiple of 8 and
  // fits; 0 otherwise. Growing by an entry then asks the allocator nothing.
  uint16_t cap8 : 15;

  // A position: an entry's index and its offset from entries().
  struct Pos {
    uint32_t index = 0;
    uint32_t offset = 0;
  };

  uint8_t* tags() { return reinterpret_cast<uint8_t*>(this) + sizeof(Page); }
  const uint8_t* tags() const { return reinterpret_cast<const uint8_t*>(this) + sizeof(Page); }
  uint8_t* entries() { return tags() + tag_cap; }
  const uint8_t* entries() const { return tags() + tag_cap; }
  // Bytes in use (header, tags, entries).
  size_t bytes() const { return sizeof(Page) + tag_cap + used; }
  // The block's usable size.
  size_t capacity() const;

  // A new empty page with room for `count_hint` entries of `bytes_hint`
  // bytes in all. Free it with Destroy.
  static Page* Create(uint8_t arity, uint8_t depth, size_t count_hint = 0, size_t bytes_hint = 0);
  // Frees the page and what its items hold outside it.
  static void Destroy(Page* p);
  // Frees the page's block only (its items were moved to another page).
  static void FreeBlock(Page* p);
  // Bytes allocated for the page and its external items.
  size_t AllocatedBytes() const;

  // The bytes an entry takes (deadline and items).
  size_t EntrySize(const uint8_t* e) const {
    size_t n = 0;
    if (e[0] == packed::kHeaderDeadline) n = packed::kDeadlineSize;
    n += packed::ItemSize(e + n);
    if (arity == 2) n += packed::ItemSize(e + n);
    return n;
  }
  // The entry's item `which` (0: field or member, 1: value).
  static const uint8_t* ItemOf(const uint8_t* e, int which) {
    if (e[0] == packed::kHeaderDeadline) e += packed::kDeadlineSize;
    return which == 0 ? e : e + packed::ItemSize(e);
  }
  static int64_t DeadlineOfEntry(const uint8_t* e) {
    return e[0] == packed::kHeaderDeadline ? packed::DeadlineOf(e) : kNoDeadline;
  }
  const uint8_t* EntryAt(Pos pos) const { return entries() + pos.offset; }
  // The position of the entry at `index` (walks from the start).
  Pos PosOf(uint32_t index) const;
  // The position after `pos` (REQUIRES: pos is an entry).
  Pos Next(Pos pos) const { return {pos.index + 1, pos.offset + static_cast<uint32_t>(EntrySize(EntryAt(pos)))}; }

  // Looks the probe up among the entries' first items.
  bool Find(const packed::Probe& probe, Pos* pos) const;

  // Appends an entry of `arity` items (planned), with a deadline unless
  // kNoDeadline. REQUIRES: count < kMaxCount. May move the page.
  static Page* Append(Page* p, uint8_t tag, const packed::ItemPlan* items, int64_t deadline = kNoDeadline);
  // Appends an entry's bytes as they are (moving an entry between pages:
  // external items change owner, nothing is allocated for them).
  static Page* AppendRaw(Page* p, uint8_t tag, const uint8_t* entry, size_t size);
  // The same into a page that has the room (a page created for the entries
  // it will hold). REQUIRES: count < tag_cap, bytes() + size <= capacity().
  void AppendRawFits(uint8_t tag, const uint8_t* entry, size_t size) {
    std::memcpy(entries() + used, entry, size);
    if (entry[0] == packed::kHeaderDeadline) flags |= kHasDeadlines;
    tags()[count] = tag;
    count++;
    used += static_cast<uint32_t>(size);
  }
  // Removes the entry at `pos` and frees what its items hold outside.
  void Erase(Pos pos);
  // Replaces item `which` of the entry at `pos`. May move the page.
  static Page* ReplaceItem(Page* p, Pos pos, int which, const packed::ItemPlan& plan);
  // Sets (ms > 0: 0 means "none" in the bounds tables and hashes keep) or
  // removes (kNoDeadline) the entry's deadline. May move the page.
  static Page* SetDeadline(Page* p, Pos pos, int64_t ms);
  // Gives memory back when the block is much larger than its content (after
  // erasing). May move the page.
  static Page* Shrink(Page* p);

 private:
  void set_capacity(size_t usable) {
    cap8 = usable % 8 == 0 && usable / 8 <= 0x7FFF ? static_cast<uint16_t>(usable / 8) : 0;
  }
  // Makes room for one more tag and `extra` more bytes of entries. May move
  // the page.
  static Page* Reserve(Page* p, size_t extra_tags, size_t extra);
  // Inserts (delta > 0) or removes (delta < 0) bytes at `offset` of the
  // entries, moving what follows. REQUIRES: room made first for delta > 0.
  void Shift(uint32_t offset, int64_t delta);
};

static_assert(sizeof(Page) == 12);

}  // namespace peregrine
