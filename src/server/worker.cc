// A worker's connections, dispatcher, mailbox and cron (see worker.h and
// docs/transactions.md).
#include "server/worker.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/lent_blocks.h"
#include "core/memory.h"
#include "net/socket.h"
#include "server/log.h"
#include "server/server.h"

namespace peregrine {

void ServerStats::Add(const ServerStats& o) {
  total_connections_received += o.total_connections_received;
  total_commands_processed += o.total_commands_processed;
  total_net_input_bytes += o.total_net_input_bytes;
  total_net_output_bytes += o.total_net_output_bytes;
  rejected_connections += o.rejected_connections;
  total_error_replies += o.total_error_replies;
  total_reads_processed += o.total_reads_processed;
  total_writes_processed += o.total_writes_processed;
  client_query_buffer_limit_disconnections += o.client_query_buffer_limit_disconnections;
  client_output_buffer_limit_disconnections += o.client_output_buffer_limit_disconnections;
  for (const auto& [code, n] : o.error_counts) error_counts[code] += n;
}

// The Waker's eventfd in the loop: readable when another worker woke this
// one; emptied here so that the level-triggered epoll does not report it
// again.
struct Worker::WakeWatcher final : IoHandler {
  explicit WakeWatcher(Worker* w) : worker(w) {}
  void OnEvent(uint32_t) override { worker->waker().ConsumeSignal(); }
  Worker* worker;
};

void Client::OnEvent(uint32_t events) { worker->OnClientEvent(*this, events); }

namespace {

constexpr size_t kReadChunk = 16 * 1024;
// The worker's scratch read buffer, and the largest partial command of a
// client carried into it (a larger one grows in the client's own buffer, so
// that a command arriving over many reads is not copied over and over).
constexpr size_t kScratchSize = 128 * 1024;
constexpr size_t kScratchCarry = 32 * 1024;
// The most bytes a large argument's socket waits for before waking the
// worker (SO_RCVLOWAT, Worker::SetLowWater).
constexpr size_t kMaxLowWater = 4 * 1024 * 1024;
// iovecs per writev (a pipeline of large values: two per value).
constexpr int kMaxIov = 512;
// Buffers larger than this are freed as soon as they drain, so that one huge
// request or reply does not pin memory for the life of the connection.
// Smaller ones are kept while the client is active (re-growing a reply
// buffer for every pipeline batch of large values costs reallocs and, past
// glibc's mmap threshold, mmap/munmap calls) and freed by the cron once the
// client has been idle for a while.
constexpr size_t kIdleBufferKeep = 1024 * 1024;
constexpr int64_t kIdleBufferFreeMs = 2000;
// Batches kept for reuse per worker (their buffers keep their capacity).
constexpr size_t kFreeBatches = 64;

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

bool ArityOk(const CommandSpec& cmd, size_t argc) {
  const int n = static_cast<int>(argc);
  return !((cmd.arity > 0 && cmd.arity != n) || n < -cmd.arity);
}

}  // namespace

Worker::Worker(Server& server, uint32_t index)
    : server_(server),
      index_(index),
      nworkers_(static_cast<uint32_t>(server.config().threads)),
      shard_(static_cast<int>(index), server.config().databases),
      proxy_(this, 0, -1),
      outbox_(nworkers_),
      command_stats_(server.commands().num_ids()) {}

Worker::~Worker() {
  for (auto& [id, c] : clients_) {
    if (c->open_batch != nullptr) delete c->open_batch;
    close(c->fd);
  }
  for (Mail* m : deferred_) delete m;
  for (ExecBatch* b : free_batches_) delete b;
  for (auto& box : outbox_)
    for (uint64_t w : box)
      if ((w & 1) == 0) delete reinterpret_cast<Mail*>(w);
}

bool Worker::Init() {
  if (!loop_.ok()) return false;
  applied_hz_ = server_.config().hz;
  loop_.SetTick(1000 / applied_hz_, [this] { Cron(); });
  loop_.SetBeforeSleep([this] {
    FlushPendingWrites();
    to_free_.clear();
    if (expire_pressure_) {
      if (MonotonicUs() - last_expire_slice_us_ >= 2000) ActiveExpireSlice();
      if (expire_pressure_) loop_.WakeWithin(2);
    }
  });
  if (nworkers_ > 1) {
    wake_watcher_ = std::make_unique<WakeWatcher>(this);
    loop_.Add(waker_.fd(), EPOLLIN, wake_watcher_.get());
    loop_.SetWaitHooks([this] { return BeforeWait(); }, [this] { waker_.Awake(); });
  }
  shard_.ConfigureAccess(server_.config(), MonotonicMs());
  scratch_.Reserve(kScratchSize);
  SetOutputLimitThreshold();
  config_epoch_ = server_.config_epoch();
  ops_sample_time_ms_ = MonotonicMs();
  return true;
}

void Worker::Run() {
  ApplyConfigIfChanged();
  loop_.Run();
  CloseAllClients();
  if (nworkers_ == 1) return;
  // Every other worker may still be running a command that needs this
  // shard, or wait for a reply from it: keep answering until all have
  // stopped (then nobody holds or asks for a shard any more).
  // The last to stop wakes the others, which may be asleep waiting for it.
  if (server_.stopped_workers().fetch_add(1, std::memory_order_acq_rel) + 1 == nworkers_)
    for (uint32_t i = 0; i < nworkers_; i++)
      if (i != index_) server_.worker(i).waker().Notify();
  for (;;) {
    FlushOutboxes();
    lend_paused_ = false;  // no clients left to serve between lends
    const uint64_t seen = waker_.Prepare();
    const bool any = Drain();
    if (lent_to_ >= 0) {
      WaitUntil([this] { return lent_to_ < 0; });
      continue;
    }
    if (server_.stopped_workers().load(std::memory_order_acquire) == nworkers_ && outbox_targets_.empty()) break;
    if (!any && waker_.TrySleep(seen)) {
      pollfd p{waker_.fd(), POLLIN, 0};
      poll(&p, 1, 10);
      waker_.Woke();
    }
  }
}

void Worker::CloseAllClients() {
  FlushPendingWrites();
  for (auto& [id, c] : clients_) {
    loop_.Remove(c->fd);
    close(c->fd);
    c->closed = true;
    pubsub_.RemoveClient(*c);
    if (c->open_batch != nullptr) RecycleBatch(c->open_batch);
    c->open_batch = nullptr;
  }
  connections_.fetch_sub(static_cast<int64_t>(clients_.size()), std::memory_order_relaxed);
  clients_.clear();
  pending_writes_.clear();
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
  SetOutputLimitThreshold();
  // Restarting the timer on every CONFIG SET would starve the cron of a
  // server configured often: only when hz changed.
  if (config.hz != applied_hz_) {
    applied_hz_ = config.hz;
    loop_.SetTick(1000 / config.hz, [this] { Cron(); });
  }
  shard_.ConfigureAccess(config, MonotonicMs());
}

uint64_t Worker::ClientBufferBytes() const {
  uint64_t bytes = 0;
  for (const auto& [id, c] : clients_) bytes += c->in.capacity() + c->out.capacity();
  return bytes;
}

void Worker::Adopt(int fd, bool is_unix, uint64_t id) {
  const Config& config = server_.config();
  if (!is_unix) ConfigureTcpConnection(fd, config.tcp_keepalive);
  auto c = std::make_unique<Client>(this, id, fd);
  c->is_unix = is_unix;
  if (is_unix) {
    c->addr = c->laddr = config.unixsocket + ":0";
  } else {
    c->addr = PeerAddress(fd);
    c->laddr = LocalAddress(fd);
  }
  c->ctime_ms = c->last_interaction_ms = UnixTimeMs();
  RequestParser::Limits limits;
  limits.max_bulk_len = config.proto_max_bulk_len;
  c->parser.set_limits(limits);
  if (!loop_.Add(fd, EPOLLIN, c.get())) {
    close(fd);
    connections_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  LOG_VERBOSE("Accepted %s", c->addr.c_str());
  clients_.emplace(c->id, std::move(c));
}

void Worker::OnClientEvent(Client& c, uint32_t events) {
  if (c.closed) return;
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ReadFromClient(c);
  if (!c.closed && (events & EPOLLOUT)) FlushClient(c);
}

void Worker::ReadFromClient(Client& c) {
  // Where the bytes go: the rest of a large argument straight into its block
  // (and what follows it into c.in); otherwise the worker's scratch buffer,
  // after the client's pending partial command if that is small (one
  // system call takes a whole pipeline, and the bytes are parsed where they
  // land, in a buffer that stays in cache; only an incomplete command is
  // kept by the client); a large partial command grows in c.in.
  Buffer* in = &c.in;
  ssize_t n;
  if (c.filling_big_arg()) {
    Client::BigArg& a = c.big_args.back();
    iovec iov[2] = {{a.block + a.have, a.len - a.have}, {c.in.Reserve(kReadChunk), c.in.writable()}};
    n = readv(c.fd, iov, 2);
    if (n > 0) {
      const size_t to_block = std::min(static_cast<size_t>(n), a.len - a.have);
      a.have += to_block;
      c.in.Commit(static_cast<size_t>(n) - to_block);
      SetLowWater(c, a.have < a.len ? a.len - a.have + 2 : 1);
    }
  } else {
    if (!scratch_busy_ && c.in.size() <= kScratchCarry) {
      in = &scratch_;
      scratch_.Clear();
      scratch_.Append(c.in.view());  // c.in stays as it is until the read succeeds
    } else {
      // Read what the pending command needs (when a big argument is
      // announced), growing at most by doubling so that an announced-but-
      // unsent length costs no memory.
      const size_t needed = c.parser.bytes_needed();
      if (needed > c.in.size()) c.in.Reserve(std::min(needed - c.in.size(), c.in.size()));
    }
    char* p = in->Reserve(kReadChunk);
    n = read(c.fd, p, in->writable());
    if (n > 0) in->Commit(static_cast<size_t>(n));
  }
  if (n == 0) {
    LOG_VERBOSE("Client closed connection id=%llu addr=%s", static_cast<unsigned long long>(c.id),
                c.addr.c_str());
    if (c.batch_in_flight || c.open_batch != nullptr) {
      // Half-closed with commands still running elsewhere: answer them (and
      // the input they held back) before closing, as a single thread would.
      c.read_closed = true;
      loop_.Modify(c.fd, ClientEvents(c), &c);
      return;
    }
    FreeClient(c);
    return;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    LOG_VERBOSE("Reading from client: %s", strerror(errno));
    FreeClient(c);
    return;
  }
  stats_.total_net_input_bytes += static_cast<uint64_t>(n);
  stats_.total_reads_processed++;
  c.last_interaction_ms = loop_.iteration_ms();
  if (!c.filling_big_arg()) {
    if (in == &scratch_) {
      c.in.Clear();
      scratch_busy_ = true;
      ProcessInput(c, scratch_);
      scratch_busy_ = false;
      if (!c.closed) {
        StartBigArg(c, scratch_);
        c.in.Append(scratch_.view());  // an incomplete command waits for the rest
      }
      scratch_.Clear();
    } else {
      ProcessInput(c, c.in);
      if (!c.closed) StartBigArg(c, c.in);
    }
    if (c.closed) return;
    if (c.in.empty()) c.in.ShrinkIfIdle(kIdleBufferKeep);
  }
  const size_t pending = c.in.size() + c.big_arg_bytes();
  if (pending > server_.config().client_query_buffer_limit) {
    LOG_WARNING("Closing client that reached max query buffer length: id=%llu addr=%s (qbuf=%zu)",
                static_cast<unsigned long long>(c.id), c.addr.c_str(), pending);
    stats_.client_query_buffer_limit_disconnections++;
    FreeClient(c);
  }
}

void Worker::StartBigArg(Client& c, Buffer& in) {
  size_t offset, len;
  if (c.close_after_reply || c.batch_in_flight || !c.parser.PendingBulk(&offset, &len) || len < big_arg_min_)
    return;
  const size_t have = in.size() - offset;  // of its bytes (the bulk is incomplete: have < len + 2)
  if (have >= len) return;                   // only its "\r\n" is missing
  // The whole length at once, as Redis does for a big argument: pages are
  // only touched as the bytes arrive. If even that fails, the bytes go
  // through c.in as before.
  char* block = static_cast<char*>(std::malloc(len));
  if (block == nullptr) return;
  if (have > 0) std::memcpy(block, in.data() + offset, have);
  in.Truncate(offset);
  c.parser.ExternalBulk(block);
  c.big_args.push_back({block, len, have, offset});
  SetLowWater(c, len - have + 2);
}

void Worker::SetLowWater(Client& c, size_t bytes) {
  // TCP only (a Unix socket's poll ignores it). The kernel caps it at half
  // of tcp_rmem's maximum and grows the receive buffer to hold it.
  if (c.is_unix) return;
  const int want = static_cast<int>(std::min<size_t>(std::max<size_t>(bytes, 1), kMaxLowWater));
  if (want == c.rcvlowat) return;
  if (setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) == 0) c.rcvlowat = want;
}

void Worker::SpliceBigArgs(Client& c, Buffer& in) {
  // The command with large arguments is at the front of `in`: put their
  // bytes back where they were taken out.
  Buffer whole;
  size_t pos = 0;
  for (const Client::BigArg& a : c.big_args) {
    whole.Append(in.data() + pos, a.offset - pos);
    whole.Append(a.block, a.len);
    pos = a.offset;
  }
  whole.Append(in.data() + pos, in.size() - pos);
  in.Swap(whole);
  c.DropBigArgs();
}

void Worker::ProcessInput(Client& c, Buffer& in) {
  busy_client_ = &c;
  bool paused = false;
  while (!paused && !c.closed && !c.close_after_reply && !in.empty()) {
    // 1. Parse ahead every complete command (up to kMaxBatch) without running
    //    any: their arguments are views into `in` (or blocks of their own,
    //    StartBigArg), which nothing changes until the batch has run.
    batch_.clear();
    batch_args_.clear();
    size_t offset = 0;
    RequestParser::Result r = RequestParser::Result::kCommand;
    // A pipeline mostly repeats one command: the bytes of the last name
    // looked up are compared first (an exact match gives the same command).
    std::string_view last_name;
    const CommandSpec* last_cmd = nullptr;
    while (batch_.size() < kMaxBatch && offset < in.size()) {
      r = c.parser.Parse(in.data() + offset, in.size() - offset);
      if (r != RequestParser::Result::kCommand) break;
      auto args = c.parser.args();
      if (c.parser.inline_command() && !args.empty()) {
        // Inline arguments live in the parser: run it alone, first in a batch.
        if (!batch_.empty()) break;
        const CommandSpec* cmd = server_.commands().Find(args[0]);
        uint32_t shard = index_;
        if (nworkers_ > 1 && cmd != nullptr && cmd->first_key > 0 && static_cast<size_t>(cmd->first_key) < args.size())
          shard = static_cast<uint32_t>(server_.ShardIndexOf(args[static_cast<size_t>(cmd->first_key)]));
        uint64_t t = CycleClock::Now();
        if (nworkers_ == 1) {
          ExecuteCommand(c, args, cmd, nullptr, t);
        } else if (Dispatch(c, args, cmd, nullptr, shard, &t) == Route::kPause) {
          paused = true;
          break;
        }
        if (c.closed) {
          busy_client_ = nullptr;
          return;
        }
        in.Consume(c.parser.consumed());
        offset = 0;
        if (c.close_after_reply) break;
        continue;
      }
      BatchedCommand b{nullptr, static_cast<uint32_t>(batch_args_.size()), static_cast<uint32_t>(args.size()),
                       c.parser.consumed(), {}, index_};
      batch_args_.insert(batch_args_.end(), args.begin(), args.end());
      if (!args.empty()) {
        if (args[0].size() == last_name.size() && last_cmd != nullptr &&
            std::memcmp(args[0].data(), last_name.data(), last_name.size()) == 0) {
          b.cmd = last_cmd;
        } else {
          b.cmd = server_.commands().Find(args[0]);
          last_name = args[0];
          last_cmd = b.cmd;
        }
        if (b.cmd != nullptr && b.cmd->first_key > 0 && static_cast<size_t>(b.cmd->first_key) < args.size()) {
          b.key = CompactKey::MakeProbe(args[static_cast<size_t>(b.cmd->first_key)]);
          if (nworkers_ > 1) b.shard = static_cast<uint32_t>(server_.ShardIndexOf(b.key.bytes));
        }
      }
      batch_.push_back(b);
      offset += b.consumed;
    }
    if (paused) {
      c.parser.Reset();  // the paused command is parsed again when the client resumes
      if (!c.big_args.empty()) SpliceBigArgs(c, in);
      break;
    }
    if (batch_.empty() && r == RequestParser::Result::kCommand) continue;  // only inline commands ran

    // 2. Prefetch: every home group, then the arena line its tag points to,
    //    then the entry, so that the misses of the batch overlap. Only worth
    //    it when there is more than one command, and only for this worker's
    //    own shard (another worker's table may be changing under it).
    if (batch_.size() > 1) {
      Db& db = shard_.db(c.db);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty() && b.shard == index_) db.PrefetchGroup(b.key.hash);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty() && b.shard == index_) db.PrefetchArena(b.key.hash);
      for (const BatchedCommand& b : batch_)
        if (!b.key.bytes.empty() && b.shard == index_) db.PrefetchEntry(b.key.hash);
    }

    // 3. Run the batch in order.
    uint64_t now_tsc = CycleClock::Now();
    size_t ran = 0;
    for (const BatchedCommand& b : batch_) {
      if (c.close_after_reply) break;
      if (b.nargs > 0) {
        std::span<const std::string_view> args(batch_args_.data() + b.first_arg, b.nargs);
        const CompactKey::Probe* hint = b.key.bytes.empty() ? nullptr : &b.key;
        if (nworkers_ == 1) {
          now_tsc = ExecuteCommand(c, args, b.cmd, hint, now_tsc);
        } else if (Dispatch(c, args, b.cmd, hint, b.shard, &now_tsc) == Route::kPause) {
          paused = true;
          break;
        }
        if (c.closed) {
          busy_client_ = nullptr;
          return;
        }
      }
      in.Consume(b.consumed);
      ran++;
    }
    // The first command of a call may have had large arguments read into
    // blocks of their own (StartBigArg). Once it has run, the blocks no
    // handler took go; paused before it ran, it is parsed again on resuming,
    // with their bytes back in place. (Not yet complete, it keeps them.)
    if (!c.big_args.empty()) [[unlikely]] {
      if (ran > 0)
        c.DropBigArgs();
      else if (paused)
        SpliceBigArgs(c, in);
    }
    if (paused) {
      c.parser.Reset();
      break;
    }
    if (c.close_after_reply) break;

    if (r == RequestParser::Result::kNeedMore) break;
    if (r == RequestParser::Result::kError) {
      if (c.open_batch != nullptr || c.batch_in_flight) {
        // The error reply must follow the replies still to come.
        c.parser.Reset();
        break;
      }
      ReplyWriter reply(&c.out, c.resp, this);
      reply.Error(c.parser.error());
      LOG_VERBOSE("Protocol error (%s) from client: id=%llu addr=%s", c.parser.error().c_str(),
                  static_cast<unsigned long long>(c.id), c.addr.c_str());
      in.Clear();
      c.close_after_reply = true;
      break;
    }
  }
  busy_client_ = nullptr;
  SendOpenBatch(c);
  // Half-closed and nothing of it running elsewhere: the rest of its input
  // can never complete a command.
  if (c.read_closed && !c.batch_in_flight) c.close_after_reply = true;
  if (!c.out.empty() || (c.close_after_reply && !c.batch_in_flight)) QueueWrite(c);
}

const CommandSpec* Worker::Resolve(std::span<const std::string_view> args, const CommandSpec* cmd,
                                   std::string* error) const {
  // Redis prints arguments with C's %s: each ends at its first NUL byte.
  if (cmd == nullptr) {
    std::string list;
    for (size_t i = 1; i < args.size() && list.size() < 128; i++) {
      size_t room = 128 - list.size();
      list += "'";
      list += UpToNul(args[i]).substr(0, room);
      list += "' ";
    }
    *error = "ERR unknown command '" + std::string(UpToNul(args[0]).substr(0, 128)) +
             "', with args beginning with: " + list;
    return nullptr;
  }
  if (!cmd->subcommands.empty() && args.size() >= 2) {
    const CommandSpec* sub = CommandTable::FindSubcommand(*cmd, args[1]);
    if (sub == nullptr) {
      *error = "ERR unknown subcommand '" + std::string(UpToNul(args[1]).substr(0, 128)) + "'. Try " +
               Upper(args[0]) + " HELP.";
      return nullptr;
    }
    return sub;
  }
  return cmd;
}

Worker::Route Worker::Dispatch(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                               const CompactKey::Probe* hint, uint32_t first_key_shard, uint64_t* now_tsc) {
  const bool waiting = c.open_batch != nullptr || c.batch_in_flight;
  const CommandSpec* spec = cmd;
  if (cmd == nullptr || !cmd->subcommands.empty()) {
    std::string error;
    spec = Resolve(args, cmd, &error);
  }
  // Where it runs: errors and keyless commands here; a command whose keys
  // all live on one shard on that shard's worker; otherwise here, holding
  // every shard it touches.
  uint32_t target = index_;
  bool span = false, remote_publish = false;
  // A command refused to a subscribed client is answered here (the ones it
  // may run have no keys), in order.
  if (spec != nullptr && !RefusedWhileSubscribed(c, *spec) && ArityOk(*spec, args.size())) {
    if (spec->first_key > 0) {
      if (spec != cmd || hint == nullptr)
        first_key_shard = static_cast<uint32_t>(server_.ShardIndexOf(args[static_cast<size_t>(spec->first_key)]));
      target = first_key_shard;
      if (spec->last_key != spec->first_key && spec->KeyPositions(args, &key_positions_)) {
        shard_set_.clear();
        for (size_t pos : key_positions_) shard_set_.push_back(static_cast<uint32_t>(server_.ShardIndexOf(args[pos])));
        span = std::any_of(shard_set_.begin(), shard_set_.end(), [&](uint32_t s) { return s != target; });
      }
    } else if (spec->flags & kCmdAllShards) {
      span = true;
      shard_set_.clear();
      for (uint32_t s = 0; s < nworkers_; s++) shard_set_.push_back(s);
    } else if (spec->flags & kCmdPublishes) {
      // PUBLISH: the other workers with subscribers (a subscription made
      // after this read is one made after the message was published). None:
      // here. One: delivered here now, there in a batch like any remote
      // command, whose reply adds both counts. Several: run here holding
      // them all (docs/pubsub.md).
      shard_set_.clear();
      for (uint32_t s = 0; s < nworkers_; s++)
        if (s != index_ && server_.worker(s).pubsub().subscriptions() > 0) shard_set_.push_back(s);
      if (shard_set_.size() == 1) {
        remote_publish = true;
        target = shard_set_[0];
      } else {
        span = !shard_set_.empty();
      }
    }
  }
  if (span) {
    if (waiting) return Route::kPause;
    shard_set_.push_back(index_);
    std::sort(shard_set_.begin(), shard_set_.end());
    shard_set_.erase(std::unique(shard_set_.begin(), shard_set_.end()), shard_set_.end());
    AcquireShards(shard_set_);
    holding_ = true;
    *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc);
    holding_ = false;
    GiveBack(shard_set_);
    return Route::kDone;
  }
  if (target == index_) {
    if (waiting) return Route::kPause;
    *now_tsc = ExecuteCommand(c, args, cmd, hint, *now_tsc, &shard_);
    return Route::kDone;
  }
  // Another worker's shard: join the batch open for it, or open one.
  if (c.open_batch != nullptr ? c.open_batch->target != target : c.batch_in_flight) return Route::kPause;
  if (remote_publish && c.open_batch != nullptr && !c.open_batch->only_publishes) {
    // Its local delivery must not come before the client's earlier
    // commands in that batch have run: a subscriber told of a change must
    // be able to read it. (What this worker's subscribers then ask of that
    // worker travels the same FIFO ring behind the batch, so mostly the
    // order holds anyway; not for one who tells a client elsewhere.)
    return Route::kPause;
  }
  size_t published_here = 0;
  if (remote_publish) {
    // This worker's subscribers now, before the batch is touched: a delivery
    // may close `c` itself (a subscriber over its output limit), which
    // recycles its open batch. The message still goes to the other worker's
    // subscribers (Redis closes such a client after the command), in a batch
    // of its own whose reply nobody waits for.
    published_here = Publish(args[1], args[2], true);
  }
  const bool detached = c.closed;
  ExecBatch* b = detached ? nullptr : c.open_batch;
  if (b == nullptr) {
    b = NewBatch();
    b->from = index_;
    b->target = target;
    b->client_id = c.id;
    b->db = c.db;
    b->resp = c.resp;
    if (!detached) c.open_batch = b;
  }
  uint32_t argc = static_cast<uint32_t>(args.size());
  for (std::string_view a : args) {
    b->bytes.append(a);
    b->arg_sizes.push_back(static_cast<uint32_t>(a.size()));
  }
  if (remote_publish) {
    // The count here travels as a fourth argument, which PUBLISH's handler
    // adds to the target's (a client cannot send one: the arity was checked
    // above).
    const std::string local = std::to_string(published_here);
    b->bytes.append(local);
    b->arg_sizes.push_back(static_cast<uint32_t>(local.size()));
    argc++;
  } else {
    b->only_publishes = false;
  }
  b->commands.push_back({spec, argc});
  if (detached) {
    Send(target, reinterpret_cast<uint64_t>(static_cast<Mail*>(b)));
    return Route::kDone;
  }
  c.last_cmd = spec;
  return Route::kDone;
}

inline uint64_t Worker::Run(Client& c, const CommandSpec* cmd, std::span<const std::string_view> args, ReplyWriter& reply,
                     Shard& shard, const CompactKey::Probe* hint, int64_t now_ms, uint64_t start) {
  CommandStats& st = command_stats_[cmd->id];
  // Over maxmemory, every command first evicts (by policy); commands that
  // may add memory are refused if nothing could be evicted.
  if (server_.config().maxmemory > 0 && !EnforceMaxmemory(shard) && (cmd->flags & kCmdDenyOom)) {
    st.rejected_calls++;
    reply.Error("OOM command not allowed when used memory > 'maxmemory'.");
    return start;
  }
  CommandContext ctx{server_, *this, c, shard, args, reply, now_ms, hint};
  current_client_ = &c;
  const uint64_t errors_before = stats_.total_error_replies;
  cmd->handler(ctx);
  current_client_ = nullptr;
  const uint64_t end = CycleClock::Now();
  st.ticks += end - start;
  st.calls++;
  if (stats_.total_error_replies != errors_before) st.failed_calls++;
  stats_.total_commands_processed++;
  return end;
}

uint64_t Worker::ExecuteCommand(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd,
                                const CompactKey::Probe* hint, uint64_t start, Shard* shard) {
  ReplyWriter reply(&c.out, c.resp, this);
  // Unknown commands and containers (CONFIG GET ...) off the hot path.
  if (__builtin_expect(cmd == nullptr || !cmd->subcommands.empty(), 0)) {
    std::string error;
    cmd = Resolve(args, cmd, &error);
    if (cmd == nullptr) {
      c.last_cmd = nullptr;  // CLIENT LIST: cmd=NULL, as Redis
      reply.Error(error);
      return start;
    }
  }
  // Set before the checks: Redis's CLIENT LIST names a command refused for
  // its arity, in a subscribed context or over maxmemory too.
  c.last_cmd = cmd;
  const int argc = static_cast<int>(args.size());
  if (!ArityOk(*cmd, args.size())) {
    command_stats_[cmd->id].rejected_calls++;
    reply.Error("ERR wrong number of arguments for '" + cmd->fullname + "' command");
    return start;
  }
  if ((cmd->flags & kCmdProtected) && !ProtectedAllowed(c)) [[unlikely]] {
    command_stats_[cmd->id].rejected_calls++;
    reply.Error(
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it "
        "from a local connection, otherwise you need to set this option in the configuration file, and then "
        "restart the server.");
    return start;
  }
  if (RefusedWhileSubscribed(c, *cmd)) {
    command_stats_[cmd->id].rejected_calls++;
    reply.Error("ERR Can't execute '" + cmd->fullname +
                "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
    return start;
  }
  // The shard owning the first key (this worker's, or one the command holds).
  if (shard == nullptr) {
    shard = &shard_;
    if (nworkers_ > 1 && cmd->first_key > 0 && cmd->first_key < argc)
      shard = &server_.shard(server_.ShardIndexOf(args[static_cast<size_t>(cmd->first_key)]));
  }
  const uint64_t end = Run(c, cmd, args, reply, *shard, hint, loop_.MsAt(start), start);
  if (__builtin_expect(cmd->flags & kCmdAllShards, 0)) ApplyConfigIfChanged();  // CONFIG SET: this worker's part at once
  OverOutputLimit(c);  // may close c (the caller checks c.closed)
  return end;
}

// enable-debug-command: yes, no, or local (a Unix socket, or a peer at
// 127.0.0.1 or ::1, as Redis's islocalClient; the address is "ip:port").
bool Worker::ProtectedAllowed(const Client& c) const {
  switch (server_.config().enable_debug_command) {
    case Config::ProtectedAction::kYes: return true;
    case Config::ProtectedAction::kNo: return false;
    case Config::ProtectedAction::kLocal: break;
  }
  if (c.is_unix) return true;
  std::string_view addr = c.addr;
  const size_t colon = addr.rfind(':');
  const std::string_view ip = colon == std::string_view::npos ? addr : addr.substr(0, colon);
  return ip == "127.0.0.1" || ip == "::1";
}

bool Worker::EnforceMaxmemory(Shard& shard) {
  const Config& config = server_.config();
  auto over = [&] { return static_cast<uint64_t>(std::max<int64_t>(TotalKeyspaceBytes(), 0)) > config.maxmemory; };
  if (!over()) return true;
  if (config.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return false;
  // One limit for the whole process: a command evicts from the shard it
  // runs on (its own worker's, or one it holds; keys spread evenly over
  // shards by slot), and each worker's cron from its own, while the total is
  // over. A bounded number of keys per command keeps one command's latency
  // bounded.
  bool progress = false;
  for (int i = 0; i < 256 && over(); i++) {
    if (!shard.EvictOne(config.maxmemory_policy, config.maxmemory_samples)) break;
    progress = true;
  }
  if (progress || !over()) return true;
  // Nothing left in that shard that the policy may take (hash-tagged keys
  // can fill one shard): this worker's own shard if it is another one, then
  // the shards of other workers that have some (they evict at once), and the
  // write goes on as it would in Redis. Refused only when no shard can evict.
  if (&shard != &shard_) {
    for (int i = 0; i < 256 && over(); i++) {
      if (!shard_.EvictOne(config.maxmemory_policy, config.maxmemory_samples)) break;
      progress = true;
    }
    if (progress || !over()) return true;
  }
  PublishEvictable();
  bool elsewhere = false;
  for (uint32_t w = 0; w < nworkers_; w++) {
    if (w == index_ || static_cast<int>(w) == shard.index() || !server_.worker(w).evictable()) continue;
    Send(w, ControlWord(index_, Control::kEvict));
    elsewhere = true;
  }
  if (elsewhere) FlushOutboxes();
  return elsewhere;
}

void Worker::EvictFor(int64_t budget_us) {
  const Config& config = server_.config();
  if (config.maxmemory == 0 || config.maxmemory_policy == MaxmemoryPolicy::kNoEviction) return;
  const int64_t deadline = MonotonicUs() + budget_us;
  while (static_cast<uint64_t>(std::max<int64_t>(TotalKeyspaceBytes(), 0)) > config.maxmemory) {
    bool evicted = false;
    for (int i = 0; i < 64; i++) evicted |= shard_.EvictOne(config.maxmemory_policy, config.maxmemory_samples);
    if (!evicted || MonotonicUs() >= deadline) break;
  }
  PublishEvictable();
}

void Worker::PublishEvictable() {
  const bool volatile_only = IsVolatilePolicy(server_.config().maxmemory_policy);
  bool any = false;
  for (int d = 0; d < shard_.num_dbs() && !any; d++)
    any = volatile_only ? shard_.db(d).expires_count() > 0 : shard_.db(d).size() > 0;
  evictable_.store(any, std::memory_order_relaxed);
}

// --- Mailbox ---

void Worker::Send(uint32_t to, uint64_t word) {
  std::vector<uint64_t>& box = outbox_[to];
  if (box.empty()) outbox_targets_.push_back(to);
  box.push_back(word);
}

void Worker::FlushOutboxes() {
  size_t keep = 0;
  for (uint32_t to : outbox_targets_) {
    std::vector<uint64_t>& box = outbox_[to];
    Server::Ring& ring = server_.ring(index_, to);
    size_t pushed = 0;
    while (pushed < box.size() && ring.TryPush(box[pushed])) pushed++;
    if (pushed > 0) {
      server_.worker(to).waker().Notify();
      box.erase(box.begin(), box.begin() + static_cast<ptrdiff_t>(pushed));
    }
    // A full ring is never waited on (its reader may be waiting for this
    // worker): what did not fit goes on the next flush.
    if (!box.empty()) outbox_targets_[keep++] = to;
  }
  outbox_targets_.resize(keep);
}

bool Worker::Drain() {
  bool any = false;
  uint64_t words[64];
  for (uint32_t from = 0; from < nworkers_; from++) {
    if (from == index_) continue;
    Server::Ring& ring = server_.ring(from, index_);
    // A bounded number per call: a busy sender cannot keep this worker here.
    for (int round = 0; round < 4; round++) {
      const size_t n = ring.PopBatch(words, 64);
      if (n == 0) break;
      any = true;
      for (size_t i = 0; i < n; i++) Handle(from, words[i]);
    }
  }
  // Workers may have asked for the shard while this one held it for a
  // command of its own (Drain runs only where lending is safe).
  TryLend();
  return any;
}

void Worker::Handle(uint32_t from, uint64_t word) {
  if (word & 1) {
    switch (static_cast<Control>((word >> 1) & 0x7f)) {
      case Control::kLend:
        lend_queue_.push_back(from);
        TryLend();
        break;
      case Control::kGrant:
        granted_by_ = static_cast<int32_t>(from);
        break;
      case Control::kEvict:
        evict_requested_ = true;
        break;
      case Control::kReturn:
        lent_to_ = -1;
        lend_paused_ = true;
        // What arrived meanwhile, in order; then the clients killed and the
        // next worker waiting for the shard.
        while (lent_to_ < 0 && !deferred_.empty()) {
          Mail* m = deferred_.front();
          deferred_.pop_front();
          HandleMail(m);
        }
        if (!kill_requests_.empty()) {
          std::vector<uint64_t> ids;
          ids.swap(kill_requests_);
          for (uint64_t id : ids) {
            auto it = clients_.find(id);
            if (it != clients_.end()) CloseClient(*it->second);
          }
        }
        TryLend();
        break;
    }
    return;
  }
  Mail* m = reinterpret_cast<Mail*>(word);
  // While the shard is lent its holder may read this worker's state: mail
  // waits (in order) until the shard is back.
  if (lent_to_ >= 0 || !deferred_.empty())
    deferred_.push_back(m);
  else
    HandleMail(m);
}

void Worker::HandleMail(Mail* m) {
  switch (m->kind) {
    case Mail::Kind::kExec:
      RunExecBatch(static_cast<ExecBatch*>(m));
      break;
    case Mail::Kind::kExecDone:
      FinishExecBatch(static_cast<ExecBatch*>(m));
      break;
    case Mail::Kind::kAdopt: {
      auto* a = static_cast<AdoptMail*>(m);
      if (server_.stopping()) {
        close(a->fd);
        connections_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        Adopt(a->fd, a->is_unix, a->id);
      }
      delete a;
      break;
    }
  }
}

void Worker::TryLend() {
  if (lent_to_ >= 0 || holds_own_ || wants_own_ || (lend_paused_ && !acquiring_) || lend_queue_.empty()) return;
  // Replies made so far go out first: once the shard is lent, this worker
  // touches none of its clients until it is back. Those that still refer to
  // values of this shard copy them now: the holder may free or change them.
  FlushPendingWrites();
  if (lent_blocks::LentCount() > 0)
    for (auto& [id, c] : clients_) c->out.Flatten();
  lent_to_ = static_cast<int32_t>(lend_queue_.front());
  lend_queue_.pop_front();
  Send(static_cast<uint32_t>(lent_to_), ControlWord(index_, Control::kGrant));
  FlushOutboxes();
}

template <typename Pred>
void Worker::WaitUntil(Pred done) {
  while (!done()) {
    FlushOutboxes();
    const uint64_t seen = waker_.Prepare();
    if (Drain()) continue;
    if (done()) break;
    if (waker_.TrySleep(seen)) {
      pollfd p{waker_.fd(), POLLIN, 0};
      poll(&p, 1, 100);
      waker_.Woke();
    }
  }
}

void Worker::AcquireShards(std::span<const uint32_t> sorted) {
  if (nworkers_ == 1) return;
  for (uint32_t s : sorted) {
    if (s == index_) {
      // Lent while this worker waited for a lower shard: wait until it is
      // back, and take it before anyone else waiting for it.
      wants_own_ = true;
      WaitUntil([this] { return lent_to_ < 0; });
      wants_own_ = false;
      holds_own_ = true;
      continue;
    }
    // Waiting for another shard, this worker must lend its own (if not
    // taken yet) to whoever holds what it waits for: no pause.
    acquiring_ = true;
    granted_by_ = -1;
    Send(s, ControlWord(index_, Control::kLend));
    WaitUntil([this, s] { return granted_by_ == static_cast<int32_t>(s); });
    acquiring_ = false;
  }
  ApplyConfigIfChanged();  // a holder of this shard may have run CONFIG SET
}

void Worker::GiveBack(std::span<const uint32_t> sorted) {
  if (nworkers_ == 1) return;
  for (uint32_t s : sorted) {
    if (s == index_)
      holds_own_ = false;
    else
      Send(s, ControlWord(index_, Control::kReturn));
  }
  FlushOutboxes();
}

ExecBatch* Worker::NewBatch() {
  if (free_batches_.empty()) return new ExecBatch();
  ExecBatch* b = free_batches_.back();
  free_batches_.pop_back();
  return b;
}

void Worker::RecycleBatch(ExecBatch* b) {
  if (free_batches_.size() >= kFreeBatches || b->bytes.capacity() > kIdleBufferKeep ||
      b->reply.capacity() > kIdleBufferKeep) {
    delete b;
    return;
  }
  b->Clear();
  free_batches_.push_back(b);
}

void Worker::SendOpenBatch(Client& c) {
  if (c.open_batch == nullptr) return;
  Send(c.open_batch->target, reinterpret_cast<uint64_t>(static_cast<Mail*>(c.open_batch)));
  c.open_batch = nullptr;
  c.batch_in_flight = true;
}

void Worker::RunExecBatch(ExecBatch* b) {
  ApplyConfigIfChanged();
  proxy_.id = b->client_id;
  proxy_.db = b->db;
  proxy_.resp = b->resp;
  ReplyWriter reply(&b->reply, b->resp, this);
  const int64_t now_ms = UnixTimeMs();
  const uint64_t hard_limit = server_.config().output_buffer_limits[Config::kNormalClients].hard;
  uint64_t t = CycleClock::Now();
  size_t offset = 0, arg = 0;
  for (const ExecBatch::Command& cmd : b->commands) {
    exec_args_.clear();
    for (uint32_t i = 0; i < cmd.argc; i++, arg++) {
      exec_args_.emplace_back(b->bytes.data() + offset, b->arg_sizes[arg]);
      offset += b->arg_sizes[arg];
    }
    proxy_.last_cmd = cmd.spec;  // error texts name it (ExecuteCommand sets it for its own clients)
    t = Run(proxy_, cmd.spec, exec_args_, reply, shard_, nullptr, now_ms, t);
    // Past the output buffer's hard limit the client is closed when the
    // replies reach it, without running the rest (Redis stops reading a
    // client it will close): do not build replies nobody will get.
    if (hard_limit != 0 && b->reply.size() >= hard_limit) break;
  }
  b->kind = Mail::Kind::kExecDone;
  Send(b->from, reinterpret_cast<uint64_t>(static_cast<Mail*>(b)));
}

void Worker::FinishExecBatch(ExecBatch* b) {
  auto it = clients_.find(b->client_id);
  if (it != clients_.end() && !it->second->closed) {
    Client& c = *it->second;
    c.out.Take(b->reply);
    c.batch_in_flight = false;
    if (!OverOutputLimit(c)) {
      QueueWrite(c);
      resume_.push_back(c.id);
    }
  }
  RecycleBatch(b);
}

void Worker::ResumeClients() {
  std::vector<uint64_t> ids;
  ids.swap(resume_);
  for (uint64_t id : ids) {
    auto it = clients_.find(id);
    if (it == clients_.end()) continue;
    Client& c = *it->second;
    if (c.closed || c.batch_in_flight) continue;
    if (!c.in.empty() && !c.close_after_reply) {
      ProcessInput(c, c.in);
      if (!c.closed) StartBigArg(c, c.in);
    }
    if (c.read_closed && !c.batch_in_flight) c.close_after_reply = true;
    if (c.close_after_reply) QueueWrite(c);
  }
}

int Worker::BeforeWait() {
  if (server_.stopping()) {
    loop_.Stop();
    return 0;
  }
  ApplyConfigIfChanged();
  // One loop iteration has run since the shard last came back: it may go
  // out again (without this a stream of borrowers could keep this worker's
  // own clients waiting for ever).
  lend_paused_ = false;
  const uint64_t seen = waker_.Prepare();
  bool work = Drain();
  if (lent_to_ >= 0) {
    // Parked: the holder may use this shard and read this worker's state
    // until it gives the shard back.
    WaitUntil([this] { return lent_to_ < 0; });
    ApplyConfigIfChanged();  // the holder may have run CONFIG SET
    work = true;
  }
  if (evict_requested_) {
    evict_requested_ = false;
    EvictFor(1000);
  }
  if (!resume_.empty()) {
    ResumeClients();
    work = true;
  }
  FlushOutboxes();
  if (work) return 0;
  if (!waker_.TrySleep(seen)) return 0;
  // A ring was full: try again soon even if nobody wakes this worker.
  return outbox_targets_.empty() ? -1 : 1;
}

// --- Replies and connections ---

void Worker::CloseClient(Client& c) {
  if (&c == current_client_ || &c == busy_client_) {
    c.close_after_reply = true;
    QueueWrite(c);
  } else {
    FreeClient(c);
  }
}

void Worker::OnErrorReply(std::string_view msg) {
  stats_.total_error_replies++;
  size_t sp = msg.find(' ');
  std::string code(msg.substr(0, std::min<size_t>(sp, 64)));
  // A bounded number of distinct codes, as Redis bounds errorstats.
  if (stats_.error_counts.size() < 128 || stats_.error_counts.count(code)) stats_.error_counts[code]++;
}

void Worker::QueueWrite(Client& c) {
  if (c.in_pending_writes) return;
  c.in_pending_writes = true;
  pending_writes_.push_back(&c);
}

void Worker::FlushPendingWrites() {
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

void Worker::FlushClient(Client& c) {
  while (!c.out.empty()) {
    // Replies and the large values they refer to, in one system call.
    ssize_t n;
    if (!c.out.has_refs()) {
      n = write(c.fd, c.out.bytes().data(), c.out.bytes().size());
    } else {
      iovec iov[kMaxIov];
      const int k = c.out.Gather(iov, kMaxIov);
      n = writev(c.fd, iov, k);
    }
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
    // QUIT or a protocol error: closed once every reply is out (those of
    // commands still running on another worker included).
    if (c.close_after_reply && !c.batch_in_flight && c.open_batch == nullptr) {
      FreeClient(c);
      return;
    }
    if (c.writable_armed) {
      c.writable_armed = false;
      loop_.Modify(c.fd, ClientEvents(c), &c);
    }
  } else if (!c.writable_armed) {
    c.writable_armed = true;
    loop_.Modify(c.fd, ClientEvents(c), &c);
  }
}

void Worker::SetOutputLimitThreshold() {
  obuf_check_from_ = UINT64_MAX;
  for (int cls : {Config::kNormalClients, Config::kPubsubClients}) {
    const Config::OutputBufferLimit& l = server_.config().output_buffer_limits[cls];
    if (l.hard != 0) obuf_check_from_ = std::min(obuf_check_from_, l.hard);
    if (l.soft != 0) obuf_check_from_ = std::min(obuf_check_from_, l.soft);
  }
}

// Redis's checkClientOutputBufferLimits for normal and pub/sub clients (a
// client with subscriptions is of the pubsub class; there are no replicas):
// over the hard limit at once, over the soft one when it has stayed over it
// for more than soft_seconds (judged when replies are added, as Redis does).
// A client of this worker is closed at once; by a command holding this
// worker (PUBLISH from another), when the worker gets its shard back.
bool Worker::CheckOutputLimit(Client& c, bool own_thread) {
  const Config::OutputBufferLimit& l =
      server_.config().output_buffer_limits[c.subs != nullptr ? Config::kPubsubClients : Config::kNormalClients];
  const uint64_t used = c.out.size();
  const bool hard = l.hard != 0 && used >= l.hard;
  bool soft = l.soft != 0 && used >= l.soft;
  const int64_t now_ms = UnixTimeMs();
  const int64_t now_s = now_ms / 1000;
  if (soft) {
    if (c.obuf_soft_since_s == 0) {
      c.obuf_soft_since_s = now_s;
      soft = false;
    } else if (now_s - c.obuf_soft_since_s <= l.soft_seconds) {
      soft = false;
    }
  } else {
    c.obuf_soft_since_s = 0;
  }
  if (!hard && !soft) return false;
  std::string info = server_.ClientInfoLine(c, now_ms);
  if (!info.empty() && info.back() == '\n') info.pop_back();
  LOG_WARNING("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info.c_str());
  stats_.client_output_buffer_limit_disconnections++;
  if (own_thread) {
    FreeClient(c);
  } else {
    RequestKill(c.id);
  }
  return true;
}

size_t Worker::Publish(std::string_view channel, std::string_view message, bool own_thread) {
  if (pubsub_.subscriptions() == 0) return 0;
  return pubsub_.ForEachReceiver(channel, [&](Client& c, std::string_view pattern) {
    if (c.closed) return;  // closed by an earlier delivery of this message
    ReplyWriter w(&c.out, c.resp);
    if (pattern.empty()) {
      w.PushHeader(3);
      w.Bulk("message");
    } else {
      w.PushHeader(4);
      w.Bulk("pmessage");
      w.Bulk(pattern);
    }
    w.Bulk(channel);
    w.Bulk(message);
    if (!OverOutputLimit(c, own_thread)) QueueWrite(c);
  });
}

uint32_t Worker::ClientEvents(const Client& c) const {
  return (c.read_closed ? 0u : static_cast<uint32_t>(EPOLLIN)) | (c.writable_armed ? static_cast<uint32_t>(EPOLLOUT) : 0u);
}

void Worker::FreeClient(Client& c) {
  if (c.closed) return;
  c.closed = true;
  pubsub_.RemoveClient(c);
  loop_.Remove(c.fd);
  close(c.fd);
  if (c.in_pending_writes) {
    std::replace(pending_writes_.begin(), pending_writes_.end(), &c, static_cast<Client*>(nullptr));
    c.in_pending_writes = false;
  }
  if (c.open_batch != nullptr) {
    RecycleBatch(c.open_batch);
    c.open_batch = nullptr;
  }
  auto it = clients_.find(c.id);
  if (it != clients_.end()) {
    to_free_.push_back(std::move(it->second));
    clients_.erase(it);
    connections_.fetch_sub(1, std::memory_order_relaxed);
  }
}

// --- Cron ---

// Many keys expiring at once (a million set with the same deadline) must not
// stall other clients: expiry runs in slices of at most 1 ms, one per cron
// tick, and while a slice ends with keys left unvisited, another every 2 ms
// from the loop (at most a third of the time).
void Worker::ActiveExpireSlice() {
  constexpr int64_t kSliceUs = 1000;
  expire_pressure_ = shard_.ActiveExpire(UnixTimeMs(), kSliceUs);
  last_expire_slice_us_ = MonotonicUs();
}

void Worker::Cron() {
  const int64_t now = UnixTimeMs();
  if (index_ == 0) CycleClock::Recalibrate();
  ActiveExpireSlice();
  // Segments left sparse by deletions give their memory back (at most 1 ms
  // per tick).
  shard_.MaintainTables(1000);
  // Access data (OBJECT FREQ / IDLETIME): at most 1% of the time.
  shard_.AccessCron(MonotonicMs(), 10'000 / server_.config().hz);
  // A worker that gets no commands still evicts its share.
  if (server_.config().maxmemory > 0) EvictFor(1000);
  PublishEvictable();

  std::vector<Client*> idle;
  const int timeout = server_.config().timeout;
  for (auto& [id, c] : clients_) {
    const int64_t idle_ms = now - c->last_interaction_ms;
    // A client idle for a while gives back its buffers, so that thousands of
    // idle connections do not hold 16 KB each.
    if (idle_ms > kIdleBufferFreeMs) {
      if (c->in.empty()) c->in.ShrinkIfIdle(0);
      if (c->out.empty()) c->out.ShrinkIfIdle(0);
    }
    // A large argument trickling in slower than its low-water mark still
    // wakes the worker once a second: the bytes are read, and the client is
    // not taken for idle (timeout) while it is sending.
    if (c->rcvlowat > 1 && idle_ms > 1000) SetLowWater(*c, 1);
    if (timeout > 0 && idle_ms > static_cast<int64_t>(timeout) * 1000 && !c->batch_in_flight) idle.push_back(c.get());
  }
  for (Client* c : idle) {
    LOG_VERBOSE("Closing idle client id=%llu", static_cast<unsigned long long>(c->id));
    FreeClient(*c);
  }
  published_client_bytes_.store(ClientBufferBytes(), std::memory_order_relaxed);
  server_.UsedMemory();  // samples the peak

  const int64_t mono = MonotonicMs();
  if (mono - ops_sample_time_ms_ >= 100) {
    uint64_t ops = stats_.total_commands_processed - ops_sample_count_;
    ops_samples_[ops_sample_idx_] = ops * 1000 / static_cast<uint64_t>(mono - ops_sample_time_ms_);
    ops_sample_idx_ = (ops_sample_idx_ + 1) % kOpsSamples;
    ops_sample_count_ = stats_.total_commands_processed;
    ops_sample_time_ms_ = mono;
  }
}

uint64_t Worker::instantaneous_ops_per_sec() const {
  uint64_t sum = 0;
  for (uint64_t s : ops_samples_) sum += s;
  return sum / kOpsSamples;
}

void Worker::ResetStats() {
  stats_ = ServerStats{};
  std::fill(command_stats_.begin(), command_stats_.end(), CommandStats{});
  shard_.ResetStats();
  ops_sample_count_ = 0;
}

}  // namespace peregrine
