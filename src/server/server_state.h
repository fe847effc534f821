// What the process shares, as command handlers see it: the configuration, the
// command table, the ACL users, the scripts and functions, the persistence
// state, and the shards by index. `Server` (server.h) derives from it and adds
// what handlers never touch: the threads, the workers' rings, the listeners,
// signals. A handler reaches another worker's state only through this class
// and CommandHost (command_context.h), and only while its command holds that
// worker's shard (docs/transactions.md).
//
// Written only by a command holding every shard (CONFIG SET, ACL SETUSER,
// FUNCTION LOAD ...) or by the thread its comment names; the atomics are read
// from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/slot.h"
#include "scripting/functions.h"
#include "scripting/script_cache.h"
#include "server/acl.h"
#include "server/aof.h"
#include "server/bgsave.h"
#include "server/client_pause.h"
#include "server/latency.h"
#include "server/notify.h"
#include "server/slowlog.h"
#include "server/tracking.h"
#include "server/cluster_view.h"
#include "server/command.h"
#include "server/config.h"
#include "server/debug_knobs.h"
#include "server/persistence.h"
#include "server/repl_backlog.h"
#include "server/replica_link.h"
#include "server/replication.h"

namespace peregrine {

class CommandHost;
class Shard;
struct Client;

// The Redis version Peregrine behaves as (INFO's redis_version, HELLO,
// an RDB file's redis-ver).
inline constexpr const char* kRedisCompatVersion = "7.2.4";

class ServerState {
 public:
  ServerState(const ServerState&) = delete;
  ServerState& operator=(const ServerState&) = delete;

  Config& config() { return config_; }
  const CommandTable& commands() const { return commands_; }
  // The ACL users (docs/security.md): changed only holding every shard.
  Acl& acl() { return *acl_; }
  size_t num_shards() const { return shards_.size(); }
  // The shard owning `key`: its Redis Cluster slot, in contiguous ranges of
  // slots per shard.
  size_t ShardIndexOf(std::string_view key) const {
    return shards_.size() == 1 ? 0 : static_cast<size_t>(SlotOf(key)) * shards_.size() / kNumSlots;
  }
  // Another worker's shard, or the worker itself as a handler sees it: only
  // while the calling command holds it (a command over several shards, or
  // one flagged kCmdAllShards).
  Shard& shard(size_t i) { return *shards_[i]; }
  CommandHost& host(size_t i) { return *hosts_[i]; }
  const std::string& run_id() const { return run_id_; }
  // The replication IDs (PSYNC2; docs/replication.md). Changed holding every
  // shard.
  ReplIds& repl_ids() { return repl_ids_; }
  // The primary's replication stream and replicas (replication.h).
  ReplicationPrimary& replication() { return *replication_; }
  // min-replicas-to-write is set and fewer good replicas are counted (a
  // replica does not count, as Redis).
  bool NotEnoughGoodReplicas() {
    return config_.min_replicas_to_write > 0 && replication_->good_replicas() < config_.min_replicas_to_write &&
           !is_replica();
  }
  // Whether changes are logged: for the append-only file or the stream.
  bool propagating() { return aof_->active() || replication_->logs(); }
  // The replica side (docs/replication.md): whether this server follows a
  // primary (REPLICAOF; its link, changed holding every shard).
  bool is_replica() const { return replica_.load(std::memory_order_relaxed); }
  ReplicaLink* replica_link() { return link_.get(); }
  // Writes from clients are refused (-READONLY): a replica with
  // replica-read-only.
  bool read_only_replica() const { return is_replica() && config_.replica_read_only; }
  static constexpr std::string_view kReadOnlyError = "READONLY You can't write against a read only replica.";
  // Commands refused while the link is down and replica-serve-stale-data
  // is no (Redis's -MASTERDOWN).
  bool ServesStaleData() {
    return !is_replica() || config_.replica_serve_stale_data || (link_ != nullptr && link_->up());
  }
  // REPLICAOF host port (false: already its replica) and REPLICAOF NO ONE,
  // every shard held.
  virtual bool BecomeReplica(const std::string& host, int port, int connected_fd = -1, bool failover = false) = 0;
  virtual void BecomePrimary() = 0;
  // FAILOVER (failover.cc; every shard held): "" when started, else the
  // error (without "ERR "); ABORT (false: none in progress); the state's
  // name for INFO (any thread).
  virtual std::string StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force) = 0;
  virtual bool AbortFailover(const char* why) = 0;
  virtual const char* FailoverStateName() const = 0;
  bool failing_over() const { return failover_state_.load(std::memory_order_relaxed) != 0; }
  // A replica's history for its RDB files (every shard held): the
  // primary's ID, the offset applied, the stream's database. False when
  // not a replica.
  virtual bool ReplicaHistory(std::string* id, uint64_t* offset, int* db) = 0;
  static constexpr std::string_view kMasterDownError =
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
  // PSYNC's full resync (every shard held): the replica `info.client_id`
  // of worker `worker`, its socket duplicated as `fd`, gets a snapshot now,
  // or when the BGSAVE running ends. False (*err) if it cannot.
  virtual bool StartReplicaSync(const ReplicationPrimary::ReplicaInfo& info, uint32_t worker, int fd,
                                std::string* err) = 0;
  // Every shard held: what the shards logged goes to the file and the
  // replication stream now.
  virtual void EmitShardChunks() = 0;
  // sync_full, sync_partial_ok, sync_partial_err (INFO stats).
  struct ReplStats {
    std::atomic<uint64_t> full{0}, partial_ok{0}, partial_err{0};
    std::atomic<uint64_t> net_input{0};  // read from a primary (INFO total_net_repl_input_bytes)
    std::atomic<uint64_t> unexpected_errors{0};  // errors of the primary's or the AOF's commands
  };
  ReplStats& repl_stats() { return repl_stats_; }
  const std::string& config_file() const { return config_file_; }
  const std::string& executable() const { return executable_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int tcp_port() const { return config_.port; }

  // --- Operations over every worker (every shard held) ---
  // Every client of every worker, in id order.
  virtual std::vector<Client*> AllClients() const = 0;
  // CLIENT KILL from `caller`: see Worker::CloseClient.
  virtual void CloseClient(CommandHost& caller, Client& c) = 0;
  // The CLIENT LIST / CLIENT INFO line of a client, with its trailing "\n".
  virtual std::string ClientInfoLine(const Client& c, int64_t now_ms) const = 0;
  // A replica's connection to its primary while it is up, as Redis's
  // master client: its id (0: none), addresses, age and CLIENT LIST line.
  struct MasterClientInfo {
    uint64_t id = 0;
    std::string addr, laddr, line;
    int64_t age_s = 0;
  };
  virtual MasterClientInfo MasterClientNow(int64_t now_ms) const = 0;
  // INFO text for the requested sections (none = the default sections).
  virtual std::string Info(std::span<const std::string_view> sections, int64_t now_ms) = 0;
  // Command `cmd`'s latency histogram, every worker's merged (null: never
  // recorded). Every shard held.
  virtual std::unique_ptr<LatencyHistogram> MergedLatency(const CommandSpec& cmd) = 0;
  // CONFIG RESETSTAT.
  virtual void ResetStats() = 0;
  // After CONFIG SET: applies the process-wide settings (log level,
  // open-files limit) now; each worker applies its own part when it sees
  // the configuration epoch change (the caller as its command ends, the
  // others when they get their shard back).
  virtual void ApplyRuntimeConfig() = 0;
  uint64_t config_epoch() const { return config_epoch_.load(std::memory_order_acquire); }
  // Changes when CONFIG SET changes the tls-* settings: each worker makes
  // its TLS context again (its connections keep the one they started with).
  uint64_t tls_generation() const { return tls_generation_; }
  void NoteTlsChanged() { tls_generation_++; }
  // Stops every worker after its current batch; the process exits with code 0.
  virtual void RequestShutdown() = 0;
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }

  // What MEMORY STATS and INFO memory report, computed once (Redis's
  // getMemoryOverheadData): used memory split into the start-up base, the
  // clients' buffers, the tables' structure and the deadlines (overhead),
  // and the dataset; the allocator's and the process's view beside it.
  struct MemoryOverview {
    uint64_t peak = 0, total = 0, startup = 0, clients_normal = 0;
    // Replicas' connections' buffers (apart from the clients'), the
    // backlog's room, the AOF's bytes not yet written.
    uint64_t clients_replicas = 0, replication_backlog = 0, aof_buffer = 0;
    struct DbOverhead {
      int db;
      uint64_t main, expires;
    };
    std::vector<DbOverhead> dbs;  // databases holding keys
    uint64_t overhead = 0, keys = 0, bytes_per_key = 0, dataset = 0;
    double dataset_percentage = 0, peak_percentage = 0;
    uint64_t allocator_allocated = 0, allocator_active = 0, allocator_resident = 0, rss = 0;
  };
  virtual MemoryOverview Memory() = 0;
  uint64_t used_memory_peak() const { return used_memory_peak_.load(std::memory_order_relaxed); }

  // Whether any client WATCHes a key (of any shard): a command that
  // changed a key looks its watchers up only then (SignalModifiedKey).
  bool watching() const { return watched_keys_.load(std::memory_order_relaxed) != 0; }
  std::atomic<int64_t>& watched_keys() { return watched_keys_; }

  // --- Scripts ---
  // The scripts EVAL and SCRIPT LOAD made known (every worker's).
  ScriptCache& scripts() { return scripts_; }
  // The FUNCTION libraries (every worker's).
  FunctionRegistry& functions() { return functions_; }
  // Workers running a script past busy-reply-threshold: the others, parked
  // while it holds their shards, answer their clients -BUSY meanwhile.
  std::atomic<int>& busy_scripts() { return busy_scripts_; }
  // Whether the last script to get busy is a function (the -BUSY text
  // names FUNCTION KILL then).
  std::atomic<bool>& busy_function() { return busy_function_; }
  // The script that last got busy, for FUNCTION STATS' running_script (any
  // worker; set and cleared by the busy script's worker).
  struct RunningScript {
    std::string name;  // the function's, or f_<sha> for a script
    bool eval = false;  // a script (EVAL & co.), not a function
    std::vector<std::string> command;
    int64_t start_ms = 0;  // monotonic
  };
  void SetRunningScript(std::optional<RunningScript> s) {
    std::lock_guard<std::mutex> lock(running_script_mu_);
    running_script_ = std::move(s);
  }
  std::optional<RunningScript> running_script() const {
    std::lock_guard<std::mutex> lock(running_script_mu_);
    return running_script_;
  }

  // --- Persistence ---
  // Snapshots: the state INFO persistence and LASTSAVE report.
  PersistenceState& persistence() { return persistence_; }
  // The BGSAVE in progress, or null. Set and cleared holding every shard
  // (or by worker 0's cron once its writer is done and no shard uses it);
  // a worker reads it only while its own snapshot flag is set.
  BgSave* bgsave() { return bgsave_.get(); }
  // Starts a BGSAVE (each worker goes on with its shard between events).
  // False with *err.
  virtual bool StartBgSave(std::string* err) = 0;
  // Stops the BGSAVE in progress, if any (SAVE-like commands that must
  // write the file themselves, as Redis kills its RDB child). An AOF
  // rewrite goes on (as Redis's AOF child does) unless `aof_rewrite_too`
  // (shutdown, the AOF turned off).
  virtual void AbortBgSave(bool aof_rewrite_too = false) = 0;
  // A load is running (what may not run then is answered -LOADING): the
  // start-up load (server.h: SetStartupLoader), while which nothing may
  // wait for another worker (startup_loading()), or a replica's full sync
  // (every worker runs; worker 0 loads a slice at a time holding every
  // shard: Server::StepFullSyncLoad).
  // (One word for all of them: a command's checks read it once.)
  enum LoadState : uint8_t { kLoading = 1, kStartupLoad = 2, kAsyncLoad = 4 };
  uint8_t load_state() const { return load_state_.load(std::memory_order_acquire); }
  bool loading() const { return load_state() & kLoading; }
  bool startup_loading() const { return load_state() & kStartupLoad; }
  // A replica's swapdb load while it serves its old data (Redis's async
  // loading): only kCmdNoAsyncLoading commands are refused.
  bool async_loading() const { return load_state() & kAsyncLoad; }
  // Either (Redis's server.loading, set through an async load too): no
  // save at shutdown, no BGSAVE, AOF rewrite or eviction by the cron,
  // DEBUG RELOAD and some CONFIG SETs refused.
  bool any_loading() const { return load_state() & (kLoading | kAsyncLoad); }
  // BGSAVE SCHEDULE / BGSAVE inside a transaction: started by the cron.
  void ScheduleBgSave() { bgsave_scheduled_.store(true, std::memory_order_relaxed); }
  bool TakeScheduledBgSave() { return bgsave_scheduled_.exchange(false, std::memory_order_relaxed); }
  // How the process saves when it stops (SHUTDOWN's SAVE / NOSAVE, else
  // the schedule decides: a save if one is configured).
  enum class ShutdownSave : uint8_t { kDefault, kSave, kNoSave };
  void set_shutdown_save(ShutdownSave s) { shutdown_save_ = s; }

  // The append-only file (server/aof.h).
  AppendOnlyFile& aof() { return *aof_; }
  // BGREWRITEAOF: the shards' logged commands go to the current file, a new
  // incremental file takes the writes from now on, and a snapshot (a
  // BgSave) writes the new base. While a BGSAVE runs the rewrite waits for
  // it (*scheduled). False with *err.
  virtual bool StartAofRewrite(std::string* err, bool* scheduled) = 0;
  // CONFIG SET: appendonly and appendfsync as the configuration says now
  // (turning the file on starts its first rewrite). False with *err
  // (appendonly is then set back).
  virtual bool ApplyAofConfig(std::string* err) = 0;
  // DEBUG LOADAOF, holding every shard on worker `worker`: the data replaced by the AOF's. False with *err.
  virtual bool LoadAof(uint32_t worker, std::string* err) = 0;
  // CONFIG SET port (every shard held): the TCP listeners move to config().port (0: none); false, the old
  // ones kept, when it cannot listen there.
  virtual bool ApplyPort(int old_port) = 0;
  struct AofStats {
    bool rewrite_scheduled = false;
    bool last_rewrite_ok = true;
    int64_t last_rewrite_time_s = -1;
    uint64_t rewrites = 0, consecutive_failures = 0;
    uint64_t base_size_at_rewrite = 0;  // aof_base_size: the file size after the last rewrite
    int64_t last_failure_ms = 0;        // a failed rewrite is retried 5 s later at the earliest
  };
  AofStats& aof_stats() { return aof_stats_; }

  // CLIENT PAUSE, and FAILOVER's (client_pause.h). WakeWorkers: every
  // worker looks at its held clients again (an unpause).
  ClientPause& client_pause() { return client_pause_; }
  SlowLog& slowlog() { return slowlog_; }
  // Keyspace notifications (notify.h): what is on, who listens.
  KeyspaceNotifier& notifier() { return notifier_; }
  // latency-monitor-threshold's events (latency.h).
  LatencyMonitor& latency() { return latency_; }
  // MIGRATE's cached connections, every worker's (INFO migrate_cached_sockets).
  static inline std::atomic<int64_t> migrate_cached_sockets{0};
  // CLIENT TRACKING (tracking.h): counts, limit, BCAST prefixes.
  TrackingRegistry& tracking() { return tracking_; }
  // Clients in MONITOR mode, every worker's (MonitorFeed).
  std::atomic<int>& monitors() { return monitors_; }
  virtual void WakeWorkers() = 0;
  // SHUTDOWN waiting for lagging replicas (shutdown-timeout): whether one
  // is, and what its end does (kShutdownSave: save first; kShutdownForce:
  // shut down even if that fails). Set by SHUTDOWN (every shard held).
  enum : uint8_t { kShutdownSave = 1, kShutdownForce = 2 };
  std::atomic<bool> shutdown_waiting{false};
  std::atomic<int64_t> shutdown_deadline_ms{0};  // (unix ms) when that wait gives up: INFO shutdown_in_milliseconds
  std::atomic<uint8_t> shutdown_flags{0};
  // Starts that wait if replicas online lag (every shard held), for client
  // `client_id` of `worker` (0: none, a signal's); false if none lags or
  // shutdown-timeout is 0 (then shut down at once).
  virtual bool BeginShutdownWait(bool saves, bool force, uint64_t client_id, uint32_t worker) = 0;
  // Ends that wait without shutting down (SHUTDOWN ABORT, a failed save):
  // its clients get an error, writes go on; false if none was waiting.
  virtual bool AbortShutdownWait() = 0;
  // Redis Cluster (cluster-enabled yes; docs/cluster.md): the bus, set by
  // main() before Start(); null in a standalone server.
  ClusterService* cluster() const { return cluster_.get(); }
  void SetCluster(std::unique_ptr<ClusterService> c) { cluster_ = std::move(c); }
  // What DEBUG switches (server/debug_knobs.h).
  DebugKnobs& debug() { return debug_; }

 protected:
  ServerState(Config config, CommandTable commands, std::string config_file, std::string executable);
  virtual ~ServerState();

  Config config_;
  std::string config_file_;
  std::string executable_;
  std::string run_id_;
  ReplIds repl_ids_;
  std::unique_ptr<ReplicationPrimary> replication_;
  ReplStats repl_stats_;
  std::atomic<bool> replica_{false};
  std::atomic<int> failover_state_{0};  // Server's kNoFailover ...
  std::unique_ptr<ReplicaLink> link_;
  CommandTable commands_;
  std::unique_ptr<Acl> acl_;
  uint64_t tls_generation_ = 0;  // (written holding every shard)
  // Filled by Server as it makes its workers.
  std::vector<Shard*> shards_;
  std::vector<CommandHost*> hosts_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> config_epoch_{0};
  std::atomic<int64_t> watched_keys_{0};  // keys in the shards' WatchTables
  DebugKnobs debug_;
  ClientPause client_pause_;
  SlowLog slowlog_;
  KeyspaceNotifier notifier_;
  TrackingRegistry tracking_{&watched_keys_};
  std::atomic<int> monitors_{0};
  LatencyMonitor latency_;
  ScriptCache scripts_;
  FunctionRegistry functions_;
  PersistenceState persistence_;
  std::unique_ptr<BgSave> bgsave_;
  std::unique_ptr<AppendOnlyFile> aof_;
  AofStats aof_stats_;
  // LoadState bits: set and cleared by the start-up (worker 0 alone) or by
  // worker 0 holding every shard.
  std::atomic<uint8_t> load_state_{0};
  std::atomic<bool> bgsave_scheduled_{false};
  ShutdownSave shutdown_save_ = ShutdownSave::kDefault;
  std::atomic<int> busy_scripts_{0};
  std::atomic<bool> busy_function_{false};
  mutable std::mutex running_script_mu_;
  std::optional<RunningScript> running_script_;
  int64_t start_time_ms_ = 0;
  std::atomic<uint64_t> used_memory_peak_{0};
  std::unique_ptr<ClusterService> cluster_;  // reset by CONFIG RESETSTAT, as Redis's stat_peak_memory
};

}  // namespace peregrine
