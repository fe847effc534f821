// List commands: LPUSH/RPUSH(X), LPOP/RPOP (count), LLEN, LINDEX, LSET,
// LRANGE, LTRIM, LREM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP and the
// blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, on a ListObject
// (core/list_object.h) per key, with Redis 7.2's replies, error texts and
// encoding conversions. A list whose last item goes is deleted. A command
// over keys of several shards runs with the dispatcher holding them all
// (ctx.DbOf). A blocking command that finds nothing blocks the client
// (CommandHost::Block); creating a list serves the clients waiting on its key
// (SignalKeyAsReady; docs/blocking.md).
#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include "commands/common.h"
#include "core/list_object.h"

namespace peregrine {
namespace {

using End = ListObject::End;

ListLimits Limits(const CommandContext& ctx) { return ListLimitsOf(ctx.server.config()); }

// The list at `key` for a read: false after replying WRONGTYPE; *out is
// nullptr if the key is missing.
bool ListForRead(CommandContext& ctx, std::string_view key, const ListObject** out) {
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e)) return false;
  *out = e == nullptr ? nullptr : &e->value.list();
  return true;
}

// LEFT / RIGHT (Redis's getListPositionFromObjectOrReply).
bool ParseEnd(CommandContext& ctx, std::string_view arg, End* end) {
  if (EqualsIgnoreCase(arg, "left")) {
    *end = End::kHead;
  } else if (EqualsIgnoreCase(arg, "right")) {
    *end = End::kTail;
  } else {
    ctx.reply.Error(kErrSyntax);
    return false;
  }
  return true;
}

// After items left the list at `key` (and the command's event): deletes it
// when empty (the `del` event), else lets it convert back to a listpack
// (Redis's LIST_CONV_SHRINKING).
void AfterRemoval(CommandContext& ctx, std::string_view key, ListObject& l) {
  if (l.size() == 0) {
    ctx.DbOf(key).Erase(key);
    Notify(ctx, notify::kGeneric, "del", key);
  } else {
    l.MaybeShrinkEncoding(Limits(ctx));  // and settles
  }
}

std::string_view PopEvent(End end) { return end == End::kHead ? "lpop" : "rpop"; }
std::string_view PushEvent(End end) { return end == End::kHead ? "lpush" : "rpush"; }

// Items were popped from `end` of the list at `key` (Redis's
// listElementsRemoved): the pop event, then AfterRemoval.
void ElementsRemoved(CommandContext& ctx, std::string_view key, ListObject& l, End end) {
  Notify(ctx, notify::kList, PopEvent(end), key);
  AfterRemoval(ctx, key, l);
}

// LPUSH/RPUSH and the X forms (only onto an existing list).
void PushGeneric(CommandContext& ctx, End end, bool only_existing) {
  std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e, /*write=*/true)) return;
  if (e == nullptr) {
    if (only_existing) {
      ctx.reply.Integer(0);
      return;
    }
    e = InsertKey(ctx, ctx.DbOf(key), key, Value(ListObject()));
    SignalKeyAsReady(ctx, ctx.shard, ctx.client.db, key);
  }
  ListObject& l = e->value.mutable_list();
  l.Push(end, ctx.args.subspan(2), Limits(ctx));
  SignalModifiedKey(ctx, key);
  Notify(ctx, notify::kList, PushEvent(end), key);
  ctx.reply.Integer(static_cast<int64_t>(l.size()));
}

void LpushCommand(CommandContext& ctx) { PushGeneric(ctx, End::kHead, false); }
void RpushCommand(CommandContext& ctx) { PushGeneric(ctx, End::kTail, false); }
void LpushxCommand(CommandContext& ctx) { PushGeneric(ctx, End::kHead, true); }
void RpushxCommand(CommandContext& ctx) { PushGeneric(ctx, End::kTail, true); }

// Pops up to `count` items from `end` and replies them as an array (Redis's
// listPopRangeAndReplyWithKey without the key).
void PopRangeReply(CommandContext& ctx, std::string_view key, ListObject& l, End end, int64_t count) {
  const size_t n = static_cast<uint64_t>(count) < l.size() ? static_cast<size_t>(count) : l.size();
  ctx.reply.ArrayHeader(n);
  for (size_t i = 0; i < n; i++) l.Pop(end, [&](std::string_view v) { ctx.reply.Bulk(v); });
  ElementsRemoved(ctx, key, l, end);
  SignalModifiedKey(ctx, key);
}

// LPOP/RPOP key [count]
void PopGeneric(CommandContext& ctx, End end) {
  std::string_view key = ctx.args[1];
  if (ctx.args.size() > 3) {
    ReplyWrongArity(ctx);
    return;
  }
  const bool has_count = ctx.args.size() == 3;
  int64_t count = 0;
  if (has_count &&
      !ParseIntInRange(ctx, ctx.args[2], 0, LLONG_MAX, &count, "ERR value is out of range, must be positive"))
    return;
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e, /*write=*/true)) return;
  if (e == nullptr) {
    has_count ? ctx.reply.NullArray() : ctx.reply.Null();
    return;
  }
  ListObject& l = e->value.mutable_list();
  if (has_count) {
    if (count == 0)
      ctx.reply.ArrayHeader(0);
    else
      PopRangeReply(ctx, key, l, end, count);
    return;
  }
  l.Pop(end, [&](std::string_view v) { ctx.reply.Bulk(v); });
  ElementsRemoved(ctx, key, l, end);
  SignalModifiedKey(ctx, key);
}

void LpopCommand(CommandContext& ctx) { PopGeneric(ctx, End::kHead); }
void RpopCommand(CommandContext& ctx) { PopGeneric(ctx, End::kTail); }

void LlenCommand(CommandContext& ctx) {
  const ListObject* l;
  if (!ListForRead(ctx, ctx.args[1], &l)) return;
  ctx.reply.Integer(l == nullptr ? 0 : static_cast<int64_t>(l->size()));
}

// An index counted from the end when negative; false when out of range.
bool ResolveIndex(const ListObject& l, int64_t index, size_t* out) {
  const int64_t len = static_cast<int64_t>(l.size());
  if (index < 0) index += len;
  if (index < 0 || index >= len) return false;
  *out = static_cast<size_t>(index);
  return true;
}

void LindexCommand(CommandContext& ctx) {
  const ListObject* l;
  if (!ListForRead(ctx, ctx.args[1], &l)) return;
  if (l == nullptr) {
    ctx.reply.Null();
    return;
  }
  int64_t index;
  if (!ParseIntArg(ctx, ctx.args[2], &index)) return;
  size_t at;
  if (!ResolveIndex(*l, index, &at)) {
    ctx.reply.Null();
    return;
  }
  char scratch[packed::kScratchSize];
  ctx.reply.Bulk(l->View(l->Seek(at), scratch));
  l->DropCache();
}

void LsetCommand(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Error(kErrNoSuchKey);
    return;
  }
  int64_t index;
  if (!ParseIntArg(ctx, ctx.args[2], &index)) return;
  ListObject& l = e->value.mutable_list();
  size_t at;
  if (!ResolveIndex(l, index, &at)) {
    ctx.reply.Error("ERR index out of range");
    return;
  }
  const ListLimits limits = Limits(ctx);
  l.Set(l.Seek(at), ctx.args[3], limits);
  l.MaybeShrinkEncoding(limits);  // and settles
  SignalModifiedKey(ctx, key);
  Notify(ctx, notify::kList, "lset", key);
  ctx.reply.Ok();
}

// Redis's start/stop clamping (LRANGE, LTRIM): false if the range is empty.
bool ClampRange(int64_t len, int64_t start, int64_t stop, int64_t* from, int64_t* to) {
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) return false;
  if (stop >= len) stop = len - 1;
  *from = start;
  *to = stop;
  return true;
}

void LrangeCommand(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseIntArg(ctx, ctx.args[2], &start) || !ParseIntArg(ctx, ctx.args[3], &stop)) return;
  const ListObject* l;
  if (!ListForRead(ctx, ctx.args[1], &l)) return;
  int64_t from, to;
  if (l == nullptr || !ClampRange(static_cast<int64_t>(l->size()), start, stop, &from, &to)) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  ctx.reply.ArrayHeader(static_cast<size_t>(to - from + 1));
  char scratch[packed::kScratchSize];
  ListObject::Pos p = l->Seek(static_cast<size_t>(from));
  for (int64_t i = from; i <= to; i++, p = l->Next(p)) ctx.reply.Bulk(l->View(p, scratch));
  l->DropCache();
}

void LtrimCommand(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  int64_t start, stop;
  if (!ParseIntArg(ctx, ctx.args[2], &start) || !ParseIntArg(ctx, ctx.args[3], &stop)) return;
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e, /*write=*/true)) return;
  if (e != nullptr) {
    ListObject& l = e->value.mutable_list();
    const int64_t len = static_cast<int64_t>(l.size());
    int64_t from, to;
    if (!ClampRange(len, start, stop, &from, &to)) {
      from = len;  // everything goes
      to = len - 1;
    }
    l.Trim(End::kHead, static_cast<size_t>(from));
    l.Trim(End::kTail, static_cast<size_t>(len - 1 - to));
    Notify(ctx, notify::kList, "ltrim", key);
    AfterRemoval(ctx, key, l);
    SignalModifiedKey(ctx, key);
  }
  ctx.reply.Ok();
}

// LREM key count element
void LremCommand(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  int64_t count;
  if (!ParseIntArg(ctx, ctx.args[2], &count)) return;
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  ListObject& l = e->value.mutable_list();
  const packed::Probe probe(ctx.args[3]);
  int64_t removed = 0;
  if (count >= 0) {
    for (ListObject::Pos p = l.First(); !l.AtEnd(p);) {
      if (!l.Equals(p, probe)) {
        p = l.Next(p);
        continue;
      }
      p = l.Erase(p);
      if (++removed == count || l.size() == 0) break;
    }
  } else {
    ListObject::Pos p = l.EndPos();
    while (l.size() > 0 && l.Prev(&p)) {
      if (!l.Equals(p, probe)) continue;
      p = l.Erase(p);
      if (++removed == -count) break;
    }
  }
  if (removed > 0) Notify(ctx, notify::kList, "lrem", key);
  AfterRemoval(ctx, key, l);
  if (removed > 0) SignalModifiedKey(ctx, key);
  ctx.reply.Integer(removed);
}

// LINSERT key BEFORE|AFTER pivot element
void LinsertCommand(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  bool after;
  if (EqualsIgnoreCase(ctx.args[2], "after")) {
    after = true;
  } else if (EqualsIgnoreCase(ctx.args[2], "before")) {
    after = false;
  } else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kList, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  ListObject& l = e->value.mutable_list();
  const packed::Probe pivot(ctx.args[3]);
  for (ListObject::Pos p = l.First(); !l.AtEnd(p); p = l.Next(p)) {
    if (l.Equals(p, pivot)) {
      l.Insert(p, after, ctx.args[4], Limits(ctx));
      l.Settle();
      SignalModifiedKey(ctx, key);
      Notify(ctx, notify::kList, "linsert", key);
      ctx.reply.Integer(static_cast<int64_t>(l.size()));
      return;
    }
  }
  ctx.reply.Integer(-1);
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void LposCommand(CommandContext& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < ctx.args.size(); i++) {
    std::string_view opt = ctx.args[i];
    const bool more = i + 1 < ctx.args.size();
    if (EqualsIgnoreCase(opt, "rank") && more) {
      if (!ParseIntInRange(ctx, ctx.args[++i], -LLONG_MAX, LLONG_MAX, &rank)) return;
      if (rank == 0) {
        ctx.reply.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative "
            "to start from the end of the list");
        return;
      }
    } else if (EqualsIgnoreCase(opt, "count") && more) {
      if (!ParseIntInRange(ctx, ctx.args[++i], 0, LLONG_MAX, &count, "ERR COUNT can't be negative")) return;
    } else if (EqualsIgnoreCase(opt, "maxlen") && more) {
      if (!ParseIntInRange(ctx, ctx.args[++i], 0, LLONG_MAX, &maxlen, "ERR MAXLEN can't be negative")) return;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  const ListObject* l;
  if (!ListForRead(ctx, ctx.args[1], &l)) return;
  if (l == nullptr) {
    count >= 0 ? ctx.reply.ArrayHeader(0) : ctx.reply.Null();
    return;
  }
  const packed::Probe probe(ctx.args[2]);
  const bool forward = rank > 0;
  const uint64_t skip = static_cast<uint64_t>(forward ? rank : -rank) - 1;  // matches to pass over
  const int64_t len = static_cast<int64_t>(l->size());
  // Calls f(index) for each match that counts, until f returns false.
  auto each_match = [&](auto&& f) {
    uint64_t matches = 0;
    ListObject::Pos p = forward ? l->First() : l->EndPos();
    for (int64_t walked = 0; maxlen == 0 || walked < maxlen; walked++) {
      if (forward ? l->AtEnd(p) : !l->Prev(&p)) break;
      if (l->Equals(p, probe) && matches++ >= skip && !f(forward ? walked : len - 1 - walked)) break;
      if (forward) p = l->Next(p);
    }
    l->DropCache();
  };
  if (count < 0) {  // the first match, or nil
    int64_t first = -1;
    each_match([&](int64_t i) {
      first = i;
      return false;
    });
    first < 0 ? ctx.reply.Null() : ctx.reply.Integer(first);
    return;
  }
  // With COUNT the array's length is known only at the end.
  std::vector<int64_t> found;
  each_match([&](int64_t i) {
    found.push_back(i);
    return count == 0 || static_cast<int64_t>(found.size()) < count;
  });
  ctx.reply.ArrayHeader(found.size());
  for (int64_t i : found) ctx.reply.Integer(i);
}

// Pushes `item` onto the list at `dst` (entry `de`, nullptr to create it)
// at `end` and replies it (Redis's lmoveHandlePush).
void PushMoved(CommandContext& ctx, std::string_view dst, Db::Entry* de, std::string_view item, End end) {
  if (de == nullptr) {
    Shard& shard = ctx.ShardOf(dst);
    de = InsertKey(ctx, shard.db(ctx.client.db), dst, Value(ListObject()));
    SignalKeyAsReady(ctx, shard, ctx.client.db, dst);
  }
  de->value.mutable_list().Push(end, item, Limits(ctx));
  SignalModifiedKey(ctx, dst);
  Notify(ctx, notify::kList, PushEvent(end), dst);
  ctx.reply.Bulk(item);
}

// LMOVE's move once the source `se` (a list) is found.
void MoveFrom(CommandContext& ctx, Db::Entry* se, End from, End to) {
  std::string_view src = ctx.args[1], dst = ctx.args[2];
  Db::Entry* de = LookupWrite(ctx, dst);
  if (de != nullptr && !de->value.is_list()) {
    ctx.reply.Error(kErrWrongType);
    return;
  }
  std::string item;  // the pop frees the item's bytes
  ListObject& l = se->value.mutable_list();
  l.Pop(from, [&](std::string_view v) { item.assign(v); });
  SignalModifiedKey(ctx, src);
  // As Redis's lmoveGenericCommand: the push's events (`new`, then the
  // push) come before the pop's (the pop, then `del` if the source emptied).
  if (se == de) {  // a rotation: the list never empties
    PushMoved(ctx, dst, de, item, to);
    Notify(ctx, notify::kList, PopEvent(from), src);
    return;
  }
  // The source converts now (the push does not touch it): inserting the
  // destination may move the source's entry, which is not used after it.
  const bool src_emptied = l.size() == 0;
  if (!src_emptied) l.MaybeShrinkEncoding(Limits(ctx));
  PushMoved(ctx, dst, de, item, to);
  Notify(ctx, notify::kList, PopEvent(from), src);
  if (src_emptied) {
    ctx.DbOf(src).Erase(src);
    Notify(ctx, notify::kGeneric, "del", src);
  }
}

void LmoveGeneric(CommandContext& ctx, End from, End to) {
  Db::Entry* se;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kList, &se, /*write=*/true)) return;
  if (se == nullptr)
    ctx.reply.Null();
  else
    MoveFrom(ctx, se, from, to);
}

void LmoveCommand(CommandContext& ctx) {
  End from, to;
  if (!ParseEnd(ctx, ctx.args[3], &from) || !ParseEnd(ctx, ctx.args[4], &to)) return;
  LmoveGeneric(ctx, from, to);
}

void RpoplpushCommand(CommandContext& ctx) { LmoveGeneric(ctx, End::kTail, End::kHead); }

// The first of `keys` that holds a list (Redis's rule for BLPOP and
// LMPOP): true with *out nullptr when none does, false after replying
// WRONGTYPE for a key of another type met first.
bool FirstList(CommandContext& ctx, std::span<const std::string_view> keys, Db::Entry** out, std::string_view* key) {
  for (std::string_view k : keys) {
    Db::Entry* e = LookupWrite(ctx, k);
    if (e == nullptr) continue;
    if (!e->value.is_list()) {
      ctx.reply.Error(kErrWrongType);
      return false;
    }
    *out = e;
    *key = k;
    return true;
  }
  *out = nullptr;
  return true;
}

// [B]LMPOP: numkeys at args[at], then key [key ...] LEFT|RIGHT [COUNT count].
// With `block` (BLMPOP) the timeout is args[1], parsed after the rest (as
// Redis does), and the client blocks if none of the keys holds a list.
void MpopGeneric(CommandContext& ctx, size_t at, bool block) {
  int64_t numkeys;
  if (!ParseIntInRange(ctx, ctx.args[at], 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0")) return;
  if (numkeys >= static_cast<int64_t>(ctx.args.size() - at) - 1) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const size_t first = at + 1;
  const size_t where = first + static_cast<size_t>(numkeys);
  End end;
  if (!ParseEnd(ctx, ctx.args[where], &end)) return;
  int64_t count;
  if (!ParseMpopCount(ctx, where + 1, &count)) return;
  int64_t deadline_ms = 0;
  if (block && !ParseTimeout(ctx, ctx.args[1], &deadline_ms)) return;
  const auto keys = ctx.args.subspan(first, where - first);
  Db::Entry* e;
  std::string_view key;
  if (!FirstList(ctx, keys, &e, &key)) return;
  if (e != nullptr) {
    if (Logging(ctx)) [[unlikely]] {
      // Logged as [LR]POP key count, as Redis propagates [B]LMPOP.
      const size_t len = e->value.list().size();
      const std::string n = std::to_string(static_cast<uint64_t>(count) < len ? static_cast<uint64_t>(count) : len);
      ctx.worker.LogAs({end == End::kHead ? "LPOP" : "RPOP", key, n});
    }
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(key);
    PopRangeReply(ctx, key, e->value.mutable_list(), end, count);
  } else if (block) {
    ctx.worker.Block(ctx, keys, ValueType::kList, deadline_ms);
  } else {
    ctx.reply.NullArray();
  }
}

void LmpopCommand(CommandContext& ctx) { MpopGeneric(ctx, 1, false); }

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
void BlmpopCommand(CommandContext& ctx) { MpopGeneric(ctx, 2, true); }

// BLPOP/BRPOP key [key ...] timeout: the first key in argument order that
// holds a list gives its first (last) item, replied with the key's name.
void BlockingPopGeneric(CommandContext& ctx, End end) {
  int64_t deadline;
  if (!ParseTimeout(ctx, ctx.args.back(), &deadline)) return;
  const auto keys = ctx.args.subspan(1, ctx.args.size() - 2);
  Db::Entry* e;
  std::string_view key;
  if (!FirstList(ctx, keys, &e, &key)) return;
  if (e == nullptr) {
    ctx.worker.Block(ctx, keys, ValueType::kList, deadline);
    return;
  }
  if (Logging(ctx)) [[unlikely]]
    ctx.worker.LogAs({end == End::kHead ? "LPOP" : "RPOP", key});  // as Redis propagates B[LR]POP
  ListObject& l = e->value.mutable_list();
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(key);
  l.Pop(end, [&](std::string_view v) { ctx.reply.Bulk(v); });
  ElementsRemoved(ctx, key, l, end);
  SignalModifiedKey(ctx, key);
}

void BlpopCommand(CommandContext& ctx) { BlockingPopGeneric(ctx, End::kHead); }
void BrpopCommand(CommandContext& ctx) { BlockingPopGeneric(ctx, End::kTail); }

// BLMOVE / BRPOPLPUSH: LMOVE once the source holds a list. Only the source
// is waited on; the destination's type is checked when an item moves.
void BlockingMoveGeneric(CommandContext& ctx, End from, End to, std::string_view timeout) {
  int64_t deadline;
  if (!ParseTimeout(ctx, timeout, &deadline)) return;
  Db::Entry* se;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kList, &se, /*write=*/true)) return;
  if (se != nullptr) {
    // Logged as LMOVE / RPOPLPUSH, as Redis propagates the blocking forms.
    if (Logging(ctx)) [[unlikely]] {
      if (ctx.args.size() == 6)
        ctx.worker.LogAs({"LMOVE", ctx.args[1], ctx.args[2], ctx.args[3], ctx.args[4]});
      else
        ctx.worker.LogAs({"RPOPLPUSH", ctx.args[1], ctx.args[2]});
    }
    MoveFrom(ctx, se, from, to);
  } else {
    ctx.worker.Block(ctx, ctx.args.subspan(1, 1), ValueType::kList, deadline, CommandHost::NoWaitReply::kNull);
  }
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
void BlmoveCommand(CommandContext& ctx) {
  End from, to;
  if (!ParseEnd(ctx, ctx.args[3], &from) || !ParseEnd(ctx, ctx.args[4], &to)) return;
  BlockingMoveGeneric(ctx, from, to, ctx.args[5]);
}

// BRPOPLPUSH source destination timeout
void BrpoplpushCommand(CommandContext& ctx) { BlockingMoveGeneric(ctx, End::kTail, End::kHead, ctx.args[3]); }

constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;

}  // namespace

void RegisterListCommands(CommandTable& t) {
  CommandFamily f(t, kAclList, "list");
  constexpr std::string_view kPushCost =
      "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.";
  f.Add({.name = "lpush", .arity = -3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Prepends one or more elements to a list. Creates the key if it doesn't exist.", .since = "1.0.0",
         .complexity = kPushCost, .handler = LpushCommand});
  f.Add({.name = "rpush", .arity = -3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Appends one or more elements to a list. Creates the key if it doesn't exist.", .since = "1.0.0",
         .complexity = kPushCost, .handler = RpushCommand});
  f.Add({.name = "lpushx", .arity = -3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Prepends one or more elements to a list only when the list exists.", .since = "2.2.0",
         .complexity = kPushCost, .handler = LpushxCommand});
  f.Add({.name = "rpushx", .arity = -3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Appends an element to a list only when the list exists.", .since = "2.2.0",
         .complexity = kPushCost, .handler = RpushxCommand});
  f.Add({.name = "lpop", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the first elements in a list after removing it. Deletes the list if the last element was "
                    "popped.",
         .since = "1.0.0", .complexity = "O(N) where N is the number of elements returned", .handler = LpopCommand});
  f.Add({.name = "rpop", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns and removes the last elements of a list. Deletes the list if the last element was popped.",
         .since = "1.0.0", .complexity = "O(N) where N is the number of elements returned", .handler = RpopCommand});
  f.Add({.name = "llen", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the length of a list.", .since = "1.0.0", .complexity = "O(1)", .handler = LlenCommand});
  f.Add({.name = "lindex", .arity = 3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns an element from a list by its index.", .since = "1.0.0",
         .complexity = "O(N) where N is the number of elements to traverse to get to the element at index. This makes "
                       "asking for the first or the last element of the list O(1).",
         .handler = LindexCommand});
  f.Add({.name = "lset", .arity = 4, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .summary = "Sets the value of an element in a list by its index.", .since = "1.0.0",
         .complexity = "O(N) where N is the length of the list. Setting either the first or the last element of the "
                       "list is O(1).",
         .handler = LsetCommand});
  f.Add({.name = "lrange", .arity = 4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns a range of elements from a list.", .since = "1.0.0",
         .complexity = "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end "
                       "(HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
         .handler = LrangeCommand});
  f.Add({.name = "ltrim", .arity = 4, .flags = kCmdWrite, .first_key = 1, .last_key = 1,
         .summary = "Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
         .since = "1.0.0", .complexity = "O(N) where N is the number of elements to be removed by the operation.",
         .handler = LtrimCommand});
  f.Add({.name = "lrem", .arity = 4, .flags = kCmdWrite, .first_key = 1, .last_key = 1,
         .summary = "Removes elements from a list. Deletes the list if the last element was removed.", .since = "1.0.0",
         .complexity = "O(N+M) where N is the length of the list and M is the number of elements removed.",
         .handler = LremCommand});
  f.Add({.name = "linsert", .arity = 5, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .summary = "Inserts an element before or after another element in a list.", .since = "2.2.0",
         .complexity = "O(N) where N is the number of elements to traverse before seeing the value pivot. This means "
                       "that inserting somewhere on the left end on the list (head) can be considered O(1) and "
                       "inserting somewhere on the right end (tail) is O(N).",
         .handler = LinsertCommand});
  f.Add({.name = "lpos", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns the index of matching elements in a list.", .since = "6.0.6",
         .complexity = "O(N) where N is the number of elements in the list, for the average case. When searching for "
                       "elements near the head or the tail of the list, or when the MAXLEN option is provided, the "
                       "command may run in constant time.",
         .handler = LposCommand});
  f.Add({.name = "lmove", .arity = 5, .flags = kWriteFlags, .first_key = 1, .last_key = 2,
         .summary = "Returns an element after popping it from one list and pushing it to another. Deletes the list if "
                    "the last element was moved.",
         .since = "6.2.0", .complexity = "O(1)", .handler = LmoveCommand});
  f.Add({.name = "rpoplpush", .arity = 3, .flags = kWriteFlags, .first_key = 1, .last_key = 2,
         .summary = "Returns the last element of a list after removing and pushing it to another list. Deletes the "
                    "list if the last element was popped.",
         .since = "1.2.0", .complexity = "O(1)", .handler = RpoplpushCommand});
  // LMPOP and BLMPOP: numkeys at `numkeys_index`, the keys after it.
  f.Add({.name = "lmpop", .arity = -4, .flags = kCmdWrite, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns multiple elements from a list after removing them. Deletes the list if the last element "
                    "was popped.",
         .since = "7.0.0",
         .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
         .handler = LmpopCommand});
  // BLPOP, BRPOP, BLMOVE and BRPOPLPUSH are noscript in Redis (checked:
  // COMMAND INFO of 7.0); BLMPOP is not.
  constexpr uint32_t kBlockingWrite = kCmdWrite | kCmdBlocking;
  f.Add({.name = "blpop", .arity = -3, .flags = kBlockingWrite, .first_key = 1, .last_key = -2,
         .summary = "Removes and returns the first element in a list. Blocks until an element is available otherwise. "
                    "Deletes the list if the last element was popped.",
         .since = "2.0.0", .complexity = "O(N) where N is the number of provided keys.", .handler = BlpopCommand});
  f.Add({.name = "brpop", .arity = -3, .flags = kBlockingWrite, .first_key = 1, .last_key = -2,
         .summary = "Removes and returns the last element in a list. Blocks until an element is available otherwise. "
                    "Deletes the list if the last element was popped.",
         .since = "2.0.0", .complexity = "O(N) where N is the number of provided keys.", .handler = BrpopCommand});
  f.Add({.name = "blmove", .arity = 6, .flags = kBlockingWrite | kCmdDenyOom, .first_key = 1, .last_key = 2,
         .summary = "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is "
                    "available otherwise. Deletes the list if the last element was moved.",
         .since = "6.2.0", .complexity = "O(1)", .handler = BlmoveCommand});
  f.Add({.name = "brpoplpush", .arity = 4, .flags = kBlockingWrite | kCmdDenyOom, .first_key = 1, .last_key = 2,
         .summary = "Pops an element from a list, pushes it to another list and returns it. Block until an element is "
                    "available otherwise. Deletes the list if the last element was popped.",
         .since = "2.2.0", .complexity = "O(1)", .handler = BrpoplpushCommand});
  f.Add({.name = "blmpop", .arity = -5, .flags = kBlockingWrite, .first_key = 3, .last_key = 3, .numkeys_index = 2,
         .summary = "Pops the first element from one of multiple lists. Blocks until an element is available "
                    "otherwise. Deletes the list if the last element was popped.",
         .since = "7.0.0",
         .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
         .handler = BlmpopCommand});
}

}  // namespace peregrine
