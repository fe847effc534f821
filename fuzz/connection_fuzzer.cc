// libFuzzer target over the whole request path (issue #6): the fuzzer's bytes
// are what a client sends on a connection of an in-process, one-worker
// server — reading, the RESP and inline parser, command lookup and arity,
// every handler, the reply writer and the writes back — with nothing mocked.
// The connection is one end of a Unix socketpair adopted by the worker; this
// function writes the input into the other end, drives the worker's event
// loop itself (EventLoop::Poll), reads and drops the replies, and closes its
// side. A fresh server per input keeps runs independent and reproducible
// (CONFIG SET, SELECT, the keyspace and SHUTDOWN do not leak into the next
// input).
//
// The first byte picks how the rest is cut into writes (its low three bits:
// 1, 2, 3, 5, 8, 13 or 64 bytes, or all at once), so that every frame also
// arrives split at every point, and the number of workers (bit 3: one, or
// two — then the second runs on its own thread as in the server, keys live
// on either shard, and the remote batches, the borrowing of shards and their
// replies' order are fuzzed too; the harness drives worker 0, which holds the
// connection), and bit 4 a memory limit so small that every write evicts or
// is refused (bits 5-6 the policy: noeviction, allkeys-lru, allkeys-random,
// volatile-ttl), so that eviction runs under arbitrary commands. Bulk
// arguments of 64 bytes or more take the large-argument path (read straight
// into a block of their own), and values of 1 KB or more go out by reference
// (ReplyWriter::BulkLent). Built with
// ASan and UBSan (make fuzz); a crash, a leak, a
// sanitizer report, or a client the server never closes after the end of its
// input (abort below) is a finding.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "net/event_loop.h"
#include "server/config.h"
#include "commands/all_commands.h"
#include "server/server.h"
#include "server/worker.h"

namespace {

using peregrine::Config;
using peregrine::Server;
using peregrine::Worker;

constexpr size_t kChunkSizes[] = {1, 2, 3, 5, 8, 13, 64, SIZE_MAX};

Config FuzzConfig(int threads, uint8_t mode) {
  Config c;
  if (mode & 0x10) {
    static constexpr peregrine::MaxmemoryPolicy kPolicies[] = {
        peregrine::MaxmemoryPolicy::kNoEviction, peregrine::MaxmemoryPolicy::kAllKeysLru,
        peregrine::MaxmemoryPolicy::kAllKeysRandom, peregrine::MaxmemoryPolicy::kVolatileTtl};
    c.maxmemory = 1;
    c.maxmemory_policy = kPolicies[(mode >> 5) & 3];
  }
  c.port = 0;
  c.bind.clear();
  c.threads = threads;
  c.loglevel = "nothing";
  // Small enough that the fuzzer reaches the limits' paths, large enough for
  // real commands.
  c.proto_max_bulk_len = 1024 * 1024;
  c.client_query_buffer_limit = 1024 * 1024;
  // A script that loops for ever stops after a few million instructions
  // (nobody here would send SCRIPT KILL), and never goes busy.
  c.busy_reply_threshold = 0;
  // No snapshots on a schedule; SAVE writes its file here, under a name of
  // its own.
  c.save_params.clear();
  c.dbfilename = "peregrine-fuzz.rdb";
  c.script_instruction_limit = 2'000'000;
  c.lua_maxmemory = 64 << 20;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = kChunkSizes[data[0] % std::size(kChunkSizes)];
  const int threads = (data[0] & 8) != 0 ? 2 : 1;
  const uint8_t mode = data[0];
  data++;
  size--;

  Server server(FuzzConfig(threads, mode), peregrine::AllCommands(), "", "peregrine-fuzz");
  std::string err;
  if (!server.InitWorkers(&err)) {
    std::fprintf(stderr, "InitWorkers: %s\n", err.c_str());
    std::abort();
  }
  server.ApplyRuntimeConfig();  // the log level ("nothing")
  // Bulk arguments from 64 bytes on are read into blocks of their own (32 KB
  // in the server), so that inputs of a few KB reach that path.
  for (int i = 0; i < threads; i++) server.worker(static_cast<uint32_t>(i)).set_big_arg_min(64);
  Worker& worker = server.worker(0);
  std::thread other;
  if (threads > 1) other = std::thread([&server] { server.worker(1).Run(); });

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    std::perror("socketpair");
    std::abort();
  }
  worker.connections().fetch_add(1, std::memory_order_relaxed);  // as the acceptor counts it
  worker.Adopt(sv[0], /*is_unix=*/true, /*id=*/1);

  // Every round writes one chunk (or what fits), lets the worker run once
  // and drains the replies. Once the input is written the write side is shut
  // down: the server must then finish the input and close the connection.
  size_t off = 0;
  bool shut = false;
  int64_t eof_ms = 0;
  char sink[64 * 1024];
  for (;;) {
    if (off < size) {
      const ssize_t n = write(sv[1], data + off, std::min(chunk, size - off));
      if (n > 0) off += static_cast<size_t>(n);
    }
    if (off == size && !shut) {
      shutdown(sv[1], SHUT_WR);
      shut = true;
      eof_ms = peregrine::MonotonicMs();
    }
    // Once all is written, waiting is cheap: what the worker still has to
    // do (buffered input, replies from worker 1) wakes its loop.
    worker.loop().Poll(shut ? 1 : 0);
    while (read(sv[1], sink, sizeof(sink)) > 0) {
    }
    if (worker.clients().empty() || server.stopping()) break;
    // After EOF the server finishes the input and closes the client within
    // milliseconds (worker 1 may be off the CPU for a while: generous).
    if (shut && peregrine::MonotonicMs() - eof_ms > 10000) {
      std::fprintf(stderr, "the server did not close a client within 10 s of the end of its input\n");
      std::abort();
    }
  }
  close(sv[1]);
  if (threads > 1) {
    // Stops both workers as the server does: worker 0's Run() sees the
    // flag at once, closes its clients and answers worker 1 until both
    // have stopped.
    server.RequestShutdown();
    worker.Run();
    other.join();
  }
  return 0;
}
