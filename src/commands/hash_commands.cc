// Hash commands: HSET/HSETNX/HMSET, HGET/HMGET, HDEL, HLEN, HSTRLEN,
// HEXISTS, HGETALL/HKEYS/HVALS, HINCRBY/HINCRBYFLOAT, HRANDFIELD, HSCAN, on
// a HashObject (core/hash_object.h) per key, with Redis 7.2's replies and
// error texts. A hash whose last field goes is deleted, as in Redis.
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "commands/hash_commands.h"
#include "core/glob.h"
#include "core/hash_object.h"
#include "core/numbers.h"

namespace peregrine {
namespace hash_commands {

HashLimits Limits(const CommandContext& ctx) { return HashLimitsOf(ctx.server.config()); }

bool LookupHash(CommandContext& ctx, std::string_view key, Db::Entry** e, bool write) {
  if (!LookupTyped(ctx, key, ValueType::kHash, e, write)) return false;
  // (DbOf hashes the key again: only when something is due.)
  if (*e != nullptr && (*e)->value.hash().FieldsDue(ctx.now_ms)) *e = ctx.DbOf(key).ExpireFieldsOf(*e, key, ctx.now_ms);
  return true;
}

HashObject& HashOf(CommandContext& ctx, Db::Entry* e, std::string_view key) {
  if (e == nullptr) e = InsertKey(ctx, ctx.DbOf(key), key, Value(HashObject()));
  return e->value.mutable_hash();
}

void ConvertForPairs(HashObject& h, std::span<const std::string_view> pairs, const HashLimits& limits) {
  if (h.encoding() == HashObject::Encoding::kListpack &&
      (pairs.size() / 2 > limits.max_listpack_entries ||
       std::any_of(pairs.begin(), pairs.end(), [&](std::string_view a) { return a.size() > limits.max_listpack_value; })))
    h.ConvertToHashtable();
}

void Settle(CommandContext& ctx, std::string_view key, const HashObject& h, int64_t min_before) {
  if (h.size() == 0) {
    DeleteIfEmpty(ctx, key, h);
    Notify(ctx, notify::kGeneric, "del", key);  // after the command's own event
  } else if (h.min_deadline() != min_before && h.min_deadline() != 0) {
    ctx.DbOf(key).NoteHashDeadline(key, h.min_deadline());
  }
}

}  // namespace hash_commands

namespace {

using namespace hash_commands;

// The hash at `key` for a write, created empty if missing. nullptr (after
// replying WRONGTYPE) if the key holds another type.
HashObject* HashForWrite(CommandContext& ctx, std::string_view key) {
  Db::Entry* e;
  if (!LookupHash(ctx, key, &e, /*write=*/true)) return nullptr;
  return &HashOf(ctx, e, key);
}

// The hash at `key` for a read: false after replying WRONGTYPE; *out is
// nullptr if the key is missing.
bool HashForRead(CommandContext& ctx, std::string_view key, const HashObject** out) {
  Db::Entry* e;
  if (!LookupHash(ctx, key, &e)) return false;
  *out = e == nullptr ? nullptr : &e->value.hash();
  return true;
}

// HSET / HMSET key field value [field value ...]
void HsetGeneric(CommandContext& ctx, bool hmset) {
  if (ctx.args.size() % 2 == 1) {
    ReplyWrongArity(ctx);
    return;
  }
  HashObject* h = HashForWrite(ctx, ctx.args[1]);
  if (h == nullptr) return;
  const HashLimits limits = Limits(ctx);
  ConvertForPairs(*h, ctx.args.subspan(2), limits);
  int64_t added = 0;
  for (size_t i = 2; i < ctx.args.size(); i += 2) added += h->Set(ctx.args[i], ctx.args[i + 1], limits);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kHash, "hset", ctx.args[1]);
  if (hmset)
    ctx.reply.Ok();
  else
    ctx.reply.Integer(added);
}
void HsetCommand(CommandContext& ctx) { HsetGeneric(ctx, false); }
void HmsetCommand(CommandContext& ctx) { HsetGeneric(ctx, true); }

void HsetnxCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupHash(ctx, ctx.args[1], &e, /*write=*/true)) return;
  char scratch[packed::kScratchSize];
  std::string_view old;
  if (e != nullptr && e->value.hash().Get(ctx.args[2], &old, scratch)) {
    ctx.reply.Integer(0);
    return;
  }
  HashOf(ctx, e, ctx.args[1]).Set(ctx.args[2], ctx.args[3], Limits(ctx));
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kHash, "hset", ctx.args[1]);
  ctx.reply.Integer(1);
}

void HgetCommand(CommandContext& ctx) {
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  char scratch[packed::kScratchSize];
  std::string_view v;
  if (h != nullptr && h->Get(ctx.args[2], &v, scratch))
    ctx.reply.Bulk(v);
  else
    ctx.reply.Null();
}

void HmgetCommand(CommandContext& ctx) {
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  char scratch[packed::kScratchSize];
  for (size_t i = 2; i < ctx.args.size(); i++) {
    std::string_view v;
    if (h != nullptr && h->Get(ctx.args[i], &v, scratch))
      ctx.reply.Bulk(v);
    else
      ctx.reply.Null();
  }
}

void HdelCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupHash(ctx, ctx.args[1], &e, /*write=*/true)) return;
  int64_t deleted = 0;
  if (e != nullptr) {
    HashObject& h = e->value.mutable_hash();
    for (size_t i = 2; i < ctx.args.size() && h.size() > 0; i++) deleted += h.Delete(ctx.args[i]);
    const bool emptied = h.size() == 0;
    DeleteIfEmpty(ctx, ctx.args[1], h);
    if (deleted > 0) {
      SignalModifiedKey(ctx, ctx.args[1]);
      Notify(ctx, notify::kHash, "hdel", ctx.args[1]);
      if (emptied) Notify(ctx, notify::kGeneric, "del", ctx.args[1]);
    }
  }
  ctx.reply.Integer(deleted);
}

void HlenCommand(CommandContext& ctx) {
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  ctx.reply.Integer(h == nullptr ? 0 : static_cast<int64_t>(h->size()));
}

void HstrlenCommand(CommandContext& ctx) {
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  char scratch[packed::kScratchSize];
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->Get(ctx.args[2], &v, scratch) ? static_cast<int64_t>(v.size()) : 0);
}

void HexistsCommand(CommandContext& ctx) {
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  char scratch[packed::kScratchSize];
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->Get(ctx.args[2], &v, scratch) ? 1 : 0);
}

// HGETALL (a map in RESP3), HKEYS, HVALS.
enum class Part { kBoth, kFields, kValues };
void ReplyAll(CommandContext& ctx, Part part) {
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  const size_t n = h == nullptr ? 0 : h->size();
  if (part == Part::kBoth)
    ctx.reply.MapHeader(n);
  else
    ctx.reply.ArrayHeader(n);
  if (h == nullptr) return;
  h->ForEach([&](std::string_view f, std::string_view v) {
    if (part != Part::kValues) ctx.reply.Bulk(f);
    if (part != Part::kFields) ctx.reply.Bulk(v);
  });
}
void HgetallCommand(CommandContext& ctx) { ReplyAll(ctx, Part::kBoth); }
void HkeysCommand(CommandContext& ctx) { ReplyAll(ctx, Part::kFields); }
void HvalsCommand(CommandContext& ctx) { ReplyAll(ctx, Part::kValues); }

void HincrbyCommand(CommandContext& ctx) {
  int64_t incr;
  if (!ParseIntArg(ctx, ctx.args[3], &incr)) return;
  Db::Entry* e;
  if (!LookupHash(ctx, ctx.args[1], &e, /*write=*/true)) return;
  char scratch[packed::kScratchSize];
  std::string_view old;
  int64_t current = 0;
  if (e != nullptr && e->value.hash().Get(ctx.args[2], &old, scratch) && !ParseInt64(old, &current)) {
    ctx.reply.Error("ERR hash value is not an integer");
    return;
  }
  int64_t result;
  if (__builtin_add_overflow(current, incr, &result)) {
    ctx.reply.Error(kErrOverflow);
    return;
  }
  char buf[CompactString::kIntBufferSize];
  HashOf(ctx, e, ctx.args[1]).SetKeepDeadline(ctx.args[2], std::string_view(buf, FormatInt64(result, buf)), Limits(ctx));
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kHash, "hincrby", ctx.args[1]);
  ctx.reply.Integer(result);
}

void HincrbyfloatCommand(CommandContext& ctx) {
  long double incr;
  if (!ParseLongDouble(ctx.args[3], &incr)) {
    ctx.reply.Error(kErrNotFloat);
    return;
  }
  if (std::isnan(incr) || std::isinf(incr)) {
    ctx.reply.Error("ERR value is NaN or Infinity");
    return;
  }
  Db::Entry* e;
  if (!LookupHash(ctx, ctx.args[1], &e, /*write=*/true)) return;
  long double current = 0;
  char scratch[packed::kScratchSize];
  std::string_view old;
  if (e != nullptr && e->value.hash().Get(ctx.args[2], &old, scratch) && !ParseLongDouble(old, &current)) {
    ctx.reply.Error("ERR hash value is not a float");
    return;
  }
  std::string text;
  if (!FormatLongDoubleHuman(current + incr, &text)) {
    ctx.reply.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  if (Logging(ctx)) [[unlikely]]
    ctx.worker.LogAs({"HSET", ctx.args[1], ctx.args[2], text});  // as Redis propagates it
  HashOf(ctx, e, ctx.args[1]).SetKeepDeadline(ctx.args[2], text, Limits(ctx));
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kHash, "hincrbyfloat", ctx.args[1]);
  ctx.reply.Bulk(text);
}

// HRANDFIELD key [count [WITHVALUES]]
void HrandfieldCommand(CommandContext& ctx) {
  std::mt19937_64& rng = ctx.shard.rng();
  if (ctx.args.size() == 2) {
    const HashObject* h;
    if (!HashForRead(ctx, ctx.args[1], &h)) return;
    if (h == nullptr) {
      ctx.reply.Null();
      return;
    }
    std::string_view f, v;
    char s0[packed::kScratchSize], s1[packed::kScratchSize];
    h->Random(rng, &f, &v, s0, s1);
    ctx.reply.Bulk(f);
    return;
  }
  int64_t l;
  if (!ParseIntInRange(ctx, ctx.args[2], -LLONG_MAX, LLONG_MAX, &l)) return;
  bool withvalues = false;
  if (ctx.args.size() > 4 || (ctx.args.size() == 4 && !EqualsIgnoreCase(ctx.args[3], "withvalues"))) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  if (ctx.args.size() == 4) {
    withvalues = true;
    if (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2) {
      ctx.reply.Error("ERR value is out of range");
      return;
    }
  }
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  if (h == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  // One pick: RESP3 gives [field, value] pairs, RESP2 a flat array.
  auto reply_pick = [&](std::string_view f, std::string_view v) {
    if (withvalues && ctx.reply.resp() >= 3) ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(f);
    if (withvalues) ctx.reply.Bulk(v);
  };
  auto header = [&](uint64_t picks) {
    ctx.reply.ArrayHeader(withvalues && ctx.reply.resp() < 3 ? picks * 2 : picks);
  };
  const uint64_t size = h->size();
  if (l < 0) {  // repeats allowed
    const uint64_t count = static_cast<uint64_t>(-l);
    header(count);
    char s0[packed::kScratchSize], s1[packed::kScratchSize];
    for (uint64_t i = 0; i < count; i++) {
      if (ctx.reply.Full()) break;
      std::string_view f, v;
      h->Random(rng, &f, &v, s0, s1);
      reply_pick(f, v);
    }
    return;
  }
  const uint64_t count = static_cast<uint64_t>(l);
  if (count >= size) {  // the whole hash
    header(size);
    h->ForEach(reply_pick);
    return;
  }
  char s0[packed::kScratchSize], s1[packed::kScratchSize];
  using Pick = std::pair<std::string, std::string>;
  const std::vector<Pick> picks = PickDistinct<Pick>(
      rng, size, count,
      [&](std::vector<Pick>* all) {
        h->ForEach([&](std::string_view f, std::string_view v) { all->emplace_back(f, v); });
      },
      [&] {
        std::string_view f, v;
        h->Random(rng, &f, &v, s0, s1);
        return Pick(f, v);
      },
      [](const Pick& p) { return std::string_view(p.first); });
  header(picks.size());
  for (const auto& [f, v] : picks) reply_pick(f, v);
}

// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]
void HscanCommand(CommandContext& ctx) {
  ScanOptions o;
  if (!ParseCursor(ctx, ctx.args[2], &o.cursor)) return;
  const HashObject* h;
  if (!HashForRead(ctx, ctx.args[1], &h)) return;
  std::vector<std::string> items;
  if (h == nullptr) {
    ReplyScanPage(ctx, 0, items);
    return;
  }
  if (!ParseKeyScanOptions(ctx, /*allow_novalues=*/true, &o)) return;
  const uint64_t next = h->Scan(o.cursor, static_cast<size_t>(o.count), [&](std::string_view f, std::string_view v) {
    if (o.use_pattern && !GlobMatch(o.pattern, f)) return;
    items.emplace_back(f);
    if (!o.novalues) items.emplace_back(v);
  });
  ReplyScanPage(ctx, next, items);
}

constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;

}  // namespace

void RegisterHashCommands(CommandTable& t) {
  CommandFamily f(t, kAclHash, "hash");
  f.Add({.name = "hset", .arity = -4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Creates or modifies the value of a field in a hash.", .since = "2.0.0",
         .complexity = "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is "
                       "called with multiple field/value pairs.",
         .handler = HsetCommand});
  f.Add({.name = "hsetnx", .arity = 4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Sets the value of a field in a hash only when the field doesn't exist.", .since = "2.0.0",
         .complexity = "O(1)", .handler = HsetnxCommand});
  f.Add({.name = "hmset", .arity = -4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Sets the values of multiple fields.", .since = "2.0.0",
         .complexity = "O(N) where N is the number of fields being set.", .handler = HmsetCommand});
  f.Add({.name = "hget", .arity = 3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the value of a field in a hash.", .since = "2.0.0", .complexity = "O(1)",
         .handler = HgetCommand});
  f.Add({.name = "hmget", .arity = -3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the values of all fields in a hash.", .since = "2.0.0",
         .complexity = "O(N) where N is the number of fields being requested.", .handler = HmgetCommand});
  f.Add({.name = "hdel", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.",
         .since = "2.0.0", .complexity = "O(N) where N is the number of fields to be removed.",
         .handler = HdelCommand});
  f.Add({.name = "hlen", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the number of fields in a hash.", .since = "2.0.0", .complexity = "O(1)",
         .handler = HlenCommand});
  f.Add({.name = "hstrlen", .arity = 3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the length of the value of a field.", .since = "3.2.0", .complexity = "O(1)",
         .handler = HstrlenCommand});
  f.Add({.name = "hexists", .arity = 3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Determines whether a field exists in a hash.", .since = "2.0.0", .complexity = "O(1)",
         .handler = HexistsCommand});
  f.Add({.name = "hgetall", .arity = 2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns all fields and values in a hash.", .since = "2.0.0",
         .complexity = "O(N) where N is the size of the hash.", .handler = HgetallCommand});
  f.Add({.name = "hkeys", .arity = 2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns all fields in a hash.", .since = "2.0.0",
         .complexity = "O(N) where N is the size of the hash.", .handler = HkeysCommand});
  f.Add({.name = "hvals", .arity = 2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns all values in a hash.", .since = "2.0.0",
         .complexity = "O(N) where N is the size of the hash.", .handler = HvalsCommand});
  f.Add({.name = "hincrby", .arity = 4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the "
                    "field doesn't exist.",
         .since = "2.0.0", .complexity = "O(1)", .handler = HincrbyCommand});
  f.Add({.name = "hincrbyfloat", .arity = 4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Increments the floating point value of a field by a number. Uses 0 as initial value if the field "
                    "doesn't exist.",
         .since = "2.6.0", .complexity = "O(1)", .handler = HincrbyfloatCommand});
  f.Add({.name = "hrandfield", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns one or more random fields from a hash.", .since = "6.2.0",
         .complexity = "O(N) where N is the number of fields returned", .handler = HrandfieldCommand});
  f.Add({.name = "hscan", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Iterates over fields and values of a hash.", .since = "2.8.0",
         .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
                       "cursor to return back to 0. N is the number of elements inside the collection.",
         .handler = HscanCommand});
  hash_commands::RegisterHashExpiryCommands(t);
}

}  // namespace peregrine
