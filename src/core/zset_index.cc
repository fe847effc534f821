// The sorted set index (see zset_index.h).
#include "core/zset_index.h"

#include <utility>

#include "core/memory.h"

namespace peregrine {

namespace {

uint32_t Chunks(uint32_t groups, uint32_t per) { return (groups + per - 1) / per; }

}  // namespace

ZIndex::ZIndex(ZIndex&& other) noexcept : chunks_(other.chunks_), groups_(other.groups_), size_(other.size_) {
  other.chunks_ = nullptr;
  other.groups_ = other.size_ = 0;
}

ZIndex& ZIndex::operator=(ZIndex&& other) noexcept {
  std::swap(chunks_, other.chunks_);
  std::swap(groups_, other.groups_);
  std::swap(size_, other.size_);
  return *this;
}

void ZIndex::Release() {
  if (chunks_ == nullptr) return;
  for (uint32_t c = 0; c < Chunks(groups_, kChunkGroups); ++c) CountedFree(chunks_[c]);
  CountedFree(chunks_);
  chunks_ = nullptr;
  groups_ = 0;
}

void ZIndex::Allocate(uint64_t groups) {
  assert(groups * kSlots <= UINT32_MAX / 2);  // slot numbers are g * 8 + j
  Release();
  // Past one chunk, whole chunks (the groups they hold are all used).
  if (groups > kChunkGroups) groups = (groups + kChunkGroups - 1) / kChunkGroups * kChunkGroups;
  groups_ = static_cast<uint32_t>(groups);
  const uint32_t n = Chunks(groups_, kChunkGroups);
  chunks_ = static_cast<Group**>(CountedAlloc(sizeof(Group*) * n));
  for (uint32_t c = 0; c < n; ++c) {
    const uint32_t k = c + 1 < n ? kChunkGroups : groups_ - c * kChunkGroups;
    chunks_[c] = static_cast<Group*>(CountedCallocAligned(sizeof(Group) * k, 64));
  }
}

ZIndex ZIndex::Clone() const {
  ZIndex c;
  if (groups_ == 0) return c;
  c.Allocate(groups_);
  for (uint32_t g = 0; g < groups_; g += kChunkGroups) {
    const uint32_t k = groups_ - g < kChunkGroups ? groups_ - g : kChunkGroups;
    std::memcpy(c.chunks_[g / kChunkGroups], chunks_[g / kChunkGroups], sizeof(Group) * k);
  }
  c.size_ = size_;
  return c;
}

size_t ZIndex::AllocatedBytes() const {
  if (chunks_ == nullptr) return 0;
  size_t total = CountedUsableSize(chunks_);
  for (uint32_t c = 0; c < Chunks(groups_, kChunkGroups); ++c) total += CountedUsableSize(chunks_[c]);
  return total;
}

void ZIndex::Place(uint64_t hash, double score) {
  for (uint32_t g = Home(hash);; g = NextGroup(g)) {
    Group& grp = group(g);
    for (uint32_t j = 0; j < kSlots; ++j) {
      if (grp.tag[j] == 0) {
        grp.tag[j] = Tag(hash);
        grp.score[j] = score;
        return;
      }
    }
    if (grp.overflow < 255) grp.overflow++;  // 255 stays: the count is lost until a rebuild
  }
}

void ZIndex::Clear(uint64_t hash, uint32_t slot) {
  const uint32_t at = slot / 8;
  group(at).tag[slot % 8] = 0;
  for (uint32_t g = Home(hash); g != at; g = NextGroup(g)) {
    Group& grp = group(g);
    if (grp.overflow < 255) grp.overflow--;
  }
}

uint64_t ZIndex::CountTags() const {
  uint64_t n = 0;
  for (uint32_t g = 0; g < groups_; ++g)
    for (uint32_t j = 0; j < kSlots; ++j) n += group(g).tag[j] != 0;
  return n;
}

}  // namespace peregrine
