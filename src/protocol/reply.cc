// RESP2/RESP3 reply encoding (see reply.h).
#include "protocol/reply.h"

#include <cstring>

#include "core/numbers.h"

namespace peregrine {

namespace {
// Writes "<type><n>\r\n" at p; returns bytes written (p must have 24 bytes).
size_t WriteHeader(char* p, char type, int64_t n) {
  p[0] = type;
  size_t len = 1 + FormatInt64(n, p + 1);
  p[len] = '\r';
  p[len + 1] = '\n';
  return len + 2;
}
}  // namespace

void ReplyWriter::SimpleString(std::string_view s) {
  char* p = out_->Reserve(s.size() + 3);
  p[0] = '+';
  std::memcpy(p + 1, s.data(), s.size());
  p[s.size() + 1] = '\r';
  p[s.size() + 2] = '\n';
  out_->Commit(s.size() + 3);
}

void ReplyWriter::ErrorCounted(std::string_view msg) {
  if (errors_ != nullptr) errors_->OnCountedErrorReply();
  WriteError(msg);
}

void ReplyWriter::Error(std::string_view msg) {
  if (errors_ != nullptr) errors_->OnErrorReply(msg);
  WriteError(msg);
}

void ReplyWriter::WriteError(std::string_view msg) {
  char* p = out_->Reserve(msg.size() + 3);
  p[0] = '-';
  for (size_t i = 0; i < msg.size(); i++) {
    char c = msg[i];
    p[i + 1] = (c == '\r' || c == '\n') ? ' ' : c;
  }
  p[msg.size() + 1] = '\r';
  p[msg.size() + 2] = '\n';
  out_->Commit(msg.size() + 3);
}

void ReplyWriter::Integer(int64_t v) {
  char* p = out_->Reserve(24);
  out_->Commit(WriteHeader(p, ':', v));
}

void ReplyWriter::BulkLent(std::string_view s, const char* block) {
  char* p = out_->Reserve(24);
  out_->Commit(WriteHeader(p, '$', static_cast<int64_t>(s.size())));
  output_->AppendRef(s.data(), s.size(), block);
  out_->Append("\r\n", 2);
}

void ReplyWriter::Bulk(std::string_view s) {
  char* p = out_->Reserve(s.size() + 26);
  size_t h = WriteHeader(p, '$', static_cast<int64_t>(s.size()));
  // An empty view may have no data at all: memcpy from null is undefined
  // even for 0 bytes (UBSan under the fuzzer).
  if (!s.empty()) std::memcpy(p + h, s.data(), s.size());
  p[h + s.size()] = '\r';
  p[h + s.size() + 1] = '\n';
  out_->Commit(h + s.size() + 2);
}

void ReplyWriter::Null() {
  if (resp_ >= 3)
    out_->Append("_\r\n", 3);
  else
    out_->Append("$-1\r\n", 5);
}

void ReplyWriter::NullArray() {
  if (resp_ >= 3)
    out_->Append("_\r\n", 3);
  else
    out_->Append("*-1\r\n", 5);
}

void ReplyWriter::AggregateHeader(char type, size_t n) {
  char* p = out_->Reserve(24);
  out_->Commit(WriteHeader(p, type, static_cast<int64_t>(n)));
}

void ReplyWriter::MapHeader(size_t n) {
  if (resp_ >= 3)
    AggregateHeader('%', n);
  else
    AggregateHeader('*', n * 2);
}

void ReplyWriter::SetHeader(size_t n) { AggregateHeader(resp_ >= 3 ? '~' : '*', n); }

void ReplyWriter::PushHeader(size_t n) { AggregateHeader(resp_ >= 3 ? '>' : '*', n); }

void ReplyWriter::Double(double v) {
  char buf[kMaxDoubleChars];
  DoubleText(std::string_view(buf, FormatDouble(v, buf)));
}

void ReplyWriter::DoubleText(std::string_view text) {
  if (resp_ >= 3) {
    out_->Append(',');
    out_->Append(text);
    out_->Append("\r\n", 2);
  } else {
    Bulk(text);
  }
}

void ReplyWriter::Bool(bool v) {
  if (resp_ >= 3)
    out_->Append(v ? "#t\r\n" : "#f\r\n", 4);
  else
    out_->Append(v ? ":1\r\n" : ":0\r\n", 4);
}

void ReplyWriter::BigNumber(std::string_view digits) {
  if (resp_ >= 3) {
    out_->Append('(');
    out_->Append(digits);
    out_->Append("\r\n", 2);
  } else {
    Bulk(digits);
  }
}

void ReplyWriter::Verbatim(std::string_view s, std::string_view format) {
  if (resp_ < 3) {
    Bulk(s);
    return;
  }
  char* p = out_->Reserve(24);
  out_->Commit(WriteHeader(p, '=', static_cast<int64_t>(s.size() + 4)));
  // Always three bytes, as the length says: a shorter format (a script's
  // verbatim_string table can give any) is padded with spaces.
  char fmt[3] = {' ', ' ', ' '};
  format.copy(fmt, 3);
  out_->Append(std::string_view(fmt, 3));
  out_->Append(':');
  out_->Append(s);
  out_->Append("\r\n", 2);
}

}  // namespace peregrine
