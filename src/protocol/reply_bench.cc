// Microbenchmarks of the reply writer: the replies of GET and SET, integers,
// and a large bulk string, in RESP2 and RESP3.
#include <benchmark/benchmark.h>

#include <string>

#include "protocol/reply.h"

namespace peregrine {
namespace {

template <typename Fn>
void WriteReplies(benchmark::State& state, Fn write) {
  const int kReplies = 64;
  Buffer out;
  ReplyWriter w(&out, static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    out.Clear();
    for (int i = 0; i < kReplies; i++) write(w, i);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kReplies);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_ReplyOk(benchmark::State& state) {
  WriteReplies(state, [](ReplyWriter& w, int) { w.Ok(); });
}
BENCHMARK(BM_ReplyOk)->Arg(2)->Arg(3);

void BM_ReplyBulk8(benchmark::State& state) {
  WriteReplies(state, [](ReplyWriter& w, int) { w.Bulk("xxxxxxxx"); });
}
BENCHMARK(BM_ReplyBulk8)->Arg(2)->Arg(3);

void BM_ReplyBulk2K(benchmark::State& state) {
  static const std::string value(2048, 'x');
  WriteReplies(state, [](ReplyWriter& w, int) { w.Bulk(value); });
}
BENCHMARK(BM_ReplyBulk2K)->Arg(2)->Arg(3);

void BM_ReplyInteger(benchmark::State& state) {
  WriteReplies(state, [](ReplyWriter& w, int i) { w.Integer(1000003LL * i); });
}
BENCHMARK(BM_ReplyInteger)->Arg(2)->Arg(3);

void BM_ReplyNull(benchmark::State& state) {
  WriteReplies(state, [](ReplyWriter& w, int) { w.Null(); });
}
BENCHMARK(BM_ReplyNull)->Arg(2)->Arg(3);

}  // namespace
}  // namespace peregrine
