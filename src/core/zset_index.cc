// The sorted set index (see zset_index.h).
#include "core/zset_index.h"

#include <utility>

#include "core/memory.h"

namespace peregrine {

namespace {

uint32_t Chunks(uint32_t groups, uint32_t per) { return (groups + per - 1) / per; }

}  // namespace

ZIndex::ZIndex(ZIndex&& other) noexcept : cur_(other.cur_), next_(other.next_), size_(other.size_) {
  other.cur_ = Table();
  other.next_ = Table();
  other.size_ = 0;
}

ZIndex& ZIndex::operator=(ZIndex&& other) noexcept {
  std::swap(cur_, other.cur_);
  std::swap(next_, other.next_);
  std::swap(size_, other.size_);
  return *this;
}

void ZIndex::Table::Release() {
  if (chunks == nullptr) return;
  for (uint32_t c = 0; c < ready; ++c) CountedFree(chunks[c]);
  CountedFree(chunks);
  chunks = nullptr;
  groups = ready = 0;
}

void ZIndex::Table::Reserve(uint64_t n) {
  assert(n * kSlots <= UINT32_MAX / 2);  // slot numbers are g * 8 + j
  Release();
  if (n == 0) return;
  // Past one chunk, whole chunks (the groups they hold are all used).
  if (n > kChunkGroups) n = (n + kChunkGroups - 1) / kChunkGroups * kChunkGroups;
  groups = static_cast<uint32_t>(n);
  chunks = static_cast<Group**>(CountedAlloc(sizeof(Group*) * Chunks(groups, kChunkGroups)));
}

bool ZIndex::Table::AllocateSome(size_t n) {
  const uint32_t k = Chunks(groups, kChunkGroups);
  for (; n > 0 && ready < k; --n, ++ready) {
    const uint32_t in = ready + 1 < k ? kChunkGroups : groups - ready * kChunkGroups;
    chunks[ready] = static_cast<Group*>(CountedCallocAligned(sizeof(Group) * in, 64));
  }
  return ready == k;
}

size_t ZIndex::Table::Bytes() const {
  if (chunks == nullptr) return 0;
  size_t total = CountedUsableSize(chunks);
  for (uint32_t c = 0; c < ready; ++c) total += CountedUsableSize(chunks[c]);
  return total;
}

void ZIndex::Table::Place(uint64_t hash, double score) {
  for (uint32_t g = Home(hash);; g = NextGroup(g)) {
    Group& grp = group(g);
    for (uint32_t j = 0; j < kSlots; ++j) {
      if (grp.tag[j] == 0) {
        grp.tag[j] = Tag(hash);
        grp.score[j] = score;
        return;
      }
    }
    if (grp.overflow < 255) grp.overflow++;  // 255 stays: the count is lost until the next move
  }
}

void ZIndex::Table::Clear(uint64_t hash, uint32_t slot) {
  const uint32_t at = slot / 8;
  group(at).tag[slot % 8] = 0;
  for (uint32_t g = Home(hash); g != at; g = NextGroup(g)) {
    Group& grp = group(g);
    if (grp.overflow < 255) grp.overflow--;
  }
}

uint64_t ZIndex::Table::CountTags() const {
  uint64_t n = 0;
  if (ready < Chunks(groups, kChunkGroups)) return 0;  // a new table, before the walk
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t j = 0; j < kSlots; ++j) n += group(g).tag[j] != 0;
  return n;
}

ZIndex ZIndex::Clone() const {
  ZIndex c;
  if (cur_.groups == 0) return c;
  c.cur_.Allocate(cur_.groups);
  for (uint32_t g = 0; g < cur_.groups; g += kChunkGroups) {
    const uint32_t k = cur_.groups - g < kChunkGroups ? cur_.groups - g : kChunkGroups;
    std::memcpy(c.cur_.chunks[g / kChunkGroups], cur_.chunks[g / kChunkGroups], sizeof(Group) * k);
  }
  c.size_ = size_;
  return c;
}

void ZIndex::ChangeScore(uint64_t hash, uint32_t slot, double old, double now, bool moved_old, bool moved_now) {
  assert(!std::isnan(now));
  cur_.group(slot / 8).score[slot % 8] = now;
  if (!moving()) return;
  if (moved_old && moved_now) {
    const uint32_t s = next_.SlotOf(hash, old);
    next_.group(s / 8).score[s % 8] = now;
  } else if (moved_old) {
    next_.Clear(hash, next_.SlotOf(hash, old));
  } else if (moved_now) {
    next_.Place(hash, now);
  }
}

void ZIndex::EraseSlot(uint64_t hash, uint32_t slot, double score, bool moved) {
  cur_.Clear(hash, slot);
  if (moved && moving()) next_.Clear(hash, next_.SlotOf(hash, score));
  size_--;
}

void ZIndex::StartMove(uint64_t groups) {
  assert(!moving() && groups > 0);
  next_.Reserve(groups);
}

void ZIndex::FinishMove() {
  assert(next_.ready == Chunks(next_.groups, kChunkGroups));
  cur_.Release();
  cur_ = next_;
  next_ = Table();
}

}  // namespace peregrine
