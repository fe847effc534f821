// A worker's output side: writing replies (writev of encoded bytes and lent
// value blocks), output buffer limits, Pub/Sub delivery, and closing and
// freeing clients (see worker.h).
#include "server/worker.h"

#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/lent_blocks.h"
#include "core/memory.h"
#include "net/socket.h"
#include "server/log.h"

#include "server/worker_internal.h"

namespace peregrine {

using namespace worker_internal;

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
  // In the order queued: a client served by another's command (a blocked
  // pop, a subscriber) is queued while the command runs, the client that
  // sent it after its input is done, so the first hears first, as in Redis.
  // FlushClient may free clients; the vectors hold only live ones because a
  // freed client is removed from them in FreeClient. Both keep their room.
  // What the replies acknowledge goes to the append-only file first.
  FlushAof();
  flushing_.swap(pending_writes_);
  for (Client* c : flushing_) {
    if (c == nullptr) continue;
    c->in_pending_writes = false;
    if (!c->closed) FlushClient(*c);
  }
  flushing_.clear();
}

void Worker::FlushClient(Client& c) {
  while (!c.out.empty()) {
    // Replies and the large values they refer to, in one system call.
    ssize_t n;
    if (c.tls != nullptr) [[unlikely]] {
      // TLS: one record write per piece, until one is short.
      iovec iov[kMaxIov];
      const int k = c.out.Gather(iov, kMaxIov);
      n = 0;
      for (int i = 0; i < k; i++) {
        const ssize_t w = WriteSocket(c, static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
        if (w < 0) {
          if (n == 0) n = -1;
          break;
        }
        n += w;
        if (static_cast<size_t>(w) < iov[i].iov_len) break;
      }
    } else if (!c.out.has_refs()) {
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
  CloseOverLimit(c, own_thread);
  return true;
}

void Worker::CloseOverLimit(Client& c, bool own_thread) {
  std::string info = server_.ClientInfoLine(c, UnixTimeMs());
  if (!info.empty() && info.back() == '\n') info.pop_back();
  LOG_WARNING("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info.c_str());
  stats_.client_output_buffer_limit_disconnections++;
  if (own_thread) {
    FreeClient(c);
  } else {
    RequestKill(c.id);
  }
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

ssize_t Worker::WriteSocket(Client& c, const char* p, size_t n) {
  if (c.tls != nullptr) return c.tls->Write(p, n);
  return write(c.fd, p, n);
}

uint32_t Worker::ClientEvents(const Client& c) const {
  const bool out = c.writable_armed || (c.tls != nullptr && c.tls->wants_write());
  return (c.read_closed ? 0u : static_cast<uint32_t>(EPOLLIN)) | (out ? static_cast<uint32_t>(EPOLLOUT) : 0u);
}

void Worker::FreeClient(Client& c) {
  if (c.closed) return;
  c.closed = true;
  if (c.blocked != nullptr) {
    CancelBlocked(c.blocked);  // if it was served meanwhile, its outcome goes with it
    Unblocked(c, *c.blocked);
    c.blocked.reset();
  }
  c.rerun.reset();
  Unwatch(c);
  pubsub_.RemoveClient(c);
  loop_.Remove(c.fd);
  close(c.fd);
  if (c.in_pending_writes) {
    std::replace(pending_writes_.begin(), pending_writes_.end(), &c, static_cast<Client*>(nullptr));
    std::replace(flushing_.begin(), flushing_.end(), &c, static_cast<Client*>(nullptr));
    c.in_pending_writes = false;
  }
  if (c.open_batch != nullptr) {
    RecycleBatch(c.open_batch);
    c.open_batch = nullptr;
  }
  if (c.pending != nullptr) {
    RecycleBatch(c.pending);
    c.pending = nullptr;
  }
  auto it = clients_.find(c.id);
  if (it != clients_.end()) {
    to_free_.push_back(std::move(it->second));
    clients_.erase(it);
    connections_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  if (std::unique_ptr<Client> kept = script_busy_.ReleaseAdopted(c)) {
    to_free_.push_back(std::move(kept));
    connections_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace peregrine
