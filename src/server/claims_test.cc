#include "server/claims.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <thread>
#include <vector>

namespace peregrine {
namespace {

TEST(ClaimBoard, TicketsCountUpPerShard) {
  ClaimBoard board(3);
  uint64_t t[3];
  const std::array<uint32_t, 2> ab{0, 2};
  ASSERT_TRUE(board.Register(ab, t));
  EXPECT_EQ(t[0], 1u);
  EXPECT_EQ(t[1], 1u);
  const std::array<uint32_t, 2> bc{1, 2};
  ASSERT_TRUE(board.Register(bc, t));
  EXPECT_EQ(t[0], 1u);  // shard 1's first
  EXPECT_EQ(t[1], 2u);  // shard 2's second
  EXPECT_EQ(board.registered(0), 1u);
  EXPECT_EQ(board.registered(1), 1u);
  EXPECT_EQ(board.registered(2), 2u);
}

TEST(ClaimBoard, ClosedShardRefusesTheWholeGroup) {
  ClaimBoard board(3);
  uint64_t t[3] = {0, 0, 0};
  board.SetClosed(1, true);
  const std::array<uint32_t, 3> all{0, 1, 2};
  EXPECT_FALSE(board.Register(all, t));
  // Nothing taken on the open shards either.
  EXPECT_EQ(board.registered(0), 0u);
  EXPECT_EQ(board.registered(2), 0u);
  const std::array<uint32_t, 2> open{0, 2};
  EXPECT_TRUE(board.Register(open, t));
  board.SetClosed(1, false);
  EXPECT_TRUE(board.Register(all, t));
  EXPECT_EQ(t[0], 2u);
  EXPECT_EQ(t[1], 1u);
  EXPECT_EQ(t[2], 2u);
}

// Groups registered from several threads at once are in the same order on
// every shard they share: the property that lets each shard run its parts
// in ticket order without any two shards disagreeing.
TEST(ClaimBoard, ConcurrentGroupsAreOrderedAlikeOnEveryShard) {
  constexpr uint32_t kShards = 4;
  constexpr int kThreads = 4;
  constexpr int kGroups = 5000;
  ClaimBoard board(kShards);
  struct Group {
    std::vector<uint32_t> shards;
    std::vector<uint64_t> tickets;
  };
  std::vector<std::vector<Group>> made(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; th++) {
    threads.emplace_back([&, th] {
      uint32_t x = 12345u + static_cast<uint32_t>(th);
      for (int g = 0; g < kGroups; g++) {
        x = x * 1103515245u + 12345u;
        Group grp;
        for (uint32_t s = 0; s < kShards; s++)
          if ((x >> (8 + s)) & 1) grp.shards.push_back(s);
        if (grp.shards.size() < 2) grp.shards = {th % kShards, (th + 1) % kShards};
        std::sort(grp.shards.begin(), grp.shards.end());
        grp.tickets.resize(grp.shards.size());
        ASSERT_TRUE(board.Register(grp.shards, grp.tickets.data()));
        made[th].push_back(std::move(grp));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Each ticket on each shard is taken once, from 1 up.
  std::vector<std::vector<const Group*>> by_ticket(kShards);
  for (uint32_t s = 0; s < kShards; s++) by_ticket[s].assign(board.registered(s) + 1, nullptr);
  for (const auto& list : made)
    for (const Group& g : list)
      for (size_t i = 0; i < g.shards.size(); i++) {
        const Group*& slot = by_ticket[g.shards[i]][g.tickets[i]];
        ASSERT_EQ(slot, nullptr);
        slot = &g;
      }
  // Any two groups that share shards have their tickets in the same order
  // on all of them: walk each shard in ticket order and check that the
  // groups met are in increasing order of their tickets elsewhere too.
  for (uint32_t s = 0; s < kShards; s++) {
    for (uint32_t o = 0; o < kShards; o++) {
      if (o == s) continue;
      uint64_t last_on_o = 0;
      for (uint64_t t = 1; t < by_ticket[s].size(); t++) {
        const Group* g = by_ticket[s][t];
        ASSERT_NE(g, nullptr);
        auto it = std::find(g->shards.begin(), g->shards.end(), o);
        if (it == g->shards.end()) continue;
        const uint64_t on_o = g->tickets[static_cast<size_t>(it - g->shards.begin())];
        EXPECT_GT(on_o, last_on_o) << "shards " << s << " and " << o << " disagree";
        last_on_o = on_o;
      }
    }
  }
}

}  // namespace
}  // namespace peregrine
