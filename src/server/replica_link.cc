// The replica's link thread (see replica_link.h). Log texts are Redis's
// (replication.c), so that what an operator greps for is there.
#include "server/replica_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "net/event_loop.h"
#include "net/socket.h"
#include "persist/aof_format.h"
#include "server/log.h"
#include "server/supervise.h"

namespace peregrine {

namespace {

// Bytes handed to worker 0 and not yet applied past which the thread stops
// reading (the primary's output limit for replicas then bounds the rest).
constexpr size_t kMaxQueued = 64u << 20;
constexpr size_t kReadSize = 256u << 10;
constexpr size_t kMaxPush = 4u << 20;

}  // namespace

const char* ReplicaLink::StateName(State s) {
  switch (s) {
    case State::kConnect: return "connect";
    case State::kConnecting: return "connecting";
    case State::kHandshake: return "handshake";
    case State::kTransfer: return "sync";
    case State::kConnected: return "connected";
  }
  return "none";
}

ReplicaLink::ReplicaLink(Settings settings, std::string replid, uint64_t offset, std::function<void()> wake)
    : settings_(std::move(settings)), wake_(std::move(wake)), replid_(std::move(replid)), offset_(offset) {
  status_.offset = status_.read_offset = offset;
  timeout_s_.store(settings_.timeout_s, std::memory_order_relaxed);
  diskless_load_.store(settings_.diskless_load, std::memory_order_relaxed);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

ReplicaLink::~ReplicaLink() {
  Stop();
  ::close(wake_fd_);
}

void ReplicaLink::Start() {
  LOG_NOTICE("Connecting to MASTER %s:%d", settings_.host.c_str(), settings_.port);
  thread_ = std::thread([this] { Main(); });
}

void ReplicaLink::Stop() {
  {
    // (Under the lock: a waiter that has just found stop_ false is then
    // asleep before the notify below, and wakes.)
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_release);
  }
  WakeThread();
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    const int fd = fd_.load(std::memory_order_acquire);
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);  // wakes its poll
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (const Event& ev : events_)
    if (ev.kind == Event::Kind::kFullSync) {
      if (ev.fd >= 0)
        ::close(ev.fd);
      else
        ::unlink(ev.data.c_str());
    }
  events_.clear();
}

void ReplicaLink::UpdateSettings(const std::string& masteruser, const std::string& masterauth, int timeout_s) {
  std::lock_guard<std::mutex> lock(mu_);
  settings_.masteruser = masteruser;
  settings_.masterauth = masterauth;
  settings_.timeout_s = timeout_s;
  timeout_s_.store(timeout_s, std::memory_order_relaxed);
}

// --- Worker 0's side ---

std::vector<ReplicaLink::Event> ReplicaLink::TakeEvents() {
  std::lock_guard<std::mutex> lock(mu_);
  told_.store(false, std::memory_order_release);
  applying_ = true;
  std::vector<Event> out;
  out.swap(events_);
  return out;
}

void ReplicaLink::Applied(const std::string& replid, uint64_t offset) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    replid_ = replid;
    offset_ = offset;
    status_.offset = offset;
    applying_ = false;
  }
  cv_.notify_all();
}

void ReplicaLink::LoadDone(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    load_result_ = ok ? 1 : 0;
  }
  cv_.notify_all();
}

void ReplicaLink::Drop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop_ = true;
  }
  WakeThread();
  std::lock_guard<std::mutex> lock(write_mu_);
  const int fd = fd_.load(std::memory_order_acquire);
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

void ReplicaLink::RequestAck() {
  ack_wanted_.store(true, std::memory_order_release);
  WakeThread();
}

void ReplicaLink::WakeThread() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void ReplicaLink::SendAck() {
  uint64_t offset;
  {
    std::lock_guard<std::mutex> lock(mu_);
    offset = offset_;
  }
  std::string bytes;
  const std::string n = std::to_string(offset);
  const int64_t fsynced = fsynced_.load(std::memory_order_relaxed);
  if (fsynced >= 0) {
    const std::string f = std::to_string(fsynced);
    AppendRespCommand(&bytes, {"REPLCONF", "ACK", n, "FACK", f});
  } else {
    AppendRespCommand(&bytes, {"REPLCONF", "ACK", n});
  }
  SendAll(bytes);
}

ReplicaLink::Status ReplicaLink::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

// --- The thread ---

void ReplicaLink::Push(Event ev) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (ev.kind == Event::Kind::kBytes) {
      status_.read_offset += ev.data.size();
      if (!events_.empty() && events_.back().kind == Event::Kind::kBytes) {
        events_.back().data += ev.data;
      } else {
        events_.push_back(std::move(ev));
      }
    } else {
      events_.push_back(std::move(ev));
    }
  }
  told_.store(true, std::memory_order_release);
  wake_();
}

void ReplicaLink::SetState(State s) {
  const bool up = s == State::kConnected;
  const int fd = up ? fd_.load(std::memory_order_acquire) : -1;
  std::string addr = fd >= 0 ? PeerAddress(fd) : std::string(), laddr = fd >= 0 ? LocalAddress(fd) : std::string();
  std::lock_guard<std::mutex> lock(mu_);
  status_.state = s;
  if (status_.up && !up) status_.down_since_ms = UnixTimeMs();
  status_.up = up;
  status_.fd = fd;
  status_.addr = std::move(addr);
  status_.laddr = std::move(laddr);
  up_.store(up, std::memory_order_relaxed);
  status_.syncing = s == State::kTransfer;
}

bool ReplicaLink::Sleep(int ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_.load(std::memory_order_acquire); });
  return !stop_.load(std::memory_order_acquire);
}

void ReplicaLink::CloseSocket() {
  std::lock_guard<std::mutex> lock(write_mu_);
  tls_.reset();
  const int fd = fd_.exchange(-1);
  if (fd >= 0) ::close(fd);
}

void ReplicaLink::Main() {
  while (!stop_.load(std::memory_order_acquire)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop_ = false;
    }
    in_.clear();
    Session();
    CloseSocket();
    if (settings_.failover) {
      // (The failover's PSYNC got no +CONTINUE / +FULLRESYNC: it is over.)
      Push(Event{Event::Kind::kRefused, {}, {}, 0});
      break;
    }
    const bool was_up = status().up;
    SetState(State::kConnect);
    Push(Event{Event::Kind::kDown, {}, {}, 0});
    if (stop_.load(std::memory_order_acquire) || settings_.connected_fd >= 0) break;
    if (was_up) LOG_NOTICE("Connection with master lost.");
    if (!Sleep(1000)) break;
    LOG_NOTICE("Connecting to MASTER %s:%d", settings_.host.c_str(), settings_.port);
  }
  finished_.store(true, std::memory_order_release);
}

void ReplicaLink::Session() {
  SetState(State::kConnecting);
  if (!Connect()) return;
  LOG_NOTICE("MASTER <-> REPLICA sync started");
  SetState(State::kHandshake);
  std::string reply;
  if (!Handshake(&reply)) return;
  // A failover's PSYNC answered: the target took over; from now on the
  // link is an ordinary one (reconnects ask without FAILOVER).
  if (settings_.failover && reply.starts_with("+FULLRESYNC")) Push(Event{Event::Kind::kAccepted, {}, {}, 0});
  if (reply.starts_with("+FULLRESYNC") || reply.starts_with("+CONTINUE")) settings_.failover = false;
  if (reply.starts_with("+FULLRESYNC")) {
    // "+FULLRESYNC <replid> <offset>"
    char id[41] = {0};
    unsigned long long offset = 0;
    if (std::sscanf(reply.c_str(), "+FULLRESYNC %40s %llu", id, &offset) != 2 || std::strlen(id) != 40) {
      LOG_WARNING("Master replied with wrong +FULLRESYNC syntax.");
      return;
    }
    LOG_NOTICE("Full resync from master: %s:%llu", id, offset);
    if (!ReceiveSnapshot(id, offset)) return;
  } else if (reply.starts_with("+CONTINUE")) {
    std::string id;
    if (reply.size() >= 10 + 40) id = reply.substr(10, 40);
    LOG_NOTICE("Successful partial resynchronization with master.");
    Push(Event{Event::Kind::kContinue, {}, id, 0});
    LOG_NOTICE("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    supervise::Status(
        "MASTER <-> REPLICA sync: Partial Resynchronization accepted. Ready to accept connections in read-write "
        "mode.");
  } else if (reply.starts_with("-NOMASTERLINK") || reply.starts_with("-LOADING")) {
    LOG_NOTICE("Master is currently unable to PSYNC but should be in the future: %s", reply.c_str());
    return;
  } else {
    LOG_WARNING("Unexpected reply to PSYNC from master: %s", reply.c_str());
    return;
  }
  SetState(State::kConnected);
  Stream();
}

bool ReplicaLink::Connect() {
  if (settings_.connected_fd >= 0) {
    fd_.store(settings_.connected_fd, std::memory_order_release);
    return true;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(settings_.port);
  if (getaddrinfo(settings_.host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    LOG_WARNING("Unable to connect to MASTER: can't resolve %s", settings_.host.c_str());
    return false;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) break;
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0) {
    LOG_WARNING("Unable to connect to MASTER: %s", std::strerror(errno));
    return false;
  }
  fd_.store(fd, std::memory_order_release);
  if (stop_.load(std::memory_order_acquire)) return false;
  pollfd p{fd, POLLOUT, 0};
  const int64_t deadline = MonotonicUs() + int64_t{timeout_s_.load(std::memory_order_relaxed)} * 1000000;
  while (::poll(&p, 1, 100) == 0) {
    if (stop_.load(std::memory_order_acquire)) return false;
    if (MonotonicUs() >= deadline) {
      LOG_WARNING("Timeout connecting to the MASTER...");
      return false;
    }
  }
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    LOG_WARNING("Error condition on socket for SYNC: %s", std::strerror(err != 0 ? err : errno));
    return false;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  if (settings_.tls) {
    // (The handshake happens with the first write: the PING.)
    std::string err;
    if (tls_ctx_ == nullptr) tls_ctx_ = TlsContext::Create(settings_.tls_settings, &err, /*client=*/true);
    if (tls_ctx_ == nullptr) {
      LOG_WARNING("Unable to connect to MASTER: %s", err.c_str());
      return false;
    }
    std::lock_guard<std::mutex> lock(write_mu_);
    tls_ = std::make_unique<TlsSession>(*tls_ctx_, fd, /*client=*/true);
  }
  std::lock_guard<std::mutex> lock(mu_);
  status_.last_io_ms = UnixTimeMs();
  return true;
}

ssize_t ReplicaLink::IoRead(char* buf, size_t n) {
  const ssize_t got = tls_ != nullptr ? tls_->Read(buf, n) : ::read(fd_.load(std::memory_order_acquire), buf, n);
  if (got > 0 && settings_.bytes_in != nullptr) settings_.bytes_in->fetch_add(static_cast<uint64_t>(got));
  return got;
}

ssize_t ReplicaLink::IoWrite(const char* buf, size_t n) {
  if (tls_ != nullptr) return tls_->Write(buf, n);
  return ::send(fd_.load(std::memory_order_acquire), buf, n, MSG_NOSIGNAL);
}

short ReplicaLink::WaitEvents(bool reading) const {
  // (TLS may need the other direction first: a handshake, a renegotiation.)
  if (tls_ == nullptr) return reading ? POLLIN : POLLOUT;
  return tls_->wants_write() ? POLLOUT : POLLIN;
}

bool ReplicaLink::SendAll(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(write_mu_);
  const int fd = fd_.load(std::memory_order_acquire);
  if (fd < 0) return false;
  size_t done = 0;
  const int64_t deadline = MonotonicUs() + int64_t{timeout_s_.load(std::memory_order_relaxed)} * 1000000;
  while (done < bytes.size()) {
    const ssize_t n = IoWrite(bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, WaitEvents(/*reading=*/false), 0};
      ::poll(&p, 1, 100);
      if (stop_.load(std::memory_order_acquire) || MonotonicUs() >= deadline) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool ReplicaLink::ReadMore() {
  const int fd = fd_.load(std::memory_order_acquire);
  if (fd < 0) return false;
  const int64_t deadline = MonotonicUs() + int64_t{timeout_s_.load(std::memory_order_relaxed)} * 1000000;
  for (;;) {
    if (stop_.load(std::memory_order_acquire)) return false;
    const size_t old = in_.size();
    in_.resize(old + kReadSize);
    const ssize_t n = IoRead(in_.data() + old, kReadSize);
    in_.resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      status_.last_io_ms = UnixTimeMs();
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (MonotonicUs() >= deadline) {
      LOG_WARNING("Timeout receiving from the MASTER...");
      return false;
    }
    pollfd p{fd, WaitEvents(/*reading=*/true), 0};
    ::poll(&p, 1, 100);
  }
}

bool ReplicaLink::ReadLine(std::string* line) {
  for (;;) {
    const size_t nl = in_.find('\n');
    if (nl != std::string::npos) {
      line->assign(in_, 0, nl > 0 && in_[nl - 1] == '\r' ? nl - 1 : nl);
      in_.erase(0, nl + 1);
      return true;
    }
    if (in_.size() > 64 * 1024 || !ReadMore()) return false;
  }
}

bool ReplicaLink::Command(const std::vector<std::string>& args, std::string* reply) {
  std::string bytes;
  std::vector<std::string_view> views(args.begin(), args.end());
  AppendRespCommand(&bytes, views);
  if (!SendAll(bytes)) return false;
  do {
    if (!ReadLine(reply)) return false;
  } while (reply->empty());  // (a primary's newlines while it prepares)
  return true;
}

bool ReplicaLink::Handshake(std::string* psync_reply) {
  Settings s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = settings_;
  }
  std::string reply;
  if (!Command({"PING"}, &reply)) return false;
  // (An error of authentication is fine here: AUTH comes next.)
  if (reply[0] == '-' && !reply.starts_with("-NOAUTH") && !reply.starts_with("-NOPERM") &&
      !reply.starts_with("-ERR operation not permitted")) {
    LOG_WARNING("Error reply to PING from master: '%s'", reply.c_str());
    return false;
  }
  LOG_NOTICE("Master replied to PING, replication can continue...");
  if (!s.masterauth.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!s.masteruser.empty()) auth.push_back(s.masteruser);
    auth.push_back(s.masterauth);
    if (!Command(auth, &reply)) return false;
    if (reply[0] == '-') {
      LOG_WARNING("Unable to AUTH to MASTER: %s", reply.c_str());
      return false;
    }
  }
  if (!Command({"REPLCONF", "listening-port", std::to_string(s.listening_port)}, &reply)) return false;
  if (reply[0] == '-')
    LOG_NOTICE("(Non critical) Master does not understand REPLCONF listening-port: %s", reply.c_str());
  if (!s.announce_ip.empty()) {
    if (!Command({"REPLCONF", "ip-address", s.announce_ip}, &reply)) return false;
    if (reply[0] == '-')
      LOG_NOTICE("(Non critical) Master does not understand REPLCONF ip-address: %s", reply.c_str());
  }
  if (!Command({"REPLCONF", "capa", "eof", "capa", "psync2"}, &reply)) return false;
  if (reply[0] == '-') LOG_NOTICE("(Non critical) Master does not understand REPLCONF capa: %s", reply.c_str());
  // The history to continue: what worker 0 has applied once it has
  // applied everything the last link brought.
  std::string replid;
  uint64_t offset;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stop_.load(std::memory_order_acquire) || (events_.empty() && !applying_); });
    if (stop_.load(std::memory_order_acquire)) return false;
    replid = replid_;
    offset = offset_;
    status_.read_offset = offset;
  }
  std::vector<std::string> psync{"PSYNC", "?", "-1"};
  if (s.failover) psync.push_back("FAILOVER");
  if (!replid.empty()) {
    psync[1] = replid;
    psync[2] = std::to_string(offset + 1);
    LOG_NOTICE("Trying a partial resynchronization (request %s:%llu).", replid.c_str(),
               static_cast<unsigned long long>(offset + 1));
  } else {
    LOG_NOTICE("Partial resynchronization not possible (no cached master)");
  }
  return Command(psync, psync_reply);
}

void ReplicaLink::Stream() {
  // (Bytes that came with the snapshot's end or +CONTINUE first.)
  if (!in_.empty()) {
    Push(Event{Event::Kind::kBytes, std::move(in_), {}, 0});
    in_.clear();
  }
  SendAck();
  int64_t last_ack_ms = UnixTimeMs();
  const int fd = fd_.load(std::memory_order_acquire);
  std::unique_ptr<char[]> buf(new char[kReadSize]);  // (not zeroed per read)
  for (;;) {
    int timeout_s;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Worker 0 behind: wait before reading more.
      cv_.wait_for(lock, std::chrono::milliseconds(100), [&] {
        size_t queued = 0;
        for (const Event& ev : events_) queued += ev.data.size();
        return stop_.load(std::memory_order_acquire) || drop_ || queued < kMaxQueued;
      });
      if (stop_.load(std::memory_order_acquire) || drop_) return;
      timeout_s = timeout_s_.load(std::memory_order_relaxed);
      if (UnixTimeMs() - status_.last_io_ms > int64_t{timeout_s} * 1000) {
        LOG_WARNING("MASTER timeout: no data nor PING received...");
        return;
      }
    }
    const int64_t now = UnixTimeMs();
    if (now - last_ack_ms >= 1000 || ack_wanted_.exchange(false, std::memory_order_acq_rel)) {
      SendAck();
      last_ack_ms = now;
    }
    if (!Buffered()) {
      pollfd p[2] = {{fd, WaitEvents(/*reading=*/true), 0}, {wake_fd_, POLLIN, 0}};
      const int r = ::poll(p, 2, 100);
      if (p[1].revents & POLLIN) {
        uint64_t n;
        [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &n, sizeof(n));
      }
      if (r <= 0 || !(p[0].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR))) continue;
    }
    // What the socket has, up to kMaxPush, as one event: fewer wake-ups of
    // worker 0, and larger batches for it to apply.
    std::string bytes;
    bool closed = false;
    while (bytes.size() < kMaxPush) {
      const ssize_t n = IoRead(buf.get(), kReadSize);
      if (n > 0) {
        bytes.append(buf.get(), static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
      break;
    }
    if (!bytes.empty()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        status_.last_io_ms = UnixTimeMs();
      }
      Push(Event{Event::Kind::kBytes, std::move(bytes), {}, 0});
    }
    if (closed) return;
  }
}

}  // namespace peregrine
