// The large encoding of hashes and sets (see packed_table.h).
#include "core/packed_table.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/memory.h"
#include "core/splitmix.h"

namespace peregrine {

PackedTable::PackedTable(uint8_t arity) : arity_(arity) {
  dir_ = static_cast<Page**>(CountedAlloc(sizeof(Page*)));
  dir_[0] = Page::Create(arity, 0);
}

PackedTable::~PackedTable() {
  if (dir_ != nullptr) DestroySome(SIZE_MAX);
}

bool PackedTable::DestroySome(size_t max_pages) {
  uint32_t slot = destroy_slot_;
  for (; slot < (uint32_t{1} << depth_) && max_pages > 0; --max_pages) {
    Page* p = dir_[slot];
    slot += uint32_t{1} << (depth_ - p->depth);
    Page::Destroy(p);
  }
  destroy_slot_ = slot;
  if (slot < (uint32_t{1} << depth_)) return false;
  CountedFree(dir_);
  dir_ = nullptr;
  if (bound_ != nullptr) CountedFree(bound_);
  bound_ = nullptr;
  return true;
}

size_t PackedTable::AllocatedBytes() const {
  size_t n = CountedUsableSize(dir_) + (bound_ != nullptr ? CountedUsableSize(bound_) : 0);
  for (uint32_t slot = 0; slot < (uint32_t{1} << depth_);) {
    const Page* p = dir_[slot];
    n += p->AllocatedBytes();
    slot += uint32_t{1} << (depth_ - p->depth);
  }
  return n;
}

uint64_t PackedTable::HashOfEntry(const uint8_t* e) const {
  char scratch[packed::kScratchSize];
  return packed::Hash(packed::View(Page::ItemOf(e, 0), scratch));
}

bool PackedTable::Find(const packed::Probe& probe, Ref* ref) const {
  const uint32_t slot = SlotOf(probe.hash);
  Page* p = dir_[slot];
  if (!p->Find(probe, &ref->pos)) return false;
  ref->page = p;
  ref->slot = slot;
  return true;
}

void PackedTable::Repoint(uint32_t slot, Page* p) {
  const uint32_t first = FirstSlot(slot, p);
  const uint32_t n = uint32_t{1} << (depth_ - p->depth);
  for (uint32_t i = 0; i < n; ++i) dir_[first + i] = p;
}

template <typename At>
void PackedTable::RebuildBounds(At&& at) {
  const uint32_t slots = uint32_t{1} << depth_;
  const uint32_t blocks = (slots + kBoundBlock - 1) / kBoundBlock;
  bound_ = static_cast<int64_t*>(CountedAlloc(sizeof(int64_t) * (slots + blocks)));
  for (uint32_t i = 0; i < slots; ++i) bound_[i] = at(i);
  for (uint32_t b = 0; b < blocks; ++b) RecomputeBlock(b);
}

void PackedTable::RecomputeBlock(uint32_t block) {
  const uint32_t end = std::min(uint32_t{1} << depth_, (block + 1) * kBoundBlock);
  int64_t m = 0;
  for (uint32_t i = block * kBoundBlock; i < end; ++i)
    if (bound_[i] != 0 && (m == 0 || bound_[i] < m)) m = bound_[i];
  block_min()[block] = m;
}

void PackedTable::DoubleDirectory() {
  const uint32_t n = uint32_t{1} << depth_;
  Page** dir = static_cast<Page**>(CountedAlloc(sizeof(Page*) * n * 2));
  for (uint32_t i = 0; i < n; ++i) dir[2 * i] = dir[2 * i + 1] = dir_[i];
  CountedFree(dir_);
  dir_ = dir;
  depth_++;
  pages_at_depth_ = 0;
  if (bound_ != nullptr) {
    int64_t* old = bound_;
    RebuildBounds([&](uint32_t i) { return old[i / 2]; });
    CountedFree(old);
  }
}

void PackedTable::HalveDirectory() {
  const uint32_t n = uint32_t{1} << (depth_ - 1);
  Page** dir = static_cast<Page**>(CountedAlloc(sizeof(Page*) * n));
  for (uint32_t i = 0; i < n; ++i) dir[i] = dir_[2 * i];
  CountedFree(dir_);
  dir_ = dir;
  depth_--;
  if (bound_ != nullptr) {
    int64_t* old = bound_;
    RebuildBounds([&](uint32_t i) { return old[2 * i]; });
    CountedFree(old);
  }
  pages_at_depth_ = 0;
  // max_count_ comes down too (Random rejects less after many deletions).
  max_count_ = 1;
  for (uint32_t slot = 0; slot < n;) {
    const Page* p = dir_[slot];
    if (p->depth == depth_) pages_at_depth_++;
    if (p->count > max_count_) max_count_ = p->count;
    slot += uint32_t{1} << (depth_ - p->depth);
  }
}

void PackedTable::Split(uint32_t slot) {
  Page* p = dir_[slot];
  if (p->depth == depth_) {
    DoubleDirectory();
    slot <<= 1;
  }
  const uint8_t d = p->depth;
  // First the half each entry goes to (its hash's next bit) and the halves'
  // sizes, then each half allocated once at its size and filled: no growth
  // step (reallocation, tags moving the entries) while moving.
  uint64_t stack_bits[16];  // a page under kSplitBytes has at most 1,024 entries
  std::unique_ptr<uint64_t[]> heap_bits;
  uint64_t* bits = stack_bits;
  if (p->count > 64 * std::size(stack_bits)) {
    heap_bits = std::make_unique<uint64_t[]>((p->count + 63) / 64);
    bits = heap_bits.get();
  }
  size_t count[2] = {0, 0}, bytes[2] = {0, 0};
  const uint8_t* e = p->entries();
  for (uint32_t i = 0; i < p->count; ++i) {
    const size_t size = p->EntrySize(e);
    const uint64_t bit = (HashOfEntry(e) >> (63 - d)) & 1;
    if (i % 64 == 0) bits[i / 64] = 0;
    bits[i / 64] |= bit << (i % 64);
    count[bit]++;
    bytes[bit] += size;
    e += size;
  }
  Page* half[2] = {Page::Create(arity_, d + 1, count[0], bytes[0]), Page::Create(arity_, d + 1, count[1], bytes[1])};
  e = p->entries();
  for (uint32_t i = 0; i < p->count; ++i) {
    const size_t size = p->EntrySize(e);
    const int bit = static_cast<int>((bits[i / 64] >> (i % 64)) & 1);
    half[bit]->AppendRawFits(p->tags()[i], e, size);
    e += size;
  }
  const uint32_t first = FirstSlot(slot, p);
  const uint32_t n = uint32_t{1} << (depth_ - d);
  for (uint32_t i = 0; i < n; ++i) dir_[first + i] = half[i < n / 2 ? 0 : 1];
  // Both halves keep the page's bound, which their slots hold already.
  if (d + 1 == depth_) pages_at_depth_ += 2;  // (the halves hold no more than max_count_)
  Page::FreeBlock(p);
}

void PackedTable::MaybeMerge(uint32_t slot) {
  Page* p = dir_[slot];
  if (p->bytes() > kSplitBytes / 4) return;
  while (p->depth > 0) {
    const uint8_t d = p->depth;
    const uint32_t span = uint32_t{1} << (depth_ - d);
    const uint32_t first = FirstSlot(slot, p);
    Page* b = dir_[first ^ span];
    if (b->depth != d || p->bytes() + b->used + b->count > kSplitBytes / 2) break;
    const uint8_t* e = b->entries();
    for (uint32_t i = 0; i < b->count; ++i) {
      const size_t size = b->EntrySize(e);
      p = Page::AppendRaw(p, b->tags()[i], e, size);
      e += size;
    }
    Page::FreeBlock(b);
    if (d == depth_) pages_at_depth_ -= 2;
    p->depth = d - 1;
    if (bound_ != nullptr) {
      // The merged page's bound is the lesser (0 is none).
      const int64_t x = bound_[first], y = bound_[first ^ span];
      SetPageBound(first & ~span, 2 * span, x == 0 ? y : (y == 0 ? x : std::min(x, y)));
    }
    Repoint(first, p);
  }
  if (p->count > max_count_) max_count_ = p->count;  // Random's acceptance needs the true maximum
  Page* shrunk = Page::Shrink(p);
  if (shrunk != p) Repoint(slot, shrunk);
  while (depth_ > 0 && pages_at_depth_ == 0) HalveDirectory();
}

uint32_t PackedTable::MakeRoom(uint64_t hash, size_t size) {
  uint32_t slot = SlotOf(hash);
  const Page* p = dir_[slot];
  // At kMaxDepth a page takes what comes, up to kMaxCount entries (30-bit
  // hash prefixes all equal: not reachable without breaking the hash).
  while (p->count > 0 && p->depth < kMaxDepth &&
         (p->bytes() + size + 1 > kSplitBytes || p->count == Page::kMaxCount)) {
    Split(slot);
    slot = SlotOf(hash);
    p = dir_[slot];
  }
  return slot;
}

void PackedTable::Appended(uint32_t slot, Page* before, Page* after) {
  if (after != before) Repoint(slot, after);
  size_++;
  if (after->count > max_count_) max_count_ = after->count;
}

PackedTable::Ref PackedTable::Insert(const packed::Probe& probe, const packed::ItemPlan* items, int64_t deadline) {
  size_t size = items[0].size + (arity_ == 2 ? items[1].size : 0);
  if (deadline != Page::kNoDeadline) size += packed::kDeadlineSize;
  const uint32_t slot = MakeRoom(probe.hash, size);
  Page* p = dir_[slot];
  Page* np = Page::Append(p, probe.tag(), items, deadline);
  Appended(slot, p, np);
  if (deadline != Page::kNoDeadline) LowerBound(slot, deadline);
  return Ref{np, Page::Pos{np->count - 1u, np->used - static_cast<uint32_t>(size)}, slot};
}

void PackedTable::InsertRaw(uint64_t hash, const uint8_t* entry, size_t size) {
  const uint32_t slot = MakeRoom(hash, size);
  Page* p = dir_[slot];
  Appended(slot, p, Page::AppendRaw(p, static_cast<uint8_t>(hash), entry, size));
  const int64_t d = Page::DeadlineOfEntry(entry);
  if (d != Page::kNoDeadline) LowerBound(slot, d);
}

void PackedTable::LowerBound(uint32_t slot, int64_t ms) {
  if (bound_ == nullptr) RebuildBounds([](uint32_t) { return int64_t{0}; });
  if (bound_[slot] != 0 && bound_[slot] <= ms) return;
  const Page* p = dir_[slot];
  const uint32_t first = FirstSlot(slot, p);
  const uint32_t span = uint32_t{1} << (depth_ - p->depth);
  for (uint32_t i = first; i < first + span; ++i) bound_[i] = ms;
  for (uint32_t b = first / kBoundBlock; b <= (first + span - 1) / kBoundBlock; ++b)
    if (int64_t& m = block_min()[b]; m == 0 || ms < m) m = ms;
}

void PackedTable::SetPageBound(uint32_t first, uint32_t span, int64_t ms) {
  for (uint32_t i = first; i < first + span; ++i) bound_[i] = ms;
  for (uint32_t b = first / kBoundBlock; b <= (first + span - 1) / kBoundBlock; ++b) RecomputeBlock(b);
}

int64_t PackedTable::MinDeadline() const {
  if (bound_ == nullptr) return 0;
  int64_t m = 0;
  const uint32_t blocks = ((uint32_t{1} << depth_) + kBoundBlock - 1) / kBoundBlock;
  for (uint32_t b = 0; b < blocks; ++b)
    if (const int64_t b_min = block_min()[b]; b_min != 0 && (m == 0 || b_min < m)) m = b_min;
  return m;
}

void PackedTable::Erase(const Ref& ref) {
  ref.page->Erase(ref.pos);
  size_--;
  MaybeMerge(ref.slot);
}

void PackedTable::ReplaceItem(Ref* ref, int which, const packed::ItemPlan& plan) {
  Page* np = Page::ReplaceItem(ref->page, ref->pos, which, plan);
  if (np != ref->page) Repoint(ref->slot, np);
  ref->page = np;
  // Values that grew in place may leave a page far past the split size;
  // split it now so that moving its entries stays cheap.
  if (np->bytes() > 2 * kSplitBytes && np->count > 1 && np->depth < kMaxDepth) {
    Split(ref->slot);
    ref->page = nullptr;
  }
}

void PackedTable::SetDeadline(Ref* ref, int64_t ms) {
  Page* np = Page::SetDeadline(ref->page, ref->pos, ms);
  if (np != ref->page) Repoint(ref->slot, np);
  ref->page = np;
  if (ms != Page::kNoDeadline) LowerBound(ref->slot, ms);
}

PackedTable::Ref PackedTable::Random(std::mt19937_64& rng) const {
  // One draw of the caller's generator seeds a SplitMix64 stream for the
  // tries: rejection takes a few, and an mt19937_64 draw costs several
  // times a SplitMix64 step (SPOP's profile).
  uint64_t state = rng();
  auto next = [&state] { return SplitMix64(state); };
  const uint32_t mask = (uint32_t{1} << depth_) - 1;
  for (int tries = 0; tries < 200; ++tries) {
    const uint64_t r = next();
    const uint32_t slot = static_cast<uint32_t>(r) & mask;  // the low bits (depth_ <= 32)
    Page* p = dir_[slot];
    if (p->count == 0) continue;
    // A page of depth d is drawn with probability 2^-d (2^(D-d) of the
    // 2^D slots); accepting it with probability count * 2^(d-D) / max_count_
    // makes the pick proportional to its count: every entry equally likely.
    // In integers: u / 2^32 < count / (max_count_ << (D-d)), u the high bits.
    const uint64_t u = r >> 32;
    const uint64_t scale = uint64_t{max_count_} << (depth_ - p->depth);
    if (static_cast<unsigned __int128>(u) * scale >= static_cast<unsigned __int128>(p->count) << 32) continue;
    const uint32_t index = static_cast<uint32_t>(next() % p->count);
    return Ref{p, p->PosOf(index), slot};
  }
  // Unlucky (or max_count_ stale after many deletions): the first page with
  // entries from a random slot on.
  uint32_t slot = static_cast<uint32_t>(next()) & mask;
  while (dir_[slot]->count == 0) slot = (slot + 1) & mask;
  Page* p = dir_[slot];
  const uint32_t index = static_cast<uint32_t>(next() % p->count);
  return Ref{p, p->PosOf(index), slot};
}

std::string PackedTable::Validate() const {
  size_t total = 0;
  uint32_t at_depth = 0;
  for (uint32_t slot = 0; slot < (uint32_t{1} << depth_);) {
    const Page* p = dir_[slot];
    if (p->depth > depth_) return "page deeper than the directory at slot " + std::to_string(slot);
    if (p->arity != arity_) return "page arity";
    const uint32_t n = uint32_t{1} << (depth_ - p->depth);
    if (slot % n != 0) return "page range misaligned at slot " + std::to_string(slot);
    for (uint32_t i = 0; i < n; ++i)
      if (dir_[slot + i] != p) return "slot " + std::to_string(slot + i) + " does not point to its page";
    if (p->depth == depth_) at_depth++;
    const uint8_t* e = p->entries();
    const uint8_t* end = e + p->used;
    uint32_t count = 0;
    for (; e < end; e += p->EntrySize(e), ++count) {
      const uint64_t h = HashOfEntry(e);
      if (p->tags()[count] != static_cast<uint8_t>(h)) return "tag mismatch";
      if (SlotOf(h) / n != slot / n) return "entry outside its page's range";
    }
    if (e != end) return "entries overrun the page";
    for (const uint8_t* x = p->entries(); x < end; x += p->EntrySize(x)) {
      const int64_t d = Page::DeadlineOfEntry(x);
      if (d == Page::kNoDeadline) continue;
      if (bound_ == nullptr || bound_[slot] == 0 || bound_[slot] > d) return "page bound above a deadline";
    }
    if (bound_ != nullptr)
      for (uint32_t i = 1; i < n; ++i)
        if (bound_[slot + i] != bound_[slot]) return "page bound differs between its slots";
    if (count != p->count) return "page count mismatch";
    if (count > max_count_) return "page holds more than max_count_";
    if (p->tag_cap < p->count) return "tag room";
    total += count;
    slot += n;
  }
  if (total != size_) return "size mismatch";
  if (bound_ != nullptr) {
    const uint32_t slots = uint32_t{1} << depth_;
    for (uint32_t b = 0; b * kBoundBlock < slots; ++b) {
      int64_t m = 0;
      for (uint32_t i = b * kBoundBlock; i < std::min(slots, (b + 1) * kBoundBlock); ++i)
        if (bound_[i] != 0 && (m == 0 || bound_[i] < m)) m = bound_[i];
      if (block_min()[b] != m) return "block bound mismatch";
    }
  }
  if (at_depth != pages_at_depth_) return "pages_at_depth mismatch";
  if (depth_ > 0 && at_depth == 0) return "directory could halve";
  return "";
}

std::string PackedTable::StatsText(bool full) const {
  if (size_ == 0) return "No stats available for empty dictionaries\n";
  size_t pages = 0, bytes = 0, max_count = 0;
  std::vector<size_t> by_count;  // pages by their entries, in steps of 8
  for (uint32_t slot = 0; slot < (uint32_t{1} << depth_);) {
    const Page* p = dir_[slot];
    pages++;
    bytes += p->bytes();
    max_count = std::max<size_t>(max_count, p->count);
    const size_t bucket = p->count / 8;
    if (by_count.size() <= bucket) by_count.resize(bucket + 1);
    by_count[bucket]++;
    slot += uint32_t{1} << (depth_ - p->depth);
  }
  // (Redis's dictGetStats lines where they mean the same; then the table's own.)
  std::string out = "Hash table 0 stats (main hash table):\n";
  out += " table size: " + std::to_string(uint64_t{1} << depth_) + "\n";
  out += " number of elements: " + std::to_string(size_) + "\n";
  out += " pages: " + std::to_string(pages) + "\n";
  out += " bytes in pages: " + std::to_string(bytes) + "\n";
  out += " max entries in a page: " + std::to_string(max_count) + "\n";
  if (full) {
    out += " Entries per page distribution:\n";
    for (size_t b = 0; b < by_count.size(); b++) {
      if (by_count[b] == 0) continue;
      char line[96];
      snprintf(line, sizeof(line), "   %zu-%zu: %zu (%.02f%%)\n", b * 8, b * 8 + 7, by_count[b],
               100.0 * static_cast<double>(by_count[b]) / static_cast<double>(pages));
      out += line;
    }
  }
  return out;
}

}  // namespace peregrine
