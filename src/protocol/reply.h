// The reply writer: appends RESP2 or RESP3 replies to a connection's output
// buffer. Where RESP3 has a type RESP2 lacks, the RESP2 form is what Redis
// sends (a map is a flat array, a double a bulk string, null is "$-1").
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/buffer.h"
#include "protocol/output_buffer.h"

namespace peregrine {

// Told of every error reply (for INFO errorstats and failed_calls).
class ErrorSink {
 public:
  virtual ~ErrorSink() = default;
  virtual void OnErrorReply(std::string_view msg) = 0;
  // An error reply whose error was counted already (ErrorCounted).
  virtual void OnCountedErrorReply() {}
};

class ReplyWriter {
 public:
  // Bulk strings at least this long may be sent by reference (BulkLent):
  // below it a copy costs less than a reference.
  static constexpr size_t kMinLentBulk = 1024;

  // Replies copied into a flat buffer (a batch for another thread).
  ReplyWriter(Buffer* out, int resp, ErrorSink* errors = nullptr) : out_(out), resp_(resp), errors_(errors) {}
  // Replies to a connection's output, which can keep references to large
  // values (BulkLent).
  ReplyWriter(OutputBuffer* out, int resp, ErrorSink* errors = nullptr)
      : out_(&out->bytes()), output_(out), resp_(resp), errors_(errors) {}

  int resp() const { return resp_; }
  void set_resp(int resp) { resp_ = resp; }
  Buffer* buffer() { return out_; }

  // Whether the replies go to a connection's output, which can keep
  // references (BulkLent; the caller also checks that the threading contract
  // of core/lent_blocks.h allows one: CommandContext::MayLend).
  bool has_output() const { return output_ != nullptr; }
  // A bulk string whose bytes stay in `block` (lent to the output until they
  // are written). REQUIRES: has_output().
  void BulkLent(std::string_view s, const char* block);

  void Ok() { out_->Append("+OK\r\n", 5); }
  void SimpleString(std::string_view s);
  // `msg` includes its code ("ERR ...", "WRONGTYPE ..."); CR/LF become spaces.
  void Error(std::string_view msg);
  // An error whose statistics were counted where it happened (a script's
  // error from a command it called): the reply still tells the sink, which
  // counts the running command as failed (Redis's
  // ERR_REPLY_FLAG_NO_STATS_UPDATE).
  void ErrorCounted(std::string_view msg);
  void Integer(int64_t v);
  void Bulk(std::string_view s);
  void Null();       // missing value: "$-1" / "_"
  void NullArray();  // missing aggregate: "*-1" / "_"
  void ArrayHeader(size_t n) { AggregateHeader('*', n); }
  void MapHeader(size_t n);  // n pairs
  void SetHeader(size_t n);
  void PushHeader(size_t n);
  void Double(double v);
  // A double already formatted (GEOPOS's coordinates, which Redis prints
  // with its own precision): ',' + text in RESP3, a bulk string in RESP2.
  void DoubleText(std::string_view text);
  void Bool(bool v);
  void BigNumber(std::string_view digits);
  // A verbatim string with a 3-letter format ("txt"); a bulk string in RESP2.
  void Verbatim(std::string_view s, std::string_view format = "txt");
  // The raw bytes of a reply already in RESP form.
  void Raw(std::string_view s) { out_->Append(s); }

  // A reply whose length the request alone sets (SRANDMEMBER and HRANDFIELD
  // with a negative count: that many picks, up to 2^63 - 1) stops adding
  // once Full(): kMaxRequestSized bytes are waiting. The reply is then cut()
  // and whoever runs the command closes the client without sending it, as a
  // client over its output buffer limit (Worker), so that one request cannot
  // take the server's memory.
  static constexpr size_t kMaxRequestSized = size_t{64} << 20;
  bool Full() {
    if (out_->size() < kMaxRequestSized) return false;
    cut_ = true;
    return true;
  }
  bool cut() const { return cut_; }

 private:
  void WriteError(std::string_view msg);  // "-" + msg with CR/LF as spaces
  void AggregateHeader(char type, size_t n);

  Buffer* out_;
  OutputBuffer* output_ = nullptr;  // the connection's output, when replying to one
  int resp_;
  ErrorSink* errors_;
  bool cut_ = false;
};

}  // namespace peregrine
