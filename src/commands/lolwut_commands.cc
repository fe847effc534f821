// LOLWUT [VERSION <n>] [...]: a piece of generative art and the version, as
// Redis has it. Redis 7.2 answers "Redis ver. <version>" alone, unless an
// older version's art is asked for (5 and 6). Those pieces are Redis's own;
// here both draw our own instead: a field of Truchet tiles (each cell one of
// two diagonals, drawn from the version and the cell's place, so the same
// request draws the same field), [columns] [rows] of it.
#include <algorithm>
#include <string>

#include "commands/common.h"
#include "core/splitmix.h"

namespace peregrine {

namespace {

std::string Truchet(int64_t version, int64_t columns, int64_t rows) {
  std::string out;
  for (int64_t y = 0; y < rows; y++) {
    for (int64_t x = 0; x < columns; x++) {
      uint64_t state = static_cast<uint64_t>(version) * 0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(y * 1000 + x);
      const uint64_t h = SplitMix64(state);
      out += (h & 1) ? "\u2571" : "\u2572";  // ╱ or ╲
    }
    out += '\n';
  }
  out += "\nTruchet tiles, after Sebastien Truchet, 1704. Redis ver. ";
  out += kRedisCompatVersion;
  out += '\n';
  return out;
}

void LolwutCommand(CommandContext& ctx) {
  auto args = ctx.args.subspan(1);
  int64_t version = 7;  // (Redis 7.2's own: no art)
  if (args.size() >= 2 && EqualsIgnoreCase(args[0], "version")) {
    if (!ParseIntArg(ctx, args[1], &version)) return;
    args = args.subspan(2);
  }
  if (version != 5 && version != 6) {
    ctx.reply.Verbatim(std::string("Redis ver. ") + kRedisCompatVersion + "\n");
    return;
  }
  // [columns] [rows]: integers, held to 1..1000 and 1..200 (as Redis
  // holds its pieces' sizes).
  int64_t columns = 66, rows = 20;
  if (!args.empty() && !ParseIntArg(ctx, args[0], &columns)) return;
  if (args.size() >= 2 && !ParseIntArg(ctx, args[1], &rows)) return;
  columns = std::clamp<int64_t>(columns, 1, 1000);
  rows = std::clamp<int64_t>(rows, 1, 200);
  ctx.reply.Verbatim(Truchet(version, columns, rows));
}

}  // namespace

void RegisterLolwutCommands(CommandTable& t) {
  CommandFamily f(t, 0, "server");
  f.Add({.name = "lolwut", .arity = -1, .flags = kCmdReadonly | kCmdFast,
         .summary = "Displays computer art and the Redis version", .since = "5.0.0", .handler = LolwutCommand});
}

}  // namespace peregrine
