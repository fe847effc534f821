#include "server/repl_backlog.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace peregrine {
namespace {

// The whole stream so far, numbered from 1: what the backlog must agree with.
std::string Stream(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, 0);
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

TEST(ReplBacklog, KeepsTheLastBytesAndNumbersThemAsRedis) {
  ReplBacklog b(ReplBacklog::kMinSize, 0);
  EXPECT_EQ(b.end_offset(), 0u);
  EXPECT_EQ(b.histlen(), 0u);
  EXPECT_EQ(b.first_offset(), 1u);
  // Nothing produced yet: a replica at offset 0 asks from 1, and continues.
  std::string out;
  EXPECT_TRUE(b.Holds(1));
  EXPECT_TRUE(b.CopyFrom(1, &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(b.Holds(2));  // (ahead of the stream)

  b.Append("*1\r\n$4\r\nPING\r\n");
  EXPECT_EQ(b.end_offset(), 14u);
  EXPECT_EQ(b.histlen(), 14u);
  EXPECT_EQ(b.first_offset(), 1u);
  ASSERT_TRUE(b.CopyFrom(9, &out));
  EXPECT_EQ(out, "PING\r\n");
  EXPECT_FALSE(b.CopyFrom(0, &out));
  EXPECT_FALSE(b.CopyFrom(16, &out));
  EXPECT_EQ(out, "PING\r\n");  // (refusals append nothing)
}

TEST(ReplBacklog, WrapsAroundInAnyPieces) {
  const size_t cap = ReplBacklog::kMinSize;
  const std::string all = Stream(5 * cap + 123, 7);
  for (uint32_t seed = 1; seed <= 20; seed++) {
    std::mt19937 rng(seed);
    ReplBacklog b(cap, 1000);  // (starts after a full sync at offset 1000)
    size_t fed = 0;
    while (fed < all.size()) {
      // Pieces from empty to more than the whole backlog.
      const size_t n = std::min(all.size() - fed, static_cast<size_t>(rng() % (seed % 4 == 0 ? 2 * cap : 3000)));
      b.Append(std::string_view(all).substr(fed, n));
      fed += n;
      ASSERT_EQ(b.end_offset(), 1000 + fed);
      ASSERT_EQ(b.histlen(), std::min(fed, cap));
      // Every offset held reads back the stream's bytes from there.
      for (int probe = 0; probe < 4; probe++) {
        const uint64_t from = b.first_offset() + rng() % (b.histlen() + 1);
        std::string out;
        ASSERT_TRUE(b.CopyFrom(from, &out));
        ASSERT_EQ(out, all.substr(static_cast<size_t>(from - 1001), fed - static_cast<size_t>(from - 1001)));
      }
      ASSERT_FALSE(b.Holds(b.first_offset() - 1));
      ASSERT_FALSE(b.Holds(b.end_offset() + 2));
    }
  }
}

TEST(ReplBacklog, ResizeKeepsTheNewestBytes) {
  const std::string all = Stream(100000, 3);
  ReplBacklog b(64 * 1024, 0);
  b.Append(all);
  EXPECT_EQ(b.histlen(), 64u * 1024);
  b.Resize(20000);
  EXPECT_EQ(b.capacity(), 20000u);
  EXPECT_EQ(b.histlen(), 20000u);
  EXPECT_EQ(b.first_offset(), 80001u);
  std::string out;
  ASSERT_TRUE(b.CopyFrom(80001, &out));
  EXPECT_EQ(out, all.substr(80000));
  b.Append("xyz");
  out.clear();
  ASSERT_TRUE(b.CopyFrom(b.end_offset() - 4, &out));
  EXPECT_EQ(out, all.substr(99998) + "xyz");
  // Growing keeps all; below the minimum is raised to it.
  b.Resize(1 << 20);
  EXPECT_EQ(b.histlen(), 20000u);
  b.Resize(10);
  EXPECT_EQ(b.capacity(), ReplBacklog::kMinSize);
  EXPECT_EQ(b.histlen(), ReplBacklog::kMinSize);
  out.clear();
  ASSERT_TRUE(b.CopyFrom(b.first_offset(), &out));
  EXPECT_EQ(out, (all + "xyz").substr(all.size() + 3 - ReplBacklog::kMinSize));
}

TEST(ReplIds, ChangeShiftClear) {
  ReplIds ids;
  ids.Change();
  ASSERT_EQ(ids.replid.size(), 40u);
  EXPECT_EQ(ids.replid.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(ids.replid2, std::string(40, '0'));
  EXPECT_EQ(ids.second_offset, -1);
  const std::string old = ids.replid;
  ids.Shift(5000);
  EXPECT_EQ(ids.replid2, old);
  EXPECT_EQ(ids.second_offset, 5001);
  EXPECT_NE(ids.replid, old);
  ids.ClearSecond();
  EXPECT_EQ(ids.replid2, std::string(40, '0'));
  EXPECT_EQ(ids.second_offset, -1);
}

TEST(DecidePsync, AsRedisDoes) {
  ReplIds ids;
  ids.Change();
  ReplBacklog b(ReplBacklog::kMinSize, 0);
  b.Append(Stream(100, 1));  // bytes 1..100

  // Our ID, an offset the backlog holds: continue from it.
  PsyncAnswer a = DecidePsync(ids.replid, 51, ids, &b, true);
  EXPECT_TRUE(a.partial);
  EXPECT_EQ(a.from, 51u);
  EXPECT_EQ(a.line, "+CONTINUE " + ids.replid + "\r\n");
  EXPECT_EQ(DecidePsync(ids.replid, 101, ids, &b, false).line, "+CONTINUE\r\n");  // up to date; no psync2
  // The ID compares as strcasecmp does.
  std::string upper = ids.replid;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(DecidePsync(upper, 1, ids, &b, true).partial);

  // Outside the backlog, or without one.
  a = DecidePsync(ids.replid, 102, ids, &b, true);
  EXPECT_FALSE(a.partial);
  EXPECT_EQ(a.reason, "Unable to partial resync with replica for lack of backlog (Replica request was: 102).");
  EXPECT_FALSE(DecidePsync(ids.replid, 0, ids, &b, true).partial);
  EXPECT_FALSE(DecidePsync(ids.replid, -5, ids, &b, true).partial);
  EXPECT_FALSE(DecidePsync(ids.replid, 1, ids, nullptr, true).partial);

  // "?": a full resync asked for.
  a = DecidePsync("?", -1, ids, &b, true);
  EXPECT_FALSE(a.partial);
  EXPECT_EQ(a.reason, "Full resync requested by replica");
  // Another history.
  a = DecidePsync(std::string(40, 'f'), 1, ids, &b, true);
  EXPECT_FALSE(a.partial);
  EXPECT_EQ(a.reason, "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '" +
                          std::string(40, 'f') + "', my replication IDs are '" + ids.replid + "' and '" +
                          std::string(40, '0') + "')");

  // After a failover: the former primary's ID continues up to where this
  // one took over (second_offset is the first byte of the new history).
  const std::string former = ids.replid;
  ids.Shift(100);
  b.Append(Stream(50, 2));  // bytes 101..150 under the new ID
  a = DecidePsync(former, 101, ids, &b, true);
  EXPECT_TRUE(a.partial);
  EXPECT_EQ(a.from, 101u);
  EXPECT_EQ(a.line, "+CONTINUE " + ids.replid + "\r\n");  // (the replica adopts the new ID)
  EXPECT_TRUE(DecidePsync(former, 60, ids, &b, true).partial);
  a = DecidePsync(former, 102, ids, &b, true);
  EXPECT_FALSE(a.partial);
  EXPECT_EQ(a.reason, "Partial resynchronization not accepted: Requested offset for second ID was 102, but I can "
                      "reply up to 101");
  EXPECT_TRUE(DecidePsync(ids.replid, 140, ids, &b, true).partial);

  EXPECT_EQ(FullResyncLine(ids, 150), "+FULLRESYNC " + ids.replid + " 150\r\n");
}

}  // namespace
}  // namespace peregrine
