// What the server sees of Redis Cluster (docs/cluster.md): the slot table a
// worker routes by, and the cluster bus as a service the server starts and
// stops. The bus itself lives in src/cluster/ (a layer above this one: it
// uses the server's state, the server only this interface).
//
// Workers read the table on every keyed command in cluster mode, so it is
// published, not shared: the bus makes a new immutable SlotRoutes when the
// slots' owners change and bumps `version`; a worker that sees a new
// version takes the new table (under the bus's lock, once per change) and
// reads its own copy lock-free until the next.
#pragma once

#include <array>
#include <atomic>
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/slot.h"
#include "server/config.h"

namespace peregrine {

struct SlotRoutes {
  static constexpr uint16_t kUnassigned = 0xffff;
  static constexpr uint16_t kMine = 0xfffe;
  // Per slot: kMine, kUnassigned, or the index of its owner in `endpoints`.
  std::array<uint16_t, kNumSlots> owner;
  // Per slot of this node's: the node it migrates to (an index in
  // `endpoints`), or kUnassigned.
  std::array<uint16_t, kNumSlots> migrating_to;
  // Slots this node imports (CLUSTER SETSLOT IMPORTING).
  std::bitset<kNumSlots> importing;
  // "host:port" as -MOVED and -ASK name a node (cluster-preferred-endpoint-type).
  std::vector<std::string> endpoints;
  // cluster_state:ok.
  bool ok = false;
  // A replica: its primary's index in `endpoints` (READONLY clients read
  // the primary's slots here), else kUnassigned.
  uint16_t my_primary = kUnassigned;

  SlotRoutes() {
    owner.fill(kUnassigned);
    migrating_to.fill(kUnassigned);
  }
};

class ClusterService {
 public:
  virtual ~ClusterService() = default;
  // Opens the bus port and starts the bus's thread. False with *err.
  virtual bool Start(std::string* err) = 0;
  // Stops the thread (saving nodes.conf if it changed).
  virtual void Stop() = 0;
  // After CONFIG SET: the cluster-* settings now.
  virtual void ApplyConfig(const Config::ClusterSettings& settings) = 0;
  // Worker 0's cron, every shard held when has_work(): what the bus left
  // for the keyspace (bus-specific; see ClusterBus::TakeServerTasks).
  virtual bool has_work() const = 0;
  virtual void DoWork(class ServerState& server) = 0;
  // What the bus needs of replication (worker 0's cron): the offset this
  // node reports, how long a replica has been without news from its
  // primary (ms; a failover's data age), repl-ping-replica-period (ms).
  virtual void NoteReplication(uint64_t offset, int64_t data_age_ms, int64_t ping_period_ms) = 0;
  // The current table (any thread; takes the bus's lock).
  virtual std::shared_ptr<const SlotRoutes> Routes() const = 0;
  // Changes with every new table.
  uint64_t routes_version() const { return routes_version_.load(std::memory_order_acquire); }

 protected:
  std::atomic<uint64_t> routes_version_{0};
};

}  // namespace peregrine
