// ZIndex: a large sorted set's member → score lookup that keeps no copy of
// the member. The members live once, in the tree (core/zset_tree.h); here
// each has a 12-byte slot: 32 bits of its hash and its score. A lookup
// probes the slots of the member's hash and asks the caller to confirm a
// candidate score (by finding (score, member) in the tree), so a fragment
// shared by two members costs a second look, never a wrong answer.
//
// Open addressing with linear probing; a slot's home is the fragment scaled
// to the table (fastrange), so the table resizes from the fragments alone
// and to any size: it grows by half at 80% load and halves under 20%.
// Removal shifts the following slots back (no tombstones). An empty slot
// holds a NaN score, which no member can have. Not thread-safe, like
// everything in core/.
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
  ~ZIndex();
  ZIndex(ZIndex&& other) noexcept;
  ZIndex& operator=(ZIndex&& other) noexcept;
  ZIndex(const ZIndex&) = delete;
  ZIndex& operator=(const ZIndex&) = delete;
  ZIndex Clone() const;

  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  size_t AllocatedBytes() const;

  // The score of the member whose 64-bit hash is `hash`: is_it(score) says
  // whether a candidate is the member. False if none is.
  template <typename IsIt>
  bool Find(uint64_t hash, IsIt&& is_it, double* score) const {
    const uint32_t i = Probe(hash, is_it);
    if (i == kNotFound) return false;
    *score = slots_[i].score();
    return true;
  }
  // Files a member's score. REQUIRES: the member is not here; the score is
  // not NaN.
  void Insert(uint64_t hash, double score);
  // Changes the member's score / removes it; false if it is not here.
  // is_it is asked about the member's current score: call these before the
  // tree changes.
  template <typename IsIt>
  bool Update(uint64_t hash, IsIt&& is_it, double score) {
    assert(!std::isnan(score));
    const uint32_t i = Probe(hash, is_it);
    if (i == kNotFound) return false;
    slots_[i].set_score(score);
    return true;
  }
  template <typename IsIt>
  bool Erase(uint64_t hash, IsIt&& is_it) {
    const uint32_t i = Probe(hash, is_it);
    if (i == kNotFound) return false;
    EraseSlot(i);
    return true;
  }

  // Checks the structure (tests): every slot reachable from its home.
  bool Validate() const;

 private:
  static constexpr uint32_t kNotFound = UINT32_MAX;
  struct Slot {
    uint32_t frag;
    uint32_t bits[2];  // the score's bits (4-byte aligned: 12-byte slots)
    double score() const {
      double s;
      std::memcpy(&s, bits, 8);
      return s;
    }
    void set_score(double s) { std::memcpy(bits, &s, 8); }
    // The empty slot's score: a NaN (ZADD refuses NaN scores).
    static constexpr uint32_t kEmptyLo = 0xE3u, kEmptyHi = 0x7FF80000u;
    bool empty() const { return bits[0] == kEmptyLo && bits[1] == kEmptyHi; }
    void clear() {
      frag = 0;
      bits[0] = kEmptyLo;
      bits[1] = kEmptyHi;
    }
  };
  static_assert(sizeof(Slot) == 12);

  static uint32_t Frag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  uint32_t Home(uint32_t frag) const { return static_cast<uint32_t>((uint64_t{frag} * cap_) >> 32); }
  uint32_t NextSlot(uint32_t i) const { return i + 1 == cap_ ? 0 : i + 1; }
  template <typename IsIt>
  uint32_t Probe(uint64_t hash, IsIt& is_it) const {
    if (size_ == 0) return kNotFound;
    const uint32_t frag = Frag(hash);
    for (uint32_t i = Home(frag);; i = NextSlot(i)) {
      const Slot& s = slots_[i];
      if (s.empty()) return kNotFound;
      if (s.frag == frag && is_it(s.score())) return i;
    }
  }
  void Place(uint32_t frag, double score);
  void EraseSlot(uint32_t i);
  void Resize(uint32_t cap);

  Slot* slots_ = nullptr;
  uint32_t cap_ = 0;
  uint32_t size_ = 0;
};

}  // namespace peregrine
