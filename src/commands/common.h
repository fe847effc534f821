// Helpers shared by the command families: Redis's error texts, argument
// parsing that replies the standard error, and key lookups that keep the
// keyspace hit/miss statistics.
#pragma once

#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/db.h"
#include "protocol/reply.h"
#include "server/client.h"
#include "server/command.h"
#include "server/command_context.h"
#include "server/monitor.h"
#include "server/server_state.h"
#include "server/shard.h"

namespace peregrine {

inline constexpr std::string_view kErrSyntax = "ERR syntax error";
inline constexpr std::string_view kErrNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kErrNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kErrWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kErrNoSuchKey = "ERR no such key";
inline constexpr std::string_view kErrDbIndex = "ERR DB index is out of range";
inline constexpr std::string_view kErrSameObject = "ERR source and destination objects are the same";
inline constexpr std::string_view kErrOverflow = "ERR increment or decrement would overflow";

// UpToNul (server/command.h) as a string, for building error texts.
inline std::string AsCString(std::string_view arg) { return std::string(UpToNul(arg)); }

// Parses an integer argument; on failure replies `error` (the standard
// "value is not an integer" text by default) and returns false.
bool ParseIntArg(CommandContext& ctx, std::string_view arg, int64_t* out,
                 std::string_view error = kErrNotInteger);

// Parses an integer in [min, max], as Redis's getRangeLongFromObjectOrReply:
// without `msg`, "not an integer" or "value is out of range, value must
// between <min> and <max>"; with one, `msg` for both.
bool ParseIntInRange(CommandContext& ctx, std::string_view arg, int64_t min, int64_t max, int64_t* out,
                     std::string_view msg = {});

// A blocking command's timeout in seconds, fractions allowed (Redis 7.2's
// getTimeoutFromObjectOrReply): *deadline_ms becomes 0 (wait for ever) or
// the unix ms the wait ends at. False after replying the error.
bool ParseTimeout(CommandContext& ctx, std::string_view arg, int64_t* deadline_ms);
// The same in whole milliseconds (WAIT, CLIENT PAUSE: Redis's
// UNIT_MILLISECONDS): *ms is the timeout itself, at most what the clock
// can add to now.
bool ParseTimeoutMs(CommandContext& ctx, std::string_view arg, int64_t* ms);

// After a command added a value at `key` of database `db` on `shard` (held
// by the command): clients blocked on that key are served as soon as the
// command ends (Redis's signalKeyAsReady; docs/blocking.md). Costs one test
// while nobody waits on the shard.
inline void SignalKeyAsReady(CommandContext& ctx, Shard& shard, int db, std::string_view key) {
  if (shard.blocking().empty()) [[likely]]
    return;
  if (shard.blocking().Signal(db, key)) ctx.worker.NoteReady(static_cast<uint32_t>(shard.index()));
}

// [B]LMPOP's and [B]ZMPOP's options from args[from] on: [COUNT count]
// (1 without it). False after replying the error, Redis's texts.
bool ParseMpopCount(CommandContext& ctx, size_t from, int64_t* count);

// Parses a database index (SELECT, MOVE, COPY DB): replies and returns false
// if it is not an integer or out of range.
bool ParseDbIndex(CommandContext& ctx, std::string_view arg, int* out);

// True if `key` is the command's first key as the server encoded it ahead
// (the same bytes of the same request, not merely equal ones).
inline bool IsHinted(const CommandContext& ctx, std::string_view key) {
  return ctx.hinted != nullptr && key.data() == ctx.hinted->bytes.data() && key.size() == ctx.hinted->bytes.size();
}

// Key lookup for a write: expires lazily, no statistics. With touch false
// the key is not marked used for eviction (Redis's LOOKUP_NOTOUCH).
// The hinted key is the command's first key, whose shard is ctx.shard.
inline Db::Entry* LookupWrite(CommandContext& ctx, std::string_view key, bool touch = true) {
  // CLIENT NO-TOUCH: no key is touched, but by TOUCH itself (Redis).
  if (ctx.client.no_touch && touch) [[unlikely]]
    touch = ctx.client.last_cmd != nullptr && ctx.client.last_cmd->fullname == "touch";
  return IsHinted(ctx, key) ? ctx.db().Find(*ctx.hinted, ctx.now_ms, touch)
                            : ctx.DbOf(key).Find(CompactKey::MakeProbe(key), ctx.now_ms, touch);
}

// Keyspace notifications (server/notify.h): the command did `event` to
// `key` of the client's database (of database `db`), an event of class
// `type` (notify::kString ...). Redis's notifyKeyspaceEvent, called where
// Redis calls it, in its order. One test while the class is off.
inline void Notify(CommandContext& ctx, uint32_t type, std::string_view event, std::string_view key) {
  if (ctx.server.notifier().active() & type) [[unlikely]]
    ctx.worker.events().Add(type, ctx.client.db, event, key);
}
inline void Notify(CommandContext& ctx, uint32_t type, std::string_view event, std::string_view key, int db) {
  if (ctx.server.notifier().active() & type) [[unlikely]]
    ctx.worker.events().Add(type, db, event, key);
}

// MONITOR: the running command's line now. EVAL and FCALL (skip_monitor)
// feed themselves so, before the commands they call, as Redis's do.
inline void FeedMonitors(CommandContext& ctx) {
  if (ctx.server.monitors().load(std::memory_order_relaxed) > 0) [[unlikely]]
    ctx.worker.monitor().Feed(ctx.client, ctx.client.db, *ctx.client.last_cmd, ctx.args);
}

// Adds a key a lookup found missing to `db` (the `new` event, as Redis's
// dbAdd, before the command's own).
inline Db::Entry* InsertKey(CommandContext& ctx, Db& db, std::string_view key, Value value,
                            int64_t expire_ms = Db::kNoExpire) {
  Db::Entry* e = IsHinted(ctx, key) ? db.Insert(*ctx.hinted, std::move(value), expire_ms)
                                    : db.Insert(key, std::move(value), expire_ms);
  Notify(ctx, notify::kNew, "new", key);
  return e;
}
// Key lookup for a read: as LookupWrite, and counts a keyspace hit or miss.
// EXISTS, TYPE, TTL and OBJECT pass touch false, as Redis does.
inline Db::Entry* LookupRead(CommandContext& ctx, std::string_view key, bool touch = true) {
  Db::Entry* e = LookupWrite(ctx, key, touch);
  if (e != nullptr) {
    ctx.shard.stats().keyspace_hits++;
  } else {
    ctx.shard.stats().keyspace_misses++;
    Notify(ctx, notify::kKeyMiss, "keymiss", key);
  }
  return e;
}

// After a command changed `key` of database `db` on `shard` (held by the
// command): clients WATCHing it see their EXEC fail (Redis's
// signalModifiedKey; docs/transactions.md). Every write command calls it
// for each key it changed, where it changed it, and only then (a write
// that changes nothing leaves a watch alone, as in Redis). Costs one test
// while no client watches any key.
// Whether the append-only file logs commands (a handler that Redis
// propagates in another form then says which, Worker::LogAs).
inline bool Logging(const CommandContext& ctx) { return ctx.worker.logging(); }
// A key given the deadline `when` (unix ms) is logged as Redis propagates
// it: PEXPIREAT (with `options` after it: EXPIRE's NX/XX/GT/LT, which
// Redis keeps), or DEL when the deadline has passed (the key goes).
inline void LogDeadline(CommandContext& ctx, std::string_view key, int64_t when,
                        std::span<const std::string_view> options = {}) {
  const std::string ms = std::to_string(when);
  if (when <= ctx.now_ms) {
    ctx.worker.LogAs({"DEL", key});
    return;
  }
  std::vector<std::string_view> args = {"PEXPIREAT", key, ms};
  args.insert(args.end(), options.begin(), options.end());
  ctx.worker.LogAs(args);
}

inline void SignalModifiedKey(CommandContext& ctx, Shard& shard, int db, std::string_view key) {
  shard.AddDirty();
  if (!ctx.server.watching()) [[likely]]
    return;
  shard.watches().Touch(db, key, shard.db(db), ctx.now_ms);
}
// The same for a key of the client's database.
inline void SignalModifiedKey(CommandContext& ctx, std::string_view key) {
  ctx.shard.AddDirty();  // the running command's shard: the sum is what counts
  if (!ctx.server.watching()) [[likely]]
    return;
  Shard& shard = IsHinted(ctx, key) ? ctx.shard : ctx.ShardOf(key);
  shard.watches().Touch(ctx.client.db, key, shard.db(ctx.client.db), ctx.now_ms);
}

// Replies a string value as a bulk string (an integer encoding is formatted).
// A large one is sent from its own block when the reply can keep a reference
// (ReplyWriter::BulkLent): no copy, and the value is still sent as it was if
// the command or a later one overwrites, deletes or changes it.
inline void ReplyString(CommandContext& ctx, CompactString& s) {
  char scratch[CompactString::kIntBufferSize];
  const std::string_view bytes = s.View(scratch);
  if (bytes.size() >= ReplyWriter::kMinLentBulk && s.is_heap() && ctx.MayLend()) [[unlikely]]
    ctx.reply.BulkLent(bytes, s.LendBlock());
  else
    ctx.reply.Bulk(bytes);
}

// The value a string argument becomes: a large argument that was read
// straight into a block of its own (Worker::StartBigArg) becomes the value's
// block as it is; any other is copied (canonical integers integer-encoded).
inline CompactString StringValueArg(CommandContext& ctx, std::string_view arg) {
  if (arg.size() >= Client::kMinBigArg && !ctx.client.big_args.empty()) [[unlikely]] {
    if (char* block = ctx.client.TakeBigArg(arg)) return CompactString::AdoptBlock(block, arg.size());
  }
  return CompactString::FromValue(arg);
}

// Whether `arg` is a large argument read into a block of its own (which
// StringValueArg would take over rather than copy).
inline bool IsBigArg(const CommandContext& ctx, std::string_view arg) {
  if (arg.size() < Client::kMinBigArg || ctx.client.big_args.empty()) return false;
  for (const Client::BigArg& a : ctx.client.big_args)
    if (a.block == arg.data()) return true;
  return false;
}

// The success reply of a command with an NX variant: 1 for the NX form
// (MSETNX, RENAMENX), +OK for the plain one.
inline void ReplyDone(CommandContext& ctx, bool nx) {
  if (nx)
    ctx.reply.Integer(1);
  else
    ctx.reply.Ok();
}

// Empties one database (`async`: a large table's keys are freed later,
// Db::ClearLater), and every database of every shard (the command holds
// them all), touching their watched keys and counting the changes.
void FlushDb(Db& db, bool async);
void FlushAllShards(CommandContext& ctx, bool async);

// A container's HELP reply, as Redis 7.2's addReplyHelp: "<COMMAND>
// <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", the lines,
// then "HELP" and "    Print this help.".
void ReplyContainerHelp(CommandContext& ctx, std::string_view command, const std::vector<std::string_view>& lines);

// A HELP subcommand's reply: its lines as simple strings.
inline void ReplyHelp(CommandContext& ctx, const std::vector<std::string_view>& lines) {
  ctx.reply.ArrayHeader(lines.size());
  for (std::string_view l : lines) ctx.reply.SimpleString(l);
}

// Parses a SCAN-family cursor (Redis's parseScanCursorOrReply: strtoull
// over the whole argument); replies "invalid cursor" and returns false if bad.
bool ParseCursor(CommandContext& ctx, std::string_view arg, uint64_t* out);

// HSCAN / SSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]:
// the options from args[3] on (NOVALUES for HSCAN only). Replies "syntax
// error" (Redis's texts) and returns false if bad. As Redis, the caller
// parses the cursor (ParseCursor), then looks the key up, and only then the
// options: a missing key gets an empty page whatever the options say.
struct ScanOptions {
  uint64_t cursor = 0;
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
  bool novalues = false;
};
bool ParseKeyScanOptions(CommandContext& ctx, bool allow_novalues, ScanOptions* o);

// Looks `key` up for a command on values of `type` (for a read: counts a
// hit or miss). Replies WRONGTYPE and returns false if the key holds
// another type; *out is nullptr if the key is missing.
// Inline: GET and SET come this way, and the type is a constant there.
inline bool LookupTyped(CommandContext& ctx, std::string_view key, ValueType type, Db::Entry** out,
                        bool write = false) {
  Db::Entry* e = write ? LookupWrite(ctx, key) : LookupRead(ctx, key);
  if (e != nullptr && e->value.type() != type) {
    ctx.reply.Error(kErrWrongType);
    return false;
  }
  *out = e;
  return true;
}

// The running command's full name, lowercase as Redis's c->cmd->fullname
// (the dispatcher and a worker's proxy client set last_cmd before the
// handler runs).
const std::string& RunningCommand(const CommandContext& ctx);

// "ERR wrong number of arguments for '<command>' command", for a command
// whose arguments the table's arity cannot check (an odd count of pairs).
void ReplyWrongArity(CommandContext& ctx);
// Redis's addReplySubcommandSyntaxError: "ERR unknown subcommand or wrong
// number of arguments for '<subcommand, 128 bytes at most>'. Try
// <COMMAND> HELP."
void ReplySubcommandSyntaxError(CommandContext& ctx);

// A SCAN-family page: [cursor, [item ...]].
template <typename Items>
void ReplyScanPage(CommandContext& ctx, uint64_t cursor, const Items& items) {
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::to_string(cursor));
  ctx.reply.ArrayHeader(items.size());
  for (const auto& item : items) ctx.reply.Bulk(item);
}

// SRANDMEMBER's and HRANDFIELD's `count` distinct picks of a container of
// `size` elements (0 < count < size), as Redis: for over a third of them,
// all(&picks) copies every element and random ones are dropped; else one()
// picks at random until `count` distinct ones (by key(item), a
// std::string_view into the item) are in.
template <typename T, typename All, typename One, typename Key>
std::vector<T> PickDistinct(std::mt19937_64& rng, uint64_t size, uint64_t count, All&& all, One&& one, Key&& key) {
  std::vector<T> picks;
  if (count * 3 > size) {
    picks.reserve(size);
    all(&picks);
    while (picks.size() > count) {
      std::swap(picks[rng() % picks.size()], picks.back());
      picks.pop_back();
    }
    return picks;
  }
  // The keys are views into `picks`, which never reallocates (reserved).
  picks.reserve(count);
  std::unordered_set<std::string_view> seen;
  seen.reserve(count);
  while (picks.size() < count) {
    picks.push_back(one());
    if (!seen.insert(key(picks.back())).second) picks.pop_back();  // one hash per pick
  }
  return picks;
}

// Deletes `key` if its container (a hash or set) has nothing left, as Redis
// deletes an emptied hash or set.
template <typename Container>
void DeleteIfEmpty(CommandContext& ctx, std::string_view key, const Container& c) {
  if (c.size() == 0) ctx.DbOf(key).Erase(key);
}

// The time options EX PX EXAT PXAT (SET, GETEX, HGETEX, HSETEX).
enum class ExpireUnit { kNone, kEx, kPx, kExat, kPxat };
inline ExpireUnit ParseExpireUnit(std::string_view opt) {
  if (EqualsIgnoreCase(opt, "ex")) return ExpireUnit::kEx;
  if (EqualsIgnoreCase(opt, "px")) return ExpireUnit::kPx;
  if (EqualsIgnoreCase(opt, "exat")) return ExpireUnit::kExat;
  if (EqualsIgnoreCase(opt, "pxat")) return ExpireUnit::kPxat;
  return ExpireUnit::kNone;
}
inline bool InSeconds(ExpireUnit u) { return u == ExpireUnit::kEx || u == ExpireUnit::kExat; }
inline bool FromNow(ExpireUnit u) { return u == ExpireUnit::kEx || u == ExpireUnit::kPx; }

// "ERR invalid expire time in '<command>' command".
void ReplyInvalidExpire(CommandContext& ctx);

}  // namespace peregrine
