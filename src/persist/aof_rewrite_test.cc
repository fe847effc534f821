// A key as commands a part at a time (AppendKeyCommandsPart, what an atomic
// slot migration sends of a large key): the parts, read back, rebuild the
// key the whole form does, with the deadline once, in the last part.
#include "persist/aof_rewrite.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/list_object.h"
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

}  // namespace
}  // namespace peregrine
