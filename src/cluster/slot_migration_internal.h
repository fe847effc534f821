// What the parts of the atomic slot migration (slot_migration.h) share:
// the bounds of a step, the job and its shards' parts, the target's reply
// reader and the forms a key is sent in. For slot_migration*.cc only.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cluster/slot_migration.h"
#include "core/db.h"
#include "core/numbers.h"
#include "net/event_loop.h"
#include "persist/aof_format.h"
#include "persist/aof_rewrite.h"

namespace peregrine::cluster {
namespace migration_internal {
// What one step of a shard sends at most before it lets the shard serve
// again (the same bound as a snapshot's chunk), and the entries it looks
// at in its walk.
inline constexpr size_t kStepBytes = 64 << 10;
inline constexpr size_t kStepEntries = 1000;
// The commands waiting for the target's socket, at most: a step waits
// beyond (the memory a job takes).
inline constexpr size_t kMaxQueued = 4 << 20;
// Writes pause once the keys left to send again are fewer than this (or
// after kStreamMaxMs of rounds: then the pause sends what is left).
inline constexpr uint64_t kHandoverKeys = 1000;
inline constexpr int64_t kStreamMaxMs = 5000;
// A target that takes nothing (or does not answer) for this long fails
// the job.
inline constexpr int kIoTimeoutMs = 10000;
// How long a source whose TAKEOVER went unanswered waits for the target's
// claim to reach it over the bus before it keeps the slots.
inline constexpr int64_t kClaimWaitMs = 3000;
inline constexpr int64_t kImportCleanupDelayMs = 100;
inline constexpr const char* kLost =
    "Connection lost to target. Check CLUSTER GETSLOTMIGRATIONS on the target node for more information.";


inline std::string RangesText(const std::vector<std::pair<int, int>>& ranges) {
  std::string out;
  for (const auto& [s, e] : ranges) {
    if (!out.empty()) out += ' ';
    out += std::to_string(s) + "-" + std::to_string(e);
  }
  return out;
}


// The target's replies to the commands it is sent, read as they come (so
// that they never pile up on either side): each whole top-level reply
// goes to `on_reply(type, text)` (an array as its last element; the
// commands sent reply none).
class ReplyReader {
 public:
  std::string buf;
  template <class F>
  void Parse(F&& on_reply) {
    size_t pos = 0;
    for (;;) {
      const size_t eol = buf.find("\r\n", pos);
      if (pos >= buf.size() || eol == std::string::npos) break;
      const char t = buf[pos];
      std::string_view text(buf.data() + pos + 1, eol - pos - 1);
      size_t next = eol + 2;
      if (t == '$') {
        int64_t len = 0;
        if (!ParseInt64(text, &len)) len = -1;
        if (len >= 0) {
          if (next + static_cast<size_t>(len) + 2 > buf.size()) break;
          text = std::string_view(buf.data() + next, static_cast<size_t>(len));
          next += static_cast<size_t>(len) + 2;
        }
      }
      pos = next;
      if (t == '*') {
        int64_t n = 0;
        if (ParseInt64(text, &n) && n > 0) {
          stack_.push_back(n);
          continue;
        }
      }
      bool top = stack_.empty();
      while (!stack_.empty() && --stack_.back() == 0) {
        stack_.pop_back();
        top = stack_.empty();
      }
      if (top) on_reply(t, text);
    }
    buf.erase(0, pos);
  }

 private:
  std::vector<int64_t> stack_;  // the elements left of each open array
};

// A key as the target is to have it: DEL, then the commands that rebuild
// it (nothing more when it is gone).
inline void AppendKeyState(std::string* out, const Db& db, std::string_view key, int64_t now_ms) {
  AppendRespCommand(out, {"DEL", key});
  const Db::Entry* e = db.FindRaw(key);
  if (e == nullptr || Db::IsExpired(*e, now_ms)) return;
  AppendKeyCommands(out, key, e->value, e->expire_ms());
}

// A key too large to be serialized in one step of its worker goes a part
// at a time (AppendKeyCommandsPart): a string past 1 MB in 256 KB parts, a
// container past 8,192 items in parts of 4,096.
inline bool IsBig(const Value& v) { return KeyItems(v) > (v.type() == ValueType::kString ? (1u << 20) : 8192u); }
inline size_t PartItems(const Value& v) { return v.type() == ValueType::kString ? (256u << 10) : 4096u; }
}  // namespace migration_internal

// One shard's part of an export: touched by the thread holding the shard,
// but for the atomics the job's thread reads.
struct SlotMigrations::Part {
  size_t shard = 0;
  MovingKeys moving;
  bool attached = false;
  uint64_t cursor = 0;
  bool walked = false;
  std::vector<std::string> round;  // keys to send again, from round_at on
  size_t round_at = 0;
  // Large keys waiting to be sent a part at a time, and the one going
  // (from its item big_from on).
  std::deque<std::string> big;
  std::string big_key;
  size_t big_from = 0;
  uint64_t big_scan = 0;  // (a hash's or set's table cursor: AppendKeyCommandsPart)
  bool big_active = false;
  bool saw_pause = false;
  std::atomic<bool> walk_done{false};
  std::atomic<bool> drained{false};  // the last changes sent, recording over
  std::atomic<uint64_t> pending{0};  // keys to send again
};

struct SlotMigrations::Job {
  std::string name;
  bool is_export = true;
  std::string source, target;  // node ids
  std::vector<bool> slots;
  std::vector<std::pair<int, int>> ranges;
  std::atomic<State> state{State::kConnecting};
  std::string message;  // (under SlotMigrations::mu_)
  int64_t create_ms = 0;
  std::atomic<int64_t> update_ms{0};
  std::atomic<int64_t> ack_ms{0};  // the other side last took or sent bytes
  std::vector<std::unique_ptr<Part>> parts;
  bool counted = false;  // in active_ (under mu_)
  // The commands for the target, in order (the shards' steps push, the
  // job's thread sends).
  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<std::string> queue;
  bool poked = false;  // (under qmu) a part was drained: the thread looks now
  std::atomic<size_t> queued{0};
  std::atomic<bool> cancel{false};
  std::atomic<bool> flushed{false};  // database 0 was emptied meanwhile
  // The rounds ran kStreamMaxMs: the handover comes whatever is left. The
  // shards stop sending large keys a part at a time (a key changed faster
  // than its parts go would be sent again for ever) and send a round's
  // keys only while the queue is short, so that it empties; what is left
  // goes under the pause.
  std::atomic<bool> closing{false};
  std::atomic<uint64_t> keys_sent{0};
  std::thread thread;
  std::atomic<bool> thread_done{false};  // Run returned
  int fd = -1;
  migration_internal::ReplyReader replies;
  std::string target_error;   // the first error reply of the target
  std::string marker;         // ECHOed before TAKEOVER: the next reply is its
  bool marker_seen = false;
  std::string sync_marker;    // ECHOed before the pause: back once the target ran all before it
  bool synced = false;
  std::string takeover;       // TAKEOVER's reply ("+OK" or "-...")
  bool paused = false;
  std::chrono::steady_clock::time_point paused_at;  // (for the log: how long writes waited)
  uint64_t client_id = 0;  // an import's client

  bool terminal() const {
    const State s = state.load(std::memory_order_acquire);
    return s == State::kSuccess || s == State::kFailed || s == State::kCancelled;
  }
  void SetState(State s) {
    state.store(s, std::memory_order_release);
    update_ms.store(UnixTimeMs(), std::memory_order_relaxed);
  }
  void Push(std::string&& bytes) {
    if (bytes.empty()) return;
    queued.fetch_add(bytes.size(), std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(qmu);
    queue.push_back(std::move(bytes));
    qcv.notify_one();
  }
};

}  // namespace peregrine::cluster
