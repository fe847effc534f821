// maxmemory-clients, Redis 7's client eviction (docs/commands.md, CLIENT
// NO-EVICT): while the memory of the connections (ClientMemory) passes the
// limit, connections are closed, the largest first, except replicas, a replica's link to its
// primary, and those with CLIENT NO-EVICT on. As in Redis, the limit
// counts every client but replicas (NO-EVICT ones too), and eviction goes
// on while the total is at or over it, down to the smallest client if need
// be. Each closed one counts in INFO's evicted_clients and is logged.
//
// With several workers: each publishes the total of its clients and the
// size of its largest evictable one. A worker closes its largest while the
// total over the workers passes the limit and no other worker has a larger
// one, so the largest anywhere goes first, as Redis's memory buckets make
// it. It checks in its cron, 10 times a second (Redis checks before each
// sleep: a client may pass the limit for up to 100 ms here); the figures of
// the other workers are those of their last check.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace peregrine {

struct Client;
class Server;
class Worker;

// What a connection holds, as CLIENT LIST's tot-mem: its buffers (query,
// reply, a large argument read apart), its transaction's queue and watched
// keys, and the Client itself.
uint64_t ClientMemory(const Client& c);
// Whether maxmemory-clients may close it (Redis's: not a replica, not the
// primary's link, not NO-EVICT).
bool Evictable(const Client& c);

class ClientEviction {
 public:
  explicit ClientEviction(size_t workers);
  // Worker `w`'s check: publishes its figures, and closes its largest
  // evictable clients while the server's total is over the limit (when set).
  void Check(Server& server, Worker& w);

 private:
  struct Figures {
    std::atomic<uint64_t> total{0}, largest{0};
  };
  std::unique_ptr<Figures[]> figures_;
  size_t workers_;
};

}  // namespace peregrine
