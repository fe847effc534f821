// Shared command helpers (see common.h).
#include "commands/common.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/numbers.h"
#include "server/client.h"

namespace peregrine {

bool ParseIntArg(CommandContext& ctx, std::string_view arg, int64_t* out, std::string_view error) {
  if (ParseInt64(arg, out)) return true;
  ctx.reply.Error(error);
  return false;
}

bool ParseTimeout(CommandContext& ctx, std::string_view arg, int64_t* deadline_ms) {
  long double t;
  if (!ParseLongDouble(arg, &t)) {
    ctx.reply.Error("ERR timeout is not a float or out of range");
    return false;
  }
  t *= 1000.0L;  // seconds to ms
  if (t > static_cast<long double>(LLONG_MAX)) {
    ctx.reply.Error("ERR timeout is out of range");
    return false;
  }
  // Rounded up: a timeout above 0 never becomes 0 ("for ever"); one between
  // -1 ms and 0 does, as in Redis.
  const long double ms = ceill(t);
  if (ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  int64_t v = static_cast<int64_t>(ms);
  if (v > 0) {
    if (v > LLONG_MAX - ctx.now_ms) {
      ctx.reply.Error("ERR timeout is out of range");
      return false;
    }
    v += ctx.now_ms;
  }
  *deadline_ms = v;
  return true;
}

bool ParseTimeoutMs(CommandContext& ctx, std::string_view arg, int64_t* ms) {
  if (!ParseInt64(arg, ms)) {
    ctx.reply.Error("ERR timeout is not an integer or out of range");
    return false;
  }
  if (*ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  if (*ms > INT64_MAX - UnixTimeMs()) {
    ctx.reply.Error("ERR timeout is out of range");
    return false;
  }
  return true;
}

bool ParseIntInRange(CommandContext& ctx, std::string_view arg, int64_t min, int64_t max, int64_t* out,
                     std::string_view msg) {
  if (!ParseIntArg(ctx, arg, out, msg.empty() ? kErrNotInteger : msg)) return false;
  if (*out < min || *out > max) {
    if (!msg.empty()) {
      ctx.reply.Error(msg);
    } else {
      ctx.reply.Error("ERR value is out of range, value must between " + std::to_string(min) + " and " +
                      std::to_string(max));
    }
    return false;
  }
  return true;
}

bool ParseDbIndex(CommandContext& ctx, std::string_view arg, int* out) {
  int64_t v;
  if (!ParseIntInRange(ctx, arg, INT_MIN, INT_MAX, &v)) return false;  // Redis's getIntFromObjectOrReply
  if (v < 0 || v >= ctx.shard.num_dbs()) {
    ctx.reply.Error(kErrDbIndex);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

const std::string& RunningCommand(const CommandContext& ctx) {
  static const std::string none;
  return ctx.client.last_cmd != nullptr ? ctx.client.last_cmd->fullname : none;
}

void ReplyWrongArity(CommandContext& ctx) {
  ctx.reply.Error("ERR wrong number of arguments for '" + RunningCommand(ctx) + "' command");
}

void ReplySubcommandSyntaxError(CommandContext& ctx) {
  std::string command(ctx.args[0]);
  for (char& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + AsCString(ctx.args[1].substr(0, 128)) +
                  "'. Try " + command + " HELP.");
}

void ReplyInvalidExpire(CommandContext& ctx) {
  ctx.reply.Error("ERR invalid expire time in '" + RunningCommand(ctx) + "' command");
}

// Redis's parseScanCursorOrReply: strtoull over the whole argument.
bool ParseCursor(CommandContext& ctx, std::string_view arg, uint64_t* out) {
  std::string s(arg);
  char* end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(s.c_str(), &end, 10);
  // As Redis's strtoul: "" is cursor 0; a leading space or trailing junk is not.
  if ((!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) || *end != '\0' || errno == ERANGE ||
      end != s.c_str() + s.size()) {
    ctx.reply.Error("ERR invalid cursor");
    return false;
  }
  *out = v;
  return true;
}

bool ParseMpopCount(CommandContext& ctx, size_t from, int64_t* count) {
  *count = -1;
  for (size_t i = from; i < ctx.args.size(); i++) {
    if (*count == -1 && EqualsIgnoreCase(ctx.args[i], "count") && i + 1 < ctx.args.size()) {
      if (!ParseIntInRange(ctx, ctx.args[++i], 1, LLONG_MAX, count, "ERR count should be greater than 0"))
        return false;
    } else {
      ctx.reply.Error(kErrSyntax);
      return false;
    }
  }
  if (*count == -1) *count = 1;
  return true;
}

bool ParseKeyScanOptions(CommandContext& ctx, bool allow_novalues, ScanOptions* o) {
  for (size_t i = 3; i < ctx.args.size(); i++) {
    const std::string_view opt = ctx.args[i];
    const bool has_next = i + 1 < ctx.args.size();
    if (EqualsIgnoreCase(opt, "count") && has_next) {
      if (!ParseIntArg(ctx, ctx.args[++i], &o->count)) return false;
      if (o->count < 1) {
        ctx.reply.Error(kErrSyntax);
        return false;
      }
    } else if (EqualsIgnoreCase(opt, "match") && has_next) {
      o->pattern = ctx.args[++i];
      o->use_pattern = o->pattern != "*";
    } else if (allow_novalues && EqualsIgnoreCase(opt, "novalues")) {
      o->novalues = true;
    } else {
      ctx.reply.Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

void FlushDb(Db& db, bool async) {
  if (async)
    db.ClearLater();
  else
    db.Clear();
}

void FlushAllShards(CommandContext& ctx, bool async) {
  for (size_t s = 0; s < ctx.server.num_shards(); s++) {
    Shard& shard = ctx.server.shard(s);
    for (int i = 0; i < shard.num_dbs(); i++) {
      shard.watches().TouchAll(i, shard.db(i), nullptr, ctx.now_ms);
      shard.AddDirty(shard.db(i).size());
      FlushDb(shard.db(i), async);
    }
  }
  FlushTracking(ctx.server);
}

void ReplyContainerHelp(CommandContext& ctx, std::string_view command, const std::vector<std::string_view>& lines) {
  ctx.reply.ArrayHeader(lines.size() + 1 + 2);
  ctx.reply.SimpleString(std::string(command) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (std::string_view l : lines) ctx.reply.SimpleString(l);
  ctx.reply.SimpleString("HELP");
  ctx.reply.SimpleString("    Print this help.");
}

}  // namespace peregrine
