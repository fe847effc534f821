// libFuzzer target for what cluster bus messages do to a node
// (src/cluster/cluster_gossip.cc and the code it calls): a ClusterBus
// without its thread, loaded from a nodes.conf of six nodes (this one and
// two more primaries sharing the slots, two replicas, a primary without
// slots believed failing; a slot migrating, one importing), takes the
// input's links through FeedInboundForTest as if they came from peers:
// handshakes, gossip, failure reports, FAIL, UPDATE, slot claims with
// every epoch order, role changes, forgotten nodes, hostnames, and bytes
// no codec wrote.
//
// The input is a program (cluster_node/message_gen.h) that builds the
// messages with cluster::Encode, so most of them pass the codec's checks
// and reach the state, and mixes in corrupted, cut and raw ones. Its first
// byte sets up the node:
//   bits 0-1  cluster-preferred-endpoint-type (ip, hostname, unknown, ip)
//   bit 2     cluster-announce-ip 127.0.0.1 (else the node learns its own
//             address from what the link's socket says: there is none)
//   bit 3     cluster-allow-replica-migration no
//   bit 4     cluster-require-full-coverage no
//   bit 5     the checks after every link, not only at the end
//   bit 6     at the end, an empty CLUSTER DELSLOTS (which saves
//             nodes.conf and publishes the routes, as every CLUSTER change
//             does); then the routes are checked too, and a second node
//             loads the file and must see the same cluster
//   bit 7     cluster-node-timeout 1 ms (failure reports expire at once)
//
// After the input (and after each link with bit 5) the node must be
// consistent as CLUSTER shows it: CLUSTER NODES parses, one line is
// `myself` and names MyId(), every id and primary is a known node's,
// each slot has at most one owner, and an owner is a primary;
// CLUSTER SLOTS's ranges are ordered, disjoint, and agree with NODES;
// CLUSTER INFO's counts agree; CLUSTER SHARDS lists each node once; once
// published (bit 6), the routes workers use agree (each slot's owner,
// migrating and importing slots). A crash, a sanitizer report or a failed
// check (abort) is a finding.
//
// Each input starts from the same nodes.conf, on a new ClusterBus, so a
// finding replays alone. PEREGRINE_FUZZ_KEEP_STATE=1 keeps one node for
// the whole run instead (deeper states, findings that may need the inputs
// before them; it starts over past 64 nodes).
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/cluster_bus.h"
#include "cluster_node/message_gen.h"
#include "server/log.h"

namespace {

using namespace peregrine;
using namespace peregrine::cluster;
using cluster_node_fuzz::BaselineIds;

enum : uint8_t {
  kHeaderEndpointMask = 3,
  kHeaderAnnounceIp = 4,
  kHeaderNoReplicaMigration = 8,
  kHeaderPartialCoverage = 16,
  kHeaderCheckEachLink = 32,
  kHeaderRoundTrip = 64,
  kHeaderShortTimeout = 128,
};

// The fuzzer's temporary directory (removed at exit, and by a failed check,
// which exits without it).
std::string* g_dir = nullptr;

[[noreturn]] void Fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "cluster node: %s\n%s\n", what.c_str(), detail.c_str());
  if (g_dir != nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(*g_dir, ignored);
  }
  std::abort();
}

// The nodes.conf every input starts from.
std::string BaselineConf() {
  const std::vector<std::string>& id = BaselineIds();
  auto line = [](const std::string& n, const std::string& addr, const std::string& flags, const std::string& primary,
                 int epoch, const std::string& slots) {
    return n + " " + addr + ",shard-id=" + std::string(kNameLen, n[0] == 'd' ? 'b' : n[0] == 'e' ? 'c' : n[0]) + " " +
           flags + " " + primary + " 0 0 " + std::to_string(epoch) + " connected" + slots + "\n";
  };
  return line(id[0], "127.0.0.1:7000@17000,", "myself,master", "-", 1,
              " 0-5460 [100->-" + id[1] + "] [6000-<-" + id[1] + "]") +
         line(id[1], "127.0.0.2:7001@17001,", "master", "-", 2, " 5461-10922") +
         line(id[2], "127.0.0.3:7002@17002,", "master", "-", 3, " 10923-16383") +
         line(id[3], "127.0.0.4:7003@17003,", "slave", id[1], 2, "") +
         line(id[4], "127.0.0.5:7004@17004,host-e", "slave", id[2], 3, "") +
         line(id[5], "127.0.0.6:7005@17005,", "master,fail?", "-", 0, "") + "vars currentEpoch 3 lastVoteEpoch 0\n";
}

struct Fixture {
  std::string dir, path, copy_path;
  std::unique_ptr<ClusterBus> bus;
  Config::ClusterSettings settings;
  bool keep_state = false;
};

Fixture& Env() {
  static Fixture* f = [] {
    auto* fx = new Fixture;
    SetLogLevel(LogLevel::kNothing);
    char templ[] = "/tmp/peregrine-cluster-node-XXXXXX";
    if (mkdtemp(templ) == nullptr) Fail("mkdtemp failed", "");
    fx->dir = templ;
    g_dir = &fx->dir;
    fx->path = fx->dir + "/nodes.conf";
    fx->copy_path = fx->dir + "/copy.conf";
    const char* keep = std::getenv("PEREGRINE_FUZZ_KEEP_STATE");
    fx->keep_state = keep != nullptr && keep[0] == '1';
    std::atexit([] { std::filesystem::remove_all(Env().dir); });
    return fx;
  }();
  return *f;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Config::ClusterSettings SettingsFor(uint8_t header, const std::string& path) {
  Config::ClusterSettings s;
  s.enabled = true;
  s.config_file = path;
  using Endpoint = Config::ClusterSettings::Endpoint;
  static constexpr Endpoint kEndpoints[] = {Endpoint::kIp, Endpoint::kHostname, Endpoint::kUnknown, Endpoint::kIp};
  s.preferred_endpoint = kEndpoints[header & kHeaderEndpointMask];
  if (header & kHeaderAnnounceIp) s.announce_ip = "127.0.0.1";
  s.allow_replica_migration = !(header & kHeaderNoReplicaMigration);
  s.require_full_coverage = !(header & kHeaderPartialCoverage);
  if (header & kHeaderShortTimeout) s.node_timeout_ms = 1;
  return s;
}

std::unique_ptr<ClusterBus> LoadBus(const Config::ClusterSettings& settings) {
  auto bus = std::make_unique<ClusterBus>(settings, 7000, 0, std::vector<std::string>{});
  std::string err;
  if (!bus->Load(&err)) Fail("nodes.conf did not load", err + "\n" + ReadFile(settings.config_file));
  return bus;
}

// --- CLUSTER NODES, parsed ---

struct Row {
  std::string id, addr, flags, primary, epoch, link;
  std::vector<std::string> slots;
  std::set<std::string> flag_set;
};

std::map<std::string, Row> ParseNodes(const std::string& text) {
  std::map<std::string, Row> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    Row r;
    std::string ping, pong, w;
    if (!(words >> r.id >> r.addr >> r.flags >> r.primary >> ping >> pong >> r.epoch >> r.link))
      Fail("a CLUSTER NODES line of fewer than 8 fields", text);
    while (words >> w) r.slots.push_back(w);
    std::istringstream flags(r.flags);
    while (std::getline(flags, w, ',')) r.flag_set.insert(w);
    if (!rows.emplace(r.id, r).second) Fail("a node listed twice in CLUSTER NODES: " + r.id, text);
  }
  return rows;
}

// "a" or "a-b" into [first, last]; false if not a slot range.
bool ParseRange(const std::string& s, int* first, int* last) {
  char* end = nullptr;
  const long a = std::strtol(s.c_str(), &end, 10);
  long b = a;
  if (end == s.c_str()) return false;
  if (*end == '-') {
    const char* rest = end + 1;
    b = std::strtol(rest, &end, 10);
    if (end == rest) return false;
  }
  if (*end != '\0' || a < 0 || b < a || b >= static_cast<long>(kNumSlots)) return false;
  *first = static_cast<int>(a);
  *last = static_cast<int>(b);
  return true;
}

std::string InfoField(const std::string& info, const std::string& name) {
  const std::string key = "\n" + name + ":";
  const size_t at = ("\n" + info).find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size() - 1;
  return info.substr(start, info.find("\r\n", start) - start);
}

// --- The checks ---

// `routes_fresh`: the routes were published since the last message (the
// bus publishes them after each batch of events, which FeedInboundForTest
// leaves out; a CLUSTER change does it).
void CheckNode(ClusterBus& bus, bool routes_fresh) {
  const std::string text = bus.NodesText();
  const std::map<std::string, Row> rows = ParseNodes(text);
  const std::string me = bus.MyId();
  const std::string info = bus.InfoText();
  int myself = 0;
  // Each slot's owner: its id in `rows` (no copies: this runs per input).
  std::vector<const std::string*> owner(kNumSlots, nullptr);
  std::map<int, std::string> migrating, importing;
  for (const auto& [id, r] : rows) {
    if (!ValidNodeName(id)) Fail("an invalid node id in CLUSTER NODES: " + id, text);
    static const std::set<std::string> kFlags = {"myself", "master",    "slave",  "fail?",     "fail",
                                                 "handshake", "noaddr", "nofailover", "noflags"};
    for (const std::string& f : r.flag_set)
      if (!kFlags.contains(f)) Fail("an unknown flag in CLUSTER NODES: " + f, text);
    if (r.flag_set.contains("myself")) {
      myself++;
      if (id != me) Fail("the myself line is not MyId() " + me, text);
    }
    if (r.primary != "-" && !rows.contains(r.primary)) Fail("the primary of " + id + " is no known node", text);
    if (r.primary == id) Fail("node " + id + " is its own primary", text);
    for (const std::string& s : r.slots) {
      if (s.front() == '[') {
        if (id != me) Fail("an open slot on another node's line", text);
        const size_t to = s.find("->-"), from = s.find("-<-");
        const size_t arrow = to != std::string::npos ? to : from;
        int slot, unused;
        if (arrow == std::string::npos || s.back() != ']' || !ParseRange(s.substr(1, arrow - 1), &slot, &unused))
          Fail("a bad open slot " + s, text);
        const std::string target = s.substr(arrow + 3, s.size() - arrow - 4);
        if (!rows.contains(target)) Fail("an open slot's node is no known node: " + s, text);
        (to != std::string::npos ? migrating : importing)[slot] = target;
        continue;
      }
      int first, last;
      if (!ParseRange(s, &first, &last)) Fail("a bad slot range " + s, text);
      for (int j = first; j <= last; j++) {
        if (owner[static_cast<size_t>(j)] != nullptr) Fail("slot " + std::to_string(j) + " owned by two nodes", text);
        owner[static_cast<size_t>(j)] = &id;
      }
      if (!r.flag_set.contains("master")) Fail("node " + id + " owns slots but is no master", text);
    }
  }
  if (myself != 1) Fail(std::to_string(myself) + " myself lines", text);
  const std::string known = std::to_string(rows.size());
  if (InfoField(info, "cluster_known_nodes") != known)
    Fail("the node counts differ", text + info);

  // CLUSTER SLOTS and INFO.
  int assigned = 0, prev_end = -1;
  std::string prev_owner;
  for (const ClusterBus::SlotRange& r : bus.SlotsView()) {
    if (r.start < 0 || r.end < r.start || r.end >= static_cast<int>(kNumSlots) || r.start <= prev_end)
      Fail("CLUSTER SLOTS ranges overlap or are out of order at " + std::to_string(r.start), text);
    if (r.nodes.empty()) Fail("a CLUSTER SLOTS range without nodes", text);
    if (r.start == prev_end + 1 && r.nodes[0].id == prev_owner)
      Fail("CLUSTER SLOTS splits a range at " + std::to_string(r.start), text);
    for (int j = r.start; j <= r.end; j++)
      if (owner[static_cast<size_t>(j)] == nullptr || *owner[static_cast<size_t>(j)] != r.nodes[0].id)
        Fail("CLUSTER SLOTS and NODES disagree on slot " + std::to_string(j), text);
    assigned += r.end - r.start + 1;
    prev_end = r.end;
    prev_owner = r.nodes[0].id;
  }
  int owned = 0;
  for (const std::string* o : owner) owned += o != nullptr;
  if (owned != assigned || InfoField(info, "cluster_slots_assigned") != std::to_string(assigned))
    Fail("cluster_slots_assigned is not what CLUSTER SLOTS covers", text + info);
  const long ok = std::atol(InfoField(info, "cluster_slots_ok").c_str()),
             pfail = std::atol(InfoField(info, "cluster_slots_pfail").c_str()),
             fail = std::atol(InfoField(info, "cluster_slots_fail").c_str());
  if (ok + pfail + fail != assigned) Fail("cluster_slots_ok + pfail + fail != assigned", info);

  // The routes.
  auto routes = bus.Routes();
  for (size_t j = 0; routes_fresh && j < kNumSlots; j++) {
    const uint16_t o = routes->owner[j];
    const std::string* want = owner[j];
    const bool mine = want != nullptr && *want == me;
    if (want == nullptr ? o != SlotRoutes::kUnassigned
                        : mine ? o != SlotRoutes::kMine : o >= routes->endpoints.size())
      Fail("the routes disagree on the owner of slot " + std::to_string(j), text);
    const uint16_t m = routes->migrating_to[j];
    const bool shown = migrating.contains(static_cast<int>(j));
    if (m != SlotRoutes::kUnassigned && (m >= routes->endpoints.size() || !mine))
      Fail("the routes migrate slot " + std::to_string(j) + " this node does not own", text);
    if ((m != SlotRoutes::kUnassigned) != (shown && mine))
      Fail("the routes and NODES disagree on migrating slot " + std::to_string(j), text);
    // (An import of a slot no one owns is not published: -CLUSTERDOWN
    // comes first, as in Redis.)
    if (want != nullptr && routes->importing.test(j) != importing.contains(static_cast<int>(j)))
      Fail("the routes and NODES disagree on importing slot " + std::to_string(j), text);
  }

  // CLUSTER SHARDS: every node once.
  std::map<std::string, int> seen;
  for (const ClusterBus::ShardView& s : bus.ShardsView())
    for (const ClusterBus::ShardNode& n : s.nodes) seen[n.id]++;
  for (const auto& [id, r] : rows)
    if (seen[id] != 1) Fail("CLUSTER SHARDS lists " + id + " " + std::to_string(seen[id]) + " times", text);
  if (seen.size() != rows.size()) Fail("CLUSTER SHARDS lists nodes NODES does not", text);
}

// nodes.conf as saved now must load into a node that sees the same
// cluster (less the handshakes, which are not saved); the routes must
// agree with the state once published.
void CheckRoundTrip(Fixture& fx) {
  // An empty CLUSTER DELSLOTS: saves nodes.conf and publishes the routes,
  // as every CLUSTER change does.
  const std::string err = fx.bus->DelSlots({});
  if (!err.empty()) Fail("an empty CLUSTER DELSLOTS failed", err);
  CheckNode(*fx.bus, /*routes_fresh=*/true);
  const std::string saved = ReadFile(fx.path);
  WriteFile(fx.copy_path, saved);
  Config::ClusterSettings settings = fx.settings;
  settings.config_file = fx.copy_path;
  auto second = std::make_unique<ClusterBus>(settings, 7000, 0, std::vector<std::string>{});
  std::string load_err;
  if (!second->Load(&load_err)) Fail("a saved nodes.conf does not load: " + load_err, saved);
  const auto before = ParseNodes(fx.bus->NodesText());
  const auto after = ParseNodes(second->NodesText());
  size_t kept = 0;
  for (const auto& [id, r] : before) {
    if (r.flag_set.contains("handshake")) continue;
    kept++;
    auto it = after.find(id);
    if (it == after.end()) Fail("node " + id + " is gone after a reload", saved);
    const Row& a = it->second;
    // A replica's epoch is its primary's; when that primary is a replica
    // too (gossip can say so), the one shown is its own, which nodes.conf
    // does not keep (as Redis's).
    auto p = before.find(r.primary);
    const bool chained = p != before.end() && p->second.flag_set.contains("slave");
    if (a.addr != r.addr || a.flags != r.flags || a.primary != r.primary || (a.epoch != r.epoch && !chained) ||
        a.slots != r.slots)
      Fail("node " + id + " differs after a reload", saved + "\nbefore:\n" + fx.bus->NodesText() + "after:\n" +
                                                          second->NodesText());
  }
  if (kept != after.size()) Fail("a reload shows other nodes", saved + "\nafter:\n" + second->NodesText());
  // currentEpoch: as saved, or the greatest config epoch if greater (as
  // Redis, the loader takes that: a peer may announce a config epoch past
  // its current one).
  uint64_t want = std::strtoull(InfoField(fx.bus->InfoText(), "cluster_current_epoch").c_str(), nullptr, 10);
  for (const auto& [id, r] : before)
    if (!r.flag_set.contains("handshake")) want = std::max<uint64_t>(want, std::strtoull(r.epoch.c_str(), nullptr, 10));
  if (InfoField(second->InfoText(), "cluster_current_epoch") != std::to_string(want))
    Fail("currentEpoch differs after a reload", saved);
  second.reset();
  // The next input starts from the baseline again (or, keeping state,
  // from what was saved, which is the state).
}

void Refresh(ClusterBus& bus, cluster_node_fuzz::View* view) {
  for (const auto& [id, r] : ParseNodes(bus.NodesText())) {
    view->ids.push_back(id);
    SlotBitmap& bits = view->slots[id];
    for (const std::string& s : r.slots) {
      int first, last;
      if (s.front() == '[' || !ParseRange(s, &first, &last)) continue;
      for (int j = first; j <= last; j++) SetSlotBit(bits, j);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& fx = Env();
  cluster_node_fuzz::Reader in(data, size);
  const uint8_t header = in.Byte();
  if (!fx.keep_state || fx.bus == nullptr || std::stoi(InfoField(fx.bus->InfoText(), "cluster_known_nodes")) > 64) {
    fx.bus.reset();
    fx.settings = SettingsFor(header, fx.path);
    WriteFile(fx.path, BaselineConf());
    fx.bus = LoadBus(fx.settings);
  }
  ClusterBus& bus = *fx.bus;
  cluster_node_fuzz::Generator gen(
      &in,
      [&](std::string_view link) {
        const size_t ok = bus.FeedInboundForTest(link);
        if (ok > link.size() / kHeaderLen) Fail("more messages read than a link can hold", "");
        if (header & kHeaderCheckEachLink) CheckNode(bus, /*routes_fresh=*/false);
      },
      [&](cluster_node_fuzz::View* view) { Refresh(bus, view); });
  gen.Run();
  CheckNode(bus, /*routes_fresh=*/false);
  if (header & kHeaderRoundTrip) CheckRoundTrip(fx);
  return 0;
}
