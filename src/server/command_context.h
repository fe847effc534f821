// What a command handler sees while it runs: its CommandContext, the worker
// running it as a CommandHost, and the process as ServerState
// (server_state.h). commands/*.cc include this (through commands/common.h)
// and never server.h or worker.h: the thread machinery behind these (the
// rings, shard lending, the event loop, the listeners) is not theirs to touch.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "core/compact_key.h"
#include "core/value.h"
#include "server/client.h"
#include "server/command.h"
#include "server/config.h"
#include "server/server_state.h"

namespace peregrine {

class Db;
class KeyspaceEvents;
class MonitorFeed;
class LuaEngine;
class PubSubRegistry;
class ReplyWriter;
class Shard;
struct BlockedClient;

// The worker running a command, as its handler may use it (Worker,
// worker.h, is the one implementation). Everything here runs on the calling
// thread; another worker's host (ServerState::host) is for a command holding
// that worker's shard.
class CommandHost {
 public:
  uint32_t index() const { return index_; }
  // The workers the running command holds (PUBLISH: those with subscribers;
  // just this one for a command that holds no other).
  virtual std::span<const uint32_t> held_workers() const = 0;
  // EXEC runs its queue, or a script runs (nothing may block).
  virtual bool in_exec() const = 0;
  // The connection closes once this command's reply is written.
  static void CloseAfterReply(Client& c) { c.close_after_reply = true; }

  // --- The append-only file (docs/persistence.md) ---
  // Whether commands are being logged (the append-only file is on).
  virtual bool logging() const = 0;
  // The command, if it changes something, is logged as `args` instead of
  // as sent (Redis's rewriteClientCommandVector: SET ... PXAT, PEXPIREAT,
  // SREM for SPOP, LPOP for a served BLPOP ...); several calls log several
  // commands.
  virtual void LogAs(std::span<const std::string_view> args) = 0;
  void LogAs(std::initializer_list<std::string_view> args) {
    LogAs(std::span<const std::string_view>(args.begin(), args.size()));
  }
  // The running command is logged only in the forms it gave with LogAs,
  // none if it gave none (Redis's preventCommandPropagation: XREADGROUP
  // logs what it delivered, never itself).
  virtual void LogOnlyForms() = 0;
  // `args` (of the client's database) go to the replicas' stream only, not
  // to the append-only file, after what this worker logged before (Redis's
  // PROPAGATE_REPL: PUBLISH, for the replicas' subscribers).
  virtual void ReplicateOnly(int db, std::span<const std::string_view> args) = 0;

  // --- Blocking (docs/blocking.md) ---
  // For a handler that found nothing to serve: blocks the client on `keys`
  // (on shards this thread holds, as every key of the running command) until
  // one holds a value of `type`, or until `deadline_ms` (unix ms; 0: for
  // ever). Nothing is replied now; a timeout replies a null array, as Redis
  // does for every wait on lists (and sorted sets and streams). Where the
  // client may not wait (inside EXEC) it is answered at once as a timeout,
  // with `no_wait` (Redis's BLMOVE and BRPOPLPUSH reply a null bulk there).
  enum class NoWaitReply : uint8_t { kNullArray, kNull };
  virtual void Block(CommandContext& ctx, std::span<const std::string_view> keys, ValueType type,
                     int64_t deadline_ms, NoWaitReply no_wait = NoWaitReply::kNullArray) = 0;
  // A command added a value at a key of shard `shard` (held by this thread)
  // that clients wait on: they are served when the command ends.
  virtual void NoteReady(uint32_t shard) = 0;
  // CLIENT UNBLOCK (every shard held): ends the wait as a key serving it
  // would, with the timeout reply or an UNBLOCKED error; false if it is
  // being served, timed out or gone already.
  virtual bool Unblock(std::shared_ptr<BlockedClient> w, bool error) = 0;

  // --- Transactions (docs/transactions.md) ---
  // EXEC's work: runs the client's queued commands, each replying into one
  // array, holding what the dispatcher took for EXEC.
  virtual void RunTransaction(CommandContext& ctx) = 0;
  // The end of a client's WATCH (EXEC, DISCARD, UNWATCH, RESET, its end):
  // its keys leave the watch tables, this worker's shard's at once, the
  // others' by mail.
  virtual void Unwatch(Client& c) = 0;
  // A transaction ends without running (DISCARD, a refused EXEC, RESET).
  virtual void DiscardTransaction(Client& c) = 0;

  // --- Pub/Sub ---
  virtual PubSubRegistry& pubsub() = 0;
  // Keyspace events of the running thread, delivered once the command has
  // replied (Notify, commands/common.h).
  virtual KeyspaceEvents& events() = 0;
  // MONITOR's side of this worker (monitor.h).
  virtual MonitorFeed& monitor() = 0;
  // Delivers a message to this worker's subscribers of `channel` (and of the
  // patterns matching it), or with `shard` of the shard channel (SPUBLISH);
  // returns how many deliveries. Called on this worker's thread
  // (own_thread) or by a command holding this worker; a subscriber over its
  // output buffer limit is then closed when the worker gets its shard back.
  virtual size_t Publish(std::string_view channel, std::string_view message, bool own_thread, bool shard) = 0;
  // Cluster mode, a slot's owner changed: this worker's subscriptions to
  // shard channels for which `gone(channel, table version when made)` is
  // true end, each told with a sunsubscribe (Redis's removeChannelsInSlot).
  // Same callers as Publish.
  virtual void DropShardChannels(const std::function<bool(std::string_view, uint64_t)>& gone, bool own_thread) = 0;

  // --- Access control (docs/security.md) ---
  // A new connection (or RESET): the default user, authenticated if it
  // needs no password.
  virtual void SetDefaultAuth(Client& c) const = 0;
  // Checks the credentials; on success the client runs as that user, on
  // failure the attempt is logged (ACL LOG, acl_access_denied_auth).
  // `command` names the command for the log (as sent: "AUTH", "hello").
  virtual bool Authenticate(Client& c, std::string_view username, std::string_view password,
                            std::string_view command) = 0;
  // Whether `action` (an enable-*-command / enable-protected-configs
  // setting) lets client `c` through: yes, no, or from a local connection
  // only (a Unix socket, 127.0.0.1 or ::1).
  static bool Allows(Config::ProtectedAction action, const Client& c);

  // --- Scripting (docs/scripting.md) ---
  // This worker's interpreters, created on first use.
  virtual LuaEngine& lua() = 0;
  // After SCRIPT FLUSH: drops this worker's scripts' interpreter (its own
  // thread, or one holding every shard).
  virtual void SyncScripts() = 0;
  // SCRIPT KILL / FUNCTION KILL from any thread: the busy script of this
  // worker, if any, is told to stop. kWrote: it has written (UNKILLABLE);
  // kOtherKind: an EVAL script for FUNCTION KILL or the reverse.
  enum class KillResult : uint8_t { kNotBusy, kKilled, kWrote, kOtherKind };
  virtual KillResult KillBusyScript(bool eval) = 0;

  // --- Replication ---
  // PSYNC's full resync of `c`, a client of this worker over TLS: its
  // snapshot goes through this worker (SnapshotPump, client.h). Returns the
  // socket the snapshot is to be written to (-1 if none could be made).
  virtual int PumpSnapshot(Client& c) = 0;

 protected:
  explicit CommandHost(uint32_t index) : index_(index) {}
  ~CommandHost() = default;
  CommandHost(const CommandHost&) = delete;
  CommandHost& operator=(const CommandHost&) = delete;

  const uint32_t index_;
};

// Everything a handler may touch while it runs. Lives for one command, on the
// thread that runs it: the thread of the shard that owns its keys (a proxy
// `client` carries the connection's database and protocol there), or, for a
// command over several shards, the client's own thread holding them all.
struct CommandContext {
  ServerState& server;
  CommandHost& worker;  // the thread running the command
  Client& client;
  Shard& shard;  // the shard that owns the command's (first) key
  std::span<const std::string_view> args;
  ReplyWriter& reply;
  int64_t now_ms;  // wall clock, fixed for the whole command (as Redis's cached mstime)
  // The first key encoded and hashed ahead when the command was prefetched
  // (nullptr if not): lookups and inserts of that key skip doing it again.
  const CompactKey::Probe* hinted = nullptr;
  // Every key of the command lives on `shard` (it holds no other): DbOf and
  // ShardOf answer it without hashing the key again.
  bool keys_on_shard = false;

  Db& db();  // the client's selected database on `shard`
  // Whether the reply may send a value of `shard` by reference (ReplyWriter::
  // BulkLent): only to a connection's output, from the running thread's own
  // shard, holding no other (core/lent_blocks.h: the threading contract).
  bool MayLend() const;
  // The client's selected database on the shard that owns `key` (`shard`'s
  // own for the command's first key).
  Db& DbOf(std::string_view key);
  // The shard that owns `key` (held by the command).
  Shard& ShardOf(std::string_view key);
};

}  // namespace peregrine
