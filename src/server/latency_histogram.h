// A command's latency histogram (LATENCY HISTOGRAM, INFO latencystats):
// the layout of an HDR histogram as Redis configures its own (values in
// nanoseconds from 1 to 10^9, two significant digits), so that the buckets
// LATENCY HISTOGRAM lists and the percentiles INFO prints are Redis's.
// Written by hand: Debian packages no C/C++ HdrHistogram, and this needs
// only recording, merging, a percentile and the log-2 buckets.
//
// Each worker keeps one per command it ran (made at the command's first
// recorded call); INFO and LATENCY HISTOGRAM merge the workers' while
// holding them all. The counts are kept per power of two, each run of 128
// made at its first count: a command's latencies span a few of the 24, so
// a histogram takes 1-6 KB instead of the 24 KB of the whole layout (Redis
// has one per command; here every worker has one per command it ran).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>

namespace peregrine {

class LatencyHistogram {
 public:
  static constexpr int64_t kMin = 1;              // ns (Redis's CONFIG_LATENCY_HISTOGRAM_MIN_VALUE)
  static constexpr int64_t kMax = 1000000000;     // ns (..._MAX_VALUE)
  static constexpr int kSubBucketCount = 256;     // 2 significant digits: 2^ceil(log2(2 * 10^2))
  static constexpr int kSubBucketHalfMagnitude = 7;
  static constexpr int kSubBucketHalf = 128;
  static constexpr int kBuckets = 23;             // until 256 << (k - 1) passes kMax
  static constexpr int kCounts = (kBuckets + 1) * kSubBucketHalf;

  void Record(int64_t ns) {
    ns = std::clamp(ns, kMin, kMax);
    const int i = Index(ns);
    Run(i >> kSubBucketHalfMagnitude)[static_cast<size_t>(i & (kSubBucketHalf - 1))]++;
    total_++;
  }
  void Merge(const LatencyHistogram& o) {
    for (size_t r = 0; r < runs_.size(); r++) {
      if (o.runs_[r] == nullptr) continue;
      Counts& mine = Run(static_cast<int>(r));
      for (size_t k = 0; k < mine.size(); k++) mine[k] += (*o.runs_[r])[k];
    }
    total_ += o.total_;
  }
  uint64_t total() const { return total_; }

  // The value (ns) at `percentile` (0..100), as hdr_value_at_percentile:
  // the highest value equivalent to the one where the count is reached.
  int64_t ValueAtPercentile(double percentile) const {
    const double p = std::min(percentile, 100.0);
    int64_t want = static_cast<int64_t>(p / 100 * static_cast<double>(total_) + 0.5);
    want = std::max<int64_t>(want, 1);
    uint64_t seen = 0;
    for (int i = 0; i < kCounts; i++) {
      seen += Count(i);
      if (seen >= static_cast<uint64_t>(want)) return HighestEquivalent(ValueOf(i));
    }
    return 0;
  }

  // Redis's LATENCY HISTOGRAM buckets (hdr_iter_log from 1024 ns, base 2):
  // f(microseconds, cumulative count) for each level at which the count
  // grew, the level's highest equivalent value in microseconds.
  template <typename F>
  void ForEachLogBucket(F f) const {
    uint64_t cumulative = 0, previous = 0;
    int next = 0;
    for (int64_t level = 1024; previous < total_ && level <= 2 * kMax; level <<= 1) {
      const int last = Index(level);
      for (; next <= last && next < kCounts; next++) cumulative += Count(next);
      if (cumulative > previous) f(HighestEquivalent(level) / 1000, cumulative);
      previous = cumulative;
    }
  }

 private:
  using Counts = std::array<uint64_t, kSubBucketHalf>;
  Counts& Run(int r) {
    std::unique_ptr<Counts>& run = runs_[static_cast<size_t>(r)];
    if (run == nullptr) run = std::make_unique<Counts>();  // (zeroed)
    return *run;
  }
  uint64_t Count(int i) const {
    const std::unique_ptr<Counts>& run = runs_[static_cast<size_t>(i >> kSubBucketHalfMagnitude)];
    return run == nullptr ? 0 : (*run)[static_cast<size_t>(i & (kSubBucketHalf - 1))];
  }
  static int BucketOf(int64_t v) {
    const int pow2ceiling = 64 - std::countl_zero(static_cast<uint64_t>(v) | (kSubBucketCount - 1));
    return pow2ceiling - (kSubBucketHalfMagnitude + 1);
  }
  static int Index(int64_t v) {
    const int bucket = BucketOf(v);
    const int sub = static_cast<int>(v >> bucket);
    return ((bucket + 1) << kSubBucketHalfMagnitude) + (sub - kSubBucketHalf);
  }
  static int64_t ValueOf(int index) {
    int bucket = (index >> kSubBucketHalfMagnitude) - 1;
    int sub = (index & (kSubBucketHalf - 1)) + kSubBucketHalf;
    if (bucket < 0) {
      sub -= kSubBucketHalf;
      bucket = 0;
    }
    return static_cast<int64_t>(sub) << bucket;
  }
  static int64_t HighestEquivalent(int64_t v) {
    const int bucket = BucketOf(v);
    const int sub = static_cast<int>(v >> bucket);
    const int adjusted = sub >= kSubBucketCount ? bucket + 1 : bucket;
    const int64_t lowest = static_cast<int64_t>(sub) << bucket;
    return lowest + (int64_t{1} << adjusted) - 1;
  }

  std::array<std::unique_ptr<Counts>, kBuckets + 1> runs_{};
  uint64_t total_ = 0;
};

}  // namespace peregrine
