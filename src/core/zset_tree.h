// ZTree: a large sorted set's entries in (score, member) order: a B+tree
// whose leaves are ZLeaf blocks (core/zset_leaf.h, about 1 KB: some 40
// entries of a 13-byte member) and whose inner nodes keep, per child, its
// entry count (ranks in O(log n)) and a separator: the child's lowest key
// when it was split off, a copy of the score and, when the score alone does
// not tell it from the child before, of the member.
//
//   root (ZNode) ── count[i], child[i], sep_score[i], sep_member[i]
//     ├── ZNode ── … ──► ZLeaf | s m | s m | … |
//     └── …
//
// Separators only ever move at splits and merges: a key belongs to child i
// when sep[i] <= key < sep[i+1] (child 0 takes everything below sep[1]),
// which inserts and removals keep true without touching them. No parent
// pointers and no leaf links: a position (Pos) carries its path from the
// root, so a walk steps to the next leaf through it, and a leaf that moves
// (it grows in place) is re-linked by the node above it on the path.
//
// The member → score lookup is not here (core/zset_index.h): this tree
// answers "where is (score, member)", "what is at rank r", "where do scores
// from x start". Not thread-safe, like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/packed.h"
#include "core/zset_leaf.h"

namespace peregrine {

struct ZNode;

class ZTree {
 public:
  // A leaf's block in a tree of more than one: kLeafBytes from the start
  // (mimalloc's 1 KB size class, so every leaf is in one class and none is
  // reallocated as it fills), with kLeafRoom bytes of entries. A full leaf
  // passes entries to a neighbour with room before it splits (see
  // MakeRoom), so random inserts keep leaves about 87% full. Two
  // neighbours merge when both fit in three quarters of a leaf.
  static constexpr size_t kLeafBytes = 1024;
  static constexpr size_t kLeafRoom = kLeafBytes - sizeof(ZLeaf);
  // Children per inner node (a node then fits 2 KB).
  static constexpr uint32_t kFanout = 62;
  // The deepest tree: inner nodes off the edges are a quarter full at
  // least (MergeNodes), so 15^11 leaves is past any memory.
  static constexpr uint32_t kMaxHeight = 12;

  ZTree();
  ~ZTree();
  ZTree(ZTree&& other) noexcept;
  ZTree& operator=(ZTree&& other) noexcept;
  ZTree(const ZTree&) = delete;
  ZTree& operator=(const ZTree&) = delete;
  // A deep copy.
  ZTree Clone() const;

  uint64_t size() const { return size_; }
  // Bytes allocated for the tree (MEMORY USAGE); O(nodes).
  size_t AllocatedBytes() const;

  // Adds (score, member). REQUIRES: the member is not in the tree; the
  // score is not NaN.
  void Insert(double score, std::string_view member);
  // Removes (score, member); returns whether it was there.
  bool Erase(double score, std::string_view member);
  // Whether (score, member) is in the tree, and its 0-based rank.
  bool Find(double score, std::string_view member, uint64_t* rank = nullptr) const;

  // A position: the path from the root to an entry. Any write invalidates
  // every position.
  struct Pos {
    struct Step {
      ZNode* node;
      uint32_t index;
    };
    Step path[kMaxHeight];
    ZLeaf* leaf = nullptr;
    uint32_t off = 0;       // the entry's offset in the leaf (leaf->used: none)
    uint32_t index = 0;     // its index in the leaf
    uint64_t rank = 0;      // its rank in the tree
    bool valid() const { return leaf != nullptr && off < leaf->used; }
  };
  // The entry at rank r (invalid when r >= size()).
  Pos AtRank(uint64_t r) const;
  // The first entry with score >= min (> min when exclusive); invalid if
  // none.
  Pos LowerBoundScore(double min, bool exclusive) const;
  // The first entry at or after (score, member); invalid if none.
  Pos LowerBound(double score, std::string_view member) const;
  // The first entry whose member is >= min (> min), comparing members only
  // (ZRANGEBYLEX's order, which assumes one score throughout).
  Pos LowerBoundLex(std::string_view min, bool exclusive) const;
  // The next / previous entry; false (and an invalid position) past the
  // ends.
  bool Next(Pos* pos) const;
  bool Prev(Pos* pos) const;
  double Score(const Pos& pos) const { return pos.leaf->ScoreAt(pos.off); }
  std::string_view Member(const Pos& pos, char* scratch) const { return pos.leaf->MemberAt(pos.off, scratch); }

  // Frees up to `leaves` leaves (and the nodes they leave empty) from the
  // tree's end; true once the tree is empty. For lazy freeing: nothing but
  // DestroySome and the destructor may be called after it.
  bool DestroySome(size_t leaves);

  // Checks the structure (tests): counts, order, separators, sizes.
  bool Validate() const;
  uint32_t height() const { return height_; }

 private:
  struct Path;
  void Release();
  // Descends to the leaf where `key` belongs, recording the path (and the
  // rank of the leaf's first entry).
  void Descend(double score, std::string_view member, Pos* pos) const;
  // The position of (score, member); false if it is not in the tree.
  bool Locate(double score, std::string_view member, Pos* pos) const;
  // Before an entry of `size` bytes goes at `index` in the leaf of `pos`,
  // which has no room for it: an append at the tree's end starts a new
  // leaf and a push at its front moves the leaf's entries to one (so
  // rising or falling keys fill leaves); otherwise the leaf shares its
  // entries with the emptier neighbour that has room, and when neither has,
  // it and a neighbour become three leaves two thirds full (a B*-tree's
  // split), or it splits in half when it has no neighbour. Splits go up the
  // nodes as they fill. False when nothing could move (a leaf of one
  // entry): the leaf grows instead. Invalidates `pos` beyond its leaf.
  bool MakeRoom(Pos& pos, uint32_t index, size_t size, double score, std::string_view member);
  // Where a full leaf or node is cut: keeping the old one full after an
  // append at the tree's end or a push at its front, else in half.
  enum class Cut : uint8_t { kHalf, kAtEnd, kAtFront };
  void InsertChild(Pos& pos, uint32_t depth, void* right, uint64_t right_count, double sep_score,
                   uint8_t* sep_member, Cut cut);
  // After a removal left the leaf of `pos` small or empty.
  void Rebalance(Pos& pos);
  void RemoveChild(Pos& pos, uint32_t depth);
  // After the node at path depth `depth` lost a child.
  void MergeNodes(Pos& pos, uint32_t depth);
  // Moves children into child xi of `up` from a neighbour until it is a
  // quarter full (the neighbours being too full to merge with).
  void Borrow(ZNode* up, uint32_t xi);
  void CollapseRoot();
  // Stores the leaf of `pos` (which may have moved) where its parent points.
  void Relink(const Pos& pos);
  // Fills pos from the node at depth `depth` (its child `index`) down to
  // the leftmost / rightmost leaf under it.
  void DownLeft(Pos* pos, uint32_t depth) const;
  // The first entry of the tree not `below` (a prefix predicate on
  // separators' score and member block), found in its leaf by `in_leaf`.
  template <typename Below, typename InLeaf>
  Pos SeekFirst(Below below, InLeaf in_leaf) const;
  void DownRight(Pos* pos, uint32_t depth) const;

  void* root_;
  uint32_t height_ = 0;  // 0: the root is a leaf
  uint64_t size_ = 0;
};

}  // namespace peregrine
