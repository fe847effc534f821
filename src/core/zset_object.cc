// Sorted set objects (see zset_object.h).
#include "core/zset_object.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <string>

#include "core/lazy_free.h"
#include "core/memory.h"

namespace peregrine {

namespace {

// A new leaf's room: a few small entries (it grows by an eighth at least).
constexpr size_t kFirstLeafRoom = 52;

// The score a leaf keeps: Redis's listpack stores an integral score as an
// integer (double2ll), so -0 reads back as 0 there (a skiplist keeps -0).
double LeafScore(double s) { return s == 0 ? 0.0 : s; }

// A listpack position: the leaf, the entry at `off` (index == rank).
ZSetObject::Pos LeafPos(ZLeaf* l, uint32_t off, uint32_t index) {
  ZSetObject::Pos p;
  p.leaf = l;
  p.off = off;
  p.index = index;
  p.rank = index;
  return p;
}

}  // namespace

ZSetObject ZSetObject::Create(size_t size_hint, size_t value_len_hint, const ZSetLimits& limits) {
  ZSetObject z;
  if (size_hint <= limits.max_listpack_entries && value_len_hint <= limits.max_listpack_value) {
    z.ptr_ = ZLeaf::Create(kFirstLeafRoom);
    z.set_encoding(Encoding::kListpack);
  } else {
    z.ptr_ = new (CountedAlloc(sizeof(Big))) Big();
    z.set_encoding(Encoding::kSkiplist);
  }
  return z;
}

void ZSetObject::Release() {
  if (ptr_ == nullptr) return;
  if (encoding() == Encoding::kListpack) {
    ZLeaf::Destroy(leaf());
  } else if (big()->tree.size() >= lazy_free::kMinQueuedEntries) {
    // Freed a few leaves at a time between events (a 10M-member set has
    // some 300K leaves: tens of milliseconds at once).
    lazy_free::Queue(ptr_, [](void* obj, size_t leaves) {
      Big* b = static_cast<Big*>(obj);
      if (!b->tree.DestroySome(leaves)) return false;
      b->~Big();
      CountedFree(b);
      return true;
    });
  } else {
    big()->~Big();
    CountedFree(ptr_);
  }
  ptr_ = nullptr;
}

ZSetObject ZSetObject::Clone() const {
  ZSetObject c;
  c.tag_ = tag_;
  if (encoding() == Encoding::kListpack)
    c.ptr_ = leaf()->Clone();
  else
    c.ptr_ = new (CountedAlloc(sizeof(Big))) Big{big()->tree.Clone(), big()->index.Clone()};
  return c;
}

size_t ZSetObject::AllocatedBytes() const {
  if (encoding() == Encoding::kListpack) return leaf()->AllocatedBytes();
  return CountedUsableSize(ptr_) + big()->tree.AllocatedBytes() + big()->index.AllocatedBytes();
}

void ZSetObject::ToSkiplist() {
  ZLeaf* l = leaf();
  Big* b = new (CountedAlloc(sizeof(Big))) Big();
  char scratch[packed::kScratchSize];
  for (uint32_t off = 0; off < l->used; off += l->SizeAt(off)) {
    const std::string_view m = l->MemberAt(off, scratch);
    b->BeforeInsert();
    b->index.Insert(packed::Hash(m), l->ScoreAt(off), b->Moved(l->ScoreAt(off), m));
    b->tree.Insert(l->ScoreAt(off), m);
  }
  ZLeaf::Destroy(l);
  ptr_ = b;
  set_encoding(Encoding::kSkiplist);
}

void ZSetObject::ToListpack() {
  ZLeaf* l = ZLeaf::Create(kFirstLeafRoom);
  ForEach([&](std::string_view m, double s) { l = ZLeaf::Insert(l, l->used, LeafScore(s), packed::ItemPlan(m)); });
  Release();
  ptr_ = l;
  set_encoding(Encoding::kListpack);
}

void ZSetObject::MaybeConvert(size_t size_hint, const ZSetLimits& limits) {
  if (encoding() == Encoding::kListpack && size_hint > limits.max_listpack_entries) ToSkiplist();
}

void ZSetObject::ConvertToListpackIfNeeded(size_t max_member, const ZSetLimits& limits) {
  if (encoding() == Encoding::kSkiplist && size() <= limits.max_listpack_entries &&
      max_member <= limits.max_listpack_value)
    ToListpack();
}

ZSetObject::AddResult ZSetObject::Add(double score, std::string_view member, int flags, const ZSetLimits& limits,
                                      double* newscore) {
  if (std::isnan(score)) return AddResult::kNaN;
  const bool nx = flags & kNx, xx = flags & kXx, gt = flags & kGt, lt = flags & kLt, incr = flags & kIncr;
  // The common part of an existing member's update (Redis's zsetAdd):
  // returns false when nothing is to change, with *result set.
  auto update = [&](double cur, AddResult* result) {
    if (nx) {
      *result = AddResult::kNop;
      return false;
    }
    if (incr) {
      score += cur;
      if (std::isnan(score)) {
        *result = AddResult::kNaN;
        return false;
      }
    }
    if ((lt && score >= cur) || (gt && score <= cur)) {
      *result = AddResult::kNop;
      return false;
    }
    *newscore = score;
    *result = AddResult::kNone;
    return score != cur;
  };
  if (encoding() == Encoding::kListpack) {
    ZLeaf* l = leaf();
    const packed::Probe probe(member);
    const uint32_t at = l->FindMember(probe);
    if (at < l->used) {
      AddResult r;
      if (!update(l->ScoreAt(at), &r)) return r;
      // Out and in again (the leaf is at most a few KB).
      l->Erase(at);
      uint32_t index;
      const uint32_t off = l->LowerBound(score, member, &index);
      ptr_ = ZLeaf::Insert(l, off, LeafScore(score), packed::ItemPlan(member, probe));
      return AddResult::kUpdated;
    }
    if (xx) return AddResult::kNop;
    if (size_t{l->count} + 1 <= limits.max_listpack_entries && member.size() <= limits.max_listpack_value) {
      uint32_t index;
      const uint32_t off = l->LowerBound(score, member, &index);
      ptr_ = ZLeaf::Insert(l, off, LeafScore(score), packed::ItemPlan(member, probe));
      *newscore = score;
      return AddResult::kAdded;
    }
    ToSkiplist();
  }
  Big* b = big();
  const uint64_t hash = packed::Hash(member);
  const uint32_t slot = b->index.FindSlot(hash, [&](double s) { return InTree(s, member); });
  if (slot != ZIndex::kNone) {
    const double cur = b->index.ScoreAt(slot);
    AddResult r;
    if (!update(cur, &r)) return r;
    b->index.ChangeScore(hash, slot, cur, score, b->Moved(cur, member), b->Moved(score, member));
    b->tree.Erase(cur, member);
    b->tree.Insert(score, member);
    b->AfterWrite(false);
    return AddResult::kUpdated;
  }
  if (xx) return AddResult::kNop;
  b->BeforeInsert();
  b->index.Insert(hash, score, b->Moved(score, member));
  b->tree.Insert(score, member);
  *newscore = score;
  return AddResult::kAdded;
}

bool ZSetObject::Score(std::string_view member, double* score) const {
  if (encoding() == Encoding::kListpack) {
    const ZLeaf* l = leaf();
    const uint32_t at = l->FindMember(packed::Probe(member));
    if (at >= l->used) return false;
    *score = l->ScoreAt(at);
    return true;
  }
  return big()->index.Find(packed::Hash(member), [&](double s) { return InTree(s, member); }, score);
}

bool ZSetObject::Remove(std::string_view member) {
  if (encoding() == Encoding::kListpack) {
    ZLeaf* l = leaf();
    const uint32_t at = l->FindMember(packed::Probe(member));
    if (at >= l->used) return false;
    l->Erase(at);
    ptr_ = ZLeaf::Shrink(l);
    return true;
  }
  Big* b = big();
  const uint64_t hash = packed::Hash(member);
  const uint32_t slot = b->index.FindSlot(hash, [&](double s) { return InTree(s, member); });
  if (slot == ZIndex::kNone) return false;
  const double score = b->index.ScoreAt(slot);
  b->index.EraseSlot(hash, slot, score, b->Moved(score, member));
  b->tree.Erase(score, member);
  b->AfterWrite(true);
  return true;
}

bool ZSetObject::Rank(std::string_view member, uint64_t* rank, double* score) const {
  if (encoding() == Encoding::kListpack) {
    const ZLeaf* l = leaf();
    const packed::Probe probe(member);
    uint64_t i = 0;
    for (uint32_t off = 0; off < l->used; off += l->SizeAt(off), ++i) {
      if (l->MemberEquals(off, probe)) {
        *rank = i;
        *score = l->ScoreAt(off);
        return true;
      }
    }
    return false;
  }
  // The tree lookup that confirms the index's candidate gives the rank too.
  const ZTree& tree = big()->tree;
  return big()->index.Find(
      packed::Hash(member), [&](double s) { return tree.Find(s, member, rank); }, score);
}

ZSetObject::Pos ZSetObject::AtRank(uint64_t r) const {
  if (encoding() == Encoding::kSkiplist) return big()->tree.AtRank(r);
  ZLeaf* l = leaf();
  if (r >= l->count) return LeafPos(l, l->used, l->count);
  uint32_t off = 0;
  for (uint64_t j = 0; j < r; ++j) off += l->SizeAt(off);
  return LeafPos(l, off, static_cast<uint32_t>(r));
}

ZSetObject::Pos ZSetObject::LowerBoundScore(double min, bool exclusive) const {
  if (encoding() == Encoding::kSkiplist) return big()->tree.LowerBoundScore(min, exclusive);
  uint32_t index;
  const uint32_t off = leaf()->LowerBoundScore(min, exclusive, &index);
  return LeafPos(leaf(), off, index);
}

ZSetObject::Pos ZSetObject::LowerBoundLex(std::string_view min, bool exclusive) const {
  if (encoding() == Encoding::kSkiplist) return big()->tree.LowerBoundLex(min, exclusive);
  uint32_t index;
  const uint32_t off = leaf()->LowerBoundLex(min, exclusive, &index);
  return LeafPos(leaf(), off, index);
}

// The entry before the first one past the bound: the first past it is a
// lower bound with the opposite exclusivity.
ZSetObject::Pos ZSetObject::UpperBoundScore(double max, bool exclusive) const {
  Pos p = LowerBoundScore(max, !exclusive);
  Prev(&p);
  return p;
}

ZSetObject::Pos ZSetObject::UpperBoundLex(std::string_view max, bool exclusive) const {
  Pos p = LowerBoundLex(max, !exclusive);
  Prev(&p);
  return p;
}

bool ZSetObject::Next(Pos* pos) const {
  if (encoding() == Encoding::kSkiplist) return big()->tree.Next(pos);
  pos->off += pos->leaf->SizeAt(pos->off);
  pos->index++;
  pos->rank++;
  return pos->off < pos->leaf->used;
}

bool ZSetObject::Prev(Pos* pos) const {
  if (encoding() == Encoding::kSkiplist) return big()->tree.Prev(pos);
  if (pos->index == 0) {
    pos->off = pos->leaf->used;
    return false;
  }
  *pos = AtRank(pos->index - 1);
  return true;
}

void ZSetObject::EraseRanks(uint64_t start, uint64_t count) {
  if (count == 0) return;
  if (encoding() == Encoding::kListpack) {
    ZLeaf* l = leaf();
    const uint32_t off = AtRank(start).off;
    for (uint64_t i = 0; i < count; ++i) l->Erase(off);
    ptr_ = ZLeaf::Shrink(l);
    return;
  }
  // One at a time, each found again by rank (no copy of the range is kept).
  Big* b = big();
  char scratch[packed::kScratchSize];
  std::string member;
  for (uint64_t i = 0; i < count; ++i) {
    const Pos p = b->tree.AtRank(start);
    const double score = ScoreAt(p);
    member.assign(MemberAt(p, scratch));
    const uint64_t hash = packed::Hash(member);
    const uint32_t slot = b->index.FindSlot(hash, [&](double s) { return s == score && InTree(s, member); });
    b->index.EraseSlot(hash, slot, score, b->Moved(score, member));
    b->tree.Erase(score, member);
    b->AfterWrite(true);
  }
}

// The moves of the index (core/zset_index.h): the tree's order is the
// walk's, from a cursor that inserts and removals before it leave valid.
namespace {

// Members moved on with each write: more than the 13 an insert needs for
// a move started at 13/16 full to end before the old table is 7/8 full.
constexpr size_t kMoveStep = 16;
// A set this small moves at once (some 100 us).
constexpr size_t kMoveAtOnce = 2048;

}  // namespace

void ZSetObject::Big::StartMove(uint64_t groups) {
  index.StartMove(groups);
  cursor_set = false;
  noted = false;
  Step(tree.size() < kMoveAtOnce ? SIZE_MAX : kMoveStep);
}

bool ZSetObject::Big::Step(size_t members) {
  // The new table's chunks first, one per 16 members' work (a chunk
  // costs some 6 us of page faults, a member 0.1 us).
  if (!index.PrepareMove(members == SIZE_MAX ? SIZE_MAX : std::max<size_t>(1, members / 16))) return false;
  ZTree::Pos p;
  if (tree.size() > 0) p = cursor_set ? tree.LowerBound(cursor_score, cursor_member) : tree.AtRank(0);
  char scratch[packed::kScratchSize];
  for (; members > 0 && p.valid(); --members) {
    index.Move(packed::Hash(tree.Member(p, scratch)), tree.Score(p));
    if (!tree.Next(&p)) break;
  }
  if (!p.valid()) {
    index.FinishMove();
    cursor_set = false;
    std::string().swap(cursor_member);
    return true;
  }
  cursor_score = tree.Score(p);
  cursor_member.assign(tree.Member(p, scratch));
  cursor_set = true;
  return false;
}

void ZSetObject::Big::BeforeInsert() {
  if (index.moving()) Step(index.MustGrow() ? SIZE_MAX : kMoveStep);
  if (!index.moving()) {
    if (const uint64_t groups = index.GrowTarget()) StartMove(groups);
  }
  // The walk fell behind (never at kMoveStep a write): it ends now.
  if (index.MustGrow()) Step(SIZE_MAX);
}

void ZSetObject::Big::AfterWrite(bool removed) {
  if (index.moving()) {
    Step(kMoveStep);
  } else if (removed) {
    if (const uint64_t groups = index.ShrinkTarget()) StartMove(groups);
  }
}

bool ZSetObject::Validate() const {
  if (encoding() == Encoding::kListpack) {
    const ZLeaf* l = leaf();
    char a[packed::kScratchSize], b[packed::kScratchSize];
    uint32_t n = 0, prev = 0;
    for (uint32_t off = 0; off < l->used; prev = off, off += l->SizeAt(off), ++n) {
      if (n > 0 && CompareZKey(l->ScoreAt(prev), l->MemberAt(prev, a), l->ScoreAt(off), l->MemberAt(off, b)) >= 0)
        return false;
    }
    return n == l->count;
  }
  const Big* b = big();
  auto each = [b](auto&& f) {
    char scratch[packed::kScratchSize];
    for (ZTree::Pos p = b->tree.AtRank(0); p.valid(); b->tree.Next(&p)) {
      const std::string_view m = b->tree.Member(p, scratch);
      f(packed::Hash(m), b->tree.Score(p), b->Moved(b->tree.Score(p), m));
    }
  };
  if (!b->tree.Validate() || !b->index.Validate(each) || b->index.size() != b->tree.size()) return false;
  bool ok = true;
  ForEach([&](std::string_view m, double s) {
    double got;
    ok = ok && Score(m, &got) && got == s;
  });
  return ok;
}

}  // namespace peregrine
