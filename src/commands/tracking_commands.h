// CLIENT TRACKING's commands (tracking_commands.cc; server/tracking.h).
#pragma once

namespace peregrine {

struct CommandContext;

void ClientTrackingCommand(CommandContext& ctx);  // holding every shard
void ClientCachingCommand(CommandContext& ctx);
void ClientGetredirCommand(CommandContext& ctx);
void ClientTrackinginfoCommand(CommandContext& ctx);

}  // namespace peregrine
