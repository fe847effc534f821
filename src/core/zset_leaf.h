// A sorted set's leaf: a run of (score, member) entries in (score, member)
// order in one heap block. It is the whole of a small sorted set (Redis's
// "listpack" encoding) and each leaf of a large one's tree
// (core/zset_tree.h).
//
//   +-----------+----------------------------------------------+------+
//   | header 12 | score0 member0 | score1 member1 | …           | room |
//   +-----------+----------------------------------------------+------+
//     score: the double's 8 bytes; member: a packed item (core/packed.h:
//     integers as integers, strings over 16 KB in a block of their own)
//
// Entries walk forwards only (no back-lengths: a byte per member saved);
// a step backwards walks the leaf again from its start (about 40 entries
// of a 13-byte member). A block grows to the size needed (the allocator's size class is the
// slack), so a ZLeaf* moves: the functions that may grow it return it.
// Not thread-safe, like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/packed.h"

namespace peregrine {

// Orders (score, member) keys as Redis does: by score, then by the
// member's bytes (memcmp, a prefix first). Returns <0, 0, >0.
int CompareZKey(double a_score, std::string_view a_member, double b_score, std::string_view b_member);

struct ZLeaf {
  uint32_t used;          // bytes of entries
  uint32_t room;          // bytes the block has for entries (its usable size less the header)
  uint32_t count : 31;    // entries
  uint32_t external : 1;  // a member was external (over 16 KB) since the leaf was made: freeing walks the members only then

  uint8_t* data() { return reinterpret_cast<uint8_t*>(this) + sizeof(ZLeaf); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this) + sizeof(ZLeaf); }
  // Bytes the leaf takes packed: what the listpack limits and the tree's
  // leaf size measure.
  size_t bytes() const { return sizeof(ZLeaf) + used; }

  // The bytes an entry of a member planned as `plan` takes.
  static size_t EntrySize(const packed::ItemPlan& plan) { return 8 + plan.size; }
  // The size of the entry at `off` (the next one is at off + SizeAt(off)).
  uint32_t SizeAt(uint32_t off) const { return static_cast<uint32_t>(8 + packed::ItemSize(data() + off + 8)); }
  double ScoreAt(uint32_t off) const {
    double s;
    std::memcpy(&s, data() + off, 8);
    return s;
  }
  // The member's string form (an integer formatted into `scratch`,
  // packed::kScratchSize bytes).
  std::string_view MemberAt(uint32_t off, char* scratch) const { return packed::View(data() + off + 8, scratch); }
  const uint8_t* MemberItem(uint32_t off) const { return data() + off + 8; }
  // Whether the entry at `off` has the member `probe`.
  bool MemberEquals(uint32_t off, const packed::Probe& probe) const {
    return packed::Equals(data() + off + 8, probe);
  }
  // The offset of the last entry (REQUIRES: count > 0).
  uint32_t LastOf() const;

  // The first entry whose key is not below (score, member): its offset
  // (used if none) and, in *index, its index.
  uint32_t LowerBound(double score, std::string_view member, uint32_t* index) const;
  // The first entry whose score is at least `min` (above it when
  // `exclusive`).
  uint32_t LowerBoundScore(double min, bool exclusive, uint32_t* index) const;
  // The first entry whose member is at least `min` (above it when
  // `exclusive`), comparing members only (ZRANGEBYLEX's walk, which assumes
  // one score throughout).
  uint32_t LowerBoundLex(std::string_view min, bool exclusive, uint32_t* index) const;
  // The entry of `member`, searched from the first: its offset, or used.
  uint32_t FindMember(const packed::Probe& probe) const;

  // A new empty leaf with room for `room` bytes of entries. Free it with
  // Destroy.
  static ZLeaf* Create(size_t room);
  // Frees the leaf and what its members hold outside it.
  static void Destroy(ZLeaf* l);
  // Frees the block only (its members' outside blocks went elsewhere).
  static void DestroyShallow(ZLeaf* l);
  // Bytes allocated for the leaf and its external members.
  size_t AllocatedBytes() const;
  // A deep copy, packed tight.
  ZLeaf* Clone() const;

  // Inserts an entry at offset `off`. Returns the leaf, which may have
  // moved: a block too small grows by an eighth at least, and to `min_room`
  // bytes of entries at least (a tree's leaves grow to their full size at
  // once, not through every size class on the way).
  static ZLeaf* Insert(ZLeaf* l, uint32_t off, double score, const packed::ItemPlan& member, size_t min_room = 0);
  // Removes the entry at `off`, freeing what its member holds outside.
  void Erase(uint32_t off);
  // Replaces the score of the entry at `off` (the caller keeps the order).
  void SetScore(uint32_t off, double score) { std::memcpy(data() + off, &score, 8); }
  // Moves the entries from `off` on (k of them) to a new leaf with room for
  // `min_room` bytes of entries at least, which it returns.
  ZLeaf* SplitOff(uint32_t off, uint32_t k, size_t min_room = 0);
  // Moves `right`'s entries before `off` (k of them) to `left`'s end.
  // REQUIRES: left has the room.
  static void MoveToLeft(ZLeaf* left, ZLeaf* right, uint32_t off, uint32_t k);
  // Moves `left`'s entries from `off` on (k of them) to `right`'s front.
  // REQUIRES: right has the room.
  static void MoveToRight(ZLeaf* left, ZLeaf* right, uint32_t off, uint32_t k);
  // Appends `right`'s entries to `l` and frees `right`'s block. Returns
  // the leaf, which may have moved.
  static ZLeaf* Absorb(ZLeaf* l, ZLeaf* right);
  // Makes the block's room for entries `room` bytes at least. May move
  // the leaf.
  static ZLeaf* Reserve(ZLeaf* l, size_t room);
  // Gives memory back when the block is much larger than its entries. May
  // move the leaf.
  static ZLeaf* Shrink(ZLeaf* l);

 private:
  // The first entry for which reached(offset) holds (used if none).
  template <typename Reached>
  uint32_t FirstWhere(Reached reached, uint32_t* index) const;
};

static_assert(sizeof(ZLeaf) == 12);

}  // namespace peregrine
