// CLUSTER (Redis 7.2's subcommands; docs/cluster.md). With cluster-enabled
// no, every subcommand answers "ERR This instance has cluster support
// disabled", as Redis does (what cluster-aware clients probe for). In
// cluster mode the bus (cluster/cluster_bus.h) holds the state; these parse
// the arguments, count keys where a subcommand needs them (those run
// holding every shard: kCmdAllShards) and write the replies.
#include <algorithm>
#include <cctype>

#include "cluster/cluster_bus.h"
#include "commands/cluster_migrate_commands.h"
#include "commands/common.h"
#include "server/client.h"
#include "core/numbers.h"
#include "core/slot.h"

namespace peregrine {

cluster::ClusterBus* ClusterBusOrReply(CommandContext& ctx) {
  ClusterService* s = ctx.server.cluster();
  if (s == nullptr) {
    ctx.reply.Error("ERR This instance has cluster support disabled");
    return nullptr;
  }
  return static_cast<cluster::ClusterBus*>(s);
}

namespace {

using cluster::ClusterBus;

ClusterBus* Bus(CommandContext& ctx) { return ClusterBusOrReply(ctx); }

void SubcommandSyntaxError(CommandContext& ctx) {
  ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(UpToNul(ctx.args[1]).substr(0, 128)) + "'. Try CLUSTER HELP.");
}

void ReplyStatus(CommandContext& ctx, const std::string& error) {
  if (error.empty())
    ctx.reply.Ok();
  else
    ctx.reply.Error(error);
}

// A slot number as Redis's getSlotOrReply reads it.
bool ParseSlot(CommandContext& ctx, std::string_view arg, int* slot) {
  int64_t v;
  if (!ParseInt64(arg, &v) || v < 0 || v >= static_cast<int64_t>(kNumSlots)) {
    ctx.reply.Error("ERR Invalid or out of range slot");
    return false;
  }
  *slot = static_cast<int>(v);
  return true;
}

// The shard a slot's keys live on, and its database 0 (cluster mode has
// only that one).
Db& SlotDb(CommandContext& ctx, int slot) {
  const size_t shards = ctx.server.num_shards();
  return ctx.server.shard(static_cast<size_t>(slot) * shards / kNumSlots).db(0);
}

// Where the last listing of a slot's keys stopped, in which shard's
// database: the next GETKEYSINSLOT of that slot goes on from there, so that
// a reshard (redis-cli asks for ten keys at a time, and MIGRATE takes them
// away) does not scan again what it passed. And the keys that pass met of
// the next kNextSlots slots: redis-cli moves slots in ascending order, and
// a later listing of one of them takes these (each checked to be there
// still) when they are all its keys by the slot's count, without a scan of
// its own. (Only read and written holding every shard: the command is
// kCmdAllShards.)
struct SlotScan {
  const Db* db = nullptr;
  int slot = -1;
  uint64_t cursor = 0;
  int next_first = -1;  // the slots `next` covers: next_first + [0, kNextSlots)
  std::vector<std::vector<std::string>> next;
  size_t next_keys = 0;
};
constexpr int kNextSlots = 64;
constexpr size_t kMaxNextKeys = 65536;
SlotScan g_slot_scan;

// From a pass over `slot`'s shard for another slot: its keys, if they are
// all there are (as counted).
bool KeysFromLastPass(Db& db, int slot, uint64_t in_slot, uint64_t want, std::vector<std::string>* out) {
  SlotScan& g = g_slot_scan;
  if (g.db != &db || g.next_first < 0 || slot < g.next_first || slot >= g.next_first + kNextSlots) return false;
  std::vector<std::string>& known = g.next[static_cast<size_t>(slot - g.next_first)];
  std::erase_if(known, [&](const std::string& k) { return db.FindRaw(k) == nullptr; });
  if (known.size() != in_slot) return false;  // (keys added since)
  out->assign(known.begin(), known.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(want, known.size())));
  if (out->size() == known.size()) {
    g.next_keys -= known.size();
    std::vector<std::string>().swap(known);  // (all told: its memory goes)
  }
  return true;
}

// The keys of `slot` (up to `max`; counted only if `out` is null), as
// Redis's: expired keys not yet removed included. The shard counts its
// keys per slot (Db::CountSlots, on in cluster mode): a count is O(1), and
// a listing stops once it has them all, or `max`.
uint64_t KeysInSlot(CommandContext& ctx, int slot, uint64_t max, std::vector<std::string>* out) {
  Db& db = SlotDb(ctx, slot);
  const uint64_t in_slot = db.KeysInSlot(static_cast<uint32_t>(slot));
  if (out == nullptr || in_slot == 0) return std::min(in_slot, max);
  const uint64_t want = std::min(in_slot, max);
  if (KeysFromLastPass(db, slot, in_slot, want, out)) return out->size();
  SlotScan& g = g_slot_scan;
  // From where the last listing of this slot stopped to the table's end,
  // then from its start up to there: one whole pass at most. A listing of
  // all the slot's keys passes over the whole shard anyway: it also
  // gathers the next slots' keys.
  const uint64_t start = g.db == &db && g.slot == slot ? g.cursor : 0;
  const bool gather = start == 0 && want == in_slot;
  if (gather) {
    g.next.assign(kNextSlots, {});
    g.next_first = slot + 1;
    g.next_keys = 0;
  }
  auto visit = [&](const Db::Entry& e) {
    char scratch[CompactKey::kScratchSize];
    const std::string_view k = e.key(scratch);
    const int ks = static_cast<int>(SlotOf(k));
    if (ks == slot) {
      if (out->size() < want) out->emplace_back(k);
    } else if (gather && ks > slot && ks < slot + 1 + kNextSlots && g.next_keys < kMaxNextKeys) {
      g.next[static_cast<size_t>(ks - slot - 1)].emplace_back(k);
      g.next_keys++;
    }
  };
  uint64_t cursor = start;
  bool wrapped = false;
  while (out->size() < want || gather) {
    cursor = db.Scan(cursor, visit);
    if (cursor == 0) {
      if (start == 0 || wrapped) break;
      wrapped = true;
    }
    if (wrapped && cursor >= start) break;
  }
  g.db = &db;
  g.slot = slot;
  g.cursor = out->size() >= want && !gather ? cursor : 0;
  // (A scan may meet a key twice, when the table grows meanwhile: once
  // each here, or MIGRATE would restore it twice.)
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return out->size();
}

bool HasKeys(CommandContext& ctx) {
  for (size_t s = 0; s < ctx.server.num_shards(); s++)
    if (ctx.server.shard(s).db(0).size() != 0) return true;
  return false;
}

void ClusterHelp(CommandContext& ctx) {
  if (Bus(ctx) == nullptr) return;
  ReplyHelp(ctx, {"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "COUNTKEYSINSLOT <slot>",
                  "    Return the number of keys in <slot>.",
                  "GETKEYSINSLOT <slot> <count>",
                  "    Return key names stored by current node in a slot.",
                  "INFO",
                  "    Return information about the cluster.",
                  "KEYSLOT <key>",
                  "    Return the hash slot for <key>.",
                  "MYID",
                  "    Return the node id.",
                  "MYSHARDID",
                  "    Return the node's shard id.",
                  "NODES",
                  "    Return cluster configuration seen by node. Output format:",
                  "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
                  "REPLICAS <node-id>",
                  "    Return <node-id> replicas.",
                  "SLOTS",
                  "    Return information about slots range mappings. Each range is made of:",
                  "    start, end, master and replicas IP addresses, ports and ids",
                  "SHARDS",
                  "    Return information about slot range mappings and the nodes associated with them.",
                  "ADDSLOTS <slot> [<slot> ...]",
                  "    Assign slots to current node.",
                  "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
                  "    Assign slots which are between <start-slot> and <end-slot> to current node.",
                  "BUMPEPOCH",
                  "    Advance the cluster config epoch.",
                  "COUNT-FAILURE-REPORTS <node-id>",
                  "    Return number of failure reports for <node-id>.",
                  "DELSLOTS <slot> [<slot> ...]",
                  "    Delete slots information from current node.",
                  "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
                  "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
                  "FAILOVER [FORCE|TAKEOVER]",
                  "    Promote current replica node to being a master.",
                  "FORGET <node-id>",
                  "    Remove a node from the cluster.",
                  "FLUSHSLOTS",
                  "    Delete current node own slots information.",
                  "MEET <ip> <port> [<bus-port>]",
                  "    Connect nodes into a working cluster.",
                  "REPLICATE <node-id>",
                  "    Configure current node as replica to <node-id>.",
                  "RESET [HARD|SOFT]",
                  "    Reset current node (default: soft).",
                  "SET-CONFIG-EPOCH <epoch>",
                  "    Set config epoch of current node.",
                  "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
                  "    Set slot state.",
                  "SAVECONFIG",
                  "    Force saving cluster configuration on disk.",
                  "MIGRATESLOTS SLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...] NODE <node-id>",
                  "    [SLOTSRANGE ... NODE <node-id> ...]",
                  "    Move the slots' keys to <node-id> in the background, then hand the slots over atomically.",
                  "GETSLOTMIGRATIONS",
                  "    Return the slot migrations in progress and the recent ones of this node.",
                  "CANCELSLOTMIGRATIONS",
                  "    Cancel this node's slot migrations in progress.",
                  "LINKS",
                  "    Return information about all network links between this node and its peers.",
                  "    Output format is an array where each array element is a map containing attributes of a link",
                  "HELP",
                  "    Print this help."});
}

void ClusterInfo(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ctx.reply.Verbatim(bus->InfoText());
}

void ClusterNodes(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ctx.reply.Verbatim(bus->NodesText(ctx.client.tls != nullptr));
}

void ClusterMyId(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ctx.reply.Bulk(bus->MyId());
}

void ClusterMyShardId(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ctx.reply.Bulk(bus->MyShardId());
}

void ClusterKeySlot(CommandContext& ctx) {
  if (Bus(ctx) != nullptr) ctx.reply.Integer(SlotOf(ctx.args[2]));
}

void ClusterCountKeysInSlot(CommandContext& ctx) {
  if (Bus(ctx) == nullptr) return;
  int64_t slot;
  if (!ParseIntArg(ctx, ctx.args[2], &slot)) return;
  if (slot < 0 || slot >= static_cast<int64_t>(kNumSlots)) return ctx.reply.Error("ERR Invalid slot");
  ctx.reply.Integer(static_cast<int64_t>(KeysInSlot(ctx, static_cast<int>(slot), UINT64_MAX, nullptr)));
}

void ClusterGetKeysInSlot(CommandContext& ctx) {
  if (Bus(ctx) == nullptr) return;
  int64_t slot, max;
  if (!ParseIntArg(ctx, ctx.args[2], &slot) || !ParseIntArg(ctx, ctx.args[3], &max)) return;
  if (slot < 0 || slot >= static_cast<int64_t>(kNumSlots) || max < 0)
    return ctx.reply.Error("ERR Invalid slot or number of keys");
  std::vector<std::string> keys;
  KeysInSlot(ctx, static_cast<int>(slot), static_cast<uint64_t>(max), &keys);
  ctx.reply.ArrayHeader(keys.size());
  for (const std::string& k : keys) ctx.reply.Bulk(k);
}

void NodeEntry(CommandContext& ctx, const ClusterBus::Endpoint& e, Config::ClusterSettings::Endpoint preferred) {
  using P = Config::ClusterSettings::Endpoint;
  ctx.reply.ArrayHeader(4);
  if (preferred == P::kUnknown)
    ctx.reply.Null();
  else
    ctx.reply.Bulk(e.preferred);
  ctx.reply.Integer(e.port);
  ctx.reply.Bulk(e.id);
  // The endpoints not preferred, as metadata.
  const bool ip = preferred != P::kIp;
  const bool hostname = preferred != P::kHostname && !e.hostname.empty();
  ctx.reply.MapHeader((ip ? 1 : 0) + (hostname ? 1 : 0));
  if (ip) {
    ctx.reply.Bulk("ip");
    ctx.reply.Bulk(e.ip);
  }
  if (hostname) {
    ctx.reply.Bulk("hostname");
    ctx.reply.Bulk(e.hostname);
  }
}

void ClusterSlots(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  const auto ranges = bus->SlotsView(ctx.client.tls != nullptr);
  const auto preferred = ctx.server.config().cluster.preferred_endpoint;
  ctx.reply.ArrayHeader(ranges.size());
  for (const auto& r : ranges) {
    ctx.reply.ArrayHeader(2 + r.nodes.size());
    ctx.reply.Integer(r.start);
    ctx.reply.Integer(r.end);
    for (const auto& e : r.nodes) NodeEntry(ctx, e, preferred);
  }
}

void ClusterShards(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  const auto shards = bus->ShardsView();
  ctx.reply.ArrayHeader(shards.size());
  for (const auto& s : shards) {
    ctx.reply.MapHeader(2);
    ctx.reply.Bulk("slots");
    ctx.reply.ArrayHeader(s.slots.size() * 2);
    for (const auto& [start, end] : s.slots) {
      ctx.reply.Integer(start);
      ctx.reply.Integer(end);
    }
    ctx.reply.Bulk("nodes");
    ctx.reply.ArrayHeader(s.nodes.size());
    for (const auto& n : s.nodes) {
      ctx.reply.MapHeader(6 + (n.port != 0) + (n.tls_port != 0) + !n.hostname.empty());
      ctx.reply.Bulk("id");
      ctx.reply.Bulk(n.id);
      if (n.port != 0) {
        ctx.reply.Bulk("port");
        ctx.reply.Integer(n.port);
      }
      if (n.tls_port != 0) {
        ctx.reply.Bulk("tls-port");
        ctx.reply.Integer(n.tls_port);
      }
      ctx.reply.Bulk("ip");
      ctx.reply.Bulk(n.ip);
      ctx.reply.Bulk("endpoint");
      ctx.reply.Bulk(n.endpoint);
      if (!n.hostname.empty()) {
        ctx.reply.Bulk("hostname");
        ctx.reply.Bulk(n.hostname);
      }
      ctx.reply.Bulk("role");
      ctx.reply.Bulk(n.role);
      ctx.reply.Bulk("replication-offset");
      ctx.reply.Integer(static_cast<int64_t>(n.offset));
      ctx.reply.Bulk("health");
      ctx.reply.Bulk(n.health);
    }
  }
}

void ClusterReplicas(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  std::vector<std::string> lines;
  std::string error;
  if (!bus->ReplicasText(std::string(ctx.args[2]), &lines, &error, ctx.client.tls != nullptr))
    return ctx.reply.Error(error);
  ctx.reply.ArrayHeader(lines.size());
  for (const std::string& l : lines) ctx.reply.Bulk(l);
}

void ClusterLinks(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  const auto links = bus->LinksView();
  ctx.reply.ArrayHeader(links.size());
  for (const auto& l : links) {
    ctx.reply.MapHeader(6);
    ctx.reply.Bulk("direction");
    ctx.reply.Bulk(l.direction);
    ctx.reply.Bulk("node");
    ctx.reply.Bulk(l.node);
    ctx.reply.Bulk("create-time");
    ctx.reply.Integer(l.create_time);
    ctx.reply.Bulk("events");
    ctx.reply.Bulk(l.events);
    ctx.reply.Bulk("send-buffer-allocated");
    ctx.reply.Integer(static_cast<int64_t>(l.send_buffer_allocated));
    ctx.reply.Bulk("send-buffer-used");
    ctx.reply.Integer(static_cast<int64_t>(l.send_buffer_used));
  }
}

void ClusterCountFailureReports(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  std::string error;
  const int n = bus->CountFailureReports(std::string(ctx.args[2]), &error);
  if (n < 0) return ctx.reply.Error(error);
  ctx.reply.Integer(n);
}

// ADDSLOTS / DELSLOTS slot...
void ChangeSlots(CommandContext& ctx, bool del, bool ranges) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  std::vector<int> slots;
  if (!ranges) {
    for (size_t i = 2; i < ctx.args.size(); i++) {
      int s;
      if (!ParseSlot(ctx, ctx.args[i], &s)) return;
      slots.push_back(s);
    }
  } else {
    if (ctx.args.size() % 2 == 1) {
      return ctx.reply.Error(std::string("ERR wrong number of arguments for 'cluster|") +
                             (del ? "delslotsrange" : "addslotsrange") + "' command");
    }
    for (size_t i = 2; i + 1 < ctx.args.size(); i += 2) {
      int start, end;
      if (!ParseSlot(ctx, ctx.args[i], &start) || !ParseSlot(ctx, ctx.args[i + 1], &end)) return;
      if (start > end) {
        return ctx.reply.Error("ERR start slot number " + std::to_string(start) +
                               " is greater than end slot number " + std::to_string(end));
      }
      for (int s = start; s <= end; s++) slots.push_back(s);
    }
  }
  ReplyStatus(ctx, del ? bus->DelSlots(slots) : bus->AddSlots(slots));
}

void ClusterAddSlots(CommandContext& ctx) { ChangeSlots(ctx, false, false); }
void ClusterDelSlots(CommandContext& ctx) { ChangeSlots(ctx, true, false); }
void ClusterAddSlotsRange(CommandContext& ctx) { ChangeSlots(ctx, false, true); }
void ClusterDelSlotsRange(CommandContext& ctx) { ChangeSlots(ctx, true, true); }

void ClusterFlushSlots(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  if (HasKeys(ctx)) return ctx.reply.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
  bus->FlushSlots();
  ctx.reply.Ok();
}

void ClusterSetSlot(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  if (bus->is_replica()) return ctx.reply.Error("ERR Please use SETSLOT only with masters.");
  if (SlotMigrationsBlockSetSlot(ctx, *bus)) return;
  int slot;
  if (!ParseSlot(ctx, ctx.args[2], &slot)) return;
  std::string how(ctx.args[3]);
  for (char& ch : how) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const bool with_node = how == "migrating" || how == "importing" || how == "node";
  if ((with_node && ctx.args.size() != 5) || (how == "stable" && ctx.args.size() != 4) ||
      (!with_node && how != "stable"))
    return ctx.reply.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
  const uint64_t keys = how == "node" ? KeysInSlot(ctx, slot, UINT64_MAX, nullptr) : 0;
  ReplyStatus(ctx, bus->SetSlot(slot, how, with_node ? std::string(ctx.args[4]) : "", keys));
}

void ClusterMeet(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  if (ctx.args.size() > 5) return SubcommandSyntaxError(ctx);
  int64_t port, cport;
  if (!ParseInt64(ctx.args[3], &port))
    return ctx.reply.Error("ERR Invalid base port specified: " + AsCString(ctx.args[3]));
  if (ctx.args.size() == 5) {
    if (!ParseInt64(ctx.args[4], &cport))
      return ctx.reply.Error("ERR Invalid bus port specified: " + AsCString(ctx.args[4]));
  } else {
    cport = port + 10000;
  }
  const std::string error = bus->Meet(std::string(ctx.args[2]), static_cast<int>(std::clamp<int64_t>(port, -1, 65536)),
                                      static_cast<int>(std::clamp<int64_t>(cport, -1, 65536)));
  if (!error.empty()) {
    return ctx.reply.Error("ERR Invalid node address specified: " + AsCString(ctx.args[2]) + ":" +
                           AsCString(ctx.args[3]));
  }
  ctx.reply.Ok();
}

void ClusterForget(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ReplyStatus(ctx, bus->Forget(std::string(ctx.args[2])));
}

void ClusterReplicate(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  std::string host;
  int port = 0;
  const std::string error = bus->Replicate(std::string(ctx.args[2]), HasKeys(ctx), &host, &port);
  if (!error.empty()) return ctx.reply.Error(error);
  ctx.server.BecomeReplica(host, port);
  ctx.reply.Ok();
}

void ClusterReset(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  if (ctx.args.size() > 3) return SubcommandSyntaxError(ctx);
  bool hard = false;
  if (ctx.args.size() == 3) {
    if (EqualsIgnoreCase(ctx.args[2], "hard"))
      hard = true;
    else if (!EqualsIgnoreCase(ctx.args[2], "soft"))
      return ctx.reply.Error(kErrSyntax);
  }
  const bool was_replica = bus->is_replica();
  const std::string error = bus->Reset(hard, HasKeys(ctx));
  if (!error.empty()) return ctx.reply.Error(error);
  if (was_replica) {
    // A replica turns into an empty primary.
    ctx.server.BecomePrimary();
    FlushAllShards(ctx, false);
  }
  ctx.reply.Ok();
}

void ClusterSaveConfig(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ReplyStatus(ctx, bus->SaveConfig());
}

void ClusterBumpEpoch(CommandContext& ctx) {
  if (ClusterBus* bus = Bus(ctx)) ctx.reply.SimpleString(bus->BumpEpoch());
}

void ClusterSetConfigEpoch(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  int64_t epoch;
  if (!ParseIntArg(ctx, ctx.args[2], &epoch)) return;
  ReplyStatus(ctx, bus->SetConfigEpoch(epoch));
}

void ClusterFailover(CommandContext& ctx) {
  ClusterBus* bus = Bus(ctx);
  if (bus == nullptr) return;
  if (ctx.args.size() > 3) return SubcommandSyntaxError(ctx);
  if (ctx.args.size() == 3 && !EqualsIgnoreCase(ctx.args[2], "force") && !EqualsIgnoreCase(ctx.args[2], "takeover"))
    return ctx.reply.Error(kErrSyntax);
  const bool takeover = ctx.args.size() == 3 && EqualsIgnoreCase(ctx.args[2], "takeover");
  const bool force = takeover || (ctx.args.size() == 3 && EqualsIgnoreCase(ctx.args[2], "force"));
  ReplyStatus(ctx, bus->Failover(force, takeover));
}

// ASKING, READONLY, READWRITE: the connection's cluster flags
// (cluster_route.h reads them).
void AskingCommand(CommandContext& ctx) {
  if (Bus(ctx) == nullptr) return;
  ctx.client.asking = true;
  ctx.reply.Ok();
}

void ReadonlyCommand(CommandContext& ctx) {
  if (Bus(ctx) == nullptr) return;
  ctx.client.cluster_readonly = true;
  ctx.reply.Ok();
}

void ReadwriteCommand(CommandContext& ctx) {
  if (Bus(ctx) == nullptr) return;
  ctx.client.cluster_readonly = false;
  ctx.reply.Ok();
}

}  // namespace

void RegisterClusterCommands(CommandTable& t) {
  CommandFamily conn(t, kAclConnection, "cluster");
  conn.Add({.name = "asking", .arity = 1, .flags = kCmdFast,
            .summary = "Signals that a cluster client is following an -ASK redirect.", .since = "3.0.0",
            .complexity = "O(1)", .handler = AskingCommand});
  conn.Add({.name = "readonly", .arity = 1, .flags = kCmdFast | kCmdLoading | kCmdStale,
            .summary = "Enables read-only queries for a connection to a Redis Cluster replica node.",
            .since = "3.0.0", .complexity = "O(1)", .handler = ReadonlyCommand});
  conn.Add({.name = "readwrite", .arity = 1, .flags = kCmdFast | kCmdLoading | kCmdStale,
            .summary = "Enables read-write queries for a connection to a Reids Cluster replica node.",
            .since = "3.0.0", .complexity = "O(1)", .handler = ReadwriteCommand});
  CommandFamily f(t, kAclSlow, "cluster");
  f.Add({.name = "cluster", .arity = -2, .acl = kAclSlow, .summary = "A container for Redis Cluster commands.",
         .since = "3.0.0", .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "addslots", .arity = -3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Assigns new hash slots to a node.", .since = "3.0.0",
              .complexity = "O(N) where N is the total number of hash slot arguments", .handler = ClusterAddSlots},
             {.name = "addslotsrange", .arity = -4, .flags = kCmdAdmin | kCmdStale,
              .summary = "Assigns new hash slot ranges to a node.", .since = "7.0.0",
              .complexity = "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
              .handler = ClusterAddSlotsRange},
             {.name = "cancelslotmigrations", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Cancel all current ongoing slot migration operations.", .since = "9.0.0",
              .complexity = "O(N), where N is the number of active slot migration operations.",
              .handler = ClusterCancelSlotMigrations},
             {.name = "bumpepoch", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Advances the cluster config epoch.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterBumpEpoch},
             {.name = "count-failure-reports", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Returns the number of active failure reports active for a node.", .since = "3.0.0",
              .complexity = "O(N) where N is the number of failure reports", .handler = ClusterCountFailureReports},
             {.name = "countkeysinslot", .arity = 3, .flags = kCmdStale | kCmdAllShards,
              .summary = "Returns the number of keys in a hash slot.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterCountKeysInSlot},
             {.name = "delslots", .arity = -3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Sets hash slots as unbound for a node.", .since = "3.0.0",
              .complexity = "O(N) where N is the total number of hash slot arguments", .handler = ClusterDelSlots},
             {.name = "delslotsrange", .arity = -4, .flags = kCmdAdmin | kCmdStale,
              .summary = "Sets hash slot ranges as unbound for a node.", .since = "7.0.0",
              .complexity = "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
              .handler = ClusterDelSlotsRange},
             {.name = "failover", .arity = -2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Forces a replica to perform a manual failover of its master.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterFailover},
             {.name = "flushslots", .arity = 2, .flags = kCmdAdmin | kCmdStale | kCmdAllShards,
              .summary = "Deletes all slots information from a node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterFlushSlots},
             {.name = "forget", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Removes a node from the nodes table.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterForget},
             {.name = "getkeysinslot", .arity = 4, .flags = kCmdStale | kCmdAllShards,
              .summary = "Returns the key names in a hash slot.", .since = "3.0.0",
              .complexity = "O(N) where N is the number of requested keys", .handler = ClusterGetKeysInSlot},
             {.name = "getslotmigrations", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Get the status of ongoing and recently finished slot import and export operations.",
              .since = "9.0.0", .complexity = "O(N), where N is the number of active slot import and export jobs.",
              .handler = ClusterGetSlotMigrations},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = ClusterHelp},
             {.name = "info", .arity = 2, .flags = kCmdStale,
              .summary = "Returns information about the state of a node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterInfo},
             {.name = "keyslot", .arity = 3, .flags = kCmdStale, .summary = "Returns the hash slot for a key.",
              .since = "3.0.0",
              .complexity = "O(N) where N is the number of bytes in the key", .handler = ClusterKeySlot},
             {.name = "links", .arity = 2, .flags = kCmdStale,
              .summary = "Returns a list of all TCP links to and from peer nodes.", .since = "7.0.0",
              .complexity = "O(N) where N is the total number of Cluster nodes", .handler = ClusterLinks},
             {.name = "meet", .arity = -4, .flags = kCmdAdmin | kCmdStale,
              .summary = "Forces a node to handshake with another node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterMeet},
             {.name = "migrateslots", .arity = -4, .flags = kCmdAdmin | kCmdStale | kCmdAllShards,
              .summary = "Migrate the given slots from this node to the specified destination node.",
              .since = "9.0.0",
              .complexity = "O(N) where N is the total number of the slots between all start slot and end slot "
                            "arguments.",
              .handler = ClusterMigrateSlots},
             {.name = "myid", .arity = 2, .flags = kCmdStale, .summary = "Returns the ID of a node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterMyId},
             {.name = "myshardid", .arity = 2, .flags = kCmdStale, .summary = "Returns the shard ID of a node.",
              .since = "7.2.0",
              .complexity = "O(1)", .handler = ClusterMyShardId},
             {.name = "nodes", .arity = 2, .flags = kCmdStale,
              .summary = "Returns the cluster configuration for a node.", .since = "3.0.0",
              .complexity = "O(N) where N is the total number of Cluster nodes", .handler = ClusterNodes},
             {.name = "replicas", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Lists the replica nodes of a master node.", .since = "5.0.0",
              .complexity = "O(N) where N is the number of replicas.", .handler = ClusterReplicas},
             {.name = "replicate", .arity = 3, .flags = kCmdAdmin | kCmdStale | kCmdAllShards,
              .summary = "Configure a node as replica of a master node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterReplicate},
             {.name = "reset", .arity = -2, .flags = kCmdAdmin | kCmdNoscript | kCmdStale | kCmdAllShards,
              .summary = "Resets a node.", .since = "3.0.0",
              .complexity = "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.",
              .handler = ClusterReset},
             {.name = "saveconfig", .arity = 2, .flags = kCmdAdmin | kCmdStale,
              .summary = "Forces a node to save the cluster configuration to disk.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterSaveConfig},
             {.name = "set-config-epoch", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Sets the configuration epoch for a new node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterSetConfigEpoch},
             {.name = "setslot", .arity = -4, .flags = kCmdAdmin | kCmdStale | kCmdAllShards,
              .summary = "Binds a hash slot to a node.", .since = "3.0.0",
              .complexity = "O(1)", .handler = ClusterSetSlot},
             {.name = "shards", .arity = 2, .flags = kCmdStale,
              .summary = "Returns the mapping of cluster slots to shards.", .since = "7.0.0",
              .complexity = "O(N) where N is the total number of cluster nodes", .handler = ClusterShards},
             {.name = "slaves", .arity = 3, .flags = kCmdAdmin | kCmdStale,
              .summary = "Lists the replica nodes of a master node.", .since = "3.0.0",
              .complexity = "O(N) where N is the number of replicas.", .handler = ClusterReplicas},
             {.name = "syncslots", .arity = -3, .flags = kCmdAdmin | kCmdStale | kCmdAllShards,
              .summary = "An internal command used in slot migration.", .since = "9.0.0",
              .complexity = "Depends on subcommand.", .handler = ClusterSyncSlots},
             {.name = "slots", .arity = 2, .flags = kCmdStale,
              .summary = "Returns the mapping of cluster slots to nodes.", .since = "3.0.0",
              .complexity = "O(N) where N is the total number of Cluster nodes", .handler = ClusterSlots},
         }});
}

}  // namespace peregrine
