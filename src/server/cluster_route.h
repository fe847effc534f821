// Redis Cluster's redirections (docs/cluster.md, "Redirections"): whether a
// command is served by this node, and otherwise the -MOVED, -ASK,
// -CROSSSLOT, -TRYAGAIN or -CLUSTERDOWN reply Redis gives (its
// getNodeByQuery). One per worker, reading its own copy of the bus's slot
// table (cluster_view.h), taken anew when the bus publishes another.
//
// A command whose slot is being migrated or imported depends on which of
// its keys this node still has: that check needs the slot's shard, so
// Dispatch gets kOpen and runs the command holding it, and ExecuteCommand
// checks again with the keys at hand.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/cluster_view.h"

namespace peregrine {

class Db;
class ServerState;
struct Client;
struct CommandSpec;

class ClusterRoute {
 public:
  explicit ClusterRoute(ServerState& server) : server_(server) {}

  // Whether this server runs in cluster mode.
  bool enabled() const;

  enum class Verdict : uint8_t { kServe, kRefuse, kOpen };
  // The database 0 a key lives in, if the caller holds its shard (null
  // otherwise: a slot being moved then gives kOpen).
  using DbOf = std::function<Db*(std::string_view key)>;
  // Checks `spec` (resolved) with `args`, or, for EXEC, the client's queued
  // commands. kRefuse: *error is the reply (without "-").
  Verdict Check(const Client& c, const CommandSpec& spec, std::span<const std::string_view> args, const DbOf& db_of,
                int64_t now_ms, std::string* error);

  // Whether Check has anything to look at: a command with keys, or EXEC.
  static bool Checked(const CommandSpec& spec);
  // The slot of the keys the last Check saw (-1: none; shard channels,
  // which no shard holds, do not count).
  int last_slot() const { return last_slot_; }

  // A script's redis.call() (Redis's scriptVerifyClusterState): "" if it
  // may run, else the error the call fails with. `caller` is the EVAL's
  // client (its READONLY and ASKING count); *slot is the script's slot
  // (its declared keys', -1 until it has one): a call on another slot is
  // refused unless the script allows cross-slot keys.
  std::string ScriptCallError(const Client& caller, const CommandSpec& cmd, std::span<const std::string_view> args,
                              const DbOf& db_of, int64_t now_ms, int* slot, bool cross_slot_ok);

 private:
  const SlotRoutes& routes();

  ServerState& server_;
  std::shared_ptr<const SlotRoutes> routes_;
  uint64_t version_ = ~uint64_t{0};
  std::vector<size_t> positions_;  // scratch
  int last_slot_ = -1;
};

}  // namespace peregrine
