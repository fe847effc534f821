// Unit tests of the ACL model: rules, their description, the permission
// check (commands, first arguments, keys by access, channels, selectors),
// the keys' access table, protected mode's decision.
#include "server/acl.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commands/all_commands.h"
#include "server/command.h"

namespace peregrine {
namespace {

// Every command family, as the server registers them.
const CommandTable& Table() {
  static const CommandTable t = AllCommands();
  return t;
}

std::string Set(Acl& acl, std::string_view user, std::vector<std::string_view> rules) {
  return acl.SetUser(user, rules);
}

// The check for a command line ("GET k"): the result and the argument at fault.
std::pair<AclResult, size_t> Check(const Acl& acl, std::string_view user, std::vector<std::string_view> args) {
  const CommandSpec* cmd = Table().Find(args[0]);
  EXPECT_NE(cmd, nullptr) << args[0];
  if (!cmd->subcommands.empty()) cmd = CommandTable::FindSubcommand(*cmd, args[1]);
  size_t idx = 0;
  const AclResult r = acl.Check(*acl.Find(user), *cmd, args, &idx);
  return {r, idx};
}

TEST(Acl, DefaultUser) {
  Acl acl(Table());
  EXPECT_EQ(acl.Describe(*acl.default_user()), "on nopass sanitize-payload ~* &* +@all");
  EXPECT_TRUE(acl.default_user()->unrestricted);
  EXPECT_TRUE(acl.CheckPassword(*acl.default_user(), "anything"));
  acl.SetRequirePass("pw");
  EXPECT_FALSE(acl.CheckPassword(*acl.default_user(), "anything"));
  EXPECT_TRUE(acl.CheckPassword(*acl.default_user(), "pw"));
  EXPECT_EQ(acl.Describe(*acl.default_user()),
            "on sanitize-payload #" + AclHashPassword("pw") + " ~* &* +@all");
  acl.SetRequirePass("");
  EXPECT_TRUE(acl.default_user()->nopass);
}

TEST(Acl, HashIsSha256) {
  EXPECT_EQ(AclHashPassword("password"), "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8");
  EXPECT_EQ(AclHashPassword(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Acl, RulesAndDescription) {
  Acl acl(Table());
  EXPECT_EQ(Set(acl, "u", {}), "");
  EXPECT_EQ(acl.Describe(*acl.Find("u")), "off sanitize-payload resetchannels -@all");
  EXPECT_EQ(Set(acl, "u", {"on", ">a", ">b", "<a", "~k*", "%R~r*", "%W~r*", "&c", "+@string", "-append",
                           "+client|id", "+select|0"}),
            "");
  EXPECT_EQ(acl.Describe(*acl.Find("u")), "on sanitize-payload #" + AclHashPassword("b") +
                                              " ~k* ~r* resetchannels &c -@all +@string -append +client|id "
                                              "+select|0");
  EXPECT_FALSE(acl.Find("u")->unrestricted);
  // Selectors, and a spread one merged.
  EXPECT_EQ(Set(acl, "u", {"(+get", "~s*)", "(+set ~t*)"}), "");
  EXPECT_EQ(acl.Find("u")->selectors.size(), 3u);
  EXPECT_TRUE(acl.Describe(*acl.Find("u")).ends_with(
      " (~s* resetchannels -@all +get) (~t* resetchannels -@all +set)"));
  EXPECT_EQ(Set(acl, "u", {"clearselectors"}), "");
  EXPECT_EQ(acl.Find("u")->selectors.size(), 1u);
  EXPECT_EQ(Set(acl, "u", {"reset"}), "");
  EXPECT_EQ(acl.Describe(*acl.Find("u")), "off sanitize-payload resetchannels -@all");
  EXPECT_EQ(Set(acl, "u", {"allcommands", "allkeys", "allchannels"}), "");
  EXPECT_TRUE(acl.Find("u")->unrestricted);
  EXPECT_EQ(Set(acl, "u", {"-get"}), "");
  EXPECT_FALSE(acl.Find("u")->unrestricted);
  EXPECT_EQ(acl.DescribeCommands(acl.Find("u")->selectors[0]), "+@all -get");
}

TEST(Acl, RuleErrorsChangeNothing) {
  Acl acl(Table());
  EXPECT_EQ(Set(acl, "u", {"on", "+get"}), "");
  const std::string before = acl.Describe(*acl.Find("u"));
  EXPECT_EQ(Set(acl, "u", {"+set", "bogus"}), "Error in ACL SETUSER modifier 'bogus': Syntax error");
  EXPECT_EQ(acl.Describe(*acl.Find("u")), before);
  EXPECT_EQ(Set(acl, "v", {"+nosuch"}),
            "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  EXPECT_EQ(acl.Find("v"), nullptr);
  EXPECT_EQ(Set(acl, "u", {"(~a"}), "Unmatched parenthesis in acl selector starting at '(~a'.");
  EXPECT_EQ(Set(acl, "u", {"%~a"}), "Error in ACL SETUSER modifier '%~a': Syntax error");
  EXPECT_EQ(Set(acl, "u", {"()"}), "");  // an empty selector: allows nothing
  EXPECT_EQ(Set(acl, "u", {"(\"\")"}), "Error in ACL SETUSER modifier '(\"\")': Syntax error");
  EXPECT_EQ(Set(acl, "u", {"+"}), "Error in ACL SETUSER modifier '+': Unknown command or category name in ACL");
  EXPECT_EQ(Set(acl, "u", {"-@"}), "Error in ACL SETUSER modifier '-@': Unknown command or category name in ACL");
}

TEST(Acl, CommandsFirstArgsAndSubcommands) {
  Acl acl(Table());
  ASSERT_EQ(Set(acl, "u", {"on", "allkeys", "+select|0", "+client|id", "+@hash", "-hdel"}), "");
  EXPECT_EQ(Check(acl, "u", {"select", "0"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"SELECT", "1"}).first, AclResult::kDeniedCmd);
  EXPECT_EQ(Check(acl, "u", {"client", "id"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"client", "list"}).first, AclResult::kDeniedCmd);
  EXPECT_EQ(Check(acl, "u", {"hset", "h", "f", "v"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"hdel", "h", "f"}).first, AclResult::kDeniedCmd);
  EXPECT_EQ(Check(acl, "u", {"get", "k"}).first, AclResult::kDeniedCmd);
  // AUTH and HELLO need no permission.
  EXPECT_EQ(Check(acl, "u", {"auth", "p"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"hello"}).first, AclResult::kOk);
  // A whole container with its subcommands, then one taken away.
  ASSERT_EQ(Set(acl, "u", {"+config", "-config|set"}), "");
  EXPECT_EQ(Check(acl, "u", {"config", "get", "x"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"config", "set", "x", "y"}).first, AclResult::kDeniedCmd);
}

TEST(Acl, KeysByAccess) {
  Acl acl(Table());
  ASSERT_EQ(Set(acl, "u", {"on", "+@all", "%R~r*", "%W~w*", "~a*"}), "");
  auto r = [&](std::vector<std::string_view> args) { return Check(acl, "u", args); };
  EXPECT_EQ(r({"get", "r1"}).first, AclResult::kOk);
  EXPECT_EQ(r({"get", "w1"}), std::make_pair(AclResult::kDeniedKey, size_t{1}));
  EXPECT_EQ(r({"set", "w1", "v"}).first, AclResult::kOk);
  EXPECT_EQ(r({"set", "w1", "v", "GET"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"lpush", "w1", "v"}).first, AclResult::kOk);
  EXPECT_EQ(r({"incr", "w1"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"incr", "a1"}).first, AclResult::kOk);
  EXPECT_EQ(r({"exists", "r1"}).first, AclResult::kOk);   // needs no access, only a match
  EXPECT_EQ(r({"exists", "zz"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"mget", "r1", "a1", "w1"}), std::make_pair(AclResult::kDeniedKey, size_t{3}));
  EXPECT_EQ(r({"sinterstore", "w1", "r1", "r2"}).first, AclResult::kOk);
  EXPECT_EQ(r({"sinterstore", "r1", "r1"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"zunionstore", "w1", "2", "r1", "r2"}).first, AclResult::kOk);
  EXPECT_EQ(r({"zunionstore", "w1", "2", "r1", "w2"}), std::make_pair(AclResult::kDeniedKey, size_t{4}));
  EXPECT_EQ(r({"copy", "r1", "w1"}).first, AclResult::kOk);
  EXPECT_EQ(r({"rename", "r1", "w1"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"bitfield", "r1", "get", "u8", "0"}).first, AclResult::kOk);
  EXPECT_EQ(r({"bitfield", "r1", "incrby", "u8", "0", "1"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"sort", "r1", "store", "w1"}).first, AclResult::kOk);
  EXPECT_EQ(r({"sort", "r1", "store", "r2"}).first, AclResult::kDeniedKey);
  EXPECT_EQ(r({"eval", "return 1", "1", "a1"}).first, AclResult::kOk);
  EXPECT_EQ(r({"eval", "return 1", "1", "r1"}).first, AclResult::kDeniedKey);
  // Malformed key specs check no key (the command then fails on its own).
  EXPECT_EQ(r({"zunionstore", "w1", "x", "zz"}).first, AclResult::kOk);
}

TEST(Acl, LiteralPrefixAndGlobPatterns) {
  Acl acl(Table());
  ASSERT_EQ(Set(acl, "u", {"on", "+@all", "~lit", "~pre*", "~g?b", "~x\\*", "~[ab]*"}), "");
  for (std::string_view k : {"lit", "pre", "prefix", "gab", "x*", "a1", "b"})
    EXPECT_EQ(Check(acl, "u", {"get", k}).first, AclResult::kOk) << k;
  for (std::string_view k : {"lit2", "li", "pr", "gb", "x1", "c1", ""})
    EXPECT_EQ(Check(acl, "u", {"get", k}).first, AclResult::kDeniedKey) << k;
}

TEST(Acl, Channels) {
  Acl acl(Table());
  ASSERT_EQ(Set(acl, "u", {"on", "+@all", "~*", "&news.*"}), "");
  EXPECT_EQ(Check(acl, "u", {"publish", "news.1", "m"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"publish", "x", "m"}), std::make_pair(AclResult::kDeniedChannel, size_t{1}));
  EXPECT_EQ(Check(acl, "u", {"subscribe", "news.a", "y"}), std::make_pair(AclResult::kDeniedChannel, size_t{2}));
  EXPECT_EQ(Check(acl, "u", {"psubscribe", "news.*"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"psubscribe", "news.a*"}).first, AclResult::kDeniedChannel);
  EXPECT_EQ(Check(acl, "u", {"unsubscribe", "x"}).first, AclResult::kOk);
  EXPECT_TRUE(acl.ChannelAllowed(*acl.Find("u"), "news.b", false));
  EXPECT_FALSE(acl.ChannelAllowed(*acl.Find("u"), "news.b*", true));
}

TEST(Acl, SelectorsAndTheMostRelevantError) {
  Acl acl(Table());
  ASSERT_EQ(Set(acl, "u", {"on", "+get", "~a*", "(+set ~b*)", "(+get ~c* &x)"}), "");
  EXPECT_EQ(Check(acl, "u", {"get", "a1"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"get", "c1"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"set", "b1", "v"}).first, AclResult::kOk);
  EXPECT_EQ(Check(acl, "u", {"set", "a1", "v"}).first, AclResult::kDeniedKey);  // a key error wins
  EXPECT_EQ(Check(acl, "u", {"del", "a1"}).first, AclResult::kDeniedCmd);
  EXPECT_TRUE(acl.CheckWithAllKeys(*acl.default_user(), *Table().Find("sort"), std::vector<std::string_view>{"sort", "k"},
                                   kKeyRead));
  EXPECT_FALSE(acl.CheckWithAllKeys(*acl.Find("u"), *Table().Find("get"), std::vector<std::string_view>{"get", "a"},
                                    kKeyRead));
  ASSERT_EQ(Set(acl, "u", {"%R~*"}), "");
  EXPECT_TRUE(acl.CheckWithAllKeys(*acl.Find("u"), *Table().Find("get"), std::vector<std::string_view>{"get", "a"},
                                   kKeyRead));
}

TEST(Acl, EveryKeyedCommandHasItsAccess) {
  for (const auto& cmd : Table().all()) {
    EXPECT_TRUE(AclKeyAccessKnown(*cmd)) << cmd->fullname;
    for (const CommandSpec& sub : cmd->subcommands) EXPECT_TRUE(AclKeyAccessKnown(sub)) << sub.fullname;
  }
}

TEST(Acl, ReplaceAllKeepsTheDefaultObject) {
  Acl acl(Table());
  ASSERT_EQ(Set(acl, "a", {"on"}), "");
  AclUser* d = acl.default_user();
  std::map<std::string, std::shared_ptr<AclUser>, std::less<>> users;
  auto u = std::make_shared<AclUser>(acl.NewUser("default"));
  ASSERT_EQ(acl.ApplyRules(*u, std::vector<std::string_view>{"on", ">x", "+@all", "~*"}), "");
  users.emplace("default", u);
  u = std::make_shared<AclUser>(acl.NewUser("b"));
  ASSERT_EQ(acl.ApplyRules(*u, std::vector<std::string_view>{"on"}), "");
  users.emplace("b", u);
  const auto gone = acl.ReplaceAll(std::move(users));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0]->name, "a");
  EXPECT_EQ(acl.default_user(), d);
  EXPECT_FALSE(d->nopass);
  EXPECT_EQ(acl.Find("a"), nullptr);
  EXPECT_NE(acl.Find("b"), nullptr);
}

TEST(Acl, Log) {
  Acl acl(Table());
  for (int i = 0; i < 3; i++) acl.AddLogEntry(AclResult::kDeniedCmd, Acl::LogContext::kToplevel, "get", "u", "c", 1000, 5);
  acl.AddLogEntry(AclResult::kDeniedCmd, Acl::LogContext::kToplevel, "get", "u", "c", 70000, 5);  // over a minute later
  acl.AddLogEntry(AclResult::kDeniedKey, Acl::LogContext::kMulti, "k", "u", "c", 70001, 5);
  auto e = acl.LogEntries(10);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].object, "k");
  EXPECT_EQ(e[1].count, 1u);
  EXPECT_EQ(e[2].count, 3u);
  EXPECT_EQ(e[0].entry_id, 2);
  EXPECT_EQ(acl.denied(AclResult::kDeniedCmd), 4u);
  for (int i = 0; i < 10; i++)
    acl.AddLogEntry(AclResult::kDeniedKey, Acl::LogContext::kToplevel, std::to_string(i), "u", "c", 70001, 5);
  EXPECT_EQ(acl.LogEntries(100).size(), 5u);  // acllog-max-len
  acl.ResetLog();
  EXPECT_TRUE(acl.LogEntries(10).empty());
}

TEST(Acl, ProtectedMode) {
  EXPECT_TRUE(ProtectedModeRefuses(true, true, false, "10.0.0.2:5000"));
  EXPECT_TRUE(ProtectedModeRefuses(true, true, false, "::ffff:10.0.0.2:5000"));
  EXPECT_FALSE(ProtectedModeRefuses(true, true, false, "127.0.0.1:5000"));
  EXPECT_FALSE(ProtectedModeRefuses(true, true, false, "127.3.4.5:5000"));
  EXPECT_FALSE(ProtectedModeRefuses(true, true, false, "::1:5000"));
  EXPECT_FALSE(ProtectedModeRefuses(true, true, true, ""));                 // a Unix socket
  EXPECT_FALSE(ProtectedModeRefuses(false, true, false, "10.0.0.2:5000"));  // protected-mode no
  EXPECT_FALSE(ProtectedModeRefuses(true, false, false, "10.0.0.2:5000"));  // a password
}

}  // namespace
}  // namespace peregrine
