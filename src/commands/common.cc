// Shared command helpers (see common.h).
#include "commands/common.h"

#include <climits>
#include <string>

#include "core/numbers.h"
#include "server/client.h"
#include "server/server.h"

namespace peregrine {

bool ParseIntArg(CommandContext& ctx, std::string_view arg, int64_t* out, std::string_view error) {
  if (ParseInt64(arg, out)) return true;
  ctx.reply.Error(error);
  return false;
}

bool ParseDbIndex(CommandContext& ctx, std::string_view arg, int* out) {
  int64_t v;
  if (!ParseIntArg(ctx, arg, &v)) return false;
  if (v < INT_MIN || v > INT_MAX) {  // Redis's getIntFromObjectOrReply
    ctx.reply.Error("ERR value is out of range, value must between -2147483648 and 2147483647");
    return false;
  }
  if (v < 0 || v >= ctx.shard.num_dbs()) {
    ctx.reply.Error(kErrDbIndex);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

void ReplyInvalidExpire(CommandContext& ctx) {
  std::string name = ctx.client.last_cmd ? ctx.client.last_cmd->fullname : "";
  ctx.reply.Error("ERR invalid expire time in '" + name + "' command");
}

}  // namespace peregrine
