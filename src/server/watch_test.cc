#include "server/watch.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>

#include "core/db.h"
#include "core/slot.h"

namespace peregrine {
namespace {

constexpr int64_t kNow = 1'000'000;

TEST(WatchTableTest, AddRemoveAndCounts) {
  std::atomic<int64_t> counter{0};
  WatchTable t(16);
  t.set_counter(&counter);
  EXPECT_TRUE(t.empty());
  auto a = std::make_shared<WatchState>(), b = std::make_shared<WatchState>();
  t.Add(0, "k", a, false);
  t.Add(0, "k", b, false);
  t.Add(1, "k", a, false);
  EXPECT_EQ(t.keys(), 2u);  // k in db 0 and in db 1
  EXPECT_EQ(counter.load(), 2);
  EXPECT_TRUE(t.Watches(0, "k", a.get()));
  EXPECT_TRUE(t.Watches(1, "k", a.get()));
  EXPECT_FALSE(t.Watches(1, "k", b.get()));
  EXPECT_FALSE(t.Watches(0, "j", a.get()));
  t.Remove(0, "k", a.get());
  t.Remove(0, "nothing", a.get());  // no-op
  EXPECT_FALSE(t.Watches(0, "k", a.get()));
  EXPECT_TRUE(t.Watches(0, "k", b.get()));
  t.Remove(0, "k", b.get());
  t.Remove(1, "k", a.get());
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(counter.load(), 0);
}

TEST(WatchTableTest, TouchMarksWatchersOfThatKeyOnly) {
  Db d;
  WatchTable t(16);
  auto a = std::make_shared<WatchState>(), b = std::make_shared<WatchState>(), c = std::make_shared<WatchState>();
  t.Add(0, "k", a, false);
  t.Add(0, "j", b, false);
  t.Add(1, "k", c, false);
  t.Touch(0, "k", d, kNow);
  EXPECT_TRUE(a->Dirty());
  EXPECT_FALSE(b->Dirty());
  EXPECT_FALSE(c->Dirty());  // another database's k
  EXPECT_FALSE(t.Watches(0, "k", a.get()));  // told once: off the table
  EXPECT_EQ(t.keys(), 2u);
}

TEST(WatchTableTest, AKeyWatchedExpiredIsMissing) {
  Db d;
  WatchTable t(16);
  auto w = std::make_shared<WatchState>();
  d.Insert("k", Value(CompactString::FromValue("v")), kNow - 1);  // expired, still there
  t.Add(0, "k", w, /*expired=*/true);
  t.Touch(0, "k", d, kNow);  // still expired: no change
  EXPECT_FALSE(w->Dirty());
  d.Erase("k");
  t.Touch(0, "k", d, kNow);  // deleted: still missing
  EXPECT_FALSE(w->Dirty());
  d.Insert("k", Value(CompactString::FromValue("new")));
  t.Touch(0, "k", d, kNow);  // a live key: a change
  EXPECT_TRUE(w->Dirty());
}

TEST(WatchTableTest, FlushAndSwapTouchOnlyKeysThatExist) {
  Db a, b;
  WatchTable t(16);
  auto in_a = std::make_shared<WatchState>(), in_b = std::make_shared<WatchState>(),
       nowhere = std::make_shared<WatchState>(), stale_to_stale = std::make_shared<WatchState>(),
       missing_to_stale = std::make_shared<WatchState>();
  a.Insert("x", Value(CompactString::FromValue("1")));
  b.Insert("y", Value(CompactString::FromValue("1")));
  a.Insert("s", Value(CompactString::FromValue("1")), kNow - 1);
  b.Insert("s", Value(CompactString::FromValue("1")), kNow - 1);
  b.Insert("m", Value(CompactString::FromValue("1")), kNow - 1);
  t.Add(0, "x", in_a, false);
  t.Add(0, "y", in_b, false);
  t.Add(0, "z", nowhere, false);
  t.Add(0, "s", stale_to_stale, true);
  t.Add(0, "m", missing_to_stale, false);
  // SWAPDB 0 1 as seen from database 0 (a) replaced with database 1 (b).
  t.TouchAll(0, a, &b, kNow);
  EXPECT_TRUE(in_a->Dirty());
  EXPECT_TRUE(in_b->Dirty());
  EXPECT_FALSE(nowhere->Dirty());
  EXPECT_FALSE(stale_to_stale->Dirty());
  EXPECT_FALSE(missing_to_stale->Dirty());
  // FLUSHDB of b, where m is stale now: m stays missing.
  t.TouchAll(0, b, nullptr, kNow);
  EXPECT_FALSE(missing_to_stale->Dirty());
  EXPECT_FALSE(stale_to_stale->Dirty());
}

// The table against a model: random adds, removes and touches over a few
// keys and states; dirty and membership must follow the model.
// An atomic slot migration's record (MovingKeys): the changed keys of its
// slots, in database 0 only, whether or not anybody watches; a flush or a
// swap of database 0 is noted; once detached, nothing is recorded.
TEST(WatchTableTest, MovingKeysRecordsChangesOfItsSlots) {
  Db d;
  WatchTable t(16);
  MovingKeys m;
  m.slots.assign(kNumSlots, false);
  m.slots[SlotOf("{a}1")] = true;
  ASSERT_NE(SlotOf("{a}1"), SlotOf("{b}1"));
  EXPECT_FALSE(t.tracking());
  t.AddMoving(&m);
  EXPECT_TRUE(t.tracking());
  EXPECT_TRUE(t.empty());  // (no watcher for it)
  t.Touch(0, "{a}1", d, kNow);
  t.Touch(0, "{a}2", d, kNow);
  t.Touch(0, "{a}1", d, kNow);
  t.Touch(0, "{b}1", d, kNow);  // another slot
  t.Touch(1, "{a}3", d, kNow);  // another database
  EXPECT_EQ(m.changed, (std::unordered_set<std::string>{"{a}1", "{a}2"}));
  // With a watcher too, both are told.
  auto w = std::make_shared<WatchState>();
  t.Add(0, "{a}4", w, false);
  t.Touch(0, "{a}4", d, kNow);
  EXPECT_TRUE(w->Dirty());
  EXPECT_EQ(m.changed.count("{a}4"), 1u);
  EXPECT_FALSE(m.emptied);
  t.TouchAll(1, d, nullptr, kNow);
  EXPECT_FALSE(m.emptied);
  t.TouchAll(0, d, nullptr, kNow);
  EXPECT_TRUE(m.emptied);
  t.RemoveMoving(&m);
  m.changed.clear();
  t.Touch(0, "{a}5", d, kNow);
  EXPECT_TRUE(m.changed.empty());
}

TEST(WatchTableTest, ModelCheck) {
  std::mt19937_64 rng(7);
  Db d;
  WatchTable t(2);
  std::atomic<int64_t> counter{0};
  t.set_counter(&counter);
  std::vector<std::shared_ptr<WatchState>> states;
  for (int i = 0; i < 6; i++) states.push_back(std::make_shared<WatchState>());
  std::map<std::pair<int, std::string>, std::set<WatchState*>> model;
  std::set<WatchState*> dirty;
  for (int step = 0; step < 20000; step++) {
    const int db = static_cast<int>(rng() % 2);
    const std::string key = "k" + std::to_string(rng() % 5);
    const std::shared_ptr<WatchState>& state = states[rng() % states.size()];
    WatchState* s = state.get();
    auto& watchers = model[{db, key}];
    switch (rng() % 3) {
      case 0:
        if (!t.Watches(db, key, s) && !dirty.count(s)) {
          t.Add(db, key, state, false);
          watchers.insert(s);
        }
        break;
      case 1:
        t.Remove(db, key, s);
        watchers.erase(s);
        break;
      case 2:
        t.Touch(db, key, d, kNow);
        for (WatchState* w : watchers) dirty.insert(w);
        watchers.clear();
        break;
    }
    size_t keys = 0;
    for (auto& [k, ws] : model) {
      if (!ws.empty()) keys++;
      for (WatchState* w : ws) ASSERT_TRUE(t.Watches(k.first, k.second, w));
    }
    ASSERT_EQ(t.keys(), keys);
    ASSERT_EQ(counter.load(), static_cast<int64_t>(keys));
    for (auto& st : states) ASSERT_EQ(st->Dirty(), dirty.count(st.get()) > 0);
  }
}

}  // namespace
}  // namespace peregrine
