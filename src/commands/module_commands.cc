// MODULE: Peregrine loads no Redis modules (their API is Redis's process
// internals), so LIST answers the empty list, as a Redis with none loaded,
// and LOAD / LOADEX fail as a module that does not load does in Redis, the
// reason in the log. UNLOAD finds no such module. LOAD, LOADEX and UNLOAD
// follow enable-module-command (Redis 7's protected command, default no).
// Clients that ask MODULE LIST to see what a server offers (RedisJSON,
// RediSearch) get an answer instead of an unknown command.
#include <string>

#include "commands/common.h"
#include "server/log.h"

namespace peregrine {
namespace {

void ModuleListCommand(CommandContext& ctx) { ctx.reply.ArrayHeader(0); }

void ModuleLoadCommand(CommandContext& ctx) {
  LOG_WARNING("Module %s failed to load: Peregrine does not load Redis modules", AsCString(ctx.args[2]).c_str());
  ctx.reply.Error("ERR Error loading the extension. Please check the server logs.");
}

void ModuleUnloadCommand(CommandContext& ctx) {
  const std::string why = "no such module with that name";
  LOG_WARNING("Error unloading module %s: %s", AsCString(ctx.args[2]).c_str(), why.c_str());
  ctx.reply.Error("ERR Error unloading module: " + why);
}

void ModuleHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(ctx, "MODULE",
                     {"LIST", "    Return a list of loaded modules.", "LOAD <path> [<arg> ...]",
                      "    Load a module library from <path>, passing to it any optional arguments.",
                      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
                      "    Load a module library from <path>, while passing it module configurations and optional "
                      "arguments.",
                      "UNLOAD <name>", "    Unload a module."});
}

}  // namespace

void RegisterModuleCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  constexpr uint32_t kLoad = kCmdAdmin | kCmdNoscript | kCmdProtected | kCmdNoAsyncLoading;
  f.Add({.name = "module", .arity = -2, .summary = "A container for module commands.", .since = "4.0.0",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "list", .arity = 2, .flags = kCmdAdmin | kCmdNoscript,
              .summary = "Returns all loaded modules.", .since = "4.0.0",
              .complexity = "O(N) where N is the number of loaded modules.", .handler = ModuleListCommand},
             {.name = "load", .arity = -3, .flags = kLoad, .summary = "Loads a module.", .since = "4.0.0",
              .complexity = "O(1)", .handler = ModuleLoadCommand},
             {.name = "loadex", .arity = -3, .flags = kLoad,
              .summary = "Loads a module using extended parameters.", .since = "7.0.0", .complexity = "O(1)",
              .handler = ModuleLoadCommand},
             {.name = "unload", .arity = 3, .flags = kLoad, .summary = "Unloads a module.", .since = "4.0.0",
              .complexity = "O(1)", .handler = ModuleUnloadCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "5.0.0",
              .complexity = "O(1)", .handler = ModuleHelpCommand},
         }});
}

}  // namespace peregrine
