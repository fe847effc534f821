// Unit tests for RequestParser (RESP multibulk and inline requests) and SplitArgs.
#include "protocol/parser.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <chrono>
#include <string>
#include <vector>

namespace peregrine {
namespace {

using Args = std::vector<std::string>;
using Result = RequestParser::Result;

Args ToArgs(std::span<const std::string_view> args) { return Args(args.begin(), args.end()); }

// What a connection sees: the commands parsed so far and any protocol error.
struct Outcome {
  std::vector<Args> commands;
  std::string error;  // empty if none
  size_t consumed = 0;

  bool operator==(const Outcome& o) const {
    return commands == o.commands && error == o.error && consumed == o.consumed;
  }
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << "{";
  for (const Args& a : o.commands) {
    os << "[";
    for (const std::string& s : a) os << "'" << s << "' ";
    os << "]";
  }
  return os << " error='" << o.error << "' consumed=" << o.consumed << "}";
}

// Feeds `chunks` to one parser the way a connection does: bytes are appended
// to a buffer (which may reallocate), and after each arrival the parser is run
// from the current command's start over everything received, advancing by
// consumed() after each whole command.
Outcome FeedChunks(RequestParser& parser, const std::vector<std::string>& chunks) {
  Outcome out;
  std::string buf;
  size_t start = 0;
  for (const std::string& chunk : chunks) {
    buf += chunk;
    while (true) {
      Result r = parser.Parse(buf.data() + start, buf.size() - start);
      if (r == Result::kNeedMore) break;
      if (r == Result::kError) {
        out.error = parser.error();
        out.consumed = start;
        return out;
      }
      EXPECT_GT(parser.consumed(), 0u);
      EXPECT_LE(parser.consumed(), buf.size() - start);
      out.commands.push_back(ToArgs(parser.args()));
      start += parser.consumed();
      if (start == buf.size()) break;
    }
  }
  out.consumed = start;
  return out;
}

Outcome FeedAll(const std::string& data) {
  RequestParser parser;
  return FeedChunks(parser, {data});
}

Outcome FeedByteByByte(const std::string& data) {
  RequestParser parser;
  std::vector<std::string> chunks;
  for (char c : data) chunks.emplace_back(1, c);
  return FeedChunks(parser, chunks);
}

// Parses exactly one complete command and returns its arguments.
Args ParseOne(const std::string& data, size_t* consumed = nullptr) {
  RequestParser parser;
  Result r = parser.Parse(data.data(), data.size());
  EXPECT_EQ(r, Result::kCommand) << parser.error();
  if (consumed != nullptr) *consumed = parser.consumed();
  return ToArgs(parser.args());
}

std::string ParseError(const std::string& data, RequestParser::Limits limits = {}) {
  RequestParser parser(limits);
  Result r = parser.Parse(data.data(), data.size());
  EXPECT_EQ(r, Result::kError);
  return parser.error();
}

TEST(RequestParser, Multibulk) {
  size_t consumed = 0;
  EXPECT_EQ(ParseOne("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", &consumed), (Args{"GET", "k"}));
  EXPECT_EQ(consumed, 20u);
  EXPECT_EQ(ParseOne("*1\r\n$4\r\nPING\r\n"), (Args{"PING"}));
  EXPECT_EQ(ParseOne("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$0\r\n\r\n"), (Args{"SET", "", ""}));
}

TEST(RequestParser, MultibulkConsumesOnlyItsCommand) {
  std::string two = "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nECHO\r\n";
  size_t consumed = 0;
  EXPECT_EQ(ParseOne(two, &consumed), (Args{"PING"}));
  EXPECT_EQ(consumed, 14u);
}

TEST(RequestParser, MultibulkArgumentsAreViewsIntoTheBuffer) {
  std::string data = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
  RequestParser parser;
  ASSERT_EQ(parser.Parse(data.data(), data.size()), Result::kCommand);
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[0].data(), data.data() + 8);
  EXPECT_EQ(parser.args()[1].data(), data.data() + 17);
}

TEST(RequestParser, BinaryBulkData) {
  const std::string payload("a\r\n\0b\r\n", 7);
  const std::string data = std::string("*3\r\n$3\r\nSET\r\n$1\r\n") + std::string(1, '\0') +
                           "\r\n$7\r\n" + payload + "\r\n";
  Args args = ParseOne(data);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], "SET");
  EXPECT_EQ(args[1], std::string(1, '\0'));
  EXPECT_EQ(args[2], payload);
  EXPECT_EQ(FeedByteByByte(data).commands,
            (std::vector<Args>{{"SET", std::string(1, '\0'), payload}}));
}

TEST(RequestParser, Inline) {
  size_t consumed = 0;
  EXPECT_EQ(ParseOne("PING\r\n", &consumed), (Args{"PING"}));
  EXPECT_EQ(consumed, 6u);
  EXPECT_EQ(ParseOne("PING\n", &consumed), (Args{"PING"}));
  EXPECT_EQ(consumed, 5u);
  EXPECT_EQ(ParseOne("  SET   k    v  \r\n"), (Args{"SET", "k", "v"}));
  EXPECT_EQ(ParseOne("set\tk\tv\r\n"), (Args{"set", "k", "v"}));
}

TEST(RequestParser, InlineQuoting) {
  EXPECT_EQ(ParseOne("SET \"a b\" 'c d'\r\n"), (Args{"SET", "a b", "c d"}));
  EXPECT_EQ(ParseOne("ECHO \"\\x41\\x42\"\r\n"), (Args{"ECHO", "AB"}));
  EXPECT_EQ(ParseOne("ECHO \"line1\\nline2\"\r\n"), (Args{"ECHO", "line1\nline2"}));
  EXPECT_EQ(ParseOne("ECHO \"\"\r\n"), (Args{"ECHO", ""}));
  EXPECT_EQ(ParseOne("ECHO 'it\\'s'\r\n"), (Args{"ECHO", "it's"}));
  EXPECT_EQ(ParseOne("ECHO \"say \\\"hi\\\"\"\r\n"), (Args{"ECHO", "say \"hi\""}));
}

TEST(RequestParser, EmptyCommands) {
  size_t consumed = 0;
  EXPECT_EQ(ParseOne("\r\n", &consumed), Args{});
  EXPECT_EQ(consumed, 2u);
  EXPECT_EQ(ParseOne("\n", &consumed), Args{});
  EXPECT_EQ(consumed, 1u);
  EXPECT_EQ(ParseOne("   \r\n", &consumed), Args{});
  EXPECT_EQ(consumed, 5u);
  EXPECT_EQ(ParseOne("*0\r\n", &consumed), Args{});
  EXPECT_EQ(consumed, 4u);
  // Redis treats a negative count like zero: an empty command.
  EXPECT_EQ(ParseOne("*-1\r\n", &consumed), Args{});
  EXPECT_EQ(consumed, 5u);
}

TEST(RequestParser, IncompleteInputNeedsMore) {
  for (std::string partial :
       {"", "*", "*2", "*2\r", "*2\r\n", "*2\r\n$3", "*2\r\n$3\r\n", "*2\r\n$3\r\nGE",
        "*2\r\n$3\r\nGET", "*2\r\n$3\r\nGET\r", "*2\r\n$3\r\nGET\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk",
        "*2\r\n$3\r\nGET\r\n$1\r\nk\r", "PING", "PING\r", "SET \"a b"}) {
    RequestParser parser;
    EXPECT_EQ(parser.Parse(partial.data(), partial.size()), Result::kNeedMore) << partial;
  }
}

// The same pipeline split at every byte boundary parses to the same commands.
TEST(RequestParser, PipelineSplitAtEveryByteBoundary) {
  const std::string binary("x\r\n\0y", 5);
  const std::string pipeline =
      std::string("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\n") + binary + "\r\n" + "PING\r\n" +
      "*0\r\n" + "*1\r\n$4\r\nPING\r\n" + "\r\n" + "set \"a b\" 'c d' \"\\x41\\n\"\r\n" +
      "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n" + "GET k\n" + "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n";
  const std::vector<Args> expected = {{"SET", "key", binary},
                                      {"PING"},
                                      {},
                                      {"PING"},
                                      {},
                                      {"set", "a b", "c d", "A\n"},
                                      {"ECHO", ""},
                                      {"GET", "k"},
                                      {"GET", "0123456789"}};

  Outcome whole = FeedAll(pipeline);
  EXPECT_EQ(whole.commands, expected);
  EXPECT_EQ(whole.error, "");
  EXPECT_EQ(whole.consumed, pipeline.size());

  Outcome bytes = FeedByteByByte(pipeline);
  EXPECT_EQ(bytes, whole);

  for (size_t cut = 0; cut <= pipeline.size(); cut++) {
    RequestParser parser;
    Outcome two = FeedChunks(parser, {pipeline.substr(0, cut), pipeline.substr(cut)});
    EXPECT_EQ(two, whole) << "split at byte " << cut;
  }
  for (size_t cut1 = 0; cut1 <= pipeline.size(); cut1 += 7) {
    for (size_t cut2 = cut1; cut2 <= pipeline.size(); cut2 += 5) {
      RequestParser parser;
      Outcome three = FeedChunks(
          parser,
          {pipeline.substr(0, cut1), pipeline.substr(cut1, cut2 - cut1), pipeline.substr(cut2)});
      EXPECT_EQ(three, whole) << "split at bytes " << cut1 << " and " << cut2;
    }
  }
}

TEST(RequestParser, ErrorMidPipelineAtEveryBoundary) {
  // Two good commands, then garbage where a bulk header belongs.
  const std::string pipeline = "*1\r\n$4\r\nPING\r\nECHO hi\r\n*2\r\n$4\r\nECHO\r\nx3\r\nabc\r\n";
  Outcome whole = FeedAll(pipeline);
  EXPECT_EQ(whole.commands, (std::vector<Args>{{"PING"}, {"ECHO", "hi"}}));
  EXPECT_EQ(whole.error, "ERR Protocol error: expected '$', got 'x'");
  for (size_t cut = 0; cut <= pipeline.size(); cut++) {
    RequestParser parser;
    EXPECT_EQ(FeedChunks(parser, {pipeline.substr(0, cut), pipeline.substr(cut)}), whole) << cut;
  }
  EXPECT_EQ(FeedByteByByte(pipeline), whole);
}

TEST(RequestParser, InvalidMultibulkLength) {
  EXPECT_EQ(ParseError("*abc\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*3000000000\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*2147483648\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*+1\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*01\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*1 \r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseError("*99999999999999999999\r\n"),
            "ERR Protocol error: invalid multibulk length");
}

TEST(RequestParser, ExpectedDollar) {
  EXPECT_EQ(ParseError("*1\r\nx3\r\nfoo\r\n"), "ERR Protocol error: expected '$', got 'x'");
  EXPECT_EQ(ParseError("*2\r\n$3\r\nGET\r\n:1\r\n"), "ERR Protocol error: expected '$', got ':'");
}

TEST(RequestParser, InvalidBulkLength) {
  EXPECT_EQ(ParseError("*1\r\n$-1\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(ParseError("*1\r\n$-5\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(ParseError("*1\r\n$abc\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(ParseError("*1\r\n$\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(ParseError("*1\r\n$3x\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(ParseError("*1\r\n$99999999999999999999\r\n"),
            "ERR Protocol error: invalid bulk length");
  // Default proto-max-bulk-len is 512MB.
  EXPECT_EQ(ParseError("*1\r\n$536870913\r\n"), "ERR Protocol error: invalid bulk length");
  RequestParser parser;
  std::string at_max = "*1\r\n$536870912\r\n";
  EXPECT_EQ(parser.Parse(at_max.data(), at_max.size()), Result::kNeedMore);
}

TEST(RequestParser, MaxBulkLenFromSetLimits) {
  RequestParser parser;
  parser.set_limits(RequestParser::Limits{10});
  std::string over = "*1\r\n$11\r\n";
  ASSERT_EQ(parser.Parse(over.data(), over.size()), Result::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: invalid bulk length");

  std::string at = "*1\r\n$10\r\n0123456789\r\n";
  ASSERT_EQ(parser.Parse(at.data(), at.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"0123456789"}));

  EXPECT_EQ(ParseError("*2\r\n$1\r\na\r\n$11\r\n", RequestParser::Limits{10}),
            "ERR Protocol error: invalid bulk length");
}

TEST(RequestParser, TooBigInlineRequest) {
  std::string big(RequestParser::kMaxInlineSize + 1, 'a');
  EXPECT_EQ(ParseError(big), "ERR Protocol error: too big inline request");
  // Exactly the limit without a newline is still waiting for more.
  RequestParser parser;
  std::string at(RequestParser::kMaxInlineSize, 'a');
  EXPECT_EQ(parser.Parse(at.data(), at.size()), Result::kNeedMore);
  // A long line that does end in a newline is fine.
  std::string long_line = "ECHO " + std::string(RequestParser::kMaxInlineSize * 2, 'b') + "\r\n";
  Args args = ParseOne(long_line);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[1].size(), RequestParser::kMaxInlineSize * 2);
}

TEST(RequestParser, TooBigInlineRequestWhenFedIncrementally) {
  RequestParser parser;
  std::vector<std::string> chunks(70, std::string(1024, 'z'));
  Outcome out = FeedChunks(parser, chunks);
  EXPECT_EQ(out.error, "ERR Protocol error: too big inline request");
}

TEST(RequestParser, TooBigMbulkCountString) {
  std::string big = "*" + std::string(RequestParser::kMaxInlineSize + 10, '1');
  EXPECT_EQ(ParseError(big), "ERR Protocol error: too big mbulk count string");
}

TEST(RequestParser, TooBigBulkCountString) {
  std::string big = "*1\r\n$" + std::string(RequestParser::kMaxInlineSize + 10, '1');
  EXPECT_EQ(ParseError(big), "ERR Protocol error: too big bulk count string");
}

TEST(RequestParser, UnbalancedQuotes) {
  EXPECT_EQ(ParseError("SET \"abc\r\n"), "ERR Protocol error: unbalanced quotes in request");
  EXPECT_EQ(ParseError("SET 'abc\r\n"), "ERR Protocol error: unbalanced quotes in request");
  EXPECT_EQ(ParseError("SET \"a\"b\r\n"), "ERR Protocol error: unbalanced quotes in request");
}

TEST(RequestParser, ParserIsReusableAfterAnError) {
  RequestParser parser;
  std::string bad = "*1\r\n$-3\r\n";
  ASSERT_EQ(parser.Parse(bad.data(), bad.size()), Result::kError);
  std::string good = "*1\r\n$4\r\nPING\r\n";
  ASSERT_EQ(parser.Parse(good.data(), good.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"PING"}));
  std::string inline_cmd = "ECHO x\r\n";
  ASSERT_EQ(parser.Parse(inline_cmd.data(), inline_cmd.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"ECHO", "x"}));
}

TEST(RequestParser, ResetForgetsAPartialCommand) {
  RequestParser parser;
  std::string partial = "*2\r\n$3\r\nGET\r\n";
  ASSERT_EQ(parser.Parse(partial.data(), partial.size()), Result::kNeedMore);
  parser.Reset();
  std::string other = "PING\r\n";
  ASSERT_EQ(parser.Parse(other.data(), other.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"PING"}));
}

TEST(RequestParser, BytesNeededForABigBulk) {
  RequestParser parser;
  std::string data = "*2\r\n$3\r\nSET\r\n$100000\r\n";
  const size_t header = data.size();
  // Before the bulk header is complete nothing is known.
  ASSERT_EQ(parser.Parse(data.data(), header - 3), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 0u);
  data += std::string(10, 'x');
  ASSERT_EQ(parser.Parse(data.data(), data.size()), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), header + 100000 + 2);
  data += std::string(100000 - 10, 'x');
  ASSERT_EQ(parser.Parse(data.data(), data.size()), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), header + 100000 + 2) << "the final CRLF is still missing";
  data += "\r\n";
  ASSERT_EQ(parser.Parse(data.data(), data.size()), Result::kCommand);
  EXPECT_EQ(parser.consumed(), header + 100000 + 2);
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[1].size(), 100000u);
}

TEST(RequestParser, BytesNeededIsZeroForInline) {
  RequestParser parser;
  std::string data = "SET k v";
  ASSERT_EQ(parser.Parse(data.data(), data.size()), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 0u);
}

TEST(RequestParser, HugeAnnouncedCountDoesNotAllocateForIt) {
  auto start = std::chrono::steady_clock::now();
  RequestParser parser;
  std::string data = "*1000000000\r\n";
  EXPECT_EQ(parser.Parse(data.data(), data.size()), Result::kNeedMore);
  data += "$1\r\na\r\n$1\r\nb\r\n";
  EXPECT_EQ(parser.Parse(data.data(), data.size()), Result::kNeedMore);
  // INT_MAX is the largest count accepted.
  RequestParser parser2;
  std::string max = "*2147483647\r\n$1\r\na\r\n";
  EXPECT_EQ(parser2.Parse(max.data(), max.size()), Result::kNeedMore);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

TEST(RequestParser, BufferMayMoveBetweenCalls) {
  RequestParser parser;
  std::string first = "*2\r\n$3\r\nGET\r\n$5\r\nhel";
  ASSERT_EQ(parser.Parse(first.data(), first.size()), Result::kNeedMore);
  // Same bytes at a different address, plus the rest.
  std::vector<char> moved(first.begin(), first.end());
  const std::string rest = "lo\r\n";
  moved.insert(moved.end(), rest.begin(), rest.end());
  first.assign(first.size(), '#');  // the old copy is gone
  ASSERT_EQ(parser.Parse(moved.data(), moved.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"GET", "hello"}));
}

// A large bulk read into a block of its own, as the worker does: the buffer
// keeps the command up to the bulk, then what follows it.
TEST(RequestParser, ExternalBulk) {
  RequestParser parser;
  std::string buf = "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$50000\r\nabc";
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kNeedMore);
  size_t offset = 0, len = 0;
  ASSERT_TRUE(parser.PendingBulk(&offset, &len));
  EXPECT_EQ(len, 50000u);
  EXPECT_EQ(buf.substr(offset), "abc");
  // The bytes move out of the buffer into the block, where the rest arrives.
  const std::string block = buf.substr(offset) + std::string(50000 - 3, 'v');
  buf.resize(offset);
  parser.ExternalBulk(block.data());
  EXPECT_FALSE(parser.PendingBulk(&offset, &len)) << "the pending bulk is external now";
  // Its "\r\n" and the next arguments arrive in the buffer, in pieces.
  const std::string rest = "\r\n$2\r\nEX\r\n$3\r\n100\r\n*1\r\n$4\r\nPING\r\n";
  for (size_t i = 0; i < 19; i++) {  // 19 bytes complete the command
    std::string part = buf + rest.substr(0, i);
    ASSERT_EQ(parser.Parse(part.data(), part.size()), Result::kNeedMore) << i;
  }
  buf += rest;
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kCommand);
  ASSERT_EQ(parser.args().size(), 5u);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"SET", "k", block, "EX", "100"}));
  EXPECT_EQ(parser.args()[2].data(), block.data()) << "a view of the block, not a copy";
  EXPECT_EQ(buf.substr(parser.consumed()), "*1\r\n$4\r\nPING\r\n");
  // The next command parses normally.
  const size_t c = parser.consumed();
  ASSERT_EQ(parser.Parse(buf.data() + c, buf.size() - c), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"PING"}));
}

TEST(RequestParser, TwoExternalBulksInOneCommand) {
  RequestParser parser;
  std::string buf = "*3\r\n$4\r\nMSET\r\n$40000\r\n";
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kNeedMore);
  size_t offset, len;
  ASSERT_TRUE(parser.PendingBulk(&offset, &len));
  EXPECT_EQ(offset, buf.size());
  std::string a(40000, 'a'), b(70000, 'b');
  parser.ExternalBulk(a.data());
  buf += "\r\n$70000\r\nbbbb";
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kNeedMore);
  ASSERT_TRUE(parser.PendingBulk(&offset, &len));
  EXPECT_EQ(len, 70000u);
  buf.resize(offset);
  parser.ExternalBulk(b.data());
  buf += "\r\n";
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"MSET", a, b}));
  EXPECT_EQ(parser.consumed(), buf.size());
}

TEST(RequestParser, ResetForgetsExternalBulks) {
  RequestParser parser;
  std::string buf = "*2\r\n$4\r\nECHO\r\n$40000\r\n";
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kNeedMore);
  std::string block(40000, 'e');
  parser.ExternalBulk(block.data());
  parser.Reset();
  // Parsed again from a buffer that holds the bytes after all.
  buf += block + "\r\n";
  ASSERT_EQ(parser.Parse(buf.data(), buf.size()), Result::kCommand);
  EXPECT_EQ(ToArgs(parser.args()), (Args{"ECHO", block}));
  EXPECT_NE(parser.args()[1].data(), block.data());
}

TEST(RequestParser, NoPendingBulkOutsideABulk) {
  RequestParser parser;
  size_t offset, len;
  EXPECT_FALSE(parser.PendingBulk(&offset, &len));
  std::string inl = "SET k v";
  ASSERT_EQ(parser.Parse(inl.data(), inl.size()), Result::kNeedMore);
  EXPECT_FALSE(parser.PendingBulk(&offset, &len));
  parser.Reset();
  std::string header = "*2\r\n$3\r\nGET\r\n$10";  // bulk header incomplete
  ASSERT_EQ(parser.Parse(header.data(), header.size()), Result::kNeedMore);
  EXPECT_FALSE(parser.PendingBulk(&offset, &len));
}

TEST(SplitArgs, Basics) {
  Args out;
  ASSERT_TRUE(SplitArgs("", &out));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(SplitArgs("   \t  ", &out));
  EXPECT_TRUE(out.empty());
  out.clear();
  ASSERT_TRUE(SplitArgs("a b  c", &out));
  EXPECT_EQ(out, (Args{"a", "b", "c"}));
  out.clear();
  ASSERT_TRUE(SplitArgs("  lead and trail  ", &out));
  EXPECT_EQ(out, (Args{"lead", "and", "trail"}));
  out.clear();
  ASSERT_TRUE(SplitArgs("a\tb\nc\rd", &out));
  EXPECT_EQ(out, (Args{"a", "b", "c", "d"}));
}

TEST(SplitArgs, DoubleQuotes) {
  Args out;
  ASSERT_TRUE(SplitArgs("\"a b\" c", &out));
  EXPECT_EQ(out, (Args{"a b", "c"}));
  out.clear();
  ASSERT_TRUE(SplitArgs("\"\"", &out));
  EXPECT_EQ(out, (Args{""}));
  out.clear();
  ASSERT_TRUE(SplitArgs("\"\\n\\r\\t\\b\\a\\\\\\\"\"", &out));
  EXPECT_EQ(out, (Args{"\n\r\t\b\a\\\""}));
  out.clear();
  ASSERT_TRUE(SplitArgs("\"\\x41\\x4a\\x6b\\xff\\x00z\"", &out));
  EXPECT_EQ(out, (Args{std::string("AJk\xff\0z", 6)}));
  out.clear();
  // Not a full \xHH escape: the backslash just quotes the next character.
  ASSERT_TRUE(SplitArgs("\"\\x4\" \"\\xg1\" \"\\q\"", &out));
  EXPECT_EQ(out, (Args{"x4", "xg1", "q"}));
}

TEST(SplitArgs, SingleQuotes) {
  Args out;
  ASSERT_TRUE(SplitArgs("'c d' 'it\\'s'", &out));
  EXPECT_EQ(out, (Args{"c d", "it's"}));
  out.clear();
  // Only \' is an escape inside single quotes.
  ASSERT_TRUE(SplitArgs("'a\\nb' ''", &out));
  EXPECT_EQ(out, (Args{"a\\nb", ""}));
  out.clear();
  ASSERT_TRUE(SplitArgs("'say \"hi\"'", &out));
  EXPECT_EQ(out, (Args{"say \"hi\""}));
}

TEST(SplitArgs, QuotesInsideAWordJoinIt) {
  Args out;
  ASSERT_TRUE(SplitArgs("foo\"bar baz\" next", &out));
  EXPECT_EQ(out, (Args{"foobar baz", "next"}));
  out.clear();
  ASSERT_TRUE(SplitArgs("pre'x y'", &out));
  EXPECT_EQ(out, (Args{"prex y"}));
}

TEST(SplitArgs, UnbalancedOrGluedQuotesFail) {
  for (const char* bad :
       {"\"abc", "'abc", "a \"b", "\"a\"b", "'a'b", "\"a\"\"b\"", "\"abc\\\"", "\"\\", "'"}) {
    Args out;
    EXPECT_FALSE(SplitArgs(bad, &out)) << bad;
  }
  Args out;
  EXPECT_TRUE(SplitArgs("\"a\" b", &out));
  out.clear();
  EXPECT_TRUE(SplitArgs("\"a\"\tb", &out));
  EXPECT_EQ(out, (Args{"a", "b"}));
}

TEST(SplitArgs, NulEndsTheLine) {
  Args out;
  ASSERT_TRUE(SplitArgs(std::string_view("a b\0c d", 7), &out));
  EXPECT_EQ(out, (Args{"a", "b"}));
}

// Repr (MONITOR's arguments, sdscatrepr's escapes), its 16-byte fast path
// against a byte-at-a-time reference, on every length around the chunk
// size and every byte value at every position of a chunk; SplitArgs reads
// it back.
TEST(Repr, MatchesByteAtATimeAndReadsBack) {
  auto reference = [](std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '\\') out += "\\\\";
      else if (c == '"') out += "\\\"";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (c == '\a') out += "\\a";
      else if (c == '\b') out += "\\b";
      else if (c >= 32 && c <= 126) out += static_cast<char>(c);
      else {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        out += buf;
      }
    }
    return out + "\"";
  };
  for (size_t len = 0; len <= 40; len++) {
    for (int c = 0; c < 256; c++) {
      for (size_t at : {size_t{0}, len / 2, len > 0 ? len - 1 : 0}) {
        std::string s(len, 'a');
        if (len > 0) s[at] = static_cast<char>(c);
        ASSERT_EQ(Repr(s), reference(s)) << len << " " << c << " " << at;
        std::vector<std::string> back;
        ASSERT_TRUE(SplitArgs(Repr(s), &back));
        ASSERT_EQ(back, std::vector<std::string>{s});
      }
    }
  }
  std::string out = "x";
  AppendRepr(&out, "a b");
  EXPECT_EQ(out, "x\"a b\"");
}

}  // namespace
}  // namespace peregrine
