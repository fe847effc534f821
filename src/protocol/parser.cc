// RESP / inline request parsing (see parser.h). Error texts and limits are
// Redis's (networking.c: processMultibulkBuffer, processInlineBuffer).
#include "protocol/parser.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>

#include "core/numbers.h"

namespace peregrine {

void RequestParser::Reset() {
  mode_ = Mode::kStart;
  pos_ = 0;
  remaining_ = 0;
  bulk_len_ = -1;
  bulk_external_ = false;
  bytes_needed_ = 0;
  offsets_.clear();
  externals_.clear();
}

RequestParser::Result RequestParser::Fail(std::string msg) {
  error_ = std::move(msg);
  Reset();
  return Result::kError;
}

RequestParser::Result RequestParser::Done(const char* data, size_t consumed) {
  args_.clear();
  inline_command_ = mode_ == Mode::kInline;
  if (mode_ == Mode::kMultibulk) {
    for (auto [off, n] : offsets_) args_.emplace_back(off >= kExternal ? externals_[off - kExternal] : data + off, n);
  } else {
    for (const std::string& s : inline_args_) args_.emplace_back(s);
  }
  Reset();
  consumed_ = consumed;
  return Result::kCommand;
}

// The fast path: a well-formed multibulk command that is entirely in the
// buffer (nearly every request of a pipeline) is parsed in one pass with no
// state kept. Anything else — incomplete, malformed, unusual — returns false
// having changed nothing that matters, and the general path takes over.
bool RequestParser::ParseWholeCommand(const char* data, size_t len) {
  const char* p = data + 1;
  const char* const end = data + len;
  // Reads "<digits>\r\n": at most 18 digits, no leading zero.
  auto read_number = [&p, end](int64_t* out) {
    // One or two digits (command counts, key and small value lengths).
    if (end - p >= 4) {
      const unsigned d0 = static_cast<unsigned char>(p[0] - '0');
      const unsigned d1 = static_cast<unsigned char>(p[1] - '0');
      if (d0 < 10 && p[1] == '\r') {
        *out = d0;
        p += 3;
        return true;
      }
      if (d0 - 1 < 9 && d1 < 10 && p[2] == '\r') {
        *out = d0 * 10 + d1;
        p += 4;
        return true;
      }
    }
    const char* start = p;
    int64_t v = 0;
    while (p < end && p - start < 18 && static_cast<unsigned char>(*p - '0') < 10) v = v * 10 + (*p++ - '0');
    const size_t digits = static_cast<size_t>(p - start);
    if (digits == 0 || digits > 18 || (digits > 1 && *start == '0') || end - p < 2 || *p != '\r') return false;
    p += 2;
    *out = v;
    return true;
  };
  int64_t count;
  if (!read_number(&count) || count <= 0) return false;
  args_.clear();
  for (int64_t i = 0; i < count; i++) {
    int64_t n;
    if (p >= end || *p++ != '$' || !read_number(&n) || static_cast<uint64_t>(n) > limits_.max_bulk_len ||
        end - p < n + 2)
      return false;
    args_.emplace_back(p, static_cast<size_t>(n));
    p += n + 2;
  }
  consumed_ = static_cast<size_t>(p - data);
  inline_command_ = false;
  return true;
}

RequestParser::Result RequestParser::Parse(const char* data, size_t len) {
  bytes_needed_ = 0;
  if (mode_ == Mode::kStart) {
    if (len == 0) return Result::kNeedMore;
    if (data[0] == '*' && ParseWholeCommand(data, len)) return Result::kCommand;
    mode_ = data[0] == '*' ? Mode::kMultibulk : Mode::kInline;
    if (mode_ == Mode::kMultibulk) pos_ = 0;
  }
  return mode_ == Mode::kMultibulk ? ParseMultibulk(data, len) : ParseInline(data, len);
}

RequestParser::Result RequestParser::ParseInline(const char* data, size_t len) {
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', len));
  if (nl == nullptr) {
    if (len > kMaxInlineSize) return Fail("ERR Protocol error: too big inline request");
    return Result::kNeedMore;
  }
  size_t line_len = static_cast<size_t>(nl - data);
  size_t consumed = line_len + 1;
  if (line_len > 0 && data[line_len - 1] == '\r') line_len--;
  inline_args_.clear();
  if (!SplitArgs(std::string_view(data, line_len), &inline_args_))
    return Fail("ERR Protocol error: unbalanced quotes in request");
  return Done(data, consumed);
}

namespace {

enum class Header { kOk, kNeedMore, kTooBig, kInvalid };

// Reads the decimal after the type byte of a "*<n>\r\n" or "$<n>\r\n" line
// starting at p (avail bytes available). On kOk, *value is the number and
// *consumed the length of the whole line including "\r\n".
Header ReadHeader(const char* p, size_t avail, int64_t* value, size_t* consumed) {
  // Fast path: a positive number without leading zeros, up to 18 digits (no
  // overflow possible), directly followed by "\r\n" — every well-formed request.
  size_t i = 1;
  if (i < avail && p[i] >= '1' && p[i] <= '9') {
    int64_t v = 0;
    while (i < avail && i <= 18 && static_cast<unsigned char>(p[i] - '0') < 10) v = v * 10 + (p[i++] - '0');
    if (i + 1 < avail && p[i] == '\r') {
      *value = v;
      *consumed = i + 2;  // as Redis, the byte after '\r' is taken to be '\n'
      return Header::kOk;
    }
    if (i >= avail || (p[i] == '\r' && i + 1 >= avail)) return Header::kNeedMore;
  }
  // Anything else: find the '\r' and apply Redis's integer rules exactly.
  const char* cr = static_cast<const char*>(std::memchr(p, '\r', avail));
  if (cr == nullptr) return avail > RequestParser::kMaxInlineSize ? Header::kTooBig : Header::kNeedMore;
  size_t line = static_cast<size_t>(cr - p);
  if (line > RequestParser::kMaxInlineSize) return Header::kTooBig;
  if (line + 2 > avail) return Header::kNeedMore;  // the '\n' has not arrived
  if (!ParseInt64(std::string_view(p + 1, line - 1), value)) return Header::kInvalid;
  *consumed = line + 2;
  return Header::kOk;
}

}  // namespace

RequestParser::Result RequestParser::ParseMultibulk(const char* data, size_t len) {
  if (pos_ == 0) {
    int64_t count;
    size_t consumed;
    switch (ReadHeader(data, len, &count, &consumed)) {
      case Header::kNeedMore: return Result::kNeedMore;
      case Header::kTooBig: return Fail("ERR Protocol error: too big mbulk count string");
      case Header::kInvalid: return Fail("ERR Protocol error: invalid multibulk length");
      case Header::kOk: break;
    }
    if (count > INT_MAX) return Fail("ERR Protocol error: invalid multibulk length");
    pos_ = consumed;
    offsets_.clear();
    if (count <= 0) return Done(data, pos_);
    remaining_ = count;
    // Reserve for what is claimed only up to a bound: the count is not trusted.
    offsets_.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
  }
  while (remaining_ > 0) {
    if (bulk_len_ < 0) {
      if (pos_ >= len) return Result::kNeedMore;
      const char* start = data + pos_;
      int64_t n;
      size_t consumed;
      Header h = ReadHeader(start, len - pos_, &n, &consumed);
      if (h == Header::kNeedMore) return Result::kNeedMore;
      if (h == Header::kTooBig) return Fail("ERR Protocol error: too big bulk count string");
      if (start[0] != '$') {
        std::string msg = "ERR Protocol error: expected '$', got '";
        msg.push_back(start[0]);
        msg += "'";
        return Fail(std::move(msg));
      }
      if (h == Header::kInvalid || n < 0 || static_cast<uint64_t>(n) > limits_.max_bulk_len)
        return Fail("ERR Protocol error: invalid bulk length");
      bulk_len_ = n;
      pos_ += consumed;
    }
    // An external bulk's bytes are not in the buffer: only its "\r\n" is.
    size_t need = pos_ + (bulk_external_ ? 0 : static_cast<size_t>(bulk_len_)) + 2;
    if (need > len) {
      bytes_needed_ = need;
      return Result::kNeedMore;
    }
    if (bulk_external_) {
      offsets_.emplace_back(kExternal + externals_.size() - 1, static_cast<size_t>(bulk_len_));
      bulk_external_ = false;
    } else {
      offsets_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    }
    pos_ = need;
    bulk_len_ = -1;
    remaining_--;
  }
  return Done(data, pos_);
}

namespace {

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  // Like the C original, a NUL byte ends the line.
  size_t nul = line.find('\0');
  if (nul != std::string_view::npos) line = line.substr(0, nul);
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && IsSpace(line[i])) i++;
    if (i >= n) return true;
    std::string current;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;  // unterminated quotes
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && IsHex(line[i + 2]) && IsHex(line[i + 3])) {
          current.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < n) {
          i++;
          char e = line[i];
          switch (e) {
            case 'n': current.push_back('\n'); break;
            case 'r': current.push_back('\r'); break;
            case 't': current.push_back('\t'); break;
            case 'b': current.push_back('\b'); break;
            case 'a': current.push_back('\a'); break;
            default: current.push_back(e); break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          current.push_back(c);
        }
      } else if (in_single) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          current.push_back('\'');
        } else if (c == '\'') {
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          current.push_back(c);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        switch (c) {
          case ' ': case '\n': case '\r': case '\t': done = true; break;
          case '"': in_double = true; break;
          case '\'': in_single = true; break;
          default: current.push_back(c); break;
        }
      }
      if (i < n) i++;
    }
    out->push_back(std::move(current));
  }
}

// Whether a word needs quoting for SplitArgs to read it back as it is
// (Redis's sdsneedsrepr: empty words are the caller's to handle).
bool NeedsRepr(std::string_view s) {
  for (unsigned char c : s)
    if (c == '\\' || c == '"' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b' || c < 32 ||
        c > 126 || c == ' ')
      return true;
  return false;
}

// The word quoted as sdscatrepr writes it (SplitArgs reads it back). Runs
// of plain characters go in at once (MONITOR writes every argument so).
void AppendRepr(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out += '"';
  size_t run = 0;
  for (size_t i = 0; i < s.size(); i++) {
#if defined(__SSE2__)
    // 16 plain bytes at a time (SSE2: every x86-64): none below 32, above
    // 126 (signed: negative), a backslash or a quote.
    while (i + 16 <= s.size()) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      const __m128i bad = _mm_or_si128(
          _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(32)), _mm_cmpgt_epi8(v, _mm_set1_epi8(126))),
          _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), _mm_cmpeq_epi8(v, _mm_set1_epi8('"'))));
      const int mask = _mm_movemask_epi8(bad);
      if (mask != 0) {
        i += static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
        break;
      }
      i += 16;
    }
    if (i >= s.size()) break;
#endif
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 32 && c <= 126 && c != '\\' && c != '"') continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '\\': *out += "\\\\"; break;
      case '"': *out += "\\\""; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\a': *out += "\\a"; break;
      case '\b': *out += "\\b"; break;
      default: {
        const char hex[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
        out->append(hex, 4);
      }
    }
  }
  out->append(s.data() + run, s.size() - run);
  *out += '"';
}

std::string Repr(std::string_view s) {
  std::string out;
  AppendRepr(&out, s);
  return out;
}

}  // namespace peregrine
