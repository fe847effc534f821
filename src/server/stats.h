// A worker's counters of connections, commands, bytes and errors (INFO's
// stats and errorstats sections sum every worker's).
#pragma once

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
  std::map<std::string, uint64_t> error_counts;  // by error code ("ERR", "WRONGTYPE")

  // Adds another worker's counters (INFO sums them).
  void Add(const ServerStats& o);
};

}  // namespace peregrine
