// ClusterBus without its thread (no Start(): no sockets): nodes.conf
// (making a node, loading it back, the lock, corrupt files, open slots),
// the CLUSTER changes with Redis's error texts and their effects on
// NODES, INFO and the published routes, and what bus messages do, fed
// through FeedInboundForTest as if read from a new inbound link.
#include "cluster/cluster_bus.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "server/log.h"

namespace peregrine::cluster {
namespace {

// Node ids: this node's (in the files the tests write) and three others.
const std::string kA(kNameLen, 'a');
const std::string kB(kNameLen, 'b');
const std::string kC(kNameLen, 'c');
const std::string kD(kNameLen, 'd');
const std::string kShard(kNameLen, '5');

// One line of CLUSTER NODES, split into its fields.
struct Row {
  std::string id, addr, flags, primary, epoch, link;
  std::vector<std::string> slots;  // ranges and open slots, as printed
};

std::map<std::string, Row> ParseNodes(const std::string& text) {
  std::map<std::string, Row> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    Row r;
    std::string ping, pong, w;
    words >> r.id >> r.addr >> r.flags >> r.primary >> ping >> pong >> r.epoch >> r.link;
    while (words >> w) r.slots.push_back(w);
    rows[r.id] = r;
  }
  return rows;
}

// A field of CLUSTER INFO ("" if absent).
std::string InfoField(const std::string& info, const std::string& name) {
  const std::string key = name + ":";
  const size_t at = info.find(key);
  if (at == std::string::npos) return "";
  const size_t end = info.find("\r\n", at);
  return info.substr(at + key.size(), end - at - key.size());
}

// A nodes.conf line (Redis 7.2's format; no hostname).
std::string ConfLine(const std::string& id, const std::string& addr, const std::string& flags,
                     const std::string& primary, uint64_t epoch, const std::string& slots = "") {
  return id + " " + addr + ",,shard-id=" + std::string(kNameLen, id[0] == '5' ? '6' : '5') + " " + flags + " " +
         primary + " 0 0 " + std::to_string(epoch) + " connected" + (slots.empty() ? "" : " " + slots) + "\n";
}

// A message from `sender` with the header fields a master at 127.0.0.2
// sends (its address as nodes.conf below has it).
BusMessage From(const std::string& sender, MsgType type) {
  BusMessage m;
  m.type = type;
  m.sender = sender;
  m.port = 7001;
  m.cport = 17001;
  m.myip = "127.0.0.2";
  m.flags = kNodeMaster;
  return m;
}

void SetRange(SlotBitmap* b, int first, int last) {
  for (int s = first; s <= last; s++) SetSlotBit(*b, s);
}

std::string Wire(const BusMessage& m) {
  std::string out;
  Encode(m, &out);
  return out;
}

class ClusterBusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = GetLogLevel();
    SetLogLevel(LogLevel::kNothing);
    std::string templ = ::testing::TempDir() + "/peregrine-cluster-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = dir_ + "/nodes.conf";
  }
  void TearDown() override {
    bus_.reset();
    std::filesystem::remove_all(dir_);
    SetLogLevel(saved_level_);
  }

  Config::ClusterSettings Settings(const std::string& path = "") const {
    Config::ClusterSettings s;
    s.enabled = true;
    s.config_file = path.empty() ? path_ : path;
    // Our own address, so that no message makes us learn it from a socket
    // (the test link has none).
    s.announce_ip = "127.0.0.1";
    return s;
  }
  void WriteConf(const std::string& text, const std::string& path = "") const {
    std::ofstream(path.empty() ? path_ : path) << text;
  }
  std::string ReadConf() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // A new bus on nodes.conf; Load must succeed.
  ClusterBus& Open(const Config::ClusterSettings& s) {
    bus_.reset();
    bus_ = std::make_unique<ClusterBus>(s, 7000, 0, std::vector<std::string>{"127.0.0.1"});
    std::string err;
    EXPECT_TRUE(bus_->Load(&err)) << err;
    return *bus_;
  }
  ClusterBus& Open() { return Open(Settings()); }
  // The error Load gives for `text`, or "" if it loads.
  std::string LoadError(const std::string& text) {
    WriteConf(text);
    ClusterBus bus(Settings(), 7000, 0, {});
    std::string err;
    return bus.Load(&err) ? "" : err;
  }
  // A cluster of three masters: A (myself, 0-99, epoch 1), B (100-199,
  // epoch 2) and C (200-299, epoch 3), and D, a replica of B.
  ClusterBus& OpenFour(uint64_t epoch_a = 1) {
    WriteConf(ConfLine(kA, "127.0.0.1:7000@17000", "myself,master", "-", epoch_a, "0-99") +
              ConfLine(kB, "127.0.0.2:7001@17001", "master", "-", 2, "100-199") +
              ConfLine(kC, "127.0.0.3:7002@17002", "master", "-", 3, "200-299") +
              ConfLine(kD, "127.0.0.4:7003@17003", "slave", kB, 0) + "vars currentEpoch 3 lastVoteEpoch 0\n");
    return Open();
  }
  std::map<std::string, Row> Nodes() const { return ParseNodes(bus_->NodesText()); }
  std::string Info(const std::string& name) const { return InfoField(bus_->InfoText(), name); }
  uint16_t OwnerRoute(int slot) const { return bus_->Routes()->owner[static_cast<size_t>(slot)]; }

  LogLevel saved_level_;
  std::string dir_, path_;
  std::unique_ptr<ClusterBus> bus_;
};

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
  EXPECT_EQ(ReadConf().find(kB + " "), std::string::npos);
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
  EXPECT_EQ(bus.known_nodes(), 2);
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

// --- Messages ---

TEST_F(ClusterBusTest, MeetFromAnUnknownNodeMakesAHandshakeNode) {
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

TEST_F(ClusterBusTest, PingFromAnUnknownNodeAddsNothing) {
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

TEST_F(ClusterBusTest, PingFromAKnownNodeUpdatesItsEpochAndSlots) {
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

TEST_F(ClusterBusTest, ANewerClaimDoesNotTakeASlotWeImport) {
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

TEST_F(ClusterBusTest, GossipAddsNodesOnlyFromAKnownSender) {
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

TEST_F(ClusterBusTest, FailFromAKnownNodeMarksTheNodeFailed) {
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

TEST_F(ClusterBusTest, UpdateWithANewerEpochMovesSlots) {
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

TEST_F(ClusterBusTest, BadMessagesAreDroppedAndChangeNothing) {
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

}  // namespace
}  // namespace peregrine::cluster
