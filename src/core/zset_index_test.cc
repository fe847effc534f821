// ZIndex: a model check against std::unordered_map through inserts, score
// changes and removals across growth and shrinking, with real hashes and
// with hashes forced to share a few home groups and tags (long probe runs,
// overflow counts, candidates that the confirmation must turn down).
#include "core/zset_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/memory.h"
#include "core/packed.h"

namespace peregrine {
namespace {

// The index's owner, as ZSetObject is: the members in (score, member)
// order (the tree), a cursor, and `step` members moved on with each write
// (the same protocol as ZSetObject::Big).
struct Owner {
  using Key = std::pair<double, std::string>;
  ZIndex index;
  std::unordered_map<std::string, double> m;
  std::set<Key> order;
  std::function<uint64_t(const std::string&)> hash;
  size_t step;
  size_t at_once;  // a set this small moves at once
  bool cursor_set = false;
  Key cursor;
  uint64_t moves = 0;  // moves finished

  Owner(std::function<uint64_t(const std::string&)> h, size_t st, size_t once)
      : hash(std::move(h)), step(st), at_once(once) {}

  bool Moved(double score, const std::string& member) const {
    return cursor_set && Key(score, member) < cursor;
  }
  bool Step(size_t n) {
    if (!index.PrepareMove(n == SIZE_MAX ? SIZE_MAX : n / 8 + 1)) return false;
    auto it = cursor_set ? order.lower_bound(cursor) : order.begin();
    for (; n > 0 && it != order.end(); --n, ++it) index.Move(hash(it->second), it->first);
    if (it == order.end()) {
      index.FinishMove();
      cursor_set = false;
      moves++;
      return true;
    }
    cursor = *it;
    cursor_set = true;
    return false;
  }
  void StartMove(uint64_t groups) {
    index.StartMove(groups);
    cursor_set = false;
    Step(m.size() < at_once ? SIZE_MAX : step);
  }
  void BeforeInsert() {
    if (index.moving()) Step(index.MustGrow() ? SIZE_MAX : step);
    if (!index.moving()) {
      if (const uint64_t g = index.GrowTarget()) StartMove(g);
    }
    if (index.MustGrow()) Step(SIZE_MAX);
  }
  void AfterWrite(bool removed) {
    if (index.moving()) {
      Step(step);
    } else if (removed) {
      if (const uint64_t g = index.ShrinkTarget()) StartMove(g);
    }
  }
  // What the tree would answer: is (score, member) in the set?
  auto Confirm(const std::string& member) const {
    return [this, member](double score) {
      auto it = m.find(member);
      return it != m.end() && it->second == score;
    };
  }
  uint32_t Slot(const std::string& member) const { return index.FindSlot(hash(member), Confirm(member)); }
  void Add(const std::string& member, double score) {
    BeforeInsert();
    index.Insert(hash(member), score, Moved(score, member));
    m[member] = score;
    order.emplace(score, member);
  }
  void Change(const std::string& member, double score) {
    const double old = m[member];
    const uint32_t slot = Slot(member);
    ASSERT_NE(slot, ZIndex::kNone);
    ASSERT_EQ(index.ScoreAt(slot), old);
    index.ChangeScore(hash(member), slot, old, score, Moved(old, member), Moved(score, member));
    order.erase(Key(old, member));
    order.emplace(score, member);
    m[member] = score;
    AfterWrite(false);
  }
  void Remove(const std::string& member) {
    const double score = m[member];
    const uint32_t slot = Slot(member);
    ASSERT_NE(slot, ZIndex::kNone);
    index.EraseSlot(hash(member), slot, score, Moved(score, member));
    m.erase(member);
    order.erase(Key(score, member));
    AfterWrite(true);
  }
  bool Validate() const {
    return index.Validate([&](auto&& f) {
      for (const Key& k : order) f(hash(k.second), k.first, Moved(k.first, k.second));
    });
  }
};

void RunModel(bool few_fragments, uint64_t seed, int steps, size_t step) {
  std::mt19937_64 rng(seed);
  const int64_t before = KeyspaceBytes();
  {
    auto hash = [few_fragments](const std::string& s) {
      const uint64_t h = packed::Hash(s);
      // Few homes, all at the table's last groups (runs wrap), few tags
      // (0xFF among them: the byte a full overflow count holds).
      static constexpr uint8_t kTags[] = {0xFF, 0xFE, 0x01, 0x80};
      return few_fragments ? (uint64_t{0xFFFFFFF0u | (h % 16)} << 32) | ((h >> 8) & 0xFFFFFF00) | kTags[h % 4] : h;
    };
    Owner o(hash, step, 64);
    size_t max_size = 0;
    uint64_t checked_moving = 0;
    for (int i = 0; i < steps; ++i) {
      const bool grow = (i / (steps / 4)) % 2 == 0;
      const std::string member = "m" + std::to_string(rng() % 20000);
      // Scores shared by many members, -0 and 0 among them.
      const uint64_t r = rng() % 9;
      const double score = r == 8 ? -0.0 : static_cast<double>(r);
      const int op = static_cast<int>(rng() % 100);
      double got;
      const bool present = o.m.count(member) > 0;
      ASSERT_EQ(o.index.Find(o.hash(member), o.Confirm(member), &got), present);
      if (present) {
        ASSERT_EQ(got, o.m[member]);
      }
      if (op < (grow ? 60 : 25)) {
        if (!present)
          o.Add(member, score);
        else
          o.Change(member, score);
      } else if (present) {
        o.Remove(member);
        ASSERT_EQ(o.Slot(member), ZIndex::kNone);
      }
      ASSERT_EQ(o.index.size(), o.m.size());
      max_size = std::max(max_size, o.m.size());
      if (i % 4999 == 0 || (o.index.moving() && i % 23 == 0)) {
        ASSERT_TRUE(o.Validate());
        checked_moving += o.index.moving();
      }
    }
    ASSERT_TRUE(o.Validate());
    EXPECT_GT(max_size, 2000u);  // grown well past the first sizes
    EXPECT_GT(o.moves, 10u);
    if (step < SIZE_MAX) {
      EXPECT_GT(checked_moving, 10u);  // checked halfway through moves
    }
    ZIndex copy = o.index.Clone();
    for (const auto& [member, score] : o.m) {
      double got;
      ASSERT_TRUE(copy.Find(o.hash(member), o.Confirm(member), &got));
      EXPECT_EQ(got, score);
    }
  }
  EXPECT_EQ(KeyspaceBytes(), before);
}

TEST(ZIndex, AgreesWithAModel) { RunModel(false, 1, 200000, 16); }
TEST(ZIndex, AgreesWithAModelWhenFragmentsCollide) { RunModel(true, 2, 20000, 16); }
// One member a write: the old table fills to 7/8 before the walk ends, and
// the insert that would pass it finishes the move.
TEST(ZIndex, AgreesWithAModelWhenMovesFallBehind) { RunModel(false, 3, 100000, 1); }
TEST(ZIndex, AgreesWithAModelMovingAtOnce) { RunModel(false, 4, 50000, SIZE_MAX); }

TEST(ZIndex, LoadStaysBetweenBounds) {
  Owner o([](const std::string& s) { return packed::Hash(s); }, 16, 2048);
  size_t most_bytes = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    o.Add(std::to_string(i), static_cast<double>(i % 1000));
    ASSERT_LE(o.index.size() * 8, o.index.capacity() * 7);
    most_bytes = std::max(most_bytes, o.index.AllocatedBytes());
  }
  while (o.index.moving()) o.Step(1000);
  // Grown by half from 13/16: at least 54% full.
  EXPECT_GE(o.index.size() * 100, o.index.capacity() * 54);
  // Two tables at most while moving: the old one and one half as large again.
  EXPECT_LE(most_bytes, o.index.capacity() * 64 / 7 * 5 / 2 + 65536);
  EXPECT_TRUE(o.Validate());
  for (uint64_t i = 100000; i-- > 1000;) o.Remove(std::to_string(i));
  while (o.index.moving()) o.Step(1000);
  EXPECT_TRUE(o.Validate());
  EXPECT_LE(o.index.capacity(), o.index.size() * 5 * 2);
}

// A two-group table whose groups both passed members on (one round the
// table's end): a lookup of an absent member still ends.
TEST(ZIndex, AbsentLookupEndsWhenEveryGroupOverflowed) {
  ZIndex index;
  std::unordered_map<uint64_t, double> m;
  auto each = [&](auto&& f) {
    for (const auto& [h, s] : m) f(h, s, false);
  };
  auto confirm = [&](uint64_t h) { return [&m, h](double s) { return m.count(h) && m.at(h) == s; }; };
  const uint64_t kLast = uint64_t{0xFFFFFFFF} << 32;  // homed in the last group
  index.StartMove(2);  // two groups
  ASSERT_TRUE(index.PrepareMove(1));
  index.FinishMove();
  auto add = [&](uint64_t h) {
    ASSERT_EQ(index.GrowTarget(), 0u);
    const double score = static_cast<double>(m.size());
    index.Insert(h, score, false);
    m[h] = score;
  };
  // 8 homed in the last group (the 8th wraps into the first) and 3 in the
  // first: two groups, 11 members (13/16 of 14).
  for (uint64_t i = 0; i < 8; ++i) add(kLast | (i << 8) | 0x42);
  for (uint64_t i = 0; i < 3; ++i) add((i << 8) | 0x43);
  // Four of the last group's own go; the first group fills and passes one
  // on to the last: now both groups count members passed on.
  for (uint64_t i = 0; i < 4; ++i) {
    const uint64_t h = kLast | (i << 8) | 0x42;
    const uint32_t slot = index.FindSlot(h, confirm(h));
    ASSERT_NE(slot, ZIndex::kNone);
    index.EraseSlot(h, slot, m[h], false);
    m.erase(h);
  }
  for (uint64_t i = 3; i < 7; ++i) add((i << 8) | 0x43);
  ASSERT_EQ(index.capacity(), 14u);
  EXPECT_EQ(index.size(), m.size());
  ASSERT_TRUE(index.Validate(each));
  for (const auto& [h, s] : m) {
    double got;
    ASSERT_TRUE(index.Find(h, confirm(h), &got));
    EXPECT_EQ(got, s);
  }
  double got;
  EXPECT_FALSE(index.Find(kLast | 0x42, confirm(kLast | 0x42), &got));
  EXPECT_FALSE(index.Find(0x44, [](double) { return false; }, &got));
}

}  // namespace
}  // namespace peregrine
