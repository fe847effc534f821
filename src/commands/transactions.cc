// MULTI, EXEC, DISCARD (docs/transactions.md). Inside MULTI the worker
// queues every other command (Worker::ExecuteCommand); EXEC runs the queue
// holding the shards of its keys (Worker::RunTransaction).
#include <memory>

#include "commands/common.h"
#include "server/client.h"
#include "server/worker.h"

namespace peregrine {

namespace {

void MultiCommand(CommandContext& ctx) {
  if (ctx.client.multi != nullptr) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  ctx.client.multi = std::make_unique<Client::Transaction>();
  ctx.reply.Ok();
}

void ExecCommand(CommandContext& ctx) { ctx.worker.RunTransaction(ctx); }

void DiscardCommand(CommandContext& ctx) {
  if (ctx.client.multi == nullptr) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  ctx.client.multi.reset();
  ctx.reply.Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable& t) {
  auto spec = [](std::string_view name, uint32_t flags, CommandHandler h, std::string_view since,
                 std::string_view summary, std::string_view complexity) {
    return CommandSpec{.name = name, .arity = 1, .flags = flags | kCmdNoscript | kCmdLoading | kCmdStale |
                                                             kCmdNotQueued,
                       .acl = kAclTransaction, .summary = summary, .since = since, .group = "transactions",
                       .complexity = complexity, .handler = h};
  };
  t.Register(spec("multi", kCmdFast | kCmdAllowBusy, MultiCommand, "1.2.0", "Starts a transaction.", "O(1)"));
  t.Register(spec("exec", kCmdSkipSlowlog | kCmdExec, ExecCommand, "1.2.0", "Executes all commands in a transaction.",
                  "Depends on commands in the transaction"));
  t.Register(spec("discard", kCmdFast | kCmdAllowBusy, DiscardCommand, "2.0.0", "Discards a transaction.",
                  "O(N), when N is the number of queued commands"));
}

}  // namespace peregrine
