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
// groups before it (no tombstones, no shifting).
//
// Two slots of one tag and one score on a member's probe run are as good as
// each other: whichever a lookup finds, the lookups and the overflow counts
// stay right (the other member's run reaches the slot too). So a slot is
// found again by (tag, score) where no confirmation is to be had.
//
// Resizing is incremental, as Redis rehashes its dicts: the slots keep too
// little of a hash to move a member, so the caller walks its members (in
// the tree's order, a few per write and the rest between events) and hands
// each to Move(); meanwhile lookups use the old table, which takes every
// insert and removal, and the new one also takes those of the members the
// walk has passed (the caller says which: `moved`). The table grows by half
// from 13/16 full; a move of 16 members per write is done long before the
// old table is 7/8 full (the most it holds). It halves under 1/5. The
// groups are in chunks of 8 KB, which a move allocates a few at a time.
// Not thread-safe, like everything in core/.
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
  ~ZIndex() {
    cur_.Release();
    next_.Release();
  }
  ZIndex(ZIndex&& other) noexcept;
  ZIndex& operator=(ZIndex&& other) noexcept;
  ZIndex(const ZIndex&) = delete;
  ZIndex& operator=(const ZIndex&) = delete;
  // A copy of the lookup table (a move under way is not copied: the copy
  // starts its own when next written).
  ZIndex Clone() const;

  size_t size() const { return size_; }
  size_t capacity() const { return cur_.capacity(); }
  size_t AllocatedBytes() const { return cur_.Bytes() + next_.Bytes(); }

  // A member's slot (kNone if absent): is_it(score) says whether a
  // candidate is the member.
  static constexpr uint32_t kNone = UINT32_MAX;
  template <typename IsIt>
  uint32_t FindSlot(uint64_t hash, IsIt&& is_it) const {
    return size_ == 0 ? kNone : cur_.FindSlot(hash, is_it);
  }
  // The member's score; false if it is not here.
  template <typename IsIt>
  bool Find(uint64_t hash, IsIt&& is_it, double* score) const {
    const uint32_t s = FindSlot(hash, is_it);
    if (s == kNone) return false;
    *score = ScoreAt(s);
    return true;
  }
  double ScoreAt(uint32_t slot) const { return cur_.group(slot / 8).score[slot % 8]; }

  // Files a member's score. REQUIRES: the member is not here; the score is
  // not NaN; !MustGrow() (grow, or finish the move, first).
  void Insert(uint64_t hash, double score, bool moved) {
    assert(!std::isnan(score) && !MustGrow());
    cur_.Place(hash, score);
    if (moved && moving()) next_.Place(hash, score);
    size_++;
  }
  // Changes the score of the member in `slot` (from FindSlot with this
  // hash) from `old`; moved_old / moved_now: whether the move has passed
  // the member at its old and its new place in the caller's order.
  void ChangeScore(uint64_t hash, uint32_t slot, double old, double now, bool moved_old, bool moved_now);
  // Removes the member in `slot` (from FindSlot with this hash) whose
  // score is `score`.
  void EraseSlot(uint64_t hash, uint32_t slot, double score, bool moved);

  // Resizing. The groups a move should start for (0: none): before an
  // insert when the table is 13/16 full (or has no room), after a removal
  // when it is under 1/5 full.
  uint64_t GrowTarget() const {
    if (uint64_t{size_ + 1} * 16 <= uint64_t{cur_.groups} * kSlots * 13) return 0;
    return cur_.groups < 2 ? 2 : uint64_t{cur_.groups} + cur_.groups / 2;
  }
  uint64_t ShrinkTarget() const {
    return cur_.groups > 2 && uint64_t{size_} * 5 < capacity() ? cur_.groups / 2 : 0;
  }
  // Whether an insert must wait for the move to finish (the old table is
  // 7/8 full: the moves per write were too few, or none started).
  bool MustGrow() const { return uint64_t{size_ + 1} * 8 > uint64_t{cur_.groups} * kSlots * 7; }
  bool moving() const { return next_.groups != 0; }
  // Starts a move to a table of `groups` groups, whose chunks PrepareMove
  // then allocates (zeroing tens of MB at once would stall the caller).
  void StartMove(uint64_t groups);
  // Allocates up to `chunks` more of the new table's chunks; true once it
  // has them all.
  bool PrepareMove(size_t chunks) { return next_.AllocateSome(chunks); }
  // A member the caller's walk passed (it was not moved before).
  // REQUIRES: PrepareMove returned true.
  void Move(uint64_t hash, double score) { next_.Place(hash, score); }
  // After the walk passed the last member: the new table takes over.
  void FinishMove();

  // Checks the structure (tests): each(f) calls f(hash, score, moved) for
  // every member; each is in the table with its score, and in the new one
  // when moved (and no others are there).
  template <typename Each>
  bool Validate(Each&& each) const {
    uint64_t n = 0, moved_n = 0;
    bool ok = true;
    each([&](uint64_t hash, double score, bool moved) {
      ok = ok && cur_.FindSlot(hash, [score](double s) { return s == score; }) != kNone;
      if (moved && moving()) {
        ok = ok && next_.FindSlot(hash, [score](double s) { return Same(s, score); }) != kNone;
        moved_n++;
      }
      n++;
    });
    return ok && n == size_ && cur_.CountTags() == size_ && (size_ == 0 || size_ < capacity()) &&
           (!moving() || next_.CountTags() == moved_n);
  }

 private:
  static constexpr uint32_t kSlots = 7;          // per group
  static constexpr uint32_t kChunkGroups = 128;  // 8 KB chunks
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
  // The same score bit for bit (-0 is not 0: ZSCORE tells them apart).
  static bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

  // One table of groups.
  struct Table {
    Group** chunks = nullptr;
    uint32_t groups = 0;
    uint32_t ready = 0;  // chunks allocated (all but in a move's new table)

    size_t capacity() const { return size_t{groups} * kSlots; }
    uint32_t Home(uint64_t hash) const { return static_cast<uint32_t>(((hash >> 32) * groups) >> 32); }
    uint32_t NextGroup(uint32_t g) const { return g + 1 == groups ? 0 : g + 1; }
    Group& group(uint32_t g) const { return chunks[g / kChunkGroups][g % kChunkGroups]; }
    template <typename IsIt>
    uint32_t FindSlot(uint64_t hash, IsIt&& is_it) const {
      if (groups == 0) return kNone;
      const uint8_t tag = Tag(hash);
      // At most once round the table: in a small one every group may have
      // passed members on (round the end too), and none stops the probe.
      uint32_t g = Home(hash);
      for (uint32_t n = 0; n < groups; ++n, g = NextGroup(g)) {
        const Group& grp = group(g);
        for (uint64_t m = grp.Match(tag); m != 0; m &= m - 1) {
          const uint32_t j = static_cast<uint32_t>(__builtin_ctzll(m)) / 8;
          if (grp.tag[j] == tag && is_it(grp.score[j])) return g * 8 + j;
        }
        if (grp.overflow == 0) return kNone;
      }
      return kNone;
    }
    // The slot of a member known to be here by its score.
    uint32_t SlotOf(uint64_t hash, double score) const {
      auto same = [score](double s) { return Same(s, score); };
      const uint32_t slot = FindSlot(hash, same);
      assert(slot != kNone);
      return slot;
    }
    // An empty table of `groups` groups (none for 0), with no chunks yet
    // (AllocateSome makes them).
    void Reserve(uint64_t groups);
    bool AllocateSome(size_t n);
    void Allocate(uint64_t groups) {
      Reserve(groups);
      AllocateSome(SIZE_MAX);
    }
    void Release();
    size_t Bytes() const;
    void Place(uint64_t hash, double score);
    void Clear(uint64_t hash, uint32_t slot);
    uint64_t CountTags() const;
  };

  Table cur_;   // lookups, every member
  Table next_;  // while moving: the members the walk passed
  uint32_t size_ = 0;
};

}  // namespace peregrine
