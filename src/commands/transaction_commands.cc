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
  CommandSpec watch = spec("watch", kCmdFast | kCmdAllowBusy | kCmdLocal, WatchCommand, "2.2.0",
                           "Monitors changes to keys to determine the execution of a transaction.",
                           "O(1) for every key.");
  watch.arity = -2;
  watch.first_key = 1;
  watch.last_key = -1;
  watch.key_step = 1;
  t.Register(std::move(watch));
  // Not flagged kCmdNotQueued: inside MULTI it is queued, as in Redis.
  CommandSpec unwatch = spec("unwatch", kCmdFast | kCmdAllowBusy, UnwatchCommand, "2.2.0",
                             "Forgets about watched keys of a transaction.", "O(1)");
  unwatch.flags &= ~kCmdNotQueued;
  t.Register(std::move(unwatch));
}

}  // namespace peregrine
