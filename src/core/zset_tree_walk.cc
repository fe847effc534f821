// The sorted set tree's reads (see zset_tree.h): positions by rank and by
// bound, steps to the next and previous entry, and the structure check.
// Inserts, removals and rebalancing are in zset_tree.cc.
#include <cstring>
#include <string>

#include "core/zset_node.h"
#include "core/zset_tree.h"

namespace peregrine {

void ZTree::DownLeft(Pos* pos, uint32_t depth) const {
  void* p = depth == 0 ? root_ : pos->path[depth - 1].node->child[pos->path[depth - 1].index];
  for (uint32_t d = depth; d < height_; ++d) {
    ZNode* n = static_cast<ZNode*>(p);
    pos->path[d] = {n, 0};
    p = n->child[0];
  }
  pos->leaf = static_cast<ZLeaf*>(p);
  pos->off = 0;
  pos->index = 0;
}

void ZTree::DownRight(Pos* pos, uint32_t depth) const {
  void* p = depth == 0 ? root_ : pos->path[depth - 1].node->child[pos->path[depth - 1].index];
  for (uint32_t d = depth; d < height_; ++d) {
    ZNode* n = static_cast<ZNode*>(p);
    pos->path[d] = {n, n->n - 1};
    p = n->child[n->n - 1];
  }
  pos->leaf = static_cast<ZLeaf*>(p);
  pos->index = pos->leaf->count == 0 ? 0 : pos->leaf->count - 1;
  pos->off = pos->leaf->LastOf();
}

ZTree::Pos ZTree::AtRank(uint64_t r) const {
  Pos pos;
  if (r >= size_) {  // the end: after the last entry
    DownRight(&pos, 0);
    pos.off = pos.leaf->used;
    pos.index = pos.leaf->count;
    pos.rank = size_;
    return pos;
  }
  pos.rank = r;
  void* p = root_;
  for (uint32_t d = 0; d < height_; ++d) {
    ZNode* n = static_cast<ZNode*>(p);
    uint32_t i = 0;
    while (r >= n->count[i]) r -= n->count[i++];
    pos.path[d] = {n, i};
    p = n->child[i];
  }
  pos.leaf = static_cast<ZLeaf*>(p);
  uint32_t off = 0;
  for (uint64_t j = 0; j < r; ++j) off += pos.leaf->SizeAt(off);
  pos.off = off;
  pos.index = static_cast<uint32_t>(r);
  return pos;
}

bool ZTree::Next(Pos* pos) const {
  pos->off += pos->leaf->SizeAt(pos->off);
  pos->index++;
  pos->rank++;
  if (pos->off < pos->leaf->used) return true;
  for (uint32_t d = height_; d-- > 0;) {
    if (pos->path[d].index + 1 < pos->path[d].node->n) {
      pos->path[d].index++;
      DownLeft(pos, d + 1);
      return true;
    }
  }
  return false;  // off == used: past the end
}

bool ZTree::Prev(Pos* pos) const {
  if (pos->rank == 0) {
    pos->off = pos->leaf->used;
    return false;
  }
  pos->rank--;
  if (pos->index > 0) {
    pos->index--;
    uint32_t off = 0;
    for (uint32_t j = 0; j < pos->index; ++j) off += pos->leaf->SizeAt(off);
    pos->off = off;
    return true;
  }
  for (uint32_t d = height_; d-- > 0;) {
    if (pos->path[d].index > 0) {
      pos->path[d].index--;
      DownRight(pos, d + 1);
      return true;
    }
  }
  return false;
}

template <typename Below, typename InLeaf>
ZTree::Pos ZTree::SeekFirst(Below below, InLeaf in_leaf) const {
  Pos pos;
  void* p = root_;
  uint64_t rank = 0;
  for (uint32_t d = 0; d < height_; ++d) {
    ZNode* n = static_cast<ZNode*>(p);
    const uint32_t i = LastBelow(n, [&](uint32_t k) { return below(n->sep_score[k], n->sep_member[k]); });
    for (uint32_t j = 0; j < i; ++j) rank += n->count[j];
    pos.path[d] = {n, i};
    p = n->child[i];
  }
  pos.leaf = static_cast<ZLeaf*>(p);
  pos.off = in_leaf(pos.leaf, &pos.index);
  pos.rank = rank + pos.index;
  if (pos.off >= pos.leaf->used && pos.leaf->count > 0) {
    // Past this leaf: the next one starts with it.
    pos.off = pos.leaf->LastOf();
    pos.index = pos.leaf->count - 1;
    pos.rank--;
    Next(&pos);
  }
  return pos;
}

ZTree::Pos ZTree::LowerBoundScore(double min, bool exclusive) const {
  return SeekFirst([&](double s, const uint8_t*) { return exclusive ? s <= min : s < min; },
                   [&](const ZLeaf* l, uint32_t* index) { return l->LowerBoundScore(min, exclusive, index); });
}

ZTree::Pos ZTree::LowerBoundLex(std::string_view min, bool exclusive) const {
  return SeekFirst(
      [&](double, const uint8_t* sep) {
        const int c = CompareZKey(0, SepView(sep), 0, min);
        return exclusive ? c <= 0 : c < 0;
      },
      [&](const ZLeaf* l, uint32_t* index) { return l->LowerBoundLex(min, exclusive, index); });
}

ZTree::Pos ZTree::LowerBound(double score, std::string_view member) const {
  // A separator without a member: the child before holds lower scores only.
  return SeekFirst(
      [&](double s, const uint8_t* sep) { return CompareZKey(s, SepView(sep), score, member) < 0; },
      [&](const ZLeaf* l, uint32_t* index) { return l->LowerBound(score, member, index); });
}

namespace {

// Validate's walk: the subtree's entries are in order, above `lo` (the
// separator that admitted it, if any), and count `*count`.
struct Checker {
  bool has_last = false;
  double last_score = 0;
  std::string last_member;

  bool Leaf(const ZLeaf* l, uint64_t* count) {
    char scratch[packed::kScratchSize];
    uint32_t k = 0, off = 0;
    for (; off < l->used; off += l->SizeAt(off), ++k) {
      const double s = l->ScoreAt(off);
      const std::string_view m = l->MemberAt(off, scratch);
      if (has_last && CompareZKey(last_score, last_member, s, m) >= 0) return false;
      has_last = true;
      last_score = s;
      last_member.assign(m);
    }
    if (off != l->used || k != l->count) return false;
    *count = k;
    return true;
  }

  bool Node(const ZNode* n, uint32_t level, uint64_t* count) {
    if (n->n == 0 || n->n > ZTree::kFanout || n->sep_member[0] != nullptr) return false;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n->n; ++i) {
      // Everything before child i is below its separator.
      if (i > 0 && has_last && CompareZKey(last_score, last_member, n->sep_score[i], SepView(n->sep_member[i])) >= 0)
        return false;
      uint64_t c = 0;
      if (!(level == 1 ? Leaf(static_cast<const ZLeaf*>(n->child[i]), &c)
                       : Node(static_cast<const ZNode*>(n->child[i]), level - 1, &c)))
        return false;
      if (c != n->count[i] || c == 0) return false;
      total += c;
    }
    *count = total;
    return true;
  }
};

}  // namespace

bool ZTree::Validate() const {
  Checker check;
  uint64_t count = 0;
  const bool ok = height_ == 0 ? check.Leaf(static_cast<const ZLeaf*>(root_), &count)
                               : check.Node(static_cast<const ZNode*>(root_), height_, &count);
  if (!ok || count != size_) return false;
  // Every entry is found where the separators send it.
  for (Pos pos = AtRank(0); pos.valid();) {
    char scratch[packed::kScratchSize];
    uint64_t rank;
    if (!Find(Score(pos), Member(pos, scratch), &rank) || rank != pos.rank) return false;
    if (!Next(&pos)) break;
  }
  return true;
}

}  // namespace peregrine
