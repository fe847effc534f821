// The primary's side of replication (issue #38, docs/replication.md): the
// stream fed from the logged commands (AofLog, the same point the
// append-only file is written at), the backlog, and the replicas attached,
// each with the stream bytes its worker has yet to send it.
//
// Threads: Feed runs on whichever worker writes a chunk; attaching and the
// end of a full sync run holding every shard (PSYNC, worker 0's reaping);
// each replica's connection lives on one worker, which takes its bytes
// (ServeWorker) when told to (the `wake` callback, at most once until it
// has taken them). Everything here is under one mutex; `feeding()` is read
// without it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persist/aof_format.h"
#include "server/repl_backlog.h"
#include "server/stream_order.h"

namespace peregrine {

class ReplicationPrimary {
 public:
  // What a replica's connection is doing (INFO's state=).
  enum class State { kWaitBgsave, kSendingRdb, kOnline };
  struct ReplicaInfo {
    uint64_t client_id = 0;
    std::string ip;
    int listening_port = 0;
    State state = State::kWaitBgsave;
    uint64_t ack_offset = 0;
    uint64_t aof_ack_offset = 0;  // REPLCONF ACK ... FACK: written to its append-only file, fsynced
    int64_t last_ack_ms = 0;
    // It asked with SYNC (no +FULLRESYNC line before its snapshot), and
    // for the snapshot alone (REPLCONF rdb-only 1: closed after it, as
    // redis-cli --rdb asks).
    bool sync = false, rdb_only = false;
    // What its snapshot leaves out (REPLCONF rdb-filter-only: BgSave's
    // kNoData, kNoFunctions); only replicas asking the same share one.
    uint8_t rdb_filter = 0;
    // Its snapshot goes through the RDB file (repl-diskless-sync no, or it
    // did not say REPLCONF capa eof): `$<length>` and the file's bytes.
    bool disk = false;
  };

  // `wake(worker)`: the worker has replica bytes to take (ServeWorker).
  ReplicationPrimary(uint32_t workers, std::function<void(uint32_t)> wake);
  ReplicationPrimary(const ReplicationPrimary&) = delete;
  ReplicationPrimary& operator=(const ReplicationPrimary&) = delete;

  // Whether a backlog exists (commands are logged for the stream, unless
  // relaying()).
  bool feeding() const { return feeding_.load(std::memory_order_acquire); }
  // A replica's stream is its primary's, byte for byte (FeedRaw): the
  // shards' own chunks do not go to it (Feed does nothing).
  bool relaying() const { return relaying_.load(std::memory_order_acquire); }
  // Whether the shards log their commands for the stream.
  bool logs() const { return feeding() && !relaying(); }

  // A chunk of logged commands that shard `shard` logged (a SELECT first
  // when its database is not the stream's). It goes now, or after a write
  // group's part that the shard ran before it, once that group is whole
  // (StreamOrder).
  void Feed(uint32_t shard, const AofChunk& chunk);
  // A command over several shards (after each one's earlier chunks).
  void FeedMulti(std::span<const uint32_t> shards, const AofChunk& chunk);
  // Shard `shard`'s part of write group `group` of `parts` parts (empty if
  // it logged nothing), with its ticket there and the order's epoch when
  // the group was made: the group goes to the stream as one transaction.
  // Returns the workers that asked to be woken when their shard's ticket
  // moved and now should be (WantRelease): the caller wakes them with its
  // next mail, which mostly goes to them anyway (a group's replies go to
  // its client's worker), so that they wake once, not twice.
  const std::vector<uint32_t>& FeedPart(uint32_t shard, uint64_t group, uint32_t parts, uint64_t ticket,
                                        uint64_t epoch, const AofChunk& chunk);
  // The epoch a write group made now belongs to (StreamOrder).
  uint64_t order_epoch() const { return epoch_.load(std::memory_order_acquire); }
  // The last ticket of shard `s` whose part is in the stream, or need not
  // be: what its worker holds back for a later one waits (BatchRelay).
  uint64_t released(uint32_t s) const { return gates_[s].released.load(std::memory_order_seq_cst); }
  // Shard `s`'s worker holds something back: it is woken when the shard's
  // next ticket is released. (It reads released() again after this.)
  void WantRelease(uint32_t s) { gates_[s].want.store(true, std::memory_order_seq_cst); }
  // A command outside any database (the PING every
  // repl-ping-replica-period).
  void FeedCommand(std::initializer_list<std::string_view> args);

  // --- Every shard held ---
  // Becoming a replica (true) or a primary again (false). Either way the
  // replicas of this server are dropped, so that they ask again (PSYNC2
  // lets them continue when the history allows).
  void SetRelaying(bool on);
  // A replica's primary's bytes, applied: to the backlog and the replicas
  // of this one (chained replication).
  void FeedRaw(std::string_view bytes);
  // A replica's full sync: the backlog starts again, empty, at the
  // primary's `offset` (made if there was none).
  void ResetBacklog(size_t size, uint64_t offset);
  // Makes the backlog if there is none (`size` bytes, at the current
  // offset); true if it was made (the caller then starts logging).
  bool EnsureBacklog(size_t size);
  // The PSYNC answer for a replica (under the lock, against the backlog).
  PsyncAnswer Decide(std::string_view replid, int64_t offset, const ReplIds& ids, bool psync2);
  // A replica that continues: its bytes from `from` on are queued now.
  void AttachContinue(const ReplicaInfo& info, uint32_t worker, uint64_t from);
  // A replica for a full sync: it waits for the snapshot's slot (a BGSAVE
  // may be running); `fd` is a duplicate of its socket, kept here until its
  // sync starts (closed if it goes first).
  void AttachWaiting(const ReplicaInfo& info, uint32_t worker, int fd);
  // Whether the replicas waiting should have their sync started now (no
  // BGSAVE running), as Redis's replicationCron: at once unless the
  // snapshot goes to sockets (`diskless`, and every one waiting reads that
  // form), else once the first has waited `delay_s` seconds or
  // `max_replicas` (0: no such bound) are waiting.
  bool SyncDue(int64_t now_ms, bool diskless, int delay_s, int max_replicas);
  // The sync of every waiting replica starts now, one snapshot for them
  // all (no BGSAVE running): the stream from here on is kept for each
  // until the snapshot is sent. Each one's id, its socket's duplicate (the
  // snapshot's now) and whether it asked with SYNC; the offset the
  // snapshot stands for (master_repl_offset now); through the file if any
  // of them cannot read the diskless form (Redis's mincapa). The stream's
  // database is unset (its next chunk selects one: the replica's load
  // leaves its own). Only those asking the first one's rdb_filter; the
  // others wait for the next. False if none waits.
  struct SyncTarget {
    uint64_t id = 0;
    int fd = -1;
    bool sync = false;
  };
  struct SyncStart {
    std::vector<SyncTarget> targets;
    uint64_t offset = 0;
    bool disk = false;
    uint8_t rdb_filter = 0;
  };
  bool StartWaiting(SyncStart* start);
  // A replica joins the disk-based sync running (Redis's "Waiting for end
  // of BGSAVE for SYNC"): the stream its siblings kept since the snapshot
  // began is copied for it, if `join(offset)` (the snapshot's offset) lets
  // it into the job. False (nothing changed) if no replica of the job is
  // left to copy from, or `join` refuses.
  bool JoinSync(const ReplicaInfo& info, uint32_t worker, int fd, const std::function<bool(uint64_t)>& join);
  // The snapshot for replica `id` has gone out (`ok`) or failed: online,
  // or to be closed by its worker. (Before the job and its socket go.)
  void SyncDone(uint64_t id, bool ok);
  // Worker 0's cron: a newline to each waiting replica, Redis's keep-alive
  // before a snapshot starts (a replica skips it).
  void KeepWaitingAlive();

  // --- The replica's worker ---
  // Whether `worker` was told of bytes for its replicas (a relaxed look,
  // before ServeWorker).
  bool told(uint32_t worker) const { return told_[worker].flag.load(std::memory_order_relaxed); }
  // For each replica of `worker` told of: `send(id, bytes)` with what to
  // write to it now, or `close(id, how)` (kCloseAfterSnapshot: it asked
  // for the snapshot alone, which is all written: closed once it is all
  // out; kCloseOverLimit: its stream passed client-output-buffer-limit
  // replica while it could not be sent, counted as such). A replica's bytes are taken once kBatchBytes have gathered,
  // or kBatchUs after the first came, or at once for a GETACK or PING or
  // its snapshot's end: fewer, larger writes (each a system call, and the
  // loopback's delivery on this core) for at most kBatchUs more lag.
  // Returns the µs until bytes left now are due (the worker comes back
  // then; its flag stays set), or -1.
  enum CloseHow : uint8_t { kCloseNow, kCloseAfterSnapshot, kCloseOverLimit };
  int64_t ServeWorker(uint32_t worker, const std::function<void(uint64_t, std::string&)>& send,
                      const std::function<void(uint64_t, CloseHow)>& close);
  static constexpr size_t kBatchBytes = 64 << 10;
  static constexpr int64_t kBatchUs = 1000;
  // REPLCONF ACK <offset> [FACK <aof offset>] (`aof_offset` -1: none).
  void Ack(uint64_t id, uint64_t offset, int64_t aof_offset, int64_t now_ms);
  void SetListeningPort(uint64_t id, int port);
  // The replica's connection closed.
  void Detach(uint64_t id);

  // --- WAIT ---
  // Replicas online (not SYNC's) that acknowledged `offset`.
  int CountAcks(uint64_t offset);
  // Replicas online (not SYNC's), acknowledged or not.
  int CountOnline() { return CountAcks(0); }
  // Client `id` of `worker` waits until `need` replicas acknowledged
  // `offset`, or until `deadline_ms` (unix ms; 0: for ever). Replicas are
  // asked for their ACK before the worker sleeps (FlushGetack).
  void AddWaiter(uint64_t id, uint32_t worker, uint64_t offset, int64_t need, int64_t deadline_ms);
  // WAITAOF: also until this server's append-only file is durable up to
  // `aof_target` (when `need_local`), the replicas counted by their FACK.
  void AddAofWaiter(uint64_t id, uint32_t worker, uint64_t offset, int64_t need_local, uint64_t aof_target,
                    int64_t need, int64_t deadline_ms);
  int CountAofAcks(uint64_t offset);
  // SHUTDOWN waiting for lagging replicas (shutdown-timeout): as a WAIT for
  // `need` replicas, whose end (kWaitShutdownGo) shuts down; a client that
  // goes meanwhile leaves it waiting without one (id 0); CLIENT UNBLOCK
  // does not end it. AbortShutdownWaiters ends them all (SHUTDOWN ABORT,
  // a failed save): kWaitShutdownAborted.
  void AddShutdownWaiter(uint64_t id, uint32_t worker, uint64_t offset, int64_t need, int64_t deadline_ms);
  void AbortShutdownWaiters();
  bool has_waiters(uint32_t worker) const { return told_[worker].waiters.load(std::memory_order_relaxed) > 0; }
  // One REPLCONF GETACK into the stream if a client began to wait since the
  // last (the waiter's worker, before it sleeps).
  void FlushGetack();
  // The worker's waiters that are done (enough ACKs, their deadline
  // passed, unblocked): `done(id, local, count, error)` each (`local`: -1
  // for WAIT, else WAITAOF's local count, against the file's durable
  // bytes `aof_synced` (0 when nothing can count as durable); `error`: a
  // WaitError); returns the ms until the next deadline (-1: none).
  enum WaitError : int { kWaitOk, kWaitUnblocked, kWaitAofOff, kWaitShutdownGo, kWaitShutdownAborted };
  int64_t ServeWaiters(uint32_t worker, int64_t now_ms, uint64_t aof_synced, bool aof_on,
                       const std::function<void(uint64_t, int, int, int)>& done);
  // The client went.
  void DropWaiter(uint64_t id, uint32_t worker);
  // CLIENT UNBLOCK: its answer now (`error`: -UNBLOCKED instead of the
  // count); false if it is not waiting, or answered already.
  bool UnblockWaiter(uint64_t id, bool error);

  // --- INFO, ROLE ---
  uint64_t offset();
  std::vector<ReplicaInfo> Replicas();
  struct BacklogInfo {
    bool active = false;
    uint64_t first = 0, histlen = 0;
  };
  BacklogInfo Backlog();
  // Replicas online whose last ACK is at most `max_lag_s` old.
  int GoodReplicas(int64_t now_ms, int max_lag_s);
  // CONFIG SET repl-backlog-size.
  void Resize(size_t size);
  // client-output-buffer-limit replica's hard limit (0: none): a replica
  // whose unsent stream grows past it while its snapshot goes is dropped.
  void set_pending_limit(uint64_t bytes) { pending_limit_.store(bytes, std::memory_order_relaxed); }

  // --- Worker 0's cron ---
  // Marks for closing the replicas online that sent no ACK for
  // `timeout_s` (Redis's "Disconnecting timedout replica").
  void DropSilent(int64_t now_ms, int timeout_s);
  // Whether the backlog has had no replica for `ttl_s` seconds (0: kept).
  bool BacklogExpired(int64_t now_ms, int ttl_s);
  // Every shard held: no backlog, no logging for it.
  void FreeBacklog();
  // The replicas counted by min-replicas-to-write, as last refreshed.
  int good_replicas() const { return good_.load(std::memory_order_relaxed); }
  void RefreshGood(int64_t now_ms, int max_lag_s) {
    good_.store(GoodReplicas(now_ms, max_lag_s), std::memory_order_relaxed);
  }

 private:
  struct Replica {
    ReplicaInfo info;
    uint32_t worker = 0;
    std::string pending;     // stream bytes its worker has yet to take
    int64_t pending_since_us = 0;  // when `pending` last went from empty to not
    // Its bytes go at the next wake-up whatever their size (a GETACK, a
    // PING, the end of its snapshot): see ServeWorker.
    bool urgent = false;
    bool close = false;      // failed: its worker closes it
    CloseHow how = kCloseNow;  // (how its worker closes it)
    // Its diskless snapshot is out: the stream waits for its first ACK, as
    // Redis's repl_start_cmd_stream_on_ack (a replica looking for the
    // `$EOF:` mark must not get the stream's first bytes in the same read).
    bool await_ack = false;
    // Its socket's duplicate: owned while it waits; the snapshot's while
    // that is sent (a replica that goes shuts it down: the snapshot stops
    // going to it); -1 after.
    int fd = -1;
    int64_t waiting_since_ms = 0;  // (AttachWaiting's)
    uint64_t sync_offset = 0;      // the offset its snapshot stands for
  };
  // Tells the replica's worker (under the lock).
  void Tell(uint32_t worker);
  static std::unique_ptr<Replica> MakeReplica(const ReplicaInfo& info, uint32_t worker, State state);
  void AppendLocked(std::string_view bytes);
  // A chunk into the stream (a SELECT first where needed).
  void FeedLocked(const AofChunk& chunk);
  // After StreamOrder took a chunk: what waits there past the replicas'
  // hard limit goes out as it is (never in the normal course: a group's
  // part keeps the others' waiting only until its worker runs it).
  void BoundOrderLocked();
  // Every shard held: nothing can be waiting for a part; made sure of.
  void SettleOrderLocked();
  // The order starts again (a new or no backlog): what waited is released.
  void ResetOrderLocked();
  // The tickets StreamOrder released go to gates_; the workers that want
  // to know join to_wake_.
  void PublishLocked();
  void WakeNowLocked();
  void MergeReleaseWakesLocked();  // (release_wake_ into to_wake_)

  // What StreamOrder may keep waiting when the replicas' hard limit is off.
  static constexpr uint64_t kOrderLimit = uint64_t{256} << 20;

  std::mutex mu_;
  std::atomic<bool> feeding_{false};
  std::atomic<bool> relaying_{false};
  std::unique_ptr<ReplBacklog> backlog_;
  StreamOrder order_;
  const StreamOrder::Emit emit_;  // (FeedLocked, for order_)
  std::atomic<uint64_t> epoch_{1};  // order_.epoch(), for reading without the lock
  // Per shard, a line each: its last ticket released, and whether its
  // worker wants to be woken when that moves.
  struct alignas(64) Gate {
    std::atomic<uint64_t> released{0};
    std::atomic<bool> want{false};
  };
  std::unique_ptr<Gate[]> gates_;
  uint64_t offset_ = 0;  // master_repl_offset
  int stream_db_ = -1;
  std::vector<std::unique_ptr<Replica>> replicas_;
  // Per worker, a line each: told already (until it takes its replicas'
  // bytes).
  struct alignas(64) Told {
    std::atomic<bool> flag{false};
    std::atomic<int> waiters{0};  // its clients in WAIT
    // (ServeWorker's: its replicas' bytes, by client id.)
    std::vector<std::pair<uint64_t, std::string>> out;
  };
  // A buffer ServeWorker keeps between wake-ups at most this large.
  static constexpr size_t kKeptBuffer = size_t{1} << 20;
  static std::vector<uint32_t>& WakeList();
  struct Waiter {
    uint64_t id;
    uint32_t worker;
    uint64_t offset;
    int64_t need, deadline_ms;
    bool done = false, error = false;
    bool aof = false, local_ok = false;  // WAITAOF (local_ok: as ServeWaiters last saw)
    bool shutdown = false;               // SHUTDOWN's (AddShutdownWaiter)
    int64_t need_local = 0;
    uint64_t aof_target = 0;
  };
  int CountAcksLocked(uint64_t offset) const;
  int CountAofAcksLocked(uint64_t offset) const;
  bool SatisfiedLocked(const Waiter& w) const {
    return w.aof ? (w.local_ok || w.need_local == 0) && CountAofAcksLocked(w.offset) >= w.need
                 : CountAcksLocked(w.offset) >= w.need;
  }
  std::vector<Waiter> waiters_;
  std::unique_ptr<Told[]> told_;
  std::vector<uint32_t> to_wake_;  // (scratch, under the lock)
  std::vector<uint32_t> release_wake_;  // (PublishLocked's: see FeedPart)
  std::function<void(uint32_t)> wake_;
  std::atomic<uint64_t> pending_limit_{0};
  std::atomic<int> good_{0};
  std::atomic<bool> getack_{false};
  int64_t no_replicas_since_ms_ = 0;  // (when the last one went)
};

}  // namespace peregrine
