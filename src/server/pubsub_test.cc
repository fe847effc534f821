// Unit tests for PubSubRegistry: subscription bookkeeping on both sides (the
// registry and the client's own sets), delivery to channel and pattern
// subscribers, the active-channel queries, and removal during a delivery.
#include "server/pubsub.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/client.h"

namespace peregrine {
namespace {

std::vector<std::pair<uint64_t, std::string>> Receivers(const PubSubRegistry& r, std::string_view channel,
                                                        size_t* count = nullptr) {
  std::vector<std::pair<uint64_t, std::string>> got;
  size_t n = r.ForEachReceiver(channel, [&](Client& c, std::string_view pattern) {
    got.emplace_back(c.id, std::string(pattern));
  });
  if (count != nullptr) *count = n;
  return got;
}

TEST(PubSubRegistry, SubscribeAndUnsubscribeKeepBothSides) {
  PubSubRegistry r;
  Client a(nullptr, 1, -1), b(nullptr, 2, -1);
  EXPECT_TRUE(r.Subscribe(a, "news"));
  EXPECT_FALSE(r.Subscribe(a, "news")) << "already subscribed";
  EXPECT_TRUE(r.Subscribe(a, "sport"));
  EXPECT_TRUE(r.Subscribe(b, "news"));
  EXPECT_TRUE(r.PSubscribe(b, "n*"));
  EXPECT_FALSE(r.PSubscribe(b, "n*"));
  ASSERT_NE(a.subs, nullptr);
  EXPECT_EQ(a.subs->count(), 2u);
  EXPECT_EQ(b.subs->count(), 2u);
  EXPECT_EQ(r.subscriptions(), 4u);
  EXPECT_EQ(r.channel_count(), 2u);
  EXPECT_EQ(r.pattern_count(), 1u);
  EXPECT_EQ(r.NumSub("news"), 2u);
  EXPECT_EQ(r.NumSub("nothing"), 0u);

  EXPECT_FALSE(r.Unsubscribe(a, "nothing"));
  EXPECT_FALSE(r.PUnsubscribe(a, "n*")) << "a never subscribed to the pattern";
  EXPECT_TRUE(r.Unsubscribe(a, "news"));
  EXPECT_EQ(r.NumSub("news"), 1u);
  EXPECT_TRUE(r.Unsubscribe(a, "sport"));
  EXPECT_EQ(a.subs, nullptr) << "no subscriptions left: the client leaves Pub/Sub mode";
  EXPECT_EQ(r.channel_count(), 1u) << "a channel without subscribers is gone";
  EXPECT_TRUE(r.PUnsubscribe(b, "n*"));
  EXPECT_EQ(r.pattern_count(), 0u);
  EXPECT_EQ(r.subscriptions(), 1u);
}

TEST(PubSubRegistry, DeliversToChannelThenPatternSubscribers) {
  PubSubRegistry r;
  Client a(nullptr, 1, -1), b(nullptr, 2, -1), c(nullptr, 3, -1);
  r.Subscribe(a, "news.tech");
  r.Subscribe(b, "news.tech");
  r.PSubscribe(b, "news.*");
  r.PSubscribe(c, "*tech");
  r.PSubscribe(c, "sport.*");
  size_t n = 0;
  auto got = Receivers(r, "news.tech", &n);
  EXPECT_EQ(n, 4u);
  // The channel's subscribers in subscription order, then each matching
  // pattern (in pattern order) with its subscribers.
  std::vector<std::pair<uint64_t, std::string>> want = {{1, ""}, {2, ""}, {3, "*tech"}, {2, "news.*"}};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(Receivers(r, "weather").empty());
  EXPECT_EQ(Receivers(r, "sport.x").size(), 1u);
  // Channel names are binary-safe and case-sensitive.
  EXPECT_TRUE(Receivers(r, "NEWS.TECH").empty());
  r.Subscribe(a, std::string("a\0b", 3));
  EXPECT_EQ(Receivers(r, std::string("a\0b", 3)).size(), 1u);
  EXPECT_TRUE(Receivers(r, "a").empty());
}

TEST(PubSubRegistry, RemoveClientDropsEverything) {
  PubSubRegistry r;
  Client a(nullptr, 1, -1), b(nullptr, 2, -1);
  r.Subscribe(a, "x");
  r.Subscribe(a, "y");
  r.PSubscribe(a, "*");
  r.Subscribe(b, "x");
  r.RemoveClient(a);
  EXPECT_EQ(a.subs, nullptr);
  EXPECT_EQ(r.subscriptions(), 1u);
  EXPECT_EQ(r.NumSub("x"), 1u);
  EXPECT_EQ(r.NumSub("y"), 0u);
  EXPECT_EQ(r.pattern_count(), 0u);
  r.RemoveClient(a);  // nothing left: no effect
  EXPECT_EQ(r.subscriptions(), 1u);
}

TEST(PubSubRegistry, ActiveChannelsAndPatterns) {
  PubSubRegistry r;
  Client a(nullptr, 1, -1);
  r.Subscribe(a, "news.tech");
  r.Subscribe(a, "news.art");
  r.Subscribe(a, "sport");
  r.PSubscribe(a, "n*");
  std::set<std::string, std::less<>> all, news, patterns;
  r.ActiveChannels("*", &all);
  r.ActiveChannels("news.*", &news);
  r.ActivePatterns(&patterns);
  EXPECT_EQ(all, (std::set<std::string, std::less<>>{"news.art", "news.tech", "sport"}));
  EXPECT_EQ(news, (std::set<std::string, std::less<>>{"news.art", "news.tech"}));
  EXPECT_EQ(patterns, (std::set<std::string, std::less<>>{"n*"}));
}

TEST(PubSubRegistry, EveryChannelWithoutAPatternIncludesTheEmptyOne) {
  // Redis's glob matches nothing against "" but the empty pattern; PUBSUB
  // CHANNELS without a pattern does not match at all.
  PubSubRegistry r;
  Client a(nullptr, 1, -1);
  r.Subscribe(a, "");
  r.Subscribe(a, "x");
  std::set<std::string, std::less<>> all, star;
  r.ActiveChannels(std::nullopt, &all);
  r.ActiveChannels("*", &star);
  EXPECT_EQ(all, (std::set<std::string, std::less<>>{"", "x"}));
  EXPECT_EQ(star, (std::set<std::string, std::less<>>{"x"}));
}

TEST(PubSubRegistry, ADeliveryMayRemoveSubscribers) {
  // A subscriber over its output limit is closed during the delivery, which
  // unsubscribes it: the walk must not trip over the changed lists.
  PubSubRegistry r;
  Client a(nullptr, 1, -1), b(nullptr, 2, -1), c(nullptr, 3, -1);
  for (Client* x : {&a, &b, &c}) {
    r.Subscribe(*x, "ch");
    r.PSubscribe(*x, "c*");
  }
  std::vector<uint64_t> seen;
  size_t n = r.ForEachReceiver("ch", [&](Client& x, std::string_view) {
    seen.push_back(x.id);
    r.RemoveClient(x);
  });
  EXPECT_EQ(n, 6u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(r.subscriptions(), 0u);
  EXPECT_EQ(r.channel_count(), 0u);
  EXPECT_EQ(r.pattern_count(), 0u);
}

TEST(PubSubRegistry, ShardChannelsAreTheirOwnNamespace) {
  PubSubRegistry r;
  Client a(nullptr, 1, -1), b(nullptr, 2, -1);
  EXPECT_TRUE(r.SSubscribe(a, "orders"));
  EXPECT_FALSE(r.SSubscribe(a, "orders"));
  EXPECT_TRUE(r.SSubscribe(a, "{t}x"));
  EXPECT_TRUE(r.Subscribe(b, "orders"));
  EXPECT_TRUE(r.PSubscribe(b, "*"));
  ASSERT_NE(a.subs, nullptr);
  EXPECT_EQ(a.subs->count(), 0u) << "SUBSCRIBE's count leaves shard channels out";
  EXPECT_EQ(a.subs->shard_channels.size(), 2u);
  EXPECT_EQ(r.subscriptions(), 4u);
  EXPECT_EQ(r.shard_channel_count(), 2u);
  EXPECT_EQ(r.NumSub("orders", true), 1u);
  EXPECT_EQ(r.NumSub("orders"), 1u);

  // SPUBLISH reaches only the shard channel's subscribers (no patterns);
  // PUBLISH only the others.
  std::vector<uint64_t> got;
  EXPECT_EQ(r.ForEachShardReceiver("orders", [&](Client& c) { got.push_back(c.id); }), 1u);
  EXPECT_EQ(got, std::vector<uint64_t>{1});
  EXPECT_EQ(r.ForEachShardReceiver("other", [&](Client&) { ADD_FAILURE(); }), 0u);
  EXPECT_EQ(Receivers(r, "orders"), (std::vector<std::pair<uint64_t, std::string>>{{2, ""}, {2, "*"}}));

  std::set<std::string, std::less<>> active;
  r.ActiveChannels(std::nullopt, &active, true);
  EXPECT_EQ(active, (std::set<std::string, std::less<>>{"orders", "{t}x"}));
  auto gone = r.ShardChannelsWhere([](std::string_view ch) { return ch.starts_with("{t}"); });
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].first, "{t}x");
  EXPECT_EQ(gone[0].second, std::vector<Client*>{&a});

  EXPECT_FALSE(r.SUnsubscribe(b, "orders")) << "b holds the plain channel only";
  EXPECT_TRUE(r.SUnsubscribe(a, "orders"));
  EXPECT_TRUE(r.SUnsubscribe(a, "{t}x"));
  EXPECT_EQ(a.subs, nullptr) << "nothing left of any kind";
  EXPECT_EQ(r.shard_channel_count(), 0u);
  r.SSubscribe(b, "orders");
  r.RemoveClient(b);
  EXPECT_EQ(r.subscriptions(), 0u);
  EXPECT_EQ(r.shard_channel_count(), 0u);
  EXPECT_EQ(r.channel_count(), 0u);
}

}  // namespace
}  // namespace peregrine
