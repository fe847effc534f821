// OutputBuffer: inline bytes and references come out in order however the
// writes split them, references are returned once their bytes are written,
// dropped or flattened, and a randomized check against a plain string.
#include "protocol/output_buffer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/lent_blocks.h"

namespace peregrine {
namespace {

// Drains `out` by gathering and consuming at most `chunk` bytes at a time
// (a socket that takes that much per write), with at most `max_iov` iovecs.
std::string Drain(OutputBuffer& out, size_t chunk, int max_iov = 64) {
  std::string sent;
  std::vector<iovec> iov(static_cast<size_t>(max_iov));
  while (!out.empty()) {
    const int k = out.Gather(iov.data(), max_iov);
    EXPECT_GT(k, 0);
    size_t n = 0;
    for (int i = 0; i < k && n < chunk; i++) {
      const size_t take = std::min(chunk - n, iov[static_cast<size_t>(i)].iov_len);
      sent.append(static_cast<const char*>(iov[static_cast<size_t>(i)].iov_base), take);
      n += take;
    }
    const size_t before = out.size();
    out.Consume(n);
    EXPECT_EQ(out.size(), before - n);
  }
  return sent;
}

TEST(OutputBuffer, InlineOnly) {
  OutputBuffer out;
  out.Append("+OK\r\n");
  out.bytes().Append(":1\r\n");
  EXPECT_EQ(out.size(), 9u);
  EXPECT_FALSE(out.has_refs());
  iovec iov[4];
  ASSERT_EQ(out.Gather(iov, 4), 1);
  EXPECT_EQ(Drain(out, 3), "+OK\r\n:1\r\n");
  EXPECT_TRUE(out.empty());
}

TEST(OutputBuffer, ReferencesInOrder) {
  std::string a(3000, 'a'), b(2000, 'b');
  OutputBuffer out;
  out.Append("$3000\r\n");
  out.AppendRef(a.data(), a.size(), a.data());
  out.Append("\r\n$2000\r\n");
  out.AppendRef(b.data(), b.size(), b.data());
  out.AppendRef(a.data() + 10, 5, a.data());  // two references in a row, one block twice
  out.Append("\r\n");
  EXPECT_TRUE(out.has_refs());
  EXPECT_EQ(out.referenced_bytes(), 5005u);
  EXPECT_EQ(out.size(), 7 + 3000 + 9 + 2000 + 5 + 2u);
  EXPECT_TRUE(lent_blocks::IsLent(a.data()));
  EXPECT_TRUE(lent_blocks::IsLent(b.data()));
  iovec iov[8];
  EXPECT_EQ(out.Gather(iov, 8), 6);
  EXPECT_EQ(out.Gather(iov, 2), 2);
  const std::string want = "$3000\r\n" + a + "\r\n$2000\r\n" + b + a.substr(10, 5) + "\r\n";
  EXPECT_EQ(Drain(out, 1000), want);
  EXPECT_FALSE(lent_blocks::IsLent(a.data()));
  EXPECT_FALSE(lent_blocks::IsLent(b.data()));
}

TEST(OutputBuffer, ReferenceFirstAndLast) {
  std::string a(100, 'x');
  OutputBuffer out;
  out.AppendRef(a.data(), a.size(), a.data());
  out.Append("mid");
  out.AppendRef(a.data(), 7, a.data());
  EXPECT_EQ(Drain(out, 1), a + "mid" + a.substr(0, 7));
  EXPECT_FALSE(lent_blocks::IsLent(a.data()));
}

TEST(OutputBuffer, EmptyReferenceIsNothing) {
  std::string a = "abc";
  OutputBuffer out;
  out.AppendRef(a.data(), 0, a.data());
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(lent_blocks::IsLent(a.data()));
}

TEST(OutputBuffer, ClearReturnsReferences) {
  std::string a(50, 'c');
  OutputBuffer out;
  out.Append("h");
  out.AppendRef(a.data(), a.size(), a.data());
  out.Append("t");
  out.Consume(10);  // part of the reference written
  out.Clear();
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(out.size(), 0u);
  EXPECT_FALSE(lent_blocks::IsLent(a.data()));
  out.Append("next");
  EXPECT_EQ(Drain(out, 100), "next");
}

TEST(OutputBuffer, FlattenCopiesWhatIsLeft) {
  std::string a(64, 'a'), b(64, 'b');
  OutputBuffer out;
  out.Append("<");
  out.AppendRef(a.data(), a.size(), a.data());
  out.Append("|");
  out.AppendRef(b.data(), b.size(), b.data());
  out.Append(">");
  out.Consume(20);  // "<" and 19 bytes of a
  out.Flatten();
  EXPECT_FALSE(out.has_refs());
  EXPECT_FALSE(lent_blocks::IsLent(a.data()));
  EXPECT_FALSE(lent_blocks::IsLent(b.data()));
  // The blocks may change now: the buffer has its own copy.
  a.assign(64, '?');
  b.assign(64, '?');
  EXPECT_EQ(Drain(out, 7), std::string(45, 'a') + "|" + std::string(64, 'b') + ">");
  // References appended after a flatten still go in order.
  out.Append("x");
  out.AppendRef(a.data(), 3, a.data());
  out.Append("y");
  EXPECT_EQ(Drain(out, 2), "x???y");
}

// Random appends (inline and by reference, over a few blocks), writes of
// random sizes with few or many iovecs, the occasional flatten or clear:
// what comes out is what a plain string says, and every reference is
// returned in the end.
TEST(OutputBuffer, RandomizedAgainstAString) {
  std::mt19937_64 rng(42);
  std::vector<std::string> blocks;
  for (int i = 0; i < 8; i++) blocks.emplace_back(1 + rng() % 5000, static_cast<char>('A' + i));
  for (int round = 0; round < 300; round++) {
    OutputBuffer out;
    std::string model, sent;
    const int ops = 1 + static_cast<int>(rng() % 60);
    for (int op = 0; op < ops; op++) {
      switch (rng() % 6) {
        case 0:
        case 1: {
          std::string s(rng() % 40, static_cast<char>('a' + rng() % 26));
          out.Append(s);
          model += s;
          break;
        }
        case 2:
        case 3: {
          const std::string& b = blocks[rng() % blocks.size()];
          const size_t off = rng() % b.size(), len = rng() % (b.size() - off + 1);
          out.AppendRef(b.data() + off, len, b.data());
          model.append(b, off, len);
          break;
        }
        case 4: {
          const size_t want = rng() % 3000;
          const int max_iov = 1 + static_cast<int>(rng() % 5);
          std::vector<iovec> iov(static_cast<size_t>(max_iov));
          const int k = out.Gather(iov.data(), max_iov);
          size_t n = 0;
          for (int i = 0; i < k && n < want; i++) {
            const size_t take = std::min(want - n, iov[static_cast<size_t>(i)].iov_len);
            sent.append(static_cast<const char*>(iov[static_cast<size_t>(i)].iov_base), take);
            n += take;
          }
          out.Consume(n);
          break;
        }
        case 5:
          if (rng() % 4 == 0) {
            out.Flatten();
            ASSERT_FALSE(out.has_refs());
          }
          break;
      }
      ASSERT_EQ(out.size(), model.size() - sent.size());
    }
    if (rng() % 5 == 0) {
      out.Clear();
    } else {
      sent += Drain(out, 1 + rng() % 4000, 1 + static_cast<int>(rng() % 8));
      ASSERT_EQ(sent, model);
    }
    for (const std::string& b : blocks) ASSERT_FALSE(lent_blocks::IsLent(b.data()));
  }
}

}  // namespace
}  // namespace peregrine
