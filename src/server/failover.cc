// FAILOVER (docs/replication.md), and SHUTDOWN's wait for lagging replicas
// (BeginShutdownWait; Worker::ShutdownAfterWait ends it). FAILOVER, as Redis 7's: a primary pauses its
// clients' writes, waits until a replica (the one named, or the first)
// has acknowledged its whole stream, then becomes that replica's replica
// with `PSYNC <replid> <offset> FAILOVER`, which makes the target take over
// and continue the history. The pause ends when the target answers; if it
// refuses, or the time is up without FORCE, the primary stays one.
// Every shard held (the command; worker 0's cron; worker 0 applying what
// the link brought).
#include <strings.h>

#include "server/log.h"
#include "server/server.h"

namespace peregrine {

const char* Server::FailoverStateName() const {
  switch (failover_state_.load(std::memory_order_relaxed)) {
    case kFailoverWaitForSync: return "waiting-for-sync";
    case kFailoverInProgress: return "failover-in-progress";
    default: return "no-failover";
  }
}

std::string Server::StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force) {
  if (failover_state_.load(std::memory_order_relaxed) != kNoFailover) return "FAILOVER already in progress.";
  if (is_replica()) return "FAILOVER is not valid when server is a replica.";
  const std::vector<ReplicationPrimary::ReplicaInfo> replicas = replication_->Replicas();
  if (replicas.empty()) return "FAILOVER requires connected replicas.";
  if (force && (timeout_ms == 0 || host.empty()))
    return "FAILOVER with force option requires both a timeout and target HOST and IP.";
  if (!host.empty()) {
    const ReplicationPrimary::ReplicaInfo* target = nullptr;
    for (const auto& r : replicas)
      if (strcasecmp(r.ip.c_str(), host.c_str()) == 0 && r.listening_port == port) target = &r;
    if (target == nullptr) return "FAILOVER target HOST and PORT is not a replica.";
    if (target->state != ReplicationPrimary::State::kOnline) return "FAILOVER target replica is not online.";
    LOG_NOTICE("FAILOVER requested to %s:%d.", host.c_str(), port);
  } else {
    LOG_NOTICE("FAILOVER requested to any replica.");
  }
  failover_host_ = host;
  failover_port_ = port;
  failover_end_ms_ = timeout_ms > 0 ? UnixTimeMs() + timeout_ms : 0;
  failover_force_ = force;
  failover_state_.store(kFailoverWaitForSync, std::memory_order_relaxed);
  client_pause_.Pause(ClientPause::kForFailover, INT64_MAX, ClientPause::kWrites);
  WakeWorkers();
  // The replicas are asked where they are at once (what the shards logged
  // goes first).
  EmitShardChunks();
  replication_->FeedCommand({"REPLCONF", "GETACK", "*"});
  return "";
}

void Server::ClearFailover() {
  failover_host_.clear();
  failover_port_ = 0;
  failover_end_ms_ = 0;
  failover_force_ = false;
  failover_state_.store(kNoFailover, std::memory_order_relaxed);
  client_pause_.Unpause(ClientPause::kForFailover);
  WakeWorkers();
}

bool Server::AbortFailover(const char* why) {
  const int state = failover_state_.load(std::memory_order_relaxed);
  if (state == kNoFailover) return false;
  if (!failover_host_.empty())
    LOG_NOTICE("FAILOVER to %s:%d aborted: %s", failover_host_.c_str(), failover_port_, why);
  else
    LOG_NOTICE("FAILOVER to any replica aborted: %s", why);
  if (state == kFailoverInProgress) BecomePrimary();
  ClearFailover();
  return true;
}

void Server::FailoverCron(int64_t now_ms) {
  if (failover_state_.load(std::memory_order_relaxed) != kFailoverWaitForSync) return;
  if (failover_end_ms_ != 0 && failover_end_ms_ <= now_ms) {
    if (!failover_force_) {
      AbortFailover("Replica never caught up before timeout");
      return;
    }
    LOG_NOTICE("FAILOVER to %s:%d time out exceeded, failing over.", failover_host_.c_str(), failover_port_);
    HandOver();
    return;
  }
  EmitShardChunks();
  const uint64_t offset = replication_->offset();
  for (const auto& r : replication_->Replicas()) {
    if (r.state != ReplicationPrimary::State::kOnline || r.ack_offset != offset) continue;
    if (!failover_host_.empty() &&
        (strcasecmp(r.ip.c_str(), failover_host_.c_str()) != 0 || r.listening_port != failover_port_))
      continue;
    failover_host_ = r.ip;
    failover_port_ = r.listening_port;
    LOG_NOTICE("Failover target %s:%d is synced, failing over.", failover_host_.c_str(), failover_port_);
    HandOver();
    return;
  }
}

bool Server::BeginShutdownWait(bool saves, bool force, uint64_t client_id, uint32_t worker) {
  const int timeout_s = config_.shutdown_timeout;
  if (timeout_s <= 0 || is_replica()) return false;
  EmitShardChunks();
  const uint64_t offset = replication_->offset();
  const int online = replication_->CountOnline();
  if (online == 0 || replication_->CountAcks(offset) >= online) return false;
  shutdown_flags.store((saves ? kShutdownSave : 0) | (force ? kShutdownForce : 0));
  if (!shutdown_waiting.exchange(true)) {
    LOG_NOTICE("Waiting for replicas before shutting down.");
    shutdown_deadline_ms.store(UnixTimeMs() + int64_t{timeout_s} * 1000);
    client_pause_.Pause(ClientPause::kForShutdown, INT64_MAX, ClientPause::kWrites);
    WakeWorkers();
  }
  replication_->AddShutdownWaiter(client_id, worker, offset, online, UnixTimeMs() + int64_t{timeout_s} * 1000);
  return true;
}

bool Server::AbortShutdownWait() {
  if (!shutdown_waiting.exchange(false)) return false;
  replication_->AbortShutdownWaiters();
  client_pause_.Unpause(ClientPause::kForShutdown);
  WakeWorkers();
  return true;
}

void Server::HandOver() {
  failover_state_.store(kFailoverInProgress, std::memory_order_relaxed);
  const std::string host = failover_host_;
  BecomeReplica(host, failover_port_, /*connected_fd=*/-1, /*failover=*/true);
}

void Server::FailoverAnswered(bool accepted) {
  if (failover_state_.load(std::memory_order_relaxed) != kFailoverInProgress) return;
  if (accepted)
    ClearFailover();
  else
    AbortFailover("Failover target rejected psync request");
}

}  // namespace peregrine
