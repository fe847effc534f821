// SLOWLOG GET / LEN / RESET / HELP (Redis 7.2's slowlogCommand) over the
// server's log (server/slowlog.h).
#include <string>
#include <vector>

#include "commands/common.h"
#include "server/server_state.h"

namespace peregrine {

namespace {

void SlowlogGetCommand(CommandContext& ctx) {
  if (ctx.args.size() > 3) return ReplySubcommandSyntaxError(ctx);
  SlowLog& log = ctx.server.slowlog();
  size_t count = 10;
  if (ctx.args.size() == 3) {
    int64_t n;
    if (!ParseIntInRange(ctx, ctx.args[2], -1, INT64_MAX, &n, "ERR count should be greater than or equal to -1"))
      return;
    count = n == -1 ? SIZE_MAX : static_cast<size_t>(n);
  }
  const std::vector<SlowLog::Entry> entries = log.Get(count);
  ctx.reply.ArrayHeader(entries.size());
  for (const SlowLog::Entry& e : entries) {
    ctx.reply.ArrayHeader(6);
    ctx.reply.Integer(static_cast<int64_t>(e.id));
    ctx.reply.Integer(e.time_s);
    ctx.reply.Integer(e.duration_us);
    ctx.reply.ArrayHeader(e.args.size());
    for (const std::string& a : e.args) ctx.reply.Bulk(a);
    ctx.reply.Bulk(e.peer);
    ctx.reply.Bulk(e.name);
  }
}

void SlowlogLenCommand(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.server.slowlog().Len())); }

void SlowlogResetCommand(CommandContext& ctx) {
  ctx.server.slowlog().Reset();
  ctx.reply.Ok();
}

void SlowlogHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(ctx, "SLOWLOG",
                     {"GET [<count>]",
                      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                      "    Entries are made of:",
                      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                      "    client name",
                      "LEN",
                      "    Return the length of the slowlog.",
                      "RESET",
                      "    Reset the slowlog."});
}

}  // namespace

void RegisterSlowlogCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  f.Add({.name = "slowlog", .arity = -2, .summary = "A container for slow log commands.", .since = "2.2.12",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "get", .arity = -2, .flags = kCmdAdmin | kCmdLoading | kCmdStale,
              .summary = "Returns the slow log's entries.", .since = "2.2.12",
              .complexity = "O(N) where N is the number of entries returned",
              .tips = {"request_policy:all_nodes", "nondeterministic_output"}, .handler = SlowlogGetCommand},
             {.name = "len", .arity = 2, .flags = kCmdAdmin | kCmdLoading | kCmdStale,
              .summary = "Returns the number of entries in the slow log.", .since = "2.2.12", .complexity = "O(1)",
              .tips = {"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"},
              .handler = SlowlogLenCommand},
             {.name = "reset", .arity = 2, .flags = kCmdAdmin | kCmdLoading | kCmdStale,
              .summary = "Clears all entries from the slow log.", .since = "2.2.12",
              .complexity = "O(N) where N is the number of entries in the slowlog",
              .tips = {"request_policy:all_nodes", "response_policy:all_succeeded"}, .handler = SlowlogResetCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Show helpful text about the different subcommands", .since = "6.2.0", .complexity = "O(1)",
              .handler = SlowlogHelpCommand},
         }});
}

}  // namespace peregrine
