// SlowLog: the arguments as Redis 7.2 logs them (trimmed, redacted), the
// length kept, and the entries of another worker's client completed later.
#include "server/slowlog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/command.h"

namespace peregrine {
namespace {

// (The names are literals: a spec's name is a view, as the table's are.)
CommandSpec Spec(const char* name, const char* fullname = nullptr) {
  CommandSpec s;
  s.name = name;
  s.fullname = fullname != nullptr ? fullname : name;
  return s;
}

std::vector<std::string> Logged(const CommandSpec& spec, std::vector<std::string_view> args) {
  return SlowLog::LoggedArgs(spec, args);
}

TEST(SlowLog, ArgumentsAreTrimmedAsRedisTrimsThem) {
  const CommandSpec sadd = Spec("sadd");
  std::vector<std::string> words;
  for (int i = 0; i < 40; i++) words.push_back(std::to_string(i));
  std::vector<std::string_view> args(words.begin(), words.begin() + 32);
  EXPECT_EQ(Logged(sadd, args).size(), 32u);  // (32: all of them)
  EXPECT_EQ(Logged(sadd, args).back(), "31");
  args.push_back(words[32]);
  const std::vector<std::string> got = Logged(sadd, args);
  ASSERT_EQ(got.size(), 32u);
  EXPECT_EQ(got[30], "30");
  EXPECT_EQ(got[31], "... (2 more arguments)");
  const std::string s128(128, 'a'), s129(129, 'b');
  EXPECT_EQ(Logged(sadd, {"sadd", "k", s128, s129}),
            (std::vector<std::string>{"sadd", "k", s128, std::string(128, 'b') + "... (1 more bytes)"}));
}

TEST(SlowLog, SecretsAreRedactedAsRedis72RedactsThem) {
  const std::vector<std::string> r1 = {"auth", "(redacted)"};
  EXPECT_EQ(Logged(Spec("auth"), {"auth", "pw"}), r1);
  EXPECT_EQ(Logged(Spec("auth"), {"auth", "u", "pw"}), (std::vector<std::string>{"auth", "(redacted)", "(redacted)"}));
  // (Four arguments: a syntax error before Redis redacts anything.)
  EXPECT_EQ(Logged(Spec("auth"), {"auth", "a", "b", "c"}), (std::vector<std::string>{"auth", "a", "b", "c"}));
  EXPECT_EQ(Logged(Spec("hello"), {"hello", "3", "SETNAME", "auth", "AUTH", "u", "p"}),
            (std::vector<std::string>{"hello", "3", "SETNAME", "auth", "AUTH", "(redacted)", "(redacted)"}));
  EXPECT_EQ(Logged(Spec("migrate"), {"migrate", "h", "1", "", "0", "5", "AUTH2", "u", "p", "KEYS", "auth", "x"}),
            (std::vector<std::string>{"migrate", "h", "1", "", "0", "5", "AUTH2", "(redacted)", "(redacted)", "KEYS",
                                      "auth", "x"}));
  EXPECT_EQ(Logged(Spec("set", "config|set"), {"config", "set", "maxmemory", "1", "requirepass", "x"}),
            (std::vector<std::string>{"config", "set", "maxmemory", "1", "requirepass", "(redacted)"}));
  EXPECT_EQ(Logged(Spec("setuser", "acl|setuser"), {"acl", "setuser", "u", ">pw"}),
            (std::vector<std::string>{"acl", "setuser", "(redacted)", "(redacted)"}));
  EXPECT_EQ(Logged(Spec("getuser", "acl|getuser"), {"acl", "getuser", "u"}),
            (std::vector<std::string>{"acl", "getuser", "(redacted)"}));
  EXPECT_EQ(Logged(Spec("get"), {"get", "auth"}), (std::vector<std::string>{"get", "auth"}));
}

TEST(SlowLog, KeepsTheNewestAndCompletesAnotherWorkersEntries) {
  SlowLog log;
  const CommandSpec ping = Spec("ping");
  EXPECT_FALSE(log.Due(1'000'000'000));  // (off until configured)
  log.Configure(0, 3, 1.0);
  EXPECT_TRUE(log.Due(0));
  for (int i = 0; i < 5; i++) log.Push(ping, std::vector<std::string_view>{"ping"}, i, "1.2.3.4:5", "n", 7, true);
  ASSERT_EQ(log.Len(), 3u);
  const auto got = log.Get(10);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].id, 4u);
  EXPECT_EQ(got[2].id, 2u);
  EXPECT_EQ(got[0].duration_us, 4);
  // Run on another worker: no address or name until its own worker tells.
  log.Push(ping, std::vector<std::string_view>{"ping"}, 9, "", "", 42, false);
  EXPECT_TRUE(log.unresolved());
  EXPECT_EQ(log.Get(1)[0].peer, "");
  log.Resolve(41, "x", "y");
  EXPECT_TRUE(log.unresolved());
  log.Resolve(42, "127.0.0.1:1", "me");
  EXPECT_FALSE(log.unresolved());
  EXPECT_EQ(log.Get(1)[0].peer, "127.0.0.1:1");
  EXPECT_EQ(log.Get(1)[0].name, "me");
  // A shorter length trims at once; 0 or a negative threshold turns it off.
  log.Configure(0, 1, 1.0);
  EXPECT_EQ(log.Len(), 1u);
  log.Configure(-1, 1, 1.0);
  EXPECT_FALSE(log.Due(UINT64_MAX - 1));
  log.Configure(10, 0, 1.0);
  EXPECT_FALSE(log.Due(UINT64_MAX - 1));
  log.Configure(10, 5, 2.0);
  EXPECT_FALSE(log.Due(19));
  EXPECT_TRUE(log.Due(20));
  log.Reset();
  EXPECT_EQ(log.Len(), 0u);
}

}  // namespace
}  // namespace peregrine
