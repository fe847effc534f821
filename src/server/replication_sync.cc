// The server's side of replicas (docs/replication.md): full syncs started
// holding every shard (at once, or when the BGSAVE running ends), their
// end collected by worker 0, and the PINGs that keep the stream alive.
#include <unistd.h>

#include <random>

#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

bool Server::StartReplicaSync(const ReplicationPrimary::ReplicaInfo& info, uint32_t worker, int fd, bool psync,
                              std::string* err) {
  if (fd < 0) {
    *err = "cannot duplicate the replica's socket";
    return false;
  }
  waiting_syncs_.push_back({info, worker, fd, psync});
  if (bgsave_ == nullptr) {
    StartWaitingSync();
  } else {
    LOG_NOTICE("Full resync for replica %s waits for the background save in progress", info.ip.c_str());
  }
  return true;
}

void Server::StartWaitingSync() {
  if (waiting_syncs_.empty() || bgsave_ != nullptr) return;
  const WaitingSync w = waiting_syncs_.front();
  waiting_syncs_.erase(waiting_syncs_.begin());
  // What the shards logged and the stream has not had yet ran before this
  // point: it is in the snapshot, so it goes to the stream before the
  // replica's share of it starts.
  for (size_t i = 0; i < num_shards(); i++) {
    AofChunk& chunk = shard(i).aof();
    if (chunk.empty()) continue;
    if (aof_->active()) {
      const uint64_t pos = aof_->Write(chunk);
      if (aof_->always()) aof_->SyncTo(pos);
    }
    replication_->Feed(chunk);
    chunk.Clear();
  }
  const uint64_t offset = replication_->AttachFull(w.info, w.worker);
  // Redis's EOF mark: 40 random characters the payload ends with.
  static constexpr char kChars[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::string mark(40, 'x');
  for (char& c : mark) c = kChars[rng() % 36];
  std::string prefix = w.psync ? FullResyncLine(repl_ids_, offset) : std::string();
  prefix += "$EOF:" + mark + "\r\n";
  std::string err;
  bgsave_ = BgSave::StartToReplica(*this, &err, w.info.client_id, w.fd, std::move(prefix), std::move(mark));
  if (bgsave_ == nullptr) {
    LOG_WARNING("Can't start the full resync of replica %s: %s", w.info.ip.c_str(), err.c_str());
    replication_->SyncDone(w.info.client_id, false);
    return;
  }
  LOG_NOTICE("Starting BGSAVE for SYNC with target: replicas sockets (offset %llu)",
             static_cast<unsigned long long>(offset));
  for (size_t i = 0; i < num_shards(); i++) worker(i).StartSnapshotWork();
}

bool Server::ReapReplicaSync() {
  if (bgsave_ == nullptr || bgsave_->replica() == 0) return false;
  const bool ok = bgsave_->ok();
  if (ok)
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
  // The stream's keep-alive: a PING every repl-ping-replica-period, which
  // counts in the offset as any command (Redis's replicationCron).
  if (!replication_->feeding()) return;
  if (now_ms - last_repl_ping_ms_ >= int64_t{config_.repl_ping_replica_period} * 1000) {
    last_repl_ping_ms_ = now_ms;
    if (!replication_->Replicas().empty()) replication_->FeedCommand({"PING"});
  }
}

}  // namespace peregrine
