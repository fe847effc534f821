// Microbenchmarks of the HyperLogLog: PFADD's work on a dense HLL (hash and
// one register) and on a sparse one of a given number of elements (the
// opcode walk and the splice), and PFCOUNT's estimate of a dense and a
// sparse HLL (the histogram and Ertl's estimator).
#include <benchmark/benchmark.h>

#include <string>

#include "core/hyperloglog.h"

namespace peregrine {
namespace {


hll::StringBuffer Filled(int elements, bool dense) {
  hll::StringBuffer b(hll::NewSparse());
  if (dense) hll::SparseToDense(b);
  for (int i = 0; i < elements; i++) hll::Add(b, "element:" + std::to_string(i), 3000);
  return b;
}

void BM_HllAddDense(benchmark::State& state) {
  hll::StringBuffer b = Filled(0, true);
  uint64_t i = 0;
  for (auto _ : state) {
    const uint64_t e = i++;
    benchmark::DoNotOptimize(hll::Add(b, std::string_view(reinterpret_cast<const char*>(&e), sizeof(e)), 3000));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_HllAddDense);

// Adds to a sparse HLL already holding range(0) elements (then reset, so
// that it stays sparse).
void BM_HllAddSparse(benchmark::State& state) {
  const hll::StringBuffer start = Filled(static_cast<int>(state.range(0)), false);
  hll::StringBuffer b = start;
  uint64_t i = 0;
  for (auto _ : state) {
    const uint64_t e = i++ | (uint64_t{1} << 63);
    benchmark::DoNotOptimize(hll::Add(b, std::string_view(reinterpret_cast<const char*>(&e), sizeof(e)), 3000));
    if ((i & 63) == 0) {
      state.PauseTiming();
      b = start;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_HllAddSparse)->Arg(10)->Arg(300)->Arg(1000);

void BM_HllCount(benchmark::State& state) {
  const bool dense = state.range(0) != 0;
  const hll::StringBuffer b = Filled(dense ? 100000 : 500, dense);
  for (auto _ : state) benchmark::DoNotOptimize(hll::Count(std::string_view(b.str()), nullptr));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_HllCount)->Arg(0)->Arg(1);

}  // namespace
}  // namespace peregrine
