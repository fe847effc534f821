#include "core/stream_object.h"

#include <algorithm>
#include <cstring>

#include "core/lazy_free.h"
#include "core/memory.h"
#include "core/stream_groups.h"

namespace peregrine {

bool IncrStreamID(StreamID* id) {
  if (id->seq == UINT64_MAX) {
    if (id->ms == UINT64_MAX) return false;
    id->ms++;
    id->seq = 0;
  } else {
    id->seq++;
  }
  return true;
}

bool DecrStreamID(StreamID* id) {
  if (id->seq == 0) {
    if (id->ms == 0) return false;
    id->ms--;
    id->seq = UINT64_MAX;
  } else {
    id->seq--;
  }
  return true;
}

namespace {

// LEB128 varints.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}
inline const uint8_t* GetVarint(const uint8_t* p, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    r |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) break;
  }
  *v = r;
  return p;
}

// The bytes an element takes in Redis's listpack (encoding and back
// length), to start nodes where Redis does (stream-node-max-bytes).
size_t LpBacklenBytes(uint64_t l) {
  return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}
size_t LpIntBytes(int64_t v) {
  const size_t enc = (v >= 0 && v <= 127)           ? 1
                     : (v >= -4096 && v <= 4095)     ? 2
                     : (v >= -32768 && v <= 32767)   ? 3
                     : (v >= -8388608 && v <= 8388607) ? 4
                     : (v >= INT32_MIN && v <= INT32_MAX) ? 5
                                                          : 9;
  return enc + LpBacklenBytes(enc);
}
size_t LpStringBytes(std::string_view s) {
  int64_t v;
  if (s.size() <= 20 && packed::AsInt(s, &v)) return LpIntBytes(v);
  const size_t enc = s.size() < 64 ? 1 + s.size() : s.size() < 4096 ? 2 + s.size() : 5 + s.size();
  return enc + LpBacklenBytes(enc);
}
constexpr size_t kLpHeaderBytes = 6 + 1;  // total bytes, count; end byte
constexpr uint64_t kListpackMaxSize = uint64_t{1} << 30;

// Calls f(item) for every packed item of a node's bytes (master fields,
// then each entry's fields and values), in order.
template <typename F>
void ForEachItem(uint8_t* d, uint32_t used, F&& f) {
  uint8_t* end = d + used;
  uint64_t nf;
  uint8_t* p = const_cast<uint8_t*>(GetVarint(d, &nf));
  for (uint64_t i = 0; i < nf; i++, p += packed::ItemSize(p)) f(p);
  while (p < end) {
    const uint8_t flags = *p++;
    uint64_t x;
    p = const_cast<uint8_t*>(GetVarint(GetVarint(p, &x), &x));
    uint64_t items = nf;
    if (!(flags & StreamObject::kFlagSameFields)) {
      p = const_cast<uint8_t*>(GetVarint(p, &items));
      items *= 2;
    }
    for (uint64_t i = 0; i < items; i++, p += packed::ItemSize(p)) f(p);
  }
}


}  // namespace

// A node: this header, then its bytes (see stream_object.h).
struct StreamObject::Node {
  StreamID master;
  uint32_t live = 0;
  uint32_t deleted = 0;
  uint32_t used = 0;      // bytes of data in use
  uint32_t cap = 0;       // bytes of data allocated
  uint32_t entries = 0;   // offset of the first entry (after the master fields)
  uint32_t last = 0;      // offset of the last entry
  uint64_t lp_bytes = 0;  // Redis's listpack size for the node, without its two counts
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this + 1); }
  size_t RedisBytes() const { return lp_bytes + LpIntBytes(live) + LpIntBytes(deleted); }
};

StreamObject::Node* StreamObject::NewNode(size_t cap) {
  void* p = CountedAlloc(sizeof(Node) + cap);
  auto* n = new (p) Node();
  n->cap = static_cast<uint32_t>(cap);
  return n;
}

StreamObject::StreamObject() = default;
StreamObject::~StreamObject() {
  for (Node* n : nodes_) FreeNode(n);
}
StreamObject::StreamObject(StreamObject&& o) noexcept
    : nodes_(std::move(o.nodes_)),
      length_(o.length_),
      last_id_(o.last_id_),
      first_id_(o.first_id_),
      max_deleted_id_(o.max_deleted_id_),
      entries_added_(o.entries_added_),
      groups_(std::move(o.groups_)) {
  o.nodes_.clear();
  o.length_ = 0;
}
StreamObject& StreamObject::operator=(StreamObject&& o) noexcept {
  if (this != &o) {
    for (Node* n : nodes_) FreeNode(n);
    nodes_ = std::move(o.nodes_);
    o.nodes_.clear();
    length_ = o.length_;
    last_id_ = o.last_id_;
    first_id_ = o.first_id_;
    max_deleted_id_ = o.max_deleted_id_;
    entries_added_ = o.entries_added_;
    groups_ = std::move(o.groups_);
    o.length_ = 0;
  }
  return *this;
}

void StreamValue::Release() {
  if (ptr_ == nullptr) return;
  if (ptr_->nodes() > kLazyNodes) {
    lazy_free::Queue(ptr_, [](void* obj, size_t blocks) {
      auto* s = static_cast<StreamObject*>(obj);
      if (!s->DestroySome(blocks)) return false;
      s->~StreamObject();
      CountedFree(s);
      return true;
    });
  } else {
    ptr_->~StreamObject();
    CountedFree(ptr_);
  }
  ptr_ = nullptr;
}

bool StreamObject::DestroySome(size_t count) {
  for (; count > 0 && !nodes_.empty(); count--) {
    FreeNode(nodes_.back());
    nodes_.pop_back();
  }
  return nodes_.empty();
}

void StreamObject::FreeNode(Node* n) {
  // External items (strings over 16 KB) have blocks of their own.
  ForEachItem(n->data(), n->used, [](const uint8_t* item) { packed::FreeItem(item); });
  n->~Node();
  CountedFree(n);
}

StreamObject StreamObject::Clone() const {
  StreamObject c;
  for (const Node* n : nodes_) {
    Node* m = NewNode(n->used);
    const uint32_t cap = m->cap;
    std::memcpy(static_cast<void*>(m), n, sizeof(Node));
    m->cap = cap;
    std::memcpy(m->data(), n->data(), n->used);
    c.nodes_.push_back(m);
  }
  // External items are shared by the copy above: give the clone its own
  // (rewritten in place, the same size; rare: strings over 16 KB).
  for (Node* m : c.nodes_) {
    ForEachItem(m->data(), m->used, [](uint8_t* item) {
      if (item[0] != packed::kHeaderExternal) return;
      char scratch[packed::kScratchSize];
      packed::Write(item, packed::ItemPlan(packed::View(item, scratch)));
    });
  }
  c.length_ = length_;
  c.last_id_ = last_id_;
  c.first_id_ = first_id_;
  c.max_deleted_id_ = max_deleted_id_;
  c.entries_added_ = entries_added_;
  if (groups_ != nullptr) c.groups_ = groups_->Clone();
  return c;
}

StreamGroups& StreamObject::mutable_groups() {
  if (groups_ == nullptr) groups_ = std::make_unique<StreamGroups>();
  return *groups_;
}

uint32_t StreamObject::ReadEntry(const Node* n, uint32_t off, EntryView* view, uint8_t* flags) {
  const uint8_t* d = n->data();
  const uint8_t* p = d + off;
  *flags = *p++;
  uint64_t ms, seq;
  p = GetVarint(p, &ms);
  p = GetVarint(p, &seq);
  view->id_.ms = n->master.ms + ms;
  view->id_.seq = ms == 0 ? n->master.seq + seq : seq;
  uint64_t count;
  if (*flags & kFlagSameFields) {
    const uint8_t* m = GetVarint(d, &count);
    view->same_ = true;
    view->fields_ = m;
    view->values_ = p;
    for (uint64_t i = 0; i < count; i++) p += packed::ItemSize(p);
  } else {
    p = GetVarint(p, &count);
    view->same_ = false;
    view->fields_ = p;
    view->values_ = nullptr;
    for (uint64_t i = 0; i < 2 * count; i++) p += packed::ItemSize(p);
  }
  view->count_ = static_cast<size_t>(count);
  return static_cast<uint32_t>(p - d);
}

StreamID StreamObject::NodeLastId(const Node* n) {
  EntryView v;
  uint8_t flags;
  ReadEntry(n, n->last, &v, &flags);
  return v.id_;
}

bool StreamObject::FitsLastNode(size_t raw_bytes, const StreamLimits& limits) const {
  if (nodes_.empty()) return false;
  const Node* n = nodes_.back();
  uint64_t max_bytes = limits.node_max_bytes;
  if (max_bytes == 0 || max_bytes > kListpackMaxSize) max_bytes = kListpackMaxSize;
  if (n->RedisBytes() + raw_bytes >= max_bytes) return false;
  if (limits.node_max_entries > 0 && static_cast<int64_t>(n->live) + n->deleted >= limits.node_max_entries)
    return false;
  // (Our own bound: offsets are 32 bits.)
  return n->used + raw_bytes < (uint64_t{1} << 31);
}

void StreamObject::Append(StreamID id, std::span<const std::string_view> pairs, const StreamLimits& limits) {
  const size_t nf = pairs.size() / 2;
  size_t raw = 0;
  for (std::string_view s : pairs) raw += s.size();
  Node* n = FitsLastNode(raw, limits) ? nodes_.back() : nullptr;
  bool same = true;
  if (n != nullptr) {
    // Same fields as the master entry, in the same order?
    const uint8_t* d = n->data();
    uint64_t mf;
    const uint8_t* p = GetVarint(d, &mf);
    if (mf != nf) {
      same = false;
    } else {
      char scratch[packed::kScratchSize];
      for (size_t i = 0; i < nf && same; i++) {
        same = packed::View(p, scratch) == pairs[2 * i];
        p += packed::ItemSize(p);
      }
    }
  }
  std::vector<packed::ItemPlan> plans;
  plans.reserve(pairs.size());
  size_t items_bytes = 0;
  for (size_t i = 0; i < pairs.size(); i++) {
    if (same && i % 2 == 0 && n != nullptr) continue;  // the master's fields
    plans.emplace_back(pairs[i]);
    items_bytes += plans.back().size;
  }
  if (n == nullptr) {
    // A new node: the master fields, then the entry with "same fields".
    size_t master_bytes = VarintSize(nf);
    for (size_t i = 0; i < nf; i++) master_bytes += plans[2 * i].size;
    const size_t values_bytes = items_bytes - (master_bytes - VarintSize(nf));
    const size_t entry_bytes = 1 + 1 + 1 + values_bytes;
    // Room for a few more entries like this one (a node fills up to its
    // limits, then is shrunk to fit).
    const size_t cap = master_bytes + entry_bytes * (limits.node_max_entries == 1 ? 1 : 4);
    n = NewNode(std::min<size_t>(cap, std::max<size_t>(master_bytes + entry_bytes, 256)));
    if (!nodes_.empty()) {
      // The previous node is complete: moved to a block of its size (a
      // realloc would keep a block up to twice too big in place).
      Node* prev = nodes_.back();
      if (CountedUsableSize(prev) > sizeof(Node) + prev->used + 16) {
        Node* fit = static_cast<Node*>(CountedAlloc(sizeof(Node) + prev->used));
        std::memcpy(static_cast<void*>(fit), prev, sizeof(Node) + prev->used);
        fit->cap = fit->used;
        CountedFree(prev);
        nodes_.back() = fit;
      }
    }
    n->master = id;
    uint8_t* p = PutVarint(n->data(), nf);
    n->lp_bytes = kLpHeaderBytes + LpIntBytes(static_cast<int64_t>(nf)) + LpIntBytes(0);  // num-fields, 0
    for (size_t i = 0; i < nf; i++) {
      p = packed::Write(p, plans[2 * i]);
      n->lp_bytes += LpStringBytes(pairs[2 * i]);
    }
    n->entries = static_cast<uint32_t>(p - n->data());
    n->used = n->entries;
    nodes_.push_back(n);
    same = true;
  }
  // The entry.
  const uint64_t dms = id.ms - n->master.ms;
  const uint64_t dseq = dms == 0 ? id.seq - n->master.seq : id.seq;
  size_t need = 1 + VarintSize(dms) + VarintSize(dseq) + (same ? 0 : VarintSize(nf));
  for (size_t i = 0; i < plans.size(); i++)
    if (!(same && plans.size() == pairs.size() && i % 2 == 0)) need += plans[i].size;
  if (n->used + need > n->cap) {
    size_t cap = std::max<size_t>(n->used + need, size_t{n->cap} + n->cap / 2);
    n = static_cast<Node*>(CountedRealloc(n, sizeof(Node) + cap));
    n->cap = static_cast<uint32_t>(cap);
    nodes_.back() = n;
  }
  uint8_t* p = n->data() + n->used;
  const uint32_t at = n->used;
  *p++ = same ? kFlagSameFields : 0;
  p = PutVarint(p, dms);
  p = PutVarint(p, dseq);
  // Redis's entry: flags, ms-diff, seq-diff (signed), [num-fields], items, lp-count.
  n->lp_bytes += LpIntBytes(same ? kFlagSameFields : 0) + LpIntBytes(static_cast<int64_t>(dms)) +
                 LpIntBytes(static_cast<int64_t>(id.seq - n->master.seq));
  if (!same) {
    p = PutVarint(p, nf);
    n->lp_bytes += LpIntBytes(static_cast<int64_t>(nf));
    for (size_t i = 0; i < plans.size(); i++) p = packed::Write(p, plans[i]);
    for (std::string_view s : pairs) n->lp_bytes += LpStringBytes(s);
    n->lp_bytes += LpIntBytes(static_cast<int64_t>(nf * 2 + 4));
  } else {
    // The plans hold the values (the new node's case: fields and values).
    const bool with_fields = plans.size() == pairs.size();
    for (size_t i = 0; i < plans.size(); i++)
      if (!with_fields || i % 2 == 1) p = packed::Write(p, plans[i]);
    for (size_t i = 1; i < pairs.size(); i += 2) n->lp_bytes += LpStringBytes(pairs[i]);
    n->lp_bytes += LpIntBytes(static_cast<int64_t>(nf + 3));
  }
  n->used = static_cast<uint32_t>(p - n->data());
  n->last = at;
  n->live++;
  length_++;
  entries_added_++;
  last_id_ = id;
  if (length_ == 1) first_id_ = id;
}

ptrdiff_t StreamObject::NodeFor(StreamID id) const {
  auto it = std::upper_bound(nodes_.begin(), nodes_.end(), id,
                             [](const StreamID& v, const Node* n) { return v < n->master; });
  return static_cast<ptrdiff_t>(it - nodes_.begin()) - 1;
}

void StreamObject::Range(StreamID start, StreamID end, bool rev, const Visitor& f) const {
  if (nodes_.empty() || start > end) return;
  EntryView v;
  uint8_t flags;
  if (!rev) {
    ptrdiff_t i = std::max<ptrdiff_t>(NodeFor(start), 0);
    for (; i < static_cast<ptrdiff_t>(nodes_.size()); i++) {
      const Node* n = nodes_[static_cast<size_t>(i)];
      if (n->master > end) return;
      for (uint32_t off = n->entries; off < n->used;) {
        off = ReadEntry(n, off, &v, &flags);
        if (v.id_ > end) return;
        if (v.id_ < start || (flags & kFlagDeleted)) continue;
        if (!f(v)) return;
      }
    }
    return;
  }
  std::vector<uint32_t> offs;
  for (ptrdiff_t i = NodeFor(end); i >= 0; i--) {
    const Node* n = nodes_[static_cast<size_t>(i)];
    offs.clear();
    for (uint32_t off = n->entries; off < n->used;) {
      offs.push_back(off);
      off = ReadEntry(n, off, &v, &flags);
    }
    for (size_t k = offs.size(); k-- > 0;) {
      ReadEntry(n, offs[k], &v, &flags);
      if (v.id_ < start) return;
      if (v.id_ > end || (flags & kFlagDeleted)) continue;
      if (!f(v)) return;
    }
  }
}

void StreamObject::RemoveNode(size_t i) {
  FreeNode(nodes_[i]);
  nodes_.erase(nodes_.begin() + static_cast<ptrdiff_t>(i));
}

bool StreamObject::Delete(StreamID id) {
  const ptrdiff_t i = NodeFor(id);
  if (i < 0) return false;
  Node* n = nodes_[static_cast<size_t>(i)];
  EntryView v;
  uint8_t flags;
  for (uint32_t off = n->entries; off < n->used;) {
    const uint32_t next = ReadEntry(n, off, &v, &flags);
    if (v.id_ > id) return false;
    if (v.id_ == id) {
      if (flags & kFlagDeleted) return false;
      n->data()[off] = flags | kFlagDeleted;
      n->live--;
      n->deleted++;
      length_--;
      if (n->live == 0) RemoveNode(static_cast<size_t>(i));
      if (id > max_deleted_id_) max_deleted_id_ = id;
      // The first ID moves on when the first entry goes (Redis's XDEL).
      if (length_ == 0) {
        first_id_ = {};
      } else if (id == first_id_) {
        first_id_ = EdgeID(true, true);
      }
      return true;
    }
    off = next;
  }
  return false;
}

bool StreamObject::Contains(StreamID id) const {
  bool found = false;
  Range(id, id, false, [&](const EntryView&) {
    found = true;
    return false;
  });
  return found;
}

int64_t StreamObject::TrimEntries(const Trim& args) {
  if (args.strategy == Trim::kNone) return 0;
  int64_t deleted = 0;
  while (!nodes_.empty()) {
    if (args.strategy == Trim::kMaxLen && length_ <= args.maxlen) break;
    Node* n = nodes_.front();
    const int64_t entries = n->live;
    if (args.limit != 0 && deleted + entries > args.limit) break;
    bool remove;
    if (args.strategy == Trim::kMaxLen)
      remove = length_ - static_cast<uint64_t>(entries) >= args.maxlen;
    else
      remove = NodeLastId(n) < args.minid;  // (tombstones included, as Redis)
    if (remove) {
      RemoveNode(0);
      length_ -= static_cast<uint64_t>(entries);
      deleted += entries;
      continue;
    }
    if (args.approx) break;
    // Within the node: entries marked deleted from the front until the
    // length or the ID is reached.
    int64_t from_node = 0;
    EntryView v;
    uint8_t flags;
    for (uint32_t off = n->entries; off < n->used;) {
      const uint32_t next = ReadEntry(n, off, &v, &flags);
      const bool stop = args.strategy == Trim::kMaxLen ? length_ <= args.maxlen : v.id_ >= args.minid;
      if (stop) break;
      if (!(flags & kFlagDeleted)) {
        n->data()[off] = flags | kFlagDeleted;
        from_node++;
        length_--;
      }
      off = next;
    }
    n->live -= static_cast<uint32_t>(from_node);
    n->deleted += static_cast<uint32_t>(from_node);
    deleted += from_node;
    break;  // (a node left with no live entry stays, as in Redis)
  }
  if (length_ == 0)
    first_id_ = {};
  else if (deleted != 0)
    first_id_ = EdgeID(true, true);
  return deleted;
}

StreamID StreamObject::EdgeID(bool first, bool skip_tombstones) const {
  StreamID found = first ? StreamID::Max() : StreamID{};
  bool any = false;
  EntryView v;
  uint8_t flags;
  if (first) {
    for (const Node* n : nodes_) {
      for (uint32_t off = n->entries; off < n->used;) {
        off = ReadEntry(n, off, &v, &flags);
        if (skip_tombstones && (flags & kFlagDeleted)) continue;
        return v.id_;
      }
    }
  } else {
    for (size_t i = nodes_.size(); i-- > 0 && !any;) {
      const Node* n = nodes_[i];
      for (uint32_t off = n->entries; off < n->used;) {
        off = ReadEntry(n, off, &v, &flags);
        if (skip_tombstones && (flags & kFlagDeleted)) continue;
        found = v.id_;
        any = true;
      }
    }
  }
  return found;
}

bool StreamObject::RangeHasTombstones(StreamID start, StreamID end) const {
  // Redis's streamRangeHasTombstones: from the max-deleted ID alone.
  if (length_ == 0 || max_deleted_id_ == StreamID{}) return false;
  const StreamID lo = start < first_id_ ? first_id_ : start;
  const StreamID hi = end;
  return lo <= max_deleted_id_ && max_deleted_id_ <= hi;
}

int64_t StreamObject::EntriesReadAt(StreamID id) const {
  if (entries_added_ == 0) return 0;
  const auto added = static_cast<int64_t>(entries_added_);
  if (length_ == 0 && id <= last_id_) return added;
  if (id == last_id_) return added;
  if (id > last_id_) return -1;
  if (max_deleted_id_ == StreamID{} || max_deleted_id_ < first_id_) {
    if (id < first_id_) return added - static_cast<int64_t>(length_);
    if (id == first_id_) return added - static_cast<int64_t>(length_) + 1;
  }
  return -1;
}

size_t StreamObject::AllocatedBytes() const {
  // The node index: the deque's 512-byte chunks and its map.
  size_t total = (nodes_.size() / 64 + 1) * 512 + 64;
  for (Node* n : nodes_) {
    total += CountedUsableSize(n);
    ForEachItem(n->data(), n->used, [&](const uint8_t* item) { total += packed::ExternalBytes(item); });
  }
  if (groups_ != nullptr) total += groups_->AllocatedBytes();
  return total;
}

void StreamObject::ForEachNode(const NodeVisitor& f) const {
  std::vector<RawEntry> entries;
  std::vector<std::string> owned;  // every item's string form, for the call
  std::vector<std::string_view> master;
  for (const Node* n : nodes_) {
    entries.clear();
    owned.clear();
    master.clear();
    const uint8_t* d = n->data();
    const uint8_t* end = d + n->used;
    uint64_t nf;
    const uint8_t* first = GetVarint(d, &nf);
    // Count the items first, so that `owned` never moves its strings.
    size_t items = 0;
    ForEachItem(const_cast<uint8_t*>(d), n->used, [&](const uint8_t*) { items++; });
    owned.reserve(items);
    auto take = [&](const uint8_t* item) -> std::string_view {
      char buf[packed::kScratchSize];
      owned.emplace_back(packed::View(item, buf));
      return owned.back();
    };
    const uint8_t* p = first;
    for (uint64_t i = 0; i < nf; i++, p += packed::ItemSize(p)) master.push_back(take(p));
    while (p < end) {
      RawEntry e;
      e.flags = *p++;
      uint64_t ms, seq;
      p = GetVarint(GetVarint(p, &ms), &seq);
      e.id.ms = n->master.ms + ms;
      e.id.seq = ms == 0 ? n->master.seq + seq : seq;
      if (e.flags & kFlagSameFields) {
        e.fields = master;
        for (uint64_t i = 0; i < nf; i++, p += packed::ItemSize(p)) e.values.push_back(take(p));
      } else {
        uint64_t k;
        p = GetVarint(p, &k);
        for (uint64_t i = 0; i < k; i++) {
          e.fields.push_back(take(p));
          p += packed::ItemSize(p);
          e.values.push_back(take(p));
          p += packed::ItemSize(p);
        }
      }
      entries.push_back(std::move(e));
    }
    f(n->master, master, n->live, n->deleted, entries);
  }
}

bool StreamObject::LoadNode(StreamID master, std::span<const std::string_view> master_fields,
                            std::span<const RawEntry> entries) {
  if (entries.empty()) return false;
  if (!nodes_.empty() && !(NodeLastId(nodes_.back()) < master)) return false;
  // Built with Append's encoding into a node of exactly the size needed.
  std::vector<packed::ItemPlan> master_plans;
  size_t bytes = VarintSize(master_fields.size());
  for (std::string_view f : master_fields) {
    master_plans.emplace_back(f);
    bytes += master_plans.back().size;
  }
  StreamID prev;
  bool first = true;
  for (const RawEntry& e : entries) {
    if (e.id < master || (!first && !(prev < e.id))) return false;
    if (e.fields.size() != e.values.size()) return false;
    const bool same = (e.flags & kFlagSameFields) != 0;
    if (same && e.fields.size() != master_fields.size()) return false;
    const uint64_t dms = e.id.ms - master.ms;
    bytes += 1 + VarintSize(dms) + VarintSize(dms == 0 ? e.id.seq - master.seq : e.id.seq);
    if (!same) {
      bytes += VarintSize(e.fields.size());
      for (std::string_view f : e.fields) bytes += packed::ItemPlan(f).size;
    }
    for (std::string_view v : e.values) bytes += packed::ItemPlan(v).size;
    prev = e.id;
    first = false;
  }
  Node* n = NewNode(bytes);
  n->master = master;
  uint8_t* p = PutVarint(n->data(), master_fields.size());
  n->lp_bytes = kLpHeaderBytes + LpIntBytes(static_cast<int64_t>(master_fields.size())) + LpIntBytes(0);
  for (size_t i = 0; i < master_fields.size(); i++) {
    p = packed::Write(p, master_plans[i]);
    n->lp_bytes += LpStringBytes(master_fields[i]);
  }
  n->entries = static_cast<uint32_t>(p - n->data());
  for (const RawEntry& e : entries) {
    n->last = static_cast<uint32_t>(p - n->data());
    const bool same = (e.flags & kFlagSameFields) != 0;
    *p++ = e.flags & (kFlagDeleted | kFlagSameFields);
    const uint64_t dms = e.id.ms - master.ms;
    p = PutVarint(p, dms);
    p = PutVarint(p, dms == 0 ? e.id.seq - master.seq : e.id.seq);
    n->lp_bytes += LpIntBytes(e.flags) + LpIntBytes(static_cast<int64_t>(dms)) +
                   LpIntBytes(static_cast<int64_t>(e.id.seq - master.seq));
    if (!same) {
      p = PutVarint(p, e.fields.size());
      n->lp_bytes += LpIntBytes(static_cast<int64_t>(e.fields.size()));
      for (size_t i = 0; i < e.fields.size(); i++) {
        p = packed::Write(p, packed::ItemPlan(e.fields[i]));
        p = packed::Write(p, packed::ItemPlan(e.values[i]));
        n->lp_bytes += LpStringBytes(e.fields[i]) + LpStringBytes(e.values[i]);
      }
      n->lp_bytes += LpIntBytes(static_cast<int64_t>(e.fields.size() * 2 + 4));
    } else {
      for (std::string_view v : e.values) {
        p = packed::Write(p, packed::ItemPlan(v));
        n->lp_bytes += LpStringBytes(v);
      }
      n->lp_bytes += LpIntBytes(static_cast<int64_t>(e.values.size() + 3));
    }
    if (e.flags & kFlagDeleted)
      n->deleted++;
    else
      n->live++;
  }
  n->used = static_cast<uint32_t>(p - n->data());
  nodes_.push_back(n);
  return true;
}

uint64_t StreamObject::CountLive() const {
  uint64_t total = 0;
  for (const Node* n : nodes_) total += n->live;
  return total;
}

}  // namespace peregrine
