// What an atomic slot migration (slot_migration.h) asks of this node's view
// (cluster_bus.h): the checks of CLUSTER MIGRATESLOTS and of the target's
// ESTABLISH, in Valkey 9's words, and the handover itself. Each takes the
// lock.
#include "cluster/cluster_bus.h"
#include "cluster/slot_migration.h"
#include "server/log.h"

namespace peregrine::cluster {

void ClusterBus::AttachServer(ServerState& server) {
  server_ = &server;
  migrations_ = std::make_unique<SlotMigrations>(server, *this);
}

bool ClusterBus::migrating() const { return migrations_ != nullptr && migrations_->active(); }

bool ClusterBus::StepMigrations(size_t shard, bool drained) {
  return migrations_ != nullptr && migrations_->Step(shard, drained);
}

bool ClusterBus::SlotFrozen(int slot) const { return migrations_ != nullptr && migrations_->FrozenSlot(slot); }

void ClusterBus::ImportClientGone(const std::string& name, uint64_t client_id) {
  if (migrations_ != nullptr) migrations_->EndImport(name, client_id, "Connection lost to source");
}

std::string ClusterBus::CanMigrate() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!myself_->is_primary()) return "ERR Slot migration can only be used on primary nodes.";
  for (size_t s = 0; s < kNumSlots; s++)
    if (importing_from_[s] != nullptr) return "ERR Slots are being manually imported";
  for (size_t s = 0; s < kNumSlots; s++)
    if (migrating_to_[s] != nullptr) return "ERR Slots are being manually migrated";
  return "";
}

std::string ClusterBus::MigrationRangesCheck(const std::vector<std::pair<int, int>>& ranges) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* owner = nullptr;
  for (const auto& [start, end] : ranges)
    for (int s = start; s <= end; s++) {
      const Node* n = slots_[static_cast<size_t>(s)];
      if (n == nullptr) return "ERR Slot " + std::to_string(s) + " has no node served.";
      if (owner != nullptr && n != owner) return "ERR Requested slots span multiple shards";
      owner = n;
    }
  if (owner != myself_) return "ERR Slots are not served by this node.";
  return "";
}

std::string ClusterBus::MigrationTargetCheck(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (id.size() != 40) return "ERR Invalid node name: " + id;
  const Node* n = Lookup(id);
  if (n == nullptr) return "ERR Unknown node name: " + id;
  if (n == myself_) return "ERR Target node can not be this node.";
  return "";
}

bool ClusterBus::OwnsAll(const std::string& id, const std::vector<bool>& slots) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Lookup(id);
  if (n == nullptr) return false;
  for (size_t s = 0; s < kNumSlots; s++)
    if (slots[s] && slots_[s] != n) return false;
  return true;
}

bool ClusterBus::NodeAddress(const std::string& id, std::string* host, int* port) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Lookup(id);
  if (n == nullptr || n->ip.empty() || n->port == 0) return false;
  *host = n->ip;
  *port = n->port;
  return true;
}

std::string ClusterBus::CheckImport(const std::vector<bool>& slots, const std::string& source) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!myself_->is_primary()) return "ERR Slot migration can only be used on primary nodes.";
  if (source == myself_->name) return "ERR Source node is target node itself";
  const Node* n = Lookup(source);
  if (n == nullptr) return "ERR Target node does not know the source node";
  for (size_t s = 0; s < kNumSlots; s++)
    if (slots[s] && slots_[s] != n) return "ERR Target node does not agree about current slot ownership";
  return "";
}

void ClusterBus::TakeImportedSlots(const std::vector<bool>& slots) {
  Change change(*this);
  for (size_t s = 0; s < kNumSlots; s++) {
    if (!slots[s] || slots_[s] == myself_) continue;
    DelSlot(static_cast<int>(s));
    AddSlot(myself_, static_cast<int>(s));
    importing_from_[s] = nullptr;
  }
  // A new epoch of our own (as a slot imported by hand gets, SETSLOT NODE
  // to itself): the rest of the cluster takes our claim, told at once.
  if (myself_->config_epoch == 0 || myself_->config_epoch != MaxEpoch()) {
    current_epoch_++;
    myself_->config_epoch = current_epoch_;
    LOG_NOTICE("configEpoch updated after importing slots");
  }
  for (auto& [name, other] : nodes_)
    if (!(other->flags & (kNodeMyself | kNodeHandshake)) && other->link != nullptr) SendPing(other->link, MsgType::kPong);
  SaveBeforeReply(/*fsync=*/true);
  UpdateState();
}

void ClusterBus::GiveExportedSlots(const std::vector<bool>& slots, const std::string& target) {
  Change change(*this);
  Node* n = Lookup(target);
  if (n == nullptr) return;
  for (size_t s = 0; s < kNumSlots; s++) {
    if (!slots[s] || slots_[s] != myself_) continue;
    DelSlot(static_cast<int>(s));
    AddSlot(n, static_cast<int>(s));
    migrating_to_[s] = nullptr;
    // (Its keys here go a step at a time: SlotMigrations' cleanup.)
  }
  if (myself_->numslots == 0 && settings_.allow_replica_migration) {
    LOG_NOTICE("Configuration change detected. Reconfiguring myself as a replica of %.40s", n->name.c_str());
    SetMyPrimary(n, true);
  }
  SaveBeforeReply();
  UpdateState();
}

}  // namespace peregrine::cluster
