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
  const auto sub = [](std::string_view name, int arity, uint32_t flags, std::string_view since,
                      std::string_view summary) {
    return CommandSpec{.name = name, .arity = arity, .flags = flags | kCmdStale, .acl = kAclSlow, .summary = summary,
                       .since = since, .group = "cluster", .handler = ClusterDisabled};
  };
  constexpr uint32_t kAdmin = kCmdAdmin;
  CommandSpec cluster{.name = "cluster", .arity = -2, .acl = kAclSlow, .summary = "A container for Redis Cluster commands.",
                      .since = "3.0.0", .group = "cluster", .complexity = "Depends on subcommand."};
  cluster.subcommands = {
      sub("addslots", -3, kAdmin, "3.0.0", "Assigns new hash slots to a node."),
      sub("addslotsrange", -4, kAdmin, "7.0.0", "Assigns new hash slot ranges to a node."),
      sub("bumpepoch", 2, kAdmin, "3.0.0", "Advances the cluster config epoch."),
      sub("count-failure-reports", 3, kAdmin, "3.0.0", "Returns the number of active failure reports active for a node."),
      sub("countkeysinslot", 3, 0, "3.0.0", "Returns the number of keys in a hash slot."),
      sub("delslots", -3, kAdmin, "3.0.0", "Sets hash slots as unbound for a node."),
      sub("delslotsrange", -4, kAdmin, "7.0.0", "Sets hash slot ranges as unbound for a node."),
      sub("failover", -2, kAdmin, "3.0.0", "Forces a replica to perform a manual failover of its master."),
      sub("flushslots", 2, kAdmin, "3.0.0", "Deletes all slots information from a node."),
      sub("forget", 3, kAdmin, "3.0.0", "Removes a node from the nodes table."),
      sub("getkeysinslot", 4, 0, "3.0.0", "Returns the key names in a hash slot."),
      sub("help", 2, kCmdLoading, "5.0.0", "Returns helpful text about the different subcommands."),
      sub("info", 2, 0, "3.0.0", "Returns information about the state of a node."),
      sub("keyslot", 3, 0, "3.0.0", "Returns the hash slot for a key."),
      sub("links", 2, 0, "7.0.0", "Returns a list of all TCP links to and from peer nodes."),
      sub("meet", -4, kAdmin, "3.0.0", "Forces a node to handshake with another node."),
      sub("myid", 2, 0, "3.0.0", "Returns the ID of a node."),
      sub("nodes", 2, 0, "3.0.0", "Returns the cluster configuration for a node."),
      sub("replicas", 3, kAdmin, "5.0.0", "Lists the replica nodes of a master node."),
      sub("replicate", 3, kAdmin, "3.0.0", "Configure a node as replica of a master node."),
      sub("reset", -2, kAdmin | kCmdNoscript, "3.0.0", "Resets a node."),
      sub("saveconfig", 2, kAdmin, "3.0.0", "Forces a node to save the cluster configuration to disk."),
      sub("set-config-epoch", 3, kAdmin, "3.0.0", "Sets the configuration epoch for a new node."),
      sub("setslot", -4, kAdmin, "3.0.0", "Binds a hash slot to a node."),
      sub("shards", 2, 0, "7.0.0", "Returns the mapping of cluster slots to shards."),
      sub("slaves", 3, kAdmin, "3.0.0", "Lists the replica nodes of a master node."),
      sub("slots", 2, 0, "3.0.0", "Returns the mapping of cluster slots to nodes."),
  };
  t.Register(std::move(cluster));
}

}  // namespace peregrine
