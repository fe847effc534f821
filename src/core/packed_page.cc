// Packed pages (see packed_page.h).
#include "core/packed_page.h"

#include <cstring>

#include "core/memory.h"

namespace peregrine {

namespace {

// Tags are reserved in steps of 4, or a quarter of the current room.
// Pages of up to this many entries have exactly as many tags.
constexpr size_t kExactTags = 16;

uint16_t GrowTagCap(size_t cap, size_t need) {
  // A small page's tags grow one at a time (moving its few entries is
  // cheap, and every byte counts in a 10-member set's block); a larger
  // page's by a quarter, in steps of 4.
  if (need <= kExactTags) return static_cast<uint16_t>(need);
  size_t next = cap + (cap / 4 > 4 ? cap / 4 : 4);
  if (next < need) next = need;
  next = (next + 3) & ~size_t{3};
  if (next > Page::kMaxCount) next = Page::kMaxCount;
  return static_cast<uint16_t>(next);
}

}  // namespace

Page* Page::Create(uint8_t arity, uint8_t depth, size_t count_hint, size_t bytes_hint) {
  size_t cap = count_hint <= kExactTags ? count_hint : (count_hint + 3) & ~size_t{3};
  if (cap > kMaxCount) cap = kMaxCount;
  size_t usable;
  Page* p = static_cast<Page*>(CountedAlloc(sizeof(Page) + cap + bytes_hint, &usable));
  p->used = 0;
  p->count = 0;
  p->tag_cap = static_cast<uint16_t>(cap);
  p->depth = depth;
  p->arity = arity;
  p->flags = 0;
  p->set_capacity(usable);
  return p;
}

size_t Page::capacity() const { return cap8 != 0 ? size_t{cap8} * 8 : CountedUsableSize(this); }

void Page::Destroy(Page* p) {
  const uint8_t* e = p->entries();
  const uint8_t* end = e + p->used;
  while (e < end) {
    const uint8_t* item = ItemOf(e, 0);
    packed::FreeItem(item);
    if (p->arity == 2) packed::FreeItem(item + packed::ItemSize(item));
    e += p->EntrySize(e);
  }
  CountedFree(p);
}

void Page::FreeBlock(Page* p) { CountedFree(p); }

size_t Page::AllocatedBytes() const {
  size_t n = capacity();
  const uint8_t* e = entries();
  const uint8_t* end = e + used;
  while (e < end) {
    const uint8_t* item = ItemOf(e, 0);
    n += packed::ExternalBytes(item);
    if (arity == 2) n += packed::ExternalBytes(item + packed::ItemSize(item));
    e += EntrySize(e);
  }
  return n;
}

Page::Pos Page::PosOf(uint32_t index) const {
  if (flags & kHasDeadlines) {
    Pos pos;
    while (pos.index < index) pos = Next(pos);
    return pos;
  }
  // Without deadline items an entry is just its `arity` items.
  const uint8_t* e = entries();
  uint32_t offset = 0;
  if (arity == 1) {
    for (uint32_t i = 0; i < index; ++i) offset += static_cast<uint32_t>(packed::ItemSize(e + offset));
  } else {
    for (uint32_t i = 0; i < index; ++i) {
      offset += static_cast<uint32_t>(packed::ItemSize(e + offset));
      offset += static_cast<uint32_t>(packed::ItemSize(e + offset));
    }
  }
  return Pos{index, offset};
}

bool Page::Find(const packed::Probe& probe, Pos* pos) const {
  const uint8_t* t = tags();
  const uint8_t* e = entries();
  const uint8_t tag = probe.tag();
  Pos at;  // the entry walked to so far
  uint32_t i = 0;
  while (i < count) {
    const void* m = std::memchr(t + i, tag, count - i);
    if (m == nullptr) return false;
    const uint32_t j = static_cast<uint32_t>(static_cast<const uint8_t*>(m) - t);
    while (at.index < j) {
      at.offset += static_cast<uint32_t>(EntrySize(e + at.offset));
      ++at.index;
    }
    if (packed::Equals(ItemOf(e + at.offset, 0), probe)) {
      *pos = at;
      return true;
    }
    i = j + 1;
  }
  return false;
}

Page* Page::Reserve(Page* p, size_t extra_tags, size_t extra) {
  size_t tag_cap = p->tag_cap;
  if (p->count + extra_tags > tag_cap) tag_cap = GrowTagCap(tag_cap, p->count + extra_tags);
  const size_t need = sizeof(Page) + tag_cap + p->used + extra;
  if (const size_t usable = p->capacity(); need > usable) {
    size_t got;
    p = static_cast<Page*>(CountedRealloc(p, need, usable, &got));
    p->set_capacity(got);
  }
  if (tag_cap != p->tag_cap) {
    uint8_t* old_entries = p->entries();
    std::memmove(p->tags() + tag_cap, old_entries, p->used);
    p->tag_cap = static_cast<uint16_t>(tag_cap);
  }
  return p;
}

void Page::Shift(uint32_t offset, int64_t delta) {
  uint8_t* e = entries();
  if (delta > 0) {
    std::memmove(e + offset + delta, e + offset, used - offset);
  } else {
    std::memmove(e + offset, e + offset - delta, used - offset + delta);
  }
  used = static_cast<uint32_t>(used + delta);
}

Page* Page::Append(Page* p, uint8_t tag, const packed::ItemPlan* items, int64_t deadline) {
  size_t size = items[0].size + (p->arity == 2 ? items[1].size : 0);
  if (deadline != kNoDeadline) size += packed::kDeadlineSize;
  p = Reserve(p, 1, size);
  uint8_t* out = p->entries() + p->used;
  if (deadline != kNoDeadline) {
    out = packed::WriteDeadline(out, deadline);
    p->flags |= kHasDeadlines;
  }
  out = packed::Write(out, items[0]);
  if (p->arity == 2) packed::Write(out, items[1]);
  p->tags()[p->count] = tag;
  p->count++;
  p->used += static_cast<uint32_t>(size);
  return p;
}

Page* Page::AppendRaw(Page* p, uint8_t tag, const uint8_t* entry, size_t size) {
  p = Reserve(p, 1, size);
  p->AppendRawFits(tag, entry, size);
  return p;
}

void Page::Erase(Pos pos) {
  uint8_t* e = entries() + pos.offset;
  const uint8_t* item = ItemOf(e, 0);
  packed::FreeItem(item);
  if (arity == 2) packed::FreeItem(item + packed::ItemSize(item));
  const size_t size = EntrySize(e);
  Shift(pos.offset, -static_cast<int64_t>(size));
  uint8_t* t = tags();
  std::memmove(t + pos.index, t + pos.index + 1, count - pos.index - 1);
  count--;
  if (count == 0) flags = 0;
}

Page* Page::ReplaceItem(Page* p, Pos pos, int which, const packed::ItemPlan& plan) {
  const uint8_t* e = p->EntryAt(pos);
  const uint32_t item_offset = static_cast<uint32_t>(ItemOf(e, which) - p->entries());
  const uint8_t* item = p->entries() + item_offset;
  const size_t old_size = packed::ItemSize(item);
  packed::FreeItem(item);
  const int64_t delta = static_cast<int64_t>(plan.size) - static_cast<int64_t>(old_size);
  if (delta > 0) p = Reserve(p, 0, static_cast<size_t>(delta));
  if (delta != 0) p->Shift(item_offset, delta);
  packed::Write(p->entries() + item_offset, plan);
  // A value that shrank much (16 KB inline to a few bytes) gives its room back.
  if (delta < 0) p = Shrink(p);
  return p;
}

Page* Page::SetDeadline(Page* p, Pos pos, int64_t ms) {
  uint8_t* e = p->entries() + pos.offset;
  const bool has = e[0] == packed::kHeaderDeadline;
  if (ms == kNoDeadline) {
    if (has) p->Shift(pos.offset, -static_cast<int64_t>(packed::kDeadlineSize));
    return p;
  }
  if (!has) {
    p = Reserve(p, 0, packed::kDeadlineSize);
    p->Shift(pos.offset, packed::kDeadlineSize);
    e = p->entries() + pos.offset;
  }
  packed::WriteDeadline(e, ms);
  p->flags |= kHasDeadlines;
  return p;
}

Page* Page::Shrink(Page* p) {
  const size_t usable = p->capacity();
  const size_t need = p->bytes();
  if (usable <= 64 || need >= usable / 2) return p;
  // Tags may have more room than the entries need now.
  size_t tag_cap = p->count <= kExactTags ? p->count : (p->count + 3) & ~size_t{3};
  if (tag_cap < p->tag_cap) {
    std::memmove(p->tags() + tag_cap, p->entries(), p->used);
    p->tag_cap = static_cast<uint16_t>(tag_cap);
  }
  size_t got;
  p = static_cast<Page*>(CountedRealloc(p, p->bytes(), usable, &got));
  p->set_capacity(got);
  return p;
}

}  // namespace peregrine
