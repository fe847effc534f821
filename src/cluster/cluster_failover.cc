// Failover in the cluster (cluster_bus.h): a replica whose primary is FAIL
// asks the primaries for their votes and, with a majority, takes its
// primary's slots under a new epoch (Redis's clusterHandleSlaveFailover);
// the primaries' side of the vote; and CLUSTER FAILOVER [FORCE|TAKEOVER],
// where the primary pauses its writers until its replica has all of its
// stream (Redis's manual failover). Redis 7.2's rules, this project's code.
#include <algorithm>

#include "cluster/cluster_bus.h"
#include "server/server_state.h"
#include "server/log.h"

namespace peregrine::cluster {

namespace {

constexpr int64_t kManualFailoverTimeoutMs = 5000;  // CLUSTER_MF_TIMEOUT
constexpr int kManualFailoverPauseMult = 2;         // CLUSTER_MF_PAUSE_MULT
constexpr int64_t kReplicaMigrationDelayMs = 5000;  // CLUSTER_SLAVE_MIGRATION_DELAY

}  // namespace

void ClusterBus::ResetManualFailover() {
  // A primary that paused its writers for a replica lets them go, whatever
  // the outcome.
  if (mf_replica_ != nullptr) {
    server_tasks_.unpause = true;
    server_tasks_.pause_until_ms = 0;
    server_tasks_pending_.store(true, std::memory_order_release);
  }
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_ = nullptr;
  mf_primary_offset_ = -1;
  mf_paused_offset_ = -1;
}

std::string ClusterBus::Failover(bool force, bool takeover) {
  std::lock_guard<std::mutex> lock(mu_);
  if (myself_->is_primary()) return "ERR You should send CLUSTER FAILOVER to a replica";
  Node* primary = myself_->primary;
  if (primary == nullptr) return "ERR I'm a replica but my master is unknown to me";
  if (!force && (primary->failed() || primary->link == nullptr))
    return "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
  ResetManualFailover();
  mf_end_ = UnixTimeMs() + kManualFailoverTimeoutMs;
  if (takeover) {
    // No vote: a new epoch of our own, the slots, and everyone told.
    LOG_NOTICE("Taking over the master (user request).");
    const uint64_t max = MaxEpoch();
    if (myself_->config_epoch == 0 || myself_->config_epoch != max) {
      current_epoch_++;
      myself_->config_epoch = current_epoch_;
    }
    FailoverReplaceYourPrimary();
  } else if (force) {
    LOG_NOTICE("Forced failover user request accepted.");
    mf_can_start_ = true;
  } else {
    LOG_NOTICE("Manual failover user request accepted.");
    Send(primary->link, Header(MsgType::kMfStart));
  }
  Wake();
  return "";
}

void ClusterBus::OnManualFailoverRequest(Node* sender) {
  // (The caller checked that `sender` replicates us.)
  ResetManualFailover();
  const int64_t now = UnixTimeMs();
  mf_end_ = now + kManualFailoverTimeoutMs;
  mf_replica_ = sender;
  LOG_NOTICE("Manual failover requested by replica %.40s.", sender->name.c_str());
  // Worker 0 pauses the writers and tells us the offset they stopped at
  // (PausedForFailover); the PINGs that follow carry it, flagged PAUSED.
  server_tasks_.pause_until_ms = now + kManualFailoverTimeoutMs * kManualFailoverPauseMult;
  server_tasks_pending_.store(true, std::memory_order_release);
}

void ClusterBus::PausedForFailover(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mf_replica_ == nullptr || mf_end_ == 0) return;
  mf_paused_offset_ = static_cast<int64_t>(offset);
  repl_offset_.store(offset, std::memory_order_relaxed);
  SendPing(mf_replica_->link, MsgType::kPing);
}

void ClusterBus::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_primary_offset_ == -1) return;
  if (static_cast<uint64_t>(mf_primary_offset_) == repl_offset_.load(std::memory_order_relaxed)) {
    // Everything the primary wrote before it paused is here.
    mf_can_start_ = true;
    LOG_NOTICE("All master replication stream processed, manual failover can start.");
    HandleReplicaFailover();
  }
}

int ClusterBus::ReplicaRank() const {
  const Node* primary = myself_->primary;
  if (primary == nullptr) return 0;
  const uint64_t mine = repl_offset_.load(std::memory_order_relaxed);
  int rank = 0;
  for (const Node* r : primary->replicas)
    if (r != myself_ && !(r->flags & kNodeNoFailover) && r->repl_offset > mine) rank++;
  return rank;
}

void ClusterBus::HandleReplicaFailover() {
  const int64_t now = UnixTimeMs();
  const int64_t auth_age = now - failover_auth_time_;
  const int needed = size_ / 2 + 1;
  const bool manual = mf_end_ != 0 && mf_can_start_;
  const int64_t auth_timeout = std::max<int64_t>(settings_.node_timeout_ms * 2, 2000);
  const int64_t auth_retry = auth_timeout * 2;
  Node* primary = myself_->primary;
  // (promoting_: elected, the server turning primary.)
  if (promoting_ || myself_->is_primary() || primary == nullptr || (!primary->failed() && !manual) ||
      (settings_.replica_no_failover && !manual) || primary->numslots == 0)
    return;
  // Data too old (disconnected longer than the validity factor allows):
  // only a manual failover goes on.
  int64_t data_age = repl_data_age_ms_.load(std::memory_order_relaxed);
  if (data_age > settings_.node_timeout_ms) data_age -= settings_.node_timeout_ms;
  if (settings_.replica_validity_factor != 0 &&
      data_age > repl_ping_period_ms_.load(std::memory_order_relaxed) +
                     settings_.node_timeout_ms * settings_.replica_validity_factor &&
      !manual) {
    LogCantFailover("Disconnected from master for longer than allowed. Please check the "
                    "'cluster-replica-validity-factor' configuration option.");
    return;
  }
  if (auth_age > auth_retry) {
    // A new election, after 500-1000 ms (the FAIL spreads meanwhile) and a
    // second per replica with more of the stream than us.
    failover_auth_time_ = now + 500 + static_cast<int64_t>(rng_() % 500);
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += failover_auth_rank_ * 1000;
    if (mf_end_ != 0) {
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
    }
    LOG_NOTICE("Start of election delayed for %lld milliseconds (rank #%d, offset %llu).",
               static_cast<long long>(failover_auth_time_ - now), failover_auth_rank_,
               static_cast<unsigned long long>(repl_offset_.load(std::memory_order_relaxed)));
    // Our offset to the other replicas, so that theirs rank right.
    for (Node* r : primary->replicas)
      if (r != myself_) SendPing(r->link, MsgType::kPong);
    if (mf_end_ == 0) return;
  }
  if (!failover_auth_sent_ && mf_end_ == 0) {
    const int rank = ReplicaRank();
    if (rank > failover_auth_rank_) {
      const int64_t added = (rank - failover_auth_rank_) * 1000;
      failover_auth_time_ += added;
      failover_auth_rank_ = rank;
      LOG_NOTICE("Replica rank updated to #%d, added %lld milliseconds of delay.", rank,
                 static_cast<long long>(added));
    }
  }
  if (now < failover_auth_time_) return;
  if (now - failover_auth_time_ > auth_timeout) {
    LogCantFailover("Failover attempt expired.");
    return;
  }
  if (!failover_auth_sent_) {
    current_epoch_++;
    failover_auth_epoch_ = current_epoch_;
    LOG_NOTICE("Starting a failover election for epoch %llu.", static_cast<unsigned long long>(current_epoch_));
    BusMessage m = Header(MsgType::kFailoverAuthRequest);
    if (mf_end_ != 0) m.mflags[0] |= kMsgFlag0ForceAck;
    Broadcast(m);
    failover_auth_sent_ = true;
    NeedSave(true);
    todo_update_state_ = true;
    return;
  }
  if (failover_auth_count_ >= needed) {
    LOG_NOTICE("Failover election won: I'm the new master.");
    if (myself_->config_epoch < failover_auth_epoch_) {
      myself_->config_epoch = failover_auth_epoch_;
      LOG_NOTICE("configEpoch set to %llu after successful failover",
                 static_cast<unsigned long long>(myself_->config_epoch));
    }
    FailoverReplaceYourPrimary();
  } else {
    LogCantFailover("Waiting for votes, but majority still not reached.");
  }
}

int ClusterBus::CountWorkingReplicas(const Node* primary) {
  int ok = 0;
  for (const Node* r : primary->replicas)
    if (!r->failed()) ok++;
  return ok;
}

void ClusterBus::HandleReplicaMigration(int max_replicas, int64_t now) {
  // (Redis's clusterHandleSlaveMigration.) Not while the cluster is down,
  // nor if our primary would keep no more than the barrier's replicas.
  Node* mine = myself_->primary;
  if (!state_ok_ || mine == nullptr) return;
  int ok = 0;
  for (const Node* r : mine->replicas)
    if (!r->failed() && !r->timed_out()) ok++;
  if (ok <= settings_.migration_barrier) return;
  // The target: a working primary with slots that had replicas (or took
  // over from one that had) and has none working now, orphaned for a
  // while. The one to go: among the replicas of the primaries with the
  // most working ones, the smallest node id (others may go too, rarely;
  // harmless).
  Node* target = nullptr;
  const Node* candidate = myself_;
  for (auto& [name, owned] : nodes_) {
    Node* n = owned.get();
    const int working = n->is_primary() ? CountWorkingReplicas(n) : 0;
    const bool orphaned = n->is_primary() && !n->failed() && (n->flags & kNodeMigrateTo) && working == 0;
    if (orphaned) {
      if (target == nullptr && n->numslots > 0) target = n;
      if (n->orphaned_time == 0) n->orphaned_time = now;
    } else {
      n->orphaned_time = 0;
    }
    if (working == max_replicas)
      for (const Node* r : n->replicas)
        if (r->name < candidate->name) candidate = r;
  }
  if (target != nullptr && candidate == myself_ && now - target->orphaned_time > kReplicaMigrationDelayMs) {
    LOG_NOTICE("Migrating to orphaned master %.40s", target->name.c_str());
    SetMyPrimary(target, true);
    NeedSave(false);
    UpdateState();  // (the new table names our new primary: READONLY reads its slots)
  }
}

void ClusterBus::LogCantFailover(const char* why) {
  // Once per reason, and again every five minutes.
  const int64_t now = UnixTimeMs();
  if (why == cant_failover_reason_ && now - cant_failover_logged_ms_ < 300'000) return;
  cant_failover_reason_ = why;
  if (myself_->primary != nullptr && myself_->primary->failed() &&
      now - myself_->primary->fail_time < settings_.node_timeout_ms + 5000)
    return;
  cant_failover_logged_ms_ = now;
  LOG_NOTICE("Currently unable to failover: %s", why);
}

void ClusterBus::FailoverReplaceYourPrimary() {
  Node* old = myself_->primary;
  if (myself_->is_primary() || old == nullptr || promoting_) return;
  // First the server turns primary (worker 0, every shard held, at once),
  // then FinishPromotion takes the slots and tells the cluster: as Redis,
  // which leaves replication before it claims them, so that no client is
  // sent here and answered -READONLY.
  promoting_ = true;
  server_tasks_.become_primary = true;
  server_tasks_.follow = false;
  server_tasks_pending_.store(true, std::memory_order_release);
  server_tasks_urgent_.store(true, std::memory_order_release);
  if (server_ != nullptr) server_->WakeWorkers();
}

void ClusterBus::FinishPromotion() {
  Change change(*this);
  if (!promoting_) return;
  promoting_ = false;
  Node* old = myself_->primary;
  if (myself_->is_primary() || old == nullptr) return;
  SetNodeAsPrimary(myself_);
  for (int j = 0; j < static_cast<int>(kNumSlots); j++) {
    if (slots_[static_cast<size_t>(j)] == old) {
      DelSlot(j);
      AddSlot(myself_, j);
    }
  }
  UpdateState();
  SaveBeforeReply(/*fsync=*/true);
  for (auto& [name, n] : nodes_)
    if (!(n->flags & (kNodeMyself | kNodeHandshake))) SendPing(n->link, MsgType::kPong);
  ResetManualFailover();
}

void ClusterBus::SendFailoverAuthIfNeeded(Node* node, const BusMessage& req) {
  Node* primary = node->primary;
  const bool force_ack = req.mflags[0] & kMsgFlag0ForceAck;
  // Only a primary serving slots votes.
  if (myself_->is_replica() || myself_->numslots == 0) return;
  if (req.current_epoch < current_epoch_) {
    LOG_WARNING("Failover auth denied to %.40s: reqEpoch (%llu) < curEpoch(%llu)", node->name.c_str(),
                static_cast<unsigned long long>(req.current_epoch), static_cast<unsigned long long>(current_epoch_));
    return;
  }
  if (last_vote_epoch_ == current_epoch_) {
    LOG_WARNING("Failover auth denied to %.40s: already voted for epoch %llu", node->name.c_str(),
                static_cast<unsigned long long>(current_epoch_));
    return;
  }
  if (node->is_primary() || primary == nullptr || (!primary->failed() && !force_ack)) {
    LOG_WARNING("Failover auth denied to %.40s: %s", node->name.c_str(),
                node->is_primary()  ? "it is a master node"
                : primary == nullptr ? "I don't know its master"
                                     : "its master is up");
    return;
  }
  const int64_t now = UnixTimeMs();
  if (now - primary->voted_time < settings_.node_timeout_ms * 2) {
    LOG_WARNING("Failover auth denied to %.40s: can't vote about this master before %lld milliseconds",
                node->name.c_str(),
                static_cast<long long>(settings_.node_timeout_ms * 2 - (now - primary->voted_time)));
    return;
  }
  // Its claim must be as new as the owners' of those slots.
  for (int j = 0; j < static_cast<int>(kNumSlots); j++) {
    if (!SlotBit(req.myslots, j)) continue;
    const Node* owner = slots_[static_cast<size_t>(j)];
    if (owner == nullptr || owner->config_epoch <= req.config_epoch) continue;
    LOG_WARNING("Failover auth denied to %.40s: slot %d epoch (%llu) > reqEpoch (%llu)", node->name.c_str(), j,
                static_cast<unsigned long long>(owner->config_epoch),
                static_cast<unsigned long long>(req.config_epoch));
    return;
  }
  last_vote_epoch_ = current_epoch_;
  primary->voted_time = now;
  SaveNow(true);
  Send(node->link, Header(MsgType::kFailoverAuthAck));
  LOG_NOTICE("Failover auth granted to %.40s for epoch %llu", node->name.c_str(),
             static_cast<unsigned long long>(current_epoch_));
}

void ClusterBus::OnFailoverAuthAck(Node* sender, const BusMessage& m) {
  // A vote counts from a primary serving slots, for this election.
  if (sender->is_primary() && sender->numslots > 0 && m.current_epoch >= failover_auth_epoch_) {
    failover_auth_count_++;
    HandleReplicaFailover();
  }
}

}  // namespace peregrine::cluster
