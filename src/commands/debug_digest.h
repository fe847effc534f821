// DEBUG DIGEST / DIGEST-VALUE (debug_digest.cc), called by DEBUG's handler.
#pragma once

#include "server/command_context.h"

namespace peregrine {

void DebugDigest(CommandContext& ctx);       // DEBUG DIGEST
void DebugDigestValue(CommandContext& ctx);  // DEBUG DIGEST-VALUE key [key ...]

}  // namespace peregrine
