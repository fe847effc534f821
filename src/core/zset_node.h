// The sorted set tree's inner node and the helpers both of its files use
// (core/zset_tree.cc: inserts, removals, rebalancing; core/zset_tree_walk.cc:
// positions, seeks, validation). Internal to the tree: nothing else
// includes it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/zset_tree.h"

namespace peregrine {

// An inner node. Room for one child more than the fanout: a node takes the
// new child first and splits after. (Its level is the tree's height less
// its depth.)
struct ZNode {
  uint32_t n;  // children
  uint32_t unused;
  uint64_t count[ZTree::kFanout + 1];
  void* child[ZTree::kFanout + 1];
  double sep_score[ZTree::kFanout + 1];
  uint8_t* sep_member[ZTree::kFanout + 1];  // [0] unused (nullptr)
};
// 2,024 bytes: within mimalloc's 2 KB size class.
static_assert(sizeof(ZNode) <= 2048);

// A separator's member as a string (MakeSep in zset_tree.cc writes it: a
// 4-byte length, then the bytes); empty for none.
inline std::string_view SepView(const uint8_t* b) {
  if (b == nullptr) return {};
  uint32_t len;
  std::memcpy(&len, b, 4);
  return {reinterpret_cast<const char*>(b + 4), len};
}

// The last i >= 1 for which below(i) holds (a prefix of the children), else 0.
template <typename Below>
inline uint32_t LastBelow(const ZNode* n, Below below) {
  uint32_t lo = 1, hi = n->n;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (below(mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

}  // namespace peregrine
