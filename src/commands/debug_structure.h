// DEBUG's subcommands about values' and tables' layout (debug_structure.cc),
// called by DEBUG's handler with their number of arguments checked.
#pragma once

#include "server/command_context.h"

namespace peregrine {

void DebugListpack(CommandContext& ctx);                  // DEBUG LISTPACK key
void DebugQuicklist(CommandContext& ctx);                 // DEBUG QUICKLIST key [0|1|2]
void DebugHtstats(CommandContext& ctx);                   // DEBUG HTSTATS dbid [full]
void DebugHtstatsKey(CommandContext& ctx);                // DEBUG HTSTATS-KEY key [full]
void DebugQuicklistPackedThreshold(CommandContext& ctx);  // DEBUG QUICKLIST-PACKED-THRESHOLD size

}  // namespace peregrine
