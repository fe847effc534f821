// String commands: GET, SET and its variants, MGET/MSET, APPEND, STRLEN, the
// INCR family, INCRBYFLOAT, GETRANGE/SETRANGE, LCS. Each handler parses its
// arguments, operates on the owning shard's database and writes the reply.
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "commands/common.h"
#include "core/numbers.h"
#include "server/client.h"

namespace peregrine {
namespace {

// Stores `value` under `key` with the deadline `expire_ms` (or none); an
// existing entry keeps its deadline instead if keep_ttl. Returns the entry
// (which may have moved: see Db::SetExpire).
Db::Entry* StoreString(CommandContext& ctx, Db::Entry* existing, std::string_view key, CompactString value,
                       bool keep_ttl, int64_t expire_ms = Db::kNoExpire) {
  Db& db = ctx.DbOf(key);  // MSET's keys may live on different shards
  if (existing == nullptr) return InsertKey(ctx, db, key, Value(std::move(value)), expire_ms);
  existing->value = Value(std::move(value));
  return keep_ttl ? existing : db.SetExpire(existing, expire_ms);
}

// SET's store over an existing value of about the same size (a cache
// overwriting an entry): the new bytes go into the old value's block, no
// allocation and no free (CompactString::AssignInPlace). False if it does
// not apply: a value that may be an integer (20 bytes at most), a large
// argument that already has a block of its own (taken over as it is), a
// block of another size or lent to a reply.
[[gnu::noinline]] bool StoreInPlace(CommandContext& ctx, Db::Entry* existing, std::string_view key,
                                    std::string_view arg, bool keep_ttl, int64_t expire_ms) {
  if (!existing->value.is_string() || IsBigArg(ctx, arg) || !existing->value.mutable_str().AssignInPlace(arg))
    return false;
  if (!keep_ttl) ctx.DbOf(key).SetExpire(existing, expire_ms);
  return true;
}

// Stores a value argument as SET does (in place when it can).
[[gnu::always_inline]] inline void StoreStringArg(CommandContext& ctx, Db::Entry* existing, std::string_view key,
                                                  std::string_view arg, bool keep_ttl,
                                                  int64_t expire_ms = Db::kNoExpire) {
  if (arg.size() > 20 && existing != nullptr && StoreInPlace(ctx, existing, key, arg, keep_ttl, expire_ms)) return;
  StoreString(ctx, existing, key, StringValueArg(ctx, arg), keep_ttl, expire_ms);
}

// Looks up a string (for reading: counts a keyspace hit or miss). Returns
// false (after replying WRONGTYPE) if the key holds another type; *out is
// nullptr if the key is missing.
bool LookupString(CommandContext& ctx, std::string_view key, Db::Entry** out, bool for_write = false) {
  return LookupTyped(ctx, key, ValueType::kString, out, for_write);
}

bool LookupStringForWrite(CommandContext& ctx, std::string_view key, Db::Entry** out) {
  return LookupString(ctx, key, out, /*for_write=*/true);
}

// The expiry/condition options shared by SET and GETEX.
struct StringOptions {
  bool nx = false, xx = false, get = false, keepttl = false, persist = false;
  ExpireUnit unit = ExpireUnit::kNone;
  std::string_view expire_arg;
};

enum OptionSet : int { kForSet = 1, kForGetex = 2 };

// Parses options from args[first..]. Replies "syntax error" on a bad or
// conflicting option, as Redis's parseExtendedStringArgumentsOrReply.
bool ParseStringOptions(CommandContext& ctx, size_t first, int which, StringOptions* o) {
  auto& a = ctx.args;
  for (size_t i = first; i < a.size(); i++) {
    std::string_view opt = a[i];
    bool has_next = i + 1 < a.size();
    bool has_expire = o->unit != ExpireUnit::kNone;
    if ((which & kForSet) && EqualsIgnoreCase(opt, "nx") && !o->xx) {
      o->nx = true;
    } else if ((which & kForSet) && EqualsIgnoreCase(opt, "xx") && !o->nx) {
      o->xx = true;
    } else if ((which & kForSet) && EqualsIgnoreCase(opt, "get")) {
      o->get = true;
    } else if ((which & kForSet) && EqualsIgnoreCase(opt, "keepttl") && !has_expire) {
      o->keepttl = true;
    } else if ((which & kForGetex) && EqualsIgnoreCase(opt, "persist") && !has_expire) {
      o->persist = true;
    } else if (ExpireUnit unit = ParseExpireUnit(opt);
               unit != ExpireUnit::kNone && has_next && !o->keepttl && !o->persist &&
               (!has_expire || o->unit == unit)) {
      // Repeating the same unit is allowed (the last one wins), as in Redis.
      o->unit = unit;
      o->expire_arg = a[++i];
    } else {
      ctx.reply.Error(kErrSyntax);
      return false;
    }
  }
  return true;
}

// Turns the expire option into an absolute unix time in ms (Redis's
// getExpireMillisecondsOrReply). Replies and returns false if invalid.
bool ExpireDeadline(CommandContext& ctx, const StringOptions& o, int64_t* deadline) {
  int64_t v;
  if (!ParseIntArg(ctx, o.expire_arg, &v)) return false;
  bool seconds = InSeconds(o.unit);
  if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) {
    ReplyInvalidExpire(ctx);
    return false;
  }
  if (seconds) v *= 1000;
  if (FromNow(o.unit)) {
    if (v > LLONG_MAX - ctx.now_ms) {
      ReplyInvalidExpire(ctx);
      return false;
    }
    v += ctx.now_ms;
  }
  *deadline = v;
  return true;
}

// How the append-only file logs a SET (Redis's setGenericCommand): a
// relative or seconds deadline as PXAT, without its conditions; else
// without GET.
[[gnu::noinline]] void LogSet(CommandContext& ctx, const StringOptions& o, int64_t deadline) {
  if (o.unit != ExpireUnit::kNone && o.unit != ExpireUnit::kPxat) {
    const std::string ms = std::to_string(deadline);
    ctx.worker.LogAs({"SET", ctx.args[1], ctx.args[2], "PXAT", ms});
  } else if (o.get) {
    std::vector<std::string_view> args(ctx.args.begin(), ctx.args.begin() + 3);
    for (size_t i = 3; i < ctx.args.size(); i++)
      if (!EqualsIgnoreCase(ctx.args[i], "get")) args.push_back(ctx.args[i]);
    ctx.worker.LogAs(args);
  }
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ts-ms|KEEPTTL]
void SetCommand(CommandContext& ctx) {
  StringOptions o;
  if (!ParseStringOptions(ctx, 3, kForSet, &o)) return;
  int64_t deadline = Db::kNoExpire;
  if (o.unit != ExpireUnit::kNone && !ExpireDeadline(ctx, o, &deadline)) return;
  std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (o.get) {
    if (!LookupString(ctx, key, &e)) return;
    if (e == nullptr)
      ctx.reply.Null();
    else
      ReplyString(ctx, e->value.mutable_str());
  } else {
    e = LookupWrite(ctx, key);
  }
  if ((o.nx && e != nullptr) || (o.xx && e == nullptr)) {
    if (!o.get) ctx.reply.Null();
    return;
  }
  if (Logging(ctx)) [[unlikely]]
    LogSet(ctx, o, deadline);
  StoreStringArg(ctx, e, key, ctx.args[2], o.keepttl, deadline);
  SignalModifiedKey(ctx, key);
  Notify(ctx, notify::kString, "set", key);
  if (deadline != Db::kNoExpire) Notify(ctx, notify::kGeneric, "expire", key);
  if (!o.get) ctx.reply.Ok();
}

void SetnxCommand(CommandContext& ctx) {
  if (LookupWrite(ctx, ctx.args[1]) != nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  InsertKey(ctx, ctx.db(), ctx.args[1], Value(StringValueArg(ctx, ctx.args[2])));
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "set", ctx.args[1]);
  ctx.reply.Integer(1);
}

// SETEX / PSETEX key time value
void SetWithExpire(CommandContext& ctx, bool seconds) {
  StringOptions o;
  o.unit = seconds ? ExpireUnit::kEx : ExpireUnit::kPx;
  o.expire_arg = ctx.args[2];
  int64_t deadline;
  if (!ExpireDeadline(ctx, o, &deadline)) return;
  if (Logging(ctx)) [[unlikely]] {
    const std::string ms = std::to_string(deadline);
    ctx.worker.LogAs({"SET", ctx.args[1], ctx.args[3], "PXAT", ms});
  }
  StoreStringArg(ctx, LookupWrite(ctx, ctx.args[1]), ctx.args[1], ctx.args[3], false, deadline);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "set", ctx.args[1]);
  Notify(ctx, notify::kGeneric, "expire", ctx.args[1]);
  ctx.reply.Ok();
}
void SetexCommand(CommandContext& ctx) { SetWithExpire(ctx, true); }
void PsetexCommand(CommandContext& ctx) { SetWithExpire(ctx, false); }

void GetCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupString(ctx, ctx.args[1], &e)) return;
  if (e == nullptr)
    ctx.reply.Null();
  else
    ReplyString(ctx, e->value.mutable_str());
}

void GetsetCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupString(ctx, ctx.args[1], &e)) return;
  if (e == nullptr)
    ctx.reply.Null();
  else
    ReplyString(ctx, e->value.mutable_str());
  if (Logging(ctx)) [[unlikely]]
    ctx.worker.LogAs({"SET", ctx.args[1], ctx.args[2]});
  StoreStringArg(ctx, e, ctx.args[1], ctx.args[2], false);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "set", ctx.args[1]);
}

void GetdelCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupString(ctx, ctx.args[1], &e)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ReplyString(ctx, e->value.mutable_str());
  if (Logging(ctx)) [[unlikely]]
    ctx.worker.LogAs({"DEL", ctx.args[1]});
  ctx.db().Erase(ctx.args[1]);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kGeneric, "del", ctx.args[1]);
}

// GETEX key [EX s|PX ms|EXAT ts|PXAT ts-ms|PERSIST]
void GetexCommand(CommandContext& ctx) {
  StringOptions o;
  if (!ParseStringOptions(ctx, 2, kForGetex, &o)) return;
  Db::Entry* e;
  if (!LookupString(ctx, ctx.args[1], &e)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  // As Redis, the expire value is checked only once the key is known to exist.
  int64_t deadline = Db::kNoExpire;
  if (o.unit != ExpireUnit::kNone && !ExpireDeadline(ctx, o, &deadline)) return;
  ReplyString(ctx, e->value.mutable_str());
  if (deadline != Db::kNoExpire) {
    if (Logging(ctx)) [[unlikely]]
      LogDeadline(ctx, ctx.args[1], deadline);
    const bool gone = deadline <= ctx.now_ms;
    if (gone)
      ctx.db().Erase(ctx.args[1]);
    else
      ctx.db().SetExpire(e, deadline);
    SignalModifiedKey(ctx, ctx.args[1]);
    Notify(ctx, notify::kGeneric, gone ? "del" : "expire", ctx.args[1]);
  } else if (o.persist && e->has_expire()) {
    if (Logging(ctx)) [[unlikely]]
      ctx.worker.LogAs({"PERSIST", ctx.args[1]});
    ctx.db().SetExpire(e, Db::kNoExpire);
    SignalModifiedKey(ctx, ctx.args[1]);
    Notify(ctx, notify::kGeneric, "persist", ctx.args[1]);
  }
}

void MgetCommand(CommandContext& ctx) {
  ctx.reply.ArrayHeader(ctx.args.size() - 1);
  for (size_t i = 1; i < ctx.args.size(); i++) {
    Db::Entry* e = LookupRead(ctx, ctx.args[i]);
    if (e == nullptr || !e->value.is_string())
      ctx.reply.Null();
    else
      ReplyString(ctx, e->value.mutable_str());
  }
}

void MsetGeneric(CommandContext& ctx, bool nx) {
  if (ctx.args.size() % 2 == 0) {
    ReplyWrongArity(ctx);
    return;
  }
  if (nx) {
    for (size_t i = 1; i < ctx.args.size(); i += 2) {
      if (LookupWrite(ctx, ctx.args[i]) != nullptr) {
        ctx.reply.Integer(0);
        return;
      }
    }
  }
  for (size_t i = 1; i < ctx.args.size(); i += 2) {
    StoreStringArg(ctx, LookupWrite(ctx, ctx.args[i]), ctx.args[i], ctx.args[i + 1], false);
    SignalModifiedKey(ctx, ctx.args[i]);
    Notify(ctx, notify::kString, "set", ctx.args[i]);
  }
  ReplyDone(ctx, nx);
}
void MsetCommand(CommandContext& ctx) { MsetGeneric(ctx, false); }
void MsetnxCommand(CommandContext& ctx) { MsetGeneric(ctx, true); }

// Replies the 512 MB-style limit error if a string would grow past
// proto-max-bulk-len (Redis's checkStringLength).
bool CheckStringLength(CommandContext& ctx, uint64_t size) {
  if (size > ctx.server.config().proto_max_bulk_len) {
    ctx.reply.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    return false;
  }
  return true;
}

void AppendCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupStringForWrite(ctx, ctx.args[1], &e)) return;
  if (e == nullptr) {
    // A new key's value is encoded as SET would (Redis: tryObjectEncoding).
    e = InsertKey(ctx, ctx.db(), ctx.args[1], Value(StringValueArg(ctx, ctx.args[2])));
  } else {
    if (!CheckStringLength(ctx, e->value.str().size() + ctx.args[2].size())) return;
    e->value.mutable_str().Append(ctx.args[2]);
  }
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "append", ctx.args[1]);
  ctx.reply.Integer(static_cast<int64_t>(e->value.str().size()));
}

void StrlenCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupString(ctx, ctx.args[1], &e)) return;
  ctx.reply.Integer(e == nullptr ? 0 : static_cast<int64_t>(e->value.str().size()));
}

// INCR/DECR/INCRBY/DECRBY: adds `delta` to the integer at key (0 if missing),
// keeping the key's TTL.
void IncrBy(CommandContext& ctx, int64_t delta) {
  Db::Entry* e;
  if (!LookupStringForWrite(ctx, ctx.args[1], &e)) return;
  int64_t current = 0;
  if (e != nullptr) {
    const CompactString& v = e->value.str();
    char scratch[CompactString::kIntBufferSize];
    if (v.is_int()) {
      current = v.int_value();
    } else if (!ParseInt64(v.View(scratch), &current)) {
      ctx.reply.Error(kErrNotInteger);
      return;
    }
  }
  int64_t result;
  if (__builtin_add_overflow(current, delta, &result)) {
    ctx.reply.Error(kErrOverflow);
    return;
  }
  if (e != nullptr)
    e->value.mutable_str() = CompactString::FromInt(result);  // keeps the TTL, allocates nothing
  else
    InsertKey(ctx, ctx.db(), ctx.args[1], Value(CompactString::FromInt(result)));
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "incrby", ctx.args[1]);
  ctx.reply.Integer(result);
}

void IncrCommand(CommandContext& ctx) { IncrBy(ctx, 1); }
void DecrCommand(CommandContext& ctx) { IncrBy(ctx, -1); }
void IncrbyCommand(CommandContext& ctx) {
  int64_t delta;
  if (ParseIntArg(ctx, ctx.args[2], &delta)) IncrBy(ctx, delta);
}
void DecrbyCommand(CommandContext& ctx) {
  int64_t delta;
  if (!ParseIntArg(ctx, ctx.args[2], &delta)) return;
  if (delta == LLONG_MIN) {
    ctx.reply.Error("ERR decrement would overflow");
    return;
  }
  IncrBy(ctx, -delta);
}

void IncrbyfloatCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupStringForWrite(ctx, ctx.args[1], &e)) return;
  long double current = 0, incr;
  char scratch[CompactString::kIntBufferSize];
  if (e != nullptr && !ParseLongDouble(e->value.str().View(scratch), &current)) {
    ctx.reply.Error(kErrNotFloat);
    return;
  }
  if (!ParseLongDouble(ctx.args[2], &incr)) {
    ctx.reply.Error(kErrNotFloat);
    return;
  }
  long double result = current + incr;
  std::string text;
  if (!FormatLongDoubleHuman(result, &text)) {
    ctx.reply.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  ctx.reply.Bulk(text);
  if (Logging(ctx)) [[unlikely]]
    ctx.worker.LogAs({"SET", ctx.args[1], text, "KEEPTTL"});
  StoreString(ctx, e, ctx.args[1], CompactString(text), true);
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "incrbyfloat", ctx.args[1]);
}

// GETRANGE / SUBSTR key start end (inclusive, negative from the end).
void GetrangeCommand(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseIntArg(ctx, ctx.args[2], &start) || !ParseIntArg(ctx, ctx.args[3], &end)) return;
  Db::Entry* e;
  if (!LookupString(ctx, ctx.args[1], &e)) return;
  if (e == nullptr) {
    ctx.reply.Bulk("");
    return;
  }
  char scratch[CompactString::kIntBufferSize];
  const std::string_view s = e->value.str().View(scratch);
  const int64_t len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.Bulk("");
    return;
  }
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) {
    ctx.reply.Bulk("");
    return;
  }
  ctx.reply.Bulk(s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

// SETRANGE key offset value: overwrites from offset, zero-padding as needed.
void SetrangeCommand(CommandContext& ctx) {
  int64_t offset;
  if (!ParseIntArg(ctx, ctx.args[2], &offset)) return;
  if (offset < 0) {
    ctx.reply.Error("ERR offset is out of range");
    return;
  }
  std::string_view value = ctx.args[3];
  Db::Entry* e;
  if (!LookupStringForWrite(ctx, ctx.args[1], &e)) return;
  if (e == nullptr) {
    if (value.empty()) {
      ctx.reply.Integer(0);
      return;
    }
    if (!CheckStringLength(ctx, static_cast<uint64_t>(offset) + value.size())) return;
    e = InsertKey(ctx, ctx.db(), ctx.args[1], Value());
  } else {
    if (value.empty()) {
      ctx.reply.Integer(static_cast<int64_t>(e->value.str().size()));
      return;
    }
    if (!CheckStringLength(ctx, static_cast<uint64_t>(offset) + value.size())) return;
  }
  CompactString& s = e->value.mutable_str();
  char* bytes = s.MutableBytes(static_cast<size_t>(offset) + value.size());
  std::memcpy(bytes + offset, value.data(), value.size());
  SignalModifiedKey(ctx, ctx.args[1]);
  Notify(ctx, notify::kString, "setrange", ctx.args[1]);
  ctx.reply.Integer(static_cast<int64_t>(s.size()));
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest
// common subsequence of two strings (Redis 7's lcsCommand: the same
// dynamic-programming table, the same walk back, so that the matches and
// their order are Redis's). The keys may live on different shards.
void LcsCommand(CommandContext& ctx) {
  Db::Entry* ea = LookupRead(ctx, ctx.args[1]);
  Db::Entry* eb = LookupRead(ctx, ctx.args[2]);
  if ((ea != nullptr && !ea->value.is_string()) || (eb != nullptr && !eb->value.is_string())) {
    ctx.reply.Error("ERR The specified keys must contain string values");
    return;
  }
  // (Views of the values: nothing changes them while the command runs.)
  char sa[CompactString::kIntBufferSize], sb[CompactString::kIntBufferSize];
  const std::string_view a = ea != nullptr ? ea->value.str().View(sa) : std::string_view();
  const std::string_view b = eb != nullptr ? eb->value.str().View(sb) : std::string_view();
  bool getlen = false, getidx = false, withmatchlen = false;
  int64_t minmatchlen = 0;
  for (size_t j = 3; j < ctx.args.size(); j++) {
    const std::string_view opt = ctx.args[j];
    const bool more = j + 1 < ctx.args.size();
    if (EqualsIgnoreCase(opt, "idx")) {
      getidx = true;
    } else if (EqualsIgnoreCase(opt, "len")) {
      getlen = true;
    } else if (EqualsIgnoreCase(opt, "withmatchlen")) {
      withmatchlen = true;
    } else if (EqualsIgnoreCase(opt, "minmatchlen") && more) {
      if (!ParseIntArg(ctx, ctx.args[j + 1], &minmatchlen)) return;
      if (minmatchlen < 0) minmatchlen = 0;
      j++;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  if (getlen && getidx) {
    ctx.reply.Error("ERR If you want both the length and indexes, please just use IDX.");
    return;
  }
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    ctx.reply.Error("ERR String too long for LCS");
    return;
  }
  const uint64_t alen = a.size(), blen = b.size();
  const uint64_t cells = (alen + 1) * (blen + 1);
  if (cells * sizeof(uint32_t) > ctx.server.config().proto_max_bulk_len) {
    ctx.reply.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  // lcs[i][j]: the LCS length of a[0..i) and b[0..j).
  std::vector<uint32_t> lcs(cells);
  auto at = [&](uint64_t i, uint64_t j) -> uint32_t& { return lcs[j + i * (blen + 1)]; };
  for (uint64_t i = 1; i <= alen; i++)
    for (uint64_t j = 1; j <= blen; j++)
      at(i, j) = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
  const uint32_t total = at(alen, blen);
  if (getlen) {
    ctx.reply.Integer(total);
    return;
  }
  // The walk back from the end: the string, and the matching ranges
  // (from the last to the first, as Redis emits them).
  std::string result(total, '\0');
  struct Range {
    uint64_t a0, a1, b0, b1;
  };
  std::vector<Range> ranges;
  uint64_t idx = total, i = alen, j = blen;
  bool open = false;
  Range cur{};
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      result[--idx] = a[i - 1];
      if (!open) {
        cur = Range{i - 1, i - 1, j - 1, j - 1};
        open = true;
      } else if (cur.a0 == i && cur.b0 == j) {
        cur.a0--;  // contiguous: the range grows backwards
        cur.b0--;
      } else {
        emit = true;
      }
      if (cur.a0 == 0 || cur.b0 == 0) emit = true;
      i--;
      j--;
    } else {
      if (at(i - 1, j) > at(i, j - 1))
        i--;
      else
        j--;
      if (open) emit = true;
    }
    if (emit) {
      const uint64_t len = cur.a1 - cur.a0 + 1;
      if (minmatchlen == 0 || len >= static_cast<uint64_t>(minmatchlen)) ranges.push_back(cur);
      open = false;
    }
  }
  if (!getidx) {
    ctx.reply.Bulk(result);
    return;
  }
  ctx.reply.MapHeader(2);
  ctx.reply.Bulk("matches");
  ctx.reply.ArrayHeader(ranges.size());
  for (const Range& r : ranges) {
    ctx.reply.ArrayHeader(withmatchlen ? 3 : 2);
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(static_cast<int64_t>(r.a0));
    ctx.reply.Integer(static_cast<int64_t>(r.a1));
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(static_cast<int64_t>(r.b0));
    ctx.reply.Integer(static_cast<int64_t>(r.b1));
    if (withmatchlen) ctx.reply.Integer(static_cast<int64_t>(r.a1 - r.a0 + 1));
  }
  ctx.reply.Bulk("len");
  ctx.reply.Integer(total);
}

constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;

}  // namespace

void RegisterStringCommands(CommandTable& t) {
  CommandFamily f(t, kAclString, "string");
  f.Add({.name = "get", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the string value of a key.", .since = "1.0.0", .complexity = "O(1)",
         .handler = GetCommand});
  f.Add({.name = "set", .arity = -3, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .summary = "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
         .since = "1.0.0", .complexity = "O(1)", .handler = SetCommand});
  f.Add({.name = "setnx", .arity = 3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Set the string value of a key only when the key doesn't exist.", .since = "1.0.0",
         .complexity = "O(1)", .handler = SetnxCommand});
  f.Add({.name = "setex", .arity = 4, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .summary = "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
         .since = "2.0.0", .complexity = "O(1)", .handler = SetexCommand});
  f.Add({.name = "psetex", .arity = 4, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .summary = "Sets both string value and expiration time in milliseconds of a key. The key is created if it "
                    "doesn't exist.",
         .since = "2.6.0", .complexity = "O(1)", .handler = PsetexCommand});
  f.Add({.name = "getset", .arity = 3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the previous string value of a key after setting it to a new value.", .since = "1.0.0",
         .complexity = "O(1)", .handler = GetsetCommand});
  f.Add({.name = "getdel", .arity = 2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the string value of a key after deleting the key.", .since = "6.2.0", .complexity = "O(1)",
         .handler = GetdelCommand});
  f.Add({.name = "getex", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the string value of a key after setting its expiration time.", .since = "6.2.0",
         .complexity = "O(1)", .handler = GetexCommand});
  f.Add({.name = "mget", .arity = -2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = -1,
         .summary = "Atomically returns the string values of one or more keys.", .since = "1.0.0",
         .complexity = "O(N) where N is the number of keys to retrieve.", .handler = MgetCommand});
  f.Add({.name = "mset", .arity = -3, .flags = kWriteFlags, .first_key = 1, .last_key = -1, .key_step = 2,
         .summary = "Atomically creates or modifies the string values of one or more keys.", .since = "1.0.1",
         .complexity = "O(N) where N is the number of keys to set.", .handler = MsetCommand});
  f.Add({.name = "msetnx", .arity = -3, .flags = kWriteFlags, .first_key = 1, .last_key = -1, .key_step = 2,
         .summary = "Atomically modifies the string values of one or more keys only when all keys don't exist.",
         .since = "1.0.1", .complexity = "O(N) where N is the number of keys to set.", .handler = MsetnxCommand});
  f.Add({.name = "append", .arity = 3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Appends a string to the value of a key. Creates the key if it doesn't exist.", .since = "2.0.0",
         .complexity = "O(1). The amortized time complexity is O(1) assuming the appended value is small and the "
                       "already present value is of any size, since the dynamic string library used by Redis will "
                       "double the free space available on every reallocation.",
         .handler = AppendCommand});
  f.Add({.name = "strlen", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the length of a string value.", .since = "2.2.0", .complexity = "O(1)",
         .handler = StrlenCommand});
  f.Add({.name = "incr", .arity = 2, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
         .since = "1.0.0", .complexity = "O(1)", .handler = IncrCommand});
  f.Add({.name = "decr", .arity = 2, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
         .since = "1.0.0", .complexity = "O(1)", .handler = DecrCommand});
  f.Add({.name = "incrby", .arity = 3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't "
                    "exist.",
         .since = "1.0.0", .complexity = "O(1)", .handler = IncrbyCommand});
  f.Add({.name = "decrby", .arity = 3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't "
                    "exist.",
         .since = "1.0.0", .complexity = "O(1)", .handler = DecrbyCommand});
  f.Add({.name = "incrbyfloat", .arity = 3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Increment the floating point value of a key by a number. Uses 0 as initial value if the key "
                    "doesn't exist.",
         .since = "2.6.0", .complexity = "O(1)", .handler = IncrbyfloatCommand});
  f.Add({.name = "getrange", .arity = 4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns a substring of the string stored at a key.", .since = "2.4.0",
         .complexity = "O(N) where N is the length of the returned string.", .handler = GetrangeCommand});
  f.Add({.name = "substr", .arity = 4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns a substring from a string value.", .since = "1.0.0",
         .complexity = "O(N) where N is the length of the returned string.", .handler = GetrangeCommand});
  f.Add({.name = "lcs", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 2,
         .summary = "Finds the longest common substring.", .since = "7.0.0",
         .complexity = "O(N*M) where N and M are the lengths of s1 and s2, respectively", .handler = LcsCommand});
  f.Add({.name = "setrange", .arity = 4, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .summary = "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't "
                    "exist.",
         .since = "2.2.0", .complexity = "O(1), not counting the time taken to copy the new string in place.",
         .handler = SetrangeCommand});
}

}  // namespace peregrine
