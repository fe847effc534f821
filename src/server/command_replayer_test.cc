// CommandReplayer::AbsoluteDeadline: a primary's relative deadlines as
// Redis 7 propagates them (absolute), and every other command untouched.
#include "server/command_replayer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace peregrine {
namespace {

std::vector<std::string> Rewrite(std::vector<std::string_view> args, int64_t now = 1000000) {
  std::string when;
  std::vector<std::string_view> out;
  if (!CommandReplayer::AbsoluteDeadline(args, now, &when, &out)) return {"(unchanged)"};
  return std::vector<std::string>(out.begin(), out.end());
}

using V = std::vector<std::string>;

TEST(AbsoluteDeadline, RelativeFormsBecomeAbsolute) {
  EXPECT_EQ(Rewrite({"SET", "k", "v", "EX", "10"}), (V{"SET", "k", "v", "PXAT", "1010000"}));
  EXPECT_EQ(Rewrite({"set", "k", "v", "NX", "px", "5", "GET"}), (V{"set", "k", "v", "NX", "PXAT", "1000005", "GET"}));
  EXPECT_EQ(Rewrite({"SETEX", "k", "2", "v"}), (V{"SET", "k", "v", "PXAT", "1002000"}));
  EXPECT_EQ(Rewrite({"PSETEX", "k", "2", "v"}), (V{"SET", "k", "v", "PXAT", "1000002"}));
  EXPECT_EQ(Rewrite({"EXPIRE", "k", "3", "NX"}), (V{"PEXPIREAT", "k", "1003000", "NX"}));
  EXPECT_EQ(Rewrite({"pexpire", "k", "-5"}), (V{"PEXPIREAT", "k", "999995"}));
  EXPECT_EQ(Rewrite({"GETEX", "k", "EX", "1"}), (V{"GETEX", "k", "PXAT", "1001000"}));
  EXPECT_EQ(Rewrite({"RESTORE", "k", "7", "payload", "REPLACE"}), (V{"RESTORE", "k", "1000007", "payload", "REPLACE", "ABSTTL"}));
}

TEST(AbsoluteDeadline, EverythingElseIsUntouched) {
  EXPECT_EQ(Rewrite({"SET", "k", "v"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"SET", "k", "v", "PXAT", "5"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"SET", "ex", "px"}), V{"(unchanged)"});  // (a key and a value, no option)
  EXPECT_EQ(Rewrite({"GETEX", "k", "PERSIST"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"PEXPIREAT", "k", "5"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"RESTORE", "k", "0", "payload"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"RESTORE", "k", "5", "payload", "ABSTTL"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"LPUSH", "k", "ex", "1"}), V{"(unchanged)"});
  // Not an integer, or too far: run as given (and refused as Redis does).
  EXPECT_EQ(Rewrite({"EXPIRE", "k", "soon"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"EXPIRE", "k", "9223372036854775807"}), V{"(unchanged)"});
  EXPECT_EQ(Rewrite({"SETEX", "k", "1"}), V{"(unchanged)"});
}

}  // namespace
}  // namespace peregrine
