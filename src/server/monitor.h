// MONITOR (docs/monitor.md): clients that see every command the server
// runs, one line each, as Redis 7.2 writes them:
//
//   +1339518083.107412 [0 127.0.0.1:60866] "set" "k" "v"
//
// (the time, the database, the client's address, "unix:<socket>" or "lua"
// for a script's calls, then the arguments quoted, passwords redacted).
//
// Each worker has a MonitorFeed. A command's line is written on the thread
// that ran it, when it has run (a script's and a function's before the
// commands they call, as Redis's), into that thread's pending text; the
// worker hands the text over when the command ends, with its keyspace
// events: to its own monitors at once, to each other worker with monitors
// in one message. The rings between workers are FIFO, so a monitor sees a
// worker's commands in the order they ran, and a key's commands (which run
// on its shard's worker, or on one holding it) in order.
//
// Threading: the pending text and the monitor list are the worker's
// thread's; count() (its monitors) is read by other workers to know whether
// to send it lines; the server-wide count (ServerState::monitors) tells a
// command whether to write a line at all: one relaxed load while nobody
// monitors.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

class Worker;
struct Client;
struct CommandSpec;

class MonitorFeed {
 public:
  explicit MonitorFeed(Worker& worker) : worker_(worker) {}

  // MONITOR from client `c` of this worker: it gets every line from now on.
  void Start(Client& c);
  // Its end (RESET, disconnection).
  void Stop(Client& c);
  uint32_t count() const { return count_.load(std::memory_order_relaxed); }

  // The line of command `args` that client `c` ran (a proxy standing for
  // another worker's client carries its address; a script's client is
  // "lua"), in database `db`.
  void Feed(const Client& c, int db, const CommandSpec& spec, std::span<const std::string_view> args);
  bool pending() const { return !pending_.empty(); }
  // The pending lines to every monitor (this worker's, other workers' by mail).
  void Deliver();
  // Lines from another worker, to this worker's monitors.
  void DeliverHere(std::string_view lines);

  // The line itself (what Feed writes): the time in microseconds.
  static std::string Line(int64_t now_us, int db, std::string_view origin, const CommandSpec& spec,
                          std::span<const std::string_view> args);
  static void AppendLine(std::string* out, int64_t now_us, int db, std::string_view origin,
                         std::string_view origin_more, const CommandSpec& spec, std::span<const std::string_view> args);

 private:
  Worker& worker_;
  std::string pending_, delivering_;
  std::vector<uint64_t> ids_;  // (DeliverHere's copy of monitors_)
  std::vector<uint64_t> monitors_;  // this worker's monitoring clients, by id
  std::atomic<uint32_t> count_{0};
};

}  // namespace peregrine
