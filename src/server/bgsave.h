// BgSave: BGSAVE without fork (docs/persistence.md). Started holding every
// shard for an instant (the snapshot's point in time), it makes every
// database of every shard send its keys as they were then (Db's
// copy-on-write per segment): each worker goes on with its own shard
// between events (Step), and a write to a segment not sent yet sends it
// first, from whichever thread holds the shard. Each shard's keys become
// RDB chunks (SELECTDB, then whole keys) that a writer thread appends to
// the temporary file in the order they come (an RDB file may select a
// database many times), checksumming as it goes; when every shard is done
// it writes the end, fsyncs, and renames the file into place. The memory
// it takes is the chunks waiting for the disk (at most kMaxQueued before
// the workers' own steps wait, kMaxQueuedSocket for a replica's socket;
// writes' copies go regardless).
#pragma once

#include <poll.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/db.h"
#include "persist/rdb_writer.h"

namespace peregrine {

class Server;

class BgSave {
 public:
  static constexpr size_t kMaxQueued = 16 << 20;
  // A diskless sync's: the replica's socket (its loader's pace) rather than
  // a disk's latency is what the queue covers, and the chunks waiting are
  // the primary's whole growth during a sync (16 MB was 1.3x the RSS of a
  // 1M-key primary syncing a Redis replica).
  static constexpr size_t kMaxQueuedSocket = 4 << 20;
  static constexpr size_t kChunkBytes = 64 << 10;

  // Every shard held: opens the temporary file, queues the header (aux
  // fields, function libraries), starts the snapshot on every database.
  // Null with *err if the file cannot be opened. By default the file is
  // dbfilename (BGSAVE); an AOF rewrite names its own (`temp`, renamed to
  // `filename` when written) and says so (`aof_base`: INFO and the
  // reaper tell the two apart).
  static std::unique_ptr<BgSave> Start(Server& server, std::string* err);
  // `commands`: the file is an AOF base of commands, not RDB.
  static std::unique_ptr<BgSave> Start(Server& server, std::string* err, std::string temp, std::string filename,
                                       bool aof_base, bool commands);
  // A full sync of one or more replicas (docs/replication.md), each a
  // Target: its client id, where its bytes go (`fd`: its socket,
  // duplicated; over TLS the socketpair its worker reads; the job closes
  // it) and what goes first (`prefix`: the +FULLRESYNC line, none for SYNC).
  // Diskless, the snapshot follows with the `$EOF:<mark>` header and ends
  // with the 40-byte `mark`, to every target at once. With `disk`
  // (repl-diskless-sync no, or a replica without capa eof) it is written to
  // dbfilename first, as BGSAVE writes it, a newline going to the replicas
  // every second meanwhile; then `$<length>` and the file's bytes go. A
  // target whose socket fails (or takes nothing for repl-timeout) is shut
  // down and dropped alone; the snapshot stops once none is left. Every
  // shard held; null with *err if the file cannot be opened.
  struct Target {
    uint64_t id = 0;
    int fd = -1;
    std::string prefix;
  };
  // `filter` leaves parts out (REPLCONF rdb-filter-only; diskless only):
  // kNoData (no keys), kNoFunctions (no function libraries).
  static constexpr uint8_t kNoData = 1, kNoFunctions = 2;
  static std::unique_ptr<BgSave> StartToReplicas(Server& server, std::string* err, std::vector<Target> targets,
                                                 std::string mark, bool disk, uint8_t filter = 0);
  // A disk-based sync still writing its file takes one more replica (its
  // prefix goes at once; the job owns `fd` then). False while the file's
  // bytes are going already, or none of the replicas is left.
  bool AddTarget(Target target);
  // Whether this job is a full sync's, and whether it goes through the
  // file; whether the file's bytes are being sent (INFO's send_bulk; the
  // file is in place then).
  bool for_replicas() const { return for_replicas_; }
  bool disk() const { return disk_; }
  bool sending_file() const { return sending_file_.load(std::memory_order_acquire); }
  // The replicas the sync is for.
  std::vector<uint64_t> replicas();
  // Once finished(): how it went for each replica (`error` if not ok).
  struct Outcome {
    uint64_t id = 0;
    bool ok = false;
    std::string error;
  };
  std::vector<Outcome> outcomes();
  // (A disk-based sync, once finished: the file was written and is in place
  // (it counts as a BGSAVE's), or writing it failed on the disk, and when.)
  bool file_ok() const { return file_ok_; }
  bool file_error() const { return file_error_; }
  int64_t file_end_ms() const { return file_end_ms_; }
  bool aof_base() const { return aof_base_; }
  const std::string& filename() const { return filename_; }
  ~BgSave();
  BgSave(const BgSave&) = delete;
  BgSave& operator=(const BgSave&) = delete;

  // The worker owning shard `shard`, holding it, between events: sends
  // about `max_entries` more keys. Returns false once the shard is done
  // (then the worker must not call it again: its last touch of this object).
  bool Step(size_t shard, size_t max_entries);
  // Every shard held: stops the snapshot everywhere; the writer removes the
  // temporary file. The object may then be destroyed.
  void Abort();

  // Whether the writer has finished (the file in place, or failed).
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  int64_t start_ms() const { return start_ms_; }
  uint64_t dirty_at_start() const { return dirty_at_start_; }
  uint64_t keys_total() const { return keys_total_; }
  uint64_t keys_saved() const { return keys_saved_.load(std::memory_order_relaxed); }
  uint64_t bytes_written() const { return bytes_written_.load(std::memory_order_relaxed); }
  // Whether the chunks waiting for the disk are at their bound (Step then
  // does nothing).
  bool backlogged() const { return queued_bytes_.load(std::memory_order_relaxed) >= max_queued_; }

 private:
  struct ShardSink;
  BgSave() = default;
  // The settings every kind of job takes when it starts.
  static std::unique_ptr<BgSave> Make(Server& server);
  // Opens temp_ for writing (fd_); false with *err (Redis's text).
  bool OpenTemp(std::string* err);
  void Push(std::string&& chunk, uint64_t keys);
  // Every shard held: the header, and every database's snapshot starts.
  void Begin(Server& server);
  // The snapshot's bytes: to the file, or to a diskless sync's replicas.
  bool Write(std::string_view bytes);
  // A replica's destination (outs_; `done`, `progress_ms`: SendTo's).
  struct Out {
    uint64_t id = 0;
    int fd = -1;
    std::string prefix;
    bool failed = false;
    std::string error;
    size_t done = 0;
    int64_t progress_ms = 0;
  };
  // To the replicas in `outs` not failed, all at once (polling the sockets
  // that are full, each allowed repl-timeout without progress); false if
  // none took it all.
  bool SendTo(const std::vector<Out*>& outs, std::string_view bytes);
  // The writer's: outs_ added since its last look get their prefix.
  void TakeNewOuts();
  // A disk-based sync's second half: `$<length>` and the file's bytes.
  bool SendFile(int file, std::string* why);
  void WriterMain();

  Server* server_ = nullptr;
  std::string temp_, filename_;
  bool aof_base_ = false;
  bool commands_ = false;
  bool for_replicas_ = false;
  bool disk_ = false;
  uint8_t filter_ = 0;
  std::string mark_;  // (diskless: what the snapshot ends with)
  int64_t send_timeout_ms_ = 0;  // (to a replica: repl-timeout when it started)
  // To replicas whose sockets all failed: the shards stop their walk.
  std::atomic<bool> give_up_{false};
  std::atomic<bool> sending_file_{false};
  bool file_ok_ = false, file_error_ = false;
  int64_t file_end_ms_ = 0;
  int fd_ = -1;      // the file
  // The replicas' (under mu_: AddTarget appends; the writer's own list,
  // writer_outs_, follows it).
  std::vector<std::unique_ptr<Out>> outs_;
  bool accepting_ = false;  // (under mu_: AddTarget may add a replica)
  std::vector<Out*> writer_outs_;
  std::vector<pollfd> polls_;  // (SendTo's)
  std::vector<Out*> polled_;
  int64_t start_ms_ = 0;
  uint64_t dirty_at_start_ = 0;
  uint64_t keys_total_ = 0;
  size_t max_queued_ = kMaxQueued;
  // Each database's keys and keys with a deadline as the snapshot began
  // (RESIZEDB after each shard's SELECTDB).
  std::vector<std::pair<uint64_t, uint64_t>> db_totals_;
  int64_t key_delay_us_ = 0;
  bool checksum_ = true;
  std::vector<std::unique_ptr<ShardSink>> shards_;
  std::atomic<uint64_t> keys_saved_{0};
  std::atomic<uint64_t> bytes_written_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, uint64_t>> queue_;  // chunks and their key counts
  std::atomic<size_t> queued_bytes_{0};
  size_t shards_done_ = 0;
  bool aborted_ = false;

  std::thread writer_;
  std::atomic<bool> finished_{false};
  bool ok_ = false;
  std::string error_;
};

}  // namespace peregrine
