// MONITOR's line: Redis 7.2's format (time, database, origin, the arguments
// quoted as sdscatrepr quotes them), passwords redacted.
#include "server/monitor.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "server/command.h"

namespace peregrine {
namespace {

CommandSpec Spec(const char* name, const char* fullname) {
  CommandSpec s;
  s.name = name;
  s.fullname = fullname;
  return s;
}

TEST(MonitorLine, FormatAndQuoting) {
  const CommandSpec set = Spec("set", "set");
  const std::vector<std::string_view> args = {"SET", "k", std::string_view("a\"b\\\n\x01\xff", 7)};
  EXPECT_EQ(MonitorFeed::Line(1339518083107412, 3, "127.0.0.1:60866", set, args),
            "+1339518083.107412 [3 127.0.0.1:60866] \"SET\" \"k\" \"a\\\"b\\\\\\n\\x01\\xff\"\r\n");
  // (Microseconds keep their six digits.)
  EXPECT_EQ(MonitorFeed::Line(5000001, 0, "lua", set, std::vector<std::string_view>{"GET", ""}),
            "+5.000001 [0 lua] \"GET\" \"\"\r\n");
}

TEST(MonitorLine, PasswordsAreRedacted) {
  const CommandSpec auth = Spec("auth", "auth");
  EXPECT_EQ(MonitorFeed::Line(0, 0, "x", auth, std::vector<std::string_view>{"AUTH", "u", "p"}),
            "+0.000000 [0 x] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n");
  const CommandSpec config_set = Spec("set", "config|set");
  EXPECT_EQ(MonitorFeed::Line(0, 0, "x", config_set,
                              std::vector<std::string_view>{"CONFIG", "SET", "requirepass", "s3", "hz", "5"}),
            "+0.000000 [0 x] \"CONFIG\" \"SET\" \"requirepass\" \"(redacted)\" \"hz\" \"5\"\r\n");
}

}  // namespace
}  // namespace peregrine
