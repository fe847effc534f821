// A worker's counters of connections, commands, bytes and errors (INFO's
// stats and errorstats sections sum every worker's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

namespace peregrine {

struct ServerStats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t rejected_connections = 0;
  uint64_t total_error_replies = 0;
  uint64_t total_reads_processed = 0;
  uint64_t total_writes_processed = 0;
  uint64_t client_query_buffer_limit_disconnections = 0;
  uint64_t client_output_buffer_limit_disconnections = 0;
  // Peregrine's own (issue #37): client batches sent to other workers (a
  // relay, or a read group's parts counted once), read groups, and read
  // groups whose shards changed meanwhile and that ran again as a relay, write
  // groups (their parts on every worker at once, in ticket order).
  uint64_t cross_shard_batches = 0;
  uint64_t cross_shard_read_groups = 0;
  uint64_t cross_shard_read_group_reruns = 0;
  uint64_t cross_shard_write_groups = 0;
  // Waits for mail by spinning (worker-spin-us), and those that ended with
  // mail or a client's event rather than a sleep.
  uint64_t worker_spins = 0;
  uint64_t worker_spin_hits = 0;
  // Replication's share of the net bytes (replicas' output here; what a
  // replica reads from its primary is the link's, ServerState::ReplStats).
  uint64_t total_net_repl_output_bytes = 0;
  // Active expiry: slices that used their whole time, their time in all
  // (µs), and Redis's running estimate of the share of keys with a
  // deadline that are expired but not yet deleted (expired_stale_perc).
  uint64_t expired_time_cap_reached_count = 0;
  uint64_t reply_buffer_shrinks = 0;  // idle clients' output buffers given back (the cron)
  uint64_t command_ticks = 0;  // CycleClock ticks in commands (not counting EXEC's queue twice)
  uint64_t evicted_clients = 0;  // maxmemory-clients (client_eviction.h)
  uint64_t expire_cycle_us = 0;
  double expired_stale_perc = 0;
  std::map<std::string, uint64_t> error_counts;  // by error code ("ERR", "WRONGTYPE")

  // client_recent_max_input_buffer / _output_buffer: the largest client
  // buffers the cron saw in each of the last 8 seconds, one slot a second
  // (Redis's ClientsPeakMemInput/Output). Not summed by Add: INFO takes the
  // largest over the workers.
  struct PeakBuffers {
    static constexpr int kSlots = 8;
    int64_t second[kSlots] = {};
    uint64_t in[kSlots] = {}, out[kSlots] = {};
    void Note(int64_t now_s, uint64_t in_bytes, uint64_t out_bytes) {
      const int i = static_cast<int>(now_s % kSlots);
      if (second[i] != now_s) {
        second[i] = now_s;
        in[i] = out[i] = 0;
      }
      in[i] = std::max(in[i], in_bytes);
      out[i] = std::max(out[i], out_bytes);
    }
    // The largest of the last 8 seconds, into *in_max and *out_max.
    void Max(int64_t now_s, uint64_t* in_max, uint64_t* out_max) const {
      for (int i = 0; i < kSlots; i++) {
        if (now_s - second[i] >= kSlots) continue;
        *in_max = std::max(*in_max, in[i]);
        *out_max = std::max(*out_max, out[i]);
      }
    }
  };
  PeakBuffers peak_buffers;

  // Adds another worker's counters (INFO sums them).
  void Add(const ServerStats& o);
};

// INFO's instantaneous_* rates, as Redis's trackInstantaneousMetric: each
// metric's rate over each of the last 16 periods of at least 100 ms (the
// cron samples), averaged.
class Rates {
 public:
  enum Metric { kOps, kNetInput, kNetOutput, kReplInput, kReplOutput, kLoopCycles, kLoopTicks, kMetrics };
  void Start(int64_t now_ms) { time_ms_ = now_ms; }
  // `totals`: each metric's count so far.
  void Sample(int64_t now_ms, const uint64_t (&totals)[kMetrics]) {
    if (now_ms - time_ms_ < 100) return;
    for (int m = 0; m < kMetrics; m++) {
      samples_[m][idx_] = (totals[m] - counts_[m]) * 1000 / static_cast<uint64_t>(now_ms - time_ms_);
      counts_[m] = totals[m];
    }
    idx_ = (idx_ + 1) % kSamples;
    time_ms_ = now_ms;
  }
  // The counts went back to 0 (CONFIG RESETSTAT).
  void ResetCounts() {
    for (uint64_t& c : counts_) c = 0;
  }
  uint64_t PerSecond(Metric m) const {
    uint64_t sum = 0;
    for (uint64_t s : samples_[m]) sum += s;
    return sum / kSamples;
  }

 private:
  static constexpr int kSamples = 16;
  int64_t time_ms_ = 0;
  uint64_t counts_[kMetrics] = {};
  uint64_t samples_[kMetrics][kSamples] = {};
  int idx_ = 0;
};

}  // namespace peregrine
