// The snapshot parts of SHUTDOWN and DEBUG (commands/server_commands.cc
// parses them): see persistence_commands.cc.
#pragma once

#include "server/command.h"

namespace peregrine {

// SHUTDOWN's save (every shard held): none with NOSAVE, or without SAVE
// when no schedule is configured; else the snapshot now. False (logged) if
// it failed: the server then keeps running, as Redis does.
bool SaveForShutdown(CommandContext& ctx, bool save, bool nosave);

// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] (every shard held).
void DebugReloadCommand(CommandContext& ctx);

}  // namespace peregrine
