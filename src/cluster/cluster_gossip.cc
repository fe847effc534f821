// What a bus message does to this node's view (Redis's clusterProcessPacket
// and its helpers), and the messages this node sends (cluster_bus.h). The
// rules are Redis 7.2's, so that Peregrine and Redis nodes agree in a mixed
// cluster; the code is this project's.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "cluster/cluster_bus.h"
#include "net/socket.h"
#include "server/log.h"

namespace peregrine::cluster {

bool ValidIp(const std::string& ip) {
  in6_addr a6;
  in_addr a4;
  return inet_pton(AF_INET, ip.c_str(), &a4) == 1 || inet_pton(AF_INET6, ip.c_str(), &a6) == 1;
}

bool PlainName(std::string_view name) {
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_')) return false;
  return true;
}

std::string ClusterBus::LinkIp(const Link* link, bool local) {
  // (An address that cannot be read is none, not "?".)
  if (link->fd < 0) return "";
  const std::string addr = local ? LocalAddress(link->fd) : PeerAddress(link->fd);
  const std::string ip(AddressIp(addr));
  return ip == "?" ? "" : ip;
}

BusMessage ClusterBus::Header(MsgType type) const {
  BusMessage m;
  m.type = type;
  // A replica advertises its primary's slots and epoch.
  const Node* owner = (myself_->is_replica() && myself_->primary != nullptr) ? myself_->primary : myself_;
  m.port = static_cast<uint16_t>(settings_.announce_port != 0 ? settings_.announce_port : port_);
  m.pport = static_cast<uint16_t>(settings_.announce_tls_port != 0 ? settings_.announce_tls_port : tls_port_);
  m.cport = static_cast<uint16_t>(settings_.announce_bus_port != 0 ? settings_.announce_bus_port : bus_port_);
  m.current_epoch = current_epoch_;
  m.config_epoch = owner->config_epoch;
  m.offset = repl_offset_.load(std::memory_order_relaxed);
  m.sender = myself_->name;
  m.myslots = owner->slots;
  if (myself_->is_replica() && myself_->primary != nullptr) m.slaveof = myself_->primary->name;
  m.myip = settings_.announce_ip;
  m.flags = myself_->flags;
  m.state = state_ok_ ? 0 : 1;
  // A primary paused for its replica's manual failover says so, with the
  // offset its stream stopped at.
  if (myself_->is_primary() && mf_end_ != 0 && mf_paused_offset_ >= 0) {
    m.mflags[0] |= kMsgFlag0Paused;
    m.offset = static_cast<uint64_t>(mf_paused_offset_);
  }
  return m;
}

void ClusterBus::SendPing(Link* link, MsgType type) {
  if (link == nullptr || link->freed) return;
  BusMessage m = Header(type);
  // Gossip about a tenth of the nodes (at least three), picked at random
  // among those worth telling of, then every node believed failing.
  const int known = static_cast<int>(nodes_.size());
  const int fresh = known - 2;
  int wanted = std::max(3, known / 10);
  wanted = std::min(wanted, std::max(fresh, 0));
  std::vector<Node*> all;
  for (auto& [name, n] : nodes_) all.push_back(n.get());
  std::vector<Node*> picked;
  auto add = [&](Node* n) {
    Gossip g;
    g.name = n->name;
    g.ping_sent = static_cast<uint32_t>(n->ping_sent / 1000);
    g.pong_received = static_cast<uint32_t>(n->pong_received / 1000);
    g.ip = n->ip;
    g.port = static_cast<uint16_t>(n->port);
    g.cport = static_cast<uint16_t>(n->cport);
    g.pport = static_cast<uint16_t>(n->tls_port);
    g.flags = n->flags;
    m.gossip.push_back(std::move(g));
    picked.push_back(n);
  };
  for (int tries = wanted * 3; tries > 0 && static_cast<int>(picked.size()) < wanted && !all.empty(); tries--) {
    Node* n = all[rng_() % all.size()];
    if (n == myself_ || (n->flags & kNodePfail)) continue;
    if ((n->flags & (kNodeHandshake | kNodeNoAddr)) || (n->link == nullptr && n->numslots == 0)) continue;
    if (std::find(picked.begin(), picked.end(), n) != picked.end()) continue;
    add(n);
  }
  for (Node* n : all) {
    if (!(n->flags & kNodePfail) || (n->flags & (kNodeHandshake | kNodeNoAddr))) continue;
    if (std::find(picked.begin(), picked.end(), n) != picked.end()) continue;
    add(n);
  }
  m.hostname = myself_->hostname;
  const int64_t now = UnixTimeMs();
  if (link->node == nullptr || link->node->speaks_72 != 0) {
    m.human_nodename = myself_->human_nodename;
    for (const auto& [name, until] : blacklist_)
      if (until > now) m.forgotten.push_back({name, static_cast<uint64_t>((until - now) / 1000)});
    m.shard_id = myself_->shard_id;
  }
  if (link->node != nullptr && type == MsgType::kPing) link->node->ping_sent = now;
  Send(link, m);
}

void ClusterBus::PublishToCluster(std::string_view channel, std::string_view message, bool shard) {
  bool first;
  {
    std::lock_guard<std::mutex> lock(publish_mu_);
    // (A bus that takes none for long loses the oldest rather than growing
    // without bound, as a worker's inbox does.)
    if (publish_queue_.size() >= kMaxPublishQueued) publish_queue_.erase(publish_queue_.begin());
    first = publish_queue_.empty();
    publish_queue_.push_back({std::string(channel), std::string(message), shard});
  }
  if (first) Wake();
}

void ClusterBus::SendPublished() {
  std::vector<Published> batch;
  {
    std::lock_guard<std::mutex> lock(publish_mu_);
    batch.swap(publish_queue_);
  }
  if (batch.empty()) return;
  // Each kind encoded into one run of bytes, one write per link: PUBLISH
  // to every node with a link, the handshaking ones aside (Redis's
  // clusterBroadcastMessage); SPUBLISH to the other nodes serving our
  // slots, our primary and its replicas (Redis 7.0's set; 7.2 picks them
  // by shard id, which a 7.0 node does not send).
  std::string all, shard_bytes, one;
  uint64_t all_n = 0, shard_n = 0;
  // (One header for the batch: only the channel and message change.)
  BusMessage m = Header(MsgType::kPublish);
  for (Published& p : batch) {
    m.type = p.shard ? MsgType::kPublishShard : MsgType::kPublish;
    m.channel = std::move(p.channel);
    m.message = std::move(p.message);
    one.clear();
    Encode(m, &one);
    (p.shard ? shard_bytes : all).append(one);
    (p.shard ? shard_n : all_n)++;
  }
  if (all_n > 0) {
    for (auto& [name, n] : nodes_)
      if (!(n->flags & (kNodeMyself | kNodeHandshake)))
        SendBytes(n->link, all, static_cast<uint16_t>(MsgType::kPublish), all_n);
  }
  if (shard_n > 0) {
    Node* primary = myself_->is_replica() && myself_->primary != nullptr ? myself_->primary : myself_;
    auto send = [&](Node* n) {
      if (n != myself_ && !n->in_handshake())
        SendBytes(n->link, shard_bytes, static_cast<uint16_t>(MsgType::kPublishShard), shard_n);
    };
    send(primary);
    for (Node* r : primary->replicas) send(r);
  }
}

void ClusterBus::SendFail(const std::string& name) {
  BusMessage m = Header(MsgType::kFail);
  m.fail_about = name;
  Broadcast(m);
}

void ClusterBus::SendUpdate(Link* link, Node* about) {
  if (link == nullptr) return;
  BusMessage m = Header(MsgType::kUpdate);
  m.update_config_epoch = about->config_epoch;
  m.update_name = about->name;
  m.update_slots = about->slots;
  Send(link, m);
}

void ClusterBus::ProcessMessage(Link* link, BusMessage& m) {
  const int64_t now = UnixTimeMs();
  const uint16_t type = static_cast<uint16_t>(m.type);
  if (type < kMsgTypeCount) stats_received_[type]++;
  // An address that is not one (it would reach -MOVED replies and
  // nodes.conf) is none: the link's is used.
  if (!m.myip.empty() && !ValidIp(m.myip)) m.myip.clear();
  Node* sender = (link->node != nullptr && !link->node->in_handshake()) ? link->node : Lookup(m.sender);
  // A handshake node's random name was never told to anyone.
  if (sender != nullptr && sender->in_handshake() && link->inbound) sender = nullptr;
  // Our own id (a node that MEETs itself, or a forgery): nothing it says
  // is about another node; a handshake with ourselves ends.
  if (sender == myself_) {
    if (!link->inbound && link->node != nullptr && link->node->in_handshake()) DelNode(link->node);
    return;
  }
  // An inbound link learns its node from the first message naming a
  // known sender.
  if (sender != nullptr && link->inbound && link->node == nullptr) SetLinkNode(link, sender);
  if (sender != nullptr && (m.mflags[0] & kMsgFlag0ExtData)) sender->flags |= kNodeExtensionsSupported;
  if (sender != nullptr) sender->data_received = now;
  if (sender != nullptr && !sender->in_handshake()) {
    if (m.current_epoch > current_epoch_) current_epoch_ = m.current_epoch;
    if (m.config_epoch > sender->config_epoch) {
      sender->config_epoch = m.config_epoch;
      NeedSave(true);
    }
    sender->repl_offset = m.offset;
    sender->repl_offset_time = now;
    // Our primary paused for our manual failover: the offset to reach.
    if (mf_end_ != 0 && myself_->is_replica() && myself_->primary == sender && (m.mflags[0] & kMsgFlag0Paused) &&
        mf_primary_offset_ == -1) {
      mf_primary_offset_ = static_cast<int64_t>(sender->repl_offset);
      LOG_NOTICE("Received replication offset for paused master manual failover: %lld",
                 static_cast<long long>(mf_primary_offset_));
      todo_manual_failover_ = true;  // (after this event: it may free this link)
    }
  }
  const bool ping_family = m.type == MsgType::kPing || m.type == MsgType::kPong || m.type == MsgType::kMeet;
  if (m.type == MsgType::kPing || m.type == MsgType::kMeet) {
    // Our own address as the peer reached it: learnt from a MEET (the
    // nodes that MEET us use the address we are known by), or from any
    // PING while we have none.
    if ((m.type == MsgType::kMeet || myself_->ip.empty()) && settings_.announce_ip.empty()) {
      const std::string ip = LinkIp(link, /*local=*/true);
      if (!ip.empty() && ip != myself_->ip) {
        myself_->ip = ip;
        LOG_NOTICE("IP address for this node updated to %s", ip.c_str());
        NeedSave();
      }
    }
    if (sender == nullptr && m.type == MsgType::kMeet) {
      // A new node: in handshake until its PONG names it.
      Node* n = CreateNode("", kNodeHandshake);
      n->ip = !m.myip.empty() ? m.myip : LinkIp(link, /*local=*/false);
      n->port = m.port;
      n->tls_port = m.pport;
      n->cport = m.cport;
      NeedSave();
      ProcessGossip(m, nullptr);
    }
    SendPing(link, MsgType::kPong);
    if (link->freed) return;
  }
  if (ping_family) {
    ProcessPingFamily(link, m, sender);
  } else if (m.type == MsgType::kFail) {
    if (sender == nullptr) {
      LOG_NOTICE("Ignoring FAIL message from unknown node %.40s about %.40s", m.sender.c_str(), m.fail_about.c_str());
      return;
    }
    Node* failing = Lookup(m.fail_about);
    if (failing != nullptr && !(failing->flags & (kNodeFail | kNodeMyself))) {
      LOG_NOTICE("FAIL message received from %.40s about %.40s", m.sender.c_str(), m.fail_about.c_str());
      failing->flags |= kNodeFail;
      failing->fail_time = now;
      failing->flags &= static_cast<uint16_t>(~kNodePfail);
      NeedSave();
      todo_update_state_ = true;
    }
  } else if (m.type == MsgType::kUpdate) {
    if (sender == nullptr) return;
    Node* n = Lookup(m.update_name);
    if (n == nullptr || n->in_handshake() || n->config_epoch >= m.update_config_epoch) return;
    if (n->is_replica()) SetNodeAsPrimary(n);
    n->config_epoch = m.update_config_epoch;
    NeedSave(true);
    UpdateSlotsConfigWith(n, m.update_config_epoch, m.update_slots);
  } else if (m.type == MsgType::kPublish || m.type == MsgType::kPublishShard) {
    // Another node's PUBLISH (SPUBLISH): to our subscribers (every worker's).
    if (sender != nullptr) inbox().Push(std::move(m.channel), std::move(m.message), m.type == MsgType::kPublishShard);
  } else if (m.type == MsgType::kFailoverAuthRequest) {
    if (sender != nullptr) SendFailoverAuthIfNeeded(sender, m);
  } else if (m.type == MsgType::kFailoverAuthAck) {
    if (sender != nullptr) OnFailoverAuthAck(sender, m);
  } else if (m.type == MsgType::kMfStart) {
    // Only from one of our replicas.
    if (sender != nullptr && sender->primary == myself_ && myself_->is_primary()) OnManualFailoverRequest(sender);
  } else if (m.type != MsgType::kModule) {  // (MODULE: Peregrine has no modules; docs/cluster.md, "Not yet")
    LOG_WARNING("Received unknown packet type: %d", static_cast<int>(type));
  }
}

void ClusterBus::ProcessPingFamily(Link* link, BusMessage& m, Node* sender) {
  const int64_t now = UnixTimeMs();
  if (link->freed) return;
  if (!link->inbound && link->node != nullptr) {
    Node* n = link->node;
    if (n->in_handshake()) {
      if (sender != nullptr) {
        // A node we know under its name: keep that one (with this
        // address if it moved) and drop the handshake's.
        if (UpdateAddressIfNeeded(sender, link, m)) {
          NeedSave();
          todo_update_state_ = true;
        }
        DelNode(n);
        return;
      }
      if (!ValidNodeName(m.sender)) {
        FreeLink(link);
        return;
      }
      RenameNode(n, m.sender);
      LOG_DEBUG("Handshake with node %.40s completed.", n->name.c_str());
      n->flags &= static_cast<uint16_t>(~kNodeHandshake);
      n->flags |= m.flags & (kNodeMaster | kNodeSlave);
      NeedSave();
    } else if (n->name != m.sender) {
      // Another node answers at this address: ours is gone from it.
      LOG_DEBUG("PONG contains mismatching sender ID. About node %.40s", n->name.c_str());
      n->flags |= kNodeNoAddr;
      n->ip.clear();
      n->port = n->tls_port = n->cport = 0;
      FreeLink(link);
      NeedSave();
      return;
    }
  }
  if (sender != nullptr) {
    sender->flags = static_cast<uint16_t>((sender->flags & ~kNodeNoFailover) | (m.flags & kNodeNoFailover));
  }
  if (sender != nullptr && m.type == MsgType::kPing && !sender->in_handshake() &&
      UpdateAddressIfNeeded(sender, link, m)) {
    NeedSave();
    todo_update_state_ = true;
  }
  if (!link->inbound && m.type == MsgType::kPong && link->node != nullptr) {
    Node* n = link->node;
    n->pong_received = now;
    n->ping_sent = 0;
    if (n->timed_out()) {
      n->flags &= static_cast<uint16_t>(~kNodePfail);
      NeedSave();
      todo_update_state_ = true;
    } else if (n->failed()) {
      ClearFailureIfNeeded(n);
    }
  }
  if (sender == nullptr) return;

  // Its role.
  if (m.slaveof.empty()) {
    SetNodeAsPrimary(sender);
  } else {
    Node* primary = Lookup(m.slaveof);
    if (primary == sender) return;  // (no node replicates itself)
    // A stale claim (an older epoch than we know it by) changes nothing of
    // its role: a replica never keeps slots.
    const bool stale = sender->is_primary() && primary != nullptr && primary->shard_id == sender->shard_id &&
                       sender->config_epoch > m.config_epoch;
    if (stale) {
      LOG_NOTICE("Ignore stale message from %.40s in shard %.40s", sender->name.c_str(), sender->shard_id.c_str());
    } else if (sender->is_primary()) {
      if (primary != nullptr && primary->shard_id == sender->shard_id) {
        // A failover in its shard: its slots go to its new primary.
        for (int j = 0; j < static_cast<int>(kNumSlots); j++)
          if (slots_[static_cast<size_t>(j)] == sender) {
            DelSlot(j);
            AddSlot(primary, j);
          }
        SetNodeAsPrimary(primary);
        primary->config_epoch = m.config_epoch;
      } else {
        const int lost = DelNodeSlots(sender);
        LOG_NOTICE("Node %.40s is no longer master of shard %.40s; removed all %d slot(s) it used to own",
                   sender->name.c_str(), sender->shard_id.c_str(), lost);
      }
      sender->flags &= static_cast<uint16_t>(~(kNodeMaster | kNodeMigrateTo));
      sender->flags |= kNodeSlave;
      NeedSave();
      todo_update_state_ = true;
    }
    if (!stale && primary != nullptr && sender->primary != primary) {
      if (sender->primary != nullptr) RemoveReplica(sender->primary, sender);
      AddReplica(primary, sender);
      sender->primary = primary;
      sender->shard_id = primary->shard_id;
      NeedSave();
    }
  }

  // Its slots.
  Node* sender_primary = sender->is_primary() ? sender : sender->primary;
  const bool dirty = sender_primary != nullptr && sender_primary->slots != m.myslots;
  if (sender->is_primary() && dirty) UpdateSlotsConfigWith(sender, m.config_epoch, m.myslots);
  if (dirty) {
    // It claims slots we know a newer owner of: tell it.
    for (int j = 0; j < static_cast<int>(kNumSlots); j++) {
      if (!SlotBit(m.myslots, j)) continue;
      Node* owner = slots_[static_cast<size_t>(j)];
      if (owner == sender || owner == nullptr) continue;
      if (owner->config_epoch > m.config_epoch) {
        LOG_VERBOSE("Node %.40s has old slots configuration, sending an UPDATE message about %.40s",
                    sender->name.c_str(), owner->name.c_str());
        SendUpdate(sender->link, owner);
        break;
      }
    }
  }
  if (myself_->is_primary() && sender->is_primary() && m.config_epoch == myself_->config_epoch)
    HandleConfigEpochCollision(sender);
  ProcessGossip(m, sender);
  ProcessExtensions(m, sender);
}

void ClusterBus::ProcessGossip(BusMessage& m, Node* sender) {
  const int64_t now = UnixTimeMs();
  int invalid = 0;
  for (const Gossip& g : m.gossip)
    if (!ValidNodeName(g.name)) invalid++;
  if (invalid > 0) {
    LOG_WARNING("Node %.40s gossiped %d nodes with invalid IDs.", m.sender.c_str(), invalid);
    return;
  }
  for (const Gossip& g : m.gossip) {
    if (!g.ip.empty() && !ValidIp(g.ip)) continue;  // (see ProcessMessage)
    Node* n = Lookup(g.name);
    if (n != nullptr && n != myself_) {
      if (sender != nullptr && sender->is_primary()) {
        if (g.flags & (kNodeFail | kNodePfail)) {
          if (AddFailureReport(n, sender))
            LOG_VERBOSE("Node %.40s reported node %.40s as not reachable.", sender->name.c_str(), n->name.c_str());
          MarkFailingIfNeeded(n);
        } else if (DelFailureReport(n, sender)) {
          LOG_VERBOSE("Node %.40s reported node %.40s is back online.", sender->name.c_str(), n->name.c_str());
        }
      }
      // Up as far as we know, no PING of ours waiting: take the newer PONG
      // time it saw (no later than our clock allows).
      if (!(g.flags & (kNodeFail | kNodePfail)) && n->ping_sent == 0 && CountFailureReportsLocked(n) == 0) {
        const int64_t pong = static_cast<int64_t>(g.pong_received) * 1000;
        if (pong <= now + 500 && pong > n->pong_received) n->pong_received = pong;
      }
      // Unreachable here, reachable at another address there: go there.
      if ((n->flags & (kNodeFail | kNodePfail)) && !(g.flags & kNodeNoAddr) && !(g.flags & (kNodeFail | kNodePfail)) &&
          (n->ip != g.ip || n->port != g.port || n->tls_port != g.pport || n->cport != g.cport)) {
        if (n->link != nullptr) FreeLink(n->link);
        n->ip = g.ip;
        n->port = g.port;
        n->tls_port = g.pport;
        n->cport = g.cport;
        n->flags &= static_cast<uint16_t>(~kNodeNoAddr);
      }
    } else if (n == nullptr && sender != nullptr && !(g.flags & kNodeNoAddr) && !blacklist_.contains(g.name)) {
      // Told of by a node we know: a node of our cluster.
      const uint16_t keep = kNodeMaster | kNodeSlave | kNodePfail | kNodeFail | kNodeNoFailover;
      Node* added = CreateNode(g.name, g.flags & keep);
      added->ip = g.ip;
      added->port = g.port;
      added->tls_port = g.pport;
      added->cport = g.cport;
    }
  }
}

void ClusterBus::ProcessExtensions(BusMessage& m, Node* sender) {
  // What a node does not send it does not have (an announced hostname
  // dropped is dropped here too). Only names CLUSTER NODES and nodes.conf
  // can hold are taken (a space, a comma or a newline would break both).
  if (!PlainName(m.hostname)) m.hostname = sender->hostname;
  if (!PlainName(m.human_nodename)) m.human_nodename = sender->human_nodename;
  if (sender->hostname != m.hostname) {
    sender->hostname = m.hostname;
    NeedSave();
  }
  if (sender->human_nodename != m.human_nodename) {
    sender->human_nodename = m.human_nodename;
    NeedSave();
  }
  for (const ForgottenNode& f : m.forgotten) {
    Node* n = Lookup(f.name);
    if (n == nullptr || n == myself_ || n == sender || (myself_->is_replica() && myself_->primary == n)) continue;
    LOG_NOTICE("Forgetting node %.40s for %llu s, as %.40s asks", f.name.c_str(),
               static_cast<unsigned long long>(f.ttl_s), sender->name.c_str());
    blacklist_[f.name] = UnixTimeMs() + static_cast<int64_t>(std::min<uint64_t>(f.ttl_s, 3600)) * 1000;
    DelNode(n);
    NeedSave();
  }
  sender->speaks_72 = m.shard_id.empty() ? 0 : 1;
  std::string shard = m.shard_id;
  if (shard.empty() && sender->primary != nullptr) shard = sender->primary->shard_id;
  if (!shard.empty() && ValidNodeName(shard) && sender->shard_id != shard) {
    sender->shard_id = shard;
    if (sender->is_primary())
      for (Node* r : sender->replicas) r->shard_id = shard;
    NeedSave();
  }
}

bool ClusterBus::UpdateAddressIfNeeded(Node* n, Link* link, const BusMessage& m) {
  if (link == n->link) return false;
  const std::string ip = !m.myip.empty() ? m.myip : LinkIp(link, /*local=*/false);
  if (ip.empty()) return false;
  if (n->port == m.port && n->tls_port == m.pport && n->cport == m.cport && n->ip == ip) return false;
  n->ip = ip;
  n->port = m.port;
  n->tls_port = m.pport;
  n->cport = m.cport;
  if (n->link != nullptr) FreeLink(n->link);
  n->flags &= static_cast<uint16_t>(~kNodeNoAddr);
  LOG_NOTICE("Address updated for node %.40s, now %s:%d", n->name.c_str(), n->ip.c_str(), n->port);
  if (myself_->is_replica() && myself_->primary == n) {
    server_tasks_.follow = true;
    server_tasks_.follow_host = n->ip;
    server_tasks_.follow_port = n->port;
    server_tasks_pending_.store(true, std::memory_order_release);
  }
  return true;
}

void ClusterBus::SetMyPrimary(Node* n, bool tell_server) {
  if (myself_->is_primary()) {
    myself_->flags &= static_cast<uint16_t>(~(kNodeMaster | kNodeMigrateTo));
    myself_->flags |= kNodeSlave;
    std::fill(migrating_to_.begin(), migrating_to_.end(), nullptr);
    std::fill(importing_from_.begin(), importing_from_.end(), nullptr);
  } else if (myself_->primary != nullptr) {
    RemoveReplica(myself_->primary, myself_);
  }
  myself_->primary = n;
  myself_->shard_id = n->shard_id;
  AddReplica(n, myself_);
  ResetManualFailover();
  if (tell_server) {
    server_tasks_.become_primary = false;  // (the last role wins)
    promoting_ = false;
    server_tasks_.follow = true;
    server_tasks_.follow_host = n->ip;
    server_tasks_.follow_port = n->port;
    server_tasks_pending_.store(true, std::memory_order_release);
  }
}

void ClusterBus::SetNodeAsPrimary(Node* n) {
  if (n->is_primary()) return;
  if (n->primary != nullptr) {
    RemoveReplica(n->primary, n);
    if (n != myself_) n->flags |= kNodeMigrateTo;
  }
  n->flags &= static_cast<uint16_t>(~kNodeSlave);
  n->flags |= kNodeMaster;
  n->primary = nullptr;
  NeedSave();
  todo_update_state_ = true;
}

void ClusterBus::UpdateSlotsConfigWith(Node* sender, uint64_t epoch, const SlotBitmap& slots) {
  if (sender == myself_) {
    LOG_NOTICE("Discarding UPDATE message about myself.");
    return;
  }
  Node* current = myself_->is_primary() ? myself_ : myself_->primary;
  Node* new_primary = nullptr;
  std::vector<uint16_t> dirty;
  int sender_slots = 0, moved_ours = 0;
  for (int j = 0; j < static_cast<int>(kNumSlots); j++) {
    if (!SlotBit(slots, j)) continue;
    sender_slots++;
    Node*& owner = slots_[static_cast<size_t>(j)];
    if (owner == sender) continue;
    // A slot being imported changes only by hand (SETSLOT), as resharding
    // closes it.
    if (importing_from_[static_cast<size_t>(j)] != nullptr) continue;
    if (owner == nullptr || owner->config_epoch < epoch) {
      // (The keys of a slot an atomic migration moved go a step at a time,
      // by the job's cleanup, not all at once.)
      if (owner == myself_ && !(migrations_ != nullptr && migrations_->ExportingSlot(j)))
        dirty.push_back(static_cast<uint16_t>(j));
      if (owner != nullptr && owner == current) {
        new_primary = sender;
        moved_ours++;
      }
      DelSlot(j);
      AddSlot(sender, j);
      NeedSave(true);
      todo_update_state_ = true;
    }
  }
  if (new_primary != nullptr && current != nullptr && current->numslots == 0 &&
      (settings_.allow_replica_migration || sender_slots == moved_ours)) {
    LOG_NOTICE("Configuration change detected. Reconfiguring myself as a replica of %.40s", sender->name.c_str());
    // Our keys go with the full sync from the new primary.
    SetMyPrimary(sender, true);
    NeedSave();
    todo_update_state_ = true;
  } else if (!dirty.empty()) {
    // Slots lost that may hold keys: those keys go (worker 0's cron).
    server_tasks_.empty_slots.insert(server_tasks_.empty_slots.end(), dirty.begin(), dirty.end());
    server_tasks_pending_.store(true, std::memory_order_release);
  }
  PublishRoutes();
}

void ClusterBus::HandleConfigEpochCollision(Node* sender) {
  if (sender->config_epoch != myself_->config_epoch || !sender->is_primary() || !myself_->is_primary()) return;
  // The node with the smaller id moves on.
  if (sender->name <= myself_->name) return;
  current_epoch_++;
  myself_->config_epoch = current_epoch_;
  NeedSave(true);
  LOG_VERBOSE("WARNING: configEpoch collision with node %.40s. configEpoch set to %llu", sender->name.c_str(),
              static_cast<unsigned long long>(current_epoch_));
}

bool ClusterBus::AddFailureReport(Node* failing, Node* by) {
  const int64_t now = UnixTimeMs();
  for (FailReport& r : failing->fail_reports) {
    if (r.by == by) {
      r.time_ms = now;
      return false;
    }
  }
  failing->fail_reports.push_back({by, now});
  return true;
}

bool ClusterBus::DelFailureReport(Node* failing, Node* by) {
  CountFailureReportsLocked(failing);  // (drops the stale ones first)
  auto& v = failing->fail_reports;
  auto it = std::find_if(v.begin(), v.end(), [by](const FailReport& r) { return r.by == by; });
  if (it == v.end()) return false;
  v.erase(it);
  return true;
}

int ClusterBus::CountFailureReportsLocked(Node* n) {
  const int64_t max_age = settings_.node_timeout_ms * 2;
  const int64_t now = UnixTimeMs();
  auto& v = n->fail_reports;
  v.erase(std::remove_if(v.begin(), v.end(), [&](const FailReport& r) { return now - r.time_ms > max_age; }), v.end());
  return static_cast<int>(v.size());
}

void ClusterBus::MarkFailingIfNeeded(Node* n) {
  const int needed = size_ / 2 + 1;
  if (!n->timed_out() || n->failed()) return;
  int failures = CountFailureReportsLocked(n);
  if (myself_->is_primary()) failures++;
  if (failures < needed) return;
  LOG_NOTICE("Marking node %.40s as failing (quorum reached).", n->name.c_str());
  n->flags &= static_cast<uint16_t>(~kNodePfail);
  n->flags |= kNodeFail;
  n->fail_time = UnixTimeMs();
  SendFail(n->name);
  NeedSave();
  todo_update_state_ = true;
}

void ClusterBus::ClearFailureIfNeeded(Node* n) {
  const int64_t now = UnixTimeMs();
  if (n->is_replica() || n->numslots == 0) {
    LOG_NOTICE("Clear FAIL state for node %.40s:%s is reachable again.", n->name.c_str(),
               n->is_replica() ? "replica" : "master without slots");
    n->flags &= static_cast<uint16_t>(~kNodeFail);
    NeedSave();
    todo_update_state_ = true;
  }
  if (n->is_primary() && n->numslots > 0 && now - n->fail_time > settings_.node_timeout_ms * 2) {
    LOG_NOTICE("Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots after some time.",
               n->name.c_str());
    n->flags &= static_cast<uint16_t>(~kNodeFail);
    NeedSave();
    todo_update_state_ = true;
  }
}

}  // namespace peregrine::cluster
