#include "server/stream_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace peregrine {
namespace {

// What went out, read back command by command; a SELECT before a chunk
// whose database is not the stream's, as the stream's owner writes it.
struct Out {
  std::string bytes;
  int db = 0;
  StreamOrder::Emit emit() {
    return [this](const AofChunk& c) {
      if (c.first_db() != db) AppendRespCommand(&bytes, {"SELECT", std::to_string(c.first_db())});
      bytes.append(c.bytes());
      db = c.last_db();
    };
  }
  std::vector<std::vector<std::string>> Commands() const {
    std::vector<std::vector<std::string>> out;
    AofReader reader;
    size_t at = 0;
    while (at < bytes.size() && reader.Next(bytes.data() + at, bytes.size() - at) == AofReader::Result::kCommand) {
      out.emplace_back(reader.args().begin(), reader.args().end());
      at += reader.consumed();
    }
    EXPECT_EQ(at, bytes.size());
    return out;
  }
};

AofChunk One(int db, std::initializer_list<std::string_view> args) {
  AofChunk c;
  c.Add(db, args);
  return c;
}

TEST(StreamOrder, AnIdleShardsChunkGoesAtOnce) {
  StreamOrder order(2);
  Out out;
  order.Chunk(0, One(0, {"SET", "a", "1"}), out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(out.Commands(), (std::vector<std::vector<std::string>>{{"SET", "a", "1"}}));
}

TEST(StreamOrder, AGroupGoesWholeAsATransactionAndHoldsItsShardsLaterChunks) {
  StreamOrder order(3);
  Out out;
  order.Part(1, 7, 2, 7, order.epoch(), One(0, {"LPUSH", "q", "id"}), out.emit());
  EXPECT_EQ(out.bytes, "");
  order.Chunk(1, One(0, {"SET", "after", "1"}), out.emit());  // ran after the part: waits
  order.Chunk(2, One(0, {"SET", "other", "1"}), out.emit());  // another shard: goes
  EXPECT_FALSE(order.idle(1));
  EXPECT_TRUE(order.idle(2));
  order.Part(0, 7, 2, 7, order.epoch(), One(3, {"SET", "data:id", "x"}), out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(order.bytes(), 0u);
  EXPECT_EQ(out.Commands(), (std::vector<std::vector<std::string>>{{"SET", "other", "1"},
                                                                  {"MULTI"},
                                                                  {"LPUSH", "q", "id"},
                                                                  {"SELECT", "3"},
                                                                  {"SET", "data:id", "x"},
                                                                  {"EXEC"},
                                                                  {"SELECT", "0"},
                                                                  {"SET", "after", "1"}}));
}

TEST(StreamOrder, AGroupWithOnePartLoggedGoesWithoutMultiAndEmptyPartsNone) {
  StreamOrder order(2);
  Out out;
  order.Part(0, 1, 2, 1, order.epoch(), AofChunk(), out.emit());
  order.Part(1, 1, 2, 1, order.epoch(), One(0, {"INCR", "n"}), out.emit());
  order.Part(0, 2, 2, 2, order.epoch(), AofChunk(), out.emit());
  order.Part(1, 2, 2, 2, order.epoch(), AofChunk(), out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(out.Commands(), (std::vector<std::vector<std::string>>{{"INCR", "n"}}));
}

TEST(StreamOrder, APartsTicketIsReleasedOnlyOnceItsGroupIsOut) {
  StreamOrder order(3);
  Out out;
  order.Part(1, 7, 2, 3, order.epoch(), One(0, {"LPUSH", "q", "id"}), out.emit());
  order.Chunk(1, One(0, {"SET", "after", "1"}), out.emit());
  EXPECT_EQ(order.released(1), 0u);
  EXPECT_TRUE(order.moved().empty());
  order.Part(0, 7, 2, 5, order.epoch(), One(0, {"SET", "data:id", "x"}), out.emit());
  EXPECT_EQ(order.released(0), 5u);
  EXPECT_EQ(order.released(1), 3u);
  std::vector<uint32_t> moved = order.moved();
  std::sort(moved.begin(), moved.end());
  EXPECT_EQ(moved, (std::vector<uint32_t>{0, 1}));
  order.ClearMoved();
  // A part whose group goes at once is released at once.
  order.Part(2, 8, 1, 1, order.epoch(), AofChunk(), out.emit());
  EXPECT_EQ(order.released(2), 1u);
  EXPECT_EQ(order.moved(), (std::vector<uint32_t>{2}));
  EXPECT_EQ(out.Commands().size(), 5u);  // MULTI, two commands, EXEC, SET after
}

TEST(StreamOrder, ResetReleasesWhatWaitedWithoutSendingIt) {
  StreamOrder order(2);
  Out out;
  const uint64_t epoch = order.epoch();
  order.Part(0, 1, 2, 4, epoch, One(0, {"SET", "a", "1"}), out.emit());
  order.Chunk(0, One(0, {"SET", "b", "1"}), out.emit());
  order.Reset();
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(order.released(0), 4u);
  EXPECT_EQ(out.bytes, "");
  // Its sibling, from the epoch before: its shard's own chunk, released.
  order.Part(1, 1, 2, 6, epoch, One(0, {"SET", "c", "1"}), out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(order.released(1), 6u);
  EXPECT_EQ(out.Commands(), (std::vector<std::vector<std::string>>{{"SET", "c", "1"}}));
}

TEST(StreamOrder, ACommandOverSeveralShardsWaitsUntilFirstOnEach) {
  StreamOrder order(3);
  Out out;
  order.Part(0, 5, 2, 5, order.epoch(), One(0, {"SET", "g0", "1"}), out.emit());
  const uint32_t both[] = {0, 2};
  order.Multi(both, One(0, {"RENAME", "x", "y"}), out.emit());  // behind the part on shard 0
  EXPECT_EQ(out.bytes, "");
  order.Chunk(2, One(0, {"SET", "late", "1"}), out.emit());  // behind the command on shard 2
  order.Part(1, 5, 2, 5, order.epoch(), One(0, {"SET", "g1", "1"}), out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(out.Commands(), (std::vector<std::vector<std::string>>{{"MULTI"},
                                                                  {"SET", "g0", "1"},
                                                                  {"SET", "g1", "1"},
                                                                  {"EXEC"},
                                                                  {"RENAME", "x", "y"},
                                                                  {"SET", "late", "1"}}));
}

TEST(StreamOrder, FlushSendsEverythingAndLaterPartsOfABrokenGroupGoAsTheirShards) {
  StreamOrder order(2);
  Out out;
  const uint64_t epoch = order.epoch();
  order.Part(0, 9, 2, 9, epoch, One(0, {"SET", "a", "1"}), out.emit());
  order.Chunk(0, One(0, {"SET", "b", "1"}), out.emit());
  EXPECT_EQ(order.released(0), 0u);
  order.Flush(out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(order.released(0), 9u);
  EXPECT_NE(order.epoch(), epoch);
  EXPECT_EQ(out.Commands().size(), 2u);
  order.Part(1, 9, 2, 9, epoch, One(0, {"SET", "c", "1"}), out.emit());
  EXPECT_EQ(order.released(1), 9u);
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(out.Commands().back(), (std::vector<std::string>{"SET", "c", "1"}));
  // (The group is forgotten: the same id makes a new one.)
  order.Part(1, 9, 2, 9, order.epoch(), One(0, {"SET", "d", "1"}), out.emit());
  EXPECT_FALSE(order.empty());
}

// Random histories: every operation (a shard's own command, a write group,
// a command over several shards) in one serial order, each shard's share
// arriving in its own order, the shards interleaved at random, as workers
// run. What goes out keeps every shard's order, and each group together.
// `flushes`: Flush now and then (as when too much waits): every shard's
// order must still hold, but not every group whole.
void RandomHistories(bool flushes) {
  for (uint32_t seed = 1; seed <= 300; seed++) {
    std::mt19937 rng(seed);
    const uint32_t nshards = 2 + rng() % 4;
    struct Op {
      enum Kind { kOwn, kGroup, kMulti } kind;
      std::vector<uint32_t> shards;
    };
    std::vector<Op> ops;
    std::vector<std::vector<uint32_t>> per_shard(nshards);  // op indexes in each shard's order
    const uint32_t nops = 20 + rng() % 60;
    for (uint32_t i = 0; i < nops; i++) {
      Op op;
      const uint32_t pick = rng() % 10;
      op.kind = pick < 5 ? Op::kOwn : pick < 9 ? Op::kGroup : Op::kMulti;
      if (op.kind == Op::kOwn) {
        op.shards = {static_cast<uint32_t>(rng() % nshards)};
      } else {
        for (uint32_t s = 0; s < nshards; s++)
          if (rng() % 2) op.shards.push_back(s);
        while (op.shards.size() < 2) {
          const uint32_t s = rng() % nshards;
          if (std::find(op.shards.begin(), op.shards.end(), s) == op.shards.end()) op.shards.push_back(s);
        }
        std::shuffle(op.shards.begin(), op.shards.end(), rng);
      }
      for (uint32_t s : op.shards) per_shard[s].push_back(i);
      ops.push_back(op);
    }
    auto command = [](uint32_t op, uint32_t shard) {
      AofChunk c;
      c.Add(0, {"SET", std::to_string(shard), std::to_string(op)});
      return c;
    };
    StreamOrder order(nshards);
    Out out;
    std::vector<size_t> at(nshards, 0);
    // A command over several shards runs once each of them reached it (the
    // holder has them all then); until then they wait at it.
    std::map<uint32_t, std::vector<uint32_t>> reached;
    std::map<uint32_t, int> logged_parts;
    std::map<uint32_t, uint64_t> epochs;
    std::vector<uint64_t> last_ticket(nshards, 0);
    size_t left = 0;
    for (const auto& q : per_shard) left += q.size();
    for (uint64_t steps = 0; left > 0; steps++) {
      ASSERT_LT(steps, 1000000u) << "seed " << seed << ": the history is stuck";
      const uint32_t s = rng() % nshards;
      if (at[s] == per_shard[s].size()) continue;
      const uint32_t i = per_shard[s][at[s]];
      const Op& op = ops[i];
      if (op.kind == Op::kMulti) {
        auto& r = reached[i];
        if (std::find(r.begin(), r.end(), s) == r.end()) r.push_back(s);
        if (r.size() < op.shards.size()) continue;
        order.Multi(op.shards, command(i, op.shards[0]), out.emit());
        for (uint32_t t : op.shards) at[t]++;
        left -= op.shards.size();
        continue;
      }
      if (op.kind == Op::kOwn) {
        order.Chunk(s, command(i, s), out.emit());
      } else {
        // (Some parts log nothing.)
        const bool logs = rng() % 4 != 0;
        logged_parts[i] += logs;
        // (The epoch when its group was made: before its first part ran.)
        const uint64_t epoch = epochs.try_emplace(i, order.epoch()).first->second;
        order.Part(s, i + 1, static_cast<uint32_t>(op.shards.size()), i + 1, epoch,
                   logs ? command(i, s) : AofChunk(), out.emit());
        last_ticket[s] = i + 1;
      }
      at[s]++;
      left--;
      if (flushes && rng() % 16 == 0) {
        order.Flush(out.emit());
        ASSERT_TRUE(order.empty()) << "seed " << seed;
      }
    }
    ASSERT_TRUE(order.empty()) << "seed " << seed;
    // Everything out: every part's ticket released.
    for (uint32_t s = 0; s < nshards; s++) ASSERT_EQ(order.released(s), last_ticket[s]) << "seed " << seed;
    // Each shard's commands in its order; a group's between MULTI and EXEC
    // with nothing else.
    std::vector<std::vector<uint32_t>> seen(nshards);
    bool in_multi = false;
    int multi_op = -1;
    for (const auto& cmd : out.Commands()) {
      if (cmd[0] == "SELECT") continue;
      if (cmd[0] == "MULTI") {
        ASSERT_FALSE(in_multi);
        in_multi = true;
        multi_op = -1;
        continue;
      }
      if (cmd[0] == "EXEC") {
        ASSERT_TRUE(in_multi);
        in_multi = false;
        continue;
      }
      const uint32_t shard = std::stoul(cmd[1]), op = std::stoul(cmd[2]);
      ASSERT_TRUE(flushes || in_multi || ops[op].kind != Op::kGroup || logged_parts[op] < 2)
          << "seed " << seed << ": a group's commands outside a transaction";
      if (in_multi && !flushes) {
        if (multi_op < 0) multi_op = static_cast<int>(op);
        ASSERT_EQ(static_cast<uint32_t>(multi_op), op) << "seed " << seed << ": a group's commands apart";
      }
      seen[shard].push_back(op);
    }
    for (uint32_t s = 0; s < nshards; s++) {
      std::vector<uint32_t> expect;
      for (uint32_t i : per_shard[s])
        if (ops[i].kind != Op::kMulti || ops[i].shards[0] == s) expect.push_back(i);
      // (Parts that logged nothing are missing from what went out.)
      std::vector<uint32_t> got = seen[s];
      size_t k = 0;
      for (uint32_t i : got) {
        while (k < expect.size() && expect[k] != i) k++;
        ASSERT_LT(k, expect.size()) << "seed " << seed << ": shard " << s << " out of order";
        k++;
      }
      for (uint32_t i : expect) {
        if (ops[i].kind != Op::kGroup) {
          ASSERT_NE(std::find(got.begin(), got.end(), i), got.end()) << "seed " << seed << ": lost";
        }
      }
    }
  }
}

TEST(StreamOrder, RandomHistoriesKeepEachShardsOrderAndEveryGroupWhole) { RandomHistories(false); }

TEST(StreamOrder, RandomHistoriesWithFlushesKeepEachShardsOrder) { RandomHistories(true); }

TEST(StreamOrder, FlushKeepsACommandOverSeveralShardsBehindAPartOnEach) {
  // A group's part on shard 2 waits for its sibling on shard 1; RENAME
  // over shards 0 and 2 ran after it. A flush must not send the RENAME
  // (first on shard 0) before the part it follows on shard 2.
  StreamOrder order(3);
  Out out;
  const uint64_t epoch = order.epoch();
  order.Part(2, 4, 2, 4, epoch, One(0, {"SET", "y", "old"}), out.emit());
  const uint32_t both[] = {0, 2};
  order.Multi(both, One(0, {"RENAME", "x", "y"}), out.emit());
  order.Flush(out.emit());
  EXPECT_TRUE(order.empty());
  order.Part(1, 4, 2, 4, epoch, One(0, {"SET", "z", "1"}), out.emit());
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(out.Commands(), (std::vector<std::vector<std::string>>{
                                {"SET", "y", "old"}, {"RENAME", "x", "y"}, {"SET", "z", "1"}}));
}

}  // namespace
}  // namespace peregrine
