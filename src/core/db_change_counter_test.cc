// Unit tests for Db's change counter (set_change_counter): advanced each
// time the table itself removes keys or hash fields whose time has come
// (lazily, by the active cycle, by field expiry), and only then; a read
// group on another thread relies on it (server/shard.h).
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "core/db.h"
#include "core/hash_object.h"

namespace peregrine {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

TEST(DbChangeCounter, LazyAndActiveExpiryAdvanceIt) {
  std::atomic<uint64_t> changes{0};
  Db db;
  db.set_change_counter(&changes);
  db.Insert("live", Value::String(std::string_view("v")), kNow + 60'000);
  db.Insert("soon", Value::String(std::string_view("v")), kNow + 10);
  db.Insert("later", Value::String(std::string_view("v")), kNow + 20);
  db.Insert("plain", Value::String(std::string_view("v")));
  // Reading live keys, or missing ones, changes nothing.
  EXPECT_NE(db.Find("live", kNow), nullptr);
  EXPECT_NE(db.Find("soon", kNow + 9), nullptr);
  EXPECT_EQ(db.Find("absent", kNow), nullptr);
  EXPECT_EQ(changes.load(), 0u);
  // A lookup that deletes an expired key does.
  EXPECT_EQ(db.Find("soon", kNow + 10), nullptr);
  EXPECT_EQ(changes.load(), 1u);
  // The active cycle: only a pass that deletes something.
  EXPECT_EQ(db.ActiveExpire(kNow + 15, size_t{1} << 30), 0u);
  EXPECT_EQ(changes.load(), 1u);
  EXPECT_EQ(db.ActiveExpire(kNow + 25, size_t{1} << 30), 1u);
  EXPECT_EQ(changes.load(), 2u);
}

TEST(DbChangeCounter, FieldExpiryAdvancesIt) {
  std::atomic<uint64_t> changes{0};
  Db db;
  db.set_change_counter(&changes);
  HashObject h;
  h.Set("a", "1", HashLimits{});
  h.Set("b", "2", HashLimits{});
  h.SetDeadline("a", kNow + 10);
  Db::Entry* e = db.Insert("h", Value(std::move(h)));
  EXPECT_EQ(db.ExpireFieldsOf(e, "h", kNow + 9), e);
  EXPECT_EQ(changes.load(), 0u);
  e = db.ExpireFieldsOf(e, "h", kNow + 10);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(changes.load(), 1u);
  EXPECT_EQ(db.ExpireHashFields(kNow + 100, 100), 0u);  // (its timer is stale now)
  EXPECT_EQ(changes.load(), 1u);
}

TEST(DbChangeCounter, NoCounterIsFine) {
  Db db;  // (the default: nothing to advance)
  db.Insert("k", Value::String(std::string_view("v")), kNow + 1);
  EXPECT_EQ(db.Find("k", kNow + 1), nullptr);
}

}  // namespace
}  // namespace peregrine
