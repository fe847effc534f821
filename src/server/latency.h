// The latency monitor (docs/latency.md): Redis's latency-monitor-threshold
// events. Something that took at least the threshold (a command, a fast
// command, an active-expiry cycle, an eviction cycle, an AOF fsync, a
// snapshot's pause) adds a sample to its event's series: one per second
// (the second's highest), the last 160 kept, and the highest ever. LATENCY
// LATEST, HISTORY, RESET, GRAPH and DOCTOR read them.
//
// Threading: one per process. Due() is the hot test (one relaxed load: the
// threshold in CycleClock ticks, infinite while off); samples are rare and
// taken under a mutex, from any worker.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

class LatencyMonitor {
 public:
  static constexpr size_t kSamples = 160;  // Redis's LATENCY_TS_LEN
  struct Sample {
    int64_t time = 0;  // unix seconds; 0: unused
    uint32_t latency = 0;  // ms
  };
  struct Series {
    std::array<Sample, kSamples> samples{};
    size_t next = 0;  // where the next second's sample goes
    uint32_t max = 0;
    // The samples, oldest first.
    std::vector<Sample> InOrder() const;
    const Sample& Latest() const { return samples[(next + kSamples - 1) % kSamples]; }
  };

  // latency-monitor-threshold (ms; 0: off), and the clock's ticks per ms.
  void Configure(int64_t threshold_ms, uint64_t ticks_per_ms);
  int64_t threshold_ms() const { return threshold_ms_.load(std::memory_order_relaxed); }
  bool Due(uint64_t ticks) const { return ticks >= threshold_ticks_.load(std::memory_order_relaxed); }
  // Redis's latencyAddSampleIfNeeded: a sample if the monitor is on and
  // `latency_ms` reaches the threshold.
  void AddIfNeeded(std::string_view event, int64_t latency_ms) {
    const int64_t t = threshold_ms();
    if (t > 0 && latency_ms >= t) [[unlikely]]
      Add(event, latency_ms);
  }
  void Add(std::string_view event, int64_t latency_ms, int64_t now_s = 0);

  // The events and their series, by name.
  std::map<std::string, Series, std::less<>> Events();
  // HISTORY and GRAPH find an event by its exact name.
  std::optional<Series> Find(std::string_view event);
  // RESET: the named event (any case), or every one; how many went.
  int Reset(std::optional<std::string_view> event);

  // LATENCY GRAPH's text for `event` (Redis's sparkline, 80 columns, 4 rows).
  static std::string Graph(std::string_view event, const Series& s, int64_t now_s);
  // LATENCY DOCTOR's report.
  std::string Doctor();

 private:
  std::atomic<int64_t> threshold_ms_{0};
  std::atomic<uint64_t> threshold_ticks_{UINT64_MAX};
  std::mutex mu_;
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace peregrine
