// What the ClusterBus tests share (cluster_bus_test.cc: nodes.conf and the
// CLUSTER changes; cluster_gossip_test.cc: bus messages): a bus on a
// nodes.conf in a temporary directory, a four-node cluster to start from,
// CLUSTER NODES and INFO parsed, and messages as a known node sends them.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/cluster_bus.h"
#include "server/log.h"

namespace peregrine::cluster::test {

// Node ids: this node's (in the files the tests write) and three others.
inline const std::string kA(kNameLen, 'a');
inline const std::string kB(kNameLen, 'b');
inline const std::string kC(kNameLen, 'c');
inline const std::string kD(kNameLen, 'd');
inline const std::string kShard(kNameLen, '5');

// One line of CLUSTER NODES, split into its fields.
struct Row {
  std::string id, addr, flags, primary, epoch, link;
  std::vector<std::string> slots;  // ranges and open slots, as printed
};

inline std::map<std::string, Row> ParseNodes(const std::string& text) {
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
inline std::string InfoField(const std::string& info, const std::string& name) {
  const std::string key = name + ":";
  const size_t at = info.find(key);
  if (at == std::string::npos) return "";
  const size_t end = info.find("\r\n", at);
  return info.substr(at + key.size(), end - at - key.size());
}

// A nodes.conf line (Redis 7.2's format; no hostname). Each primary is a
// shard of its own, its id the shard's; a replica is in its primary's.
inline std::string ConfLine(const std::string& id, const std::string& addr, const std::string& flags,
                            const std::string& primary, uint64_t epoch, const std::string& slots = "") {
  const std::string& shard = primary == "-" || primary.size() != kNameLen ? id : primary;
  return id + " " + addr + ",,shard-id=" + (shard.size() == kNameLen ? shard : kShard) + " " + flags + " " + primary +
         " 0 0 " + std::to_string(epoch) + " connected" + (slots.empty() ? "" : " " + slots) + "\n";
}

// A message from `sender` with the header fields a master at 127.0.0.2
// sends (its address as nodes.conf below has it).
inline BusMessage From(const std::string& sender, MsgType type) {
  BusMessage m;
  m.type = type;
  m.sender = sender;
  m.port = 7001;
  m.cport = 17001;
  m.myip = "127.0.0.2";
  m.flags = kNodeMaster;
  return m;
}

inline void SetRange(SlotBitmap* b, int first, int last) {
  for (int s = first; s <= last; s++) SetSlotBit(*b, s);
}

inline std::string Wire(const BusMessage& m) {
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

}  // namespace peregrine::cluster::test
