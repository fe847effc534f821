// Shard's staged databases (a replica's swapdb load): built beside the live
// ones, then swapped in whole or dropped.
#include "server/shard.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace peregrine
