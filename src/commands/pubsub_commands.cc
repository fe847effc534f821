// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH
// and PUBSUB CHANNELS / NUMSUB / NUMPAT / SHARDCHANNELS / SHARDNUMSUB / HELP
// (docs/pubsub.md). Subscriptions live in the subscriber's worker; PUBLISH
// runs holding every worker that has subscribers and delivers into their
// clients' output directly, so the count it replies is exact and a message
// reaches every subscriber before PUBLISH returns, as in Redis.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "commands/common.h"
#include "core/numbers.h"

namespace peregrine {
namespace {

using NameSet = std::set<std::string, std::less<>>;

size_t SubscriptionCount(const Client& c) { return c.subs != nullptr ? c.subs->count() : 0; }

// The confirmation of one (un)subscription: [kind, name, subscriptions
// left], a push in RESP3. A null name when there was nothing to leave.
void Confirm(CommandContext& ctx, std::string_view kind, const std::string_view* name) {
  ctx.reply.PushHeader(3);
  ctx.reply.Bulk(kind);
  if (name != nullptr)
    ctx.reply.Bulk(*name);
  else
    ctx.reply.Null();
  ctx.reply.Integer(static_cast<int64_t>(SubscriptionCount(ctx.client)));
}

void SubscribeCommand(CommandContext& ctx) {
  PubSubRegistry& registry = ctx.worker.pubsub();
  for (size_t i = 1; i < ctx.args.size(); i++) {
    registry.Subscribe(ctx.client, ctx.args[i]);
    Confirm(ctx, "subscribe", &ctx.args[i]);
  }
}

void PSubscribeCommand(CommandContext& ctx) {
  PubSubRegistry& registry = ctx.worker.pubsub();
  for (size_t i = 1; i < ctx.args.size(); i++) {
    registry.PSubscribe(ctx.client, ctx.args[i]);
    Confirm(ctx, "psubscribe", &ctx.args[i]);
  }
}

// UNSUBSCRIBE / PUNSUBSCRIBE: the names given (each confirmed, subscribed or
// not), or without any every channel (pattern) of the client; with none to
// leave, one confirmation with a null name.
void Leave(CommandContext& ctx, bool patterns) {
  PubSubRegistry& registry = ctx.worker.pubsub();
  const std::string_view kind = patterns ? "punsubscribe" : "unsubscribe";
  auto leave = [&](std::string_view name) {
    if (patterns)
      registry.PUnsubscribe(ctx.client, name);
    else
      registry.Unsubscribe(ctx.client, name);
    Confirm(ctx, kind, &name);
  };
  if (ctx.args.size() > 1) {
    for (size_t i = 1; i < ctx.args.size(); i++) leave(ctx.args[i]);
    return;
  }
  std::vector<std::string> all;
  if (ctx.client.subs != nullptr) {
    const NameSet& mine = patterns ? ctx.client.subs->patterns : ctx.client.subs->channels;
    all.assign(mine.begin(), mine.end());
  }
  if (all.empty()) {
    Confirm(ctx, kind, nullptr);
    return;
  }
  for (const std::string& name : all) leave(name);
}

void UnsubscribeCommand(CommandContext& ctx) { Leave(ctx, false); }
void PUnsubscribeCommand(CommandContext& ctx) { Leave(ctx, true); }

// The subscribers beyond this server's: the replicas' (Redis sends PUBLISH
// down the stream, not to the append-only file), or in cluster mode every
// other node's, over the bus (the replicas included: not the stream then,
// as Redis's clusterPropagatePublish).
void PublishFurther(CommandContext& ctx, std::span<const std::string_view> args) {
  if (ClusterService* cluster = ctx.server.cluster())
    cluster->PublishToCluster(args[1], args[2]);
  else
    ctx.worker.ReplicateOnly(ctx.client.db, args);
}

void PublishCommand(CommandContext& ctx) {
  const std::string_view channel = ctx.args[1], message = ctx.args[2];
  if (ctx.args.size() == 4) {
    // The part for this worker's subscribers of a PUBLISH whose client's
    // worker delivered to its own and counted them in args[3]
    // (Worker::Dispatch; never from a client, whose arity is 3).
    int64_t elsewhere = 0;
    ParseInt64(ctx.args[3], &elsewhere);
    ctx.reply.Integer(elsewhere + static_cast<int64_t>(ctx.worker.Publish(channel, message, true)));
    PublishFurther(ctx, ctx.args.first(3));
    return;
  }
  size_t receivers = 0;
  for (uint32_t w : ctx.worker.held_workers())
    receivers += ctx.server.host(w).Publish(channel, message, w == ctx.worker.index());
  ctx.reply.Integer(static_cast<int64_t>(receivers));
  PublishFurther(ctx, ctx.args);
}

// PUBSUB CHANNELS and SHARDCHANNELS take at most one pattern.
bool AtMostOnePattern(CommandContext& ctx) {
  if (ctx.args.size() <= 3) return true;
  ReplySubcommandSyntaxError(ctx);
  return false;
}

void PubsubChannelsCommand(CommandContext& ctx) {
  if (!AtMostOnePattern(ctx)) return;
  // Without a pattern, every channel (Redis: no matching at all, so also "").
  const std::optional<std::string_view> pattern =
      ctx.args.size() == 3 ? std::optional<std::string_view>(ctx.args[2]) : std::nullopt;
  NameSet channels;
  for (size_t w = 0; w < ctx.server.num_shards(); w++) ctx.server.host(w).pubsub().ActiveChannels(pattern, &channels);
  ctx.reply.ArrayHeader(channels.size());
  for (const std::string& c : channels) ctx.reply.Bulk(c);
}

void PubsubNumsubCommand(CommandContext& ctx) {
  ctx.reply.ArrayHeader((ctx.args.size() - 2) * 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    size_t n = 0;
    for (size_t w = 0; w < ctx.server.num_shards(); w++) n += ctx.server.host(w).pubsub().NumSub(ctx.args[i]);
    ctx.reply.Bulk(ctx.args[i]);
    ctx.reply.Integer(static_cast<int64_t>(n));
  }
}

void PubsubNumpatCommand(CommandContext& ctx) {
  NameSet patterns;
  for (size_t w = 0; w < ctx.server.num_shards(); w++) ctx.server.host(w).pubsub().ActivePatterns(&patterns);
  ctx.reply.Integer(static_cast<int64_t>(patterns.size()));
}

// Sharded Pub/Sub (SSUBSCRIBE, SPUBLISH) is not implemented: there are no
// shard channels, so these report none, as Redis does with none.
void PubsubShardchannelsCommand(CommandContext& ctx) {
  if (!AtMostOnePattern(ctx)) return;
  ctx.reply.ArrayHeader(0);
}

void PubsubShardnumsubCommand(CommandContext& ctx) {
  ctx.reply.ArrayHeader((ctx.args.size() - 2) * 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    ctx.reply.Bulk(ctx.args[i]);
    ctx.reply.Integer(0);
  }
}

void PubsubHelpCommand(CommandContext& ctx) {
  static const std::vector<std::string_view> kLines = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.ArrayHeader(kLines.size());
  for (std::string_view l : kLines) ctx.reply.SimpleString(l);
}

}  // namespace

void RegisterPubSubCommands(CommandTable& t) {
  CommandFamily f(t, 0, "pubsub");
  // Subscribing: allowed to a subscribed RESP2 client; never with keys (the
  // subscriptions belong to the client's own worker).
  const uint32_t kSub = kCmdPubsub | kCmdNoscript | kCmdLoading | kCmdStale | kCmdPubsubContext;
  f.Add({.name = "subscribe", .arity = -2, .flags = kSub, .summary = "Listens for messages published to channels.",
         .since = "2.0.0", .complexity = "O(N) where N is the number of channels to subscribe to.",
         .handler = SubscribeCommand});
  f.Add({.name = "unsubscribe", .arity = -1, .flags = kSub,
         .summary = "Stops listening to messages posted to channels.", .since = "2.0.0",
         .complexity = "O(N) where N is the number of channels to unsubscribe.", .handler = UnsubscribeCommand});
  f.Add({.name = "psubscribe", .arity = -2, .flags = kSub,
         .summary = "Listens for messages published to channels that match one or more patterns.", .since = "2.0.0",
         .complexity = "O(N) where N is the number of patterns to subscribe to.", .handler = PSubscribeCommand});
  f.Add({.name = "punsubscribe", .arity = -1, .flags = kSub,
         .summary = "Stops listening to messages published to channels that match one or more patterns.",
         .since = "2.0.0", .complexity = "O(N) where N is the number of patterns to unsubscribe.",
         .handler = PUnsubscribeCommand});
  f.Add({.name = "publish", .arity = 3,
         .flags = kCmdPubsub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate | kCmdPublishes,
         .summary = "Posts a message to a channel.", .since = "2.0.0",
         .complexity = "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total "
                       "number of subscribed patterns (by any client).",
         .handler = PublishCommand});

  const uint32_t kQuery = kCmdPubsub | kCmdLoading | kCmdStale | kCmdAllShards;
  f.Add({.name = "pubsub", .arity = -2, .summary = "A container for Pub/Sub commands.", .since = "2.8.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "channels", .arity = -2, .flags = kQuery, .summary = "Returns the active channels.",
              .since = "2.8.0",
              .complexity = "O(N) where N is the number of active channels, and assuming constant time pattern "
                            "matching (relatively short channels and patterns)",
              .handler = PubsubChannelsCommand},
             {.name = "numsub", .arity = -2, .flags = kQuery, .summary = "Returns a count of subscribers to channels.",
              .since = "2.8.0",
              .complexity = "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
              .handler = PubsubNumsubCommand},
             {.name = "numpat", .arity = 2, .flags = kQuery,
              .summary = "Returns a count of unique pattern subscriptions.", .since = "2.8.0", .complexity = "O(1)",
              .handler = PubsubNumpatCommand},
             {.name = "shardchannels", .arity = -2, .flags = kCmdPubsub | kCmdLoading | kCmdStale,
              .summary = "Returns the active shard channels.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of active shard channels, and assuming constant time pattern "
                            "matching (relatively short shard channels).",
              .handler = PubsubShardchannelsCommand},
             {.name = "shardnumsub", .arity = -2, .flags = kCmdPubsub | kCmdLoading | kCmdStale,
              .summary = "Returns the count of subscribers of shard channels.", .since = "7.0.0",
              .complexity = "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
              .handler = PubsubShardnumsubCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "6.2.0",
              .complexity = "O(1)", .handler = PubsubHelpCommand},
         }});
}

}  // namespace peregrine
