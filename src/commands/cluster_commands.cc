// CLUSTER as Redis answers it with cluster-enabled no (Peregrine has no
// cluster mode yet: issue #39): every subcommand of Redis 7.0, with its
// arity and flags (CLUSTER RESET is refused inside scripts, COMMAND INFO
// and ACL rules see the real table), replies "ERR This instance has cluster
// support disabled" — what cluster-aware clients probe for to learn they
// talk to a standalone server.
#include "commands/common.h"

namespace peregrine {

namespace {

void ClusterDisabled(CommandContext& ctx) { ctx.reply.Error("ERR This instance has cluster support disabled"); }

}  // namespace

void RegisterClusterCommands(CommandTable& t) {
  CommandFamily f(t, kAclSlow, "cluster");
  f.Add({.name = "cluster", .arity = -2, .acl = kAclSlow, .summary = "A container for Redis Cluster commands.",
         .since = "3.0.0", .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "addslots", .arity = -3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Assigns new hash slots to a node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "addslotsrange", .arity = -4, .flags = kCmdAdmin | kCmdStale,
              .summary = "Assigns new hash slot ranges to a node.", .since = "7.0.0", .handler = ClusterDisabled},
             {.name = "bumpepoch", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Advances the cluster config epoch.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "count-failure-reports", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Returns the number of active failure reports active for a node.", .since = "3.0.0",
              .handler = ClusterDisabled},
             {.name = "countkeysinslot", .arity = 3, .flags = kCmdStale,
              .summary = "Returns the number of keys in a hash slot.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "delslots", .arity = -3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Sets hash slots as unbound for a node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "delslotsrange", .arity = -4, .flags = kCmdAdmin | kCmdStale,
              .summary = "Sets hash slot ranges as unbound for a node.", .since = "7.0.0", .handler = ClusterDisabled},
             {.name = "failover", .arity = -2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Forces a replica to perform a manual failover of its master.", .since = "3.0.0",
              .handler = ClusterDisabled},
             {.name = "flushslots", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Deletes all slots information from a node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "forget", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Removes a node from the nodes table.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "getkeysinslot", .arity = 4, .flags = kCmdStale,
              .summary = "Returns the key names in a hash slot.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .handler = ClusterDisabled},
             {.name = "info", .arity = 2, .flags = kCmdStale,
              .summary = "Returns information about the state of a node.", .since = "3.0.0",
              .handler = ClusterDisabled},
             {.name = "keyslot", .arity = 3, .flags = kCmdStale, .summary = "Returns the hash slot for a key.",
              .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "links", .arity = 2, .flags = kCmdStale,
              .summary = "Returns a list of all TCP links to and from peer nodes.", .since = "7.0.0",
              .handler = ClusterDisabled},
             {.name = "meet", .arity = -4, .flags = kCmdAdmin | kCmdStale,
              .summary = "Forces a node to handshake with another node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "myid", .arity = 2, .flags = kCmdStale, .summary = "Returns the ID of a node.", .since = "3.0.0",
              .handler = ClusterDisabled},
             {.name = "nodes", .arity = 2, .flags = kCmdStale,
              .summary = "Returns the cluster configuration for a node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "replicas", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Lists the replica nodes of a master node.", .since = "5.0.0", .handler = ClusterDisabled},
             {.name = "replicate", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Configure a node as replica of a master node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "reset", .arity = -2, .flags = kCmdAdmin | kCmdNoscript | kCmdStale, .summary = "Resets a node.",
              .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "saveconfig", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Forces a node to save the cluster configuration to disk.", .since = "3.0.0",
              .handler = ClusterDisabled},
             {.name = "set-config-epoch", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Sets the configuration epoch for a new node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "setslot", .arity = -4, .flags = kCmdAdmin | kCmdStale, .summary = "Binds a hash slot to a node.",
              .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "shards", .arity = 2, .flags = kCmdStale,
              .summary = "Returns the mapping of cluster slots to shards.", .since = "7.0.0",
              .handler = ClusterDisabled},
             {.name = "slaves", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Lists the replica nodes of a master node.", .since = "3.0.0", .handler = ClusterDisabled},
             {.name = "slots", .arity = 2, .flags = kCmdStale,
              .summary = "Returns the mapping of cluster slots to nodes.", .since = "3.0.0",
              .handler = ClusterDisabled},
         }});
}

}  // namespace peregrine
