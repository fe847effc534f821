// Microbenchmarks of the stream container: XADD's append of a two-field
// entry with `*` IDs (the same fields as the node's first entry), a range
// read forwards and backwards over 100 entries, and the bytes per entry of
// 1M such entries (reported as a counter).
#include <benchmark/benchmark.h>

#include <string>

#include "core/stream_object.h"

namespace peregrine {
namespace {

void BM_StreamAppend(benchmark::State& state) {
  StreamLimits limits;
  StreamObject s;
  uint64_t i = 0;
  std::string v = "12345";
  for (auto _ : state) {
    const std::string_view pairs[] = {"sensor", "temp-17", "value", v};
    s.Append({1700000000000 + i / 4, i % 4}, pairs, limits);
    i++;
    if (s.size() >= 1000000) {
      state.PauseTiming();
      s = StreamObject();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_StreamAppend);

StreamObject Filled(uint64_t n) {
  StreamLimits limits;
  StreamObject s;
  for (uint64_t i = 0; i < n; i++) {
    const std::string v = std::to_string(i % 100000);
    const std::string_view pairs[] = {"sensor", "temp-17", "value", v};
    s.Append({1700000000000 + i, 0}, pairs, limits);
  }
  return s;
}

void BM_StreamRange100(benchmark::State& state) {
  const StreamObject s = Filled(100000);
  const bool rev = state.range(0) != 0;
  uint64_t i = 0;
  for (auto _ : state) {
    const uint64_t at = 1700000000000 + (i++ * 7919) % 99000;
    size_t n = 0;
    s.Range({at, 0}, {at + 99, 0}, rev, [&](const StreamObject::EntryView& e) {
      e.ForEach([&](std::string_view f, std::string_view v) { n += f.size() + v.size(); });
      return true;
    });
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 100));
}
BENCHMARK(BM_StreamRange100)->Arg(0)->Arg(1);

void BM_StreamBytesPerEntry(benchmark::State& state) {
  for (auto _ : state) {
    const StreamObject s = Filled(1000000);
    state.counters["bytes_per_entry"] = static_cast<double>(s.AllocatedBytes()) / 1e6;
  }
}
BENCHMARK(BM_StreamBytesPerEntry)->Iterations(1);

}  // namespace
}  // namespace peregrine
