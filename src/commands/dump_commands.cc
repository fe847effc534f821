// DUMP and RESTORE: a value as Redis's serialized payload (its RDB form, the
// RDB version and a CRC-64), so that values move between Peregrine and
// Redis 7 either way (docs/persistence.md).
#include <cstring>
#include <string>

#include "commands/common.h"
#include "persist/rdb_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"
#include "server/persistence.h"

namespace peregrine {
namespace {

// DUMP key: nil for a missing key.
void DumpCommand(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[1]);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(RdbWriter::Dump(e->value));
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
// [FREQ frequency], checked in Redis's order.
void RestoreCommand(CommandContext& ctx) {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
  for (size_t i = 4; i < ctx.args.size(); i++) {
    const std::string_view opt = ctx.args[i];
    const bool more = i + 1 < ctx.args.size();
    if (EqualsIgnoreCase(opt, "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(opt, "absttl")) {
      absttl = true;
    } else if (EqualsIgnoreCase(opt, "idletime") && more && freq == -1) {
      if (!ParseIntArg(ctx, ctx.args[++i], &idle)) return;
      if (idle < 0) {
        ctx.reply.Error("ERR Invalid IDLETIME value, must be >= 0");
        return;
      }
    } else if (EqualsIgnoreCase(opt, "freq") && more && idle == -1) {
      if (!ParseIntArg(ctx, ctx.args[++i], &freq)) return;
      if (freq < 0 || freq > 255) {
        ctx.reply.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return;
      }
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  const std::string_view key = ctx.args[1];
  if (!replace && LookupWrite(ctx, key) != nullptr) {
    ctx.reply.Error("BUSYKEY Target key name already exists.");
    return;
  }
  int64_t ttl;
  if (!ParseIntArg(ctx, ctx.args[2], &ttl)) return;
  if (ttl < 0) {
    ctx.reply.Error("ERR Invalid TTL value, must be >= 0");
    return;
  }
  const std::string_view payload = ctx.args[3];
  if (!VerifyDumpPayload(payload, !ctx.server.debug().skip_checksum_validation.load(std::memory_order_relaxed))) {
    ctx.reply.Error("ERR DUMP payload version or checksum are wrong");
    return;
  }
  RdbReader reader(payload.substr(0, payload.size() - 10));
  uint8_t type;
  Value value;
  if (!reader.Byte(&type) || !rdb::IsObjectType(type) ||
      LoadRdbObject(reader, type, ContainerLimitsOf(ctx.server.config()), ctx.now_ms, &value) !=
          RdbLoadStatus::kOk) {
    ctx.reply.Error("ERR Bad data format");
    return;
  }
  Db& db = ctx.DbOf(key);
  bool deleted = false;
  if (replace && LookupWrite(ctx, key) != nullptr) deleted = db.Erase(key);
  if (ttl != 0 && !absttl) {
    if (ttl > INT64_MAX - ctx.now_ms) ttl = INT64_MAX;  // as far as a deadline goes
    else ttl += ctx.now_ms;
  }
  if (ttl != 0 && ttl <= ctx.now_ms) {
    // Already expired: the key is gone (if it was replaced) and that is all.
    if (deleted && Logging(ctx)) ctx.worker.LogAs({"DEL", key});
    if (deleted) {
      SignalModifiedKey(ctx, key);
      Notify(ctx, notify::kGeneric, "del", key);
    }
    ctx.reply.Ok();
    return;
  }
  if (ttl != 0 && !absttl && Logging(ctx)) {
    // Logged with the absolute deadline, as Redis propagates RESTORE.
    std::vector<std::string_view> args(ctx.args.begin(), ctx.args.end());
    const std::string abs = std::to_string(ttl);
    args[2] = abs;
    args.push_back("ABSTTL");
    ctx.worker.LogAs(args);
  }
  Db::Entry* e = InsertKey(ctx, db, key, std::move(value), ttl != 0 ? ttl : Db::kNoExpire);
  e->value.set_access(ctx.ShardOf(key).access().Restored(e->value.access(), idle, freq));
  SignalModifiedKey(ctx, key);
  Notify(ctx, notify::kGeneric, "restore", key);
  ctx.reply.Ok();
}

}  // namespace

void RegisterDumpCommands(CommandTable& t) {
  CommandFamily f(t, kAclKeyspace, "generic");
  f.Add({.name = "dump", .arity = 2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns a serialized representation of the value stored at a key.", .since = "2.6.0",
         .complexity = "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis "
                       "objects composing the value and M their average size. For small string values the time "
                       "complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
         .handler = DumpCommand});
  f.Add({.name = "restore", .arity = -4, .flags = kCmdWrite | kCmdDenyOom, .acl = kAclDangerous, .first_key = 1,
         .last_key = 1, .summary = "Creates a key from the serialized representation of a value.", .since = "2.6.0",
         .complexity = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N "
                       "is the number of Redis objects composing the value and M their average size. For small string "
                       "values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for "
                       "sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is "
                       "O(log(N)).",
         .handler = RestoreCommand});
  // What MIGRATE sends in cluster mode: RESTORE, served on a slot being
  // imported without ASKING.
  f.Add({.name = "restore-asking", .arity = -4, .flags = kCmdWrite | kCmdDenyOom | kCmdAsking, .acl = kAclDangerous,
         .first_key = 1, .last_key = 1, .summary = "An internal command for migrating keys in a cluster.",
         .since = "3.0.0", .group = "server",
         .complexity = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N "
                       "is the number of Redis objects composing the value and M their average size. For small string "
                       "values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for "
                       "sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is "
                       "O(log(N)).",
         .handler = RestoreCommand});
}

}  // namespace peregrine
