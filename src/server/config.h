// Server configuration: redis.conf directive names, read from a config file
// and from '--directive value' arguments as redis-server reads them, and
// served by CONFIG GET / CONFIG SET. One table (kOptions in config.cc) is the
// source of truth for every directive: its name, how it parses and prints,
// and whether CONFIG SET may change it at run time.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/hash_object.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/zset_object.h"
#include "net/tls.h"

namespace peregrine {

// maxmemory-policy, parsed once (eviction runs per key under memory pressure).
enum class MaxmemoryPolicy : uint8_t {
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kNoEviction,
};
// appendfsync: when the append-only file's writes are made durable.
enum class AppendFsync : uint8_t { kAlways, kEverysec, kNo };

// The policy's name as redis.conf spells it ("allkeys-lru", ...).
std::string_view MaxmemoryPolicyName(MaxmemoryPolicy p);
// A percentile as Redis writes it ("%f" without trailing zeros: 50, 99.9).
std::string PercentileName(double p);
inline bool IsLfuPolicy(MaxmemoryPolicy p) {
  return p == MaxmemoryPolicy::kAllKeysLfu || p == MaxmemoryPolicy::kVolatileLfu;
}
// The volatile-* policies evict only keys with a deadline.
inline bool IsVolatilePolicy(MaxmemoryPolicy p) {
  return p == MaxmemoryPolicy::kVolatileLru || p == MaxmemoryPolicy::kVolatileLfu ||
         p == MaxmemoryPolicy::kVolatileRandom || p == MaxmemoryPolicy::kVolatileTtl;
}
inline bool IsLruOrLfuPolicy(MaxmemoryPolicy p) {
  return IsLfuPolicy(p) || p == MaxmemoryPolicy::kAllKeysLru || p == MaxmemoryPolicy::kVolatileLru;
}

struct Config {
  int port = 6379;
  std::vector<std::string> bind = {"127.0.0.1", "-::1"};
  std::string unixsocket;
  unsigned unixsocketperm = 0;
  int databases = 16;
  // Worker threads, each with its event loop, connections and one shard of
  // the keyspace (docs/transactions.md). 0 until set: the number of cores
  // the process may run on.
  int threads = 0;
  // worker-sched-policy: the workers run as SCHED_BATCH (a worker that wakes
  // does not preempt another mid-batch) when `batch`, or under `auto` when
  // they outnumber the cores the process may run on; `normal` never.
  enum class WorkerSched { kAuto, kBatch, kNormal };
  WorkerSched worker_sched = WorkerSched::kAuto;
  // worker-spin-us: a worker about to sleep while it expects mail (its
  // clients' batches are out on other workers, or mail just came) watches
  // its mailbox this long first; only when the workers have a core each.
  // 0 (the default): never; on 16 cores it saved wake-ups but not CPU
  // (docs/transactions.md, "Cost").
  int worker_spin_us = 0;
  uint32_t maxclients = 10000;
  int timeout = 0;  // seconds idle before a client is closed; 0 = never
  int tcp_keepalive = 300;
  int tcp_backlog = 511;
  std::string loglevel = "notice";
  std::string logfile;
  bool daemonize = false;
  // Redis's directives that change nothing here (config_compat.cc): their
  // values as CONFIG GET shows them, by name; absent: the default.
  std::map<std::string, std::string, std::less<>> inert;
  // supervised: no | upstart | systemd | auto (server/supervise.h). Under
  // a supervisor the server tells it when it is ready and when it stops,
  // and does not daemonize.
  enum class Supervised { kNo, kUpstart, kSystemd, kAuto };
  Supervised supervised = Supervised::kNo;
  std::string pidfile;
  uint64_t proto_max_bulk_len = 512ULL * 1024 * 1024;
  // Replication (docs/replication.md): the backlog's size (raised to 16 KB
  // when smaller, as Redis) and how long it outlives the last replica.
  uint64_t repl_backlog_size = 1024 * 1024;
  int repl_backlog_ttl = 3600;
  // Seconds without news from a replica (or, sending it a snapshot, without
  // progress) before it is dropped; seconds between the PINGs in the stream.
  int repl_timeout = 60;
  // shutdown-timeout: seconds SHUTDOWN waits (writes paused) for lagging
  // replicas to acknowledge the whole stream; 0: it does not.
  int shutdown_timeout = 10;
  int repl_ping_replica_period = 10;
  // The replica side (docs/replication.md): the primary to follow (empty
  // host: none; REPLICAOF changes it), how to authenticate to it, and what
  // the replica allows and announces.
  std::string replicaof_host;
  int replicaof_port = 0;
  std::string masteruser, masterauth;
  bool replica_read_only = true;
  bool replica_serve_stale_data = true;
  bool replica_ignore_maxmemory = true;
  bool replica_announced = true;
  int replica_priority = 100;
  std::string replica_announce_ip;
  int replica_announce_port = 0;
  // repl-diskless-load: disabled (0), on-empty-db (1), swapdb (2). The
  // snapshot always goes to a file first here (docs/replication.md).
  int repl_diskless_load = 0;
  // The primary's side: its snapshots go to replicas' sockets always; the
  // delay and the sharing are not built (docs/replication.md).
  bool repl_diskless_sync = true;
  // FLUSHALL / FLUSHDB without SYNC or ASYNC free the keys later
  // (Db::ClearLater), as with ASYNC.
  bool lazyfree_lazy_user_flush = false;
  int repl_diskless_sync_delay = 5;
  int repl_diskless_sync_max_replicas = 0;
  uint64_t client_query_buffer_limit = 1024ULL * 1024 * 1024;
  // client-output-buffer-limit, per client class (Redis's defaults): a
  // client whose pending replies reach `hard` bytes, or stay at `soft` bytes
  // or more for over `soft_seconds`, is closed (0 = no such limit).
  struct OutputBufferLimit {
    uint64_t hard = 0;
    uint64_t soft = 0;
    int64_t soft_seconds = 0;
  };
  enum ClientClass { kNormalClients, kReplicaClients, kPubsubClients, kClientClasses };
  OutputBufferLimit output_buffer_limits[kClientClasses] = {
      {0, 0, 0}, {256ULL << 20, 64ULL << 20, 60}, {32ULL << 20, 8ULL << 20, 60}};
  int hz = 10;
  // The keyspace's memory limit (0 = none) and what happens at the limit.
  uint64_t maxmemory = 0;
  MaxmemoryPolicy maxmemory_policy = MaxmemoryPolicy::kNoEviction;
  int maxmemory_samples = 5;
  // maxmemory-clients: the clients' memory limit in bytes, or (negative)
  // a percentage of maxmemory, as Redis stores it; 0 = none. The bytes:
  uint64_t MaxmemoryClients() const {
    return maxmemory_clients >= 0 ? static_cast<uint64_t>(maxmemory_clients)
                                  : maxmemory / 100 * static_cast<uint64_t>(-maxmemory_clients);
  }
  int64_t maxmemory_clients = 0;
  // SLOWLOG: the run time (microseconds) from which a command is logged
  // (negative: none), and how many entries are kept.
  int64_t slowlog_log_slower_than = 10000;
  int64_t slowlog_max_len = 128;
  // notify-keyspace-events: Redis's NOTIFY_* flags (server/notify.h); 0 = off.
  uint32_t notify_keyspace_events = 0;
  // The latency monitor's threshold (ms; 0: off), the per-command
  // histograms, and the percentiles INFO latencystats prints.
  int64_t latency_monitor_threshold = 0;
  int64_t tracking_table_max_keys = 1000000;  // CLIENT TRACKING's keys, every shard's (0: no limit)
  bool latency_tracking = true;
  std::vector<double> latency_tracking_info_percentiles = {50, 99, 99.9};
  // enable-debug-command: whether DEBUG may run (Redis 7's protected
  // command): never (Redis's default), always, or from a local connection
  // only (a Unix socket, 127.0.0.1 or ::1). Set at start-up only.
  enum class ProtectedAction : uint8_t { kNo, kYes, kLocal };
  ProtectedAction enable_debug_command = ProtectedAction::kNo;
  ProtectedAction enable_module_command = ProtectedAction::kNo;  // (MODULE LOAD & co.: no module loads here)
  // After this many ms a running script answers other clients -BUSY and can
  // be killed (busy-reply-threshold, alias lua-time-limit; 0: never).
  int64_t busy_reply_threshold = 5000;
  // Not a directive: the fuzzer's bound on one script's Lua instructions
  // (it stops as if killed; 0: none).
  int64_t script_instruction_limit = 0;
  // lua-maxmemory (beyond Redis): the most bytes one Lua interpreter may
  // hold while a script or library code runs on it (0: none, as in
  // Redis). A script that passes it is stopped with an error
  // (docs/scripting.md).
  uint64_t lua_maxmemory = 0;
  // min-replicas-to-write / min-replicas-max-lag (Redis's): with a count
  // above 0, writes are refused (NOREPLICAS) unless that many replicas
  // are online and acknowledged within the lag
  // (ServerState::NotEnoughGoodReplicas, counted by worker 0's cron).
  int64_t min_replicas_to_write = 0;
  int64_t min_replicas_max_lag = 10;
  static constexpr std::string_view kNoReplicasError = "NOREPLICAS Not enough good replicas to write.";
  // lua-enable-deprecated-api (Redis 7.2.11's): whether scripts get
  // newproxy, setfenv and getfenv. Fixed at start-up.
  bool lua_enable_deprecated_api = false;
  // Redis's LFU counter: how slowly it grows, and the minutes per decrement.
  int lfu_log_factor = 10;
  int lfu_decay_time = 1;
  // When a small container converts to its large encoding (Redis's
  // directives and defaults; hash-max-ziplist-* are aliases, as in Redis).
  uint64_t hash_max_listpack_entries = 512;
  uint64_t hash_max_listpack_value = 64;
  uint64_t set_max_intset_entries = 512;
  uint64_t set_max_listpack_entries = 128;
  uint64_t set_max_listpack_value = 64;
  uint64_t zset_max_listpack_entries = 128;
  uint64_t hll_sparse_max_bytes = 3000;
  uint64_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
  uint64_t zset_max_listpack_value = 64;
  // A list node's limit (Redis's fill: entries if positive, -1..-5 for 4 to
  // 64 KB) and how many nodes at each end stay uncompressed (0: none are
  // compressed; a list keeps the depth it was made with: docs/lists.md).
  int64_t list_max_listpack_size = -2;
  int64_t list_compress_depth = 0;
  // DEBUG QUICKLIST-PACKED-THRESHOLD (not a directive, as in Redis).
  size_t list_plain_threshold = ListLimits::kDefaultPlainThreshold;
  // RDB snapshots (docs/persistence.md): save when at least `changes`
  // writes happened in `seconds` (Redis's default schedule; `save ""`
  // clears it); where (dir is the working directory, as in Redis) and how.
  struct SaveParam {
    int64_t seconds;
    int64_t changes;
  };
  std::vector<SaveParam> save_params = {{3600, 1}, {300, 100}, {60, 10000}};
  // Not a directive: true until the first `save` directive of the start-up
  // configuration (or of a CONFIG SET), which replaces the schedule; later
  // ones add to it, as redis.conf's lines do.
  bool save_reset_pending = true;
  std::string dir;  // where to chdir to ("": stay); CONFIG GET dir says where we are
  std::string dbfilename = "dump.rdb";
  bool rdbcompression = true;
  bool rdbchecksum = true;
  bool stop_writes_on_bgsave_error = true;
  int64_t rdb_key_save_delay = 0;  // microseconds per key written (tests)
  int64_t key_load_delay = 0;      // microseconds per key loaded (tests)
  // enable-protected-configs: whether CONFIG SET may change dir and
  // dbfilename (Redis 7's protected configs; as enable-debug-command).
  ProtectedAction enable_protected_configs = ProtectedAction::kNo;
  // The append-only file (docs/persistence.md), Redis's directives and
  // defaults: the directory (under dir) and the files' name prefix are
  // fixed at start, as in Redis.
  bool appendonly = false;
  AppendFsync appendfsync = AppendFsync::kEverysec;
  std::string appendfilename = "appendonly.aof";
  std::string appenddirname = "appendonlydir";
  bool aof_use_rdb_preamble = true;
  bool aof_load_truncated = true;
  bool no_appendfsync_on_rewrite = false;
  bool aof_rewrite_incremental_fsync = true;
  // "#TS:<unix seconds>" annotations in the AOF when the second changes
  // (redis-check-aof --truncate-to-timestamp reads them).
  bool aof_timestamp_enabled = false;
  // Security (docs/security.md): the default user's password (empty: none,
  // nopass); whether connections from other than loopback are refused
  // while the default user has no password; the ACL file (ACL SAVE/LOAD);
  // the ACL log's length; whether new users start with every channel
  // (acl-pubsub-default allchannels) or none (resetchannels).
  std::string requirepass;
  bool protected_mode = true;
  std::string aclfile;
  int64_t acllog_max_len = 128;
  bool acl_pubsub_default_all = false;
  // `user <name> <rules...>` directives, in order (not CONFIG GET-able, as
  // in Redis): loaded at start.
  std::vector<std::vector<std::string>> users;
  // TLS (docs/security.md): the port TLS clients connect to (0: none) and
  // the tls-* directives that make each worker's context. Set at start.
  int tls_port = 0;
  TlsSettings tls;
  // The Prometheus endpoint's port (0: off), on the bind addresses: set at
  // start (metrics_http.h).
  int metrics_port = 0;
  bool tls_replication = false;  // a replica's link to its primary is TLS (docs/replication.md)
  bool tls_cluster = false;
  // Redis Cluster (docs/cluster.md): the cluster-* directives.
  struct ClusterSettings {
    bool enabled = false;
    std::string config_file = "nodes.conf";
    int64_t node_timeout_ms = 15000;
    int port = 0;  // the bus's; 0: the client port + 10000
    std::string announce_ip, announce_hostname, announce_human_nodename;
    int announce_port = 0, announce_bus_port = 0, announce_tls_port = 0;
    // cluster-preferred-endpoint-type: what -MOVED, -ASK and CLUSTER SLOTS
    // name a node by.
    enum class Endpoint : uint8_t { kIp, kHostname, kUnknown };
    Endpoint preferred_endpoint = Endpoint::kIp;
    bool require_full_coverage = true;
    bool allow_reads_when_down = false;
    bool allow_pubsubshard_when_down = true;
    int replica_validity_factor = 10;
    int migration_barrier = 1;
    bool allow_replica_migration = true;
    bool replica_no_failover = false;
    uint64_t link_sendbuf_limit = 0;  // bytes; 0: none
  };
  ClusterSettings cluster;
  int64_t auto_aof_rewrite_percentage = 100;
  uint64_t auto_aof_rewrite_min_size = 64ull * 1024 * 1024;
};

// The container directives of `config`, as the containers take them (one
// place for the commands that build containers and for RDB loading).
SetLimits SetLimitsOf(const Config& config);
HashLimits HashLimitsOf(const Config& config);
ListLimits ListLimitsOf(const Config& config);
ZSetLimits ZSetLimitsOf(const Config& config);

// One directive with its arguments, e.g. {"bind", {"127.0.0.1", "::1"}}.
struct Directive {
  std::string name;
  std::vector<std::string> args;
  std::string origin;  // "line 3" or "argument --port", for error messages
  std::string text;    // the directive as written, for error messages
};

// Reads directives from config-file text (comments, quoting as redis.conf).
// Returns false with *err on unbalanced quotes.
bool ParseConfigText(std::string_view text, std::vector<Directive>* out, std::string* err);

// A config file's text; false with Redis's "Fatal error, can't open
// config file ..." in *err.
bool ReadConfigFile(const std::string& path, std::string* text, std::string* err);

// Replaces each `include PATH|PATTERN` among *ds with the directives of
// the files it names (a glob's in name order), where it stands, nested
// includes too (at most 16 deep). False with *err if one cannot be read
// (*unreadable set then) or a line is wrong.
bool ExpandIncludes(std::vector<Directive>* ds, std::string* err, bool* unreadable, int depth = 0);

// Turns "--port 7000 --bind a b" into directives.
void ParseConfigArgs(std::span<char* const> args, std::vector<Directive>* out);

// Applies directives in order. On failure returns false and *err is the reason
// (Redis's wording: "Bad directive or wrong number of arguments", "argument
// couldn't be parsed into an integer", ...) and *failed the culprit.
bool ApplyDirectives(Config* config, const std::vector<Directive>& directives, std::string* err,
                     const Directive** failed);

// CONFIG REWRITE (Redis's rewriteConfig): the config file's new text from
// its old one and the running configuration, and the file rewritten (a
// temporary file, fsynced, renamed over it). False with *err (strerror).
// `force_all`: every directive written, those at their defaults too.
std::string RewriteConfigText(std::string_view old, const Config& config, bool force_all = false);
bool RewriteConfigFile(const std::string& path, const Config& config, std::string* err, bool force_all = false);

// CONFIG GET: (name, value) pairs of every directive matching any pattern,
// each directive once, in table order.
std::vector<std::pair<std::string, std::string>> ConfigGet(const Config& config,
                                                           std::span<const std::string_view> patterns);

// CONFIG SET with name/value pairs, all or nothing. On failure returns false
// with *err set to the whole error reply text ("ERR ...").
// protected_allowed: whether the client may change protected directives
// (enable-protected-configs said so for it).
bool ConfigSet(Config* config, std::span<const std::string_view> name_values, std::string* err,
               bool protected_allowed = false);

}  // namespace peregrine
