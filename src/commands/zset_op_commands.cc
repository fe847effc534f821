// Sorted set commands, part two: ZPOPMIN/ZPOPMAX, ZMPOP, the blocking
// BZPOPMIN/BZPOPMAX/BZMPOP (on the blocking registry of docs/blocking.md),
// ZRANDMEMBER, ZSCAN, and the algebra ZUNION/ZINTER/ZDIFF[STORE] and
// ZINTERCARD over sorted sets and plain sets (a set member scores 1). The
// multi-key commands read and write keys of several shards: the
// dispatcher holds them all while the command runs (ctx.DbOf).
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commands/zset_commands.h"
#include "core/glob.h"
#include "core/numbers.h"
#include "core/set_object.h"

namespace peregrine {
namespace {

constexpr std::string_view kErrPositive = "ERR value is out of range, must be positive";

// Redis's genericZpopCommand: pops up to `count` entries (count < 0: one,
// the plain form) from the lowest (highest, `max`) end of the first of
// `keys` that holds a sorted set. The reply's shape: with `emitkey` the
// key's name comes first; `nested` gives [member, score] pairs.
void ZpopGeneric(CommandContext& ctx, std::span<const std::string_view> keys, bool max, bool emitkey, int64_t count,
                 bool nested, bool nil_when_empty) {
  Db::Entry* e = nullptr;
  std::string_view key;
  for (std::string_view k : keys) {
    e = LookupWrite(ctx, k);
    if (e == nullptr) continue;
    if (e->value.type() != ValueType::kZSet) {
      ctx.reply.Error(kErrWrongType);
      return;
    }
    key = k;
    break;
  }
  if (e == nullptr) {
    if (nil_when_empty)
      ctx.reply.NullArray();
    else
      ctx.reply.ArrayHeader(0);
    return;
  }
  if (count == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const bool plain = count < 0;
  if (count < 0) count = 1;
  ZSetObject& z = e->value.mutable_zset();
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(count), z.size());
  if (emitkey && Logging(ctx)) [[unlikely]] {
    // BZPOP* and [B]ZMPOP are logged as ZPOPMIN / ZPOPMAX, as Redis
    // propagates them.
    const std::string c = std::to_string(n);
    if (plain)
      ctx.worker.LogAs({max ? "ZPOPMAX" : "ZPOPMIN", key});
    else
      ctx.worker.LogAs({max ? "ZPOPMAX" : "ZPOPMIN", key, c});
  }
  if (!emitkey) {
    ctx.reply.ArrayHeader(nested ? n : n * 2);
  } else if (!nested) {
    ctx.reply.ArrayHeader(n * 2 + 1);
    ctx.reply.Bulk(key);
  } else {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(key);
    ctx.reply.ArrayHeader(n);
  }
  char scratch[packed::kScratchSize];
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t rank = max ? z.size() - 1 : 0;
    const ZSetObject::Pos p = z.AtRank(rank);
    if (nested) ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(ZSetObject::MemberAt(p, scratch));
    ctx.reply.Double(ZSetObject::ScoreAt(p));
    z.EraseRanks(rank, 1);
  }
  NoteZSetWrite(ctx, key, z);
  Notify(ctx, notify::kZset, max ? "zpopmax" : "zpopmin", key);
  const bool emptied = z.size() == 0;
  DeleteIfEmpty(ctx, key, z);
  if (emptied) Notify(ctx, notify::kGeneric, "del", key);
  SignalModifiedKey(ctx, key);
}

// ZPOPMIN / ZPOPMAX key [count]
void ZpopMinMax(CommandContext& ctx, bool max) {
  if (ctx.args.size() > 3) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  int64_t count = -1;
  if (ctx.args.size() == 3 && !ParseIntInRange(ctx, ctx.args[2], 0, LLONG_MAX, &count, kErrPositive)) return;
  ZpopGeneric(ctx, ctx.args.subspan(1, 1), max, false, count, ctx.reply.resp() >= 3 && count != -1, false);
}

void ZpopminCommand(CommandContext& ctx) { ZpopMinMax(ctx, false); }
void ZpopmaxCommand(CommandContext& ctx) { ZpopMinMax(ctx, true); }

// Whether one of `keys` holds a non-empty sorted set (false after replying
// WRONGTYPE for one of another type met first: *found stays false).
bool AnyZSet(CommandContext& ctx, std::span<const std::string_view> keys, bool* found) {
  *found = false;
  for (std::string_view k : keys) {
    Db::Entry* e = LookupWrite(ctx, k);
    if (e == nullptr) continue;
    if (e->value.type() != ValueType::kZSet) {
      ctx.reply.Error(kErrWrongType);
      return false;
    }
    *found = true;
    return true;
  }
  return true;
}

// BZPOPMIN / BZPOPMAX key [key ...] timeout
void BzpopMinMax(CommandContext& ctx, bool max) {
  int64_t deadline;
  if (!ParseTimeout(ctx, ctx.args.back(), &deadline)) return;
  const auto keys = ctx.args.subspan(1, ctx.args.size() - 2);
  bool found;
  if (!AnyZSet(ctx, keys, &found)) return;
  if (found)
    ZpopGeneric(ctx, keys, max, true, -1, false, false);
  else
    ctx.worker.Block(ctx, keys, ValueType::kZSet, deadline);
}

void BzpopminCommand(CommandContext& ctx) { BzpopMinMax(ctx, false); }
void BzpopmaxCommand(CommandContext& ctx) { BzpopMinMax(ctx, true); }

// [B]ZMPOP: numkeys at args[at], then key [key ...] MIN|MAX [COUNT count]
// (Redis's zmpopGenericCommand). BZMPOP's timeout is args[1], parsed after
// the rest.
void ZmpopGeneric(CommandContext& ctx, size_t at, bool block) {
  int64_t numkeys;
  if (!ParseIntInRange(ctx, ctx.args[at], 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0")) return;
  if (numkeys >= static_cast<int64_t>(ctx.args.size() - at)) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const size_t where = at + 1 + static_cast<size_t>(numkeys);
  bool max;
  if (EqualsIgnoreCase(ctx.args[where], "min")) {
    max = false;
  } else if (EqualsIgnoreCase(ctx.args[where], "max")) {
    max = true;
  } else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  int64_t count;
  if (!ParseMpopCount(ctx, where + 1, &count)) return;
  const auto keys = ctx.args.subspan(at + 1, static_cast<size_t>(numkeys));
  if (!block) {
    ZpopGeneric(ctx, keys, max, true, count, true, true);
    return;
  }
  int64_t deadline;
  if (!ParseTimeout(ctx, ctx.args[1], &deadline)) return;
  bool found;
  if (!AnyZSet(ctx, keys, &found)) return;
  if (found)
    ZpopGeneric(ctx, keys, max, true, count, true, true);
  else
    ctx.worker.Block(ctx, keys, ValueType::kZSet, deadline);
}

void ZmpopCommand(CommandContext& ctx) { ZmpopGeneric(ctx, 1, false); }
void BzmpopCommand(CommandContext& ctx) { ZmpopGeneric(ctx, 2, true); }

// ZRANDMEMBER key [count [WITHSCORES]]
void ZrandmemberCommand(CommandContext& ctx) {
  std::mt19937_64& rng = ctx.shard.rng();
  char scratch[packed::kScratchSize];
  if (ctx.args.size() == 2) {
    const ZSetObject* z;
    if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
    if (z == nullptr) {
      ctx.reply.Null();
      return;
    }
    ctx.reply.Bulk(ZSetObject::MemberAt(z->AtRank(rng() % z->size()), scratch));
    return;
  }
  int64_t l;
  if (!ParseIntInRange(ctx, ctx.args[2], -LLONG_MAX, LLONG_MAX, &l)) return;
  bool withscores = false;
  if (ctx.args.size() > 4 || (ctx.args.size() == 4 && !EqualsIgnoreCase(ctx.args[3], "withscores"))) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  if (ctx.args.size() == 4) {
    withscores = true;
    if (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2) {
      ctx.reply.Error("ERR value is out of range");
      return;
    }
  }
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  if (z == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const bool pairs = withscores && ctx.reply.resp() >= 3;
  auto header = [&](uint64_t n) { ctx.reply.ArrayHeader(withscores && !pairs ? n * 2 : n); };
  auto entry = [&](std::string_view m, double s) {
    if (pairs) ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(m);
    if (withscores) ctx.reply.Double(s);
  };
  const uint64_t size = z->size();
  if (l < 0) {  // repeats allowed
    const uint64_t count = static_cast<uint64_t>(-l);
    header(count);
    for (uint64_t i = 0; i < count; i++) {
      if (ctx.reply.Full()) break;
      const ZSetObject::Pos p = z->AtRank(rng() % size);
      entry(ZSetObject::MemberAt(p, scratch), ZSetObject::ScoreAt(p));
    }
    return;
  }
  const uint64_t count = static_cast<uint64_t>(l);
  if (count >= size) {
    header(size);
    z->ForEach(entry);
    return;
  }
  using Pick = std::pair<std::string, double>;
  const std::vector<Pick> picks = PickDistinct<Pick>(
      rng, size, count,
      [&](std::vector<Pick>* all) { z->ForEach([&](std::string_view m, double s) { all->emplace_back(m, s); }); },
      [&] {
        const ZSetObject::Pos p = z->AtRank(rng() % size);
        return Pick(ZSetObject::MemberAt(p, scratch), ZSetObject::ScoreAt(p));
      },
      [](const Pick& p) { return std::string_view(p.first); });
  header(picks.size());
  for (const Pick& p : picks) entry(p.first, p.second);
}

// ZSCAN's cursor over a tree: the score the next page starts at, as a
// 64-bit key in the scores' order (never 0 for a score, so 0 stays "start"
// and "done"). A page ends where a run of equal scores ends, so that a
// member present throughout a scan is seen though others come and go
// (ranks would shift); a run longer than COUNT comes whole.
uint64_t ScoreCursor(double s) {
  const uint64_t b = std::bit_cast<uint64_t>(s);
  return b >> 63 ? ~b : b | (uint64_t{1} << 63);
}
double CursorScore(uint64_t c) {
  return std::bit_cast<double>(c >> 63 ? c & ~(uint64_t{1} << 63) : ~c);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void ZscanCommand(CommandContext& ctx) {
  ScanOptions o;
  if (!ParseCursor(ctx, ctx.args[2], &o.cursor)) return;
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  std::vector<std::string> items;
  if (z == nullptr) {
    ReplyScanPage(ctx, 0, items);
    return;
  }
  if (!ParseKeyScanOptions(ctx, /*allow_novalues=*/false, &o)) return;
  // Scores as Redis prints them here: a listpack's as stored (an integer,
  // or the shortest text), a skiplist's with "%.17Lg" (ld2string's
  // LD_STR_AUTO: 1.1 is 1.1000000000000001).
  const bool tree = z->encoding() == ZSetObject::Encoding::kSkiplist;
  auto take = [&](std::string_view m, double s) {
    if (o.use_pattern && !GlobMatch(o.pattern, m)) return;
    items.emplace_back(m);
    if (!tree) {
      items.push_back(FormatDouble(s));
      return;
    }
    char buf[64];
    const int n = std::snprintf(buf, sizeof(buf), "%.17Lg", static_cast<long double>(s));
    items.emplace_back(buf, static_cast<size_t>(n));
  };
  if (z->encoding() == ZSetObject::Encoding::kListpack) {  // all at once, as Redis
    z->ForEach(take);
    ReplyScanPage(ctx, 0, items);
    return;
  }
  const double from = o.cursor == 0 ? -HUGE_VAL : CursorScore(o.cursor);
  uint64_t next = 0;
  if (!std::isnan(from)) {
    char scratch[packed::kScratchSize];
    ZSetObject::Pos p = z->LowerBoundScore(from, false);
    uint64_t seen = 0;
    double last = 0;
    while (p.valid()) {
      const double s = ZSetObject::ScoreAt(p);
      if (seen >= static_cast<uint64_t>(o.count) && s != last) {
        next = ScoreCursor(s);
        break;
      }
      take(ZSetObject::MemberAt(p, scratch), s);
      last = s;
      ++seen;
      z->Next(&p);
    }
  }
  ReplyScanPage(ctx, next, items);
}

enum class SetOp : uint8_t { kUnion, kInter, kDiff };
enum class Aggregate : uint8_t { kSum, kMin, kMax };

// Redis's zunionInterAggregate: inf + -inf sums to 0.
void AggregateInto(double* target, double v, Aggregate a) {
  switch (a) {
    case Aggregate::kSum:
      *target += v;
      if (std::isnan(*target)) *target = 0;
      break;
    case Aggregate::kMin: *target = v < *target ? v : *target; break;
    case Aggregate::kMax: *target = v > *target ? v : *target; break;
  }
}

// An input of the algebra: a sorted set, a plain set (scores 1), or none.
struct Source {
  const ZSetObject* z = nullptr;
  const SetObject* s = nullptr;
  double weight = 1;
  size_t size() const { return z != nullptr ? z->size() : s != nullptr ? s->size() : 0; }
  const void* object() const { return z != nullptr ? static_cast<const void*>(z) : s; }
  template <typename F>
  void ForEach(F&& f) const {
    if (z != nullptr)
      z->ForEach(f);
    else if (s != nullptr)
      s->ForEach([&](std::string_view m) { f(m, 1.0); });
  }
  bool Find(std::string_view m, double* score) const {
    if (z != nullptr) return z->Score(m, score);
    *score = 1;
    return s != nullptr && s->Contains(m);
  }
};

using Result = std::vector<std::pair<std::string, double>>;

// Redis's zunionInterDiffGenericCommand: numkeys at args[at]; the result is
// stored at *dst (an empty name is a key too), replied when dst is null
// (WITHSCORES allowed), or only counted (ZINTERCARD, `card_only`).
void ZsetOpGeneric(CommandContext& ctx, const std::string_view* dst, size_t at, SetOp op, bool card_only) {
  int64_t setnum;
  if (!ParseIntArg(ctx, ctx.args[at], &setnum)) return;
  if (setnum < 1) {
    ctx.reply.Error("ERR at least 1 input key is needed for '" + RunningCommand(ctx) + "' command");
    return;
  }
  if (setnum > static_cast<int64_t>(ctx.args.size() - at - 1)) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  std::vector<Source> src(static_cast<size_t>(setnum));
  size_t j = at + 1;
  for (Source& s : src) {
    const std::string_view k = ctx.args[j++];
    Db::Entry* e = LookupRead(ctx, k);
    if (e == nullptr) continue;
    if (e->value.is_zset()) {
      s.z = &e->value.zset();
    } else if (e->value.is_set()) {
      s.s = &e->value.set();
    } else {
      ctx.reply.Error(kErrWrongType);
      return;
    }
  }
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
  while (j < ctx.args.size()) {
    const std::string_view o = ctx.args[j];
    const size_t remaining = ctx.args.size() - j;
    if (op != SetOp::kDiff && !card_only && remaining >= src.size() + 1 && EqualsIgnoreCase(o, "weights")) {
      ++j;
      for (Source& s : src) {
        if (!ParseDouble(ctx.args[j++], &s.weight)) {
          ctx.reply.Error("ERR weight value is not a float");
          return;
        }
      }
    } else if (op != SetOp::kDiff && !card_only && remaining >= 2 && EqualsIgnoreCase(o, "aggregate")) {
      const std::string_view a = ctx.args[j + 1];
      if (EqualsIgnoreCase(a, "sum")) {
        aggregate = Aggregate::kSum;
      } else if (EqualsIgnoreCase(a, "min")) {
        aggregate = Aggregate::kMin;
      } else if (EqualsIgnoreCase(a, "max")) {
        aggregate = Aggregate::kMax;
      } else {
        ctx.reply.Error(kErrSyntax);
        return;
      }
      j += 2;
    } else if (dst == nullptr && !card_only && EqualsIgnoreCase(o, "withscores")) {
      ++j;
      withscores = true;
    } else if (card_only && remaining >= 2 && EqualsIgnoreCase(o, "limit")) {
      if (!ParseIntInRange(ctx, ctx.args[j + 1], 0, LLONG_MAX, &limit, "ERR LIMIT can't be negative")) return;
      j += 2;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  // Smallest first (Redis sorts them so; the order of a sum's terms is
  // Redis's too).
  if (op != SetOp::kDiff)
    std::stable_sort(src.begin(), src.end(), [](const Source& a, const Source& b) { return a.size() < b.size(); });
  Result result;
  uint64_t cardinality = 0;
  if (op == SetOp::kInter) {
    if (src[0].size() > 0) {
      bool done = false;
      src[0].ForEach([&](std::string_view m, double s0) {
        if (done) return;
        double score = src[0].weight * s0;
        if (std::isnan(score)) score = 0;
        for (size_t i = 1; i < src.size(); ++i) {
          double v;
          if (src[i].object() == src[0].object()) {
            v = s0;
          } else if (!src[i].Find(m, &v)) {
            return;
          }
          AggregateInto(&score, v * src[i].weight, aggregate);
        }
        if (card_only) {
          ++cardinality;
          if (limit > 0 && cardinality >= static_cast<uint64_t>(limit)) done = true;
        } else {
          result.emplace_back(m, score);
        }
      });
    }
  } else if (op == SetOp::kUnion) {
    std::unordered_map<std::string, double> acc;
    acc.reserve(src.back().size());
    for (const Source& s : src) {
      s.ForEach([&](std::string_view m, double v) {
        double score = s.weight * v;
        if (std::isnan(score)) score = 0;
        auto [it, added] = acc.try_emplace(std::string(m), score);
        if (!added) AggregateInto(&it->second, score, aggregate);
      });
    }
    result.reserve(acc.size());
    for (auto& [m, s] : acc) result.emplace_back(m, s);
  } else {
    src[0].ForEach([&](std::string_view m, double s0) {
      double unused;
      for (size_t i = 1; i < src.size(); ++i)
        if (src[i].Find(m, &unused)) return;
      result.emplace_back(m, s0);
    });
  }
  if (card_only) {
    ctx.reply.Integer(static_cast<int64_t>(cardinality));
    return;
  }
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
    return CompareZKey(a.second, a.first, b.second, b.first) < 0;
  });
  if (dst == nullptr) {
    const bool pairs = withscores && ctx.reply.resp() >= 3;
    ctx.reply.ArrayHeader(withscores && !pairs ? result.size() * 2 : result.size());
    for (const auto& [m, s] : result) {
      if (pairs) ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(m);
      if (withscores) ctx.reply.Double(s);
    }
    return;
  }
  // Built as a skiplist and made a listpack if small enough, as Redis.
  const ZSetLimits limits = ZLimits(ctx);
  ZSetObject z = ZSetObject::Create(SIZE_MAX, 0, limits);
  size_t max_member = 0;
  for (const auto& [m, s] : result) {
    double unused;
    z.Add(s, m, 0, limits, &unused);
    max_member = std::max(max_member, m.size());
  }
  z.ConvertToListpackIfNeeded(max_member, limits);
  const bool stored = z.size() > 0;
  StoreZSet(ctx, *dst, std::move(z));
  if (stored)
    Notify(ctx, notify::kZset,
           op == SetOp::kUnion ? "zunionstore" : op == SetOp::kInter ? "zinterstore" : "zdiffstore", *dst);
}

void ZunionCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, nullptr, 1, SetOp::kUnion, false); }
void ZinterCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, nullptr, 1, SetOp::kInter, false); }
void ZdiffCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, nullptr, 1, SetOp::kDiff, false); }
void ZintercardCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, nullptr, 1, SetOp::kInter, true); }
void ZunionstoreCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, &ctx.args[1], 2, SetOp::kUnion, false); }
void ZinterstoreCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, &ctx.args[1], 2, SetOp::kInter, false); }
void ZdiffstoreCommand(CommandContext& ctx) { ZsetOpGeneric(ctx, &ctx.args[1], 2, SetOp::kDiff, false); }

}  // namespace

void RegisterZSetOpCommands(CommandTable& t) {
  CommandFamily f(t, kAclSortedSet, "sorted-set");
  f.Add({.name = "zpopmin", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set "
                    "if the last member was popped.",
         .since = "5.0.0",
         .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of "
                       "elements popped.",
         .handler = ZpopminCommand});
  f.Add({.name = "zpopmax", .arity = -2, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set "
                    "if the last member was popped.",
         .since = "5.0.0",
         .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of "
                       "elements popped.",
         .handler = ZpopmaxCommand});
  f.Add({.name = "zrandmember", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns one or more random members from a sorted set.", .since = "6.2.0",
         .complexity = "O(N) where N is the number of members returned", .handler = ZrandmemberCommand});
  f.Add({.name = "zscan", .arity = -3, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Iterates over members and scores of a sorted set.", .since = "2.8.0",
         .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
                       "cursor to return back to 0. N is the number of elements inside the collection.",
         .handler = ZscanCommand});
  constexpr uint32_t kBlockingWrite = kCmdWrite | kCmdBlocking;
  f.Add({.name = "bzpopmin", .arity = -3, .flags = kBlockingWrite | kCmdFast, .first_key = 1, .last_key = -2,
         .summary = "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a "
                    "member is available otherwise. Deletes the sorted set if the last element was popped.",
         .since = "5.0.0", .complexity = "O(log(N)) with N being the number of elements in the sorted set.",
         .handler = BzpopminCommand});
  f.Add({.name = "bzpopmax", .arity = -3, .flags = kBlockingWrite | kCmdFast, .first_key = 1, .last_key = -2,
         .summary = "Removes and returns the member with the highest score from one or more sorted sets. Blocks until "
                    "a member available otherwise.  Deletes the sorted set if the last element was popped.",
         .since = "5.0.0", .complexity = "O(log(N)) with N being the number of elements in the sorted set.",
         .handler = BzpopmaxCommand});
  // The numkeys commands: their keys follow numkeys (at numkeys_index); a
  // *STORE's destination (first_key 1) comes before it.
  constexpr std::string_view kPopCost =
      "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted "
      "set, and M being the number of elements popped.";
  f.Add({.name = "zmpop", .arity = -4, .flags = kCmdWrite, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. "
                    "Deletes the sorted set if the last member was popped.",
         .since = "7.0.0", .complexity = kPopCost, .handler = ZmpopCommand});
  f.Add({.name = "bzmpop", .arity = -5, .flags = kBlockingWrite, .first_key = 3, .last_key = 3, .numkeys_index = 2,
         .summary = "Removes and returns a member by score from one or more sorted sets. Blocks until a member is "
                    "available otherwise. Deletes the sorted set if the last element was popped.",
         .since = "7.0.0", .complexity = kPopCost, .handler = BzmpopCommand});
  constexpr std::string_view kUnionCost =
      "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of "
      "elements in the resulting sorted set.";
  constexpr std::string_view kInterCost =
      "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input "
      "sorted sets and M being the number of elements in the resulting sorted set.";
  constexpr std::string_view kDiffCost =
      "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the "
      "first set, and K is the size of the result set.";
  f.Add({.name = "zunion", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns the union of multiple sorted sets.", .since = "6.2.0", .complexity = kUnionCost,
         .handler = ZunionCommand});
  f.Add({.name = "zinter", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns the intersect of multiple sorted sets.", .since = "6.2.0", .complexity = kInterCost,
         .handler = ZinterCommand});
  f.Add({.name = "zdiff", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns the difference between multiple sorted sets.", .since = "6.2.0", .complexity = kDiffCost,
         .handler = ZdiffCommand});
  f.Add({.name = "zintercard", .arity = -3, .flags = kCmdReadonly, .first_key = 2, .last_key = 2, .numkeys_index = 1,
         .summary = "Returns the number of members of the intersect of multiple sorted sets.", .since = "7.0.0",
         .complexity = "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
                       "sorted sets.",
         .handler = ZintercardCommand});
  f.Add({.name = "zunionstore", .arity = -4, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = 1,
         .numkeys_index = 2, .summary = "Stores the union of multiple sorted sets in a key.", .since = "2.0.0",
         .complexity = kUnionCost, .handler = ZunionstoreCommand});
  f.Add({.name = "zinterstore", .arity = -4, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = 1,
         .numkeys_index = 2, .summary = "Stores the intersect of multiple sorted sets in a key.", .since = "2.0.0",
         .complexity = kInterCost, .handler = ZinterstoreCommand});
  f.Add({.name = "zdiffstore", .arity = -4, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = 1,
         .numkeys_index = 2, .summary = "Stores the difference of multiple input sorted sets in a key.",
         .since = "6.2.0", .complexity = kDiffCost, .handler = ZdiffstoreCommand});
}

}  // namespace peregrine
