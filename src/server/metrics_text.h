// Prometheus's text exposition (format 0.0.4) of the server's INFO: what
// /metrics serves (metrics_http.h).
//
// The metric names, types and labels are redis_exporter's
// (github.com/oliver006/redis_exporter, 1.74), derived from INFO by its
// rules, so that the dashboards and alerts written for it read Peregrine's
// endpoint unchanged and no sidecar is needed:
//   - a field it maps is `redis_<its name>`, a gauge or a counter as it
//     says; "ok"/"true" read 1, "err"/"fail"/"false" 0, other text is left
//     out; latest_fork_usec becomes latest_fork_seconds;
//   - Keyspace: redis_db_keys, _keys_expiring, _avg_ttl_seconds per db
//     (0 for each empty database below `databases`);
//   - Commandstats: redis_commands_total, _duration_seconds_total,
//     _rejected_calls_total, _failed_calls_total per cmd; Latencystats: the
//     summary redis_latency_percentiles_usec (quantile labels 50, 99, 99.9);
//     Errorstats: redis_errors_total per err;
//   - Replication: redis_connected_slave_offset_bytes / _lag_seconds per
//     replica, a replica's redis_master_link_up & co. with its primary's
//     address, redis_slave_info;
//   - redis_instance_info (version, role, run id ... as labels),
//     redis_start_time_seconds, redis_up.
// Beyond the exporter, INFO's # Peregrine section: peregrine_info{version},
// peregrine_threads, the cross-shard counters, and per worker (label
// worker="<n>") peregrine_worker_clients, _keys, _ops_per_sec (gauges),
// _commands_total, _loop_cycles_total and _loop_seconds_total.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace peregrine {

// `info` is INFO EVERYTHING's text; `databases` the configured count;
// `now_unix_s` the time (for redis_start_time_seconds).
std::string PrometheusFromInfo(std::string_view info, int databases, int64_t now_unix_s);

}  // namespace peregrine
