// Atomic slot migration's commands (cluster/slot_migration.h), as Valkey 9
// has them: CLUSTER MIGRATESLOTS, GETSLOTMIGRATIONS, CANCELSLOTMIGRATIONS,
// and the internal CLUSTER SYNCSLOTS the source speaks to the target.
#include "commands/cluster_migrate_commands.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "cluster/cluster_bus.h"
#include "cluster/slot_migration.h"
#include "commands/common.h"
#include "core/numbers.h"
#include "core/slot.h"
#include "server/client.h"

namespace peregrine {

using cluster::ClusterBus;
using cluster::SlotMigrations;

namespace {

// Slot ranges from args[*at] on, up to the first argument that is not a
// number (Valkey's parseSlotRangesOrReply): false with the error replied.
bool ParseRanges(CommandContext& ctx, size_t* at, std::vector<std::pair<int, int>>* ranges) {
  std::vector<int64_t> nums;
  size_t i = *at;
  for (; i < ctx.args.size(); i++) {
    int64_t v;
    if (!ParseInt64(ctx.args[i], &v)) {
      if (nums.size() % 2 == 1) {
        ctx.reply.Error("ERR Invalid or out of range slot");
        return false;
      }
      break;
    }
    if (v < 0 || v >= static_cast<int64_t>(kNumSlots)) {
      ctx.reply.Error("ERR Invalid or out of range slot");
      return false;
    }
    nums.push_back(v);
  }
  if (nums.size() % 2 == 1) {
    ctx.reply.Error("ERR No end slot for final slot range");
    return false;
  }
  if (nums.empty()) {
    ctx.reply.Error("ERR No slot ranges specified");
    return false;
  }
  for (size_t k = 0; k < nums.size(); k += 2) {
    const int s = static_cast<int>(nums[k]), e = static_cast<int>(nums[k + 1]);
    if (s > e) {
      ctx.reply.Error("ERR Start slot number " + std::to_string(s) + " is greater than end slot number " +
                      std::to_string(e) + ".");
      return false;
    }
    for (const auto& [ps, pe] : *ranges)
      if (s <= pe && ps <= e) {
        ctx.reply.Error("ERR Slot range " + std::to_string(s) + "-" + std::to_string(e) +
                        " overlaps with previous range " + std::to_string(ps) + "-" + std::to_string(pe) + ".");
        return false;
      }
    ranges->emplace_back(s, e);
  }
  *at = i;
  return true;
}

}  // namespace

void DebugSlotMigration(CommandContext& ctx) {
  if (ctx.args.size() != 4) return ReplySubcommandSyntaxError(ctx);
  const bool on = std::atoi(std::string(ctx.args[3]).c_str()) != 0;
  const bool pause = EqualsIgnoreCase(ctx.args[2], "prevent-pause");
  if (!pause && !EqualsIgnoreCase(ctx.args[2], "prevent-failover")) return ReplySubcommandSyntaxError(ctx);
  ClusterBus* bus = ClusterBusOrReply(ctx);
  if (bus == nullptr) return;
  if (pause)
    bus->migrations()->SetPreventPause(on);
  else
    bus->migrations()->SetPreventFailover(on);
  ctx.reply.Ok();
}

void ClusterMigrateSlots(CommandContext& ctx) {
  ClusterBus* bus = ClusterBusOrReply(ctx);
  if (bus == nullptr) return;
  SlotMigrations& jobs = *bus->migrations();
  if (std::string e = bus->CanMigrate(); !e.empty()) return ctx.reply.Error(e);
  std::vector<SlotMigrations::Request> requests;
  std::vector<bool> all(kNumSlots, false);
  size_t i = 2;
  while (i < ctx.args.size()) {
    if (!EqualsIgnoreCase(ctx.args[i], "slotsrange")) return ctx.reply.Error("ERR syntax error");
    i++;
    SlotMigrations::Request r;
    if (!ParseRanges(ctx, &i, &r.ranges)) return;
    if (std::string e = bus->MigrationRangesCheck(r.ranges); !e.empty()) return ctx.reply.Error(e);
    r.slots.assign(kNumSlots, false);
    for (const auto& [s, e] : r.ranges)
      for (int k = s; k <= e; k++) r.slots[static_cast<size_t>(k)] = true;
    if (const int busy = jobs.FirstExporting(r.slots); busy >= 0)
      return ctx.reply.Error("ERR I am already migrating slot " + std::to_string(busy) + ".");
    for (size_t s = 0; s < kNumSlots; s++)
      if (r.slots[s] && all[s]) return ctx.reply.Error("ERR Slot ranges in migrations overlap");
    for (size_t s = 0; s < kNumSlots; s++)
      if (r.slots[s]) all[s] = true;
    if (i + 1 >= ctx.args.size() || !EqualsIgnoreCase(ctx.args[i], "node")) return ctx.reply.Error("ERR syntax error");
    r.target = std::string(ctx.args[i + 1]);
    i += 2;
    if (std::string e = bus->MigrationTargetCheck(r.target); !e.empty()) return ctx.reply.Error(e);
    requests.push_back(std::move(r));
  }
  jobs.Start(std::move(requests));
  ctx.reply.Ok();
}

void ClusterGetSlotMigrations(CommandContext& ctx) {
  ClusterBus* bus = ClusterBusOrReply(ctx);
  if (bus == nullptr) return;
  const std::vector<SlotMigrations::Info> list = bus->migrations()->List();
  ctx.reply.ArrayHeader(list.size());
  for (const SlotMigrations::Info& m : list) {
    ctx.reply.MapHeader(10);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(m.name);
    ctx.reply.Bulk("operation");
    ctx.reply.Bulk(m.operation);
    ctx.reply.Bulk("slot_ranges");
    ctx.reply.Bulk(m.slot_ranges);
    ctx.reply.Bulk("target_node");
    ctx.reply.Bulk(m.target_node);
    ctx.reply.Bulk("source_node");
    ctx.reply.Bulk(m.source_node);
    ctx.reply.Bulk("create_time");
    ctx.reply.Integer(m.create_time);
    ctx.reply.Bulk("last_update_time");
    ctx.reply.Integer(m.last_update_time);
    ctx.reply.Bulk("last_ack_time");
    ctx.reply.Integer(m.last_ack_time);
    ctx.reply.Bulk("state");
    ctx.reply.Bulk(m.state);
    ctx.reply.Bulk("message");
    ctx.reply.Bulk(m.message);
  }
}

void ClusterCancelSlotMigrations(CommandContext& ctx) {
  ClusterBus* bus = ClusterBusOrReply(ctx);
  if (bus == nullptr) return;
  if (bus->migrations()->CancelAll() == 0) return ctx.reply.Error("ERR No migrations ongoing");
  ctx.reply.Ok();
}

// CLUSTER SYNCSLOTS ESTABLISH SOURCE <id> NAME <name> SLOTSRANGE <s e>...
// (the connection becomes the import's), TAKEOVER NAME <name>.
void ClusterSyncSlots(CommandContext& ctx) {
  ClusterBus* bus = ClusterBusOrReply(ctx);
  if (bus == nullptr) return;
  SlotMigrations& jobs = *bus->migrations();
  const std::string_view sub = ctx.args[2];
  if (EqualsIgnoreCase(sub, "establish")) {
    std::string source, name;
    std::vector<std::pair<int, int>> ranges;
    bool have_ranges = false;
    for (size_t i = 3; i < ctx.args.size();) {
      if (EqualsIgnoreCase(ctx.args[i], "source") && source.empty() && i + 1 < ctx.args.size()) {
        source = std::string(ctx.args[i + 1]);
        i += 2;
      } else if (EqualsIgnoreCase(ctx.args[i], "name") && name.empty() && i + 1 < ctx.args.size()) {
        name = std::string(ctx.args[i + 1]);
        i += 2;
      } else if (EqualsIgnoreCase(ctx.args[i], "slotsrange") && !have_ranges) {
        i++;
        if (!ParseRanges(ctx, &i, &ranges)) return;
        have_ranges = true;
      } else {
        return ctx.reply.Error("ERR syntax error");
      }
    }
    if (source.empty() || name.empty() || !have_ranges) return ctx.reply.Error("ERR syntax error");
    if (ctx.client.import_slots != nullptr) return ctx.reply.Error("ERR This connection imports slots already");
    // (Keys there would be a failed import's, not removed yet: they would
    // be removed over the new one's.)
    // They are removed (the source may try again once they are gone).
    const size_t shards = ctx.server.num_shards();
    std::vector<bool> with_keys(kNumSlots, false);
    int first = -1;
    for (const auto& [s, e] : ranges)
      for (int k = s; k <= e; k++)
        if (ctx.server.shard(static_cast<size_t>(k) * shards / kNumSlots).db(0).KeysInSlot(static_cast<uint32_t>(k)) > 0) {
          with_keys[static_cast<size_t>(k)] = true;
          if (first < 0) first = k;
        }
    if (first >= 0) {
      jobs.RemoveLeftovers(with_keys);
      return ctx.reply.Error("ERR Slot " + std::to_string(first) + " already holds keys on the target node");
    }
    std::shared_ptr<const std::vector<bool>> slots;
    const std::string error = jobs.BeginImport(name, source, std::move(ranges), ctx.client.id, &slots);
    if (!error.empty()) return ctx.reply.Error(error);
    ctx.client.import_slots = std::move(slots);
    ctx.client.import_name = name;
    return ctx.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "takeover")) {
    if (ctx.client.import_slots == nullptr)
      return ctx.reply.Error("ERR CLUSTER SYNCSLOTS TAKEOVER should only be used by slot migration clients");
    if (ctx.args.size() != 5 || !EqualsIgnoreCase(ctx.args[3], "name")) return ctx.reply.Error("ERR syntax error");
    const std::string error = jobs.FinishImport(std::string(ctx.args[4]), ctx.client.id);
    if (!error.empty()) return ctx.reply.Error(error);
    ctx.client.import_slots.reset();
    ctx.client.import_name.clear();
    return ctx.reply.Ok();
  }
  ctx.reply.Error("ERR syntax error");
}

bool SlotMigrationsBlockSetSlot(CommandContext& ctx, ClusterBus& bus) {
  SlotMigrations* jobs = bus.migrations();
  if (jobs == nullptr) return false;
  if (jobs->Importing()) {
    ctx.reply.Error("ERR Slot import in progress.");
    return true;
  }
  if (jobs->Exporting()) {
    ctx.reply.Error("ERR Slot export in progress.");
    return true;
  }
  return false;
}

}  // namespace peregrine
