// Microbenchmarks of the hash and set containers' large encoding
// (PackedTable) against absl::flat_hash_map / flat_hash_set of std::string:
// insert, lookup hit and miss at 1M elements, with bytes per element
// (PackedTable's own count of allocator usable sizes) as a counter. The
// shapes are issue #16's memory targets: 13-byte fields with 8-byte values,
// 16-byte members, integers.
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/packed_table.h"

namespace peregrine {
namespace {

std::vector<std::string> Fields(size_t n, size_t len, uint64_t seed) {
  std::vector<std::string> out;
  out.reserve(n);
  uint64_t modulus = 1;  // 10^(len-2): the digits fill the string exactly
  for (size_t i = 2; i < len; ++i) modulus *= 10;
  for (size_t i = 0; i < n; ++i) {
    char buf[32];
    // 2654435761 is prime to 10, so i -> i * k mod 10^m is one-to-one.
    std::snprintf(buf, sizeof(buf), "f:%0*llu", static_cast<int>(len - 2),
                  static_cast<unsigned long long>((i * 2654435761ull + seed) % modulus));
    out.emplace_back(buf, len);
  }
  return out;
}

void Fill(PackedTable& t, const std::vector<std::string>& fields, const std::string& value) {
  for (const std::string& f : fields) {
    packed::Probe probe(f);
    packed::ItemPlan items[2] = {packed::ItemPlan(f, probe), packed::ItemPlan(value)};
    t.Insert(probe, items);
  }
}

constexpr size_t kN = 1000000;

void BM_PackedHashInsert(benchmark::State& state) {
  const auto fields = Fields(kN, 13, 0);
  for (auto _ : state) {
    PackedTable t(2);
    Fill(t, fields, "value:01");
    state.counters["bytes_per_field"] = static_cast<double>(t.AllocatedBytes()) / kN;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kN));
}
BENCHMARK(BM_PackedHashInsert)->Unit(benchmark::kMillisecond);

void BM_AbslHashInsert(benchmark::State& state) {
  const auto fields = Fields(kN, 13, 0);
  for (auto _ : state) {
    absl::flat_hash_map<std::string, std::string> m;
    for (const std::string& f : fields) m.emplace(f, "value:01");
    benchmark::DoNotOptimize(m.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kN));
}
BENCHMARK(BM_AbslHashInsert)->Unit(benchmark::kMillisecond);

void BM_PackedHashLookupHit(benchmark::State& state) {
  const auto fields = Fields(kN, 13, 0);
  PackedTable t(2);
  Fill(t, fields, "value:01");
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    PackedTable::Ref ref;
    benchmark::DoNotOptimize(t.Find(packed::Probe(fields[rng() % kN]), &ref));
  }
}
BENCHMARK(BM_PackedHashLookupHit);

void BM_AbslHashLookupHit(benchmark::State& state) {
  const auto fields = Fields(kN, 13, 0);
  absl::flat_hash_map<std::string, std::string> m;
  for (const std::string& f : fields) m.emplace(f, "value:01");
  std::mt19937_64 rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(m.find(fields[rng() % kN]));
}
BENCHMARK(BM_AbslHashLookupHit);

void BM_PackedHashLookupMiss(benchmark::State& state) {
  const auto fields = Fields(kN, 13, 0);
  const auto misses = Fields(kN, 13, 7);
  PackedTable t(2);
  Fill(t, fields, "value:01");
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    PackedTable::Ref ref;
    benchmark::DoNotOptimize(t.Find(packed::Probe(misses[rng() % kN] + "x"), &ref));
  }
}
BENCHMARK(BM_PackedHashLookupMiss);

void BM_PackedSetInsert(benchmark::State& state) {
  const bool ints = state.range(0) == 1;
  std::vector<std::string> members = ints ? std::vector<std::string>() : Fields(kN, 16, 0);
  if (ints)
    for (size_t i = 0; i < kN; ++i) members.push_back(std::to_string(i));
  for (auto _ : state) {
    PackedTable t(1);
    for (const std::string& s : members) {
      packed::Probe probe(s);
      packed::ItemPlan item(s, probe);
      t.Insert(probe, &item);
    }
    state.counters["bytes_per_member"] = static_cast<double>(t.AllocatedBytes()) / kN;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kN));
}
BENCHMARK(BM_PackedSetInsert)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_AbslSetLookupHit(benchmark::State& state) {
  const auto members = Fields(kN, 16, 0);
  absl::flat_hash_set<std::string> m(members.begin(), members.end());
  std::mt19937_64 rng(1);
  for (auto _ : state) benchmark::DoNotOptimize(m.find(members[rng() % kN]));
}
BENCHMARK(BM_AbslSetLookupHit);

void BM_PackedSetLookupHit(benchmark::State& state) {
  const auto members = Fields(kN, 16, 0);
  PackedTable t(1);
  for (const std::string& s : members) {
    packed::Probe probe(s);
    packed::ItemPlan item(s, probe);
    t.Insert(probe, &item);
  }
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    PackedTable::Ref ref;
    benchmark::DoNotOptimize(t.Find(packed::Probe(members[rng() % kN]), &ref));
  }
}
BENCHMARK(BM_PackedSetLookupHit);

}  // namespace
}  // namespace peregrine
