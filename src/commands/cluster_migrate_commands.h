// Atomic slot migration's CLUSTER subcommands (cluster_migrate_commands.cc),
// registered with the others in cluster_commands.cc.
#pragma once

#include "server/command_context.h"

namespace peregrine {

namespace cluster {
class ClusterBus;
}

// The cluster bus, or null with the error replied (cluster mode off).
cluster::ClusterBus* ClusterBusOrReply(CommandContext& ctx);

void ClusterMigrateSlots(CommandContext& ctx);
void ClusterGetSlotMigrations(CommandContext& ctx);
void ClusterCancelSlotMigrations(CommandContext& ctx);
void ClusterSyncSlots(CommandContext& ctx);
// DEBUG SLOTMIGRATION PREVENT-PAUSE|PREVENT-FAILOVER <0|1> (Valkey's; the
// argument read as atoi reads it).
void DebugSlotMigration(CommandContext& ctx);
// SETSLOT while an atomic migration runs: refused (replied), as Valkey's.
bool SlotMigrationsBlockSetSlot(CommandContext& ctx, cluster::ClusterBus& bus);

}  // namespace peregrine
