// The Prometheus endpoint (`metrics-port`, off by default): HTTP/1.1 GET
// /metrics on every bind address, served on worker 0's loop, answers
// INFO EVERYTHING in Prometheus's text format (metrics_text.h), so no
// redis_exporter sidecar is needed. docs/observability.md.
//
// Written here rather than taken from a library: it answers one request per
// connection (Connection: close) to one path, with no body to read, and
// must run on the worker's own epoll loop; an HTTP library would bring its
// own threads or loop for that.
//
// Bad input harms nothing: a request line over 8 KB gets 431, another
// method 405, another path 404, a malformed line 400; at most 16
// connections at once (more are closed at once); one that makes no
// progress for 10 s is closed.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/event_loop.h"

namespace peregrine {

class Server;

class MetricsEndpoint {
 public:
  static constexpr size_t kMaxConnections = 16;
  static constexpr size_t kMaxRequest = 8192;
  static constexpr int64_t kIdleMs = 10000;

  // Listens on `port` at each of `bind` (an address marked '-' may fail),
  // served on `loop` (worker 0's). nullptr with *err set on failure.
  static std::unique_ptr<MetricsEndpoint> Start(Server& server, EventLoop& loop, const std::vector<std::string>& bind,
                                                int port, std::string* err);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The response (status line, headers, body) to one request's head (up
  // to its blank line); `metrics` makes the exposition.
  static std::string Respond(std::string_view request, const std::function<std::string()>& metrics);

 private:
  struct Listener;
  struct Conn;
  struct Timer;
  MetricsEndpoint(Server& server, EventLoop& loop);
  void Accept(int listen_fd);
  void Close(Conn& c);
  void OnTimer();
  void ArmTimer(bool on);

  Server& server_;
  EventLoop& loop_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  // A fixed pool: a closed slot keeps its object (the loop may still hold
  // an event for it in the batch it dispatches; a spurious event finds
  // nothing to read or write) and is reused.
  std::array<std::unique_ptr<Conn>, kMaxConnections> conns_;
  std::unique_ptr<Timer> timer_;
  bool timer_armed_ = false;
};

}  // namespace peregrine
