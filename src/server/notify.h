// Keyspace notifications (docs/notifications.md): Redis's
// notify-keyspace-events. A command that changes a key tells of it with
// Notify (commands/common.h); with the class off that is one test. With it
// on and a subscriber anywhere, the event joins the running thread's
// pending list (KeyspaceEvents), which its worker delivers once the command
// has replied: to its own subscribers at once, to other workers' in one
// message each (rings are FIFO, so a subscriber gets a worker's events in
// the order its commands ran).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

// Redis's NOTIFY_* bits (server.h), the same values.
namespace notify {
inline constexpr uint32_t kKeyspace = 1u << 0;  // K
inline constexpr uint32_t kKeyevent = 1u << 1;  // E
inline constexpr uint32_t kGeneric = 1u << 2;   // g
inline constexpr uint32_t kString = 1u << 3;    // $
inline constexpr uint32_t kList = 1u << 4;      // l
inline constexpr uint32_t kSet = 1u << 5;       // s
inline constexpr uint32_t kHash = 1u << 6;      // h
inline constexpr uint32_t kZset = 1u << 7;      // z
inline constexpr uint32_t kExpired = 1u << 8;   // x
inline constexpr uint32_t kEvicted = 1u << 9;   // e
inline constexpr uint32_t kStream = 1u << 10;   // t
inline constexpr uint32_t kKeyMiss = 1u << 11;  // m (not in A)
inline constexpr uint32_t kModule = 1u << 13;   // d (no modules here: parsed, never sent)
inline constexpr uint32_t kNew = 1u << 14;      // n (not in A)
inline constexpr uint32_t kAll =
    kGeneric | kString | kList | kSet | kHash | kZset | kExpired | kEvicted | kStream | kModule;

// notify-keyspace-events' letters to flags (Redis's
// keyspaceEventsStringToFlags); nullopt for a letter not among
// "Ag$lshzxeKEtmdn".
std::optional<uint32_t> ParseFlags(std::string_view classes);
// And back, in Redis's order ("AKE" for "KEA").
std::string FormatFlags(uint32_t flags);
}  // namespace notify

// The process's side: what is on, and whether anybody listens.
class KeyspaceNotifier {
 public:
  // The classes that are sent: 0 unless K or E is on (nothing is sent
  // then), so that a command's test is one AND.
  uint32_t active() const { return active_.load(std::memory_order_relaxed); }
  // The flags as configured (K and E included).
  uint32_t flags() const { return flags_.load(std::memory_order_relaxed); }
  void Configure(uint32_t flags) {
    flags_.store(flags, std::memory_order_relaxed);
    active_.store(flags & (notify::kKeyspace | notify::kKeyevent) ? flags : 0, std::memory_order_relaxed);
  }
  // Subscriptions of every worker's clients (channels, patterns, shard
  // channels): with none, an event is dropped where it happens.
  std::atomic<int64_t>& subscriptions() { return subscriptions_; }
  bool anyone_listening() const { return subscriptions_.load(std::memory_order_relaxed) > 0; }

 private:
  std::atomic<uint32_t> flags_{0};
  std::atomic<uint32_t> active_{0};
  alignas(64) std::atomic<int64_t> subscriptions_{0};
};

// One event: `event` happened to `key` of database `db`.
struct KeyspaceEvent {
  uint32_t flags;  // the K and E bits in force when it happened
  int db;
  std::string event;
  std::string key;
};

// A worker thread's events not delivered yet. Reached through Current()
// by what runs on the thread and knows no worker (a shard's database
// expiring or evicting a key).
class KeyspaceEvents {
 public:
  explicit KeyspaceEvents(const KeyspaceNotifier& notifier) : notifier_(notifier) {}
  // The running thread's list (nullptr off the workers' threads: events
  // there are dropped).
  static KeyspaceEvents* Current() { return current_; }
  void MakeCurrent() { current_ = this; }

  // Adds the event if its class `type` is on and anybody subscribes.
  void Add(uint32_t type, int db, std::string_view event, std::string_view key) {
    const uint32_t on = notifier_.active();
    if (!(on & type)) [[likely]]
      return;
    if (!notifier_.anyone_listening()) return;
    pending_.push_back({on & (notify::kKeyspace | notify::kKeyevent), db, std::string(event), std::string(key)});
  }
  bool empty() const { return pending_.empty(); }
  // Hands the pending events over (the list is left empty).
  std::vector<KeyspaceEvent> Take() {
    std::vector<KeyspaceEvent> out;
    out.swap(pending_);
    return out;
  }

  // The channel an event is published on: "__keyspace@<db>__:<key>" (its
  // message the event) or "__keyevent@<db>__:<event>" (its message the key).
  static std::string Channel(const KeyspaceEvent& e, bool keyspace);

 private:
  static thread_local KeyspaceEvents* current_;
  const KeyspaceNotifier& notifier_;
  std::vector<KeyspaceEvent> pending_;
};

}  // namespace peregrine
