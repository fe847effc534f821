// Unit tests of the key specs (key_specs.h): the table covers every command
// with keys and agrees with the command table and with ACL's access table;
// keys and flags found as Redis 7.2's COMMAND GETKEYSANDFLAGS finds them.
#include "server/key_specs.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "commands/all_commands.h"
#include "server/acl.h"
#include "server/command.h"

namespace peregrine {
namespace {

const CommandTable& Table() {
  static const CommandTable table = AllCommands();
  return table;
}

const CommandSpec& Cmd(std::string_view fullname) {
  const size_t bar = fullname.find('|');
  const CommandSpec* cmd = Table().Find(fullname.substr(0, bar));
  if (cmd != nullptr && bar != std::string_view::npos)
    cmd = CommandTable::FindSubcommand(*cmd, fullname.substr(bar + 1));
  EXPECT_NE(cmd, nullptr) << fullname;
  return *cmd;
}

template <typename F>
void ForEachCommand(F f) {
  for (const auto& cmd : Table().all()) {
    f(*cmd);
    for (const CommandSpec& sub : cmd->subcommands) f(sub);
  }
}

// "key flag flag; key flag": the keys GETKEYSANDFLAGS gives.
std::string Keys(std::string_view fullname, std::vector<std::string_view> args) {
  std::vector<KeyReference> keys;
  FindKeysWithFlags(Cmd(fullname), args, &keys);
  std::string out;
  for (const KeyReference& k : keys) {
    if (!out.empty()) out += "; ";
    out += args[k.pos];
    for (std::string_view f : KeySpecFlagNames(k.flags)) out += " " + std::string(f);
  }
  return out;
}

TEST(KeySpecTable, EveryKeyedCommandHasSpecs) {
  int keyed = 0;
  ForEachCommand([&](const CommandSpec& cmd) {
    const bool has_keys = cmd.first_key > 0 || (cmd.flags & kCmdShardChannels);
    EXPECT_EQ(!KeySpecsOf(cmd.fullname).empty(), has_keys) << cmd.fullname;
    keyed += has_keys;
  });
  EXPECT_GT(keyed, 200);
}

TEST(KeySpecTable, EveryEntryIsACommandAndEachCommandOneRun) {
  std::set<std::string_view> seen;
  std::string_view prev;
  for (const KeySpec& spec : AllKeySpecs()) {
    if (spec.command != prev) {
      EXPECT_TRUE(seen.insert(spec.command).second) << spec.command << " is in two places";
      Cmd(spec.command);
    }
    prev = spec.command;
    EXPECT_NE(spec.flags, 0) << spec.command;
    EXPECT_GE(spec.find.keystep, 1) << spec.command;
  }
}

// Where the command table routes by a plain range, its first key is where
// the first spec begins.
TEST(KeySpecTable, FirstSpecBeginsAtTheFirstKey) {
  ForEachCommand([](const CommandSpec& cmd) {
    if (cmd.first_key <= 0 || cmd.numkeys_index > 0 || cmd.find_keys != nullptr) return;
    const std::span<const KeySpec> specs = KeySpecsOf(cmd.fullname);
    ASSERT_FALSE(specs.empty()) << cmd.fullname;
    EXPECT_EQ(specs[0].begin.type, KeyBegin::kIndex) << cmd.fullname;
    EXPECT_EQ(specs[0].begin.pos, cmd.first_key) << cmd.fullname;
  });
}

// ACL's reduced table (acl_keys.cc) says what Redis's key specs say: read
// for ACCESS, write for INSERT, DELETE or UPDATE, of the first key and of
// the others.
TEST(KeySpecTable, AgreesWithAclAccess) {
  auto access = [](uint16_t flags) {
    uint8_t a = kKeyNone;
    if (flags & kKeySpecAccess) a |= kKeyRead;
    if (flags & (kKeySpecInsert | kKeySpecDelete | kKeySpecUpdate)) a |= kKeyWrite;
    return a;
  };
  int checked = 0;
  ForEachCommand([&](const CommandSpec& cmd) {
    const AclKeySpec acl = AclKeySpecOf(cmd);
    if (!acl.known) return;
    std::vector<KeySpec> specs;
    for (const KeySpec& s : KeySpecsOf(cmd.fullname))
      if (!(s.flags & kKeySpecNotKey)) specs.push_back(s);
    ASSERT_FALSE(specs.empty()) << cmd.fullname;
    EXPECT_EQ(access(specs[0].flags), acl.first) << cmd.fullname;
    // (SORT's other keys: ACL's are its STORE key; its BY and GET patterns
    // are not keys GETKEYS finds.)
    if (cmd.fullname == "sort") return;
    for (size_t i = specs.size() > 1 ? 1 : 0; i < specs.size(); i++)
      EXPECT_EQ(access(specs[i].flags), acl.others) << cmd.fullname << " spec " << i;
    checked++;
  });
  EXPECT_GT(checked, 150);
}

TEST(KeySpecTable, RedisSpecs) {
  auto set = KeySpecsOf("set");
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].flags, kKeySpecRW | kKeySpecAccess | kKeySpecUpdate | kKeySpecVariableFlags);
  EXPECT_EQ(set[0].notes, "RW and ACCESS due to the optional `GET` argument");
  auto lmove = KeySpecsOf("lmove");
  ASSERT_EQ(lmove.size(), 2u);
  EXPECT_EQ(lmove[1].begin.pos, 2);
  EXPECT_EQ(lmove[1].flags, kKeySpecRW | kKeySpecInsert);
  auto xread = KeySpecsOf("xreadgroup");
  ASSERT_EQ(xread.size(), 1u);
  EXPECT_EQ(xread[0].begin.type, KeyBegin::kKeyword);
  EXPECT_EQ(xread[0].begin.keyword, "STREAMS");
  EXPECT_EQ(xread[0].begin.pos, 4);
  EXPECT_EQ(xread[0].find.lastkey, -1);
  EXPECT_EQ(xread[0].find.limit, 2);
  auto zstore = KeySpecsOf("zunionstore");
  ASSERT_EQ(zstore.size(), 2u);
  EXPECT_EQ(zstore[1].find.type, KeyFind::kKeynum);
  EXPECT_EQ(zstore[1].find.firstkey, 1);
  EXPECT_EQ(KeySpecsOf("sort").size(), 3u);
  EXPECT_EQ(KeySpecsOf("sort")[2].begin.type, KeyBegin::kUnknown);
  EXPECT_EQ(KeySpecsOf("mset")[0].find.keystep, 2);
  EXPECT_EQ(KeySpecsOf("spublish")[0].flags, kKeySpecNotKey);
  EXPECT_EQ(KeySpecsOf("object|freq")[0].begin.pos, 2);
  EXPECT_TRUE(KeySpecsOf("ping").empty());
  EXPECT_TRUE(KeySpecsOf("nosuch").empty());
}

TEST(KeySpecTable, FlagNamesAsRedisPrintsThem) {
  EXPECT_EQ(KeySpecFlagNames(kKeySpecUpdate | kKeySpecOW), (std::vector<std::string_view>{"OW", "update"}));
  EXPECT_EQ(KeySpecFlagNames(kKeySpecVariableFlags | kKeySpecIncomplete | kKeySpecNotKey | kKeySpecRM),
            (std::vector<std::string_view>{"RM", "not_key", "incomplete", "variable_flags"}));
}

TEST(KeySpecGetKeys, RedisIntrospectionCases) {
  EXPECT_EQ(Keys("set", {"set", "k1", "v1"}), "k1 OW update");
  EXPECT_EQ(Keys("mset", {"mset", "k1", "v1", "k2", "v2"}), "k1 OW update; k2 OW update");
  EXPECT_EQ(Keys("lmove", {"LMOVE", "k1", "k2", "left", "right"}), "k1 RW access delete; k2 RW insert");
  EXPECT_EQ(Keys("sort", {"sort", "k1", "store", "k2"}), "k1 RO access; k2 OW update");
}

TEST(KeySpecGetKeys, FlagsThatDependOnTheArguments) {
  EXPECT_EQ(Keys("set", {"set", "k", "v", "EX", "1", "GeT"}), "k RW access update");
  EXPECT_EQ(Keys("bitfield", {"bitfield", "k", "GET", "u8", "0"}), "k RO access");
  EXPECT_EQ(Keys("bitfield", {"bitfield", "k", "GET", "u8", "0", "INCRBY", "u8", "0", "1"}), "k RW access update");
  EXPECT_EQ(Keys("bitfield", {"bitfield", "k", "GET", "u8"}), "k RW access update");  // (what it cannot read)
  EXPECT_EQ(Keys("sort", {"sort", "k", "by", "store", "limit", "0", "1", "store", "a", "store", "b"}),
            "k RO access; b OW update");
  EXPECT_EQ(Keys("sort_ro", {"sort_ro", "k", "by", "p"}), "k RO access");
  EXPECT_EQ(Keys("migrate", {"migrate", "h", "1", "k", "0", "5"}), "k RW access delete");
  EXPECT_EQ(Keys("migrate", {"migrate", "h", "1", "", "0", "5", "AUTH", "keys", "COPY", "KEYS", "a", "b"}),
            "a RW access delete; b RW access delete");
  EXPECT_EQ(Keys("migrate", {"migrate", "h", "1", "k", "0", "5", "KEYS", "a"}), "");
}

TEST(KeySpecGetKeys, SpecsApplied) {
  EXPECT_EQ(Keys("zunionstore", {"zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"}),
            "d OW update; a RO access; b RO access");
  EXPECT_EQ(Keys("eval", {"eval", "s", "2", "a", "b", "c"}), "a RW access update; b RW access update");
  EXPECT_EQ(Keys("eval", {"eval", "s", "0"}), "");
  EXPECT_EQ(Keys("blmpop", {"blmpop", "0", "1", "l", "LEFT"}), "l RW access delete");
  EXPECT_EQ(Keys("georadius", {"georadius", "k", "0", "0", "1", "km", "STOREDIST", "d"}),
            "k RO access; d OW update");
  EXPECT_EQ(Keys("xread", {"xread", "COUNT", "1", "STREAMS", "a", "b", "0", "0"}), "a RO access; b RO access");
  EXPECT_EQ(Keys("xreadgroup", {"xreadgroup", "GROUP", "g", "c", "streams", "s", ">"}), "s RO access");
  EXPECT_EQ(Keys("migrate", {"migrate", "h", "1", "", "0", "5", "KEYS", "a", "b"}),
            "a RW access delete; b RW access delete");
  EXPECT_EQ(Keys("object|freq", {"object", "freq", "k"}), "k RO");
  EXPECT_EQ(Keys("spublish", {"spublish", "ch", "m"}), "");  // (not a key)
  EXPECT_EQ(Keys("ping", {"ping"}), "");
}

// Where the specs do not fit the arguments, Redis asks the command's own
// parser, which reads numbers as atoi does and gives no flags.
TEST(KeySpecGetKeys, ParserWhenTheSpecsFail) {
  EXPECT_EQ(Keys("eval", {"eval", "s", "1x", "k"}), "k");
  EXPECT_EQ(Keys("zunionstore", {"zunionstore", "d", " 1", "a"}), "a; d");
  EXPECT_EQ(Keys("zunionstore", {"zunionstore", "d", "5", "a"}), "");
  EXPECT_EQ(Keys("zunion", {"zunion", "0", "a"}), "");
  // (A keyword is never looked for in the last argument: no key could follow.)
  EXPECT_EQ(Keys("georadius", {"georadius", "k", "0", "0", "1", "km", "STORE"}), "k RO access");
  EXPECT_EQ(Keys("xread", {"xread", "STREAMS", "a", "b", "c"}), "a RO access");  // (the spec's limit rounds)
  EXPECT_EQ(Keys("xread", {"xread", "BLOCK", "0"}), "");
}

TEST(KeySpecGetKeys, HasKeyArguments) {
  EXPECT_TRUE(CommandHasKeyArguments(Cmd("get")));
  EXPECT_TRUE(CommandHasKeyArguments(Cmd("eval")));
  EXPECT_TRUE(CommandHasKeyArguments(Cmd("memory|usage")));
  EXPECT_FALSE(CommandHasKeyArguments(Cmd("ping")));
  EXPECT_FALSE(CommandHasKeyArguments(Cmd("spublish")));  // only a not_key spec
  EXPECT_FALSE(CommandHasKeyArguments(Cmd("memory|stats")));
}

}  // namespace
}  // namespace peregrine
