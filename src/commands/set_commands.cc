// Set commands: SADD, SREM, SCARD, SISMEMBER/SMISMEMBER, SMEMBERS,
// SRANDMEMBER, SPOP, SMOVE, SINTER/SINTERCARD/SINTERSTORE, SUNION(STORE),
// SDIFF(STORE), SSCAN, on a SetObject (core/set_object.h) per key, with
// Redis 7.2's replies and error texts. A set whose last member goes is
// deleted. The multi-key commands read and write keys of several shards:
// the dispatcher holds them all while the command runs (ctx.DbOf).
#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands/common.h"
#include "core/glob.h"
#include "core/set_object.h"

namespace peregrine {
namespace {

SetLimits Limits(const CommandContext& ctx) { return SetLimitsOf(ctx.server.config()); }

// The set at `key` for a read: false after replying WRONGTYPE; *out is
// nullptr if the key is missing.
bool SetForRead(CommandContext& ctx, std::string_view key, const SetObject** out) {
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kSet, &e)) return false;
  *out = e == nullptr ? nullptr : &e->value.set();
  return true;
}

// A set being built (a multi-key command's result): created at the first
// member and converted as members arrive, as Redis 7.2 builds it from an
// empty intset.
struct ResultSet {
  explicit ResultSet(const SetLimits& l) : limits(l) {}
  void Add(std::string_view m) {
    if (!set) {
      if (start_listpack)
        set.emplace(SetObject::Sized(1, limits));
      else
        set.emplace(m, 1, limits);
    }
    set->Add(m, limits);
  }
  size_t size() const { return set ? set->size() : 0; }

  SetLimits limits;
  // SINTERSTORE starts a listpack (not an intset) unless its smallest
  // source is an intset.
  bool start_listpack = false;
  std::optional<SetObject> set;
};

// Replies the members (a set in RESP3).
void ReplyMembers(CommandContext& ctx, const SetObject* s) {
  ctx.reply.SetHeader(s == nullptr ? 0 : s->size());
  if (s != nullptr) s->ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
}

void SaddCommand(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kSet, &e, /*write=*/true)) return;
  const SetLimits limits = Limits(ctx);
  // As Redis's saddCommand: a new set's encoding is picked for the argument
  // count (setTypeCreate), an existing one converts for it.
  if (e == nullptr) {
    e = InsertKey(ctx, ctx.DbOf(key), key, Value(SetObject(ctx.args[2], ctx.args.size() - 2, limits)));
  } else {
    e->value.mutable_set().MaybeConvert(ctx.args.size() - 2, limits);
  }
  SetObject& s = e->value.mutable_set();
  int64_t added = 0;
  for (size_t i = 2; i < ctx.args.size(); i++) added += s.Add(ctx.args[i], limits);
  if (added > 0) {
    SignalModifiedKey(ctx, key);
    Notify(ctx, notify::kSet, "sadd", key);
  }
  ctx.reply.Integer(added);
}

void SremCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kSet, &e, /*write=*/true)) return;
  int64_t removed = 0;
  if (e != nullptr) {
    SetObject& s = e->value.mutable_set();
    for (size_t i = 2; i < ctx.args.size() && s.size() > 0; i++) removed += s.Remove(ctx.args[i]);
    const bool emptied = s.size() == 0;
    DeleteIfEmpty(ctx, ctx.args[1], s);
    if (removed > 0) {
      SignalModifiedKey(ctx, ctx.args[1]);
      Notify(ctx, notify::kSet, "srem", ctx.args[1]);
      if (emptied) Notify(ctx, notify::kGeneric, "del", ctx.args[1]);
    }
  }
  ctx.reply.Integer(removed);
}

void ScardCommand(CommandContext& ctx) {
  const SetObject* s;
  if (!SetForRead(ctx, ctx.args[1], &s)) return;
  ctx.reply.Integer(s == nullptr ? 0 : static_cast<int64_t>(s->size()));
}

void SismemberCommand(CommandContext& ctx) {
  const SetObject* s;
  if (!SetForRead(ctx, ctx.args[1], &s)) return;
  ctx.reply.Integer(s != nullptr && s->Contains(ctx.args[2]) ? 1 : 0);
}

void SmismemberCommand(CommandContext& ctx) {
  const SetObject* s;
  if (!SetForRead(ctx, ctx.args[1], &s)) return;
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); i++) ctx.reply.Integer(s != nullptr && s->Contains(ctx.args[i]) ? 1 : 0);
}

void SmembersCommand(CommandContext& ctx) {
  const SetObject* s;
  if (!SetForRead(ctx, ctx.args[1], &s)) return;
  ReplyMembers(ctx, s);
}

// SRANDMEMBER key [count]
void SrandmemberCommand(CommandContext& ctx) {
  std::mt19937_64& rng = ctx.shard.rng();
  if (ctx.args.size() > 3) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  char scratch[packed::kScratchSize];
  if (ctx.args.size() == 2) {
    const SetObject* s;
    if (!SetForRead(ctx, ctx.args[1], &s)) return;
    if (s == nullptr) {
      ctx.reply.Null();
      return;
    }
    ctx.reply.Bulk(s->Random(rng, scratch));
    return;
  }
  int64_t l;
  if (!ParseIntInRange(ctx, ctx.args[2], -LLONG_MAX, LLONG_MAX, &l)) return;
  const SetObject* s;
  if (!SetForRead(ctx, ctx.args[1], &s)) return;
  if (s == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const uint64_t size = s->size();
  if (l < 0) {  // repeats allowed
    const uint64_t count = static_cast<uint64_t>(-l);
    ctx.reply.ArrayHeader(count);
    for (uint64_t i = 0; i < count; i++) {
      if (ctx.reply.Full()) break;
      ctx.reply.Bulk(s->Random(rng, scratch));
    }
    return;
  }
  const uint64_t count = static_cast<uint64_t>(l);
  if (count >= size) {
    ctx.reply.ArrayHeader(size);
    s->ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
    return;
  }
  const std::vector<std::string> picks = PickDistinct<std::string>(
      rng, size, count,
      [&](std::vector<std::string>* all) { s->ForEach([&](std::string_view m) { all->emplace_back(m); }); },
      [&] { return std::string(s->Random(rng, scratch)); },
      [](const std::string& m) { return std::string_view(m); });
  ctx.reply.ArrayHeader(picks.size());
  for (const std::string& m : picks) ctx.reply.Bulk(m);
}

// SPOP key [count]
// The members SPOP took, logged as Redis propagates them: SREM commands
// of at most 1024 members each.
class PoppedLog {
 public:
  PoppedLog(CommandContext& ctx, std::string_view key) : ctx_(ctx), key_(key), on_(Logging(ctx)) {}
  bool on() const { return on_; }
  void Add(std::string_view m) {
    if (on_) [[unlikely]]
      members_.emplace_back(m);
  }
  ~PoppedLog() {
    if (!on_) return;
    std::vector<std::string_view> args;
    for (size_t i = 0; i < members_.size(); i += 1024) {
      args.assign({"SREM", key_});
      for (size_t j = i; j < members_.size() && j < i + 1024; j++) args.push_back(members_[j]);
      ctx_.worker.LogAs(args);
    }
  }

 private:
  CommandContext& ctx_;
  std::string_view key_;
  bool on_;
  std::vector<std::string> members_;
};

void SpopCommand(CommandContext& ctx) {
  std::string_view key = ctx.args[1];
  std::mt19937_64& rng = ctx.shard.rng();
  if (ctx.args.size() > 3) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  int64_t count = -1;  // none
  if (ctx.args.size() == 3 &&
      !ParseIntInRange(ctx, ctx.args[2], 0, LLONG_MAX, &count, "ERR value is out of range, must be positive"))
    return;
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kSet, &e, /*write=*/true)) return;
  if (count < 0) {  // no count: one member or nil
    if (e == nullptr) {
      ctx.reply.Null();
      return;
    }
    SetObject& s = e->value.mutable_set();
    PoppedLog log(ctx, key);
    s.PopRandom(rng, [&](std::string_view m) {
      ctx.reply.Bulk(m);
      log.Add(m);
    });
    Notify(ctx, notify::kSet, "spop", key);
    if (s.size() == 0) {
      ctx.DbOf(key).Erase(key);
      Notify(ctx, notify::kGeneric, "del", key);
    }
    SignalModifiedKey(ctx, key);
    return;
  }
  if (e == nullptr || count == 0) {
    ctx.reply.SetHeader(0);
    return;
  }
  SignalModifiedKey(ctx, key);  // (the watchers' check reads the key's presence only)
  Notify(ctx, notify::kSet, "spop", key);  // before the pop, as Redis
  SetObject& s = e->value.mutable_set();
  if (static_cast<uint64_t>(count) >= s.size()) {  // the whole set
    if (Logging(ctx)) [[unlikely]]
      ctx.worker.LogAs({"DEL", key});
    ReplyMembers(ctx, &s);
    ctx.DbOf(key).Erase(key);
    Notify(ctx, notify::kGeneric, "del", key);
    return;
  }
  const uint64_t remaining = s.size() - static_cast<uint64_t>(count);
  if (remaining * 5 > static_cast<uint64_t>(count)) {
    // A few of many: popped one at a time (Redis's case 2).
    ctx.reply.SetHeader(static_cast<size_t>(count));
    PoppedLog log(ctx, key);
    for (int64_t i = 0; i < count; i++)
      s.PopRandom(rng, [&](std::string_view m) {
        ctx.reply.Bulk(m);
        log.Add(m);
      });
    return;
  }
  // Most of the set (case 3): the few members that stay move to a new set
  // (an intset's to an intset, others' to a listpack that converts as it
  // grows, as Redis 7.2's), and the rest is replied and freed.
  ResultSet kept(Limits(ctx));
  kept.start_listpack = s.encoding() != SetObject::Encoding::kIntSet;
  for (uint64_t i = 0; i < remaining; i++) s.PopRandom(rng, [&](std::string_view m) { kept.Add(m); });
  ReplyMembers(ctx, &s);
  PoppedLog log(ctx, key);
  if (log.on()) [[unlikely]]
    s.ForEach([&](std::string_view m) { log.Add(m); });
  s = std::move(*kept.set);  // the popped members leave with kept.set
}

// SMOVE source destination member
void SmoveCommand(CommandContext& ctx) {
  std::string_view src = ctx.args[1], dst = ctx.args[2], member = ctx.args[3];
  Db::Entry* se = LookupWrite(ctx, src);
  Db::Entry* de = LookupWrite(ctx, dst);
  if (se == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (!se->value.is_set() || (de != nullptr && !de->value.is_set())) {
    ctx.reply.Error(kErrWrongType);
    return;
  }
  if (se == de) {
    ctx.reply.Integer(se->value.set().Contains(member) ? 1 : 0);
    return;
  }
  SetObject& s = se->value.mutable_set();
  if (!s.Remove(member)) {
    ctx.reply.Integer(0);
    return;
  }
  // Inserting the destination may move the source's entry: `s` is not
  // used after it. The events are Redis's order (the source's `srem` and
  // `del`, then the destination's `new` and `sadd`), the erase comes last.
  const bool src_emptied = s.size() == 0;
  Notify(ctx, notify::kSet, "srem", src);
  if (src_emptied) Notify(ctx, notify::kGeneric, "del", src);
  const SetLimits limits = Limits(ctx);
  if (de == nullptr) de = InsertKey(ctx, ctx.DbOf(dst), dst, Value(SetObject(member, 1, limits)));
  const bool added = de->value.mutable_set().Add(member, limits);
  if (src_emptied) ctx.DbOf(src).Erase(src);
  SignalModifiedKey(ctx, src);
  // (The destination changed only if the member was added: a WATCH on it
  // holds otherwise, as Redis's smoveCommand.)
  if (added) {
    SignalModifiedKey(ctx, dst);
    Notify(ctx, notify::kSet, "sadd", dst);
  }
  ctx.reply.Integer(1);
}

// The sets of args[first..last] (nullptr for a missing key), or false
// after replying WRONGTYPE if any holds another type.
bool CollectSets(CommandContext& ctx, size_t first, size_t last, std::vector<const SetObject*>* sets) {
  sets->clear();
  for (size_t i = first; i <= last; i++) {
    const SetObject* s;
    if (!SetForRead(ctx, ctx.args[i], &s)) return false;
    sets->push_back(s);
  }
  return true;
}

// Stores `result` at `dst` in place of whatever was there, its deadline
// gone (deleting it when the result is empty), replies its size and
// notifies `event` (`del` for an existing key deleted).
void StoreResult(CommandContext& ctx, std::string_view dst, ResultSet& result, std::string_view event) {
  Db& db = ctx.DbOf(dst);
  const size_t n = result.size();
  if (n > 0) {
    // As Redis's setKey: `new` only for a key that was not there.
    Db::Entry* d = LookupWrite(ctx, dst);
    if (d == nullptr) {
      InsertKey(ctx, db, dst, Value(std::move(*result.set)));
    } else {
      d->value = Value(std::move(*result.set));
      db.SetExpire(d, Db::kNoExpire);
    }
    SignalModifiedKey(ctx, dst);
    Notify(ctx, notify::kSet, event, dst);
  } else if (db.Erase(dst)) {
    SignalModifiedKey(ctx, dst);
    Notify(ctx, notify::kGeneric, "del", dst);
  }
  ctx.reply.Integer(static_cast<int64_t>(n));
}

// Orders `sets` for an intersection, smallest first; false if a key is
// missing (the intersection is empty).
bool PrepareIntersection(std::vector<const SetObject*>* sets) {
  if (std::any_of(sets->begin(), sets->end(), [](const SetObject* s) { return s == nullptr; })) return false;
  std::sort(sets->begin(), sets->end(), [](const SetObject* a, const SetObject* b) { return a->size() < b->size(); });
  return true;
}

// Calls f(member) for each member of the intersection of `sets` (ordered by
// PrepareIntersection) until f returns false.
template <typename F>
void ForEachInIntersection(const std::vector<const SetObject*>& sets, F&& f) {
  bool more = true;
  sets[0]->ForEach([&](std::string_view m) {
    if (!more) return;
    for (size_t i = 1; i < sets.size(); i++)
      if (sets[i] != sets[0] && !sets[i]->Contains(m)) return;
    more = f(m);
  });
}

// SINTER key [key ...] / SINTERSTORE destination key [key ...]
void SinterGeneric(CommandContext& ctx, bool store) {
  const size_t first = store ? 2 : 1;
  std::vector<const SetObject*> sets;
  if (!CollectSets(ctx, first, ctx.args.size() - 1, &sets)) return;
  const bool nonempty = PrepareIntersection(&sets);
  if (store) {
    ResultSet result(Limits(ctx));
    if (nonempty) {
      // A listpack that converts as it grows, unless the smallest set is an
      // intset; an intset in the end if every member is an integer.
      result.start_listpack = sets[0]->encoding() != SetObject::Encoding::kIntSet;
      ForEachInIntersection(sets, [&](std::string_view m) {
        result.Add(m);
        return true;
      });
      if (result.set) result.set->MaybeConvertToIntSet(result.limits);
    }
    StoreResult(ctx, ctx.args[1], result, "sinterstore");
    return;
  }
  std::vector<std::string> members;
  if (nonempty) {
    ForEachInIntersection(sets, [&](std::string_view m) {
      members.emplace_back(m);
      return true;
    });
  }
  ctx.reply.SetHeader(members.size());
  for (const std::string& m : members) ctx.reply.Bulk(m);
}
void SinterCommand(CommandContext& ctx) { SinterGeneric(ctx, false); }
void SinterstoreCommand(CommandContext& ctx) { SinterGeneric(ctx, true); }

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void SintercardCommand(CommandContext& ctx) {
  int64_t numkeys;
  if (!ParseIntInRange(ctx, ctx.args[1], 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0")) return;
  if (numkeys > static_cast<int64_t>(ctx.args.size()) - 2) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.args.size(); i++) {
    if (EqualsIgnoreCase(ctx.args[i], "limit") && i + 1 < ctx.args.size()) {
      if (!ParseIntInRange(ctx, ctx.args[++i], 0, LLONG_MAX, &limit, "ERR LIMIT can't be negative")) return;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  std::vector<const SetObject*> sets;
  if (!CollectSets(ctx, 2, 1 + static_cast<size_t>(numkeys), &sets)) return;
  int64_t n = 0;
  if (PrepareIntersection(&sets)) ForEachInIntersection(sets, [&](std::string_view) { return ++n != limit; });
  ctx.reply.Integer(n);
}

// SUNION / SDIFF (and their STORE forms): the result built as a set.
void SunionDiffGeneric(CommandContext& ctx, bool diff, bool store) {
  const size_t first = store ? 2 : 1;
  std::vector<const SetObject*> sets;
  if (!CollectSets(ctx, first, ctx.args.size() - 1, &sets)) return;
  ResultSet result(Limits(ctx));
  if (diff) {
    const SetObject* base = sets[0];
    if (base != nullptr) {
      base->ForEach([&](std::string_view m) {
        for (size_t i = 1; i < sets.size(); i++)
          if (sets[i] != nullptr && (sets[i] == base || sets[i]->Contains(m))) return;
        result.Add(m);
      });
    }
  } else {
    for (const SetObject* s : sets)
      if (s != nullptr) s->ForEach([&](std::string_view m) { result.Add(m); });
  }
  if (store) {
    StoreResult(ctx, ctx.args[1], result, diff ? "sdiffstore" : "sunionstore");
    return;
  }
  ReplyMembers(ctx, result.set ? &*result.set : nullptr);
}
void SunionCommand(CommandContext& ctx) { SunionDiffGeneric(ctx, false, false); }
void SunionstoreCommand(CommandContext& ctx) { SunionDiffGeneric(ctx, false, true); }
void SdiffCommand(CommandContext& ctx) { SunionDiffGeneric(ctx, true, false); }
void SdiffstoreCommand(CommandContext& ctx) { SunionDiffGeneric(ctx, true, true); }

// SSCAN key cursor [MATCH pattern] [COUNT count]
void SscanCommand(CommandContext& ctx) {
  ScanOptions o;
  if (!ParseCursor(ctx, ctx.args[2], &o.cursor)) return;
  const SetObject* s;
  if (!SetForRead(ctx, ctx.args[1], &s)) return;
  std::vector<std::string> items;
  if (s == nullptr) {
    ReplyScanPage(ctx, 0, items);
    return;
  }
  if (!ParseKeyScanOptions(ctx, /*allow_novalues=*/false, &o)) return;
  const uint64_t next = s->Scan(o.cursor, static_cast<size_t>(o.count), [&](std::string_view m) {
    if (!o.use_pattern || GlobMatch(o.pattern, m)) items.emplace_back(m);
  });
  ReplyScanPage(ctx, next, items);
}

constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;

}  // namespace

void RegisterSetCommands(CommandTable& t) {
  CommandFamily f(t, kAclSet, "set");
  f.Add({.name = "sadd", .arity = -3, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Adds one or more members to a set. Creates the key if it doesn't exist.", .since = "1.0.0",
         .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with "
                       "multiple arguments.",
         .handler = SaddCommand});
  f.Add({.name = "srem", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Removes one or more members from a set. Deletes the set if the last member was removed.",
         .since = "1.0.0", .complexity = "O(N) where N is the number of members to be removed.",
         .handler = SremCommand});
  f.Add({.name = "scard", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the number of members in a set.", .since = "1.0.0", .complexity = "O(1)",
         .handler = ScardCommand});
  f.Add({.name = "sismember", .arity = 3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Determines whether a member belongs to a set.", .since = "1.0.0", .complexity = "O(1)",
         .handler = SismemberCommand});
  f.Add({.name = "smismember", .arity = -3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Determines whether multiple members belong to a set.", .since = "6.2.0",
         .complexity = "O(N) where N is the number of elements being checked for membership",
         .handler = SmismemberCommand});
  f.Add({.name = "smembers", .arity = 2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns all members of a set.", .since = "1.0.0",
         .complexity = "O(N) where N is the set cardinality.", .handler = SmembersCommand});
  f.Add({.name = "srandmember", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Get one or multiple random members from a set", .since = "1.0.0",
         .complexity = "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed "
                       "count.",
         .handler = SrandmemberCommand});
  f.Add({.name = "spop", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns one or more random members from a set after removing them. Deletes the set if the last "
                    "member was popped.",
         .since = "1.0.0",
         .complexity = "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
         .handler = SpopCommand});
  f.Add({.name = "smove", .arity = 4, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 2,
         .summary = "Moves a member from one set to another.", .since = "1.0.0", .complexity = "O(1)",
         .handler = SmoveCommand});
  f.Add({.name = "sinter", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = -1,
         .summary = "Returns the intersect of multiple sets.", .since = "1.0.0",
         .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
         .handler = SinterCommand});
  f.Add({.name = "sinterstore", .arity = -3, .flags = kWriteFlags, .first_key = 1, .last_key = -1,
         .summary = "Stores the intersect of multiple sets in a key.", .since = "1.0.0",
         .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
         .handler = SinterstoreCommand});
  f.Add({.name = "sintercard", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns the number of members of the intersect of multiple sets.", .since = "7.0.0",
         .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
         .handler = SintercardCommand});
  f.Add({.name = "sunion", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = -1,
         .summary = "Returns the union of multiple sets.", .since = "1.0.0",
         .complexity = "O(N) where N is the total number of elements in all given sets.", .handler = SunionCommand});
  f.Add({.name = "sunionstore", .arity = -3, .flags = kWriteFlags, .first_key = 1, .last_key = -1,
         .summary = "Stores the union of multiple sets in a key.", .since = "1.0.0",
         .complexity = "O(N) where N is the total number of elements in all given sets.",
         .handler = SunionstoreCommand});
  f.Add({.name = "sdiff", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = -1,
         .summary = "Returns the difference of multiple sets.", .since = "1.0.0",
         .complexity = "O(N) where N is the total number of elements in all given sets.", .handler = SdiffCommand});
  f.Add({.name = "sdiffstore", .arity = -3, .flags = kWriteFlags, .first_key = 1, .last_key = -1,
         .summary = "Stores the difference of multiple sets in a key.", .since = "1.0.0",
         .complexity = "O(N) where N is the total number of elements in all given sets.",
         .handler = SdiffstoreCommand});
  f.Add({.name = "sscan", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Iterates over members of a set.", .since = "2.0.0",
         .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
                       "cursor to return back to 0. N is the number of elements inside the collection.",
         .handler = SscanCommand});
}

}  // namespace peregrine
