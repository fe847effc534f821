#include "server/blocking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>

namespace peregrine {
namespace {

std::shared_ptr<BlockedClient> Wait(uint64_t id, int db, std::vector<std::string> keys, uint32_t shard = 0) {
  auto w = std::make_shared<BlockedClient>();
  w->client_id = id;
  w->db = db;
  for (auto& k : keys) w->keys.push_back({shard, k});
  return w;
}

void Register(BlockingKeys& reg, const std::shared_ptr<BlockedClient>& w, uint32_t shard = 0) {
  for (size_t i = 0; i < w->keys.size(); i++)
    if (w->keys[i].shard == shard) reg.Add(w, i);
}

std::vector<uint64_t> Ids(BlockingKeys& reg, int db, std::string_view key) {
  std::vector<uint64_t> ids;
  if (auto* f = reg.Waiters(db, key))
    for (auto& w : *f) ids.push_back(w->client_id);
  return ids;
}

TEST(BlockingKeysTest, WaitersInOrderAndRemoval) {
  BlockingKeys reg(16);
  EXPECT_TRUE(reg.empty());
  auto a = Wait(1, 0, {"k", "j"}), b = Wait(2, 0, {"k"}), c = Wait(3, 1, {"k"});
  Register(reg, a);
  Register(reg, b);
  Register(reg, c);
  EXPECT_EQ(reg.keys(), 3u);  // k and j in db 0, k in db 1
  EXPECT_EQ(Ids(reg, 0, "k"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Ids(reg, 0, "j"), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Ids(reg, 1, "k"), (std::vector<uint64_t>{3}));
  reg.Remove(*a, 0);
  EXPECT_EQ(Ids(reg, 0, "k"), (std::vector<uint64_t>{2}));
  EXPECT_EQ(reg.Waiters(0, "j"), nullptr);
  EXPECT_EQ(reg.keys(), 2u);
  reg.Remove(*a, 0);  // twice: nothing more
  EXPECT_EQ(reg.keys(), 2u);
  reg.Remove(*b, 0);
  reg.Remove(*c, 0);
  EXPECT_TRUE(reg.empty());
}

TEST(BlockingKeysTest, OnlyThisShardsKeys) {
  BlockingKeys reg(1);
  auto w = std::make_shared<BlockedClient>();
  w->keys.push_back({0, "here"});
  w->keys.push_back({1, "there"});
  Register(reg, w, 0);
  EXPECT_EQ(reg.keys(), 1u);
  EXPECT_FALSE(w->keys[1].registered);
  reg.Remove(*w, 1);  // another shard's keys: this registry keeps its own
  EXPECT_EQ(reg.keys(), 1u);
  reg.Remove(*w, 0);
  EXPECT_TRUE(reg.empty());
}

TEST(BlockingKeysTest, SignalOnlyKeysWithWaitersOnce) {
  BlockingKeys reg(2);
  EXPECT_FALSE(reg.Signal(0, "k"));  // nobody waits
  auto a = Wait(1, 0, {"k", "j"});
  Register(reg, a);
  EXPECT_FALSE(reg.Signal(1, "k"));  // another database
  EXPECT_TRUE(reg.Signal(0, "k"));
  EXPECT_FALSE(reg.Signal(0, "k"));  // already ready
  EXPECT_TRUE(reg.Signal(0, "j"));
  int db;
  std::string key;
  ASSERT_TRUE(reg.PopReady(&db, &key));
  EXPECT_EQ(key, "k");
  EXPECT_TRUE(reg.Signal(0, "k"));  // ready again once taken
  ASSERT_TRUE(reg.PopReady(&db, &key));
  EXPECT_EQ(key, "j");
  ASSERT_TRUE(reg.PopReady(&db, &key));
  EXPECT_EQ(key, "k");
  EXPECT_FALSE(reg.PopReady(&db, &key));
  EXPECT_FALSE(reg.has_ready());
  EXPECT_TRUE(reg.SignalAll(0));
  EXPECT_FALSE(reg.SignalAll(1));
  int n = 0;
  while (reg.PopReady(&db, &key)) n++;
  EXPECT_EQ(n, 2);
}

TEST(BlockingKeysTest, ArgsRoundTrip) {
  BlockedClient w;
  for (std::string_view a : {"BLPOP", "", "key", "0.5"}) {
    w.arg_bytes.append(a);
    w.arg_sizes.push_back(static_cast<uint32_t>(a.size()));
  }
  EXPECT_EQ(w.Args(), (std::vector<std::string_view>{"BLPOP", "", "key", "0.5"}));
}

// Random registrations and removals against a model: per (db, key), the ids
// in registration order.
TEST(BlockingKeysTest, ModelCheck) {
  std::mt19937_64 rng(7);
  BlockingKeys reg(3);
  std::map<std::pair<int, std::string>, std::deque<uint64_t>> model;
  std::vector<std::shared_ptr<BlockedClient>> live;
  uint64_t next = 1;
  for (int step = 0; step < 20000; step++) {
    if (live.empty() || rng() % 3 != 0) {
      const int db = static_cast<int>(rng() % 3);
      std::vector<std::string> keys;
      const size_t n = 1 + rng() % 3;
      for (size_t i = 0; i < n; i++) {
        std::string k = "k" + std::to_string(rng() % 8);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
      auto w = Wait(next++, db, keys);
      Register(reg, w);
      for (auto& k : keys) model[{db, k}].push_back(w->client_id);
      live.push_back(w);
    } else {
      const size_t i = rng() % live.size();
      auto w = live[i];
      live.erase(live.begin() + static_cast<ptrdiff_t>(i));
      reg.Remove(*w, 0);
      for (auto& k : w->keys) {
        auto& q = model[{w->db, k.key}];
        q.erase(std::find(q.begin(), q.end(), w->client_id));
        if (q.empty()) model.erase({w->db, k.key});
      }
    }
    if (step % 97 == 0) {
      ASSERT_EQ(reg.keys(), model.size());
      for (auto& [dk, q] : model)
        ASSERT_EQ(Ids(reg, dk.first, dk.second), std::vector<uint64_t>(q.begin(), q.end()));
    }
  }
}

}  // namespace
}  // namespace peregrine
