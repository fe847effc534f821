// Commands run as Redis runs those of its AOF client and of a replica's
// master client: no reply kept, nothing blocks, nothing expires (the
// source says when keys went), every shard held by the caller.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/buffer.h"
#include "server/client.h"

namespace peregrine {

class Server;
class Worker;
struct CommandSpec;

class CommandReplayer {
 public:
  struct Options {
    bool scripts = true;  // EVAL / FCALL / SCRIPT LOAD run (the AOF fuzzer skips them)
    // The commands are logged as any client's (a replica's own
    // append-only file); the start-up load logs nothing.
    bool logged = false;
    // PUBLISH and SPUBLISH run too (a replica's stream: its subscribers
    // hear what its primary's do, as in Redis).
    bool publishes = false;
    // Relative deadlines are made absolute with the clock as they run
    // (SET EX/PX, SETEX, PSETEX, EXPIRE, PEXPIRE, GETEX EX/PX, RESTORE
    // without ABSTTL): a primary before Redis 7 sends them as given, and
    // the commands run with no clock (nothing counts as expired).
    bool absolute_deadlines = false;
  };
  CommandReplayer(Server& server, Worker& worker, bool scripts)
      : CommandReplayer(server, worker, Options{.scripts = scripts}) {}
  CommandReplayer(Server& server, Worker& worker, Options options);

  // Runs one command (`found`: its table entry when the caller looked it
  // up already). False for one the server does not know (nothing ran).
  bool Run(std::span<const std::string_view> args, const CommandSpec* found = nullptr);
  // The command with its relative deadline made absolute at `now_ms` (as
  // Redis 7 propagates it): *out views `args`, *when and literals; false
  // when it has none.
  static bool AbsoluteDeadline(std::span<const std::string_view> args, int64_t now_ms, std::string* when,
                               std::vector<std::string_view>* out);
  // A transaction of the source (MULTI ... EXEC): its commands are logged
  // as one (options.logged), as the source had them.
  void BeginTransaction();
  void EndTransaction();
  // The database the commands run in (SELECT changes it).
  int db() const;
  void set_db(int db);

 private:
  Server& server_;
  Worker& worker_;
  Client client_;
  Options options_;
  bool in_transaction_ = false;
  std::string when_;                        // scratch: a rewritten deadline
  std::vector<std::string_view> rewritten_;  // and the command around it
  Buffer out_;
  std::vector<size_t> keys_;  // scratch: the running command's key positions
};

}  // namespace peregrine
