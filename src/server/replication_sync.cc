// The server's side of replicas (docs/replication.md): full syncs started
// holding every shard (at once, or when the BGSAVE running ends), their
// end collected by worker 0, and the PINGs that keep the stream alive.
#include <unistd.h>

#include <random>
#include <vector>

#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

bool Server::StartReplicaSync(const ReplicationPrimary::ReplicaInfo& info, uint32_t worker, int fd,
                              std::string* err) {
  if (fd < 0) {
    *err = "cannot duplicate the replica's socket";
    return false;
  }
  if (bgsave_ != nullptr && bgsave_->for_replicas() && bgsave_->disk()) {
    // A disk-based sync is writing its file: this replica takes the same
    // file and the stream kept since it began (Redis 7's CASE 1).
    const bool joined = replication_->JoinSync(info, worker, fd, [&](uint64_t offset) {
      return bgsave_->AddTarget(BgSave::Target{info.client_id, fd, info.sync ? std::string()
                                                                             : FullResyncLine(repl_ids_, offset)});
    });
    if (joined) {
      LOG_NOTICE("Waiting for end of BGSAVE for SYNC");
      return true;
    }
  }
  replication_->AttachWaiting(info, worker, fd);
  if (bgsave_ != nullptr && bgsave_->for_replicas() && !bgsave_->disk()) {
    LOG_NOTICE("Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC");
  } else if (bgsave_ != nullptr) {
    LOG_NOTICE("Full resync for replica %s waits for the background save in progress", info.ip.c_str());
  } else if (SyncDue(UnixTimeMs())) {
    // (At once: no delay, a disk-based sync, or max-replicas reached.)
    StartWaitingSync();
  } else {
    // (Worker 0's cron starts it when SyncDue says so.)
    LOG_NOTICE("Delay next BGSAVE for diskless SYNC");
  }
  return true;
}

bool Server::SyncDue(int64_t now_ms) {
  return bgsave_ == nullptr && replication_->SyncDue(now_ms, config_.repl_diskless_sync,
                                                     config_.repl_diskless_sync_delay,
                                                     config_.repl_diskless_sync_max_replicas);
}

void Server::EmitShardChunks() {
  for (size_t i = 0; i < num_shards(); i++) {
    AofChunk& chunk = shard(i).aof();
    if (chunk.empty()) continue;
    if (aof_->active()) {
      const uint64_t pos = aof_->Write(chunk);
      if (aof_->always()) aof_->SyncTo(pos);
    }
    if (replication_->feeding()) replication_->Feed(static_cast<uint32_t>(i), chunk);
    chunk.Clear();
  }
}

void Server::StartWaitingSync() {
  if (bgsave_ != nullptr) return;
  // What the shards logged and the stream has not had yet ran before this
  // point: it is in the snapshot, so it goes to the stream before the
  // replica's share of it starts.
  EmitShardChunks();
  ReplicationPrimary::SyncStart s;
  if (!replication_->StartWaiting(&s)) return;
  std::string mark, eof;
  if (!s.disk) {
    // Redis's EOF mark: 40 random characters the payload ends with.
    static constexpr char kChars[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::random_device rd;
    std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
    mark.assign(40, 'x');
    for (char& c : mark) c = kChars[rng() % 36];
    eof = "$EOF:" + mark + "\r\n";
  } else {
    persistence_.last_attempt_s.store(UnixTimeMs() / 1000, std::memory_order_relaxed);
  }
  // (SYNC, the protocol before PSYNC: the payload alone.)
  const std::string line = FullResyncLine(repl_ids_, s.offset);
  std::vector<BgSave::Target> targets;
  for (const ReplicationPrimary::SyncTarget& t : s.targets)
    targets.push_back(BgSave::Target{t.id, t.fd, (t.sync ? std::string() : line) + eof});
  std::string err;
  bgsave_ = BgSave::StartToReplicas(*this, &err, std::move(targets), std::move(mark), s.disk, s.rdb_filter);
  if (bgsave_ == nullptr) {
    LOG_WARNING("Can't start the full resync of %zu replica(s): %s", s.targets.size(), err.c_str());
    for (const ReplicationPrimary::SyncTarget& t : s.targets) {
      replication_->SyncDone(t.id, false);  // (first: it forgets the socket)
      ::close(t.fd);
    }
    return;
  }
  LOG_NOTICE("Starting BGSAVE for SYNC with target: %s (offset %llu, %zu replica(s))",
             s.disk ? "disk" : "replicas sockets", static_cast<unsigned long long>(s.offset), s.targets.size());
  for (size_t i = 0; i < num_shards(); i++) worker(i).StartSnapshotWork();
}

bool Server::ReapReplicaSync() {
  if (bgsave_ == nullptr || !bgsave_->for_replicas()) return false;
  // The file counts as a BGSAVE's (LASTSAVE, the changes since); one
  // stopped because the replicas went is no failed save.
  if (bgsave_->disk() && (bgsave_->file_ok() || bgsave_->file_error()))
    NoteRdbSaveEnd(bgsave_->file_ok(), bgsave_->file_end_ms());
  const std::vector<ReplicationPrimary::ReplicaInfo> replicas = replication_->Replicas();
  size_t sent = 0;
  for (const BgSave::Outcome& o : bgsave_->outcomes()) {
    std::string name = std::to_string(o.id);
    for (const ReplicationPrimary::ReplicaInfo& r : replicas)
      if (r.client_id == o.id) name = r.ip + ":" + std::to_string(r.listening_port);
    if (o.ok) {
      sent++;
      if (bgsave_->disk()) LOG_NOTICE("Synchronization with replica %s succeeded", name.c_str());
    } else {
      LOG_WARNING("%s sync of replica %s failed: %s", bgsave_->disk() ? "Disk-based" : "Diskless", name.c_str(),
                  o.error.c_str());
    }
    replication_->SyncDone(o.id, o.ok);
  }
  if (!bgsave_->disk() && sent > 0)
    LOG_NOTICE("Diskless rdb transfer to %zu replica(s) done (%llu keys, %llu bytes in %lld ms)", sent,
               static_cast<unsigned long long>(bgsave_->keys_saved()),
               static_cast<unsigned long long>(bgsave_->bytes_written()),
               static_cast<long long>(UnixTimeMs() - bgsave_->start_ms()));
  bgsave_.reset();
  return true;
}

void Server::ReplicationCron(int64_t now_ms) {
  // (Redis's replicationCron.) Replicas that went silent go; those within
  // min-replicas-max-lag are counted for min-replicas-to-write.
  if (!replication_->feeding()) return;
  replication_->DropSilent(now_ms, config_.repl_timeout);
  if (now_ms / 1000 != last_keepalive_s_) {
    last_keepalive_s_ = now_ms / 1000;
    replication_->KeepWaitingAlive();
  }
  replication_->RefreshGood(now_ms, static_cast<int>(config_.min_replicas_max_lag));
  // The stream's keep-alive: a PING every repl-ping-replica-period, which
  // counts in the offset as any command.
  // (Not while writers pause for a failover: the replica waits for the
  // offset the pause stopped at, as Redis's.)
  // (Counted from the first time a replica is fed, as Redis counts from its
  // start: not at once, which would put a PING before the first command.)
  if (last_repl_ping_ms_ == 0) last_repl_ping_ms_ = now_ms;
  if (now_ms - last_repl_ping_ms_ >= int64_t{config_.repl_ping_replica_period} * 1000 &&
      !(client_pause_.active() && client_pause_.PausedFor(ClientPause::kForFailover))) {
    last_repl_ping_ms_ = now_ms;
    // (A replica's replicas get its primary's PINGs.)
    if (!replication_->relaying() && !replication_->Replicas().empty()) replication_->FeedCommand({"PING"});
  }
}

}  // namespace peregrine

namespace peregrine {

void Server::FreeBacklog() {
  // As Redis: no replica can continue the old history now, so a new ID.
  replication_->FreeBacklog();
  repl_ids_.Change();
  repl_ids_.ClearSecond();
  for (size_t i = 0; i < num_shards(); i++) shard(i).SetLogRemovals(aof_->active());
  LOG_NOTICE("Replication backlog freed after %d seconds without connected replicas.", config_.repl_backlog_ttl);
}

}  // namespace peregrine
