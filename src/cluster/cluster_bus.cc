// The bus's thread: its listener, its links to and from the other nodes, and
// its cron (cluster_bus.h).
#include "cluster/cluster_bus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "net/socket.h"
#include "server/client_pause.h"
#include "server/command_context.h"
#include "server/server_state.h"
#include "server/shard.h"
#include "server/log.h"

namespace peregrine::cluster {

namespace {

// How much a link reads per call, and the most a link may hold unsent
// before it is dropped when cluster-link-sendbuf-limit is 0 (a peer that
// never reads must not grow this node without bound).
constexpr size_t kReadChunk = 16 * 1024;
constexpr size_t kDefaultSendLimit = 256ull << 20;

}  // namespace

// The listener's and the wake-up eventfd's handler.
class ClusterBus::Acceptor final : public IoHandler {
 public:
  explicit Acceptor(ClusterBus* bus) : bus_(bus) {}
  void OnEvent(uint32_t) override { bus_->Accept(); }

 private:
  ClusterBus* bus_;
};

namespace {

class WakeHandler final : public IoHandler {
 public:
  WakeHandler(int fd, EventLoop* loop, std::atomic<bool>* stopping) : fd_(fd), loop_(loop), stopping_(stopping) {}
  void OnEvent(uint32_t) override {
    uint64_t v;
    while (read(fd_, &v, sizeof(v)) > 0) {
    }
    if (stopping_->load(std::memory_order_acquire)) loop_->Stop();
  }

 private:
  int fd_;
  EventLoop* loop_;
  std::atomic<bool>* stopping_;
};

}  // namespace

void Link::OnEvent(uint32_t events) { bus->OnLinkEvent(this, events); }

ClusterBus::ClusterBus(const Config::ClusterSettings& settings, int port, int tls_port, std::vector<std::string> bind)
    : settings_(settings), port_(port), tls_port_(tls_port), bind_(std::move(bind)) {
  bus_port_ = settings_.port != 0 ? settings_.port : port_ + 10000;
  routes_ = std::make_shared<SlotRoutes>();
}

ClusterBus::~ClusterBus() {
  Stop();
  migrations_.reset();  // (its jobs' threads use the view; the bus's thread, ExportingSlot)
  for (int fd : listen_fds_) close(fd);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);
  for (auto& l : links_)
    if (l->fd >= 0) close(l->fd);
}

void ClusterBus::ApplyConfig(const Config::ClusterSettings& settings) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool hostname_changed = settings.announce_hostname != settings_.announce_hostname ||
                                settings.announce_human_nodename != settings_.announce_human_nodename;
  settings_ = settings;
  if (myself_ != nullptr) {
    myself_->hostname = settings_.announce_hostname;
    myself_->human_nodename = settings_.announce_human_nodename;
    if (!settings_.announce_ip.empty()) myself_->ip = settings_.announce_ip;
    // (Back to the ports it listens on when an announced one is set to 0,
    // as Redis's deriveAnnouncedPorts.)
    const int ports[] = {myself_->port, myself_->tls_port, myself_->cport};
    myself_->port = settings_.announce_port != 0 ? settings_.announce_port : port_;
    myself_->tls_port = settings_.announce_tls_port != 0 ? settings_.announce_tls_port : tls_port_;
    myself_->cport = settings_.announce_bus_port != 0 ? settings_.announce_bus_port : bus_port_;
    if (ports[0] != myself_->port || ports[1] != myself_->tls_port || ports[2] != myself_->cport) NeedSave();
  }
  if (hostname_changed) NeedSave();
  todo_update_state_ = true;
  Wake();
}

bool ClusterBus::Start(std::string* err) {
  if (port_ > 55535 && settings_.port == 0) {
    *err =
        "Redis port number too high. Cluster communication port is 10,000 port numbers higher than your Redis "
        "port. Your Redis port number must be 55535 or less.";
    return false;
  }
  loop_ = std::make_unique<EventLoop>();
  acceptor_ = std::make_unique<Acceptor>(this);
  std::string e;
  listen_fds_ = ListenAll(bind_, bus_port_, 511, &e);
  if (!e.empty()) {
    *err = "Failed listening on port " + std::to_string(bus_port_) + " (cluster), aborting: " + e;
    return false;
  }
  for (int fd : listen_fds_) loop_->Add(fd, EPOLLIN, acceptor_.get());
  if (listen_fds_.empty()) {
    *err = "Failed listening on port " + std::to_string(bus_port_) + " (cluster), aborting.";
    return false;
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  wake_handler_ = std::make_unique<WakeHandler>(wake_fd_, loop_.get(), &stopping_);
  loop_->Add(wake_fd_, EPOLLIN, wake_handler_.get());
  loop_->SetTick(100, [this] { Cron(); });
  loop_->SetBeforeSleep([this] { BeforeSleep(); });
  {
    std::lock_guard<std::mutex> lock(mu_);
    UpdateState();
  }
  thread_ = std::thread([this] { loop_->Run(); });
  return true;
}

void ClusterBus::Stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_release);
  Wake();
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (todo_save_) {
    std::string err;
    if (!SaveConfigFile(true, &err)) LOG_WARNING("Could not save the cluster configuration: %s", err.c_str());
    todo_save_ = false;
  }
}

void ClusterBus::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;
}

std::shared_ptr<const SlotRoutes> ClusterBus::Routes() const {
  // (Its own lock: a worker taking a new table never waits behind the
  // bus's work, a nodes.conf fsync included.)
  std::lock_guard<std::mutex> lock(routes_mu_);
  return routes_;
}

ClusterBus::ServerTasks ClusterBus::TakeServerTasks() {
  std::lock_guard<std::mutex> lock(mu_);
  ServerTasks t = std::move(server_tasks_);
  server_tasks_ = ServerTasks{};
  server_tasks_pending_.store(false, std::memory_order_release);
  server_tasks_urgent_.store(false, std::memory_order_release);
  return t;
}

void ClusterBus::DoWork(ServerState& server) {
  ServerTasks t = TakeServerTasks();
  if (!t.empty_slots.empty()) {
    // Keys of slots this node lost to another (a failover, a SETSLOT
    // elsewhere) go, as Redis's delKeysInSlot, their DELs propagated.
    std::vector<bool> lost(kNumSlots, false);
    for (uint16_t s : t.empty_slots) lost[s] = true;
    size_t deleted = 0;
    for (size_t i = 0; i < server.num_shards(); i++) {
      Shard& shard = server.shard(i);
      // (Counted per slot: a shard with no key in them is not scanned.)
      bool any = !shard.db(0).counts_slots();
      for (uint16_t s : t.empty_slots) any = any || shard.db(0).KeysInSlot(s) > 0;
      if (!any) continue;
      std::vector<std::string> keys;
      shard.db(0).ForEach([&](const Db::Entry& e) {
        char scratch[CompactKey::kScratchSize];
        const std::string_view k = e.key(scratch);
        if (lost[SlotOf(k)]) keys.emplace_back(k);
      });
      for (const std::string& k : keys) {
        shard.watches().Touch(0, k, shard.db(0), UnixTimeMs());
        if (shard.db(0).Erase(k) && server.propagating()) shard.aof().Add(0, {"DEL", k});
      }
      deleted += keys.size();
      shard.AddDirty(keys.size());
    }
    if (deleted > 0) LOG_NOTICE("Deleted %zu keys of slots this node no longer serves", deleted);
  }
  if (!t.channel_slots.empty()) {
    const std::vector<bool>& gone = t.channel_slots;
    const uint64_t table = t.channel_table;
    // (A subscription made by a table that knew of the change stays: the
    // slot came back to this node, or was never its.)
    for (size_t w = 0; w < server.num_shards(); w++)
      server.host(w).DropShardChannels(
          [&](std::string_view ch, uint64_t made_at) { return gone[SlotOf(ch)] && made_at <= table; }, w == 0);
  }
  if (t.follow) server.BecomeReplica(t.follow_host, t.follow_port);
  if (t.become_primary) {
    server.BecomePrimary();
    LOG_NOTICE("Cluster failover: this node is a primary now");
    FinishPromotion();
  }
  if (t.unpause) {
    server.client_pause().Unpause(ClientPause::kForFailover);
    server.WakeWorkers();
  }
  if (t.pause_until_ms > 0) {
    // A manual failover: writers wait, what they wrote goes to the stream,
    // and the replica is told where it ends.
    server.client_pause().Pause(ClientPause::kForFailover, t.pause_until_ms, ClientPause::kWrites);
    server.EmitShardChunks();
    PausedForFailover(server.replication().offset());
  }
}

void ClusterBus::Accept() {
  for (int fd : listen_fds_) {
    for (;;) {
      const int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0) break;
      ConfigureTcpConnection(c, 0);
      std::lock_guard<std::mutex> lock(mu_);
      auto link = std::make_unique<Link>();
      link->bus = this;
      link->fd = c;
      link->inbound = true;
      link->ctime = UnixTimeMs();
      loop_->Add(c, EPOLLIN, link.get());
      LOG_VERBOSE("Accepting cluster node connection from %s", PeerAddress(c).c_str());
      links_.push_back(std::move(link));
    }
  }
}

void ClusterBus::ConnectTo(Node* n) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(n->cport);
  // A node that cannot be reached counts as pinged from now, or failure
  // detection would never start for it.
  if (n->ping_sent == 0) n->ping_sent = UnixTimeMs();
  if (getaddrinfo(n->ip.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    LOG_VERBOSE("Unable to connect to Cluster Node [%s]:%d -> bad address", n->ip.c_str(), n->cport);
    return;
  }
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || (::connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS)) {
    LOG_VERBOSE("Unable to connect to Cluster Node [%s]:%d -> %s", n->ip.c_str(), n->cport, strerror(errno));
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return;
  }
  freeaddrinfo(res);
  ConfigureTcpConnection(fd, 0);
  auto link = std::make_unique<Link>();
  link->bus = this;
  link->fd = fd;
  link->connecting = true;
  link->ctime = UnixTimeMs();
  link->node = n;
  link->writable_armed = true;
  n->link = link.get();
  loop_->Add(fd, EPOLLIN | EPOLLOUT, link.get());
  links_.push_back(std::move(link));
}

void ClusterBus::FreeLink(Link* link) {
  if (link == nullptr || link->freed) return;
  link->freed = true;
  if (link->fd >= 0) {
    loop_->Remove(link->fd);
    close(link->fd);
    link->fd = -1;
  }
  if (link->node != nullptr) {
    if (link->node->link == link) link->node->link = nullptr;
    if (link->node->inbound_link == link) link->node->inbound_link = nullptr;
    link->node = nullptr;
  }
  freed_links_.push_back(link);
}

void ClusterBus::SetLinkNode(Link* link, Node* n) {
  // An inbound link names its node once the node is known (Redis's
  // setClusterNodeToInboundClusterLink): a newer inbound link replaces an
  // older one.
  if (n->inbound_link == link) return;
  if (n->inbound_link != nullptr) FreeLink(n->inbound_link);
  link->node = n;
  n->inbound_link = link;
}

void ClusterBus::OnLinkEvent(Link* link, uint32_t events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (link->freed) return;
  if (link->connecting) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(link->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
      LOG_VERBOSE("Connection with Node %.40s at %s:%d failed: %s", link->node->name.c_str(), link->node->ip.c_str(),
                  link->node->cport, strerror(err != 0 ? err : ECONNREFUSED));
      FreeLink(link);
      return;
    }
    if (!(events & EPOLLOUT)) return;
    link->connecting = false;
    // A PING (or MEET) at once on a new link, keeping the time of a PING
    // still unanswered on the old one (else a node that drops links would
    // never time out); ConnectTo counted one as sent already.
    Node* n = link->node;
    const int64_t old_ping_sent = n->ping_sent;
    SendPing(link, (n->flags & kNodeMeet) ? MsgType::kMeet : MsgType::kPing);
    if (old_ping_sent != 0) n->ping_sent = old_ping_sent;
    n->flags &= static_cast<uint16_t>(~kNodeMeet);
    LOG_DEBUG("Connecting with Node %.40s at %s:%d", n->name.c_str(), n->ip.c_str(), n->cport);
  }
  if (events & EPOLLOUT) WriteLink(link);
  if (!link->freed && (events & (EPOLLIN | EPOLLERR | EPOLLHUP))) ReadLink(link);
}

size_t ClusterBus::FeedInboundForTest(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto owned = std::make_unique<Link>();
  Link* link = owned.get();
  link->bus = this;
  link->inbound = true;
  link->ctime = UnixTimeMs();
  link->in.assign(bytes);
  links_.push_back(std::move(owned));
  const size_t ok = ParseMessages(link);
  FreeLink(link);
  if (todo_update_state_) {
    // (What BeforeSleep does after a batch of events.)
    todo_update_state_ = false;
    UpdateState();
  }
  links_.erase(std::remove_if(links_.begin(), links_.end(), [](const std::unique_ptr<Link>& l) { return l->freed; }),
               links_.end());
  freed_links_.clear();
  return ok;
}

void ClusterBus::ReadLink(Link* link) {
  char buf[kReadChunk];
  // At most this much per event (the loop comes back for the rest), and
  // whole messages acted on as they come, so that a peer that keeps the
  // socket full grows nothing but its one message in the making.
  for (size_t budget = 64 * kReadChunk; budget > 0 && !link->freed; budget -= kReadChunk) {
    const ssize_t n = read(link->fd, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      LOG_DEBUG("I/O error reading from node link: %s", n == 0 ? "connection closed" : strerror(errno));
      FreeLink(link);
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    link->in.append(buf, static_cast<size_t>(n));
    ParseMessages(link);
    if (static_cast<size_t>(n) < sizeof(buf)) break;
  }
}

size_t ClusterBus::ParseMessages(Link* link) {
  size_t pos = 0, ok = 0;
  while (!link->freed && link->in.size() - pos >= 8) {
    std::string_view rest(link->in.data() + pos, link->in.size() - pos);
    // The frame first, as Redis reads it: a bad signature or length
    // drops the link; a whole message whose body is wrong is dropped
    // alone, and the link goes on.
    uint32_t totlen;
    std::memcpy(&totlen, rest.data() + 4, 4);
    totlen = ntohl(totlen);
    if (std::memcmp(rest.data(), "RCmb", 4) != 0 || totlen < kHeaderLen || totlen > kMaxMessageLen) {
      LOG_WARNING("Bad message length or signature received on the Cluster bus.");
      FreeLink(link);
      link->in.clear();
      return ok;
    }
    if (rest.size() < totlen) break;
    BusMessage m;
    size_t consumed = 0;
    std::string error;
    const DecodeStatus st = Decode(rest.substr(0, totlen), &m, &consumed, &error);
    pos += totlen;
    if (st != DecodeStatus::kOk) {
      LOG_WARNING("Dropped a cluster bus message: %s", error.c_str());
      continue;
    }
    ok++;
    ProcessMessage(link, m);
  }
  if (pos > 0) link->in.erase(0, pos);
  return ok;
}

void ClusterBus::WriteLink(Link* link) {
  while (link->out_sent < link->out.size()) {
    const ssize_t n = write(link->fd, link->out.data() + link->out_sent, link->out.size() - link->out_sent);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      LOG_DEBUG("I/O error writing to node link: %s", strerror(errno));
      FreeLink(link);
      return;
    }
    link->out_sent += static_cast<size_t>(n);
  }
  if (link->out_sent == link->out.size()) {
    link->out.clear();
    link->out_sent = 0;
  } else if (link->out_sent > (1u << 20)) {
    link->out.erase(0, link->out_sent);
    link->out_sent = 0;
  }
  const bool want = !link->out.empty();
  if (want != link->writable_armed && !link->connecting) {
    link->writable_armed = want;
    loop_->Modify(link->fd, want ? (EPOLLIN | EPOLLOUT) : EPOLLIN, link);
  }
}

void ClusterBus::Send(Link* link, const BusMessage& m) {
  if (link == nullptr || link->freed) return;
  std::string bytes;
  Encode(m, &bytes);
  SendBytes(link, bytes, static_cast<uint16_t>(m.type));
}

void ClusterBus::SendBytes(Link* link, std::string_view bytes, uint16_t type, uint64_t count) {
  if (link == nullptr || link->freed) return;
  const size_t limit = settings_.link_sendbuf_limit != 0 ? settings_.link_sendbuf_limit : kDefaultSendLimit;
  if (link->out.size() - link->out_sent > limit) {
    stats_links_buffer_limit_exceeded_++;
    LOG_WARNING("Freeing cluster link(%s node %.40s, used memory: %zu) due to exceeding send buffer memory limit.",
                link->inbound ? "from" : "to", link->node != nullptr ? link->node->name.c_str() : "",
                link->out.size() - link->out_sent);
    FreeLink(link);
    return;
  }
  link->out.append(bytes);
  link->out_peak = std::max<uint64_t>(link->out_peak, link->out.size());
  if (type < kMsgTypeCount) stats_sent_[type] += count;
  if (!link->connecting && link->fd >= 0) WriteLink(link);
  if (link->fd < 0) link->out.clear();  // (FeedInboundForTest's: nowhere to go)
}

void ClusterBus::Broadcast(const BusMessage& m) {
  std::string bytes;  // (encoded once for every node)
  Encode(m, &bytes);
  for (auto& [name, n] : nodes_) {
    if (n->flags & (kNodeMyself | kNodeHandshake)) continue;
    SendBytes(n->link, bytes, static_cast<uint16_t>(m.type));
  }
}

void ClusterBus::BeforeSleep() {
  std::unique_lock<std::mutex> lock(mu_);
  SendPublished();
  if (todo_manual_failover_) {
    todo_manual_failover_ = false;
    HandleManualFailover();
  }
  if (todo_update_state_) {
    todo_update_state_ = false;
    UpdateState();
  }
  // nodes.conf: its text now, written once the lock is let go.
  std::optional<ConfigWrite> save;
  if (todo_save_) {
    save = TakeConfig(todo_fsync_);
    todo_save_ = todo_fsync_ = false;
  }
  if (!freed_links_.empty()) {
    links_.erase(std::remove_if(links_.begin(), links_.end(),
                                [](const std::unique_ptr<Link>& l) { return l->freed; }),
                 links_.end());
    freed_links_.clear();
  }
  if (save) {
    lock.unlock();
    std::string err;
    if (!WriteConfig(std::move(*save), &err)) LOG_WARNING("Could not save the cluster configuration: %s", err.c_str());
  }
}

// Redis's clusterNodeCronHandleReconnect: true if the node went.
bool ClusterBus::TickNode(Node* n, int64_t now, int64_t handshake_timeout) {
  if (n->flags & (kNodeMyself | kNodeNoAddr)) return false;
  if (n->flags & kNodePfail) stats_pfail_nodes_++;
  if (n->in_handshake() && now - n->ctime > handshake_timeout) {
    DelNode(n);
    return true;
  }
  if (n->link == nullptr) ConnectTo(n);
  return false;
}

void ClusterBus::Cron() {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = UnixTimeMs();
  if (first_cron_ms_ == 0) first_cron_ms_ = now;
  cron_iteration_++;
  if (mf_end_ != 0 && mf_end_ < now) {
    LOG_WARNING("Manual failover timed out.");
    ResetManualFailover();
  }
  const int64_t timeout = settings_.node_timeout_ms;
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  stats_pfail_nodes_ = 0;
  std::vector<Node*> all;
  for (auto& [name, n] : nodes_) all.push_back(n.get());
  for (Node* n : all) TickNode(n, now, handshake_timeout);
  all.clear();
  for (auto& [name, n] : nodes_) all.push_back(n.get());

  // About once a second, a PING to the node heard from least recently of
  // five picked at random.
  if (cron_iteration_ % 10 == 0 && !all.empty()) {
    Node* oldest = nullptr;
    for (int i = 0; i < 5; i++) {
      Node* n = all[rng_() % all.size()];
      if (n->link == nullptr || n->link->connecting || n->ping_sent != 0) continue;
      if (n->flags & (kNodeMyself | kNodeHandshake)) continue;
      if (oldest == nullptr || n->pong_received < oldest->pong_received) oldest = n;
    }
    if (oldest != nullptr) SendPing(oldest->link, MsgType::kPing);
  }

  bool update = false;
  // For a replica: primaries left without working replicas, and the most
  // working replicas of a primary, ours and any.
  int orphaned = 0, max_replicas = 0, our_replicas = 0;
  for (Node* n : all) {
    if (n->flags & (kNodeMyself | kNodeNoAddr | kNodeHandshake)) continue;
    if (myself_->is_replica() && n->is_primary() && !n->failed()) {
      const int working = CountWorkingReplicas(n);
      if (working == 0 && n->numslots > 0 && (n->flags & kNodeMigrateTo)) orphaned++;
      max_replicas = std::max(max_replicas, working);
      if (myself_->primary == n) our_replicas = working;
    }
    const int64_t ping_delay = now - n->ping_sent;
    const int64_t data_delay = now - n->data_received;
    // Silent for half the timeout while a PING waits: the link may be
    // broken though the node lives; make a new one.
    if (n->link != nullptr && now - n->link->ctime > timeout && n->ping_sent != 0 && ping_delay > timeout / 2 &&
        data_delay > timeout / 2) {
      FreeLink(n->link);
    }
    if (n->link != nullptr && !n->link->connecting && n->ping_sent == 0 && now - n->pong_received > timeout / 2) {
      SendPing(n->link, MsgType::kPing);
      continue;
    }
    // A primary in a manual failover pings its replica all along.
    if (mf_end_ != 0 && myself_->is_primary() && mf_replica_ == n && n->link != nullptr) {
      SendPing(n->link, MsgType::kPing);
      continue;
    }
    if (n->ping_sent == 0) continue;
    const int64_t delay = std::min(ping_delay, data_delay);
    if (delay > timeout && !(n->flags & (kNodePfail | kNodeFail))) {
      n->flags |= kNodePfail;
      update = true;
      if (myself_->is_primary() && size_ == 1)
        MarkFailingIfNeeded(n);
      else
        LOG_DEBUG("*** NODE %.40s possibly failing", n->name.c_str());
    }
  }
  // Forgotten nodes are remembered for a minute.
  for (auto it = blacklist_.begin(); it != blacklist_.end();) {
    if (it->second < now)
      it = blacklist_.erase(it);
    else
      ++it;
  }
  if (myself_->is_replica()) {
    HandleManualFailover();
    HandleReplicaFailover();
    // (Only worth a look if some primary has two working replicas.)
    if (orphaned > 0 && max_replicas >= 2 && our_replicas == max_replicas && settings_.allow_replica_migration)
      HandleReplicaMigration(max_replicas, now);
  }
  if (update || !state_ok_) UpdateState();
}

}  // namespace peregrine::cluster
