// Microbenchmarks of the keyspace table (Db) against absl::flat_hash_map and
// std::unordered_map holding the same keys and values: insert, lookup hit and
// miss, erase, and a mix, at 1M and 10M keys; bytes per key for each (counted
// by allocator usable size); and the worst single insert while Db grows from
// empty to 10M keys (segment splits keep it small).
#include <absl/container/flat_hash_map.h>
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/db.h"
#include "core/memory.h"

namespace peregrine {
namespace {

// Counts the bytes std:: and absl containers allocate (usable size), so that
// their memory per key compares with Db's own accounting.
inline int64_t g_counted_bytes = 0;

template <typename T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() = default;
  template <typename U>
  CountingAllocator(const CountingAllocator<U>&) {}
  T* allocate(size_t n) {
    void* p = std::malloc(n * sizeof(T));
    g_counted_bytes += static_cast<int64_t>(malloc_usable_size(p));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) {
    g_counted_bytes -= static_cast<int64_t>(malloc_usable_size(p));
    std::free(p);
  }
  template <typename U>
  bool operator==(const CountingAllocator<U>&) const { return true; }
};

using CountedString = std::basic_string<char, std::char_traits<char>, CountingAllocator<char>>;
// Heterogeneous lookup by string_view, so that a lookup allocates nothing.
struct AbslSvHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
};
struct StdSvHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
struct SvEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};
using AbslMap = absl::flat_hash_map<CountedString, CountedString, AbslSvHash, SvEq,
                                    CountingAllocator<std::pair<const CountedString, CountedString>>>;
using StdMap = std::unordered_map<CountedString, CountedString, StdSvHash, SvEq,
                                  CountingAllocator<std::pair<const CountedString, CountedString>>>;

// redis-benchmark's key shape (16 bytes) and an 8-byte value.
std::string Key(uint64_t i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "key:%012llu", static_cast<unsigned long long>(i));
  return buf;
}
const std::string kValue = "xxxxxxxx";

std::vector<std::string> Keys(size_t n, uint64_t offset = 0) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; i++) keys.push_back(Key((i * 2654435761ULL + offset) % (4 * n) + offset * 8 * n));
  return keys;
}

// --- Adapters: the same operations on the three tables. ---
struct DbTable {
  Db db;
  void Insert(const std::string& k) {
    if (db.FindRaw(k) == nullptr) db.Insert(k, Value::String(kValue));
  }
  bool Find(const std::string& k) { return db.Find(k, 0) != nullptr; }
  void Erase(const std::string& k) { db.Erase(k); }
  static int64_t Bytes() { return KeyspaceBytes(); }
};
// absl and std maps behind the same adapter.
template <typename Map>
struct MapTable {
  Map m;
  void Insert(const std::string& k) {
    if (m.find(std::string_view(k)) == m.end()) m.emplace(CountedString(k), CountedString(kValue));
  }
  bool Find(const std::string& k) { return m.find(std::string_view(k)) != m.end(); }
  void Erase(const std::string& k) {
    auto it = m.find(std::string_view(k));
    if (it != m.end()) m.erase(it);
  }
  static int64_t Bytes() { return g_counted_bytes; }
};
using AbslTable = MapTable<AbslMap>;
using StdTable = MapTable<StdMap>;

template <typename Table>
void BM_Insert(benchmark::State& state) {
  const auto keys = Keys(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    const int64_t before = Table::Bytes();
    auto t = std::make_unique<Table>();
    state.ResumeTiming();
    for (const auto& k : keys) t->Insert(k);
    state.PauseTiming();
    state.counters["bytes_per_key"] =
        static_cast<double>(Table::Bytes() - before) / static_cast<double>(keys.size());
    t.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}

// Lookups in insertion order favour tables that keep keys in separately
// allocated blocks (std::string keys in absl and std): consecutive lookups
// then read consecutive heap blocks, which the hardware prefetcher streams.
// `shuffled` looks the same keys up in an order unrelated to insertion, as
// a server sees them.
template <typename Table>
void BM_Lookup(benchmark::State& state, bool hit, bool shuffled = false) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto keys = Keys(n);
  const auto misses = Keys(n, 1);
  auto t = std::make_unique<Table>();
  for (const auto& k : keys) t->Insert(k);
  std::vector<std::string> order;
  if (shuffled) {
    order = keys;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  }
  const auto& probe = shuffled ? order : hit ? keys : misses;
  size_t i = 0, found = 0;
  for (auto _ : state) {
    found += t->Find(probe[i]);
    if (++i == probe.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
}
template <typename Table>
void BM_LookupHit(benchmark::State& state) { BM_Lookup<Table>(state, true); }
template <typename Table>
void BM_LookupMiss(benchmark::State& state) { BM_Lookup<Table>(state, false); }
template <typename Table>
void BM_LookupHitShuffled(benchmark::State& state) { BM_Lookup<Table>(state, true, true); }

template <typename Table>
void BM_EraseInsert(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto keys = Keys(n);
  auto t = std::make_unique<Table>();
  for (const auto& k : keys) t->Insert(k);
  size_t i = 0;
  for (auto _ : state) {
    t->Erase(keys[i]);
    t->Insert(keys[i]);
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * 2);
}

// 80% lookups (hits), 10% inserts of new keys, 10% erases.
template <typename Table>
void BM_Mix(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto keys = Keys(n);
  const auto fresh = Keys(n, 2);
  auto t = std::make_unique<Table>();
  for (const auto& k : keys) t->Insert(k);
  size_t i = 0, j = 0, found = 0;
  for (auto _ : state) {
    switch (i % 10) {
      case 8: t->Insert(fresh[j % n]); break;
      case 9: t->Erase(fresh[j++ % n]); break;
      default: found += t->Find(keys[i % n]);
    }
    i++;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
}

#define TABLE_BENCHMARKS(Fn)                                                         \
  BENCHMARK_TEMPLATE(Fn, DbTable)->Arg(1 << 20)->Arg(10 << 20)->Unit(benchmark::kMillisecond); \
  BENCHMARK_TEMPLATE(Fn, AbslTable)->Arg(1 << 20)->Arg(10 << 20)->Unit(benchmark::kMillisecond); \
  BENCHMARK_TEMPLATE(Fn, StdTable)->Arg(1 << 20)->Arg(10 << 20)->Unit(benchmark::kMillisecond);

#define TABLE_BENCHMARKS_NS(Fn)                   \
  BENCHMARK_TEMPLATE(Fn, DbTable)->Arg(1 << 20)->Arg(10 << 20);   \
  BENCHMARK_TEMPLATE(Fn, AbslTable)->Arg(1 << 20)->Arg(10 << 20); \
  BENCHMARK_TEMPLATE(Fn, StdTable)->Arg(1 << 20)->Arg(10 << 20);

TABLE_BENCHMARKS(BM_Insert)
TABLE_BENCHMARKS_NS(BM_LookupHit)
TABLE_BENCHMARKS_NS(BM_LookupMiss)
TABLE_BENCHMARKS_NS(BM_LookupHitShuffled)
TABLE_BENCHMARKS_NS(BM_EraseInsert)
TABLE_BENCHMARKS_NS(BM_Mix)

// The access-data sweep (OBJECT FREQ / IDLETIME, AccessTracker): one whole
// pass over n keys, per key. It runs in the cron, so its cost per key sets
// how many keys a shard can sweep in its 1% of the time.
void BM_AccessSweep(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const auto keys = Keys(n);
  AccessTracker tracker;
  tracker.Configure(AccessTracker::Mode::kLru, 10, 1);
  int64_t now_ms = 1'700'000'000'000;
  tracker.Advance(now_ms);
  Db db;
  db.set_access_tracker(&tracker);
  for (const auto& k : keys) db.Insert(k, Value::String(kValue));
  for (auto _ : state) {
    now_ms += 7'000;  // some stamps move on to the minutes clock
    tracker.Advance(now_ms);
    tracker.BeginPass(now_ms);
    db.BeginAccessSweep();
    while (db.SweepAccess(4096)) {
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_AccessSweep)->Arg(1 << 20)->Arg(10 << 20)->Unit(benchmark::kMillisecond);

// The worst single insert while Db grows from empty to 10M keys, and how many
// took over 100 us and over 1 ms. BM_TimerNoiseFloor runs the same timing
// loop around nothing: its worst case is what the machine itself adds (a VM
// losing its CPU to the host, a page fault of the timer's own code).
template <typename Op>
void TimeEach(benchmark::State& state, size_t n, Op op) {
  double worst_us = 0;
  size_t over_100us = 0, over_1ms = 0;
  for (size_t i = 0; i < n; i++) {
    const auto t0 = std::chrono::steady_clock::now();
    op(i);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (us > worst_us) worst_us = us;
    over_100us += us > 100;
    over_1ms += us > 1000;
  }
  state.counters["worst_us"] = worst_us;
  state.counters["over_100us"] = static_cast<double>(over_100us);
  state.counters["over_1ms"] = static_cast<double>(over_1ms);
}

void BM_WorstInsertTo10M(benchmark::State& state) {
  const size_t n = 10 << 20;
  std::vector<std::string> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; i++) keys.push_back(Key(i));
  for (auto _ : state) {
    Db db;
    TimeEach(state, n, [&](size_t i) { db.Insert(keys[i], Value::String(kValue)); });
  }
}
BENCHMARK(BM_WorstInsertTo10M)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_TimerNoiseFloor(benchmark::State& state) {
  const size_t n = 10 << 20;
  uint64_t sink = 0;
  for (auto _ : state) TimeEach(state, n, [&](size_t i) { sink += i; });
  benchmark::DoNotOptimize(sink);
}
BENCHMARK(BM_TimerNoiseFloor)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace peregrine
