// A worker's life: setup, loop, configuration, connections, maxmemory, cron. Its input, cross-thread
// and output sides: worker_input.cc, worker_mailbox.cc, worker_output.cc (worker.h, docs/transactions.md).
#include "server/worker.h"

#include "server/client_eviction.h"
#include "server/lua_engine.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/lazy_free.h"
#include "core/lent_blocks.h"
#include "core/memory.h"
#include "net/socket.h"
#include "server/log.h"
#include "server/persistence.h"
#include "server/server.h"
#include "server/worker_internal.h"

namespace peregrine {

using namespace worker_internal;

// The Waker's eventfd in the loop: readable when another worker woke this
// one; emptied here so that the level-triggered epoll does not report it
// again.
struct Worker::WakeWatcher final : IoHandler {
  explicit WakeWatcher(Worker* w) : worker(w) {}
  void OnEvent(uint32_t) override { worker->waker().ConsumeSignal(); }
  Worker* worker;
};

void Client::OnEvent(uint32_t events) { worker->OnClientEvent(*this, events); }
void SnapshotPump::OnEvent(uint32_t) { client->worker->OnPumpEvent(*client); }


Worker::Worker(Server& server, uint32_t index)
    : CommandHost(index),
      server_(server),
      nworkers_(static_cast<uint32_t>(server.config().threads)),
      shard_(static_cast<int>(index), server.config().databases),
      proxy_(this, 0, -1),
      events_(server.notifier()),
      invalidations_(server.tracking()),
      aof_log_(server, shard_, *this),
      waits_(*this, server),
      router_(*this, server, index, nworkers_),
      relay_(*this, server.claims(), index),
      io_(*this, loop_, server, stats_),
      access_(server, txn_),
      cluster_(server),
      command_stats_(server.commands().num_ids()) {
  shard_.watches().set_counter(&server.watched_keys());
  shard_.tracking().Attach(&server.tracking());
  pubsub_.set_total(&server.notifier().subscriptions());
}

Worker::~Worker() {
  for (auto& [id, c] : clients_) {
    if (c->open_batch != nullptr) delete c->open_batch;
    if (c->pending != nullptr) delete c->pending;
    close(c->fd);
  }
}

template <typename F>
auto Worker::HoldingAll(F&& f) {
  std::vector<uint32_t> all(nworkers_);
  for (uint32_t i = 0; i < nworkers_; i++) all[i] = i;
  AcquireShards(all);
  holding_ = true;
  shard_set_ = all;  // (held_workers(): what f's commands see as held)
  const auto result = f();
  holding_ = false;
  router_.GiveBack(all);
  return result;
}

bool Worker::Init() {
  if (!loop_.ok()) return false;
  applied_hz_ = server_.config().hz;
  loop_.SetTick(1000 / applied_hz_, [this] { Cron(); });
  loop_.SetBeforeSleep([this] {
    // Blocked clients timed out, or woken: their replies, then their
    // pending input (with one thread BeforeWait never runs).
    if (waits_.has_deadlines()) waits_.ExpireBlocked();
    if (!pause_held_.empty()) ReleasePauseHeld();
    if (!resume_.empty()) ResumeClients();
    if (!resume_.empty()) loop_.WakeWithin(0);
    if (waits_.has_deadlines())
      loop_.WakeWithin(waits_.WaitMsToNextDeadline(UnixTimeMs()));
    ServeReplicas();
    if (index_ == 0) ServeMasterLink();
    if (ClusterService* cl = server_.cluster(); cl != nullptr && cl->inbox().pending(index_)) [[unlikely]] {
      // PUBLISH (SPUBLISH) on other nodes: to this worker's subscribers.
      for (const auto& m : cl->inbox().Take(index_)) Publish(m->channel, m->message, true, m->shard);
    }
    if (!events_.empty() || !invalidations_.empty()) [[unlikely]]
      DeliverEvents();  // (the cron's expiries and evictions, a replica's stream)
    if (monitor_.pending()) [[unlikely]]
      monitor_.Deliver();
    loop_.NoteProgress(stats_.total_commands_processed);  // (INFO DEBUG's eventloop_cmd_per_cycle_max)
    if (invalidations_.mailed) [[unlikely]] {  // (before the replies: tracking.h)
      invalidations_.mailed = false;
      router_.FlushOutboxes();
    }
    io_.FlushPending();
    to_free_.clear();
    if (expire_pressure_) {
      if (MonotonicUs() - last_expire_slice_us_ >= 2000) ActiveExpireSlice();
      if (expire_pressure_) loop_.WakeWithin(2);
    }
    // Large containers deleted: freed 1 ms at a time, at most every 2 ms.
    if (lazy_free::Pending() > 0) {
      if (MonotonicUs() - last_lazy_free_us_ >= 2000) {
        lazy_free::RunSlice(1000);
        last_lazy_free_us_ = MonotonicUs();
      }
      if (lazy_free::Pending() > 0) loop_.WakeWithin(2);
    }
    // The start-up load, a slice at a time (about 2 ms), clients answered
    // -LOADING between slices.
    if (index_ == 0 && server_.startup_loading()) [[unlikely]] {
      StepStartupLoad();
      if (server_.loading()) loop_.WakeWithin(0);
    }
    // A replica elected primary turns primary at once, before the cluster
    // is told (ClusterBus::FailoverReplaceYourPrimary).
    if (ClusterService* cl = server_.cluster(); index_ == 0 && cl != nullptr && cl->urgent_work()) [[unlikely]]
      HoldingAll([&] {
        cl->DoWork(server_);
        return true;
      });
    // Worker 0 collects a finished BGSAVE soon after its writer is done.
    if (index_ == 0 && server_.bgsave() != nullptr) [[unlikely]] {
      if (server_.bgsave()->finished())
        server_.ReapBgSave();
      else
        loop_.WakeWithin(5);
    }
    // A BGSAVE's share of this shard: a slice between events, then at once
    // again (an idle worker spends its time on it; a busy one serves a
    // batch of events between slices).
    if (snapshot_work_.load(std::memory_order_acquire)) [[unlikely]] {
      BgSave* job = server_.bgsave();
      if (!job->Step(index_, kSnapshotSlice)) {
        StopSnapshotWork();
      } else {
        loop_.WakeWithin(job->backlogged() ? 1 : 0);
      }
    }
    // An atomic slot migration's share of this shard (cluster/slot_migration.h):
    // the same pace; looked at again soon while one runs.
    if (ClusterService* cluster = server_.cluster();
        cluster != nullptr && cluster->migrating() && !router_.lent()) [[unlikely]] {
      loop_.WakeWithin(cluster->StepMigrations(index_, relay_.Drained()) ? 0 : 2);
      if (!shard_.aof().empty()) {  // (the DELs of keys it removed)
        aof_log_.NoteUnflushed();
        FlushAof();
      }
    }
    // Sorted sets' index moves nobody's writes go on with (found by the
    // cron): the same pace.
    if (zset_moves_) {
      if (MonotonicUs() - last_zset_moves_us_ >= 2000) {
        zset_moves_ = shard_.StepZSetMoves(1000);
        last_zset_moves_us_ = MonotonicUs();
      }
      if (zset_moves_) loop_.WakeWithin(2);
    }
  });
  if (nworkers_ > 1) {
    wake_watcher_ = std::make_unique<WakeWatcher>(this);
    loop_.Add(waker_.fd(), EPOLLIN, wake_watcher_.get());
    loop_.SetWaitHooks([this] { return BeforeWait(); }, [this] { waker_.Awake(); });
    spin_ticks_ = static_cast<uint64_t>(server_.worker_spin_us() * CycleClock::TicksPerUs());
  }
  shard_.ConfigureAccess(server_.config(), MonotonicMs());
  io_.ApplyConfig();
  config_epoch_ = server_.config_epoch();
  rates_.Start(MonotonicMs());
  return true;
}

void Worker::Run() {
  events_.MakeCurrent();
  invalidations_.MakeCurrent(&current_client_);
  ApplyConfigIfChanged();
  loop_.Run();
  // Stopped during the start-up load (SHUTDOWN, a signal): the other
  // workers start now, only to stop with this one.
  if (index_ == 0 && server_.startup_loading()) server_.FinishStartupLoad(/*complete=*/false);
  CloseAllClients();
  if (nworkers_ == 1) return;
  // Others may still run a command needing this shard, or wait for its reply: keep answering until
  // all have stopped. The last to stop wakes the others (maybe asleep).
  if (server_.stopped_workers().fetch_add(1, std::memory_order_acq_rel) + 1 == nworkers_)
    for (uint32_t i = 0; i < nworkers_; i++)
      if (i != index_) server_.worker(i).waker().Notify();
  for (;;) {
    router_.FlushOutboxes();
    router_.EndLendPause();  // no clients left to serve between lends
    const uint64_t seen = waker_.Prepare();
    bool any = Drain();
    if (ServeDeferred()) any = true;
    if (router_.lent()) {
      WaitUntil([this] { return !router_.lent(); });
      continue;
    }
    if (server_.stopped_workers().load(std::memory_order_acquire) == nworkers_ && !router_.ring_full()) break;
    if (!any && waker_.TrySleep(seen)) {
      pollfd p{waker_.fd(), POLLIN, 0};
      poll(&p, 1, 10);
      waker_.Woke();
    }
  }
}

void Worker::CloseAllClients() {
  io_.FlushPending();
  for (auto& [id, c] : clients_) {
    loop_.Remove(c->fd);
    close(c->fd);
    c->closed = true;
    if (c->blocked != nullptr) waits_.CancelBlocked(c->blocked);
    pubsub_.RemoveClient(*c);
    if (c->open_batch != nullptr) relay_.Recycle(c->open_batch);
    c->open_batch = nullptr;
    if (c->pending != nullptr) relay_.Recycle(c->pending);
    c->pending = nullptr;
  }
  connections_.fetch_sub(static_cast<int64_t>(clients_.size()), std::memory_order_relaxed);
  clients_.clear();
  io_.ForgetAll();
  to_free_.clear();
}

void Worker::ApplyConfigIfChanged() {
  const uint64_t epoch = server_.config_epoch();
  if (epoch == config_epoch_) return;
  config_epoch_ = epoch;
  const Config& config = server_.config();
  RequestParser::Limits limits;
  limits.max_bulk_len = config.proto_max_bulk_len;
  for (auto& [id, c] : clients_) c->parser.set_limits(limits);
  io_.ApplyConfig();
  // (Only when hz changed: restarting the timer on every CONFIG SET would starve the cron.)
  if (config.hz != applied_hz_) {
    applied_hz_ = config.hz;
    loop_.SetTick(1000 / config.hz, [this] { Cron(); });
  }
  shard_.ConfigureAccess(config, MonotonicMs());
  shard_.SetHideExpired(server_.read_only_replica());  // (replica-read-only: docs/replication.md)
}

uint64_t Worker::ClientBufferBytes() const {
  uint64_t bytes = 0;
  for (const auto& [id, c] : clients_) bytes += c->in.capacity() + c->out.capacity();
  return bytes;
}

void Worker::Adopt(int fd, bool is_unix, uint64_t id, bool tls) {
  const Config& config = server_.config();
  if (!is_unix) ConfigureTcpConnection(fd, config.tcp_keepalive);
  TlsContext* tls_ctx = nullptr;
  if (tls) {
    // (The settings were checked at start.)
    std::string err;
    tls_ctx = io_.TlsContextForNew(&err);
    if (tls_ctx == nullptr) {
      LOG_WARNING("Failed to configure TLS: %s", err.c_str());
      close(fd);
      connections_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
  auto c = std::make_unique<Client>(this, id, fd);
  if (tls) c->tls = std::make_unique<TlsSession>(*tls_ctx, fd);
  c->is_unix = is_unix;
  c->home = index_;
  if (is_unix) {
    c->addr = c->laddr = config.unixsocket + ":0";
  } else {
    c->addr = PeerAddress(fd);
    c->laddr = LocalAddress(fd);
  }
  c->ctime_ms = c->last_interaction_ms = UnixTimeMs();
  SetDefaultAuth(*c);
  RequestParser::Limits limits;
  limits.max_bulk_len = config.proto_max_bulk_len;
  c->parser.set_limits(limits);
  if (!loop_.Add(fd, EPOLLIN, c.get())) {
    close(fd);
    connections_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  LOG_VERBOSE("Accepted %s", c->addr.c_str());
  // Parked (a busy script holds this shard, ScriptBusy): kept apart from
  // clients_, which the holder may read, until the shard is back.
  if (script_busy_.parked_serving())
    script_busy_.KeepAdopted(std::move(c));
  else
    clients_.emplace(c->id, std::move(c));
}

void Worker::OnClientEvent(Client& c, uint32_t events) {
  if (c.closed) return;
  // While a script is busy anywhere, every worker answers its clients
  // -BUSY (but for the commands Redis allows then), as Redis's whole server
  // is busy.
  if (script_busy_.answering() || server_.busy_scripts().load(std::memory_order_relaxed) > 0) [[unlikely]] {
    script_busy_.ClientEvent(c, events);
    return;
  }
  if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ||
      (c.tls != nullptr && c.tls->wants_write() && (events & EPOLLOUT) && !c.reading_held)) [[likely]] {
    if (c.tracking != 0 && nworkers_ > 1) [[unlikely]]
      ServeMailBetweenEvents();  // invalidations sent before this input precede its replies
    io_.Read(c);
    // TLS: bytes decrypted but not yet read (epoll will not tell again).
    while (c.tls != nullptr && !c.closed && c.tls->HasPending()) io_.Read(c);
  }
  if (!c.closed && (events & EPOLLOUT)) {
    FlushAof();  // its output may hold replies to writes just logged
    io_.Flush(c);
  }
  if (nworkers_ > 1 && ++events_since_mail_ >= kEventsPerMail) [[unlikely]]
    ServeMailBetweenEvents();
}

// enable-debug-command: yes, no, or local (a Unix socket, or a peer at
// 127.0.0.1 or ::1, as Redis's islocalClient; the address is "ip:port").
void Worker::StepStartupLoad() {
  StartupLoader* loader = server_.startup_loader();
  const int64_t until = MonotonicUs() + 2000;
  for (;;) {
    switch (loader->Step(256)) {
      case StartupLoader::Status::kMore:
        if (MonotonicUs() < until) continue;
        return;
      case StartupLoader::Status::kDone:
        server_.FinishStartupLoad();
        LOG_NOTICE("Ready to accept connections");
        return;
      case StartupLoader::Status::kError:
        LOG_WARNING("%s", loader->error().c_str());
        LOG_WARNING("Fatal error loading the DB, check server logs. Exiting.");
        std::fprintf(stderr, "Fatal error loading the DB: %s\n", loader->error().c_str());
        std::_Exit(1);
    }
  }
}

void Worker::ReleasePauseHeld() {
  const int64_t now = UnixTimeMs();
  int64_t until;
  ClientPause& pause = server_.client_pause();
  const uint8_t actions = pause.Paused(now, &until);
  // Still the same pause, as strong as when they were held: they wait.
  if (actions != ClientPause::kNone && actions >= pause_kind_ && pause.generation() == pause_gen_) {
    loop_.WakeWithin(std::clamp<int64_t>(until - now, 0, 1000));
    return;
  }
  pause_kind_ = ClientPause::kNone;
  // Over, or changed: each goes on (and waits again if it still must).
  for (uint64_t id : pause_held_) {
    auto it = clients_.find(id);
    if (it == clients_.end()) continue;
    it->second->pause_held = false;
    resume_.push_back(id);
  }
  pause_held_.clear();
}

void Worker::ServeMasterLink() {
  if (server_.sync_loading()) [[unlikely]] {
    if (server_.SyncLoadReady()) HoldingAll([&] {
        server_.StepFullSyncLoad(*this);
        return true;
      });
    // (Not at once: the other workers, given their shards back, serve
    // their clients before the next slice asks for them again.)
    if (server_.sync_loading()) {
      loop_.WakeWithin(1);
      return;
    }
    // (Over: the link's events that came meanwhile, below.)
  }
  ReplicaLink* link = server_.replica_link();
  if (link == nullptr || !link->told()) [[likely]]
    return;
  HoldingAll([&] {
    // (REPLICAOF may have changed the link while this worker waited.)
    ReplicaLink* now = server_.replica_link();
    if (now != nullptr) server_.ApplyMasterEvents(*this, now->TakeEvents());
    return true;
  });
}

bool Worker::ShutdownAfterWait() {
  if (server_.stopping()) return true;
  // All of it holding every shard, as SHUTDOWN ABORT does: an ABORT either
  // came first (the wait is over: no shutdown) or comes too late.
  const bool down = HoldingAll([this] {
    // (Aborted meanwhile, or another waiting SHUTDOWN's end failed to save.)
    if (!server_.shutdown_waiting.load()) return false;
    const uint8_t flags = server_.shutdown_flags.load();
    if (flags & ServerState::kShutdownSave) {
      std::string err;
      server_.AbortBgSave(/*aof_rewrite_too=*/true);
      if (!SaveRdbFile(server_, server_.config().dbfilename, &err, SaveKind::kScheduled)) {
        LOG_WARNING("Error trying to save the DB, can't exit.");
        if (!(flags & ServerState::kShutdownForce)) {
          // As Redis: the server goes on, writes again, and every
          // SHUTDOWN waiting is told.
          server_.AbortShutdownWait();
          return false;
        }
      }
    }
    server_.set_shutdown_save(ServerState::ShutdownSave::kNoSave);  // (saved, or NOSAVE)
    return true;
  });
  if (down) server_.RequestShutdown();
  return down;
}

bool Worker::WaitBeforeShutdown(bool saves) {
  return HoldingAll([&] { return server_.BeginShutdownWait(saves, /*force=*/false, /*client_id=*/0, index_); });
}

bool Worker::SaveHoldingAll(std::string* err) {
  return HoldingAll([&] {
    server_.AbortBgSave(/*aof_rewrite_too=*/true);  // (before a shutdown)
    return SaveRdbFile(server_, server_.config().dbfilename, err, SaveKind::kScheduled);
  });
}

void Worker::AofRewriteHoldingAll() {
  std::string err;
  bool scheduled;
  if (!HoldingAll([&] { return server_.StartAofRewrite(&err, &scheduled); }))
    LOG_WARNING("Can't rewrite the append only file: %s", err.c_str());
}

bool Worker::BgSaveHoldingAll(std::string* err) {
  return HoldingAll([&] { return server_.StartBgSave(err); });
}

std::string Worker::InfoHoldingAll(std::span<const std::string_view> sections) {
  // (While the start-up load runs no other worker does: nothing to take.)
  if (server_.loading() && server_.startup_loading()) return server_.Info(sections, UnixTimeMs());
  return HoldingAll([&] { return server_.Info(sections, UnixTimeMs()); });
}

void Worker::HoldAllForReplay(bool on) {
  holding_ = on;
  shard_set_.clear();
  if (on)
    for (uint32_t i = 0; i < nworkers_; i++) shard_set_.push_back(i);
}

bool CommandHost::Allows(Config::ProtectedAction action, const Client& c) {
  switch (action) {
    case Config::ProtectedAction::kYes: return true;
    case Config::ProtectedAction::kNo: return false;
    case Config::ProtectedAction::kLocal: break;
  }
  if (c.is_unix) return true;
  const std::string_view ip = AddressIp(c.addr);
  return ip == "127.0.0.1" || ip == "::1";
}

// --- Cron ---

// Many keys expiring at once must not stall other clients: expiry runs in slices of at most 1 ms, one
// per cron tick, and while a slice ends with keys left, another every 2 ms (at most a third of the time).
void Worker::ActiveExpireSlice() {
  constexpr int64_t kSliceUs = 1000;
  // (A replica's keys go when its primary's DELs say: docs/replication.md.)
  // (Nor while clients are paused: CLIENT PAUSE stops expiry, as Redis.)
  const int64_t start = MonotonicUs();
  const ShardStats before = shard_.stats();
  expire_pressure_ = server_.debug().active_expire.load(std::memory_order_relaxed) && !server_.is_replica() &&
                     (!server_.client_pause().active() || server_.client_pause().Paused(UnixTimeMs()) == 0) &&
                     shard_.ActiveExpire(UnixTimeMs(), kSliceUs);
  last_expire_slice_us_ = MonotonicUs();
  // INFO's expiry figures: time, slices cut short, Redis's running estimate
  // of the expired share (each slice's weighs 5%).
  stats_.expire_cycle_us += static_cast<uint64_t>(last_expire_slice_us_ - start);
  if (expire_pressure_) stats_.expired_time_cap_reached_count++;
  if (const uint64_t checked = shard_.stats().expire_checked - before.expire_checked; checked > 0) {
    const double share = 100.0 * static_cast<double>(shard_.stats().expire_deleted - before.expire_deleted) /
                         static_cast<double>(checked);
    stats_.expired_stale_perc = share * 0.05 + stats_.expired_stale_perc * 0.95;
  }
  server_.latency().AddIfNeeded("expire-cycle", (last_expire_slice_us_ - start) / 1000);
}

void Worker::Cron() {
  if (server_.debug().cron_paused.load(std::memory_order_relaxed)) [[unlikely]] return;  // DEBUG PAUSE-CRON
  const int64_t now = UnixTimeMs();
  relay_.TrimPool();
  if (index_ == 0) {
    CycleClock::Recalibrate();
    // (SLOWLOG's threshold is in ticks: kept to the refined rate.)
    const Config& config = server_.config();
    server_.slowlog().Configure(config.slowlog_log_slower_than, config.slowlog_max_len, CycleClock::TicksPerUs());
    server_.latency().Configure(config.latency_monitor_threshold, CycleClock::TicksPerUs() * 1000);
  }
  // Snapshots (docs/persistence.md): worker 0 collects a finished BGSAVE, starts one when asked.
  if (index_ == 0 && !server_.stopping() && !server_.any_loading()) {
    server_.CloseRetiredListeners();  // (CONFIG SET port's)
    server_.ReapBgSave();
    server_.NoteEvictionExceeded(MonotonicMs());
    if (server_.bgsave() == nullptr && (server_.TakeScheduledBgSave() || SaveDue(server_, now / 1000))) {
      std::string err;
      BgSaveHoldingAll(&err);
    }
    // A replica's full resync that waited for a BGSAVE; the stream's PINGs.
    if (server_.SyncDue(now)) HoldingAll([&] {
        server_.StartWaitingSync();
        return true;
      });
    server_.ReplicationCron(now);
    if (server_.is_replica()) server_.ReplicaCron();
    // Redis Cluster: the offset the bus reports, and what it left for the
    // keyspace (slots lost, a primary to follow).
    if (ClusterService* cl = server_.cluster()) {
      ReplicaLink* link = server_.replica_link();
      if (server_.is_replica() && link != nullptr) {
        const ReplicaLink::Status st = link->status();
        const int64_t since = st.up ? st.last_io_ms : st.down_since_ms;
        cl->NoteReplication(st.offset, since == 0 ? INT64_MAX / 4 : now - since,
                            server_.config().repl_ping_replica_period * 1000LL);
      } else {
        cl->NoteReplication(server_.replication().offset(), 0, server_.config().repl_ping_replica_period * 1000LL);
      }
      if (cl->has_work()) HoldingAll([&] {
          cl->DoWork(server_);
          return true;
        });
    }
    if (server_.failing_over()) HoldingAll([&] {
        server_.FailoverCron(now);
        return true;
      });
    if (!server_.is_replica() && server_.replication().BacklogExpired(now, server_.config().repl_backlog_ttl))
      HoldingAll([&] {
        server_.FreeBacklog();
        return true;
      });
    // The append-only file: a rewrite that waited for a BGSAVE, or one
    // auto-aof-rewrite-* asks for; a write that failed is tried again.
    if (server_.aof().active() || server_.aof_stats().rewrite_scheduled) {
      if (server_.AofRewriteDue()) AofRewriteHoldingAll();
      if (server_.aof().write_failed()) server_.aof().RetryFailedWrite();
    }
  }
  ActiveExpireSlice();
  if (cluster_.enabled()) [[unlikely]]
    waits_.RedirectBlocked(cluster_);
  // Keys the cron expired or evicted are logged as DEL: written now.
  if (!shard_.aof().empty() && !router_.lent()) [[unlikely]] {
    aof_log_.NoteUnflushed();
    FlushAof();
  }
  shard_.MaintainTables(1000);  // sparse segments give their memory back (1 ms a tick at most)
  // Sorted sets whose index moves (every database: here, not every iteration).
  zset_moves_ = zset_moves_ || shard_.HasZSetMoves();
  // Access data (OBJECT FREQ / IDLETIME): at most 1% of the time.
  shard_.AccessCron(MonotonicMs(), 10'000 / server_.config().hz);
  // A worker that gets no commands still evicts its share.
  if (server_.config().maxmemory > 0 && !server_.any_loading()) EvictFor(1000);
  if (shard_.tracking().keys() > 0 || shard_.track_removals()) [[unlikely]] {  // CLIENT TRACKING
    shard_.tracking().Limit(1000);
    shard_.SetTrackRemovals(shard_.tracking().active());
  }
  PublishEvictable();

  std::vector<Client*> idle;
  const int timeout = server_.config().timeout;
  // (DEBUG REPLYBUFFER: after how long, if ever.)
  const int64_t free_ms = server_.debug().buffer_free_ms.load(std::memory_order_relaxed);
  const bool free_out = server_.debug().reply_buffer_resizing.load(std::memory_order_relaxed);
  for (auto& [id, c] : clients_) {
    const int64_t idle_ms = now - c->last_interaction_ms;
    stats_.peak_buffers.Note(now / 1000, c->in.capacity(), c->out.capacity() + c->out.referenced_bytes());
    // An idle client gives back its buffers (thousands of idle connections, 16 KB each).
    if (free_ms >= 0 && idle_ms > free_ms) {
      if (c->in.empty()) c->in.ShrinkIfIdle(0);
      if (free_out && c->out.empty() && c->out.capacity() > 0) {
        c->out.ShrinkIfIdle(0);
        stats_.reply_buffer_shrinks++;
      }
    }
    // A large argument trickling in slower than its low-water mark still
    // wakes the worker once a second: the bytes are read, and the client is
    // not taken for idle (timeout) while it is sending.
    if (c->rcvlowat > 1 && idle_ms > 1000) ClientIo::SetLowWater(*c, 1);
    // (Replicas are never idle clients, nor clients that wait: blocked, in
    // WAIT, held by CLIENT PAUSE, as in Redis.)
    if (timeout > 0 && idle_ms > static_cast<int64_t>(timeout) * 1000 && !c->batch_in_flight && !c->waiting() &&
        !c->replica)
      idle.push_back(c.get());
  }
  for (Client* c : idle) {
    LOG_VERBOSE("Closing idle client id=%llu", static_cast<unsigned long long>(c->id));
    FreeClient(*c);
  }
  server_.client_eviction().Check(server_, *this);
  published_client_bytes_.store(ClientBufferBytes(), std::memory_order_relaxed);
  server_.UsedMemory();  // samples the peak

  const EventLoop::Stats& ls = loop_.stats();
  const uint64_t totals[Rates::kMetrics] = {stats_.total_commands_processed, stats_.total_net_input_bytes,
                                            stats_.total_net_output_bytes,
                                            index_ == 0 ? server_.repl_stats().net_input.load() : 0,
                                            stats_.total_net_repl_output_bytes, ls.cycles, ls.ticks};
  rates_.Sample(MonotonicMs(), totals);
}

void Worker::ResetStats() {
  stats_ = ServerStats{};
  for (CommandStats& st : command_stats_) st = CommandStats{};
  shard_.ResetStats();
  rates_.ResetCounts();
  loop_.ResetStats();
}

}  // namespace peregrine
