// Microbenchmarks of the request parser: commands/s and bytes/s for typical
// pipelines (GET, SET with small and 1 KB values) and for inline commands.
#include <benchmark/benchmark.h>

#include <string>

#include "protocol/parser.h"

namespace peregrine {
namespace {

std::string Pipeline(const std::string& one, int n) {
  std::string s;
  for (int i = 0; i < n; i++) s += one;
  return s;
}

void ParseAll(benchmark::State& state, const std::string& one) {
  const int kCommands = 64;
  const std::string buf = Pipeline(one, kCommands);
  RequestParser parser;
  for (auto _ : state) {
    size_t off = 0;
    while (off < buf.size()) {
      auto r = parser.Parse(buf.data() + off, buf.size() - off);
      if (r != RequestParser::Result::kCommand) state.SkipWithError("parse failed");
      benchmark::DoNotOptimize(parser.args().data());
      off += parser.consumed();
    }
  }
  state.SetItemsProcessed(state.iterations() * kCommands);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(buf.size()));
}

void BM_ParseGet(benchmark::State& state) {
  ParseAll(state, "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000012345\r\n");
}
BENCHMARK(BM_ParseGet);

void BM_ParseSet8(benchmark::State& state) {
  ParseAll(state, "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000012345\r\n$8\r\nxxxxxxxx\r\n");
}
BENCHMARK(BM_ParseSet8);

void BM_ParseSet1K(benchmark::State& state) {
  ParseAll(state, "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000012345\r\n$1024\r\n" + std::string(1024, 'x') + "\r\n");
}
BENCHMARK(BM_ParseSet1K);

void BM_ParseInline(benchmark::State& state) { ParseAll(state, "SET key:000000012345 xxxxxxxx\r\n"); }
BENCHMARK(BM_ParseInline);

// A command arriving in two halves: the resumable path.
void BM_ParseSplit(benchmark::State& state) {
  const std::string one = "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000012345\r\n$8\r\nxxxxxxxx\r\n";
  RequestParser parser;
  for (auto _ : state) {
    auto r1 = parser.Parse(one.data(), one.size() / 2);
    auto r2 = parser.Parse(one.data(), one.size());
    if (r1 != RequestParser::Result::kNeedMore || r2 != RequestParser::Result::kCommand)
      state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(parser.args().data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseSplit);

}  // namespace
}  // namespace peregrine
