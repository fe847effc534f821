// The latency monitor's series (one sample a second, the second's highest,
// 160 kept), RESET's case rule, GRAPH's text; the histograms' buckets and
// percentiles as Redis's HDR histogram gives them.
#include "server/latency.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/latency_histogram.h"

namespace peregrine {
namespace {

TEST(LatencyMonitor, OneSampleASecondTheHighest) {
  LatencyMonitor m;
  m.Configure(10, 1000);
  m.Add("command", 20, 100);
  m.Add("command", 15, 100);  // the same second, lower: kept as it was
  m.Add("command", 30, 100);  // higher: raises it
  m.Add("command", 12, 101);
  const auto s = m.Find("command");
  ASSERT_TRUE(s.has_value());
  const auto v = s->InOrder();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].time, 100);
  EXPECT_EQ(v[0].latency, 30u);
  EXPECT_EQ(v[1].latency, 12u);
  EXPECT_EQ(s->max, 30u);
  EXPECT_EQ(s->Latest().latency, 12u);
  for (int64_t t = 200; t < 400; t++) m.Add("command", 11, t);
  EXPECT_EQ(m.Find("command")->InOrder().size(), LatencyMonitor::kSamples);
  EXPECT_FALSE(m.Find("COMMAND").has_value());  // exact names
  EXPECT_EQ(m.Reset(std::string_view("COMMAND")), 1);  // any case
  EXPECT_EQ(m.Reset(std::nullopt), 0);
}

TEST(LatencyMonitor, DueOnlyAtTheThreshold) {
  LatencyMonitor m;
  EXPECT_FALSE(m.Due(UINT64_MAX - 1));  // off
  m.Configure(5, 1000);  // 1000 ticks a ms
  EXPECT_FALSE(m.Due(4999));
  EXPECT_TRUE(m.Due(5000));
  m.AddIfNeeded("expire-cycle", 4);
  EXPECT_FALSE(m.Find("expire-cycle").has_value());
  m.AddIfNeeded("expire-cycle", 5);
  EXPECT_TRUE(m.Find("expire-cycle").has_value());
}

TEST(LatencyMonitor, GraphIsRedisSparkline) {
  LatencyMonitor m;
  m.Add("command", 100, 1000);
  m.Add("command", 200, 1001);
  const std::string g = LatencyMonitor::Graph("command", *m.Find("command"), 1002);
  const std::string want = "command - high 200 ms, low 100 ms (all time high 200 ms)\n" + std::string(80, '-') +
                           "\n"
                           " #\n"
                           " |\n"
                           " |\n"
                           "_|\n"
                           "  \n"
                           "21\n"
                           "ss\n";
  EXPECT_EQ(g, want);
}

TEST(LatencyHistogram, RedisBucketsAndPercentiles) {
  LatencyHistogram h;
  for (int i = 0; i < 90; i++) h.Record(3000);     // 3 us
  for (int i = 0; i < 10; i++) h.Record(100000);   // 100 us
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  h.ForEachLogBucket([&](int64_t us, uint64_t n) { buckets.emplace_back(us, n); });
  const std::vector<std::pair<int64_t, uint64_t>> want = {{4, 90}, {132, 100}};
  EXPECT_EQ(buckets, want);
  EXPECT_EQ(h.total(), 100u);
  EXPECT_EQ(h.ValueAtPercentile(50), 3007);  // 3000's highest equivalent value (16 ns steps)
  EXPECT_EQ(h.ValueAtPercentile(99), 100351);
  LatencyHistogram other;
  other.Record(0);  // clamped to 1 ns
  h.Merge(other);
  EXPECT_EQ(h.total(), 101u);
  EXPECT_EQ(h.ValueAtPercentile(0), 1);
}

TEST(LatencyHistogram, KeepsOnlyThePowersOfTwoItCounted) {
  // The counts of a power of two are made at its first count: an empty
  // histogram is a table of 24 pointers, not the whole 24 KB layout.
  EXPECT_LE(sizeof(LatencyHistogram), 25 * sizeof(void*));
  LatencyHistogram a, b, merged;
  for (int64_t v = 1; v <= LatencyHistogram::kMax; v = v * 3 + 1) a.Record(v);  // every power of two
  b.Record(LatencyHistogram::kMax * 2);  // clamped to the last one
  merged.Merge(a);
  merged.Merge(b);
  EXPECT_EQ(merged.total(), a.total() + 1);
  EXPECT_EQ(merged.ValueAtPercentile(100), b.ValueAtPercentile(100));
  EXPECT_EQ(merged.ValueAtPercentile(0), 1);
  uint64_t last = 0;
  merged.ForEachLogBucket([&](int64_t, uint64_t n) {
    EXPECT_GT(n, last);  // cumulative, and each listed level added some
    last = n;
  });
  EXPECT_EQ(last, merged.total());
}

}  // namespace
}  // namespace peregrine
