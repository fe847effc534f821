#include "server/metrics_http.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "net/event_loop.h"
#include "net/socket.h"
#include "server/log.h"
#include "server/metrics_text.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

struct MetricsEndpoint::Listener final : IoHandler {
  Listener(MetricsEndpoint* e, int fd) : endpoint(e), fd(fd) {}
  ~Listener() override { close(fd); }
  void OnEvent(uint32_t) override { endpoint->Accept(fd); }
  MetricsEndpoint* endpoint;
  int fd;
};

// One connection: its request's head comes in, the response goes out, then
// it closes (fd -1: a free slot).
struct MetricsEndpoint::Conn final : IoHandler {
  explicit Conn(MetricsEndpoint* e) : endpoint(e) {}
  ~Conn() override {
    if (fd >= 0) close(fd);
  }
  void OnEvent(uint32_t events) override;
  bool Write();
  MetricsEndpoint* endpoint;
  int fd = -1;
  std::string in, out;
  size_t sent = 0;
  bool responding = false;
  int64_t last_progress_ms = 0;
};

struct MetricsEndpoint::Timer final : IoHandler {
  Timer(MetricsEndpoint* e, int fd) : endpoint(e), fd(fd) {}
  ~Timer() override { close(fd); }
  void OnEvent(uint32_t) override {
    uint64_t expirations;
    while (read(fd, &expirations, sizeof(expirations)) == sizeof(expirations)) {
    }
    endpoint->OnTimer();
  }
  MetricsEndpoint* endpoint;
  int fd;
};

namespace {

std::string Response(std::string_view status, std::string_view body, bool head, std::string_view extra = {},
                     std::string_view type = "text/plain; charset=utf-8") {
  std::string out = "HTTP/1.1 ";
  out += status;
  out += "\r\nContent-Type: ";
  out += type;
  out += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  out += extra;
  out += "\r\n";
  if (!head) out += body;
  return out;
}

}  // namespace

std::string MetricsEndpoint::Respond(std::string_view request, const std::function<std::string()>& metrics) {
  // The request line: METHOD SP TARGET SP HTTP/x.y (its headers do not
  // matter: no body is read, the connection closes after the response).
  const std::string_view line = request.substr(0, request.find("\r\n"));
  const size_t sp1 = line.find(' '), sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos ||
      line.substr(sp2 + 1, 5) != "HTTP/" || sp1 == 0 || sp2 == sp1 + 1)
    return Response("400 Bad Request", "Bad Request\n", false);
  const std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) return Response("405 Method Not Allowed", "Method Not Allowed\n", false, "Allow: GET, HEAD\r\n");
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/metrics")
    return Response("200 OK", metrics(), head, {}, "text/plain; version=0.0.4; charset=utf-8");
  if (path == "/")
    return Response("200 OK", "Peregrine: Prometheus metrics at /metrics\n", head);
  return Response("404 Not Found", "Not Found\n", head);
}

std::unique_ptr<MetricsEndpoint> MetricsEndpoint::Start(Server& server, EventLoop& loop,
                                                        const std::vector<std::string>& bind, int port,
                                                        std::string* err) {
  std::unique_ptr<MetricsEndpoint> e(new MetricsEndpoint(server, loop));
  std::string why;
  for (int fd : ListenAll(bind, port, 128, &why)) e->listeners_.push_back(std::make_unique<Listener>(e.get(), fd));
  if (!why.empty() || e->listeners_.empty()) {
    *err = "Failed listening on metrics-port " + std::to_string(port) + ", aborting: " +
           (why.empty() ? "no usable bind address" : why);
    return nullptr;
  }
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (tfd < 0) {
    *err = std::string("metrics-port: timerfd_create: ") + strerror(errno);
    return nullptr;
  }
  e->timer_ = std::make_unique<Timer>(e.get(), tfd);
  for (auto& c : e->conns_) c = std::make_unique<Conn>(e.get());
  for (auto& l : e->listeners_) loop.Add(l->fd, EPOLLIN, l.get());
  loop.Add(tfd, EPOLLIN, e->timer_.get());
  return e;
}

MetricsEndpoint::MetricsEndpoint(Server& server, EventLoop& loop) : server_(server), loop_(loop) {}

MetricsEndpoint::~MetricsEndpoint() {
  for (auto& l : listeners_) loop_.Remove(l->fd);
  for (auto& c : conns_)
    if (c != nullptr && c->fd >= 0) loop_.Remove(c->fd);
  if (timer_ != nullptr) loop_.Remove(timer_->fd);
}

void MetricsEndpoint::Accept(int listen_fd) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // (EAGAIN, or an error the next event retries)
    Conn* slot = nullptr;
    for (auto& c : conns_)
      if (c->fd < 0) {
        slot = c.get();
        break;
      }
    if (slot == nullptr) {
      close(fd);  // (all 16 busy: a scraper retries)
      continue;
    }
    slot->fd = fd;
    slot->in.clear();
    slot->out.clear();
    slot->sent = 0;
    slot->responding = false;
    slot->last_progress_ms = MonotonicMs();
    if (!loop_.Add(fd, EPOLLIN, slot)) {
      Close(*slot);
      continue;
    }
    ArmTimer(true);
  }
}

void MetricsEndpoint::Conn::OnEvent(uint32_t events) {
  if (fd < 0) return;  // (a closed slot's late event)
  if (responding) {
    if (!Write()) endpoint->Close(*this);
    return;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
      last_progress_ms = MonotonicMs();
      const size_t end = in.find("\r\n\r\n");
      if (end != std::string::npos || in.size() > kMaxRequest) {
        out = end == std::string::npos || end > kMaxRequest
                  ? Response("431 Request Header Fields Too Large", "Request Header Fields Too Large\n", false)
                  : Respond(std::string_view(in).substr(0, end), [this] {
                      Server& s = endpoint->server_;
                      // (Made as the INFO command is, holding every shard.)
                      const std::string_view all[] = {"everything"};
                      return PrometheusFromInfo(s.worker(0).InfoHoldingAll(all), s.config().databases,
                                                UnixTimeMs() / 1000);
                    });
        in.clear();
        responding = true;
        if (!Write()) endpoint->Close(*this);
        return;
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (errno == EINTR) continue;
      if (events & (EPOLLHUP | EPOLLERR)) endpoint->Close(*this);
      return;
    }
    endpoint->Close(*this);  // (the peer closed before its request ended, or an error)
    return;
  }
}

// Sends what is left of the response: false once done (or failed), when
// the connection closes; true while it waits to write more.
bool MetricsEndpoint::Conn::Write() {
  while (sent < out.size()) {
    const ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      last_progress_ms = MonotonicMs();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      endpoint->loop_.Modify(fd, EPOLLOUT, this);
      return true;
    }
    return false;
  }
  shutdown(fd, SHUT_WR);
  return false;
}

void MetricsEndpoint::Close(Conn& c) {
  if (c.fd < 0) return;
  loop_.Remove(c.fd);
  close(c.fd);
  c.fd = -1;
  std::string().swap(c.in);
  std::string().swap(c.out);
  for (auto& x : conns_)
    if (x->fd >= 0) return;
  ArmTimer(false);
}

void MetricsEndpoint::OnTimer() {
  const int64_t now = MonotonicMs();
  for (auto& c : conns_)
    if (c->fd >= 0 && now - c->last_progress_ms >= kIdleMs) Close(*c);
}

void MetricsEndpoint::ArmTimer(bool on) {
  if (on == timer_armed_) return;
  timer_armed_ = on;
  itimerspec spec{};
  if (on) spec.it_interval.tv_sec = spec.it_value.tv_sec = 1;
  timerfd_settime(timer_->fd, 0, &spec, nullptr);
}

}  // namespace peregrine
