// Sorted integer arrays (see intset.h).
#include "core/intset.h"

#include <cstring>

#include "core/memory.h"

namespace peregrine {

uint8_t IntSetWidthOf(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

IntSet* IntSet::Create(uint32_t count_hint) {
  IntSet* s = static_cast<IntSet*>(CountedAlloc(sizeof(IntSet) + size_t{count_hint} * 2));
  s->count = 0;
  s->width = 2;
  std::memset(s->pad, 0, sizeof(s->pad));
  return s;
}

void IntSet::Destroy(IntSet* s) { CountedFree(s); }

size_t IntSet::AllocatedBytes() const { return CountedUsableSize(this); }

int64_t IntSet::At(uint32_t i) const {
  const uint8_t* p = values() + size_t{i} * width;
  switch (width) {
    case 2: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

void IntSet::Put(uint32_t i, int64_t v) {
  uint8_t* p = values() + size_t{i} * width;
  if (width == 2) {
    const int16_t x = static_cast<int16_t>(v);
    std::memcpy(p, &x, 2);
  } else if (width == 4) {
    const int32_t x = static_cast<int32_t>(v);
    std::memcpy(p, &x, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

bool IntSet::Search(int64_t v, uint32_t* pos) const {
  if (IntSetWidthOf(v) > width) {
    *pos = v < 0 ? 0 : count;
    return false;
  }
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const int64_t x = At(mid);
    if (x == v) {
      *pos = mid;
      return true;
    }
    if (x < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  *pos = lo;
  return false;
}

IntSet* IntSet::Resize(IntSet* s, uint32_t count) {
  const size_t need = sizeof(IntSet) + size_t{count} * s->width;
  const size_t usable = CountedUsableSize(s);
  if (need > usable || (usable > 64 && need < usable / 2)) s = static_cast<IntSet*>(CountedRealloc(s, need, usable));
  return s;
}

IntSet* IntSet::Add(IntSet* s, int64_t v, bool* added) {
  const uint8_t w = IntSetWidthOf(v);
  if (w > s->width) {
    // Widen: every value moves, from the back so that nothing is
    // overwritten before it is read; `v` is beyond every value (it needs
    // more bytes), so it goes first or last.
    const uint8_t old = s->width;
    const uint32_t n = s->count;
    s = static_cast<IntSet*>(CountedRealloc(s, sizeof(IntSet) + size_t{n + 1} * w));
    const int shift = v < 0 ? 1 : 0;
    for (uint32_t i = n; i-- > 0;) {
      s->width = old;
      const int64_t x = s->At(i);
      s->width = w;
      s->Put(i + shift, x);
    }
    s->width = w;
    s->Put(v < 0 ? 0 : n, v);
    s->count = n + 1;
    *added = true;
    return s;
  }
  uint32_t pos;
  if (s->Search(v, &pos)) {
    *added = false;
    return s;
  }
  s = Resize(s, s->count + 1);
  uint8_t* p = s->values() + size_t{pos} * s->width;
  std::memmove(p + s->width, p, size_t{s->count - pos} * s->width);
  s->Put(pos, v);
  s->count++;
  *added = true;
  return s;
}

IntSet* IntSet::RemoveAt(IntSet* s, uint32_t index) {
  uint8_t* p = s->values() + size_t{index} * s->width;
  std::memmove(p, p + s->width, size_t{s->count - index - 1} * s->width);
  s->count--;
  return Resize(s, s->count);
}

IntSet* IntSet::Remove(IntSet* s, int64_t v, bool* removed) {
  uint32_t pos;
  *removed = s->Search(v, &pos);
  return *removed ? RemoveAt(s, pos) : s;
}

}  // namespace peregrine
