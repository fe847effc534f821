// Redis Cluster's redirections (cluster_route.h), as Redis 7.2's
// getNodeByQuery decides them.
#include "server/cluster_route.h"

#include <algorithm>

#include "core/db.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server_state.h"

namespace peregrine {

bool ClusterRoute::enabled() const { return server_.cluster() != nullptr; }

bool ClusterRoute::Checked(const CommandSpec& spec) {
  return spec.first_key > 0 || (spec.flags & (kCmdExec | kCmdShardChannels));
}

const SlotRoutes& ClusterRoute::routes() {
  ClusterService* cluster = server_.cluster();
  const uint64_t v = cluster->routes_version();
  if (v != version_ || routes_ == nullptr) {
    routes_ = cluster->Routes();
    version_ = v;
  }
  return *routes_;
}

ClusterRoute::Verdict ClusterRoute::Check(const Client& c, const CommandSpec& spec,
                                          std::span<const std::string_view> args, const DbOf& db_of, int64_t now_ms,
                                          std::string* error) {
  const SlotRoutes& r = routes();
  // (A client over TLS is sent to TLS ports.)
  const std::vector<std::string>& endpoints = c.tls != nullptr ? r.tls_endpoints : r.endpoints;
  last_slot_ = -1;
  bool any_key = false, multiple_keys = false, migrating = false, importing = false, writes = false;
  uint32_t slot = 0;
  std::string_view first_key;
  int missing = 0, existing = 0;
  bool migrate_cmd = false;
  // SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH: their channels count as keys,
  // served on the slot's replicas too and (cluster-allow-pubsubshard-when-
  // down) while the cluster is down; a slot being moved keeps them here
  // until it is handed over (Redis's is_pubsubshard: the command itself,
  // never EXEC, whose queued SPUBLISH's channel is a key like any other).
  const bool pubsubshard = spec.flags & kCmdShardChannels;
  bool real_key = false;
  // One command's keys into the tally; false when the verdict is already
  // known (*verdict).
  Verdict verdict = Verdict::kServe;
  auto tally = [&](const CommandSpec& s, std::span<const std::string_view> a) {
    const bool channels = s.flags & kCmdShardChannels;
    if (channels) {
      positions_.clear();
      const size_t end = s.arity == 3 ? std::min<size_t>(a.size(), 2) : a.size();  // SPUBLISH: its one channel
      for (size_t i = 1; i < end; i++) positions_.push_back(i);
    } else if (s.first_key <= 0 || !s.KeyPositions(a, &positions_)) {
      return true;
    } else {
      real_key = real_key || !positions_.empty();
    }
    if (s.flags & kCmdWrite) writes = true;
    if (s.name == "migrate") migrate_cmd = true;
    for (size_t pos : positions_) {
      const std::string_view key = a[pos];
      const uint32_t ks = SlotOf(key);
      if (!any_key) {
        any_key = true;
        first_key = key;
        slot = ks;
        const uint16_t owner = r.owner[slot];
        if (owner == SlotRoutes::kUnassigned) {
          *error = "CLUSTERDOWN Hash slot not served";
          verdict = Verdict::kRefuse;
          return false;
        }
        if (owner == SlotRoutes::kMine && r.migrating_to[slot] != SlotRoutes::kUnassigned)
          migrating = true;
        else if (r.importing.test(slot))
          importing = true;
      } else if (key != first_key) {
        if (ks != slot) {
          *error = "CROSSSLOT Keys in request don't hash to the same slot";
          verdict = Verdict::kRefuse;
          return false;
        }
        multiple_keys = true;
      }
      if ((migrating || importing) && !pubsubshard) {
        Db* db = db_of ? db_of(key) : nullptr;
        if (db == nullptr) {
          verdict = Verdict::kOpen;
          continue;  // (the CROSSSLOT check goes on)
        }
        if (db->Find(CompactKey::MakeProbe(key), now_ms, /*touch=*/false) == nullptr)
          missing++;
        else
          existing++;
      }
    }
    return true;
  };
  if ((spec.flags & kCmdExec) && c.multi != nullptr) {
    // EXEC: the queued commands together.
    const Client::Transaction& t = *c.multi;
    std::vector<std::string_view> a;
    size_t arg = 0, off = 0;
    for (const Client::Transaction::Queued& q : t.commands) {
      a.clear();
      for (uint32_t i = 0; i < q.argc; i++, arg++) {
        a.emplace_back(t.bytes.data() + off, t.arg_sizes[arg]);
        off += t.arg_sizes[arg];
      }
      if (q.spec != nullptr && !tally(*q.spec, a)) return verdict;
    }
  } else if (!tally(spec, args)) {
    return verdict;
  }
  last_slot_ = real_key ? static_cast<int>(slot) : -1;
  if (!any_key) return Verdict::kServe;
  // An atomic slot migration's importing client: its slots are served
  // here before they are this node's.
  if (c.import_slots != nullptr && (*c.import_slots)[slot]) [[unlikely]]
    return Verdict::kServe;
  if (!r.ok) {
    const Config::ClusterSettings& cs = server_.config().cluster;
    if (pubsubshard ? !cs.allow_pubsubshard_when_down : !cs.allow_reads_when_down) {
      *error = "CLUSTERDOWN The cluster is down";
      return Verdict::kRefuse;
    }
    if (writes && !pubsubshard) {
      *error = "CLUSTERDOWN The cluster is down and only accepts read commands";
      return Verdict::kRefuse;
    }
  }
  if (verdict == Verdict::kOpen) return Verdict::kOpen;
  // MIGRATE itself works on an open slot.
  if ((migrating || importing) && migrate_cmd) return Verdict::kServe;
  if (migrating && missing > 0) {
    if (existing > 0) {
      *error = "TRYAGAIN Multiple keys request during rehashing of slot";
    } else {
      *error = "ASK " + std::to_string(slot) + " " + endpoints[r.migrating_to[slot]];
    }
    return Verdict::kRefuse;
  }
  if (importing && (c.asking || (spec.flags & kCmdAsking))) {
    if (multiple_keys && missing > 0) {
      *error = "TRYAGAIN Multiple keys request during rehashing of slot";
      return Verdict::kRefuse;
    }
    return Verdict::kServe;
  }
  const uint16_t owner = r.owner[slot];
  // A READONLY client reads its primary's slots from this replica (and
  // any client uses its shard channels).
  if ((c.cluster_readonly || pubsubshard) && !writes && r.my_primary != SlotRoutes::kUnassigned && owner == r.my_primary)
    return Verdict::kServe;
  if (owner != SlotRoutes::kMine) {
    *error = "MOVED " + std::to_string(slot) + " " + endpoints[owner];
    return Verdict::kRefuse;
  }
  return Verdict::kServe;
}

std::string ClusterRoute::ScriptCallError(const Client& caller, const CommandSpec& cmd,
                                          std::span<const std::string_view> args, const DbOf& db_of, int64_t now_ms,
                                          int* slot, bool cross_slot_ok) {
  if (!Checked(cmd) || caller.obeyed) return "";
  std::string error;
  if (Check(caller, cmd, args, db_of, now_ms, &error) == Verdict::kRefuse) {
    if (error.starts_with("CLUSTERDOWN The cluster is down and"))
      return "Script attempted to execute a write command while the cluster is down and readonly";
    if (error.starts_with("CLUSTERDOWN The cluster is down"))
      return "Script attempted to execute a command while the cluster is down";
    // (Redis 7.2 words every other refusal so; 7.4 tells them apart.)
    return "Script attempted to access a non local key in a cluster node";
  }
  // Keys of one slot per script (those it declared, or its first call's).
  if (cmd.first_key > 0 && !cross_slot_ok && cmd.KeyPositions(args, &positions_) && !positions_.empty()) {
    const int s = static_cast<int>(SlotOf(args[positions_[0]]));
    if (*slot == -1)
      *slot = s;
    else if (*slot != s)
      return "Script attempted to access keys that do not hash to the same slot";
  }
  return "";
}

}  // namespace peregrine
