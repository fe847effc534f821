// A worker's blocking waits (docs/blocking.md): clients blocked on keys by
// BLPOP and the other blocking commands. A wait is registered on the shards
// of its keys (BlockingKeys, blocking.h); a command that gives a value to one
// of them serves the oldest waiters right after it ends, on whichever thread
// holds that shard; the client's own worker delivers the outcome, times the
// wait out, or forgets it when the client goes.
//
// Owns: the wait the running command just made (until its worker takes it),
// the held shards with keys made ready, the deadlines and the count of this
// worker's blocked clients, and the proxy client a served wait's command runs
// as. Owned by its Worker and used only on its thread: waits registered on
// other workers' shards are reached through those shards while the running
// command holds them, or by mail (INFO reads the counts holding every shard).
//
// Asks of the worker (a friend of it): its shard, index and held shards, and
// whether EXEC or a script runs (nothing blocks then); its clients and their
// output (its ClientIo, the resume list); its mail (Send, and
// the mail deferred while its shard is lent); running a command again
// (CallHandler for a served wait, Dispatch and BatchRelay::SendOpen for a rerun); its
// statistics.
//
// Threading: Block, NoteReady, Unblock and ServeReadyKeys run on the thread
// holding the shards involved (the command's); BlockClient, OnWoken,
// CancelBlocked, Unblocked, ExpireBlocked and RerunBlocked on the client's
// own worker. A wait's `state` is the only field two threads may race on.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/value.h"
#include "server/blocking.h"
#include "server/client.h"
#include "server/command_context.h"

namespace peregrine {

class ClusterRoute;
class Server;
class Shard;
class Worker;

class BlockingWaits {
 public:
  BlockingWaits(Worker& worker, Server& server);
  BlockingWaits(const BlockingWaits&) = delete;
  BlockingWaits& operator=(const BlockingWaits&) = delete;

  // --- On the thread running a command (CommandHost's, which forwards) ---
  // CommandHost::Block: the running command's client waits on `keys`; the
  // wait is registered on their shards and kept as blocked_now() for the
  // worker to take. Inside EXEC or a served wait's run, answered at once.
  void Block(CommandContext& ctx, std::span<const std::string_view> keys, ValueType type, int64_t deadline_ms,
             CommandHost::NoWaitReply no_wait);
  // CommandHost::NoteReady: shard `shard` (held) has keys made ready.
  void NoteReady(uint32_t shard) {
    if (std::find(ready_shards_.begin(), ready_shards_.end(), shard) == ready_shards_.end())
      ready_shards_.push_back(shard);
  }
  // CommandHost::Unblock (CLIENT UNBLOCK, every shard held).
  bool Unblock(std::shared_ptr<BlockedClient> w, bool error);

  // The wait the running command made (Block), or nullptr: tested after
  // every command (Worker::Run), then taken by the worker, which delivers it
  // to its client (BlockClient) or sends it back with the batch.
  BlockedClient* blocked_now() const { return blocked_now_.get(); }
  std::shared_ptr<BlockedClient> TakeBlockedNow() { return std::move(blocked_now_); }
  // Whether the last command made keys ready (tested after every command).
  bool has_ready() const { return !ready_shards_.empty(); }
  // Serves the clients waiting on the keys made ready (the command that made
  // them holds their shards), oldest first, while the keys last.
  void ServeReadyKeys(int64_t now_ms);

  // --- On the client's own worker ---
  // The running command (for client `c` of this worker) blocked on `w`.
  void BlockClient(Client& c, std::shared_ptr<BlockedClient> w);
  // A woken notice (by mail, or a call from this thread): the outcome of `w`
  // goes to its client if it still waits on it.
  void OnWoken(const std::shared_ptr<BlockedClient>& w);
  // Gives up a wait of a client of this worker (timeout, disconnect): true if
  // it was still waiting (nobody will serve it now).
  bool CancelBlocked(const std::shared_ptr<BlockedClient>& w);
  // The client stops being counted and timed as blocked.
  void Unblocked(Client& c, const BlockedClient& w);
  // Replies the timeout to the clients whose deadline passed (the loop's
  // before-sleep hook, which then wakes for the next one).
  void ExpireBlocked();
  bool has_deadlines() const { return !block_timers_.empty(); }
  int64_t next_deadline_ms() const { return block_timers_.begin()->first; }
  // How long the loop may wait before the next deadline (0 to 1000 ms; a
  // timer wakes it at least every second anyway). REQUIRES: has_deadlines().
  int WaitMsToNextDeadline(int64_t now_ms) const {
    return static_cast<int>(std::clamp<int64_t>(next_deadline_ms() - now_ms, 0, 1000));
  }
  // Cluster mode (the worker's cron): once the slot table changed, a client
  // blocked on keys this node no longer serves gets the redirection (-MOVED,
  // -CLUSTERDOWN) instead of waiting on, as Redis's
  // clusterRedirectBlockedClientIfNeeded.
  void RedirectBlocked(ClusterRoute& route);
  // A woken client whose command needs shards the waker did not hold: runs
  // it again here.
  void RerunBlocked(Client& c, std::shared_ptr<BlockedClient> w);

  // INFO: this worker's blocked clients, and those with a timeout.
  size_t blocked_clients() const { return blocked_clients_; }
  size_t timed_blocked_clients() const { return block_timers_.size(); }

 private:
  void ServeKey(Shard& shard, int db, const std::string& key, int64_t now_ms);
  // Takes a claimed wait off the wait lists (those of shards this thread
  // holds at once, the others by mail), decides its outcome, and tells the
  // client's worker.
  void Serve(const std::shared_ptr<BlockedClient>& w, int64_t now_ms);
  // A wait this thread took out of kWaiting and gave its outcome (kDone):
  // tells the client's worker (once the replication stream has ticket
  // `hold` of this worker's shard: BatchRelay::StreamHoldNow).
  void NotifyWoken(std::shared_ptr<BlockedClient> w, uint64_t hold = 0);
  // `c`'s wait has its outcome (kDone): its reply goes out, or the command
  // runs again; its later input goes on.
  void FinishBlocked(Client& c);
  // Off the wait lists of shard `shard`: at once for this worker's own
  // shard (when not lent), by mail for another.
  void Forget(uint32_t shard, const std::shared_ptr<BlockedClient>& w);
  // Whether the running command holds shard `shard`.
  bool Holds(uint32_t shard) const;
  // The shard of `w`'s first key: its spec's key positions (XREAD's and
  // XREADGROUP's follow STREAMS, past their spec's first_key).
  uint32_t FirstKeyShard(const BlockedClient& w, std::span<const std::string_view> args);
  static bool StreamWaiterReady(const BlockedClient& w, std::string_view key, const StreamObject& s);

  Worker& worker_;
  Server& server_;
  std::shared_ptr<BlockedClient> blocked_now_;  // the running command blocked (Block)
  std::vector<uint32_t> ready_shards_;          // held shards with keys made ready (NoteReady)
  std::set<std::pair<int64_t, uint64_t>> block_timers_;  // (deadline, client id) of this worker's clients
  size_t blocked_clients_ = 0;
  bool serving_ = false;               // a blocked client's command runs again (it may not block)
  std::vector<size_t> key_positions_;  // scratch (Block)
  Client serve_proxy_;                 // stands for a blocked client served here
  uint64_t routes_seen_ = 0;           // the slot table RedirectBlocked last looked at
};

}  // namespace peregrine
