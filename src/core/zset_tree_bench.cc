// Microbenchmarks of the sorted set tree (ZTree) with 1M members of 13
// bytes ("member:000000".."member:999999") and random scores, beside
// absl::btree_set and std::set of (score, member) pairs holding the same
// keys: inserts, lookups of a key, rank, a ZRANGEBYSCORE-like seek and walk
// of 10, bytes per member (the tree's counted bytes), and the tree with
// its member index (core/zset_index.h): ZSCORE's lookup and the bytes of both.
// `make microbench MICROBENCH_FILTER=ZTree`.
#include <absl/container/btree_set.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/zset_index.h"
#include "core/zset_tree.h"

namespace peregrine {
namespace {

constexpr int kMembers = 1'000'000;

struct Keys {
  std::vector<std::pair<double, std::string>> v;
  Keys() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> score(0, 1e9);
    char buf[16];
    for (int i = 0; i < kMembers; ++i) {
      std::snprintf(buf, sizeof(buf), "member:%06d", i);
      v.emplace_back(score(rng), buf);
    }
  }
};

const Keys& TheKeys() {
  static const Keys keys;
  return keys;
}

const ZTree& TheTree() {
  static const ZTree* t = [] {
    auto* tree = new ZTree;
    for (const auto& [s, m] : TheKeys().v) tree->Insert(s, m);
    return tree;
  }();
  return *t;
}

void BM_ZTreeInsert1M(benchmark::State& state) {
  const auto& keys = TheKeys().v;
  for (auto _ : state) {
    ZTree t;
    for (const auto& [s, m] : keys) t.Insert(s, m);
    state.counters["bytes_per_member"] = static_cast<double>(t.AllocatedBytes()) / static_cast<double>(t.size());
    state.counters["height"] = t.height();
  }
  state.SetItemsProcessed(state.iterations() * kMembers);
}
BENCHMARK(BM_ZTreeInsert1M)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_AbslBtreeInsert1M(benchmark::State& state) {
  const auto& keys = TheKeys().v;
  for (auto _ : state) {
    absl::btree_set<std::pair<double, std::string>> t;
    for (const auto& k : keys) t.insert(k);
    benchmark::DoNotOptimize(t.size());
  }
  state.SetItemsProcessed(state.iterations() * kMembers);
}
BENCHMARK(BM_AbslBtreeInsert1M)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_ZTreeFind(benchmark::State& state) {
  const ZTree& t = TheTree();
  const auto& keys = TheKeys().v;
  size_t i = 0;
  for (auto _ : state) {
    const auto& [s, m] = keys[(i++ * 7919) % kMembers];
    benchmark::DoNotOptimize(t.Find(s, m));
  }
}
BENCHMARK(BM_ZTreeFind);

void BM_ZTreeRank(benchmark::State& state) {
  const ZTree& t = TheTree();
  const auto& keys = TheKeys().v;
  size_t i = 0;
  uint64_t rank = 0;
  for (auto _ : state) {
    const auto& [s, m] = keys[(i++ * 7919) % kMembers];
    t.Find(s, m, &rank);
    benchmark::DoNotOptimize(rank);
  }
}
BENCHMARK(BM_ZTreeRank);

void BM_ZTreeRangeByScore10(benchmark::State& state) {
  const ZTree& t = TheTree();
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> score(0, 1e9);
  char scratch[packed::kScratchSize];
  for (auto _ : state) {
    ZTree::Pos p = t.LowerBoundScore(score(rng), false);
    size_t bytes = 0;
    for (int k = 0; k < 10 && p.valid(); ++k) {
      bytes += t.Member(p, scratch).size();
      t.Next(&p);
    }
    benchmark::DoNotOptimize(bytes);
  }
}
BENCHMARK(BM_ZTreeRangeByScore10);

void BM_AbslBtreeFind(benchmark::State& state) {
  static const auto* t = [] {
    auto* s = new absl::btree_set<std::pair<double, std::string>>;
    for (const auto& k : TheKeys().v) s->insert(k);
    return s;
  }();
  const auto& keys = TheKeys().v;
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(t->find(keys[(i++ * 7919) % kMembers]));
}
BENCHMARK(BM_AbslBtreeFind);

void BM_ZTreeEraseInsert(benchmark::State& state) {
  // ZADD of a new score for a member: out and back in at another place.
  ZTree t;
  const auto& keys = TheKeys().v;
  for (const auto& [s, m] : keys) t.Insert(s, m);
  std::vector<double> cur(kMembers);
  for (int i = 0; i < kMembers; ++i) cur[i] = keys[i].first;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> score(0, 1e9);
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = (i++ * 7919) % kMembers;
    t.Erase(cur[k], keys[k].second);
    cur[k] = score(rng);
    t.Insert(cur[k], keys[k].second);
  }
}
BENCHMARK(BM_ZTreeEraseInsert);

// The tree and the index together, as a large sorted set will hold them:
// bytes per member, and ZSCORE's lookup (index probe confirmed in the tree).
void BM_ZTreeWithIndex1M(benchmark::State& state) {
  const auto& keys = TheKeys().v;
  const ZTree& t = TheTree();
  ZIndex index;
  // Filled as a set grows, each resize's move done at once (the members
  // indexed so far go to the new table).
  for (size_t n = 0; n < keys.size(); ++n) {
    if (const uint64_t groups = index.GrowTarget(); groups != 0 || index.MustGrow()) {
      index.StartMove(groups != 0 ? groups : 2);
      while (!index.PrepareMove(64)) {
      }
      for (size_t k = 0; k < n; ++k) index.Move(packed::Hash(keys[k].second), keys[k].first);
      index.FinishMove();
    }
    index.Insert(packed::Hash(keys[n].second), keys[n].first, /*moved=*/false);
  }
  size_t i = 0;
  for (auto _ : state) {
    const std::string& m = keys[(i++ * 7919) % kMembers].second;
    double score;
    benchmark::DoNotOptimize(index.Find(packed::Hash(m), [&](double s) { return t.Find(s, m); }, &score));
  }
  state.counters["index_bytes_per_member"] = static_cast<double>(index.AllocatedBytes()) / kMembers;
  state.counters["bytes_per_member"] =
      static_cast<double>(index.AllocatedBytes() + t.AllocatedBytes()) / kMembers;
}
BENCHMARK(BM_ZTreeWithIndex1M);

}  // namespace
}  // namespace peregrine
