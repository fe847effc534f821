// MULTI ... EXEC and WATCH on a worker (docs/transactions.md): commands
// queued inside MULTI, the shards an EXEC holds, a whole transaction sent to
// the one worker that owns its keys, the queue run as one command, and the
// end of a client's WATCH. Owned by its Worker and used on its thread; it
// runs the queued commands and sends mail through the worker (a friend of
// Worker's: the dispatcher's entry points, the mailbox).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "server/client.h"
#include "server/command.h"
#include "server/command_context.h"

namespace peregrine {

class Worker;

class TransactionRunner {
 public:
  explicit TransactionRunner(Worker& worker) : worker_(worker) {}
  TransactionRunner(const TransactionRunner&) = delete;
  TransactionRunner& operator=(const TransactionRunner&) = delete;

  // Queues a command inside the client's MULTI (nothing when the
  // transaction is doomed already: EXEC fails whatever was queued).
  static void Queue(Client& c, std::span<const std::string_view> args, const CommandSpec* cmd);
  // The shards of the queued commands' keys (sorted; every shard if one is
  // over every shard); *keyed whether every queued command has keys (and
  // none is over every shard). False when there is nothing to hold (one
  // worker, no transaction, a doomed one).
  bool Shards(const Client& c, std::vector<uint32_t>* out, bool* keyed);
  // EXEC of a queue whose keys all live on `target`, another worker's
  // shard (every command with keys, none over every shard): sent there as
  // one batch (ExecBatch::transaction) instead of borrowing the shard.
  // False if it may not (over maxmemory: the usual path refuses it).
  bool SendWhole(Client& c, const CommandSpec* exec, std::string_view exec_word, uint32_t target);
  // EXEC's work (CommandHost::RunTransaction): runs the client's queued
  // commands, each replying into one array, holding what the dispatcher
  // took for EXEC.
  void Run(CommandContext& ctx);
  // The client whose EXEC runs its queue here, or null: its commands'
  // permission check is EXEC's (Worker::AccessError).
  const Client* exec_client() const { return exec_client_; }
  // CommandHost::Unwatch: the client's watched keys leave the watch tables,
  // this worker's shard's at once, the others' by mail.
  void Unwatch(Client& c);
  // CommandHost::DiscardTransaction: the transaction ends without running
  // (DISCARD, a refused EXEC, RESET).
  void Discard(Client& c) {
    c.EndTransaction(std::move(c.multi));
    Unwatch(c);
  }

 private:
  Worker& worker_;
  const Client* exec_client_ = nullptr;
  std::vector<size_t> key_positions_;  // scratch
};

}  // namespace peregrine
