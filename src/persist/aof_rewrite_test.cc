// A key as commands a part at a time (AppendKeyCommandsPart, what an atomic
// slot migration sends of a large key): the parts, read back, rebuild the
// key the whole form does, with the deadline once, in the last part.
#include "persist/aof_rewrite.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/hash_object.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/zset_object.h"
#include "persist/aof_format.h"

namespace peregrine {
namespace {

std::vector<std::vector<std::string>> Commands(const std::string& bytes) {
  std::vector<std::vector<std::string>> out;
  AofReader r;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_EQ(r.Next(bytes.data() + at, bytes.size() - at), AofReader::Result::kCommand);
    out.emplace_back(r.args().begin(), r.args().end());
    at += r.consumed();
  }
  return out;
}

TEST(AofRewritePart, AListInPartsRebuildsItInOrder) {
  ListObject l;
  const ListLimits limits;
  for (int i = 0; i < 10'000; i++) l.Push(ListObject::End::kTail, std::to_string(i), limits);
  const Value v(std::move(l));
  EXPECT_EQ(KeyItems(v), 10'000u);
  std::vector<std::string> items;
  size_t from = 0, parts = 0, expires = 0;
  bool done = false;
  while (!done) {
    std::string out;
    from += AppendKeyCommandsPart(&out, "k", v, 123456, from, 4096, &done);
    parts++;
    for (const auto& c : Commands(out)) {
      if (c[0] == "PEXPIREAT") {
        EXPECT_TRUE(done);
        EXPECT_EQ(c[2], "123456");
        expires++;
        continue;
      }
      ASSERT_EQ(c[0], "RPUSH");
      ASSERT_LE(c.size(), 2 + kAofItemsPerCommand);
      items.insert(items.end(), c.begin() + 2, c.end());
    }
  }
  EXPECT_EQ(parts, 3u);
  EXPECT_EQ(expires, 1u);
  ASSERT_EQ(items.size(), 10'000u);
  for (int i = 0; i < 10'000; i++) ASSERT_EQ(items[static_cast<size_t>(i)], std::to_string(i));
}

TEST(AofRewritePart, AStringInPartsIsSetThenAppended) {
  std::string s(1'000'000, 'a');
  for (size_t i = 0; i < s.size(); i++) s[i] = static_cast<char>('a' + i % 26);
  const Value v(CompactString::FromValue(s));
  std::string rebuilt;
  size_t from = 0;
  bool done = false;
  int parts = 0;
  while (!done) {
    std::string out;
    from += AppendKeyCommandsPart(&out, "k", v, -1, from, 300'000, &done);
    const auto cmds = Commands(out);
    ASSERT_EQ(cmds.size(), 1u);  // (no deadline)
    EXPECT_EQ(cmds[0][0], parts++ == 0 ? "SET" : "APPEND");
    rebuilt += cmds[0][2];
  }
  EXPECT_EQ(parts, 4);
  EXPECT_EQ(rebuilt, s);
  // An empty string is one SET.
  std::string out;
  EXPECT_EQ(AppendKeyCommandsPart(&out, "k", Value(CompactString::FromValue("")), -1, 0, 10, &done), 0u);
  EXPECT_TRUE(done);
  EXPECT_EQ(Commands(out), (std::vector<std::vector<std::string>>{{"SET", "k", ""}}));
}

// A table's parts by its SCAN cursor (each part costs its own items): every
// field once, with its deadline, about `max` items a part.
TEST(AofRewritePart, AHashInPartsByCursorHasEveryFieldOnceWithItsDeadline) {
  HashObject h;
  const HashLimits limits;
  for (int i = 0; i < 20'000; i++) h.Set("f" + std::to_string(i), "v" + std::to_string(i), limits);
  for (int i = 0; i < 20'000; i += 1000) ASSERT_TRUE(h.SetDeadline("f" + std::to_string(i), 9'000'000'000'000 + i));
  ASSERT_EQ(h.encoding(), HashObject::Encoding::kHashtable);
  const Value v(std::move(h));
  std::map<std::string, std::string> fields;
  std::map<std::string, std::string> deadlines;
  size_t from = 0, parts = 0;
  uint64_t cursor = 0;
  bool done = false;
  while (!done) {
    std::string out;
    const size_t n = AppendKeyCommandsPart(&out, "k", v, -1, from, 4096, &done, &cursor);
    EXPECT_GE(n, done ? 0u : 4096u);
    EXPECT_LT(n, 4096u + 1000u);  // (a page more at most)
    from += n;
    parts++;
    for (const auto& c : Commands(out)) {
      if (c[0] == "HPEXPIREAT") {
        ASSERT_EQ(c.size(), 6u);
        EXPECT_TRUE(deadlines.emplace(c[5], c[2]).second);
        continue;
      }
      ASSERT_EQ(c[0], "HMSET");
      for (size_t i = 2; i + 1 < c.size(); i += 2) EXPECT_TRUE(fields.emplace(c[i], c[i + 1]).second) << c[i];
    }
  }
  EXPECT_EQ(from, 20'000u);
  EXPECT_GE(parts, 4u);
  EXPECT_LE(parts, 5u);
  ASSERT_EQ(fields.size(), 20'000u);
  for (int i = 0; i < 20'000; i++) ASSERT_EQ(fields["f" + std::to_string(i)], "v" + std::to_string(i));
  ASSERT_EQ(deadlines.size(), 20u);
  EXPECT_EQ(deadlines["f1000"], "9000000001000");
}

TEST(AofRewritePart, ASetInPartsByCursorAndASortedSetBySeekingHaveEveryMemberOnce) {
  const SetLimits slimits;
  SetObject set = SetObject::Sized(0, slimits);
  for (int i = 0; i < 10'000; i++) set.Add("m" + std::to_string(i), slimits);
  ASSERT_EQ(set.encoding(), SetObject::Encoding::kHashtable);
  const Value sv(std::move(set));
  std::set<std::string> members;
  size_t from = 0;
  uint64_t cursor = 0;
  bool done = false;
  while (!done) {
    std::string out;
    from += AppendKeyCommandsPart(&out, "s", sv, 77, from, 3000, &done, &cursor);
    for (const auto& c : Commands(out)) {
      if (c[0] == "PEXPIREAT") {
        EXPECT_TRUE(done);
        continue;
      }
      ASSERT_EQ(c[0], "SADD");
      for (size_t i = 2; i < c.size(); i++) EXPECT_TRUE(members.insert(c[i]).second) << c[i];
    }
  }
  EXPECT_EQ(members.size(), 10'000u);

  const ZSetLimits zlimits;
  ZSetObject z = ZSetObject::Create(0, 0, zlimits);
  double score;
  for (int i = 0; i < 10'000; i++) z.Add(i, "z" + std::to_string(i), 0, zlimits, &score);
  const Value zv(std::move(z));
  std::vector<std::string> order;
  from = 0;
  done = false;
  while (!done) {
    std::string out;
    from += AppendKeyCommandsPart(&out, "z", zv, -1, from, 3000, &done, &cursor);
    for (const auto& c : Commands(out)) {
      ASSERT_EQ(c[0], "ZADD");
      for (size_t i = 2; i + 1 < c.size(); i += 2) {
        EXPECT_EQ(c[i], std::to_string(order.size()));
        order.push_back(c[i + 1]);
      }
    }
  }
  ASSERT_EQ(order.size(), 10'000u);
  for (int i = 0; i < 10'000; i++) ASSERT_EQ(order[static_cast<size_t>(i)], "z" + std::to_string(i));
}

}  // namespace
}  // namespace peregrine
