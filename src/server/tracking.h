// CLIENT TRACKING (docs/tracking.md): Redis's server-assisted client-side
// caching, across workers.
//
// - Each shard keeps the table of its keys that tracking clients read
//   (TrackingTable): key -> the clients (id and worker) that may cache it.
//   A read-only command of a client whose reads are tracked adds its keys
//   there, on the thread running it (Worker::Run).
// - A change of a key (the WATCH table hears of every one: commands,
//   expiry, eviction) takes the key out of the table and queues one
//   invalidation per client on the running thread (TrackingInvalidations);
//   keys matching a BCAST prefix are queued per prefix.
// - The worker delivers them once the command has replied, as it does
//   keyspace events: to its own clients at once, to other workers' in one
//   message each, behind the command's replies on the same ring (a client
//   with a batch out gets them after its replies: Client::pushes_after).
// - The client's worker sends the push (RESP3), or the Pub/Sub message on
//   __redis__:invalidate to the client it redirects to, which may live on a
//   third worker (one more hop).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace peregrine {

struct Client;
class ServerState;

namespace tracking {
// Client::tracking's bits (Redis's CLIENT_TRACKING_*).
inline constexpr uint8_t kOn = 1u << 0;
inline constexpr uint8_t kBcast = 1u << 1;
inline constexpr uint8_t kOptin = 1u << 2;
inline constexpr uint8_t kOptout = 1u << 3;
inline constexpr uint8_t kNoloop = 1u << 4;
inline constexpr uint8_t kCaching = 1u << 5;      // CLIENT CACHING yes (OPTIN) / no (OPTOUT) given
inline constexpr uint8_t kBrokenRedir = 1u << 6;  // the client it redirects to is gone

// Whether a client with these flags has the keys of its next read-only
// command remembered (Redis's trackingRememberKeys' test).
inline bool TracksReads(uint8_t f) {
  if (!(f & kOn) || (f & kBcast)) return false;
  if ((f & kOptin) && !(f & kCaching)) return false;
  if ((f & kOptout) && (f & kCaching)) return false;
  return true;
}
}  // namespace tracking

// The process's side: counts for INFO, the table limit, and the BCAST
// prefixes of every client.
class TrackingRegistry {
 public:
  struct Subscriber {
    uint64_t id;
    uint32_t home;
  };
  struct Prefix {
    std::string prefix;
    std::vector<Subscriber> clients;
  };
  using Prefixes = std::vector<Prefix>;

  // `observers`: the server-wide count that makes commands tell the WATCH
  // tables of their changes (ServerState::watched_keys); each tracked key
  // and each BCAST prefix counts in it.
  explicit TrackingRegistry(std::atomic<int64_t>* observers) : observers_(observers) {}

  // Clients with tracking on (INFO tracking_clients).
  std::atomic<int64_t>& clients() { return clients_; }
  // Keys in every shard's table, and client entries under them (INFO
  // tracking_total_keys / tracking_total_items).
  std::atomic<int64_t>& keys() { return keys_; }
  std::atomic<int64_t>& items() { return items_; }
  // tracking-table-max-keys (0: no limit).
  uint64_t max_keys() const { return max_keys_.load(std::memory_order_relaxed); }
  void set_max_keys(uint64_t n) { max_keys_.store(n, std::memory_order_relaxed); }
  void CountObserved(int64_t delta) {
    if (observers_ != nullptr) observers_->fetch_add(delta, std::memory_order_relaxed);
  }

  // BCAST: client `id` of worker `home` is told of changes to keys
  // starting with each of `prefixes` (added to those it had), or no more.
  void Subscribe(uint64_t id, uint32_t home, std::span<const std::string> prefixes);
  void Unsubscribe(uint64_t id, std::span<const std::string> prefixes);
  // Whether any client is in BCAST mode (one load).
  bool bcast() const { return bcast_prefixes_.load(std::memory_order_relaxed) > 0; }
  // Distinct prefixes (INFO tracking_total_prefixes).
  int64_t prefix_count() const { return bcast_prefixes_.load(std::memory_order_relaxed); }
  // The prefixes now, and the generation they are of (a thread keeps its
  // copy until the generation moves).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  std::shared_ptr<const Prefixes> prefixes(uint64_t* generation) const;

  // The tracking clients that redirect, and where to (kept by their own
  // workers: CLIENT TRACKING, DisableTracking). A shard sends their
  // invalidations straight to the redirect's worker: one connection that
  // clients of several workers redirect to gets them in the order the
  // shard made them, as from Redis's one thread.
  struct Redirect {
    uint64_t to = 0;
    uint32_t to_home = 0;
    uint8_t resp = 2;  // the tracking client's (a flush's null)
    bool bcast = false;
    bool noloop = false;
  };
  using Redirects = std::unordered_map<uint64_t, Redirect>;
  void SetRedirect(uint64_t tracker, const Redirect& r);
  void ClearRedirect(uint64_t tracker);
  // Whether any client redirects (one load). The map now and the
  // generation it is of (copied on write: a thread keeps its copy until
  // the generation moves, TrackingInvalidations::RedirectOf).
  bool any_redirect() const { return redirect_count_.load(std::memory_order_relaxed) > 0; }
  uint64_t redirect_generation() const { return redirect_generation_.load(std::memory_order_acquire); }
  std::shared_ptr<const Redirects> redirects(uint64_t* generation) const;

 private:
  // (Under redirect_mu_: the map replaced whole, then the generation moved.)
  void ChangeRedirects(uint64_t tracker, const Redirect* r);
  mutable std::mutex redirect_mu_;
  std::shared_ptr<const Redirects> redirects_ = std::make_shared<Redirects>();
  std::atomic<uint64_t> redirect_generation_{0};
  std::atomic<int64_t> redirect_count_{0};
  std::atomic<int64_t>* observers_;
  // (clients_ is read before every command while anyone tracks: apart from
  // the counts every tracked read writes.)
  alignas(64) std::atomic<int64_t> clients_{0};
  alignas(64) std::atomic<int64_t> keys_{0};
  std::atomic<int64_t> items_{0};
  std::atomic<uint64_t> max_keys_{1000000};
  std::atomic<int64_t> bcast_prefixes_{0};
  std::atomic<uint64_t> generation_{0};
  mutable std::mutex mu_;
  std::shared_ptr<const Prefixes> prefixes_ = std::make_shared<Prefixes>();
};

// Tracking ends for `c` (CLIENT TRACKING OFF, RESET, its end): its flags
// are cleared and its BCAST prefixes dropped; the tables forget its keys
// lazily (an invalidation for a client not tracking is dropped), as Redis.
void DisableTracking(TrackingRegistry& registry, Client& c);

// Where `c` redirects (its redirect, protocol, BCAST and NOLOOP), recorded
// in the registry, or its record dropped if it does not redirect: after
// CLIENT TRACKING ON and HELLO.
void PublishRedirect(TrackingRegistry& registry, const Client& c);

// FLUSHALL, FLUSHDB, a reload or a full sync emptied the keyspace (every
// shard held): every tracking client is told that all its keys are invalid
// (a null), and the tables forget their keys (Redis's
// trackingInvalidateKeysOnFlush).
void FlushTracking(ServerState& server);

// One invalidation on its way to a client's worker.
struct Invalidation {
  enum class Kind : uint8_t {
    kKeys,    // `keys` changed (one key; a BCAST prefix's several)
    kFlush,   // every key (FLUSHALL, FLUSHDB): a null
    kBroken,  // the client `client` redirects to (`gone`) is gone
  };
  Kind kind = Kind::kKeys;
  bool bcast = false;  // for a BCAST prefix (a client no longer in BCAST mode drops it)
  uint64_t client = 0;  // the client to tell
  uint32_t home = 0;    // its worker
  // Set when `client` is the one another redirects to: the tracking
  // client it stands for (its worker, and its protocol for a flush's null).
  uint64_t behalf = 0;
  uint32_t behalf_home = 0;
  uint8_t null_resp = 2;
  uint64_t gone = 0;  // kBroken: the id the client redirected to
  // The keys, each with the client whose command changed it (0: none, as
  // an expiry): NOLOOP leaves out a client's own.
  std::vector<std::pair<std::string, uint64_t>> keys;
};

// A thread's invalidations not delivered yet. Reached through Current() by
// the shards' tables on the thread (like KeyspaceEvents).
class TrackingInvalidations {
 public:
  explicit TrackingInvalidations(TrackingRegistry& registry) : registry_(registry) {}
  static TrackingInvalidations* Current() { return current_; }
  // `running`: where the worker keeps the client whose command runs (its
  // id is the changer NOLOOP looks at).
  void MakeCurrent(Client* const* running) {
    current_ = this;
    running_ = running;
  }
  TrackingRegistry& registry() { return registry_; }

  // `key` changed; `client` (of worker `home`) had it in its cache.
  void Key(uint64_t client, uint32_t home, std::string_view key);
  // `key` changed: the BCAST prefixes it matches note it, with the
  // running client as its changer if a command changed it (`by_command`).
  void Broadcast(std::string_view key, bool by_command);
  // Everything changed: every tracking client is told (the caller lists
  // them: it holds every worker).
  void Flush(uint64_t client, uint32_t home);
  void Add(Invalidation inv) { pending_.push_back(std::move(inv)); }

  bool empty() const { return pending_.empty() && bcast_keys_ == 0; }
  // Invalidations went to other workers since the outboxes were last flushed
  // (the worker flushes them before its clients' replies leave).
  bool mailed = false;
  // The pending invalidations, BCAST ones made per prefix and subscriber
  // (the lists are left empty).
  std::vector<Invalidation> Take();
  // Those of keys for client `client` of worker `home` itself (not for a
  // client it stands for), taken out; the others stay pending.
  std::vector<Invalidation> TakeFor(uint64_t client, uint32_t home);
  // Where tracking client `tracker` redirects, from this thread's copy of
  // the registry's map (no lock unless it changed); false if it does not.
  bool RedirectOf(uint64_t tracker, TrackingRegistry::Redirect* out);

 private:
  uint64_t Changer() const;

  static thread_local TrackingInvalidations* current_;
  TrackingRegistry& registry_;
  Client* const* running_ = nullptr;
  std::vector<Invalidation> pending_;
  // BCAST: the prefixes as this thread last read them, and per prefix the
  // keys changed since the last Take (each with its last changer).
  std::shared_ptr<const TrackingRegistry::Prefixes> prefixes_;
  uint64_t prefixes_generation_ = ~uint64_t{0};
  std::shared_ptr<const TrackingRegistry::Redirects> redirects_;
  uint64_t redirects_generation_ = ~uint64_t{0};
  std::vector<std::unordered_map<std::string, uint64_t>> bcast_;
  size_t bcast_keys_ = 0;
};

// A shard's tracked keys. Touched only by the thread holding the shard.
class TrackingTable {
 public:
  TrackingTable() = default;
  ~TrackingTable() { Clear(); }
  // The registry it counts in (none: it tracks nothing; unit tests).
  void Attach(TrackingRegistry* registry) { registry_ = registry; }
  TrackingTable(const TrackingTable&) = delete;
  TrackingTable& operator=(const TrackingTable&) = delete;

  // Whether changes matter here: a key is tracked, or a client is in BCAST
  // mode.
  bool active() const { return !keys_.empty() || (registry_ != nullptr && registry_->bcast()); }
  size_t keys() const { return keys_.size(); }

  // Client `id` of worker `home` read `key`.
  void Remember(std::string_view key, uint64_t id, uint32_t home);
  // `key` changed (by a command, or expired or evicted): whoever tracks it
  // is told, and it leaves the table; BCAST prefixes matching it note it.
  void Changed(std::string_view key, bool by_command);
  // Forgets every key (FLUSHALL and FLUSHDB: the clients are told by
  // TrackingInvalidations::Flush).
  void Clear();
  // Over tracking-table-max-keys (every shard's keys together): drops keys
  // of this table, telling their clients, until the total is at the limit
  // or this table is empty; at most `effort` keys.
  void Limit(size_t effort);

 private:
  struct Tracker {
    uint64_t id;
    uint32_t home;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, std::vector<Tracker>, Hash, std::equal_to<>>;
  // Takes `it` out, telling its clients (not BCAST's: the key did not
  // change); `counted`: the registry's key count already went down.
  void Drop(Map::iterator it, bool counted);

  TrackingRegistry* registry_ = nullptr;
  Map keys_;
};

}  // namespace peregrine
