// Replication commands (issue #38, docs/replication.md): REPLCONF and PSYNC
// from a replica, WAIT, ROLE, and REPLICAOF (the replica side).
#include <fcntl.h>

#include <cstdint>

#include "commands/common.h"
#include "core/numbers.h"
#include "net/socket.h"
#include "protocol/parser.h"
#include "server/bgsave.h"
#include "server/log.h"
#include "server/shard.h"

namespace peregrine {
namespace {

// ROLE: "master", the replication offset, and the replicas online (ip,
// port, acknowledged offset), as Redis.
void RoleCommand(CommandContext& ctx) {
  ReplicationPrimary& repl = ctx.server.replication();
  if (ReplicaLink* link = ctx.server.replica_link(); link != nullptr) {
    // A replica: its primary, the link's state, the offset applied.
    const ReplicaLink::Status st = link->status();
    ctx.reply.ArrayHeader(5);
    ctx.reply.Bulk("slave");
    ctx.reply.Bulk(link->host());
    ctx.reply.Integer(link->port());
    ctx.reply.Bulk(ReplicaLink::StateName(st.state));
    ctx.reply.Integer(st.up ? static_cast<int64_t>(repl.offset()) : -1);
    return;
  }
  std::vector<ReplicationPrimary::ReplicaInfo> online;
  for (auto& r : repl.Replicas())
    if (r.state == ReplicationPrimary::State::kOnline) online.push_back(r);
  ctx.reply.ArrayHeader(3);
  ctx.reply.Bulk("master");
  ctx.reply.Integer(static_cast<int64_t>(repl.offset()));
  ctx.reply.ArrayHeader(online.size());
  for (auto& r : online) {
    ctx.reply.ArrayHeader(3);
    ctx.reply.Bulk(r.ip);
    ctx.reply.Bulk(std::to_string(r.listening_port));
    ctx.reply.Bulk(std::to_string(r.ack_offset));
  }
}

// REPLCONF <option> <value> ...: what a replica tells before PSYNC
// (listening-port, ip-address, capa), and its acknowledgements (ACK, no
// reply), as Redis's replconfCommand.
void ReplconfCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  if (ctx.args.size() % 2 == 0) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  for (size_t i = 1; i < ctx.args.size(); i += 2) {
    std::string_view opt = ctx.args[i], val = ctx.args[i + 1];
    if (EqualsIgnoreCase(opt, "listening-port")) {
      int64_t port;
      if (!ParseIntArg(ctx, val, &port)) return;
      c.repl_port = static_cast<int>(port);
      if (c.replica) ctx.server.replication().SetListeningPort(c.id, c.repl_port);
    } else if (EqualsIgnoreCase(opt, "ip-address")) {
      if (val.size() >= 256) {  // (Redis's NET_HOST_STR_LEN)
        ctx.reply.Error("ERR REPLCONF ip-address provided by replica instance is too long: " +
                        std::to_string(val.size()) + " bytes");
        return;
      }
      c.repl_ip = std::string(val);
    } else if (EqualsIgnoreCase(opt, "capa")) {
      // Unknown capabilities are ignored, as Redis does.
      if (EqualsIgnoreCase(val, "eof")) c.repl_capa_eof = true;
      if (EqualsIgnoreCase(val, "psync2")) c.repl_capa_psync2 = true;
    } else if (EqualsIgnoreCase(opt, "rdb-only")) {
      // redis-cli --rdb: the snapshot alone, then the connection closes.
      int64_t on;
      if (!ParseIntInRange(ctx, val, 0, 1, &on)) return;
      c.repl_rdb_only = on == 1;
    } else if (EqualsIgnoreCase(opt, "rdb-filter-only")) {
      // Redis 7.2's (redis-cli --functions-rdb): what the snapshot keeps,
      // of "functions" only; an empty list keeps nothing.
      std::vector<std::string> filters;
      if (!SplitArgs(val, &filters)) {
        ctx.reply.Error("ERR Missing rdb-filter-only values");
        return;
      }
      uint8_t filter = BgSave::kNoData | BgSave::kNoFunctions;
      for (const std::string& f : filters) {
        if (!EqualsIgnoreCase(f, "functions")) {
          ctx.reply.Error("ERR Unsupported rdb-filter-only option: " + f);
          return;
        }
        filter &= static_cast<uint8_t>(~BgSave::kNoFunctions);
      }
      c.repl_rdb_filter = filter;
    } else if (EqualsIgnoreCase(opt, "ack")) {
      // From a replica only; never answered.
      if (!c.replica) return;
      int64_t offset, aof_offset = -1;
      if (!ParseInt64(val, &offset)) return;
      // (Redis 7.2's replicas add FACK <offset>: what their append-only
      // file holds, fsynced; WAITAOF counts it.)
      if (i + 3 < ctx.args.size() && EqualsIgnoreCase(ctx.args[i + 2], "fack") &&
          (!ParseInt64(ctx.args[i + 3], &aof_offset) || aof_offset < 0))
        aof_offset = -1;
      ctx.server.replication().Ack(c.id, static_cast<uint64_t>(std::max<int64_t>(offset, 0)), aof_offset,
                                   UnixTimeMs());
      return;
    } else if (EqualsIgnoreCase(opt, "getack")) {
      return;  // (for a replica to answer; a primary has nothing to say)
    } else {
      ctx.reply.Error("ERR Unrecognized REPLCONF option: " + AsCString(opt));
      return;
    }
  }
  ctx.reply.Ok();
}

// The replica's address as INFO and ROLE show it: what it said, else its
// connection's.
std::string ReplicaIp(const Client& c) {
  return !c.repl_ip.empty() ? c.repl_ip : std::string(AddressIp(c.addr));
}

// SYNC and PSYNC <replid> <offset> (every shard held): a continuation from
// the backlog (PSYNC), or a full resync: a snapshot sent by the BGSAVE's
// thread (diskless, or through the RDB file), then the stream from the
// snapshot's point on (Redis's syncCommand). SYNC is the protocol before PSYNC (redis-cli --replica,
// --rdb): the snapshot without a +FULLRESYNC line, and no ACKs expected.
void SyncCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  if (c.replica) return;  // (a replica's second SYNC is ignored, as Redis)
  const bool psync = ctx.args.size() >= 3;
  if (psync && ctx.args.size() > 3 && EqualsIgnoreCase(ctx.args[3], "failover")) {
    // FAILOVER's last step from our primary: we take over if its history
    // is ours, then answer the PSYNC as the primary we now are.
    LOG_NOTICE("Failover request received for replid %s.", AsCString(ctx.args[1]).c_str());
    if (!ctx.server.is_replica()) {
      ctx.reply.Error("ERR PSYNC FAILOVER can't be sent to a master.");
      return;
    }
    if (!EqualsIgnoreCase(ctx.args[1], ctx.server.repl_ids().replid)) {
      ctx.reply.Error("ERR PSYNC FAILOVER replid must match my replid.");
      return;
    }
    ctx.server.BecomePrimary();
    LOG_NOTICE("MASTER MODE enabled (failover request from '%s')",
               ctx.server.ClientInfoLine(c, UnixTimeMs()).c_str());
  }
  if (ctx.server.failing_over()) {
    ctx.reply.Error("NOMASTERLINK Can't SYNC while failing over");
    return;
  }
  int64_t offset = -1;
  if (psync && !ParseInt64(ctx.args[2], &offset)) {
    LOG_WARNING("Replica %s asks for synchronization but with a wrong offset", c.addr.c_str());
    ctx.reply.Error(kErrNotInteger);
    return;
  }
  // A replica serves replicas of its own only while it follows its
  // primary (chained replication: they get its primary's stream).
  if (ctx.server.is_replica() &&
      (ctx.server.replica_link() == nullptr || !ctx.server.replica_link()->up())) {
    ctx.reply.Error("NOMASTERLINK Can't SYNC while not connected with my master");
    return;
  }
  // (As Redis: the stream must start on an empty output.)
  if (!c.out.empty()) {
    ctx.reply.Error("ERR SYNC and PSYNC are invalid with pending output");
    return;
  }
  ServerState& server = ctx.server;
  ReplicationPrimary& repl = server.replication();
  ReplIds& ids = server.repl_ids();
  ReplicationPrimary::ReplicaInfo info;
  info.client_id = c.id;
  info.ip = ReplicaIp(c);
  info.listening_port = c.repl_port;
  info.last_ack_ms = UnixTimeMs();
  info.sync = !psync;
  info.rdb_only = c.repl_rdb_only;
  info.rdb_filter = c.repl_rdb_filter;
  // (Redis 7.2: a filtered snapshot goes to the socket, never to the file.)
  if (info.rdb_filter != 0 && !c.repl_capa_eof) {
    ctx.reply.Error("ERR Filtered replica requires EOF capability");
    return;
  }
  LOG_NOTICE("Replica %s asks for synchronization", info.ip.c_str());
  if (psync) {
    PsyncAnswer a = repl.Decide(ctx.args[1], offset, ids, c.repl_capa_psync2);
    if (a.partial && !c.repl_rdb_only) {
      c.replica = true;
      ctx.reply.Raw(a.line);
      const uint64_t sent = repl.offset() + 1 - a.from;
      repl.AttachContinue(info, ctx.worker.index(), a.from);
      server.repl_stats().partial_ok.fetch_add(1, std::memory_order_relaxed);
      LOG_NOTICE("Partial resynchronization request from %s accepted. Sending %llu bytes of backlog starting from "
                 "offset %lld.", info.ip.c_str(), static_cast<unsigned long long>(sent),
                 static_cast<long long>(a.from));
      return;
    }
    LOG_NOTICE("%s", a.reason.c_str());
    if (ctx.args[1] != "?") server.repl_stats().partial_err.fetch_add(1, std::memory_order_relaxed);
  }
  // As Redis 7: through the RDB file with repl-diskless-sync no, and
  // always for a replica that cannot read the diskless form.
  info.disk = !c.repl_capa_eof || (!server.config().repl_diskless_sync && info.rdb_filter == 0);
  if (!server.is_replica() && repl.EnsureBacklog(server.config().repl_backlog_size)) {
    // The first replica: the stream starts here, under a new ID (no
    // replica of an older history can continue it), as Redis does.
    ids.Change();
    ids.ClearSecond();
    for (size_t i = 0; i < server.num_shards(); i++) server.shard(i).SetLogRemovals(true);
    LOG_NOTICE("Replication backlog created, my new replication IDs are '%s' and '%s'", ids.replid.c_str(),
               ids.replid2.c_str());
  }
  // Where the snapshot's thread writes: over plain TCP the replica's socket
  // itself (a duplicate), its worker writing nothing to it meanwhile (the
  // +FULLRESYNC line comes first, from that thread); over TLS a socketpair
  // this worker reads, passing the bytes on through the TLS session.
  std::string err;
  const int fd = c.tls != nullptr ? ctx.worker.PumpSnapshot(c) : fcntl(c.fd, F_DUPFD_CLOEXEC, 0);
  if (!server.StartReplicaSync(info, ctx.worker.index(), fd, &err)) {
    ctx.reply.Error("ERR " + err);
    return;
  }
  c.replica = true;
  c.repl_hold = c.tls == nullptr;
  server.repl_stats().full.fetch_add(1, std::memory_order_relaxed);
}

// REPLICAOF (SLAVEOF) host port | NO ONE (every shard held), as Redis's
// replicaofCommand: follow a primary, or become one.
void ReplicaofCommand(CommandContext& ctx) {
  ServerState& server = ctx.server;
  const int64_t now_ms = UnixTimeMs();
  // (A cluster node follows its primary by CLUSTER REPLICATE.)
  if (server.cluster() != nullptr) return ctx.reply.Error("ERR REPLICAOF not allowed in cluster mode.");
  if (server.failing_over()) {
    ctx.reply.Error("ERR REPLICAOF not allowed while failing over.");
    return;
  }
  if (EqualsIgnoreCase(ctx.args[1], "no") && EqualsIgnoreCase(ctx.args[2], "one")) {
    if (server.is_replica()) {
      server.BecomePrimary();
      LOG_NOTICE("MASTER MODE enabled (user request from '%s')", server.ClientInfoLine(ctx.client, now_ms).c_str());
    }
    ctx.reply.Ok();
    return;
  }
  if (ctx.client.replica) {
    ctx.reply.Error("ERR Command is not valid when client is a replica.");
    return;
  }
  int64_t port;
  if (!ParseInt64(ctx.args[2], &port) || port < 0 || port > 65535) {
    ctx.reply.Error("ERR Invalid master port");
    return;
  }
  const std::string host(ctx.args[1]);
  if (!server.BecomeReplica(host, static_cast<int>(port))) {
    LOG_NOTICE("REPLICAOF would result into synchronization with the master we are already connected with. No "
               "operation performed.");
    ctx.reply.SimpleString("OK Already connected to specified master");
    return;
  }
  LOG_NOTICE("REPLICAOF %s:%d enabled (user request from '%s')", host.c_str(), static_cast<int>(port),
             server.ClientInfoLine(ctx.client, now_ms).c_str());
  ctx.reply.Ok();
}

// WAITAOF numlocal numreplicas timeout (every shard held), as Redis
// 7.2's: [whether this server's append-only file is durable up to this
// point, how many replicas said theirs is (REPLCONF ACK ... FACK)], waiting
// for numlocal (0 or 1) and numreplicas of them at most `timeout` ms (0:
// for ever). The point is the stream's end (as WAIT's) and, locally, what
// every shard logged so far, written to the file.
void WaitaofCommand(CommandContext& ctx) {
  int64_t need_local, need, timeout_ms;
  if (!ParseIntInRange(ctx, ctx.args[1], 0, 1, &need_local)) return;
  if (!ParseIntArg(ctx, ctx.args[2], &need)) return;
  if (need < 0) {
    ctx.reply.Error("ERR value is out of range, must be positive");
    return;
  }
  if (!ParseTimeoutMs(ctx, ctx.args[3], &timeout_ms)) return;
  ServerState& server = ctx.server;
  if (server.is_replica()) {
    ctx.reply.Error("ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas "
                    "are just local and are not propagated.");
    return;
  }
  AppendOnlyFile& aof = server.aof();
  if (need_local > 0 && !aof.active()) {
    ctx.reply.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
    return;
  }
  ReplicationPrimary& repl = server.replication();
  server.EmitShardChunks();
  const uint64_t offset = repl.offset();
  // (The file off: never durable here, as Redis's fsynced offset is none.)
  const uint64_t aof_target = aof.active() ? aof.written() : UINT64_MAX;
  const bool durable = aof.active() && !aof.write_failed() && !aof.waiting_for_base();
  const int local = durable && aof.synced() >= aof_target ? 1 : 0;
  const int acked = repl.CountAofAcks(offset);
  if ((local >= need_local && acked >= need) || ctx.worker.in_exec()) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(local);
    ctx.reply.Integer(acked);
    return;
  }
  ctx.client.wait_acks = true;
  const int64_t now_ms = UnixTimeMs();
  repl.AddAofWaiter(ctx.client.id, ctx.worker.index(), offset, need_local, aof_target, need,
                    timeout_ms > 0 ? now_ms + timeout_ms : 0);
}

// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | ABORT (every shard
// held), as Redis 7.2's failoverCommand (failover.cc does the rest).
void FailoverCommand(CommandContext& ctx) {
  ServerState& server = ctx.server;
  if (server.cluster() != nullptr) {
    return ctx.reply.Error("ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
  }
  if (ctx.args.size() == 2 && EqualsIgnoreCase(ctx.args[1], "abort")) {
    if (!server.AbortFailover("Failover manually aborted")) {
      ctx.reply.Error("ERR No failover in progress.");
      return;
    }
    ctx.reply.Ok();
    return;
  }
  int64_t timeout_ms = 0, port = 0;
  bool force = false;
  std::string host;
  bool has_host = false;
  for (size_t j = 1; j < ctx.args.size(); j++) {
    const std::string_view a = ctx.args[j];
    if (EqualsIgnoreCase(a, "timeout") && j + 1 < ctx.args.size() && timeout_ms == 0) {
      if (!ParseIntArg(ctx, ctx.args[j + 1], &timeout_ms)) return;
      if (timeout_ms <= 0) {
        ctx.reply.Error("ERR FAILOVER timeout must be greater than 0");
        return;
      }
      j++;
    } else if (EqualsIgnoreCase(a, "to") && j + 2 < ctx.args.size() && !has_host) {
      if (!ParseIntArg(ctx, ctx.args[j + 2], &port)) return;
      host = std::string(ctx.args[j + 1]);
      has_host = true;
      j += 2;
    } else if (EqualsIgnoreCase(a, "force") && !force) {
      force = true;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  // (The port is taken as an int, as Redis's findReplica takes it.)
  const std::string err = server.StartFailover(host, static_cast<int>(port), timeout_ms, force);
  if (!err.empty()) {
    ctx.reply.Error("ERR " + err);
    return;
  }
  ctx.reply.Ok();
}

// WAIT numreplicas timeout (every shard held): the number of replicas
// that acknowledged the stream up to this client's writes, waiting for
// `numreplicas` of them at most `timeout` ms (0: for ever), as Redis's
// waitCommand. Here the offset waited for is the stream's end when WAIT
// runs (every shard's logged commands fed first): at least every write of
// this client's, possibly others' too.
void WaitCommand(CommandContext& ctx) {
  if (ctx.server.is_replica()) {
    ctx.reply.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                    "replica is configured to be writable (which is not the default) writes to replicas are just "
                    "local and are not propagated.");
    return;
  }
  int64_t need, timeout_ms;
  if (!ParseIntArg(ctx, ctx.args[1], &need) || !ParseTimeoutMs(ctx, ctx.args[2], &timeout_ms)) return;
  const int64_t now_ms = UnixTimeMs();
  ServerState& server = ctx.server;
  ReplicationPrimary& repl = server.replication();
  server.EmitShardChunks();
  const uint64_t offset = repl.offset();
  const int acked = repl.CountAcks(offset);
  // Enough already, or it may not wait (MULTI, a script): the count now.
  if (acked >= need || ctx.worker.in_exec()) {
    ctx.reply.Integer(acked);
    return;
  }
  ctx.client.wait_acks = true;
  repl.AddWaiter(ctx.client.id, ctx.worker.index(), offset, need, timeout_ms > 0 ? now_ms + timeout_ms : 0);
}

}  // namespace

void RegisterReplicationCommands(CommandTable& t) {
  CommandFamily f(t, kAclAdmin | kAclDangerous, "server");
  f.Add({.name = "role", .arity = 1, .flags = kCmdNoscript | kCmdLoading | kCmdStale | kCmdFast | kCmdSentinel,
         .summary = "Returns the replication role.", .since = "2.8.12", .complexity = "O(1)", .handler = RoleCommand});
  f.Add({.name = "replconf", .arity = -1, .flags = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale | kCmdAllowBusy,
         .summary = "An internal command for configuring the replication stream.", .since = "3.0.0",
         .complexity = "O(1)", .handler = ReplconfCommand});
  f.Add({.name = "psync", .arity = -3, .flags = kCmdAdmin | kCmdNoscript | kCmdNoMulti | kCmdAllShards |
         kCmdNoAsyncLoading,
         .summary = "An internal command used in replication.", .since = "2.8.0", .complexity = "",
         .handler = SyncCommand});
  f.Add({.name = "sync", .arity = 1, .flags = kCmdAdmin | kCmdNoscript | kCmdNoMulti | kCmdAllShards |
         kCmdNoAsyncLoading,
         .summary = "An internal command used in replication.", .since = "1.0.0", .complexity = "",
         .handler = SyncCommand});
  for (const char* name : {"replicaof", "slaveof"})
    f.Add({.name = name, .arity = 3, .flags = kCmdAdmin | kCmdNoscript | kCmdStale | kCmdAllShards |
           kCmdNoAsyncLoading,
           .summary = "Configures a server as replica of another, or promotes it to a master.", .since = "5.0.0",
           .complexity = "O(1)", .handler = ReplicaofCommand});
  f.Add({.name = "failover", .arity = -1, .flags = kCmdAdmin | kCmdNoscript | kCmdStale | kCmdAllShards,
         .summary = "Starts a coordinated failover from a server to one of its replicas.", .since = "6.2.0",
         .complexity = "O(1)", .handler = FailoverCommand});
  CommandFamily g(t, kAclConnection, "generic");
  g.Add({.name = "waitaof", .arity = 4, .flags = kCmdNoscript | kCmdAllShards,
         .summary = "Blocks until all of the preceding write commands sent by the connection are written to the "
                    "append-only file of the master and/or replicas.",
         .since = "7.2.0", .complexity = "O(1)",
         .tips = {"request_policy:all_shards", "response_policy:agg_min"}, .handler = WaitaofCommand});
  g.Add({.name = "wait", .arity = 3, .flags = kCmdNoscript | kCmdAllShards,
         .summary = "Blocks until the asynchronous replication of all preceding write commands sent by the "
                    "connection is completed.",
         .since = "3.0.0", .complexity = "O(1)",
         .tips = {"request_policy:all_shards", "response_policy:agg_min"}, .handler = WaitCommand});
}

}  // namespace peregrine
