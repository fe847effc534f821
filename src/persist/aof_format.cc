// The append-only file's formats (see aof_format.h).
#include "persist/aof_format.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "protocol/parser.h"

namespace peregrine {
namespace {

void FormatFile(std::string* out, const AofManifest::File& f) {
  *out += "file ";
  *out += NeedsRepr(f.name) ? Repr(f.name) : f.name;
  *out += " seq ";
  *out += std::to_string(f.seq);
  *out += " type ";
  *out += f.type;
  *out += '\n';
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// atoll's reading of a number (Redis reads seq with it): leading digits, 0 if none.
int64_t AtoLL(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) i++;
  int64_t v = 0;
  std::from_chars(s.data() + i, s.data() + s.size(), v);
  return v;
}

// "*<n>" or "$<n>" (a line without its "\n"; a "\r" before it is allowed).
bool HeaderNumber(std::string_view line, char prefix, int64_t* out) {
  if (line.empty() || line[0] != prefix) return false;
  const char* b = line.data() + 1;
  const char* e = line.data() + line.size();
  if (e > b && e[-1] == '\r') e--;
  auto [p, ec] = std::from_chars(b, e, *out);
  return ec == std::errc() && p == e;
}

size_t Digits(size_t n) {
  size_t d = 1;
  while (n >= 10) {
    n /= 10;
    d++;
  }
  return d;
}

// "<prefix><n>\r\n" at p; returns the end.
char* PutHeader(char* p, char prefix, size_t n) {
  *p++ = prefix;
  p = std::to_chars(p, p + 20, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

}  // namespace

std::string AofManifest::Format() const {
  std::string out;
  if (base) FormatFile(&out, *base);
  for (const File& f : history) FormatFile(&out, f);
  for (const File& f : incr) FormatFile(&out, f);
  return out;
}

bool AofManifest::Parse(std::string_view text, AofManifest* out, std::string* err) {
  *out = AofManifest{};
  int64_t maxseq = 0;
  size_t lines = 0;
  // Redis reads lines of at most 1024 bytes (MANIFEST_MAX_LINE).
  constexpr size_t kMaxLine = 1024;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos && text.size() > kMaxLine) {
      *err = "The AOF manifest file contains too long line";
      return false;
    }
    if (nl != std::string_view::npos && nl + 1 > kMaxLine) {
      *err = "The AOF manifest file contains too long line";
      return false;
    }
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    lines++;
    if (!line.empty() && line[0] == '#') continue;
    if (nl == std::string_view::npos) {
      *err = "The AOF manifest file contains too long line";  // Redis: no newline in the buffer
      return false;
    }
    while (!line.empty() && std::strchr(" \t\r", line.back()) != nullptr) line.remove_suffix(1);
    while (!line.empty() && std::strchr(" \t\r", line.front()) != nullptr) line.remove_prefix(1);
    std::vector<std::string> words;
    if (line.empty() || !SplitArgs(line, &words) || words.size() < 6 || words.size() % 2 != 0) {
      *err = "Invalid AOF manifest file format";
      return false;
    }
    File f;
    f.type = 0;
    for (size_t i = 0; i < words.size(); i += 2) {
      if (EqualsNoCase(words[i], "file")) {
        f.name = words[i + 1];
        if (f.name.find('/') != std::string::npos) {
          *err = "File can't be a path, just a filename";
          return false;
        }
      } else if (EqualsNoCase(words[i], "seq")) {
        f.seq = AtoLL(words[i + 1]);
      } else if (EqualsNoCase(words[i], "type")) {
        f.type = words[i + 1].empty() ? 0 : words[i + 1][0];
      }
    }
    if (f.name.empty() || f.seq == 0 || f.type == 0) {
      *err = "Invalid AOF manifest file format";
      return false;
    }
    if (f.type == 'b') {
      if (out->base) {
        *err = "Found duplicate base file information";
        return false;
      }
      out->base_seq = f.seq;
      out->base = std::move(f);
    } else if (f.type == 'h') {
      out->history.push_back(std::move(f));
    } else if (f.type == 'i') {
      if (f.seq <= maxseq) {
        *err = "Found a non-monotonic sequence number";
        return false;
      }
      maxseq = out->incr_seq = f.seq;
      out->incr.push_back(std::move(f));
    } else {
      *err = "Unknown AOF file type";
      return false;
    }
  }
  if (lines == 0) {
    *err = "Found an empty AOF manifest";
    return false;
  }
  return true;
}

std::string AofManifest::BaseName(std::string_view prefix, int64_t seq, bool rdb) {
  return std::string(prefix) + "." + std::to_string(seq) + ".base" + (rdb ? ".rdb" : ".aof");
}

std::string AofManifest::IncrName(std::string_view prefix, int64_t seq) {
  return std::string(prefix) + "." + std::to_string(seq) + ".incr.aof";
}

void AppendRespCommand(std::string* out, std::span<const std::string_view> args) {
  // The exact size first, then one resize (growing geometrically) and
  // plain stores: this runs for every logged command.
  size_t total = 3 + Digits(args.size());
  for (std::string_view a : args) total += 5 + Digits(a.size()) + a.size();
  const size_t old = out->size();
  if (out->capacity() < old + total) out->reserve(std::max(out->capacity() * 2, old + total));
  out->resize(old + total);
  char* p = out->data() + old;
  p = PutHeader(p, '*', args.size());
  for (std::string_view a : args) {
    p = PutHeader(p, '$', a.size());
    std::memcpy(p, a.data(), a.size());
    p += a.size();
    *p++ = '\r';
    *p++ = '\n';
  }
}

void AofChunk::Select(int db) {
  if (first_db_ < 0) {
    first_db_ = last_db_ = db;
    return;
  }
  if (db == last_db_) return;
  const std::string n = std::to_string(db);
  AppendRespCommand(&bytes_, {"SELECT", n});
  last_db_ = db;
}

AofReader::Result AofReader::Next(const char* data, size_t len) {
  args_.clear();
  needed_ = 0;
  size_t pos = 0;
  // A line ending in "\n" from `pos` (Redis reads lines with fgets, of at
  // most 1024 bytes; a longer header is malformed).
  auto line = [&](std::string_view* out) -> int {
    const void* nl = std::memchr(data + pos, '\n', std::min(len - pos, size_t{1024}));
    if (nl == nullptr) return len - pos >= 1024 ? -1 : 0;
    const size_t end = static_cast<size_t>(static_cast<const char*>(nl) - data);
    *out = std::string_view(data + pos, end - pos);
    pos = end + 1;
    return 1;
  };
  std::string_view l;
  for (;;) {
    if (pos == len) return Result::kNeedMore;
    const int r = line(&l);
    if (r == 0) return Result::kNeedMore;
    if (r < 0) return Result::kFormatError;
    if (l[0] == '#') continue;  // an annotation
    break;
  }
  int64_t argc = 0;
  if (!HeaderNumber(l, '*', &argc) || argc < 1) return Result::kFormatError;
  for (int64_t i = 0; i < argc; i++) {
    if (pos == len) return Result::kNeedMore;
    const int r = line(&l);
    if (r == 0) return Result::kNeedMore;
    int64_t n = 0;
    if (r < 0 || !HeaderNumber(l, '$', &n) || n < 0) return Result::kFormatError;
    const size_t need = static_cast<size_t>(n) + 2;
    if (len - pos < need) {
      needed_ = pos + need;
      needed_from_ = pos;
      return Result::kNeedMore;
    }
    args_.emplace_back(data + pos, static_cast<size_t>(n));
    pos += need;  // (Redis discards the two bytes after the argument unread)
  }
  consumed_ = pos;
  return Result::kCommand;
}

}  // namespace peregrine
