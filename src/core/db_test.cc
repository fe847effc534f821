// Unit tests for Db: the per-database key table (lookup, expiry bookkeeping,
// resizing, random sampling, active expiry and SCAN's guarantee).
#include "core/db.h"
#include "core/lazy_free.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace peregrine {
namespace {

// Value::String has string_view and string&& overloads; pick one for literals.
Value Str(std::string_view s) { return Value::String(s); }

// The string form of a value (integer encodings formatted).
std::string StrOf(const Value& v) {
  char scratch[CompactString::kIntBufferSize];
  return std::string(v.str().View(scratch));
}

constexpr int64_t kNow = 1'700'000'000'000;  // any fixed "current" time in ms
constexpr size_t kFullSweep = size_t{1} << 30;  // ActiveExpire: no limit

std::string ValueOf(const Db::Entry* e) { return e == nullptr ? "<null>" : StrOf(e->value); }

// All keys the table holds (ForEach sees expired ones too).
std::multiset<std::string> AllKeys(const Db& db) {
  std::multiset<std::string> keys;
  db.ForEach([&](const Db::Entry& e) { keys.insert(e.key_string()); });
  return keys;
}

// Runs a whole SCAN, calling between(cursor) after every step (it may modify
// the table), and returns every key visited (with repeats).
template <typename Between>
std::vector<std::string> FullScan(Db& db, Between&& between) {
  std::vector<std::string> seen;
  uint64_t cursor = 0;
  size_t steps = 0;
  do {
    cursor = db.Scan(cursor, [&](const Db::Entry& e) { seen.push_back(e.key_string()); });
    between(cursor);
    steps++;
    if (steps > 10'000'000) {
      ADD_FAILURE() << "scan does not terminate";
      break;
    }
  } while (cursor != 0);
  return seen;
}

TEST(Db, ReserveSizesAnEmptyTableAndLoadingSplitsNothing) {
  Db db;
  db.Reserve(200'000);
  const size_t segments = db.segment_count();
  EXPECT_GT(segments, 128u);
  EXPECT_EQ(db.CheckInvariants(), "");
  for (int i = 0; i < 200'000; i++) db.Insert("key:" + std::to_string(i), Str("v"));
  EXPECT_EQ(db.segment_count(), segments) << "no split while the hint holds";
  EXPECT_EQ(db.CheckInvariants(), "");
  for (int i = 0; i < 200'000; i += 997) EXPECT_EQ(ValueOf(db.Find("key:" + std::to_string(i), kNow)), "v");
  // More than the hint: the table grows as usual; a table with keys is
  // left alone.
  for (int i = 200'000; i < 300'000; i++) db.Insert("key:" + std::to_string(i), Str("w"));
  db.Reserve(10'000'000);
  EXPECT_EQ(db.size(), 300'000u);
  EXPECT_EQ(db.CheckInvariants(), "");
  // A SCAN still sees every key once or more.
  std::set<std::string> seen;
  for (const auto& k : FullScan(db, [](uint64_t) {})) seen.insert(k);
  EXPECT_EQ(seen.size(), 300'000u);
  Db small;
  small.Reserve(10);
  EXPECT_EQ(small.segment_count(), 1u);
}

TEST(Db, InsertFindErase) {
  Db db;
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.Find("a", kNow), nullptr);
  Db::Entry* e = db.Insert("a", Str("1"));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->key_string(), "a");
  EXPECT_EQ(StrOf(e->value), "1");
  EXPECT_FALSE(e->has_expire());
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.Find("a", kNow), e);
  EXPECT_EQ(db.FindRaw("a"), e);
  EXPECT_EQ(db.Find("b", kNow), nullptr);

  db.Insert("b", Str("2"));
  EXPECT_EQ(ValueOf(db.Find("a", kNow)), "1");
  EXPECT_EQ(ValueOf(db.Find("b", kNow)), "2");
  EXPECT_EQ(db.size(), 2u);

  EXPECT_TRUE(db.Erase("a"));
  EXPECT_FALSE(db.Erase("a"));
  EXPECT_FALSE(db.Erase("never"));
  EXPECT_EQ(db.Find("a", kNow), nullptr);
  EXPECT_EQ(ValueOf(db.Find("b", kNow)), "2");
  EXPECT_EQ(db.size(), 1u);
}

TEST(Db, KeysAreBinarySafe) {
  Db db;
  const std::string k1("a\0b", 3), k2("a\0c", 3), k3("a", 1);
  db.Insert(k1, Str("1"));
  db.Insert(k2, Str("2"));
  db.Insert(k3, Str("3"));
  db.Insert("", Str("empty"));
  EXPECT_EQ(ValueOf(db.Find(k1, kNow)), "1");
  EXPECT_EQ(ValueOf(db.Find(k2, kNow)), "2");
  EXPECT_EQ(ValueOf(db.Find(k3, kNow)), "3");
  EXPECT_EQ(ValueOf(db.Find("", kNow)), "empty");
  EXPECT_EQ(db.size(), 4u);
}

TEST(Db, EntryValueIsMutableInPlace) {
  Db db;
  db.Insert("k", Str("abc"));
  db.Find("k", kNow)->value.mutable_str().Append("def");
  EXPECT_EQ(ValueOf(db.Find("k", kNow)), "abcdef");
}

TEST(Db, LazyExpiryOnFind) {
  Db db;
  db.Insert("volatile", Str("v"), kNow + 1000);
  db.Insert("persistent", Str("p"));
  EXPECT_EQ(db.expires_count(), 1u);
  EXPECT_EQ(db.expired_keys(), 0u);

  EXPECT_NE(db.Find("volatile", kNow), nullptr);
  EXPECT_NE(db.Find("volatile", kNow + 999), nullptr);
  // The deadline is inclusive: at expire_ms the key is gone.
  EXPECT_EQ(db.Find("volatile", kNow + 1000), nullptr);
  EXPECT_EQ(db.expired_keys(), 1u);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(db.FindRaw("volatile"), nullptr) << "lazy expiry must delete, not just hide";
  // Looking it up again is a plain miss, not a second expiry.
  EXPECT_EQ(db.Find("volatile", kNow + 5000), nullptr);
  EXPECT_EQ(db.expired_keys(), 1u);
  // Keys without a deadline never expire.
  EXPECT_NE(db.Find("persistent", INT64_MAX), nullptr);
}

TEST(Db, FindRawReturnsLogicallyExpiredKeys) {
  Db db;
  db.Insert("k", Str("v"), kNow - 1);
  const Db::Entry* e = db.FindRaw("k");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(Db::IsExpired(*e, kNow));
  EXPECT_FALSE(Db::IsExpired(*e, kNow - 2));
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.expired_keys(), 0u);
  // Erase removes a key whether expired or not, and does not count it as expired.
  EXPECT_TRUE(db.Erase("k"));
  EXPECT_EQ(db.expired_keys(), 0u);
  EXPECT_EQ(db.expires_count(), 0u);
}

TEST(Db, ExpiredKeysCountsEveryLazyExpiry) {
  Db db;
  for (int i = 0; i < 50; i++) db.Insert("k" + std::to_string(i), Str("v"), kNow + i);
  for (int i = 0; i < 50; i++)
    EXPECT_EQ(db.Find("k" + std::to_string(i), kNow + 25) == nullptr, i <= 25) << i;
  EXPECT_EQ(db.expired_keys(), 26u);  // deadlines kNow..kNow+25 have passed
  EXPECT_EQ(db.size(), 24u);
  EXPECT_EQ(db.expires_count(), 24u);
}

TEST(Db, SetExpireBookkeeping) {
  Db db;
  Db::Entry* a = db.Insert("a", Str("1"));
  Db::Entry* b = db.Insert("b", Str("2"), kNow + 10);
  EXPECT_EQ(db.expires_count(), 1u);
  EXPECT_EQ(b->expire_ms(), kNow + 10);

  a = db.SetExpire(a, kNow + 100);
  EXPECT_EQ(db.expires_count(), 2u);
  EXPECT_TRUE(a->has_expire());
  EXPECT_EQ(a->expire_ms(), kNow + 100);
  EXPECT_EQ(db.FindRaw("a"), a) << "SetExpire returns where the entry now is";
  EXPECT_EQ(StrOf(a->value), "1");

  a = db.SetExpire(a, kNow + 200);  // changing a deadline does not count twice
  EXPECT_EQ(db.expires_count(), 2u);
  EXPECT_EQ(a->expire_ms(), kNow + 200);

  a = db.SetExpire(a, Db::kNoExpire);  // PERSIST
  EXPECT_EQ(db.expires_count(), 1u);
  EXPECT_FALSE(a->has_expire());
  EXPECT_EQ(a->expire_ms(), Db::kNoExpire);
  EXPECT_EQ(db.FindRaw("a"), a);
  EXPECT_EQ(StrOf(a->value), "1");
  a = db.SetExpire(a, Db::kNoExpire);  // clearing twice is harmless
  EXPECT_EQ(db.expires_count(), 1u);
  EXPECT_EQ(db.CheckInvariants(), "");

  EXPECT_TRUE(db.Erase("b"));  // erasing a volatile key drops its deadline
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(db.size(), 1u);
}

TEST(Db, ClearEmptiesEverythingAndTheTableIsReusable) {
  Db db;
  for (int i = 0; i < 1000; i++)
    db.Insert("k" + std::to_string(i), Str("v"), i % 2 ? kNow + 100 : Db::kNoExpire);
  EXPECT_EQ(db.size(), 1000u);
  EXPECT_EQ(db.expires_count(), 500u);
  db.Clear();
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(db.Find("k1", kNow), nullptr);
  EXPECT_TRUE(AllKeys(db).empty());
  std::mt19937_64 rng(1);
  EXPECT_EQ(db.RandomEntry(rng), nullptr);
  EXPECT_EQ(db.Scan(0, [](const Db::Entry&) { ADD_FAILURE() << "visited an entry"; }), 0u);

  db.Insert("again", Str("x"));
  EXPECT_EQ(ValueOf(db.Find("again", kNow)), "x");
  EXPECT_EQ(db.size(), 1u);
}

TEST(Db, SwapExchangesContents) {
  Db a, b;
  for (int i = 0; i < 300; i++) a.Insert("a" + std::to_string(i), Str("A"));
  a.Insert("vol", Str("V"), kNow + 100);
  b.Insert("only-b", Str("B"));

  a.Swap(b);
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(a.expires_count(), 0u);
  EXPECT_EQ(ValueOf(a.Find("only-b", kNow)), "B");
  EXPECT_EQ(a.Find("a0", kNow), nullptr);

  EXPECT_EQ(b.size(), 301u);
  EXPECT_EQ(b.expires_count(), 1u);
  EXPECT_EQ(b.Find("only-b", kNow), nullptr);
  for (int i = 0; i < 300; i++) EXPECT_EQ(ValueOf(b.Find("a" + std::to_string(i), kNow)), "A") << i;
  EXPECT_EQ(ValueOf(b.Find("vol", kNow)), "V");

  // Both stay fully usable after the swap (insertions, lazy expiry, erase).
  a.Insert("new", Str("N"));
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(b.Find("vol", kNow + 100), nullptr);
  EXPECT_EQ(b.expires_count(), 0u);
  EXPECT_TRUE(b.Erase("a7"));
  EXPECT_EQ(b.size(), 299u);

  a.Swap(a);  // self-swap is a no-op
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(ValueOf(a.Find("new", kNow)), "N");
}

TEST(Db, RandomEntryReturnsMembers) {
  Db db;
  std::mt19937_64 rng(12345);
  EXPECT_EQ(db.RandomEntry(rng), nullptr);

  db.Insert("solo", Str("v"));
  for (int i = 0; i < 20; i++) {
    const Db::Entry* e = db.RandomEntry(rng);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->key_string(), "solo");
  }

  std::unordered_set<std::string> keys;
  for (int i = 0; i < 40; i++) {
    std::string k = "member:" + std::to_string(i);
    db.Insert(k, Str("v"));
    keys.insert(k);
  }
  keys.insert("solo");
  std::unordered_set<std::string> drawn;
  for (int i = 0; i < 20000; i++) {
    const Db::Entry* e = db.RandomEntry(rng);
    ASSERT_NE(e, nullptr);
    ASSERT_TRUE(keys.count(e->key_string())) << e->key_string();
    drawn.insert(e->key_string());
  }
  // Every key has a fair chance: 20000 draws over 41 keys miss none.
  EXPECT_EQ(drawn.size(), keys.size());
}

TEST(Db, RandomEntryAfterMostKeysAreErased) {
  // A big sparse table (after erasures, before or after any shrink) still
  // yields only live members.
  Db db;
  for (int i = 0; i < 5000; i++) db.Insert("k" + std::to_string(i), Str("v"));
  for (int i = 0; i < 5000; i++)
    if (i % 1000 != 0) db.Erase("k" + std::to_string(i));
  ASSERT_EQ(db.size(), 5u);
  std::mt19937_64 rng(7);
  std::set<std::string> drawn;
  for (int i = 0; i < 2000; i++) {
    const Db::Entry* e = db.RandomEntry(rng);
    ASSERT_NE(e, nullptr);
    drawn.insert(e->key_string());
  }
  EXPECT_EQ(drawn, (std::set<std::string>{"k0", "k1000", "k2000", "k3000", "k4000"}));
}

TEST(Db, ActiveExpireDeletesOnlyExpiredKeys) {
  Db db;
  for (int i = 0; i < 300; i++) {
    std::string k = "k" + std::to_string(i);
    if (i % 3 == 0)
      db.Insert(k, Str("persistent"));
    else if (i % 3 == 1)
      db.Insert(k, Str("past"), kNow - 1);
    else
      db.Insert(k, Str("future"), kNow + 60'000);
  }
  ASSERT_EQ(db.expires_count(), 200u);
  size_t deleted = db.ActiveExpire(kNow, kFullSweep);
  EXPECT_EQ(deleted, 100u);
  EXPECT_EQ(db.expired_keys(), 100u);
  EXPECT_EQ(db.size(), 200u);
  EXPECT_EQ(db.expires_count(), 100u);
  for (int i = 0; i < 300; i++) {
    const Db::Entry* e = db.FindRaw("k" + std::to_string(i));
    if (i % 3 == 1) {
      EXPECT_EQ(e, nullptr) << i;
    } else {
      ASSERT_NE(e, nullptr) << i;
      EXPECT_EQ(StrOf(e->value), i % 3 == 0 ? "persistent" : "future");
    }
  }
  // Nothing else is due: another full sweep deletes nothing.
  EXPECT_EQ(db.ActiveExpire(kNow, kFullSweep), 0u);
  // Once the remaining deadlines pass, a sweep takes them too.
  EXPECT_EQ(db.ActiveExpire(kNow + 60'000, kFullSweep), 100u);
  EXPECT_EQ(db.size(), 100u);
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(db.expired_keys(), 200u);
  EXPECT_EQ(db.ActiveExpire(INT64_MAX, kFullSweep), 0u);
}

TEST(Db, ActiveExpireInSmallStepsEventuallyCoversTheTable) {
  Db db;
  for (int i = 0; i < 1000; i++)
    db.Insert("k" + std::to_string(i), Str("v"), i < 700 ? kNow - 5 : Db::kNoExpire);
  size_t total = 0;
  for (int round = 0; round < 100000 && db.expires_count() > 0; round++) {
    size_t n = db.ActiveExpire(kNow, 3);
    EXPECT_LE(n, 700u);
    total += n;
  }
  EXPECT_EQ(total, 700u);
  EXPECT_EQ(db.size(), 300u);
  EXPECT_EQ(db.expires_count(), 0u);
  EXPECT_EQ(db.expired_keys(), 700u);
  for (int i = 700; i < 1000; i++) EXPECT_NE(db.FindRaw("k" + std::to_string(i)), nullptr) << i;
}

TEST(Db, ActiveExpireStepIsBounded) {
  Db db;
  for (int i = 0; i < 4096; i++) db.Insert("k" + std::to_string(i), Str("v"), kNow - 1);
  // A call checks at most max_entries keys, never the whole table.
  EXPECT_EQ(db.ActiveExpire(kNow, 1), 1u);
  EXPECT_EQ(db.ActiveExpire(kNow, 10), 10u);
  EXPECT_EQ(db.size(), 4096u - 11);
  EXPECT_EQ(db.CheckInvariants(), "");
}

TEST(Db, GrowsBySplittingAndGivesMemoryBackAfterDeletes) {
  const int64_t base = KeyspaceBytes();
  Db db;
  EXPECT_EQ(db.segment_count(), 1u);
  for (int i = 0; i < 100000; i++) db.Insert("k" + std::to_string(i), Str("v"));
  EXPECT_EQ(db.CheckInvariants(), "");
  // Segments hold at most ~1,100 keys, so 100k keys need at least ~90.
  EXPECT_GE(db.segment_count(), 90u);
  EXPECT_LE(db.segment_count(), 256u);
  EXPECT_GE(db.directory_depth(), 7);
  const int64_t grown = KeyspaceBytes() - base;
  // Short keys and values are inline: the table costs ~40 bytes a key.
  EXPECT_LT(grown, 100000 * 48) << grown / 100000 << " bytes per key";
  for (int i = 0; i < 100000; i++)
    if (i % 1000 != 0) {
      ASSERT_TRUE(db.Erase("k" + std::to_string(i)));
    }
  EXPECT_EQ(db.CheckInvariants(), "");
  while (db.Maintain(1000)) {
  }
  EXPECT_EQ(db.CheckInvariants(), "");
  const int64_t shrunk = KeyspaceBytes() - base;
  // What is left: 100 keys and, per segment, a header and a one-group index.
  EXPECT_LT(shrunk, grown / 10) << "deleting 99% of the keys gave back too little";
  for (int i = 0; i < 100000; i += 1000) EXPECT_NE(db.Find("k" + std::to_string(i), kNow), nullptr) << i;
  EXPECT_EQ(db.size(), 100u);
  // And the table grows again from there.
  for (int i = 0; i < 20000; i++) db.Insert("again" + std::to_string(i), Str("v"));
  EXPECT_EQ(db.size(), 20100u);
  EXPECT_EQ(db.CheckInvariants(), "");
}

// 10k random operations checked against std::unordered_map, through phases that
// grow the table and then shrink it.
TEST(Db, RandomizedModelCheck) {
  Db db;
  std::unordered_map<std::string, std::string> model;
  std::mt19937_64 rng(20240601);
  const int64_t base = KeyspaceBytes();
  int64_t max_bytes = 0, min_bytes_after_peak = INT64_MAX;
  auto key_of = [](uint64_t n) { return "key:" + std::to_string(n); };

  const int kOps = 10000;
  for (int op = 0; op < kOps; op++) {
    // Phase 1 mostly inserts, phase 2 mostly erases, phase 3 is mixed.
    int insert_pct = op < 4000 ? 75 : op < 8000 ? 15 : 45;
    int erase_pct = op < 4000 ? 10 : op < 8000 ? 70 : 35;
    int dice = static_cast<int>(rng() % 100);
    std::string key = key_of(rng() % 4000);
    if (dice < insert_pct) {
      std::string value = "v" + std::to_string(rng() % 1000000);
      Db::Entry* e = db.Find(key, kNow);
      ASSERT_EQ(e != nullptr, model.count(key) == 1) << key;
      if (e != nullptr) {
        e->value = Value::String(value);  // overwrite, as SET does
      } else {
        Db::Entry* added = db.Insert(key, Str(value));
        ASSERT_NE(added, nullptr);
        ASSERT_EQ(added->key_string(), key);
      }
      model[key] = value;
    } else if (dice < insert_pct + erase_pct) {
      // In phase 2 pick existing keys so that the table really empties.
      if (op >= 4000 && op < 8000 && !model.empty()) {
        key = db.RandomEntry(rng)->key_string();
        ASSERT_EQ(model.count(key), 1u) << key;
      }
      bool erased = db.Erase(key);
      ASSERT_EQ(erased, model.erase(key) == 1) << key;
    } else {
      Db::Entry* e = db.Find(key, kNow);
      auto it = model.find(key);
      if (it == model.end()) {
        ASSERT_EQ(e, nullptr) << key;
      } else {
        ASSERT_NE(e, nullptr) << key;
        ASSERT_EQ(StrOf(e->value), it->second) << key;
      }
    }
    ASSERT_EQ(db.size(), model.size()) << "after op " << op;
    if (op % 100 == 99) db.Maintain(1000);  // as the cron does
    const int64_t bytes = KeyspaceBytes() - base;
    if (bytes >= max_bytes) {
      max_bytes = bytes;
      min_bytes_after_peak = INT64_MAX;
    } else {
      min_bytes_after_peak = std::min(min_bytes_after_peak, bytes);
    }

    if (op % 500 == 499 || op == kOps - 1) {
      for (const auto& [k, v] : model) {
        const Db::Entry* e = db.FindRaw(k);
        ASSERT_NE(e, nullptr) << k;
        ASSERT_EQ(StrOf(e->value), v) << k;
      }
      std::multiset<std::string> keys = AllKeys(db);
      ASSERT_EQ(keys.size(), model.size());
      for (const std::string& k : keys) ASSERT_EQ(model.count(k), 1u) << k;
      ASSERT_EQ(db.CheckInvariants(), "") << "after op " << op;
    }
  }
  EXPECT_GE(db.segment_count(), 2u) << "the model check never split a segment";
  EXPECT_LT(min_bytes_after_peak, max_bytes / 2) << "the model check never shrank the table";
  EXPECT_EQ(db.expires_count(), 0u);
}

// The same, with deadlines: lazy expiry, SetExpire and ActiveExpire against a model.
TEST(Db, RandomizedModelCheckWithExpiry) {
  Db db;
  struct Item {
    std::string value;
    int64_t expire_ms;
  };
  std::unordered_map<std::string, Item> model;
  std::mt19937_64 rng(99);
  int64_t now = kNow;
  uint64_t expected_expired = 0;
  auto live = [&](const Item& it) { return it.expire_ms == Db::kNoExpire || it.expire_ms > now; };

  for (int op = 0; op < 10000; op++) {
    now += static_cast<int64_t>(rng() % 3);
    std::string key = "k" + std::to_string(rng() % 1500);
    int dice = static_cast<int>(rng() % 100);
    if (dice < 40) {
      Db::Entry* e = db.Find(key, now);
      auto it = model.find(key);
      if (it != model.end() && !live(it->second)) {
        model.erase(it);
        expected_expired++;
        it = model.end();
      }
      ASSERT_EQ(e != nullptr, it != model.end()) << key;
      int64_t deadline = rng() % 2 ? now + 1 + static_cast<int64_t>(rng() % 200) : Db::kNoExpire;
      if (e == nullptr)
        e = db.Insert(key, Str("v"), deadline);
      else
        e = db.SetExpire(e, deadline);
      ASSERT_EQ(db.FindRaw(key), e);
      ASSERT_EQ(e->expire_ms(), deadline);
      model[key] = Item{"v", deadline};
    } else if (dice < 60) {
      bool erased = db.Erase(key);
      ASSERT_EQ(erased, model.erase(key) == 1) << key;
    } else if (dice < 95) {
      Db::Entry* e = db.Find(key, now);
      auto it = model.find(key);
      if (it != model.end() && !live(it->second)) {
        model.erase(it);
        expected_expired++;
        it = model.end();
      }
      ASSERT_EQ(e != nullptr, it != model.end()) << key;
    } else {
      size_t n = db.ActiveExpire(now, 16);
      size_t due = 0;
      for (const auto& [k, v] : model) due += !live(v);
      ASSERT_LE(n, due);
      // Drop from the model exactly what the table dropped.
      for (auto it = model.begin(); it != model.end();) {
        if (!live(it->second) && db.FindRaw(it->first) == nullptr)
          it = model.erase(it);
        else
          ++it;
      }
      expected_expired += n;
    }
    ASSERT_EQ(db.size(), model.size()) << "op " << op;
    size_t with_deadline = 0;
    for (const auto& [k, v] : model) with_deadline += v.expire_ms != Db::kNoExpire;
    ASSERT_EQ(db.expires_count(), with_deadline) << "op " << op;
    ASSERT_EQ(db.expired_keys(), expected_expired) << "op " << op;
    if (op % 100 == 99) db.Maintain(1000);
    if (op % 1000 == 999) {
      ASSERT_EQ(db.CheckInvariants(), "") << "op " << op;
    }
  }
}

TEST(DbScan, EmptyTableScanEndsAtOnce) {
  Db db;
  int visits = 0;
  EXPECT_EQ(db.Scan(0, [&](const Db::Entry&) { visits++; }), 0u);
  EXPECT_EQ(visits, 0);
}

TEST(DbScan, StaticTableVisitsEveryKeyExactlyOnce) {
  Db db;
  for (int i = 0; i < 1000; i++) db.Insert("k" + std::to_string(i), Str("v"));
  std::vector<std::string> seen = FullScan(db, [](uint64_t) {});
  std::multiset<std::string> counted(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), 1000u);
  for (int i = 0; i < 1000; i++) EXPECT_EQ(counted.count("k" + std::to_string(i)), 1u) << i;
}

TEST(DbScan, CursorsAdvanceAndLeaveTheLow24BitsFree) {
  // SCAN over several shards will keep the shard index in those bits.
  Db db;
  for (int i = 0; i < 50000; i++) db.Insert("k" + std::to_string(i), Str("v"));
  uint64_t cursor = 0, last = 0;
  size_t steps = 0;
  do {
    cursor = db.Scan(cursor, [](const Db::Entry&) {});
    steps++;
    if (cursor != 0) {
      ASSERT_GT(cursor, last);
      ASSERT_EQ(cursor & 0xFFFFFF, 0u) << cursor;
      last = cursor;
    }
  } while (cursor != 0 && steps < 1'000'000);
  EXPECT_EQ(cursor, 0u);
  // About one step per home group: 50k keys in groups of ~15.
  EXPECT_GT(steps, 50000u / 21);
}

TEST(DbScan, VisitsExpiredEntriesToo) {
  Db db;
  db.Insert("dead", Str("v"), kNow - 1);
  db.Insert("alive", Str("v"));
  std::vector<std::string> seen = FullScan(db, [](uint64_t) {});
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"alive", "dead"}));
}

TEST(DbScan, KeysPresentThroughoutAreReturnedWhileTheTableGrows) {
  Db db;
  std::vector<std::string> stable;
  for (int i = 0; i < 200; i++) {
    stable.push_back("stable:" + std::to_string(i));
    db.Insert(stable.back(), Str("v"));
  }
  size_t start_segments = db.segment_count();
  int added = 0, steps = 0;
  // Growth is bounded: a table that grows by a fixed amount every step forever
  // would keep a reverse-binary scan from ever finishing.
  std::vector<std::string> seen = FullScan(db, [&](uint64_t) {
    if (++steps > 100) return;
    for (int j = 0; j < 40; j++) db.Insert("new:" + std::to_string(added++), Str("v"));
  });
  EXPECT_GE(db.segment_count(), start_segments + 2) << "the table did not split during the scan";
  std::unordered_set<std::string> got(seen.begin(), seen.end());
  for (const std::string& k : stable) EXPECT_TRUE(got.count(k)) << "missed " << k;
}

TEST(DbScan, KeysPresentThroughoutAreReturnedWhileTheTableShrinks) {
  Db db;
  std::vector<std::string> stable, doomed;
  for (int i = 0; i < 20000; i++) {
    std::string k = "k" + std::to_string(i);
    if (i % 100 == 0)
      stable.push_back(k);
    else
      doomed.push_back(k);
    db.Insert(k, Str("v"));
  }
  const int64_t start_bytes = KeyspaceBytes();
  size_t next = 0;
  std::vector<std::string> seen = FullScan(db, [&](uint64_t) {
    for (int j = 0; j < 300 && next < doomed.size(); j++) db.Erase(doomed[next++]);
    db.Maintain(1000);  // as the cron does between commands: segments are repacked
  });
  EXPECT_LE(KeyspaceBytes() * 4, start_bytes) << "the table did not shrink during the scan";
  std::unordered_set<std::string> got(seen.begin(), seen.end());
  for (const std::string& k : stable) EXPECT_TRUE(got.count(k)) << "missed " << k;
}

TEST(DbScan, KeysPresentThroughoutAreReturnedThroughGrowAndShrink) {
  // Many seeds and step sizes: grow hard for a while, then shrink hard, while
  // a set of stable keys must always come back.
  for (uint64_t seed = 1; seed <= 20; seed++) {
    Db db;
    std::mt19937_64 rng(seed);
    std::vector<std::string> stable;
    for (int i = 0; i < 64; i++) {
      stable.push_back("s" + std::to_string(seed) + ":" + std::to_string(i));
      db.Insert(stable.back(), Str("v"));
    }
    std::vector<std::string> churn;
    int counter = 0;
    size_t steps = 0;
    size_t max_segments = db.segment_count();
    std::vector<std::string> seen = FullScan(db, [&](uint64_t) {
      steps++;
      if (steps < 20 + seed) {
        size_t n = 1 + rng() % 500;
        for (size_t j = 0; j < n; j++) {
          churn.push_back("c" + std::to_string(counter++));
          db.Insert(churn.back(), Str("v"));
        }
      } else {
        size_t n = 1 + rng() % 800;
        for (size_t j = 0; j < n && !churn.empty(); j++) {
          size_t pick = rng() % churn.size();
          std::swap(churn[pick], churn.back());
          db.Erase(churn.back());
          churn.pop_back();
        }
      }
      if (rng() % 4 == 0) db.Maintain(1000);
      max_segments = std::max(max_segments, db.segment_count());
    });
    std::unordered_set<std::string> got(seen.begin(), seen.end());
    for (const std::string& k : stable)
      EXPECT_TRUE(got.count(k)) << "seed " << seed << " missed " << k;
    EXPECT_GE(max_segments, 4u) << "seed " << seed;
    EXPECT_EQ(db.CheckInvariants(), "") << "seed " << seed;
  }
}

TEST(DbScan, CursorFromABiggerTableStillWorksAfterShrink) {
  // A client may hold a cursor issued against a larger table; every key of
  // the now-smaller table must still be reachable from it onward or before it.
  Db db;
  for (int i = 0; i < 4096; i++) db.Insert("k" + std::to_string(i), Str("v"));
  std::unordered_set<std::string> got;
  uint64_t cursor = 0;
  for (int i = 0; i < 100; i++)
    cursor = db.Scan(cursor, [&](const Db::Entry& e) { got.insert(e.key_string()); });
  ASSERT_NE(cursor, 0u);
  for (int i = 16; i < 4096; i++) db.Erase("k" + std::to_string(i));
  do {
    cursor = db.Scan(cursor, [&](const Db::Entry& e) { got.insert(e.key_string()); });
  } while (cursor != 0);
  for (int i = 0; i < 16; i++) EXPECT_TRUE(got.count("k" + std::to_string(i))) << i;
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

constexpr int64_t kEvictNow = 1'000'000;

TEST(DbEviction, SieveEvictsKeysNotLookedUpFirst) {
  Db db;
  for (int i = 0; i < 100; i++) db.Insert("k" + std::to_string(i), Value::String("v"));
  // Look up the even keys: they carry the visited bit.
  for (int i = 0; i < 100; i += 2) ASSERT_NE(db.Find("k" + std::to_string(i), kEvictNow), nullptr);
  while (db.size() > 50) ASSERT_TRUE(db.EvictSieve(Db::EvictFrom::kAllKeys));
  EXPECT_EQ(db.size(), 50u);
  for (int i = 0; i < 100; i += 2) EXPECT_NE(db.FindRaw("k" + std::to_string(i)), nullptr) << i;
  EXPECT_EQ(db.evicted_keys(), 50u);
  // Now everything was visited once and the hand clears bits: eviction still progresses.
  while (db.size() > 0) ASSERT_TRUE(db.EvictSieve(Db::EvictFrom::kAllKeys));
  EXPECT_FALSE(db.EvictSieve(Db::EvictFrom::kAllKeys));
}

TEST(DbEviction, LookupsWithoutTouchDoNotProtectKeys) {
  // EXISTS, TYPE, TTL, OBJECT and SCAN look keys up without marking them.
  Db db;
  for (int i = 0; i < 100; i++) db.Insert("k" + std::to_string(i), Value::String("v"));
  for (int i = 0; i < 100; i++) {
    const std::string k = "k" + std::to_string(i);
    ASSERT_NE(db.Find(CompactKey::MakeProbe(k), kEvictNow, /*touch=*/i % 2 == 1), nullptr);
  }
  while (db.size() > 50) ASSERT_TRUE(db.EvictSieve(Db::EvictFrom::kAllKeys));
  for (int i = 1; i < 100; i += 2) EXPECT_NE(db.FindRaw("k" + std::to_string(i)), nullptr) << i;
}

TEST(DbEviction, VolatileOnlyTouchesKeysWithADeadline) {
  Db db;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; i++) db.Insert("p" + std::to_string(i), Value::String("v"));
  for (int i = 0; i < 50; i++) db.Insert("v" + std::to_string(i), Value::String("v"), kEvictNow + 1000 + i);
  while (db.expires_count() > 40) ASSERT_TRUE(db.EvictSieve(Db::EvictFrom::kVolatile));
  for (int n = 0; n < 10; n++) ASSERT_TRUE(db.EvictRandom(Db::EvictFrom::kVolatile, rng));
  for (int n = 0; n < 10; n++) ASSERT_TRUE(db.EvictSoonestExpiring(5, rng));
  EXPECT_LE(db.expires_count(), 20u);
  EXPECT_EQ(db.size(), 50u + db.expires_count());
  for (int i = 0; i < 50; i++) EXPECT_NE(db.FindRaw("p" + std::to_string(i)), nullptr);
  while (db.expires_count() > 0) ASSERT_TRUE(db.EvictRandom(Db::EvictFrom::kVolatile, rng));
  EXPECT_FALSE(db.EvictSieve(Db::EvictFrom::kVolatile));
  EXPECT_FALSE(db.EvictRandom(Db::EvictFrom::kVolatile, rng));
  EXPECT_FALSE(db.EvictSoonestExpiring(5, rng));
  EXPECT_EQ(db.size(), 50u);
}

TEST(DbEviction, SoonestExpiringWithEnoughSamplesIsExact) {
  Db db;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 30; i++) db.Insert("v" + std::to_string(i), Value::String("v"), kEvictNow + 100 * (i + 1));
  // Sampling every key, the soonest deadline goes first, in order.
  for (int i = 0; i < 30; i++) {
    ASSERT_TRUE(db.EvictSoonestExpiring(64, rng));
    EXPECT_EQ(db.FindRaw("v" + std::to_string(i)), nullptr) << i;
  }
}

TEST(DbMemory, RepackNeverGrowsAnIndexPastItsLargestSize) {
  // A repack of a nearly full segment must leave it able to split before an
  // arena overflows (found by review: an index sized past kMaxGroups let one
  // arena fill up and abort).
  Db db;
  for (int i = 0; i < 1100; i++) db.Insert("k" + std::to_string(i), Value::String("v"));
  for (int i = 0; i < 1100; i++) db.SetExpire(db.Find("k" + std::to_string(i), kEvictNow), kEvictNow + 100000);
  while (db.Maintain(1'000'000)) {
  }
  ASSERT_EQ(db.CheckInvariants(), "");
  for (int i = 0; i < 5000; i++) db.Insert("t" + std::to_string(i), Value::String("v"), kEvictNow + 100000);
  for (int i = 0; i < 5000; i++) db.Insert("p" + std::to_string(i), Value::String("v"));
  EXPECT_EQ(db.size(), 11100u);
  EXPECT_EQ(db.CheckInvariants(), "");
}

TEST(DbMemory, AccountingReturnsToItsStartAfterClear) {
  const int64_t before = KeyspaceBytes();
  {
    Db db;
    for (int i = 0; i < 10000; i++)
      db.Insert("key:" + std::to_string(i) + std::string(20, 'x'), Value::String(std::string(100, 'v')));
    db.Find("key:1" + std::string(20, 'x'), kEvictNow)->value.mutable_str().Append(std::string(5000, 'a'));
    EXPECT_GT(KeyspaceBytes() - before, 10000 * (100 + 36));
    size_t usage = Db::MemoryUsage(*db.FindRaw("key:1" + std::string(20, 'x')));
    EXPECT_GE(usage, 5100u);
    db.Clear();
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

// With lfu-log-factor 0 every access adds exactly one, so the counter says
// how many touching lookups a key had.
AccessTracker CountingTracker() {
  AccessTracker t;
  t.Configure(AccessTracker::Mode::kLfu, 0, 1);
  t.Advance(kNow);
  return t;
}

TEST(DbAccess, InsertStartsAndTouchingLookupsCount) {
  AccessTracker t = CountingTracker();
  Db db;
  db.set_access_tracker(&t);
  db.Insert("k", Str("v"));
  EXPECT_EQ(db.FindRaw("k")->value.access(), AccessTracker::kLfuInitial);
  for (int i = 0; i < 3; i++) db.Find("k", kNow);
  db.Find(CompactKey::MakeProbe("k"), kNow, /*touch=*/false);
  EXPECT_EQ(db.FindRaw("k")->value.access(), AccessTracker::kLfuInitial + 3);
  Db plain;  // no tracker: the byte stays 0
  plain.Insert("k", Str("v"));
  plain.Find("k", kNow);
  EXPECT_EQ(plain.FindRaw("k")->value.access(), 0);
}

// The byte travels with its key: deadlines set and cleared (arena moves),
// splits while the table grows, repacks after deletions, value replacement.
TEST(DbAccess, AccessDataSurvivesEveryMove) {
  AccessTracker t = CountingTracker();
  Db db;
  db.set_access_tracker(&t);
  db.Insert("hot", Str("v"));
  for (int i = 0; i < 20; i++) db.Find("hot", kNow);
  const uint8_t want = AccessTracker::kLfuInitial + 20;
  db.SetExpire(db.FindRaw("hot"), kNow + 100'000);
  EXPECT_EQ(db.FindRaw("hot")->value.access(), want);
  for (int i = 0; i < 50'000; i++) db.Insert("k" + std::to_string(i), Str("x"));
  EXPECT_EQ(db.FindRaw("hot")->value.access(), want);
  db.SetExpire(db.FindRaw("hot"), Db::kNoExpire);
  for (int i = 0; i < 49'000; i++) db.Erase("k" + std::to_string(i));
  while (db.Maintain(1'000'000)) {
  }
  EXPECT_EQ(db.FindRaw("hot")->value.access(), want);
  db.FindRaw("hot")->value = Str(std::string(100, 'y'));
  EXPECT_EQ(db.FindRaw("hot")->value.access(), want) << "replacing the value keeps it";
  EXPECT_EQ(db.CheckInvariants(), "");
}

// A sweep pass visits every key once, in steps, through splits between steps.
TEST(DbAccess, SweepPassVisitsEveryKey) {
  AccessTracker t = CountingTracker();
  Db db;
  db.set_access_tracker(&t);
  for (int i = 0; i < 20'000; i++) db.Insert("k" + std::to_string(i), Str("v"), i % 3 ? Db::kNoExpire : kNow + 1000);
  for (int i = 0; i < 20'000; i++) db.Find("k" + std::to_string(i), kNow);  // all at 6
  t.BeginPass(kNow);
  t.BeginPass(kNow + 3 * 60'000);  // three decay periods: 6 -> 3
  db.BeginAccessSweep();
  int steps = 0, added = 0;
  while (db.SweepAccess(500)) {
    steps++;
    // Keys added during the pass (new segments split off) are not lost.
    for (int j = 0; j < 100; j++) db.Insert("new" + std::to_string(added++), Str("v"));
  }
  EXPECT_GT(steps, 10);
  for (int i = 0; i < 20'000; i++) ASSERT_EQ(db.FindRaw("k" + std::to_string(i))->value.access(), 3) << i;
  EXPECT_FALSE(db.SweepAccess(500)) << "the pass is over";
  Db empty;
  empty.set_access_tracker(&t);
  empty.BeginAccessSweep();
  EXPECT_FALSE(empty.SweepAccess(500));
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

TEST(DbExpiry, AverageTtlIsARunningEstimateOverActiveExpiry) {
  Db db;
  EXPECT_EQ(db.avg_ttl(), 0);
  for (int i = 0; i < 1000; i++) db.Insert("t" + std::to_string(i), Str("v"), kNow + 10'000 + i % 2 * 2'000);
  db.ActiveExpire(kNow, kFullSweep);
  EXPECT_NEAR(static_cast<double>(db.avg_ttl()), 11'000, 50);  // half at 10 s, half at 12 s
  // Later samples move the estimate by 2% each.
  db.ActiveExpire(kNow + 5'000, kFullSweep);
  EXPECT_NEAR(static_cast<double>(db.avg_ttl()), 0.98 * 11'000 + 0.02 * 6'000, 50);
  for (int i = 0; i < 1000; i++) db.SetExpire(db.FindRaw("t" + std::to_string(i)), Db::kNoExpire);
  db.ActiveExpire(kNow, kFullSweep);
  EXPECT_EQ(db.avg_ttl(), 0) << "no deadlines left";
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

// A hash of `n` fields f0.. whose field i expires at base + i (kNoDeadline
// for base 0).
Value HashWithDeadlines(int n, int64_t base) {
  HashObject h;
  for (int i = 0; i < n; i++) {
    const std::string f = "f" + std::to_string(i);
    h.Set(f, "v", HashLimits{});
    if (base != 0) h.SetDeadline(f, base + i);
  }
  return Value(std::move(h));
}

TEST(DbFieldExpiry, ActiveCycleRemovesDueFieldsAndEmptyHashes) {
  Db db;
  db.Insert("a", HashWithDeadlines(10, kNow + 100));  // Insert registers the timer
  db.Insert("b", HashWithDeadlines(3, kNow + 50));
  db.Insert("plain", HashWithDeadlines(3, 0));
  EXPECT_FALSE(db.HashFieldsDue(kNow + 49));
  EXPECT_TRUE(db.HashFieldsDue(kNow + 50));
  EXPECT_EQ(db.ExpireHashFields(kNow + 104, 100), 5u + 3u);
  EXPECT_EQ(db.FindRaw("b"), nullptr) << "a hash whose last field expired is deleted";
  ASSERT_NE(db.FindRaw("a"), nullptr);
  EXPECT_EQ(db.FindRaw("a")->value.hash().size(), 5u);
  EXPECT_EQ(db.FindRaw("a")->value.hash().min_deadline(), kNow + 105);
  EXPECT_FALSE(db.HashFieldsDue(kNow + 104));
  EXPECT_EQ(db.ExpireHashFields(kNow + 200, 100), 5u);
  EXPECT_EQ(db.FindRaw("a"), nullptr);
  EXPECT_EQ(db.expired_fields(), 13u);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.field_timers(), 0u);
}

TEST(DbFieldExpiry, LazyExpiryBeforeACommandLooks) {
  Db db;
  Db::Entry* e = db.Insert("h", HashWithDeadlines(4, kNow + 10));
  EXPECT_EQ(db.ExpireFieldsOf(e, "h", kNow + 9), e);
  EXPECT_EQ(e->value.hash().size(), 4u);
  e = db.ExpireFieldsOf(e, "h", kNow + 11);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value.hash().size(), 2u);
  EXPECT_EQ(db.ExpireFieldsOf(e, "h", kNow + 13), nullptr);
  EXPECT_EQ(db.FindRaw("h"), nullptr);
  // The timers left behind are stale and go quietly.
  EXPECT_EQ(db.ExpireHashFields(kNow + 1000, 100), 0u);
  EXPECT_EQ(db.field_timers(), 0u);
}

TEST(DbFieldExpiry, StaleTimersStayBounded) {
  Db db;
  // A far deadline set and the hash deleted, over and over: each leaves a
  // stale timer that would not come due for a long time.
  for (int i = 0; i < 100'000; i++) {
    db.Insert("h", HashWithDeadlines(1, kNow + 1'000'000'000));
    db.Erase("h");
  }
  EXPECT_LT(db.field_timers(), 2048u);
  db.Insert("live", HashWithDeadlines(1, kNow + 5));
  for (int i = 0; i < 5'000; i++) db.NoteHashDeadline("live", kNow + 5);  // duplicates
  EXPECT_LT(db.field_timers(), 2048u);
  EXPECT_EQ(db.ExpireHashFields(kNow + 5, 10'000), 1u);
  EXPECT_EQ(db.FindRaw("live"), nullptr);
}

TEST(DbFieldExpiry, SwapAndClearTakeTheTimers) {
  Db a, b;
  a.Insert("h", HashWithDeadlines(2, kNow + 1));
  a.Swap(b);
  EXPECT_FALSE(a.HashFieldsDue(kNow + 10));
  EXPECT_TRUE(b.HashFieldsDue(kNow + 10));
  EXPECT_EQ(b.ExpireHashFields(kNow + 10, 10), 2u);
  b.Insert("h", HashWithDeadlines(2, kNow + 1));
  b.Clear();
  EXPECT_EQ(b.field_timers(), 0u);
}

}  // namespace
}  // namespace peregrine

namespace peregrine {
namespace {

TEST(DbClearLater, EmptyAtOnceFreedInSlices) {
  Db db;
  for (int i = 0; i < 20'000; i++) db.Insert("key:" + std::to_string(i), Value::String("v"));
  const size_t pending = lazy_free::Pending();
  const int64_t all_pending = lazy_free::PendingAllThreads();
  const uint64_t freed = lazy_free::FreedAllThreads();
  db.ClearLater();
  EXPECT_EQ(lazy_free::PendingAllThreads(), all_pending + 1);
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.FindRaw("key:1"), nullptr);
  EXPECT_EQ(lazy_free::Pending(), pending + 1);  // (the old segments, queued)
  // The table works at once; the old keys go between events.
  db.Insert("key:1", Value::String("new"));
  EXPECT_NE(db.FindRaw("key:1"), nullptr);
  while (lazy_free::RunSlice(1000)) {
  }
  EXPECT_EQ(lazy_free::Pending(), 0u);
  EXPECT_EQ(lazy_free::FreedAllThreads(), freed + pending + 1);  // (this thread's earlier ones too)
  EXPECT_EQ(db.size(), 1u);
  // A small table is freed at once.
  db.ClearLater();
  EXPECT_EQ(lazy_free::Pending(), 0u);
  EXPECT_EQ(db.size(), 0u);
}

}  // namespace
}  // namespace peregrine
