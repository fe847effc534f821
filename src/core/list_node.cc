// List nodes (see list_node.h).
#include "core/list_node.h"

#include <cassert>
#include <cstring>
#include <vector>

#include <lzf.h>

#include "core/memory.h"

namespace peregrine {

namespace {

uint8_t* WriteBackLen(uint8_t* out, size_t s) {
  if (s < 128) {
    out[0] = static_cast<uint8_t>(s);
    return out + 1;
  }
  out[0] = static_cast<uint8_t>(s);
  out[1] = static_cast<uint8_t>(0x80 | s >> 8);
  return out + 2;
}

void FreeItems(const uint8_t* data, uint32_t off, uint32_t size) {
  const uint8_t* p = data + off;
  const uint8_t* end = p + size;
  while (p < end) {
    const size_t s = packed::ItemSize(p);
    packed::FreeItem(p);
    p += ListNode::EntrySize(s);
  }
}

// The block size for `data` bytes of entries: the data area rounded up to
// a multiple of 4, so that room() (kept in units of 4) is never less than
// what was asked for.
size_t BlockSize(size_t data) { return sizeof(ListNode) + ((data + 3) & ~size_t{3}); }

}  // namespace

void ListNode::set_capacity(size_t usable) {
  const size_t c = (usable - sizeof(ListNode)) / 4;
  cap4 = static_cast<uint16_t>(c > 0x7FFF ? 0x7FFF : c) & 0x7FFF;
}

ListNode* ListNode::Create(size_t bytes_hint, bool at_end) {
  size_t usable;
  ListNode* n = static_cast<ListNode*>(CountedAlloc(BlockSize(bytes_hint), &usable));
  n->count = 0;
  n->external = 0;
  n->set_capacity(usable);
  n->begin = n->end = at_end ? static_cast<uint32_t>(n->room()) : 0;
  return n;
}

void ListNode::Destroy(ListNode* n) {
  if (n->external) FreeItems(n->data(), n->begin, static_cast<uint32_t>(n->used()));
  CountedFree(n);
}

void ListNode::DestroyShallow(ListNode* n) { CountedFree(n); }

size_t ListNode::AllocatedBytes() const {
  size_t total = CountedUsableSize(this);
  if (!external) return total;
  for (uint32_t off = begin; off < end; off += SizeAt(off))
    total += packed::ExternalBytes(data() + off);
  return total;
}

ListNode* ListNode::OpenGap(ListNode* n, uint32_t* off, size_t extra) {
  const uint32_t at = *off;
  const size_t front = at - n->begin, back = n->end - at;
  const size_t behind = n->room() - n->end;
  uint8_t* d = n->data();
  // Move the smaller side where there is room for it.
  if (n->begin >= extra && (front <= back || behind < extra)) {
    std::memmove(d + n->begin - extra, d + n->begin, front);
    n->begin -= static_cast<uint32_t>(extra);
    *off = at - static_cast<uint32_t>(extra);
    return n;
  }
  if (behind >= extra) {
    std::memmove(d + at + extra, d + at, back);
    n->end += static_cast<uint32_t>(extra);
    return n;
  }
  // Lay the entries out again, in a larger block if need be. A push at the
  // front leaves the room in front, any other insert behind.
  const size_t need = n->used() + extra;
  if (need > n->room()) {
    size_t usable;
    n = static_cast<ListNode*>(CountedRealloc(n, BlockSize(need), CountedUsableSize(n), &usable));
    n->set_capacity(usable);
    d = n->data();
  }
  assert(n->room() >= need);  // nodes stay under kMaxBytes plus an item
  const size_t slack = n->room() - need;
  const size_t nb = (at == n->begin && n->count > 0) ? slack : 0;
  const size_t back_to = nb + front + extra;
  if (back_to >= at) {
    std::memmove(d + back_to, d + at, back);
    std::memmove(d + nb, d + n->begin, front);
  } else {
    std::memmove(d + nb, d + n->begin, front);
    std::memmove(d + back_to, d + at, back);
  }
  n->begin = static_cast<uint32_t>(nb);
  n->end = static_cast<uint32_t>(back_to + back);
  *off = static_cast<uint32_t>(nb + front);
  return n;
}

ListNode* ListNode::Insert(ListNode* n, uint32_t off, const packed::ItemPlan& plan, uint32_t* at) {
  const size_t size = EntrySize(plan.size);
  n = OpenGap(n, &off, size);
  uint8_t* out = packed::Write(n->data() + off, plan);
  if (n->data()[off] == packed::kHeaderExternal) n->external = 1;
  WriteBackLen(out, plan.size);
  n->count++;
  *at = off;
  return n;
}

uint32_t ListNode::Erase(uint32_t off, uint32_t size, uint32_t k) {
  if (external) FreeItems(data(), off, size);
  count = static_cast<uint16_t>(count - k);
  if (count == 0) {
    begin = end = 0;
    external = 0;
    return 0;
  }
  uint8_t* d = data();
  const size_t front = off - begin, back = end - off - size;
  if (front < back) {
    std::memmove(d + begin + size, d + begin, front);
    begin += size;
    return off + size;
  }
  std::memmove(d + off, d + off + size, back);
  end -= size;
  return off;
}

ListNode* ListNode::Replace(ListNode* n, uint32_t* off, const packed::ItemPlan& plan) {
  const size_t old_item = packed::ItemSize(n->data() + *off);
  if (old_item == plan.size) {
    packed::FreeItem(n->data() + *off);
    packed::Write(n->data() + *off, plan);
    if (n->data()[*off] == packed::kHeaderExternal) n->external = 1;
    return n;
  }
  // Remove the old entry's bytes (moving the side that Erase picks), then
  // insert the new one where the old one was.
  const size_t old_size = EntrySize(old_item);
  const uint32_t front = *off - n->begin;
  n->Erase(*off, static_cast<uint32_t>(old_size), 1);
  uint32_t at = n->count == 0 ? n->begin : n->begin + front;
  return Insert(n, at, plan, off);
}

ListNode* ListNode::SplitOff(uint32_t off, uint32_t k) {
  const size_t size = end - off;
  ListNode* right = Create(size);
  std::memcpy(right->data(), data() + off, size);
  right->end = static_cast<uint32_t>(size);
  right->count = static_cast<uint16_t>(k);
  right->external = external;
  end = off;
  count = static_cast<uint16_t>(count - k);
  if (count == 0) begin = end = 0;
  return right;
}

ListNode* ListNode::Shrink(ListNode* n) {
  const size_t usable = CountedUsableSize(n);
  if (usable <= 64 || n->bytes() >= usable / 2) return n;
  std::memmove(n->data(), n->data() + n->begin, n->used());
  n->end = static_cast<uint32_t>(n->used());
  n->begin = 0;
  size_t got;
  n = static_cast<ListNode*>(CountedRealloc(n, BlockSize(n->used()), usable, &got));
  n->set_capacity(got);
  return n;
}

ListNodeLzf* ListNodeLzf::Compress(const ListNode* n) {
  const size_t used = n->used();
  if (used < kMinBytes) return nullptr;
  // Into a scratch buffer first, then a block of the result's size: an
  // allocator leaves a block shrunk by less than half where it is, so
  // compressing in place and shrinking would often save nothing. The
  // output may take at most used - kMinSaving bytes: lzf_compress gives up
  // (returns 0) when it would need more.
  static thread_local std::vector<uint8_t> scratch;
  const size_t limit = used - kMinSaving;
  if (scratch.size() < limit) scratch.resize(limit);
  const unsigned got = lzf_compress(n->data() + n->begin, static_cast<unsigned>(used), scratch.data(),
                                    static_cast<unsigned>(limit));
  if (got == 0) return nullptr;
  auto* z = static_cast<ListNodeLzf*>(CountedAlloc(sizeof(ListNodeLzf) + got));
  std::memcpy(z->data(), scratch.data(), got);
  z->begin = n->begin;
  z->end = n->end;
  z->count = n->count;
  z->external = n->external;
  z->size = got;
  return z;
}

ListNode* ListNodeLzf::Decompress() const {
  ListNode* n = ListNode::Create(end);
  const size_t used = end - begin;
  [[maybe_unused]] const unsigned got =
      lzf_decompress(data(), size, n->data() + begin, static_cast<unsigned>(used));
  assert(got == used);
  n->begin = begin;
  n->end = end;
  n->count = count;
  n->external = external;
  return n;
}

void ListNodeLzf::Destroy(ListNodeLzf* z) {
  if (z->external) ListNode::Destroy(z->Decompress());
  CountedFree(z);
}

size_t ListNodeLzf::AllocatedBytes() const {
  size_t total = CountedUsableSize(this);
  if (!external) return total;
  ListNode* n = Decompress();
  total += n->AllocatedBytes() - CountedUsableSize(n);
  ListNode::DestroyShallow(n);
  return total;
}

}  // namespace peregrine
