// Summing the workers' counters (see stats.h).
#include "server/stats.h"

namespace peregrine {

void ServerStats::Add(const ServerStats& o) {
  total_connections_received += o.total_connections_received;
  total_commands_processed += o.total_commands_processed;
  total_net_input_bytes += o.total_net_input_bytes;
  total_net_output_bytes += o.total_net_output_bytes;
  rejected_connections += o.rejected_connections;
  total_error_replies += o.total_error_replies;
  evicted_clients += o.evicted_clients;
  total_reads_processed += o.total_reads_processed;
  total_writes_processed += o.total_writes_processed;
  client_query_buffer_limit_disconnections += o.client_query_buffer_limit_disconnections;
  client_output_buffer_limit_disconnections += o.client_output_buffer_limit_disconnections;
  cross_shard_batches += o.cross_shard_batches;
  cross_shard_read_groups += o.cross_shard_read_groups;
  cross_shard_read_group_reruns += o.cross_shard_read_group_reruns;
  cross_shard_write_groups += o.cross_shard_write_groups;
  worker_spins += o.worker_spins;
  worker_spin_hits += o.worker_spin_hits;
  total_net_repl_output_bytes += o.total_net_repl_output_bytes;
  expired_time_cap_reached_count += o.expired_time_cap_reached_count;
  reply_buffer_shrinks += o.reply_buffer_shrinks;
  command_ticks += o.command_ticks;
  expire_cycle_us += o.expire_cycle_us;
  expired_stale_perc += o.expired_stale_perc;  // (INFO divides by the workers)
  for (const auto& [code, n] : o.error_counts) error_counts[code] += n;
}

}  // namespace peregrine
