// Keyspace commands: DEL/UNLINK, EXISTS, TYPE, TOUCH, the EXPIRE family,
// TTL/PTTL, EXPIRETIME, PERSIST, KEYS, SCAN, RENAME(NX), RANDOMKEY, COPY,
// MOVE, SWAPDB, DBSIZE, FLUSHDB, FLUSHALL.
//
// Whole-keyspace commands (KEYS, SCAN, DBSIZE, RANDOMKEY, FLUSH*, SWAPDB) go
// over every shard, so that they stay correct when there is more than one.
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands/common.h"
#include "core/glob.h"
#include "core/numbers.h"
#include "server/client.h"

namespace peregrine {
namespace {

void DelCommand(CommandContext& ctx) {
  int64_t deleted = 0;
  for (size_t i = 1; i < ctx.args.size(); i++) {
    if (LookupWrite(ctx, ctx.args[i]) != nullptr && ctx.DbOf(ctx.args[i]).Erase(ctx.args[i])) {
      deleted++;
      SignalModifiedKey(ctx, ctx.args[i]);
      Notify(ctx, notify::kGeneric, "del", ctx.args[i]);
    }
  }
  ctx.reply.Integer(deleted);
}

// EXISTS and TOUCH: how many of the keys exist. TOUCH's lookup marks a key
// as used for eviction (all TOUCH has to do); EXISTS's does not.
int64_t CountExisting(CommandContext& ctx, bool touch) {
  int64_t count = 0;
  for (size_t i = 1; i < ctx.args.size(); i++)
    if (LookupRead(ctx, ctx.args[i], touch) != nullptr) count++;
  return count;
}
void ExistsCommand(CommandContext& ctx) { ctx.reply.Integer(CountExisting(ctx, false)); }
void TouchCommand(CommandContext& ctx) { ctx.reply.Integer(CountExisting(ctx, true)); }

void TypeCommand(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[1], /*touch=*/false);
  ctx.reply.SimpleString(e == nullptr ? "none" : TypeName(e->value.type()));
}

// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX|XX|GT|LT]
void ExpireGeneric(CommandContext& ctx, int64_t basetime_ms, bool seconds) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < ctx.args.size(); i++) {
    std::string_view opt = ctx.args[i];
    if (EqualsIgnoreCase(opt, "nx")) nx = true;
    else if (EqualsIgnoreCase(opt, "xx")) xx = true;
    else if (EqualsIgnoreCase(opt, "gt")) gt = true;
    else if (EqualsIgnoreCase(opt, "lt")) lt = true;
    else {
      ctx.reply.Error("ERR Unsupported option " + AsCString(opt));
      return;
    }
  }
  if (nx && (xx || gt || lt)) {
    ctx.reply.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return;
  }
  if (gt && lt) {
    ctx.reply.Error("ERR GT and LT options at the same time are not compatible");
    return;
  }
  int64_t when;
  if (!ParseIntArg(ctx, ctx.args[2], &when)) return;
  if (seconds) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
      ReplyInvalidExpire(ctx);
      return;
    }
    when *= 1000;
  }
  if (when > LLONG_MAX - basetime_ms) {
    ReplyInvalidExpire(ctx);
    return;
  }
  when += basetime_ms;
  Db::Entry* e = LookupWrite(ctx, ctx.args[1]);
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  // No TTL counts as infinite: GT always fails on it, LT always succeeds (even
  // for a deadline of LLONG_MAX), as in Redis.
  const int64_t current = e->has_expire() ? e->expire_ms() : LLONG_MAX;
  if ((nx && e->has_expire()) || (xx && !e->has_expire()) || (gt && when <= current) ||
      (lt && e->has_expire() && when >= current)) {
    ctx.reply.Integer(0);
    return;
  }
  if (Logging(ctx)) [[unlikely]]
    LogDeadline(ctx, ctx.args[1], when, ctx.args.subspan(3));
  const bool gone = when <= ctx.now_ms;
  if (gone)
    ctx.db().Erase(ctx.args[1]);
  else
    ctx.db().SetExpire(e, when);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kGeneric, gone ? "del" : "expire", ctx.args[1]);
  ctx.reply.Integer(1);
}

void ExpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, ctx.now_ms, true); }
void PexpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, ctx.now_ms, false); }
void ExpireatCommand(CommandContext& ctx) { ExpireGeneric(ctx, 0, true); }
void PexpireatCommand(CommandContext& ctx) { ExpireGeneric(ctx, 0, false); }

// The key of TTL-like commands if it exists with a deadline; otherwise
// replies -2 (missing) or -1 (no deadline) and returns nullptr.
Db::Entry* KeyWithDeadline(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[1], /*touch=*/false);
  if (e == nullptr || !e->has_expire()) {
    ctx.reply.Integer(e == nullptr ? -2 : -1);
    return nullptr;
  }
  return e;
}

// TTL / PTTL: remaining time; -2 missing, -1 no deadline. TTL rounds.
void TtlGeneric(CommandContext& ctx, bool ms) {
  Db::Entry* e = KeyWithDeadline(ctx);
  if (e == nullptr) return;
  int64_t ttl = e->expire_ms() - ctx.now_ms;
  if (ttl < 0) ttl = 0;
  ctx.reply.Integer(ms ? ttl : (ttl + 500) / 1000);
}
void TtlCommand(CommandContext& ctx) { TtlGeneric(ctx, false); }
void PttlCommand(CommandContext& ctx) { TtlGeneric(ctx, true); }

void ExpiretimeGeneric(CommandContext& ctx, bool ms) {
  Db::Entry* e = KeyWithDeadline(ctx);
  if (e == nullptr) return;
  ctx.reply.Integer(ms ? e->expire_ms() : (e->expire_ms() + 500) / 1000);  // rounded, as Redis
}
void ExpiretimeCommand(CommandContext& ctx) { ExpiretimeGeneric(ctx, false); }
void PexpiretimeCommand(CommandContext& ctx) { ExpiretimeGeneric(ctx, true); }

void PersistCommand(CommandContext& ctx) {
  Db::Entry* e = LookupWrite(ctx, ctx.args[1]);
  if (e == nullptr || !e->has_expire()) {
    ctx.reply.Integer(0);
    return;
  }
  ctx.db().SetExpire(e, Db::kNoExpire);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kGeneric, "persist", ctx.args[1]);
  ctx.reply.Integer(1);
}

void KeysCommand(CommandContext& ctx) {
  std::string_view pattern = ctx.args[1];
  const bool all = pattern == "*";
  std::vector<std::string> keys;  // copies: a packed key's bytes exist only unpacked
  for (size_t s = 0; s < ctx.server.num_shards(); s++) {
    ctx.server.shard(s).db(ctx.client.db).ForEach([&](const Db::Entry& e) {
      if (Db::IsExpired(e, ctx.now_ms)) return;
      char scratch[CompactKey::kScratchSize];
      const std::string_view k = e.key(scratch);
      if (all || GlobMatch(pattern, k)) keys.emplace_back(k);
    });
  }
  ctx.reply.ArrayHeader(keys.size());
  for (const std::string& k : keys) ctx.reply.Bulk(k);
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
//
// The cursor is the table's hash position (Db::Scan) with the shard's index
// in its low bits: Db::Scan's positions have their low 24 bits clear (they
// start home groups), and bit_width(shards - 1) bits are used (none with one
// shard, so cursors are the table's own). A shard's scan that ends goes on
// at the next shard's start.
void ScanCommand(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseCursor(ctx, ctx.args[1], &cursor)) return;
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
  std::string_view type_name;
  bool use_type = false;
  for (size_t i = 2; i < ctx.args.size(); i++) {
    std::string_view opt = ctx.args[i];
    bool has_next = i + 1 < ctx.args.size();
    if (EqualsIgnoreCase(opt, "count") && has_next) {
      if (!ParseIntArg(ctx, ctx.args[++i], &count)) return;
      if (count < 1) {
        ctx.reply.Error(kErrSyntax);
        return;
      }
    } else if (EqualsIgnoreCase(opt, "match") && has_next) {
      pattern = ctx.args[++i];
      use_pattern = pattern != "*";
    } else if (EqualsIgnoreCase(opt, "type") && has_next) {
      type_name = ctx.args[++i];
      use_type = true;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  const size_t nshards = ctx.server.num_shards();
  const int shard_bits = std::bit_width(nshards - 1);
  const uint64_t shard_mask = (uint64_t{1} << shard_bits) - 1;
  size_t shard = static_cast<size_t>(cursor & shard_mask);
  uint64_t pos = cursor & ~shard_mask;
  std::vector<std::string> keys;
  // At most 10 table steps per key asked for (COUNT is clamped so that this
  // cannot overflow; a step visits one home group).
  int64_t max_iterations = std::min<int64_t>(count, int64_t{1} << 40) * 10;
  while (shard < nshards) {
    Db& db = ctx.server.shard(shard).db(ctx.client.db);
    pos = db.Scan(pos, [&](const Db::Entry& e) { keys.emplace_back(e.key_string()); });
    if (pos == 0) shard++;  // this shard is done: the next one from its start
    if (max_iterations-- <= 0 || static_cast<int64_t>(keys.size()) >= count) break;
  }
  cursor = shard < nshards ? (pos | shard) : 0;

  // Filter after collecting, as Redis does: the table is not modified while
  // the scan step walks it.
  std::vector<std::string_view> out;
  out.reserve(keys.size());
  for (const std::string& k : keys) {
    if (use_pattern && !GlobMatch(pattern, k)) continue;
    Db::Entry* e = ctx.DbOf(k).Find(CompactKey::MakeProbe(k), ctx.now_ms, /*touch=*/false);  // expires lazily
    if (e == nullptr) continue;
    if (use_type && !EqualsIgnoreCase(TypeName(e->value.type()), type_name)) continue;
    out.push_back(k);
  }
  ReplyScanPage(ctx, cursor, out);
}

void RenameGeneric(CommandContext& ctx, bool nx) {
  std::string_view src = ctx.args[1], dst = ctx.args[2];
  Db& db = ctx.db();  // the source's
  Shard& dst_shard = ctx.ShardOf(dst);
  Db& dst_db = dst_shard.db(ctx.client.db);
  Db::Entry* e = LookupWrite(ctx, src);
  if (e == nullptr) {
    ctx.reply.Error(kErrNoSuchKey);
    return;
  }
  if (src == dst) {
    if (nx)
      ctx.reply.Integer(0);
    else
      ctx.reply.Ok();
    return;
  }
  if (LookupWrite(ctx, dst) != nullptr) {
    if (nx) {
      ctx.reply.Integer(0);
      return;
    }
    dst_db.Erase(dst);  // Erase moves no other entry, so `e` stays valid
  }
  Value v = std::move(e->value);
  const uint8_t access = v.access();  // the key keeps its LFU counter, as Redis's object does
  int64_t expire = e->expire_ms();
  db.Erase(src);
  dst_db.Insert(dst, std::move(v), expire)->value.set_access(access);
  SignalModifiedKey(ctx, ctx.shard, ctx.client.db, src);
  SignalModifiedKey(ctx, dst_shard, ctx.client.db, dst);
  // (Redis: dbAdd's `new` for the destination, then these two.)
  Notify(ctx, notify::kNew, "new", dst);
  Notify(ctx, notify::kGeneric, "rename_from", src);
  Notify(ctx, notify::kGeneric, "rename_to", dst);
  SignalKeyAsReady(ctx, dst_shard, ctx.client.db, dst);
  ReplyDone(ctx, nx);
}
void RenameCommand(CommandContext& ctx) { RenameGeneric(ctx, false); }
void RenamenxCommand(CommandContext& ctx) { RenameGeneric(ctx, true); }

void RandomkeyCommand(CommandContext& ctx) {
  // Pick a shard weighted by its key count, then a key; expired picks are
  // deleted and the draw repeats (each repetition removes a key, so it ends).
  while (true) {
    uint64_t total = 0;
    for (size_t s = 0; s < ctx.server.num_shards(); s++) total += ctx.server.shard(s).db(ctx.client.db).size();
    if (total == 0) {
      ctx.reply.Null();
      return;
    }
    uint64_t pick = ctx.shard.rng()() % total;
    size_t s = 0;
    while (pick >= ctx.server.shard(s).db(ctx.client.db).size()) {
      pick -= ctx.server.shard(s).db(ctx.client.db).size();
      s++;
    }
    Shard& shard = ctx.server.shard(s);
    Db& db = shard.db(ctx.client.db);
    const Db::Entry* e = db.RandomEntry(shard.rng());
    if (!Db::IsExpired(*e, ctx.now_ms)) {
      ctx.reply.Bulk(e->key_string());
      return;
    }
    std::string expired = e->key_string();
    db.Find(expired, ctx.now_ms);  // deletes it
  }
}

// COPY source destination [DB destination-db] [REPLACE]
void CopyCommand(CommandContext& ctx) {
  bool replace = false;
  int dbid = ctx.client.db;
  for (size_t i = 3; i < ctx.args.size(); i++) {
    if (EqualsIgnoreCase(ctx.args[i], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(ctx.args[i], "db") && i + 1 < ctx.args.size()) {
      if (!ParseDbIndex(ctx, ctx.args[++i], &dbid)) return;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  if (ctx.server.cluster() != nullptr && (ctx.client.db != 0 || dbid != 0))
    return ctx.reply.Error("ERR Copying to another database is not allowed in cluster mode");
  std::string_view src = ctx.args[1], dst = ctx.args[2];
  if (dbid == ctx.client.db && src == dst) {
    ctx.reply.Error(kErrSameObject);
    return;
  }
  Db::Entry* e = LookupWrite(ctx, src);
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  Shard& target_shard = ctx.ShardOf(dst);
  Db& target = target_shard.db(dbid);
  if (target.Find(dst, ctx.now_ms) != nullptr) {
    if (!replace) {
      ctx.reply.Integer(0);
      return;
    }
    target.Erase(dst);  // Erase moves no other entry, so `e` stays valid
  }
  // The value is copied before Insert runs. A copied integer is an object of
  // its own in Redis (dupStringObject), never a shared one.
  Db::Entry* copy = target.Insert(dst, e->value, e->expire_ms());
  if (copy->value.is_string() && copy->value.str().is_int()) copy->value.mutable_str().MarkUnsharedInt();
  SignalModifiedKey(ctx, target_shard, dbid, dst);
  SignalKeyAsReady(ctx, target_shard, dbid, dst);
  Notify(ctx, notify::kNew, "new", dst, dbid);
  Notify(ctx, notify::kGeneric, "copy_to", dst, dbid);
  ctx.reply.Integer(1);
}

void MoveCommand(CommandContext& ctx) {
  if (ctx.server.cluster() != nullptr) return ctx.reply.Error("ERR MOVE is not allowed in cluster mode");
  int dbid;
  if (!ParseDbIndex(ctx, ctx.args[2], &dbid)) return;
  if (dbid == ctx.client.db) {
    ctx.reply.Error(kErrSameObject);
    return;
  }
  std::string_view key = ctx.args[1];
  Db::Entry* e = LookupWrite(ctx, key);
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  Db& target = ctx.shard.db(dbid);
  if (target.Find(key, ctx.now_ms) != nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  const uint8_t access = e->value.access();
  target.Insert(key, std::move(e->value), e->expire_ms())->value.set_access(access);
  ctx.db().Erase(key);
  SignalModifiedKey(ctx, ctx.shard, ctx.client.db, key);
  SignalModifiedKey(ctx, ctx.shard, dbid, key);
  SignalKeyAsReady(ctx, ctx.shard, dbid, key);
  Notify(ctx, notify::kNew, "new", key, dbid);
  Notify(ctx, notify::kGeneric, "move_from", key);
  Notify(ctx, notify::kGeneric, "move_to", key, dbid);
  ctx.reply.Integer(1);
}

void SwapdbCommand(CommandContext& ctx) {
  if (ctx.server.cluster() != nullptr) return ctx.reply.Error("ERR SWAPDB is not allowed in cluster mode");
  // As Redis's getIntFromObjectOrReply with a message: not an integer, or
  // outside int, gets the command's own error.
  int64_t a, b;
  if (!ParseInt64(ctx.args[1], &a) || a < INT_MIN || a > INT_MAX) {
    ctx.reply.Error("ERR invalid first DB index");
    return;
  }
  if (!ParseInt64(ctx.args[2], &b) || b < INT_MIN || b > INT_MAX) {
    ctx.reply.Error("ERR invalid second DB index");
    return;
  }
  const int n = ctx.shard.num_dbs();
  if (a < 0 || a >= n || b < 0 || b >= n) {
    ctx.reply.Error(kErrDbIndex);
    return;
  }
  if (a != b) {
    ctx.shard.AddDirty();
    for (size_t s = 0; s < ctx.server.num_shards(); s++) {
      Shard& shard = ctx.server.shard(s);
      // Watchers of a key that exists on either side see a change
      // (touchAllWatchedKeysInDb both ways, before the swap).
      shard.watches().TouchAll(static_cast<int>(a), shard.db(static_cast<int>(a)), &shard.db(static_cast<int>(b)),
                               ctx.now_ms);
      shard.watches().TouchAll(static_cast<int>(b), shard.db(static_cast<int>(b)), &shard.db(static_cast<int>(a)),
                               ctx.now_ms);
      shard.db(static_cast<int>(a)).Swap(shard.db(static_cast<int>(b)));
      // Clients wait on a database's number: those of both may find their
      // keys now (Redis's scanDatabaseForReadyKeys).
      if (shard.blocking().empty()) continue;
      const bool ready_a = shard.blocking().SignalAll(static_cast<int>(a));
      if (shard.blocking().SignalAll(static_cast<int>(b)) || ready_a) ctx.worker.NoteReady(static_cast<uint32_t>(s));
    }
  }
  ctx.reply.Ok();
}

void DbsizeCommand(CommandContext& ctx) {
  uint64_t n = 0;
  for (size_t s = 0; s < ctx.server.num_shards(); s++) n += ctx.server.shard(s).db(ctx.client.db).size();
  ctx.reply.Integer(static_cast<int64_t>(n));
}

// FLUSHDB / FLUSHALL [ASYNC|SYNC]: the keys go at once; with ASYNC (or
// neither, and lazyfree-lazy-user-flush yes) a large table's are freed
// after, between this worker's events (Db::ClearLater), as Redis frees
// them in the background. -1 (error replied), 0 sync, 1 async.
int ParseFlushMode(CommandContext& ctx) {
  if (ctx.args.size() > 2 ||
      (ctx.args.size() == 2 && !EqualsIgnoreCase(ctx.args[1], "async") && !EqualsIgnoreCase(ctx.args[1], "sync"))) {
    ctx.reply.Error(kErrSyntax);
    return -1;
  }
  if (ctx.args.size() == 2) return EqualsIgnoreCase(ctx.args[1], "async") ? 1 : 0;
  return ctx.server.config().lazyfree_lazy_user_flush ? 1 : 0;
}


void FlushdbCommand(CommandContext& ctx) {
  const int mode = ParseFlushMode(ctx);
  if (mode < 0) return;
  for (size_t s = 0; s < ctx.server.num_shards(); s++) {
    Shard& shard = ctx.server.shard(s);
    shard.watches().TouchAll(ctx.client.db, shard.db(ctx.client.db), nullptr, ctx.now_ms);
    shard.AddDirty(shard.db(ctx.client.db).size());
    FlushDb(shard.db(ctx.client.db), mode == 1);
  }
  FlushTracking(ctx.server);  // (every key, as Redis 7.2, whatever the database)
  ctx.shard.AddDirty();
  ctx.reply.Ok();
}

void FlushallCommand(CommandContext& ctx) {
  const int mode = ParseFlushMode(ctx);
  if (mode < 0) return;
  FlushAllShards(ctx, mode == 1);
  // As Redis's flushAllDataAndResetRDB: with a save schedule, the (empty)
  // snapshot is written at once, and the flush still counts as a change.
  if (!ctx.server.config().save_params.empty()) {
    std::string err;
    ctx.server.AbortBgSave();  // (as Redis kills its child)
    SaveRdbFile(ctx.server, ctx.server.config().dbfilename, &err);
  }
  ctx.shard.AddDirty();
  ctx.reply.Ok();
}

// OBJECT ENCODING / REFCOUNT key: nil for a missing key.
void ObjectEncodingCommand(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[2], /*touch=*/false);
  if (e == nullptr)
    ctx.reply.Null();
  else
    ctx.reply.Bulk(e->value.EncodingName());
}

void ObjectRefcountCommand(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[2], /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  // Values are never shared between keys here. Redis stores the integers
  // 0..9999 as shared objects (reported with refcount INT_MAX) unless a
  // maxmemory limit with an LRU/LFU policy is set, or the value is COPY's;
  // clients see that number, so it is reported the same way, by the
  // configuration as it is now (Redis decides when the value is stored).
  const Config& config = ctx.server.config();
  const bool shared = e->value.is_string() && e->value.str().is_int() &&
                      !e->value.str().is_unshared_int() && e->value.str().int_value() >= 0 &&
                      e->value.str().int_value() < 10000 &&
                      (config.maxmemory == 0 || !IsLruOrLfuPolicy(config.maxmemory_policy));
  ctx.reply.Integer(shared ? 2147483647 : 1);
}

// OBJECT FREQ key: the LFU counter, under an LFU policy only.
void ObjectFreqCommand(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[2], /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Null();
  } else if (ctx.shard.access().mode() != AccessTracker::Mode::kLfu) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
  } else {
    ctx.reply.Integer(AccessTracker::Frequency(e->value.access()));
  }
}

// OBJECT IDLETIME key: seconds since the last access, except under an LFU policy.
void ObjectIdletimeCommand(CommandContext& ctx) {
  Db::Entry* e = LookupRead(ctx, ctx.args[2], /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Null();
  } else if (ctx.shard.access().mode() == AccessTracker::Mode::kLfu) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching "
        "between policies at runtime LRU and LFU data will take some time to adjust.");
  } else {
    ctx.reply.Integer(static_cast<int64_t>(ctx.shard.access().IdleSeconds(e->value.access())));
  }
}

void ObjectHelpCommand(CommandContext& ctx) {
  const std::vector<std::string_view> lines = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Print this help."};
  ReplyHelp(ctx, lines);
}

}  // namespace

void RegisterKeyCommands(CommandTable& t) {
  CommandFamily f(t, kAclKeyspace, "generic");
  f.Add({.name = "del", .arity = -2, .flags = kCmdWrite, .first_key = 1, .last_key = -1,
         .summary = "Deletes one or more keys.", .since = "1.0.0",
         .complexity = "O(N) where N is the number of keys that will be removed.",
         .tips = {"request_policy:multi_shard", "response_policy:agg_sum"}, .handler = DelCommand});
  f.Add({.name = "unlink", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = -1,
         .summary = "Asynchronously deletes one or more keys.", .since = "4.0.0",
         .complexity = "O(1) for each key removed regardless of its size.",
         .tips = {"request_policy:multi_shard", "response_policy:agg_sum"}, .handler = DelCommand});
  f.Add({.name = "exists", .arity = -2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = -1,
         .summary = "Determines whether one or more keys exist.", .since = "1.0.0",
         .complexity = "O(N) where N is the number of keys to check.",
         .tips = {"request_policy:multi_shard", "response_policy:agg_sum"}, .handler = ExistsCommand});
  f.Add({.name = "type", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Determines the type of value stored at a key.", .since = "1.0.0", .complexity = "O(1)",
         .handler = TypeCommand});
  f.Add({.name = "touch", .arity = -2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = -1,
         .summary = "Returns the number of existing keys out of those specified after updating the time they were last "
                    "accessed.",
         .since = "3.2.1", .complexity = "O(N) where N is the number of keys that will be touched.",
         .tips = {"request_policy:multi_shard", "response_policy:agg_sum"}, .handler = TouchCommand});
  f.Add({.name = "expire", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Sets the expiration time of a key in seconds.", .since = "1.0.0", .complexity = "O(1)",
         .handler = ExpireCommand});
  f.Add({.name = "pexpire", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Sets the expiration time of a key in milliseconds.", .since = "2.6.0", .complexity = "O(1)",
         .handler = PexpireCommand});
  f.Add({.name = "expireat", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Sets the expiration time of a key to a Unix timestamp.", .since = "1.2.0", .complexity = "O(1)",
         .handler = ExpireatCommand});
  f.Add({.name = "pexpireat", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Sets the expiration time of a key to a Unix milliseconds timestamp.", .since = "2.6.0",
         .complexity = "O(1)", .handler = PexpireatCommand});
  f.Add({.name = "expiretime", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the expiration time of a key as a Unix timestamp.", .since = "7.0.0", .complexity = "O(1)",
         .handler = ExpiretimeCommand});
  f.Add({.name = "pexpiretime", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the expiration time of a key as a Unix milliseconds timestamp.", .since = "7.0.0",
         .complexity = "O(1)", .handler = PexpiretimeCommand});
  f.Add({.name = "ttl", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the expiration time in seconds of a key.", .since = "1.0.0", .complexity = "O(1)",
         .tips = {"nondeterministic_output"}, .handler = TtlCommand});
  f.Add({.name = "pttl", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the expiration time in milliseconds of a key.", .since = "2.6.0", .complexity = "O(1)",
         .tips = {"nondeterministic_output"}, .handler = PttlCommand});
  f.Add({.name = "persist", .arity = 2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Removes the expiration time of a key.", .since = "2.2.0", .complexity = "O(1)",
         .handler = PersistCommand});
  f.Add({.name = "keys", .arity = 2, .flags = kCmdReadonly | kCmdAllShards, .acl = kAclDangerous,
         .summary = "Returns all key names that match a pattern.", .since = "1.0.0",
         .complexity = "O(N) with N being the number of keys in the database, under the assumption that the key names "
                       "in the database and the given pattern have limited length.",
         .tips = {"request_policy:all_shards", "nondeterministic_output_order"}, .handler = KeysCommand});
  f.Add({.name = "scan", .arity = -2, .flags = kCmdReadonly | kCmdAllShards,
         .summary = "Iterates over the key names in the database.", .since = "2.8.0",
         .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
                       "cursor to return back to 0. N is the number of elements inside the collection.",
         .tips = {"nondeterministic_output", "request_policy:special"}, .handler = ScanCommand});
  f.Add({.name = "rename", .arity = 3, .flags = kCmdWrite, .first_key = 1, .last_key = 2,
         .summary = "Renames a key and overwrites the destination.", .since = "1.0.0", .complexity = "O(1)",
         .handler = RenameCommand});
  f.Add({.name = "renamenx", .arity = 3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 2,
         .summary = "Renames a key only when the target key name doesn't exist.", .since = "1.0.0",
         .complexity = "O(1)", .handler = RenamenxCommand});
  f.Add({.name = "randomkey", .arity = 1, .flags = kCmdReadonly | kCmdAllShards,
         .summary = "Returns a random key name from the database.", .since = "1.0.0", .complexity = "O(1)",
         .tips = {"request_policy:all_shards", "nondeterministic_output"}, .handler = RandomkeyCommand});
  f.Add({.name = "copy", .arity = -3, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = 2,
         .summary = "Copies the value of a key to a new key.", .since = "6.2.0",
         .complexity = "O(N) worst case for collections, where N is the number of nested items. O(1) for string "
                       "values.",
         .handler = CopyCommand});
  f.Add({.name = "move", .arity = 3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Moves a key to another database.", .since = "1.0.0", .complexity = "O(1)",
         .handler = MoveCommand});
  f.Add({.name = "swapdb", .arity = 3, .flags = kCmdWrite | kCmdFast | kCmdAllShards, .acl = kAclDangerous,
         .summary = "Swaps two Redis databases.", .since = "4.0.0",
         .complexity = "O(N) where N is the count of clients watching or blocking on keys from both databases.",
         .handler = SwapdbCommand});
  f.Add({.name = "dbsize", .arity = 1, .flags = kCmdReadonly | kCmdFast | kCmdAllShards,
         .summary = "Returns the number of keys in the database.", .since = "1.0.0", .complexity = "O(1)",
         .tips = {"request_policy:all_shards", "response_policy:agg_sum"}, .handler = DbsizeCommand});
  f.Add({.name = "flushdb", .arity = -1, .flags = kCmdWrite | kCmdAllShards, .acl = kAclDangerous,
         .summary = "Remove all keys from the current database.", .since = "1.0.0",
         .complexity = "O(N) where N is the number of keys in the selected database",
         .tips = {"request_policy:all_shards", "response_policy:all_succeeded"}, .handler = FlushdbCommand});
  f.Add({.name = "flushall", .arity = -1, .flags = kCmdWrite | kCmdAllShards, .acl = kAclDangerous,
         .summary = "Removes all keys from all databases.", .since = "1.0.0",
         .complexity = "O(N) where N is the total number of keys in all databases",
         .tips = {"request_policy:all_shards", "response_policy:all_succeeded"}, .handler = FlushallCommand});

  f.Add({.name = "object", .arity = -2, .summary = "A container for object introspection commands.", .since = "2.2.3",
         .complexity = "Depends on subcommand.",
         .subcommands = {
             {.name = "encoding", .arity = 3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns the internal encoding of a Redis object.", .since = "2.2.3", .complexity = "O(1)",
              .handler = ObjectEncodingCommand},
             {.name = "freq", .arity = 3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns the logarithmic access frequency counter of a Redis object.", .since = "2.2.3",
              .complexity = "O(1)", .handler = ObjectFreqCommand},
             {.name = "idletime", .arity = 3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns the time since the last access to a Redis object.", .since = "2.2.3",
              .complexity = "O(1)", .handler = ObjectIdletimeCommand},
             {.name = "refcount", .arity = 3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2,
              .summary = "Returns the reference count of a value of a key.", .since = "2.2.3", .complexity = "O(1)",
              .handler = ObjectRefcountCommand},
             {.name = "help", .arity = 2, .flags = kCmdLoading | kCmdStale,
              .summary = "Returns helpful text about the different subcommands.", .since = "2.2.3",
              .complexity = "O(1)", .handler = ObjectHelpCommand},
         }});
}

}  // namespace peregrine
