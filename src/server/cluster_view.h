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
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
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
  // "host:port" as -MOVED and -ASK name a node (cluster-preferred-endpoint-type);
  // with its TLS port, for a client over TLS (Redis 7.2 tells each its own).
  std::vector<std::string> endpoints, tls_endpoints;
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

// Messages the bus brings for the workers' Pub/Sub subscribers (a PUBLISH
// on another node of the cluster): each worker delivers every message to
// its own subscribers, in the order the bus received them. The bus pushes
// (any thread), then wakes the workers; a worker takes its queue between
// its events (Worker's before-sleep step).
class ClusterInbox {
 public:
  struct Message {
    std::string channel, message;
    bool shard = false;  // SPUBLISH's (the bus's PUBLISHSHARD)
  };
  // At start, before any Push: one queue per worker.
  void Init(size_t workers, std::function<void()> wake) {
    queues_ = std::vector<Queue>(workers);
    wake_ = std::move(wake);
  }
  void Push(std::string channel, std::string message, bool shard) {
    auto m = std::make_shared<const Message>(Message{std::move(channel), std::move(message), shard});
    for (Queue& q : queues_) {
      std::lock_guard<std::mutex> lock(q.mu);
      // A worker that does not take its messages (a long script) loses the
      // oldest past this many, rather than growing without bound.
      if (q.messages.size() >= kMaxQueued) q.messages.erase(q.messages.begin());
      q.messages.push_back(m);
      q.pending.store(true, std::memory_order_release);
    }
    if (wake_) wake_();
  }
  bool pending(size_t worker) const {
    return worker < queues_.size() && queues_[worker].pending.load(std::memory_order_acquire);
  }
  std::vector<std::shared_ptr<const Message>> Take(size_t worker) {
    Queue& q = queues_[worker];
    std::lock_guard<std::mutex> lock(q.mu);
    q.pending.store(false, std::memory_order_relaxed);
    return std::move(q.messages);
  }
  static constexpr size_t kMaxQueued = 100'000;

 private:
  struct Queue {
    std::mutex mu;
    std::vector<std::shared_ptr<const Message>> messages;
    std::atomic<bool> pending{false};
  };
  std::vector<Queue> queues_;
  std::function<void()> wake_;
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
  // Whether that work must not wait for the cron (a replica elected: worker
  // 0 makes it primary between events).
  virtual bool urgent_work() const { return false; }
  // What the bus needs of replication (worker 0's cron): the offset this
  // node reports, how long a replica has been without news from its
  // primary (ms; a failover's data age), repl-ping-replica-period (ms).
  virtual void NoteReplication(uint64_t offset, int64_t data_age_ms, int64_t ping_period_ms) = 0;
  // After the start-up load (worker 0, before the other workers run): the
  // slots holding keys; a primary takes those nobody serves and imports
  // those another serves (Redis's verifyClusterConfigWithData).
  virtual void VerifyWithData(const std::vector<bool>& slots_with_keys) = 0;
  // The current table (any thread; takes the bus's lock).
  virtual std::shared_ptr<const SlotRoutes> Routes() const = 0;
  // Changes with every new table.
  uint64_t routes_version() const { return routes_version_.load(std::memory_order_acquire); }
  // PUBLISH in cluster mode: the message goes to every other node (whose
  // subscribers hear it), in place of the replication stream; SPUBLISH's
  // (`shard`) to the other nodes of this node's shard only.
  virtual void PublishToCluster(std::string_view channel, std::string_view message, bool shard) = 0;
  ClusterInbox& inbox() { return inbox_; }
  // Atomic slot migration (cluster/slot_migration.h): whether a job has
  // work on the shards (any worker, between events), and a worker's step
  // of it, its shard `shard` held (true: more at once); `drained`: every
  // batch admitted for the shard has run (BatchRelay::Drained).
  virtual bool migrating() const { return false; }
  virtual bool StepMigrations(size_t shard, bool drained) { return false; }
  // Whether a write to `slot` is refused where it runs (TRYAGAIN): its
  // shard sent its last changes for a handover (SlotMigrations::FrozenSlot).
  virtual bool SlotFrozen(int slot) const { return false; }
  // A connection that imported slots (Client::import_slots) went before
  // their handover: what it imported goes.
  virtual void ImportClientGone(const std::string& name, uint64_t client_id) {}

 protected:
  std::atomic<uint64_t> routes_version_{0};
  ClusterInbox inbox_;
};

}  // namespace peregrine
