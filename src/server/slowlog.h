// SLOWLOG (Redis 7.2's slowlog.c): the commands whose run took at least
// slowlog-log-slower-than microseconds, newest first, at most
// slowlog-max-len of them (trimmed when one is added, as Redis's).
//
// One log for the server, under a mutex: only a slow command takes it (the
// check before, against the threshold in CycleClock ticks, is one relaxed
// load per command). A command that ran on another worker's shard (a part
// of a client's pipeline sent there) is logged there without its client's
// address and name, which only the client's own worker may read; that
// worker fills them in when the batch comes back (Resolve).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

struct CommandSpec;

class SlowLog {
 public:
  struct Entry {
    uint64_t id = 0;
    int64_t time_s = 0;  // unix seconds, when it was logged
    int64_t duration_us = 0;
    std::vector<std::string> args;  // trimmed and redacted as Redis's
    std::string peer, name;
    uint64_t client_id = 0;  // (while peer and name wait for Resolve)
    bool resolved = true;
  };
  // Redis's SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING.
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxString = 128;

  // The threshold in ticks from the config (negative: off; max_len 0: off).
  void Configure(int64_t slower_than_us, int64_t max_len, double ticks_per_us);
  // Whether a run of `ticks` is to be logged (any thread).
  bool Due(uint64_t ticks) const { return ticks >= threshold_ticks_.load(std::memory_order_relaxed); }

  // Adds an entry (its args as the command's, trimmed and redacted here)
  // and trims the log to max_len. `peer`/`name` empty and `resolved`
  // false: filled later by Resolve(client_id, ...).
  void Push(const CommandSpec& spec, std::span<const std::string_view> args, int64_t duration_us,
            std::string peer, std::string name, uint64_t client_id, bool resolved);
  // The client's own worker: its address and name into its entries that
  // wait for them.
  void Resolve(uint64_t client_id, const std::string& peer, const std::string& name);
  // Whether any entry waits for Resolve (the check on a batch's return).
  bool unresolved() const { return unresolved_.load(std::memory_order_relaxed) > 0; }
  // The newest `count` entries (all if count is larger).
  std::vector<Entry> Get(size_t count);
  size_t Len();
  void Reset();

  // The arguments as Redis logs them: a password or an ACL rule
  // "(redacted)", at most kMaxArgs (the last saying how many more), each at
  // most kMaxString bytes (then how many more).
  static std::vector<std::string> LoggedArgs(const CommandSpec& spec, std::span<const std::string_view> args);
  // Which arguments Redis 7.2 redacts (redactClientCommandArgument: AUTH's,
  // HELLO AUTH's, MIGRATE AUTH's, ACL SETUSER's rules, CONFIG SET's
  // passwords), for SLOWLOG and MONITOR; empty for the commands that never
  // redact (a missing entry: not redacted).
  static std::vector<bool> Redacted(const CommandSpec& spec, std::span<const std::string_view> args);

 private:
  void Trim();  // (under mu_) to max_len_
  std::atomic<uint64_t> threshold_ticks_{UINT64_MAX};
  std::atomic<size_t> unresolved_{0};  // (changed under mu_)
  std::mutex mu_;
  std::deque<Entry> entries_;  // newest first
  uint64_t next_id_ = 0;
  size_t max_len_ = 128;
};

}  // namespace peregrine
