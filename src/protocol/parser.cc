// RESP / inline request parsing (see parser.h). Error texts and limits are
// Redis's (networking.c: processMultibulkBuffer, processInlineBuffer).
#include "protocol/parser.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>

#include "core/numbers.h"

namespace peregrine {

void RequestParser::Reset() {
  mode_ = Mode::kStart;
  pos_ = 0;
  remaining_ = 0;
  bulk_len_ = -1;
  bytes_needed_ = 0;
  offsets_.clear();
}

RequestParser::Result RequestParser::Fail(std::string msg) {
  error_ = std::move(msg);
  Reset();
  return Result::kError;
}

RequestParser::Result RequestParser::Done(const char* data, size_t consumed) {
  args_.clear();
  if (mode_ == Mode::kMultibulk) {
    for (auto [off, n] : offsets_) args_.emplace_back(data + off, n);
  } else {
    for (const std::string& s : inline_args_) args_.emplace_back(s);
  }
  Reset();
  consumed_ = consumed;
  return Result::kCommand;
}

RequestParser::Result RequestParser::Parse(const char* data, size_t len) {
  bytes_needed_ = 0;
  if (mode_ == Mode::kStart) {
    if (len == 0) return Result::kNeedMore;
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

RequestParser::Result RequestParser::ParseMultibulk(const char* data, size_t len) {
  if (pos_ == 0) {
    // "*<count>\r\n"
    const char* cr = static_cast<const char*>(std::memchr(data, '\r', len));
    if (cr == nullptr) {
      if (len > kMaxInlineSize) return Fail("ERR Protocol error: too big mbulk count string");
      return Result::kNeedMore;
    }
    size_t line = static_cast<size_t>(cr - data);
    if (line > kMaxInlineSize) return Fail("ERR Protocol error: too big mbulk count string");
    if (line + 2 > len) return Result::kNeedMore;  // the '\n' has not arrived
    int64_t count;
    if (!ParseInt64(std::string_view(data + 1, line - 1), &count) || count > INT_MAX)
      return Fail("ERR Protocol error: invalid multibulk length");
    pos_ = line + 2;
    if (count <= 0) {
      offsets_.clear();
      return Done(data, pos_);
    }
    remaining_ = count;
    offsets_.clear();
    // Reserve for what is claimed only up to a bound: the count is not trusted.
    offsets_.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
  }
  while (remaining_ > 0) {
    if (bulk_len_ < 0) {
      // "$<len>\r\n"
      if (pos_ >= len) return Result::kNeedMore;
      const char* start = data + pos_;
      const char* cr = static_cast<const char*>(std::memchr(start, '\r', len - pos_));
      if (cr == nullptr) {
        if (len - pos_ > kMaxInlineSize) return Fail("ERR Protocol error: too big bulk count string");
        return Result::kNeedMore;
      }
      size_t line = static_cast<size_t>(cr - start);
      if (line > kMaxInlineSize) return Fail("ERR Protocol error: too big bulk count string");
      if (pos_ + line + 2 > len) return Result::kNeedMore;
      if (start[0] != '$') {
        std::string msg = "ERR Protocol error: expected '$', got '";
        msg.push_back(start[0]);
        msg += "'";
        return Fail(std::move(msg));
      }
      int64_t n;
      if (!ParseInt64(std::string_view(start + 1, line - 1), &n) || n < 0 ||
          static_cast<uint64_t>(n) > limits_.max_bulk_len)
        return Fail("ERR Protocol error: invalid bulk length");
      bulk_len_ = n;
      pos_ += line + 2;
    }
    size_t need = pos_ + static_cast<size_t>(bulk_len_) + 2;
    if (need > len) {
      bytes_needed_ = need;
      return Result::kNeedMore;
    }
    offsets_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
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

}  // namespace peregrine
