// Clients blocked on keys (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, the
// sorted sets' BZPOPMIN / BZPOPMAX / BZMPOP and XREAD / XREADGROUP BLOCK): the wait a
// blocked client shares with the shards of its keys, and each shard's
// registry of the waits on its keys. The protocol that serves each wait
// exactly once across threads is in docs/blocking.md; who may touch what is
// written beside each member.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/value.h"
#include "protocol/buffer.h"

namespace peregrine {

struct CommandSpec;

// One blocked command of one client. Created by the thread that ran the
// command (holding the shards of all its keys), registered in those shards'
// BlockingKeys, and referenced by the client (Client::blocked) on its own
// worker. Every reference is a shared_ptr: it lives until the last of them
// goes.
struct BlockedClient {
  // The first thread to move `state` out of kWaiting decides the outcome,
  // and only it:
  // - a thread serving a key it became ready on: kClaimed, then kDone once
  //   the outcome (reply or rerun) is written;
  // - CLIENT UNBLOCK: likewise, with a timeout or error reply;
  // - the client's own worker (timeout, disconnect): kCancelled, and it
  //   replies itself.
  enum State : uint32_t { kWaiting, kClaimed, kDone, kCancelled };
  std::atomic<uint32_t> state{kWaiting};

  // Written when it is created, read-only afterwards.
  uint32_t home = 0;  // the client's worker
  bool quiet = false;  // its reply dropped (CLIENT REPLY OFF or SKIP): set by its worker
  uint64_t client_id = 0;
  int db = 0;
  int resp = 2;
  ValueType type = ValueType::kList;  // what it waits for: a key of another type does not serve it
  int64_t deadline_ms = 0;            // unix ms; 0 = for ever
  uint64_t ticks = 0;                 // the command's own run before it blocked (CycleClock), counted at the end
  const CommandSpec* spec = nullptr;  // the command, run again when a key is ready
  std::string arg_bytes;              // its arguments, back to back
  std::vector<uint32_t> arg_sizes;
  std::vector<uint32_t> shards;  // every shard its keys live on, sorted (running it again needs them all)

  struct Key {
    uint32_t shard;
    std::string key;
    // Only the thread holding `shard` touches these two.
    bool registered = false;
    std::list<std::shared_ptr<BlockedClient>>::iterator where;
  };
  std::vector<Key> keys;  // the keys it waits on, each once, in argument order

  // The outcome, written by the thread that claimed it before kDone.
  bool rerun = false;  // run the command again on its own worker, which can hold every shard it needs
  Buffer reply;        // otherwise its reply, in the client's protocol
  // Served on its own worker while the replication stream had yet to take
  // what the serving command ran: the client's stream_hold (BatchRelay).
  uint64_t stream_hold = 0;
  // Its outcome reaches its worker by mail (kWoken), which may wait for the
  // replication stream (BatchRelay::SendAfter): written before kDone.
  bool by_mail = false;
  // That mail came (only the client's worker touches it): until then a
  // wait found kDone by BlockClient is not finished, lest its reply leave
  // before what it shows is in the stream.
  bool noticed = false;

  // The command's arguments (views into arg_bytes).
  std::vector<std::string_view> Args() const;
  // Calls f(shard) once for each shard that has keys of this wait.
  template <typename F>
  void ForEachKeyShard(F f) const {
    for (size_t i = 0; i < keys.size(); i++) {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; j++) seen = keys[j].shard == keys[i].shard;
      if (!seen) f(keys[i].shard);
    }
  }
};

// The waits on one shard's keys: per database, each key's waiting clients
// in the order they blocked, and the keys signalled ready by the running
// command. Touched only by the thread holding the shard.
class BlockingKeys {
 public:
  using Fifo = std::list<std::shared_ptr<BlockedClient>>;

  explicit BlockingKeys(int databases) : dbs_(static_cast<size_t>(databases)) {}

  // Whether any client waits on a key of this shard (the cheap test a
  // command that creates a key makes first).
  bool empty() const { return keys_ == 0; }
  // Keys with waiting clients (INFO total_blocking_keys).
  size_t keys() const { return keys_; }

  // Registers `w` (shared with its other keys) at the back of the wait
  // list of its key `w->keys[i]`, which lives on this shard.
  void Add(const std::shared_ptr<BlockedClient>& w, size_t i);
  // Removes `w` from the wait lists of its keys on shard `shard` (this one).
  void Remove(BlockedClient& w, uint32_t shard);
  // The clients waiting on `key` in database `db`, oldest first (nullptr if
  // none).
  Fifo* Waiters(int db, std::string_view key);

  // After a command added a value at `key` (created a list, renamed or
  // moved a key there): if clients wait on it, it is marked ready (once)
  // and true is returned; the thread serves it when the command ends.
  bool Signal(int db, std::string_view key);
  // Every key of database `db` with waiters, ready (SWAPDB).
  bool SignalAll(int db);
  bool has_ready() const { return !ready_.empty(); }
  // The oldest ready key; false if none.
  bool PopReady(int* db, std::string* key);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, Fifo, Hash, std::equal_to<>>;
  std::vector<Map> dbs_;
  size_t keys_ = 0;
  std::vector<std::pair<int, std::string>> ready_;
  size_t ready_head_ = 0;
};

}  // namespace peregrine
