// The node table and the slots (cluster_bus.h): adding, renaming and
// dropping nodes, binding slots, the cluster's state, the table workers
// route by, and what CLUSTER NODES, SLOTS, SHARDS, LINKS and INFO show.
#include <algorithm>
#include <cstdio>

#include "cluster/cluster_bus.h"
#include "server/log.h"

namespace peregrine::cluster {

namespace {

// Redis's CLUSTER_WRITABLE_DELAY and its rejoin delays (ms).
constexpr int64_t kWritableDelayMs = 2000;
constexpr int64_t kMinRejoinDelayMs = 500;
constexpr int64_t kMaxRejoinDelayMs = 5000;

std::string FlagsText(uint16_t flags) {
  static const std::pair<uint16_t, const char*> kNames[] = {
      {kNodeMyself, "myself"},       {kNodeMaster, "master"}, {kNodeSlave, "slave"},
      {kNodePfail, "fail?"},         {kNodeFail, "fail"},     {kNodeHandshake, "handshake"},
      {kNodeNoAddr, "noaddr"},       {kNodeNoFailover, "nofailover"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (!(flags & bit)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out.empty() ? "noflags" : out;
}

}  // namespace

bool ValidNodeName(std::string_view name) {
  if (name.size() != kNameLen) return false;
  for (char c : name)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return false;
  return true;
}

std::string ClusterBus::RandomName() {
  static const char kHex[] = "0123456789abcdef";
  std::string s(kNameLen, '0');
  for (char& c : s) c = kHex[rng_() & 15];
  return s;
}

Node* ClusterBus::CreateNode(const std::string& name, uint16_t flags) {
  auto n = std::make_unique<Node>();
  n->name = name.empty() ? RandomName() : name;
  n->shard_id = RandomName();
  n->flags = flags;
  n->ctime = UnixTimeMs();
  Node* raw = n.get();
  nodes_[raw->name] = std::move(n);
  return raw;
}

Node* ClusterBus::Lookup(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

void ClusterBus::DelNode(Node* n) {
  // Its slots' migrations, the failure reports it made, its links, then
  // the node.
  for (size_t j = 0; j < kNumSlots; j++) {
    if (importing_from_[j] == n) importing_from_[j] = nullptr;
    if (migrating_to_[j] == n) migrating_to_[j] = nullptr;
    if (slots_[j] == n) DelSlot(static_cast<int>(j));
  }
  for (auto& [name, other] : nodes_) {
    if (other.get() == n) continue;
    auto& v = other->fail_reports;
    v.erase(std::remove_if(v.begin(), v.end(), [n](const FailReport& r) { return r.by == n; }), v.end());
  }
  if (n->primary != nullptr) RemoveReplica(n->primary, n);
  for (Node* r : n->replicas) r->primary = nullptr;
  if (mf_replica_ == n) ResetManualFailover();
  if (n->link != nullptr) FreeLink(n->link);
  if (n->inbound_link != nullptr) FreeLink(n->inbound_link);
  for (auto& l : links_)
    if (l->node == n) l->node = nullptr;
  nodes_.erase(n->name);
  NeedSave();
  todo_update_state_ = true;
}

void ClusterBus::RenameNode(Node* n, const std::string& name) {
  LOG_DEBUG("Renaming node %.40s into %.40s", n->name.c_str(), name.c_str());
  auto it = nodes_.find(n->name);
  std::unique_ptr<Node> owned = std::move(it->second);
  nodes_.erase(it);
  owned->name = name;
  nodes_[name] = std::move(owned);
}

bool ClusterBus::AddSlot(Node* n, int slot) {
  Node*& owner = slots_[static_cast<size_t>(slot)];
  if (owner != nullptr) return false;
  SetSlotBit(n->slots, slot);
  n->numslots++;
  owner = n;
  // A primary's first slot makes it a target of replica migration if
  // other primaries have replicas (Redis's clusterNodeSetSlotBit).
  if (n->numslots == 1 && !(n->flags & kNodeMigrateTo)) {
    for (const auto& [name, other] : nodes_)
      if (other->is_primary() && !other->replicas.empty()) {
        n->flags |= kNodeMigrateTo;
        break;
      }
  }
  return true;
}

bool ClusterBus::DelSlot(int slot) {
  Node*& owner = slots_[static_cast<size_t>(slot)];
  if (owner == nullptr) return false;
  owner->slots[static_cast<size_t>(slot) >> 3] &= static_cast<uint8_t>(~(1u << (slot & 7)));
  owner->numslots--;
  owner = nullptr;
  std::vector<bool>& gone = server_tasks_.channel_slots;
  if (gone.empty()) gone.assign(kNumSlots, false);
  gone[static_cast<size_t>(slot)] = true;
  server_tasks_.channel_table = routes_version_.load(std::memory_order_acquire);
  server_tasks_pending_.store(true, std::memory_order_release);
  return true;
}

int ClusterBus::DelNodeSlots(Node* n) {
  int deleted = 0;
  for (int j = 0; j < static_cast<int>(kNumSlots); j++)
    if (slots_[static_cast<size_t>(j)] == n && DelSlot(j)) deleted++;
  return deleted;
}

void ClusterBus::AddReplica(Node* primary, Node* replica) {
  if (std::find(primary->replicas.begin(), primary->replicas.end(), replica) != primary->replicas.end()) return;
  primary->replicas.push_back(replica);
  primary->flags |= kNodeMigrateTo;
}

void ClusterBus::RemoveReplica(Node* primary, Node* replica) {
  auto& v = primary->replicas;
  v.erase(std::remove(v.begin(), v.end(), replica), v.end());
  if (v.empty()) primary->flags &= static_cast<uint16_t>(~kNodeMigrateTo);
}

bool ClusterBus::StartHandshake(const std::string& ip, int port, int cport) {
  // (The caller checked the address and the ports.) Not twice for one
  // address.
  for (auto& [name, n] : nodes_)
    if (n->in_handshake() && n->ip == ip && n->port == port && n->cport == cport) return false;
  Node* n = CreateNode("", kNodeHandshake | kNodeMeet);
  n->ip = ip;
  n->port = port;
  n->cport = cport;
  return true;
}

uint64_t ClusterBus::MaxEpoch() const {
  uint64_t max = 0;
  for (auto& [name, n] : nodes_) max = std::max(max, n->config_epoch);
  return std::max(max, current_epoch_);
}

void ClusterBus::UpdateState() {
  const int64_t now = UnixTimeMs();
  if (first_cron_ms_ == 0) first_cron_ms_ = now;
  // A primary just started waits a little before it turns writable, so
  // that the cluster may tell it of a newer configuration first.
  if (myself_->is_primary() && !state_ok_ && now - first_cron_ms_ < kWritableDelayMs) {
    PublishRoutes();
    return;
  }
  bool ok = true;
  if (settings_.require_full_coverage) {
    for (Node* owner : slots_) {
      if (owner == nullptr || owner->failed()) {
        ok = false;
        break;
      }
    }
  }
  int size = 0, reachable = 0;
  for (auto& [name, n] : nodes_) {
    if (n->is_primary() && n->numslots > 0) {
      size++;
      if (!(n->flags & (kNodeFail | kNodePfail))) reachable++;
    }
  }
  size_ = size;
  if (reachable < size / 2 + 1) {
    ok = false;
    among_minority_time_ = now;
  }
  if (ok != state_ok_) {
    const int64_t rejoin = std::clamp(settings_.node_timeout_ms, kMinRejoinDelayMs, kMaxRejoinDelayMs);
    if (ok && myself_->is_primary() && now - among_minority_time_ < rejoin) {
      PublishRoutes();
      return;
    }
    LOG_NOTICE("Cluster state changed: %s", ok ? "ok" : "fail");
    state_ok_ = ok;
  }
  PublishRoutes();
}

std::string ClusterBus::NodeEndpoint(const Node& n) const {
  switch (settings_.preferred_endpoint) {
    case Config::ClusterSettings::Endpoint::kIp: return n.ip;
    case Config::ClusterSettings::Endpoint::kHostname: return n.hostname.empty() ? "?" : n.hostname;
    case Config::ClusterSettings::Endpoint::kUnknown: return "";
  }
  return n.ip;
}

void ClusterBus::PublishRoutes() {
  auto r = std::make_shared<SlotRoutes>();
  std::map<const Node*, uint16_t> index;
  auto endpoint_of = [&](const Node* n) -> uint16_t {
    auto [it, fresh] = index.emplace(n, static_cast<uint16_t>(r->endpoints.size()));
    if (fresh) {
      r->endpoints.push_back(NodeEndpoint(*n) + ":" + std::to_string(n->port));
      r->tls_endpoints.push_back(NodeEndpoint(*n) + ":" + std::to_string(n->tls_port));
    }
    return it->second;
  };
  for (size_t j = 0; j < kNumSlots; j++) {
    const Node* owner = slots_[j];
    if (owner == nullptr) continue;
    r->owner[j] = owner == myself_ ? SlotRoutes::kMine : endpoint_of(owner);
    if (owner == myself_ && migrating_to_[j] != nullptr) r->migrating_to[j] = endpoint_of(migrating_to_[j]);
    if (importing_from_[j] != nullptr) r->importing.set(j);
  }
  r->ok = state_ok_;
  if (myself_->is_replica() && myself_->primary != nullptr) r->my_primary = endpoint_of(myself_->primary);
  const SlotRoutes& old = *routes_;
  if (old.owner == r->owner && old.migrating_to == r->migrating_to && old.importing == r->importing &&
      old.endpoints == r->endpoints && old.tls_endpoints == r->tls_endpoints && old.ok == r->ok &&
      old.my_primary == r->my_primary)
    return;
  {
    std::lock_guard<std::mutex> lock(routes_mu_);
    routes_ = std::move(r);
  }
  routes_version_.fetch_add(1, std::memory_order_acq_rel);
}

void ClusterBus::ForEachSlotRange(const std::function<void(const Node*, int, int)>& fn) const {
  for (int j = 0; j < static_cast<int>(kNumSlots);) {
    const Node* owner = slots_[static_cast<size_t>(j)];
    int end = j;
    while (end + 1 < static_cast<int>(kNumSlots) && slots_[static_cast<size_t>(end) + 1] == owner) end++;
    if (owner != nullptr) fn(owner, j, end);
    j = end + 1;
  }
}

std::string ClusterBus::NodeLine(const Node& n, bool for_file, bool tls) const {
  std::string s = n.name + " " + n.ip + ":" + std::to_string(tls ? n.tls_port : n.port) + "@" + std::to_string(n.cport);
  if (!n.hostname.empty()) s += "," + n.hostname;
  if (for_file) {
    // nodes.conf's aux fields, as Redis 7.2 writes them.
    if (n.hostname.empty()) s += ",";
    if (n.tls_port != 0) s += ",tls-port=" + std::to_string(n.tls_port);
    if (!n.human_nodename.empty()) s += ",nodename=" + n.human_nodename;
    s += ",shard-id=" + n.shard_id;
  }
  s += " " + FlagsText(n.flags) + " " + (n.primary != nullptr ? n.primary->name : std::string("-"));
  const uint64_t epoch = (n.is_replica() && n.primary != nullptr) ? n.primary->config_epoch : n.config_epoch;
  s += " " + std::to_string(n.ping_sent) + " " + std::to_string(n.pong_received) + " " + std::to_string(epoch) + " " +
       ((n.link != nullptr || n.myself()) ? "connected" : "disconnected");
  ForEachSlotRange([&](const Node* owner, int start, int end) {
    if (owner != &n) return;
    s += " " + std::to_string(start);
    if (end != start) s += "-" + std::to_string(end);
  });
  if (n.myself()) {
    for (size_t j = 0; j < kNumSlots; j++) {
      if (migrating_to_[j] != nullptr)
        s += " [" + std::to_string(j) + "->-" + migrating_to_[j]->name + "]";
      else if (importing_from_[j] != nullptr)
        s += " [" + std::to_string(j) + "-<-" + importing_from_[j]->name + "]";
    }
  }
  return s;
}

std::string ClusterBus::MyId() const {
  std::lock_guard<std::mutex> lock(mu_);
  return myself_->name;
}

std::string ClusterBus::MyShardId() const {
  std::lock_guard<std::mutex> lock(mu_);
  return myself_->shard_id;
}

bool ClusterBus::is_replica() const {
  std::lock_guard<std::mutex> lock(mu_);
  return myself_->is_replica();
}

std::string ClusterBus::NodesText(bool tls) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (auto& [name, n] : nodes_) {
    out += NodeLine(*n, false, tls);
    out += '\n';
  }
  return out;
}

bool ClusterBus::ReplicasText(const std::string& id, std::vector<std::string>* lines, std::string* error,
                              bool tls) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Lookup(id);
  if (n == nullptr) {
    *error = "ERR Unknown node " + id;
    return false;
  }
  if (n->is_replica()) {
    *error = "ERR The specified node is not a master";
    return false;
  }
  for (const Node* r : n->replicas) lines->push_back(NodeLine(*r, false, tls));
  return true;
}

std::vector<ClusterBus::SlotRange> ClusterBus::SlotsView(bool tls) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto endpoint = [this, tls](const Node& n) {
    Endpoint e;
    e.preferred = NodeEndpoint(n);
    e.port = tls ? n.tls_port : n.port;
    e.id = n.name;
    e.ip = n.ip;
    e.hostname = n.hostname;
    return e;
  };
  std::vector<SlotRange> out;
  ForEachSlotRange([&](const Node* owner, int start, int end) {
    SlotRange r{start, end, {endpoint(*owner)}};
    for (const Node* rep : owner->replicas)
      if (!rep->failed()) r.nodes.push_back(endpoint(*rep));
    out.push_back(std::move(r));
  });
  return out;
}

std::vector<ClusterBus::ShardView> ClusterBus::ShardsView() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::vector<const Node*>> shards;
  for (auto& [name, n] : nodes_) shards[n->shard_id].push_back(n.get());
  std::vector<ShardView> out;
  for (auto& [id, members] : shards) {
    ShardView v;
    const Node* primary = nullptr;
    for (const Node* n : members)
      if (!n->failed()) {
        primary = n->is_replica() && n->primary != nullptr ? n->primary : n;
        break;
      }
    ForEachSlotRange([&](const Node* owner, int start, int end) {
      if (owner == primary) v.slots.emplace_back(start, end);
    });
    // (The primary first, as Redis lists a shard.)
    std::stable_sort(members.begin(), members.end(),
                     [](const Node* a, const Node* b) { return a->is_primary() && !b->is_primary(); });
    for (const Node* n : members) {
      ShardNode s;
      s.id = n->name;
      s.port = n->port;
      s.tls_port = n->tls_port;
      s.ip = n->ip;
      s.endpoint = NodeEndpoint(*n);
      s.hostname = n->hostname;
      s.role = n->is_replica() ? "replica" : "master";
      s.offset = n->myself() ? repl_offset_.load(std::memory_order_relaxed) : n->repl_offset;
      s.health = n->failed() ? "fail" : (n->is_replica() && s.offset == 0) ? "loading" : "online";
      v.nodes.push_back(std::move(s));
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<ClusterBus::LinkView> ClusterBus::LinksView() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LinkView> out;
  for (const auto& l : links_) {
    if (l->freed || l->node == nullptr) continue;
    LinkView v;
    v.direction = l->inbound ? "from" : "to";
    v.node = l->node->name;
    v.create_time = l->ctime;
    v.events = l->writable_armed ? "rw" : "r";
    v.send_buffer_allocated = l->out.capacity();
    v.send_buffer_used = l->out.size() - l->out_sent;
    out.push_back(std::move(v));
  }
  return out;
}

int ClusterBus::CountFailureReports(const std::string& id, std::string* error) const {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = Lookup(id);
  if (n == nullptr) {
    *error = "ERR Unknown node " + id;
    return -1;
  }
  return const_cast<ClusterBus*>(this)->CountFailureReportsLocked(n);
}

std::string ClusterBus::InfoText() const {
  std::lock_guard<std::mutex> lock(mu_);
  int assigned = 0, ok = 0, pfail = 0, fail = 0;
  for (const Node* owner : slots_) {
    if (owner == nullptr) continue;
    assigned++;
    if (owner->failed())
      fail++;
    else if (owner->timed_out())
      pfail++;
    else
      ok++;
  }
  const Node* owner = myself_->is_replica() && myself_->primary != nullptr ? myself_->primary : myself_;
  std::string s;
  auto field = [&s](const char* name, const std::string& value) {
    s += name;
    s += ':';
    s += value;
    s += "\r\n";
  };
  field("cluster_state", state_ok_ ? "ok" : "fail");
  field("cluster_slots_assigned", std::to_string(assigned));
  field("cluster_slots_ok", std::to_string(ok));
  field("cluster_slots_pfail", std::to_string(pfail));
  field("cluster_slots_fail", std::to_string(fail));
  field("cluster_known_nodes", std::to_string(nodes_.size()));
  field("cluster_size", std::to_string(size_));
  field("cluster_current_epoch", std::to_string(current_epoch_));
  field("cluster_my_epoch", std::to_string(owner->config_epoch));
  uint64_t sent = 0, received = 0;
  for (int t = 0; t < kMsgTypeCount; t++) {
    if (stats_sent_[t] == 0) continue;
    field(("cluster_stats_messages_" + std::string(MsgTypeName(static_cast<uint16_t>(t))) + "_sent").c_str(),
          std::to_string(stats_sent_[t]));
    sent += stats_sent_[t];
  }
  field("cluster_stats_messages_sent", std::to_string(sent));
  for (int t = 0; t < kMsgTypeCount; t++) {
    if (stats_received_[t] == 0) continue;
    field(("cluster_stats_messages_" + std::string(MsgTypeName(static_cast<uint16_t>(t))) + "_received").c_str(),
          std::to_string(stats_received_[t]));
    received += stats_received_[t];
  }
  field("cluster_stats_messages_received", std::to_string(received));
  field("total_cluster_links_buffer_limit_exceeded", std::to_string(stats_links_buffer_limit_exceeded_));
  return s;
}

}  // namespace peregrine::cluster
