// Atomic slot migration (see slot_migration.h): a job's thread, the source's
// link to the target (connect, ESTABLISH, the commands, the target's
// replies, TAKEOVER) and the pause of writes around the handover.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cluster/cluster_bus.h"
#include "core/slot.h"
#include "cluster/slot_migration_internal.h"
#include "server/log.h"
#include "server/server_state.h"

namespace peregrine::cluster {

using namespace migration_internal;

void SlotMigrations::PauseWrites(Job* job) {
  std::lock_guard<std::mutex> lock(pause_mu_);
  if (job->paused) return;
  job->paused = true;
  job->paused_at = std::chrono::steady_clock::now();
  pauses_++;
  // (Two jobs never share a slot: the bits of one are its own.)
  paused_slots_.resize(kNumSlots);
  for (size_t s = 0; s < kNumSlots; s++)
    if (job->slots[s]) paused_slots_[s] = true;
  server_.client_pause().Pause(ClientPause::kForSlotMigration, INT64_MAX, ClientPause::kWrites, paused_slots_);
}

void SlotMigrations::UnpauseWrites(Job* job) {
  {
    std::lock_guard<std::mutex> lock(pause_mu_);
    if (!job->paused) return;
    job->paused = false;
    for (size_t s = 0; s < kNumSlots; s++)
      if (job->slots[s]) paused_slots_[s] = false;
    if (--pauses_ != 0) {  // (another job's pause goes on, on its slots)
      server_.client_pause().Pause(ClientPause::kForSlotMigration, INT64_MAX, ClientPause::kWrites, paused_slots_);
    } else {
      server_.client_pause().Unpause(ClientPause::kForSlotMigration);
    }
  }
  server_.WakeWorkers();
}

bool SlotMigrations::QueueEmpty(Job* job) {
  // (Called after every part said it is drained: its last chunk is queued.)
  std::lock_guard<std::mutex> lock(job->qmu);
  return job->queue.empty();
}

void SlotMigrations::Fail(Job* job, const std::string& why, const std::string& detail) {
  const bool cancelled = job->cancel.load() && job->state.load() != State::kFinishing;
  const std::string message = cancelled ? "" : job->flushed.load() ? "Data was flushed" : why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job->message = message;
  }
  // (The source keeps the slots: their writes go on, here as before.)
  MarkBits(frozen_, job->slots, false);
  UnpauseWrites(job);
  job->SetState(cancelled ? State::kCancelled : State::kFailed);
  if (job->fd >= 0) {
    ::close(job->fd);
    job->fd = -1;
  }
  LOG_WARNING("Slot migration %s: slots %s to node %s %s: %s%s%s", job->name.c_str(), RangesText(job->ranges).c_str(),
              job->target.c_str(), cancelled ? "cancelled" : "failed",
              (cancelled ? "by CANCELSLOTMIGRATIONS" : message.c_str()), detail.empty() ? "" : " ", detail.c_str());
  server_.WakeWorkers();
}

bool SlotMigrations::Pump(Job* job) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(job->fd, buf, sizeof(buf), 0);
    if (n > 0) {
      job->replies.buf.append(buf, static_cast<size_t>(n));
      job->ack_ms.store(UnixTimeMs(), std::memory_order_relaxed);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;  // (closed, or an error)
  }
  job->replies.Parse([&](char type, std::string_view text) {
    if (job->marker_seen && job->takeover.empty()) {
      job->takeover = std::string(1, type) + std::string(text);
    } else if (type == '-') {
      if (job->target_error.empty()) job->target_error = text;
    } else if (type == '$' && !job->marker.empty() && text == job->marker) {
      job->marker_seen = true;
    } else if (type == '$' && !job->sync_marker.empty() && text == job->sync_marker) {
      job->synced = true;
    }
  });
  return true;
}

bool SlotMigrations::SendAll(Job* job, std::string_view bytes) {
  size_t done = 0;
  int64_t progress_ms = UnixTimeMs();
  while (done < bytes.size()) {
    const ssize_t n = ::send(job->fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      progress_ms = UnixTimeMs();
      job->ack_ms.store(progress_ms, std::memory_order_relaxed);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (job->cancel.load() || UnixTimeMs() - progress_ms >= kIoTimeoutMs) return false;
      // (The target's replies are read meanwhile: it may wait for room to
      // send them before it reads more.)
      pollfd p{job->fd, POLLOUT | POLLIN, 0};
      ::poll(&p, 1, 100);
      if ((p.revents & POLLIN) && !Pump(job)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool SlotMigrations::ReadLine(Job* job, std::string* line) {
  line->clear();
  const int64_t until = UnixTimeMs() + kIoTimeoutMs;
  for (;;) {
    char c;
    const ssize_t n = ::recv(job->fd, &c, 1, 0);
    if (n == 1) {
      if (c == '\n') {
        if (!line->empty() && line->back() == '\r') line->pop_back();
        job->ack_ms.store(UnixTimeMs(), std::memory_order_relaxed);
        return true;
      }
      if (line->size() > 4096) return false;
      line->push_back(c);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (job->cancel.load() || job->flushed.load() || UnixTimeMs() >= until) return false;
      pollfd p{job->fd, POLLIN, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    return false;
  }
}

bool SlotMigrations::Connect(Job* job) {
  std::string host;
  int port = 0;
  if (!bus_.NodeAddress(job->target, &host, &port)) {
    Fail(job, "Unable to connect to target node: its address is not known");
    return false;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || res == nullptr) {
    Fail(job, "Unable to connect to target node: bad address " + host);
    return false;
  }
  job->fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int rc = job->fd < 0 ? -1 : ::connect(job->fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{job->fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    rc = ::poll(&p, 1, kIoTimeoutMs) == 1 && getsockopt(job->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0
             ? 0
             : -1;
  }
  if (rc != 0) {
    Fail(job, "Unable to connect to target node: " + host + ":" + std::to_string(port));
    return false;
  }
  const int one = 1;
  setsockopt(job->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string cmd, line;
  const Config& config = server_.config();
  if (!config.masterauth.empty()) {
    if (config.masteruser.empty())
      AppendRespCommand(&cmd, {"AUTH", config.masterauth});
    else
      AppendRespCommand(&cmd, {"AUTH", config.masteruser, config.masterauth});
    if (!SendAll(job, cmd) || !ReadLine(job, &line) || line != "+OK") {
      Fail(job, "Received error during handshake to target: " + line);
      return false;
    }
    cmd.clear();
  }
  std::vector<std::string> args = {"CLUSTER", "SYNCSLOTS", "ESTABLISH", "SOURCE", job->source, "NAME", job->name,
                                   "SLOTSRANGE"};
  for (const auto& [s, e] : job->ranges) {
    args.push_back(std::to_string(s));
    args.push_back(std::to_string(e));
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  AppendRespCommand(&cmd, views);
  if (!SendAll(job, cmd) || !ReadLine(job, &line) || line != "+OK") {
    Fail(job, line.empty() ? std::string(kLost) : "Received error during handshake to target: " + line);
    return false;
  }
  return true;
}

void SlotMigrations::Run(Job* job) {
  RunJob(job);
  job->thread_done.store(true, std::memory_order_release);
}

void SlotMigrations::RunJob(Job* job) {
  if (!Connect(job)) {
    if (!job->terminal()) Fail(job, kLost);
    return;
  }
  job->SetState(State::kSnapshot);
  server_.WakeWorkers();
  int64_t streaming_since = 0;
  for (;;) {
    if (job->cancel.load()) return Fail(job, "");
    if (job->flushed.load()) return Fail(job, "Data was flushed");
    if (bus_.is_replica()) return Fail(job, "Slots are no longer owned by myself");
    std::string chunk;
    {
      std::unique_lock<std::mutex> lock(job->qmu);
      job->qcv.wait_for(lock, std::chrono::milliseconds(5),
                        [&] { return !job->queue.empty() || job->poked || job->cancel.load(); });
      job->poked = false;
      if (!job->queue.empty()) {
        chunk = std::move(job->queue.front());
        job->queue.pop_front();
      }
    }
    if (!chunk.empty()) {
      const bool ok = SendAll(job, chunk);
      job->queued.fetch_sub(chunk.size(), std::memory_order_relaxed);
      if (!ok) return Fail(job, kLost, std::string("sending: ") + std::strerror(errno));
      server_.WakeWorkers();  // (steps waiting for room go on)
    }
    if (!Pump(job)) return Fail(job, kLost, "(its connection closed)");
    // A command the target refused (out of memory, say): what it holds is
    // not the source's keys.
    if (!job->target_error.empty()) return Fail(job, "Received error from target: " + job->target_error);
    const State st = job->state.load();
    auto all = [&](auto pred) { return std::all_of(job->parts.begin(), job->parts.end(), pred); };
    if (st == State::kSnapshot && all([](const auto& p) { return p->walk_done.load() || p->drained.load(); })) {
      job->SetState(State::kStreaming);
      streaming_since = UnixTimeMs();
    } else if (st == State::kStreaming) {
      // After kStreamMaxMs of rounds the handover comes whatever is left
      // (the shards then let the queue empty: Job::closing).
      if (!job->closing.load() && UnixTimeMs() - streaming_since >= kStreamMaxMs) {
        job->closing.store(true);
        server_.WakeWorkers();
      }
      const bool closing = job->closing.load();
      uint64_t pending = 0;
      for (const auto& p : job->parts) pending += p->pending.load();
      const bool ready = (pending < kHandoverKeys && job->queued.load() < kStepBytes) ||
                         (closing && job->queued.load() < 2 * kStepBytes);
      if (ready && job->sync_marker.empty()) {
        // First the target catches up with what is in flight (the socket's
        // buffers hold megabytes): the pause then waits only for the little
        // sent after this.
        std::string cmd;
        job->sync_marker = job->name + "-sync";
        AppendRespCommand(&cmd, {"ECHO", job->sync_marker});
        if (!SendAll(job, cmd)) return Fail(job, kLost, "(sending ECHO)");
      } else if (ready && job->synced && !prevent_pause_.load()) {
        // Writes wait from here until the slots are the target's.
        PauseWrites(job);
        job->SetState(State::kPausing);
        server_.WakeWorkers();
      }
    } else if (st == State::kPausing && all([](const auto& p) { return p->drained.load(); }) && QueueEmpty(job) &&
               !prevent_failover_.load()) {
      job->SetState(State::kFinishing);
      const auto drained_at = std::chrono::steady_clock::now();
      // The ECHO tells TAKEOVER's reply from those before it.
      std::string cmd;
      job->marker = job->name + "-takeover";
      AppendRespCommand(&cmd, {"ECHO", job->marker});
      AppendRespCommand(&cmd, {"CLUSTER", "SYNCSLOTS", "TAKEOVER", "NAME", job->name});
      // From here the outcome is the target's (a cancel no longer stops it).
      const bool sent = SendAll(job, cmd);
      const int64_t until = UnixTimeMs() + kIoTimeoutMs;
      bool answered = true;
      while (sent && job->takeover.empty() && job->target_error.empty()) {
        pollfd p{job->fd, POLLIN, 0};
        ::poll(&p, 1, 100);
        if (UnixTimeMs() >= until || !Pump(job)) {
          answered = false;
          break;
        }
      }
      if (!job->target_error.empty()) return Fail(job, "Received error from target: " + job->target_error);
      if (answered && sent && job->takeover != "+OK")
        return Fail(job, "The target refused the takeover: " + job->takeover.substr(1));
      if (!sent || !answered) {
        // No answer: the target may have taken the slots all the same.
        // The view settles it (its claim comes over the bus), writes
        // still paused meanwhile: the source must not serve slots the
        // target serves.
        const int64_t claim_until = UnixTimeMs() + kClaimWaitMs;
        while (!bus_.OwnsAll(job->target, job->slots) && UnixTimeMs() < claim_until)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!bus_.OwnsAll(job->target, job->slots)) return Fail(job, kLost, "(no answer to TAKEOVER)");
        LOG_WARNING("Slot migration %s: no answer to TAKEOVER, but the target claims the slots", job->name.c_str());
      }
      const auto answered_at = std::chrono::steady_clock::now();
      bus_.GiveExportedSlots(job->slots, job->target);
      const auto us = [](auto from, auto to) {
        return std::chrono::duration_cast<std::chrono::microseconds>(to - from).count() / 1000.0;
      };
      const auto now = std::chrono::steady_clock::now();
      const double paused_ms = us(job->paused_at, now);
      UnpauseWrites(job);
      job->SetState(State::kSuccess);
      ::close(job->fd);
      job->fd = -1;
      LOG_NOTICE(
          "Slot migration %s: slots %s are node %s's now (%llu keys sent; writes paused %.2f ms: %.2f to drain, %.2f "
          "for TAKEOVER, %.2f to give the slots)",
          job->name.c_str(), RangesText(job->ranges).c_str(), job->target.c_str(),
          static_cast<unsigned long long>(job->keys_sent.load()), paused_ms, us(job->paused_at, drained_at),
          us(drained_at, answered_at), us(answered_at, now));
      server_.WakeWorkers();
      return;
    }
  }
}

}  // namespace peregrine::cluster
