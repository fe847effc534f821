// Redis Cluster (docs/cluster.md): this node's view of the cluster (the
// nodes, who owns which slot, the epochs), the bus that keeps it in step
// with the other nodes (Redis 7's binary protocol on the cluster port:
// bus_message.h), nodes.conf, and what the CLUSTER command asks of it.
//
// Threads: the bus runs on a thread of its own, with its own event loop, so
// that it never stalls a worker and a busy worker never delays a PONG. All
// of the state below is guarded by one mutex: the bus thread takes it for
// each event and each cron tick; a worker takes it for a CLUSTER command.
// Workers route keyed commands by the published SlotRoutes
// (server/cluster_view.h), not by this state. The bus never waits for a
// worker: what it needs of the keyspace (emptying slots it lost, following
// a new primary) it leaves for worker 0's cron to take (TakeServerTasks).
//
// Files: cluster_bus.cc (the thread, links, the cron), cluster_gossip.cc
// (what a message does), cluster_slots.cc (slots, the state, the tables
// CLUSTER shows), cluster_config.cc (nodes.conf), cluster_admin.cc (the
// CLUSTER subcommands that change things).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cluster/bus_message.h"
#include "cluster/cluster_node.h"
#include "cluster/slot_migration.h"
#include "net/event_loop.h"
#include "server/cluster_view.h"
#include "server/config.h"

namespace peregrine::cluster {

// A node id as Redis accepts one: 40 characters of [a-z0-9].
bool ValidNodeName(std::string_view name);
// A hostname or human nodename CLUSTER NODES and nodes.conf can hold:
// [A-Za-z0-9._-] only.
bool PlainName(std::string_view name);
// An IPv4 or IPv6 address.
bool ValidIp(const std::string& ip);

class SlotMigrations;

class ClusterBus final : public ClusterService {
 public:
  // `settings` and the client ports: the configuration at start.
  ClusterBus(const Config::ClusterSettings& settings, int port, int tls_port, std::vector<std::string> bind);
  ~ClusterBus() override;

  // Loads nodes.conf (or makes a new node and writes it). At start, before
  // Start(); false with *err (Redis refuses to start then too).
  bool Load(std::string* err);
  bool Start(std::string* err) override;
  void Stop() override;
  std::shared_ptr<const SlotRoutes> Routes() const override;
  void PublishToCluster(std::string_view channel, std::string_view message, bool shard) override;
  void VerifyWithData(const std::vector<bool>& slots_with_keys) override;  // cluster_config.cc
  void ApplyConfig(const Config::ClusterSettings& settings) override;
  bool has_work() const override { return server_tasks_pending_.load(std::memory_order_acquire); }
  bool urgent_work() const override { return server_tasks_urgent_.load(std::memory_order_acquire); }
  // Deletes the keys of the slots lost, follows a new primary.
  void DoWork(ServerState& server) override;

  // --- What worker 0's cron takes and does holding every shard ---
  struct ServerTasks {
    std::vector<uint16_t> empty_slots;  // slots lost with keys in them: delete those keys
    bool follow = false;                // become a replica of (host, port)
    std::string follow_host;
    int follow_port = 0;
    bool become_primary = false;
    int64_t pause_until_ms = 0;  // a manual failover: pause writers until then
    bool unpause = false;        // its end
    // Slots whose owner changed: their shard channels' subscribers here
    // leave them (Redis's removeChannelsInSlot in clusterDelSlot).
    std::vector<bool> channel_slots;  // kNumSlots, or empty for none
    // ... made with a slot table up to this version (later ones were
    // routed by a table that knew of the change).
    uint64_t channel_table = 0;
  };
  ServerTasks TakeServerTasks();
  void NoteReplication(uint64_t offset, int64_t data_age_ms, int64_t ping_period_ms) override {
    repl_offset_.store(offset, std::memory_order_relaxed);
    repl_data_age_ms_.store(data_age_ms, std::memory_order_relaxed);
    repl_ping_period_ms_.store(ping_period_ms, std::memory_order_relaxed);
  }
  // A manual failover's primary paused its writers (worker 0, every shard
  // held), its stream ending at `offset`.
  void PausedForFailover(uint64_t offset);

  // --- For CLUSTER (each takes the lock) ---
  std::string MyId() const;
  std::string MyShardId() const;
  std::string InfoText() const;
  // CLUSTER NODES (and nodes.conf without `for_file`).
  // (`tls`: for a client over TLS, whose ports are the TLS ones, as
  // Redis 7.2's shouldReturnTlsInfo; here and in the views below.)
  std::string NodesText(bool tls = false) const;
  // A node's CLUSTER NODES line of each replica of `id`; false if `id` is
  // unknown (*error) or not a primary.
  bool ReplicasText(const std::string& id, std::vector<std::string>* lines, std::string* error,
                    bool tls = false) const;
  struct Endpoint {
    std::string preferred;  // ip, hostname, or "?" as cluster-preferred-endpoint-type says
    int port = 0;
    std::string id;
    std::string ip, hostname;  // the metadata CLUSTER SLOTS adds (the ones not preferred)
  };
  struct SlotRange {
    int start, end;
    std::vector<Endpoint> nodes;  // the owner first, then its replicas that are up
  };
  std::vector<SlotRange> SlotsView(bool tls = false) const;
  struct ShardNode {
    std::string id, endpoint, ip, hostname, role, health;
    int port = 0, tls_port = 0;
    uint64_t offset = 0;
  };
  struct ShardView {
    std::vector<std::pair<int, int>> slots;
    std::vector<ShardNode> nodes;
  };
  std::vector<ShardView> ShardsView() const;
  struct LinkView {
    std::string direction, node;
    int64_t create_time = 0;
    std::string events;
    uint64_t send_buffer_allocated = 0, send_buffer_used = 0;
  };
  std::vector<LinkView> LinksView() const;
  int CountFailureReports(const std::string& id, std::string* error) const;
  bool is_replica() const;

  // The changes: "" when done, else the error without "-" (as Redis
  // words it, "ERR ..." included).
  std::string AddSlots(const std::vector<int>& slots);
  std::string DelSlots(const std::vector<int>& slots);
  void FlushSlots();
  // SETSLOT <slot> IMPORTING|MIGRATING <id>, NODE <id>, STABLE;
  // `keys_in_slot`: how many keys this node has in it (NODE's check).
  std::string SetSlot(int slot, const std::string& how, const std::string& id, uint64_t keys_in_slot);
  std::string Meet(const std::string& ip, int port, int cport);
  std::string Forget(const std::string& id);
  // REPLICATE <id>: on success, *host/*port is the primary to follow.
  std::string Replicate(const std::string& id, bool has_keys, std::string* host, int* port);
  std::string Reset(bool hard, bool has_keys);
  std::string SaveConfig();
  // "BUMPED n" or "STILL n".
  std::string BumpEpoch();
  std::string SetConfigEpoch(int64_t epoch);
  // CLUSTER FAILOVER [FORCE|TAKEOVER] (cluster_failover.cc).
  std::string Failover(bool force, bool takeover);
  // An endpoint as -MOVED names it, for slot owner `n`.
  std::string NodeEndpoint(const Node& n) const;

  // --- Atomic slot migration (slot_migration.h; cluster_handover.cc) ---
  // At start (main), with the server the jobs work on.
  void AttachServer(ServerState& server);
  SlotMigrations* migrations() { return migrations_.get(); }
  bool migrating() const override;
  bool StepMigrations(size_t shard, bool drained) override;
  bool SlotFrozen(int slot) const override;
  void ImportClientGone(const std::string& name, uint64_t client_id) override;
  // MIGRATESLOTS's checks: this node may start one; `ranges` are all
  // this node's; `id` names another node. "" or the error.
  std::string CanMigrate() const;
  std::string MigrationRangesCheck(const std::vector<std::pair<int, int>>& ranges) const;
  std::string MigrationTargetCheck(const std::string& id) const;
  // Whether node `id` owns every slot of `slots` (kNumSlots flags) in this
  // node's view.
  bool OwnsAll(const std::string& id, const std::vector<bool>& slots) const;
  // A node's client address; false if unknown.
  bool NodeAddress(const std::string& id, std::string* host, int* port) const;
  // The target's ESTABLISH: the slots (kNumSlots flags) are `source`'s in
  // this node's view. "" or the error.
  std::string CheckImport(const std::vector<bool>& slots, const std::string& source) const;
  // The handover: the target takes the slots under a new epoch (told to
  // every node at once); the source gives them to `target` (SlotMigrations
  // then removes their keys here, a step at a time).
  void TakeImportedSlots(const std::vector<bool>& slots);
  void GiveExportedSlots(const std::vector<bool>& slots, const std::string& target);

  // --- The bus (cluster_bus.cc, cluster_gossip.cc) ---
  void OnLinkEvent(Link* link, uint32_t events);
  // Unit tests and the fuzzer, without Start(): `bytes` as if read from one
  // new inbound link (whose replies go nowhere), messages acted on as
  // they would be; then the link goes. Returns how many were whole and
  // well-formed.
  size_t FeedInboundForTest(std::string_view bytes);

 private:
  friend struct Link;
  class Acceptor;

  // cluster_bus.cc: the thread, links, cron.
  void Run();
  void Cron();
  void BeforeSleep();
  void Accept();
  void ConnectTo(Node* n);
  void FreeLink(Link* link);
  void SetLinkNode(Link* link, Node* n);
  void ReadLink(Link* link);
  // The whole messages in link->in, acted on; how many were well-formed.
  size_t ParseMessages(Link* link);
  void WriteLink(Link* link);
  void Send(Link* link, const BusMessage& m);
  // (`count`: the messages in `bytes`, of `type`, for CLUSTER INFO's counts.)
  void SendBytes(Link* link, std::string_view bytes, uint16_t type, uint64_t count = 1);
  void Broadcast(const BusMessage& m);
  void Wake();
  bool TickNode(Node* n, int64_t now, int64_t handshake_timeout);

  // cluster_gossip.cc: messages.
  void ProcessMessage(Link* link, BusMessage& m);
  void ProcessPingFamily(Link* link, BusMessage& m, Node* sender);
  void ProcessGossip(BusMessage& m, Node* sender);
  void ProcessExtensions(BusMessage& m, Node* sender);
  bool UpdateAddressIfNeeded(Node* n, Link* link, const BusMessage& m);
  void UpdateSlotsConfigWith(Node* sender, uint64_t epoch, const SlotBitmap& slots);
  void HandleConfigEpochCollision(Node* sender);
  void MarkFailingIfNeeded(Node* n);
  void ClearFailureIfNeeded(Node* n);
  bool AddFailureReport(Node* failing, Node* by);
  bool DelFailureReport(Node* failing, Node* by);
  int CountFailureReportsLocked(Node* n);
  BusMessage Header(MsgType type) const;
  void SendPing(Link* link, MsgType type);
  void SendFail(const std::string& name);
  void SendUpdate(Link* link, Node* about);
  void SetNodeAsPrimary(Node* n);
  // The link's far (or near) end's IP; "" when it cannot be read.
  static std::string LinkIp(const Link* link, bool local);
  // This node becomes a replica of `n` (Redis's clusterSetMaster); with
  // `tell_server`, worker 0's cron follows it (ServerTasks).
  void SetMyPrimary(Node* n, bool tell_server);

  // cluster_failover.cc: elections and manual failover.
  void ResetManualFailover();
  void OnManualFailoverRequest(Node* sender);
  void HandleManualFailover();
  int ReplicaRank() const;
  void HandleReplicaFailover();
  // cluster-migration-barrier: this replica, of a primary with the most
  // working replicas, moves to a primary left without any.
  void HandleReplicaMigration(int max_replicas, int64_t now);
  static int CountWorkingReplicas(const Node* primary);
  void LogCantFailover(const char* why);
  void FinishPromotion();  // (worker 0, once the server is primary)
  void FailoverReplaceYourPrimary();
  void SendFailoverAuthIfNeeded(Node* node, const BusMessage& req);
  void OnFailoverAuthAck(Node* sender, const BusMessage& m);

  // cluster_slots.cc: nodes, slots, the state.
  // Makes a node (a random name when `name` is empty) and adds it.
  Node* CreateNode(const std::string& name, uint16_t flags);
  void DelNode(Node* n);
  void RenameNode(Node* n, const std::string& name);
  Node* Lookup(std::string_view name) const;
  bool AddSlot(Node* n, int slot);
  bool DelSlot(int slot);
  int DelNodeSlots(Node* n);
  void AddReplica(Node* primary, Node* replica);
  void RemoveReplica(Node* primary, Node* replica);
  bool StartHandshake(const std::string& ip, int port, int cport);
  void UpdateState();
  void PublishRoutes();
  std::string NodeLine(const Node& n, bool for_file, bool tls = false) const;
  // Each run of slots with one owner, in slot order: fn(owner, start, end).
  void ForEachSlotRange(const std::function<void(const Node*, int, int)>& fn) const;
  std::string RandomName();
  uint64_t MaxEpoch() const;
  // Saved after the current event (`fsync`: made durable, for an epoch or
  // a vote).
  void NeedSave(bool fsync = false) {
    todo_save_ = true;
    todo_fsync_ = todo_fsync_ || fsync;
  }
  // Saved now, under the lock (a vote: before it is sent).
  void SaveNow(bool fsync = false);
  // A change a CLUSTER command made: saved before it replies, as Redis's,
  // but outside the lock (the command holds a Change).
  void SaveBeforeReply(bool fsync = false) {
    save_on_release_ = true;
    fsync_on_release_ = fsync_on_release_ || fsync;
  }
  // A CLUSTER command's hold of the bus: mu_ while it lasts; then, outside
  // it, nodes.conf if the command changed it (SaveBeforeReply).
  class Change {
   public:
    explicit Change(ClusterBus& bus) : bus_(bus), lock_(bus.mu_) {}
    ~Change();
    Change(const Change&) = delete;
    Change& operator=(const Change&) = delete;

   private:
    ClusterBus& bus_;
    std::unique_lock<std::mutex> lock_;
  };

  // cluster_config.cc: nodes.conf. Its text is taken under mu_ (numbered);
  // WriteConfig writes it without mu_ (file_mu_ orders the writers: one
  // older than the last written is not written, an unchanged one neither).
  struct ConfigWrite {
    std::string text, path;
    uint64_t gen = 0;
    bool fsync = false;
  };
  ConfigWrite TakeConfig(bool fsync);
  bool WriteConfig(ConfigWrite w, std::string* err);
  bool LoadConfigFile(const std::string& text, std::string* err);
  bool SaveConfigFile(bool fsync, std::string* err);  // under mu_: both at once

  Config::ClusterSettings settings_;
  int port_ = 0, tls_port_ = 0, bus_port_ = 0;
  std::vector<std::string> bind_;

  std::unique_ptr<SlotMigrations> migrations_;  // (AttachServer)
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Node>, std::less<>> nodes_;
  Node* myself_ = nullptr;
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  bool state_ok_ = false;
  int size_ = 0;  // primaries serving slots
  int64_t first_cron_ms_ = 0;
  int64_t among_minority_time_ = 0;
  std::vector<Node*> slots_ = std::vector<Node*>(kNumSlots, nullptr);
  std::vector<Node*> migrating_to_ = std::vector<Node*>(kNumSlots, nullptr);
  std::vector<Node*> importing_from_ = std::vector<Node*>(kNumSlots, nullptr);
  // Nodes forgotten (CLUSTER FORGET): not added back by gossip until then.
  std::map<std::string, int64_t, std::less<>> blacklist_;
  std::vector<std::unique_ptr<Link>> links_;  // every link, inbound and outbound
  std::vector<Link*> freed_links_;            // closed during the current event batch
  uint64_t stats_sent_[kMsgTypeCount] = {}, stats_received_[kMsgTypeCount] = {};
  uint64_t stats_links_buffer_limit_exceeded_ = 0;
  int64_t stats_pfail_nodes_ = 0;
  bool todo_save_ = false, todo_fsync_ = false, todo_update_state_ = false, todo_manual_failover_ = false;
  // Written under mu_ and routes_mu_ (PublishRoutes), read under either.
  std::shared_ptr<const SlotRoutes> routes_;
  mutable std::mutex routes_mu_;
  std::mt19937_64 rng_{std::random_device{}()};
  uint64_t cron_iteration_ = 0;

  // An election (Redis's failover_auth_*), and a manual failover (mf_*:
  // its end, the replica it is for on a primary, the offset the primary
  // paused at as a replica heard it and as the primary knows it).
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  const char* cant_failover_reason_ = nullptr;
  int64_t cant_failover_logged_ms_ = 0;
  int64_t mf_end_ = 0;
  Node* mf_replica_ = nullptr;
  int64_t mf_primary_offset_ = -1, mf_paused_offset_ = -1;
  bool mf_can_start_ = false;

  ServerTasks server_tasks_;
  std::atomic<bool> server_tasks_pending_{false}, server_tasks_urgent_{false};  // (urgent: a promotion)
  bool promoting_ = false;  // elected: the server turns primary, then FinishPromotion
  ServerState* server_ = nullptr;  // (AttachServer)
  std::atomic<uint64_t> repl_offset_{0};
  std::atomic<int64_t> repl_data_age_ms_{0}, repl_ping_period_ms_{10'000};

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<Acceptor> acceptor_;
  std::unique_ptr<IoHandler> wake_handler_;
  std::vector<int> listen_fds_;
  int wake_fd_ = -1;
  // PUBLISH and SPUBLISH from the workers, for the bus's thread to send
  // (BeforeSleep): a worker neither takes mu_ nor writes to the links.
  struct Published {
    std::string channel, message;
    bool shard = false;
  };
  static constexpr size_t kMaxPublishQueued = 100'000;  // past it the oldest go
  std::mutex publish_mu_;
  std::vector<Published> publish_queue_;  // under publish_mu_
  void SendPublished();                    // under mu_ (cluster_gossip.cc)
  bool save_on_release_ = false, fsync_on_release_ = false;  // under mu_ (Change)
  uint64_t config_gen_ = 0;                                   // under mu_
  std::mutex file_mu_;                                        // WriteConfig's
  uint64_t written_gen_ = 0, fsynced_gen_ = 0;                // under file_mu_
  std::string written_text_;                                  // under file_mu_
  int lock_fd_ = -1;  // nodes.conf, locked (cluster_config.cc; under file_mu_ once running)
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace peregrine::cluster
