// Snapshot commands: SAVE, BGSAVE, LASTSAVE, and the saving parts of SHUTDOWN and
// DEBUG RELOAD (docs/persistence.md). Each runs holding every shard, so
// the file is one point in time across them.
#include "commands/persistence_commands.h"

#include "commands/common.h"
#include "server/log.h"
#include "server/persistence.h"

namespace peregrine {
namespace {

// SAVE: the snapshot now, every other client waiting (as Redis's SAVE).
void SaveCommand(CommandContext& ctx) {
  // (An AOF rewrite's snapshot goes on beside it, as Redis's AOF child.)
  if (ctx.server.bgsave() != nullptr && !ctx.server.bgsave()->aof_base()) {
    ctx.reply.Error("ERR Background save already in progress");
    return;
  }
  std::string err;
  if (!SaveRdbFile(ctx.server, ctx.server.config().dbfilename, &err)) {
    ctx.reply.Error("ERR");
    return;
  }
  ctx.reply.Ok();
}

// BGSAVE [SCHEDULE]: the snapshot without stopping anyone (bgsave.h).
// Inside a transaction it is scheduled instead, as Redis does (the
// snapshot then shows the whole transaction or none of it).
void BgsaveCommand(CommandContext& ctx) {
  if (ctx.args.size() > 1 && !(ctx.args.size() == 2 && EqualsIgnoreCase(ctx.args[1], "schedule"))) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const bool schedule = ctx.args.size() == 2;
  if (ctx.server.bgsave() != nullptr && !ctx.server.bgsave()->aof_base()) {
    ctx.reply.Error("ERR Background save already in progress");
    return;
  }
  if (ctx.server.bgsave() != nullptr && !schedule && !ctx.worker.in_exec()) {
    ctx.reply.Error(
        "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to "
        "schedule a BGSAVE whenever possible.");
    return;
  }
  if (ctx.worker.in_exec() || ctx.server.bgsave() != nullptr) {
    ctx.server.ScheduleBgSave();
    ctx.reply.SimpleString("Background saving scheduled");
    return;
  }
  std::string err;
  if (!ctx.server.StartBgSave(&err)) {
    ctx.reply.Error("ERR");
    return;
  }
  ctx.reply.SimpleString("Background saving started");
}

// BGREWRITEAOF: a new base for the append-only file (Redis's texts).
void BgrewriteaofCommand(CommandContext& ctx) {
  if (ctx.server.bgsave() != nullptr && ctx.server.bgsave()->aof_base()) {
    ctx.reply.Error("ERR Background append only file rewriting already in progress");
    return;
  }
  if (ctx.server.bgsave() != nullptr || ctx.worker.in_exec()) {
    ctx.server.aof_stats().rewrite_scheduled = true;
    ctx.server.aof_stats().consecutive_failures = 0;
    ctx.reply.SimpleString("Background append only file rewriting scheduled");
    return;
  }
  std::string err;
  bool scheduled;
  if (!ctx.server.StartAofRewrite(&err, &scheduled)) {
    LOG_WARNING("%s", err.c_str());
    ctx.reply.Error("ERR Can't execute an AOF background rewriting. Please check the server logs for more "
                    "information.");
    return;
  }
  ctx.reply.SimpleString("Background append only file rewriting started");
}

void LastsaveCommand(CommandContext& ctx) {
  ctx.reply.Integer(ctx.server.persistence().lastsave_s.load(std::memory_order_relaxed));
}

}  // namespace

bool SaveForShutdown(CommandContext& ctx, bool save, bool nosave) {
  const Config& config = ctx.server.config();
  // While the start-up load goes on nothing is saved (the file would be
  // half the data), as Redis.
  if (nosave || (!save && config.save_params.empty()) || ctx.server.any_loading()) {
    ctx.server.set_shutdown_save(ServerState::ShutdownSave::kNoSave);
    return true;
  }
  std::string err;
  ctx.server.AbortBgSave(/*aof_rewrite_too=*/true);  // (Redis kills its children and saves in the foreground)
  if (!SaveRdbFile(ctx.server, config.dbfilename, &err)) {
    LOG_WARNING("Error trying to save the DB, can't exit.");
    return false;
  }
  // Saved: nothing is left to save once the workers stop.
  ctx.server.set_shutdown_save(ServerState::ShutdownSave::kNoSave);
  return true;
}

void DebugReloadCommand(CommandContext& ctx) {
  if (ctx.server.any_loading()) {
    ctx.reply.Error("LOADING Redis is loading the dataset in memory");
    return;
  }
  bool flush = true, save = true, merge = false;
  for (size_t i = 2; i < ctx.args.size(); i++) {
    const std::string_view opt = ctx.args[i];
    if (EqualsIgnoreCase(opt, "merge")) {
      merge = true;
    } else if (EqualsIgnoreCase(opt, "noflush")) {
      flush = false;
    } else if (EqualsIgnoreCase(opt, "nosave")) {
      save = false;
    } else {
      ctx.reply.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
      return;
    }
  }
  const std::string& file = ctx.server.config().dbfilename;
  std::string err;
  ctx.server.AbortBgSave();
  if (save && !SaveRdbFile(ctx.server, file, &err)) {
    ctx.reply.Error("ERR");
    return;
  }
  if (flush) {
    // As Redis's emptyData: every database and the function libraries.
    for (size_t s = 0; s < ctx.server.num_shards(); s++) {
      Shard& shard = ctx.server.shard(s);
      for (int d = 0; d < shard.num_dbs(); d++) {
        shard.watches().TouchAll(d, shard.db(d), nullptr, ctx.now_ms);
        shard.db(d).Clear();
      }
    }
    ctx.server.functions().Flush();
    FlushTracking(ctx.server);
  }
  bool found = false;
  if (!LoadRdbFile(ctx.server, ctx.worker.lua(), file, merge, &found, &err) || !found) {
    LOG_WARNING("%s", found ? err.c_str() : "DEBUG RELOAD: no RDB file to load");
    ctx.reply.Error("ERR Error trying to load the RDB dump, check server logs.");
    return;
  }
  LOG_NOTICE("DB reloaded by DEBUG RELOAD");
  ctx.reply.Ok();
}

void RegisterPersistenceCommands(CommandTable& t) {
  CommandFamily f(t, kAclAdmin | kAclDangerous, "server");
  f.Add({.name = "save", .arity = 1, .flags = kCmdAdmin | kCmdNoscript | kCmdNoMulti | kCmdAllShards |
         kCmdNoAsyncLoading,
         .summary = "Synchronously saves the database(s) to disk.", .since = "1.0.0",
         .complexity = "O(N) where N is the total number of keys in all databases", .handler = SaveCommand});
  f.Add({.name = "bgsave", .arity = -1, .flags = kCmdAdmin | kCmdNoscript | kCmdAllShards |
         kCmdNoAsyncLoading,
         .summary = "Asynchronously saves the database(s) to disk.", .since = "1.0.0", .complexity = "O(1)",
         .handler = BgsaveCommand});
  f.Add({.name = "bgrewriteaof", .arity = 1, .flags = kCmdAdmin | kCmdNoscript | kCmdAllShards |
         kCmdNoAsyncLoading,
         .summary = "Asynchronously rewrites the append-only file to disk.", .since = "1.0.0", .complexity = "O(1)",
         .handler = BgrewriteaofCommand});
  f.Add({.name = "lastsave", .arity = 1, .flags = kCmdLoading | kCmdStale | kCmdFast,
         .summary = "Returns the Unix timestamp of the last successful save to disk.", .since = "1.0.0",
         .complexity = "O(1)", .handler = LastsaveCommand});
}

}  // namespace peregrine
