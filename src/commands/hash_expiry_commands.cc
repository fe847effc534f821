// Hash field expiry: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT, HTTL HPTTL
// HEXPIRETIME HPEXPIRETIME, HPERSIST (Redis 7.4), HGETDEL HGETEX HSETEX
// (Redis 8.0), with Redis's argument order, replies and error texts
// (docs/hashes-and-sets.md says where Peregrine differs: expired fields
// are removed before any command looks at a hash, so none of Redis's
// windows in which an expired field still counts exist here).
//
// A field's deadline lives in its packed entry (core/hash_object.h); a
// command that sets deadlines tells the database of the hash's earliest
// (Settle), whose active cycle then removes fields as they fall due.
#include <climits>
#include <span>
#include <string>
#include <string_view>

#include "commands/hash_commands.h"
#include "core/numbers.h"

namespace peregrine::hash_commands {
namespace {

// Redis's HFE_MAX_ABS_TIME_MSEC: the latest deadline a field may have.
constexpr int64_t kMaxFieldDeadline = (int64_t{1} << 46) - 1;
constexpr std::string_view kErrFieldsPosition = "ERR Mandatory argument FIELDS is missing or not at the right position";
constexpr std::string_view kErrNumFieldsMismatch = "ERR The `numfields` parameter must match the number of arguments";
constexpr std::string_view kErrNumFieldsPositive = "ERR Number of fields must be a positive integer";

// A field expiry time argument in `unit` (Redis's checks, in its order) as
// an absolute unix time in ms.
bool ParseFieldTime(CommandContext& ctx, std::string_view arg, ExpireUnit unit, int64_t* at) {
  const bool seconds = InSeconds(unit);
  const int64_t base = FromNow(unit) ? ctx.now_ms : 0;
  int64_t v;
  if (!ParseIntArg(ctx, arg, &v)) return false;
  if (v < 0) {
    ctx.reply.Error("ERR invalid expire time, must be >= 0");
    return false;
  }
  if (seconds) {
    if (v > kMaxFieldDeadline / 1000) {
      ReplyInvalidExpire(ctx);
      return false;
    }
    v *= 1000;
  }
  if (v > kMaxFieldDeadline - base) {
    ReplyInvalidExpire(ctx);
    return false;
  }
  *at = v + base;
  return true;
}

// "FIELDS numfields field [field ...]" from args[at] to the end.
// `count_error` is the command's text for a count that is not a positive
// integer.
bool ParseFields(CommandContext& ctx, size_t at, std::string_view count_error,
                 std::span<const std::string_view>* fields) {
  const auto args = ctx.args;
  if (at >= args.size() || !EqualsIgnoreCase(args[at], "fields")) {
    ctx.reply.Error(kErrFieldsPosition);
    return false;
  }
  if (at + 1 >= args.size()) {  // HGETEX k EX 10 FIELDS
    ReplyWrongArity(ctx);
    return false;
  }
  int64_t n;
  if (!ParseIntInRange(ctx, args[at + 1], 1, LLONG_MAX, &n, count_error)) return false;
  if (static_cast<uint64_t>(n) != args.size() - at - 2) {
    ctx.reply.Error(kErrNumFieldsMismatch);
    return false;
  }
  *fields = args.subspan(at + 2);
  return true;
}

void ReplyForEach(CommandContext& ctx, size_t n, int64_t v) {
  ctx.reply.ArrayHeader(n);
  for (size_t i = 0; i < n; i++) ctx.reply.Integer(v);
}

void ReplyNulls(CommandContext& ctx, size_t n) {
  ctx.reply.ArrayHeader(n);
  for (size_t i = 0; i < n; i++) ctx.reply.Null();
}

// HEXPIRE key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]
// (and HPEXPIRE, HEXPIREAT, HPEXPIREAT). Per field: -2 no such field, 0 the
// condition failed, 1 deadline set, 2 deleted (a time not in the future).
void HexpireGeneric(CommandContext& ctx, ExpireUnit unit) {
  const std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupHash(ctx, key, &e, /*write=*/true)) return;
  int64_t at;
  if (!ParseFieldTime(ctx, ctx.args[2], unit, &at)) return;
  enum class Cond { kNone, kNx, kXx, kGt, kLt } cond = Cond::kNone;
  const std::string_view c = ctx.args[3];
  if (EqualsIgnoreCase(c, "nx")) cond = Cond::kNx;
  else if (EqualsIgnoreCase(c, "xx")) cond = Cond::kXx;
  else if (EqualsIgnoreCase(c, "gt")) cond = Cond::kGt;
  else if (EqualsIgnoreCase(c, "lt")) cond = Cond::kLt;
  std::span<const std::string_view> fields;
  if (!ParseFields(ctx, cond == Cond::kNone ? 3 : 4, "ERR Parameter `numFields` should be greater than 0", &fields))
    return;
  if (e == nullptr) {
    ReplyForEach(ctx, fields.size(), -2);
    return;
  }
  HashObject& h = e->value.mutable_hash();
  h.MarkFieldExpiry();
  const int64_t min_before = h.min_deadline();
  bool changed = false, any_deleted = false;
  // Logged as Redis 7.4 propagates it: HPEXPIREAT for the fields given a
  // deadline, HDEL for those it deleted.
  const bool logging = Logging(ctx);
  std::vector<std::string_view> set_fields, deleted;
  ctx.reply.ArrayHeader(fields.size());
  for (std::string_view f : fields) {
    int64_t current;
    if (!h.GetDeadline(f, &current)) {
      ctx.reply.Integer(-2);
      continue;
    }
    // No deadline counts as infinitely far: NX and LT pass, XX and GT fail.
    const bool none = current == HashObject::kNoDeadline;
    bool pass = true;
    switch (cond) {
      case Cond::kNone: break;
      case Cond::kNx: pass = none; break;
      case Cond::kXx: pass = !none; break;
      case Cond::kGt: pass = !none && at > current; break;
      case Cond::kLt: pass = none || at < current; break;
    }
    if (!pass) {
      ctx.reply.Integer(0);
      continue;
    }
    changed = true;
    if (at <= ctx.now_ms) {
      h.Delete(f);
      any_deleted = true;
      ctx.reply.Integer(2);
      if (logging) deleted.push_back(f);
    } else {
      h.SetDeadline(f, at);
      ctx.reply.Integer(1);
      if (logging) set_fields.push_back(f);
    }
  }
  if (logging && !set_fields.empty()) {
    const std::string ms = std::to_string(at), n = std::to_string(set_fields.size());
    std::vector<std::string_view> args = {"HPEXPIREAT", key, ms, "FIELDS", n};
    args.insert(args.end(), set_fields.begin(), set_fields.end());
    ctx.worker.LogAs(args);
  }
  if (logging && !deleted.empty()) {
    std::vector<std::string_view> args = {"HDEL", key};
    args.insert(args.end(), deleted.begin(), deleted.end());
    ctx.worker.LogAs(args);
  }
  // One event, `hdel` if any field went (Redis), then Settle's `del`.
  if (changed) Notify(ctx, notify::kHash, any_deleted ? "hdel" : "hexpire", key);
  Settle(ctx, key, h, min_before);
  if (changed) SignalModifiedKey(ctx, key);
}
void HexpireCommand(CommandContext& ctx) { HexpireGeneric(ctx, ExpireUnit::kEx); }
void HpexpireCommand(CommandContext& ctx) { HexpireGeneric(ctx, ExpireUnit::kPx); }
void HexpireatCommand(CommandContext& ctx) { HexpireGeneric(ctx, ExpireUnit::kExat); }
void HpexpireatCommand(CommandContext& ctx) { HexpireGeneric(ctx, ExpireUnit::kPxat); }

// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS numfields field ...
// Per field: -2 no such field, -1 no deadline, else the time (seconds
// rounded up, as Redis).
enum class TtlForm { kTtl, kPttl, kExpireTime, kPexpireTime };
void HttlGeneric(CommandContext& ctx, TtlForm form) {
  Db::Entry* e;
  if (!LookupHash(ctx, ctx.args[1], &e)) return;
  std::span<const std::string_view> fields;
  if (!ParseFields(ctx, 2, kErrNumFieldsPositive, &fields)) return;
  if (e == nullptr) {
    ReplyForEach(ctx, fields.size(), -2);
    return;
  }
  const HashObject& h = e->value.hash();
  ctx.reply.ArrayHeader(fields.size());
  for (std::string_view f : fields) {
    int64_t at;
    if (!h.GetDeadline(f, &at)) {
      ctx.reply.Integer(-2);
      continue;
    }
    if (at == HashObject::kNoDeadline) {
      ctx.reply.Integer(-1);
      continue;
    }
    switch (form) {
      case TtlForm::kTtl: ctx.reply.Integer((at + 999 - ctx.now_ms) / 1000); break;
      case TtlForm::kPttl: ctx.reply.Integer(at - ctx.now_ms); break;
      case TtlForm::kExpireTime: ctx.reply.Integer((at + 999) / 1000); break;
      case TtlForm::kPexpireTime: ctx.reply.Integer(at); break;
    }
  }
}
void HttlCommand(CommandContext& ctx) { HttlGeneric(ctx, TtlForm::kTtl); }
void HpttlCommand(CommandContext& ctx) { HttlGeneric(ctx, TtlForm::kPttl); }
void HexpiretimeCommand(CommandContext& ctx) { HttlGeneric(ctx, TtlForm::kExpireTime); }
void HpexpiretimeCommand(CommandContext& ctx) { HttlGeneric(ctx, TtlForm::kPexpireTime); }

// HPERSIST key FIELDS numfields field ...: -2 no such field, -1 no
// deadline, 1 deadline removed.
void HpersistCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupHash(ctx, ctx.args[1], &e, /*write=*/true)) return;
  std::span<const std::string_view> fields;
  if (!ParseFields(ctx, 2, kErrNumFieldsPositive, &fields)) return;
  if (e == nullptr) {
    ReplyForEach(ctx, fields.size(), -2);
    return;
  }
  HashObject& h = e->value.mutable_hash();
  bool changed = false;
  ctx.reply.ArrayHeader(fields.size());
  for (std::string_view f : fields) {
    int64_t at;
    if (!h.GetDeadline(f, &at)) {
      ctx.reply.Integer(-2);
    } else if (at == HashObject::kNoDeadline) {
      ctx.reply.Integer(-1);
    } else {
      h.SetDeadline(f, HashObject::kNoDeadline);
      changed = true;
      ctx.reply.Integer(1);
    }
  }
  if (changed) {
    Notify(ctx, notify::kHash, "hpersist", ctx.args[1]);
    SignalModifiedKey(ctx, ctx.args[1]);
  }
}

// HGETDEL key FIELDS numfields field ...: the values (nil for a missing
// field), then the fields are deleted, and the key with its last field.
void HgetdelCommand(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupHash(ctx, key, &e, /*write=*/true)) return;
  std::span<const std::string_view> fields;
  if (!ParseFields(ctx, 2, kErrNumFieldsPositive, &fields)) return;
  if (e == nullptr) {
    ReplyNulls(ctx, fields.size());
    return;
  }
  HashObject& h = e->value.mutable_hash();
  bool changed = false;
  ctx.reply.ArrayHeader(fields.size());
  char scratch[packed::kScratchSize];
  for (std::string_view f : fields) {
    std::string_view v;
    if (!h.Get(f, &v, scratch)) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Bulk(v);  // copied out before the field goes
    h.Delete(f);
    changed = true;
  }
  if (changed) Notify(ctx, notify::kHash, "hdel", key);
  if (h.size() == 0) {
    ctx.DbOf(key).Erase(key);
    Notify(ctx, notify::kGeneric, "del", key);
  }
  if (changed) SignalModifiedKey(ctx, key);
}

// HGETEX key [EX seconds | PX ms | EXAT unix-s | PXAT unix-ms | PERSIST]
// FIELDS numfields field ...: the values, and each field present gets the
// deadline given (a time not in the future deletes it after its value is
// read) or loses its own (PERSIST).
void HgetexCommand(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupHash(ctx, key, &e, /*write=*/true)) return;
  const std::string_view opt = ctx.args[2];
  const ExpireUnit unit = ParseExpireUnit(opt);
  const bool expire = unit != ExpireUnit::kNone;
  bool persist = false;
  int64_t at = 0;
  size_t fields_at = 2;
  if (expire) {
    if (!ParseFieldTime(ctx, ctx.args[3], unit, &at)) return;
    fields_at = 4;
  } else if (EqualsIgnoreCase(opt, "persist")) {
    persist = true;
    fields_at = 3;
  }
  std::span<const std::string_view> fields;
  if (!ParseFields(ctx, fields_at, kErrNumFieldsPositive, &fields)) return;
  if (e == nullptr) {
    ReplyNulls(ctx, fields.size());
    return;
  }
  HashObject& h = e->value.mutable_hash();
  if (expire || persist) h.MarkFieldExpiry();
  const int64_t min_before = h.min_deadline();
  bool changed = false, any_deleted = false;
  ctx.reply.ArrayHeader(fields.size());
  char scratch[packed::kScratchSize];
  for (std::string_view f : fields) {
    std::string_view v;
    if (!h.Get(f, &v, scratch)) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Bulk(v);
    int64_t had = HashObject::kNoDeadline;
    if (persist) h.GetDeadline(f, &had);
    changed = changed || expire || had != HashObject::kNoDeadline;
    if (expire && at <= ctx.now_ms) {
      h.Delete(f);
      any_deleted = true;
    } else if (expire) {
      h.SetDeadline(f, at);
    } else if (persist) {
      h.SetDeadline(f, HashObject::kNoDeadline);
    }
  }
  // One deadline for every field: all of them got it, or all went.
  if (changed) Notify(ctx, notify::kHash, persist ? "hpersist" : any_deleted ? "hdel" : "hexpire", key);
  Settle(ctx, key, h, min_before);
  if (changed) SignalModifiedKey(ctx, key);
}

// HSETEX key [FNX | FXX] [EX seconds | PX ms | EXAT unix-s | PXAT unix-ms |
// KEEPTTL] FIELDS numfields field value [field value ...]: 1 when the
// fields were set, 0 when FNX (none may exist) or FXX (all must) failed.
// The options come in any order and are all checked before the key is
// looked up, as in Redis.
void HsetexCommand(CommandContext& ctx) {
  const auto args = ctx.args;
  enum class Cond { kNone, kFnx, kFxx } cond = Cond::kNone;
  ExpireUnit unit = ExpireUnit::kNone;
  bool keepttl = false;
  int64_t at = 0;
  std::span<const std::string_view> pairs;  // empty until FIELDS
  for (size_t i = 2; i < args.size() && pairs.empty(); i++) {
    const std::string_view a = args[i];
    if (EqualsIgnoreCase(a, "fields")) {
      if (i + 3 >= args.size()) {
        ReplyWrongArity(ctx);
        return;
      }
      int64_t n;
      if (!ParseIntInRange(ctx, args[i + 1], 1, INT_MAX, &n, "ERR invalid number of fields")) return;
      const size_t remaining = args.size() - i - 2;
      if (remaining % 2 != 0 || static_cast<uint64_t>(n) != remaining / 2) {
        ReplyWrongArity(ctx);
        return;
      }
      pairs = args.subspan(i + 2);
    } else if (const ExpireUnit u = ParseExpireUnit(a); u != ExpireUnit::kNone || EqualsIgnoreCase(a, "keepttl")) {
      if (unit != ExpireUnit::kNone || keepttl) {
        ctx.reply.Error("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
        return;
      }
      if (u == ExpireUnit::kNone) {
        keepttl = true;
        continue;
      }
      if (i + 1 >= args.size()) {
        ctx.reply.Error("ERR missing expire time");
        return;
      }
      if (!ParseFieldTime(ctx, args[++i], u, &at)) return;
      unit = u;
    } else if (EqualsIgnoreCase(a, "fnx") || EqualsIgnoreCase(a, "fxx")) {
      if (cond != Cond::kNone) {
        ctx.reply.Error("ERR Only one of FXX or FNX arguments can be specified");
        return;
      }
      cond = EqualsIgnoreCase(a, "fnx") ? Cond::kFnx : Cond::kFxx;
    } else {
      ctx.reply.Error("ERR unknown argument: " + AsCString(a));
      return;
    }
  }
  if (pairs.empty()) {
    ReplyWrongArity(ctx);
    return;
  }
  const bool expire = unit != ExpireUnit::kNone;
  const std::string_view key = args[1];
  Db::Entry* e;
  if (!LookupHash(ctx, key, &e, /*write=*/true)) return;
  if (e == nullptr && cond == Cond::kFxx) {
    ctx.reply.Integer(0);
    return;
  }
  if (e != nullptr && cond != Cond::kNone) {
    const HashObject& h = e->value.hash();
    char scratch[packed::kScratchSize];
    std::string_view v;
    for (size_t i = 0; i < pairs.size(); i += 2) {
      if (h.Get(pairs[i], &v, scratch) != (cond == Cond::kFxx)) {
        ctx.reply.Integer(0);
        return;
      }
    }
  }
  HashObject& h = HashOf(ctx, e, key);
  const HashLimits limits = Limits(ctx);
  ConvertForPairs(h, pairs, limits);
  if (expire) h.MarkFieldExpiry();
  const int64_t min_before = h.min_deadline();
  for (size_t i = 0; i < pairs.size(); i += 2) {
    const std::string_view f = pairs[i];
    if (keepttl) {
      h.SetKeepDeadline(f, pairs[i + 1], limits);
    } else {
      h.Set(f, pairs[i + 1], limits);
    }
    if (expire && at <= ctx.now_ms) {
      h.Delete(f);
    } else if (expire) {
      h.SetDeadline(f, at);
    }
  }
  Notify(ctx, notify::kHash, "hset", key);
  if (expire) Notify(ctx, notify::kHash, at <= ctx.now_ms ? "hdel" : "hexpire", key);
  Settle(ctx, key, h, min_before);
  SignalModifiedKey(ctx, key);
  ctx.reply.Integer(1);
}

}  // namespace

void RegisterHashExpiryCommands(CommandTable& t) {
  CommandFamily f(t, kAclHash, "hash");
  constexpr uint32_t kSet = kCmdWrite | kCmdDenyOom | kCmdFast;
  constexpr std::string_view kPerField = "O(N) where N is the number of specified fields";
  f.Add({.name = "hexpire", .arity = -6, .flags = kSet, .first_key = 1, .last_key = 1,
         .summary = "Set expiry for hash field using relative time to expire (seconds)", .since = "7.4.0",
         .complexity = kPerField, .handler = HexpireCommand});
  f.Add({.name = "hpexpire", .arity = -6, .flags = kSet, .first_key = 1, .last_key = 1,
         .summary = "Set expiry for hash field using relative time to expire (milliseconds)", .since = "7.4.0",
         .complexity = kPerField, .handler = HpexpireCommand});
  f.Add({.name = "hexpireat", .arity = -6, .flags = kSet, .first_key = 1, .last_key = 1,
         .summary = "Set expiry for hash field using an absolute Unix timestamp (seconds)", .since = "7.4.0",
         .complexity = kPerField, .handler = HexpireatCommand});
  f.Add({.name = "hpexpireat", .arity = -6, .flags = kSet, .first_key = 1, .last_key = 1,
         .summary = "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", .since = "7.4.0",
         .complexity = kPerField, .handler = HpexpireatCommand});
  f.Add({.name = "httl", .arity = -5, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the TTL in seconds of a hash field.", .since = "7.4.0", .complexity = kPerField,
         .handler = HttlCommand});
  f.Add({.name = "hpttl", .arity = -5, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the TTL in milliseconds of a hash field.", .since = "7.4.0", .complexity = kPerField,
         .handler = HpttlCommand});
  f.Add({.name = "hexpiretime", .arity = -5, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", .since = "7.4.0",
         .complexity = kPerField, .handler = HexpiretimeCommand});
  f.Add({.name = "hpexpiretime", .arity = -5, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the expiration time of a hash field as a Unix timestamp, in msec.", .since = "7.4.0",
         .complexity = kPerField, .handler = HpexpiretimeCommand});
  f.Add({.name = "hpersist", .arity = -5, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Removes the expiration time for each specified field", .since = "7.4.0", .complexity = kPerField,
         .handler = HpersistCommand});
  f.Add({.name = "hgetdel", .arity = -5, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the value of a field and deletes it from the hash.", .since = "8.0.0",
         .complexity = kPerField, .handler = HgetdelCommand});
  f.Add({.name = "hgetex", .arity = -5, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Get the value of one or more fields of a given hash key, and optionally set their expiration.",
         .since = "8.0.0", .complexity = kPerField, .handler = HgetexCommand});
  f.Add({.name = "hsetex", .arity = -6, .flags = kSet, .first_key = 1, .last_key = 1,
         .summary = "Set the value of one or more fields of a given hash key, and optionally set their expiration.",
         .since = "8.0.0", .complexity = "O(N) where N is the number of fields being set.", .handler = HsetexCommand});
}

}  // namespace peregrine::hash_commands
