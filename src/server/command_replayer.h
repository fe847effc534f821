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
  };
  CommandReplayer(Server& server, Worker& worker, bool scripts)
      : CommandReplayer(server, worker, Options{.scripts = scripts}) {}
  CommandReplayer(Server& server, Worker& worker, Options options);

  // Runs one command. False for one the server does not know (nothing ran).
  bool Run(std::span<const std::string_view> args);
  // The database the commands run in (SELECT changes it).
  int db() const;
  void set_db(int db);

 private:
  Server& server_;
  Worker& worker_;
  Client client_;
  Options options_;
  Buffer out_;
  std::vector<size_t> keys_;  // scratch: the running command's key positions
};

}  // namespace peregrine
