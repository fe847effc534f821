// MONITOR's lines and their way to the monitoring clients (see monitor.h).
#include "server/monitor.h"

#include <algorithm>
#include <charconv>
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
  std::string line;
  AppendLine(&line, now_us, db, origin, {}, spec, args);
  return line;
}

// "+<s>.<us> [<db> <origin>] "arg" ...": written in place, numbers by hand
// (a line per command while anyone monitors: issue #40 bounds its cost).
void MonitorFeed::AppendLine(std::string* out, int64_t now_us, int db, std::string_view origin,
                             std::string_view origin_more, const CommandSpec& spec,
                             std::span<const std::string_view> args) {
  char head[48];
  char* p = head;
  *p++ = '+';
  p = std::to_chars(p, head + sizeof(head), now_us / 1000000).ptr;
  *p++ = '.';
  int64_t us = now_us % 1000000;
  for (int i = 5; i >= 0; i--, us /= 10) p[i] = static_cast<char>('0' + us % 10);
  p += 6;
  *p++ = ' ';
  *p++ = '[';
  p = std::to_chars(p, head + sizeof(head), db).ptr;
  *p++ = ' ';
  out->append(head, static_cast<size_t>(p - head));
  *out += origin;
  *out += origin_more;
  *out += "] ";
  const std::vector<bool> redacted = SlowLog::Redacted(spec, args);
  for (size_t i = 0; i < args.size(); i++) {
    if (i > 0) *out += ' ';
    AppendRepr(out, i < redacted.size() && redacted[i] ? std::string_view("(redacted)") : args[i]);
  }
  *out += "\r\n";
}

void MonitorFeed::Feed(const Client& c, int db, const CommandSpec& spec, std::span<const std::string_view> args) {
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  if (c.is_script)
    AppendLine(&pending_, now_us, db, "lua", {}, spec, args);
  else if (c.is_unix)
    AppendLine(&pending_, now_us, db, "unix:", worker_.server_.config().unixsocket, spec, args);
  else
    AppendLine(&pending_, now_us, db, c.addr, {}, spec, args);
}

void MonitorFeed::Deliver() {
  // (Two buffers that keep their room: no allocation per delivery.)
  delivering_.swap(pending_);
  for (uint32_t w = 0; w < worker_.nworkers_; w++)
    if (w != worker_.index_ && worker_.server_.worker(w).monitor().count() > 0)
      worker_.router_.Send(w, new MonitorMail(delivering_));
  if (count() > 0) DeliverHere(delivering_);
  delivering_.clear();
}

void MonitorFeed::DeliverHere(std::string_view lines) {
  // (A copy: a monitor over its output limit is closed, and leaves the list.)
  ids_.assign(monitors_.begin(), monitors_.end());
  for (uint64_t id : ids_) {
    auto it = worker_.clients_.find(id);
    if (it == worker_.clients_.end() || it->second->closed) continue;
    Client& c = *it->second;
    c.out.Append(lines);
    if (!worker_.io_.OverOutputLimit(c)) worker_.io_.QueueWrite(c);
  }
}

}  // namespace peregrine
