// The script fuzzer's checker of the reply stream.
#include "script/resp_checker.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace peregrine_fuzz {

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "script_fuzzer: %s%s%.*s\n", what, detail.empty() ? "" : ": ",
               static_cast<int>(std::min<size_t>(detail.size(), 400)), detail.data());
  std::abort();
}

void RespChecker::Feed(const char* p, size_t n) {
  while (n > 0) {
    switch (state_) {
      case State::kLine: {
        const void* nl = std::memchr(p, '\n', n);
        const size_t take = nl == nullptr ? n : static_cast<size_t>(static_cast<const char*>(nl) - p) + 1;
        line_.append(p, take);
        p += take;
        n -= take;
        if (nl != nullptr) {
          Line();
          line_.clear();
        }
        break;
      }
      case State::kPayload: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(n, payload_left_));
        if (verbatim_ && payload_seen_ <= 3 && payload_seen_ + take > 3 && p[3 - payload_seen_] != ':')
          Fail("a verbatim string without ':' after its 3-byte format", line_);
        payload_seen_ += take;
        payload_left_ -= take;
        p += take;
        n -= take;
        if (payload_left_ == 0) state_ = State::kCr;
        break;
      }
      case State::kCr:
        if (*p != '\r') Fail("a bulk string longer than its length", line_);
        state_ = State::kLf;
        p++;
        n--;
        break;
      case State::kLf:
        if (*p != '\n') Fail("a bulk string not ended by CRLF", line_);
        state_ = State::kLine;
        p++;
        n--;
        line_.clear();
        Done(false);
        break;
    }
  }
}

bool RespChecker::Int(std::string_view s, int64_t* v) {
  if (s.empty() || s[0] == '+') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size();
}

void RespChecker::Line() {
  if (line_.size() < 3 || line_[line_.size() - 2] != '\r') Fail("a reply line not ended by CRLF", line_);
  const char type = line_[0];
  const std::string_view body(line_.data() + 1, line_.size() - 3);
  if (body.find('\r') != std::string_view::npos) Fail("a CR inside a reply line", line_);
  if (!resp3_ && std::string_view("_,#(=~%>|").find(type) != std::string_view::npos)
    Fail("a RESP3 type on a RESP2 connection", line_);
  if (stack_.empty() && !awaiting_value_) first_line_ = line_;
  int64_t n = 0;
  switch (type) {
    case '+':
    case '-':
      if (type == '-' && stack_.empty()) errors_++;
      Done(false);
      return;
    case ':':
      if (!Int(body, &n)) Fail("a malformed integer", line_);
      Done(false);
      return;
    case '(': {
      const std::string_view digits = !body.empty() && body[0] == '-' ? body.substr(1) : body;
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
        Fail("a malformed big number", line_);
      Done(false);
      return;
    }
    case ',': {
      if (body != "inf" && body != "-inf" && body != "nan") {
        const std::string text(body);
        char* end = nullptr;
        std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() ||
            text.find_first_not_of("0123456789.-+eE") != std::string::npos)
          Fail("a malformed double", line_);
      }
      Done(false);
      return;
    }
    case '#':
      if (body != "t" && body != "f") Fail("a malformed boolean", line_);
      Done(false);
      return;
    case '_':
      if (!body.empty()) Fail("a malformed null", line_);
      Done(false);
      return;
    case '$':
    case '=':
    case '!':
      if (!Int(body, &n) || n < (type == '$' ? -1 : 0)) Fail("a malformed bulk length", line_);
      if (type == '=' && n < 4) Fail("a verbatim string shorter than its format", line_);
      if (n == -1) {
        Done(false);
        return;
      }
      payload_left_ = static_cast<uint64_t>(n);
      payload_seen_ = 0;
      verbatim_ = type == '=';
      state_ = n == 0 ? State::kCr : State::kPayload;
      return;
    case '*':
    case '~':
    case '%':
    case '>':
    case '|': {
      if (!Int(body, &n) || n < (type == '*' ? -1 : 0) || n > (int64_t{1} << 40))
        Fail("a malformed aggregate length", line_);
      const Kind kind = type == '>' ? Kind::kPush : type == '|' ? Kind::kAttribute : Kind::kValue;
      if (type == '%' || type == '|') n *= 2;
      if (n <= 0) {
        if (kind != Kind::kAttribute) Done(kind == Kind::kPush);
        return;
      }
      stack_.push_back({n, kind});
      if (kind == Kind::kAttribute) awaiting_value_ = true;
      return;
    }
    default:
      Fail("a reply of no RESP type", line_);
  }
}

// A value is complete: it counts for the aggregate it is in, or is a
// reply of its own (not a push message).
void RespChecker::Done(bool push) {
  for (;;) {
    if (stack_.empty()) {
      awaiting_value_ = false;
      if (!push) {
        replies_++;
        last_ = first_line_;
      }
      return;
    }
    Level& top = stack_.back();
    if (--top.left > 0) return;
    const Kind kind = top.kind;
    stack_.pop_back();
    if (kind == Kind::kAttribute) return;  // the value it annotates is still to come
    push = kind == Kind::kPush;
  }
}

}  // namespace peregrine_fuzz
