// One client connection: its socket, buffers, parser and the per-connection
// state that commands change (selected database, protocol, name). Owned by
// its Worker; lives on that worker's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/event_loop.h"
#include "net/tls.h"
#include "protocol/buffer.h"
#include "protocol/output_buffer.h"
#include "protocol/parser.h"
#include "server/blocking.h"
#include "server/pubsub.h"
#include "server/watch.h"

namespace peregrine {

class Worker;
struct AclUser;
struct CommandSpec;
struct ExecBatch;
struct Client;

// A replica's full sync over TLS (docs/replication.md): the snapshot's
// thread writes to the far end of a socketpair, and the client's worker
// moves what it reads from `fd` into the client's output, through its TLS
// session (ClientIo::Pump), reading only while that output is below
// ClientIo::kPumpBound (the snapshot's thread waits meanwhile). Owned by its
// client; its worker's thread only.
struct SnapshotPump final : IoHandler {
  explicit SnapshotPump(Client* c, int fd) : client(c), fd(fd) {}
  void OnEvent(uint32_t events) override;
  Client* client;
  int fd;                      // -1 once the snapshot's end was read (or the client went)
  bool paused = false;         // its output at the bound: out of the loop until it drains
  bool close_at_end = false;   // REPLCONF rdb-only: closed once the snapshot is out
  std::string after;           // stream bytes that came before the snapshot's end
};

struct Client final : IoHandler {
  Client(Worker* worker, uint64_t id, int fd) : worker(worker), id(id), fd(fd) {}
  ~Client() override { DropBigArgs(); }
  void OnEvent(uint32_t events) override;
  bool ServedWhileParked() const override { return true; }

  Worker* worker;
  uint64_t id;  // (a worker's proxy client takes the id of the client it stands for)
  uint32_t home = 0;  // its worker's index (a proxy client: the worker of the client it stands for)
  int fd;
  bool is_unix = false;
  std::unique_ptr<TlsSession> tls;  // connected on tls-port
  bool is_script = false;  // the client scripts' redis.call()s run as
  bool obeyed = false;     // the AOF replayer's: what the file says is done (Redis's mustObeyClient)
  std::string addr;   // "ip:port"
  std::string laddr;  // local "ip:port"

  // Connection state changed by commands.
  // The ACL user it runs as (docs/security.md): the default user until AUTH
  // or HELLO ... AUTH; `authenticated` once it has (or from the start while
  // the default user needs no password). The users are the server's; a
  // user other than the default one is held by user_ref (a deleted user's
  // clients are closed, but its batches may still be running elsewhere).
  AclUser* user = nullptr;
  std::shared_ptr<AclUser> user_ref;
  bool authenticated = false;
  int db = 0;
  int resp = 2;
  // Redis Cluster: ASKING (for the next command, or the transaction's
  // EXEC) and READONLY (reads of the primary's slots on a replica).
  bool asking = false, cluster_readonly = false;
  // CLIENT REPLY: on, off, skip the next command's reply, skip this one's;
  // `quiet` while a command whose reply is dropped runs (Worker).
  enum ReplyMode : uint8_t { kReplyOn, kReplyOff, kReplySkipNext, kReplySkip };
  uint8_t reply_mode = kReplyOn;
  bool quiet = false;
  // An atomic slot migration's importing connection (CLUSTER SYNCSLOTS
  // ESTABLISH): served for these slots (kNumSlots flags) before they are
  // this node's; its import's name.
  std::shared_ptr<const std::vector<bool>> import_slots;
  std::string import_name;
  std::string name;
  std::string lib_name;
  std::string lib_ver;
  // MULTI ... EXEC (docs/transactions.md): the commands queued, their
  // arguments end to end; null outside a transaction.
  struct Transaction {
    struct Queued {
      const CommandSpec* spec;
      uint32_t argc;
    };
    std::vector<Queued> commands;
    std::string bytes;
    std::vector<uint32_t> arg_sizes;
    // A command was refused while queuing (unknown, wrong arity, not
    // allowed): EXEC fails with EXECABORT.
    bool aborted = false;
    bool denyoom = false;  // a queued command may add memory (EXEC checks maxmemory)
    bool writes = false;   // a queued command writes or may replicate (CLIENT PAUSE WRITE holds EXEC)
    size_t Bytes() const { return bytes.capacity() + arg_sizes.capacity() * 4 + commands.capacity() * sizeof(Queued); }
    void Clear() {
      commands.clear();
      bytes.clear();
      arg_sizes.clear();
      aborted = denyoom = writes = false;
    }
  };
  std::unique_ptr<Transaction> multi;
  // The last transaction's, kept for the next MULTI (its buffers keep their
  // room: a client running transactions allocates nothing per transaction).
  std::unique_ptr<Transaction> spare_multi;
  // Ends the transaction (EXEC, DISCARD, RESET); small buffers are kept.
  void EndTransaction(std::unique_ptr<Transaction> t) {
    if (t == nullptr || t->Bytes() > 64 * 1024) return;
    t->Clear();
    spare_multi = std::move(t);
  }
  // Its WATCH (null: none), until EXEC, DISCARD, UNWATCH or RESET
  // (Worker::Unwatch).
  std::shared_ptr<WatchState> watch;
  // Its Pub/Sub subscriptions (null: none). Subscribed over RESP2, a client
  // may only run (P)SUBSCRIBE, (P)UNSUBSCRIBE, PING, QUIT and RESET.
  std::unique_ptr<ClientSubscriptions> subs;
  // Messages published to it while a batch of its commands was out on
  // another worker: they follow the batch's replies (as Redis 7.2 sends a
  // client's own events after its command's reply). Null: none.
  std::unique_ptr<Buffer> pushes_after;
  bool monitor = false;  // MONITOR: every command's line comes here (MonitorFeed)
  // CLIENT TRACKING (tracking.h): its flags (tracking::kOn ...), whether
  // the running command's reads are remembered for it (a proxy client: for
  // the client it stands for), the client its invalidations go to (0:
  // itself) and that one's worker, and its BCAST prefixes.
  uint8_t tracking = 0;
  bool track_reads = false;
  // CLIENT NO-TOUCH: its commands (but TOUCH) leave keys' LRU/LFU data as
  // they were (a proxy or script client: for the client it stands for).
  bool no_touch = false;
  bool no_evict = false;  // CLIENT NO-EVICT: maxmemory-clients leaves it alone
  uint64_t tracking_redirect = 0;
  uint32_t tracking_redirect_home = 0;
  std::vector<std::string> tracking_prefixes;
  void ReleasePushes() {
    if (pushes_after == nullptr) [[likely]]
      return;
    out.Append(pushes_after->view());
    pushes_after.reset();
  }

  Buffer in;
  const Buffer* reading = nullptr;  // the buffer its commands are read from now (CLIENT LIST's qbuf)
  OutputBuffer out;
  RequestParser parser;

  // Large arguments of the pending command read straight into blocks of
  // their own (RequestParser::ExternalBulk) instead of through `in`: the
  // block (plain malloc), its length, the bytes arrived, and where in the
  // command the bytes belong. They stay here until the command has run; a
  // handler that stores one as a value takes it over (TakeBigArg).
  // No argument shorter than this is read into a block of its own (the
  // worker's threshold is 32 KB, lowered as far as this by the fuzzer).
  static constexpr size_t kMinBigArg = 64;
  struct BigArg {
    char* block;
    size_t len;
    size_t have;
    size_t offset;
  };
  std::vector<BigArg> big_args;
  int rcvlowat = 1;  // the socket's SO_RCVLOWAT (Worker::SetLowWater)
  // Whether the last of them is still arriving.
  bool filling_big_arg() const { return !big_args.empty() && big_args.back().have < big_args.back().len; }
  // Bytes received into them.
  size_t big_arg_bytes() const {
    size_t n = 0;
    for (const BigArg& a : big_args) n += a.have;
    return n;
  }
  // The block holding `arg` if it is one of those arguments (its bytes, not
  // merely equal ones), which the caller now owns; nullptr otherwise.
  char* TakeBigArg(std::string_view arg) {
    for (size_t i = 0; i < big_args.size(); i++) {
      if (big_args[i].block == arg.data() && big_args[i].len == arg.size() && big_args[i].have == arg.size()) {
        char* b = big_args[i].block;
        big_args.erase(big_args.begin() + static_cast<ptrdiff_t>(i));
        return b;
      }
    }
    return nullptr;
  }
  void DropBigArgs() {
    for (const BigArg& a : big_args) std::free(a.block);
    big_args.clear();
  }

  int64_t ctime_ms = 0;             // unix ms when connected
  int64_t last_interaction_ms = 0;  // unix ms of the last read or write
  const CommandSpec* last_cmd = nullptr;

  // Commands for another worker's shard: the batch being filled (sent when
  // the client's input has been processed) and whether one is out (the
  // client's later commands wait for its replies).
  ExecBatch* open_batch = nullptr;
  bool batch_in_flight = false;
  // A batch that came back with commands not run: a script in it stopped
  // to run again holding every shard (docs/scripting.md). They run, from
  // pending_next, before anything the client sent later.
  ExecBatch* pending = nullptr;
  size_t pending_next = 0;
  // Its next command on this worker's shard waits for write groups
  // registered on it before it looked (BatchRelay::HoldClient), up to
  // `claim_ticket`; not read meanwhile. Once they have run, what it had
  // sent runs without waiting again (claim_ticket stays until it is read
  // again: ClientIo::HoldReading).
  bool claim_wait = false;
  uint64_t claim_ticket = 0;
  // A command of it ran on this worker's shard after a write group's part
  // that is not in the replication stream yet (BatchRelay::StreamHoldNow):
  // its replies, and its commands for other shards, wait until the stream
  // has this shard's tickets up to `stream_hold` (0: none). Listed
  // (`stream_listed`) for BatchRelay::ReleaseHeld.
  uint64_t stream_hold = 0;
  bool stream_listed = false;
  void HoldForStream(uint64_t ticket) {
    if (ticket > stream_hold) stream_hold = ticket;
  }

  // Blocked by BLPOP & co. (docs/blocking.md): the wait, shared with the
  // shards of its keys; its later input waits in `in` until it is over.
  std::shared_ptr<BlockedClient> blocked;
  // Woken by a key on a shard of another worker when the command needs more
  // shards than that worker held: the command runs again from here.
  std::shared_ptr<BlockedClient> rerun;
  // While that command runs again: its wait's deadline, which the wait
  // keeps if it blocks again (BlockingWaits::BlockClient); -1 otherwise.
  int64_t rerun_deadline_ms = -1;
  // Whether its input waits: blocked, or woken and its command not yet run
  // again (its reply comes before any later command's).
  bool waiting() const {
    return blocked != nullptr || rerun != nullptr || pending != nullptr || wait_acks || pause_held;
  }

  // The peer shut down its side while commands of it were still running
  // elsewhere: no more reading; closed once they are answered.
  bool read_closed = false;
  // When its pending replies first reached the soft output buffer limit
  // (unix seconds; 0 = below it).
  int64_t obuf_soft_since_s = 0;
  bool close_after_reply = false;  // QUIT, protocol error, CLIENT KILL of itself
  bool closed = false;             // removed from the loop; freed after the batch
  bool in_pending_writes = false;  // queued for the flush before sleeping
  bool writable_armed = false;     // EPOLLOUT registered
  // Not read for now: its commands wait for others that run elsewhere and
  // it has sent ClientIo::kHeldInputMax bytes more (ClientIo::HoldReading).
  bool reading_held = false;
  // Replication (docs/replication.md): what it said in REPLCONF before
  // PSYNC, whether it is a replica now, and whether a snapshot is going to
  // its socket from the BGSAVE's thread (nothing else is written to it;
  // plain TCP).
  int repl_port = 0;
  std::string repl_ip;
  bool repl_capa_eof = false, repl_capa_psync2 = false, repl_rdb_only = false;
  uint8_t repl_rdb_filter = 0;  // REPLCONF rdb-filter-only: BgSave::kNoData | kNoFunctions
  bool replica = false;
  bool repl_hold = false;
  // Over TLS, instead of repl_hold: the snapshot goes through this worker.
  std::unique_ptr<SnapshotPump> repl_pump;
  bool pumping() const { return repl_pump != nullptr && repl_pump->fd >= 0; }
  // In WAIT: answered when enough replicas acknowledged, or at its
  // timeout (ReplicationPrimary's waiters); its later input waits.
  bool wait_acks = false;
  // Its next command waits for CLIENT PAUSE's end (client_pause.h).
  bool pause_held = false;
};

}  // namespace peregrine
