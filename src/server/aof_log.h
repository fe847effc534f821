// A worker's side of the append-only file (docs/persistence.md: "What is
// logged", "Order across shards"): which commands are logged and in what
// form, the gathering of a transaction's or script's commands into one
// MULTI/EXEC, and the order in which the shards' chunks reach the file.
// Owned by its Worker and used only on its thread (or by a command holding
// its shard, whose thread then logs into it).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/clock.h"
#include "persist/aof_format.h"
#include "server/aof.h"
#include "server/command.h"
#include "server/command_context.h"

namespace peregrine {

class AofLog {
 public:
  // `own`: the worker's shard; `host`: the worker (its index, and the
  // shards its running command holds).
  AofLog(ServerState& server, Shard& own, const CommandHost& host) : server_(server), own_(own), host_(host) {}
  AofLog(const AofLog&) = delete;
  AofLog& operator=(const AofLog&) = delete;

  // Whether commands are being logged (the append-only file is on, or the
  // replication stream: docs/replication.md).
  bool active() const { return server_.propagating(); }
  // Runs a command's handler with the file on, logging the command when it
  // changed something (the held shards' dirty counters moved) or asked to
  // be: as sent, or in the forms it gave (LogAs). EXEC and scripts log
  // their commands' effects, wrapped in MULTI/EXEC when there are several.
  void Call(CommandContext& ctx, const CommandSpec* cmd);
  // CommandHost::LogAs and LogOnlyForms, for the running handler.
  void LogAs(std::span<const std::string_view> args) { log_as_.emplace_back(args.begin(), args.end()); }
  void LogOnlyForms() { forms_only_ = true; }
  // CommandHost::ReplicateOnly: to the replication stream alone, now,
  // after this worker's shard's chunk so far (inside EXEC or a script: in
  // its place among their gathered commands, at their end).
  void ReplicateOnly(int db, std::span<const std::string_view> args);
  // A transaction's (or script's) commands gather from here, and are
  // logged as one at the matching EndGather.
  void BeginGather() { depth_++; }
  void EndGather();
  // The worker's logged commands go to the file (and, with appendfsync
  // always, are durable) before any reply leaves: called where replies are
  // sent to clients or to other workers. Not while the worker's shard is
  // lent (`lent`): its chunk is the holder's to touch then.
  void Flush(bool lent) {
    if (unflushed_) [[unlikely]] {
      const uint64_t start = CycleClock::Now();
      Write(lent);
      write_ticks_ += CycleClock::Now() - start;
    }
  }
  // CycleClock ticks spent writing (INFO DEBUG's eventloop_duration_aof_sum).
  uint64_t write_ticks() const { return write_ticks_; }
  // Commands were added to the shard's chunk outside a command (the cron's
  // expired and evicted keys, as DEL): the next Flush writes them.
  void NoteUnflushed() { unflushed_ = true; }
  // A write group's part runs on this worker's shard (BatchRelay::Run):
  // what the shard logged before goes out first, and the part's commands
  // reach the replication stream as the group's (StreamOrder), not as the
  // shard's. For groups made while the stream was fed (ExecBatch::group).
  void BeginPart();
  // (Returns the workers to wake: ReplicationPrimary::FeedPart.)
  const std::vector<uint32_t>& EndPart(uint64_t group, uint32_t parts, uint64_t ticket, uint64_t epoch);

 private:
  void Write(bool lent);
  uint64_t HeldDirty() const;
  // Logs one command of database `db`, or a whole chunk (a transaction).
  void Log(int db, std::span<const std::string_view> args);
  void LogChunk(const AofChunk& chunk);
  // The chunk of shard `s` (held) goes to the file now.
  void WriteShard(Shard& s);
  // A chunk that shards `shards` logged goes to the file and to the
  // replication stream, where on.
  void Emit(std::span<const uint32_t> shards, const AofChunk& chunk);
  // EndGather of a transaction whose stream differs from the file's.
  void EmitSplit();
  // Whether the running command holds this worker's shard alone.
  bool OwnShardOnly() const {
    const auto held = host_.held_workers();
    return held.size() == 1 && held[0] == host_.index();
  }

  ServerState& server_;
  Shard& own_;
  const CommandHost& host_;
  // The forms the running handler asked its command to be logged in (LogAs).
  std::vector<std::vector<std::string>> log_as_;
  bool forms_only_ = false;
  int depth_ = 0;         // EXEC or scripts running (their commands gather in txn_)
  AofChunk txn_;          // a transaction's or script's commands so far
  // The same for the stream once one of them replicates only (a PUBLISH):
  // the stream gets it in its place, the file does not (EndGather).
  AofChunk txn_stream_;
  bool txn_split_ = false;
  AofChunk direct_;       // scratch: a command over several shards
  bool unflushed_ = false;  // the shard's chunk has commands, or a write awaits its fsync
  uint64_t write_ticks_ = 0;
  uint64_t sync_to_ = 0;    // the file position this worker's replies wait for (always)
};

}  // namespace peregrine
