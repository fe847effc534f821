// The keyspace table (the layout: db_layout.h; the contracts: db.h): layout,
// lookup, insertion, deletion and growth. Scan, iteration, expiry and
// eviction are in db_iterate.cc.
#include "core/db.h"

#include <emmintrin.h>
#include <malloc.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/db_internal.h"
#include "core/slot.h"

namespace peregrine {
namespace {

using db_internal::SegmentBase;

// The deepest directory. A segment of depth d picks home groups by hash bits
// 48-d..63-d, which stay within the bits a heap key keeps (24..63) up to
// d = 24; past 16 they overlap the tag's bits 24..31, which only makes the
// tag a little less selective. 2^24 segments of ~1,000 keys is far beyond
// any memory.
constexpr int kMaxDepth = 24;

[[noreturn]] void TableFull() {
  std::fprintf(stderr, "Keyspace table: no room left in a segment (a bug, or over 10^10 keys in one database)\n");
  std::abort();
}

void CopyBytes(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }

[[noreturn]] void PointerTooWide() {
  std::fprintf(stderr, "Keyspace table: the allocator returned an address above 2^48\n");
  std::abort();
}

CompactKey& KeyOf(Db::Entry& e) { return e.key_; }
CompactKey& KeyOf(Db::TtlEntry& t) { return t.entry.key_; }

void DestroyEntry(Db::Entry& e) {
  e.key_.Release();
  e.value.~Value();
}


}  // namespace

int64_t DbLayout::Entry::expire_ms() const {
  return has_expire() ? reinterpret_cast<const TtlEntry*>(this)->expire_ms : Db::kNoExpire;
}

// Control bytes 0..15 and 5..20 in two unaligned loads (SSE2 is baseline on
// x86-64): bit i of the result is set when ctrl[i] == tag.
uint32_t DbLayout::MatchTag(const Group& g, uint8_t tag) {
  static_assert(kGroupSlots == 21);
  const __m128i t = _mm_set1_epi8(static_cast<char>(tag));
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g.ctrl));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g.ctrl + 5));
  const uint32_t ma = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, t)));
  const uint32_t mb = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, t)));
  return (ma | (mb << 5)) & 0x1FFFFF;
}

Db::Db() { InitEmpty(); }

Db::~Db() { FreeAll(); }

void Db::InitEmpty() {
  depth_ = 0;
  dir_ = static_cast<DirEntry*>(CountedAlloc(sizeof(DirEntry)));
  dir_[0] = DirEntry::Of(NewSegment(0, 1));
  segments_ = 1;
  size_ = 0;
  if (slot_counts_) std::fill_n(slot_counts_.get(), kNumSlots, 0u);
  expires_ = 0;
  expire_pos_ = sieve_pos_ = maintain_pos_ = sweep_pos_ = 0;
  expire_idx_ = sieve_group_ = 0;
  sieve_slot_ = 0;
  sweep_active_ = false;
  avg_ttl_ = 0;
}

void Db::CountSlots() {
  if (slot_counts_ == nullptr) slot_counts_ = std::make_unique<uint32_t[]>(kNumSlots);
  std::fill_n(slot_counts_.get(), kNumSlots, 0u);
  ForEach([this](const Entry& e) {
    char scratch[CompactKey::kScratchSize];
    slot_counts_[SlotOf(e.key(scratch))]++;
  });
}

void Db::Reserve(size_t keys) {
  if (size_ != 0 || snap_sink_ != nullptr) return;
  // Segments about 3/4 of their largest size, as a table grown by splits
  // holds them on average.
  const size_t per = Capacity(kMaxGroups) * 3 / 4;
  int d = 0;
  while (d < kMaxDepth - 1 && (size_t{1} << d) * per < keys) d++;
  if (d == 0) return;
  FreeAll();
  depth_ = d;
  const size_t n = size_t{1} << d;
  dir_ = static_cast<DirEntry*>(CountedAlloc(n * sizeof(DirEntry)));
  const uint32_t groups = std::min(kMaxGroups, GroupsFor(static_cast<uint32_t>(keys / n)));
  for (size_t i = 0; i < n; i++) dir_[i] = DirEntry::Of(NewSegment(static_cast<uint8_t>(d), groups));
  segments_ = n;
}

void Db::FreeAll() {
  if (dir_ == nullptr) return;
  std::vector<Segment*> all;
  ForEachSegmentFrom(0, [&](Segment* s, uint64_t) {
    all.push_back(s);
    return true;
  });
  for (Segment* s : all) FreeSegment(s, true);
  CountedFree(dir_);
  dir_ = nullptr;
}

Db::Segment* Db::NewSegment(uint8_t depth, uint32_t ngroups) {
  Segment* s = new (CountedCallocAligned(sizeof(Segment), alignof(Segment))) Segment();
  s->depth = depth;
  s->ngroups = ngroups;
  s->saved_epoch = snap_epoch_;  // made now: nothing in it predates a snapshot in progress
  s->groups = static_cast<Group*>(CountedCallocAligned(ngroups * sizeof(Group), alignof(Group)));
  if (reinterpret_cast<uintptr_t>(s->groups) >> 48 != 0) PointerTooWide();  // DirEntry keeps 48 bits
  return s;
}

void Db::FreeSegment(Segment* s, bool destroy_entries) {
  if (destroy_entries) {
    ForEachLive(s, false, [](Entry& e) {
      DestroyEntry(e);
      return true;
    });
  }
  ArenaFree(s->plain);
  ArenaFree(s->ttl);
  CountedFree(s->groups);
  s->~Segment();
  CountedFree(s);
}

template <typename E>
uint32_t DbLayout::ArenaTake(Arena<E>& a) {
  if (a.free_head != kNoFree) {
    const uint32_t i = a.free_head;
    a.free_head = KeyOf(a.at(i)).next_free();
    a.holes--;
    return i;
  }
  if ((a.size & (kChunkEntries - 1)) == 0) {
    const uint32_t c = a.size >> kChunkShift;
    if (c == kMaxChunks) TableFull();  // cannot happen: the index fills first
    a.chunks[c] = static_cast<E*>(CountedAlloc(kChunkEntries * sizeof(E)));
  }
  return a.size++;
}

template <typename E>
void DbLayout::ArenaRelease(Arena<E>& a, uint32_t i) {
  if (i + 1 == a.size) {
    a.size--;
    if ((a.size & (kChunkEntries - 1)) == 0) {
      const uint32_t c = a.size >> kChunkShift;
      CountedFree(a.chunks[c]);
      a.chunks[c] = nullptr;
    }
    return;
  }
  KeyOf(a.at(i)).MakeHole(a.free_head);
  a.free_head = i;
  a.holes++;
}

template <typename E>
void DbLayout::ArenaFree(Arena<E>& a) {
  for (uint32_t c = 0; c < a.nchunks(); c++) CountedFree(a.chunks[c]);
  a = Arena<E>{};
}


uint64_t DbLayout::SegmentEnd(uint64_t hash_in_s, const Segment* s) {
  if (s->depth == 0) return 0;
  return SegmentBase(hash_in_s, s->depth) + (uint64_t{1} << (64 - s->depth));  // wraps to 0 after the last
}

uint32_t DbLayout::GroupsFor(uint32_t keys) {
  // About 70% full, and room for at least one more key.
  uint32_t g = std::max<uint32_t>(1, (keys * 10 + 146) / 147);
  while (Capacity(g) <= keys) g++;
  return g;
}

// ---- lookup -----------------------------------------------------------------

// Inlined into each caller: this is the lookup's hot loop, and its
// predicate should compile to the comparison itself.
template <typename Pred>
[[gnu::always_inline]] inline Db::Slot Db::Search(uint64_t hash, Pred&& is_it) const {
  const DirEntry& d = dir_[DirIndex(hash)];
  Segment* const seg = d.seg();
  // A hit reads the segment header's chunk table (three lines) after the
  // group, to find its entry. Once the headers outgrow the L2 cache that
  // is a third dependent miss: fetch the table alongside the group instead
  // (10M keys: hits 15% faster). Below that it only costs misses (1M keys:
  // 18% slower), so small tables skip it.
  if (segments_ > kPrefetchHeadersAbove) {
    const char* chunks = reinterpret_cast<const char*>(seg->plain.chunks);
    __builtin_prefetch(chunks);
    __builtin_prefetch(chunks + 64);
    __builtin_prefetch(chunks + 128);
  }
  // Few values live across the loop (no counter beyond `left`, which only
  // a probe past a full group touches): the loop is inlined into Find, and
  // a spilled register there is instructions on every lookup.
  Group* const groups = d.groups();
  const uint32_t n = d.ngroups();  // >= 1
  uint32_t g = HomeGroup(hash, d.depth(), n);
  const uint8_t tag = Tag(hash);
  for (uint32_t left = n;;) {
    Group& grp = groups[g];
    for (uint32_t m = MatchTag(grp, tag); m != 0; m &= m - 1) {
      const int i = std::countr_zero(m);
      Entry* e = EntryAt(seg, grp.ref[i]);
      if (is_it(e)) return {seg, g, i, e, &grp.ref[i]};
    }
    if (grp.overflow == 0 || --left == 0) return {};
    if (++g == n) g = 0;
  }
}

// Short keys (inline or packed, the common case) search with a comparison
// of two words inlined into the caller; long keys out of line, so that the
// callers' loops make no call (a memcmp) and save no registers for one.
[[gnu::always_inline]] inline Db::Slot Db::Locate(const CompactKey::Probe& p) const {
  if (!p.is_short()) [[unlikely]]
    return LocateLong(p);
  return Search(p.hash, [&p](const Entry* e) { return e->key_.MatchesShort(p); });
}

Db::Slot Db::LocateLong(const CompactKey::Probe& p) const {
  return Search(p.hash, [&p](const Entry* e) { return e->key_.MatchesLong(p); });
}

Db::Slot Db::LocateEntry(const Entry* e) const {
  const Slot at = Search(e->key_.StoredHash(), [e](const Entry* x) { return x == e; });
  if (at.found()) return at;
  std::fprintf(stderr, "Keyspace table: an entry is missing from its index\n");
  std::abort();
}

[[gnu::always_inline]] inline const uint16_t* Db::LikelyRef(uint64_t hash, const Segment** seg) const {
  const DirEntry& d = dir_[DirIndex(hash)];
  const Group& grp = d.groups()[HomeGroup(hash, d.depth(), d.ngroups())];
  const uint32_t m = MatchTag(grp, Tag(hash));
  *seg = d.seg();
  return m != 0 ? &grp.ref[std::countr_zero(m)] : nullptr;
}

void Db::PrefetchArena(uint64_t hash) const {
  const Segment* s;
  const uint16_t* ref = LikelyRef(hash, &s);
  if (ref == nullptr) return;
  const uint32_t c = (*ref & kRefIndex) >> kChunkShift;
  __builtin_prefetch((*ref & kRefTtl) ? static_cast<const void*>(&s->ttl.chunks[c]) : &s->plain.chunks[c]);
}

void Db::PrefetchEntry(uint64_t hash) const {
  const Segment* s;
  const uint16_t* ref = LikelyRef(hash, &s);
  if (ref != nullptr) __builtin_prefetch(EntryAt(s, *ref));
}

void Db::SetDirectory(uint64_t pos, Segment* s) {
  const uint64_t span = uint64_t{1} << (depth_ - s->depth);
  const uint64_t start = DirIndex(pos) & ~(span - 1);
  for (uint64_t i = 0; i < span; i++) dir_[start + i] = DirEntry::Of(s);
}

Db::Entry* Db::FindRaw(const CompactKey::Probe& p) const {
  const Slot at = Locate(p);
  if (at.found()) BeforeChange(at.seg);  // the caller may change what it finds
  return at.entry;
}

Db::Entry* Db::Find(const CompactKey::Probe& p, int64_t now_ms, bool touch) {
  const Slot at = Locate(p);
  if (!at.found()) return nullptr;
  BeforeChange(at.seg);  // the caller may change what it finds
  uint16_t& ref = *at.ref;
  Entry* e = at.entry;
  if (IsExpired(*e, now_ms)) [[unlikely]] {
    if (!hide_expired_) RemoveExpired(e);
    return nullptr;
  }
  if (touch) {
    if (!(ref & kRefVisited)) ref |= kRefVisited;
    if (access_ != nullptr) {
      // Written only when it changes, so that reading a key does not dirty
      // its cache line once a second's stamp is in place.
      const uint8_t a = e->value.access(), b = access_->Touched(a);
      if (a != b) e->value.set_access(b);
    }
  }
  return e;
}

// ---- insert and delete ---------------------------------------------------------

void DbLayout::IndexInsert(Segment* s, uint64_t h, uint16_t ref) {
  uint32_t g = HomeGroup(h, s);
  for (;;) {
    Group& grp = s->groups[g];
    const uint32_t m = MatchEmpty(grp);
    if (m != 0) {
      const int i = std::countr_zero(m);
      grp.ctrl[i] = Tag(h);
      grp.ref[i] = ref;
      return;
    }
    if (grp.overflow < 255) grp.overflow++;
    if (++g == s->ngroups) g = 0;
  }
}

void Db::MakeRoom(uint64_t hash) {
  for (;;) {
    Segment* s = SegmentOf(hash);
    if (s->live < Capacity(s->ngroups)) return;
    if (s->ngroups < kMaxGroups) {
      ResizeIndex(s, std::min(kMaxGroups, s->ngroups + std::max<uint32_t>(1, s->ngroups / 4)), hash);
    } else if (s->depth < kMaxDepth) {
      Rebuild(s, true, hash);
    } else {
      TableFull();
    }
  }
}

Db::Entry* Db::Insert(const CompactKey::Probe& p, Value value, int64_t expire_ms) {
  BeforeChange(SegmentOf(p.hash));  // (growth moves its entries to done segments)
  MakeRoom(p.hash);
  Segment* s = SegmentOf(p.hash);
  Entry* e;
  uint16_t ref;
  if (expire_ms == kNoExpire) {
    const uint32_t i = ArenaTake(s->plain);
    e = &s->plain.at(i);
    ref = static_cast<uint16_t>(i);
  } else {
    const uint32_t i = ArenaTake(s->ttl);
    s->ttl.at(i).expire_ms = expire_ms;
    e = &s->ttl.at(i).entry;
    ref = static_cast<uint16_t>(i | kRefTtl);
    expires_++;
  }
  new (&e->key_) CompactKey();
  e->key_.Init(p);
  if (expire_ms != kNoExpire) e->key_.set_flags(CompactKey::kFlagTtl);
  new (&e->value) Value(std::move(value));
  e->value.set_access(access_ != nullptr ? access_->Initial() : 0);
  IndexInsert(s, p.hash, ref);
  s->live++;
  size_++;
  if (slot_counts_) [[unlikely]]
    slot_counts_[SlotOf(p.bytes)]++;
  if (e->value.is_hash() && e->value.hash().min_deadline() != 0) [[unlikely]]
    NoteHashDeadline(p.bytes, e->value.hash().min_deadline());
  if (e->value.is_zset()) [[unlikely]]
    NoteZSetMove(p.bytes, e->value.mutable_zset());
  return e;
}

// Out of line, and finding the slot again, so that Find keeps nothing of
// its search for this rare path (no registers saved, no spills).
void Db::RemoveExpired(const Entry* e) {
  if (report_removals_) [[unlikely]]
    ReportRemoval(*e);
  RemoveEntry(e);
  expired_keys_++;
  NoteExpired();
}

void Db::ReportRemoval(const Entry& e, bool evicted) {
  if (observer_ == nullptr) return;
  const std::string key = e.key_string();
  observer_->KeyRemoved(*this, key, evicted);
}

void Db::RemoveAt(const Slot& at) {
  Segment* s = at.seg;
  BeforeChange(s);
  Group& grp = s->groups[at.group];
  const uint16_t ref = *at.ref;
  Entry* e = at.entry;
  // Groups between the home and this one counted the key as passing them.
  for (uint32_t g = HomeGroup(e->key_.StoredHash(), s); g != at.group; g = g + 1 == s->ngroups ? 0 : g + 1)
    if (s->groups[g].overflow != 255) s->groups[g].overflow--;
  grp.ctrl[at.slot] = 0;
  if (slot_counts_) [[unlikely]] {
    char scratch[CompactKey::kScratchSize];
    slot_counts_[SlotOf(e->key(scratch))]--;
  }
  DestroyEntry(*e);
  if (ref & kRefTtl) {
    ArenaRelease(s->ttl, ref & kRefIndex);
    expires_--;
  } else {
    ArenaRelease(s->plain, ref & kRefIndex);
  }
  s->live--;
  size_--;
}

bool Db::Erase(std::string_view key) {
  const Slot at = Locate(CompactKey::MakeProbe(key));
  if (!at.found()) return false;
  RemoveAt(at);
  return true;
}

Db::Entry* Db::SetExpire(Entry* e, int64_t expire_ms) {
  if (e->has_expire() && expire_ms != kNoExpire) {
    reinterpret_cast<TtlEntry*>(e)->expire_ms = expire_ms;
    return e;
  }
  if (!e->has_expire() && expire_ms == kNoExpire) return e;
  // Move the entry to the other arena: copy its bytes (the key and value
  // are relocatable), free the old slot without destroying, repoint the ref.
  const Slot at = LocateEntry(e);
  Segment* s = at.seg;
  uint16_t& ref = *at.ref;
  const uint32_t old = ref & kRefIndex;
  const uint16_t visited = ref & kRefVisited;
  if (expire_ms != kNoExpire) {
    const uint32_t i = ArenaTake(s->ttl);  // the plain arena does not change
    TtlEntry& t = s->ttl.at(i);
    CopyBytes(&t.entry, &s->plain.at(old), sizeof(Entry));
    t.expire_ms = expire_ms;
    t.entry.key_.set_flags(CompactKey::kFlagTtl);
    ArenaRelease(s->plain, old);
    ref = static_cast<uint16_t>(i | kRefTtl | visited);
    expires_++;
    return &t.entry;
  }
  const uint32_t i = ArenaTake(s->plain);
  Entry& p = s->plain.at(i);
  CopyBytes(&p, &s->ttl.at(old).entry, sizeof(Entry));
  p.key_.set_flags(0);
  ArenaRelease(s->ttl, old);
  ref = static_cast<uint16_t>(i | visited);
  expires_--;
  return &p;
}

// ---- growth and repacking ------------------------------------------------------

void Db::ResizeIndex(Segment* s, uint32_t ngroups, uint64_t pos) {
  Group* old = s->groups;
  const uint32_t old_n = s->ngroups;
  s->groups = static_cast<Group*>(CountedCallocAligned(ngroups * sizeof(Group), alignof(Group)));
  if (reinterpret_cast<uintptr_t>(s->groups) >> 48 != 0) PointerTooWide();
  s->ngroups = ngroups;
  for (uint32_t g = 0; g < old_n; g++)
    for (int i = 0; i < kGroupSlots; i++)
      if (old[g].ctrl[i] != 0) IndexInsert(s, EntryAt(s, old[g].ref[i])->key_.StoredHash(), old[g].ref[i]);
  CountedFree(old);
  SetDirectory(pos, s);
}

void Db::Rebuild(Segment* s, bool split, uint64_t pos) {
  const int d = s->depth;
  // Pass 1: every key's hash and side, and the counts per side and arena.
  static thread_local std::vector<uint64_t> hashes;
  hashes.clear();
  uint32_t count[2][2] = {};  // [side][ttl]
  for (uint32_t g = 0; g < s->ngroups; g++)
    for (int i = 0; i < kGroupSlots; i++) {
      if (s->groups[g].ctrl[i] == 0) continue;
      const uint16_t ref = s->groups[g].ref[i];
      const uint64_t h = EntryAt(s, ref)->key_.StoredHash();
      hashes.push_back(h);
      count[split ? (h << d) >> 63 : 0][(ref & kRefTtl) ? 1 : 0]++;
    }
  const int sides = split ? 2 : 1;
  Segment* out[2] = {nullptr, nullptr};
  for (int side = 0; side < sides; side++) {
    const uint32_t plain = count[side][0], ttl = count[side][1];
    // Never more than kMaxGroups: past it MakeRoom would not split the
    // segment before an arena (kMaxChunks chunks) overflowed. Capacity(kMaxGroups)
    // holds any segment's keys, and one more insert then splits it.
    out[side] = NewSegment(static_cast<uint8_t>(split ? d + 1 : d), std::min(kMaxGroups, GroupsFor(plain + ttl)));
  }
  // Pass 2: move the entries (their bytes; nothing is destroyed) and index them.
  size_t k = 0;
  for (uint32_t g = 0; g < s->ngroups; g++)
    for (int i = 0; i < kGroupSlots; i++) {
      if (s->groups[g].ctrl[i] == 0) continue;
      const uint16_t ref = s->groups[g].ref[i];
      const uint64_t h = hashes[k++];
      Segment* o = out[split ? (h << d) >> 63 : 0];
      uint16_t nref;
      if (ref & kRefTtl) {
        const uint32_t j = ArenaTake(o->ttl);
        CopyBytes(&o->ttl.at(j), &s->ttl.at(ref & kRefIndex), sizeof(TtlEntry));
        nref = static_cast<uint16_t>(j | kRefTtl);
      } else {
        const uint32_t j = ArenaTake(o->plain);
        CopyBytes(&o->plain.at(j), &s->plain.at(ref & kRefIndex), sizeof(Entry));
        nref = static_cast<uint16_t>(j);
      }
      IndexInsert(o, h, static_cast<uint16_t>(nref | (ref & kRefVisited)));
      o->live++;
    }
  // The directory: the entries that named `s` name the new segment(s).
  if (split && d == depth_) {
    const size_t n = size_t{1} << depth_;
    DirEntry* dir = static_cast<DirEntry*>(CountedAlloc(2 * n * sizeof(DirEntry)));
    for (size_t i = 0; i < n; i++) dir[2 * i] = dir[2 * i + 1] = dir_[i];
    CountedFree(dir_);
    dir_ = dir;
    depth_++;
  }
  if (split) {
    // The halves: the hash bit below the old prefix, clear or set.
    const uint64_t half = uint64_t{1} << (63 - d);
    SetDirectory(pos & ~half, out[0]);
    SetDirectory(pos | half, out[1]);
    segments_++;
  } else {
    SetDirectory(pos, out[0]);
  }
  FreeSegment(s, false);
}

bool Db::Maintain(int64_t budget_us) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = segments_;
  for (size_t i = 0; i < n; i++) {
    Segment* s = SegmentOf(maintain_pos_);
    const uint64_t base = SegmentBase(maintain_pos_, s->depth);
    maintain_pos_ = SegmentEnd(base, s);
    const uint32_t holes = s->plain.holes + s->ttl.holes;
    const bool sparse_arena = holes > s->live / 4 + 8;
    const bool sparse_index = s->ngroups > 1 && GroupsFor(s->live) * 2 < s->ngroups;
    if (sparse_arena || sparse_index) {
      BeforeChange(s);  // its entries move to a new (done) segment
      Rebuild(s, false, base);
    }
    if ((i & 15) == 15 && std::chrono::steady_clock::now() - start > std::chrono::microseconds(budget_us)) return true;
  }
  return false;
}

void Db::BeginAccessSweep() {
  sweep_pos_ = 0;
  sweep_active_ = access_ != nullptr && size_ > 0;
}

bool Db::SweepAccess(size_t max_entries) {
  size_t visited = 0;
  while (sweep_active_ && visited < max_entries) {
    const Segment* s = SegmentOf(sweep_pos_);
    ForEachLive(s, false, [&](Entry& e) {
      const uint8_t a = e.value.access(), b = access_->Swept(a);
      if (a != b) e.value.set_access(b);
      return true;
    });
    visited += s->live;
    sweep_pos_ = SegmentEnd(sweep_pos_, s);
    if (sweep_pos_ == 0) sweep_active_ = false;
  }
  return sweep_active_;
}

size_t Db::StructureBytes() const {
  size_t bytes = CountedUsableSize(dir_);
  ForEachSegmentFrom(0, [&](const Segment* s, uint64_t) {
    bytes += CountedUsableSize(s) + CountedUsableSize(s->groups);
    return true;
  });
  return bytes;
}

}  // namespace peregrine
