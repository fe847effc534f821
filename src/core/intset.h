// IntSet: a set of integers as a sorted array (Redis's "intset" encoding,
// for sets whose members are all integers, up to set-max-intset-entries).
// Every value has the width of the widest (2, 4 or 8 bytes); adding a value
// that needs more widens the whole array, as Redis does. Lookups are binary
// searches; adding and removing move the values after the place.
//
//   +-------------------------+--------------------------------------+
//   | count u32 | width u8 |3 | values[count], ascending, `width` each|
//   +-------------------------+--------------------------------------+
//
// The block is reallocated to the size needed (the allocator's size class
// is the slack), so an IntSet* moves: functions that may grow it return it.
// Not thread-safe, like everything in core/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peregrine {

struct IntSet {
  uint32_t count;
  uint8_t width;  // 2, 4 or 8
  uint8_t pad[3];

  static IntSet* Create(uint32_t count_hint = 0);
  static void Destroy(IntSet* s);
  size_t AllocatedBytes() const;

  uint32_t size() const { return count; }
  int64_t At(uint32_t i) const;
  bool Contains(int64_t v) const {
    uint32_t pos;
    return Search(v, &pos);
  }
  // Adds `v`; *added says whether it was new. May move the set.
  static IntSet* Add(IntSet* s, int64_t v, bool* added);
  // Removes `v`; returns whether it was there. May move the set (it gives
  // memory back when much of it is unused).
  static IntSet* Remove(IntSet* s, int64_t v, bool* removed);
  // Removes the value at `index`. May move the set.
  static IntSet* RemoveAt(IntSet* s, uint32_t index);

  // The values as stored: size() * width bytes, little-endian (the layout
  // of a Redis intset's contents, which RDB files hold).
  const uint8_t* raw_values() const { return values(); }

  // Whether `v` is there; else *pos is where it would go.
  bool Search(int64_t v, uint32_t* pos) const;

 private:
  uint8_t* values() { return reinterpret_cast<uint8_t*>(this) + sizeof(IntSet); }
  const uint8_t* values() const { return reinterpret_cast<const uint8_t*>(this) + sizeof(IntSet); }
  void Put(uint32_t i, int64_t v);
  static IntSet* Resize(IntSet* s, uint32_t count);
};

static_assert(sizeof(IntSet) == 8);

// The narrowest IntSet width (2, 4 or 8) that holds `v`.
uint8_t IntSetWidthOf(int64_t v);

}  // namespace peregrine
