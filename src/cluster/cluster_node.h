// A node of the cluster as this node knows it (Redis's clusterNode), and a
// link of the bus to or from one (clusterLink). Owned by ClusterBus and
// touched only under its lock (cluster_bus.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/bus_message.h"
#include "net/event_loop.h"

namespace peregrine::cluster {

class ClusterBus;
struct Link;

struct FailReport {
  struct Node* by;
  int64_t time_ms;
};

struct Node {
  std::string name;      // 40 hex characters
  std::string shard_id;  // 40 hex characters
  uint16_t flags = 0;    // kNode*
  uint64_t config_epoch = 0;
  SlotBitmap slots{};  // the slots it claims (as last heard)
  int numslots = 0;
  Node* primary = nullptr;  // a replica's primary, if known
  std::vector<Node*> replicas;
  int64_t ctime = 0;          // when this node object was made (ms)
  int64_t ping_sent = 0;      // the last PING not yet answered (ms; 0: none)
  int64_t pong_received = 0;  // the last PONG (ms)
  int64_t data_received = 0;  // anything heard from it (ms)
  int64_t fail_time = 0;      // when it was marked FAIL (ms)
  int64_t voted_time = 0;     // the last vote given for a replica of it (ms)
  int64_t repl_offset_time = 0;
  int64_t orphaned_time = 0;
  uint64_t repl_offset = 0;
  std::string ip;  // empty: unknown
  std::string hostname, human_nodename;
  int port = 0;      // the client port (plain TCP)
  int tls_port = 0;  // the TLS client port, 0 if none
  int cport = 0;     // the bus port
  Link* link = nullptr;          // ours to it
  Link* inbound_link = nullptr;  // its to us
  std::vector<FailReport> fail_reports;
  // Whether its PINGs carry Redis 7.2's extensions (a shard id; -1: not
  // heard yet). A Redis 7.0 node logs a warning for each extension it does
  // not know, at every PING: once it shows it is one, it gets only the
  // hostname (docs/cluster.md).
  int8_t speaks_72 = -1;

  bool myself() const { return flags & kNodeMyself; }
  bool is_primary() const { return flags & kNodeMaster; }
  bool is_replica() const { return flags & kNodeSlave; }
  bool in_handshake() const { return flags & kNodeHandshake; }
  bool has_addr() const { return !(flags & kNodeNoAddr); }
  bool timed_out() const { return flags & kNodePfail; }
  bool failed() const { return flags & kNodeFail; }
};

// One TCP connection of the bus. Outbound links belong to their node
// (node->link) and are made by the cron; inbound ones are accepted, and
// learn their node from the first message that names a known sender.
struct Link final : public IoHandler {
  ClusterBus* bus = nullptr;
  int fd = -1;  // (-1 for FeedInboundForTest's link)
  bool freed = false;  // FreeLink'd: gone after the current batch of events
  bool inbound = false;
  bool connecting = false;  // an outbound connect() not yet completed
  Node* node = nullptr;
  int64_t ctime = 0;
  std::string in;   // bytes read, not yet a whole message
  std::string out;  // bytes to send
  size_t out_sent = 0;
  uint64_t out_peak = 0;  // for CLUSTER LINKS' send-buffer-allocated
  bool writable_armed = false;

  void OnEvent(uint32_t events) override;
};

}  // namespace peregrine::cluster
