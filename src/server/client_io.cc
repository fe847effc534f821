// ClientIo: a worker's reads and writes of its clients' sockets (see
// client_io.h).
#include "server/client_io.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/lent_blocks.h"
#include "core/memory.h"
#include "server/log.h"

namespace peregrine {
namespace {

// The scratch read buffer's size.
constexpr size_t kScratchSize = 128 * 1024;
// The most bytes a large argument's socket waits for before waking the
// worker (SO_RCVLOWAT, SetLowWater).
constexpr size_t kMaxLowWater = 4 * 1024 * 1024;
// iovecs per writev (a pipeline of large values: two per value).
constexpr int kMaxIov = 512;

}  // namespace

ClientIo::ClientIo(Owner& owner, EventLoop& loop, ServerState& server, ServerStats& stats)
    : owner_(owner), loop_(loop), server_(server), stats_(stats) {
  scratch_.Reserve(kScratchSize);
}

void ClientIo::Forget(Client& c) {
  if (!c.in_pending_writes) return;
  std::replace(pending_.begin(), pending_.end(), &c, static_cast<Client*>(nullptr));
  std::replace(flushing_.begin(), flushing_.end(), &c, static_cast<Client*>(nullptr));
  c.in_pending_writes = false;
}

TlsContext* ClientIo::TlsContextForNew(std::string* err) {
  if (tls_ctx_ == nullptr || tls_generation_ != server_.tls_generation()) {
    tls_generation_ = server_.tls_generation();
    tls_ctx_ = TlsContext::Create(server_.config().tls, err);
  }
  return tls_ctx_.get();
}

void ClientIo::Read(Client& c) {
  // Read while held (the connection's end or error, which epoll reports
  // anyway): what comes now may know of later write groups.
  if (c.reading_held) c.claim_ticket = 0;
  // Where the bytes go: the rest of a large argument straight into its block
  // (and what follows it into c.in); otherwise the worker's scratch buffer,
  // after the client's pending partial command if that is small (one
  // system call takes a whole pipeline, and the bytes are parsed where they
  // land, in a buffer that stays in cache; only an incomplete command is
  // kept by the client); a large partial command grows in c.in.
  Buffer* in = &c.in;
  ssize_t n;
  if (c.filling_big_arg() && c.tls != nullptr) {
    // (TLS: the large argument's bytes alone, decrypted into its block.)
    Client::BigArg& a = c.big_args.back();
    n = ReadSocket(c, a.block + a.have, a.len - a.have);
    if (n > 0) a.have += static_cast<size_t>(n);
  } else if (c.filling_big_arg()) {
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
    // (A slot migration's import, which never stops coming, takes one
    // chunk per turn: the other clients' commands run between.)
    n = ReadSocket(c, p, c.import_slots != nullptr ? std::min(in->writable(), kReadChunk) : in->writable());
    if (n > 0) in->Commit(static_cast<size_t>(n));
  }
  if (n == 0) {
    LOG_VERBOSE("Client closed connection id=%llu addr=%s", static_cast<unsigned long long>(c.id),
                c.addr.c_str());
    const bool out = c.batch_in_flight || c.open_batch != nullptr || c.claim_wait;
    // A replica's connection goes at once, as Redis frees it ("Connection
    // with replica lost"): the stream it gets never ends, so it would never
    // be done with its replies.
    if (c.replica) {
      owner_.FreeClient(c);
      return;
    }
    if (out || (!c.in.empty() && !c.waiting() && !c.close_after_reply)) {
      // Half-closed with commands still running elsewhere (or waiting), or
      // read and not yet run (a batch of it just came back): answer them
      // (and the input they held back) before closing, as a single thread,
      // which runs what it reads as it reads it, would.
      c.read_closed = true;
      loop_.Modify(c.fd, Events(c), &c);
      if (!out) owner_.ProcessInput(c, c.in);
      return;
    }
    owner_.FreeClient(c);
    return;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      // A TLS handshake or record that must write first: wait for writable.
      if (c.tls != nullptr && c.tls->wants_write() && !c.writable_armed) {
        c.writable_armed = true;
        loop_.Modify(c.fd, Events(c), &c);
      }
      return;
    }
    LOG_VERBOSE("Reading from client: %s", c.tls != nullptr && !c.tls->error().empty() ? c.tls->error().c_str()
                                                                                         : strerror(errno));
    owner_.FreeClient(c);
    return;
  }
  stats_.total_net_input_bytes += static_cast<uint64_t>(n);
  stats_.total_reads_processed++;
  c.last_interaction_ms = loop_.iteration_ms();
  if (!c.filling_big_arg()) {
    if (in == &scratch_) {
      c.in.Clear();
      scratch_busy_ = true;
      owner_.ProcessInput(c, scratch_);
      scratch_busy_ = false;
      if (!c.closed) {
        StartBigArg(c, scratch_);
        c.in.Append(scratch_.view());  // an incomplete command waits for the rest
      }
      scratch_.Clear();
    } else {
      owner_.ProcessInput(c, c.in);
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
    owner_.FreeClient(c);
  }
}

ssize_t ClientIo::ReadSocket(Client& c, char* p, size_t n) {
  if (c.tls != nullptr) [[unlikely]]
    return c.tls->Read(p, n);
  return read(c.fd, p, n);
}

void ClientIo::StartBigArg(Client& c, Buffer& in) {
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
  // (What the client's input holds now, for client_recent_max_input_buffer:
  // the cron would miss a block that becomes a value before it looks.)
  stats_.peak_buffers.Note(UnixTimeMs() / 1000, in.capacity() + c.big_arg_bytes() + len - have, 0);
}

void ClientIo::SetLowWater(Client& c, size_t bytes) {
  // TCP only (a Unix socket's poll ignores it). The kernel caps it at half
  // of tcp_rmem's maximum and grows the receive buffer to hold it. Not under
  // TLS: the records' bytes are not the argument's.
  if (c.is_unix || c.tls != nullptr) return;
  const int want = static_cast<int>(std::min<size_t>(std::max<size_t>(bytes, 1), kMaxLowWater));
  if (want == c.rcvlowat) return;
  if (setsockopt(c.fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) == 0) c.rcvlowat = want;
}

void ClientIo::SpliceBigArgs(Client& c, Buffer& in) {
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

void ClientIo::QueueWrite(Client& c) {
  if (c.in_pending_writes) return;
  c.in_pending_writes = true;
  pending_.push_back(&c);
}

void ClientIo::FlushPending() {
  // In the order queued: a client served by another's command (a blocked
  // pop, a subscriber) is queued while the command runs, the client that
  // sent it after its input is done, so the first hears first, as in Redis.
  // FlushClient may free clients; the vectors hold only live ones because a
  // freed client is removed from them in FreeClient. Both keep their room.
  // What the replies acknowledge goes to the append-only file first.
  owner_.BeforeReplies();
  flushing_.swap(pending_);
  for (Client* c : flushing_) {
    if (c == nullptr) continue;
    c->in_pending_writes = false;
    if (!c->closed) Flush(*c);
  }
  flushing_.clear();
}

void ClientIo::Flush(Client& c) {
  if (c.repl_hold) [[unlikely]]
    return;  // (a replica whose snapshot the BGSAVE's thread is sending)
  if (c.stream_hold != 0 && owner_.HoldOutput(c)) [[unlikely]] {
    // Its replies wait for the replication stream (queued again then): not
    // woken meanwhile by a socket that could take them.
    if (c.writable_armed) {
      c.writable_armed = false;
      loop_.Modify(c.fd, Events(c), &c);
    }
    return;
  }
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
      owner_.FreeClient(c);
      return;
    }
    c.out.Consume(static_cast<size_t>(n));
    stats_.total_net_output_bytes += static_cast<uint64_t>(n);
    stats_.total_writes_processed++;
    if (c.replica) [[unlikely]]
      stats_.total_net_repl_output_bytes += static_cast<uint64_t>(n);
    c.last_interaction_ms = loop_.iteration_ms();
  }
  if (c.repl_pump != nullptr && c.repl_pump->paused && c.out.size() < kPumpBound / 2) [[unlikely]] {
    // (Its snapshot's thread may write again: the pump reads on.)
    c.repl_pump->paused = false;
    loop_.Add(c.repl_pump->fd, EPOLLIN, c.repl_pump.get());
  }
  if (c.out.empty()) {
    c.out.ShrinkIfIdle(kIdleBufferKeep);
    // QUIT or a protocol error: closed once every reply is out (those of
    // commands still running on another worker included).
    if (c.close_after_reply && !c.batch_in_flight && c.open_batch == nullptr) {
      owner_.FreeClient(c);
      return;
    }
    if (c.writable_armed) {
      c.writable_armed = false;
      loop_.Modify(c.fd, Events(c), &c);
    }
  } else if (!c.writable_armed) {
    c.writable_armed = true;
    loop_.Modify(c.fd, Events(c), &c);
  }
}

void ClientIo::ApplyConfig() {
  obuf_check_from_ = UINT64_MAX;
  for (int cls : {Config::kNormalClients, Config::kReplicaClients, Config::kPubsubClients}) {
    const Config::OutputBufferLimit& l = server_.config().output_buffer_limits[cls];
    if (l.hard != 0) obuf_check_from_ = std::min(obuf_check_from_, l.hard);
    if (l.soft != 0) obuf_check_from_ = std::min(obuf_check_from_, l.soft);
  }
}

// Redis's checkClientOutputBufferLimits (a replica is of the replica
// class, a client with subscriptions of the pubsub class):
// over the hard limit at once, over the soft one when it has stayed over it
// for more than soft_seconds (judged when replies are added, as Redis does).
// A client of this worker is closed at once; by a command holding this
// worker (PUBLISH from another), when the worker gets its shard back.
bool ClientIo::CheckOutputLimit(Client& c, bool own_thread) {
  const Config::OutputBufferLimit& l =
      server_.config().output_buffer_limits[c.replica             ? Config::kReplicaClients
                                            : c.subs != nullptr ? Config::kPubsubClients
                                                                : Config::kNormalClients];
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

void ClientIo::CloseOverLimit(Client& c, bool own_thread) {
  std::string info = server_.ClientInfoLine(c, UnixTimeMs());
  if (!info.empty() && info.back() == '\n') info.pop_back();
  LOG_WARNING("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info.c_str());
  stats_.client_output_buffer_limit_disconnections++;
  if (own_thread) {
    owner_.FreeClient(c);
  } else {
    owner_.RequestKill(c.id);
  }
}

int ClientIo::StartPump(Client& c) {
  // A socketpair rather than a pipe: the snapshot's side shuts it down to
  // stop (BgSave::Abort, ReplicationPrimary::Detach), as it does a socket.
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  c.repl_pump = std::make_unique<SnapshotPump>(&c, sv[0]);
  if (!loop_.Add(sv[0], EPOLLIN, c.repl_pump.get())) {
    close(sv[0]);
    close(sv[1]);
    c.repl_pump.reset();
    return -1;
  }
  return sv[1];
}

void ClientIo::Pump(Client& c) {
  SnapshotPump& p = *c.repl_pump;
  if (c.closed || p.fd < 0 || p.paused) return;
  while (c.out.size() < kPumpBound) {
    Buffer& b = c.out.bytes();
    char* dst = b.Reserve(kReadChunk * 4);
    const ssize_t n = read(p.fd, dst, std::min(b.writable(), kReadChunk * 4));
    if (n > 0) {
      b.Commit(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // The far end closed: the snapshot is all here (or its thread failed,
    // and the sync's end closes the client).
    EndPump(c);
    break;
  }
  if (p.fd >= 0 && c.out.size() >= kPumpBound) {
    // Not read again until the client's output drains (Flush): the
    // snapshot's thread waits for room meanwhile, up to repl-timeout.
    p.paused = true;
    loop_.Remove(p.fd);
  }
  QueueWrite(c);
}

void ClientIo::EndPump(Client& c) {
  SnapshotPump& p = *c.repl_pump;
  StopPump(c);
  if (!p.after.empty()) {
    c.out.Append(p.after);
    std::string().swap(p.after);
  }
  if (p.close_at_end) c.close_after_reply = true;  // (rdb-only: all it asked for is out)
  QueueWrite(c);
}

void ClientIo::StopPump(Client& c) {
  if (!c.pumping()) return;
  SnapshotPump& p = *c.repl_pump;
  if (!p.paused) loop_.Remove(p.fd);
  close(p.fd);
  p.fd = -1;
  p.paused = false;
}

ssize_t ClientIo::WriteSocket(Client& c, const char* p, size_t n) {
  if (c.tls != nullptr) return c.tls->Write(p, n);
  return write(c.fd, p, n);
}

uint32_t ClientIo::Events(const Client& c) {
  const bool out = c.writable_armed || (c.tls != nullptr && c.tls->wants_write());
  return (c.read_closed || c.reading_held ? 0u : static_cast<uint32_t>(EPOLLIN)) |
         (out ? static_cast<uint32_t>(EPOLLOUT) : 0u);
}

void ClientIo::SetReadingHeld(Client& c, bool hold) {
  c.reading_held = hold;
  loop_.Modify(c.fd, Events(c), &c);
}

}  // namespace peregrine
