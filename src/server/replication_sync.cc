// The server's side of replicas (docs/replication.md): full syncs started
// holding every shard (at once, or when the BGSAVE running ends), their
// end collected by worker 0, and the PINGs that keep the stream alive.
#include <unistd.h>

#include <random>

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
  replication_->AttachWaiting(info, worker, fd);
  if (bgsave_ == nullptr) {
    StartWaitingSync();
  } else {
    LOG_NOTICE("Full resync for replica %s waits for the background save in progress", info.ip.c_str());
  }
  return true;
}

void Server::EmitShardChunks() {
  for (size_t i = 0; i < num_shards(); i++) {
    AofChunk& chunk = shard(i).aof();
    if (chunk.empty()) continue;
    if (aof_->active()) {
      const uint64_t pos = aof_->Write(chunk);
      if (aof_->always()) aof_->SyncTo(pos);
    }
    if (replication_->feeding()) replication_->Feed(chunk);
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
  if (!replication_->StartNext(&s)) return;
  // (SYNC, the protocol before PSYNC: the payload alone.)
  std::string prefix = s.sync ? std::string() : FullResyncLine(repl_ids_, s.offset);
  std::string mark;
  if (!s.disk) {
    // Redis's EOF mark: 40 random characters the payload ends with.
    static constexpr char kChars[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::random_device rd;
    std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
    mark.assign(40, 'x');
    for (char& c : mark) c = kChars[rng() % 36];
    prefix += "$EOF:" + mark + "\r\n";
  } else {
    persistence_.last_attempt_s.store(UnixTimeMs() / 1000, std::memory_order_relaxed);
  }
  std::string err;
  bgsave_ = BgSave::StartToReplica(*this, &err, s.id, s.fd, std::move(prefix), std::move(mark), s.disk);
  if (bgsave_ == nullptr) {
    LOG_WARNING("Can't start the full resync of replica %llu: %s", static_cast<unsigned long long>(s.id),
                err.c_str());
    ::close(s.fd);
    replication_->SyncDone(s.id, false);
    return;
  }
  LOG_NOTICE("Starting BGSAVE for SYNC with target: %s (offset %llu)", s.disk ? "disk" : "replicas sockets",
             static_cast<unsigned long long>(s.offset));
  for (size_t i = 0; i < num_shards(); i++) worker(i).StartSnapshotWork();
}

bool Server::ReapReplicaSync() {
  if (bgsave_ == nullptr || bgsave_->replica() == 0) return false;
  const bool ok = bgsave_->ok();
  if (bgsave_->disk()) {
    // The file counts as a BGSAVE's (LASTSAVE, the changes since); one
    // stopped because the replica went is no failed save.
    if (bgsave_->file_ok() || bgsave_->file_error()) NoteRdbSaveEnd(bgsave_->file_ok(), bgsave_->file_end_ms());
    std::string name = std::to_string(bgsave_->replica());
    for (const ReplicationPrimary::ReplicaInfo& r : replication_->Replicas())
      if (r.client_id == bgsave_->replica()) name = r.ip + ":" + std::to_string(r.listening_port);
    if (ok)
      LOG_NOTICE("Synchronization with replica %s succeeded", name.c_str());
    else
      LOG_WARNING("Disk-based sync of replica %s failed: %s", name.c_str(), bgsave_->error().c_str());
  } else if (ok)
    LOG_NOTICE("Diskless rdb transfer to replica done (%llu keys, %llu bytes in %lld ms)",
               static_cast<unsigned long long>(bgsave_->keys_saved()),
               static_cast<unsigned long long>(bgsave_->bytes_written()),
               static_cast<long long>(UnixTimeMs() - bgsave_->start_ms()));
  else
    LOG_WARNING("Diskless rdb transfer to replica failed: %s", bgsave_->error().c_str());
  replication_->SyncDone(bgsave_->replica(), ok);
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
  if (now_ms - last_repl_ping_ms_ >= int64_t{config_.repl_ping_replica_period} * 1000) {
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
