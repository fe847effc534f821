// Keyspace notifications' flags (Redis's letters and their written form),
// the channels, and what a thread's list keeps: nothing while the class is
// off, K and E are both off, or nobody subscribes.
#include "server/notify.h"

#include <gtest/gtest.h>

namespace peregrine {
namespace {

TEST(NotifyFlags, LettersParseToRedisBits) {
  EXPECT_EQ(notify::ParseFlags(""), 0u);
  EXPECT_EQ(notify::ParseFlags("K"), notify::kKeyspace);
  EXPECT_EQ(notify::ParseFlags("E$"), notify::kKeyevent | notify::kString);
  EXPECT_EQ(notify::ParseFlags("A"), notify::kAll);
  EXPECT_EQ(*notify::ParseFlags("A") & (notify::kKeyMiss | notify::kNew), 0u);  // neither is in A
  EXPECT_EQ(notify::ParseFlags("KEAmn"),
            notify::kKeyspace | notify::kKeyevent | notify::kAll | notify::kKeyMiss | notify::kNew);
  EXPECT_EQ(notify::ParseFlags("q"), std::nullopt);
  EXPECT_EQ(notify::ParseFlags("KEa"), std::nullopt);  // case matters
}

TEST(NotifyFlags, FormatIsRedisOrder) {
  EXPECT_EQ(notify::FormatFlags(*notify::ParseFlags("KEA")), "AKE");
  EXPECT_EQ(notify::FormatFlags(*notify::ParseFlags("xEg")), "gxE");
  EXPECT_EQ(notify::FormatFlags(*notify::ParseFlags("Ktlm")), "ltKm");
  // After A, n is not written (as Redis): the flag is still set.
  EXPECT_EQ(notify::FormatFlags(*notify::ParseFlags("AnK")), "AK");
  EXPECT_EQ(notify::FormatFlags(*notify::ParseFlags("g$lshzxetdnKE")), "AKE");
  EXPECT_EQ(notify::FormatFlags(*notify::ParseFlags("g$lshzxetnKE")), "g$lshzxetnKE");
  EXPECT_EQ(notify::FormatFlags(0), "");
}

TEST(KeyspaceEvents, ChannelsNameTheDatabase) {
  const KeyspaceEvent e{notify::kKeyspace | notify::kKeyevent, 3, "lpush", "mylist"};
  EXPECT_EQ(KeyspaceEvents::Channel(e, true), "__keyspace@3__:mylist");
  EXPECT_EQ(KeyspaceEvents::Channel(e, false), "__keyevent@3__:lpush");
}

TEST(KeyspaceEvents, KeptOnlyWhenOnAndHeard) {
  KeyspaceNotifier n;
  KeyspaceEvents ev(n);
  ev.Add(notify::kString, 0, "set", "k");  // off
  EXPECT_TRUE(ev.empty());
  n.Configure(*notify::ParseFlags("A"));  // classes without K or E: nothing is sent
  EXPECT_EQ(n.active(), 0u);
  n.subscriptions().store(1);
  ev.Add(notify::kString, 0, "set", "k");
  EXPECT_TRUE(ev.empty());
  n.Configure(*notify::ParseFlags("E$"));
  n.subscriptions().store(0);  // nobody listens
  ev.Add(notify::kString, 0, "set", "k");
  EXPECT_TRUE(ev.empty());
  n.subscriptions().store(2);
  ev.Add(notify::kList, 0, "lpush", "k");  // another class
  EXPECT_TRUE(ev.empty());
  ev.Add(notify::kString, 5, "set", "k");
  ev.Add(notify::kString, 5, "append", "k");
  std::vector<KeyspaceEvent> got = ev.Take();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].flags, notify::kKeyevent);  // only E: no keyspace channel
  EXPECT_EQ(got[0].db, 5);
  EXPECT_EQ(got[0].event, "set");
  EXPECT_EQ(got[1].event, "append");
  EXPECT_TRUE(ev.empty());
}

}  // namespace
}  // namespace peregrine
