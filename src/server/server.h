// The server process: the workers (one thread each, with its event loop,
// connections and shard of the keyspace: worker.h), the rings between them,
// the listeners and the signals. Worker 0 runs on the main thread and accepts
// connections, handing each to the worker with the fewest.
//
// What the process shares (the command table, immutable once registered; the
// configuration, which only a command holding every shard writes, so workers
// read it without locks; the ACL users, the scripts, the persistence state)
// is its base, ServerState (server_state.h): what command handlers see. What
// a command over every shard reads and writes of other workers (their
// shards, clients and counters) it reaches through it while it holds them
// all (docs/transactions.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "protocol/reply.h"
#include "server/claims.h"
#include "server/client.h"
#include "server/command.h"
#include "server/command_replayer.h"
#include "server/config.h"
#include "server/mailbox.h"
#include "server/server_state.h"
#include "server/shard.h"
#include "server/worker.h"

namespace peregrine {

class MetricsEndpoint;
class ClientEviction;

class Server final : public ServerState {
 public:
  // Messages between two workers: one ring per ordered pair.
  using Ring = MailRing;

  // `commands`: every command it serves (commands/all_commands.h's
  // AllCommands(); the server layer knows no family of its own).
  Server(Config config, CommandTable commands, std::string config_file, std::string executable);
  ~Server() override;

  // Opens listeners and signal handling. Returns false with *err on failure
  // (e.g. "Address already in use").
  bool Start(std::string* err);
  // Only the workers' loops, without listeners or signal handling: for a
  // caller that hands connections to a worker itself and drives its loop
  // (Worker::Adopt, EventLoop::Poll), as the fuzzer does. Start() calls it.
  bool InitWorkers(std::string* err);
  // Runs until SHUTDOWN or SIGTERM/SIGINT. Returns the process exit code.
  int Run();

  // Loads the users of the `user` directives and the ACL file (Start; a
  // failure stops the server, as Redis). False with *err.
  bool LoadUsers(std::string* err);
  // Another worker: only while the calling command holds its shard.
  Worker& worker(size_t i) { return *workers_[i]; }
  ClientEviction& client_eviction() { return *client_eviction_; }

  // ServerState's operations over every worker.
  std::vector<Client*> AllClients() const override;
  void CloseClient(CommandHost& caller, Client& c) override;
  std::string ClientInfoLine(const Client& c, int64_t now_ms) const override;
  MasterClientInfo MasterClientNow(int64_t now_ms) const override;
  std::string Info(std::span<const std::string_view> sections, int64_t now_ms) override;
  void ResetStats() override;
  void ApplyRuntimeConfig() override;
  void RequestShutdown() override;
  void WakeWorkers() override {
    for (auto& w : workers_) w->waker().Notify();
  }
  MemoryOverview Memory() override;
  std::unique_ptr<LatencyHistogram> MergedLatency(const CommandSpec& cmd) override;
  bool StartBgSave(std::string* err) override;
  void AbortBgSave(bool aof_rewrite_too = false) override;
  bool StartAofRewrite(std::string* err, bool* scheduled) override;
  bool LoadAof(uint32_t worker, std::string* err) override;
  bool ApplyPort(int old_port) override;
  void CloseRetiredListeners();  // worker 0's cron: those ApplyPort replaced, once no event can come
  bool ApplyAofConfig(std::string* err) override;

  // used_memory as INFO reports it (the keyspace plus the clients' buffers,
  // as last published by each worker); raises used_memory_peak, which every
  // worker's cron also samples.
  uint64_t UsedMemory();
  // Worker 0's cron: whether what maxmemory bounds is over it now (INFO's
  // total_ / current_eviction_exceeded_time, in ms).
  void NoteEvictionExceeded(int64_t now_ms);

  // Worker 0's cron: once the BGSAVE's file is written (or failed), its
  // outcome goes to the persistence state and the job goes.
  void ReapBgSave();
  // The RDB file of the job running (bgsave_) was written and is in place
  // (`ok`), or failed, at `end_ms`: LASTSAVE, the status, the log.
  void NoteRdbSaveEnd(bool ok, int64_t end_ms);
  // Replicas (replication_sync.cc): PSYNC's full resync, the waiting ones'
  // (one snapshot for them all; every shard held), a finished one (worker 0;
  // true if the job was one) and the stream's keep-alive (worker 0's cron).
  bool StartReplicaSync(const ReplicationPrimary::ReplicaInfo& info, uint32_t worker, int fd,
                        std::string* err) override;
  void StartWaitingSync();
  // Whether the replicas waiting for a full sync should have it now
  // (repl-diskless-sync-delay, -max-replicas; no BGSAVE running).
  bool SyncDue(int64_t now_ms);
  bool ReapReplicaSync();
  // (Also before a snapshot's instant, or an AOF change.)
  void EmitShardChunks() override;
  void ReplicationCron(int64_t now_ms);
  // Every shard held: the backlog goes, repl-backlog-ttl after the last
  // replica (worker 0's cron asks ReplicationPrimary::BacklogExpired).
  void FreeBacklog();
  // The replica side (replica_side.cc; every shard held): REPLICAOF's
  // switches, and worker 0 applying what the link brought.
  // (`connected_fd`: the fuzzer's socket to its primary: ReplicaLink.)
  bool BecomeReplica(const std::string& host, int port, int connected_fd = -1, bool failover = false) override;
  void BecomePrimary() override;
  bool ReplicaHistory(std::string* id, uint64_t* offset, int* db) override;
  // At start (no other worker running): REPLICAOF of the config file,
  // continuing the history the loaded RDB file kept.
  void StartReplicaOfConfig();
  void StopReplicaLink();
  // FAILOVER (failover.cc): the command's start and ABORT, worker 0's cron
  // step while it waits for a replica, and the target's answer.
  std::string StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force) override;
  bool AbortFailover(const char* why) override;
  const char* FailoverStateName() const override;
  void FailoverCron(int64_t now_ms);
  // Worker 0's cron on a replica: the FACK its link sends (WAITAOF).
  void ReplicaCron();
  void FailoverAnswered(bool accepted);
  void ApplyMasterEvents(Worker& w, std::vector<ReplicaLink::Event> events);
  // A full sync's snapshot loads a slice (about 10 ms) at a time between
  // worker 0's events, every shard held for each and 1 ms between them
  // (Worker::ServeMasterLink), so that clients are answered (-LOADING)
  // meanwhile, as Redis's.
  bool sync_loading() const { return sync_load_ != nullptr; }
  // Whether a slice may go now (not holding any shard): a load from the
  // link's pipe reads what has come first, and goes on once enough has
  // (kSliceBytes, or the end), so that a slice waits for the primary only
  // inside a key larger than kSliceLowBytes.
  bool SyncLoadReady();
  void StepFullSyncLoad(Worker& w);
  static constexpr size_t kSliceBytes = 256 << 10, kSliceLowBytes = 64 << 10;
  // The start-up load (main(), before Run): worker 0 goes on with it
  // between its events, accepting every connection and answering
  // -LOADING to what may not run while loading; the other workers start
  // when it is done (FinishStartupLoad). While loading() nothing may wait
  // for another worker.
  void SetStartupLoader(std::unique_ptr<StartupLoader> loader) { loader_ = std::move(loader); }
  StartupLoader* startup_loader() { return loader_.get(); }
  // Worker 0, once the loader is done (`complete`; not when a shutdown cut
  // it short): in cluster mode the keys' slots are checked against the
  // table; the other workers start.
  void FinishStartupLoad(bool complete = true);
  // After every worker stopped: the save SHUTDOWN or the schedule asks
  // for. False (logged) if it failed.
  bool SaveOnShutdown();
  // SIGTERM / SIGINT (worker 0's loop): the snapshot the schedule asks for,
  // holding every shard, then the shutdown; a failed save keeps the server
  // running, as Redis does.
  void ShutdownOnSignal(bool sigint);
  bool BeginShutdownWait(bool saves, bool force, uint64_t client_id, uint32_t worker) override;
  bool AbortShutdownWait() override;
  // The cron (worker 0): whether a rewrite waits for a BGSAVE to end, or
  // auto-aof-rewrite-* asks for one.
  bool AofRewriteDue();

  // --- For the workers ---
  // (Valid while the workers are being made: a worker's router takes its
  // inbound rings at construction.)
  Ring& ring(uint32_t from, uint32_t to) { return *rings_[from * ring_side_ + to]; }
  // The tickets of write groups over several shards (claims.h).
  ClaimBoard& claims() { return *claims_; }
  // A new connection on worker 0's listener: to the worker with the fewest.
  void Accept(int listen_fd, bool is_unix, bool tls);
  std::atomic<uint32_t>& stopped_workers() { return stopped_workers_; }
  // Raises the recorded peak to `used` if higher.
  void NotePeak(uint64_t used);
  // How long a worker that expects mail watches for it before sleeping (µs):
  // worker-spin-us, or 0 when workers outnumber the cores (Server()).
  int worker_spin_us() const { return worker_spin_us_; }

 private:
  struct Listener;
  struct SignalWatcher;

  std::string applied_requirepass_;  // the requirepass last given to the default user
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Ring>> rings_;
  uint32_t ring_side_ = 0;  // the number of workers
  std::unique_ptr<ClaimBoard> claims_;
  int64_t last_repl_ping_ms_ = 0;
  int64_t last_keepalive_s_ = 0;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::unique_ptr<Listener>> retired_listeners_;  // (ApplyPort's, under listeners_mu_)
  std::mutex listeners_mu_;
  std::unique_ptr<SignalWatcher> signals_;
  std::unique_ptr<MetricsEndpoint> metrics_;  // metrics-port's (on worker 0's loop)
  std::unique_ptr<ClientEviction> client_eviction_;  // maxmemory-clients
  std::atomic<uint64_t> next_client_id_{1};
  std::atomic<uint32_t> stopped_workers_{0};
  std::string aof_base_name_;  // the base the running rewrite writes
  // The replica's stream not yet applied (a command cut short, a
  // transaction without its EXEC yet), the database it is in, and what
  // runs it (every shard held).
  ReplicaLink::Settings LinkSettings() const;
  // Tells the link whether this server has no keys (repl-diskless-load
  // on-empty-db).
  void NoteDatasetEmpty();
  void ApplyMasterStream(Worker& w);
  static constexpr size_t kPrefetchWindow = 32;
  // (*specs: each command's entry, looked up once for both uses.)
  void PrefetchMasterKeys(const std::vector<std::string_view>& flat, const std::vector<std::pair<size_t, size_t>>& cmds,
                          size_t from, size_t to, const CommandSpec** specs);
  void ClearFailover();
  void HandOver();
  enum FailoverState : int { kNoFailover, kFailoverWaitForSync, kFailoverInProgress };
  std::string failover_host_;
  int failover_port_ = 0;
  int64_t failover_end_ms_ = 0;
  bool failover_force_ = false;
  std::deque<std::pair<uint64_t, uint64_t>> fack_pending_;  // (file bytes written, offset) not yet durable
  std::string master_in_;
  int master_db_ = 0;
  // Redis's master client (CLIENT LIST flags=M, CLIENT KILL): made when a
  // full sync's load ends, or at a partial resync without one (a new link
  // has none). Worker 0 writes it; CLIENT LIST reads it under the lock.
  struct MasterClient {
    uint64_t id = 0;  // 0: none
    int64_t ctime_ms = 0;
    int db = 0;
    std::string cmd = "NULL";  // the last command it ran, as cmd= names it
    size_t buffer = 0;         // its input buffer's room
  };
  mutable std::mutex master_client_mu_;
  MasterClient master_client_;
  // A fresh one (a fresh id, now); with `if_none`, only if there is none.
  void NewMasterClient(bool if_none = false);
  std::unique_ptr<CommandReplayer> master_replayer_;
  std::unique_ptr<StartupLoader> loader_;
  // A full sync's load in progress (worker 0's): the snapshot's history,
  // and the link's events that came after it.
  struct SyncLoad {
    std::unique_ptr<RdbLoader> loader;
    std::string replid;
    uint64_t offset = 0;
    std::vector<ReplicaLink::Event> rest;
    // swapdb: loaded beside the old data (Shard::BeginStaging), which is
    // served meanwhile if `async` (async_loading()).
    bool staged = false, async = false;
  };
  std::unique_ptr<SyncLoad> sync_load_;
  // (replica_side.cc) Every shard held: the old data goes and the load
  // starts (false: failed at once); its end, either way.
  bool BeginFullSyncLoad(Worker& w, const ReplicaLink::Event& ev);
  // (`apply_rest`: the link's events that came after the snapshot now;
  // not when the load fails to open, inside ApplyMasterEvents' own loop.)
  void EndFullSyncLoad(Worker& w, bool ok, const std::string& err, bool apply_rest = true);
  // A swapdb load's end: the staged data and function libraries replace
  // the old (`ok`), or are dropped.
  void EndStaging(Worker& w, bool ok, std::vector<std::shared_ptr<FunctionLibrary>>& libraries);
  std::vector<std::thread> threads_;  // workers 1.. (Run)
  uint64_t used_memory_startup_ = 0;  // used_memory when Start() finished
  uint64_t heap_at_startup_ = 0;      // its C++ heap part (TotalHeapBytes)
  int64_t eviction_exceeded_since_ms_ = 0, eviction_exceeded_ms_ = 0;  // (NoteEvictionExceeded)
  int worker_spin_us_ = 0;
};

}  // namespace peregrine
