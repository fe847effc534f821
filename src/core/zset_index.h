// ZIndex: a large sorted set's member → score lookup that keeps no copy of
// the member. The members live once, in the tree (core/zset_tree.h); here
// each has a slot of its score and an 8-bit tag of its hash. A lookup
// probes the slots of the member's tag and asks the caller to confirm a
// candidate score (by finding (score, member) in the tree), so a tag
// shared by two members costs a second look (1 in 256), never a wrong
// answer.
//
// Slots come in 64-byte groups (a cache line): 7 tags, an overflow count,
// 7 scores — 9.1 bytes a slot. A member's home group is its hash scaled to
// the table (fastrange); a full group passes it on to the next, and counts
// the members that went past it, so a lookup stops at the first group that
// passed none on, and a removal just clears its tag and counts down the
// groups before it (no tombstones, no shifting). Groups tolerate a high
// load: the table grows by half at 7/8 full and halves under 1/5.
//
// The slots keep too little of a hash to move a member to a new table, so
// resizing rebuilds from the caller's walk of its members (each(f) calls
// f(hash, score) for every one). The groups are in chunks of 32 KB: a
// rebuild frees the old chunks first and the new ones take their place in
// the allocator, so growing neither holds two tables at once nor leaves a
// freed table's pages behind in RSS. Not thread-safe, like everything in
// core/.
#pragma once

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace peregrine {

class ZIndex {
 public:
  ZIndex() = default;
  ~ZIndex() { Release(); }
  ZIndex(ZIndex&& other) noexcept;
  ZIndex& operator=(ZIndex&& other) noexcept;
  ZIndex(const ZIndex&) = delete;
  ZIndex& operator=(const ZIndex&) = delete;
  ZIndex Clone() const;

  size_t size() const { return size_; }
  size_t capacity() const { return size_t{groups_} * kSlots; }
  size_t AllocatedBytes() const;

  // A member's slot (kNone if absent): is_it(score) says whether a
  // candidate is the member.
  static constexpr uint32_t kNone = UINT32_MAX;
  template <typename IsIt>
  uint32_t FindSlot(uint64_t hash, IsIt&& is_it) const {
    if (size_ == 0) return kNone;
    const uint8_t tag = Tag(hash);
    // At most once round the table: in a small one every group may have
    // passed members on (round the end too), and none stops the probe.
    uint32_t g = Home(hash);
    for (uint32_t n = 0; n < groups_; ++n, g = NextGroup(g)) {
      const Group& grp = group(g);
      for (uint64_t m = grp.Match(tag); m != 0; m &= m - 1) {
        const uint32_t j = static_cast<uint32_t>(__builtin_ctzll(m)) / 8;
        if (grp.tag[j] == tag && is_it(grp.score[j])) return g * 8 + j;
      }
      if (grp.overflow == 0) return kNone;
    }
    return kNone;
  }
  // The member's score; false if it is not here.
  template <typename IsIt>
  bool Find(uint64_t hash, IsIt&& is_it, double* score) const {
    const uint32_t s = FindSlot(hash, is_it);
    if (s == kNone) return false;
    *score = ScoreAt(s);
    return true;
  }
  double ScoreAt(uint32_t slot) const { return group(slot / 8).score[slot % 8]; }
  void SetScore(uint32_t slot, double score) {
    assert(!std::isnan(score));
    group(slot / 8).score[slot % 8] = score;
  }

  // Files a member's score. REQUIRES: the member is not here; the score is
  // not NaN. A resize rebuilds from each (the members here before this one).
  template <typename Each>
  void Insert(uint64_t hash, double score, Each&& each) {
    assert(!std::isnan(score));
    if (uint64_t{size_ + 1} * 8 > uint64_t{groups_} * kSlots * 7) {
      const uint64_t groups = groups_ < 2 ? 2 : uint64_t{groups_} + groups_ / 2;
      Rebuild(groups, each);
    }
    Place(hash, score);
    size_++;
  }
  // Removes the member in `slot` (from FindSlot with this hash). A resize
  // rebuilds from each (the members left: call it after the tree lost it).
  template <typename Each>
  void EraseSlot(uint64_t hash, uint32_t slot, Each&& each) {
    Clear(hash, slot);
    size_--;
    if (groups_ > 2 && uint64_t{size_} * 5 < capacity()) Rebuild(groups_ / 2, each);
  }

  // Checks the structure (tests): the count, and every member of `each`
  // found with its score.
  template <typename Each>
  bool Validate(Each&& each) const {
    uint64_t n = 0;
    bool ok = true;
    each([&](uint64_t hash, double score) {
      ok = ok && FindSlot(hash, [score](double s) { return s == score; }) != kNone;
      n++;
    });
    return ok && n == size_ && CountTags() == size_ && (size_ == 0 || size_ < capacity());
  }

 private:
  static constexpr uint32_t kSlots = 7;          // per group
  static constexpr uint32_t kChunkGroups = 512;  // 32 KB chunks
  struct Group {
    uint8_t tag[kSlots];  // 0: empty
    uint8_t overflow;     // members homed before this group placed after it (255: stuck)
    double score[kSlots];
    // Bits 8j+7 set for slots j whose tag may be `t` (a candidate: checked).
    // Never the overflow byte (byte 7), whatever it holds: a tag of 0xFF
    // would otherwise match an overflow count of 255.
    uint64_t Match(uint8_t t) const {
      uint64_t w;
      std::memcpy(&w, tag, 8);
      const uint64_t x = w ^ (0x0101010101010101ull * t);
      return (x - 0x0101010101010101ull) & ~x & 0x0080808080808080ull;
    }
  };
  static_assert(sizeof(Group) == 64);

  static uint8_t Tag(uint64_t hash) {
    const uint8_t t = static_cast<uint8_t>(hash);
    return t == 0 ? 1 : t;
  }
  uint32_t Home(uint64_t hash) const { return static_cast<uint32_t>(((hash >> 32) * groups_) >> 32); }
  uint32_t NextGroup(uint32_t g) const { return g + 1 == groups_ ? 0 : g + 1; }
  Group& group(uint32_t g) const { return chunks_[g / kChunkGroups][g % kChunkGroups]; }

  template <typename Each>
  void Rebuild(uint64_t groups, Each& each) {
    Allocate(groups);
    each([this](uint64_t hash, double score) { Place(hash, score); });
  }
  // Frees the table and makes an empty one of `groups` groups.
  void Allocate(uint64_t groups);
  void Release();
  void Place(uint64_t hash, double score);
  void Clear(uint64_t hash, uint32_t slot);
  uint64_t CountTags() const;

  Group** chunks_ = nullptr;
  uint32_t groups_ = 0;
  uint32_t size_ = 0;
};

}  // namespace peregrine
