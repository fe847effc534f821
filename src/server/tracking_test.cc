// CLIENT TRACKING's tables: what a shard's table remembers and forgets, the
// counts the registry keeps (INFO tracking_*, the WATCH gate), the table
// limit across shards, and the invalidations a thread hands out (one per
// tracking client per key; BCAST's one per prefix and subscriber, with each
// key's changer for NOLOOP).
#include "server/tracking.h"

#include <gtest/gtest.h>

#include "server/client.h"

namespace peregrine {
namespace {

struct TrackingTables : ::testing::Test {
  std::atomic<int64_t> observers{0};
  TrackingRegistry registry{&observers};
  TrackingInvalidations inv{registry};
  Client runner{nullptr, 77, -1};
  Client* running = nullptr;
  void SetUp() override { inv.MakeCurrent(&running); }
};

using Keys = std::vector<std::pair<std::string, uint64_t>>;

TEST(TrackingFlags, WhatIsRemembered) {
  using namespace tracking;
  EXPECT_FALSE(TracksReads(0));
  EXPECT_TRUE(TracksReads(kOn));
  EXPECT_TRUE(TracksReads(kOn | kNoloop));
  EXPECT_FALSE(TracksReads(kOn | kBcast));
  EXPECT_FALSE(TracksReads(kOn | kOptin));
  EXPECT_TRUE(TracksReads(kOn | kOptin | kCaching));
  EXPECT_TRUE(TracksReads(kOn | kOptout));
  EXPECT_FALSE(TracksReads(kOn | kOptout | kCaching));
}

TEST_F(TrackingTables, TableRemembersEachClientOnceAndForgetsOnChange) {
  TrackingTable t;
  t.Attach(&registry);
  EXPECT_FALSE(t.active());
  t.Remember("k", 1, 0);
  t.Remember("k", 1, 0);  // (once)
  t.Remember("k", 2, 3);
  t.Remember("j", 1, 0);
  EXPECT_TRUE(t.active());
  EXPECT_EQ(t.keys(), 2u);
  EXPECT_EQ(registry.keys().load(), 2);
  EXPECT_EQ(registry.items().load(), 3);
  EXPECT_EQ(observers.load(), 2);  // each tracked key makes commands tell the table

  running = &runner;  // the client whose command changes k
  t.Changed("k", /*by_command=*/true);
  running = nullptr;
  EXPECT_EQ(t.keys(), 1u);
  EXPECT_EQ(registry.keys().load(), 1);
  EXPECT_EQ(registry.items().load(), 1);
  EXPECT_EQ(observers.load(), 1);
  std::vector<Invalidation> out = inv.Take();
  ASSERT_EQ(out.size(), 2u);  // one per client that had it
  EXPECT_EQ(out[0].client, 1u);
  EXPECT_EQ(out[0].home, 0u);
  EXPECT_EQ(out[1].client, 2u);
  EXPECT_EQ(out[1].home, 3u);
  for (const Invalidation& i : out) {
    EXPECT_EQ(i.kind, Invalidation::Kind::kKeys);
    EXPECT_FALSE(i.bcast);
    EXPECT_EQ(i.keys, (Keys{{"k", 77}}));  // its changer, for NOLOOP
  }
  t.Changed("k", true);  // told once: nothing now
  EXPECT_TRUE(inv.empty());

  t.Clear();  // a flush: no invalidations from the table itself
  EXPECT_EQ(t.keys(), 0u);
  EXPECT_EQ(registry.keys().load(), 0);
  EXPECT_EQ(registry.items().load(), 0);
  EXPECT_EQ(observers.load(), 0);
  EXPECT_TRUE(inv.empty());
}

TEST_F(TrackingTables, LimitDropsOnlyTheExcessOverEveryTable) {
  TrackingTable a, b;
  a.Attach(&registry);
  b.Attach(&registry);
  for (int i = 0; i < 30; i++) a.Remember("a" + std::to_string(i), 1, 0);
  for (int i = 0; i < 20; i++) b.Remember("b" + std::to_string(i), 1, 0);
  registry.set_max_keys(0);
  a.Limit(1000);  // no limit
  EXPECT_EQ(registry.keys().load(), 50);
  registry.set_max_keys(35);
  a.Limit(5);  // at most the effort
  EXPECT_EQ(a.keys(), 25u);
  a.Limit(1000);
  EXPECT_EQ(a.keys(), 15u);
  b.Limit(1000);  // at the limit already
  EXPECT_EQ(b.keys(), 20u);
  EXPECT_EQ(registry.keys().load(), 35);
  registry.set_max_keys(10);
  a.Limit(1000);  // this table empties, the rest is the other's
  EXPECT_EQ(a.keys(), 0u);
  b.Limit(1000);
  EXPECT_EQ(b.keys(), 10u);
  EXPECT_EQ(registry.keys().load(), 10);
  std::vector<Invalidation> out = inv.Take();
  EXPECT_EQ(out.size(), 40u);  // each dropped key's client told
  for (const Invalidation& i : out) EXPECT_EQ(i.keys.size(), 1u);
}

TEST_F(TrackingTables, BroadcastGroupsKeysPerPrefixAndSubscriber) {
  const std::vector<std::string> ab = {"a:", "b:"};
  const std::vector<std::string> all = {""};
  registry.Subscribe(5, 1, ab);
  registry.Subscribe(6, 2, all);
  EXPECT_TRUE(registry.bcast());
  EXPECT_EQ(registry.prefix_count(), 3);
  EXPECT_EQ(observers.load(), 3);
  TrackingTable t;  // (no key tracked: BCAST alone makes it look)
  t.Attach(&registry);
  EXPECT_TRUE(t.active());
  running = &runner;
  t.Changed("a:1", true);
  t.Changed("a:2", true);
  t.Changed("a:1", true);  // (once per key)
  t.Changed("c:1", true);
  running = nullptr;
  t.Changed("b:9", /*by_command=*/false);  // expired: no changer
  std::vector<Invalidation> out = inv.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].client, 5u);  // "a:"
  EXPECT_EQ(out[0].keys, (Keys{{"a:1", 77}, {"a:2", 77}}));
  EXPECT_EQ(out[1].client, 5u);  // "b:"
  EXPECT_EQ(out[1].keys, (Keys{{"b:9", 0}}));
  EXPECT_EQ(out[2].client, 6u);  // ""
  EXPECT_EQ(out[2].home, 2u);
  EXPECT_EQ(out[2].keys, (Keys{{"a:1", 77}, {"a:2", 77}, {"b:9", 0}, {"c:1", 77}}));
  for (const Invalidation& i : out) EXPECT_TRUE(i.bcast);
  EXPECT_TRUE(inv.empty());

  // Keys noted before the prefixes change go out as they were noted.
  t.Changed("a:3", true);
  registry.Unsubscribe(5, ab);
  t.Changed("b:4", true);  // nobody has "b:" now but the empty prefix's client
  out = inv.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].keys, (Keys{{"a:3", 0}}));  // (5's "a:", noted then)
  EXPECT_EQ(out[1].client, 6u);
  EXPECT_EQ(out[2].client, 6u);
  EXPECT_EQ(out[2].keys, (Keys{{"b:4", 0}}));
  registry.Unsubscribe(6, all);
  EXPECT_FALSE(registry.bcast());
  EXPECT_EQ(observers.load(), 0);
  EXPECT_FALSE(t.active());
}

TEST_F(TrackingTables, FlushAndDisable) {
  inv.Flush(9, 1);
  std::vector<Invalidation> out = inv.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Invalidation::Kind::kFlush);
  EXPECT_EQ(out[0].client, 9u);

  Client c(nullptr, 9, -1);
  c.tracking = tracking::kOn | tracking::kBcast | tracking::kNoloop;
  c.track_reads = true;
  c.tracking_redirect = 4;
  c.tracking_prefixes = {"x", "y"};
  registry.clients().store(1);
  registry.Subscribe(9, 0, c.tracking_prefixes);
  DisableTracking(registry, c);
  EXPECT_EQ(c.tracking, 0);
  EXPECT_FALSE(c.track_reads);
  EXPECT_EQ(c.tracking_redirect, 0u);
  EXPECT_TRUE(c.tracking_prefixes.empty());
  EXPECT_EQ(registry.clients().load(), 0);
  EXPECT_EQ(registry.prefix_count(), 0);
  DisableTracking(registry, c);  // (once)
  EXPECT_EQ(registry.clients().load(), 0);
}

}  // namespace
}  // namespace peregrine
