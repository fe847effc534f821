// MULTI, EXEC, DISCARD, WATCH, UNWATCH (docs/transactions.md). Inside MULTI
// the worker queues every other command (Worker::ExecuteCommand); EXEC runs
// the queue holding the shards of its keys (Worker::RunTransaction). WATCH
// runs on the client's worker holding the shards of its keys, and enters
// them in those shards' watch tables (server/watch.h).
#include <memory>

#include "commands/common.h"
#include "server/client.h"

namespace peregrine {

namespace {

void MultiCommand(CommandContext& ctx) {
  if (ctx.client.multi != nullptr) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  Client& c = ctx.client;
  c.multi = c.spare_multi != nullptr ? std::move(c.spare_multi) : std::make_unique<Client::Transaction>();
  ctx.reply.Ok();
}

void ExecCommand(CommandContext& ctx) { ctx.worker.RunTransaction(ctx); }

void DiscardCommand(CommandContext& ctx) {
  if (ctx.client.multi == nullptr) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  ctx.worker.DiscardTransaction(ctx.client);
  ctx.reply.Ok();
}

void WatchCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  if (c.multi != nullptr) {
    ctx.reply.Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  // Already dirty: its EXEC fails whatever else it watches.
  if (c.watch != nullptr && c.watch->Dirty()) {
    ctx.reply.Ok();
    return;
  }
  if (c.watch == nullptr) c.watch = std::make_shared<WatchState>();
  for (size_t i = 1; i < ctx.args.size(); i++) {
    const std::string_view key = ctx.args[i];
    Shard& shard = ctx.ShardOf(key);
    // A key whose deadline has passed is watched as missing (Redis's
    // watchedKey.expired); it is not deleted here.
    const Db::Entry* e = shard.db(c.db).FindRaw(key);
    const bool expired = e != nullptr && Db::IsExpired(*e, ctx.now_ms);
    if (!shard.watches().Add(c.db, key, c.watch, expired)) continue;  // (watched already)
    const int64_t deadline = e != nullptr && !expired && e->has_expire() ? e->expire_ms() : -1;
    c.watch->keys.push_back({static_cast<uint32_t>(shard.index()), c.db, std::string(key), deadline});
  }
  ctx.reply.Ok();
}

void UnwatchCommand(CommandContext& ctx) {
  ctx.worker.Unwatch(ctx.client);
  ctx.reply.Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable& t) {
  CommandFamily f(t, kAclTransaction, "transactions");
  constexpr uint32_t kTx = kCmdNoscript | kCmdLoading | kCmdStale;
  f.Add({.name = "multi", .arity = 1, .flags = kCmdFast | kCmdAllowBusy | kTx | kCmdNotQueued,
         .summary = "Starts a transaction.", .since = "1.2.0", .complexity = "O(1)", .handler = MultiCommand});
  f.Add({.name = "exec", .arity = 1, .flags = kCmdSkipSlowlog | kCmdExec | kTx | kCmdNotQueued,
         .summary = "Executes all commands in a transaction.", .since = "1.2.0",
         .complexity = "Depends on commands in the transaction", .handler = ExecCommand});
  f.Add({.name = "discard", .arity = 1, .flags = kCmdFast | kCmdAllowBusy | kTx | kCmdNotQueued,
         .summary = "Discards a transaction.", .since = "2.0.0",
         .complexity = "O(N), when N is the number of queued commands", .handler = DiscardCommand});
  f.Add({.name = "watch", .arity = -2, .flags = kCmdFast | kCmdAllowBusy | kCmdLocal | kTx | kCmdNotQueued,
         .first_key = 1, .last_key = -1,
         .summary = "Monitors changes to keys to determine the execution of a transaction.", .since = "2.2.0",
         .complexity = "O(1) for every key.", .handler = WatchCommand});
  // Not flagged kCmdNotQueued: inside MULTI it is queued, as in Redis.
  f.Add({.name = "unwatch", .arity = 1, .flags = kCmdFast | kCmdAllowBusy | kTx,
         .summary = "Forgets about watched keys of a transaction.", .since = "2.2.0", .complexity = "O(1)",
         .handler = UnwatchCommand});
}

}  // namespace peregrine
