// What the two halves of the keyspace table (db.cc: layout, lookup, insert,
// growth; db_iterate.cc: scan, iteration, expiry, eviction, invariants) share.
// Private to src/core/db*.cc.
#pragma once

#include <cstdint>

#include "core/db.h"

namespace peregrine::db_internal {

// The lowest hash of the segment (of depth d) that `hash` falls in.
inline uint64_t SegmentBase(uint64_t hash, int d) { return hash & ~(~uint64_t{0} >> d); }

}  // namespace peregrine::db_internal

namespace peregrine {

template <typename Fn>
bool DbLayout::ForEachLive(const Segment* s, bool ttl_only, Fn&& fn) {
  for (uint32_t i = 0; !ttl_only && i < s->plain.size; i++)
    if (!s->plain.at(i).key_.is_hole() && !fn(s->plain.at(i))) return false;
  for (uint32_t i = 0; i < s->ttl.size; i++)
    if (!s->ttl.at(i).entry.key_.is_hole() && !fn(s->ttl.at(i).entry)) return false;
  return true;
}

template <typename Fn>
void Db::ForEachSegmentFrom(uint64_t from, Fn&& fn) const {
  uint64_t pos = from;
  const size_t n = segments_;
  for (size_t i = 0; i < n; i++) {
    Segment* s = SegmentOf(pos);
    const uint64_t base = db_internal::SegmentBase(pos, s->depth);
    pos = SegmentEnd(base, s);
    if (!fn(s, base)) return;
  }
}

}  // namespace peregrine
