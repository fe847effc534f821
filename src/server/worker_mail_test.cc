// Unit tests for ExecBatch's relay cursor (worker_mail.h): each worker runs
// the commands that come next for its shard, in order, and hands the rest on
// with the cursor where it stopped.
#include "server/worker_mail.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace peregrine {
namespace {

// A batch of commands (their arguments given as words), each for a worker.
void Add(ExecBatch& b, uint32_t target, std::vector<std::string> words) {
  static const CommandSpec spec{};
  for (const std::string& w : words) {
    b.bytes += w;
    b.arg_sizes.push_back(static_cast<uint32_t>(w.size()));
  }
  b.commands.push_back({&spec, static_cast<uint32_t>(words.size()), target});
}

// What worker `here` runs from where the batch stands: "index:arg arg|...".
std::string RunAt(ExecBatch& b, uint32_t here, size_t stop_after = 1000) {
  std::vector<std::string_view> scratch;
  std::string ran;
  size_t count = 0;
  b.RunFrom(here, &scratch, [&](size_t i, const ExecBatch::Command&, std::span<const std::string_view> args) {
    ran += std::to_string(i) + ":";
    for (std::string_view a : args) ran += std::string(a) + " ";
    ran += "|";
    return ++count < stop_after;
  });
  return ran;
}

TEST(ExecBatchRelay, EachStopRunsItsRunInOrder) {
  ExecBatch b;
  Add(b, 1, {"GET", "a"});
  Add(b, 1, {"GET", "bb"});
  Add(b, 0, {"SET", "c", "1"});
  Add(b, 1, {"GET", "dddd"});
  Add(b, 2, {"PING"});
  EXPECT_EQ(RunAt(b, 0), "") << "the first command is not worker 0's";
  EXPECT_EQ(b.next, 0u);
  EXPECT_EQ(RunAt(b, 1), "0:GET a |1:GET bb |");
  EXPECT_EQ(b.next, 2u);
  EXPECT_FALSE(b.finished());
  EXPECT_EQ(RunAt(b, 1), "") << "the next command is worker 0's";
  EXPECT_EQ(RunAt(b, 0), "2:SET c 1 |");
  EXPECT_EQ(RunAt(b, 1), "3:GET dddd |");
  EXPECT_EQ(RunAt(b, 2), "4:PING |");
  EXPECT_TRUE(b.finished());
  EXPECT_EQ(RunAt(b, 2), "");
}

TEST(ExecBatchRelay, StoppingAfterACommandKeepsTheCursorPastIt) {
  ExecBatch b;
  Add(b, 3, {"A", "1"});
  Add(b, 3, {"B", "22"});
  Add(b, 3, {"C", "333"});
  EXPECT_EQ(RunAt(b, 3, /*stop_after=*/1), "0:A 1 |");
  EXPECT_EQ(b.next, 1u);
  EXPECT_EQ(RunAt(b, 3), "1:B 22 |2:C 333 |");
  EXPECT_TRUE(b.finished());
}

TEST(ExecBatchRelay, ClearResetsTheRelayAndTheGroup) {
  ExecBatch b;
  Add(b, 1, {"GET", "a"});
  RunAt(b, 1);
  b.reads_only = false;
  b.reply_ends.push_back(4);
  b.version = 7;
  b.Clear();
  EXPECT_EQ(b.next, 0u);
  EXPECT_EQ(b.next_arg, 0u);
  EXPECT_EQ(b.next_offset, 0u);
  EXPECT_TRUE(b.commands.empty());
  EXPECT_TRUE(b.reads_only);
  EXPECT_TRUE(b.reply_ends.empty());
  EXPECT_EQ(b.version, 0u);
  EXPECT_EQ(b.relay, nullptr);
  EXPECT_TRUE(b.parts.empty());
}

}  // namespace
}  // namespace peregrine
