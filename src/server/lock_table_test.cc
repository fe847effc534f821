// Unit tests for LockTable: compatibility of shared and exclusive intents,
// FIFO waiting, whole-shard intents, the single-shard fast path, and a
// randomized model of the ordered-locking protocol over several shards that
// checks it never lets conflicting transactions hold locks together and
// never deadlocks (docs/transactions.md).
#include "server/lock_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace peregrine {
namespace {

using Mode = LockTable::Mode;
using Intent = LockTable::Intent;

constexpr Mode S = Mode::kShared;
constexpr Mode X = Mode::kExclusive;

TEST(LockTable, CompatibleIntentsHoldAtOnce) {
  LockTable t;
  EXPECT_TRUE(t.idle());
  std::vector<Intent> a = {{0, "a", X}, {0, "b", S}};
  std::vector<Intent> b = {{0, "c", X}, {0, "b", S}};
  std::vector<Intent> other_db = {{1, "a", X}};
  EXPECT_TRUE(t.Acquire(1, a));
  EXPECT_TRUE(t.Acquire(2, b)) << "shared with shared, different exclusive keys";
  EXPECT_TRUE(t.Acquire(3, other_db)) << "the same key in another database";
  EXPECT_TRUE(t.Holds(1) && t.Holds(2) && t.Holds(3));
  EXPECT_TRUE(t.Release(2).empty());
  EXPECT_TRUE(t.Release(1).empty());
  EXPECT_TRUE(t.Release(3).empty());
  EXPECT_TRUE(t.idle());
}

TEST(LockTable, ConflictsWaitInArrivalOrder) {
  LockTable t;
  std::vector<Intent> xa = {{0, "a", X}};
  std::vector<Intent> sa = {{0, "a", S}};
  std::vector<Intent> xb = {{0, "b", X}};
  std::vector<Intent> xab = {{0, "a", X}, {0, "b", X}};
  EXPECT_TRUE(t.Acquire(1, sa));
  EXPECT_FALSE(t.Acquire(2, xa)) << "exclusive after shared waits";
  EXPECT_FALSE(t.Acquire(3, sa)) << "shared behind a waiting exclusive waits too (no starvation)";
  EXPECT_TRUE(t.Acquire(4, xb));
  EXPECT_FALSE(t.Acquire(5, xab));
  EXPECT_EQ(t.Release(1), std::vector<LockTable::TxId>{2});
  EXPECT_TRUE(t.Holds(2));
  EXPECT_EQ(t.Release(2), std::vector<LockTable::TxId>{3});
  // 5 waits for 4 (on b) and is behind 3: it holds only when it is the oldest.
  EXPECT_TRUE(t.Release(3).empty()) << "4 is the oldest now, and holds already";
  EXPECT_EQ(t.Release(4), std::vector<LockTable::TxId>{5});
  EXPECT_TRUE(t.Release(5).empty());
  EXPECT_TRUE(t.idle());
  EXPECT_TRUE(t.Release(99).empty()) << "unknown transactions are ignored";
}

TEST(LockTable, AKeyNamedTwiceCountsOnceInItsStrongerMode) {
  LockTable t;
  std::vector<Intent> twice = {{0, "k", S}, {0, "k", X}};
  EXPECT_TRUE(t.Acquire(1, twice));
  std::vector<Intent> sk = {{0, "k", S}};
  EXPECT_FALSE(t.CanRunNow(sk));
  t.Release(1);
  EXPECT_TRUE(t.CanRunNow(sk));
}

TEST(LockTable, WholeShardIntents) {
  LockTable t;
  std::vector<Intent> sa = {{0, "a", S}};
  std::vector<Intent> xa = {{0, "a", X}};
  EXPECT_TRUE(t.Acquire(1, sa));
  EXPECT_TRUE(t.AcquireShard(2, S)) << "DBSIZE beside a reader";
  EXPECT_FALSE(t.AcquireShard(3, X)) << "FLUSHALL waits for both";
  EXPECT_FALSE(t.Acquire(4, xa));
  EXPECT_FALSE(t.CanRunNow(sa)) << "nothing runs beside a queued FLUSHALL";
  EXPECT_TRUE(t.Release(1).empty());
  EXPECT_EQ(t.Release(2), std::vector<LockTable::TxId>{3});
  EXPECT_EQ(t.Release(3), std::vector<LockTable::TxId>{4});
  t.Release(4);
  EXPECT_TRUE(t.AcquireShard(5, S));
  EXPECT_FALSE(t.Acquire(6, xa)) << "a writer waits for a whole-shard reader";
  std::vector<Intent> sb = {{0, "b", S}};
  EXPECT_TRUE(t.CanRunNow(sb)) << "a reader does not";
  EXPECT_FALSE(t.CanRunNow(sa)) << "but not a reader of a key a queued writer waits for";
}

TEST(LockTable, FastPathOnlyWhenNothingConflicts) {
  LockTable t;
  std::vector<Intent> xa = {{0, "a", X}};
  std::vector<Intent> sb = {{0, "b", S}};
  EXPECT_TRUE(t.CanRunNow(xa));
  t.Acquire(1, xa);
  EXPECT_FALSE(t.CanRunNow(xa));
  EXPECT_TRUE(t.CanRunNow(sb));
}

// The protocol over several shards: each transaction locks its shards in
// increasing index order (waiting where told to), runs when it holds all,
// then releases everywhere. Random interleavings, heavy contention on few
// keys, whole-shard transactions and fast-path single-key commands mixed in.
TEST(LockTable, OrderedLockingNeverDeadlocksAndExcludesConflicts) {
  for (uint32_t seed = 1; seed <= 30; seed++) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    constexpr int kShards = 4, kKeys = 6, kTx = 400;
    std::vector<LockTable> shards(kShards);
    struct Txn {
      std::map<int, std::vector<Intent>> per_shard;  // shard -> intents
      bool whole = false;
      Mode whole_mode = S;
      std::vector<int> order;  // shards in increasing index
      size_t next = 0;         // index into order of the shard to lock next
      bool waiting = false, done = false;
    };
    static const std::string kNames[kKeys] = {"k0", "k1", "k2", "k3", "k4", "k5"};
    std::vector<Txn> txs(kTx);
    for (auto& tx : txs) {
      if (rng() % 10 == 0) {
        tx.whole = true;
        tx.whole_mode = rng() % 2 ? S : X;
        for (int s = 0; s < kShards; s++) tx.order.push_back(s);
        continue;
      }
      const int nkeys = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < nkeys; i++) {
        const int k = static_cast<int>(rng() % kKeys);
        tx.per_shard[k % kShards].push_back({0, kNames[k], rng() % 2 ? S : X});
      }
      for (auto& [s, _] : tx.per_shard) tx.order.push_back(s);
    }
    // Which transactions hold locks on each shard, to check exclusion.
    std::vector<std::set<int>> holders(kShards);
    auto conflict = [&](int a, int b, int s) {
      const Txn &ta = txs[a], &tb = txs[b];
      if (ta.whole || tb.whole) {
        const Txn& w = ta.whole ? ta : tb;
        const Txn& o = ta.whole ? tb : ta;
        if (w.whole_mode == X) return true;
        if (o.whole) return o.whole_mode == X;
        for (const Intent& i : o.per_shard.at(s))
          if (i.mode == X) return true;
        return false;
      }
      for (const Intent& i : ta.per_shard.at(s))
        for (const Intent& j : tb.per_shard.at(s))
          if (i.key == j.key && (i.mode == X || j.mode == X)) return true;
      return false;
    };
    bool excluded = true;
    auto granted = [&](int id, int s) {
      for (int other : holders[s]) excluded &= !conflict(id, other, s);
      holders[s].insert(id);
      txs[id].waiting = false;
      txs[id].next++;
    };
    int started = 0, finished = 0;
    std::vector<int> active;
    for (int steps = 0; finished < kTx && steps < 1'000'000; steps++) {
      // Start a new transaction now and then, or when nothing can move.
      std::vector<int> movable;
      for (int id : active)
        if (!txs[id].waiting) movable.push_back(id);
      if (started < kTx && (movable.empty() || rng() % 3 == 0)) {
        active.push_back(started++);
        continue;
      }
      ASSERT_FALSE(movable.empty()) << "deadlock: " << active.size() << " transactions all waiting";
      const int id = movable[rng() % movable.size()];
      Txn& tx = txs[id];
      if (tx.next < tx.order.size()) {
        const int s = tx.order[tx.next];
        const bool now = tx.whole ? shards[s].AcquireShard(id, tx.whole_mode)
                                  : shards[s].Acquire(id, tx.per_shard[s]);
        if (now)
          granted(id, s);
        else
          tx.waiting = true;
      } else {
        // Holds every shard: it ran; release them all.
        for (int s : tx.order) {
          holders[s].erase(id);
          for (LockTable::TxId g : shards[s].Release(id)) granted(static_cast<int>(g), s);
        }
        tx.done = true;
        finished++;
        active.erase(std::find(active.begin(), active.end(), id));
      }
    }
    EXPECT_EQ(finished, kTx);
    EXPECT_TRUE(excluded) << "conflicting transactions held locks on one shard together";
    for (auto& s : shards) EXPECT_TRUE(s.idle());
  }
}

}  // namespace
}  // namespace peregrine
