// The server's connection handling, dispatcher and cron (see server.h).
#include "server/server.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "net/socket.h"
#include "server/log.h"

namespace peregrine {

// A listening socket: accepts connections when readable.
struct Server::Listener final : IoHandler {
  Listener(Server* s, int fd, bool is_unix) : server(s), fd(fd), is_unix(is_unix) {}
  ~Listener() override { close(fd); }
  void OnEvent(uint32_t) override { server->Accept(fd, is_unix); }
  Server* server;
  int fd;
  bool is_unix;
};

// SIGTERM / SIGINT through a signalfd: a clean shutdown from the loop.
struct Server::SignalWatcher final : IoHandler {
  SignalWatcher(Server* s, int fd) : server(s), fd(fd) {}
  ~SignalWatcher() override { close(fd); }
  void OnEvent(uint32_t) override {
    signalfd_siginfo info;
    while (read(fd, &info, sizeof(info)) == sizeof(info)) {
      const char* name = info.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
      LOG_WARNING("Received %s scheduling shutdown...", name);
      server->RequestShutdown();
    }
  }
  Server* server;
  int fd;
};

void Client::OnEvent(uint32_t events) { server->OnClientEvent(*this, events); }

Db& CommandContext::db() { return shard.db(client.db); }
Db& CommandContext::DbOf(std::string_view key) {
  if (server.num_shards() == 1) return shard.db(client.db);
  return server.shard(server.ShardIndexOf(key)).db(client.db);
}

namespace {
std::string RandomHex(size_t n) {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  static const char kHex[] = "0123456789abcdef";
  std::string s(n, '0');
  for (char& c : s) c = kHex[rng() & 15];
  return s;
}

constexpr size_t kReadChunk = 16 * 1024;
// Buffers larger than this are freed as soon as they drain, so that one huge
// request or reply does not pin memory for the life of the connection.
// Smaller ones are kept while the client is active (re-growing a reply
// buffer for every pipeline batch of large values costs reallocs and, past
// glibc's mmap threshold, mmap/munmap calls) and freed by the cron once the
// client has been idle for a while.
constexpr size_t kIdleBufferKeep = 1024 * 1024;
constexpr int64_t kIdleBufferFreeMs = 2000;
}  // namespace

Server::Server(Config config, std::string config_file, std::string executable)
    : config_(std::move(config)),
      config_file_(std::move(config_file)),
      executable_(std::move(executable)),
      run_id_(RandomHex(40)) {
  RegisterConnectionCommands(commands_);
  RegisterStringCommands(commands_);
  RegisterKeyCommands(commands_);
  RegisterServerCommands(commands_);
  for (int i = 0; i < config_.shards; i++) shards_.push_back(std::make_unique<Shard>(i, config_.databases));
}

Server::~Server() {
  for (auto& [id, c] : clients_) close(c->fd);
}

bool Server::Start(std::string* err) {
  if (!loop_.ok()) {
    *err = "epoll_create1 failed";
    return false;
  }
  if (config_.port != 0) {
    for (const std::string& b : config_.bind) {
      bool optional = !b.empty() && b[0] == '-';
      std::string host = optional ? b.substr(1) : b;
      std::string why;
      int fd = ListenTcp(host, config_.port, config_.tcp_backlog, &why);
      if (fd < 0) {
        if (optional) {
          LOG_VERBOSE("Could not listen on optional address %s:%d: %s", host.c_str(), config_.port, why.c_str());
          continue;
        }
        *err = "Failed listening on port " + std::to_string(config_.port) + " (tcp), aborting: " +
               host + ": " + why;
        return false;
      }
      listeners_.push_back(std::make_unique<Listener>(this, fd, false));
    }
    if (listeners_.empty()) {
      *err = "Failed listening on port " + std::to_string(config_.port) + ": no usable bind address";
      return false;
    }
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
  for (auto& l : listeners_) loop_.Add(l->fd, EPOLLIN, l.get());

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd >= 0) {
    signals_ = std::make_unique<SignalWatcher>(this, sfd);
    loop_.Add(sfd, EPOLLIN, signals_.get());
  }
  signal(SIGPIPE, SIG_IGN);

  start_time_ms_ = UnixTimeMs();
  used_memory_startup_ = UsedMemory();
  ops_sample_time_ms_ = MonotonicMs();
  loop_.SetTick(1000 / config_.hz, [this] { Cron(); });
  loop_.SetBeforeSleep([this] {
    FlushPendingWrites();
    to_free_.clear();
    if (expire_pressure_) {
      if (MonotonicUs() - last_expire_slice_us_ >= 2000) ActiveExpireSlice();
      if (expire_pressure_) loop_.WakeWithin(2);
    }
  });
  ApplyRuntimeConfig();
  return true;
}

int Server::Run() {
  loop_.Run();
  Cleanup();
  return 0;
}

void Server::Cleanup() {
  LOG_WARNING("User requested shutdown...");
  FlushPendingWrites();
  for (auto& [id, c] : clients_) {
    loop_.Remove(c->fd);
    close(c->fd);
    c->closed = true;
  }
  clients_.clear();
  listeners_.clear();
  if (!config_.unixsocket.empty()) unlink(config_.unixsocket.c_str());
  if (!config_.pidfile.empty()) unlink(config_.pidfile.c_str());
  LOG_WARNING("Peregrine is now ready to exit, bye bye...");
}

void Server::RequestShutdown() { loop_.Stop(); }

uint64_t Server::UsedMemory() {
  const uint64_t used = static_cast<uint64_t>(std::max<int64_t>(KeyspaceBytes(), 0)) + ClientBufferBytes();
  used_memory_peak_ = std::max(used_memory_peak_, used);
  return used;
}

uint64_t Server::ClientBufferBytes() const {
  uint64_t bytes = 0;
  for (const auto& [id, c] : clients_) bytes += c->in.capacity() + c->out.capacity();
  return bytes;
}

void Server::ApplyRuntimeConfig() {
  const std::string& l = config_.loglevel;
  SetLogLevel(l == "debug" ? LogLevel::kDebug
              : l == "verbose" ? LogLevel::kVerbose
              : l == "warning" ? LogLevel::kWarning
              : l == "nothing" ? LogLevel::kNothing
                               : LogLevel::kNotice);
  RequestParser::Limits limits;
  limits.max_bulk_len = config_.proto_max_bulk_len;
  for (auto& [id, c] : clients_) c->parser.set_limits(limits);
  loop_.SetTick(1000 / config_.hz, [this] { Cron(); });
  for (auto& s : shards_) s->ConfigureAccess(config_, MonotonicMs());
  // Room for maxclients connections plus listeners and files.
  rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rlim_t want = static_cast<rlim_t>(config_.maxclients) + 32;
    if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = std::min(want, rl.rlim_max);
      if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        LOG_WARNING("Could not raise the open files limit to %llu", static_cast<unsigned long long>(want));
    }
  }
}

void Server::Accept(int listen_fd, bool is_unix) {
  // Accept a bounded number per event so that a connection storm cannot
  // starve the clients already connected.
  for (int i = 0; i < 1000; i++) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        LOG_WARNING("Accepting client connection: %s", strerror(errno));
      return;
    }
    stats_.total_connections_received++;
    if (clients_.size() >= static_cast<size_t>(config_.maxclients)) {
      static const char kMsg[] = "-ERR max number of clients reached\r\n";
      ssize_t ignored = write(fd, kMsg, sizeof(kMsg) - 1);
      (void)ignored;
      close(fd);
      stats_.rejected_connections++;
      continue;
    }
    if (!is_unix) ConfigureTcpConnection(fd, config_.tcp_keepalive);
    auto c = std::make_unique<Client>(this, next_client_id_++, fd);
    c->is_unix = is_unix;
    if (is_unix) {
      c->addr = c->laddr = config_.unixsocket + ":0";
    } else {
      c->addr = PeerAddress(fd);
      c->laddr = LocalAddress(fd);
    }
    c->ctime_ms = c->last_interaction_ms = UnixTimeMs();
    RequestParser::Limits limits;
    limits.max_bulk_len = config_.proto_max_bulk_len;
    c->parser.set_limits(limits);
    if (!loop_.Add(fd, EPOLLIN, c.get())) {
      close(fd);
      continue;
    }
    LOG_VERBOSE("Accepted %s", c->addr.c_str());
    clients_.emplace(c->id, std::move(c));
  }
}

void Server::OnClientEvent(Client& c, uint32_t events) {
  if (c.closed) return;
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ReadFromClient(c);
  if (!c.closed && (events & EPOLLOUT)) FlushClient(c);
}

void Server::ReadFromClient(Client& c) {
  // Read what the pending command needs (when a big argument is announced),
  // growing at most by doubling so that an announced-but-unsent length costs
  // no memory.
  size_t want = kReadChunk;
  size_t needed = c.parser.bytes_needed();
  if (needed > c.in.size()) want = std::max(want, std::min(needed - c.in.size(), c.in.size()));
  char* p = c.in.Reserve(want);
  ssize_t n = read(c.fd, p, c.in.writable());
  if (n == 0) {
    LOG_VERBOSE("Client closed connection id=%llu addr=%s", static_cast<unsigned long long>(c.id),
                c.addr.c_str());
    FreeClient(c);
    return;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    LOG_VERBOSE("Reading from client: %s", strerror(errno));
    FreeClient(c);
    return;
  }
  c.in.Commit(static_cast<size_t>(n));
  stats_.total_net_input_bytes += static_cast<uint64_t>(n);
  stats_.total_reads_processed++;
  c.last_interaction_ms = loop_.iteration_ms();
  ProcessInput(c);
  if (!c.closed && c.in.size() > config_.client_query_buffer_limit) {
    LOG_WARNING("Closing client that reached max query buffer length: id=%llu addr=%s (qbuf=%zu)",
                static_cast<unsigned long long>(c.id), c.addr.c_str(), c.in.size());
    stats_.client_query_buffer_limit_disconnections++;
    FreeClient(c);
  }
}

void Server::ProcessInput(Client& c) {
  while (!c.closed && !c.close_after_reply && !c.in.empty()) {
    // 1. Parse ahead every complete command (up to kMaxBatch) without running
    //    any: their arguments are views into c.in, which nothing changes until
    //    the batch has run.
    batch_.clear();
    batch_args_.clear();
    size_t offset = 0;
    RequestParser::Result r = RequestParser::Result::kCommand;
    // A pipeline mostly repeats one command: the bytes of the last name
    // looked up are compared first (an exact match gives the same command).
    std::string_view last_name;
    const CommandSpec* last_cmd = nullptr;
    while (batch_.size() < kMaxBatch && offset < c.in.size()) {
      r = c.parser.Parse(c.in.data() + offset, c.in.size() - offset);
      if (r != RequestParser::Result::kCommand) break;
      auto args = c.parser.args();
      if (c.parser.inline_command() && !args.empty()) {
        // Inline arguments live in the parser: run it alone, first in a batch.
        if (!batch_.empty()) break;
        ExecuteCommand(c, args, commands_.Find(args[0]), nullptr, CycleClock::Now());
        if (c.closed) return;
        c.in.Consume(c.parser.consumed());
        offset = 0;
        if (c.close_after_reply) break;
        continue;
      }
      BatchedCommand b{nullptr, static_cast<uint32_t>(batch_args_.size()), static_cast<uint32_t>(args.size()),
                       c.parser.consumed(), {}};
      batch_args_.insert(batch_args_.end(), args.begin(), args.end());
      if (!args.empty()) {
        if (args[0].size() == last_name.size() && last_cmd != nullptr &&
            std::memcmp(args[0].data(), last_name.data(), last_name.size()) == 0) {
          b.cmd = last_cmd;
        } else {
          b.cmd = commands_.Find(args[0]);
          last_name = args[0];
          last_cmd = b.cmd;
        }
        if (b.cmd != nullptr && b.cmd->first_key > 0 && static_cast<size_t>(b.cmd->first_key) < args.size()) {
          b.key = CompactKey::MakeProbe(args[static_cast<size_t>(b.cmd->first_key)]);
          b.shard = static_cast<uint32_t>(ShardIndexOf(b.key.bytes));
        }
      }
      batch_.push_back(b);
      offset += b.consumed;
    }
    if (batch_.empty() && r == RequestParser::Result::kCommand) continue;  // only inline commands ran

    // 2. Prefetch: every home group, then the arena line its tag points to,
    //    then the entry, so that the misses of the batch overlap.
    //    Only worth it when there is more than one command.
    if (batch_.size() > 1) {
      auto db_of = [&](const BatchedCommand& b) -> Db& { return shards_[b.shard]->db(c.db); };
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty()) db_of(b).PrefetchGroup(b.key.hash);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty()) db_of(b).PrefetchArena(b.key.hash);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty()) db_of(b).PrefetchEntry(b.key.hash);
    }

    // 3. Run the batch in order.
    uint64_t now_tsc = CycleClock::Now();
    for (const BatchedCommand& b : batch_) {
      if (c.close_after_reply) break;
      if (b.nargs > 0) {
        std::span<const std::string_view> args(batch_args_.data() + b.first_arg, b.nargs);
        now_tsc = ExecuteCommand(c, args, b.cmd, b.key.bytes.empty() ? nullptr : &b.key, now_tsc);
        if (c.closed) return;
      }
      c.in.Consume(b.consumed);
    }
    if (c.close_after_reply) break;

    if (r == RequestParser::Result::kNeedMore) break;
    if (r == RequestParser::Result::kError) {
      ReplyWriter reply(&c.out, c.resp, this);
      reply.Error(c.parser.error());
      LOG_VERBOSE("Protocol error (%s) from client: id=%llu addr=%s", c.parser.error().c_str(),
                  static_cast<unsigned long long>(c.id), c.addr.c_str());
      c.in.Clear();
      c.close_after_reply = true;
      break;
    }
  }
  if (c.in.empty()) c.in.ShrinkIfIdle(kIdleBufferKeep);
  if (!c.out.empty() || c.close_after_reply) QueueWrite(c);
}

namespace {
std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}
}  // namespace

uint64_t Server::ExecuteCommand(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                                const CompactKey::Probe* hint, uint64_t start) {
  ReplyWriter reply(&c.out, c.resp, this);
  if (cmd == nullptr) {
    std::string list;
    for (size_t i = 1; i < args.size() && list.size() < 128; i++) {
      size_t room = 128 - list.size();
      list += "'";
      list += args[i].substr(0, room);
      list += "' ";
    }
    reply.Error("ERR unknown command '" + std::string(args[0].substr(0, 128)) +
                "', with args beginning with: " + list);
    return start;
  }
  if (!cmd->subcommands.empty() && args.size() >= 2) {
    const CommandSpec* sub = CommandTable::FindSubcommand(*cmd, args[1]);
    if (sub == nullptr) {
      reply.Error("ERR unknown subcommand '" + std::string(args[1].substr(0, 128)) + "'. Try " +
                  Upper(args[0]) + " HELP.");
      return start;
    }
    cmd = sub;
  }
  const int argc = static_cast<int>(args.size());
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    cmd->stats.rejected_calls++;
    reply.Error("ERR wrong number of arguments for '" + cmd->fullname + "' command");
    return start;
  }
  // Over maxmemory, every command first evicts (by policy); commands that
  // may add memory are refused if nothing could be evicted.
  if (config_.maxmemory > 0 && !EnforceMaxmemory() && (cmd->flags & kCmdDenyOom)) {
    cmd->stats.rejected_calls++;
    reply.Error("OOM command not allowed when used memory > 'maxmemory'.");
    return start;
  }
  // The shard owning the first key (all shards are on this thread: a
  // multi-key command reaches the others through CommandContext::DbOf;
  // messages and atomicity across threads arrive with issue #5).
  size_t shard_index = 0;
  if (shards_.size() > 1 && cmd->first_key > 0 && cmd->first_key < argc)
    shard_index = ShardIndexOf(args[static_cast<size_t>(cmd->first_key)]);
  Shard& shard = *shards_[shard_index];
  CommandContext ctx{*this, c, shard, args, reply, loop_.MsAt(start), hint};
  c.last_cmd = cmd;
  current_client_ = &c;
  const uint64_t errors_before = stats_.total_error_replies;
  cmd->handler(ctx);
  current_client_ = nullptr;
  const uint64_t end = CycleClock::Now();
  cmd->stats.ticks += end - start;
  cmd->stats.calls++;
  if (stats_.total_error_replies != errors_before) cmd->stats.failed_calls++;
  stats_.total_commands_processed++;
  return end;
}

bool Server::EnforceMaxmemory() {
  auto over = [this] { return static_cast<uint64_t>(std::max<int64_t>(KeyspaceBytes(), 0)) > config_.maxmemory; };
  if (!over()) return true;
  if (config_.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return false;
  // A bounded number of keys per command keeps one command's latency
  // bounded; the next commands continue while memory stays over.
  bool progress = false;
  for (int i = 0; i < 256 && over(); i++) {
    // Shards take turns (keys spread evenly over them by slot), so that one
    // shard's SIEVE hand does not evict its hot keys while the others keep
    // cold ones.
    bool evicted = false;
    for (size_t n = 0; n < shards_.size() && !evicted; n++) {
      evict_shard_ = (evict_shard_ + 1) % shards_.size();
      evicted = shards_[evict_shard_]->EvictOne(config_.maxmemory_policy, config_.maxmemory_samples);
    }
    if (!evicted) break;
    progress = true;
  }
  return progress || !over();
}

void Server::CloseClient(Client& c) {
  if (&c == current_client_) {
    c.close_after_reply = true;
    QueueWrite(c);
  } else {
    FreeClient(c);
  }
}

void Server::OnErrorReply(std::string_view msg) {
  stats_.total_error_replies++;
  size_t sp = msg.find(' ');
  std::string code(msg.substr(0, std::min<size_t>(sp, 64)));
  // A bounded number of distinct codes, as Redis bounds errorstats.
  if (stats_.error_counts.size() < 128 || stats_.error_counts.count(code))
    stats_.error_counts[code]++;
}

void Server::QueueWrite(Client& c) {
  if (c.in_pending_writes) return;
  c.in_pending_writes = true;
  pending_writes_.push_back(&c);
}

void Server::FlushPendingWrites() {
  // FlushClient may free clients; the vector holds only live ones because a
  // freed client is removed from it in FreeClient.
  std::vector<Client*> batch;
  batch.swap(pending_writes_);
  for (Client* c : batch) {
    if (c == nullptr) continue;
    c->in_pending_writes = false;
    if (!c->closed) FlushClient(*c);
  }
}

void Server::FlushClient(Client& c) {
  while (!c.out.empty()) {
    ssize_t n = write(c.fd, c.out.data(), c.out.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      LOG_VERBOSE("Error writing to client: %s", strerror(errno));
      FreeClient(c);
      return;
    }
    c.out.Consume(static_cast<size_t>(n));
    stats_.total_net_output_bytes += static_cast<uint64_t>(n);
    stats_.total_writes_processed++;
    c.last_interaction_ms = loop_.iteration_ms();
  }
  if (c.out.empty()) {
    c.out.ShrinkIfIdle(kIdleBufferKeep);
    if (c.close_after_reply) {
      FreeClient(c);
      return;
    }
    if (c.writable_armed) {
      loop_.Modify(c.fd, EPOLLIN, &c);
      c.writable_armed = false;
    }
  } else if (!c.writable_armed) {
    loop_.Modify(c.fd, EPOLLIN | EPOLLOUT, &c);
    c.writable_armed = true;
  }
}

void Server::FreeClient(Client& c) {
  if (c.closed) return;
  c.closed = true;
  loop_.Remove(c.fd);
  close(c.fd);
  if (c.in_pending_writes) {
    std::replace(pending_writes_.begin(), pending_writes_.end(), &c, static_cast<Client*>(nullptr));
    c.in_pending_writes = false;
  }
  auto it = clients_.find(c.id);
  if (it != clients_.end()) {
    to_free_.push_back(std::move(it->second));
    clients_.erase(it);
  }
}

// Many keys expiring at once (a million set with the same deadline) must not
// stall other clients: expiry runs in slices of at most 1 ms, one per cron
// tick, and while a slice ends with keys left unvisited, another every 2 ms
// from the loop (at most a third of the time).
void Server::ActiveExpireSlice() {
  constexpr int64_t kSliceUs = 1000;
  const int64_t now_ms = UnixTimeMs();
  bool more = false;
  for (auto& s : shards_) more |= s->ActiveExpire(now_ms, kSliceUs);
  expire_pressure_ = more;
  last_expire_slice_us_ = MonotonicUs();
}

void Server::Cron() {
  const int64_t now = UnixTimeMs();
  CycleClock::Recalibrate();
  ActiveExpireSlice();
  UsedMemory();  // samples the peak
  // Segments left sparse by deletions give their memory back (at most 1 ms
  // per tick).
  for (auto& s : shards_) s->MaintainTables(1000);
  // Access data (OBJECT FREQ / IDLETIME): at most 1% of the time.
  for (auto& s : shards_) s->AccessCron(MonotonicMs(), 10'000 / config_.hz);

  std::vector<Client*> idle;
  for (auto& [id, c] : clients_) {
    const int64_t idle_ms = now - c->last_interaction_ms;
    // A client idle for a while gives back its buffers, so that thousands of
    // idle connections do not hold 16 KB each.
    if (idle_ms > kIdleBufferFreeMs) {
      if (c->in.empty()) c->in.ShrinkIfIdle(0);
      if (c->out.empty()) c->out.ShrinkIfIdle(0);
    }
    if (config_.timeout > 0 && idle_ms > static_cast<int64_t>(config_.timeout) * 1000) idle.push_back(c.get());
  }
  if (!idle.empty()) {
    for (Client* c : idle) {
      LOG_VERBOSE("Closing idle client id=%llu", static_cast<unsigned long long>(c->id));
      FreeClient(*c);
    }
  }

  const int64_t mono = MonotonicMs();
  if (mono - ops_sample_time_ms_ >= 100) {
    uint64_t ops = stats_.total_commands_processed - ops_sample_count_;
    ops_samples_[ops_sample_idx_] = ops * 1000 / static_cast<uint64_t>(mono - ops_sample_time_ms_);
    ops_sample_idx_ = (ops_sample_idx_ + 1) % kOpsSamples;
    ops_sample_count_ = stats_.total_commands_processed;
    ops_sample_time_ms_ = mono;
  }
}

uint64_t Server::instantaneous_ops_per_sec() const {
  uint64_t sum = 0;
  for (uint64_t s : ops_samples_) sum += s;
  return sum / kOpsSamples;
}

void Server::ResetStats() {
  stats_ = ServerStats{};
  for (auto& cmd : commands_.all()) {
    cmd->stats = CommandStats{};
    for (auto& sub : cmd->subcommands) sub.stats = CommandStats{};
  }
  for (auto& s : shards_) s->ResetStats();
  used_memory_peak_ = 0;
}

std::string Server::ClientInfoLine(const Client& c, int64_t now_ms) const {
  std::string cmd = c.last_cmd ? c.last_cmd->fullname : "NULL";
  char buf[1024];
  snprintf(buf, sizeof(buf),
           "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=N db=%d sub=0 psub=0 "
           "ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu rbp=0 obl=0 oll=0 "
           "omem=%zu tot-mem=%zu events=r%s cmd=%s user=default redir=-1 resp=%d lib-name=%s "
           "lib-ver=%s\n",
           static_cast<unsigned long long>(c.id), c.addr.c_str(), c.laddr.c_str(), c.fd, c.name.c_str(),
           static_cast<long long>((now_ms - c.ctime_ms) / 1000),
           static_cast<long long>((now_ms - c.last_interaction_ms) / 1000), c.db, c.in.size(),
           c.in.capacity() - c.in.size(), c.in.capacity(), c.out.capacity(),
           c.in.capacity() + c.out.capacity() + sizeof(Client), c.writable_armed ? "w" : "",
           cmd.c_str(), c.resp, c.lib_name.c_str(), c.lib_ver.c_str());
  return buf;
}

}  // namespace peregrine
