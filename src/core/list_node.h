// A list node: a run of a list's items in one heap block (the small list
// whole, Redis's "listpack" encoding, or one node of a large one,
// core/list_object.h). An entry is a packed item (core/packed.h: integers as
// integers, strings over 16 KB in their own block) followed by its
// back-length, so that the node walks both ways:
//
//   +-----------+-------+-----------------------------------------+-------+
//   | header 12 | front | item0 back0 | item1 back1 | … | itemN backN | back |
//   +-----------+-------+-----------------------------------------+-------+
//     begin, end: the entries' offsets in the data area (after the header);
//     count: entries; cap4: the room for entries / 4; external: whether an
//     item may hold a block of its own (freeing walks the items only then)
//
//   back-length: the item's size s, read from its last byte backwards:
//     s < 128: one byte s; else two bytes: s & 0xFF, then 0x80 | s >> 8
//
// Room may be left in front of the entries as well as behind them, so that
// pushing at either end moves nothing most of the time; popping at either
// end moves nothing at all. A block grows to the size needed (the
// allocator's size class is the slack), so a ListNode* moves: the functions
// that may grow it return it. Not thread-safe, like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/packed.h"

namespace peregrine {

struct ListNode {
  uint32_t begin;  // offset of the first entry in data()
  uint32_t end;    // offset after the last entry
  uint16_t count;  // entries
  uint16_t cap4 : 15;    // the data area's size / 4 (a lower bound; exact below 128 KB)
  uint16_t external : 1;  // an item was external (strings over 16 KB) since the node was made

  // The most entries a node could count (count is 16 bits).
  static constexpr size_t kMaxCount = 65535;
  // The most bytes of entries a push puts in a node: cap4's 15 bits record
  // up to 128 KB of room, and an insert or a replacement may add one inline
  // item (16 KB) before its node splits. The limits Redis offers (64 KB at
  // most) keep nodes well under it. An entry takes at least 2 bytes (an
  // empty string and its back-length), so such a node never counts past
  // kMaxCount.
  static constexpr size_t kMaxBytes = 96 * 1024;

  uint8_t* data() { return reinterpret_cast<uint8_t*>(this) + sizeof(ListNode); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this) + sizeof(ListNode); }
  // Bytes of entries.
  size_t used() const { return end - begin; }
  // Bytes the node would take packed (header and entries): what the
  // list-max-listpack-size limits measure.
  size_t bytes() const { return sizeof(ListNode) + used(); }
  // Room in the data area.
  size_t room() const { return size_t{cap4} * 4; }

  // The bytes an entry of an item of `item_size` bytes takes.
  static size_t EntrySize(size_t item_size) { return item_size + (item_size < 128 ? 1 : 2); }
  // The size of the entry at offset `off` (the next entry's offset is
  // off + SizeAt(off)).
  uint32_t SizeAt(uint32_t off) const { return static_cast<uint32_t>(EntrySize(packed::ItemSize(data() + off))); }
  // The offset of the entry before the one at `off` (REQUIRES: off > begin).
  uint32_t PrevOf(uint32_t off) const {
    const uint8_t* q = data() + off;
    const uint8_t b = q[-1];
    if (b < 0x80) return off - 1 - b;
    const size_t s = (size_t{b} & 0x7F) << 8 | q[-2];
    return static_cast<uint32_t>(off - 2 - s);
  }
  // The offset of the last entry (REQUIRES: count > 0).
  uint32_t LastOf() const { return PrevOf(end); }
  // The item's string form (an integer formatted into `scratch`).
  std::string_view View(uint32_t off, char* scratch) const { return packed::View(data() + off, scratch); }

  // A new empty node with room for `bytes_hint` bytes of entries. With
  // `at_end`, the room is in front of the entries-to-be (a node that will
  // be pushed at its front). Free it with Destroy.
  static ListNode* Create(size_t bytes_hint, bool at_end = false);
  // Frees the node and what its items hold outside it.
  static void Destroy(ListNode* n);
  // Frees the node's block only (a copy whose items' outside blocks have
  // another owner).
  static void DestroyShallow(ListNode* n);
  // Bytes allocated for the node and its external items.
  size_t AllocatedBytes() const;

  // Inserts an entry for `plan` at offset `off` (begin: the front, end: the
  // back, or an entry's offset: before it). Returns the node, which may have
  // moved; *at is the new entry's offset. REQUIRES: count < kMaxCount.
  static ListNode* Insert(ListNode* n, uint32_t off, const packed::ItemPlan& plan, uint32_t* at);
  // Removes `k` entries from offset `off` on, `size` bytes in all, freeing
  // what their items hold outside. Returns the offset of the entry that
  // followed them (end if none).
  uint32_t Erase(uint32_t off, uint32_t size, uint32_t k);
  // Replaces the item of the entry at *off. May move the node; *off is
  // where the entry is then.
  static ListNode* Replace(ListNode* n, uint32_t* off, const packed::ItemPlan& plan);
  // Moves the entries from `off` on to a new node (a split), which it
  // returns; this node keeps the ones before.
  ListNode* SplitOff(uint32_t off, uint32_t k);
  // Gives memory back when the block is much larger than its entries. May
  // move the node.
  static ListNode* Shrink(ListNode* n);

 private:
  // Makes room for `extra` bytes at offset `off` (the entries from `off`
  // on move back by `extra`, or those before it forward); returns the node
  // and sets *off to where the new bytes start.
  static ListNode* OpenGap(ListNode* n, uint32_t* off, size_t extra);
  void set_capacity(size_t usable);
};

static_assert(sizeof(ListNode) == 12);

// A node compressed with LZF (list-compress-depth: core/list_object.h). It
// keeps the node's counts and offsets, so that a decompressed copy lays its
// entries out at the very offsets the node had: a position taken in one
// copy holds in the next. Items held outside the node (strings over 16 KB)
// stay where they are; their pointers are compressed with the rest. LZF is
// what Redis compresses quicklist nodes and RDB strings with: Debian's
// liblzf serves both.
struct ListNodeLzf {
  uint32_t begin;  // the node's fields
  uint32_t end;
  uint16_t count;
  uint16_t external;
  uint32_t size;  // compressed bytes after the header

  // Redis's thresholds: nodes under 48 bytes are not worth it, nor is a
  // result that saves less than 8 bytes.
  static constexpr size_t kMinBytes = 48;
  static constexpr size_t kMinSaving = 8;

  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this) + sizeof(ListNodeLzf); }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this) + sizeof(ListNodeLzf); }

  // `n` compressed (n is left as it was), or nullptr when that would not
  // save enough.
  static ListNodeLzf* Compress(const ListNode* n);
  // A plain copy with the node's offsets (free it with ListNode::Destroy,
  // which frees its external items, or with ListNode::DestroyShallow when
  // this block keeps them).
  ListNode* Decompress() const;
  // Frees the block and what its items hold outside it.
  static void Destroy(ListNodeLzf* z);
  // Bytes allocated for the block and its external items.
  size_t AllocatedBytes() const;
};

static_assert(sizeof(ListNodeLzf) == 16);
static_assert((ListNode::kMaxBytes + packed::kMaxInline + 4) / 2 < ListNode::kMaxCount);

}  // namespace peregrine
