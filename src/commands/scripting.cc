// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (docs/scripting.md): the
// script runs in the interpreter of the worker running the command
// (scripting/lua_engine.h), holding the shards of its declared keys.
#include <string>

#include "commands/common.h"
#include "scripting/lua_engine.h"
#include "server/server.h"

namespace peregrine {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

void EvalGeneric(CommandContext& ctx, bool evalsha, bool read_only) {
  // As Redis: a SHA of the wrong length is refused before anything else.
  if (evalsha && ctx.args[1].size() != 40) {
    ctx.reply.Error(kNoScript);
    return;
  }
  int64_t numkeys;
  if (!ParseIntArg(ctx, ctx.args[2], &numkeys)) return;
  if (numkeys > static_cast<int64_t>(ctx.args.size()) - 3) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  if (numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return;
  }
  LuaEngine& engine = ctx.worker.lua();
  const ScriptInfo* script;
  if (evalsha) {
    script = engine.FindSha(ctx.args[1]);
    if (script == nullptr) {
      ctx.reply.Error(kNoScript);
      return;
    }
  } else {
    std::string err;
    script = engine.FindOrLoadBody(ctx.args[1], &err);
    if (script == nullptr) {
      ctx.reply.Error(err);
      return;
    }
  }
  const size_t n = static_cast<size_t>(numkeys);
  engine.Eval(ctx, *script, ctx.args.subspan(3, n), ctx.args.subspan(3 + n), read_only);
}

void EvalCommand(CommandContext& ctx) { EvalGeneric(ctx, false, false); }
void EvalRoCommand(CommandContext& ctx) { EvalGeneric(ctx, false, true); }
void EvalshaCommand(CommandContext& ctx) { EvalGeneric(ctx, true, false); }
void EvalshaRoCommand(CommandContext& ctx) { EvalGeneric(ctx, true, true); }

void ScriptLoadCommand(CommandContext& ctx) {
  std::string err;
  const ScriptInfo* script = ctx.worker.lua().FindOrLoadBody(ctx.args[2], &err);
  if (script == nullptr) {
    ctx.reply.Error(err);
    return;
  }
  ctx.reply.Bulk(script->sha);
}

void ScriptExistsCommand(CommandContext& ctx) {
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    // (Case matters, as Redis's dict lookup: SHAs are stored lowercase.)
    ctx.reply.Integer(ctx.server.scripts().Find(ctx.args[i]) != nullptr ? 1 : 0);
  }
}

void ScriptFlushCommand(CommandContext& ctx) {
  if (ctx.args.size() > 3 ||
      (ctx.args.size() == 3 && !EqualsIgnoreCase(ctx.args[2], "sync") && !EqualsIgnoreCase(ctx.args[2], "async"))) {
    ctx.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  // Every worker drops its compiled scripts when it next runs one.
  ctx.server.scripts().Flush();
  ctx.reply.Ok();
}

// SCRIPT KILL (FUNCTION KILL: eval false): the busy scripts of every
// worker (docs/scripting.md); read-only ones stop, one that wrote cannot.
void KillBusyScripts(CommandContext& ctx, bool eval) {
  bool killed = false, wrote = false, other = false;
  for (size_t i = 0; i < ctx.server.num_shards(); i++) {
    switch (ctx.server.worker(i).KillBusyScript(eval)) {
      case Worker::KillResult::kKilled: killed = true; break;
      case Worker::KillResult::kWrote: wrote = true; break;
      case Worker::KillResult::kOtherKind: other = true; break;
      case Worker::KillResult::kNotBusy: break;
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

}  // namespace

void RegisterScriptingCommands(CommandTable& t) {
  auto eval = [&t](std::string_view name, uint32_t flags, CommandHandler h, std::string_view since,
                   std::string_view summary) {
    t.Register(CommandSpec{.name = name,
                           .arity = -3,
                           .flags = flags | kCmdNoscript | kCmdSkipMonitor | kCmdNoMandatoryKeys | kCmdStale |
                                    kCmdScript,
                           .acl = kAclScripting | kAclSlow,
                           .first_key = 3,
                           .last_key = 3,
                           .key_step = 1,
                           .numkeys_index = 2,
                           .summary = summary,
                           .since = since,
                           .group = "scripting",
                           .complexity = "Depends on the script that is executed.",
                           .handler = h});
  };
  eval("eval", kCmdMayReplicate, EvalCommand, "2.6.0", "Executes a server-side Lua script.");
  eval("evalsha", kCmdMayReplicate, EvalshaCommand, "2.6.0", "Executes a server-side Lua script by SHA1 digest.");
  eval("eval_ro", kCmdReadonly, EvalRoCommand, "7.0.0", "Executes a read-only server-side Lua script.");
  eval("evalsha_ro", kCmdReadonly, EvalshaRoCommand, "7.0.0",
       "Executes a read-only server-side Lua script by SHA1 digest.");

  auto sub = [](std::string_view name, int arity, uint32_t flags, CommandHandler h, std::string_view summary,
                std::string_view complexity) {
    return CommandSpec{.name = name, .arity = arity, .flags = flags, .acl = kAclScripting | kAclSlow,
                       .summary = summary, .since = name == "help" ? "5.0.0" : "2.6.0", .group = "scripting",
                       .complexity = complexity, .handler = h};
  };
  CommandSpec script{.name = "script", .arity = -2, .acl = kAclSlow, .summary = "A container for Lua scripts management commands.",
                     .since = "2.6.0", .group = "scripting", .complexity = "Depends on subcommand."};
  script.subcommands = {
      sub("debug", 3, kCmdNoscript, ScriptDebugCommand, "Sets the debug mode of server-side Lua scripts.", "O(1)"),
      sub("exists", -3, kCmdNoscript, ScriptExistsCommand,
          "Determines whether server-side Lua scripts exist in the script cache.",
          "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation)."),
      sub("flush", -2, kCmdNoscript | kCmdMayReplicate, ScriptFlushCommand,
          "Removes all server-side Lua scripts from the script cache.",
          "O(N) with N being the number of scripts in cache"),
      sub("help", 2, kCmdLoading | kCmdStale, ScriptHelpCommand, "Returns helpful text about the different subcommands.",
          "O(1)"),
      sub("kill", 2, kCmdNoscript | kCmdAllowBusy, ScriptKillCommand,
          "Terminates a server-side Lua script during execution.", "O(1)"),
      sub("load", 3, kCmdNoscript | kCmdStale | kCmdMayReplicate, ScriptLoadCommand,
          "Loads a server-side Lua script to the script cache.", "O(N) with N being the length in bytes of the script body."),
  };
  t.Register(std::move(script));
}

}  // namespace peregrine
