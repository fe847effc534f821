// The request parser: RESP multibulk ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") and
// inline commands ("GET k\r\n"). A pure function of bytes: it never touches a
// socket and never copies a bulk argument — arguments are views into the
// caller's buffer (inline arguments, which need unescaping, are the exception).
//
// Parsing is resumable: after kNeedMore the caller appends bytes and calls
// Parse again with the same command start; work already done is not redone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

class RequestParser {
 public:
  struct Limits {
    uint64_t max_bulk_len = 512ULL * 1024 * 1024;  // proto-max-bulk-len
  };
  // Longest inline request, or header line, without a newline (Redis's 64 KB).
  static constexpr size_t kMaxInlineSize = 64 * 1024;

  enum class Result {
    kCommand,   // a whole command: args() and consumed() are valid
    kNeedMore,  // the command is incomplete; call again with more bytes
    kError,     // a protocol error: error() holds the reply text
  };

  RequestParser() = default;
  explicit RequestParser(Limits limits) : limits_(limits) {}

  void set_limits(Limits limits) { limits_ = limits; }

  // Parses one command from data[0, len). `data` is the first byte of the
  // command; between a kNeedMore and the next call the bytes already seen must
  // not change (they may move: positions are kept as offsets).
  // A command with no arguments (an empty inline line, "*0") is returned as
  // kCommand with empty args(); the caller skips it.
  Result Parse(const char* data, size_t len);

  // After kCommand: the arguments (valid until the buffer changes or the next
  // Parse call) and the number of bytes the command took.
  std::span<const std::string_view> args() const { return args_; }
  size_t consumed() const { return consumed_; }

  // After kCommand: true if it was an inline command, whose arguments live in
  // the parser (not in the caller's buffer) and are gone at the next Parse.
  bool inline_command() const { return inline_command_; }

  // After kError: the error reply text, e.g. "ERR Protocol error: invalid bulk length".
  const std::string& error() const { return error_; }

  // After kNeedMore: the total bytes the command needs, when known (a bulk
  // argument's length is known from its header), else 0. Lets the caller size
  // its buffer once for a big argument instead of doubling repeatedly.
  size_t bytes_needed() const { return bytes_needed_; }

  // After kNeedMore: whether a bulk argument is being read whose header has
  // arrived (and where its bytes start within the command, and how many).
  bool PendingBulk(size_t* offset, size_t* len) const {
    if (mode_ != Mode::kMultibulk || bulk_len_ < 0 || bulk_external_) return false;
    *offset = pos_;
    *len = static_cast<size_t>(bulk_len_);
    return true;
  }
  // The pending bulk's bytes live elsewhere, at `data` (all PendingBulk's len
  // of them, in place before the next Parse): from now on the caller's buffer
  // holds the command up to the bulk, then what follows the bulk's bytes
  // ("\r\n" first). Lets a large argument be read straight into the block
  // that will hold it (no copy through the buffer).
  void ExternalBulk(const char* data) {
    externals_.push_back(data);
    bulk_external_ = true;
  }

  // Forgets a partially parsed command.
  void Reset();
  // Between commands: gives back argument tables grown past `keep` entries
  // by a very long command (100,000 SADD members hold megabytes).
  void ShrinkIfLarge(size_t keep = 1024) {
    if (mode_ != Mode::kStart) return;
    if (offsets_.capacity() > keep) std::vector<std::pair<size_t, size_t>>().swap(offsets_);
    if (args_.capacity() > keep) std::vector<std::string_view>().swap(args_);
  }

 private:
  enum class Mode : uint8_t { kStart, kMultibulk, kInline };

  bool ParseWholeCommand(const char* data, size_t len);
  Result ParseMultibulk(const char* data, size_t len);
  Result ParseInline(const char* data, size_t len);
  Result Fail(std::string msg);
  Result Done(const char* data, size_t consumed);

  Limits limits_;
  Mode mode_ = Mode::kStart;
  size_t pos_ = 0;            // resume offset within the command
  int64_t remaining_ = 0;     // multibulk arguments still to read
  int64_t bulk_len_ = -1;     // length of the bulk being read, -1 if header pending
  bool bulk_external_ = false;  // ... whose bytes are elsewhere (ExternalBulk)
  size_t bytes_needed_ = 0;
  size_t consumed_ = 0;
  bool inline_command_ = false;
  // (offset, length) per argument; an offset from kExternal on is the index
  // of an external argument's bytes in externals_.
  std::vector<std::pair<size_t, size_t>> offsets_;
  static constexpr size_t kExternal = size_t{1} << 63;
  std::vector<const char*> externals_;
  std::vector<std::string_view> args_;
  std::vector<std::string> inline_args_;
  std::string error_;
};

// Splits a line into arguments as Redis's sdssplitargs does (inline commands,
// config files): whitespace separates, "double quotes" take the escapes
// \n \r \t \b \a \\ \" and \xHH, 'single quotes' take \'. Returns false on unbalanced
// quotes (or a closing quote not followed by a space).
bool SplitArgs(std::string_view line, std::vector<std::string>* out);
// Its inverse for one word (Redis's sdsneedsrepr and sdscatrepr): whether
// it needs quoting, and the word quoted with its escapes.
bool NeedsRepr(std::string_view s);
std::string Repr(std::string_view s);
void AppendRepr(std::string* out, std::string_view s);  // (MONITOR's lines: no temporary)

}  // namespace peregrine
