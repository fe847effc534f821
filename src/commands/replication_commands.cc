// Replication commands (issue #38, docs/replication.md). So far the
// primary's answers with no replica attached: ROLE.
#include "commands/common.h"

namespace peregrine {
namespace {

// ROLE: "master", the replication offset, and the replicas (ip, port,
// acknowledged offset): none yet.
void RoleCommand(CommandContext& ctx) {
  ctx.reply.ArrayHeader(3);
  ctx.reply.Bulk("master");
  ctx.reply.Integer(0);  // master_repl_offset: no stream without a replica
  ctx.reply.ArrayHeader(0);
}

}  // namespace

void RegisterReplicationCommands(CommandTable& t) {
  CommandFamily f(t, kAclAdmin | kAclDangerous, "server");
  f.Add({.name = "role", .arity = 1, .flags = kCmdNoscript | kCmdLoading | kCmdStale | kCmdFast | kCmdSentinel,
         .summary = "Returns the replication role.", .since = "2.8.12", .complexity = "O(1)", .handler = RoleCommand});
}

}  // namespace peregrine
