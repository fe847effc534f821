// PackedTable: the large encoding of hashes and sets (Redis's "hashtable"),
// an extendible hash table of packed pages (core/packed_page.h). There is no
// node per element and no pointer per element: an element costs its packed
// items, a tag byte and its share of a page's header and of the directory.
//
//   directory[2^D] ──► Page of local depth d: the elements whose hash starts
//                      with the page's d-bit prefix (2^(D-d) slots point to it)
//
//   hash bits:  63 ......... 64-D | ... | 7 .. 0
//               directory index          tag (packed_page.h)
//
// A page that would pass kSplitBytes splits in two by its next hash bit
// (the directory doubles when the page's depth is D): growth touches one
// page, never the whole table. A page that falls under a quarter of that
// merges with its buddy when both fit in half a page, and the directory
// halves when no page needs its last bit. Pages at kMaxDepth do not split
// (a directory of 2^30 slots: only a flood of identical 30-bit hash
// prefixes gets there).
//
// Scan's cursor is a position in hash order (48 bits): the pages are ordered
// by their prefixes, a split or merge keeps every element at its position,
// and a call returns whole pages, so an element present for the whole scan
// is returned at least once (Redis's guarantee), whatever the table did in
// between.
//
// A Ref stays valid until the next change to the table. Not thread-safe,
// like everything in core/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "core/packed.h"
#include "core/packed_page.h"

namespace peregrine {

class PackedTable {
 public:
  static constexpr size_t kSplitBytes = 1024;
  static constexpr int kMaxDepth = 30;
  static_assert(kMaxDepth < 32, "directory slots are 32-bit");
  static constexpr int kCursorBits = 48;

  struct Ref {
    Page* page = nullptr;
    Page::Pos pos;
    uint32_t slot = 0;  // a directory slot that points to the page

    const uint8_t* entry() const { return page->EntryAt(pos); }
    const uint8_t* item(int which) const { return Page::ItemOf(entry(), which); }
  };

  explicit PackedTable(uint8_t arity);
  ~PackedTable();
  // Incremental destruction (core/lazy_free.h): frees up to `max_pages`
  // pages, the directory with the last; returns true when nothing is left.
  // Nothing but this and the destructor (which frees the rest) may be
  // called on the table once this has been.
  bool DestroySome(size_t max_pages);
  PackedTable(const PackedTable&) = delete;
  PackedTable& operator=(const PackedTable&) = delete;

  uint8_t arity() const { return arity_; }
  size_t size() const { return size_; }
  // Bytes allocated (directory, pages, external items): O(pages).
  size_t AllocatedBytes() const;
  // The table's shape as text (DEBUG HTSTATS-KEY): directory, pages, their
  // fill; with `full`, the entries-per-page distribution.
  std::string StatsText(bool full) const;

  bool Find(const packed::Probe& probe, Ref* ref) const;
  // Adds an entry whose first item is the probe's string. REQUIRES: not
  // present (Find first). Returns where it is.
  Ref Insert(const packed::Probe& probe, const packed::ItemPlan* items, int64_t deadline = Page::kNoDeadline);
  // Adds an entry as it is, taking over its external items (conversion from
  // the small encoding).
  void InsertRaw(uint64_t hash, const uint8_t* entry, size_t size);
  void Erase(const Ref& ref);
  // Replaces item `which` of the entry. `ref` follows the entry, unless the
  // page had to split (values grown far past the page size): then
  // ref->page is null and the entry must be looked up again.
  void ReplaceItem(Ref* ref, int which, const packed::ItemPlan& plan);
  void SetDeadline(Ref* ref, int64_t ms);

  // Entry deadlines (hash field expiry). Each page has a lower bound of its
  // entries' deadlines (0: none), kept beside the directory in every slot
  // that points to the page, with the least bound of each block of
  // kBoundBlock slots over them; both are allocated with the first deadline,
  // so a table without any pays nothing. The bounds are contiguous: finding
  // the due pages and the least bound reads them, not the pages.
  //
  // VisitDue calls f(const uint8_t* entry) for the entries whose deadline
  // is at or before now_ms, looking only in pages whose bound has passed,
  // and makes those pages' bounds exact over the entries that are not due
  // (the caller erases the due ones after; the table must not change during
  // the call). MinDeadline is the least bound (0: none): O(slots / 64).
  template <typename F>
  void VisitDue(int64_t now_ms, F&& f) {
    if (bound_ == nullptr) return;
    const uint32_t slots = uint32_t{1} << depth_;
    for (uint32_t block = 0; block * kBoundBlock < slots; ++block) {
      const int64_t m = block_min()[block];
      if (m == 0 || m > now_ms) continue;
      const uint32_t end_slot = std::min(slots, (block + 1) * kBoundBlock);
      for (uint32_t slot = block * kBoundBlock; slot < end_slot;) {
        const Page* p = dir_[slot];
        const uint32_t first = FirstSlot(slot, p);
        const uint32_t span = uint32_t{1} << (depth_ - p->depth);
        const int64_t b = bound_[slot];
        if (b != 0 && b <= now_ms) {
          int64_t next = 0;
          const uint8_t* e = p->entries();
          for (const uint8_t* end = e + p->used; e < end; e += p->EntrySize(e)) {
            const int64_t d = Page::DeadlineOfEntry(e);
            if (d == Page::kNoDeadline) continue;
            if (d <= now_ms) {
              f(e);
            } else if (next == 0 || d < next) {
              next = d;
            }
          }
          SetPageBound(first, span, next);
        }
        slot = first + span;
      }
    }
  }
  int64_t MinDeadline() const;

  // Calls f(const uint8_t* entry) for every entry, in hash order. The table
  // must not change meanwhile.
  template <typename F>
  void ForEach(F&& f) const {
    for (uint32_t slot = 0; slot < (uint32_t{1} << depth_);) {
      const Page* p = dir_[slot];
      const uint8_t* e = p->entries();
      const uint8_t* end = e + p->used;
      for (; e < end; e += p->EntrySize(e)) f(e);
      slot += uint32_t{1} << (depth_ - p->depth);
    }
  }

  // Calls f(const uint8_t* entry) for the entries of whole pages from
  // `cursor` on until at least `count` were visited; returns the cursor of
  // the next call (0 when done). The table must not change during the call.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    if (cursor >> kCursorBits) return 0;
    size_t visited = 0;
    while (true) {
      const uint32_t slot = static_cast<uint32_t>(cursor >> (kCursorBits - depth_));
      const Page* p = dir_[slot];
      const uint8_t* e = p->entries();
      const uint8_t* end = e + p->used;
      for (; e < end; e += p->EntrySize(e)) f(e);
      visited += p->count;
      // The position after the page's prefix.
      const uint64_t prefix = slot >> (depth_ - p->depth);
      cursor = (prefix + 1) << (kCursorBits - p->depth);
      if (cursor >> kCursorBits) return 0;
      if (visited >= count) return cursor;
    }
  }

  // A random entry, each about equally likely (pages are picked by a
  // directory slot and accepted in proportion to their share of the
  // elements). REQUIRES: size() > 0.
  Ref Random(std::mt19937_64& rng) const;

  // Checks the invariants (directory ranges, depths, counts, every element
  // in its page's range); for tests. Returns an empty string or what is wrong.
  std::string Validate() const;

 private:
  uint32_t SlotOf(uint64_t hash) const { return depth_ == 0 ? 0 : static_cast<uint32_t>(hash >> (64 - depth_)); }
  // The first directory slot of the page that `slot` points to.
  uint32_t FirstSlot(uint32_t slot, const Page* p) const {
    return slot & ~((uint32_t{1} << (depth_ - p->depth)) - 1);
  }
  // Points the page's slots at `p` (after it moved).
  void Repoint(uint32_t slot, Page* p);
  // Splits the page `slot` points to in two.
  void Split(uint32_t slot);
  // Merges the page `slot` points to with its buddy when both are small.
  void MaybeMerge(uint32_t slot);
  // Splits the page `hash` goes to until an entry of `size` bytes fits;
  // returns its slot.
  uint32_t MakeRoom(uint64_t hash, size_t size);
  // Bookkeeping after an append to the page at `slot` (which may have moved).
  void Appended(uint32_t slot, Page* before, Page* after);
  void DoubleDirectory();
  void HalveDirectory();
  uint64_t HashOfEntry(const uint8_t* e) const;
  static constexpr uint32_t kBoundBlock = 64;
  // Lowers the bound of the page `slot` points to (ms > 0).
  void LowerBound(uint32_t slot, int64_t ms);
  // Sets the bound of the page at slots [first, first + span) and
  // recomputes the minimum of the blocks they are in.
  void SetPageBound(uint32_t first, uint32_t span, int64_t ms);
  // (Re)allocates the bounds for the directory's size, bound[i] = at(i).
  template <typename At>
  void RebuildBounds(At&& at);
  void RecomputeBlock(uint32_t block);
  // The blocks' least bounds, after the slots' in bound_'s block.
  int64_t* block_min() const { return bound_ + (size_t{1} << depth_); }

  Page** dir_;
  int64_t* bound_ = nullptr;  // per directory slot, then per kBoundBlock slots (see VisitDue)
  uint8_t depth_ = 0;
  uint8_t arity_;
  uint32_t pages_at_depth_ = 1;  // pages whose depth is depth_
  uint32_t max_count_ = 1;       // at least the most entries a page holds (Random)
  uint32_t destroy_slot_ = 0;    // DestroySome's next directory slot
  size_t size_ = 0;
};

}  // namespace peregrine
