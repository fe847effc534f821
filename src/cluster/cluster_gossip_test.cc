// What bus messages do to a ClusterBus without its thread, fed through
// FeedInboundForTest as if read from a new inbound link: MEET and PING
// from strangers and from known nodes, slot claims by epoch, gossip,
// FAIL, UPDATE, and messages the bus must drop without a trace.
#include <string>
#include <vector>

#include "cluster/cluster_bus_test_util.h"

namespace peregrine::cluster::test {
namespace {

// The same fixture; its own name for the test list.
class ClusterBusGossipTest : public ClusterBusTest {};

// --- Messages ---

TEST_F(ClusterBusGossipTest, MeetFromAnUnknownNodeMakesAHandshakeNode) {
  ClusterBus& bus = Open();
  BusMessage meet = From(kB, MsgType::kMeet);
  meet.gossip.push_back({kC, 0, 0, "127.0.0.3", 7002, 17002, kNodeMaster, 0});
  EXPECT_EQ(bus.FeedInboundForTest(Wire(meet)), 1u);
  EXPECT_EQ(Info("cluster_known_nodes"), "2");
  EXPECT_EQ(Info("cluster_stats_messages_meet_received"), "1");
  EXPECT_EQ(Info("cluster_stats_messages_pong_sent"), "1");
  auto nodes = Nodes();
  EXPECT_EQ(nodes.count(kB), 0u);  // named by its PONG, later
  EXPECT_EQ(nodes.count(kC), 0u);  // gossip from a node not known yet
  int handshakes = 0;
  for (auto& [id, row] : nodes) {
    if (row.flags != "handshake") continue;
    handshakes++;
    EXPECT_EQ(row.addr, "127.0.0.2:7001@17001");
  }
  EXPECT_EQ(handshakes, 1);
}

TEST_F(ClusterBusGossipTest, PingFromAnUnknownNodeAddsNothing) {
  ClusterBus& bus = Open();
  const std::string before = bus.NodesText();
  BusMessage ping = From(kB, MsgType::kPing);
  ping.config_epoch = 7;
  ping.current_epoch = 7;
  SetRange(&ping.myslots, 0, 100);
  ping.gossip.push_back({kC, 0, 0, "127.0.0.3", 7002, 17002, kNodeMaster, 0});
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(bus.NodesText(), before);
  EXPECT_EQ(Info("cluster_known_nodes"), "1");
  EXPECT_EQ(Info("cluster_current_epoch"), "0");
  EXPECT_EQ(Info("cluster_slots_assigned"), "0");
}

TEST_F(ClusterBusGossipTest, PingFromAKnownNodeUpdatesItsEpochAndSlots) {
  ClusterBus& bus = OpenFour();
  uint64_t version = bus.routes_version();
  BusMessage ping = From(kB, MsgType::kPing);
  ping.current_epoch = 9;
  ping.config_epoch = 5;
  SetRange(&ping.myslots, 100, 199);
  SetRange(&ping.myslots, 0, 9);  // ours (epoch 1): taken
  SetRange(&ping.myslots, 300, 309);  // no one's: taken
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  auto nodes = Nodes();
  EXPECT_EQ(nodes[kB].epoch, "5");
  EXPECT_EQ(nodes[kB].slots, (std::vector<std::string>{"0-9", "100-199", "300-309"}));
  EXPECT_EQ(nodes[kA].slots, (std::vector<std::string>{"10-99"}));
  EXPECT_EQ(Info("cluster_current_epoch"), "9");
  EXPECT_EQ(Info("cluster_slots_assigned"), "310");
  EXPECT_GT(bus.routes_version(), version);
  EXPECT_EQ(bus.Routes()->endpoints.at(OwnerRoute(3)), "127.0.0.2:7001");
  // The slots we lost may hold keys: worker 0 empties them.
  auto tasks = bus.TakeServerTasks();
  EXPECT_EQ(tasks.empty_slots.size(), 10u);
  EXPECT_FALSE(tasks.follow);

  // The same claim again changes nothing.
  version = bus.routes_version();
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(bus.routes_version(), version);

  // C with a lower epoch than B's claims B's slots: B keeps them.
  BusMessage low = From(kC, MsgType::kPing);
  low.myip = "127.0.0.3";
  low.port = 7002;
  low.cport = 17002;
  low.config_epoch = 4;
  SetRange(&low.myslots, 200, 299);
  SetRange(&low.myslots, 100, 109);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(low)), 1u);
  nodes = Nodes();
  EXPECT_EQ(nodes[kC].epoch, "4");
  EXPECT_EQ(nodes[kC].slots, (std::vector<std::string>{"200-299"}));
  EXPECT_EQ(nodes[kB].slots, (std::vector<std::string>{"0-9", "100-199", "300-309"}));
}

TEST_F(ClusterBusGossipTest, ANewerClaimDoesNotTakeASlotWeImport) {
  ClusterBus& bus = OpenFour();
  EXPECT_EQ(bus.SetSlot(150, "importing", kB, 0), "");
  EXPECT_EQ(bus.SetSlot(400, "importing", kB, 0), "");
  BusMessage ping = From(kC, MsgType::kPing);
  ping.myip = "127.0.0.3";
  ping.port = 7002;
  ping.cport = 17002;
  ping.config_epoch = 10;
  SetRange(&ping.myslots, 150, 151);
  SetRange(&ping.myslots, 200, 299);
  SetRange(&ping.myslots, 400, 401);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  auto nodes = Nodes();
  EXPECT_EQ(nodes[kC].slots, (std::vector<std::string>{"151", "200-299", "401"}));
  EXPECT_EQ(nodes[kB].slots, (std::vector<std::string>{"100-150", "152-199"}));
  EXPECT_EQ(OwnerRoute(400), SlotRoutes::kUnassigned);
}

TEST_F(ClusterBusGossipTest, GossipAddsNodesOnlyFromAKnownSender) {
  ClusterBus& bus = OpenFour();
  const std::string e(kNameLen, 'e'), f(kNameLen, 'f'), g(kNameLen, 'g');
  BusMessage ping = From(kB, MsgType::kPing);
  ping.config_epoch = 2;
  SetRange(&ping.myslots, 100, 199);
  ping.gossip.push_back({e, 0, 0, "10.0.0.5", 7005, 17005, kNodeMaster, 0});
  ping.gossip.push_back({f, 0, 0, "10.0.0.6", 7006, 17006, kNodeSlave | kNodeNoAddr, 0});
  ping.gossip.push_back({kC, 0, 0, "127.0.0.3", 7002, 17002, kNodeMaster | kNodePfail, 0});
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  auto nodes = Nodes();
  EXPECT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[e].addr, "10.0.0.5:7005@17005");
  EXPECT_EQ(nodes[e].flags, "master");
  EXPECT_EQ(nodes.count(f), 0u);  // no address
  std::string err;
  EXPECT_EQ(bus.CountFailureReports(kC, &err), 1);  // B, a master, says C may be down
  EXPECT_EQ(bus.CountFailureReports(g, &err), -1);
  EXPECT_EQ(err, "ERR Unknown node " + g);

  // One invalid id spoils the whole section.
  ping.gossip = {{g, 0, 0, "10.0.0.7", 7007, 17007, kNodeMaster, 0},
                 {"NOT-AN-ID-" + std::string(30, 'x'), 0, 0, "10.0.0.8", 7008, 17008, kNodeMaster, 0}};
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(Nodes().count(g), 0u);
  // And the same from no one we know adds nothing.
  ping.sender = std::string(kNameLen, '9');
  ping.gossip.resize(1);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(Nodes().count(g), 0u);
  EXPECT_EQ(Info("cluster_known_nodes"), "5");
}

TEST_F(ClusterBusGossipTest, FailFromAKnownNodeMarksTheNodeFailed) {
  ClusterBus& bus = OpenFour();
  BusMessage fail = From(std::string(kNameLen, '9'), MsgType::kFail);
  fail.fail_about = kC;
  EXPECT_EQ(bus.FeedInboundForTest(Wire(fail)), 1u);  // from no one we know
  EXPECT_EQ(Nodes()[kC].flags, "master");
  fail.sender = kB;
  fail.fail_about = kA;  // about us: ignored
  EXPECT_EQ(bus.FeedInboundForTest(Wire(fail)), 1u);
  EXPECT_EQ(Nodes()[kA].flags, "myself,master");
  fail.fail_about = kC;
  EXPECT_EQ(bus.FeedInboundForTest(Wire(fail)), 1u);
  EXPECT_EQ(Nodes()[kC].flags, "master,fail");
  EXPECT_EQ(Info("cluster_slots_fail"), "100");
  EXPECT_EQ(Info("cluster_stats_messages_fail_received"), "3");
}

TEST_F(ClusterBusGossipTest, UpdateWithANewerEpochMovesSlots) {
  ClusterBus& bus = OpenFour();
  BusMessage update = From(kB, MsgType::kUpdate);
  update.update_name = kC;
  update.update_config_epoch = 3;  // not newer than what we know of C
  SetRange(&update.update_slots, 0, 9);
  SetRange(&update.update_slots, 200, 299);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(update)), 1u);
  EXPECT_EQ(Nodes()[kC].slots, (std::vector<std::string>{"200-299"}));
  update.update_config_epoch = 8;
  EXPECT_EQ(bus.FeedInboundForTest(Wire(update)), 1u);
  auto nodes = Nodes();
  EXPECT_EQ(nodes[kC].slots, (std::vector<std::string>{"0-9", "200-299"}));
  EXPECT_EQ(nodes[kC].epoch, "8");
  EXPECT_EQ(nodes[kA].slots, (std::vector<std::string>{"10-99"}));
  // About a replica: it is a master now. From no one known: nothing.
  update.update_name = kD;
  update.update_config_epoch = 9;
  update.update_slots = {};
  SetRange(&update.update_slots, 150, 151);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(update)), 1u);
  nodes = Nodes();
  EXPECT_EQ(nodes[kD].flags, "master");
  EXPECT_EQ(nodes[kD].slots, (std::vector<std::string>{"150-151"}));
  update.sender = std::string(kNameLen, '9');
  update.update_config_epoch = 10;
  SetRange(&update.update_slots, 152, 152);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(update)), 1u);
  EXPECT_EQ(Nodes()[kD].slots, (std::vector<std::string>{"150-151"}));
}

TEST_F(ClusterBusGossipTest, BadMessagesAreDroppedAndChangeNothing) {
  ClusterBus& bus = OpenFour();
  BusMessage ping = From(kB, MsgType::kPing);
  ping.current_epoch = 20;
  ping.config_epoch = 20;
  SetRange(&ping.myslots, 0, 199);
  const std::string good = Wire(ping);
  const std::string nodes = bus.NodesText();
  const std::string info = bus.InfoText();
  const uint64_t version = bus.routes_version();
  auto unchanged = [&](const std::string& what) {
    EXPECT_EQ(bus.NodesText(), nodes) << what;
    EXPECT_EQ(bus.InfoText(), info) << what;
    EXPECT_EQ(bus.routes_version(), version) << what;
  };
  std::string bad = good;
  bad[0] = 'X';  // signature
  EXPECT_EQ(bus.FeedInboundForTest(bad + good), 0u);  // and the link goes
  unchanged("signature");
  bad = good;
  bad[7] = 8;  // length below the header's
  bad[6] = 0;
  EXPECT_EQ(bus.FeedInboundForTest(bad), 0u);
  unchanged("short length");
  bad = good;
  bad[4] = 0x7f;  // past the limit
  EXPECT_EQ(bus.FeedInboundForTest(bad), 0u);
  unchanged("long length");
  EXPECT_EQ(bus.FeedInboundForTest(good.substr(0, good.size() - 1)), 0u);
  EXPECT_EQ(bus.FeedInboundForTest(good.substr(0, 7)), 0u);
  EXPECT_EQ(bus.FeedInboundForTest(""), 0u);
  unchanged("truncated");
  bad = good;
  bad[9] = 2;  // version 2
  EXPECT_EQ(bus.FeedInboundForTest(bad), 0u);
  unchanged("version");
  // A length that does not fit the type's body: that one is skipped, and
  // the link reads on.
  BusMessage counted = ping;
  counted.gossip.push_back({kC, 0, 0, "127.0.0.3", 7002, 17002, kNodeMaster, 0});
  bad = Wire(counted);
  bad[15] = 2;  // two gossip sections said, one sent
  EXPECT_EQ(bus.FeedInboundForTest(bad), 0u);
  unchanged("gossip count");
  EXPECT_EQ(bus.FeedInboundForTest(bad + good), 1u);
  EXPECT_EQ(Nodes()[kB].slots, (std::vector<std::string>{"0-199"}));
}

// --- What the node fuzzer found ---

// A message naming this node as its sender was acted on as if a peer had
// sent it: a PING rewrote our own address (and epoch, role, hostname).
TEST_F(ClusterBusGossipTest, AMessageFromOurOwnIdChangesNothing) {
  ClusterBus& bus = OpenFour();
  const std::string before = bus.NodesText();
  BusMessage ping = From(kA, MsgType::kPing);
  ping.myip = "10.9.9.9";
  ping.port = 6000;
  ping.config_epoch = 7;
  ping.slaveof = kB;
  ping.hostname = "forged";
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(bus.NodesText(), before);
}

// A hostname CLUSTER NODES and nodes.conf cannot hold (a space, a comma,
// a newline) was taken as it was: NODES gained fields, and nodes.conf no
// longer loaded. Now the old one is kept.
TEST_F(ClusterBusGossipTest, AHostnameThatBreaksNodesConfIsRefused) {
  ClusterBus& bus = OpenFour();
  BusMessage ping = From(kB, MsgType::kPing);
  ping.config_epoch = 2;
  SetRange(&ping.myslots, 100, 199);
  ping.hostname = "two words";
  ping.human_nodename = "x,shard-id=zz";
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(Nodes()[kB].flags, "master");
  EXPECT_EQ(bus.SaveConfig(), "");
  bus_.reset();
  ClusterBus again(Settings(), 7000, 0, {});
  std::string err;
  EXPECT_TRUE(again.Load(&err)) << err;
}

}  // namespace
}  // namespace peregrine::cluster::test
