// Configuration directives (see config.h).
#include "server/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "core/numbers.h"
#include "protocol/parser.h"
#include "server/config_options.h"
#include "server/notify.h"

namespace peregrine {

using namespace config_options;

std::string PercentileName(double p) {
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), "%f", p);
  // (Redis's trimDoubleString: no trailing zeros, nor a trailing point.)
  while (n > 0 && buf[n - 1] == '0') n--;
  if (n > 0 && buf[n - 1] == '.') n--;
  return std::string(buf, static_cast<size_t>(n));
}

std::string_view MaxmemoryPolicyName(MaxmemoryPolicy p) {
  switch (p) {
    case MaxmemoryPolicy::kVolatileLru: return "volatile-lru";
    case MaxmemoryPolicy::kVolatileLfu: return "volatile-lfu";
    case MaxmemoryPolicy::kVolatileRandom: return "volatile-random";
    case MaxmemoryPolicy::kVolatileTtl: return "volatile-ttl";
    case MaxmemoryPolicy::kAllKeysLru: return "allkeys-lru";
    case MaxmemoryPolicy::kAllKeysLfu: return "allkeys-lfu";
    case MaxmemoryPolicy::kAllKeysRandom: return "allkeys-random";
    case MaxmemoryPolicy::kNoEviction: return "noeviction";
  }
  return "noeviction";
}

namespace {

// A byte count with Redis's units (1k, 1kb, 1m, ...); Redis's range for it
// (maxmemory: all of unsigned 64 bits; the buffer limits: up to LLONG_MAX).
Option MemoryOption(std::string_view name, uint64_t Config::*field, uint64_t min, uint64_t max, Mutability mut) {
  return Option{name, mut, 1, 1, [field](const Config& c) { return std::to_string(c.*field); },
                [field, min, max](Config& c, Args a) -> std::string {
                  return CheckMemory(a[0], min, max, &(c.*field));
                }};
}

// enable-debug-command and enable-protected-configs: no, yes or local.
Option ProtectedActionOption(std::string_view name, Config::ProtectedAction Config::*field) {
  return Option{name, kImmutable, 1, 1,
                [field](const Config& c) -> std::string {
                  static const char* kNames[] = {"no", "yes", "local"};
                  return kNames[static_cast<int>(c.*field)];
                },
                [field](Config& c, Args a) -> std::string {
                  const std::string v = Lower(a[0]);
                  if (v == "no") c.*field = Config::ProtectedAction::kNo;
                  else if (v == "yes") c.*field = Config::ProtectedAction::kYes;
                  else if (v == "local") c.*field = Config::ProtectedAction::kLocal;
                  else return "argument(s) must be one of the following: no, yes, local";
                  return "";
                }};
}

// A file or directory name in the working directory, not a path (Redis's
// isValidDBfilename, isValidAOFfilename, isValidAOFdirname).
Option NameOption(std::string_view name, std::string Config::*field, Mutability mut, std::string_view error) {
  return Option{name, mut, 1, 1, [field](const Config& c) { return c.*field; },
                [field, error](Config& c, Args a) -> std::string {
                  if (a[0].empty() || a[0].find('/') != std::string::npos || a[0] == "." || a[0] == "..")
                    return std::string(error);
                  c.*field = a[0];
                  return "";
                }};
}

}  // namespace

const std::vector<Option>& config_options::Options() {
  static const std::vector<Option> options = [] {
    std::vector<Option> o;
    o.push_back(IntOption("port", &Config::port, 0, 65535, kMutable));  // (Server::ApplyPort)
    o.push_back(IntOption("metrics-port", &Config::metrics_port, 0, 65535, kFixed));
    o.push_back(Option{"bind", kNotYet, 1, 16,
                       [](const Config& c) {
                         std::string s;
                         for (const auto& b : c.bind) s += (s.empty() ? "" : " ") + b;
                         return s;
                       },
                       [](Config& c, Args a) -> std::string {
                         c.bind.assign(a.begin(), a.end());
                         return "";
                       }});
    o.push_back(StringOption("unixsocket", &Config::unixsocket, kImmutable));
    o.push_back(Option{"unixsocketperm", kImmutable, 1, 1,
                       [](const Config& c) {
                         char buf[16];
                         snprintf(buf, sizeof(buf), "%o", c.unixsocketperm);
                         return std::string(buf);
                       },
                       [](Config& c, Args a) -> std::string {
                         const std::string& s = a[0];
                         if (s.empty() || s.size() > 11 ||
                             !std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '7'; }))
                           return "argument couldn't be parsed as an octal number";
                         unsigned long v = std::stoul(s, nullptr, 8);
                         if (v > 0777) return "argument must be between 0 and 777 inclusive";
                         c.unixsocketperm = static_cast<unsigned>(v);
                         return "";
                       }});
    o.push_back(IntOption("databases", &Config::databases, 1, INT_MAX, kImmutable));
    // (Redis's io-threads: each worker does its own I/O, so the number of
    // threads doing I/O is the number of workers; a Redis config file's
    // io-threads line sets it.)
    for (std::string_view name : {"threads", "io-threads"})
      o.push_back(IntOption(name, &Config::threads, 1, 256, name == "threads" ? kFixed : kImmutable));
    o.push_back(IntOption("worker-spin-us", &Config::worker_spin_us, 0, 1000000, kFixed));
    o.push_back(EnumOption("worker-sched-policy", &Config::worker_sched,
                           {{"auto", Config::WorkerSched::kAuto},
                            {"batch", Config::WorkerSched::kBatch},
                            {"normal", Config::WorkerSched::kNormal}},
                           kFixed));
    o.push_back(IntOption("maxclients", &Config::maxclients, 1, UINT_MAX, kMutable));
    o.push_back(IntOption("timeout", &Config::timeout, 0, INT_MAX, kMutable));
    o.push_back(IntOption("tcp-keepalive", &Config::tcp_keepalive, 0, INT_MAX, kMutable));
    o.push_back(IntOption("tcp-backlog", &Config::tcp_backlog, 0, INT_MAX, kImmutable));
    o.push_back(Option{"loglevel", kMutable, 1, 1, [](const Config& c) { return c.loglevel; },
                       [](Config& c, Args a) -> std::string {
                         std::string v = Lower(a[0]);
                         if (v != "debug" && v != "verbose" && v != "notice" && v != "warning" &&
                             v != "nothing")
                           return "argument(s) must be one of the following: debug, verbose, notice, "
                                  "warning, nothing";
                         c.loglevel = v;
                         return "";
                       }});
    o.push_back(StringOption("logfile", &Config::logfile, kImmutable));
    o.push_back(BoolOption("daemonize", &Config::daemonize, kImmutable));
    o.push_back(EnumOption("supervised", &Config::supervised,
                           {{"upstart", Config::Supervised::kUpstart},
                            {"systemd", Config::Supervised::kSystemd},
                            {"auto", Config::Supervised::kAuto},
                            {"no", Config::Supervised::kNo}},
                           kImmutable));
    o.push_back(StringOption("pidfile", &Config::pidfile, kImmutable));
    o.push_back(MemoryOption("proto-max-bulk-len", &Config::proto_max_bulk_len, 1024 * 1024, LLONG_MAX, kMutable));
    o.push_back(MemoryOption("repl-backlog-size", &Config::repl_backlog_size, 1, LLONG_MAX, kMutable));
    o.push_back(IntOption("repl-backlog-ttl", &Config::repl_backlog_ttl, 0, INT_MAX, kMutable));
    o.push_back(IntOption("repl-timeout", &Config::repl_timeout, 1, INT_MAX, kMutable));
    o.push_back(IntOption("shutdown-timeout", &Config::shutdown_timeout, 0, INT_MAX, kMutable));
    for (std::string_view name : {"repl-ping-replica-period", "repl-ping-slave-period"})
      o.push_back(IntOption(name, &Config::repl_ping_replica_period, 1, INT_MAX, kMutable));
    // "replicaof <host> <port>", or "no one" (none); REPLICAOF changes it.
    for (std::string_view name : {"replicaof", "slaveof"})
      o.push_back(Option{name, kImmutable, 2, 2,
                         [](const Config& c) {
                           return c.replicaof_host.empty() ? std::string()
                                                           : c.replicaof_host + " " + std::to_string(c.replicaof_port);
                         },
                         [](Config& c, Args a) -> std::string {
                           if (Lower(a[0]) == "no" && Lower(a[1]) == "one") {
                             c.replicaof_host.clear();
                             c.replicaof_port = 0;
                             return "";
                           }
                           int64_t port;
                           if (!ParseInt64(a[1], &port) || port < 0 || port > 65535) return "Invalid master port";
                           c.replicaof_host = a[0];
                           c.replicaof_port = static_cast<int>(port);
                           return "";
                         }});
    o.push_back(StringOption("masteruser", &Config::masteruser, kMutable));
    o.push_back(StringOption("masterauth", &Config::masterauth, kMutable));
    for (std::string_view name : {"replica-read-only", "slave-read-only"})
      o.push_back(BoolOption(name, &Config::replica_read_only, kMutable));
    for (std::string_view name : {"replica-serve-stale-data", "slave-serve-stale-data"})
      o.push_back(BoolOption(name, &Config::replica_serve_stale_data, kMutable));
    for (std::string_view name : {"replica-ignore-maxmemory", "slave-ignore-maxmemory"})
      o.push_back(BoolOption(name, &Config::replica_ignore_maxmemory, kMutable));
    o.push_back(BoolOption("replica-announced", &Config::replica_announced, kMutable));
    for (std::string_view name : {"replica-priority", "slave-priority"})
      o.push_back(IntOption(name, &Config::replica_priority, 0, INT_MAX, kMutable));
    for (std::string_view name : {"replica-announce-ip", "slave-announce-ip"})
      o.push_back(StringOption(name, &Config::replica_announce_ip, kMutable));
    for (std::string_view name : {"replica-announce-port", "slave-announce-port"})
      o.push_back(IntOption(name, &Config::replica_announce_port, 0, 65535, kMutable));
    o.push_back(Option{"repl-diskless-load", kMutable, 1, 1,
                       [](const Config& c) -> std::string {
                         static const char* kNames[] = {"disabled", "on-empty-db", "swapdb"};
                         return kNames[c.repl_diskless_load];
                       },
                       [](Config& c, Args a) -> std::string {
                         const std::string v = Lower(a[0]);
                         if (v == "disabled") c.repl_diskless_load = 0;
                         else if (v == "on-empty-db") c.repl_diskless_load = 1;
                         else if (v == "swapdb") c.repl_diskless_load = 2;
                         else return "argument(s) must be one of the following: disabled, on-empty-db, swapdb";
                         return "";
                       }});
    o.push_back(BoolOption("repl-diskless-sync", &Config::repl_diskless_sync, kMutable));
    o.push_back(BoolOption("lazyfree-lazy-user-flush", &Config::lazyfree_lazy_user_flush, kMutable));
    o.push_back(IntOption("repl-diskless-sync-delay", &Config::repl_diskless_sync_delay, 0, INT_MAX, kMutable));
    o.push_back(IntOption("repl-diskless-sync-max-replicas", &Config::repl_diskless_sync_max_replicas, 0, INT_MAX,
                          kMutable));
    o.push_back(MemoryOption("client-query-buffer-limit", &Config::client_query_buffer_limit, 1024 * 1024,
                             LLONG_MAX, kMutable));
    // "<class> <hard> <soft> <seconds> ..." (in a file, one class per line
    // or several; CONFIG SET takes them in one value). Classes not named keep
    // their limits; a bad group changes nothing (Redis's texts); an empty
    // value is accepted and changes nothing, as in Redis.
    o.push_back(Option{
        "client-output-buffer-limit", kMutable, 1, 48,
        [](const Config& c) {
          static const char* kNames[] = {"normal", "slave", "pubsub"};
          std::string out;
          for (int i = 0; i < Config::kClientClasses; i++) {
            const auto& l = c.output_buffer_limits[i];
            if (!out.empty()) out += ' ';
            out += std::string(kNames[i]) + " " + std::to_string(l.hard) + " " + std::to_string(l.soft) + " " +
                   std::to_string(l.soft_seconds);
          }
          return out;
        },
        [](Config& c, Args a) -> std::string {
          std::vector<std::string> words;
          for (const std::string& arg : a) {
            size_t i = 0;
            while (i < arg.size()) {
              while (i < arg.size() && std::isspace(static_cast<unsigned char>(arg[i]))) i++;
              size_t j = i;
              while (j < arg.size() && !std::isspace(static_cast<unsigned char>(arg[j]))) j++;
              if (j > i) words.push_back(arg.substr(i, j - i));
              i = j;
            }
          }
          if (words.size() % 4 != 0) return "Wrong number of arguments in buffer limit configuration.";
          Config::OutputBufferLimit limits[Config::kClientClasses];
          std::copy(std::begin(c.output_buffer_limits), std::end(c.output_buffer_limits), std::begin(limits));
          for (size_t k = 0; k < words.size(); k += 4) {
            const std::string cls = Lower(words[k]);
            int index;
            if (cls == "normal") index = Config::kNormalClients;
            else if (cls == "slave" || cls == "replica") index = Config::kReplicaClients;
            else if (cls == "pubsub") index = Config::kPubsubClients;
            else return "Invalid client class specified in buffer limit configuration.";
            auto hard = ParseMemorySize(words[k + 1]);
            auto soft = ParseMemorySize(words[k + 2]);
            int64_t seconds;
            if (!hard || !soft || !ParseInt64(words[k + 3], &seconds) || seconds < 0 ||
                *hard > static_cast<uint64_t>(LLONG_MAX) || *soft > static_cast<uint64_t>(LLONG_MAX))
              return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            limits[index] = {*hard, *soft, seconds};
          }
          std::copy(std::begin(limits), std::end(limits), std::begin(c.output_buffer_limits));
          return "";
        }});
    // Redis accepts any non-negative hz and clamps it to 1..500.
    o.push_back(Option{"hz", kMutable, 1, 1, [](const Config& c) { return std::to_string(c.hz); },
                       [](Config& c, Args a) -> std::string {
                         int64_t v;
                         if (!ParseInt64(a[0], &v)) return "argument couldn't be parsed into an integer";
                         if (v < 0 || v > INT_MAX)
                           return "argument must be between 0 and " + std::to_string(INT_MAX) + " inclusive";
                         c.hz = static_cast<int>(std::clamp<int64_t>(v, 1, 500));
                         return "";
                       }});
    o.push_back(MemoryOption("maxmemory", &Config::maxmemory, 0, UINT64_MAX, kMutable));
    o.push_back(Option{"maxmemory-policy", kMutable, 1, 1,
                       [](const Config& c) { return std::string(MaxmemoryPolicyName(c.maxmemory_policy)); },
                       [](Config& c, Args a) -> std::string {
                         const std::string v = Lower(a[0]);
                         for (uint8_t i = 0; i <= static_cast<uint8_t>(MaxmemoryPolicy::kNoEviction); i++) {
                           const auto p = static_cast<MaxmemoryPolicy>(i);
                           if (v == MaxmemoryPolicyName(p)) {
                             c.maxmemory_policy = p;
                             return "";
                           }
                         }
                         return "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
                                "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
                                "noeviction";
                       }});
    o.push_back(ProtectedActionOption("enable-debug-command", &Config::enable_debug_command));
    o.push_back(ProtectedActionOption("enable-module-command", &Config::enable_module_command));
    o.push_back(IntOption("maxmemory-samples", &Config::maxmemory_samples, 1, INT_MAX, kMutable));
    // A memory value, or a percentage of maxmemory ("10%", kept negative).
    o.push_back(Option{"maxmemory-clients", kMutable, 1, 1,
                       [](const Config& c) {
                         return c.maxmemory_clients < 0 ? std::to_string(-c.maxmemory_clients) + "%"
                                                        : std::to_string(c.maxmemory_clients);
                       },
                       [](Config& c, Args a) -> std::string {
                         const std::string& v = a[0];
                         int64_t pct;
                         if (auto bytes = ParseMemorySize(v)) {
                           if (*bytes > static_cast<uint64_t>(INT64_MAX))
                             return "argument must be between -100 and " + std::to_string(INT64_MAX) + " inclusive";
                           c.maxmemory_clients = static_cast<int64_t>(*bytes);
                         } else if (v.size() > 1 && v.back() == '%' &&
                                    ParseInt64(std::string_view(v).substr(0, v.size() - 1), &pct) && pct >= 0) {
                           if (pct > 100) return "percentage argument must be less or equal to 100";
                           c.maxmemory_clients = -pct;
                         } else {
                           return "argument must be a memory or percent value";
                         }
                         return "";
                       }});
    o.push_back(IntOption("slowlog-log-slower-than", &Config::slowlog_log_slower_than, -1, LLONG_MAX, kMutable));
    o.push_back(IntOption("slowlog-max-len", &Config::slowlog_max_len, 0, LONG_MAX, kMutable));
    o.push_back(IntOption("latency-monitor-threshold", &Config::latency_monitor_threshold, 0, LLONG_MAX, kMutable));
    o.push_back(BoolOption("latency-tracking", &Config::latency_tracking, kMutable));
    o.push_back(IntOption("tracking-table-max-keys", &Config::tracking_table_max_keys, 0, LONG_MAX, kMutable));
    o.push_back(Option{"latency-tracking-info-percentiles", kMutable, 1, 16,
                       [](const Config& c) {
                         std::string s;
                         for (double p : c.latency_tracking_info_percentiles) {
                           if (!s.empty()) s += ' ';
                           s += PercentileName(p);
                         }
                         return s;
                       },
                       [](Config& c, Args a) -> std::string {
                         // (One string from CONFIG SET, words from a file; "" is none.)
                         std::string all;
                         for (const std::string& w : a) all += (all.empty() ? "" : " ") + w;
                         std::vector<double> out;
                         size_t i = 0;
                         while (i < all.size()) {
                           while (i < all.size() && all[i] == ' ') i++;
                           const size_t start = i;
                           while (i < all.size() && all[i] != ' ') i++;
                           if (start == i) break;
                           double p;
                           if (!ParseDouble(std::string_view(all).substr(start, i - start), &p))
                             return "Invalid latency-tracking-info-percentiles parameters";
                           if (p > 100.0 || p < 0.0)
                             return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
                           out.push_back(p);
                         }
                         c.latency_tracking_info_percentiles = std::move(out);
                         return "";
                       }});
    o.push_back(Option{"notify-keyspace-events", kMutable, 1, 1,
                       [](const Config& c) { return notify::FormatFlags(c.notify_keyspace_events); },
                       [](Config& c, Args a) -> std::string {
                         std::optional<uint32_t> flags = notify::ParseFlags(a[0]);
                         if (!flags) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
                         c.notify_keyspace_events = *flags;
                         return "";
                       }});
    for (std::string_view name : {"busy-reply-threshold", "lua-time-limit"})
      o.push_back(IntOption(name, &Config::busy_reply_threshold, 0, LLONG_MAX, kMutable));
    o.push_back(MemoryOption("lua-maxmemory", &Config::lua_maxmemory, 0, LLONG_MAX, kMutable));
    for (std::string_view name : {"min-replicas-to-write", "min-slaves-to-write"})
      o.push_back(IntOption(name, &Config::min_replicas_to_write, 0, INT_MAX, kMutable));
    for (std::string_view name : {"min-replicas-max-lag", "min-slaves-max-lag"})
      o.push_back(IntOption(name, &Config::min_replicas_max_lag, 0, INT_MAX, kMutable));
    o.push_back(BoolOption("lua-enable-deprecated-api", &Config::lua_enable_deprecated_api, kFixed));
    // Counts are integers, sizes memory values ("1kb"), as in Redis; the
    // old ziplist names are aliases that CONFIG GET lists too.
    for (std::string_view name : {"hash-max-listpack-entries", "hash-max-ziplist-entries"})
      o.push_back(IntOption(name, &Config::hash_max_listpack_entries, 0, LLONG_MAX, kMutable));
    for (std::string_view name : {"hash-max-listpack-value", "hash-max-ziplist-value"})
      o.push_back(MemoryOption(name, &Config::hash_max_listpack_value, 0, LLONG_MAX, kMutable));
    o.push_back(IntOption("set-max-intset-entries", &Config::set_max_intset_entries, 0, LLONG_MAX, kMutable));
    o.push_back(IntOption("set-max-listpack-entries", &Config::set_max_listpack_entries, 0, LLONG_MAX, kMutable));
    o.push_back(MemoryOption("set-max-listpack-value", &Config::set_max_listpack_value, 0, LLONG_MAX, kMutable));
    for (std::string_view name : {"zset-max-listpack-entries", "zset-max-ziplist-entries"})
      o.push_back(IntOption(name, &Config::zset_max_listpack_entries, 0, LLONG_MAX, kMutable));
    for (std::string_view name : {"zset-max-listpack-value", "zset-max-ziplist-value"})
      o.push_back(MemoryOption(name, &Config::zset_max_listpack_value, 0, LLONG_MAX, kMutable));
    for (std::string_view name : {"list-max-listpack-size", "list-max-ziplist-size"})
      o.push_back(IntOption(name, &Config::list_max_listpack_size, INT_MIN, INT_MAX, kMutable));
    o.push_back(MemoryOption("hll-sparse-max-bytes", &Config::hll_sparse_max_bytes, 0, LLONG_MAX, kMutable));
    o.push_back(MemoryOption("stream-node-max-bytes", &Config::stream_node_max_bytes, 0, LLONG_MAX, kMutable));
    o.push_back(IntOption("stream-node-max-entries", &Config::stream_node_max_entries, 0, LLONG_MAX, kMutable));
    o.push_back(IntOption("list-compress-depth", &Config::list_compress_depth, 0, INT_MAX, kMutable));
    o.push_back(IntOption("lfu-log-factor", &Config::lfu_log_factor, 0, INT_MAX, kMutable));
    o.push_back(IntOption("lfu-decay-time", &Config::lfu_decay_time, 0, INT_MAX, kMutable));
    // "<seconds> <changes> ..." in one value or several; "" clears.
    o.push_back(Option{"save", kMutable, 1, 64,
                       [](const Config& c) {
                         std::string s;
                         for (const auto& p : c.save_params)
                           s += (s.empty() ? "" : " ") + std::to_string(p.seconds) + " " + std::to_string(p.changes);
                         return s;
                       },
                       [](Config& c, Args a) -> std::string {
                         std::vector<std::string> words;
                         for (const std::string& arg : a) {
                           std::vector<std::string> w;
                           if (!SplitArgs(arg, &w)) return "Invalid save parameters";
                           words.insert(words.end(), w.begin(), w.end());
                         }
                         if (words.size() % 2 != 0) return "Invalid save parameters";
                         std::vector<Config::SaveParam> params;
                         for (size_t i = 0; i < words.size(); i += 2) {
                           // Redis's check: seconds at least 1, changes at least 0.
                           int64_t seconds, changes;
                           if (!ParseInt64(words[i], &seconds) || !ParseInt64(words[i + 1], &changes) || seconds < 1 ||
                               changes < 0)
                             return "Invalid save parameters";
                           params.push_back({seconds, changes});
                         }
                         if (words.empty() || c.save_reset_pending) c.save_params.clear();
                         c.save_reset_pending = false;
                         c.save_params.insert(c.save_params.end(), params.begin(), params.end());
                         return "";
                       }});
    // The working directory, as Redis: CONFIG GET reads getcwd; a new
    // value must be a directory one can enter, and the server enters it
    // (main() at start-up, Server::ApplyRuntimeConfig after CONFIG SET).
    o.push_back(Option{"dir", kProtected, 1, 1,
                       [](const Config&) {
                         char buf[4096];
                         return std::string(getcwd(buf, sizeof(buf)) ? buf : "");
                       },
                       [](Config& c, Args a) -> std::string {
                         struct stat sb;
                         if (stat(a[0].c_str(), &sb) != 0) return std::strerror(errno);
                         if (!S_ISDIR(sb.st_mode)) return std::strerror(ENOTDIR);
                         if (access(a[0].c_str(), X_OK) != 0) return std::strerror(errno);
                         c.dir = a[0];
                         return "";
                       }});
    o.push_back(NameOption("dbfilename", &Config::dbfilename, kProtected, "dbfilename can't be a path, just a filename"));
    o.push_back(BoolOption("rdbcompression", &Config::rdbcompression, kMutable));
    o.push_back(BoolOption("rdbchecksum", &Config::rdbchecksum, kImmutable));
    o.push_back(BoolOption("stop-writes-on-bgsave-error", &Config::stop_writes_on_bgsave_error, kMutable));
    o.push_back(IntOption("rdb-key-save-delay", &Config::rdb_key_save_delay, INT_MIN, INT_MAX, kMutable));
    o.push_back(IntOption("key-load-delay", &Config::key_load_delay, INT_MIN, INT_MAX, kMutable));
    o.push_back(ProtectedActionOption("enable-protected-configs", &Config::enable_protected_configs));
    o.push_back(StringOption("requirepass", &Config::requirepass, kMutable));
    o.push_back(IntOption("tls-port", &Config::tls_port, 0, 65535, kNotYet));
    // The tls-* settings: CONFIG SET checks that new ones make a context
    // (ConfigSetCommand), and the workers make theirs again.
    o.push_back(StringOption("tls-cert-file", &TlsSettings::cert_file, kMutable));
    o.push_back(StringOption("tls-key-file", &TlsSettings::key_file, kMutable));
    o.push_back(StringOption("tls-key-file-pass", &TlsSettings::key_file_pass, kMutable));
    o.push_back(StringOption("tls-ca-cert-file", &TlsSettings::ca_cert_file, kMutable));
    o.push_back(StringOption("tls-ca-cert-dir", &TlsSettings::ca_cert_dir, kMutable));
    o.push_back(StringOption("tls-dh-params-file", &TlsSettings::dh_params_file, kMutable));
    o.push_back(StringOption("tls-protocols", &TlsSettings::protocols, kMutable));
    o.push_back(StringOption("tls-ciphers", &TlsSettings::ciphers, kMutable));
    o.push_back(StringOption("tls-ciphersuites", &TlsSettings::ciphersuites, kMutable));
    o.push_back(BoolOption("tls-prefer-server-ciphers", &TlsSettings::prefer_server_ciphers, kMutable));
    o.push_back(BoolOption("tls-session-caching", &TlsSettings::session_caching, kMutable));
    o.push_back(IntOption("tls-session-cache-size", &TlsSettings::session_cache_size, 0, INT_MAX, kMutable));
    o.push_back(IntOption("tls-session-cache-timeout", &TlsSettings::session_cache_timeout, 0, INT_MAX, kMutable));
    o.push_back(Option{"tls-auth-clients", kMutable, 1, 1,
                       [](const Config& c) -> std::string {
                         return c.tls.auth_clients == TlsSettings::AuthClients::kYes  ? "yes"
                                : c.tls.auth_clients == TlsSettings::AuthClients::kNo ? "no"
                                                                                      : "optional";
                       },
                       [](Config& c, Args a) -> std::string {
                         const std::string v = Lower(a[0]);
                         if (v == "yes") c.tls.auth_clients = TlsSettings::AuthClients::kYes;
                         else if (v == "no") c.tls.auth_clients = TlsSettings::AuthClients::kNo;
                         else if (v == "optional") c.tls.auth_clients = TlsSettings::AuthClients::kOptional;
                         else return "argument(s) must be one of the following: no, yes, optional";
                         return "";
                       }});
    o.push_back(BoolOption("tls-replication", &Config::tls_replication, kMutable));
    o.push_back(BoolOption("tls-cluster", &Config::tls_cluster, kNotYet));
    AddClusterOptions(o);
    AddInertOptions(o);
    o.push_back(BoolOption("protected-mode", &Config::protected_mode, kMutable));
    o.push_back(StringOption("aclfile", &Config::aclfile, kImmutable));
    o.push_back(IntOption("acllog-max-len", &Config::acllog_max_len, 0, LONG_MAX, kMutable));
    o.push_back(Option{"acl-pubsub-default", kMutable, 1, 1,
                       [](const Config& c) -> std::string { return c.acl_pubsub_default_all ? "allchannels" : "resetchannels"; },
                       [](Config& c, Args a) -> std::string {
                         const std::string v = Lower(a[0]);
                         if (v == "allchannels") c.acl_pubsub_default_all = true;
                         else if (v == "resetchannels") c.acl_pubsub_default_all = false;
                         else return "argument(s) must be one of the following: allchannels, resetchannels";
                         return "";
                       }});
    o.push_back(BoolOption("appendonly", &Config::appendonly, kMutable));
    o.push_back(Option{"appendfsync", kMutable, 1, 1,
                       [](const Config& c) -> std::string {
                         switch (c.appendfsync) {
                           case AppendFsync::kAlways: return "always";
                           case AppendFsync::kEverysec: return "everysec";
                           case AppendFsync::kNo: return "no";
                         }
                         return "everysec";
                       },
                       [](Config& c, Args a) -> std::string {
                         const std::string v = Lower(a[0]);
                         if (v == "always") c.appendfsync = AppendFsync::kAlways;
                         else if (v == "everysec") c.appendfsync = AppendFsync::kEverysec;
                         else if (v == "no") c.appendfsync = AppendFsync::kNo;
                         else return "argument(s) must be one of the following: always, everysec, no";
                         return "";
                       }});
    o.push_back(NameOption("appendfilename", &Config::appendfilename, kImmutable,
                           "appendfilename can't be a path, just a filename"));
    o.push_back(NameOption("appenddirname", &Config::appenddirname, kImmutable,
                           "appenddirname can't be a path, just a dirname"));
    o.push_back(BoolOption("aof-use-rdb-preamble", &Config::aof_use_rdb_preamble, kMutable));
    o.push_back(BoolOption("aof-load-truncated", &Config::aof_load_truncated, kMutable));
    o.push_back(BoolOption("no-appendfsync-on-rewrite", &Config::no_appendfsync_on_rewrite, kMutable));
    o.push_back(BoolOption("aof-rewrite-incremental-fsync", &Config::aof_rewrite_incremental_fsync, kMutable));
    o.push_back(BoolOption("aof-timestamp-enabled", &Config::aof_timestamp_enabled, kMutable));
    o.push_back(IntOption("auto-aof-rewrite-percentage", &Config::auto_aof_rewrite_percentage, 0, INT_MAX, kMutable));
    o.push_back(MemoryOption("auto-aof-rewrite-min-size", &Config::auto_aof_rewrite_min_size, 0, LLONG_MAX, kMutable));
    return o;
  }();
  return options;
}

const Option* config_options::FindOption(std::string_view name) {
  std::string lower = Lower(name);
  for (const Option& o : Options())
    if (o.name == lower) return &o;
  return nullptr;
}


SetLimits SetLimitsOf(const Config& c) {
  // Redis 7.2 caps an intset at 2^30 members whatever the directive says.
  return SetLimits{std::min<size_t>(c.set_max_intset_entries, size_t{1} << 30), c.set_max_listpack_entries,
                   c.set_max_listpack_value};
}
HashLimits HashLimitsOf(const Config& c) { return HashLimits{c.hash_max_listpack_entries, c.hash_max_listpack_value}; }
ListLimits ListLimitsOf(const Config& c) {
  return ListLimits{c.list_max_listpack_size, c.list_compress_depth, c.list_plain_threshold};
}
ZSetLimits ZSetLimitsOf(const Config& c) { return ZSetLimits{c.zset_max_listpack_entries, c.zset_max_listpack_value}; }

}  // namespace peregrine
