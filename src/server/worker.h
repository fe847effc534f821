// A worker: one thread with an event loop, client connections and one shard
// of the keyspace (docs/architecture.md, docs/transactions.md), made of
// ClientIo, ShardRouter (mailbox, lending), BatchRelay (client batches on
// other shards: relays, read and write groups), AofLog, BlockingWaits,
// ScriptBusy, TransactionRunner, AccessCheck and ClusterRoute, all on its
// thread. Others reach it by mail only, except a command holding its lent
// shard (it is parked meanwhile). Here: the dispatcher (a command for this
// shard runs inline, after the write groups' tickets taken on it; then a
// client's commands for other shards go to BatchRelay; a command over
// several shards borrows them in increasing index order), the cron,
// eviction, and what handlers may ask of it (CommandHost).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/compact_key.h"
#include "net/event_loop.h"
#include "protocol/buffer.h"
#include "protocol/reply.h"
#include "server/access_check.h"
#include "server/batch_relay.h"
#include "server/acl.h"
#include "server/aof_log.h"
#include "server/blocking_waits.h"
#include "server/client.h"
#include "server/client_io.h"
#include "server/cluster_route.h"
#include "server/evict_asks.h"
#include "server/command.h"
#include "server/command_context.h"
#include "server/mailbox.h"
#include "server/monitor.h"
#include "server/worker_mail.h"
#include "server/pubsub.h"
#include "server/script_busy.h"
#include "server/shard.h"
#include "server/shard_router.h"
#include "server/stats.h"
#include "server/transaction_runner.h"

namespace peregrine {

class Server;
class LuaEngine;

class Worker final : public ErrorSink, public CommandHost, public ClientIo::Owner {
 public:
  Worker(Server& server, uint32_t index);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bool Init();  // before the threads start (main thread): the loop, the timer, the wake-up fd; false without epoll
  void Run();  // the thread: serves until shutdown, then answers the other workers until all have stopped

  Shard& shard() { return shard_; }
  const Shard& shard() const { return shard_; }
  EventLoop& loop() { return loop_; }
  Waker& waker() { return waker_; }

  // --- For command handlers on this thread ---
  ServerStats& stats() { return stats_; }
  CommandStats& command_stats(const CommandSpec& cmd) { return command_stats_[cmd.id]; }
  const std::vector<CommandStats>& all_command_stats() const { return command_stats_; }
  const std::map<uint64_t, std::unique_ptr<Client>>& clients() const { return clients_; }
  // CLIENT KILL of a client of this worker: the client running the command is closed once its
  // reply is written; any other at once. By a command holding this shard: when the shard is back.
  void CloseClient(Client& c);
  void RequestKill(uint64_t client_id) override { kill_requests_.push_back(client_id); }
  void ResetStats();  // CONFIG RESETSTAT, its shard held
  uint64_t ClientBufferBytes() const;
  const Rates& rates() const { return rates_; }  // INFO's instantaneous_*
  // The client buffer bytes as of the last cron tick (any thread).
  uint64_t published_client_bytes() const { return published_client_bytes_.load(std::memory_order_relaxed); }
  // Connections on this worker (the acceptor counts them): placement, maxclients.
  std::atomic<int64_t>& connections() { return connections_; }
  // Whether its shard had keys the policy may evict, at its last write or tick (any thread);
  // PublishEvictable recomputes it (this worker's thread, or a command holding its shard).
  bool evictable() const { return evictable_.load(std::memory_order_relaxed); }
  void PublishEvictable();

  // --- CommandHost (command_context.h says what each does) ---
  std::span<const uint32_t> held_workers() const override {
    return holding_ ? std::span<const uint32_t>(shard_set_) : std::span<const uint32_t>(&index_, 1);
  }
  bool in_exec() const override { return in_exec_; }
  bool logging() const override { return aof_log_.active(); }
  uint64_t aof_write_ticks() const { return aof_log_.write_ticks(); }  // INFO DEBUG
  void LogAs(std::span<const std::string_view> args) override { aof_log_.LogAs(args); }
  using CommandHost::LogAs;
  void LogOnlyForms() override { aof_log_.LogOnlyForms(); }
  void ReplicateOnly(int db, std::span<const std::string_view> args) override { aof_log_.ReplicateOnly(db, args); }
  void Block(CommandContext& ctx, std::span<const std::string_view> keys, ValueType type, int64_t deadline_ms,
             NoWaitReply no_wait = NoWaitReply::kNullArray) override {
    waits_.Block(ctx, keys, type, deadline_ms, no_wait);
  }
  void NoteReady(uint32_t shard) override { waits_.NoteReady(shard); }
  bool Unblock(std::shared_ptr<BlockedClient> w, bool error) override { return waits_.Unblock(std::move(w), error); }
  void RunTransaction(CommandContext& ctx) override { txn_.Run(ctx); }
  void Unwatch(Client& c) override { txn_.Unwatch(c); }
  void DiscardTransaction(Client& c) override { txn_.Discard(c); }
  PubSubRegistry& pubsub() override { return pubsub_; }
  const PubSubRegistry& pubsub() const { return pubsub_; }
  KeyspaceEvents& events() override { return events_; }
  MonitorFeed& monitor() override { return monitor_; }
  // The thread's commands' events: to this worker's subscribers, one mail to each other worker's (worker_output.cc).
  void DeliverEvents();
  void DeliverEvents(const std::vector<KeyspaceEvent>& events);  // to this worker's subscribers
  // CLIENT TRACKING (worker_tracking.cc): a read-only command's keys remembered for client `id` of worker
  // `home`; the thread's invalidations delivered (DeliverEvents does it); one for a client of this worker.
  void RememberReads(uint64_t id, uint32_t home, const CommandSpec* cmd, std::span<const std::string_view> args);
  void DeliverInvalidations();
  void DeliverInvalidation(Invalidation& inv);
  size_t Publish(std::string_view channel, std::string_view message, bool own_thread, bool shard) override;
  void DropShardChannels(const std::function<bool(std::string_view, uint64_t)>& gone, bool own_thread) override;
  void SetDefaultAuth(Client& c) const override { access_.SetDefaultAuth(c); }
  bool Authenticate(Client& c, std::string_view username, std::string_view password,
                    std::string_view command) override {
    return access_.Authenticate(c, username, password, command);
  }
  LuaEngine& lua() override;  // worker_script.cc
  void SyncScripts() override;
  KillResult KillBusyScript(bool eval) override { return script_busy_.Kill(eval); }
  int PumpSnapshot(Client& c) override { return io_.StartPump(c); }

  bool holding() const { return holding_; }  // the running command holds other workers' shards

  // For the layers around the worker: INFO, the Lua engine (checks, busy), the fuzzer.
  BlockingWaits& waits() { return waits_; }
  AccessCheck& access() { return access_; }
  ClusterRoute& cluster_route() { return cluster_; }
  ScriptBusy& script_busy() { return script_busy_; }
  void set_big_arg_min(size_t n) { io_.set_big_arg_min(n); }

  void OnErrorReply(std::string_view msg) override;  // ErrorSink: counts every error reply (INFO errorstats)
  void OnCountedErrorReply() override { failed_reply_ = true; }  // a script's, counted by its call

  // --- For the I/O layer ---
  void OnClientEvent(Client& c, uint32_t events);
  void OnPumpEvent(Client& c) { io_.Pump(c); }  // (its SnapshotPump is readable)
  // A connection accepted on worker 0: served here from now on (`tls`: on tls-port, this worker's context).
  void Adopt(int fd, bool is_unix, uint64_t id, bool tls = false);
  void SendAdopt(uint32_t to, AdoptMail* m) { router_.Send(to, m); }  // (worker 0 hands a connection over)

  // --- Scripting (worker_script.cc, docs/scripting.md) ---
  Server& server() { return server_; }
  // What this worker's Lua interpreters hold (INFO memory; 0 before the first script): scripts', functions'.
  size_t LuaEvalBytes() const;
  // A command a script called, refused before it ran (null: unknown): its
  // rejected call and the error, counted as Redis's scriptCall counts them.
  void CountScriptRejection(const CommandSpec* cmd, std::string_view error);
  size_t LuaFunctionBytes() const;
  bool HoldsShard(uint32_t s) const;  // the running command holds shard `s`
  // Over maxmemory even after evicting what the policy allows.
  bool OverMaxmemory(Shard& shard) { return !EnforceMaxmemory(shard); }
  // The running script stopped before it wrote, to run again holding every shard (not counted).
  void NoteScriptRerun() { script_rerun_ = true; }
  // A script's redis.call of `cmd`, for the command `caller`: runs on `shard` (held) as the script's client.
  void ScriptCall(CommandContext& caller, Client& script_client, const CommandSpec* cmd,
                  std::span<const std::string_view> args, ReplyWriter& reply, Shard& shard);
  // Runs f() with nothing allowed to block, woken clients served after it (as in EXEC); f()'s result.
  template <typename F>
  int RunScriptNoBlocking(F&& f) {
    const bool was = in_exec_;
    in_exec_ = true;
    const int r = f();
    in_exec_ = was;
    return r;
  }

  // The checks before a command runs (unknown command or subcommand, arity): the command to run
  // (a subcommand resolved), or nullptr with *error set to the reply.
  const CommandSpec* Resolve(std::span<const std::string_view> args, const CommandSpec* cmd,
                             std::string* error) const;

 private:
  struct WakeWatcher;
  friend class BatchRelay;  // (parts that reach its internals: their headers say what)
  friend class CommandReplayer;
  friend class BlockingWaits;
  friend class ScriptBusy;
  friend class MonitorFeed;
  friend class ShardRouter;
  friend class TransactionRunner;

  enum class Route : uint8_t { kDone, kPause };

  // ClientIo::Owner: the dispatcher (worker_input.cc) and the worker's
  // side of closing a client (worker_output.cc).
  void ProcessInput(Client& c, Buffer& in) override;
  void FreeClient(Client& c) override;
  void ServeReplicas();  // its replicas' stream bytes and WAIT answers (worker_output.cc)
  void ServeMasterLink();  // worker 0 of a replica: what its link brought (worker.cc)
  // CLIENT PAUSE: holds c when its command must wait, lets them go when it ends.
  bool HeldByPause(Client& c, const CommandSpec* cmd, std::span<const std::string_view> args);
  void ReleasePauseHeld();
  void BeforeReplies() override { FlushAof(); }
  bool HoldOutput(Client& c) override { return relay_.HoldOutput(c); }
  // Runs a command here, adds it to the client's open batch for another
  // worker, or runs it over several shards; kPause if it must wait for the
  // client's commands in flight (the caller stops and resumes later).
  // During the start-up load (worker 0 alone): every command here
  // (ExecuteCommand answers -LOADING to those without kCmdLoading).
  Route DispatchWhileLoading(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                             const CompactKey::Probe* hint, uint64_t* now_tsc);
  Route Dispatch(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                 const CompactKey::Probe* hint, uint32_t first_key_shard, uint64_t* now_tsc);
  // `cmd` is the top-level command already looked up for args[0] (nullptr if
  // unknown); `hint` its first key, encoded, when prefetched. The command
  // starts at CycleClock time `start` (the end of the previous one: one clock
  // read per command); returns the time it ended.
  // `shard`: the first key's shard when the caller knows it (nullptr: find it).
  uint64_t ExecuteCommand(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                          const CompactKey::Probe* hint, uint64_t start, Shard* shard = nullptr);
  // ExecuteCommand holding the shards in shard_set_ (sorted, this worker's
  // included) from before it starts until it ends.
  uint64_t ExecuteHolding(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                          const CompactKey::Probe* hint, uint64_t start);
  // Runs a resolved command on `shard` (held by this thread) with the reply
  // going to `reply`: the maxmemory check, the handler, the statistics.
  // The caller has set c.last_cmd (error texts and CLIENT LIST name it).
  uint64_t Run(Client& c, const CommandSpec* cmd, std::span<const std::string_view> args, ReplyWriter& reply,
               Shard& shard, const CompactKey::Probe* hint, int64_t now_ms, uint64_t start);

  // --- Mailbox ---
  // Handles what the other workers sent; true if anything arrived.
  bool Drain();
  // Drain, then the mail kept while a script was busy, then, if the shard
  // was lent meanwhile, waits for it; true if there was anything.
  bool ServeMail();
  // The mail kept while lent or a script was busy, in order; true if any.
  bool ServeDeferred();
  // Every few client events of one loop iteration (worker_internal.h): the
  // outboxes leave and the mail is served (Worker::OnClientEvent).
  void ServeMailBetweenEvents();
  void Handle(uint32_t from, uint64_t word);
  void HandleMail(Mail* m);
  // Waits (handling messages, sleeping on the Waker) until `done()`. A busy script's request to answer
  // this worker's clients meanwhile (ScriptBusy::serve_requested) is met with `serve_parked` (between
  // commands), else acknowledged unmet (in the middle of one, whose client must not be read).
  template <typename Pred>
  void WaitUntil(Pred done, bool serve_parked = false);
  // ShardRouter::Acquire, then what a holder may have changed (CONFIG SET).
  void AcquireShards(std::span<const uint32_t> sorted) {
    router_.Acquire(sorted);
    if (nworkers_ > 1) ApplyConfigIfChanged();
  }
  // The router's asks: the shard came back; it is about to be lent.
  void OnShardBack();
  void BeforeLending();
  // Scripts (worker_script.cc): whether EVAL / EVALSHA's script is known to
  // touch keys outside its declared keys' shards (then it runs holding
  // every shard); whether the script that just ran stopped to run again
  // holding every shard (clears it); the commands of a batch left to run
  // after such a stop (Client::pending), in order.
  bool ScriptNeedsAllShards(std::span<const std::string_view> args, const CommandSpec* spec);
  bool TakeScriptRerun();
  uint64_t RerunHoldingAll(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd, uint64_t start);
  void RunPending(Client& c);
  // The loop's hooks (threads > 1); before sleeping, a spin of up to spin_ticks_ for mail or an event.
  int BeforeWait();
  bool SpinForMail(uint64_t seen);
  void ResumeClients();
  void ApplyConfigIfChanged();

  // maxmemory (worker_evict.cc): evicts from `shard` (its own or a held one); false if over and nothing could
  // go. Others evict now for a tracking `asker`, returning its invalidations (EvictMail), else in their turn.
  bool EnforceMaxmemory(Shard& shard, const Client* asker = nullptr);
  void EvictFor(int64_t budget_us);  // from this shard while over maxmemory, for about `budget_us`
  bool EvictSlice(Shard& shard);     // up to 256 keys while over; false if none could go
  void LimitTrackingTables(const Client& c);  // tracking-table-max-keys, before c's command (Redis's)
  void AskAndAwait(const Client& c, bool trim, std::span<const uint32_t> workers);  // EvictMail's ask
  void AnswerEvictAsk(EvictMail* m, bool may_change), OnEvictAnswer(EvictMail* m);
  void WriteOwnInvalidations(Client& c, ReplyWriter& reply);  // the proxy's client's, into its batch
 public:
  // A snapshot (SaveRdbFile) holding every shard, outside any command (a signal's; a BGSAVE stops).
  bool SaveHoldingAll(std::string* err);
  bool ShutdownAfterWait();  // SHUTDOWN's wait for replicas ended: saves, shuts down (false if it may not)
  bool WaitBeforeShutdown(bool saves);  // a signal's start of that wait (BeginShutdownWait)
  // The last snapshot failed and stop-writes-on-bgsave-error says so: writes (and PING) refused.
  bool RefusedAfterSaveError(const CommandSpec& cmd) const;
  // Worker 0: a slice of the start-up load (server.h: SetStartupLoader);
  // a corrupt file ends the process, as Redis's does.
  void StepStartupLoad();
  bool BgSaveHoldingAll(std::string* err);  // the save schedule's BGSAVE, holding every shard
  // An AOF rewrite the cron starts (auto-aof-rewrite-* or after a BGSAVE), holding every shard.
  void AofRewriteHoldingAll();
  std::string InfoHoldingAll(std::span<const std::string_view> sections);  // as INFO runs (/metrics)
  // BGSAVE (server/bgsave.h): this worker goes on with its shard's
  // snapshot between events until it is done. Set and cleared by a command
  // holding every shard (or by the worker itself when it is done).
  void StartSnapshotWork() { snapshot_work_.store(true, std::memory_order_release); }
  void StopSnapshotWork() { snapshot_work_.store(false, std::memory_order_release); }

  // --- The append-only file (aof_log.h, docs/persistence.md) ---
  // Runs a command's handler, logged when the file is on (AofLog::Call;
  // inline in worker_internal.h: every command comes this way).
  void CallHandler(CommandContext& ctx, const CommandSpec* cmd);
  void FlushAof() { aof_log_.Flush(router_.lent()); }  // AofLog::Flush: before any reply leaves
  // Start-up replay of the AOF (worker 0, no other running): every shard counts as held.
  void HoldAllForReplay(bool on);

 private:
  template <typename F>
  auto HoldingAll(F&& f);  // runs f() holding every shard, from outside any command
  // A client subscribed over RESP2 may run only the commands flagged
  // kCmdPubsubContext (Redis's list); the others get an error, in order.
  static bool RefusedWhileSubscribed(const Client& c, const CommandSpec& cmd) {
    return __builtin_expect(c.subs != nullptr, 0) && c.resp == 2 && !(cmd.flags & kCmdPubsubContext);
  }
  void Cron();
  void ActiveExpireSlice();
  void CloseAllClients();

  Server& server_;
  const uint32_t nworkers_;
  EventLoop loop_;
  Shard shard_;
  Waker waker_;
  std::unique_ptr<WakeWatcher> wake_watcher_;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::vector<std::unique_ptr<Client>> to_free_;
  Client* current_client_ = nullptr;  // the client whose command is running
  Client* busy_client_ = nullptr;     // the client whose input is being processed
  Client proxy_;                      // stands for a remote client while its batch runs here
  PubSubRegistry pubsub_;
  KeyspaceEvents events_;
  TrackingInvalidations invalidations_;
  void WriteInvalidation(Client& to, const Invalidation& inv, bool redirected, int null_resp);
  EvictAsks evict_asks_;  // its asks to other workers to evict or trim now (evict_asks.h)
  // The worker's parts (each header says what it owns and asks of it).
  AofLog aof_log_;                // the append-only file (aof_log.h)
  BlockingWaits waits_;           // clients blocked on keys (blocking_waits.h)
  ScriptBusy script_busy_{*this};  // a script past busy-reply-threshold (script_busy.h)
  MonitorFeed monitor_{*this};    // MONITOR's lines (monitor.h)
  ShardRouter router_;            // the mailbox and shard lending (shard_router.h)
  BatchRelay relay_;              // client batches run on other shards (batch_relay.h)
  ClientIo io_;                   // the connection layer (client_io.h)
  TransactionRunner txn_{*this};  // MULTI/EXEC and WATCH (transaction_runner.h)
  AccessCheck access_;            // authentication and ACL checks (access_check.h)
  ClusterRoute cluster_;          // Redis Cluster's redirections (cluster_route.h)

  // Scripts: lua() (made on first use), NoteScriptRerun, the errors their
  // commands count (not their caller's failure), OnCountedErrorReply.
  std::unique_ptr<LuaEngine> lua_;
  bool script_rerun_ = false, failed_reply_ = false;
  uint64_t script_errors_ = 0;
  // EXEC runs its queue (nothing blocks; woken clients wait for the end); a group's part runs (its replies
  // may go unsent, its log must stay whole). Neither waits for other workers' evictions.
  bool in_exec_ = false, in_part_ = false;

  // A pipeline batch: commands parsed ahead so that their keys' misses overlap.
  struct BatchedCommand {
    const CommandSpec* cmd;
    uint32_t first_arg;
    uint32_t nargs;
    size_t consumed;
    CompactKey::Probe key;  // the first key, encoded (key.bytes empty if none)
    uint32_t shard = 0;     // the shard owning that key
  };
  static constexpr size_t kMaxBatch = 32;
  std::vector<BatchedCommand> batch_;
  std::vector<std::string_view> batch_args_;
  std::vector<size_t> key_positions_;  // scratch
  std::vector<uint32_t> shard_set_;    // scratch; the shards held while holding_
  bool holding_ = false;              // a command over several shards is running
  std::vector<uint64_t> resume_;             // clients whose batch came back, to continue
  std::vector<uint64_t> pause_held_;         // clients whose command waits for CLIENT PAUSE's end
  uint64_t pause_gen_ = 0;  // ClientPause::generation() when they were held; pause_kind_, the strongest Actions
  uint8_t pause_kind_ = 0;
  std::vector<uint64_t> kill_requests_;
  uint32_t events_since_mail_ = 0;  // client events since the mail was last served
  uint64_t spin_ticks_ = 0;         // worker-spin-us in CycleClock ticks (Init)
  std::atomic<bool> snapshot_work_{false};  // a BGSAVE waits for this shard's keys
  int applied_hz_ = 0;
  uint64_t config_epoch_ = 0;

  ServerStats stats_;
  std::vector<CommandStats> command_stats_;
  Rates rates_;  // instantaneous_*
  std::atomic<int64_t> connections_{0};
  std::atomic<uint64_t> published_client_bytes_{0};
  std::atomic<bool> evictable_{false};
  bool expire_pressure_ = false;
  // ActiveExpireSlice's, lazy_free::RunSlice's, StepZSetMoves' last slice
  int64_t last_expire_slice_us_ = 0, last_lazy_free_us_ = 0, last_zset_moves_us_ = 0;
  bool zset_moves_ = false;         // the cron found some (cleared when none are left)
};

}  // namespace peregrine
