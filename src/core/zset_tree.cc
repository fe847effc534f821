// The sorted set tree (see zset_tree.h).
#include "core/zset_tree.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "core/memory.h"
#include "core/zset_node.h"

namespace peregrine {

// ZNode, SepView and LastBelow: core/zset_node.h. Positions, seeks and
// Validate: zset_tree_walk.cc.

namespace {

// A separator's member: its string form in a counted block (4-byte length,
// then the bytes), or nullptr for none: a separator whose score alone sets
// it apart from the child before it (the empty member sorts first).
uint8_t* MakeSep(std::string_view m) {
  auto* b = static_cast<uint8_t*>(CountedAlloc(4 + m.size()));
  const uint32_t len = static_cast<uint32_t>(m.size());
  std::memcpy(b, &len, 4);
  if (!m.empty()) std::memcpy(b + 4, m.data(), m.size());
  return b;
}

void FreeSep(uint8_t* b) {
  if (b != nullptr) CountedFree(b);
}

ZNode* NewNode() {
  auto* n = static_cast<ZNode*>(CountedAlloc(sizeof(ZNode)));
  n->n = 0;
  n->unused = 0;
  return n;
}

// Moves entries [from, to) of node `src` to position `at` of `dst` (which
// has room), keeping `src` as it is (the caller shrinks it).
void CopyChildren(ZNode* dst, uint32_t at, const ZNode* src, uint32_t from, uint32_t to) {
  const uint32_t k = to - from;
  std::memcpy(dst->count + at, src->count + from, 8 * k);
  std::memcpy(dst->child + at, src->child + from, sizeof(void*) * k);
  std::memcpy(dst->sep_score + at, src->sep_score + from, 8 * k);
  std::memcpy(dst->sep_member + at, src->sep_member + from, sizeof(uint8_t*) * k);
}

// Opens / closes slot i of a node's arrays.
void OpenSlot(ZNode* n, uint32_t i) {
  const uint32_t k = n->n - i;
  std::memmove(n->count + i + 1, n->count + i, 8 * k);
  std::memmove(n->child + i + 1, n->child + i, sizeof(void*) * k);
  std::memmove(n->sep_score + i + 1, n->sep_score + i, 8 * k);
  std::memmove(n->sep_member + i + 1, n->sep_member + i, sizeof(uint8_t*) * k);
  n->n++;
}

void CloseSlot(ZNode* n, uint32_t i) {
  const uint32_t k = n->n - i - 1;
  std::memmove(n->count + i, n->count + i + 1, 8 * k);
  std::memmove(n->child + i, n->child + i + 1, sizeof(void*) * k);
  std::memmove(n->sep_score + i, n->sep_score + i + 1, 8 * k);
  std::memmove(n->sep_member + i, n->sep_member + i + 1, sizeof(uint8_t*) * k);
  n->n--;
}

int CompareSep(const ZNode* n, uint32_t i, double score, std::string_view member) {
  // Scores first: the separator's member block is read only on a tie.
  if (n->sep_score[i] < score) return -1;
  if (n->sep_score[i] > score) return 1;
  return CompareZKey(0, SepView(n->sep_member[i]), 0, member);
}

void DestroySubtree(void* p, uint32_t level) {
  if (level == 0) {
    ZLeaf::Destroy(static_cast<ZLeaf*>(p));
    return;
  }
  ZNode* n = static_cast<ZNode*>(p);
  for (uint32_t i = 0; i < n->n; ++i) {
    DestroySubtree(n->child[i], level - 1);
    FreeSep(n->sep_member[i]);
  }
  CountedFree(n);
}

void* CloneSubtree(const void* p, uint32_t level) {
  if (level == 0) return static_cast<const ZLeaf*>(p)->Clone();
  const ZNode* n = static_cast<const ZNode*>(p);
  ZNode* c = NewNode();
  c->n = n->n;
  for (uint32_t i = 0; i < n->n; ++i) {
    c->count[i] = n->count[i];
    c->child[i] = CloneSubtree(n->child[i], level - 1);
    c->sep_score[i] = n->sep_score[i];
    c->sep_member[i] = n->sep_member[i] == nullptr ? nullptr : MakeSep(SepView(n->sep_member[i]));
  }
  return c;
}

size_t SubtreeBytes(const void* p, uint32_t level) {
  if (level == 0) return static_cast<const ZLeaf*>(p)->AllocatedBytes();
  const ZNode* n = static_cast<const ZNode*>(p);
  size_t total = CountedUsableSize(n);
  for (uint32_t i = 0; i < n->n; ++i) {
    total += SubtreeBytes(n->child[i], level - 1);
    if (n->sep_member[i] != nullptr) total += CountedUsableSize(n->sep_member[i]);
  }
  return total;
}

}  // namespace

ZTree::ZTree() : root_(ZLeaf::Create(0)) {}

ZTree::~ZTree() { Release(); }

void ZTree::Release() {
  if (root_ != nullptr) DestroySubtree(root_, height_);
  root_ = nullptr;
}

ZTree::ZTree(ZTree&& other) noexcept : root_(other.root_), height_(other.height_), size_(other.size_) {
  other.root_ = nullptr;
  other.height_ = 0;
  other.size_ = 0;
}

ZTree& ZTree::operator=(ZTree&& other) noexcept {
  std::swap(root_, other.root_);
  std::swap(height_, other.height_);
  std::swap(size_, other.size_);
  return *this;
}

ZTree ZTree::Clone() const {
  ZTree c;
  ZLeaf::Destroy(static_cast<ZLeaf*>(c.root_));
  c.root_ = CloneSubtree(root_, height_);
  c.height_ = height_;
  c.size_ = size_;
  return c;
}

size_t ZTree::AllocatedBytes() const { return SubtreeBytes(root_, height_); }

void ZTree::Descend(double score, std::string_view member, Pos* pos) const {
  void* p = root_;
  uint64_t rank = 0;
  for (uint32_t d = 0; d < height_; ++d) {
    ZNode* n = static_cast<ZNode*>(p);
    // The child that holds the key: the last with sep <= key.
    const uint32_t i = LastBelow(n, [&](uint32_t k) { return CompareSep(n, k, score, member) <= 0; });
    for (uint32_t j = 0; j < i; ++j) rank += n->count[j];
    pos->path[d] = {n, i};
    p = n->child[i];
  }
  pos->leaf = static_cast<ZLeaf*>(p);
  pos->rank = rank;
}

void ZTree::Relink(const Pos& pos) {
  if (height_ == 0)
    root_ = pos.leaf;
  else
    pos.path[height_ - 1].node->child[pos.path[height_ - 1].index] = pos.leaf;
}

void ZTree::Insert(double score, std::string_view member) {
  assert(!std::isnan(score));  // ZADD refuses NaN; it would break the order
  const packed::ItemPlan plan(member);
  const size_t size = ZLeaf::EntrySize(plan);
  Pos pos;
  uint32_t index, off;
  // A full leaf makes room first (at most twice: an entry of many KB may
  // still not fit, and its leaf grows instead).
  for (int tries = 0;; ++tries) {
    Descend(score, member, &pos);
    off = pos.leaf->LowerBound(score, member, &index);
    if (pos.leaf->used + size <= kLeafRoom || pos.leaf->count == 0 || tries == 2) break;
    if (!MakeRoom(pos, index, size, score, member)) break;
  }
  // A tree's leaves take their full block at once; a lone root leaf (a
  // small set with a long member) grows as it needs.
  pos.leaf = ZLeaf::Insert(pos.leaf, off, score, plan, height_ > 0 ? kLeafRoom : 0);
  Relink(pos);
  for (uint32_t d = 0; d < height_; ++d) pos.path[d].node->count[pos.path[d].index]++;
  size_++;
}

namespace {

// The separator of `right` after its neighbour `left`: right's first key,
// with its member only when the score does not tell the leaves apart.
void SepBetween(const ZLeaf* left, const ZLeaf* right, double* score, uint8_t** member) {
  *score = right->ScoreAt(0);
  char scratch[packed::kScratchSize];
  *member = left->ScoreAt(left->LastOf()) == *score ? MakeSep(right->MemberAt(0, scratch)) : nullptr;
}

// Child j of `p` (a leaf) has a new first key or a new neighbour before it.
void ResetSep(ZNode* p, uint32_t j) {
  FreeSep(p->sep_member[j]);
  SepBetween(static_cast<ZLeaf*>(p->child[j - 1]), static_cast<ZLeaf*>(p->child[j]), &p->sep_score[j],
             &p->sep_member[j]);
}

// The offset in `l` from which its entries go when about `keep` bytes stay
// (at least `min_keep` entries, at most all but one), and in *k how many
// stay.
uint32_t KeepBytes(const ZLeaf* l, uint32_t keep, uint32_t min_keep, uint32_t* k) {
  uint32_t off = 0, n = 0;
  while (n < l->count && (n < min_keep || (off < keep && n + 1 < l->count))) off += l->SizeAt(off), ++n;
  *k = n;
  return off;
}

}  // namespace

bool ZTree::MakeRoom(Pos& pos, uint32_t index, size_t size, double score, std::string_view member) {
  ZLeaf* l = pos.leaf;
  bool first = index == 0, last = index == l->count;
  for (uint32_t d = 0; d < height_; ++d) {
    first = first && pos.path[d].index == 0;
    last = last && pos.path[d].index + 1 == pos.path[d].node->n;
  }
  if (last || first) {
    ZLeaf* r;
    double sep_score;
    uint8_t* sep = nullptr;
    if (last) {  // the full leaf stays; the key starts a new one
      r = ZLeaf::Create(kLeafRoom);
      sep_score = score;
      if (l->ScoreAt(l->LastOf()) == score) sep = MakeSep(member);
    } else {  // the entries move on to a new leaf; this one takes the key
      r = l->SplitOff(0, l->count, kLeafRoom);
      sep_score = r->ScoreAt(0);
      char scratch[packed::kScratchSize];
      if (score == sep_score) sep = MakeSep(r->MemberAt(0, scratch));
    }
    InsertChild(pos, height_, r, r->count, sep_score, sep, last ? Cut::kAtEnd : Cut::kAtFront);
    return true;
  }
  ZNode* p = height_ > 0 ? pos.path[height_ - 1].node : nullptr;
  const uint32_t i = height_ > 0 ? pos.path[height_ - 1].index : 0;
  ZLeaf* a = p != nullptr && i > 0 ? static_cast<ZLeaf*>(p->child[i - 1]) : nullptr;
  ZLeaf* b = p != nullptr && i + 1 < p->n ? static_cast<ZLeaf*>(p->child[i + 1]) : nullptr;
  // A neighbour with room: the two even out, leaving each room for the entry.
  auto roomy = [&](const ZLeaf* x) { return x != nullptr && x->used + l->used + 2 * size <= 2 * kLeafRoom; };
  const ZLeaf* to = roomy(a) ? a : nullptr;
  if (roomy(b) && (to == nullptr || b->used < a->used)) to = b;
  if (to == a && a != nullptr) {
    // l's first entries go to a's end.
    if (a->room < kLeafRoom) p->child[i - 1] = a = ZLeaf::Reserve(a, kLeafRoom);
    const uint32_t half = (a->used + l->used) / 2;
    uint32_t k = 0, off = 0;
    while (k + 1 < l->count && a->used + off < half && a->used + off + l->SizeAt(off) <= a->room)
      off += l->SizeAt(off), ++k;
    if (k > 0) {
      ZLeaf::MoveToLeft(a, l, off, k);
      p->count[i - 1] += k;
      p->count[i] -= k;
      ResetSep(p, i);
      return true;
    }
  } else if (to == b && b != nullptr) {
    // l's last entries go to b's front.
    if (b->room < kLeafRoom) p->child[i + 1] = b = ZLeaf::Reserve(b, kLeafRoom);
    uint32_t keep;
    const uint32_t off = KeepBytes(l, (b->used + l->used) / 2, 1, &keep);
    const uint32_t k = l->count - keep;
    if (k > 0 && b->used + (l->used - off) <= b->room) {
      ZLeaf::MoveToRight(l, b, off, k);
      p->count[i] -= k;
      p->count[i + 1] += k;
      ResetSep(p, i + 1);
      return true;
    }
  }
  if (a != nullptr || b != nullptr) {
    // Both neighbours full: l and one of them (x, y in order) become three
    // leaves of a third of their bytes each: x keeps its first third, a new
    // leaf takes the middle, y keeps its last third.
    const uint32_t xi = b != nullptr ? i : i - 1;
    ZLeaf* x = static_cast<ZLeaf*>(p->child[xi]);
    ZLeaf* y = static_cast<ZLeaf*>(p->child[xi + 1]);
    if (x->count + y->count >= 3) {
      const uint32_t third = (x->used + y->used) / 3;
      uint32_t x_keep, y_moved = 0, y_off = 0;
      const uint32_t x_off = KeepBytes(x, third, 1, &x_keep);
      const uint32_t x_moved = x->count - x_keep;
      uint32_t m_bytes = x->used - x_off;
      // y gives its front until the middle holds a third (one entry at
      // least), keeping one.
      while (y_moved + 1 < y->count && (m_bytes + y_off < third || x_moved + y_moved == 0))
        y_off += y->SizeAt(y_off), ++y_moved;
      m_bytes += y_off;
      ZLeaf* m = ZLeaf::Create(m_bytes > kLeafRoom ? m_bytes : kLeafRoom);
      ZLeaf::MoveToRight(x, m, x_off, x_moved);
      ZLeaf::MoveToLeft(m, y, y_off, y_moved);
      p->count[xi] = x->count + m->count;  // InsertChild takes m's count off
      p->count[xi + 1] = y->count;
      FreeSep(p->sep_member[xi + 1]);
      SepBetween(m, y, &p->sep_score[xi + 1], &p->sep_member[xi + 1]);
      double sep_score;
      uint8_t* sep;
      SepBetween(x, m, &sep_score, &sep);
      pos.path[height_ - 1].index = xi;
      InsertChild(pos, height_, m, m->count, sep_score, sep, Cut::kHalf);
      return true;
    }
  }
  if (l->count < 2) return false;
  // No neighbour (a root leaf, a node's only child): in half by bytes.
  uint32_t keep;
  const uint32_t off = KeepBytes(l, l->used / 2, 1, &keep);
  ZLeaf* r = l->SplitOff(off, l->count - keep, kLeafRoom);
  double sep_score;
  uint8_t* sep;
  SepBetween(l, r, &sep_score, &sep);
  InsertChild(pos, height_, r, r->count, sep_score, sep, Cut::kHalf);
  return true;
}

void ZTree::InsertChild(Pos& pos, uint32_t depth, void* right, uint64_t right_count, double sep_score,
                        uint8_t* sep_member, Cut cut) {
  if (depth == 0) {  // the root split: a new root above it
    assert(height_ + 1 < kMaxHeight);  // nodes stay a quarter full: log_15 of the leaves at most
    ZNode* r = NewNode();
    r->n = 2;
    r->count[0] = size_ - right_count;
    r->child[0] = root_;
    r->sep_score[0] = 0;
    r->sep_member[0] = nullptr;
    r->count[1] = right_count;
    r->child[1] = right;
    r->sep_score[1] = sep_score;
    r->sep_member[1] = sep_member;
    root_ = r;
    height_++;
    return;
  }
  ZNode* p = pos.path[depth - 1].node;
  const uint32_t i = pos.path[depth - 1].index;
  p->count[i] -= right_count;
  OpenSlot(p, i + 1);
  p->count[i + 1] = right_count;
  p->child[i + 1] = right;
  p->sep_score[i + 1] = sep_score;
  p->sep_member[i + 1] = sep_member;
  if (p->n <= kFanout) return;
  // Split the node as the leaf was: the new one takes the last child only
  // after an append at the tree's end, all but the first two after a push
  // at its front, else the upper half.
  const uint32_t h = cut == Cut::kAtEnd ? p->n - 1 : cut == Cut::kAtFront ? 2 : p->n / 2;
  ZNode* q = NewNode();
  q->n = p->n - h;
  CopyChildren(q, 0, p, h, p->n);
  p->n = h;
  uint64_t q_count = 0;
  for (uint32_t j = 0; j < q->n; ++j) q_count += q->count[j];
  const double up_score = q->sep_score[0];
  uint8_t* up_member = q->sep_member[0];  // moves up: a node's child 0 needs none
  q->sep_member[0] = nullptr;
  q->sep_score[0] = 0;
  InsertChild(pos, depth - 1, q, q_count, up_score, up_member, cut);
}

bool ZTree::Locate(double score, std::string_view member, Pos* pos) const {
  Descend(score, member, pos);
  pos->off = pos->leaf->LowerBound(score, member, &pos->index);
  if (pos->off >= pos->leaf->used || pos->leaf->ScoreAt(pos->off) != score) return false;
  char scratch[packed::kScratchSize];
  if (pos->leaf->MemberAt(pos->off, scratch) != member) return false;
  pos->rank += pos->index;
  return true;
}

bool ZTree::Find(double score, std::string_view member, uint64_t* rank) const {
  Pos pos;
  if (!Locate(score, member, &pos)) return false;
  if (rank != nullptr) *rank = pos.rank;
  return true;
}

bool ZTree::Erase(double score, std::string_view member) {
  Pos pos;
  if (!Locate(score, member, &pos)) return false;
  const uint32_t off = pos.off;
  pos.leaf->Erase(off);
  for (uint32_t d = 0; d < height_; ++d) pos.path[d].node->count[pos.path[d].index]--;
  size_--;
  Rebalance(pos);
  return true;
}

void ZTree::Rebalance(Pos& pos) {
  ZLeaf* l = pos.leaf;
  if (height_ == 0) {
    pos.leaf = ZLeaf::Shrink(l);
    root_ = pos.leaf;
    return;
  }
  ZNode* p = pos.path[height_ - 1].node;
  const uint32_t i = pos.path[height_ - 1].index;
  if (l->count == 0) {
    RemoveChild(pos, height_);
    return;
  }
  if (l->bytes() >= kLeafBytes / 4) {
    pos.leaf = ZLeaf::Shrink(l);
    Relink(pos);
    return;
  }
  // Small: merge with a neighbour when both fit in three quarters of a leaf.
  constexpr size_t kFit = kLeafBytes * 3 / 4;
  uint32_t j = p->n;  // the left one of the pair to merge
  if (i + 1 < p->n && l->used + static_cast<ZLeaf*>(p->child[i + 1])->bytes() <= kFit)
    j = i;
  else if (i > 0 && l->used + static_cast<ZLeaf*>(p->child[i - 1])->bytes() <= kFit)
    j = i - 1;
  if (j == p->n) {
    pos.leaf = ZLeaf::Shrink(l);
    Relink(pos);
    return;
  }
  p->child[j] = ZLeaf::Absorb(static_cast<ZLeaf*>(p->child[j]), static_cast<ZLeaf*>(p->child[j + 1]));
  p->count[j] += p->count[j + 1];
  FreeSep(p->sep_member[j + 1]);
  CloseSlot(p, j + 1);
  pos.path[height_ - 1].index = j;
  MergeNodes(pos, height_ - 1);
}

void ZTree::MergeNodes(Pos& pos, uint32_t depth) {
  // The node at `depth` lost a child: under a quarter full, it merges with
  // a neighbour that has room, and so on up; when both neighbours are too
  // full for that, it takes children from one of them instead. So every
  // node off the tree's two edges keeps a quarter of its room filled and
  // the height stays logarithmic whatever the order of writes.
  for (uint32_t d = depth; d >= 1; --d) {
    ZNode* x = pos.path[d].node;
    if (x->n >= kFanout / 4) break;
    ZNode* up = pos.path[d - 1].node;
    const uint32_t xi = pos.path[d - 1].index;
    uint32_t m = up->n;
    if (xi + 1 < up->n && x->n + static_cast<ZNode*>(up->child[xi + 1])->n <= kFanout)
      m = xi;
    else if (xi > 0 && x->n + static_cast<ZNode*>(up->child[xi - 1])->n <= kFanout)
      m = xi - 1;
    if (m == up->n) {
      if (up->n > 1) Borrow(up, xi);
      break;
    }
    ZNode* a = static_cast<ZNode*>(up->child[m]);
    ZNode* b = static_cast<ZNode*>(up->child[m + 1]);
    // b's first child takes b's separator from above.
    b->sep_score[0] = up->sep_score[m + 1];
    b->sep_member[0] = up->sep_member[m + 1];
    CopyChildren(a, a->n, b, 0, b->n);
    a->n += b->n;
    up->count[m] += up->count[m + 1];
    CloseSlot(up, m + 1);
    CountedFree(b);
    pos.path[d - 1].index = m;
    pos.path[d].node = a;
  }
  CollapseRoot();
}

void ZTree::Borrow(ZNode* up, uint32_t xi) {
  ZNode* x = static_cast<ZNode*>(up->child[xi]);
  while (x->n < kFanout / 4) {
    if (xi + 1 < up->n) {
      // The right neighbour's first child moves to x's end: it takes the
      // neighbour's separator, and the neighbour's second child's moves up.
      ZNode* b = static_cast<ZNode*>(up->child[xi + 1]);
      x->count[x->n] = b->count[0];
      x->child[x->n] = b->child[0];
      x->sep_score[x->n] = up->sep_score[xi + 1];
      x->sep_member[x->n] = up->sep_member[xi + 1];
      x->n++;
      up->count[xi] += b->count[0];
      up->count[xi + 1] -= b->count[0];
      up->sep_score[xi + 1] = b->sep_score[1];
      up->sep_member[xi + 1] = b->sep_member[1];
      CloseSlot(b, 0);
      b->sep_score[0] = 0;
      b->sep_member[0] = nullptr;
    } else {
      // The left neighbour's last child moves to x's front: x's first child
      // takes x's separator, and the moved child's moves up.
      ZNode* a = static_cast<ZNode*>(up->child[xi - 1]);
      const uint32_t l = a->n - 1;
      OpenSlot(x, 0);
      x->sep_score[1] = up->sep_score[xi];
      x->sep_member[1] = up->sep_member[xi];
      x->count[0] = a->count[l];
      x->child[0] = a->child[l];
      x->sep_score[0] = 0;
      x->sep_member[0] = nullptr;
      up->sep_score[xi] = a->sep_score[l];
      up->sep_member[xi] = a->sep_member[l];
      up->count[xi] += a->count[l];
      up->count[xi - 1] -= a->count[l];
      a->n--;
    }
  }
}

void ZTree::CollapseRoot() {
  while (height_ > 0 && static_cast<ZNode*>(root_)->n == 1) {  // a root of one child steps down
    ZNode* r = static_cast<ZNode*>(root_);
    root_ = r->child[0];
    CountedFree(r);
    height_--;
  }
}

void ZTree::RemoveChild(Pos& pos, uint32_t depth) {
  // The child at path[depth - 1] is empty: free it and close its slot.
  ZNode* p = pos.path[depth - 1].node;
  const uint32_t i = pos.path[depth - 1].index;
  DestroySubtree(p->child[i], height_ - depth);
  FreeSep(p->sep_member[i]);
  CloseSlot(p, i);
  if (i == 0 && p->n > 0) {  // the new first child needs no separator
    FreeSep(p->sep_member[0]);
    p->sep_member[0] = nullptr;
    p->sep_score[0] = 0;
  }
  if (p->n == 0) {
    // Not the root: a root keeps two children at least (CollapseRoot), so
    // removing one never empties it.
    assert(depth - 1 > 0);
    RemoveChild(pos, depth - 1);
    return;
  }
  MergeNodes(pos, depth - 1);
}

bool ZTree::DestroySome(size_t leaves) {
  while (root_ != nullptr) {
    if (height_ == 0) {
      ZLeaf::Destroy(static_cast<ZLeaf*>(root_));
      root_ = nullptr;
      break;
    }
    if (leaves == 0) return false;
    // Down the rightmost path to the lowest node; its last leaves go.
    ZNode* path[kMaxHeight];
    void* p = root_;
    for (uint32_t d = 0; d < height_; ++d) {
      path[d] = static_cast<ZNode*>(p);
      p = path[d]->child[path[d]->n - 1];
    }
    ZNode* bottom = path[height_ - 1];
    while (bottom->n > 0 && leaves > 0) {
      --bottom->n;
      ZLeaf::Destroy(static_cast<ZLeaf*>(bottom->child[bottom->n]));
      FreeSep(bottom->sep_member[bottom->n]);
      --leaves;
    }
    // Emptied nodes go, and their places in the nodes above.
    for (uint32_t d = height_; d-- > 0 && path[d]->n == 0;) {
      CountedFree(path[d]);
      if (d == 0) {
        root_ = nullptr;
        break;
      }
      ZNode* up = path[d - 1];
      --up->n;
      FreeSep(up->sep_member[up->n]);
    }
  }
  height_ = 0;
  size_ = 0;
  return true;
}

}  // namespace peregrine
