// The server process: start-up, the workers' threads, connection placement
// and the operations over every worker (see server.h).
#include "server/server.h"

#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/lazy_free.h"
#include "core/memory.h"
#include "core/numbers.h"
#include "net/socket.h"
#include "server/client_eviction.h"
#include "server/log.h"
#include "server/metrics_http.h"
#include "server/supervise.h"

namespace peregrine {

// A listening socket (on worker 0's loop): accepts connections when readable.
struct Server::Listener final : IoHandler {
  Listener(Server* s, int fd, bool is_unix, bool tls = false) : server(s), fd(fd), is_unix(is_unix), tls(tls) {}
  ~Listener() override { close(fd); }
  void OnEvent(uint32_t) override { server->Accept(fd, is_unix, tls); }
  bool ServedWhileParked() const override { return true; }
  Server* server;
  int fd;
  bool is_unix;
  bool tls;  // tls-port
};

// SIGTERM / SIGINT through a signalfd on worker 0's loop: a clean shutdown.
struct Server::SignalWatcher final : IoHandler {
  SignalWatcher(Server* s, int fd) : server(s), fd(fd) {}
  ~SignalWatcher() override { close(fd); }
  void OnEvent(uint32_t) override {
    signalfd_siginfo info;
    while (read(fd, &info, sizeof(info)) == sizeof(info)) {
      const char* name = info.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
      LOG_WARNING("Received %s scheduling shutdown...", name);
      server->ShutdownOnSignal(info.ssi_signo == SIGINT);
    }
  }
  Server* server;
  int fd;
};

Db& CommandContext::db() { return shard.db(client.db); }
bool CommandContext::MayLend() const {
  const auto& w = static_cast<const Worker&>(worker);
  return reply.has_output() && &shard == &w.shard() && !w.holding();
}
Db& CommandContext::DbOf(std::string_view key) { return ShardOf(key).db(client.db); }
Shard& CommandContext::ShardOf(std::string_view key) {
  return server.num_shards() == 1 || keys_on_shard ? shard : server.shard(server.ShardIndexOf(key));
}

namespace {
// The cores this process may run on (its affinity: a cpuset, taskset), not
// every core online: a container given 2 of 64 cores gets 2 workers.
unsigned AllowedCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

ServerState::ServerState(Config config, CommandTable commands, std::string config_file, std::string executable)
    : config_(std::move(config)),
      config_file_(std::move(config_file)),
      executable_(std::move(executable)),
      run_id_(RandomHex(40)),
      commands_(std::move(commands)) {
  repl_ids_.Change();
}

ServerState::~ServerState() = default;

Server::Server(Config config, CommandTable commands, std::string config_file, std::string executable)
    : ServerState(std::move(config), std::move(commands), std::move(config_file), std::move(executable)) {
  aof_ = std::make_unique<AppendOnlyFile>(*this);
  acl_ = std::make_unique<Acl>(commands_);
  acl_->set_pubsub_default_all(config_.acl_pubsub_default_all);
  slowlog_.Configure(config_.slowlog_log_slower_than, config_.slowlog_max_len, CycleClock::TicksPerUs());
  latency_.Configure(config_.latency_monitor_threshold, CycleClock::TicksPerUs() * 1000);
  if (cluster_ != nullptr) cluster_->ApplyConfig(config_.cluster);
  if (!config_.requirepass.empty()) acl_->SetRequirePass(config_.requirepass);
  applied_requirepass_ = config_.requirepass;
  const unsigned cores = AllowedCores();
  if (config_.threads <= 0) config_.threads = static_cast<int>(std::clamp(cores, 1u, 256u));
  // Workers that outnumber their cores take turns on them: one woken (by a
  // client or another's mail) preempting another mid-batch only splits both
  // batches, at two context switches each time (docs/transactions.md,
  // "Cost"). The worker threads inherit the policy from this one.
  if (config_.worker_sched == Config::WorkerSched::kBatch ||
      (config_.worker_sched == Config::WorkerSched::kAuto && config_.threads > static_cast<int>(cores))) {
    sched_param none{};
    if (sched_setscheduler(0, SCHED_BATCH, &none) == 0)
      LOG_NOTICE("%d workers on %u cores: they run as SCHED_BATCH (worker-sched-policy)", config_.threads, cores);
    else
      LOG_WARNING("Could not make the workers SCHED_BATCH: %s", strerror(errno));
  }
  // A worker that spins for mail holds its core: where workers share cores,
  // the one it waits for may be the one it keeps off the core.
  worker_spin_us_ = config_.threads <= static_cast<int>(cores) ? config_.worker_spin_us : 0;
  const auto n = static_cast<uint32_t>(config_.threads);
  if (n > 1)
    for (uint32_t i = 0; i < n * n; i++) rings_.push_back(std::make_unique<Ring>());
  ring_side_ = n;
  claims_ = std::make_unique<ClaimBoard>(n);
  client_eviction_ = std::make_unique<ClientEviction>(n);
  replication_ = std::make_unique<ReplicationPrimary>(n, [this](uint32_t w) { worker(w).waker().Notify(); });
  for (uint32_t i = 0; i < n; i++) {
    workers_.push_back(std::make_unique<Worker>(*this, i));
    shards_.push_back(&workers_[i]->shard());
    hosts_.push_back(workers_[i].get());
  }
}

Server::~Server() {
  sync_load_.reset();  // (a full sync's load cut short: its loader uses the shards)
  link_.reset();  // (its thread ends)
  master_replayer_.reset();
  AbortBgSave(true);  // (its writer thread ends, its temporary file goes)
  // Mail still in the rings when every worker has stopped (replies nobody
  // waits for any more).
  const auto n = static_cast<uint32_t>(workers_.size());
  if (n > 1) {
    for (uint32_t from = 0; from < n; from++)
      for (uint32_t to = 0; to < n; to++) {
        uint64_t words[64];
        size_t got;
        while ((got = ring(from, to).PopBatch(words, 64)) > 0)
          for (size_t i = 0; i < got; i++)
            if ((words[i] & 1) == 0) delete reinterpret_cast<Mail*>(words[i]);
      }
  }
  // The base's views of the workers go with them: nothing that runs while
  // the base is destroyed (the AOF's file, the scripts) sees a freed shard.
  shards_.clear();
  hosts_.clear();
  workers_.clear();
}

bool Server::InitWorkers(std::string* err) {
  for (auto& w : workers_) {
    if (!w->Init()) {
      *err = "epoll_create1 failed";
      return false;
    }
  }
  return true;
}

bool Server::Start(std::string* err) {
  if (!LoadUsers(err)) return false;
  if (!InitWorkers(err)) return false;
  EventLoop& loop0 = workers_[0]->loop();
  // Every bind address on `port` (an address marked '-' may fail).
  auto listen_all = [&](int port, bool tls) {
    std::string why;
    std::vector<std::string> skipped;
    const std::vector<int> fds = ListenAll(config_.bind, port, config_.tcp_backlog, &why, &skipped);
    for (const std::string& s : skipped) LOG_VERBOSE("Could not listen on optional address %s (port %d)", s.c_str(), port);
    if (!why.empty()) {
      *err = "Failed listening on port " + std::to_string(port) + " (" + (tls ? "tls" : "tcp") + "), aborting: " + why;
      return false;
    }
    if (fds.empty()) {
      *err = "Failed listening on port " + std::to_string(port) + ": no usable bind address";
      return false;
    }
    for (int fd : fds) listeners_.push_back(std::make_unique<Listener>(this, fd, false, tls));
    return true;
  };
  if (config_.port != 0 && !listen_all(config_.port, false)) return false;
  if (config_.tls_port != 0) {
    // The settings are checked now: a bad certificate stops the start, as
    // in Redis (each worker makes its own context from them later).
    std::string why;
    if (TlsContext::Create(config_.tls, &why) == nullptr) {
      *err = "Failed to configure TLS: " + why;
      return false;
    }
    if (!listen_all(config_.tls_port, true)) return false;
  }
  if (!config_.unixsocket.empty()) {
    std::string why;
    int fd = ListenUnix(config_.unixsocket, config_.unixsocketperm, config_.tcp_backlog, &why);
    if (fd < 0) {
      *err = "Failed opening Unix socket: " + why;
      return false;
    }
    listeners_.push_back(std::make_unique<Listener>(this, fd, true));
  }
  if (listeners_.empty()) {
    *err = "Configured to not listen anywhere, exiting.";
    return false;
  }
  for (auto& l : listeners_) loop0.Add(l->fd, EPOLLIN, l.get());
  if (config_.metrics_port != 0 &&
      (metrics_ = MetricsEndpoint::Start(*this, loop0, config_.bind, config_.metrics_port, err)) == nullptr)
    return false;

  // Blocked before any worker thread starts, so that every thread inherits
  // the mask and the signals reach worker 0's signalfd only.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd >= 0) {
    signals_ = std::make_unique<SignalWatcher>(this, sfd);
    loop0.Add(sfd, EPOLLIN, signals_.get());
  }
  signal(SIGPIPE, SIG_IGN);
  // The cluster bus's thread (after the mask: it inherits it), and the
  // queues its PUBLISH messages come to the workers through.
  if (cluster_ != nullptr) {
    // (Only database 0 in cluster mode: its keys counted per slot.)
    for (size_t i = 0; i < num_shards(); i++) shard(i).db(0).CountSlots();
    cluster_->inbox().Init(workers_.size(), [this] { WakeWorkers(); });
    if (!cluster_->Start(err)) return false;
  }

  start_time_ms_ = UnixTimeMs();
  persistence_.lastsave_s.store(start_time_ms_ / 1000, std::memory_order_relaxed);
  heap_at_startup_ = static_cast<uint64_t>(std::max<int64_t>(TotalHeapBytes(), 0));
  used_memory_startup_ = UsedMemory();
  ApplyRuntimeConfig();
  return true;
}

bool Server::ApplyPort(int old_port) {
  if (config_.port == old_port) return true;
  // The new sockets first: where they cannot listen, the old ones stay
  // (Redis closes first, then listens on the old port again).
  std::string why;
  std::vector<int> fds;
  if (config_.port != 0) {
    fds = ListenAll(config_.bind, config_.port, config_.tcp_backlog, &why);
    if (!why.empty() || fds.empty()) {
      LOG_WARNING("Failed listening on port %d (tcp): %s", config_.port,
                  why.empty() ? "no usable bind address" : why.c_str());
      return false;
    }
  }
  // Off worker 0's loop now (epoll_ctl is safe from any thread); closed by
  // its cron, after any event already taken for them is served.
  EventLoop& loop0 = workers_[0]->loop();
  std::lock_guard<std::mutex> lock(listeners_mu_);
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    if (!(*it)->is_unix && !(*it)->tls) {
      loop0.Remove((*it)->fd);
      retired_listeners_.push_back(std::move(*it));
      it = listeners_.erase(it);
    } else {
      ++it;
    }
  }
  for (int fd : fds) {
    listeners_.push_back(std::make_unique<Listener>(this, fd, false, false));
    loop0.Add(fd, EPOLLIN, listeners_.back().get());
  }
  LOG_NOTICE("Listening on port %d (tcp) now", config_.port);
  return true;
}

void Server::CloseRetiredListeners() {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  retired_listeners_.clear();
}

int Server::Run() {
  if (loader_ != nullptr) {
    // Worker 0 loads first (FinishStartupLoad starts the others).
    load_state_.store(kLoading | kStartupLoad, std::memory_order_release);
  } else {
    supervise::Ready(!config_.replicaof_host.empty());
    StartReplicaOfConfig();
    for (size_t i = 1; i < workers_.size(); i++) threads_.emplace_back([w = workers_[i].get()] { w->Run(); });
  }
  workers_[0]->Run();
  for (auto& t : threads_) t.join();
  if (cluster_ != nullptr) cluster_->Stop();
  StopReplicaLink();
  listeners_.clear();
  retired_listeners_.clear();
  metrics_.reset();
  // What the shards logged and did not write yet goes to the append-only
  // file, made durable (Redis's flushAppendOnlyFile(1) on shutdown).
  if (aof_->active()) {
    for (size_t i = 0; i < workers_.size(); i++) {
      AofChunk& chunk = shard(i).aof();
      if (!chunk.empty()) aof_->Write(chunk);
      chunk.Clear();
    }
    aof_->Close();
  }
  // A BGSAVE still going stops (its temporary file goes), as Redis kills
  // its child; the final save, if any, is written in the foreground.
  AbortBgSave(true);
  const bool saved = SaveOnShutdown();
  if (!config_.unixsocket.empty()) unlink(config_.unixsocket.c_str());
  if (!config_.pidfile.empty()) unlink(config_.pidfile.c_str());
  if (!saved) {
    LOG_WARNING("Errors trying to shut down the server: the snapshot was not saved. Check the logs.");
    return 1;
  }
  LOG_WARNING("Peregrine is now ready to exit, bye bye...");
  return 0;
}

void Server::FinishStartupLoad(bool complete) {
  loader_.reset();
  if (cluster_ != nullptr && complete) {
    // Keys of another database would be out of reach (only database 0 in
    // cluster mode): the start stops, as Redis's does.
    for (size_t i = 0; i < num_shards(); i++)
      for (int d = 1; d < shard(i).num_dbs(); d++)
        if (shard(i).db(d).size() != 0) {
          LOG_WARNING("You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.");
          std::fprintf(stderr, "Keys in database %d in cluster mode: only database 0 is allowed\n", d);
          std::_Exit(1);
        }
    // The loaded keys' slots, against the cluster's table (only worker 0
    // runs yet: every shard is its to read).
    std::vector<bool> slots(kNumSlots, false);
    for (size_t i = 0; i < num_shards(); i++)
      for (uint32_t s = 0; s < kNumSlots; s++)
        if (shard(i).db(0).KeysInSlot(s) > 0) slots[s] = true;
    cluster_->VerifyWithData(slots);
  }
  load_state_.store(0, std::memory_order_release);
  if (complete) supervise::Ready(!config_.replicaof_host.empty());
  StartReplicaOfConfig();
  for (size_t i = 1; i < workers_.size(); i++) threads_.emplace_back([w = workers_[i].get()] { w->Run(); });
}

void Server::ShutdownOnSignal(bool sigint) {
  // As Redis: the snapshot first when a schedule is configured; if it
  // fails, the server keeps running (the data would be lost otherwise).
  // While loading nothing is saved (the file would be half the data).
  if (any_loading()) shutdown_save_ = ShutdownSave::kNoSave;
  // First, as SHUTDOWN, a wait for lagging replicas (worker 0 ends it).
  // Meanwhile, as Redis, another SIGTERM changes nothing and a SIGINT
  // exits at once, unsaved, with an error status.
  if (!stopping() && shutdown_waiting.load()) {
    if (!sigint) return;
    LOG_WARNING("You insist... exiting now.");
    _exit(1);
  }
  // (Not during the start-up load: no replica can be attached then, and
  // the other workers, not started, could not lend their shards.)
  if (!stopping() && !startup_loading()) {
    const bool saves = shutdown_save_ == ShutdownSave::kSave ||
                       (shutdown_save_ == ShutdownSave::kDefault && !config_.save_params.empty());
    if (workers_[0]->WaitBeforeShutdown(saves)) return;
  }
  if (shutdown_save_ == ShutdownSave::kDefault && !config_.save_params.empty() && !stopping()) {
    LOG_NOTICE("Saving the final RDB snapshot before exiting.");
    std::string err;
    if (!workers_[0]->SaveHoldingAll(&err)) {
      LOG_WARNING("SIGTERM received but errors trying to shut down the server, check the logs for more information");
      return;
    }
    shutdown_save_ = ShutdownSave::kNoSave;
  }
  RequestShutdown();
}

bool Server::SaveOnShutdown() {
  const bool save = shutdown_save_ == ShutdownSave::kSave ||
                    (shutdown_save_ == ShutdownSave::kDefault && !config_.save_params.empty());
  if (!save) return true;
  LOG_NOTICE("Saving the final RDB snapshot before exiting.");
  std::string err;
  return SaveRdbFile(*this, config_.dbfilename, &err);
}

void Server::RequestShutdown() {
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;
  LOG_WARNING("User requested shutdown...");
  supervise::Stopping();
  // One worker: it is the caller (SHUTDOWN, or the signal watcher on its
  // loop). Several: each sees the flag before its next wait.
  if (workers_.size() == 1) workers_[0]->loop().Stop();
  for (auto& w : workers_) w->waker().Notify();
}

void Server::NotePeak(uint64_t used) {
  uint64_t peak = used_memory_peak_.load(std::memory_order_relaxed);
  while (used > peak && !used_memory_peak_.compare_exchange_weak(peak, used, std::memory_order_relaxed)) {
  }
}

uint64_t Server::UsedMemory() {
  // (As INFO's used_memory, less the scripts' interpreters: their workers'
  // to read.)
  uint64_t used = static_cast<uint64_t>(std::max<int64_t>(TotalKeyspaceBytes(), 0)) +
                  static_cast<uint64_t>(std::max<int64_t>(TotalHeapBytes(), 0));
  for (auto& w : workers_) used += w->published_client_bytes();
  NotePeak(used);
  return used;
}

void Server::NoteEvictionExceeded(int64_t now_ms) {
  const bool over = config_.maxmemory > 0 && static_cast<uint64_t>(std::max<int64_t>(TotalCountedBytes(), 0)) >
                                                 config_.maxmemory;
  if (over && eviction_exceeded_since_ms_ == 0) eviction_exceeded_since_ms_ = now_ms;
  if (!over && eviction_exceeded_since_ms_ != 0) {
    eviction_exceeded_ms_ += now_ms - eviction_exceeded_since_ms_;
    eviction_exceeded_since_ms_ = 0;
  }
}

void Server::ApplyRuntimeConfig() {
  slowlog_.Configure(config_.slowlog_log_slower_than, config_.slowlog_max_len, CycleClock::TicksPerUs());
  latency_.Configure(config_.latency_monitor_threshold, CycleClock::TicksPerUs() * 1000);
  tracking_.set_max_keys(static_cast<uint64_t>(config_.tracking_table_max_keys));
  // requirepass: the default user's password, when it changed (ACL SETUSER
  // default may have changed the user since).
  if (config_.requirepass != applied_requirepass_) {
    acl_->SetRequirePass(config_.requirepass);
    applied_requirepass_ = config_.requirepass;
  }
  if (link_ != nullptr) {
    link_->UpdateSettings(config_.masteruser, config_.masterauth, config_.repl_timeout);
    link_->UpdateDisklessLoad(config_.repl_diskless_load);
  }
  acl_->set_pubsub_default_all(config_.acl_pubsub_default_all);
  if (cluster_ != nullptr) cluster_->ApplyConfig(config_.cluster);
  replication_->Resize(config_.repl_backlog_size);  // (a no-op unless it changed)
  replication_->set_pending_limit(config_.output_buffer_limits[Config::kReplicaClients].hard);
  // dir: entered now (start-up, CONFIG SET dir); a failure leaves the
  // server where it was (the directive checked that it can be entered).
  if (!config_.dir.empty()) {
    if (chdir(config_.dir.c_str()) != 0)
      LOG_WARNING("Can't chdir to '%s': %s", config_.dir.c_str(), std::strerror(errno));
    config_.dir.clear();
  }
  const std::string& l = config_.loglevel;
  SetLogLevel(l == "debug" ? LogLevel::kDebug
              : l == "verbose" ? LogLevel::kVerbose
              : l == "warning" ? LogLevel::kWarning
              : l == "nothing" ? LogLevel::kNothing
                               : LogLevel::kNotice);
  // Room for maxclients connections plus listeners, files and wake-ups.
  rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rlim_t want = static_cast<rlim_t>(config_.maxclients) + 32 + workers_.size();
    if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = std::min(want, rl.rlim_max);
      if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        LOG_WARNING("Could not raise the open files limit to %llu", static_cast<unsigned long long>(want));
    }
  }
  // Every shard is held: which shards the (maybe new) policy can evict from
  // is known now, not only at the workers' next cron tick.
  for (auto& w : workers_) w->PublishEvictable();
  // notify-keyspace-events: keys the databases remove by themselves tell
  // of it only while some class is on.
  notifier_.Configure(config_.notify_keyspace_events);
  for (size_t i = 0; i < num_shards(); i++) shard(i).SetNotifyRemovals(notifier_.active() != 0);
  config_epoch_.fetch_add(1, std::memory_order_acq_rel);
}

void Server::Accept(int listen_fd, bool is_unix, bool tls) {
  Worker& w0 = *workers_[0];
  // Accept a bounded number per event so that a connection storm cannot
  // starve the clients already connected.
  for (int i = 0; i < 1000; i++) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        LOG_WARNING("Accepting client connection: %s", strerror(errno));
      return;
    }
    w0.stats().total_connections_received++;
    // The least loaded worker (connections as counted at hand-off, so that a
    // burst of connections spreads before the workers have adopted them).
    Worker* target = workers_[0].get();
    int64_t total = 0;
    for (auto& w : workers_) {
      const int64_t n = w->connections().load(std::memory_order_relaxed);
      total += n;
      // (While the start-up load runs only worker 0 does: it keeps every
      // connection.)
      if (n < target->connections().load(std::memory_order_relaxed) && !startup_loading()) target = w.get();
    }
    if (total >= static_cast<int64_t>(config_.maxclients)) {
      static const char kMsg[] = "-ERR max number of clients reached\r\n";
      ssize_t ignored = write(fd, kMsg, sizeof(kMsg) - 1);
      (void)ignored;
      close(fd);
      w0.stats().rejected_connections++;
      continue;
    }
    // (The peer's address is asked for only when protected mode applies.)
    if (config_.protected_mode && !is_unix && acl_->default_user()->nopass &&
        ProtectedModeRefuses(true, true, false, PeerAddress(fd))) [[unlikely]] {
      ssize_t ignored = write(fd, kProtectedModeDenied.data(), kProtectedModeDenied.size());
      (void)ignored;
      close(fd);
      w0.stats().rejected_connections++;
      continue;
    }
    // While a script is busy, worker 0 keeps the connection: another may be
    // parked, and would not adopt it (nor answer it -BUSY) until the script
    // is over.
    if (busy_scripts_.load(std::memory_order_relaxed) > 0) [[unlikely]]
      target = &w0;
    target->connections().fetch_add(1, std::memory_order_relaxed);
    const uint64_t id = next_client_id_.fetch_add(1, std::memory_order_relaxed);
    if (target == &w0) {
      w0.Adopt(fd, is_unix, id, tls);
    } else {
      w0.SendAdopt(target->index(), new AdoptMail(fd, is_unix, id, tls));
    }
  }
}

void Server::CloseClient(CommandHost& caller, Client& c) {
  if (c.worker == &caller)
    static_cast<Worker&>(caller).CloseClient(c);
  else
    c.worker->RequestKill(c.id);
}

std::vector<Client*> Server::AllClients() const {
  std::vector<Client*> out;
  for (auto& w : workers_)
    for (auto& [id, c] : w->clients()) out.push_back(c.get());
  std::sort(out.begin(), out.end(), [](const Client* a, const Client* b) { return a->id < b->id; });
  return out;
}

void Server::ResetStats() {
  for (auto& w : workers_) w->ResetStats();
  acl_->ResetDenied();
  used_memory_peak_.store(0, std::memory_order_relaxed);
  lazy_free::ResetFreed();
}

void Server::NewMasterClient(bool if_none) {
  std::lock_guard<std::mutex> lock(master_client_mu_);
  if (if_none && master_client_.id != 0) return;
  master_client_ = MasterClient();
  master_client_.id = next_client_id_.fetch_add(1, std::memory_order_relaxed);
  master_client_.ctime_ms = UnixTimeMs();
  master_client_.db = master_db_;
}

ServerState::MasterClientInfo Server::MasterClientNow(int64_t now_ms) const {
  MasterClientInfo out;
  if (link_ == nullptr) return out;
  const ReplicaLink::Status st = link_->status();
  if (!st.up) return out;
  MasterClient m;
  {
    std::lock_guard<std::mutex> lock(master_client_mu_);
    m = master_client_;
  }
  if (m.id == 0) return out;
  out.id = m.id;
  out.addr = st.addr;
  out.laddr = st.laddr;
  out.age_s = (now_ms - m.ctime_ms) / 1000;
  // As Redis shows its master client: no user (the superuser), nothing
  // queued for it to send.
  char buf[768];
  snprintf(buf, sizeof(buf),
           "id=%llu addr=%s laddr=%s fd=%d name= age=%lld idle=%lld flags=M db=%d sub=0 psub=0 ssub=0 multi=-1 "
           "qbuf=0 qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu rbp=0 obl=0 oll=0 omem=0 tot-mem=%zu events=r "
           "cmd=%s user=(superuser) redir=-1 resp=2 lib-name= lib-ver=\n",
           static_cast<unsigned long long>(m.id), st.addr.c_str(), st.laddr.c_str(), st.fd,
           static_cast<long long>(out.age_s), static_cast<long long>((now_ms - st.last_io_ms) / 1000), m.db,
           m.buffer, m.buffer, m.buffer + sizeof(Client), m.cmd.c_str());
  out.line = buf;
  return out;
}

std::string Server::ClientInfoLine(const Client& c, int64_t now_ms) const {
  std::string cmd = c.last_cmd ? c.last_cmd->fullname : "NULL";
  // Redis's letters, in its order (S: a replica, P: Pub/Sub, x: in MULTI,
  // b: blocked, d: watch failed; N: none).
  char flags[16];
  char* f = flags;
  if (c.monitor) *f++ = 'O';
  if (c.replica) *f++ = 'S';
  if (c.subs != nullptr) *f++ = 'P';
  if (c.multi != nullptr) *f++ = 'x';
  if (c.blocked != nullptr || c.wait_acks) *f++ = 'b';
  if (c.tracking & tracking::kOn) *f++ = 't';  // CLIENT TRACKING: on, redirection broken, BCAST
  if (c.tracking & tracking::kBrokenRedir) *f++ = 'R';
  if (c.tracking & tracking::kBcast) *f++ = 'B';
  if (c.watch != nullptr && c.watch->Dirty()) *f++ = 'd';  // a watched key changed: EXEC will fail
  if (c.no_evict) *f++ = 'e';
  if (c.no_touch) *f++ = 'T';
  if (f == flags) *f++ = 'N';
  *f = '\0';
  // The queue and the watched keys (Redis's multiStateMemOverhead).
  const size_t multi_mem = (c.multi != nullptr ? c.multi->Bytes() : 0) +
                           (c.watch != nullptr ? c.watch->keys.capacity() * sizeof(WatchState::Key) : 0);
  // The input being read: a worker reads into its own buffer, then the
  // client's; Redis's qbuf is its query buffer while it runs the commands.
  const Buffer& in = c.reading != nullptr ? *c.reading : c.in;
  // Redis's reply buffer is 16 KB at most (rbs; obl: bytes in it), beyond
  // it a list (oll entries, omem bytes): ours is one buffer, so what it
  // holds past 16 KB and the values referenced count as the list.
  constexpr size_t kReplyChunk = 16 * 1024;
  const size_t held = c.out.capacity(), pending = c.out.size() - c.out.referenced_bytes();
  const size_t omem = (held > kReplyChunk ? held - kReplyChunk : 0) + c.out.referenced_bytes();
  char buf[1024];
  snprintf(buf, sizeof(buf),
           "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%zu psub=%zu "
           "ssub=%zu multi=%lld qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=%zu rbs=%zu rbp=0 obl=%zu oll=%zu "
           "omem=%zu tot-mem=%zu events=r%s cmd=%s user=",
           static_cast<unsigned long long>(c.id), c.addr.c_str(), c.laddr.c_str(), c.fd, c.name.c_str(),
           static_cast<long long>((now_ms - c.ctime_ms) / 1000),
           static_cast<long long>((now_ms - c.last_interaction_ms) / 1000), flags, c.db,
           c.subs != nullptr ? c.subs->channels.size() : 0, c.subs != nullptr ? c.subs->patterns.size() : 0,
           c.subs != nullptr ? c.subs->shard_channels.size() : 0,
           c.multi != nullptr ? static_cast<long long>(c.multi->commands.size()) : -1LL,
           in.size(), in.capacity() - in.size(), multi_mem, std::min(held, kReplyChunk), std::min(pending, kReplyChunk),
           c.out.ref_count(), omem, ClientMemory(c),
           c.writable_armed ? "w" : "",
           cmd.c_str());
  // The rest after the user's name (of any length).
  std::string line = buf;
  line += c.user != nullptr ? c.user->name : "default";
  line += " redir=-1 resp=" + std::to_string(c.resp) + " lib-name=" + c.lib_name + " lib-ver=" + c.lib_ver + "\n";
  return line;
}

}  // namespace peregrine
