// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH,
// their sharded forms SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, and PUBSUB
// CHANNELS / NUMSUB / NUMPAT / SHARDCHANNELS / SHARDNUMSUB / HELP
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

// The count a confirmation carries: channels and patterns, or the shard
// channels for SSUBSCRIBE and SUNSUBSCRIBE (as Redis counts them apart).
size_t SubscriptionCount(const Client& c, bool shard) {
  if (c.subs == nullptr) return 0;
  return shard ? c.subs->shard_channels.size() : c.subs->count();
}

// The confirmation of one (un)subscription: [kind, name, subscriptions
// left], a push in RESP3. A null name when there was nothing to leave.
void Confirm(CommandContext& ctx, std::string_view kind, const std::string_view* name) {
  ctx.reply.PushHeader(3);
  ctx.reply.Bulk(kind);
  if (name != nullptr)
    ctx.reply.Bulk(*name);
  else
    ctx.reply.Null();
  ctx.reply.Integer(static_cast<int64_t>(SubscriptionCount(ctx.client, kind == "ssubscribe" || kind == "sunsubscribe")));
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

// SSUBSCRIBE: as SUBSCRIBE, but not inside a transaction (Redis: a client
// that must get one reply per command cannot take it there).
void SSubscribeCommand(CommandContext& ctx) {
  if (ctx.worker.in_exec()) {
    ctx.reply.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    return;
  }
  PubSubRegistry& registry = ctx.worker.pubsub();
  // (In cluster mode, the slot table it was routed by: a slot that leaves
  // this node later drops it.)
  const ClusterService* cluster = ctx.server.cluster();
  const uint64_t table = cluster != nullptr ? cluster->routes_version() : 0;
  for (size_t i = 1; i < ctx.args.size(); i++) {
    registry.SSubscribe(ctx.client, ctx.args[i], table);
    Confirm(ctx, "ssubscribe", &ctx.args[i]);
  }
}

enum class Kind : uint8_t { kChannels, kPatterns, kShardChannels };

// UNSUBSCRIBE / PUNSUBSCRIBE / SUNSUBSCRIBE: the names given (each
// confirmed, subscribed or not), or without any every channel (pattern,
// shard channel) of the client; with none to leave, one confirmation with
// a null name.
void Leave(CommandContext& ctx, Kind what) {
  PubSubRegistry& registry = ctx.worker.pubsub();
  static constexpr std::string_view kKinds[] = {"unsubscribe", "punsubscribe", "sunsubscribe"};
  const std::string_view kind = kKinds[static_cast<int>(what)];
  auto leave = [&](std::string_view name) {
    if (what == Kind::kPatterns)
      registry.PUnsubscribe(ctx.client, name);
    else if (what == Kind::kShardChannels)
      registry.SUnsubscribe(ctx.client, name);
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
    const ClientSubscriptions& subs = *ctx.client.subs;
    if (what == Kind::kShardChannels) {
      for (const auto& [channel, version] : subs.shard_channels) all.push_back(channel);
    } else {
      const NameSet& mine = what == Kind::kPatterns ? subs.patterns : subs.channels;
      all.assign(mine.begin(), mine.end());
    }
  }
  if (all.empty()) {
    Confirm(ctx, kind, nullptr);
    return;
  }
  for (const std::string& name : all) leave(name);
}

void UnsubscribeCommand(CommandContext& ctx) { Leave(ctx, Kind::kChannels); }
void PUnsubscribeCommand(CommandContext& ctx) { Leave(ctx, Kind::kPatterns); }
void SUnsubscribeCommand(CommandContext& ctx) { Leave(ctx, Kind::kShardChannels); }

// The subscribers beyond this server's: the replicas' (Redis sends PUBLISH
// down the stream, not to the append-only file), or in cluster mode every
// other node's, over the bus (the replicas included: not the stream then,
// as Redis's clusterPropagatePublish).
// (SPUBLISH: to the nodes of this node's shard.)
void PublishFurther(CommandContext& ctx, std::span<const std::string_view> args, bool shard) {
  if (ClusterService* cluster = ctx.server.cluster())
    cluster->PublishToCluster(args[1], args[2], shard);
  else
    ctx.worker.ReplicateOnly(ctx.client.db, args);
}

// PUBLISH and SPUBLISH (`shard`).
void Publish(CommandContext& ctx, bool shard) {
  const std::string_view channel = ctx.args[1], message = ctx.args[2];
  if (ctx.args.size() == 4) {
    // The part for this worker's subscribers of a PUBLISH whose client's
    // worker delivered to its own and counted them in args[3]
    // (Worker::Dispatch; never from a client, whose arity is 3).
    int64_t elsewhere = 0;
    ParseInt64(ctx.args[3], &elsewhere);
    ctx.reply.Integer(elsewhere + static_cast<int64_t>(ctx.worker.Publish(channel, message, true, shard)));
    PublishFurther(ctx, ctx.args.first(3), shard);
    return;
  }
  size_t receivers = 0;
  for (uint32_t w : ctx.worker.held_workers())
    receivers += ctx.server.host(w).Publish(channel, message, w == ctx.worker.index(), shard);
  ctx.reply.Integer(static_cast<int64_t>(receivers));
  PublishFurther(ctx, ctx.args, shard);
}

void PublishCommand(CommandContext& ctx) { Publish(ctx, false); }
void SPublishCommand(CommandContext& ctx) { Publish(ctx, true); }

// PUBSUB CHANNELS and SHARDCHANNELS take at most one pattern.
bool AtMostOnePattern(CommandContext& ctx) {
  if (ctx.args.size() <= 3) return true;
  ReplySubcommandSyntaxError(ctx);
  return false;
}

// PUBSUB CHANNELS and SHARDCHANNELS (`shard`), over every worker.
void ActiveChannels(CommandContext& ctx, bool shard) {
  if (!AtMostOnePattern(ctx)) return;
  // Without a pattern, every channel (Redis: no matching at all, so also "").
  const std::optional<std::string_view> pattern =
      ctx.args.size() == 3 ? std::optional<std::string_view>(ctx.args[2]) : std::nullopt;
  NameSet channels;
  for (size_t w = 0; w < ctx.server.num_shards(); w++)
    ctx.server.host(w).pubsub().ActiveChannels(pattern, &channels, shard);
  ctx.reply.ArrayHeader(channels.size());
  for (const std::string& c : channels) ctx.reply.Bulk(c);
}

// PUBSUB NUMSUB and SHARDNUMSUB.
void NumSub(CommandContext& ctx, bool shard) {
  ctx.reply.ArrayHeader((ctx.args.size() - 2) * 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    size_t n = 0;
    for (size_t w = 0; w < ctx.server.num_shards(); w++) n += ctx.server.host(w).pubsub().NumSub(ctx.args[i], shard);
    ctx.reply.Bulk(ctx.args[i]);
    ctx.reply.Integer(static_cast<int64_t>(n));
  }
}

void PubsubChannelsCommand(CommandContext& ctx) { ActiveChannels(ctx, false); }
void PubsubShardchannelsCommand(CommandContext& ctx) { ActiveChannels(ctx, true); }
void PubsubNumsubCommand(CommandContext& ctx) { NumSub(ctx, false); }
void PubsubShardnumsubCommand(CommandContext& ctx) { NumSub(ctx, true); }

void PubsubNumpatCommand(CommandContext& ctx) {
  NameSet patterns;
  for (size_t w = 0; w < ctx.server.num_shards(); w++) ctx.server.host(w).pubsub().ActivePatterns(&patterns);
  ctx.reply.Integer(static_cast<int64_t>(patterns.size()));
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
      "    Print this help.",
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

  // Sharded Pub/Sub (7.0): its channels, at key positions for a cluster's
  // routing (kCmdShardChannels); SPUBLISH reaches every worker with
  // subscribers as PUBLISH does, and in cluster mode the other nodes of
  // this node's shard.
  f.Add({.name = "ssubscribe", .arity = -2, .flags = kSub | kCmdShardChannels,
         .summary = "Listens for messages published to shard channels.", .since = "7.0.0",
         .complexity = "O(N) where N is the number of shard channels to subscribe to.",
         .handler = SSubscribeCommand});
  f.Add({.name = "sunsubscribe", .arity = -1, .flags = kSub | kCmdShardChannels,
         .summary = "Stops listening to messages posted to shard channels.", .since = "7.0.0",
         .complexity = "O(N) where N is the number of shard channels to unsubscribe.",
         .handler = SUnsubscribeCommand});
  f.Add({.name = "spublish", .arity = 3,
         .flags = kCmdPubsub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate | kCmdPublishes |
                  kCmdShardChannels,
         .summary = "Post a message to a shard channel", .since = "7.0.0",
         .complexity = "O(N) where N is the number of clients subscribed to the receiving shard channel.",
         .handler = SPublishCommand});

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
             {.name = "shardchannels", .arity = -2, .flags = kQuery,
              .summary = "Returns the active shard channels.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of active shard channels, and assuming constant time pattern "
                            "matching (relatively short shard channels).",
              .handler = PubsubShardchannelsCommand},
             {.name = "shardnumsub", .arity = -2, .flags = kQuery,
              .summary = "Returns the count of subscribers of shard channels.", .since = "7.0.0",
              .complexity = "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
              .handler = PubsubShardnumsubCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "6.2.0",
              .complexity = "O(1)", .handler = PubsubHelpCommand},
         }});
}

}  // namespace peregrine
