// Logging commands for the append-only file (docs/persistence.md: "What is
// logged", "Order across shards"). A command that changed something is
// logged, as Redis propagates it, into the chunk of the shard it ran on;
// the shard's owner writes its chunk to the file before any reply leaves
// (FlushAof). A command over several shards writes their chunks first,
// then itself, so that every key's commands reach the file in the order
// they ran. Transactions and scripts gather their commands' effects and
// log them as one MULTI/EXEC.
#include "server/aof_log.h"

#include <algorithm>
#include <utility>

#include "server/shard.h"

namespace peregrine {

// The writes counted on the shards the running command holds (a command
// over several may count its changes on any of them: COPY on the
// destination's).
uint64_t AofLog::HeldDirty() const {
  const auto held = host_.held_workers();
  if (held.size() == 1 && held[0] == host_.index()) return own_.dirty();
  uint64_t sum = 0;
  for (uint32_t s : held) sum += server_.shard(s).dirty();
  return sum;
}

void AofLog::Call(CommandContext& ctx, const CommandSpec* cmd) {
  // (A script's or EXEC's commands come here again, nested: their forms
  // are their own; what the outer one asked before is kept aside.)
  std::vector<std::vector<std::string>> outer;
  const bool nested = !log_as_.empty();
  const bool outer_forms_only = std::exchange(forms_only_, false);
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
      if (!forms_only_) Log(ctx.client.db, ctx.args);
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
  forms_only_ = outer_forms_only;
}

namespace {
// Several commands are one transaction, as Redis propagates a script's or
// EXEC's effects.
AofChunk Wrapped(const AofChunk& txn) {
  AofChunk out;
  if (txn.commands() > 1) out.Add(txn.first_db(), {"MULTI"});
  out.Add(txn);
  if (txn.commands() > 1) out.Add(txn.last_db(), {"EXEC"});
  return out;
}
}  // namespace

void AofLog::EndGather() {
  if (--depth_ > 0 || (txn_.empty() && !txn_split_)) return;
  if (!server_.propagating()) {  // (turned off inside the transaction)
    txn_.Clear();
    txn_split_ = false;
    return;
  }
  if (txn_split_) [[unlikely]] {
    EmitSplit();
    return;
  }
  if (txn_.commands() > 1) {
    AofChunk wrapped = Wrapped(txn_);
    txn_.Clear();
    LogChunk(wrapped);
  } else {
    AofChunk one = std::move(txn_);
    txn_.Clear();
    LogChunk(one);
  }
}

void AofLog::Log(int db, std::span<const std::string_view> args) {
  if (depth_ > 0) {
    txn_.Add(db, args);
    if (txn_split_) txn_stream_.Add(db, args);
    return;
  }
  if (OwnShardOnly()) {
    own_.aof().Add(db, args);
    unflushed_ = true;
    return;
  }
  direct_.Clear();
  direct_.Add(db, args);
  LogChunk(direct_);
}

void AofLog::LogChunk(const AofChunk& chunk) {
  if (depth_ > 0) {
    txn_.Add(chunk);
    if (txn_split_) txn_stream_.Add(chunk);
    return;
  }
  if (OwnShardOnly()) {
    own_.aof().Add(chunk);
    unflushed_ = true;
    return;
  }
  // Over several shards (or another's alone): what they logged before goes
  // first, then this.
  const auto held = host_.held_workers();
  for (uint32_t s : held) WriteShard(server_.shard(s));
  Emit(held, chunk);
  unflushed_ = true;
}

void AofLog::ReplicateOnly(int db, std::span<const std::string_view> args) {
  ReplicationPrimary& repl = server_.replication();
  if (!repl.logs()) return;  // (none, or this server relays its primary's stream)
  if (depth_ > 0) {
    // From here the stream's version of the transaction differs from the
    // file's: both are kept.
    if (!txn_split_) {
      txn_stream_.Clear();
      txn_stream_.Add(txn_);
      txn_split_ = true;
    }
    txn_stream_.Add(db, args);
    return;
  }
  // What the shards it holds logged before comes first (as LogChunk).
  for (uint32_t s : host_.held_workers()) WriteShard(server_.shard(s));
  AofChunk chunk;
  chunk.Add(db, args);
  repl.FeedMulti(host_.held_workers(), chunk);
}

void AofLog::EmitSplit() {
  // What the held shards logged before goes first; then the file gets the
  // transaction without what only replicates, the stream with it.
  for (uint32_t s : host_.held_workers()) WriteShard(server_.shard(s));
  AppendOnlyFile& aof = server_.aof();
  if (aof.active() && !txn_.empty()) sync_to_ = std::max(sync_to_, aof.Write(Wrapped(txn_)));
  ReplicationPrimary& repl = server_.replication();
  if (repl.logs()) repl.FeedMulti(host_.held_workers(), Wrapped(txn_stream_));
  txn_.Clear();
  txn_stream_.Clear();
  txn_split_ = false;
  unflushed_ = true;
}

void AofLog::Emit(std::span<const uint32_t> shards, const AofChunk& chunk) {
  AppendOnlyFile& aof = server_.aof();
  if (aof.active()) sync_to_ = std::max(sync_to_, aof.Write(chunk));
  ReplicationPrimary& repl = server_.replication();
  if (!repl.feeding()) return;
  if (shards.size() == 1)
    repl.Feed(shards[0], chunk);
  else
    repl.FeedMulti(shards, chunk);
}

void AofLog::WriteShard(Shard& s) {
  if (s.aof().empty()) return;
  const uint32_t index = static_cast<uint32_t>(s.index());
  Emit(std::span<const uint32_t>(&index, 1), s.aof());
  s.aof().Clear();
}

void AofLog::BeginPart() { WriteShard(own_); }

const std::vector<uint32_t>& AofLog::EndPart(uint64_t group, uint32_t parts, uint64_t ticket, uint64_t epoch) {
  // (Every part feeds, logged or not: its group goes out once all have,
  // and its ticket is released then.)
  AofChunk& chunk = own_.aof();
  AppendOnlyFile& aof = server_.aof();
  if (aof.active() && !chunk.empty()) sync_to_ = std::max(sync_to_, aof.Write(chunk));
  const std::vector<uint32_t>& wake = server_.replication().FeedPart(host_.index(), group, parts, ticket, epoch, chunk);
  chunk.Clear();
  unflushed_ = true;  // (with appendfsync always, the replies wait for the fsync)
  return wake;
}

void AofLog::Write(bool lent) {
  // This worker's shard may be lent (a busy script's holder answers -BUSY
  // through us meanwhile): its chunk is the holder's to touch then.
  if (lent) return;
  unflushed_ = false;
  AppendOnlyFile& aof = server_.aof();
  if (!server_.propagating()) {
    own_.aof().Clear();
    return;
  }
  WriteShard(own_);
  if (aof.always() && sync_to_ > 0) aof.SyncTo(sync_to_);
}

}  // namespace peregrine
