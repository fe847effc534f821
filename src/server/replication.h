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
#include <string>
#include <string_view>
#include <vector>

#include "persist/aof_format.h"
#include "server/repl_backlog.h"

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
    int64_t last_ack_ms = 0;
  };

  // `wake(worker)`: the worker has replica bytes to take (ServeWorker).
  ReplicationPrimary(uint32_t workers, std::function<void(uint32_t)> wake);
  ReplicationPrimary(const ReplicationPrimary&) = delete;
  ReplicationPrimary& operator=(const ReplicationPrimary&) = delete;

  // Whether commands are logged for the stream (a backlog exists).
  bool feeding() const { return feeding_.load(std::memory_order_acquire); }

  // A chunk of logged commands, in the order the stream takes them (a
  // SELECT first when its database is not the stream's).
  void Feed(const AofChunk& chunk);
  // A command outside any database (the PING every
  // repl-ping-replica-period).
  void FeedCommand(std::initializer_list<std::string_view> args);

  // --- Every shard held ---
  // Makes the backlog if there is none (`size` bytes, at the current
  // offset); true if it was made (the caller then starts logging).
  bool EnsureBacklog(size_t size);
  // The PSYNC answer for a replica (under the lock, against the backlog).
  PsyncAnswer Decide(std::string_view replid, int64_t offset, const ReplIds& ids, bool psync2);
  // A replica that continues: its bytes from `from` on are queued now.
  void AttachContinue(const ReplicaInfo& info, uint32_t worker, uint64_t from);
  // A replica for a full sync starting now: the stream from here on is
  // kept for it until the snapshot is sent. Returns the offset the
  // snapshot stands for (master_repl_offset now), and unsets the stream's
  // database (its next chunk selects one: the replica's load leaves its
  // own).
  uint64_t AttachFull(const ReplicaInfo& info, uint32_t worker);
  // The snapshot for replica `id` has gone out (`ok`) or failed: online,
  // or to be closed by its worker.
  void SyncDone(uint64_t id, bool ok);

  // --- The replica's worker ---
  // Whether the stream to replica `id` waits (a snapshot is going to its
  // socket: nothing else may be written to it).
  bool Holding(uint64_t id);
  // For each replica of `worker` told of: `send(id, bytes)` with what to
  // write to it now, or `close(id)`.
  void ServeWorker(uint32_t worker, const std::function<void(uint64_t, std::string&)>& send,
                   const std::function<void(uint64_t)>& close);
  void Ack(uint64_t id, uint64_t offset, int64_t now_ms);
  void SetListeningPort(uint64_t id, int port);
  // The replica's connection closed.
  void Detach(uint64_t id);

  // --- INFO, ROLE ---
  uint64_t offset();
  std::vector<ReplicaInfo> Replicas();
  struct BacklogInfo {
    bool active = false;
    uint64_t first = 0, histlen = 0;
  };
  BacklogInfo Backlog();
  // Replicas whose last ACK is at most `max_lag_s` old (min-replicas-*).
  int GoodReplicas(int64_t now_ms, int max_lag_s);
  // CONFIG SET repl-backlog-size.
  void Resize(size_t size);

 private:
  struct Replica {
    ReplicaInfo info;
    uint32_t worker = 0;
    std::string pending;     // stream bytes its worker has yet to take
    bool close = false;      // failed: its worker closes it
  };
  void AppendLocked(std::string_view bytes);

  std::mutex mu_;
  std::atomic<bool> feeding_{false};
  std::unique_ptr<ReplBacklog> backlog_;
  uint64_t offset_ = 0;  // master_repl_offset
  int stream_db_ = -1;
  std::vector<std::unique_ptr<Replica>> replicas_;
  // Per worker: told already (until it takes its replicas' bytes).
  std::unique_ptr<std::atomic<bool>[]> told_;
  std::vector<uint32_t> to_wake_;  // (scratch, under the lock)
  std::function<void(uint32_t)> wake_;
};

}  // namespace peregrine
