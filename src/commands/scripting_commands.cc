// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (docs/scripting.md): the
// script runs in the interpreter of the worker running the command
// (server/lua_engine.h), holding the shards of its declared keys.
#include <set>
#include <string>

#include "commands/common.h"
#include "core/numbers.h"
#include "net/event_loop.h"
#include "persist/rdb_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_writer.h"
#include "scripting/functions.h"
#include "server/lua_engine.h"

namespace peregrine {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// numkeys of EVAL and FCALL (args[2]) as Redis checks it; a bad integer
// replies `not_int`. False after replying.
bool ParseNumkeys(CommandContext& ctx, std::string_view not_int, size_t* out) {
  int64_t numkeys;
  if (!ParseIntArg(ctx, ctx.args[2], &numkeys, not_int)) return false;
  if (numkeys > static_cast<int64_t>(ctx.args.size()) - 3) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  if (numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return false;
  }
  *out = static_cast<size_t>(numkeys);
  return true;
}

void EvalGeneric(CommandContext& ctx, bool evalsha, bool read_only) {
  FeedMonitors(ctx);
  // As Redis: a SHA of the wrong length is refused before anything else.
  if (evalsha && ctx.args[1].size() != 40) {
    ctx.reply.Error(kNoScript);
    return;
  }
  size_t n;
  if (!ParseNumkeys(ctx, kErrNotInteger, &n)) return;
  LuaEngine& engine = ctx.worker.lua();
  std::string err;
  const LuaEngine::Compiled* script =
      evalsha ? engine.FindSha(ctx.args[1]) : engine.FindOrLoadBody(ctx.args[1], &err);
  if (script == nullptr) {
    ctx.reply.Error(evalsha ? kNoScript : std::string_view(err));
    return;
  }
  engine.Eval(ctx, *script, ctx.args.subspan(3, n), ctx.args.subspan(3 + n), read_only);
}

void EvalCommand(CommandContext& ctx) { EvalGeneric(ctx, false, false); }
void EvalRoCommand(CommandContext& ctx) { EvalGeneric(ctx, false, true); }
void EvalshaCommand(CommandContext& ctx) { EvalGeneric(ctx, true, false); }
void EvalshaRoCommand(CommandContext& ctx) { EvalGeneric(ctx, true, true); }

void ScriptLoadCommand(CommandContext& ctx) {
  std::string err;
  const LuaEngine::Compiled* script = ctx.worker.lua().FindOrLoadBody(ctx.args[2], &err);
  if (script == nullptr) {
    ctx.reply.Error(err);
    return;
  }
  ctx.reply.Bulk(script->info->sha);
}

void ScriptExistsCommand(CommandContext& ctx) {
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    ctx.reply.Integer(ctx.server.scripts().Find(ctx.args[i]) != nullptr ? 1 : 0);
  }
}

void ScriptFlushCommand(CommandContext& ctx) {
  if (ctx.args.size() > 3 ||
      (ctx.args.size() == 3 && !EqualsIgnoreCase(ctx.args[2], "sync") && !EqualsIgnoreCase(ctx.args[2], "async"))) {
    ctx.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  // Every worker's scripts' interpreter goes now (SCRIPT FLUSH holds every
  // shard, so the others are parked), and a new one is made at its next
  // script, as Redis makes a new one.
  ctx.server.scripts().Flush();
  for (uint32_t i = 0; i < ctx.server.num_shards(); i++) ctx.server.host(i).SyncScripts();
  ctx.reply.Ok();
}

// SCRIPT KILL (FUNCTION KILL: eval false): the busy scripts of every
// worker (docs/scripting.md); read-only ones stop, one that wrote cannot.
void KillBusyScripts(CommandContext& ctx, bool eval) {
  bool killed = false, wrote = false, other = false;
  for (size_t i = 0; i < ctx.server.num_shards(); i++) {
    switch (ctx.server.host(i).KillBusyScript(eval)) {
      case CommandHost::KillResult::kKilled: killed = true; break;
      case CommandHost::KillResult::kWrote: wrote = true; break;
      case CommandHost::KillResult::kOtherKind: other = true; break;
      case CommandHost::KillResult::kNotBusy: break;
    }
  }
  if (killed) {
    ctx.reply.Ok();
  } else if (wrote) {
    ctx.reply.Error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the "
        "script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.");
  } else if (other) {
    ctx.reply.Error(eval ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                         : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
  } else {
    ctx.reply.Error("NOTBUSY No scripts in execution right now.");
  }
}

void ScriptKillCommand(CommandContext& ctx) { KillBusyScripts(ctx, true); }

void ScriptDebugCommand(CommandContext& ctx) {
  const std::string_view mode = ctx.args[2];
  if (EqualsIgnoreCase(mode, "no")) {
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(mode, "yes") || EqualsIgnoreCase(mode, "sync")) {
    ctx.reply.Error("ERR SCRIPT DEBUG (the Lua debugger) is not supported");
  } else {
    ctx.reply.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
}

void ScriptHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "DEBUG (YES|SYNC|NO)",
                  "    Set the debug mode for subsequent scripts executed.",
                  "EXISTS <sha1> [<sha1> ...]",
                  "    Return information about the existence of the scripts in the script cache.",
                  "FLUSH [ASYNC|SYNC]",
                  "    Flush the Lua scripts cache. Very dangerous on replicas.",
                  "    When called without the optional mode argument, the behavior is determined by the",
                  "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                  "    * ASYNC: Asynchronously flush the scripts cache.",
                  "    * SYNC: Synchronously flush the scripts cache.",
                  "KILL",
                  "    Kill the currently executing Lua script.",
                  "LOAD <script>",
                  "    Load a script into the scripts cache without executing it.",
                  "HELP",
                  "    Print this help."});
}

// --- Functions ---

void FcallGeneric(CommandContext& ctx, bool read_only) {
  FeedMonitors(ctx);
  const auto f = ctx.server.functions().Find(ctx.args[1]);
  if (!f) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  size_t n;
  if (!ParseNumkeys(ctx, "ERR Bad number of keys provided", &n)) return;
  ctx.worker.lua().Fcall(ctx, *f, ctx.args.subspan(3, n), ctx.args.subspan(3 + n), read_only);
}
void FcallCommand(CommandContext& ctx) { FcallGeneric(ctx, false); }
void FcallRoCommand(CommandContext& ctx) { FcallGeneric(ctx, true); }

void FunctionLoadCommand(CommandContext& ctx) {
  bool replace = false;
  size_t at = 2;
  while (at < ctx.args.size() - 1) {
    const std::string_view a = ctx.args[at++];
    if (EqualsIgnoreCase(a, "replace")) {
      replace = true;
      continue;
    }
    ctx.reply.Error("ERR Unknown option given: " + AsCString(a));
    return;
  }
  if (at >= ctx.args.size()) {
    ctx.reply.Error("ERR Function code is missing");
    return;
  }
  auto lib = std::make_shared<FunctionLibrary>();
  std::string err;
  if (!ParseLibraryMetadata(ctx.args[at], lib.get(), &err)) {
    ctx.reply.Error("ERR " + err);
    return;
  }
  // (A library of that name without REPLACE is refused before its code runs.)
  if (!replace && ctx.server.functions().HasLibrary(lib->name)) {
    ctx.reply.Error("ERR Library '" + lib->name + "' already exists");
    return;
  }
  if (!ctx.worker.lua().LoadLibrary(lib.get(), &err)) {
    ctx.reply.Error(err);
    return;
  }
  if (!ctx.server.functions().Add(lib, replace, &err)) {
    ctx.reply.Error("ERR " + err);
    return;
  }
  ctx.shard.AddDirty();  // a change of the data set, as Redis counts it (and logs it)
  ctx.reply.Bulk(lib->name);
}

// FUNCTION DUMP: every library's code as Redis's payload (an RDB
// function record each, then the RDB version and CRC-64).
void FunctionDumpCommand(CommandContext& ctx) {
  RdbWriter w;
  for (const auto& lib : ctx.server.functions().List(std::nullopt)) {
    w.Byte(rdb::kOpFunction2);
    w.String(lib->code);
  }
  ctx.reply.Bulk(w.DumpPayload(rdb::kVersion));
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]: Redis's
// functionRestoreCommand, all or nothing.
void FunctionRestoreCommand(CommandContext& ctx) {
  if (ctx.args.size() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  bool replace = false, flush = false;
  if (ctx.args.size() == 4) {
    const std::string_view policy = ctx.args[3];
    if (EqualsIgnoreCase(policy, "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(policy, "flush")) {
      flush = true;
    } else if (!EqualsIgnoreCase(policy, "append")) {
      ctx.reply.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  const std::string_view payload = ctx.args[2];
  if (!VerifyDumpPayload(payload, !ctx.server.debug().skip_checksum_validation.load(std::memory_order_relaxed))) {
    ctx.reply.Error("ERR DUMP payload version or checksum are wrong");
    return;
  }
  RdbReader reader(payload.substr(0, payload.size() - 10));
  std::vector<std::shared_ptr<FunctionLibrary>> libs;
  std::set<std::string, std::less<>> names, functions;
  std::string err, code;
  while (reader.remaining() > 0) {
    uint8_t type;
    if (!reader.Byte(&type)) {
      err = "can not read data type";
      break;
    }
    if (type == rdb::kOpFunctionPreGa) {
      err = "Pre-GA function format not supported";
      break;
    }
    if (type != rdb::kOpFunction2) {
      err = "given type is not a function";
      break;
    }
    if (!reader.String(&code)) {
      err = "Failed loading library payload";
      break;
    }
    auto lib = std::make_shared<FunctionLibrary>();
    if (!ParseLibraryMetadata(code, lib.get(), &err)) break;
    if (!names.insert(lib->name).second) {
      err = "Library '" + lib->name + "' already exists";
      break;
    }
    if (!ctx.worker.lua().LoadLibrary(lib.get(), &err)) {
      // LoadLibrary's texts carry their "ERR " already.
      if (err.starts_with("ERR ")) err.erase(0, 4);
      break;
    }
    bool collide = false;
    for (const auto& [name, f] : lib->functions)
      if (!functions.insert(name).second) {
        err = "Function " + name + " already exists";
        collide = true;
      }
    if (collide) break;
    libs.push_back(std::move(lib));
  }
  if (err.empty() && !ctx.server.functions().Join(std::move(libs), replace, flush, &err) && err.empty())
    err = "failed loading the given functions payload";
  if (!err.empty()) {
    ctx.reply.Error("ERR " + err);
    return;
  }
  ctx.shard.AddDirty();
  ctx.reply.Ok();
}

void FunctionDeleteCommand(CommandContext& ctx) {
  if (!ctx.server.functions().Delete(ctx.args[2])) {
    ctx.reply.Error("ERR Library not found");
    return;
  }
  ctx.shard.AddDirty();
  ctx.reply.Ok();
}

void FunctionFlushCommand(CommandContext& ctx) {
  if (ctx.args.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.args.size() == 3 && !EqualsIgnoreCase(ctx.args[2], "sync") && !EqualsIgnoreCase(ctx.args[2], "async")) {
    ctx.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  ctx.server.functions().Flush();
  ctx.shard.AddDirty();
  ctx.reply.Ok();
}

void FunctionListCommand(CommandContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < ctx.args.size(); i++) {
    const std::string_view a = ctx.args[i];
    if (!with_code && EqualsIgnoreCase(a, "withcode")) {
      with_code = true;
      continue;
    }
    if (!pattern && EqualsIgnoreCase(a, "libraryname")) {
      if (i >= ctx.args.size() - 1) {
        ctx.reply.Error("ERR library name argument was not given");
        return;
      }
      pattern = ctx.args[++i];
      continue;
    }
    ctx.reply.Error("ERR Unknown argument " + AsCString(a));
    return;
  }
  const auto libs = ctx.server.functions().List(pattern);
  ctx.reply.ArrayHeader(libs.size());
  for (const auto& lib : libs) {
    ctx.reply.MapHeader(with_code ? 4 : 3);
    ctx.reply.Bulk("library_name");
    ctx.reply.Bulk(lib->name);
    ctx.reply.Bulk("engine");
    ctx.reply.Bulk("LUA");
    ctx.reply.Bulk("functions");
    ctx.reply.ArrayHeader(lib->functions.size());
    for (const auto& [name, f] : lib->functions) {
      ctx.reply.MapHeader(3);
      ctx.reply.Bulk("name");
      ctx.reply.Bulk(name);
      ctx.reply.Bulk("description");
      if (f.description)
        ctx.reply.Bulk(*f.description);
      else
        ctx.reply.Null();
      ctx.reply.Bulk("flags");
      const auto flags = FunctionFlagNames(f.run->flags);
      ctx.reply.SetHeader(flags.size());
      for (std::string_view fl : flags) ctx.reply.SimpleString(fl);
    }
    if (with_code) {
      ctx.reply.Bulk("library_code");
      ctx.reply.Bulk(lib->code);
    }
  }
}

void FunctionStatsCommand(CommandContext& ctx) {
  // (Only a script past busy-reply-threshold can be seen running: until
  // then nothing else is served. A busy EVAL is refused, as Redis does.)
  const std::optional<ServerState::RunningScript> running = ctx.server.running_script();
  if (running && running->eval) {
    ctx.reply.Error("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    return;
  }
  ctx.reply.MapHeader(2);
  ctx.reply.Bulk("running_script");
  if (running) {
    ctx.reply.MapHeader(3);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(running->name);
    ctx.reply.Bulk("command");
    ctx.reply.ArrayHeader(running->command.size());
    for (const std::string& a : running->command) ctx.reply.Bulk(a);
    ctx.reply.Bulk("duration_ms");
    ctx.reply.Integer(MonotonicMs() - running->start_ms);
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Bulk("engines");
  ctx.reply.MapHeader(1);
  ctx.reply.Bulk("LUA");
  ctx.reply.MapHeader(2);
  ctx.reply.Bulk("libraries_count");
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.functions().libraries()));
  ctx.reply.Bulk("functions_count");
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.functions().functions()));
}

void FunctionKillCommand(CommandContext& ctx) { KillBusyScripts(ctx, false); }

void FunctionHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                  "LOAD [REPLACE] <FUNCTION CODE>",
                  "    Create a new library with the given library name and code.",
                  "DELETE <LIBRARY NAME>",
                  "    Delete the given library.",
                  "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
                  "    Return general information on all the libraries:",
                  "    * Library name",
                  "    * The engine used to run the Library",
                  "    * Library description",
                  "    * Functions list",
                  "    * Library code (if WITHCODE is given)",
                  "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
                  "STATS",
                  "    Return information about the current function running:",
                  "    * Function name",
                  "    * Command used to run the function",
                  "    * Duration in MS that the function is running",
                  "    If no function is running, return nil",
                  "    In addition, returns a list of available engines.",
                  "KILL",
                  "    Kill the current running function.",
                  "FLUSH [ASYNC|SYNC]",
                  "    Delete all the libraries.",
                  "    When called without the optional mode argument, the behavior is determined by the",
                  "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                  "    * ASYNC: Asynchronously flush the libraries.",
                  "    * SYNC: Synchronously flush the libraries.",
                  "DUMP",
                  "    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
                  "RESTORE command",
                  "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
                  "    Restore the libraries represented by the given payload, it is possible to give a restore "
                  "policy to",
                  "    control how to handle existing libraries (default APPEND):",
                  "    * FLUSH: delete all existing libraries.",
                  "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
                  "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the "
                  "old",
                  "      libraries with the new libraries (notice that even on this option there is a chance of",
                  "      failure in case of functions name collision with another library).",
                  "HELP",
                  "    Print this help."});
}

}  // namespace

void RegisterScriptingCommands(CommandTable& t) {
  CommandFamily f(t, kAclScripting | kAclSlow, "scripting");
  // EVAL & co. and FCALL & co.: numkeys at 2, the keys after it, none needed.
  constexpr uint32_t kRunner = kCmdNoscript | kCmdSkipMonitor | kCmdNoMandatoryKeys | kCmdStale | kCmdScript;
  constexpr std::string_view kScriptCost = "Depends on the script that is executed.";
  constexpr std::string_view kFunctionCost = "Depends on the function that is executed.";
  f.Add({.name = "eval", .arity = -3, .flags = kCmdMayReplicate | kRunner, .first_key = 3, .last_key = 3,
         .numkeys_index = 2, .summary = "Executes a server-side Lua script.", .since = "2.6.0",
         .complexity = kScriptCost, .handler = EvalCommand});
  f.Add({.name = "evalsha", .arity = -3, .flags = kCmdMayReplicate | kRunner, .first_key = 3, .last_key = 3,
         .numkeys_index = 2, .summary = "Executes a server-side Lua script by SHA1 digest.", .since = "2.6.0",
         .complexity = kScriptCost, .handler = EvalshaCommand});
  f.Add({.name = "eval_ro", .arity = -3, .flags = kCmdReadonly | kRunner, .first_key = 3, .last_key = 3,
         .numkeys_index = 2, .summary = "Executes a read-only server-side Lua script.", .since = "7.0.0",
         .complexity = kScriptCost, .handler = EvalRoCommand});
  f.Add({.name = "evalsha_ro", .arity = -3, .flags = kCmdReadonly | kRunner, .first_key = 3, .last_key = 3,
         .numkeys_index = 2, .summary = "Executes a read-only server-side Lua script by SHA1 digest.", .since = "7.0.0",
         .complexity = kScriptCost, .handler = EvalshaRoCommand});
  f.Add({.name = "fcall", .arity = -3, .flags = kCmdMayReplicate | kRunner, .first_key = 3, .last_key = 3,
         .numkeys_index = 2, .summary = "Invokes a function.", .since = "7.0.0", .complexity = kFunctionCost,
         .handler = FcallCommand});
  f.Add({.name = "fcall_ro", .arity = -3, .flags = kCmdReadonly | kRunner, .first_key = 3, .last_key = 3,
         .numkeys_index = 2, .summary = "Invokes a read-only function.", .since = "7.0.0", .complexity = kFunctionCost,
         .handler = FcallRoCommand});

  f.Add({.name = "script", .arity = -2, .acl = kAclSlow, .summary = "A container for Lua scripts management commands.",
         .since = "2.6.0", .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "debug", .arity = 3, .flags = kCmdNoscript,
              .summary = "Sets the debug mode of server-side Lua scripts.", .since = "2.6.0", .complexity = "O(1)",
              .handler = ScriptDebugCommand},
             {.name = "exists", .arity = -3, .flags = kCmdNoscript,
              .summary = "Determines whether server-side Lua scripts exist in the script cache.", .since = "2.6.0",
              .complexity = "O(N) with N being the number of scripts to check (so checking a single script is an O(1) "
                            "operation).",
              .handler = ScriptExistsCommand},
             {.name = "flush", .arity = -2, .flags = kCmdNoscript | kCmdAllShards,
              .summary = "Removes all server-side Lua scripts from the script cache.", .since = "2.6.0",
              .complexity = "O(N) with N being the number of scripts in cache", .handler = ScriptFlushCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = ScriptHelpCommand},
             {.name = "kill", .arity = 2, .flags = kCmdNoscript | kCmdAllowBusy,
              .summary = "Terminates a server-side Lua script during execution.", .since = "2.6.0",
              .complexity = "O(1)", .handler = ScriptKillCommand},
             {.name = "load", .arity = 3, .flags = kCmdNoscript | kCmdStale,
              .summary = "Loads a server-side Lua script to the script cache.", .since = "2.6.0",
              .complexity = "O(N) with N being the length in bytes of the script body.", .handler = ScriptLoadCommand},
         }});

  f.Add({.name = "function", .arity = -2, .acl = kAclSlow, .summary = "A container for function commands.",
         .since = "7.0.0", .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "delete", .arity = 3, .flags = kCmdNoscript | kCmdWrite,
              .summary = "Deletes a library and its functions.", .since = "7.0.0", .complexity = "O(1)",
              .handler = FunctionDeleteCommand},
             {.name = "dump", .arity = 2, .flags = kCmdNoscript,
              .summary = "Dumps all libraries into a serialized binary payload.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of functions", .handler = FunctionDumpCommand},
             {.name = "restore", .arity = -3, .flags = kCmdNoscript | kCmdWrite | kCmdDenyOom,
              .summary = "Restores all libraries from a payload.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of functions on the payload",
              .handler = FunctionRestoreCommand},
             {.name = "flush", .arity = -2, .flags = kCmdNoscript | kCmdWrite,
              .summary = "Deletes all libraries and functions.", .since = "7.0.0",
              .complexity = "O(N) where N is the number of functions deleted", .handler = FunctionFlushCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "7.0.0",
              .complexity = "O(1)", .handler = FunctionHelpCommand},
             {.name = "kill", .arity = 2, .flags = kCmdNoscript | kCmdAllowBusy,
              .summary = "Terminates a function during execution.", .since = "7.0.0", .complexity = "O(1)",
              .handler = FunctionKillCommand},
             {.name = "list", .arity = -2, .flags = kCmdNoscript, .summary = "Returns information about all libraries.",
              .since = "7.0.0", .complexity = "O(N) where N is the number of functions",
              .handler = FunctionListCommand},
             {.name = "load", .arity = -3, .flags = kCmdNoscript | kCmdWrite | kCmdDenyOom,
              .summary = "Creates a library.", .since = "7.0.0",
              .complexity = "O(1) (considering compilation time is redundant)", .handler = FunctionLoadCommand},
             {.name = "stats", .arity = 2, .flags = kCmdNoscript | kCmdAllowBusy,
              .summary = "Returns information about a function during execution.", .since = "7.0.0",
              .complexity = "O(1)", .handler = FunctionStatsCommand},
         }});
}

}  // namespace peregrine
