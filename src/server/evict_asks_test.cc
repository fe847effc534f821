#include "server/evict_asks.h"

#include <gtest/gtest.h>

#include <memory>

namespace peregrine {
namespace {

TEST(EvictAsks, AWorkerOwingAnAnswerIsNotAskedAgain) {
  EvictAsks asks;
  Client c(nullptr, 7, -1);
  c.home = 2;
  asks.Begin();
  EXPECT_TRUE(asks.done());  // nothing asked: nothing to wait for
  std::unique_ptr<EvictMail> a(asks.Make(/*from=*/0, /*to=*/1, c, /*trim=*/false));
  std::unique_ptr<EvictMail> b(asks.Make(0, 3, c, true));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->to, 1u);
  EXPECT_EQ(a->client, 7u);
  EXPECT_EQ(a->home, 2u);
  EXPECT_FALSE(a->trim);
  EXPECT_TRUE(b->trim);
  EXPECT_EQ(asks.asked(), 2u);
  EXPECT_EQ(asks.Make(0, 1, c, false), nullptr);  // still owes its answer
  asks.Answered(*a);
  EXPECT_FALSE(asks.done());
  asks.Answered(*b);
  EXPECT_TRUE(asks.done());
}

TEST(EvictAsks, ALateAnswerFreesItsWorkerButCountsForNoLaterRound) {
  EvictAsks asks;
  Client c(nullptr, 7, -1);
  asks.Begin();
  std::unique_ptr<EvictMail> old(asks.Make(0, 1, c, false));
  ASSERT_NE(old, nullptr);
  asks.Begin();  // the first round timed out
  EXPECT_EQ(asks.Make(0, 1, c, false), nullptr);  // (worker 1 still owes the old one)
  std::unique_ptr<EvictMail> now(asks.Make(0, 2, c, false));
  ASSERT_NE(now, nullptr);
  asks.Answered(*old);  // late: worker 1 may be asked again, this round still waits for 2
  EXPECT_FALSE(asks.done());
  std::unique_ptr<EvictMail> again(asks.Make(0, 1, c, false));
  EXPECT_NE(again, nullptr);
  asks.Answered(*now);
  asks.Answered(*again);
  EXPECT_TRUE(asks.done());
}

}  // namespace
}  // namespace peregrine
