// The offline checks (--check-rdb, --check-aof): a whole file passes and is
// counted by type; every cut of it, and a changed byte, is reported with
// where reading stopped; an AOF's cut-off tail or unfinished MULTI is found,
// and --fix cuts the last file to its last whole command only when told yes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/list_object.h"
#include "core/value.h"
#include "persist/aof_check.h"
#include "persist/aof_format.h"
#include "persist/rdb_check.h"
#include "persist/rdb_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_writer.h"

namespace peregrine {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

// An RDB file: an aux field, a database, a string, a list and a key with a
// deadline already past.
std::string SampleRdb() {
  std::string file;
  RdbWriter w(/*compress=*/true, /*checksum=*/true, [&](std::string_view b) {
    file.append(b);
    return true;
  });
  w.Raw("REDIS0010");
  w.Byte(rdb::kOpAux);
  w.String("redis-ver");
  w.String("7.2.4");
  w.Byte(rdb::kOpSelectDb);
  w.Len(0);
  w.KeyValue("s", Value::String("hello"), -1);
  ListObject l;
  for (const char* item : {"a", "b", "c"}) l.Push(ListObject::End::kTail, item, ListLimits{});
  w.KeyValue("l", Value(std::move(l)), -1);
  w.KeyValue("old", Value::String("x"), kNow - 1000);
  w.Finish();
  return file;
}

RdbCheckResult Check(const std::string& bytes, std::string* out) {
  RdbReader r(bytes);
  return CheckRdb(r, kNow, out);
}

TEST(RdbCheck, AWholeFileIsCountedByType) {
  std::string out;
  const RdbCheckResult res = Check(SampleRdb(), &out);
  ASSERT_TRUE(res.ok) << out;
  EXPECT_EQ(res.keys, 3u);
  EXPECT_EQ(res.expires, 1u);
  EXPECT_EQ(res.already_expired, 1u);
  EXPECT_EQ(res.by_type[static_cast<size_t>(ValueType::kString)], 2u);
  EXPECT_EQ(res.by_type[static_cast<size_t>(ValueType::kList)], 1u);
  EXPECT_EQ(res.end, SampleRdb().size());
  EXPECT_NE(out.find("AUX FIELD redis-ver = '7.2.4'"), std::string::npos);
  EXPECT_NE(out.find("Checksum OK"), std::string::npos);
  EXPECT_NE(out.find("[info] keys by type: string 2, list 1"), std::string::npos);
}

TEST(RdbCheck, EveryCutIsReportedWhereReadingStopped) {
  const std::string whole = SampleRdb();
  for (size_t n = 0; n < whole.size(); n++) {
    std::string out;
    const RdbCheckResult res = Check(whole.substr(0, n), &out);
    EXPECT_FALSE(res.ok) << n;
    EXPECT_NE(out.find("--- RDB ERROR DETECTED ---"), std::string::npos) << n;
    EXPECT_NE(out.find("While doing: "), std::string::npos) << n;
  }
}

TEST(RdbCheck, AChangedByteIsFound) {
  const std::string whole = SampleRdb();
  // Past the header: any changed byte makes a bad value or a bad checksum.
  for (size_t i = 9; i < whole.size(); i++) {
    std::string bad = whole;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    std::string out;
    EXPECT_FALSE(Check(bad, &out).ok) << i;
  }
  std::string out;
  std::string bad = whole;
  bad[whole.size() - 1] ^= 1;  // the checksum itself
  EXPECT_FALSE(Check(bad, &out).ok);
  EXPECT_NE(out.find("RDB CRC error"), std::string::npos) << out;
}

TEST(RdbCheck, AKeyThatFailsNamesItself) {
  RdbWriter w;
  w.Raw("REDIS0010");
  w.Byte(rdb::kTypeList);
  w.String("mylist");
  w.Len(5);  // five items promised, one given
  w.String("x");
  std::string out;
  EXPECT_FALSE(Check(w.buffer(), &out).ok);
  EXPECT_NE(out.find("Reading key 'mylist'"), std::string::npos) << out;
  EXPECT_NE(out.find("While doing: read-object-value"), std::string::npos) << out;
}

TEST(RdbCheck, WrongSignatureAndVersion) {
  std::string out;
  EXPECT_FALSE(Check("RADIS0010", &out).ok);
  EXPECT_NE(out.find("Wrong signature"), std::string::npos);
  out.clear();
  EXPECT_FALSE(Check("REDIS0099", &out).ok);
  EXPECT_NE(out.find("Can't handle RDB format version 99"), std::string::npos);
}

// A temporary file that goes with the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/peregrine-aof-check-XXXXXX";
    const int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { unlink(path.c_str()); }
  std::string Read() const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

AofFileCheck CheckBytes(const std::string& bytes) {
  TempFile f(bytes);
  const int fd = open(f.path.c_str(), O_RDONLY);
  AofFileCheck c = CheckAofCommands(fd, 0);
  close(fd);
  return c;
}

constexpr std::string_view kAnnotation = "#TS:1700000000\r\n";

std::string Commands() {
  std::string s;
  AppendRespCommand(&s, {"SET", "a", "1"});
  s += kAnnotation;
  AppendRespCommand(&s, {"MULTI"});
  AppendRespCommand(&s, {"INCR", "a"});
  AppendRespCommand(&s, {"EXEC"});
  return s;
}

TEST(AofCheck, WholeCommandsAndAnnotationsAreValid) {
  const AofFileCheck c = CheckBytes(Commands());
  EXPECT_TRUE(c.whole()) << c.error;
  EXPECT_EQ(c.commands, 4u);
  EXPECT_TRUE(CheckBytes("").whole());
}

TEST(AofCheck, ACutIsKeptToTheLastWholeCommandOutsideMulti) {
  std::string first;
  AppendRespCommand(&first, {"SET", "a", "1"});
  const std::string whole = Commands();
  for (size_t n = 0; n < whole.size(); n++) {
    const AofFileCheck c = CheckBytes(whole.substr(0, n));
    // (Up to the end of SET, only SET's bytes or nothing are whole; from
    // the annotation on, inside the MULTI, the cut goes back to SET's end.)
    const bool valid_prefix = n == 0 || n == first.size() || n == first.size() + kAnnotation.size();
    EXPECT_EQ(c.whole(), valid_prefix) << n;
    if (!c.whole()) {
      EXPECT_EQ(c.ok_up_to, n < first.size() ? 0u : first.size()) << n;
    }
  }
}

TEST(AofCheck, GarbageIsAFormatError) {
  const AofFileCheck c = CheckBytes(Commands() + "hello\r\n");
  EXPECT_FALSE(c.whole());
  EXPECT_TRUE(c.format_error);
  EXPECT_EQ(c.ok_up_to, Commands().size());
}

int RunCheck(const std::string& path, bool fix, const char* answer, std::string* printed) {
  std::FILE* in = std::tmpfile();
  std::FILE* out = std::tmpfile();
  std::fputs(answer, in);
  std::rewind(in);
  const int rc = CheckAofMain(path, AofCheckOptions{fix, in, out}, kNow);
  std::rewind(out);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), out)) > 0) printed->append(buf, n);
  std::fclose(in);
  std::fclose(out);
  return rc;
}

TEST(AofCheck, FixCutsOnlyWhenToldYes) {
  const std::string whole = Commands();
  TempFile f(whole.substr(0, whole.size() - 3));
  std::string out;
  EXPECT_EQ(RunCheck(f.path, /*fix=*/false, "", &out), 1);
  EXPECT_NE(out.find("Use the --fix option"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(RunCheck(f.path, /*fix=*/true, "n\n", &out), 1);
  EXPECT_NE(out.find("Aborting"), std::string::npos) << out;
  EXPECT_EQ(f.Read().size(), whole.size() - 3);
  out.clear();
  EXPECT_EQ(RunCheck(f.path, /*fix=*/true, "y\n", &out), 0);
  std::string first;
  AppendRespCommand(&first, {"SET", "a", "1"});
  EXPECT_EQ(f.Read(), first);
  out.clear();
  EXPECT_EQ(RunCheck(f.path, /*fix=*/false, "", &out), 0) << out;
}

TEST(AofCheck, AnRdbPreambleIsCheckedThenTheTail) {
  TempFile f(SampleRdb() + Commands());
  std::string out;
  EXPECT_EQ(RunCheck(f.path, false, "", &out), 0) << out;
  EXPECT_NE(out.find("RDB preamble is OK, proceeding with AOF tail"), std::string::npos) << out;
  std::string bad = SampleRdb();
  bad[bad.size() - 1] ^= 1;
  TempFile g(bad + Commands());
  out.clear();
  EXPECT_EQ(RunCheck(g.path, true, "y\n", &out), 1) << out;
  EXPECT_EQ(g.Read().size(), bad.size() + Commands().size());  // (never cut)
}

}  // namespace
}  // namespace peregrine
