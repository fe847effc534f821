// Microbenchmarks of hash field expiry (HashObject::ExpireFields) on a
// large hash whose every field has its own deadline, 1 ms apart in field
// order (so each page holds deadlines spread over the whole range): one
// call per simulated millisecond removes about one field. The page bounds
// (PackedTable::VisitDue) make that call look at the due page only; the
// walk over every entry it replaced is measured beside it.
#include <benchmark/benchmark.h>

#include <string>

#include "core/hash_object.h"

namespace peregrine {
namespace {

constexpr int64_t kBase = 1'000'000;

HashObject StaggeredHash(int n) {
  HashObject h;
  h.ConvertToHashtable();
  for (int i = 0; i < n; ++i) {
    const std::string f = "field:" + std::to_string(i);
    h.Set(f, "value", HashLimits{});
    h.SetDeadline(f, kBase + i);
  }
  return h;
}

void BM_HashExpireFieldsOnePerMs(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  HashObject h = StaggeredHash(n);
  int64_t now = kBase;
  size_t removed = 0;
  for (auto _ : state) {
    removed += h.ExpireFields(now++);
    if (now >= kBase + n) {
      state.PauseTiming();
      h = StaggeredHash(n);
      now = kBase;
      state.ResumeTiming();
    }
  }
  state.counters["fields_removed_per_call"] =
      benchmark::Counter(static_cast<double>(removed) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_HashExpireFieldsOnePerMs)->Arg(100'000)->Arg(1'000'000)->Iterations(50'000);

// The cost of looking at every field once (what each call cost before the
// tables kept page bounds).
void BM_HashWalkEveryField(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const HashObject h = StaggeredHash(n);
  for (auto _ : state) {
    int64_t due = 0;
    h.ForEachEntry([&](const uint8_t* e) { due += Page::DeadlineOfEntry(e) <= kBase; });
    benchmark::DoNotOptimize(due);
  }
}
BENCHMARK(BM_HashWalkEveryField)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace peregrine
