// The sorted set index (see zset_index.h).
#include "core/zset_index.h"

#include <utility>

#include "core/memory.h"

namespace peregrine {

ZIndex::~ZIndex() {
  if (slots_ != nullptr) CountedFree(slots_);
}

ZIndex::ZIndex(ZIndex&& other) noexcept : slots_(other.slots_), cap_(other.cap_), size_(other.size_) {
  other.slots_ = nullptr;
  other.cap_ = other.size_ = 0;
}

ZIndex& ZIndex::operator=(ZIndex&& other) noexcept {
  std::swap(slots_, other.slots_);
  std::swap(cap_, other.cap_);
  std::swap(size_, other.size_);
  return *this;
}

ZIndex ZIndex::Clone() const {
  ZIndex c;
  if (cap_ == 0) return c;
  c.slots_ = static_cast<Slot*>(CountedAlloc(sizeof(Slot) * cap_));
  std::memcpy(c.slots_, slots_, sizeof(Slot) * cap_);
  c.cap_ = cap_;
  c.size_ = size_;
  return c;
}

size_t ZIndex::AllocatedBytes() const { return slots_ == nullptr ? 0 : CountedUsableSize(slots_); }

void ZIndex::Place(uint32_t frag, double score) {
  uint32_t i = Home(frag);
  while (!slots_[i].empty()) i = NextSlot(i);
  slots_[i].frag = frag;
  slots_[i].set_score(score);
}

void ZIndex::Resize(uint32_t cap) {
  Slot* old = slots_;
  const uint32_t old_cap = cap_;
  slots_ = static_cast<Slot*>(CountedAlloc(sizeof(Slot) * cap));
  cap_ = cap;
  for (uint32_t i = 0; i < cap; ++i) slots_[i].clear();
  for (uint32_t i = 0; i < old_cap; ++i)
    if (!old[i].empty()) Place(old[i].frag, old[i].score());
  if (old != nullptr) CountedFree(old);
}

void ZIndex::Insert(uint64_t hash, double score) {
  assert(!std::isnan(score));
  // Grow by half past 80% load (8 slots at first), up to the 32-bit count.
  if (uint64_t{size_ + 1} * 5 > uint64_t{cap_} * 4) {
    const uint64_t cap = cap_ < 8 ? 8 : uint64_t{cap_} + cap_ / 2;
    assert(cap <= UINT32_MAX);
    Resize(static_cast<uint32_t>(cap));
  }
  Place(Frag(hash), score);
  size_++;
}

void ZIndex::EraseSlot(uint32_t i) {
  // Shift back each following slot that may move to the hole: one whose
  // home is not in the cyclic range (hole, slot].
  for (uint32_t j = NextSlot(i); !slots_[j].empty(); j = NextSlot(j)) {
    const uint32_t h = Home(slots_[j].frag);
    const bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i].clear();
  size_--;
  // Halve under 20% load, down to 8 slots.
  if (cap_ > 8 && uint64_t{size_} * 5 < cap_) Resize(cap_ / 2 < 8 ? 8 : cap_ / 2);
}

bool ZIndex::Validate() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < cap_; ++i) {
    if (slots_[i].empty()) continue;
    n++;
    // No empty slot between its home and it.
    for (uint32_t k = Home(slots_[i].frag); k != i; k = NextSlot(k))
      if (slots_[k].empty()) return false;
  }
  return n == size_ && (cap_ == 0 || size_ < cap_);
}

}  // namespace peregrine
