// The AOF check (aof_check.h): the reader the load uses (AofReader), over
// a file read a megabyte at a time, and the RDB check for a base or a
// preamble.
#include "persist/aof_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/numbers.h"
#include "persist/aof_format.h"
#include "persist/rdb_check.h"
#include "persist/rdb_reader.h"

namespace peregrine {

namespace {

constexpr size_t kReadSize = size_t{1} << 20;

// An offset as redis-check-aof prints it ("0x%16llx").
std::string Hex(uint64_t offset) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%16llx", static_cast<unsigned long long>(offset));
  return buf;
}

// Whether `rest` (the bytes after the last command) is only whole
// annotation lines, which a load skips.
bool OnlyAnnotations(std::string_view rest) {
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    if (rest[0] != '#' || nl == std::string_view::npos) return false;
    rest.remove_prefix(nl + 1);
  }
  return true;
}

// Reads `n` bytes more onto *buf; false at the end (or an error: *failed).
bool ReadMore(int fd, std::string* buf, size_t n, bool* failed) {
  const size_t old = buf->size();
  buf->resize(old + n);
  ssize_t got;
  do {
    got = ::read(fd, buf->data() + old, n);
  } while (got < 0 && errno == EINTR);
  buf->resize(old + static_cast<size_t>(std::max<ssize_t>(got, 0)));
  if (got < 0) *failed = true;
  return got > 0;
}

enum class Verdict { kValid, kFixed, kInvalid };

// One file checked and reported as redis-check-aof reports it: `name` as
// the report names it (a manifest's names are the manifest's), `label`
// its kind ("AOF", "BASE AOF", "INCR AOF").
struct FileCheck {
  const AofCheckOptions& options;
  int64_t now_ms;

  Verdict Check(const std::string& path, const std::string& name, const std::string& label, bool last) {
    std::FILE* out = options.out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat sb {};
    if (fd < 0 || ::fstat(fd, &sb) != 0) {
      std::fprintf(out, "Cannot open %s %s: %s\n", label.c_str(), name.c_str(), std::strerror(errno));
      if (fd >= 0) ::close(fd);
      return Verdict::kInvalid;
    }
    const uint64_t size = static_cast<uint64_t>(sb.st_size);
    char magic[5] = {};
    const bool rdb = ::pread(fd, magic, 5, 0) == 5 && std::memcmp(magic, "REDIS", 5) == 0;
    if (label == "BASE AOF") std::fprintf(out, "Start to check BASE AOF (%s format).\n", rdb ? "RDB" : "AOF");
    uint64_t from = 0;
    if (rdb) {
      RdbReader r(fd, size);
      std::string report = "[offset 0] Checking RDB file " + name + "\n";
      const RdbCheckResult res = CheckRdb(r, now_ms, &report);
      std::fputs(report.c_str(), out);
      if (!res.ok) {
        // (Cutting the file cannot mend its snapshot.)
        std::fprintf(out, "RDB preamble of AOF file is not sane, aborting.\n");
        ::close(fd);
        return Verdict::kInvalid;
      }
      from = res.end;
      std::fprintf(out, "RDB preamble is OK, proceeding with AOF tail...\n");
    }
    const AofFileCheck c = CheckAofCommands(fd, from);
    ::close(fd);
    if (c.format_error) std::fprintf(out, "AOF %s format error\n", name.c_str());
    if (!c.error.empty()) std::fprintf(out, "%s\n", c.error.c_str());
    std::fprintf(out, "AOF analyzed: filename=%s, size=%llu, ok_up_to=%llu, ok_up_to_line=%llu, diff=%llu\n",
                 name.c_str(), static_cast<unsigned long long>(c.size), static_cast<unsigned long long>(c.ok_up_to),
                 static_cast<unsigned long long>(c.ok_up_to_line),
                 static_cast<unsigned long long>(c.size - c.ok_up_to));
    if (c.whole()) {
      std::fprintf(out, "%s %s is valid\n", label.c_str(), name.c_str());
      return Verdict::kValid;
    }
    if (!c.readable) return Verdict::kInvalid;
    if (!options.fix) {
      std::fprintf(out, "AOF %s is not valid. Use the --fix option to try fixing it.\n", name.c_str());
      return Verdict::kInvalid;
    }
    if (!last) {
      // (The files after it would replay on top of a missing end.)
      std::fprintf(out, "%s %s is not the last file: it cannot be fixed by truncating it\n", label.c_str(),
                   name.c_str());
      return Verdict::kInvalid;
    }
    return Truncate(path, name, c);
  }

  Verdict Truncate(const std::string& path, const std::string& name, const AofFileCheck& c) {
    std::FILE* out = options.out;
    std::fprintf(out, "This will shrink the AOF %s from %llu bytes, with %llu bytes, to %llu bytes\n",
                 name.c_str(), static_cast<unsigned long long>(c.size),
                 static_cast<unsigned long long>(c.size - c.ok_up_to), static_cast<unsigned long long>(c.ok_up_to));
    std::fprintf(out, "Continue? [y/N]: ");
    std::fflush(out);
    char answer[16] = {};
    if (std::fgets(answer, sizeof(answer), options.in) == nullptr || (answer[0] != 'y' && answer[0] != 'Y')) {
      std::fprintf(out, "Aborting...\n");
      return Verdict::kInvalid;
    }
    if (::truncate(path.c_str(), static_cast<off_t>(c.ok_up_to)) != 0) {
      std::fprintf(out, "Failed to truncate AOF %s: %s\n", name.c_str(), std::strerror(errno));
      return Verdict::kInvalid;
    }
    std::fprintf(out, "Successfully truncated AOF %s\n", name.c_str());
    return Verdict::kFixed;
  }
};

// Whether the file is a manifest: its first line that is not blank or a
// comment names a file.
bool LooksLikeManifest(const std::string& path, std::string* text) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool failed = false;
  text->clear();
  // (A manifest is small; an AOF is read no further than its first 4 KB.)
  while (text->size() < 4096 && ReadMore(fd, text, 4096, &failed)) {
  }
  bool more = text->size() >= 4096;
  std::string_view t(*text);
  bool manifest = false;
  while (!t.empty()) {
    const size_t nl = t.find('\n');
    std::string_view line = t.substr(0, nl);
    t.remove_prefix(nl == std::string_view::npos ? t.size() : nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    manifest = line.starts_with("file ");
    break;
  }
  // (The whole manifest, then: it is parsed.)
  while (manifest && more && ReadMore(fd, text, kReadSize, &failed)) {
  }
  ::close(fd);
  return manifest && !failed;
}

}  // namespace

AofFileCheck CheckAofCommands(int fd, uint64_t from) {
  AofFileCheck c;
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || ::lseek(fd, static_cast<off_t>(from), SEEK_SET) < 0) {
    c.readable = false;
    c.error = std::string("Cannot read the file: ") + std::strerror(errno);
    return c;
  }
  c.size = static_cast<uint64_t>(sb.st_size);
  c.ok_up_to = from;
  AofReader reader;
  std::string buf;
  uint64_t base = from;  // the file's offset of buf[0]
  size_t pos = 0;
  uint64_t lines = 0;    // newlines in the whole commands read
  bool in_multi = false, ended = false, failed = false;
  uint64_t last_arg = 0;  // where the last command's last argument starts (redis-check-aof's MULTI offset)
  // Where reading stopped (an offset in buf): redis-check-aof's line is one
  // past the newlines before it.
  auto stop_at = [&](size_t at) {
    c.ok_up_to_line = 1 + lines + static_cast<uint64_t>(std::count(buf.begin() + pos, buf.begin() + at, '\n'));
  };
  for (;;) {
    const AofReader::Result res = reader.Next(buf.data() + pos, buf.size() - pos);
    if (res == AofReader::Result::kCommand) {
      const size_t n = reader.consumed();
      const std::string_view name = reader.args()[0];
      last_arg = base + static_cast<uint64_t>(reader.args().back().data() - buf.data());
      lines += static_cast<uint64_t>(std::count(buf.data() + pos, buf.data() + pos + n, '\n'));
      pos += n;
      c.commands++;
      if (EqualsIgnoreCase(name, "multi")) in_multi = true;
      if (EqualsIgnoreCase(name, "exec")) in_multi = false;
      if (!in_multi) c.ok_up_to = base + pos;
      continue;
    }
    if (res == AofReader::Result::kFormatError) {
      c.format_error = true;
      stop_at(pos);
      break;
    }
    if (ended) {
      if (failed) {
        c.readable = false;
        c.error = std::string("Cannot read the file: ") + std::strerror(errno);
      } else if (reader.needed() > 0 && !OnlyAnnotations(std::string_view(buf).substr(pos))) {
        // (Cut inside an argument; a cut inside a header line is told by
        // the analysis alone, as redis-check-aof does.)
        const size_t at = pos + reader.needed_from();
        c.error = Hex(base + at) + ": Expected to read " + std::to_string(reader.needed() - reader.needed_from()) +
                  " bytes, got " + std::to_string(buf.size() - at) + " bytes";
        stop_at(at);
        break;
      } else if (in_multi && OnlyAnnotations(std::string_view(buf).substr(pos))) {
        c.error = Hex(last_arg) + ": Reached EOF before reading EXEC for MULTI";
      } else if (OnlyAnnotations(std::string_view(buf).substr(pos))) {
        c.ok_up_to = base + buf.size();  // (annotations after the last command)
      }
      stop_at(buf.size());
      break;
    }
    // More of the file: what is consumed goes (the window keeps the
    // command in progress), and at least what that command needs comes.
    buf.erase(0, pos);
    base += pos;
    pos = 0;
    const size_t need = reader.needed() > buf.size() ? reader.needed() - buf.size() : 0;
    ended = !ReadMore(fd, &buf, std::max(kReadSize, need), &failed);
  }
  return c;
}

int CheckAofMain(const std::string& path, const AofCheckOptions& options, int64_t now_ms) {
  FileCheck check{options, now_ms};
  std::string text;
  if (!LooksLikeManifest(path, &text)) {
    std::fprintf(options.out, "Start checking Old-Style AOF\n");
    return check.Check(path, path, "AOF", /*last=*/true) == Verdict::kInvalid ? 1 : 0;
  }
  std::fprintf(options.out, "Start checking Multi Part AOF\n");
  AofManifest m;
  std::string err;
  if (!AofManifest::Parse(text, &m, &err)) {
    std::fprintf(options.out, "Invalid AOF manifest file %s: %s\n", path.c_str(), err.c_str());
    return 1;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  if (m.base.has_value() &&
      check.Check(dir + m.base->name, m.base->name, "BASE AOF", /*last=*/m.incr.empty()) == Verdict::kInvalid)
    return 1;
  if (!m.incr.empty()) std::fprintf(options.out, "Start to check INCR files.\n");
  for (size_t i = 0; i < m.incr.size(); i++) {
    const AofManifest::File& f = m.incr[i];
    if (check.Check(dir + f.name, f.name, "INCR AOF", /*last=*/i + 1 == m.incr.size()) == Verdict::kInvalid)
      return 1;
  }
  std::fprintf(options.out, "All AOF files and manifest are valid\n");
  return 0;
}

}  // namespace peregrine
