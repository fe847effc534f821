// Shard's staged databases (a replica's swapdb load): built beside the live
// ones, then swapped in whole or dropped.
#include "server/shard.h"

#include <gtest/gtest.h>

#include "server/config.h"

namespace peregrine {
namespace {

TEST(ShardStaging, SwappedInWholeOrDropped) {
  Shard shard(0, 2);
  shard.db(0).Insert("old", Value::String("1"));
  shard.db(1).Insert("old1", Value::String("1"));
  shard.BeginStaging();
  shard.staged(0).Insert("new", Value::String("2"));
  // The live data is untouched while the staged grows.
  EXPECT_NE(shard.db(0).FindRaw("old"), nullptr);
  EXPECT_EQ(shard.db(0).FindRaw("new"), nullptr);
  EXPECT_EQ(shard.staged(0).size(), 1u);
  const uint64_t version = shard.version();
  shard.SwapStaged();
  EXPECT_EQ(shard.db(0).FindRaw("old"), nullptr);
  EXPECT_NE(shard.db(0).FindRaw("new"), nullptr);
  EXPECT_EQ(shard.db(1).size(), 0u);  // (every database: the staged db 1 was empty)
  EXPECT_GT(shard.version(), version);

  shard.BeginStaging();
  shard.staged(0).Insert("lost", Value::String("3"));
  shard.DropStaged();
  EXPECT_NE(shard.db(0).FindRaw("new"), nullptr);
  EXPECT_EQ(shard.db(0).FindRaw("lost"), nullptr);
}

// A policy switch resets the keys' access bytes in the next sweep pass,
// unless the shard was empty then (the start: keys made before the first
// pass ran kept counter 5 and lost their accesses, CI's TSan run).
TEST(ShardAccess, SwitchOnAnEmptyShardResetsNothing) {
  Config config;
  config.maxmemory_policy = MaxmemoryPolicy::kAllKeysLfu;
  config.lfu_log_factor = 0;
  config.lfu_decay_time = 0;
  Shard shard(0, 1);
  shard.ConfigureAccess(config, 1000);
  shard.db(0).Insert("hot", Value::String("v"));
  for (int i = 0; i < 20; i++) shard.db(0).Find("hot", 1000);
  for (int64_t t = 1000; t < 60'000; t += 100) shard.AccessCron(t, 1000);
  EXPECT_EQ(AccessTracker::Frequency(shard.db(0).FindRaw("hot")->value.access()), 25);

  // With keys there, the switch back and forth resets them (idle 0, then 5).
  config.maxmemory_policy = MaxmemoryPolicy::kNoEviction;
  shard.ConfigureAccess(config, 60'000);
  config.maxmemory_policy = MaxmemoryPolicy::kAllKeysLfu;
  shard.ConfigureAccess(config, 60'000);
  EXPECT_TRUE(shard.access().reset_pending());
  for (int64_t t = 60'000; t < 120'000; t += 100) shard.AccessCron(t, 1000);
  EXPECT_EQ(AccessTracker::Frequency(shard.db(0).FindRaw("hot")->value.access()), AccessTracker::kLfuInitial);
}

}  // namespace
}  // namespace peregrine
