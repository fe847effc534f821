// Db's forkless snapshots (BeginSnapshot / SnapshotStep, copy-on-write per
// segment), model-checked: while random writes, deletions, deadlines,
// evictions, expiry, repacks, growth, Clear and Swap go on between the
// snapshot's steps, the sink gets every key that existed when it began,
// exactly once, with the value and deadline it had then.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "core/db.h"

namespace peregrine {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

std::string StrOf(const Value& v) {
  char scratch[CompactString::kIntBufferSize];
  return std::string(v.str().View(scratch));
}

struct Saved {
  std::string value;
  int64_t expire_ms;
};

// Collects what a snapshot sends; a key sent twice is a failure.
class RecordingSink : public Db::SnapshotSink {
 public:
  void SaveEntry(const Db::Entry& e) override {
    const std::string key = e.key_string();
    EXPECT_EQ(got.count(key), 0u) << key << " sent twice";
    got[key] = Saved{StrOf(e.value), e.expire_ms()};
  }
  std::map<std::string, Saved> got;
};

std::map<std::string, Saved> Contents(const Db& db) {
  std::map<std::string, Saved> out;
  db.ForEach([&](const Db::Entry& e) { out[e.key_string()] = Saved{StrOf(e.value), e.expire_ms()}; });
  return out;
}

bool operator==(const Saved& a, const Saved& b) { return a.value == b.value && a.expire_ms == b.expire_ms; }

void RandomChange(Db& db, std::mt19937_64& rng, int key_space, int64_t now) {
  const std::string key = "k" + std::to_string(rng() % key_space);
  switch (rng() % 9) {
    case 0:
    case 1: {  // write (insert or overwrite in place)
      Db::Entry* e = db.Find(key, now);
      const std::string v = "v" + std::to_string(rng() % 100000);
      if (e == nullptr)
        db.Insert(key, Value::String(v), rng() % 4 == 0 ? now + 1 + static_cast<int64_t>(rng() % 50) : Db::kNoExpire);
      else
        e->value = Value::String(v);
      break;
    }
    case 2:
      db.Erase(key);
      break;
    case 3: {  // a deadline set or removed
      if (Db::Entry* e = db.Find(key, now)) db.SetExpire(e, rng() % 2 ? now + 1000 : Db::kNoExpire);
      break;
    }
    case 4:
      db.ActiveExpire(now, 50);
      break;
    case 5:
      db.EvictSieve(Db::EvictFrom::kAllKeys);
      break;
    case 6:
      db.Maintain(1000);
      break;
    case 7: {
      // A read: a lookup hands out an entry too.
      db.Find(key, now);
      break;
    }
    case 8:
      for (int i = 0; i < 30; i++)
        if (db.Find(key + "-" + std::to_string(i), now) == nullptr) db.Insert(key + "-" + std::to_string(i), Value::String("n"));
      break;
  }
}

TEST(DbSnapshot, SinkGetsThePointInTimeContentsWhileWritesGoOn) {
  for (uint64_t seed = 1; seed <= 6; seed++) {
    std::mt19937_64 rng(seed);
    Db db;
    const int keys = 2000 + static_cast<int>(rng() % 8000);
    for (int i = 0; i < keys; i++)
      db.Insert("k" + std::to_string(i), Value::String("init" + std::to_string(i)),
                i % 5 == 0 ? kNow + 100000 : Db::kNoExpire);
    int64_t now = kNow;
    for (int round = 0; round < 3; round++) {
      const auto want = Contents(db);
      RecordingSink sink;
      db.BeginSnapshot(&sink, static_cast<uint32_t>(round + 1));
      while (db.SnapshotStep(1 + rng() % 300))
        for (int c = 0, n = static_cast<int>(rng() % 40); c < n; c++) RandomChange(db, rng, keys * 2, now++);
      db.EndSnapshot();
      ASSERT_EQ(sink.got.size(), want.size()) << "seed " << seed;
      EXPECT_TRUE(sink.got == want) << "seed " << seed;
      EXPECT_EQ(db.CheckInvariants(), "");
    }
  }
}

TEST(DbSnapshot, ClearAndSwapSendTheOldContentsFirst) {
  Db a, b;
  for (int i = 0; i < 3000; i++) a.Insert("a" + std::to_string(i), Value::String("x"));
  for (int i = 0; i < 2000; i++) b.Insert("b" + std::to_string(i), Value::String("y"));
  const auto want_a = Contents(a), want_b = Contents(b);
  RecordingSink sa, sb;
  a.BeginSnapshot(&sa, 7);
  b.BeginSnapshot(&sb, 7);
  a.SnapshotStep(100);
  a.Swap(b);  // a now holds b's keys: neither snapshot may see them again
  a.Clear();
  a.Insert("new", Value::String("z"));
  while (a.SnapshotStep(50) || b.SnapshotStep(50)) {
  }
  EXPECT_TRUE(sa.got == want_a);
  EXPECT_TRUE(sb.got == want_b);
}

TEST(DbSnapshot, NothingIsSentWithoutASnapshot) {
  Db db;
  db.Insert("k", Value::String("v"));
  EXPECT_FALSE(db.SnapshotStep(100));
  EXPECT_FALSE(db.snapshot_active());
  RecordingSink sink;
  db.BeginSnapshot(&sink, 1);
  EXPECT_TRUE(db.snapshot_active());
  while (db.SnapshotStep(1)) {
  }
  db.EndSnapshot();
  db.Find("k", kNow)->value = Value::String("w");
  EXPECT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got["k"].value, "v");
}

}  // namespace
}  // namespace peregrine
