// DEBUG (a protected command: enable-debug-command decides who may run it;
// the worker checks before the handler runs): the subcommands Redis's own
// test suite and tools use — SLEEP, SET-ACTIVE-EXPIRE, RELOAD, OBJECT,
// PROTOCOL (one reply of each RESP type), SET-DISABLE-DENY-SCRIPTS (lets
// scripts call DEBUG itself), POPULATE, LOG, ERROR, CHANGE-REPL-ID,
// STRINGMATCH-TEST, SET-SKIP-CHECKSUM-VALIDATION, REPLYBUFFER,
// CONFIG-REWRITE-FORCE-ALL, those about layout (debug_structure.cc) — and
// HELP.
#include <cstdio>
#include <random>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "commands/cluster_migrate_commands.h"
#include "commands/common.h"
#include "commands/debug_digest.h"
#include "commands/debug_structure.h"
#include "commands/persistence_commands.h"
#include "core/glob.h"
#include "persist/rdb_writer.h"
#include "server/log.h"

namespace peregrine {

namespace {

void DebugSleep(CommandContext& ctx) {
  // As Redis: the argument is read with strtod, so junk means 0.
  const std::string s(ctx.args[2]);
  const double seconds = strtod(s.c_str(), nullptr);
  if (seconds > 0) {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(seconds);
    ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
  ctx.reply.Ok();
}

// DEBUG OBJECT key: Redis's line about the value (its address, refcount,
// encoding, the length its RDB form takes, the LRU clock and idle seconds).
// Lists add Redis's quicklist fields only in Redis; here the list's own
// encoding name says what it is.
void DebugObject(CommandContext& ctx) {
  const std::string_view key = ctx.args[2];
  Shard& shard = ctx.ShardOf(key);
  // As Redis: the key as stored, expired or not (nothing is deleted here).
  Db::Entry* e = shard.db(ctx.client.db).FindRaw(key);
  if (e == nullptr) {
    ctx.reply.Error("ERR no such key");
    return;
  }
  RdbWriter w;
  w.Object(e->value);
  const uint64_t idle = shard.access().mode() == AccessTracker::Mode::kLfu ? 0 : shard.access().IdleSeconds(e->value.access());
  char line[256];
  snprintf(line, sizeof(line), "Value at:%p refcount:1 encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%llu",
           static_cast<const void*>(e), std::string(e->value.EncodingName()).c_str(), static_cast<size_t>(w.bytes()),
           static_cast<unsigned>((ctx.now_ms / 1000) & ((1u << 24) - 1)), static_cast<unsigned long long>(idle));
  ctx.reply.SimpleString(line);
}

// DEBUG PROTOCOL <type>: one reply of that RESP type (Redis's values).
void DebugProtocol(CommandContext& ctx) {
  const std::string_view name = ctx.args[2];
  ReplyWriter& r = ctx.reply;
  if (EqualsIgnoreCase(name, "string")) {
    r.Bulk("Hello World");
  } else if (EqualsIgnoreCase(name, "integer")) {
    r.Integer(12345);
  } else if (EqualsIgnoreCase(name, "double")) {
    r.Double(3.141);
  } else if (EqualsIgnoreCase(name, "bignum")) {
    r.BigNumber("1234567999999999999999999999999999999");
  } else if (EqualsIgnoreCase(name, "null")) {
    r.Null();
  } else if (EqualsIgnoreCase(name, "array") || EqualsIgnoreCase(name, "set")) {
    if (EqualsIgnoreCase(name, "set"))
      r.SetHeader(3);
    else
      r.ArrayHeader(3);
    for (int j = 0; j < 3; j++) r.Integer(j);
  } else if (EqualsIgnoreCase(name, "map")) {
    r.MapHeader(3);
    for (int j = 0; j < 3; j++) {
      r.Integer(j);
      r.Bool(j == 1);
    }
  } else if (EqualsIgnoreCase(name, "attrib")) {
    if (r.resp() >= 3) {  // an attribute, then the real reply (RESP2 has none)
      r.Raw("|1\r\n");
      r.Bulk("key-popularity");
      r.ArrayHeader(2);
      r.Bulk("key:123");
      r.Integer(90);
    }
    r.Bulk("Some real reply following the attribute");
  } else if (EqualsIgnoreCase(name, "push")) {
    if (r.resp() < 3) {
      r.Error("ERR RESP2 is not supported by this command");
      return;
    }
    r.PushHeader(2);
    r.Bulk("server-cpu-usage");
    r.Integer(42);
    r.Bulk("Some real reply following the push reply");
  } else if (EqualsIgnoreCase(name, "true") || EqualsIgnoreCase(name, "false")) {
    r.Bool(EqualsIgnoreCase(name, "true"));
  } else if (EqualsIgnoreCase(name, "verbatim")) {
    r.Verbatim("This is a verbatim\nstring", "txt");
  } else {
    r.Error(
        "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// DEBUG POPULATE count [prefix] [size]: string keys <prefix>:<n> ("key" by
// default) of the client's database, valued "value:<n>" (cut or padded with
// zero bytes to `size` when given); keys that exist are left alone (Redis).
void DebugPopulate(CommandContext& ctx) {
  int64_t count = 0, size = 0;
  // (Redis's getPositiveLongFromObjectOrReply: one text for both errors.)
  static constexpr std::string_view kNotPositive = "ERR value is out of range, must be positive";
  auto positive = [&](std::string_view arg, int64_t* out) {
    if (!ParseIntArg(ctx, arg, out, kNotPositive)) return false;
    if (*out < 0) {
      ctx.reply.Error(kNotPositive);
      return false;
    }
    return true;
  };
  if (!positive(ctx.args[2], &count)) return;
  if (ctx.args.size() == 5 && !positive(ctx.args[4], &size)) return;
  const std::string prefix = ctx.args.size() >= 4 ? AsCString(ctx.args[3]) : "key";  // (%s: up to a NUL)
  for (int64_t j = 0; j < count; j++) {
    const std::string key = prefix + ":" + std::to_string(j);
    Db& db = ctx.DbOf(key);
    if (db.Find(key, ctx.now_ms) != nullptr) continue;
    std::string value = "value:" + std::to_string(j);
    if (size > 0) value.resize(static_cast<size_t>(size), '\0');
    InsertKey(ctx, db, key, Value::String(value));
    SignalModifiedKey(ctx, key);
  }
  ctx.reply.Ok();
}

// DEBUG STRINGMATCH-TEST: random patterns against random strings through
// the glob matcher, as Redis's stringmatchlen_fuzz_test (a crash or a hang
// is the failure).
void DebugStringmatchTest(CommandContext& ctx) {
  std::mt19937_64 rng(static_cast<uint64_t>(ctx.now_ms));
  auto random_bytes = [&](size_t max) {
    std::string s(rng() % (max + 1), '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 256);
    return s;
  };
  size_t matched = 0;
  for (int i = 0; i < 100000; i++) matched += GlobMatch(random_bytes(32), random_bytes(32)) ? 1 : 0;
  (void)matched;
  ctx.reply.SimpleString("Apparently Redis did not crash: test passed");
}

// The DEBUG switches that take 0 or 1 (atoi, as Redis: anything but a
// non-zero number turns them off).
void SetSwitch(CommandContext& ctx, std::atomic<bool>& knob) {
  knob.store(std::atoi(std::string(ctx.args[2]).c_str()) != 0, std::memory_order_relaxed);
  ctx.reply.Ok();
}

// DEBUG REPLYBUFFER PEAK-RESET-TIME <never|reset|ms> | RESIZING <0|1>
// (server/debug_knobs.h: when an idle client's buffers are given back).
void DebugReplyBuffer(CommandContext& ctx) {
  DebugKnobs& knobs = ctx.server.debug();
  const std::string_view what = ctx.args[2], value = ctx.args[3];
  if (EqualsIgnoreCase(what, "peak-reset-time")) {
    int64_t ms = DebugKnobs::kDefaultBufferFreeMs;
    if (EqualsIgnoreCase(value, "never"))
      ms = -1;
    else if (!EqualsIgnoreCase(value, "reset") && !ParseIntArg(ctx, value, &ms))
      return;
    knobs.buffer_free_ms.store(ms < 0 ? -1 : ms, std::memory_order_relaxed);
  } else if (EqualsIgnoreCase(what, "resizing")) {
    knobs.reply_buffer_resizing.store(std::atoi(std::string(value).c_str()) != 0, std::memory_order_relaxed);
  } else {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ctx.reply.Ok();
}

// DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE with every directive
// written, those at their defaults too.
void DebugConfigRewriteForceAll(CommandContext& ctx) {
  std::string err;
  if (ctx.server.config_file().empty()) {
    ctx.reply.Error("ERR CONFIG-REWRITE-FORCE-ALL failed: The server is running without a config file");
  } else if (!RewriteConfigFile(ctx.server.config_file(), ctx.server.config(), &err, /*force_all=*/true)) {
    ctx.reply.Error("ERR CONFIG-REWRITE-FORCE-ALL failed: " + err);
  } else {
    ctx.reply.Ok();
  }
}

void DebugHelp(CommandContext& ctx) {
  ReplyHelp(ctx, {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "CHANGE-REPL-ID",
                  "    Change the replication IDs of the instance.",
                  "    Dangerous: should be used only for testing the replication subsystem.",
                  "CONFIG-REWRITE-FORCE-ALL",
                  "    CONFIG REWRITE writing every configuration directive, defaults included.",
                  "DIGEST",
                  "    Output a hex signature representing the current DB content.",
                  "DIGEST-VALUE <key> [<key> ...]",
                  "    Output a hex signature of the values of all the specified keys.",
                  "ERROR <string>",
                  "    Return a Redis protocol error with <string> as message. Useful for clients",
                  "    unit tests to simulate Redis errors.",
                  "HTSTATS <dbid> [full]",
                  "    Statistics of the keyspace table of database <dbid> (each shard's).",
                  "HTSTATS-KEY <key> [full]",
                  "    Statistics of the table holding the hash or set at <key>.",
                  "LISTPACK <key>",
                  "    Write the entries of the listpack-encoded value at <key> to the log.",
                  "LOADAOF",
                  "    Flush the AOF buffers on disk and reload the AOF in memory.",
                  "LOG <message>",
                  "    Write <message> to the server log.",
                  "OBJECT <key>",
                  "    Show low level info about the `key` and associated value.",
                  "PAUSE-CRON <0|1>",
                  "    Stop periodic cron job processing.",
                  "POPULATE <count> [<prefix>] [<size>]",
                  "    Create <count> string keys named key:<num>. If <prefix> is specified then",
                  "    it is used instead of the 'key' prefix. These are not propagated to",
                  "    replicas. Cluster slots are not respected so keys not belonging to the",
                  "    current node can be created in cluster mode.",
                  "PROTOCOL <type>",
                  "    Reply with a test value of the specified type. <type> can be: string,",
                  "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
                  "    true, false.",
                  "QUICKLIST <key> [<0|1|2>]",
                  "    Write the quicklist at <key> to the log: 1 adds its nodes, 2 their entries.",
                  "QUICKLIST-PACKED-THRESHOLD <size>",
                  "    List items of at least <size> bytes become nodes of their own (default 1gb,",
                  "    at most 4gb; 0 restores the default).",
                  "RELOAD [option ...]",
                  "    Save the RDB on disk and reload it back to memory. Available <option> values:",
                  "    * MERGE: Merge the content of the RDB instead of flushing the current data.",
                  "    * NOFLUSH: Do not flush the current data before loading the RDB.",
                  "    * NOSAVE: Do not save the current data before loading the RDB.",
                  "REPLYBUFFER PEAK-RESET-TIME <NEVER|RESET|<ms>>",
                  "    After how long idle a client gives back its buffers (NEVER: never; RESET: the default).",
                  "REPLYBUFFER RESIZING <0|1>",
                  "    0 keeps idle clients' reply buffers; 1 gives them back again.",
                  "SET-ACTIVE-EXPIRE <0|1>",
                  "    Setting it to 0 disables expiring keys in the background when they are not accessed (otherwise "
                  "the Redis behavior). Setting it to 1 reenables back the default.",
                  "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
                  "    Load RDB files and DUMP payloads without checking their checksum.",
                  "SET-DISABLE-DENY-SCRIPTS <0|1>",
                  "    Enable calling commands which are not allowed inside scripts (here: DEBUG).",
                  "SLEEP <seconds>",
                  "    Stop the server for <seconds>. Decimals allowed.",
                  "SLOTMIGRATION PREVENT-PAUSE <0|1>",
                  "    Atomic slot migrations started here stream on and never pause writes for their handover.",
                  "SLOTMIGRATION PREVENT-FAILOVER <0|1>",
                  "    Atomic slot migrations started here hold their slots' writes paused before the handover.",
                  "STRINGMATCH-TEST",
                  "    Run a fuzz tester against the stringmatchlen() function.",
                  "HELP",
                  "    Print this help."});
}

void DebugCommand(CommandContext& ctx) {
  const std::string_view sub = ctx.args[1];
  const size_t argc = ctx.args.size();
  DebugKnobs& knobs = ctx.server.debug();
  if (EqualsIgnoreCase(sub, "sleep") && argc == 3) {
    DebugSleep(ctx);
  } else if (EqualsIgnoreCase(sub, "set-active-expire") && argc == 3) {
    SetSwitch(ctx, knobs.active_expire);
  } else if (EqualsIgnoreCase(sub, "set-disable-deny-scripts") && argc == 3) {
    SetSwitch(ctx, knobs.script_disable_deny);
  } else if (EqualsIgnoreCase(sub, "set-skip-checksum-validation") && argc == 3) {
    SetSwitch(ctx, knobs.skip_checksum_validation);
  } else if (EqualsIgnoreCase(sub, "listpack") && argc == 3) {
    DebugListpack(ctx);
  } else if (EqualsIgnoreCase(sub, "quicklist") && (argc == 3 || argc == 4)) {
    DebugQuicklist(ctx);
  } else if (EqualsIgnoreCase(sub, "quicklist-packed-threshold") && argc == 3) {
    DebugQuicklistPackedThreshold(ctx);
  } else if (EqualsIgnoreCase(sub, "htstats") && argc >= 3) {
    DebugHtstats(ctx);
  } else if (EqualsIgnoreCase(sub, "htstats-key") && argc >= 3) {
    DebugHtstatsKey(ctx);
  } else if (EqualsIgnoreCase(sub, "replybuffer") && argc == 4) {
    DebugReplyBuffer(ctx);
  } else if (EqualsIgnoreCase(sub, "config-rewrite-force-all") && argc == 2) {
    DebugConfigRewriteForceAll(ctx);
  } else if (EqualsIgnoreCase(sub, "object") && argc == 3) {
    DebugObject(ctx);
  } else if (EqualsIgnoreCase(sub, "protocol") && argc == 3) {
    DebugProtocol(ctx);
  } else if (EqualsIgnoreCase(sub, "reload")) {
    DebugReloadCommand(ctx);
  } else if (EqualsIgnoreCase(sub, "digest") && argc == 2) {
    DebugDigest(ctx);
  } else if (EqualsIgnoreCase(sub, "digest-value") && argc >= 2) {
    DebugDigestValue(ctx);
  } else if (EqualsIgnoreCase(sub, "slotmigration") && argc >= 3) {
    DebugSlotMigration(ctx);
  } else if (EqualsIgnoreCase(sub, "populate") && argc >= 3 && argc <= 5) {
    DebugPopulate(ctx);
  } else if (EqualsIgnoreCase(sub, "log") && argc == 3) {
    LOG_WARNING("DEBUG LOG: %s", AsCString(ctx.args[2]).c_str());
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "error") && argc == 3) {
    // Written raw, as Redis's addReplySds: not counted as an error reply
    // (errorstats, failed_calls), which Redis leaves it out of too.
    std::string text = "-" + std::string(ctx.args[2]);
    for (char& ch : text)
      if (ch == '\r' || ch == '\n') ch = ' ';  // (no newlines in an error)
    ctx.reply.Raw(text + "\r\n");
  } else if (EqualsIgnoreCase(sub, "change-repl-id") && argc == 2) {
    LOG_NOTICE("Changing replication IDs after receiving DEBUG change-repl-id");
    ctx.server.repl_ids().Change();
    ctx.server.repl_ids().ClearSecond();
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(sub, "loadaof") && argc == 2) {
    std::string err;
    if (!ctx.server.LoadAof(ctx.worker.index(), &err)) {
      LOG_WARNING("DEBUG LOADAOF failed: %s", err.c_str());
      ctx.reply.Error("ERR " + err);
    } else {
      LOG_NOTICE("Append Only File loaded by DEBUG LOADAOF");
      ctx.reply.Ok();
    }
  } else if (EqualsIgnoreCase(sub, "pause-cron") && argc == 3) {
    SetSwitch(ctx, knobs.cron_paused);
  } else if (EqualsIgnoreCase(sub, "stringmatch-test") && argc == 2) {
    DebugStringmatchTest(ctx);
  } else if (EqualsIgnoreCase(sub, "help") && argc == 2) {
    DebugHelp(ctx);
  } else {
    ReplySubcommandSyntaxError(ctx);
  }
}

}  // namespace

void RegisterDebugCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  f.Add({.name = "debug", .arity = -2,
         .flags = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale | kCmdAllShards | kCmdProtected,
         .summary = "A container for debugging commands.", .since = "1.0.0", .complexity = "Depends on subcommand.",
         .handler = DebugCommand});
}

}  // namespace peregrine
