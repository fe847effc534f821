// LATENCY DOCTOR / GRAPH / HISTOGRAM / HISTORY / LATEST / RESET / HELP
// (Redis 7.2's latencyCommand) over the server's latency monitor
// (server/latency.h) and the commands' latency histograms
// (server/latency_histogram.h).
#include <ctime>
#include <string>
#include <vector>

#include "commands/common.h"
#include "server/server_state.h"

namespace peregrine {

namespace {

void LatencyHistoryCommand(CommandContext& ctx) {
  const std::optional<LatencyMonitor::Series> s = ctx.server.latency().Find(ctx.args[2]);
  if (!s) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const std::vector<LatencyMonitor::Sample> samples = s->InOrder();
  ctx.reply.ArrayHeader(samples.size());
  for (const LatencyMonitor::Sample& x : samples) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(x.time);
    ctx.reply.Integer(x.latency);
  }
}

void LatencyLatestCommand(CommandContext& ctx) {
  const auto events = ctx.server.latency().Events();
  ctx.reply.ArrayHeader(events.size());
  for (const auto& [name, s] : events) {
    ctx.reply.ArrayHeader(4);
    ctx.reply.Bulk(name);
    ctx.reply.Integer(s.Latest().time);
    ctx.reply.Integer(s.Latest().latency);
    ctx.reply.Integer(s.max);
  }
}

void LatencyGraphCommand(CommandContext& ctx) {
  const std::optional<LatencyMonitor::Series> s = ctx.server.latency().Find(ctx.args[2]);
  if (!s) {
    ctx.reply.Error("ERR No samples available for event '" + std::string(ctx.args[2]) + "'");
    return;
  }
  ctx.reply.Verbatim(LatencyMonitor::Graph(ctx.args[2], *s, static_cast<int64_t>(std::time(nullptr))));
}

void LatencyDoctorCommand(CommandContext& ctx) { ctx.reply.Verbatim(ctx.server.latency().Doctor()); }

void LatencyResetCommand(CommandContext& ctx) {
  LatencyMonitor& m = ctx.server.latency();
  if (ctx.args.size() == 2) {
    ctx.reply.Integer(m.Reset(std::nullopt));
    return;
  }
  int resets = 0;
  for (size_t i = 2; i < ctx.args.size(); i++) resets += m.Reset(ctx.args[i]);
  ctx.reply.Integer(resets);
}

// One command's entry: its name, then {calls, histogram_usec: {bucket: cumulative count}}.
void ReplyHistogram(CommandContext& ctx, const CommandSpec& cmd, const LatencyHistogram& h) {
  ctx.reply.Bulk(cmd.fullname);
  ctx.reply.MapHeader(2);
  ctx.reply.Bulk("calls");
  ctx.reply.Integer(static_cast<int64_t>(h.total()));
  ctx.reply.Bulk("histogram_usec");
  std::vector<std::pair<int64_t, uint64_t>> buckets;
  h.ForEachLogBucket([&](int64_t us, uint64_t count) { buckets.emplace_back(us, count); });
  ctx.reply.MapHeader(buckets.size());
  for (const auto& [us, count] : buckets) {
    ctx.reply.Integer(us);
    ctx.reply.Integer(static_cast<int64_t>(count));
  }
}

// HISTOGRAM [command ...]: every command (subcommands included) that has
// latencies, or those named (a container: its subcommands'); unknown names
// are skipped.
void LatencyHistogramCommand(CommandContext& ctx) {
  std::vector<std::pair<const CommandSpec*, std::unique_ptr<LatencyHistogram>>> out;
  auto add = [&](const CommandSpec& cmd) {
    for (const auto& [seen, h] : out)
      if (seen == &cmd) return;
    if (std::unique_ptr<LatencyHistogram> h = ctx.server.MergedLatency(cmd); h != nullptr)
      out.emplace_back(&cmd, std::move(h));
  };
  auto add_with_subcommands = [&](const CommandSpec& cmd) {
    add(cmd);
    for (const CommandSpec& sub : cmd.subcommands) add(sub);
  };
  const CommandTable& table = ctx.server.commands();
  if (ctx.args.size() == 2) {
    for (const auto& cmd : table.all()) add_with_subcommands(*cmd);
  } else {
    for (size_t i = 2; i < ctx.args.size(); i++) {
      const std::string_view name = ctx.args[i];
      const size_t bar = name.find('|');
      const CommandSpec* cmd = table.Find(name.substr(0, bar));
      if (cmd != nullptr && bar != std::string_view::npos)
        cmd = cmd->subcommands.empty() ? nullptr : CommandTable::FindSubcommand(*cmd, name.substr(bar + 1));
      if (cmd != nullptr) add_with_subcommands(*cmd);
    }
  }
  ctx.reply.MapHeader(out.size());
  for (const auto& [cmd, h] : out) ReplyHistogram(ctx, *cmd, *h);
}

void LatencyHelpCommand(CommandContext& ctx) {
  ReplyContainerHelp(ctx, "LATENCY",
                     {"DOCTOR",
                      "    Return a human readable latency analysis report.",
                      "GRAPH <event>",
                      "    Return an ASCII latency graph for the <event> class.",
                      "HISTORY <event>",
                      "    Return time-latency samples for the <event> class.",
                      "LATEST",
                      "    Return the latest latency samples for all events.",
                      "RESET [<event> ...]",
                      "    Reset latency data of one or more <event> classes.",
                      "    (default: reset all data for all event classes)",
                      "HISTOGRAM [COMMAND ...]",
                      "    Return a cumulative distribution of latencies in the format of a histogram for the "
                      "specified command names.",
                      "    If no commands are specified then all histograms are replied."});
}

}  // namespace

void RegisterLatencyCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  constexpr uint32_t kFlags = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kTips = {"nondeterministic_output", "request_policy:all_nodes",
                                               "response_policy:special"};
  f.Add({.name = "latency", .arity = -2, .summary = "A container for latency diagnostics commands.",
         .since = "2.8.13", .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "doctor", .arity = 2, .flags = kFlags, .summary = "Returns a human-readable latency analysis report.",
              .since = "2.8.13", .complexity = "O(1)", .tips = kTips, .handler = LatencyDoctorCommand},
             {.name = "graph", .arity = 3, .flags = kFlags, .summary = "Returns a latency graph for an event.",
              .since = "2.8.13", .complexity = "O(1)", .tips = kTips, .handler = LatencyGraphCommand},
             {.name = "histogram", .arity = -2, .flags = kFlags | kCmdAllShards,
              .summary = "Returns the cumulative distribution of latencies of a subset or all commands.",
              .since = "7.0.0",
              .complexity = "O(N) where N is the number of commands with latency information being retrieved.",
              .tips = kTips, .handler = LatencyHistogramCommand},
             {.name = "history", .arity = 3, .flags = kFlags, .summary = "Returns timestamp-latency samples for an event.",
              .since = "2.8.13", .complexity = "O(1)", .tips = kTips, .handler = LatencyHistoryCommand},
             {.name = "latest", .arity = 2, .flags = kFlags,
              .summary = "Returns the latest latency samples for all events.", .since = "2.8.13", .complexity = "O(1)",
              .tips = kTips, .handler = LatencyLatestCommand},
             {.name = "reset", .arity = -2, .flags = kFlags,
              .summary = "Resets the latency data for one or more events.", .since = "2.8.13", .complexity = "O(1)",
              .tips = {"request_policy:all_nodes", "response_policy:all_succeeded"}, .handler = LatencyResetCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "2.8.13",
              .complexity = "O(1)", .handler = LatencyHelpCommand},
         }});
}

}  // namespace peregrine
