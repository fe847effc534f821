// The AOF formats: the manifest both ways with Redis's checks, commands as
// RESP, chunks with their SELECTs, and the reader against every cut of a
// file and against malformed bytes (checked with a model: the commands
// written are the commands read).
#include "persist/aof_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace peregrine {
namespace {

TEST(AofManifest, FormatsAsRedisAndParsesBack) {
  AofManifest m;
  m.base = AofManifest::File{"appendonly.aof.3.base.rdb", 3, 'b'};
  m.history.push_back({"appendonly.aof.2.incr.aof", 2, 'h'});
  m.incr.push_back({"appendonly.aof.3.incr.aof", 3, 'i'});
  m.incr.push_back({"appendonly.aof.4.incr.aof", 4, 'i'});
  const std::string text = m.Format();
  EXPECT_EQ(text,
            "file appendonly.aof.3.base.rdb seq 3 type b\n"
            "file appendonly.aof.2.incr.aof seq 2 type h\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n"
            "file appendonly.aof.4.incr.aof seq 4 type i\n");
  AofManifest back;
  std::string err;
  ASSERT_TRUE(AofManifest::Parse(text, &back, &err)) << err;
  ASSERT_TRUE(back.base.has_value());
  EXPECT_EQ(back.base->name, "appendonly.aof.3.base.rdb");
  EXPECT_EQ(back.base_seq, 3);
  EXPECT_EQ(back.incr_seq, 4);
  ASSERT_EQ(back.incr.size(), 2u);
  EXPECT_EQ(back.incr[1].name, "appendonly.aof.4.incr.aof");
  ASSERT_EQ(back.history.size(), 1u);
  EXPECT_EQ(back.Format(), text);
}

TEST(AofManifest, QuotesOddNamesAndReadsThemBack) {
  AofManifest m;
  m.incr.push_back({"my file \"x\".aof", 1, 'i'});
  const std::string text = m.Format();
  EXPECT_EQ(text, "file \"my file \\\"x\\\".aof\" seq 1 type i\n");
  AofManifest back;
  std::string err;
  ASSERT_TRUE(AofManifest::Parse(text, &back, &err)) << err;
  EXPECT_EQ(back.incr[0].name, "my file \"x\".aof");
}

TEST(AofManifest, RefusesWhatRedisRefuses) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"", "Found an empty AOF manifest"},
      {"file a seq 1\n", "Invalid AOF manifest file format"},
      {"file a seq 1 type\n", "Invalid AOF manifest file format"},
      {"\n", "Invalid AOF manifest file format"},
      {"file dir/a seq 1 type b\n", "File can't be a path, just a filename"},
      {"file a seq 0 type b\n", "Invalid AOF manifest file format"},
      {"file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information"},
      {"file a seq 2 type i\nfile b seq 2 type i\n", "Found a non-monotonic sequence number"},
      {"file a seq 1 type x\n", "Unknown AOF file type"},
      {"file a seq 1 type b", "The AOF manifest file contains too long line"},
      {"file \"a seq 1 type b\n", "Invalid AOF manifest file format"},
  };
  for (const Case& c : cases) {
    AofManifest m;
    std::string err;
    EXPECT_FALSE(AofManifest::Parse(c.text, &m, &err)) << c.text;
    EXPECT_EQ(err, c.error) << c.text;
  }
  // Comments are skipped; unknown keys are allowed (forward compatible).
  AofManifest m;
  std::string err;
  EXPECT_TRUE(AofManifest::Parse("# hello\nfile a seq 1 type i extra 5\n", &m, &err)) << err;
  EXPECT_EQ(m.incr.size(), 1u);
  EXPECT_EQ(std::string(AofManifest::BaseName("appendonly.aof", 7, true)), "appendonly.aof.7.base.rdb");
  EXPECT_EQ(std::string(AofManifest::BaseName("appendonly.aof", 7, false)), "appendonly.aof.7.base.aof");
  EXPECT_EQ(std::string(AofManifest::IncrName("x", 2)), "x.2.incr.aof");
}

TEST(AofChunk, SelectsWhereTheDatabaseChanges) {
  AofChunk c;
  EXPECT_TRUE(c.empty());
  c.Add(2, {"SET", "k", "v"});
  c.Add(2, {"DEL", "k"});
  c.Add(0, {"INCR", "n"});
  EXPECT_EQ(c.first_db(), 2);
  EXPECT_EQ(c.last_db(), 0);
  EXPECT_EQ(c.commands(), 3u);
  EXPECT_EQ(c.bytes(),
            "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
            "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
            "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
            "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n");
  AofChunk outer;
  outer.Add(0, {"MULTI"});
  outer.Add(c);
  EXPECT_EQ(outer.first_db(), 0);
  EXPECT_EQ(outer.last_db(), 0);
  EXPECT_EQ(outer.commands(), 4u);
  EXPECT_NE(outer.bytes().find("*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*3\r\n$3\r\nSET"), std::string_view::npos);
  c.Clear();
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.first_db(), -1);
}

// Random commands (binary arguments, empty ones, large ones) written as
// Redis writes them, with annotations between, read back whole and from
// every cut: a cut inside a command is kNeedMore, never a wrong command.
TEST(AofReader, ReadsBackWhatWasWrittenAndTellsCutsFromErrors) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<std::string>> model;
  std::string file;
  for (int i = 0; i < 300; i++) {
    std::vector<std::string> cmd;
    const int argc = 1 + static_cast<int>(rng() % 5);
    for (int j = 0; j < argc; j++) {
      std::string a;
      const size_t len = rng() % 4 == 0 ? rng() % 3000 : rng() % 12;
      for (size_t k = 0; k < len; k++) a += static_cast<char>(rng());
      cmd.push_back(a);
    }
    if (rng() % 10 == 0) file += "#TS:1700000000\r\n";
    std::vector<std::string_view> views(cmd.begin(), cmd.end());
    AppendRespCommand(&file, views);
    model.push_back(std::move(cmd));
  }
  auto read_all = [&](std::string_view bytes, size_t* done, AofReader::Result* last) {
    AofReader r;
    size_t pos = 0, n = 0;
    for (;;) {
      *last = r.Next(bytes.data() + pos, bytes.size() - pos);
      if (*last != AofReader::Result::kCommand) break;
      EXPECT_LT(n, model.size());
      if (n >= model.size()) break;
      const auto args = r.args();
      EXPECT_EQ(args.size(), model[n].size());
      for (size_t j = 0; j < args.size() && j < model[n].size(); j++) EXPECT_EQ(args[j], model[n][j]);
      pos += r.consumed();
      n++;
    }
    *done = n;
    return pos;
  };
  size_t n;
  AofReader::Result last;
  EXPECT_EQ(read_all(file, &n, &last), file.size());
  EXPECT_EQ(n, model.size());
  EXPECT_EQ(last, AofReader::Result::kNeedMore);
  for (size_t cut = 0; cut < file.size(); cut += 1 + rng() % 97) {
    const size_t pos = read_all(std::string_view(file).substr(0, cut), &n, &last);
    EXPECT_EQ(last, AofReader::Result::kNeedMore) << cut;
    EXPECT_LE(pos, cut);
  }
}

TEST(AofReader, MalformedBytesAreFormatErrors) {
  for (const char* bad : {"SET k v\r\n", "*x\r\n", "*0\r\n", "*-1\r\n", "*1\r\n+OK\r\n", "*1\r\n$x\r\n",
                          "*1\r\n$-2\r\nab\r\n", "\r\n"}) {
    AofReader r;
    EXPECT_EQ(r.Next(bad, std::strlen(bad)), AofReader::Result::kFormatError) << bad;
  }
  // A header line longer than Redis reads at once.
  std::string long_line = "*1" + std::string(2000, '1');
  AofReader r;
  EXPECT_EQ(r.Next(long_line.data(), long_line.size()), AofReader::Result::kFormatError);
  // A bulk's size is known before its bytes arrive.
  const std::string partial = "*1\r\n$100\r\nabc";
  EXPECT_EQ(r.Next(partial.data(), partial.size()), AofReader::Result::kNeedMore);
  EXPECT_EQ(r.needed(), 10u + 100 + 2);
}

}  // namespace
}  // namespace peregrine
