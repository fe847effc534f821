// What workers send each other through the mailbox (server/mailbox.h, one
// ring per ordered pair): a Mail pointer is a ring word (control messages are
// words of their own, Worker::Control). Each message is owned by its receiver
// until it sends it back or frees it (docs/transactions.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/compact_key.h"
#include "protocol/buffer.h"
#include "server/acl.h"
#include "server/blocking.h"
#include "server/command.h"
#include "server/notify.h"
#include "server/tracking.h"
#include "server/watch.h"

namespace peregrine {

// A message between workers that carries data (control messages are words
// in the ring, see Worker::Control).
struct Mail {
  enum class Kind : uint8_t {
    kExec,      // run a client's commands here and send the replies back
    kExecDone,  // the replies of an kExec, back on the client's worker
    kAdopt,     // a new connection accepted by worker 0
    kWoken,     // a blocked client's wait has its outcome (BlockMail, to its worker)
    kForget,    // a blocked client's wait is over: off this shard's wait lists (BlockMail)
    kUnwatch,   // a client stopped watching keys of this shard (UnwatchMail)
    kEvents,    // keyspace notifications for this worker's subscribers (EventsMail)
    kMonitor,   // MONITOR's lines for this worker's monitors (MonitorMail)
    kInvalidate,  // CLIENT TRACKING's invalidations for this worker's clients (InvalidateMail)
    kEvictAsk,     // evict from your shard now and answer (EvictMail, worker_evict.cc)
    kEvictAnswer,  // ... the answer, back to the asker
  };
  explicit Mail(Kind k) : kind(k) {}
  virtual ~Mail() = default;
  Kind kind;
};

// A run of one client's consecutive commands, each for one shard, that
// travels from worker to worker: each runs the commands for its shard that
// come next, in order, then passes the batch on to the next command's
// worker, and the last sends it back to the client's (a relay: the client's
// commands run one after another in the order it sent them, and only the
// replies go home; docs/transactions.md, "Pipelines and reply order").
// The arguments are copied (the client's read buffer moves on); the replies
// are written there in the client's protocol, in order, and copied into its
// output.
struct ExecBatch final : Mail {
  ExecBatch() : Mail(Kind::kExec) {}
  // A part freed before its group ended (mail left at shutdown): the last
  // one frees the relay, and the parts that were back already.
  ~ExecBatch() override {
    if (relay == nullptr) return;
    relay->parts[target] = nullptr;
    if (--relay->parts_out > 0) return;
    for (ExecBatch*& p : relay->parts)
      if (p != nullptr) {
        p->relay = nullptr;
        delete p;
      }
    delete relay;
  }
  uint32_t from = 0;    // the client's worker
  uint32_t target = 0;  // the worker it is sent to (the next command's)
  uint64_t client_id = 0;
  int db = 0;
  int resp = 2;
  // The client's ACL user (its scripts' calls and its transaction are
  // checked as that user here).
  AclUser* user = nullptr;
  std::shared_ptr<AclUser> user_ref;
  std::string origin;  // the client's address for MONITOR's lines (only while anyone monitors)
  std::string exec_word;  // a whole transaction's EXEC as the client wrote it (MONITOR's line, likewise)
  std::string bytes;                // the arguments, back to back
  std::vector<uint32_t> arg_sizes;  // of every argument of every command
  struct Command {
    const CommandSpec* spec;  // resolved (subcommand included)
    uint32_t argc;
    uint32_t target;  // the worker whose shard it runs on
    // Its first key encoded and hashed on the client's worker (bytes empty
    // if not): the worker that runs it points the view at its copy.
    CompactKey::Probe key = {};
    // A group's part: where its arguments start in the relay's (the part
    // has no copy of its own; the relay stays unchanged at home while its
    // parts are out).
    uint32_t arg0 = 0;
    bool no_touch = false;  // CLIENT NO-TOUCH
    // The client's CLIENT TRACKING flags when it sent it: whether its reads
    // are remembered (tracking::TracksReads), and its eviction invalidations
    // written before its reply (Worker::WriteOwnInvalidations).
    uint8_t tracking = 0;
    size_t byte0 = 0;
  };
  std::vector<Command> commands;
  // Where the relay stands: the next command to run, its first argument
  // and its first byte.
  uint32_t next = 0;
  uint32_t next_arg = 0;
  size_t next_offset = 0;
  Buffer reply;
  // Every command so far is the remote part of a PUBLISH (another PUBLISH
  // may join without waiting; see Worker::Dispatch).
  bool only_publishes = true;
  // A reply was cut (ReplyWriter::Full): the client is to be closed.
  bool cut = false;
  // It ends with a blocking command: nothing joins it after that one (the
  // client's later commands wait for its outcome).
  bool sealed = false;
  // That command blocked: the wait, for the client's worker.
  std::shared_ptr<BlockedClient> blocked;
  // A script that stopped to run again holding every shard: its index; it
  // and the commands after it have not run.
  static constexpr uint32_t kNoRerun = 0xFFFFFFFF;
  uint32_t rerun_from = kNoRerun;
  // Every command is read-only: the relay may run as a read group
  // (BatchRelay::SendOpen), its parts on every worker at once.
  bool reads_only = true;
  // No command is a script, blocks or is a PUBLISH's remote part: the relay
  // may run as a write group (BatchRelay::SendWriteGroup).
  bool plain = true;
  // A write group's part: its ticket on the target's shard (ClaimBoard),
  // which runs it in ticket order; 0 for any other batch. And its group's
  // id (unique among the groups in flight), number of parts and the
  // stream order's epoch, by which the replication stream takes the group
  // whole (StreamOrder); group 0 when no stream was fed as it was made.
  uint64_t ticket = 0;
  uint64_t group = 0;
  uint32_t group_parts = 0;
  uint64_t group_epoch = 0;
  // A read or write group: on the relay (kept on the client's worker
  // meanwhile), its parts by worker (null where it has none) and how many
  // are still out; on a part, the relay it belongs to, its shard's version
  // when the group was sent (a read group's) and where each command's reply
  // ends in `reply`.
  std::vector<ExecBatch*> parts;
  uint32_t parts_out = 0;
  ExecBatch* relay = nullptr;
  uint64_t version = 0;
  std::vector<uint32_t> reply_ends;
  // A whole MULTI ... EXEC whose keys all live on the target's shard
  // (Worker::SendTransaction): its commands run there as one, replying one
  // array, unless the client's WATCH failed (its dirty flag, or the
  // earliest watched deadline, unix ms or -1).
  bool transaction = false;
  std::shared_ptr<WatchState> watch;
  int64_t watch_deadline_ms = -1;

  // A batch for the same client as `o` (its worker, database, protocol and
  // ACL user).
  void SameClientAs(const ExecBatch& o) {
    from = o.from;
    client_id = o.client_id;
    db = o.db;
    resp = o.resp;
    user = o.user;
    user_ref = o.user_ref;
    origin = o.origin;
  }

  // Calls f(i, command, args) for the commands from `next` on that run on
  // worker `here`, moving `next` past each; stops before one for another
  // worker, or after one for which f returns false. `args` is scratch.
  // (A group's part reads its arguments in its relay's.)
  template <typename F>
  void RunFrom(uint32_t here, std::vector<std::string_view>* args, F&& f) {
    const ExecBatch& src = relay != nullptr ? *relay : *this;
    while (next < commands.size() && commands[next].target == here) {
      const Command& cmd = commands[next];
      args->clear();
      if (relay != nullptr) {
        next_arg = cmd.arg0;
        next_offset = cmd.byte0;
      }
      for (uint32_t j = 0; j < cmd.argc; j++) {
        args->emplace_back(src.bytes.data() + next_offset, src.arg_sizes[next_arg]);
        next_offset += src.arg_sizes[next_arg++];
      }
      const uint32_t i = next++;
      if (!f(i, cmd, std::span<const std::string_view>(*args))) return;
    }
  }
  bool finished() const { return next >= commands.size(); }

  void Clear() {
    kind = Kind::kExec;
    reads_only = true;
    plain = true;
    ticket = 0;
    group = 0;
    group_parts = 0;
    group_epoch = 0;
    parts.clear();
    parts_out = 0;
    relay = nullptr;
    version = 0;
    reply_ends.clear();
    next = 0;
    next_arg = 0;
    next_offset = 0;
    only_publishes = true;
    cut = false;
    sealed = false;
    rerun_from = kNoRerun;
    transaction = false;
    exec_word.clear();
    watch.reset();
    watch_deadline_ms = -1;
    blocked.reset();
    user_ref.reset();
    bytes.clear();
    arg_sizes.clear();
    commands.clear();
    reply.Clear();
  }
};

// A client's WATCH is over: its keys of the receiving worker's shard.
struct UnwatchMail final : Mail {
  explicit UnwatchMail(std::shared_ptr<WatchState> w) : Mail(Kind::kUnwatch), state(std::move(w)) {}
  std::shared_ptr<WatchState> state;
  struct Key {
    int db;
    std::string key;
  };
  std::vector<Key> keys;
};

// A blocked client's wait: woken (to the client's worker) or to forget (to a
// shard it was registered on).
struct BlockMail final : Mail {
  BlockMail(Kind k, std::shared_ptr<BlockedClient> w) : Mail(k), wait(std::move(w)) {}
  std::shared_ptr<BlockedClient> wait;
};

// Keyspace events that happened on the sender's thread, in order (notify.h).
struct EventsMail final : Mail {
  explicit EventsMail(std::vector<KeyspaceEvent> e) : Mail(Kind::kEvents), events(std::move(e)) {}
  std::vector<KeyspaceEvent> events;
};

// Invalidations made on the sender's thread, for clients of this worker
// (tracking.h).
struct InvalidateMail final : Mail {
  explicit InvalidateMail(std::vector<Invalidation> i) : Mail(Kind::kInvalidate), items(std::move(i)) {}
  std::vector<Invalidation> items;
};

// A command over maxmemory, whose own shard has nothing the policy may take,
// asks the workers whose shards have some to evict now (kEvictAsk), and
// waits for their answers (kEvictAnswer, the same mail sent back): the
// invalidations of what they evicted that are for the command's client
// (`client` of worker `home`) come back in `items`, and go before its reply
// (Redis evicts before it runs a command). Worker::EnforceMaxmemory. The
// same for a CLIENT TRACKING table over tracking-table-max-keys (`trim`:
// Worker::LimitTrackingTables), which Redis trims before each command.
struct EvictMail final : Mail {
  EvictMail(uint32_t from, uint32_t to, uint64_t seq, uint64_t client, uint32_t home, bool trim)
      : Mail(Kind::kEvictAsk), from(from), to(to), seq(seq), client(client), home(home), trim(trim) {}
  uint32_t from;  // the asker
  uint32_t to;    // the worker asked
  uint64_t seq;   // which round of its asks (a late answer is told from the awaited ones: EvictAsks)
  uint64_t client;
  uint32_t home;
  bool trim;  // the tracking table, not maxmemory
  std::vector<Invalidation> items;
};

// Lines of commands that ran on the sender's thread, for MONITOR (monitor.h).
struct MonitorMail final : Mail {
  explicit MonitorMail(std::string l) : Mail(Kind::kMonitor), lines(std::move(l)) {}
  std::string lines;
};

struct AdoptMail final : Mail {
  AdoptMail(int fd, bool is_unix, uint64_t id, bool tls)
      : Mail(Kind::kAdopt), fd(fd), is_unix(is_unix), id(id), tls(tls) {}
  int fd;
  bool is_unix;
  uint64_t id;
  bool tls;
};

}  // namespace peregrine
