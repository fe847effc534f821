// The script fuzzer's checker of the reply stream (fuzz/script_fuzzer.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine_fuzz {

// Reports a finding on stderr and aborts (libFuzzer saves the input).
[[noreturn]] void Fail(const char* what, std::string_view detail = {});

// --- A checker of the reply stream ---
//
// Reads the server's bytes as they come, validates every reply against
// RESP2 (or RESP3 after HELLO 3) strictly — lengths, terminators, integers,
// doubles, booleans, nulls, verbatim formats — and counts the top-level
// replies (push messages and attributes are not replies). Incremental: a
// 64 MB reply read in 64 KB pieces is looked at once.
class RespChecker {
 public:
  explicit RespChecker(bool resp3) : resp3_(resp3) {}

  void Feed(const char* p, size_t n);

  size_t replies() const { return replies_; }
  // Top-level error replies.
  size_t errors() const { return errors_; }
  // The first line of the last complete top-level reply.
  const std::string& last() const { return last_; }
  bool between_replies() const { return state_ == State::kLine && line_.empty() && stack_.empty(); }

 private:
  enum class State { kLine, kPayload, kCr, kLf };
  enum class Kind { kValue, kPush, kAttribute };
  struct Level {
    int64_t left;
    Kind kind;
  };

  static bool Int(std::string_view s, int64_t* v);
  void Line();
  void Done(bool push);

  const bool resp3_;
  State state_ = State::kLine;
  std::string line_;
  std::string first_line_;
  std::string last_;
  uint64_t payload_left_ = 0;
  uint64_t payload_seen_ = 0;
  bool verbatim_ = false;
  bool awaiting_value_ = false;
  std::vector<Level> stack_;
  size_t replies_ = 0;
  size_t errors_ = 0;
};

}  // namespace peregrine_fuzz
