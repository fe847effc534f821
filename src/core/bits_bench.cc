// Microbenchmarks of the bitmap scans over a large string: BITCOUNT's
// population count (a word at a time, four words per step) against the
// byte-at-a-time loop it replaces, and BITPOS's search for a set bit at the
// end of a zeroed string (whole zero words skipped). Bytes per second are
// reported: "BITCOUNT over large strings at memory speed" (issue #21).
#include <benchmark/benchmark.h>

#include <bit>
#include <random>
#include <string>

#include "core/bits.h"

namespace peregrine {
namespace {

std::string RandomBytes(size_t n) {
  std::mt19937_64 rng(1);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

void BM_BitCount(benchmark::State& state) {
  const std::string s = RandomBytes(static_cast<size_t>(state.range(0)));
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  for (auto _ : state) benchmark::DoNotOptimize(bits::Count(p, 0, s.size() * 8 - 1));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * s.size()));
}
BENCHMARK(BM_BitCount)->Arg(4096)->Arg(1 << 20)->Arg(64 << 20);

void BM_BitCountBytewise(benchmark::State& state) {
  const std::string s = RandomBytes(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint64_t n = 0;
    for (unsigned char c : s) n += std::popcount(static_cast<unsigned>(c));
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * s.size()));
}
BENCHMARK(BM_BitCountBytewise)->Arg(4096)->Arg(1 << 20)->Arg(64 << 20);

void BM_BitPosLastBit(benchmark::State& state) {
  std::string s(static_cast<size_t>(state.range(0)), '\0');
  s.back() = 1;
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  for (auto _ : state) benchmark::DoNotOptimize(bits::Find(p, 0, s.size() * 8 - 1, true));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * s.size()));
}
BENCHMARK(BM_BitPosLastBit)->Arg(4096)->Arg(1 << 20)->Arg(64 << 20);

}  // namespace
}  // namespace peregrine
