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

// INFO's instantaneous_ops_per_sec, as Redis computes it: the rate over each
// of the last 16 periods of at least 100 ms (the cron samples), averaged.
class OpsRate {
 public:
  void Start(int64_t now_ms) { time_ms_ = now_ms; }
  // `total`: the commands processed so far.
  void Sample(int64_t now_ms, uint64_t total) {
    if (now_ms - time_ms_ < 100) return;
    samples_[idx_] = (total - count_) * 1000 / static_cast<uint64_t>(now_ms - time_ms_);
    idx_ = (idx_ + 1) % kSamples;
    count_ = total;
    time_ms_ = now_ms;
  }
  // The count of commands went back to 0 (CONFIG RESETSTAT).
  void ResetCount() { count_ = 0; }
  uint64_t PerSecond() const {
    uint64_t sum = 0;
    for (uint64_t s : samples_) sum += s;
    return sum / kSamples;
  }

 private:
  static constexpr int kSamples = 16;
  int64_t time_ms_ = 0;
  uint64_t count_ = 0;
  uint64_t samples_[kSamples] = {};
  int idx_ = 0;
};

}  // namespace peregrine
