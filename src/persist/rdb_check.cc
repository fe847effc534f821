// The RDB check (rdb_check.h): the loader's walk over opcodes (server/
// persistence.cc, RdbLoader::Step) without a server to load into.
#include "persist/rdb_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "core/value.h"
#include "persist/rdb_format.h"
#include "persist/rdb_value.h"
#include "protocol/parser.h"

namespace peregrine {

namespace {

// An RDB type's encoding, by its number (the names redis-check-rdb uses).
std::string_view EncodingName(int type) {
  static constexpr std::string_view kNames[] = {
      "string",       "list-linked",  "set-hashtable", "zset-v1",       "hash-hashtable", "zset-v2",
      "module-pre-ga", "module-value", "",              "hash-zipmap",   "list-ziplist",   "set-intset",
      "zset-ziplist", "hash-ziplist", "quicklist",     "stream",        "hash-listpack",  "zset-listpack",
      "quicklist-v2", "stream-v2",    "set-listpack",  "stream-v3",     "hash-metadata-pre-ga",
      "hash-listpack-ex-pre-ga",      "hash-metadata", "hash-listpack-ex"};
  if (type < 0 || static_cast<size_t>(type) >= std::size(kNames)) return "unknown";
  return kNames[type];
}

// A name or value as redis-check-rdb prints it, between single quotes;
// one with bytes a terminal should not get is quoted and escaped instead,
// as MONITOR quotes (Repr).
std::string Quoted(std::string_view s) { return NeedsRepr(s) ? Repr(s) : "'" + std::string(s) + "'"; }

// The report and what was being read when it stopped.
class CheckReport {
 public:
  CheckReport(RdbReader& r, RdbCheckResult& res, std::string* out) : r_(r), res_(res), out_(*out) {}

  void Line(std::string_view text) {
    out_ += "[offset " + std::to_string(r_.consumed()) + "] ";
    out_.append(text);
    out_ += "\n";
  }
  void Doing(const char* what) { doing_ = what; }
  void Type(int type) { type_ = type; }
  void Key(std::string key) {
    key_ = std::move(key);
    has_key_ = true;
  }
  void KeyDone() {
    has_key_ = false;
    type_ = -1;
  }

  void Info() {
    out_ += "[info] " + std::to_string(res_.keys) + " keys read\n";
    out_ += "[info] " + std::to_string(res_.expires) + " expires\n";
    out_ += "[info] " + std::to_string(res_.already_expired) + " already expired\n";
    std::string types;
    for (size_t t = 0; t < res_.by_type.size(); t++) {
      if (res_.by_type[t] == 0) continue;
      types += (types.empty() ? "" : ", ") + std::string(TypeName(static_cast<ValueType>(t))) + " " +
               std::to_string(res_.by_type[t]);
    }
    if (!types.empty()) out_ += "[info] keys by type: " + types + "\n";
    if (res_.empty > 0)
      out_ += "[info] " + std::to_string(res_.empty) + " empty values (a load skips their keys)\n";
    if (res_.functions > 0) out_ += "[info] " + std::to_string(res_.functions) + " function libraries\n";
  }

  // The first problem: where reading stopped, and what it was reading.
  // `why`, if given, instead of the reader's error.
  RdbCheckResult Fail(std::string_view why = {}) {
    out_ += "--- RDB ERROR DETECTED ---\n";
    Line(!why.empty() ? why : r_.error().empty() ? "Unexpected EOF reading RDB file" : r_.error());
    out_ += "[additional info] While doing: " + std::string(doing_) + "\n";
    if (has_key_) out_ += "[additional info] Reading key " + Quoted(key_) + "\n";
    if (type_ >= 0)
      out_ += "[additional info] Reading type " + std::to_string(type_) + " (" + std::string(EncodingName(type_)) +
              ")\n";
    Info();
    res_.ok = false;
    return res_;
  }

 private:
  RdbReader& r_;
  RdbCheckResult& res_;
  std::string& out_;
  const char* doing_ = "start";
  std::string key_;
  bool has_key_ = false;
  // (0 before the first key, as redis-check-rdb's zeroed state says
  // "Reading type 0 (string)" then; -1, none, after each key.)
  int type_ = 0;
};


}  // namespace

RdbCheckResult CheckRdb(RdbReader& r, int64_t now_ms, std::string* out) {
  RdbCheckResult res;
  CheckReport report(r, res, out);
  report.Doing("start");
  int version;
  if (!ReadRdbHeader(r, &version)) return report.Fail();
  const ContainerLimits limits;
  int64_t expire_ms = -1;
  std::string a, b;
  for (;;) {
    report.Doing("read-type");
    uint8_t op;
    if (!r.Byte(&op)) return report.Fail();
    switch (op) {
      case rdb::kOpExpireTime: {
        report.Doing("read-expire");
        int64_t s;
        if (!r.SecondsTime(&s)) return report.Fail();
        expire_ms = s * 1000;
        continue;
      }
      case rdb::kOpExpireTimeMs:
        report.Doing("read-expire");
        if (!r.MillisTime(&expire_ms)) return report.Fail();
        continue;
      case rdb::kOpFreq: {
        report.Doing("read-len");
        uint8_t f;
        if (!r.Byte(&f)) return report.Fail();
        continue;
      }
      case rdb::kOpSelectDb: {
        report.Doing("read-len");
        uint64_t db;
        if (!r.Len(&db)) return report.Fail();
        report.Line("Selecting DB ID " + std::to_string(db));
        continue;
      }
      case rdb::kOpIdle:
      case rdb::kOpResizeDb:
      case rdb::kOpSlotInfo: {
        // (Lengths the check has no use for: one, two or three of them.)
        report.Doing("read-len");
        const int lens = op == rdb::kOpIdle ? 1 : op == rdb::kOpResizeDb ? 2 : 3;
        uint64_t n;
        for (int i = 0; i < lens; i++)
          if (!r.Len(&n)) return report.Fail();
        continue;
      }
      case rdb::kOpAux:
        report.Doing("read-aux");
        if (!r.String(&a) || !r.String(&b)) return report.Fail();
        report.Line("AUX FIELD " + std::string(a) + " = " + Quoted(b));
        continue;
      case rdb::kOpModuleAux:
        report.Doing("read-module-aux");
        r.Fail("The RDB file contains AUX module data: modules are not supported");
        return report.Fail();
      case rdb::kOpFunctionPreGa:
        report.Doing("read-functions");
        r.Fail("Pre-release function format not supported.");
        return report.Fail();
      case rdb::kOpFunction2:
        report.Doing("read-functions");
        if (!r.String(&a)) return report.Fail("Failed loading library, Failed loading library payload");
        res.functions++;
        continue;
      case rdb::kOpEof: {
        report.Doing("check-sum");
        uint64_t stored, computed;
        if (!ReadRdbChecksum(r, version, &stored, &computed)) return report.Fail();
        if (version >= 5 && stored == 0) {
          report.Line("RDB file was saved with checksum disabled: no check performed.");
        } else if (stored != computed) {
          r.Fail("RDB CRC error");
          return report.Fail();
        } else if (version >= 5) {
          report.Line("Checksum OK");
        }
        report.Line("\\o/ RDB looks OK! \\o/");
        report.Info();
        res.ok = true;
        res.end = r.consumed();
        return res;
      }
      default: {
        if (!rdb::IsObjectType(op)) {
          r.Fail("Invalid object type: " + std::to_string(op));
          return report.Fail();
        }
        report.Type(op);
        report.Doing("read-key");
        std::string key;
        if (!r.String(&key)) return report.Fail();
        report.Key(std::move(key));
        res.keys++;  // (as redis-check-rdb counts: once its name is read)
        report.Doing("read-object-value");
        Value value;
        const RdbLoadStatus st = LoadRdbObject(r, op, limits, now_ms, &value);
        if (st == RdbLoadStatus::kError) return report.Fail();
        if (st == RdbLoadStatus::kEmpty) res.empty++;
        else res.by_type[static_cast<size_t>(value.type())]++;
        if (expire_ms != -1) {
          res.expires++;
          if (expire_ms < now_ms) res.already_expired++;
        }
        expire_ms = -1;
        report.KeyDone();
        continue;
      }
    }
  }
}

int CheckRdbMain(const std::string& path, int64_t now_ms) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat sb {};
  const bool opened = fd >= 0 && ::fstat(fd, &sb) == 0;
  if (!opened || !S_ISREG(sb.st_mode)) {
    std::fprintf(stderr, "Cannot check RDB file %s: %s\n", path.c_str(),
                 !opened ? std::strerror(errno) : "not a regular file");
    if (fd >= 0) ::close(fd);
    return 1;
  }
  RdbReader r(fd, static_cast<uint64_t>(sb.st_size));
  std::string out = "[offset 0] Checking RDB file " + path + "\n";
  const RdbCheckResult res = CheckRdb(r, now_ms, &out);
  ::close(fd);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return res.ok ? 0 : 1;
}

}  // namespace peregrine
