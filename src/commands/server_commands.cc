// Server commands: INFO, COMMAND (COUNT, INFO, DOCS, LIST, GETKEYS, GETKEYSANDFLAGS, HELP),
// CONFIG (GET, SET, RESETSTAT, HELP), TIME, SHUTDOWN, DEBUG.
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/memory_doctor.h"
#include "commands/persistence_commands.h"
#include "core/glob.h"
#include "core/memory.h"
#include "core/numbers.h"
#include "net/event_loop.h"
#include "server/client.h"
#include "server/key_specs.h"
#include "server/log.h"

// mimalloc's collection and statistics, when the binary is linked with it
// (weak: the unit tests and the libc build do without).
extern "C" void mi_collect(bool force) __attribute__((weak));
extern "C" void mi_stats_print_out(void (*out)(const char* msg, void* arg), void* arg) __attribute__((weak));

namespace peregrine {
namespace {

void InfoCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(ctx.server.Info(ctx.args.subspan(1), ctx.now_ms));
}

void TimeCommand(CommandContext& ctx) {
  int64_t us = UnixTimeUs();
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::to_string(us / 1000000));
  ctx.reply.Bulk(std::to_string(us % 1000000));
}

// As Redis 7: with replicas online that have not acknowledged the whole
// stream, SHUTDOWN (without NOW) pauses writes and waits up to
// shutdown-timeout seconds for them; then (Worker::ServeReplicas) it saves
// and shuts down as it would have. True if the client now waits.
bool ShutdownWaitsForReplicas(CommandContext& ctx, bool save, bool nosave, bool force) {
  ServerState& server = ctx.server;
  const bool saves = !nosave && (save || !server.config().save_params.empty()) && !server.any_loading();
  if (!server.BeginShutdownWait(saves, force, ctx.client.id, ctx.worker.index())) return false;
  ctx.client.wait_acks = true;
  return true;
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: first, unless NOW, a wait
// for lagging replicas (above); then the snapshot (unless NOSAVE, or no
// schedule and no SAVE); a failed one keeps the server running unless FORCE.
void ShutdownCommand(CommandContext& ctx) {
  bool save = false, nosave = false, abort = false, other = false, force = false, now = false;
  for (size_t i = 1; i < ctx.args.size(); i++) {
    std::string_view o = ctx.args[i];
    if (EqualsIgnoreCase(o, "nosave")) nosave = true;
    else if (EqualsIgnoreCase(o, "save")) save = true;
    else if (EqualsIgnoreCase(o, "now")) other = now = true;
    else if (EqualsIgnoreCase(o, "force")) other = force = true;
    else if (EqualsIgnoreCase(o, "abort")) abort = true;
    else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  if ((save && nosave) || (abort && (save || nosave || other))) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  if (abort) {
    // (A SHUTDOWN waiting for replicas stops waiting; its clients get an error.)
    if (ctx.server.AbortShutdownWait()) {
      LOG_WARNING("Shutdown manually aborted.");
      ctx.reply.Ok();
    } else {
      ctx.reply.Error("ERR No shutdown in progress.");
    }
    return;
  }
  // (Not during a busy script: SHUTDOWN NOSAVE then runs without the
  // shards, and stops the script at once.)
  const bool script_busy = ctx.server.busy_scripts().load(std::memory_order_relaxed) > 0;
  if (!now && !script_busy && ShutdownWaitsForReplicas(ctx, save, nosave, force)) return;
  if (!SaveForShutdown(ctx, save, nosave) && !force) {
    ctx.reply.Error("ERR Errors trying to SHUTDOWN. Check logs.");
    return;
  }
  ctx.server.RequestShutdown();
  // Nothing after SHUTDOWN in the same pipeline runs (Redis exits inside
  // the command); what came before is still answered.
  ctx.worker.CloseAfterReply(ctx.client);
}

// --- COMMAND ---

void ReplyStringSet(CommandContext& ctx, const std::vector<std::string_view>& items) {
  ctx.reply.SetHeader(items.size());
  for (auto s : items) ctx.reply.SimpleString(s);
}

// A command's key range as COMMAND INFO shows it: its keys', or the shard
// channels' of SPUBLISH (1 1 1) and (S)SUBSCRIBE (1 -1 1), which Redis
// gives a key spec flagged not_key.
struct KeyRange {
  int first, last, step;
};
KeyRange RangeOf(const CommandSpec& cmd) {
  if (cmd.flags & kCmdShardChannels) return {1, cmd.arity == 3 ? 1 : -1, 1};
  return {cmd.first_key, cmd.last_key, cmd.key_step};
}

void ReplyCommandInfo(CommandContext& ctx, const CommandSpec& cmd) {
  ctx.reply.ArrayHeader(10);
  ctx.reply.Bulk(cmd.fullname);
  ctx.reply.Integer(cmd.arity);
  ReplyStringSet(ctx, FlagNames(cmd.flags));
  // A numkeys command has no legacy key range (Redis reports 0 0 0), nor
  // one whose key specs have no index-and-range spec (XREAD's keys follow
  // a keyword): Redis derives the range from those specs alone.
  const auto specs = KeySpecsOf(cmd.fullname);
  const bool range = (cmd.numkeys_index == 0 || cmd.first_key < cmd.numkeys_index) &&  // ZUNIONSTORE: its destination
                     (specs.empty() || std::any_of(specs.begin(), specs.end(), [](const KeySpec& s) {
                        return s.begin.type == KeyBegin::kIndex && s.find.type == KeyFind::kRange;
                      }));
  const KeyRange k = RangeOf(cmd);
  ctx.reply.Integer(range ? k.first : 0);
  ctx.reply.Integer(range ? k.last : 0);
  ctx.reply.Integer(range ? k.step : 0);
  ReplyStringSet(ctx, AclCategoryNames(cmd.AclCategories()));
  ReplyStringSet(ctx, cmd.tips);
  WriteKeySpecs(ctx.reply, specs);
  ctx.reply.ArrayHeader(cmd.subcommands.size());
  for (const CommandSpec& sub : cmd.subcommands) ReplyCommandInfo(ctx, sub);
}

void ReplyCommandDocs(CommandContext& ctx, const CommandSpec& cmd) {
  bool subs = !cmd.subcommands.empty();
  // (A command without a complexity, as MONITOR, has no such field: Redis's.)
  const bool complexity = !cmd.complexity.empty();
  ctx.reply.MapHeader(3 + (complexity ? 1 : 0) + (subs ? 1 : 0));
  ctx.reply.Bulk("summary");
  ctx.reply.Bulk(cmd.summary);
  ctx.reply.Bulk("since");
  ctx.reply.Bulk(cmd.since);
  ctx.reply.Bulk("group");
  ctx.reply.Bulk(cmd.group);
  if (complexity) {
    ctx.reply.Bulk("complexity");
    ctx.reply.Bulk(cmd.complexity);
  }
  if (subs) {
    ctx.reply.Bulk("subcommands");
    ctx.reply.MapHeader(cmd.subcommands.size());
    for (const CommandSpec& sub : cmd.subcommands) {
      ctx.reply.Bulk(sub.fullname);
      ReplyCommandDocs(ctx, sub);
    }
  }
}

// A command named "parent" or "parent|sub".
const CommandSpec* FindByFullName(const CommandTable& table, std::string_view name) {
  size_t bar = name.find('|');
  if (bar == std::string_view::npos) return table.Find(name);
  const CommandSpec* parent = table.Find(name.substr(0, bar));
  return parent ? CommandTable::FindSubcommand(*parent, name.substr(bar + 1)) : nullptr;
}

// The commands clients can reach (rename-command may have removed some).
std::vector<const CommandSpec*> ListedCommands(const CommandTable& table) {
  std::vector<const CommandSpec*> out;
  for (const auto& cmd : table.all())
    if (table.Listed(*cmd)) out.push_back(cmd.get());
  return out;
}

void CommandCommand(CommandContext& ctx) {
  const auto listed = ListedCommands(ctx.server.commands());
  ctx.reply.ArrayHeader(listed.size());
  for (const CommandSpec* cmd : listed) ReplyCommandInfo(ctx, *cmd);
}

void CommandCountCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ListedCommands(ctx.server.commands()).size()));
}

void CommandInfoCommand(CommandContext& ctx) {
  if (ctx.args.size() == 2) {
    CommandCommand(ctx);
    return;
  }
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    const CommandSpec* cmd = FindByFullName(ctx.server.commands(), ctx.args[i]);
    if (cmd == nullptr)
      ctx.reply.NullArray();
    else
      ReplyCommandInfo(ctx, *cmd);
  }
}

void CommandDocsCommand(CommandContext& ctx) {
  std::vector<const CommandSpec*> found;
  if (ctx.args.size() == 2) {
    found = ListedCommands(ctx.server.commands());
  } else {
    for (size_t i = 2; i < ctx.args.size(); i++)
      if (const CommandSpec* cmd = FindByFullName(ctx.server.commands(), ctx.args[i])) found.push_back(cmd);
  }
  ctx.reply.MapHeader(found.size());
  for (const CommandSpec* cmd : found) {
    ctx.reply.Bulk(cmd->fullname);
    ReplyCommandDocs(ctx, *cmd);
  }
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
void CommandListCommand(CommandContext& ctx) {
  enum { kNone, kModule, kAclCat, kPattern } filter = kNone;
  std::string_view value;
  if (ctx.args.size() == 5 && EqualsIgnoreCase(ctx.args[2], "filterby")) {
    value = ctx.args[4];
    if (EqualsIgnoreCase(ctx.args[3], "module")) filter = kModule;
    else if (EqualsIgnoreCase(ctx.args[3], "aclcat")) filter = kAclCat;
    else if (EqualsIgnoreCase(ctx.args[3], "pattern")) filter = kPattern;
    else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  } else if (ctx.args.size() != 2) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  std::vector<std::string_view> names;
  auto consider = [&](const CommandSpec& cmd) {
    bool keep = true;
    if (filter == kModule) {
      keep = false;  // no modules
    } else if (filter == kAclCat) {
      keep = false;
      for (auto cat : AclCategoryNames(cmd.AclCategories()))
        if (EqualsIgnoreCase(cat.substr(1), value)) keep = true;
    } else if (filter == kPattern) {
      keep = GlobMatch(value, cmd.fullname, /*nocase=*/true);
    }
    if (keep) names.push_back(cmd.fullname);
  };
  for (const CommandSpec* cmd : ListedCommands(ctx.server.commands())) {
    consider(*cmd);
    for (const CommandSpec& sub : cmd->subcommands) consider(sub);
  }
  ctx.reply.ArrayHeader(names.size());
  for (auto n : names) ctx.reply.Bulk(n);
}

// COMMAND GETKEYS / GETKEYSANDFLAGS command [arg ...]: the keys the
// arguments name, as Redis finds them (server/key_specs.h), with their
// flags for GETKEYSANDFLAGS.
void ReplyKeysOf(CommandContext& ctx, bool with_flags) {
  auto args = ctx.args.subspan(2);
  const CommandSpec* cmd = ctx.server.commands().Find(args[0]);
  if (cmd != nullptr && !cmd->subcommands.empty() && args.size() >= 2)
    cmd = CommandTable::FindSubcommand(*cmd, args[1]);
  if (cmd == nullptr) {
    ctx.reply.Error("ERR Invalid command specified");
    return;
  }
  if (!CommandHasKeyArguments(*cmd)) {
    ctx.reply.Error("ERR The command has no key arguments");
    return;
  }
  int argc = static_cast<int>(args.size());
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    ctx.reply.Error("ERR Invalid number of arguments specified for command");
    return;
  }
  std::vector<KeyReference> keys;
  FindKeysWithFlags(*cmd, args, &keys);
  if (keys.empty()) {
    // (EVAL "..." 0: no keys, and none needed; Redis's CMD_NO_MANDATORY_KEYS.)
    if (cmd->flags & kCmdNoMandatoryKeys)
      ctx.reply.ArrayHeader(0);
    else
      ctx.reply.Error("ERR Invalid arguments specified for command");
    return;
  }
  ctx.reply.ArrayHeader(keys.size());
  for (const KeyReference& k : keys) {
    if (with_flags) {
      ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(args[k.pos]);
      WriteKeySpecFlags(ctx.reply, k.flags);
    } else {
      ctx.reply.Bulk(args[k.pos]);
    }
  }
}

void CommandGetkeysCommand(CommandContext& ctx) { ReplyKeysOf(ctx, false); }

void CommandGetkeysandflagsCommand(CommandContext& ctx) { ReplyKeysOf(ctx, true); }

void CommandHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(ctx, "COMMAND",
                     {"(no subcommand)", "    Return details about all Redis commands.",
                      "COUNT", "    Return the total number of commands in this Redis server.",
                      "LIST", "    Return a list of all commands in this Redis server.",
                      "INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
                      "    If no command names are given, documentation details for all",
                      "    commands are returned.",
                      "DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
                      "    If no command names are given, documentation details for all",
                      "    commands are returned.",
                      "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
                      "GETKEYSANDFLAGS <full-command>",
                      "    Return the keys and the access flags from a full Redis command."});
}

// --- CONFIG ---

void ConfigGetCommand(CommandContext& ctx) {
  auto pairs = ConfigGet(ctx.server.config(), ctx.args.subspan(2));
  ctx.reply.MapHeader(pairs.size());
  for (auto& [name, value] : pairs) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(value);
  }
}

void ConfigSetCommand(CommandContext& ctx) {
  std::string err;
  const bool protected_ok = CommandHost::Allows(ctx.server.config().enable_protected_configs, ctx.client);
  // Redis's DENY_LOADING_CONFIG directives: refused while a load runs.
  if (ctx.server.any_loading()) {
    for (size_t i = 2; i < ctx.args.size(); i += 2) {
      if (EqualsIgnoreCase(ctx.args[i], "appendonly") || EqualsIgnoreCase(ctx.args[i], "dir")) {
        ctx.reply.Error("LOADING Redis is loading the dataset in memory");
        return;
      }
    }
  }
  // As Redis: when a directive cannot be applied, every directive of the
  // command goes back.
  const Config before = ctx.server.config();
  const TlsSettings& tls_was = before.tls;
  if (!ConfigSet(&ctx.server.config(), ctx.args.subspan(2), &err, protected_ok)) {
    ctx.reply.Error(err);
    return;
  }
  if (!(ctx.server.config().tls == tls_was)) {
    // As Redis's applyTlsCfg: the new settings must make a context (where
    // TLS is on), or everything goes back.
    std::string why;
    if (ctx.server.config().tls_port != 0 && TlsContext::Create(ctx.server.config().tls, &why) == nullptr) {
      LOG_WARNING("Failed to configure TLS: %s", why.c_str());
      ctx.server.config() = before;
      std::string_view name = "tls";
      for (size_t i = 2; i < ctx.args.size(); i += 2)
        if (ctx.args[i].size() > 4 && EqualsIgnoreCase(ctx.args[i].substr(0, 4), "tls-")) name = ctx.args[i];
      ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" + std::string(name) +
                      "') - Unable to update TLS configuration. Check server logs.");
      return;
    }
    ctx.server.NoteTlsChanged();
  }
  if (!ctx.server.ApplyPort(before.port)) {
    ctx.server.config() = before;
    ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. "
                    "Check server logs.");
    return;
  }
  if (!ctx.server.ApplyAofConfig(&err)) {
    // As Redis's updateAppendonly failing (the listeners back where they were).
    LOG_WARNING("%s", err.c_str());
    const int port = ctx.server.config().port;
    ctx.server.config() = before;
    ctx.server.ApplyPort(port);
    ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. "
                    "Check server logs.");
    return;
  }
  ctx.server.ApplyRuntimeConfig();
  ctx.reply.Ok();
}

// CONFIG REWRITE: the config file the server started from, with the
// running values (config.h: RewriteConfigText), as Redis.
void ConfigRewriteCommand(CommandContext& ctx) {
  const std::string& path = ctx.server.config_file();
  if (path.empty()) {
    ctx.reply.Error("ERR The server is running without a config file");
    return;
  }
  std::string err;
  if (!RewriteConfigFile(path, ctx.server.config(), &err)) {
    LOG_WARNING("CONFIG REWRITE failed: %s", err.c_str());
    ctx.reply.Error("ERR Rewriting config file: " + err);
    return;
  }
  LOG_NOTICE("CONFIG REWRITE executed with success.");
  ctx.reply.Ok();
}

void ConfigResetstatCommand(CommandContext& ctx) {
  ctx.server.ResetStats();
  ctx.reply.Ok();
}

void ConfigHelpCommand(CommandContext& ctx) {
  const std::vector<std::string_view> lines = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
      "RESETSTAT", "    Reset statistics reported by the INFO command.",
      "REWRITE", "    Rewrite the configuration file.",
      "HELP", "    Print this help."};
  ReplyHelp(ctx, lines);
}

// --- MEMORY ---

// MEMORY USAGE key [SAMPLES count]: the key's bytes (SAMPLES is accepted;
// values are measured whole, there is nothing to sample yet).
void MemoryUsageCommand(CommandContext& ctx) {
  for (size_t i = 3; i < ctx.args.size(); i++) {
    if (EqualsIgnoreCase(ctx.args[i], "samples") && i + 1 < ctx.args.size()) {
      int64_t samples;
      if (!ParseIntArg(ctx, ctx.args[++i], &samples)) return;
      if (samples < 0) {
        ctx.reply.Error(kErrSyntax);
        return;
      }
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  // Not an access (Redis looks the key up without touching it).
  Db::Entry* e = ctx.DbOf(ctx.args[2]).Find(CompactKey::MakeProbe(ctx.args[2]), ctx.now_ms, /*touch=*/false);
  if (e == nullptr)
    ctx.reply.Null();
  else
    ctx.reply.Integer(static_cast<int64_t>(Db::MemoryUsage(*e)));
}

// MEMORY STATS: Redis 7.0's fields, in its order (Server::Memory() says
// where each figure comes from); replication, AOF, Lua, functions and
// cluster links do not exist here and are 0.
void MemoryStatsCommand(CommandContext& ctx) {
  const ServerState::MemoryOverview m = ctx.server.Memory();
  auto ratio = [](uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
  auto diff = [](uint64_t a, uint64_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); };
  ctx.reply.MapHeader(27 + m.dbs.size());
  auto integer = [&](std::string_view name, int64_t v) {
    ctx.reply.Bulk(name);
    ctx.reply.Integer(v);
  };
  auto real = [&](std::string_view name, double v) {
    ctx.reply.Bulk(name);
    ctx.reply.Double(v);
  };
  integer("peak.allocated", static_cast<int64_t>(m.peak));
  integer("total.allocated", static_cast<int64_t>(m.total));
  integer("startup.allocated", static_cast<int64_t>(m.startup));
  integer("replication.backlog", static_cast<int64_t>(m.replication_backlog));
  integer("clients.slaves", static_cast<int64_t>(m.clients_replicas));
  integer("clients.normal", static_cast<int64_t>(m.clients_normal));
  integer("cluster.links", 0);
  integer("aof.buffer", static_cast<int64_t>(m.aof_buffer));
  integer("lua.caches", 0);
  integer("functions.caches", 0);
  for (const auto& d : m.dbs) {
    ctx.reply.Bulk("db." + std::to_string(d.db));
    ctx.reply.MapHeader(3);
    integer("overhead.hashtable.main", static_cast<int64_t>(d.main));
    integer("overhead.hashtable.expires", static_cast<int64_t>(d.expires));
    integer("overhead.hashtable.slot-to-keys", 0);
  }
  integer("overhead.total", static_cast<int64_t>(m.overhead));
  integer("keys.count", static_cast<int64_t>(m.keys));
  integer("keys.bytes-per-key", static_cast<int64_t>(m.bytes_per_key));
  integer("dataset.bytes", static_cast<int64_t>(m.dataset));
  real("dataset.percentage", m.dataset_percentage);
  real("peak.percentage", m.peak_percentage);
  integer("allocator.allocated", static_cast<int64_t>(m.allocator_allocated));
  integer("allocator.active", static_cast<int64_t>(m.allocator_active));
  integer("allocator.resident", static_cast<int64_t>(m.allocator_resident));
  real("allocator-fragmentation.ratio", ratio(m.allocator_active, m.allocator_allocated));
  integer("allocator-fragmentation.bytes", diff(m.allocator_active, m.allocator_allocated));
  real("allocator-rss.ratio", ratio(m.allocator_resident, m.allocator_active));
  integer("allocator-rss.bytes", diff(m.allocator_resident, m.allocator_active));
  real("rss-overhead.ratio", ratio(m.rss, m.allocator_resident));
  integer("rss-overhead.bytes", diff(m.rss, m.allocator_resident));
  real("fragmentation", ratio(m.rss, m.total));
  integer("fragmentation.bytes", diff(m.rss, m.total));
}

// MEMORY PURGE: the allocator gives freed pages back to the system
// (mimalloc's mi_collect; Redis asks jemalloc to purge its arenas).
void MemoryPurgeCommand(CommandContext& ctx) {
  if (mi_collect != nullptr) mi_collect(true);
  ctx.reply.Ok();
}

// MEMORY MALLOC-STATS: the allocator's own report, as a verbatim string
// (Redis: jemalloc's); without one, Redis's text as a bulk string.
void MemoryMallocStatsCommand(CommandContext& ctx) {
  if (mi_stats_print_out == nullptr) {
    ctx.reply.Bulk("Stats not supported for the current allocator");
    return;
  }
  std::string report;
  mi_stats_print_out([](const char* msg, void* arg) { static_cast<std::string*>(arg)->append(msg); }, &report);
  ctx.reply.Verbatim(report);
}

void MemoryHelpCommand(CommandContext& ctx) {
  const std::vector<std::string_view> lines = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Print this help."};
  ReplyHelp(ctx, lines);
}

// MONITOR: from now on the client gets every command's line (MonitorFeed).
// Not inside MULTI (a client that must get one reply per command); a
// monitor (or a replica) sending MONITOR again gets no reply at all, as in
// Redis.
void MonitorCommand(CommandContext& ctx) {
  if (ctx.worker.in_exec()) {
    ctx.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  if (ctx.client.monitor || ctx.client.replica) return;
  ctx.worker.monitor().Start(ctx.client);
  ctx.reply.Ok();
}

}  // namespace

void RegisterServerCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  const uint32_t kAdminish = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale;
  f.Add({.name = "monitor", .arity = 1, .flags = kAdminish,
         .summary = "Listens for all requests received by the server in real-time.", .since = "1.0.0",
         .handler = MonitorCommand});
  f.Add({.name = "info", .arity = -1, .flags = kCmdLoading | kCmdStale | kCmdAllShards, .acl = kAclDangerous,
         .summary = "Returns information and statistics about the server.", .since = "1.0.0", .complexity = "O(1)",
         .tips = {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
         .handler = InfoCommand});
  f.Add({.name = "time", .arity = 1, .flags = kCmdLoading | kCmdStale | kCmdFast, .summary = "Returns the server time.",
         .since = "2.6.0", .complexity = "O(1)", .tips = {"nondeterministic_output"}, .handler = TimeCommand});
  // Every shard held: its snapshot is one point in time (a busy script's
  // SHUTDOWN NOSAVE runs without them: script_busy.cc).
  f.Add({.name = "shutdown", .arity = -1,
         .flags = kAdminish | kCmdNoMulti | kCmdSentinel | kCmdAllowBusy | kCmdAllShards,
         .summary = "Synchronously saves the database(s) to disk and shuts down the Redis server.", .since = "1.0.0",
         .complexity = "O(N) when saving, where N is the total number of keys in all databases when saving data, "
                       "otherwise O(1)",
         .handler = ShutdownCommand});

  // COMMAND with no subcommand is valid, unlike other containers.
  f.Add({.name = "command", .arity = -1, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
         .summary = "Returns detailed information about all commands.", .since = "2.8.13",
         .complexity = "O(N) where N is the total number of Redis commands", .handler = CommandCommand,
         .subcommands = {
             {.name = "count", .arity = 2, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Returns a count of commands.",
              .since = "2.8.13", .complexity = "O(1)", .handler = CommandCountCommand},
             {.name = "info", .arity = -2, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Returns information about one, multiple or all commands.", .since = "2.8.13",
              .complexity = "O(N) where N is the number of commands to look up", .handler = CommandInfoCommand},
             {.name = "docs", .arity = -2, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Returns documentary information about one, multiple or all commands.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of commands to look up", .handler = CommandDocsCommand},
             {.name = "list", .arity = -2, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Returns a list of command names.", .since = "7.0.0",
              .complexity = "O(N) where N is the total number of Redis commands", .handler = CommandListCommand},
             {.name = "getkeys", .arity = -3, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Extracts the key names from an arbitrary command.", .since = "2.8.13",
              .complexity = "O(N) where N is the number of arguments to the command", .handler = CommandGetkeysCommand},
             {.name = "getkeysandflags", .arity = -3, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Extracts the key names and access flags for an arbitrary command.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of arguments to the command",
              .handler = CommandGetkeysandflagsCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale, .acl = kAclConnection,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = CommandHelpCommand},
         }});

  f.Add({.name = "config", .arity = -2, .summary = "A container for server configuration commands.", .since = "2.0.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "get", .arity = -3, .flags = kAdminish,
              .summary = "Returns the effective values of configuration parameters.", .since = "2.0.0",
              .complexity = "O(N) when N is the number of configuration parameters provided",
              .handler = ConfigGetCommand},
             {.name = "set", .arity = -4, .flags = kAdminish | kCmdAllShards,
              .summary = "Sets configuration parameters in-flight.", .since = "2.0.0",
              .complexity = "O(N) when N is the number of configuration parameters provided",
              .handler = ConfigSetCommand},
             {.name = "rewrite", .arity = 2, .flags = kAdminish | kCmdAllShards,
              .summary = "Persists the effective configuration to file.", .since = "2.8.0", .complexity = "O(1)",
              .handler = ConfigRewriteCommand},
             {.name = "resetstat", .arity = 2, .flags = kAdminish | kCmdAllShards,
              .summary = "Resets the server's statistics.", .since = "2.0.0", .complexity = "O(1)",
              .handler = ConfigResetstatCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = ConfigHelpCommand},
         }});

  f.Add({.name = "memory", .arity = -2, .summary = "A container for memory diagnostics commands.", .since = "4.0.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "usage", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Estimates the memory usage of a key.", .since = "4.0.0",
              .complexity = "O(N) where N is the number of samples.", .handler = MemoryUsageCommand},
             {.name = "stats", .arity = 2, .flags = kCmdAllShards, .summary = "Returns details about memory usage.",
              .since = "4.0.0", .complexity = "O(1)", .tips = {"nondeterministic_output"},
              .handler = MemoryStatsCommand},
             {.name = "purge", .arity = 2, .summary = "Asks the allocator to release memory.", .since = "4.0.0",
              .complexity = "Depends on how much memory is allocated, could be slow",
              .tips = {"request_policy:all_shards", "response_policy:all_succeeded"}, .handler = MemoryPurgeCommand},
             {.name = "malloc-stats", .arity = 2, .summary = "Returns the allocator statistics.", .since = "4.0.0",
              .complexity = "Depends on how much memory is allocated, could be slow",
              .tips = {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
              .handler = MemoryMallocStatsCommand},
             {.name = "doctor", .arity = 2, .flags = kCmdAllShards, .summary = "Outputs a memory problems report.",
              .since = "4.0.0", .complexity = "O(1)",
              .tips = {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
              .handler = MemoryDoctorCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "4.0.0",
              .complexity = "O(1)", .handler = MemoryHelpCommand},
         }});
}

}  // namespace peregrine
