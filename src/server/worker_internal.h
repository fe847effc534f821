// What the worker's source files (worker.cc, worker_input.cc,
// worker_mailbox.cc, worker_output.cc, worker_script.cc) and its parts'
// (batch_relay.cc, blocking_waits.cc, script_busy.cc, shard_router.cc,
// transaction_runner.cc: friends of Worker) share: a few limits, small
// helpers, and the functions more than one of them calls inline (Run,
// CallHandler, WaitUntil).
#pragma once

#include <poll.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/server.h"
#include "server/worker.h"

namespace peregrine::worker_internal {

// Keys a BGSAVE slice sends between events (about 100-200 us of small keys).
inline constexpr size_t kSnapshotSlice = 1000;
// Batches kept for reuse per worker (their buffers keep their capacity):
// up to kFreeBatches of any size (buffers up to ClientIo::kIdleBufferKeep),
// and up to kFreeSmallBatches in all of those whose room is small. Every
// client with a pipeline over 8 shards has a relay and up to 7 parts out:
// a pool smaller than what is in flight allocates and frees them all the
// time (5.5% of the CPU on 16 cores at pipeline 32).
inline constexpr size_t kFreeBatches = 64;
inline constexpr size_t kFreeSmallBatches = 2048;
inline constexpr size_t kSmallBatchBytes = 4096;
// Client events of one loop iteration between two servings of the mail
// (Worker::ServeMailBetweenEvents).
inline constexpr uint32_t kEventsPerMail = 16;
// The most commands one relay (or group) of a client carries: the rest of
// its input runs when it is back, so that one client's deep pipeline does
// not hold a shard (or a write group's place on every shard) for long.
inline constexpr size_t kMaxRelayCommands = 1024;

inline std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// Calls f(i, command, args) for the commands of a packed list (a batch's or
// a transaction's queue: the arguments end to end in `bytes`, their sizes
// in `sizes`, each command's count in its `argc`) from the `from`-th on,
// until f returns false. `args` is the scratch the views are put in.
template <typename Cmd, typename F>
void ForEachPacked(std::string_view bytes, const std::vector<uint32_t>& sizes, const std::vector<Cmd>& cmds,
                   size_t from, std::vector<std::string_view>* args, F&& f) {
  size_t offset = 0, arg = 0;
  for (size_t i = 0; i < cmds.size(); i++) {
    args->clear();
    for (uint32_t j = 0; j < cmds[i].argc; j++, arg++) {
      if (i >= from) args->emplace_back(bytes.data() + offset, sizes[arg]);
      offset += sizes[arg];
    }
    if (i >= from && !f(i, cmds[i], std::span<const std::string_view>(*args))) return;
  }
}

inline bool ArityOk(const CommandSpec& cmd, size_t argc) {
  const int n = static_cast<int>(argc);
  return !((cmd.arity > 0 && cmd.arity != n) || n < -cmd.arity);
}

}  // namespace peregrine::worker_internal

namespace peregrine {

inline bool Worker::RefusedAfterSaveError(const CommandSpec& cmd) const {
  if (server_.persistence().last_save_ok.load(std::memory_order_relaxed) && !server_.aof().write_failed()) [[likely]]
    return false;
  return ((cmd.flags & kCmdWrite) || cmd.fullname == "ping") &&
         (WritesRefusedAfterSaveError(server_) || server_.aof().write_failed());
}

// The MISCONF error for the failure RefusedAfterSaveError found (Redis's
// writeCommandsDeniedByDiskError: the snapshot's first, then the AOF's).
inline std::string MisconfError(Server& server) {
  if (WritesRefusedAfterSaveError(server)) return std::string(kErrMisconf);
  return "MISCONF Errors writing to the AOF file: " + server.aof().last_write_error();
}

// Whether `db` has keys that `policy` may evict (those with a deadline for
// the volatile-* policies).
inline bool HasEvictable(const Db& db, MaxmemoryPolicy policy) {
  return IsVolatilePolicy(policy) ? db.expires_count() > 0 : db.size() > 0;
}

inline void Worker::CallHandler(CommandContext& ctx, const CommandSpec* cmd) {
  if (!server_.propagating()) [[likely]] {
    cmd->handler(ctx);
    return;
  }
  aof_log_.Call(ctx, cmd);
}

// Runs one command on `shard` and counts it (ExecuteCommand for a client of
// this worker, BatchRelay::Run for another worker's batch).
inline uint64_t Worker::Run(Client& c, const CommandSpec* cmd, std::span<const std::string_view> args, ReplyWriter& reply,
                     Shard& shard, const CompactKey::Probe* hint, int64_t now_ms, uint64_t start) {
  CommandStats& st = command_stats_[cmd->id];
  // Over maxmemory, every command first evicts (by policy); commands that
  // may add memory are refused if nothing could be evicted.
  if (server_.config().maxmemory > 0) {
    const bool room = EnforceMaxmemory(shard, &c);
    // Invalidations of the keys that went are sent before this reply (Redis):
    // another worker's client's go into its batch's replies, ahead of this
    // one (not a group's part's, which may be made again).
    if (!invalidations_.empty() && !in_exec_) [[unlikely]] {
      if (&c == &proxy_ && !in_part_) WriteOwnInvalidations(c, reply);
      DeliverInvalidations();
    }
    if (!room && (cmd->flags & kCmdDenyOom)) {
      st.rejected_calls++;
      reply.Error("OOM command not allowed when used memory > 'maxmemory'.");
      return start;
    }
  }
  if (RefusedAfterSaveError(*cmd)) [[unlikely]] {
    st.rejected_calls++;
    reply.Error(MisconfError(server_));
    return start;
  }
  if ((cmd->flags & kCmdWrite) && (server_.NotEnoughGoodReplicas() || server_.read_only_replica())) [[unlikely]] {
    st.rejected_calls++;
    reply.Error(server_.is_replica() ? ServerState::kReadOnlyError : Config::kNoReplicasError);
    return start;
  }
  // (ExecuteCommand checks it too, before a command is queued.)
  if (server_.is_replica() && !(cmd->flags & kCmdStale) && !server_.ServesStaleData()) [[unlikely]] {
    st.rejected_calls++;
    reply.Error(ServerState::kMasterDownError);
    return start;
  }
  CommandContext ctx{server_, *this, c, shard, args, reply, now_ms, hint, /*keys_on_shard=*/!holding_};
  current_client_ = &c;
  const uint64_t errors_before = stats_.total_error_replies - script_errors_;
  failed_reply_ = false;
  CallHandler(ctx, cmd);
  if (nworkers_ > 1 && !(cmd->flags & kCmdReadonly)) shard.BumpVersion();  // (read groups: docs/transactions.md)
  current_client_ = nullptr;
  if (c.track_reads && (cmd->flags & kCmdReadonly)) [[unlikely]]
    RememberReads(c.id, c.home, cmd, args);  // CLIENT TRACKING
  uint64_t end = CycleClock::Now();
  if (BlockedClient* blocked = waits_.blocked_now(); blocked != nullptr) [[unlikely]] {
    blocked->ticks = end - start;  // counted when the wait is over, as Redis does
  } else if (script_rerun_) [[unlikely]] {
    // Counted when it runs again.
  } else {
    st.ticks += end - start;
    st.calls++;
    if (!in_exec_) stats_.command_ticks += end - start;  // (EXEC's queue once: in EXEC's)
    // LATENCY: a spike at latency-monitor-threshold, the command's histogram.
    if (server_.latency().Due(end - start)) [[unlikely]]
      server_.latency().Add((cmd->flags & kCmdFast) ? "fast-command" : "command",
                            static_cast<int64_t>(CycleClock::ToMicros(end - start) / 1000));
    if (server_.config().latency_tracking) st.RecordLatency(static_cast<uint64_t>(CycleClock::ToMicros(end - start)));
    if (stats_.total_error_replies - script_errors_ != errors_before || failed_reply_) st.failed_calls++;
    stats_.total_commands_processed++;
    if (server_.slowlog().Due(end - start)) [[unlikely]] {
      // (Another worker's client, a part of its pipeline run here: its
      // worker fills in its address and name when the batch is back.)
      const bool ours = &c != &proxy_;
      server_.slowlog().Push(*cmd, args, static_cast<int64_t>(CycleClock::ToMicros(end - start)),
                             ours ? c.addr : std::string(), ours ? c.name : std::string(), c.id, ours);
    }
  }
  // Under maxmemory, a write that gave this shard its first key the policy
  // may evict says so at once (not at the next tick): another worker's
  // command over the limit asks only the workers that have some. (Its
  // database only, in O(1); one it reached otherwise, as MOVE's, is found
  // by the cron.)
  if (server_.config().maxmemory > 0 && (cmd->flags & kCmdWrite) && &shard == &shard_ &&
      !evictable_.load(std::memory_order_relaxed)) [[unlikely]] {
    if (HasEvictable(shard_.db(c.db), server_.config().maxmemory_policy))
      evictable_.store(true, std::memory_order_relaxed);
  }
  // MONITOR: its line, once it has run (not an admin command's, nor a
  // blocked command's run again once served: Redis's).
  if (server_.monitors().load(std::memory_order_relaxed) > 0 && !(cmd->flags & (kCmdSkipMonitor | kCmdAdmin)) &&
      c.rerun_deadline_ms < 0) [[unlikely]]
    monitor_.Feed(c, c.db, *cmd, args);
  // Clients waiting on keys the command created are served before anything
  // else runs (docs/blocking.md); their commands count as theirs, not in
  // this one's time or errors. At the time they are served (Redis updates
  // its clock first): a key that expired meanwhile (a DEBUG SLEEP, a slow
  // script) is deleted, logged and told as expired, and serves nobody.
  if (waits_.has_ready() && !in_exec_) [[unlikely]] {
    waits_.ServeReadyKeys(UnixTimeMs());
    end = CycleClock::Now();
  }
  // Its keyspace events, once it has replied (Redis sends the client's own
  // after its reply); a transaction's or a script's at their end.
  if ((!events_.empty() || !invalidations_.empty()) && !in_exec_) [[unlikely]]
    DeliverEvents();
  if (monitor_.pending() && !in_exec_) [[unlikely]]
    monitor_.Deliver();
  return end;
}

template <typename Pred>
void Worker::WaitUntil(Pred done, bool serve_parked) {
  while (!done()) {
    if (script_busy_.serve_requested() && script_busy_.AnswerServeRequest(serve_parked)) continue;
    router_.FlushOutboxes();
    const uint64_t seen = waker_.Prepare();
    if (Drain()) continue;
    if (done()) break;
    if (waker_.TrySleep(seen)) {
      pollfd p{waker_.fd(), POLLIN, 0};
      poll(&p, 1, 100);
      waker_.Woke();
    }
  }
}

}  // namespace peregrine
