// Logging commands for the append-only file (docs/persistence.md: "What is
// logged", "Order across shards"). A command that changed something is
// logged, as Redis propagates it, into the chunk of the shard it ran on;
// the shard's owner writes its chunk to the file before any reply leaves
// (FlushAof). A command over several shards writes their chunks first,
// then itself, so that every key's commands reach the file in the order
// they ran. Transactions and scripts gather their commands' effects and
// log them as one MULTI/EXEC.
#include <algorithm>
#include <utility>

#include "server/aof.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

bool Worker::logging() const { return server_.aof().active(); }

void Worker::HoldAllForReplay(bool on) {
  holding_ = on;
  shard_set_.clear();
  if (on)
    for (uint32_t i = 0; i < nworkers_; i++) shard_set_.push_back(i);
}

void Worker::LogAs(std::span<const std::string_view> args) {
  log_as_.emplace_back(args.begin(), args.end());
}

// The writes counted on the shards the running command holds (a command
// over several may count its changes on any of them: COPY on the
// destination's).
uint64_t Worker::HeldDirty() {
  if (!holding_) return shard_.dirty();
  uint64_t sum = 0;
  for (uint32_t s : held_workers()) sum += server_.shard(s).dirty();
  return sum;
}

void Worker::CallLogged(CommandContext& ctx, const CommandSpec* cmd) {
  // (A script's or EXEC's commands come here again, nested: their forms
  // are their own; what the outer one asked before is kept aside.)
  std::vector<std::vector<std::string>> outer;
  const bool nested = !log_as_.empty();
  const bool outer_forms_only = std::exchange(log_forms_only_, false);
  if (nested) [[unlikely]]
    outer = std::exchange(log_as_, {});
  // (EVAL, EVALSHA, FCALL and their _RO forms are kCmdScript.)
  const bool gathers = cmd->flags & (kCmdExec | kCmdScript);
  const uint64_t dirty = HeldDirty();
  if (gathers) BeginGather();
  cmd->handler(ctx);
  if (gathers) {
    EndGather();
  } else if (HeldDirty() != dirty) {
    if (log_as_.empty()) {
      if (!log_forms_only_) Log(ctx.client.db, ctx.args);
    } else {
      std::vector<std::string_view> views;
      for (const auto& command : log_as_) {
        views.assign(command.begin(), command.end());
        Log(ctx.client.db, views);
      }
    }
  }
  if (nested) [[unlikely]]
    log_as_ = std::move(outer);
  else
    log_as_.clear();
  log_forms_only_ = outer_forms_only;
}

void Worker::EndGather() {
  if (--txn_depth_ > 0 || txn_.empty()) return;
  if (!server_.aof().active()) {  // (turned off inside the transaction)
    txn_.Clear();
    return;
  }
  // Several commands are one transaction in the file, as Redis propagates
  // a script's or EXEC's effects.
  if (txn_.commands() > 1) {
    AofChunk wrapped;
    wrapped.Add(txn_.first_db(), {"MULTI"});
    wrapped.Add(txn_);
    wrapped.Add(txn_.last_db(), {"EXEC"});
    txn_.Clear();
    LogChunk(wrapped);
  } else {
    AofChunk one = std::move(txn_);
    txn_.Clear();
    LogChunk(one);
  }
}

void Worker::Log(int db, std::span<const std::string_view> args) {
  if (txn_depth_ > 0) {
    txn_.Add(db, args);
    return;
  }
  const auto held = held_workers();
  if (held.size() == 1 && held[0] == index_) {
    shard_.aof().Add(db, args);
    aof_unflushed_ = true;
    return;
  }
  direct_.Clear();
  direct_.Add(db, args);
  LogChunk(direct_);
}

void Worker::LogChunk(const AofChunk& chunk) {
  if (txn_depth_ > 0) {
    txn_.Add(chunk);
    return;
  }
  const auto held = held_workers();
  if (held.size() == 1 && held[0] == index_) {
    shard_.aof().Add(chunk);
    aof_unflushed_ = true;
    return;
  }
  // Over several shards (or another's alone): what they logged before goes
  // first, then this.
  for (uint32_t s : held) WriteShardAof(server_.shard(s));
  aof_sync_to_ = std::max(aof_sync_to_, server_.aof().Write(chunk));
  aof_unflushed_ = true;
}

void Worker::WriteShardAof(Shard& s) {
  if (s.aof().empty()) return;
  aof_sync_to_ = std::max(aof_sync_to_, server_.aof().Write(s.aof()));
  s.aof().Clear();
}

void Worker::WriteAof() {
  // This worker's shard may be lent (a busy script's holder answers -BUSY
  // through us meanwhile): its chunk is the holder's to touch then.
  if (lent_to_ >= 0) return;
  aof_unflushed_ = false;
  AppendOnlyFile& aof = server_.aof();
  if (!aof.active()) {
    shard_.aof().Clear();
    return;
  }
  WriteShardAof(shard_);
  if (aof.always() && aof_sync_to_ > 0) aof.SyncTo(aof_sync_to_);
}

}  // namespace peregrine
