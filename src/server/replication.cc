// The primary's replication stream and replicas (see replication.h).
#include "server/replication.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>

#include "net/event_loop.h"
#include "server/log.h"

namespace peregrine {

ReplicationPrimary::ReplicationPrimary(uint32_t workers, std::function<void(uint32_t)> wake)
    : order_(workers), emit_([this](const AofChunk& c) { FeedLocked(c); }), gates_(new Gate[workers]),
      told_(new Told[workers]), wake_(std::move(wake)) {}

void ReplicationPrimary::Tell(uint32_t worker) {
  // (Looked at first: while the worker has yet to take its bytes the flag
  // stays set, and a store would pull its line from the worker's core.)
  if (told_[worker].flag.load(std::memory_order_relaxed)) return;
  if (!told_[worker].flag.exchange(true, std::memory_order_acq_rel)) to_wake_.push_back(worker);
}

std::vector<uint32_t>& ReplicationPrimary::WakeList() {
  // The workers to wake, swapped out of to_wake_ under the lock: both
  // vectors keep their room, so that no chunk fed allocates for it.
  thread_local std::vector<uint32_t> wake;
  wake.clear();
  return wake;
}

void ReplicationPrimary::AppendLocked(std::string_view bytes) {
  if (backlog_ == nullptr || bytes.empty()) return;
  backlog_->Append(bytes);
  offset_ = backlog_->end_offset();
  const uint64_t limit = pending_limit_.load(std::memory_order_relaxed);
  for (auto& r : replicas_) {
    if (r->close || r->info.state == State::kWaitBgsave) continue;
    r->pending.append(bytes);
    if (r->pending.size() == bytes.size()) r->pending_since_us = MonotonicUs();
    if (limit != 0 && r->pending.size() >= limit) [[unlikely]] {
      // (Online, its worker moves the bytes into its output and checks
      // the limit there; this is for one whose snapshot is still going,
      // or whose stream waits for its first ACK.)
      LOG_WARNING("Replica %s:%d dropped: its stream waiting for its snapshot passed client-output-buffer-limit",
                  r->info.ip.c_str(), r->info.listening_port);
      r->close = true;
      r->how = kCloseOverLimit;
      std::string().swap(r->pending);
      Tell(r->worker);
      continue;
    }
    // (Its worker takes the bytes once the snapshot is out: SyncDone.)
    if (r->info.state == State::kOnline) Tell(r->worker);
  }
}

void ReplicationPrimary::FeedLocked(const AofChunk& chunk) {
  if (chunk.first_db() != stream_db_) {
    std::string select;
    const std::string n = std::to_string(chunk.first_db());
    AppendRespCommand(&select, {"SELECT", n});
    AppendLocked(select);
  }
  AppendLocked(chunk.bytes());
  stream_db_ = chunk.last_db();
}

void ReplicationPrimary::PublishLocked() {
  for (uint32_t s : order_.moved()) {
    // (Dekker's with the worker's WantRelease: it sets `want`, then reads
    // `released`; this stores `released`, then reads `want`. One of the
    // two sees the other's store.)
    gates_[s].released.store(order_.released(s), std::memory_order_seq_cst);
    if (gates_[s].want.load(std::memory_order_seq_cst) && gates_[s].want.exchange(false, std::memory_order_seq_cst))
      release_wake_.push_back(s);  // (the worker of shard s is worker s)
  }
  order_.ClearMoved();
  epoch_.store(order_.epoch(), std::memory_order_release);
}

void ReplicationPrimary::WakeNowLocked() {
  for (uint32_t w : to_wake_) wake_(w);
  for (uint32_t w : release_wake_) wake_(w);
  to_wake_.clear();
  release_wake_.clear();
}

void ReplicationPrimary::MergeReleaseWakesLocked() {
  if (release_wake_.empty()) [[likely]]
    return;
  to_wake_.insert(to_wake_.end(), release_wake_.begin(), release_wake_.end());
  release_wake_.clear();
}

void ReplicationPrimary::BoundOrderLocked() {
  const uint64_t limit = pending_limit_.load(std::memory_order_relaxed);
  if (order_.bytes() <= (limit != 0 ? limit : kOrderLimit)) [[likely]]
    return;
  LOG_WARNING("A write group's part is late: %llu bytes of the stream waited for it, sent as they are",
              static_cast<unsigned long long>(order_.bytes()));
  order_.Flush(emit_);
}

void ReplicationPrimary::SettleOrderLocked() {
  if (order_.empty()) [[likely]]
    return;
  LOG_WARNING("The stream had %llu bytes waiting for write groups with every shard held",
              static_cast<unsigned long long>(order_.bytes()));
  order_.Flush(emit_);
  PublishLocked();
  WakeNowLocked();
}

void ReplicationPrimary::ResetOrderLocked() {
  order_.Reset();
  PublishLocked();
  WakeNowLocked();
}

void ReplicationPrimary::Feed(uint32_t shard, const AofChunk& chunk) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (backlog_ == nullptr || relaying_.load(std::memory_order_relaxed)) return;
    if (order_.idle(shard)) [[likely]] {
      FeedLocked(chunk);
    } else {
      order_.Chunk(shard, chunk, emit_);
      BoundOrderLocked();
      PublishLocked();
      MergeReleaseWakesLocked();
    }
    if (to_wake_.empty()) return;
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
}

void ReplicationPrimary::FeedMulti(std::span<const uint32_t> shards, const AofChunk& chunk) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (backlog_ == nullptr || relaying_.load(std::memory_order_relaxed)) return;
    order_.Multi(shards, chunk, emit_);
    BoundOrderLocked();
    PublishLocked();
    MergeReleaseWakesLocked();
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
}

const std::vector<uint32_t>& ReplicationPrimary::FeedPart(uint32_t shard, uint64_t group, uint32_t parts,
                                                          uint64_t ticket, uint64_t epoch, const AofChunk& chunk) {
  std::vector<uint32_t>& wake = WakeList();
  // (Kept apart from `wake`: the caller sends them with its next mail.)
  thread_local std::vector<uint32_t> released;
  released.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (backlog_ == nullptr || relaying_.load(std::memory_order_relaxed)) {
      // (Nothing goes to a stream now, and nothing waits in the order: the
      // part's ticket is released as it stands.)
      static const AofChunk kNone;
      order_.Chunk(shard, kNone, emit_, ticket);
    } else {
      order_.Part(shard, group, parts, ticket, epoch, chunk, emit_);
      BoundOrderLocked();
    }
    PublishLocked();
    released.swap(release_wake_);
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
  return released;
}

void ReplicationPrimary::FeedCommand(std::initializer_list<std::string_view> args) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (backlog_ == nullptr) return;
    std::string bytes;
    AppendRespCommand(&bytes, std::span<const std::string_view>(args.begin(), args.size()));
    AppendLocked(bytes);
    // (A GETACK's answer is waited for; a PING keeps an idle link alive.)
    for (auto& r : replicas_) r->urgent = true;
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
}

void ReplicationPrimary::FeedRaw(std::string_view bytes) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (backlog_ == nullptr) return;
    AppendLocked(bytes);
    stream_db_ = -1;  // (the primary's SELECTs: ours start again with one)
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
}

void ReplicationPrimary::SetRelaying(bool on) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    SettleOrderLocked();
    relaying_.store(on, std::memory_order_release);
    stream_db_ = -1;
    for (auto& r : replicas_) {
      if (r->close) continue;
      r->close = true;
      if (r->fd >= 0 && r->info.state != State::kWaitBgsave) ::shutdown(r->fd, SHUT_RDWR);
      Tell(r->worker);
    }
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
}

void ReplicationPrimary::ResetBacklog(size_t size, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  backlog_ = std::make_unique<ReplBacklog>(size, offset);
  ResetOrderLocked();
  offset_ = offset;
  stream_db_ = -1;
  no_replicas_since_ms_ = UnixTimeMs();
  feeding_.store(true, std::memory_order_release);
}

bool ReplicationPrimary::EnsureBacklog(size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  if (backlog_ != nullptr) return false;
  no_replicas_since_ms_ = UnixTimeMs();
  backlog_ = std::make_unique<ReplBacklog>(size, offset_);
  feeding_.store(true, std::memory_order_release);
  return true;
}

PsyncAnswer ReplicationPrimary::Decide(std::string_view replid, int64_t offset, const ReplIds& ids, bool psync2) {
  std::lock_guard<std::mutex> lock(mu_);
  SettleOrderLocked();
  return DecidePsync(replid, offset, ids, backlog_.get(), psync2);
}

std::unique_ptr<ReplicationPrimary::Replica> ReplicationPrimary::MakeReplica(const ReplicaInfo& info, uint32_t worker,
                                                                          State state) {
  auto r = std::make_unique<Replica>();
  r->info = info;
  r->info.state = state;
  r->worker = worker;
  return r;
}

void ReplicationPrimary::AttachContinue(const ReplicaInfo& info, uint32_t worker, uint64_t from) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto r = MakeReplica(info, worker, State::kOnline);
    backlog_->CopyFrom(from, &r->pending);
    told_[worker].flag.store(true, std::memory_order_release);
    replicas_.push_back(std::move(r));
  }
  wake_(worker);
}

void ReplicationPrimary::AttachWaiting(const ReplicaInfo& info, uint32_t worker, int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = MakeReplica(info, worker, State::kWaitBgsave);
  r->fd = fd;
  r->waiting_since_ms = UnixTimeMs();
  replicas_.push_back(std::move(r));
}

bool ReplicationPrimary::SyncDue(int64_t now_ms, bool diskless, int delay_s, int max_replicas) {
  std::lock_guard<std::mutex> lock(mu_);
  int waiting = 0;
  int64_t longest_ms = 0;
  for (auto& r : replicas_) {
    if (r->info.state != State::kWaitBgsave || r->close) continue;
    waiting++;
    longest_ms = std::max(longest_ms, now_ms - r->waiting_since_ms);
    if (r->info.disk) diskless = false;
  }
  return waiting > 0 && (!diskless || (max_replicas > 0 && waiting >= max_replicas) ||
                         longest_ms >= int64_t{delay_s} * 1000);
}

bool ReplicationPrimary::StartWaiting(SyncStart* start) {
  std::lock_guard<std::mutex> lock(mu_);
  SettleOrderLocked();
  start->targets.clear();
  start->disk = false;
  start->rdb_filter = 0;
  start->offset = offset_;
  bool first = true;
  for (auto& r : replicas_) {
    if (r->info.state != State::kWaitBgsave || r->close) continue;
    if (first) start->rdb_filter = r->info.rdb_filter;
    first = false;
    if (r->info.rdb_filter != start->rdb_filter) continue;
    r->info.state = State::kSendingRdb;
    r->sync_offset = offset_;
    start->targets.push_back(SyncTarget{r->info.client_id, r->fd, r->info.sync});
    start->disk = start->disk || r->info.disk;
  }
  if (start->targets.empty()) return false;
  // (Every one of them reads the same bytes: the file's form for all if
  // one needs it.)
  for (auto& r : replicas_)
    if (r->info.state == State::kSendingRdb) r->info.disk = start->disk;
  stream_db_ = -1;
  return true;
}

bool ReplicationPrimary::JoinSync(const ReplicaInfo& info, uint32_t worker, int fd,
                                  const std::function<bool(uint64_t)>& join) {
  std::lock_guard<std::mutex> lock(mu_);
  // (A sibling closed over its limit has dropped what it kept.)
  auto it = std::find_if(replicas_.begin(), replicas_.end(), [&](auto& r) {
    return r->info.state == State::kSendingRdb && !r->close && r->info.rdb_filter == info.rdb_filter;
  });
  if (it == replicas_.end() || !join((*it)->sync_offset)) return false;
  auto r = MakeReplica(info, worker, State::kSendingRdb);
  r->info.disk = true;
  r->fd = fd;
  r->sync_offset = (*it)->sync_offset;
  r->pending = (*it)->pending;
  r->pending_since_us = (*it)->pending_since_us;
  replicas_.push_back(std::move(r));
  return true;
}

void ReplicationPrimary::SyncDone(uint64_t id, bool ok) {
  uint32_t worker = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(replicas_.begin(), replicas_.end(), [&](auto& r) { return r->info.client_id == id; });
    if (it == replicas_.end()) return;
    Replica& r = **it;
    r.fd = -1;  // (the snapshot's, closed with it)
    r.urgent = true;
    if (ok && !r.info.rdb_only) {
      r.info.state = State::kOnline;
      // (Its silence counts from now: a snapshot longer than repl-timeout
      // must not drop it at once.)
      r.info.last_ack_ms = UnixTimeMs();
      r.await_ack = !r.info.sync && !r.info.disk;
    } else {
      r.close = true;  // (failed, or all it asked for is out)
      r.how = ok ? kCloseAfterSnapshot : kCloseNow;
    }
    worker = r.worker;
    told_[worker].flag.store(true, std::memory_order_release);
  }
  wake_(worker);
}

void ReplicationPrimary::KeepWaitingAlive() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : replicas_)
    if (r->info.state == State::kWaitBgsave && r->fd >= 0 && !r->close) {
      // (Nothing else writes to its socket meanwhile; a full one skips it.)
      [[maybe_unused]] const ssize_t n = ::send(r->fd, "\n", 1, MSG_NOSIGNAL);
    }
}


int64_t ReplicationPrimary::ServeWorker(uint32_t worker, const std::function<void(uint64_t, std::string&)>& send,
                                        const std::function<void(uint64_t, CloseHow)>& close) {
  if (!told_[worker].flag.exchange(false, std::memory_order_acq_rel)) return -1;
  // The worker's own buffers (its thread's alone): each replica's bytes
  // are swapped for one of them, so that the buffers go back and forth
  // keeping their room instead of growing again from nothing.
  auto& out = told_[worker].out;
  size_t n = 0;
  std::vector<std::pair<uint64_t, CloseHow>> closing;
  int64_t due_us = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now_us = MonotonicUs();
    for (auto& r : replicas_) {
      if (r->worker != worker) continue;
      if (r->close) {
        closing.emplace_back(r->info.client_id, r->how);
      } else if (r->info.state == State::kOnline && !r->await_ack && !r->pending.empty()) {
        const int64_t age = now_us - r->pending_since_us;
        if (!r->urgent && r->pending.size() < kBatchBytes && age < kBatchUs) {
          due_us = due_us < 0 ? kBatchUs - age : std::min(due_us, kBatchUs - age);
          continue;
        }
        r->urgent = false;
        if (n == out.size()) out.emplace_back();
        out[n].first = r->info.client_id;
        out[n].second.swap(r->pending);
        n++;
      }
    }
  }
  for (size_t i = 0; i < n; i++) {
    send(out[i].first, out[i].second);
    out[i].second.clear();
    if (out[i].second.capacity() > kKeptBuffer) std::string().swap(out[i].second);
  }
  for (auto [id, how] : closing) close(id, how);
  // (Bytes left: the flag again, so that the worker's next look finds them.)
  if (due_us >= 0) told_[worker].flag.store(true, std::memory_order_release);
  return due_us;
}

void ReplicationPrimary::Ack(uint64_t id, uint64_t offset, int64_t aof_offset, int64_t now_ms) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : replicas_)
      if (r->info.client_id == id) {
        r->info.ack_offset = std::max(r->info.ack_offset, offset);  // (only ever up, as Redis)
        if (r->await_ack) {
          // Its first ACK after its snapshot: the stream may go now.
          r->await_ack = false;
          r->urgent = true;
          Tell(r->worker);
        }
        if (aof_offset >= 0)
          r->info.aof_ack_offset = std::max(r->info.aof_ack_offset, static_cast<uint64_t>(aof_offset));
        r->info.last_ack_ms = now_ms;
      }
    // Clients in WAIT that have their count now.
    for (Waiter& w : waiters_)
      if (!w.done && SatisfiedLocked(w)) {
        w.done = true;
        Tell(w.worker);
      }
    wake.swap(to_wake_);
  }
  for (uint32_t w : wake) wake_(w);
}

int ReplicationPrimary::CountAcksLocked(uint64_t offset) const {
  int n = 0;
  for (auto& r : replicas_)
    if (!r->close && !r->info.sync && r->info.state == State::kOnline && r->info.ack_offset >= offset) n++;
  return n;
}

int ReplicationPrimary::CountAofAcksLocked(uint64_t offset) const {
  int n = 0;
  for (auto& r : replicas_)
    if (!r->close && !r->info.sync && r->info.state == State::kOnline && r->info.aof_ack_offset >= offset) n++;
  return n;
}

int ReplicationPrimary::CountAofAcks(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  return CountAofAcksLocked(offset);
}

void ReplicationPrimary::AddAofWaiter(uint64_t id, uint32_t worker, uint64_t offset, int64_t need_local,
                                      uint64_t aof_target, int64_t need, int64_t deadline_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Waiter w{id, worker, offset, need, deadline_ms};
    w.aof = true;
    w.need_local = need_local;
    w.aof_target = aof_target;
    waiters_.push_back(w);
    told_[worker].waiters.fetch_add(1, std::memory_order_relaxed);
  }
  getack_.store(true, std::memory_order_relaxed);
}

int ReplicationPrimary::CountAcks(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  return CountAcksLocked(offset);
}

void ReplicationPrimary::AddWaiter(uint64_t id, uint32_t worker, uint64_t offset, int64_t need, int64_t deadline_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiters_.push_back({id, worker, offset, need, deadline_ms});
    told_[worker].waiters.fetch_add(1, std::memory_order_relaxed);
  }
  getack_.store(true, std::memory_order_relaxed);
}

void ReplicationPrimary::AddShutdownWaiter(uint64_t id, uint32_t worker, uint64_t offset, int64_t need,
                                           int64_t deadline_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Waiter w{id, worker, offset, need, deadline_ms};
    w.shutdown = true;
    waiters_.push_back(w);
    told_[worker].waiters.fetch_add(1, std::memory_order_relaxed);
  }
  getack_.store(true, std::memory_order_relaxed);
}

void ReplicationPrimary::AbortShutdownWaiters() {
  std::vector<uint32_t> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Waiter& w : waiters_) {
      if (!w.shutdown || w.done) continue;
      w.done = w.error = true;
      told_[w.worker].flag.store(true, std::memory_order_release);
      wake.push_back(w.worker);
    }
  }
  for (uint32_t worker : wake) wake_(worker);
}

void ReplicationPrimary::FlushGetack() {
  // (Redis's replicationRequestAckFromSlaves, once per loop however many
  // clients began to wait: replicas answer GETACK at once instead of at
  // their next second.)
  if (getack_.exchange(false, std::memory_order_relaxed)) FeedCommand({"REPLCONF", "GETACK", "*"});
}

int64_t ReplicationPrimary::ServeWaiters(uint32_t worker, int64_t now_ms, uint64_t aof_synced, bool aof_on,
                                         const std::function<void(uint64_t, int, int, int)>& done) {
  std::vector<std::tuple<uint64_t, int, int, int>> out;
  int64_t next = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < waiters_.size();) {
      Waiter& w = waiters_[i];
      if (w.worker != worker) {
        i++;
        continue;
      }
      if (w.aof) w.local_ok = aof_synced >= w.aof_target;
      // (A local wait the file turned off can no longer end: Redis's error.)
      const bool aof_gone = w.aof && w.need_local > 0 && !aof_on;
      if (w.done || aof_gone || SatisfiedLocked(w) || (w.deadline_ms > 0 && now_ms >= w.deadline_ms)) {
        const int error = w.shutdown ? (w.error ? kWaitShutdownAborted : kWaitShutdownGo)
                          : w.error  ? kWaitUnblocked
                          : aof_gone ? kWaitAofOff
                                     : kWaitOk;
        if (w.aof)
          out.emplace_back(w.id, w.local_ok ? 1 : 0, CountAofAcksLocked(w.offset), error);
        else
          out.emplace_back(w.id, -1, CountAcksLocked(w.offset), error);
        waiters_.erase(waiters_.begin() + static_cast<ptrdiff_t>(i));
        told_[worker].waiters.fetch_sub(1, std::memory_order_relaxed);
        continue;
      }
      if (w.deadline_ms > 0) next = next < 0 ? w.deadline_ms - now_ms : std::min(next, w.deadline_ms - now_ms);
      i++;
    }
  }
  for (auto& [id, local, count, error] : out) done(id, local, count, error);
  return next;
}

bool ReplicationPrimary::UnblockWaiter(uint64_t id, bool error) {
  uint32_t worker = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) { return w.id == id; });
    if (it == waiters_.end() || it->done || it->shutdown) return false;
    it->done = true;
    it->error = error;
    worker = it->worker;
    told_[worker].flag.store(true, std::memory_order_release);
  }
  wake_(worker);
  return true;
}

void ReplicationPrimary::DropWaiter(uint64_t id, uint32_t worker) {
  std::lock_guard<std::mutex> lock(mu_);
  // (SHUTDOWN's goes on without its client: the server still shuts down.)
  for (Waiter& w : waiters_)
    if (w.id == id && w.shutdown) w.id = 0;
  if (std::erase_if(waiters_, [&](const Waiter& w) { return w.id == id && id != 0; }) > 0)
    told_[worker].waiters.fetch_sub(1, std::memory_order_relaxed);
}

void ReplicationPrimary::SetListeningPort(uint64_t id, int port) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : replicas_)
    if (r->info.client_id == id) r->info.listening_port = port;
}

void ReplicationPrimary::Detach(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(replicas_.begin(), replicas_.end(), [&](auto& r) { return r->info.client_id == id; });
  if (it == replicas_.end()) return;
  Replica& r = **it;
  if (r.fd >= 0) {
    if (r.info.state == State::kWaitBgsave)
      ::close(r.fd);  // (its own until its sync starts)
    else
      ::shutdown(r.fd, SHUT_RDWR);  // its snapshot stops (the job closes the socket)
  }
  replicas_.erase(it);
  if (replicas_.empty()) no_replicas_since_ms_ = UnixTimeMs();
}

void ReplicationPrimary::DropSilent(int64_t now_ms, int timeout_s) {
  std::vector<uint32_t>& wake = WakeList();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : replicas_) {
      // (A SYNC replica sends no ACKs, as redis-cli --replica: never timed
      // out, as in Redis.)
      if (r->close || r->info.sync || r->info.state != State::kOnline ||
          now_ms - r->info.last_ack_ms <= int64_t{timeout_s} * 1000)
        continue;
      LOG_WARNING("Disconnecting timedout replica (streaming sync): %s:%d", r->info.ip.c_str(),
                  r->info.listening_port);
      r->close = true;
      if (!told_[r->worker].flag.exchange(true, std::memory_order_acq_rel)) wake.push_back(r->worker);
    }
  }
  for (uint32_t w : wake) wake_(w);
}

bool ReplicationPrimary::BacklogExpired(int64_t now_ms, int ttl_s) {
  std::lock_guard<std::mutex> lock(mu_);
  return backlog_ != nullptr && ttl_s > 0 && replicas_.empty() && now_ms - no_replicas_since_ms_ > int64_t{ttl_s} * 1000;
}

void ReplicationPrimary::FreeBacklog() {
  std::lock_guard<std::mutex> lock(mu_);
  backlog_.reset();
  ResetOrderLocked();
  feeding_.store(false, std::memory_order_release);
  stream_db_ = -1;
}

uint64_t ReplicationPrimary::offset() {
  std::lock_guard<std::mutex> lock(mu_);
  return offset_;
}

std::vector<ReplicationPrimary::ReplicaInfo> ReplicationPrimary::Replicas() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ReplicaInfo> v;
  for (auto& r : replicas_)
    if (!r->close) v.push_back(r->info);
  return v;
}

ReplicationPrimary::BacklogInfo ReplicationPrimary::Backlog() {
  std::lock_guard<std::mutex> lock(mu_);
  BacklogInfo b;
  if (backlog_ == nullptr) return b;
  b.active = true;
  b.first = backlog_->first_offset();
  b.histlen = backlog_->histlen();
  return b;
}

int ReplicationPrimary::GoodReplicas(int64_t now_ms, int max_lag_s) {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (auto& r : replicas_)
    if (r->info.state == State::kOnline && now_ms - r->info.last_ack_ms <= int64_t{max_lag_s} * 1000) n++;
  return n;
}

void ReplicationPrimary::Resize(size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  if (backlog_ != nullptr) backlog_->Resize(size);
}

}  // namespace peregrine
