#include "server/metrics_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace peregrine {
namespace {

enum class Kind { kGauge, kCounter, kSummary };

// An INFO field redis_exporter exports under its own name.
struct Mapped {
  std::string_view field, metric;
  Kind kind;
};

// redis_exporter's metricMapGauges and metricMapCounters, the entries a
// Redis (7.x) INFO can have (its KeyDB, Tile38 and module entries left out).
constexpr Kind G = Kind::kGauge, C = Kind::kCounter;
constexpr Mapped kMapped[] = {
    // Server, Clients
    {"uptime_in_seconds", "uptime_in_seconds", G},
    {"process_id", "process_id", G},
    {"io_threads_active", "io_threads_active", G},
    {"connected_clients", "connected_clients", G},
    {"blocked_clients", "blocked_clients", G},
    {"maxclients", "max_clients", G},
    {"tracking_clients", "tracking_clients", G},
    {"clients_in_timeout_table", "clients_in_timeout_table", G},
    {"pubsub_clients", "pubsub_clients", G},
    {"watching_clients", "watching_clients", G},
    {"total_watched_keys", "total_watched_keys", G},
    {"total_blocking_keys", "total_blocking_keys", G},
    {"total_blocking_keys_on_nokey", "total_blocking_keys_on_nokey", G},
    {"client_longest_output_list", "client_longest_output_list", G},
    {"client_biggest_input_buf", "client_biggest_input_buf", G},
    {"client_recent_max_output_buffer", "client_recent_max_output_buffer_bytes", G},
    {"client_recent_max_input_buffer", "client_recent_max_input_buffer_bytes", G},
    // Memory
    {"allocator_active", "allocator_active_bytes", G},
    {"allocator_allocated", "allocator_allocated_bytes", G},
    {"allocator_resident", "allocator_resident_bytes", G},
    {"allocator_frag_ratio", "allocator_frag_ratio", G},
    {"allocator_frag_bytes", "allocator_frag_bytes", G},
    {"allocator_muzzy", "allocator_muzzy_bytes", G},
    {"allocator_rss_ratio", "allocator_rss_ratio", G},
    {"allocator_rss_bytes", "allocator_rss_bytes", G},
    {"used_memory", "memory_used_bytes", G},
    {"used_memory_rss", "memory_used_rss_bytes", G},
    {"used_memory_peak", "memory_used_peak_bytes", G},
    {"used_memory_lua", "memory_used_lua_bytes", G},
    {"used_memory_vm_eval", "memory_used_vm_eval_bytes", G},
    {"used_memory_scripts_eval", "memory_used_scripts_eval_bytes", G},
    {"used_memory_overhead", "memory_used_overhead_bytes", G},
    {"used_memory_startup", "memory_used_startup_bytes", G},
    {"used_memory_dataset", "memory_used_dataset_bytes", G},
    {"number_of_cached_scripts", "number_of_cached_scripts", G},
    {"number_of_functions", "number_of_functions", G},
    {"number_of_libraries", "number_of_libraries", G},
    {"used_memory_vm_functions", "memory_used_vm_functions_bytes", G},
    {"used_memory_scripts", "memory_used_scripts_bytes", G},
    {"used_memory_functions", "memory_used_functions_bytes", G},
    {"used_memory_vm_total", "memory_used_vm_total", G},
    {"maxmemory", "memory_max_bytes", G},
    {"mem_fragmentation_ratio", "mem_fragmentation_ratio", G},
    {"mem_fragmentation_bytes", "mem_fragmentation_bytes", G},
    {"mem_clients_slaves", "mem_clients_slaves", G},
    {"mem_clients_normal", "mem_clients_normal", G},
    {"mem_cluster_links", "mem_cluster_links_bytes", G},
    {"mem_aof_buffer", "mem_aof_buffer_bytes", G},
    {"mem_replication_backlog", "mem_replication_backlog_bytes", G},
    {"expired_stale_perc", "expired_stale_percentage", G},
    {"mem_not_counted_for_evict", "mem_not_counted_for_eviction_bytes", G},
    {"mem_total_replication_buffers", "mem_total_replication_buffers_bytes", G},
    {"mem_overhead_db_hashtable_rehashing", "mem_overhead_db_hashtable_rehashing_bytes", G},
    {"lazyfree_pending_objects", "lazyfree_pending_objects", G},
    {"lazyfreed_objects", "lazyfreed_objects", G},
    {"active_defrag_running", "active_defrag_running", G},
    {"migrate_cached_sockets", "migrate_cached_sockets_total", G},
    {"active_defrag_hits", "defrag_hits", G},
    {"active_defrag_misses", "defrag_misses", G},
    {"active_defrag_key_hits", "defrag_key_hits", G},
    {"active_defrag_key_misses", "defrag_key_misses", G},
    // (In both of its maps: the gauges' name, the counters' type.)
    {"expired_time_cap_reached_count", "expired_time_cap_reached_total", C},
    // Persistence
    {"loading", "loading_dump_file", G},
    {"async_loading", "async_loading", G},
    {"rdb_changes_since_last_save", "rdb_changes_since_last_save", G},
    {"rdb_bgsave_in_progress", "rdb_bgsave_in_progress", G},
    {"rdb_last_save_time", "rdb_last_save_timestamp_seconds", G},
    {"rdb_last_bgsave_status", "rdb_last_bgsave_status", G},
    {"rdb_last_bgsave_time_sec", "rdb_last_bgsave_duration_sec", G},
    {"rdb_current_bgsave_time_sec", "rdb_current_bgsave_duration_sec", G},
    {"rdb_saves", "rdb_saves_total", G},
    {"rdb_last_cow_size", "rdb_last_cow_size_bytes", G},
    {"rdb_last_load_keys_expired", "rdb_last_load_expired_keys", G},
    {"rdb_last_load_keys_loaded", "rdb_last_load_loaded_keys", G},
    {"aof_enabled", "aof_enabled", G},
    {"aof_rewrite_in_progress", "aof_rewrite_in_progress", G},
    {"aof_rewrite_scheduled", "aof_rewrite_scheduled", G},
    {"aof_last_rewrite_time_sec", "aof_last_rewrite_duration_sec", G},
    {"aof_current_rewrite_time_sec", "aof_current_rewrite_duration_sec", G},
    {"aof_last_cow_size", "aof_last_cow_size_bytes", G},
    {"aof_current_size", "aof_current_size_bytes", G},
    {"aof_base_size", "aof_base_size_bytes", G},
    {"aof_pending_rewrite", "aof_pending_rewrite", G},
    {"aof_buffer_length", "aof_buffer_length", G},
    {"aof_rewrite_buffer_length", "aof_rewrite_buffer_length", G},
    {"aof_pending_bio_fsync", "aof_pending_bio_fsync", G},
    {"aof_delayed_fsync", "aof_delayed_fsync", G},
    {"aof_last_bgrewrite_status", "aof_last_bgrewrite_status", G},
    {"aof_last_write_status", "aof_last_write_status", G},
    {"module_fork_in_progress", "module_fork_in_progress", G},
    {"module_fork_last_cow_size", "module_fork_last_cow_size", G},
    // Stats
    {"current_eviction_exceeded_time", "current_eviction_exceeded_time_ms", G},
    {"pubsub_channels", "pubsub_channels", G},
    {"pubsub_patterns", "pubsub_patterns", G},
    {"pubsubshard_channels", "pubsubshard_channels", G},
    {"latest_fork_usec", "latest_fork_usec", G},
    {"tracking_total_keys", "tracking_total_keys", G},
    {"tracking_total_items", "tracking_total_items", G},
    {"tracking_total_prefixes", "tracking_total_prefixes", G},
    {"total_connections_received", "connections_received_total", C},
    {"total_commands_processed", "commands_processed_total", C},
    {"rejected_connections", "rejected_connections_total", C},
    {"total_net_input_bytes", "net_input_bytes_total", C},
    {"total_net_output_bytes", "net_output_bytes_total", C},
    {"total_net_repl_input_bytes", "net_repl_input_bytes_total", C},
    {"total_net_repl_output_bytes", "net_repl_output_bytes_total", C},
    {"expired_subkeys", "expired_subkeys_total", C},
    {"expired_keys", "expired_keys_total", C},
    {"expire_cycle_cpu_milliseconds", "expire_cycle_cpu_time_ms_total", C},
    {"evicted_keys", "evicted_keys_total", C},
    {"evicted_clients", "evicted_clients_total", C},
    {"evicted_scripts", "evicted_scripts_total", C},
    {"total_eviction_exceeded_time", "eviction_exceeded_time_ms_total", C},
    {"keyspace_hits", "keyspace_hits_total", C},
    {"keyspace_misses", "keyspace_misses_total", C},
    {"unexpected_error_replies", "unexpected_error_replies", C},
    {"total_error_replies", "total_error_replies", C},
    {"dump_payload_sanitizations", "dump_payload_sanitizations", C},
    {"total_reads_processed", "total_reads_processed", C},
    {"total_writes_processed", "total_writes_processed", C},
    {"io_threaded_reads_processed", "io_threaded_reads_processed", C},
    {"io_threaded_writes_processed", "io_threaded_writes_processed", C},
    {"client_query_buffer_limit_disconnections", "client_query_buffer_limit_disconnections_total", C},
    {"client_output_buffer_limit_disconnections", "client_output_buffer_limit_disconnections_total", C},
    {"reply_buffer_shrinks", "reply_buffer_shrinks_total", C},
    {"reply_buffer_expands", "reply_buffer_expands_total", C},
    {"acl_access_denied_auth", "acl_access_denied_auth_total", C},
    {"acl_access_denied_cmd", "acl_access_denied_cmd_total", C},
    {"acl_access_denied_key", "acl_access_denied_key_total", C},
    {"acl_access_denied_channel", "acl_access_denied_channel_total", C},
    // Replication
    {"connected_slaves", "connected_slaves", G},
    {"repl_backlog_size", "replication_backlog_bytes", G},
    {"repl_backlog_active", "repl_backlog_is_active", G},
    {"repl_backlog_first_byte_offset", "repl_backlog_first_byte_offset", G},
    {"repl_backlog_histlen", "repl_backlog_history_bytes", G},
    {"master_repl_offset", "master_repl_offset", G},
    {"second_repl_offset", "second_repl_offset", G},
    {"slave_expires_tracked_keys", "slave_expires_tracked_keys", G},
    {"slave_priority", "slave_priority", G},
    {"sync_full", "replica_resyncs_full", G},
    {"sync_partial_ok", "replica_partial_resync_accepted", G},
    {"sync_partial_err", "replica_partial_resync_denied", G},
    // CPU
    {"used_cpu_sys", "cpu_sys_seconds_total", C},
    {"used_cpu_user", "cpu_user_seconds_total", C},
    {"used_cpu_sys_children", "cpu_sys_children_seconds_total", C},
    {"used_cpu_user_children", "cpu_user_children_seconds_total", C},
    {"used_cpu_sys_main_thread", "cpu_sys_main_thread_seconds_total", C},
    {"used_cpu_user_main_thread", "cpu_user_main_thread_seconds_total", C},
    // Cluster (CLUSTER INFO's)
    {"cluster_stats_messages_sent", "cluster_messages_sent_total", G},
    {"cluster_stats_messages_received", "cluster_messages_received_total", G},
};

const Mapped* FindMapped(std::string_view field) {
  static const std::map<std::string_view, const Mapped*> index = [] {
    std::map<std::string_view, const Mapped*> m;
    for (const Mapped& e : kMapped) m.emplace(e.field, &e);
    return m;
  }();
  auto it = index.find(field);
  return it == index.end() ? nullptr : it->second;
}

// A number as INFO writes it (the exporter's reading: ok/true 1,
// err/fail/false 0); false for other text.
bool ParseValue(std::string_view s, double* out) {
  if (s == "ok" || s == "true") return *out = 1, true;
  if (s == "err" || s == "fail" || s == "false") return *out = 0, true;
  if (s.empty() || s.size() > 64) return false;
  const std::string z(s);
  char* end = nullptr;
  *out = std::strtod(z.c_str(), &end);
  return end == z.c_str() + z.size();
}

// "k1=v1,k2=v2" (a keyspace, commandstat, slave or worker line's value).
std::vector<std::pair<std::string_view, std::string_view>> Pairs(std::string_view s) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view part = s.substr(0, comma);
    const size_t eq = part.find('=');
    out.emplace_back(part.substr(0, eq), eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view Get(const std::vector<std::pair<std::string_view, std::string_view>>& kv, std::string_view k) {
  for (const auto& [key, value] : kv)
    if (key == k) return value;
  return {};
}

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// The families collected, written sorted by name (as the exporter's
// Prometheus client does); a family's samples in the order they came.
class Exposition {
 public:
  void Add(std::string_view name, Kind kind, double value, Labels labels = {}, std::string_view suffix = {}) {
    std::sort(labels.begin(), labels.end());  // (by name, as the exporter's client writes them)
    Family& f = families_[std::string(name)];
    f.kind = kind;
    std::string& line = f.samples.emplace_back(name);
    line += suffix;
    if (!labels.empty()) {
      line += '{';
      for (size_t i = 0; i < labels.size(); i++) {
        if (i > 0) line += ',';
        line += labels[i].first;
        line += "=\"";
        for (char ch : labels[i].second) {
          if (ch == '\\' || ch == '"') line += '\\', line += ch;
          else if (ch == '\n') line += "\\n";
          else line += ch;
        }
        line += '"';
      }
      line += '}';
    }
    line += ' ';
    line += Number(value);
  }

  std::string Text() const {
    std::string out;
    for (const auto& [name, f] : families_) {
      const char* type = f.kind == Kind::kCounter ? "counter" : f.kind == Kind::kSummary ? "summary" : "gauge";
      out += "# HELP " + name + " " + name + " (from INFO)\n# TYPE " + name + " " + type + "\n";
      for (const std::string& s : f.samples) out += s + "\n";
    }
    return out;
  }

 private:
  struct Family {
    Kind kind = Kind::kGauge;
    std::vector<std::string> samples;
  };
  static std::string Number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, r.ptr);
  }
  std::map<std::string, Family> families_;
};

std::string Sanitized(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) ch = '_';
  return out;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// master_host / master_1_host (KeyDB's), and so on: `suffix` after
// "master" and an optional "_<n>".
bool MasterField(std::string_view key, std::string_view suffix) {
  if (!StartsWith(key, "master")) return false;
  key.remove_prefix(6);
  if (key.size() > 1 && key[0] == '_' && key[1] >= '0' && key[1] <= '9') {
    size_t i = 1;
    while (i < key.size() && key[i] >= '0' && key[i] <= '9') i++;
    key.remove_prefix(i);
  }
  return key == suffix;
}

// A # Peregrine field: counters get _total (a `_usec` one becomes
// `_seconds_total`), the gauges are named here.
void AddPeregrine(Exposition& ex, std::string_view prefix, std::string_view field, double v, const Labels& labels) {
  static const std::set<std::string_view> kGauges = {"threads", "clients", "keys", "ops_per_sec"};
  std::string name = std::string(prefix) + std::string(field);
  if (kGauges.count(field)) {
    ex.Add(name, Kind::kGauge, v, labels);
  } else if (name.size() > 5 && name.ends_with("_usec")) {
    ex.Add(name.substr(0, name.size() - 5) + "_seconds_total", Kind::kCounter, v / 1e6, labels);
  } else {
    ex.Add(name + "_total", Kind::kCounter, v, labels);
  }
}

}  // namespace

std::string PrometheusFromInfo(std::string_view info, int databases, int64_t now_unix_s) {
  Exposition ex;
  std::map<std::string_view, std::string_view> fields;
  std::set<std::string_view> dbs_seen;
  struct CommandCalls {
    double calls = 0, usec = 0;
  };
  std::map<std::string_view, CommandCalls> command_calls;
  std::vector<std::pair<std::string_view, std::vector<std::pair<std::string, double>>>> percentiles;
  std::string_view section, master_host, master_port;
  while (!info.empty()) {
    const size_t nl = info.find('\n');
    std::string_view line = info.substr(0, nl);
    info.remove_prefix(nl == std::string_view::npos ? info.size() : nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (StartsWith(line, "# ")) {
      section = line.substr(2);
      continue;
    }
    const size_t colon = line.find(':');
    if (line.size() < 2 || colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon), value = line.substr(colon + 1);
    fields[key] = value;
    if (MasterField(key, "_host")) master_host = value;
    if (MasterField(key, "_port")) master_port = value;
    double v;
    if (section == "Replication") {
      const Labels master = {{"master_host", std::string(master_host)}, {"master_port", std::string(master_port)}};
      if (MasterField(key, "_link_status")) {
        ex.Add("redis_master_link_up", Kind::kGauge, value == "up" ? 1 : 0, master);
        continue;
      }
      const bool io = MasterField(key, "_last_io_seconds_ago"), sync = MasterField(key, "_sync_in_progress");
      if (io || sync || key == "slave_repl_offset") {
        const char* name = io ? "redis_master_last_io_seconds_ago"
                               : sync ? "redis_master_sync_in_progress" : "redis_slave_repl_offset";
        ex.Add(name, Kind::kGauge, ParseValue(value, &v) ? std::trunc(v) : 0, master);
        continue;
      }
      if (StartsWith(key, "slave") && key.size() > 5 && key[5] >= '0' && key[5] <= '9') {
        const auto kv = Pairs(value);
        double offset, lag;
        if (ParseValue(Get(kv, "offset"), &offset)) {
          const Labels replica = {{"slave_ip", std::string(Get(kv, "ip"))},
                                  {"slave_port", std::string(Get(kv, "port"))},
                                  {"slave_state", std::string(Get(kv, "state"))}};
          ex.Add("redis_connected_slave_offset_bytes", Kind::kGauge, offset, replica);
          if (ParseValue(Get(kv, "lag"), &lag)) ex.Add("redis_connected_slave_lag_seconds", Kind::kGauge, lag, replica);
          continue;
        }
      }
    } else if (section == "Server") {
      if (key == "uptime_in_seconds" && ParseValue(value, &v))
        ex.Add("redis_start_time_seconds", Kind::kGauge, static_cast<double>(now_unix_s) - v);
      if ((key == "hz" || key == "configured_hz") && ParseValue(value, &v))
        ex.Add("redis_" + std::string(key), Kind::kGauge, v);
    } else if (section == "Commandstats") {
      if (StartsWith(key, "cmdstat_")) {
        const auto kv = Pairs(value);
        double calls, usec, rejected, failed;
        if (ParseValue(Get(kv, "calls"), &calls) && ParseValue(Get(kv, "usec"), &usec)) {
          const Labels cmd = {{"cmd", std::string(key.substr(8))}};
          ex.Add("redis_commands_total", Kind::kCounter, calls, cmd);
          ex.Add("redis_commands_duration_seconds_total", Kind::kCounter, usec / 1e6, cmd);
          if (ParseValue(Get(kv, "rejected_calls"), &rejected) && ParseValue(Get(kv, "failed_calls"), &failed)) {
            ex.Add("redis_commands_rejected_calls_total", Kind::kCounter, rejected, cmd);
            ex.Add("redis_commands_failed_calls_total", Kind::kCounter, failed, cmd);
          }
          command_calls[key.substr(8)] = {calls, usec};
        }
      }
      continue;
    } else if (section == "Latencystats") {
      if (StartsWith(key, "latency_percentiles_usec_")) {
        std::vector<std::pair<std::string, double>> qs;
        for (const auto& [p, x] : Pairs(value)) {
          double q;
          if (p.size() < 2 || !ParseValue(p.substr(1), &q) || !ParseValue(x, &v)) {
            qs.clear();
            break;
          }
          qs.emplace_back(std::string(p.substr(1)), v);
        }
        if (!qs.empty()) percentiles.emplace_back(key.substr(25), std::move(qs));
      }
      continue;
    } else if (section == "Errorstats") {
      if (StartsWith(key, "errorstat_") && ParseValue(Get(Pairs(value), "count"), &v))
        ex.Add("redis_errors_total", Kind::kCounter, v, {{"err", std::string(key.substr(10))}});
      continue;
    } else if (section == "Keyspace") {
      const auto kv = Pairs(value);
      double keys, expires, ttl;
      if (StartsWith(key, "db") && kv.size() >= 2 && kv.size() <= 4 && ParseValue(kv[0].second, &keys) &&
          ParseValue(kv[1].second, &expires)) {
        const Labels db = {{"db", std::string(key)}};
        ex.Add("redis_db_keys", Kind::kGauge, keys, db);
        ex.Add("redis_db_keys_expiring", Kind::kGauge, expires, db);
        if (kv.size() > 2 && ParseValue(kv[2].second, &ttl)) ex.Add("redis_db_avg_ttl_seconds", Kind::kGauge, ttl / 1000, db);
        dbs_seen.insert(key);
        continue;
      }
    } else if (section == "Peregrine") {
      if (key == "peregrine_version") {
        ex.Add("peregrine_info", Kind::kGauge, 1, {{"version", std::string(value)}});
      } else if (StartsWith(key, "worker") && key.size() > 6 && key[6] >= '0' && key[6] <= '9') {
        const Labels worker = {{"worker", std::string(key.substr(6))}};
        for (const auto& [f, x] : Pairs(value))
          if (ParseValue(x, &v)) AddPeregrine(ex, "peregrine_worker_", f, v, worker);
      } else if (ParseValue(value, &v)) {
        AddPeregrine(ex, "peregrine_", key, v, {});
      }
      continue;
    }
    // The exporter's general rule: a mapped field, or any "db..." or
    // "cluster_..." one under its own (sanitized) name, as a gauge.
    const Mapped* m = FindMapped(key);
    if (m == nullptr && !StartsWith(key, "db") && !StartsWith(key, "cluster_")) continue;
    if (!ParseValue(value, &v)) continue;
    if (m != nullptr && m->field == "latest_fork_usec") {
      ex.Add("redis_latest_fork_seconds", Kind::kGauge, v / 1e6);
      continue;
    }
    ex.Add("redis_" + (m != nullptr ? std::string(m->metric) : Sanitized(key)), m != nullptr ? m->kind : Kind::kGauge,
           v);
  }
  // Latency summaries: a command's percentiles with its calls and time.
  for (const auto& [cmd, qs] : percentiles) {
    auto it = command_calls.find(cmd);
    if (it == command_calls.end()) continue;
    const Labels label = {{"cmd", std::string(cmd)}};
    for (const auto& [q, x] : qs) {
      Labels l = label;
      l.emplace_back("quantile", q);
      ex.Add("redis_latency_percentiles_usec", Kind::kSummary, x, l);
    }
    ex.Add("redis_latency_percentiles_usec", Kind::kSummary, it->second.usec, label, "_sum");
    ex.Add("redis_latency_percentiles_usec", Kind::kSummary, it->second.calls, label, "_count");
  }
  for (int i = 0; i < databases; i++) {
    const std::string db = "db" + std::to_string(i);
    if (dbs_seen.count(db)) continue;
    ex.Add("redis_db_keys", Kind::kGauge, 0, {{"db", db}});
    ex.Add("redis_db_keys_expiring", Kind::kGauge, 0, {{"db", db}});
  }
  const auto field = [&](std::string_view k) {
    auto it = fields.find(k);
    return it == fields.end() ? std::string() : std::string(it->second);
  };
  ex.Add("redis_instance_info", Kind::kGauge, 1,
         {{"role", field("role")},
          {"redis_version", field("redis_version")},
          {"redis_build_id", field("redis_build_id")},
          {"redis_mode", field("redis_mode")},
          {"os", field("os")},
          {"maxmemory_policy", field("maxmemory_policy")},
          {"tcp_port", field("tcp_port")},
          {"run_id", field("run_id")},
          {"process_id", field("process_id")},
          {"master_replid", field("master_replid")}});
  if (field("role") == "slave")
    ex.Add("redis_slave_info", Kind::kGauge, 1,
           {{"master_host", field("master_host")},
            {"master_port", field("master_port")},
            {"read_only", field("slave_read_only")}});
  ex.Add("redis_up", Kind::kGauge, 1);
  return ex.Text();
}

}  // namespace peregrine
