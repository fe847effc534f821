// MONITOR's lines and their way to the monitoring clients (see monitor.h).
#include "server/monitor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "protocol/parser.h"
#include "server/server.h"
#include "server/slowlog.h"
#include "server/worker.h"

namespace peregrine {

void MonitorFeed::Start(Client& c) {
  c.monitor = true;
  monitors_.push_back(c.id);
  count_.fetch_add(1, std::memory_order_relaxed);
  worker_.server_.monitors().fetch_add(1, std::memory_order_relaxed);
}

void MonitorFeed::Stop(Client& c) {
  if (!c.monitor) return;
  c.monitor = false;
  monitors_.erase(std::remove(monitors_.begin(), monitors_.end(), c.id), monitors_.end());
  count_.fetch_sub(1, std::memory_order_relaxed);
  worker_.server_.monitors().fetch_sub(1, std::memory_order_relaxed);
}

std::string MonitorFeed::Line(int64_t now_us, int db, std::string_view origin, const CommandSpec& spec,
                              std::span<const std::string_view> args) {
  char head[64];
  std::snprintf(head, sizeof(head), "+%lld.%06lld [%d ", static_cast<long long>(now_us / 1000000),
                static_cast<long long>(now_us % 1000000), db);
  std::string line = head;
  line += origin;
  line += "] ";
  const std::vector<bool> redacted = SlowLog::Redacted(spec, args);
  for (size_t i = 0; i < args.size(); i++) {
    if (i > 0) line += ' ';
    line += Repr(redacted[i] ? std::string_view("(redacted)") : args[i]);
  }
  line += "\r\n";
  return line;
}

void MonitorFeed::Feed(const Client& c, int db, const CommandSpec& spec, std::span<const std::string_view> args) {
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  std::string origin;
  if (c.is_script)
    origin = "lua";
  else if (c.is_unix)
    origin = "unix:" + worker_.server_.config().unixsocket;
  else
    origin = c.addr;
  pending_ += Line(now_us, db, origin, spec, args);
}

void MonitorFeed::Deliver() {
  std::string lines;
  lines.swap(pending_);
  for (uint32_t w = 0; w < worker_.nworkers_; w++)
    if (w != worker_.index_ && worker_.server_.worker(w).monitor().count() > 0)
      worker_.router_.Send(w, new MonitorMail(lines));
  if (count() > 0) DeliverHere(lines);
}

void MonitorFeed::DeliverHere(std::string_view lines) {
  // (A copy: a monitor over its output limit is closed, and leaves the list.)
  const std::vector<uint64_t> ids = monitors_;
  for (uint64_t id : ids) {
    auto it = worker_.clients_.find(id);
    if (it == worker_.clients_.end() || it->second->closed) continue;
    Client& c = *it->second;
    c.out.Append(lines);
    if (!worker_.io_.OverOutputLimit(c)) worker_.io_.QueueWrite(c);
  }
}

}  // namespace peregrine
