// ClusterBus without its thread (no Start(): no sockets): nodes.conf
// (making a node, loading it back, the lock, corrupt files, open slots)
// and the CLUSTER changes, with Redis's error texts and their effects on
// NODES, INFO and the published routes. (What bus messages do:
// cluster_gossip_test.cc.)
#include <string>
#include <vector>

#include "cluster/cluster_bus_test_util.h"

namespace peregrine::cluster::test {
namespace {

// --- nodes.conf ---

TEST_F(ClusterBusTest, LoadWithoutAFileMakesANodeAndWritesIt) {
  ClusterBus& bus = Open();
  const std::string id = bus.MyId();
  EXPECT_TRUE(ValidNodeName(id)) << id;
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[id].flags, "myself,master");
  EXPECT_EQ(nodes[id].primary, "-");
  EXPECT_EQ(nodes[id].addr, "127.0.0.1:7000@17000");
  EXPECT_EQ(nodes[id].epoch, "0");
  EXPECT_EQ(Info("cluster_known_nodes"), "1");
  EXPECT_EQ(Info("cluster_slots_assigned"), "0");
  const std::string conf = ReadConf();
  EXPECT_EQ(conf.find(id + " 127.0.0.1:7000@17000,,shard-id=" + bus.MyShardId() + " myself,master - 0 0 0 connected"),
            0u)
      << conf;
  EXPECT_NE(conf.find("vars currentEpoch 0 lastVoteEpoch 0\n"), std::string::npos) << conf;
}

TEST_F(ClusterBusTest, AnEmptyFileIsANewNodeToo) {
  WriteConf(" \n\n");
  EXPECT_TRUE(ValidNodeName(Open().MyId()));
  EXPECT_NE(ReadConf().find("myself,master"), std::string::npos);
}

TEST_F(ClusterBusTest, LoadAgainGivesTheSameNode) {
  Config::ClusterSettings s = Settings();
  s.announce_hostname = "host-a";
  std::string id, shard, nodes_text;
  {
    ClusterBus& bus = Open(s);
    id = bus.MyId();
    shard = bus.MyShardId();
    EXPECT_EQ(bus.SetConfigEpoch(4), "");
    EXPECT_EQ(bus.AddSlots({0, 1, 2, 7, 16383}), "");
    nodes_text = bus.NodesText();
  }
  bus_.reset();
  // Another node, written by hand, and the vars line: kept as read.
  std::string conf = ReadConf();
  conf.replace(conf.find("vars"), std::string::npos, "");
  conf += kB + " 10.0.0.2:7001@17001,host-b,tls-port=7101,nodename=bee,shard-id=" + kShard +
          " master,fail? - 0 0 9 disconnected 100-200\n";
  conf += "vars currentEpoch 12 lastVoteEpoch 11\n";
  WriteConf(conf);
  ClusterBus& bus = Open(s);
  EXPECT_EQ(bus.MyId(), id);
  EXPECT_EQ(bus.MyShardId(), shard);
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[id].addr, "127.0.0.1:7000@17000,host-a");
  EXPECT_EQ(nodes[id].epoch, "4");
  EXPECT_EQ(nodes[id].slots, (std::vector<std::string>{"0-2", "7", "16383"}));
  EXPECT_EQ(nodes[kB].addr, "10.0.0.2:7001@17001,host-b");
  EXPECT_EQ(nodes[kB].flags, "master,fail?");
  EXPECT_EQ(nodes[kB].epoch, "9");
  EXPECT_EQ(nodes[kB].slots, (std::vector<std::string>{"100-200"}));
  EXPECT_EQ(Info("cluster_current_epoch"), "12");
  EXPECT_EQ(Info("cluster_my_epoch"), "4");
  EXPECT_EQ(Info("cluster_slots_assigned"), std::to_string(5 + 101));
  // Saved and read once more: the same, lastVoteEpoch included.
  EXPECT_EQ(bus.SaveConfig(), "");
  const std::string saved = ReadConf();
  EXPECT_NE(saved.find("vars currentEpoch 12 lastVoteEpoch 11\n"), std::string::npos) << saved;
  // (Its PONG time is when it was loaded: a fresh start.)
  EXPECT_NE(saved.find(kB + " 10.0.0.2:7001@17001,host-b,tls-port=7101,nodename=bee,shard-id=" + kShard +
                       " master,fail? - 0 "),
            std::string::npos)
      << saved;
  EXPECT_NE(saved.find(" 9 disconnected 100-200\n"), std::string::npos) << saved;
  const auto before = Nodes();
  Open(s);
  auto after = Nodes();
  ASSERT_EQ(after.size(), 2u);
  for (const std::string& n : {id, kB}) {
    EXPECT_EQ(after[n].addr, before.at(n).addr);
    EXPECT_EQ(after[n].flags, before.at(n).flags);
    EXPECT_EQ(after[n].epoch, before.at(n).epoch);
    EXPECT_EQ(after[n].slots, before.at(n).slots);
  }
  EXPECT_EQ(Info("cluster_current_epoch"), "12");
}

TEST_F(ClusterBusTest, EpochsPastInt64Load) {
  // Epochs are unsigned 64-bit on the bus: a peer may announce any, and
  // nodes.conf must take back what it saved.
  ClusterBus& bus = OpenFour();
  BusMessage ping = From(kB, MsgType::kPing);
  ping.current_epoch = ~uint64_t{0};
  ping.config_epoch = ~uint64_t{0} - 1;
  SetRange(&ping.myslots, 100, 199);
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(bus.SaveConfig(), "");
  Open();
  EXPECT_EQ(Info("cluster_current_epoch"), "18446744073709551615");
  EXPECT_EQ(Nodes()[kB].epoch, "18446744073709551614");
}

TEST_F(ClusterBusTest, TheFileIsLockedWhileItsNodeLives) {
  Open();
  const char* kUsed = "is already used by a different Redis Cluster node";
  for (int round = 0; round < 2; round++) {
    ClusterBus other(Settings(), 7001, 0, {});
    std::string err;
    EXPECT_FALSE(other.Load(&err));
    EXPECT_NE(err.find(kUsed), std::string::npos) << err;
    EXPECT_EQ(err.find("Sorry, the cluster configuration file " + path_), 0u) << err;
    // Saving writes a new file over the old one: the lock moves with it.
    EXPECT_EQ(bus_->SaveConfig(), "");
  }
  const std::string id = bus_->MyId();
  bus_.reset();
  EXPECT_EQ(Open().MyId(), id);
}

TEST_F(ClusterBusTest, CorruptFilesAreRefused) {
  const std::string good = ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "0-10");
  ASSERT_EQ(LoadError(good), "");
  const std::string corrupt = "Unrecoverable error: corrupted cluster config file \"" + path_ + "\"";
  const std::vector<std::string> bad = {
      ConfLine("notanid", "127.0.0.1:7000@17000", "myself,master", "-", 1),
      ConfLine(std::string(kNameLen, 'A'), "127.0.0.1:7000@17000", "myself,master", "-", 1),
      kA + " 127.0.0.1:7000@17000 myself,master - 0 0 1\n",
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "10-5"),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "0-16384"),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "x"),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "[5->-]x"),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master,bogus", "-", 1),
      ConfLine(kA, "127.0.0.1:7000@17000", "master", "-", 1),
      ConfLine(kA, "127.0.0.1", "myself,master", "-", 1),
      ConfLine(kA, "127.0.0.1:70000@17000", "myself,master", "-", 1),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1) + "vars currentEpoch x\n",
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1) +
          ConfLine(kB, "127.0.0.1:7001@17001", "myself,master", "-", 1),
      kA + " 127.0.0.1:7000@17000 myself,master - 0 0 -1 connected\n",
      // Ids where an id goes: a primary's, an open slot's.
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,slave", "notanid", 1),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "0 [0->-notanid]"),
      ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "[1-<-" + kB + "x]"),
  };
  for (const std::string& text : bad) {
    const std::string err = LoadError(text);
    EXPECT_EQ(err.find(corrupt), 0u) << "file: " << text << "error: " << err;
  }
}

TEST_F(ClusterBusTest, OpenSlotsRoundTrip) {
  WriteConf(ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", 1, "0-10 [5->-" + kB + "] [20-<-" + kB + "]") +
            ConfLine(kB, "127.0.0.2:7001@17001", "master", "-", 2, "20"));
  Open();
  auto nodes = Nodes();
  EXPECT_EQ(nodes[kA].slots, (std::vector<std::string>{"0-10", "[5->-" + kB + "]", "[20-<-" + kB + "]"}));
  auto routes = bus_->Routes();
  ASSERT_NE(routes->migrating_to[5], SlotRoutes::kUnassigned);
  EXPECT_EQ(routes->endpoints.at(routes->migrating_to[5]), "127.0.0.2:7001");
  EXPECT_EQ(routes->migrating_to[4], SlotRoutes::kUnassigned);
  EXPECT_TRUE(routes->importing.test(20));
  EXPECT_FALSE(routes->importing.test(5));
  EXPECT_EQ(routes->owner[5], SlotRoutes::kMine);
  EXPECT_EQ(routes->endpoints.at(routes->owner[20]), "127.0.0.2:7001");
  EXPECT_EQ(bus_->SaveConfig(), "");
  EXPECT_NE(ReadConf().find(" 0-10 [5->-" + kB + "] [20-<-" + kB + "]\n"), std::string::npos) << ReadConf();
  Open();
  EXPECT_EQ(Nodes()[kA].slots, nodes[kA].slots);
  EXPECT_TRUE(bus_->Routes()->importing.test(20));
}

// --- CLUSTER changes ---

TEST_F(ClusterBusTest, AddSlotsAndDelSlots) {
  ClusterBus& bus = Open();
  const std::string me = bus.MyId();
  uint64_t version = bus.routes_version();
  EXPECT_EQ(bus.AddSlots({1, 2, 3, 9}), "");
  EXPECT_GT(bus.routes_version(), version);
  version = bus.routes_version();
  EXPECT_EQ(Info("cluster_slots_assigned"), "4");
  EXPECT_EQ(Nodes()[me].slots, (std::vector<std::string>{"1-3", "9"}));
  EXPECT_EQ(OwnerRoute(2), SlotRoutes::kMine);
  EXPECT_EQ(OwnerRoute(4), SlotRoutes::kUnassigned);
  // Refused whole: nothing changes, the routes stay.
  EXPECT_EQ(bus.AddSlots({5, 3}), "ERR Slot 3 is already busy");
  EXPECT_EQ(bus.AddSlots({5, 6, 5}), "ERR Slot 5 specified multiple times");
  EXPECT_EQ(bus.DelSlots({1, 4}), "ERR Slot 4 is already unassigned");
  EXPECT_EQ(bus.DelSlots({1, 1}), "ERR Slot 1 specified multiple times");
  EXPECT_EQ(Info("cluster_slots_assigned"), "4");
  EXPECT_EQ(bus.routes_version(), version);
  EXPECT_EQ(bus.DelSlots({2, 9}), "");
  EXPECT_GT(bus.routes_version(), version);
  EXPECT_EQ(Nodes()[me].slots, (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(OwnerRoute(2), SlotRoutes::kUnassigned);
  EXPECT_EQ(Info("cluster_slots_assigned"), "2");
  // Saved before the reply.
  EXPECT_NE(ReadConf().find(" connected 1 3\n"), std::string::npos) << ReadConf();
  version = bus.routes_version();
  EXPECT_EQ(bus.SaveConfig(), "");
  EXPECT_EQ(bus.SetConfigEpoch(3), "");
  EXPECT_EQ(bus.routes_version(), version);
  bus.FlushSlots();
  EXPECT_EQ(Info("cluster_slots_assigned"), "0");
  EXPECT_GT(bus.routes_version(), version);
}

TEST_F(ClusterBusTest, SetSlot) {
  ClusterBus& bus = OpenFour();
  const std::string unknown(kNameLen, 'e');
  EXPECT_EQ(bus.SetSlot(150, "migrating", kB, 0), "ERR I'm not the owner of hash slot 150");
  EXPECT_EQ(bus.SetSlot(5, "migrating", unknown, 0), "ERR I don't know about node " + unknown);
  EXPECT_EQ(bus.SetSlot(5, "migrating", kD, 0), "ERR Target node is not a master");
  EXPECT_EQ(bus.SetSlot(5, "importing", kB, 0), "ERR I'm already the owner of hash slot 5");
  EXPECT_EQ(bus.SetSlot(150, "importing", unknown, 0), "ERR I don't know about node " + unknown);
  EXPECT_EQ(bus.SetSlot(150, "importing", kD, 0), "ERR Target node is not a master");
  EXPECT_EQ(bus.SetSlot(5, "sideways", kB, 0),
            "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
  EXPECT_EQ(bus.SetSlot(5, "node", unknown, 0), "ERR Unknown node " + unknown);
  EXPECT_EQ(bus.SetSlot(5, "node", kD, 0), "ERR Target node is not a master");

  uint64_t version = bus.routes_version();
  EXPECT_EQ(bus.SetSlot(5, "migrating", kB, 0), "");
  EXPECT_EQ(bus.SetSlot(150, "importing", kB, 0), "");
  EXPECT_GT(bus.routes_version(), version);
  auto routes = bus.Routes();
  EXPECT_EQ(routes->endpoints.at(routes->migrating_to[5]), "127.0.0.2:7001");
  EXPECT_TRUE(routes->importing.test(150));
  auto slots = Nodes()[kA].slots;
  EXPECT_EQ(slots, (std::vector<std::string>{"0-99", "[5->-" + kB + "]", "[150-<-" + kB + "]"}));
  version = bus.routes_version();
  EXPECT_EQ(bus.SetSlot(5, "stable", "", 0), "");
  EXPECT_EQ(bus.SetSlot(150, "stable", "", 0), "");
  EXPECT_GT(bus.routes_version(), version);
  EXPECT_EQ(Nodes()[kA].slots, (std::vector<std::string>{"0-99"}));
  version = bus.routes_version();
  EXPECT_EQ(bus.SetSlot(150, "stable", "", 0), "");
  EXPECT_EQ(bus.routes_version(), version);

  // NODE: given away only without keys; to us from an import: a new epoch.
  EXPECT_EQ(bus.SetSlot(5, "node", kC, 3),
            "ERR Can't assign hashslot 5 to a different node while I still hold keys for this hash slot.");
  EXPECT_EQ(bus.SetSlot(5, "node", kC, 0), "");
  EXPECT_EQ(bus.routes_version(), version + 1);
  EXPECT_EQ(bus.Routes()->endpoints.at(OwnerRoute(5)), "127.0.0.3:7002");
  EXPECT_EQ(Nodes()[kC].slots, (std::vector<std::string>{"5", "200-299"}));
  EXPECT_EQ(bus.SetSlot(150, "importing", kB, 0), "");
  EXPECT_EQ(bus.SetSlot(150, "node", kA, 0), "");
  EXPECT_EQ(OwnerRoute(150), SlotRoutes::kMine);
  EXPECT_FALSE(bus.Routes()->importing.test(150));
  EXPECT_EQ(Info("cluster_my_epoch"), "4");
  EXPECT_EQ(Info("cluster_current_epoch"), "4");
  EXPECT_EQ(Nodes()[kA].slots, (std::vector<std::string>{"0-4", "6-99", "150"}));
  EXPECT_EQ(Nodes()[kB].slots, (std::vector<std::string>{"100-149", "151-199"}));

  // Our last slot given away: we follow its new owner, and a replica
  // does not SETSLOT.
  EXPECT_EQ(bus.DelSlots({150}), "");
  std::vector<int> ours;
  for (int s = 0; s < 100; s++)
    if (s != 5) ours.push_back(s);
  EXPECT_EQ(bus.DelSlots(std::vector<int>(ours.begin(), ours.end() - 1)), "");
  EXPECT_EQ(bus.SetSlot(99, "node", kC, 0), "");
  EXPECT_TRUE(bus.is_replica());
  EXPECT_EQ(Nodes()[kA].flags, "myself,slave");
  EXPECT_EQ(Nodes()[kA].primary, kC);
  EXPECT_EQ(bus.TakeServerTasks().follow, true);
  EXPECT_EQ(bus.SetSlot(99, "stable", "", 0), "ERR Please use SETSLOT only with masters.");
}

TEST_F(ClusterBusTest, SetConfigEpochAndBumpEpoch) {
  ClusterBus& bus = Open();
  EXPECT_EQ(bus.SetConfigEpoch(-1), "ERR Invalid config epoch specified: -1");
  EXPECT_EQ(bus.SetConfigEpoch(5), "");
  EXPECT_EQ(Info("cluster_my_epoch"), "5");
  EXPECT_EQ(Info("cluster_current_epoch"), "5");
  EXPECT_EQ(bus.SetConfigEpoch(6), "ERR Node config epoch is already non-zero");
  EXPECT_EQ(bus.BumpEpoch(), "STILL 5");
  EXPECT_EQ(bus.SaveConfig(), "");
  bus_.reset();

  // Another node with a greater epoch: a bump goes past it.
  ClusterBus& four = OpenFour(/*epoch_a=*/0);
  EXPECT_EQ(four.SetConfigEpoch(9),
            "ERR The user can assign a config epoch only when the node does not know any other node.");
  EXPECT_EQ(four.BumpEpoch(), "BUMPED 4");
  EXPECT_EQ(four.BumpEpoch(), "STILL 4");
  EXPECT_EQ(Info("cluster_current_epoch"), "4");
  EXPECT_NE(ReadConf().find("vars currentEpoch 4 "), std::string::npos);
  EXPECT_EQ(Nodes()[kA].epoch, "4");
}

TEST_F(ClusterBusTest, Forget) {
  ClusterBus& bus = OpenFour();
  const std::string unknown(kNameLen, 'e');
  EXPECT_EQ(bus.Forget(unknown), "ERR Unknown node " + unknown);
  EXPECT_EQ(bus.Forget(kA), "ERR I tried hard but I can't forget myself...");
  const uint64_t version = bus.routes_version();
  EXPECT_EQ(bus.Forget(kB), "");
  EXPECT_GT(bus.routes_version(), version);
  EXPECT_EQ(Info("cluster_known_nodes"), "3");
  EXPECT_EQ(Info("cluster_slots_assigned"), "200");
  EXPECT_EQ(OwnerRoute(150), SlotRoutes::kUnassigned);
  auto nodes = Nodes();
  EXPECT_EQ(nodes.count(kB), 0u);
  EXPECT_EQ(nodes[kD].primary, "-");  // its replica no longer names it
  EXPECT_EQ(("\n" + ReadConf()).find("\n" + kB + " "), std::string::npos);  // no line of its own
  // Forgotten for a while: again is fine, and gossip does not bring it back.
  EXPECT_EQ(bus.Forget(kB), "");
  BusMessage ping = From(kC, MsgType::kPing);
  ping.myip = "127.0.0.3";
  ping.port = 7002;
  ping.cport = 17002;
  ping.config_epoch = 3;
  SetRange(&ping.myslots, 200, 299);
  ping.gossip.push_back({kB, 0, 0, "127.0.0.2", 7001, 17001, kNodeMaster, 0});
  EXPECT_EQ(bus.FeedInboundForTest(Wire(ping)), 1u);
  EXPECT_EQ(Nodes().count(kB), 0u);

  // Not the primary we follow.
  std::string host;
  int port = 0;
  EXPECT_EQ(bus.Replicate(kC, false, &host, &port), "ERR To set a master the node must be empty and without assigned slots.");
  bus.FlushSlots();
  EXPECT_EQ(bus.Replicate(kC, false, &host, &port), "");
  EXPECT_EQ(host, "127.0.0.3");
  EXPECT_EQ(port, 7002);
  EXPECT_EQ(bus.Forget(kC), "ERR Can't forget my master!");
}

TEST_F(ClusterBusTest, Reset) {
  ClusterBus& bus = OpenFour();
  EXPECT_EQ(bus.Reset(false, /*has_keys=*/true), "ERR CLUSTER RESET can't be called with master nodes containing keys");
  EXPECT_EQ(Info("cluster_known_nodes"), "4");
  EXPECT_EQ(bus.SetSlot(5, "migrating", kB, 0), "");
  EXPECT_EQ(bus.Reset(false, false), "");
  auto nodes = Nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[kA].flags, "myself,master");
  EXPECT_EQ(nodes[kA].slots, std::vector<std::string>{});
  EXPECT_EQ(nodes[kA].epoch, "1");  // soft: epochs kept
  EXPECT_EQ(Info("cluster_current_epoch"), "3");
  EXPECT_EQ(Info("cluster_slots_assigned"), "0");
  EXPECT_EQ(bus.Routes()->migrating_to[5], SlotRoutes::kUnassigned);
  EXPECT_EQ(bus.Reset(true, false), "");
  EXPECT_NE(bus.MyId(), kA);
  EXPECT_TRUE(ValidNodeName(bus.MyId()));
  EXPECT_EQ(Info("cluster_current_epoch"), "0");
  EXPECT_EQ(Info("cluster_my_epoch"), "0");
  EXPECT_NE(ReadConf().find(bus.MyId() + " "), std::string::npos);
  EXPECT_NE(ReadConf().find("vars currentEpoch 0 lastVoteEpoch 0"), std::string::npos);
}

TEST_F(ClusterBusTest, MeetStartsAHandshake) {
  ClusterBus& bus = Open();
  EXPECT_EQ(bus.Meet("not-an-ip", 7001, 17001), "ERR Invalid node address specified: not-an-ip:7001");
  EXPECT_EQ(bus.Meet("127.0.0.2", 0, 10000), "ERR Invalid node address specified: 127.0.0.2:0");
  EXPECT_EQ(bus.Meet("127.0.0.2", 7001, 17001), "");
  EXPECT_EQ(bus.Meet("127.0.0.2", 7001, 17001), "");  // not twice
  EXPECT_EQ(Info("cluster_known_nodes"), "2");
  int handshakes = 0;
  for (auto& [id, row] : Nodes())
    if (row.flags == "handshake") {
      handshakes++;
      EXPECT_EQ(row.addr, "127.0.0.2:7001@17001");
    }
  EXPECT_EQ(handshakes, 1);
  EXPECT_EQ(bus.SaveConfig(), "");
  EXPECT_EQ(ReadConf().find("handshake"), std::string::npos);  // not saved
}

}  // namespace
}  // namespace peregrine::cluster::test
