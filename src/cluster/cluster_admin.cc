// The CLUSTER subcommands that change this node's view (cluster_bus.h), with
// Redis 7.2's checks and error texts. The callers (commands/cluster_commands.cc)
// parse the arguments and count the keys; these take the lock.
#include <arpa/inet.h>

#include <algorithm>

#include "cluster/cluster_bus.h"
#include "server/log.h"

namespace peregrine::cluster {

namespace {

// Checks a set of slots for ADDSLOTS / DELSLOTS: each assigned (or not) as
// the change needs, none twice.
std::string CheckSlots(const std::vector<Node*>& owners, const std::vector<int>& slots, bool del) {
  std::vector<uint8_t> seen(kNumSlots, 0);
  for (int slot : slots) {
    if (del && owners[static_cast<size_t>(slot)] == nullptr)
      return "ERR Slot " + std::to_string(slot) + " is already unassigned";
    if (!del && owners[static_cast<size_t>(slot)] != nullptr)
      return "ERR Slot " + std::to_string(slot) + " is already busy";
    if (seen[static_cast<size_t>(slot)]++ == 1) return "ERR Slot " + std::to_string(slot) + " specified multiple times";
  }
  return "";
}

}  // namespace

std::string ClusterBus::AddSlots(const std::vector<int>& slots) {
  Change change(*this);
  std::string error = CheckSlots(slots_, slots, false);
  if (!error.empty()) return error;
  for (int slot : slots) {
    // Now the real owner: no longer importing it.
    importing_from_[static_cast<size_t>(slot)] = nullptr;
    AddSlot(myself_, slot);
  }
  SaveBeforeReply();
  UpdateState();
  return "";
}

std::string ClusterBus::DelSlots(const std::vector<int>& slots) {
  Change change(*this);
  std::string error = CheckSlots(slots_, slots, true);
  if (!error.empty()) return error;
  for (int slot : slots) {
    importing_from_[static_cast<size_t>(slot)] = nullptr;
    DelSlot(slot);
  }
  SaveBeforeReply();
  UpdateState();
  return "";
}

void ClusterBus::FlushSlots() {
  Change change(*this);
  DelNodeSlots(myself_);
  SaveBeforeReply();
  UpdateState();
}

std::string ClusterBus::SetSlot(int slot, const std::string& how, const std::string& id, uint64_t keys_in_slot) {
  Change change(*this);
  if (myself_->is_replica()) return "ERR Please use SETSLOT only with masters.";
  const size_t s = static_cast<size_t>(slot);
  if (how == "migrating") {
    if (slots_[s] != myself_) return "ERR I'm not the owner of hash slot " + std::to_string(slot);
    Node* n = Lookup(id);
    if (n == nullptr) return "ERR I don't know about node " + id;
    if (n->is_replica()) return "ERR Target node is not a master";
    migrating_to_[s] = n;
  } else if (how == "importing") {
    if (slots_[s] == myself_) return "ERR I'm already the owner of hash slot " + std::to_string(slot);
    Node* n = Lookup(id);
    if (n == nullptr) return "ERR I don't know about node " + id;
    if (n->is_replica()) return "ERR Target node is not a master";
    importing_from_[s] = n;
  } else if (how == "stable") {
    importing_from_[s] = nullptr;
    migrating_to_[s] = nullptr;
  } else if (how == "node") {
    Node* n = Lookup(id);
    if (n == nullptr) return "ERR Unknown node " + id;
    if (n->is_replica()) return "ERR Target node is not a master";
    if (slots_[s] == myself_ && n != myself_ && keys_in_slot != 0)
      return "ERR Can't assign hashslot " + std::to_string(slot) +
             " to a different node while I still hold keys for this hash slot.";
    if (keys_in_slot == 0 && migrating_to_[s] != nullptr) migrating_to_[s] = nullptr;
    const bool was_mine = slots_[s] == myself_;
    DelSlot(slot);
    AddSlot(n, slot);
    if (was_mine && n != myself_ && myself_->numslots == 0 && settings_.allow_replica_migration) {
      LOG_NOTICE("Configuration change detected. Reconfiguring myself as a replica of %.40s", n->name.c_str());
      SetMyPrimary(n, true);
    }
    if (n == myself_ && importing_from_[s] != nullptr) {
      // A slot moved by hand: a new epoch of our own, so that the rest of
      // the cluster takes our claim, told to everyone at once.
      if (myself_->config_epoch == 0 || myself_->config_epoch != MaxEpoch()) {
        current_epoch_++;
        myself_->config_epoch = current_epoch_;
        LOG_NOTICE("configEpoch updated after importing slot %d", slot);
        NeedSave(true);
      }
      importing_from_[s] = nullptr;
      for (auto& [name, other] : nodes_)
        if (!(other->flags & (kNodeMyself | kNodeHandshake)) && other->link != nullptr)
          SendPing(other->link, MsgType::kPong);
    }
  } else {
    return "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
  }
  SaveBeforeReply();
  UpdateState();
  return "";
}

std::string ClusterBus::Meet(const std::string& ip_in, int port, int cport) {
  // The address as Redis normalizes it (an IPv6 address in its short form).
  char buf[INET6_ADDRSTRLEN];
  in_addr a4;
  in6_addr a6;
  std::string ip;
  if (inet_pton(AF_INET, ip_in.c_str(), &a4) == 1) {
    ip = inet_ntop(AF_INET, &a4, buf, sizeof(buf));
  } else if (inet_pton(AF_INET6, ip_in.c_str(), &a6) == 1) {
    ip = inet_ntop(AF_INET6, &a6, buf, sizeof(buf));
  }
  if (ip.empty() || port <= 0 || port > 65535 || cport <= 0 || cport > 65535)
    return "ERR Invalid node address specified: " + ip_in + ":" + std::to_string(port);
  Change change(*this);
  StartHandshake(ip, port, cport);
  Wake();
  return "";
}

std::string ClusterBus::Forget(const std::string& id) {
  Change change(*this);
  Node* n = Lookup(id);
  if (n == nullptr) return blacklist_.contains(id) ? "" : "ERR Unknown node " + id;
  if (n == myself_) return "ERR I tried hard but I can't forget myself...";
  if (myself_->is_replica() && myself_->primary == n) return "ERR Can't forget my master!";
  blacklist_[id] = UnixTimeMs() + 60 * 1000;
  DelNode(n);
  SaveBeforeReply();
  UpdateState();
  return "";
}

std::string ClusterBus::Replicate(const std::string& id, bool has_keys, std::string* host, int* port) {
  Change change(*this);
  Node* n = Lookup(id);
  if (n == nullptr) return "ERR Unknown node " + id;
  if (n == myself_) return "ERR Can't replicate myself";
  if (n->is_replica()) return "ERR I can only replicate a master, not a replica.";
  if (myself_->is_primary() && (myself_->numslots != 0 || has_keys))
    return "ERR To set a master the node must be empty and without assigned slots.";
  SetMyPrimary(n, false);  // (the caller follows it at once)
  *host = n->ip;
  *port = n->port;
  SaveBeforeReply();
  UpdateState();
  Wake();
  return "";
}

std::string ClusterBus::Reset(bool hard, bool has_keys) {
  Change change(*this);
  if (myself_->is_primary() && has_keys) return "ERR CLUSTER RESET can't be called with master nodes containing keys";
  if (myself_->is_replica()) {
    // (The caller makes the server a primary again and empties it.)
    if (myself_->primary != nullptr) RemoveReplica(myself_->primary, myself_);
    myself_->primary = nullptr;
    myself_->flags &= static_cast<uint16_t>(~kNodeSlave);
    myself_->flags |= kNodeMaster;
  }
  ResetManualFailover();
  std::fill(migrating_to_.begin(), migrating_to_.end(), nullptr);
  std::fill(importing_from_.begin(), importing_from_.end(), nullptr);
  for (int j = 0; j < static_cast<int>(kNumSlots); j++) DelSlot(j);
  std::vector<Node*> others;
  for (auto& [name, n] : nodes_)
    if (n.get() != myself_) others.push_back(n.get());
  for (Node* n : others) DelNode(n);
  if (hard) {
    current_epoch_ = 0;
    last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    LOG_WARNING("configEpoch set to 0 via CLUSTER RESET HARD");
    RenameNode(myself_, RandomName());
    myself_->shard_id = RandomName();
    LOG_NOTICE("Node hard reset, now I'm %.40s", myself_->name.c_str());
  }
  SaveBeforeReply(true);
  UpdateState();
  return "";
}

std::string ClusterBus::SaveConfig() {
  ConfigWrite w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    w = TakeConfig(true);
  }
  std::string err;
  if (!WriteConfig(std::move(w), &err)) return "ERR error saving the cluster node config: " + err;
  return "";
}

std::string ClusterBus::BumpEpoch() {
  Change change(*this);
  // A new epoch only if ours is not already the only greatest one
  // (Redis's clusterBumpConfigEpochWithoutConsensus).
  const uint64_t max = MaxEpoch();
  bool bumped = false;
  if (myself_->config_epoch == 0 || myself_->config_epoch != max) {
    current_epoch_++;
    myself_->config_epoch = current_epoch_;
    bumped = true;
    SaveBeforeReply(true);
    LOG_NOTICE("New configEpoch set to %llu", static_cast<unsigned long long>(myself_->config_epoch));
  }
  return std::string(bumped ? "BUMPED " : "STILL ") + std::to_string(myself_->config_epoch);
}

std::string ClusterBus::SetConfigEpoch(int64_t epoch) {
  Change change(*this);
  if (epoch < 0) return "ERR Invalid config epoch specified: " + std::to_string(epoch);
  if (nodes_.size() > 1) return "ERR The user can assign a config epoch only when the node does not know any other node.";
  if (myself_->config_epoch != 0) return "ERR Node config epoch is already non-zero";
  myself_->config_epoch = static_cast<uint64_t>(epoch);
  LOG_NOTICE("configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH", static_cast<unsigned long long>(epoch));
  if (current_epoch_ < static_cast<uint64_t>(epoch)) current_epoch_ = static_cast<uint64_t>(epoch);
  SaveBeforeReply();
  UpdateState();
  return "";
}

}  // namespace peregrine::cluster
