// Sorted set leaves (see zset_leaf.h).
#include "core/zset_leaf.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "core/memory.h"

namespace peregrine {

int CompareZKey(double a_score, std::string_view a_member, double b_score, std::string_view b_member) {
  if (a_score < b_score) return -1;
  if (a_score > b_score) return 1;
  return a_member.compare(b_member);
}

namespace {

// The block for `room` bytes of entries.
size_t BlockSize(size_t room) { return sizeof(ZLeaf) + room; }

void SetRoom(ZLeaf* l, size_t usable) { l->room = static_cast<uint32_t>(usable - sizeof(ZLeaf)); }

}  // namespace

uint32_t ZLeaf::LastOf() const {
  uint32_t off = 0, last = 0;
  while (off < used) {
    last = off;
    off += SizeAt(off);
  }
  return last;
}

template <typename Reached>
uint32_t ZLeaf::FirstWhere(Reached reached, uint32_t* index) const {
  uint32_t off = 0, i = 0;
  while (off < used && !reached(off)) off += SizeAt(off), ++i;
  *index = i;
  return off;
}

uint32_t ZLeaf::LowerBound(double score, std::string_view member, uint32_t* index) const {
  char scratch[packed::kScratchSize];
  return FirstWhere(
      [&](uint32_t off) {
        const double s = ScoreAt(off);
        return s > score || (s == score && MemberAt(off, scratch).compare(member) >= 0);
      },
      index);
}

uint32_t ZLeaf::LowerBoundScore(double min, bool exclusive, uint32_t* index) const {
  return FirstWhere([&](uint32_t off) { return exclusive ? ScoreAt(off) > min : ScoreAt(off) >= min; }, index);
}

uint32_t ZLeaf::LowerBoundLex(std::string_view min, bool exclusive, uint32_t* index) const {
  char scratch[packed::kScratchSize];
  return FirstWhere(
      [&](uint32_t off) {
        const int c = MemberAt(off, scratch).compare(min);
        return exclusive ? c > 0 : c >= 0;
      },
      index);
}

uint32_t ZLeaf::FindMember(const packed::Probe& probe) const {
  uint32_t off = 0;
  while (off < used && !MemberEquals(off, probe)) off += SizeAt(off);
  return off;
}

ZLeaf* ZLeaf::Create(size_t room) {
  size_t usable;
  ZLeaf* l = static_cast<ZLeaf*>(CountedAlloc(BlockSize(room), &usable));
  l->used = 0;
  l->count = 0;
  l->external = 0;
  SetRoom(l, usable);
  return l;
}

void ZLeaf::Destroy(ZLeaf* l) {
  if (l->external) {
    for (uint32_t off = 0; off < l->used; off += l->SizeAt(off)) packed::FreeItem(l->MemberItem(off));
  }
  CountedFree(l);
}

void ZLeaf::DestroyShallow(ZLeaf* l) { CountedFree(l); }

size_t ZLeaf::AllocatedBytes() const {
  size_t total = BlockSize(room);
  if (!external) return total;
  for (uint32_t off = 0; off < used; off += SizeAt(off)) total += packed::ExternalBytes(MemberItem(off));
  return total;
}

ZLeaf* ZLeaf::Clone() const {
  ZLeaf* c = Create(used);
  char scratch[packed::kScratchSize];
  for (uint32_t off = 0; off < used; off += SizeAt(off))
    c = Insert(c, c->used, ScoreAt(off), packed::ItemPlan(MemberAt(off, scratch)));
  return c;
}

ZLeaf* ZLeaf::Insert(ZLeaf* l, uint32_t off, double score, const packed::ItemPlan& member, size_t min_room) {
  const size_t size = EntrySize(member);
  if (l->used + size > l->room) {
    // Grow by at least an eighth, so that a leaf filled one entry at a time
    // reallocates O(log) times.
    size_t want = l->used + size;
    want = std::max({want, size_t{l->used} + l->used / 8, min_room});
    size_t usable;
    l = static_cast<ZLeaf*>(CountedRealloc(l, BlockSize(want), BlockSize(l->room), &usable));
    SetRoom(l, usable);
  }
  uint8_t* d = l->data();
  std::memmove(d + off + size, d + off, l->used - off);
  std::memcpy(d + off, &score, 8);
  packed::Write(d + off + 8, member);
  if (d[off + 8] == packed::kHeaderExternal) l->external = 1;
  l->used += static_cast<uint32_t>(size);
  l->count++;
  return l;
}

void ZLeaf::Erase(uint32_t off) {
  const uint32_t size = SizeAt(off);
  packed::FreeItem(MemberItem(off));
  uint8_t* d = data();
  std::memmove(d + off, d + off + size, used - off - size);
  used -= size;
  count--;
}

ZLeaf* ZLeaf::SplitOff(uint32_t off, uint32_t k, size_t min_room) {
  const uint32_t size = used - off;
  ZLeaf* right = Create(std::max(size_t{size}, min_room));
  std::memcpy(right->data(), data() + off, size);
  right->used = size;
  right->count = k;
  right->external = external;
  used = off;
  count -= k;
  return right;
}

void ZLeaf::MoveToLeft(ZLeaf* left, ZLeaf* right, uint32_t off, uint32_t k) {
  assert(left->used + off <= left->room);
  std::memcpy(left->data() + left->used, right->data(), off);
  std::memmove(right->data(), right->data() + off, right->used - off);
  left->used += off;
  left->count += k;
  left->external |= right->external;
  right->used -= off;
  right->count -= k;
}

void ZLeaf::MoveToRight(ZLeaf* left, ZLeaf* right, uint32_t off, uint32_t k) {
  const uint32_t size = left->used - off;
  assert(right->used + size <= right->room);
  std::memmove(right->data() + size, right->data(), right->used);
  std::memcpy(right->data(), left->data() + off, size);
  right->used += size;
  right->count += k;
  right->external |= left->external;
  left->used = off;
  left->count -= k;
}

ZLeaf* ZLeaf::Absorb(ZLeaf* l, ZLeaf* right) {
  if (l->used + right->used > l->room) {
    size_t usable;
    l = static_cast<ZLeaf*>(CountedRealloc(l, BlockSize(l->used + right->used), BlockSize(l->room), &usable));
    SetRoom(l, usable);
  }
  std::memcpy(l->data() + l->used, right->data(), right->used);
  l->used += right->used;
  l->count += right->count;
  l->external |= right->external;
  DestroyShallow(right);
  return l;
}

ZLeaf* ZLeaf::Reserve(ZLeaf* l, size_t room) {
  if (l->room >= room) return l;
  size_t usable;
  l = static_cast<ZLeaf*>(CountedRealloc(l, BlockSize(room), BlockSize(l->room), &usable));
  SetRoom(l, usable);
  return l;
}

ZLeaf* ZLeaf::Shrink(ZLeaf* l) {
  const size_t usable = BlockSize(l->room);
  if (usable <= 64 || l->bytes() >= usable / 2) return l;
  size_t got;
  l = static_cast<ZLeaf*>(CountedRealloc(l, BlockSize(l->used), usable, &got));
  SetRoom(l, got);
  return l;
}

}  // namespace peregrine
