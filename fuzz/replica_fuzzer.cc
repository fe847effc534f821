// libFuzzer target over a replica's input path (issue #38): the fuzzer's
// bytes are what a primary sends on the replication link — the replies to
// the handshake (PING, then the two REPLCONFs), the PSYNC reply (+FULLRESYNC
// or +CONTINUE or an error), a snapshot in either framing ($<length> or
// $EOF:<mark>) with the RDB file inside, and the stream of commands after
// it — read by the link's thread (ReplicaLink) on one end of a Unix
// socketpair, loaded and run by worker 0 as in the server, with nothing
// mocked. This function writes the input into the other end (reading and
// dropping what the replica sends: its handshake, its ACKs), drives worker
// 0's loop, and ends when the link has ended and worker 0 has applied all
// it brought. A fresh one-worker server per input.
//
// The first byte picks how the rest is cut into writes (as the connection
// fuzzer: 1, 2, 3, 5, 8, 13 or 64 bytes, or all at once), and, with its high
// bit and all at once, a diskless load (repl-diskless-load swapdb: worker 0
// loads from the link's pipe as the snapshot comes; written in pieces, the
// input would wait for worker 0, which waits for the load, until the link's
// timeout). Built with ASan
// and UBSan (make fuzz); a crash, a leak, a sanitizer report, or a link
// that does not end within 20 s of its input's end (abort below) is a
// finding.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "commands/all_commands.h"
#include "net/event_loop.h"
#include "server/config.h"
#include "server/server.h"
#include "server/worker.h"

namespace {

constexpr size_t kChunkSizes[] = {1, 2, 3, 5, 8, 13, 64, SIZE_MAX};

peregrine::Config FuzzConfig(bool diskless) {
  peregrine::Config c;
  c.repl_diskless_load = diskless ? 2 : 0;
  c.port = 0;
  c.bind.clear();
  c.threads = 1;
  c.loglevel = "nothing";
  c.save_params.clear();
  // The snapshot becomes this file (and its temporary one is made here).
  c.dbfilename = "peregrine-fuzz-replica.rdb";
  c.repl_timeout = 5;
  c.script_instruction_limit = 2'000'000;
  c.busy_reply_threshold = 0;
  c.lua_maxmemory = 64 << 20;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = kChunkSizes[data[0] % std::size(kChunkSizes)];
  const bool diskless = (data[0] & 0x80) != 0 && chunk == SIZE_MAX;
  data++;
  size--;

  peregrine::Server server(FuzzConfig(diskless), peregrine::AllCommands(), "", "peregrine-fuzz");
  std::string err;
  if (!server.InitWorkers(&err)) {
    std::fprintf(stderr, "InitWorkers: %s\n", err.c_str());
    std::abort();
  }
  server.ApplyRuntimeConfig();  // the log level ("nothing")
  peregrine::Worker& worker = server.worker(0);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    std::perror("socketpair");
    std::abort();
  }
  // (Room for a whole input: a diskless load's is written before worker 0
  // runs, as it blocks on the load.)
  const int room = 8 << 20;
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &room, sizeof(room));
  setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &room, sizeof(room));
  // (No worker runs yet: this thread is worker 0's.)
  server.BecomeReplica("fuzz", 1, sv[0]);
  peregrine::ReplicaLink* link = server.replica_link();

  size_t off = 0;
  bool shut = false;
  int64_t eof_ms = 0;
  char sink[64 * 1024];
  for (;;) {
    if (off < size) {
      const ssize_t n = send(sv[1], data + off, std::min(chunk, size - off), MSG_NOSIGNAL);
      if (n > 0) off += static_cast<size_t>(n);
      if (n < 0 && errno == EPIPE) off = size;  // (the link has ended already)
    }
    if (off == size && !shut) {
      shutdown(sv[1], SHUT_WR);
      shut = true;
      eof_ms = peregrine::MonotonicMs();
    }
    worker.loop().Poll(shut ? 1 : 0);
    while (read(sv[1], sink, sizeof(sink)) > 0) {
    }
    if (shut && link->finished() && !link->told()) break;
    // (A snapshot's load, a long transaction: seconds at most.)
    if (shut && peregrine::MonotonicMs() - eof_ms > 20000) {
      std::fprintf(stderr, "the replica's link did not end within 20 s of the end of its input\n");
      std::abort();
    }
  }
  server.BecomePrimary();  // (joins the link's thread)
  close(sv[1]);
  return 0;
}
