// Unit tests for ReplyWriter (RESP2 and RESP3 encodings, byte for byte) and
// for the Buffer it writes into.
#include "protocol/reply.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "protocol/buffer.h"

namespace peregrine {
namespace {

// The bytes `write` produces with a writer speaking protocol `resp`.
std::string Encode(int resp, const std::function<void(ReplyWriter&)>& write) {
  Buffer buf;
  ReplyWriter w(&buf, resp);
  write(w);
  return std::string(buf.view());
}

struct Case {
  const char* name;
  std::function<void(ReplyWriter&)> write;
  std::string resp2;
  std::string resp3;
};

TEST(ReplyWriter, EveryMethodInBothProtocols) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"Ok", [](ReplyWriter& w) { w.Ok(); }, "+OK\r\n", "+OK\r\n"},
      {"SimpleString", [](ReplyWriter& w) { w.SimpleString("PONG"); }, "+PONG\r\n", "+PONG\r\n"},
      {"SimpleString empty", [](ReplyWriter& w) { w.SimpleString(""); }, "+\r\n", "+\r\n"},
      {"Error", [](ReplyWriter& w) { w.Error("ERR unknown command"); }, "-ERR unknown command\r\n",
       "-ERR unknown command\r\n"},
      {"Error sanitized", [](ReplyWriter& w) { w.Error("ERR bad\r\nthing\n"); },
       "-ERR bad  thing \r\n", "-ERR bad  thing \r\n"},
      {"Integer 0", [](ReplyWriter& w) { w.Integer(0); }, ":0\r\n", ":0\r\n"},
      {"Integer -5", [](ReplyWriter& w) { w.Integer(-5); }, ":-5\r\n", ":-5\r\n"},
      {"Integer min", [](ReplyWriter& w) { w.Integer(LLONG_MIN); }, ":-9223372036854775808\r\n",
       ":-9223372036854775808\r\n"},
      {"Integer max", [](ReplyWriter& w) { w.Integer(LLONG_MAX); }, ":9223372036854775807\r\n",
       ":9223372036854775807\r\n"},
      {"Bulk", [](ReplyWriter& w) { w.Bulk("hello"); }, "$5\r\nhello\r\n", "$5\r\nhello\r\n"},
      {"Bulk empty", [](ReplyWriter& w) { w.Bulk(""); }, "$0\r\n\r\n", "$0\r\n\r\n"},
      {"Bulk binary", [](ReplyWriter& w) { w.Bulk(std::string_view("a\r\n\0b", 5)); },
       std::string("$5\r\na\r\n\0b\r\n", 11), std::string("$5\r\na\r\n\0b\r\n", 11)},
      {"Null", [](ReplyWriter& w) { w.Null(); }, "$-1\r\n", "_\r\n"},
      {"NullArray", [](ReplyWriter& w) { w.NullArray(); }, "*-1\r\n", "_\r\n"},
      {"ArrayHeader", [](ReplyWriter& w) { w.ArrayHeader(3); }, "*3\r\n", "*3\r\n"},
      {"ArrayHeader 0", [](ReplyWriter& w) { w.ArrayHeader(0); }, "*0\r\n", "*0\r\n"},
      {"MapHeader", [](ReplyWriter& w) { w.MapHeader(2); }, "*4\r\n", "%2\r\n"},
      {"MapHeader 0", [](ReplyWriter& w) { w.MapHeader(0); }, "*0\r\n", "%0\r\n"},
      {"SetHeader", [](ReplyWriter& w) { w.SetHeader(3); }, "*3\r\n", "~3\r\n"},
      {"PushHeader", [](ReplyWriter& w) { w.PushHeader(2); }, "*2\r\n", ">2\r\n"},
      {"Double", [](ReplyWriter& w) { w.Double(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n"},
      {"Double integral", [](ReplyWriter& w) { w.Double(3.0); }, "$1\r\n3\r\n", ",3\r\n"},
      {"Double negative", [](ReplyWriter& w) { w.Double(-0.25); }, "$5\r\n-0.25\r\n", ",-0.25\r\n"},
      {"Double inf", [=](ReplyWriter& w) { w.Double(inf); }, "$3\r\ninf\r\n", ",inf\r\n"},
      {"Double -inf", [=](ReplyWriter& w) { w.Double(-inf); }, "$4\r\n-inf\r\n", ",-inf\r\n"},
      {"Double nan", [](ReplyWriter& w) { w.Double(std::numeric_limits<double>::quiet_NaN()); },
       "$3\r\nnan\r\n", ",nan\r\n"},
      {"Bool true", [](ReplyWriter& w) { w.Bool(true); }, ":1\r\n", "#t\r\n"},
      {"Bool false", [](ReplyWriter& w) { w.Bool(false); }, ":0\r\n", "#f\r\n"},
      {"BigNumber", [](ReplyWriter& w) { w.BigNumber("1234567890123456789012"); },
       "$22\r\n1234567890123456789012\r\n", "(1234567890123456789012\r\n"},
      {"Verbatim", [](ReplyWriter& w) { w.Verbatim("abcd"); }, "$4\r\nabcd\r\n",
       "=8\r\ntxt:abcd\r\n"},
      {"Verbatim mkd", [](ReplyWriter& w) { w.Verbatim("# hi\r\n", "mkd"); }, "$6\r\n# hi\r\n\r\n",
       "=10\r\nmkd:# hi\r\n\r\n"},
      {"Verbatim empty", [](ReplyWriter& w) { w.Verbatim(""); }, "$0\r\n\r\n", "=4\r\ntxt:\r\n"},
      {"Raw", [](ReplyWriter& w) { w.Raw("+QUEUED\r\n"); }, "+QUEUED\r\n", "+QUEUED\r\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Encode(2, c.write), c.resp2) << c.name << " (RESP2)";
    EXPECT_EQ(Encode(3, c.write), c.resp3) << c.name << " (RESP3)";
  }
}

TEST(ReplyWriter, EmptyBulkFromADefaultView) {
  // A default string_view has no data pointer (a fuzzer finding: memcpy
  // from null, undefined even for 0 bytes).
  EXPECT_EQ(Encode(2, [](ReplyWriter& w) { w.Bulk(std::string_view()); }), "$0\r\n\r\n");
}

TEST(ReplyWriter, RepliesAccumulate) {
  std::string resp2 = Encode(2, [](ReplyWriter& w) {
    w.MapHeader(2);
    w.Bulk("a");
    w.Integer(1);
    w.Bulk("b");
    w.Null();
  });
  EXPECT_EQ(resp2, "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n$-1\r\n");
  std::string resp3 = Encode(3, [](ReplyWriter& w) {
    w.MapHeader(2);
    w.Bulk("a");
    w.Integer(1);
    w.Bulk("b");
    w.Null();
  });
  EXPECT_EQ(resp3, "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n_\r\n");
}

TEST(ReplyWriter, BigBulk) {
  const std::string big(3 * 1024 * 1024 + 7, 'x');
  std::string out = Encode(2, [&](ReplyWriter& w) { w.Bulk(big); });
  const std::string header = "$3145735\r\n";
  ASSERT_EQ(out.size(), header.size() + big.size() + 2);
  EXPECT_EQ(out.substr(0, header.size()), header);
  EXPECT_EQ(out.substr(header.size(), big.size()), big);
  EXPECT_EQ(out.substr(out.size() - 2), "\r\n");
}

TEST(ReplyWriter, ManySmallRepliesGrowTheBuffer) {
  std::string expected;
  std::string out = Encode(2, [&](ReplyWriter& w) {
    for (int i = 0; i < 20000; i++) {
      w.Integer(i);
      expected += ":" + std::to_string(i) + "\r\n";
    }
  });
  EXPECT_EQ(out, expected);
}

TEST(ReplyWriter, LongSimpleStringAndError) {
  const std::string s(5000, 's');
  EXPECT_EQ(Encode(3, [&](ReplyWriter& w) { w.SimpleString(s); }), "+" + s + "\r\n");
  EXPECT_EQ(Encode(3, [&](ReplyWriter& w) { w.Error("ERR " + s); }), "-ERR " + s + "\r\n");
}

TEST(ReplyWriter, SetRespSwitchesEncoding) {
  Buffer buf;
  ReplyWriter w(&buf, 2);
  EXPECT_EQ(w.resp(), 2);
  EXPECT_EQ(w.buffer(), &buf);
  w.Null();
  w.set_resp(3);
  EXPECT_EQ(w.resp(), 3);
  w.Null();
  w.set_resp(2);
  w.Bool(true);
  EXPECT_EQ(buf.view(), "$-1\r\n_\r\n:1\r\n");
}

class RecordingSink : public ErrorSink {
 public:
  void OnErrorReply(std::string_view msg) override { errors.emplace_back(msg); }
  std::vector<std::string> errors;
};

TEST(ReplyWriter, ErrorSinkSeesEveryErrorAndNothingElse) {
  Buffer buf;
  RecordingSink sink;
  ReplyWriter w(&buf, 2, &sink);
  w.Ok();
  w.Bulk("ERR not an error");
  w.SimpleString("ERR nor this");
  w.Integer(1);
  EXPECT_TRUE(sink.errors.empty());
  w.Error("ERR first");
  w.Error("WRONGTYPE Operation against a key holding the wrong kind of value");
  ASSERT_EQ(sink.errors.size(), 2u);
  EXPECT_EQ(sink.errors[0], "ERR first");
  EXPECT_EQ(sink.errors[1], "WRONGTYPE Operation against a key holding the wrong kind of value");
  // The error still reaches the client.
  EXPECT_NE(buf.view().find("-ERR first\r\n"), std::string_view::npos);
  // Raw bytes are not inspected.
  w.Raw("-ERR raw\r\n");
  EXPECT_EQ(sink.errors.size(), 2u);
}

TEST(ReplyWriter, NoSinkIsFine) {
  EXPECT_EQ(Encode(3, [](ReplyWriter& w) { w.Error("ERR x"); }), "-ERR x\r\n");
}

TEST(Buffer, AppendConsumeAndCompact) {
  Buffer b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  b.Append("hello ");
  b.Append('w');
  b.Append("orld", 4);
  EXPECT_EQ(b.view(), "hello world");
  b.Consume(6);
  EXPECT_EQ(b.view(), "world");
  EXPECT_EQ(b.head_offset(), 6u);
  b.Compact();
  EXPECT_EQ(b.head_offset(), 0u);
  EXPECT_EQ(b.view(), "world");
  b.Consume(5);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.head_offset(), 0u) << "consuming everything rewinds to the start";
}

TEST(Buffer, ReserveCommit) {
  Buffer b;
  char* p = b.Reserve(3);
  ASSERT_GE(b.writable(), 3u);
  p[0] = 'a';
  p[1] = 'b';
  p[2] = 'c';
  EXPECT_TRUE(b.empty()) << "reserved bytes are not data until committed";
  b.Commit(2);
  EXPECT_EQ(b.view(), "ab");
  const size_t big = 100000;
  p = b.Reserve(big);
  EXPECT_GE(b.writable(), big);
  EXPECT_EQ(b.view(), "ab") << "growing keeps the data";
  std::memset(p, 'z', big);
  b.Commit(big);
  EXPECT_EQ(b.size(), big + 2);
  EXPECT_EQ(b.view().substr(0, 3), "abz");
}

TEST(Buffer, GrowingCompactsConsumedFrontFirst) {
  Buffer b;
  b.Append(std::string(1000, 'a'));
  size_t cap = b.capacity();
  b.Consume(900);
  // Room exists once the consumed front is reclaimed: no reallocation needed.
  b.Reserve(cap - 100);
  EXPECT_EQ(b.capacity(), cap);
  EXPECT_EQ(b.view(), std::string(100, 'a'));
}

TEST(Buffer, ShrinkIfIdleAndClear) {
  Buffer b;
  b.Append(std::string(50000, 'q'));
  b.ShrinkIfIdle(1024);
  EXPECT_GE(b.capacity(), 50000u) << "a buffer holding data is never freed";
  b.Clear();
  EXPECT_TRUE(b.empty());
  b.ShrinkIfIdle(1024);
  EXPECT_EQ(b.capacity(), 0u);
  b.Append("again");
  EXPECT_EQ(b.view(), "again");
  Buffer small;
  small.Append("x");
  small.Consume(1);
  size_t cap = small.capacity();
  small.ShrinkIfIdle(cap);
  EXPECT_EQ(small.capacity(), cap) << "a buffer within `keep` is kept";
}

}  // namespace
}  // namespace peregrine
