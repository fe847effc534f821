// The server process: the configuration, the command table, the listeners
// and the workers (one thread each, with its event loop, connections and
// shard of the keyspace: worker.h). Worker 0 runs on the main thread and
// accepts connections, handing each to the worker with the fewest.
//
// What is shared: the command table (immutable once registered) and the
// configuration, which only a command holding every shard writes (CONFIG
// SET), so workers read it without locks. What a command over every shard
// reads and writes of other workers (their shards, clients and counters) it
// reaches through this class while it holds them all (docs/transactions.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/slot.h"
#include "protocol/reply.h"
#include "server/acl.h"
#include "server/client.h"
#include "server/command.h"
#include "server/config.h"
#include "server/aof.h"
#include "server/bgsave.h"
#include "server/mailbox.h"
#include "server/persistence.h"
#include "server/shard.h"
#include "server/worker.h"
#include "scripting/functions.h"
#include "scripting/script_cache.h"

namespace peregrine {

// The Redis version Peregrine behaves as (INFO's redis_version, HELLO,
// an RDB file's redis-ver).
inline constexpr const char* kRedisCompatVersion = "7.2.4";

class Server {
 public:
  // Messages between two workers: one ring per ordered pair.
  using Ring = SpscRing<uint64_t, 1024>;

  // `commands`: every command it serves (commands/all_commands.h's
  // AllCommands(); the server layer knows no family of its own).
  Server(Config config, CommandTable commands, std::string config_file, std::string executable);
  ~Server();

  // Opens listeners and signal handling. Returns false with *err on failure
  // (e.g. "Address already in use").
  bool Start(std::string* err);
  // Only the workers' loops, without listeners or signal handling: for a
  // caller that hands connections to a worker itself and drives its loop
  // (Worker::Adopt, EventLoop::Poll), as the fuzzer does. Start() calls it.
  bool InitWorkers(std::string* err);
  // Runs until SHUTDOWN or SIGTERM/SIGINT. Returns the process exit code.
  int Run();

  // --- For command handlers ---
  Config& config() { return config_; }
  const CommandTable& commands() const { return commands_; }
  // The ACL users (docs/security.md): changed only holding every shard.
  Acl& acl() { return *acl_; }
  // Loads the users of the `user` directives and the ACL file (Start; a
  // failure stops the server, as Redis). False with *err.
  bool LoadUsers(std::string* err);
  size_t num_shards() const { return workers_.size(); }
  // The shard owning `key`: its Redis Cluster slot, in contiguous ranges of
  // slots per shard.
  size_t ShardIndexOf(std::string_view key) const {
    return workers_.size() == 1 ? 0 : static_cast<size_t>(SlotOf(key)) * workers_.size() / kNumSlots;
  }
  // Another worker's shard or state: only while the calling command holds
  // it (a command over several shards, or one flagged kCmdAllShards).
  Shard& shard(size_t i) { return workers_[i]->shard(); }
  Worker& worker(size_t i) { return *workers_[i]; }
  // Every client of every worker, in id order (kCmdAllShards commands).
  std::vector<Client*> AllClients() const;
  const std::string& run_id() const { return run_id_; }
  const std::string& config_file() const { return config_file_; }
  const std::string& executable() const { return executable_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int tcp_port() const { return config_.port; }

  // After CONFIG SET (every shard held): applies the process-wide settings
  // (log level, open-files limit) now; each worker applies its own part when
  // it sees the configuration epoch change (the caller as its command ends,
  // the others when they get their shard back).
  void ApplyRuntimeConfig();
  uint64_t config_epoch() const { return config_epoch_.load(std::memory_order_acquire); }
  // Changes when CONFIG SET changes the tls-* settings: each worker makes
  // its TLS context again (its connections keep the one they started with).
  uint64_t tls_generation() const { return tls_generation_; }
  void NoteTlsChanged() { tls_generation_++; }
  // Stops every worker after its current batch; the process exits with code 0.
  void RequestShutdown();
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // CLIENT KILL from `caller` (every shard held): see Worker::CloseClient.
  void CloseClient(Worker& caller, Client& c);
  // The CLIENT LIST / CLIENT INFO line of a client, with its trailing "\n".
  std::string ClientInfoLine(const Client& c, int64_t now_ms) const;
  // INFO text for the requested sections (none = the default sections);
  // every shard held.
  std::string Info(std::span<const std::string_view> sections, int64_t now_ms);
  // CONFIG RESETSTAT (every shard held).
  void ResetStats();
  // used_memory as INFO reports it (the keyspace plus the clients' buffers,
  // as last published by each worker); raises used_memory_peak, which every
  // worker's cron also samples.
  uint64_t UsedMemory();
  uint64_t used_memory_peak() const { return used_memory_peak_.load(std::memory_order_relaxed); }

  // What MEMORY STATS and INFO memory report, computed once (Redis's
  // getMemoryOverheadData): used memory split into the start-up base, the
  // clients' buffers, the tables' structure and the deadlines (overhead),
  // and the dataset; the allocator's and the process's view beside it.
  // Every shard held.
  struct MemoryOverview {
    uint64_t peak = 0, total = 0, startup = 0, clients_normal = 0;
    struct DbOverhead {
      int db;
      uint64_t main, expires;
    };
    std::vector<DbOverhead> dbs;  // databases holding keys
    uint64_t overhead = 0, keys = 0, bytes_per_key = 0, dataset = 0;
    double dataset_percentage = 0, peak_percentage = 0;
    uint64_t allocator_allocated = 0, allocator_active = 0, allocator_resident = 0, rss = 0;
  };
  MemoryOverview Memory();

  // Whether any client WATCHes a key (of any shard): a command that
  // changed a key looks its watchers up only then (SignalModifiedKey).
  bool watching() const { return watched_keys_.load(std::memory_order_relaxed) != 0; }
  std::atomic<int64_t>& watched_keys() { return watched_keys_; }

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

  // Snapshots: the state INFO persistence and LASTSAVE report.
  PersistenceState& persistence() { return persistence_; }
  // The BGSAVE in progress, or null. Set and cleared holding every shard
  // (or by worker 0's cron once its writer is done and no shard uses it);
  // a worker reads it only while its own snapshot flag is set.
  BgSave* bgsave() { return bgsave_.get(); }
  // Every shard held: starts a BGSAVE (each worker goes on with its shard
  // between events). False with *err.
  bool StartBgSave(std::string* err);
  // Every shard held: stops the BGSAVE in progress, if any (SAVE-like
  // commands that must write the file themselves, as Redis kills its RDB
  // child). An AOF rewrite goes on (as Redis's AOF child does) unless
  // `aof_rewrite_too` (shutdown, the AOF turned off).
  void AbortBgSave(bool aof_rewrite_too = false);
  // Worker 0's cron: once the BGSAVE's file is written (or failed), its
  // outcome goes to the persistence state and the job goes.
  void ReapBgSave();
  // The start-up load (main(), before Run): worker 0 goes on with it
  // between its events, accepting every connection and answering
  // -LOADING to what may not run while loading; the other workers start
  // when it is done (FinishStartupLoad). While loading() nothing may wait
  // for another worker.
  void SetStartupLoader(std::unique_ptr<StartupLoader> loader) { loader_ = std::move(loader); }
  StartupLoader* startup_loader() { return loader_.get(); }
  bool loading() const { return loading_.load(std::memory_order_acquire); }
  // Worker 0, once the loader is done: the other workers start.
  void FinishStartupLoad();
  // BGSAVE SCHEDULE / BGSAVE inside a transaction: started by the cron.
  void ScheduleBgSave() { bgsave_scheduled_.store(true, std::memory_order_relaxed); }
  bool TakeScheduledBgSave() { return bgsave_scheduled_.exchange(false, std::memory_order_relaxed); }
  // How the process saves when it stops (SHUTDOWN's SAVE / NOSAVE, else
  // the schedule decides: a save if one is configured).
  enum class ShutdownSave : uint8_t { kDefault, kSave, kNoSave };
  void set_shutdown_save(ShutdownSave s) { shutdown_save_ = s; }
  // After every worker stopped: the save SHUTDOWN or the schedule asks
  // for. False (logged) if it failed.
  bool SaveOnShutdown();
  // SIGTERM / SIGINT (worker 0's loop): the snapshot the schedule asks for,
  // holding every shard, then the shutdown; a failed save keeps the server
  // running, as Redis does.
  void ShutdownOnSignal();

  // The append-only file (server/aof.h).
  AppendOnlyFile& aof() { return *aof_; }
  // BGREWRITEAOF (every shard held): the shards' logged commands go to the
  // current file, a new incremental file takes the writes from now on, and
  // a snapshot (a BgSave) writes the new base. While a BGSAVE runs the
  // rewrite waits for it (*scheduled). False with *err.
  bool StartAofRewrite(std::string* err, bool* scheduled);
  // CONFIG SET (every shard held): appendonly and appendfsync as the
  // configuration says now (turning the file on starts its first rewrite).
  // False with *err (appendonly is then set back).
  bool ApplyAofConfig(std::string* err);
  // The cron (worker 0): whether a rewrite waits for a BGSAVE to end, or
  // auto-aof-rewrite-* asks for one.
  bool AofRewriteDue();
  struct AofStats {
    bool rewrite_scheduled = false;
    bool last_rewrite_ok = true;
    int64_t last_rewrite_time_s = -1;
    uint64_t rewrites = 0, consecutive_failures = 0;
    uint64_t base_size_at_rewrite = 0;  // aof_base_size: the file size after the last rewrite
    int64_t last_failure_ms = 0;        // a failed rewrite is retried 5 s later at the earliest
  };
  AofStats& aof_stats() { return aof_stats_; }

  // DEBUG SET-ACTIVE-EXPIRE: whether the cron deletes expired keys (lookups
  // still expire them lazily).
  bool active_expire() const { return active_expire_.load(std::memory_order_relaxed); }
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call DEBUG (Redis's test
  // suite's switch; Redis lets every no-script command through, here only
  // DEBUG: the others would re-enter the interpreter or a transaction).
  bool script_disable_deny() const { return script_disable_deny_.load(std::memory_order_relaxed); }
  void set_script_disable_deny(bool on) { script_disable_deny_.store(on, std::memory_order_relaxed); }
  void set_active_expire(bool on) { active_expire_.store(on, std::memory_order_relaxed); }

  // --- For the workers ---
  Ring& ring(uint32_t from, uint32_t to) { return *rings_[from * workers_.size() + to]; }
  // A new connection on worker 0's listener: to the worker with the fewest.
  void Accept(int listen_fd, bool is_unix, bool tls);
  std::atomic<uint32_t>& stopped_workers() { return stopped_workers_; }
  // Raises the recorded peak to `used` if higher.
  void NotePeak(uint64_t used);

 private:
  struct Listener;
  struct SignalWatcher;

  Config config_;
  std::string config_file_;
  std::string executable_;
  std::string run_id_;
  CommandTable commands_;
  std::unique_ptr<Acl> acl_;
  std::string applied_requirepass_;  // the requirepass last given to the default user
  uint64_t tls_generation_ = 0;      // (written holding every shard)
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<SignalWatcher> signals_;
  std::atomic<uint64_t> next_client_id_{1};
  std::atomic<bool> stopping_{false};
  std::atomic<uint32_t> stopped_workers_{0};
  std::atomic<uint64_t> config_epoch_{0};
  std::atomic<int64_t> watched_keys_{0};
  std::atomic<bool> active_expire_{true};
  ScriptCache scripts_;
  FunctionRegistry functions_;
  PersistenceState persistence_;
  std::unique_ptr<BgSave> bgsave_;
  std::unique_ptr<AppendOnlyFile> aof_;
  AofStats aof_stats_;
  std::string aof_base_name_;  // the base the running rewrite writes
  std::unique_ptr<StartupLoader> loader_;
  std::atomic<bool> loading_{false};
  std::vector<std::thread> threads_;  // workers 1.. (Run)
  std::atomic<bool> bgsave_scheduled_{false};
  ShutdownSave shutdown_save_ = ShutdownSave::kDefault;
  std::atomic<bool> script_disable_deny_{false};
  std::atomic<int> busy_scripts_{0};
  std::atomic<bool> busy_function_{false};  // keys in the shards' WatchTables
  mutable std::mutex running_script_mu_;
  std::optional<RunningScript> running_script_;
  int64_t start_time_ms_ = 0;
  std::atomic<uint64_t> used_memory_peak_{0};  // reset by CONFIG RESETSTAT, as Redis's stat_peak_memory
  uint64_t used_memory_startup_ = 0;           // used_memory when Start() finished
};

}  // namespace peregrine
