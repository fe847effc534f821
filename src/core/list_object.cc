// Lists (see list_object.h).
#include "core/list_object.h"

#include <cstring>
#include <iterator>

#include "core/memory.h"

namespace peregrine {

namespace {

// A slot of a quicklist: a node's address, its low bits telling its form.
// Blocks are at least 8-byte aligned.
using Slot = uintptr_t;
constexpr Slot kLzf = 1;    // a ListNodeLzf
constexpr Slot kTried = 2;  // a plain interior node that did not compress
constexpr uint32_t kNone = UINT32_MAX;
// Redis's COMPRESS_MAX: deeper settings are held to it.
constexpr int64_t kMaxDepth = 65535;

ListNode* AsNode(Slot s) { return reinterpret_cast<ListNode*>(s & ~(kLzf | kTried)); }
ListNodeLzf* AsLzf(Slot s) { return reinterpret_cast<ListNodeLzf*>(s & ~kLzf); }
Slot SlotOf(ListNode* n) { return reinterpret_cast<Slot>(n); }

void DestroySlot(Slot s) {
  if (s & kLzf)
    ListNodeLzf::Destroy(AsLzf(s));
  else
    ListNode::Destroy(AsNode(s));
}

}  // namespace

// A quicklist's nodes: an array of slots with room at both ends (pushing a
// node at either end moves nothing most of the time), in one counted block
// after this header.
struct ListObject::Deque {
  uint64_t items;   // entries over all nodes
  uint32_t first;   // slot of node 0
  uint32_t n;       // nodes
  uint32_t cap;     // slots
  uint32_t depth;   // list-compress-depth when the list became a quicklist
  ListNode* cache;  // the plain copy of compressed node cache_at (reads), or nullptr
  uint32_t cache_at;
  uint32_t loose;  // the interior node a write left plain, or kNone

  Slot* slots() { return reinterpret_cast<Slot*>(this + 1); }
  Slot& at(uint32_t i) { return slots()[first + i]; }
  Slot at(uint32_t i) const { return reinterpret_cast<const Slot*>(this + 1)[first + i]; }

  static Deque* Create(uint32_t cap, uint32_t depth) {
    Deque* d = static_cast<Deque*>(CountedAlloc(sizeof(Deque) + sizeof(Slot) * cap));
    d->items = 0;
    d->first = cap / 2;
    d->n = 0;
    d->cap = cap;
    d->depth = depth;
    d->cache = nullptr;
    d->cache_at = 0;
    d->loose = kNone;
    return d;
  }
};

namespace {

// Redis's optimization_level: node sizes for fill -1..-5.
constexpr size_t kSizeLevels[] = {4096, 8192, 16384, 32768, 65536};
// Redis's SIZE_SAFETY_LIMIT: a node limited by count is still held to this.
constexpr size_t kSafetyLimit = 8192;

// The byte and count limits of a node (Redis's quicklistNodeLimit); 0 for
// no limit of that kind.
void NodeLimit(int64_t fill, size_t* bytes, size_t* count) {
  *bytes = 0;
  *count = 0;
  if (fill >= 0) {
    *count = fill == 0 ? 1 : static_cast<size_t>(fill);
  } else {
    size_t level = static_cast<size_t>(-(fill + 1));
    if (level >= std::size(kSizeLevels)) level = std::size(kSizeLevels) - 1;
    *bytes = kSizeLevels[level];
  }
}

// Room to give a node created for pushes: the limit's bytes (or the
// safety limit's), so that it fills without reallocating.
size_t PushNodeRoom(int64_t fill, size_t entry) {
  size_t bytes, count;
  NodeLimit(fill, &bytes, &count);
  size_t room = (bytes != 0 ? bytes : kSafetyLimit) - sizeof(ListNode);
  if (count != 0 && count * entry < room) room = count * entry;
  return room < entry ? entry : room;
}

ListNode* CloneNode(const ListNode* src) {
  ListNode* n = ListNode::Create(src->used());
  char scratch[packed::kScratchSize];
  for (uint32_t off = src->begin; off < src->end; off += src->SizeAt(off)) {
    const packed::ItemPlan plan(src->View(off, scratch));
    uint32_t at;
    n = ListNode::Insert(n, n->end, plan, &at);
  }
  return n;
}

}  // namespace

bool ListNodeExceedsLimit(int64_t fill, size_t bytes, size_t count) {
  size_t byte_limit, count_limit;
  NodeLimit(fill, &byte_limit, &count_limit);
  if (byte_limit != 0) return bytes > byte_limit;
  return bytes > kSafetyLimit || count > count_limit;
}

ListObject::ListObject() : ptr_(ListNode::Create(0)) {}

void ListObject::Release() {
  if (ptr_ == nullptr) return;
  if (encoding() == Encoding::kListpack) {
    ListNode::Destroy(single());
  } else {
    DropCache();
    Deque* d = deque();
    for (uint32_t i = 0; i < d->n; ++i) DestroySlot(d->at(i));
    CountedFree(d);
  }
  ptr_ = nullptr;
}

ListObject ListObject::Clone() const {
  ListObject copy;
  ListNode::Destroy(copy.single());
  if (encoding() == Encoding::kListpack) {
    copy.ptr_ = CloneNode(single());
  } else {
    Deque* d = deque();
    Deque* c = Deque::Create(d->cap, d->depth);
    c->first = d->first;
    c->n = d->n;
    c->items = d->items;
    c->loose = d->loose;
    for (uint32_t i = 0; i < d->n; ++i) {
      const Slot s = d->at(i);
      ListNode* n = CloneNode(node(i));
      c->at(i) = SlotOf(n) | (s & kTried);
      if (s & kLzf) {
        // The same entries compress as well again.
        ListNodeLzf* z = ListNodeLzf::Compress(n);
        if (z != nullptr) {
          ListNode::DestroyShallow(n);
          c->at(i) = reinterpret_cast<Slot>(z) | kLzf;
        } else {
          c->at(i) |= kTried;
        }
      }
    }
    copy.ptr_ = c;
    DropCache();  // the walk's read copy
  }
  copy.tag_ = tag_;
  return copy;
}

size_t ListObject::size() const { return encoding() == Encoding::kListpack ? single()->count : deque()->items; }

uint32_t ListObject::nodes() const { return encoding() == Encoding::kListpack ? 1 : deque()->n; }

const ListNode* ListObject::node(uint32_t i) const {
  if (encoding() == Encoding::kListpack) return single();
  const Slot s = deque()->at(i);
  return (s & kLzf) == 0 ? AsNode(s) : NodeSlow(i);
}

const ListNode* ListObject::NodeSlow(uint32_t i) const {
  Deque* d = deque();
  if (d->cache == nullptr || d->cache_at != i) {
    DropCache();
    d->cache = AsLzf(d->at(i))->Decompress();
    d->cache_at = i;
  }
  return d->cache;
}

uint32_t ListObject::Count(uint32_t i) const {
  if (encoding() == Encoding::kListpack) return single()->count;
  const Slot s = deque()->at(i);
  return (s & kLzf) == 0 ? AsNode(s)->count : AsLzf(s)->count;
}

ListNode* ListObject::Touch(uint32_t i) {
  if (encoding() == Encoding::kListpack) return single();
  Deque* d = deque();
  const Slot s = d->at(i);
  // A plain node not marked tried, with no other node loose: nothing to do
  // (an interior one would be the loose one). Always so with no depth.
  if ((s & (kLzf | kTried)) == 0 && (d->loose == kNone || d->loose == i)) return AsNode(s);
  return TouchSlow(i);
}

ListNode* ListObject::TouchSlow(uint32_t i) {
  Deque* d = deque();
  if (d->loose != kNone && d->loose != i) {
    const uint32_t j = d->loose;
    d->loose = kNone;
    if (Interior(j)) CompressNode(j);
  }
  UnpackNode(i);
  d->at(i) &= ~kTried;  // it may compress after this write
  if (Interior(i)) d->loose = i;
  return AsNode(d->at(i));
}

void ListObject::set_node(uint32_t i, ListNode* n) {
  if (encoding() == Encoding::kListpack)
    ptr_ = n;
  else
    deque()->at(i) = SlotOf(n);
}

bool ListObject::Interior(uint32_t i) const {
  const Deque* d = deque();
  return d->depth > 0 && d->n > 2 * d->depth && i >= d->depth && i < d->n - d->depth;
}

void ListObject::CompressNode(uint32_t i) {
  Slot& s = deque()->at(i);
  if (s & kLzf) return;
  ListNode* n = AsNode(s);
  ListNodeLzf* z = ListNodeLzf::Compress(n);
  if (z == nullptr) {
    s = SlotOf(n) | kTried;
    return;
  }
  ListNode::DestroyShallow(n);  // its items' outside blocks now belong to z
  s = reinterpret_cast<Slot>(z) | kLzf;
}

void ListObject::UnpackNode(uint32_t i) {
  Deque* d = deque();
  Slot& s = d->at(i);
  if ((s & kLzf) == 0) return;
  ListNodeLzf* z = AsLzf(s);
  ListNode* n;
  if (d->cache != nullptr && d->cache_at == i) {
    n = d->cache;  // the read copy becomes the node
    d->cache = nullptr;
  } else {
    n = z->Decompress();
  }
  CountedFree(z);
  s = SlotOf(n);
}

void ListObject::Rebalance() {
  DropCache();  // the indexes moved
  Deque* d = deque();
  const uint32_t depth = d->depth, n = d->n;
  if (depth == 0) return;
  if (d->loose != kNone && !Interior(d->loose)) d->loose = kNone;  // it reached an end: stays plain
  // One node came or went: at most one node at each boundary crossed it.
  if (depth - 1 < n) UnpackNode(depth - 1);
  if (n >= depth) UnpackNode(n - depth);
  if (n > 2 * depth) {
    for (const uint32_t i : {depth, n - depth - 1}) {
      if ((d->at(i) & (kLzf | kTried)) == 0 && i != d->loose) CompressNode(i);
    }
  }
}

void ListObject::DropCache() const {
  if (encoding() != Encoding::kQuicklist) return;
  Deque* d = deque();
  if (d->cache == nullptr) return;
  ListNode::DestroyShallow(d->cache);  // the compressed node keeps the items' outside blocks
  d->cache = nullptr;
}

void ListObject::Settle() {
  if (encoding() != Encoding::kQuicklist) return;
  DropCache();
  Deque* d = deque();
  if (d->loose == kNone) return;
  const uint32_t j = d->loose;
  d->loose = kNone;
  if (Interior(j)) CompressNode(j);
}

uint32_t ListObject::CompressedNodes() const {
  if (encoding() != Encoding::kQuicklist) return 0;
  uint32_t k = 0;
  for (uint32_t i = 0; i < nodes(); ++i) k += (deque()->at(i) & kLzf) != 0 ? 1 : 0;
  return k;
}

void ListObject::AddCount(int64_t delta) {
  if (encoding() == Encoding::kQuicklist) deque()->items = static_cast<uint64_t>(static_cast<int64_t>(deque()->items) + delta);
}

size_t ListObject::AllocatedBytes() const {
  if (encoding() == Encoding::kListpack) return single()->AllocatedBytes();
  Deque* d = deque();
  size_t total = CountedUsableSize(d);
  for (uint32_t i = 0; i < d->n; ++i) {
    const Slot s = d->at(i);
    total += (s & kLzf) ? AsLzf(s)->AllocatedBytes() : AsNode(s)->AllocatedBytes();
  }
  if (d->cache != nullptr) total += CountedUsableSize(d->cache);
  return total;
}

void ListObject::ToQuicklist(const ListLimits& limits) {
  ListNode* n = single();
  const int64_t depth = limits.compress_depth < kMaxDepth ? limits.compress_depth : kMaxDepth;
  Deque* d = Deque::Create(8, static_cast<uint32_t>(depth > 0 ? depth : 0));
  d->n = 1;
  d->at(0) = SlotOf(n);
  d->items = n->count;
  ptr_ = d;
  set_encoding(Encoding::kQuicklist);
}

void ListObject::MaybeShrinkEncoding(const ListLimits& limits) {
  Settle();
  // (A plain node stays a quicklist, as in Redis.)
  if (encoding() != Encoding::kQuicklist || deque()->n != 1 || IsPlain(0, limits.plain_threshold)) return;
  size_t byte_limit, count_limit;
  NodeLimit(limits.fill, &byte_limit, &count_limit);
  if (byte_limit != 0 && node(0)->bytes() > byte_limit / 2) return;
  if (count_limit != 0 && Count(0) > count_limit / 2) return;
  ListNode* n = Touch(0);
  DropCache();
  CountedFree(deque());
  ptr_ = ListNode::Shrink(n);
  set_encoding(Encoding::kListpack);
}

void ListObject::InsertNode(uint32_t i, ListNode* n) {
  Deque* d = deque();
  if (i == 0 && d->first > 0) {
    d->first--;
  } else if (d->first + d->n < d->cap) {
    Slot* s = d->slots() + d->first;
    std::memmove(s + i + 1, s + i, sizeof(Slot) * (d->n - i));
  } else if (d->first > 0) {
    Slot* s = d->slots() + d->first;
    std::memmove(s - 1, s, sizeof(Slot) * i);
    d->first--;
  } else {
    // Full: twice the slots, the nodes in the middle.
    const uint32_t cap = d->cap * 2;
    d = static_cast<Deque*>(CountedRealloc(d, sizeof(Deque) + sizeof(Slot) * cap));
    const uint32_t first = (cap - d->n - 1) / 2;
    Slot* s = d->slots();
    std::memmove(s + first + i + 1, s + d->first + i, sizeof(Slot) * (d->n - i));
    std::memmove(s + first, s + d->first, sizeof(Slot) * i);
    d->first = first;
    d->cap = cap;
    ptr_ = d;
  }
  d->at(i) = SlotOf(n);
  d->n++;
  if (d->loose != kNone && d->loose >= i) d->loose++;
  Rebalance();
}

void ListObject::RemoveNode(uint32_t i) {
  Deque* d = deque();
  Slot* s = d->slots() + d->first;
  if (i < d->n / 2) {
    std::memmove(s + 1, s, sizeof(Slot) * i);
    d->first++;
  } else {
    std::memmove(s + i, s + i + 1, sizeof(Slot) * (d->n - i - 1));
  }
  d->n--;
  if (d->loose == i)
    d->loose = kNone;
  else if (d->loose != kNone && d->loose > i)
    d->loose--;
  Rebalance();
}

void ListObject::ConvertForGrowth(size_t add_bytes, size_t add_count, const ListLimits& limits) {
  if (encoding() != Encoding::kListpack) return;
  const ListNode* n = single();
  if (ListNodeExceedsLimit(limits.fill, n->bytes() + add_bytes, n->count + add_count)) ToQuicklist(limits);
}
// (A node past any limit's 64 KB always converts here: LSET and LINSERT
// then split it, so no node passes ListNode::kMaxBytes by more than an item.)

void ListObject::Push(End end, std::span<const std::string_view> items, const ListLimits& limits) {
  if (encoding() == Encoding::kListpack) {
    size_t add = 0;
    for (std::string_view s : items) add += s.size();
    ConvertForGrowth(add, items.size(), limits);
  }
  for (std::string_view s : items) {
    const packed::ItemPlan plan(s);
    const size_t entry = ListNode::EntrySize(plan.size);
    uint32_t i = end == End::kHead ? 0 : nodes() - 1;
    ListNode* n = Touch(i);
    // Redis's check above counts the arguments' bytes, not their entries':
    // many tiny items could take one node past what its header records.
    const bool full = n->used() + entry > ListNode::kMaxBytes;
    if (encoding() == Encoding::kListpack && full) ToQuicklist(limits);
    // (A large item starts a plain node; a plain node takes nothing more.)
    if (encoding() == Encoding::kQuicklist && n->count > 0 &&
        (full || ListNodeExceedsLimit(limits.fill, n->bytes() + entry, n->count + 1u) ||
         s.size() >= limits.plain_threshold || IsPlain(i, limits.plain_threshold))) {
      n = ListNode::Create(PushNodeRoom(limits.fill, entry), end == End::kHead);
      if (end == End::kTail) i++;
      InsertNode(i, n);
    }
    uint32_t at;
    n = ListNode::Insert(n, end == End::kHead ? n->begin : n->end, plan, &at);
    set_node(i, n);
    AddCount(1);
  }
}

ListObject::Pos ListObject::First() const { return {0, node(0)->begin}; }

ListObject::Pos ListObject::Last() const {
  const uint32_t i = nodes() - 1;
  return {i, node(i)->LastOf()};
}

ListObject::Pos ListObject::Seek(size_t index) const {
  uint32_t i = 0;
  size_t k = index;  // the entry's index in node i
  if (encoding() == Encoding::kQuicklist) {
    if (index < size() / 2) {
      while (k >= Count(i)) k -= Count(i++);
    } else {
      size_t from_end = size() - index;  // >= 1
      i = nodes() - 1;
      while (from_end > Count(i)) from_end -= Count(i--);
      k = Count(i) - from_end;
    }
  }
  const ListNode* n = node(i);
  uint32_t off;
  if (k < n->count / 2u) {
    off = n->begin;
    for (size_t j = 0; j < k; ++j) off += n->SizeAt(off);
  } else {
    off = n->end;
    for (size_t j = n->count; j > k; --j) off = n->PrevOf(off);
  }
  return {i, off};
}

ListObject::Pos ListObject::Next(Pos pos) const {
  const ListNode* n = node(pos.node);
  pos.off += n->SizeAt(pos.off);
  return pos.off < n->end ? pos : StartOf(pos.node + 1);
}

bool ListObject::Prev(Pos* pos) const {
  Pos p = *pos;
  if (AtEnd(p)) {
    p.node = nodes() - 1;
    p.off = node(p.node)->end;
  }
  while (p.off == node(p.node)->begin) {
    if (p.node == 0) return false;
    p.node--;
    p.off = node(p.node)->end;
  }
  p.off = node(p.node)->PrevOf(p.off);
  *pos = p;
  return true;
}

std::string_view ListObject::View(Pos pos, char* scratch) const { return node(pos.node)->View(pos.off, scratch); }

bool ListObject::Equals(Pos pos, const packed::Probe& probe) const {
  return packed::Equals(node(pos.node)->data() + pos.off, probe);
}

ListObject::Pos ListObject::Erase(Pos pos) { return EraseAt(pos.node, Touch(pos.node), pos.off); }

ListObject::Pos ListObject::EraseAt(uint32_t i, ListNode* n, uint32_t off) {
  const Pos pos{i, off};
  const uint32_t next = n->Erase(pos.off, n->SizeAt(pos.off), 1);
  AddCount(-1);
  if (n->count == 0) {
    if (nodes() > 1) {
      ListNode::Destroy(n);
      RemoveNode(pos.node);
      return StartOf(pos.node);
    }
    return EndPos();
  }
  // An end node of several is left its room: pops empty it (and free it)
  // or pushes fill it again.
  const bool end_node = nodes() > 1 && (i == 0 || i + 1 == nodes());
  if (!end_node && n->room() > 256 && n->bytes() * 4 < n->room()) {
    // Shrink packs the entries at the block's start: keep the position's
    // index in bytes from the first entry.
    const uint32_t rel = next - n->begin;
    n = ListNode::Shrink(n);
    set_node(pos.node, n);
    if (rel < n->used()) return {pos.node, n->begin + rel};
  } else if (next < n->end) {
    return {pos.node, next};
  }
  return StartOf(pos.node + 1);
}

void ListObject::Trim(End end, size_t count) {
  if (encoding() == Encoding::kQuicklist) DropWholeNodes(end, &count);
  while (count > 0 && size() > 0) {
    const uint32_t i = end == End::kHead ? 0 : nodes() - 1;
    ListNode* n = Touch(i);
    const uint32_t k = static_cast<uint32_t>(count < n->count ? count : n->count);
    uint32_t from = n->begin, to = n->end;
    if (end == End::kHead) {
      to = from;
      for (uint32_t j = 0; j < k; ++j) to += n->SizeAt(to);
    } else {
      from = to;
      for (uint32_t j = 0; j < k; ++j) from = n->PrevOf(from);
    }
    n->Erase(from, to - from, k);
    AddCount(-static_cast<int64_t>(k));
    set_node(i, ListNode::Shrink(n));
    count -= k;
  }
}

void ListObject::DropWholeNodes(End end, size_t* count) {
  // The nodes that go whole, at least one node left; freed without being
  // unpacked, the slots closed at once.
  Deque* d = deque();
  uint32_t k = 0;
  size_t items = 0;
  while (k + 1 < d->n) {
    const uint32_t c = Count(end == End::kHead ? k : d->n - 1 - k);
    if (items + c > *count) break;
    items += c;
    k++;
  }
  if (k == 0) return;
  DropCache();
  for (uint32_t j = 0; j < k; ++j) DestroySlot(d->at(end == End::kHead ? j : d->n - 1 - j));
  if (end == End::kHead) {
    d->first += k;
    d->loose = d->loose == kNone || d->loose < k ? kNone : d->loose - k;
  } else if (d->loose != kNone && d->loose >= d->n - k) {
    d->loose = kNone;
  }
  d->n -= k;
  d->items -= items;
  *count -= items;
  // Nodes that reached the plain ends are unpacked (none enter the middle).
  if (d->depth == 0) return;
  if (d->loose != kNone && !Interior(d->loose)) d->loose = kNone;
  for (uint32_t i = 0; i < d->n && i < d->depth; ++i) UnpackNode(i);
  for (uint32_t i = d->n > d->depth ? d->n - d->depth : 0; i < d->n; ++i) UnpackNode(i);
}

void ListObject::SplitNode(uint32_t i, const ListLimits& limits) {
  if (encoding() == Encoding::kListpack) ToQuicklist(limits);
  SplitAfter(i, Touch(i)->count / 2u);
}

void ListObject::SplitAfter(uint32_t i, uint32_t k) {
  ListNode* n = Touch(i);
  uint32_t off = n->begin;
  for (uint32_t j = 0; j < k; ++j) off += n->SizeAt(off);
  ListNode* right = n->SplitOff(off, n->count - k);
  set_node(i, ListNode::Shrink(n));
  InsertNode(i + 1, right);
  // Node i stays loose (the write's); its new neighbour needs no waiting
  // (unless InsertNode's rebalance compressed it already).
  if (Interior(i + 1) && (deque()->at(i + 1) & (kLzf | kTried)) == 0) CompressNode(i + 1);
}

ListObject::NodeStats ListObject::StatsOf(uint32_t i) const {
  const Slot s = encoding() == Encoding::kQuicklist ? deque()->at(i) : 0;
  const size_t lzf = (s & kLzf) != 0 ? sizeof(ListNodeLzf) + AsLzf(s)->size : 0;
  return NodeStats{Count(i), node(i)->bytes(), lzf};
}

bool ListObject::IsPlain(uint32_t i, size_t threshold) const {
  if (encoding() != Encoding::kQuicklist || Count(i) != 1) return false;
  const ListNode* n = node(i);
  char scratch[packed::kScratchSize];
  return n->View(n->begin, scratch).size() >= threshold;
}

void ListObject::SeparateLarge(uint32_t i, const ListLimits& limits) {
  char scratch[packed::kScratchSize];
  // Each pass leaves node i a run of small items or one large item, and
  // goes on with the rest (node i + 1), if any.
  for (;;) {
    const ListNode* n = node(i);
    if (n->count < 2) return;
    uint32_t k = 0;
    for (uint32_t off = n->begin; off < n->end; off += n->SizeAt(off), ++k)
      if (n->View(off, scratch).size() >= limits.plain_threshold) break;
    if (k == n->count) {  // none large
      SplitIfOver(i, limits);
      return;
    }
    // (A run before it was within the limit before the write.)
    SplitAfter(i, k == 0 ? 1 : k);
    ++i;
  }
}

void ListObject::Reshape(uint32_t i, bool large, const ListLimits& limits) {
  if (large && encoding() == Encoding::kQuicklist)
    SeparateLarge(i, limits);
  else
    SplitIfOver(i, limits);
}

void ListObject::Set(Pos pos, std::string_view item, const ListLimits& limits) {
  ConvertForGrowth(item.size(), 1, limits);
  const bool was_plain = IsPlain(pos.node, limits.plain_threshold);
  const packed::ItemPlan plan(item);
  uint32_t off = pos.off;
  set_node(pos.node, ListNode::Replace(Touch(pos.node), &off, plan));
  Reshape(pos.node, was_plain || item.size() >= limits.plain_threshold, limits);
}

void ListObject::Insert(Pos pos, bool after, std::string_view item, const ListLimits& limits) {
  ConvertForGrowth(item.size(), 1, limits);
  const bool was_plain = IsPlain(pos.node, limits.plain_threshold);
  ListNode* n = Touch(pos.node);
  const packed::ItemPlan plan(item);
  const uint32_t off = after ? pos.off + n->SizeAt(pos.off) : pos.off;
  uint32_t at;
  set_node(pos.node, ListNode::Insert(n, off, plan, &at));
  AddCount(1);
  Reshape(pos.node, was_plain || item.size() >= limits.plain_threshold, limits);
}

namespace {

// A node's own structure: offsets, counts, back-lengths both ways.
bool NodeValid(const ListNode* n, bool may_be_empty) {
  if (n->end > n->room() || n->begin > n->end) return false;
  if (!may_be_empty && n->count == 0) return false;
  uint32_t off = n->begin, k = 0;
  while (off < n->end) off += n->SizeAt(off), ++k;
  if (off != n->end || k != n->count) return false;
  off = n->end;
  for (k = 0; off > n->begin; ++k) off = n->PrevOf(off);
  return off == n->begin && k == n->count;
}

}  // namespace

bool ListObject::Validate() const {
  if (encoding() == Encoding::kListpack) return NodeValid(single(), true) && single()->count == size();
  // Compression: the ends plain, the interior compressed (or tried, or the
  // loose node); a read copy is what its node decompresses to.
  const Deque* d = deque();
  if (d->loose != kNone && !Interior(d->loose)) return false;
  if (d->cache != nullptr) {
    if (d->cache_at >= d->n || (d->at(d->cache_at) & kLzf) == 0) return false;
    ListNode* fresh = AsLzf(d->at(d->cache_at))->Decompress();
    const bool same = fresh->begin == d->cache->begin && fresh->end == d->cache->end &&
                      fresh->count == d->cache->count &&
                      std::memcmp(fresh->data() + fresh->begin, d->cache->data() + d->cache->begin, fresh->used()) == 0;
    ListNode::DestroyShallow(fresh);
    if (!same) return false;
  }
  size_t total = 0;
  for (uint32_t i = 0; i < d->n; ++i) {
    const Slot s = d->at(i);
    if (Interior(i) ? (s & (kLzf | kTried)) == 0 && i != d->loose : (s & kLzf) != 0) return false;
    // A compressed node is checked in a copy of its own (the read copy is
    // left as it is).
    ListNode* copy = (s & kLzf) ? AsLzf(s)->Decompress() : nullptr;
    const bool ok = NodeValid(copy != nullptr ? copy : AsNode(s), d->n == 1);
    if (copy != nullptr) ListNode::DestroyShallow(copy);
    if (!ok) return false;
    total += Count(i);
  }
  return total == size();
}

}  // namespace peregrine
