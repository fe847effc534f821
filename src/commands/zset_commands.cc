// Sorted set commands, part one: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE,
// ZMSCORE, ZRANK/ZREVRANK, ZCOUNT, ZLEXCOUNT, the ZRANGE family and
// ZRANGESTORE, ZREMRANGEBYRANK/SCORE/LEX, on a ZSetObject
// (core/zset_object.h) per key, with Redis 7.2's replies and error texts.
// Every range form comes down to a run of ranks (RankSpan): its bounds are
// found in O(log n) and its length is the difference of their ranks. A
// sorted set whose last member goes is deleted. Pops, random members, scans
// and the multi-key algebra are in zset_op_commands.cc.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>

#include "commands/zset_commands.h"
#include "core/numbers.h"

namespace peregrine {

ZSetLimits ZLimits(const CommandContext& ctx) { return ZSetLimitsOf(ctx.server.config()); }

bool ZSetForRead(CommandContext& ctx, std::string_view key, const ZSetObject** out) {
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kZSet, &e)) return false;
  *out = e == nullptr ? nullptr : &e->value.zset();
  return true;
}

bool ParseScoreBound(std::string_view arg, double* value, bool* exclusive) {
  *exclusive = !arg.empty() && arg[0] == '(';
  // strtod reads up to a NUL as Redis's C string does.
  const std::string s(UpToNul(arg.substr(*exclusive ? 1 : 0)));
  char* end;
  *value = std::strtod(s.c_str(), &end);
  return *end == '\0' && !std::isnan(*value);
}

void ReplyZRange(CommandContext& ctx, const ZSetObject* z, const RankSpan& span, bool withscores) {
  const uint64_t n = z == nullptr ? 0 : span.count;
  const bool pairs = withscores && ctx.reply.resp() >= 3;
  ctx.reply.ArrayHeader(withscores && !pairs ? n * 2 : n);
  if (n == 0) return;
  ForEachInSpan(*z, span, [&](std::string_view m, double s) {
    if (pairs) ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(m);
    if (withscores) ctx.reply.Double(s);
  });
}

void StoreZSet(CommandContext& ctx, std::string_view dst, ZSetObject z) {
  Db& db = ctx.DbOf(dst);
  const size_t n = z.size();
  bool existed;
  if (n > 0) {
    // Redis's setKey: a destination past its time expires first, and only
    // one that was not there is `new`. The caller's own event follows.
    existed = LookupWrite(ctx, dst) != nullptr;
    if (existed) {
      db.Erase(dst);
      db.Insert(dst, Value(std::move(z)));
    } else {
      InsertKey(ctx, db, dst, Value(std::move(z)));
    }
    SignalKeyAsReady(ctx, ctx.ShardOf(dst), ctx.client.db, dst);
  } else {
    existed = db.Erase(dst);
  }
  if (n > 0 || existed) SignalModifiedKey(ctx, dst);
  if (n == 0 && existed) Notify(ctx, notify::kGeneric, "del", dst);
  ctx.reply.Integer(static_cast<int64_t>(n));
}

namespace {

constexpr std::string_view kErrNotFloatRange = "ERR min or max is not a float";
constexpr std::string_view kErrNotLexRange = "ERR min or max not valid string range item";

// A ZRANGEBYLEX bound: "-" (below everything), "+" (above everything), or
// "[x" / "(x".
struct LexBound {
  enum Kind : uint8_t { kValue, kMinusInf, kPlusInf } kind = kValue;
  std::string_view s;
  bool exclusive = false;
};

bool ParseLexBound(std::string_view arg, LexBound* b) {
  if (arg.empty()) return false;
  const bool alone = arg.size() == 1 || arg[1] == '\0';  // Redis tests the next C char
  switch (arg[0]) {
    case '-': b->kind = LexBound::kMinusInf; return alone;
    case '+': b->kind = LexBound::kPlusInf; return alone;
    case '(': b->exclusive = true; b->s = arg.substr(1); return true;
    case '[': b->exclusive = false; b->s = arg.substr(1); return true;
    default: return false;
  }
}

struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
};

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* r) {
  return ParseScoreBound(min, &r->min, &r->minex) && ParseScoreBound(max, &r->max, &r->maxex);
}

// The span between two positions (lo and hi valid, hi at or after lo),
// after LIMIT offset count (count < 0: no limit; offset < 0: nothing, as
// in Redis).
RankSpan SpanBetween(const ZSetObject::Pos& lo, const ZSetObject::Pos& hi, bool reverse, int64_t offset,
                     int64_t limit) {
  RankSpan span;
  span.reverse = reverse;
  if (!lo.valid() || !hi.valid() || hi.rank < lo.rank || offset < 0) return span;
  const uint64_t n = hi.rank - lo.rank + 1;
  if (static_cast<uint64_t>(offset) >= n) return span;
  span.count = n - static_cast<uint64_t>(offset);
  if (limit >= 0) span.count = std::min<uint64_t>(span.count, static_cast<uint64_t>(limit));
  span.first = reverse ? hi.rank - static_cast<uint64_t>(offset) : lo.rank + static_cast<uint64_t>(offset);
  return span;
}

RankSpan ScoreSpan(const ZSetObject& z, const ScoreRange& r, bool reverse = false, int64_t offset = 0,
                   int64_t limit = -1) {
  const ZSetObject::Pos lo = z.LowerBoundScore(r.min, r.minex);
  if (!lo.valid()) return RankSpan{};
  return SpanBetween(lo, z.UpperBoundScore(r.max, r.maxex), reverse, offset, limit);
}

ZSetObject::Pos LexLow(const ZSetObject& z, const LexBound& b) {
  switch (b.kind) {
    case LexBound::kMinusInf: return z.AtRank(0);
    case LexBound::kPlusInf: return ZSetObject::Pos{};
    case LexBound::kValue: break;
  }
  return z.LowerBoundLex(b.s, b.exclusive);
}

ZSetObject::Pos LexHigh(const ZSetObject& z, const LexBound& b) {
  switch (b.kind) {
    case LexBound::kPlusInf: return z.AtRank(z.size() - 1);
    case LexBound::kMinusInf: return ZSetObject::Pos{};
    case LexBound::kValue: break;
  }
  return z.UpperBoundLex(b.s, b.exclusive);
}

// Redis's zslLexValueGteMin / LteMax and sdscmplex over the bounds.
bool LexGteMin(std::string_view m, const LexBound& min) {
  if (min.kind != LexBound::kValue) return min.kind == LexBound::kMinusInf;
  return min.exclusive ? m > min.s : m >= min.s;
}
bool LexLteMax(std::string_view m, const LexBound& max) {
  if (max.kind != LexBound::kValue) return max.kind == LexBound::kPlusInf;
  return max.exclusive ? m < max.s : m <= max.s;
}
int CompareBounds(const LexBound& a, const LexBound& b) {
  auto rank = [](const LexBound& x) { return x.kind == LexBound::kMinusInf ? 0 : x.kind == LexBound::kValue ? 1 : 2; };
  if (rank(a) != rank(b) || a.kind != LexBound::kValue) return rank(a) - rank(b);
  return a.s.compare(b.s);
}

// Redis's zslIsInLexRange: whether the range can hold anything, judged by
// the bounds and the set's first and last members only. With members of
// different scores (an order lex ranges do not define) this decides as
// Redis does.
bool LexRangeReachable(const ZSetObject& z, const LexBound& min, const LexBound& max) {
  const int cmp = CompareBounds(min, max);
  if (cmp > 0 || (cmp == 0 && (min.exclusive || max.exclusive))) return false;
  if (z.size() == 0) return false;
  char scratch[packed::kScratchSize];
  if (!LexGteMin(ZSetObject::MemberAt(z.AtRank(z.size() - 1), scratch), min)) return false;
  return LexLteMax(ZSetObject::MemberAt(z.AtRank(0), scratch), max);
}

RankSpan LexSpan(const ZSetObject& z, const LexBound& min, const LexBound& max, bool reverse = false,
                 int64_t offset = 0, int64_t limit = -1) {
  if (!LexRangeReachable(z, min, max)) return RankSpan{};
  if (z.encoding() == ZSetObject::Encoding::kListpack) {
    // Redis walks a listpack: from the first member inside the near bound,
    // on while members stay inside the far one. The same as a search when
    // every score is equal; as Redis otherwise (an order lex ranges leave
    // unspecified).
    char scratch[packed::kScratchSize];
    auto at = [&](int64_t r) { return ZSetObject::MemberAt(z.AtRank(static_cast<uint64_t>(r)), scratch); };
    const int64_t n = static_cast<int64_t>(z.size());
    int64_t lo, hi;
    if (reverse) {
      hi = n - 1;
      while (hi >= 0 && !LexLteMax(at(hi), max)) hi--;
      if (hi < 0 || !LexGteMin(at(hi), min)) return RankSpan{};
      lo = hi;
      while (lo > 0 && LexGteMin(at(lo - 1), min)) lo--;
    } else {
      lo = 0;
      while (lo < n && !LexGteMin(at(lo), min)) lo++;
      if (lo == n || !LexLteMax(at(lo), max)) return RankSpan{};
      hi = lo;
      while (hi + 1 < n && LexLteMax(at(hi + 1), max)) hi++;
    }
    return SpanBetween(z.AtRank(static_cast<uint64_t>(lo)), z.AtRank(static_cast<uint64_t>(hi)), reverse, offset,
                       limit);
  }
  const ZSetObject::Pos lo = LexLow(z, min);
  if (!lo.valid()) return RankSpan{};
  return SpanBetween(lo, LexHigh(z, max), reverse, offset, limit);
}

// Z[REV]RANGE's start and stop (Redis's genericZrangebyrankCommand).
RankSpan RankSpanOf(const ZSetObject& z, int64_t start, int64_t end, bool reverse) {
  RankSpan span;
  span.reverse = reverse;
  const int64_t llen = static_cast<int64_t>(z.size());
  if (start < 0) start += llen;
  if (end < 0) end += llen;
  if (start < 0) start = 0;
  if (start > end || start >= llen) return span;
  if (end >= llen) end = llen - 1;
  span.count = static_cast<uint64_t>(end - start + 1);
  span.first = reverse ? static_cast<uint64_t>(llen - 1 - start) : static_cast<uint64_t>(start);
  return span;
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...], and
// ZINCRBY (INCR from the start), as Redis's zaddGenericCommand.
void ZaddGeneric(CommandContext& ctx, int flags) {
  std::string_view key = ctx.args[1];
  bool ch = false;
  size_t at = 2;
  for (; at < ctx.args.size(); ++at) {
    const std::string_view o = ctx.args[at];
    if (EqualsIgnoreCase(o, "nx")) flags |= ZSetObject::kNx;
    else if (EqualsIgnoreCase(o, "xx")) flags |= ZSetObject::kXx;
    else if (EqualsIgnoreCase(o, "ch")) ch = true;
    else if (EqualsIgnoreCase(o, "incr")) flags |= ZSetObject::kIncr;
    else if (EqualsIgnoreCase(o, "gt")) flags |= ZSetObject::kGt;
    else if (EqualsIgnoreCase(o, "lt")) flags |= ZSetObject::kLt;
    else break;
  }
  const size_t rest = ctx.args.size() - at;
  if (rest == 0 || rest % 2 != 0) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const size_t elements = rest / 2;
  const bool nx = flags & ZSetObject::kNx, xx = flags & ZSetObject::kXx, gt = flags & ZSetObject::kGt,
             lt = flags & ZSetObject::kLt, incr = flags & ZSetObject::kIncr;
  if (nx && xx) {
    ctx.reply.Error("ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    ctx.reply.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (incr && elements > 1) {
    ctx.reply.Error("ERR INCR option supports a single increment-element pair");
    return;
  }
  // Every score is checked before anything changes.
  double one_score;
  std::vector<double> scores;
  if (elements > 1) scores.resize(elements);
  for (size_t j = 0; j < elements; ++j) {
    double& s = elements > 1 ? scores[j] : one_score;
    if (!ParseDouble(ctx.args[at + 2 * j], &s)) {
      ctx.reply.Error(kErrNotFloat);
      return;
    }
  }
  const std::span<const double> parsed = elements > 1 ? std::span<const double>(scores) : std::span(&one_score, 1);
  ZaddScores(ctx, key, flags, ch, parsed, at + 1, 2);
}

}  // namespace

void ZaddScores(CommandContext& ctx, std::string_view key, int flags, bool ch, std::span<const double> scores,
                size_t first_member, size_t stride) {
  const size_t elements = scores.size();
  const bool xx = flags & ZSetObject::kXx, incr = flags & ZSetObject::kIncr;
  Db::Entry* e;
  if (!LookupTyped(ctx, key, ValueType::kZSet, &e, /*write=*/true)) return;
  const ZSetLimits limits = ZLimits(ctx);
  int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  if (e == nullptr) {
    if (xx) {
      if (incr)
        ctx.reply.Null();
      else
        ctx.reply.Integer(0);
      return;
    }
    e = InsertKey(ctx, ctx.DbOf(key), key,
                  Value(ZSetObject::Create(elements, ctx.args[first_member].size(), limits)));
    SignalKeyAsReady(ctx, ctx.shard, ctx.client.db, key);
  } else {
    e->value.mutable_zset().MaybeConvert(elements, limits);
  }
  ZSetObject& z = e->value.mutable_zset();
  for (size_t j = 0; j < elements; ++j) {
    double newscore = scores[j];
    const ZSetObject::AddResult r = z.Add(scores[j], ctx.args[first_member + stride * j], flags, limits, &newscore);
    if (r == ZSetObject::AddResult::kNaN) {
      ctx.reply.Error("ERR resulting score is not a number (NaN)");
      if (added + updated > 0) {
        SignalModifiedKey(ctx, key);
        Notify(ctx, notify::kZset, incr ? "zincr" : "zadd", key);
      }
      return;
    }
    added += r == ZSetObject::AddResult::kAdded;
    updated += r == ZSetObject::AddResult::kUpdated;
    processed += r != ZSetObject::AddResult::kNop;
    score = newscore;
  }
  NoteZSetWrite(ctx, key, z);
  if (added + updated > 0) {
    SignalModifiedKey(ctx, key);
    Notify(ctx, notify::kZset, incr ? "zincr" : "zadd", key);
  }
  if (incr) {
    if (processed)
      ctx.reply.Double(score);
    else
      ctx.reply.Null();
  } else {
    ctx.reply.Integer(ch ? added + updated : added);
  }
}

namespace {

void ZaddCommand(CommandContext& ctx) { ZaddGeneric(ctx, 0); }
void ZincrbyCommand(CommandContext& ctx) { ZaddGeneric(ctx, ZSetObject::kIncr); }

void ZremCommand(CommandContext& ctx) {
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kZSet, &e, /*write=*/true)) return;
  int64_t removed = 0;
  if (e != nullptr) {
    ZSetObject& z = e->value.mutable_zset();
    for (size_t i = 2; i < ctx.args.size() && z.size() > 0; i++) removed += z.Remove(ctx.args[i]);
    NoteZSetWrite(ctx, ctx.args[1], z);
    const bool emptied = z.size() == 0;
    DeleteIfEmpty(ctx, ctx.args[1], z);
    if (removed > 0) {
      SignalModifiedKey(ctx, ctx.args[1]);
      Notify(ctx, notify::kZset, "zrem", ctx.args[1]);
      if (emptied) Notify(ctx, notify::kGeneric, "del", ctx.args[1]);
    }
  }
  ctx.reply.Integer(removed);
}

void ZcardCommand(CommandContext& ctx) {
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  ctx.reply.Integer(z == nullptr ? 0 : static_cast<int64_t>(z->size()));
}

void ZscoreCommand(CommandContext& ctx) {
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  double s;
  if (z != nullptr && z->Score(ctx.args[2], &s))
    ctx.reply.Double(s);
  else
    ctx.reply.Null();
}

void ZmscoreCommand(CommandContext& ctx) {
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); i++) {
    double s;
    if (z != nullptr && z->Score(ctx.args[i], &s))
      ctx.reply.Double(s);
    else
      ctx.reply.Null();
  }
}

// Z[REV]RANK key member [WITHSCORE]
void ZrankGeneric(CommandContext& ctx, bool reverse) {
  if (ctx.args.size() > 4) {
    ReplyWrongArity(ctx);
    return;
  }
  const bool withscore = ctx.args.size() == 4;
  if (withscore && !EqualsIgnoreCase(ctx.args[3], "withscore")) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  uint64_t rank;
  double score;
  if (z == nullptr || !z->Rank(ctx.args[2], &rank, &score)) {
    if (withscore)
      ctx.reply.NullArray();
    else
      ctx.reply.Null();
    return;
  }
  if (reverse) rank = z->size() - 1 - rank;
  if (withscore) ctx.reply.ArrayHeader(2);
  ctx.reply.Integer(static_cast<int64_t>(rank));
  if (withscore) ctx.reply.Double(score);
}

void ZrankCommand(CommandContext& ctx) { ZrankGeneric(ctx, false); }
void ZrevrankCommand(CommandContext& ctx) { ZrankGeneric(ctx, true); }

void ZcountCommand(CommandContext& ctx) {
  ScoreRange r;
  if (!ParseScoreRange(ctx.args[2], ctx.args[3], &r)) {
    ctx.reply.Error(kErrNotFloatRange);
    return;
  }
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  ctx.reply.Integer(z == nullptr ? 0 : static_cast<int64_t>(ScoreSpan(*z, r).count));
}

void ZlexcountCommand(CommandContext& ctx) {
  LexBound min, max;
  if (!ParseLexBound(ctx.args[2], &min) || !ParseLexBound(ctx.args[3], &max)) {
    ctx.reply.Error(kErrNotLexRange);
    return;
  }
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  ctx.reply.Integer(z == nullptr ? 0 : static_cast<int64_t>(LexSpan(*z, min, max).count));
}

enum class RangeType : uint8_t { kAuto, kRank, kScore, kLex };

// The ZRANGE family (Redis's zrangeGenericCommand): the source key at
// args[at], its bounds after it, then the options. ZRANGESTORE stores the
// result at args[1] (no WITHSCORES there).
void ZrangeGeneric(CommandContext& ctx, size_t at, bool store, RangeType type, bool reverse, bool auto_direction) {
  bool withscores = false;
  int64_t offset = 0, limit = -1;
  for (size_t j = at + 3; j < ctx.args.size(); ++j) {
    const std::string_view o = ctx.args[j];
    const size_t left = ctx.args.size() - j - 1;
    if (!store && EqualsIgnoreCase(o, "withscores")) {
      withscores = true;
    } else if (EqualsIgnoreCase(o, "limit") && left >= 2) {
      if (!ParseIntArg(ctx, ctx.args[j + 1], &offset) || !ParseIntArg(ctx, ctx.args[j + 2], &limit)) return;
      j += 2;
    } else if (auto_direction && EqualsIgnoreCase(o, "rev")) {
      reverse = true;
      auto_direction = false;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(o, "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(o, "byscore")) {
      type = RangeType::kScore;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  if (type == RangeType::kAuto) type = RangeType::kRank;
  if (limit != -1 && type == RangeType::kRank) {
    ctx.reply.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return;
  }
  if (withscores && type == RangeType::kLex) {
    ctx.reply.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return;
  }
  // A reverse score or lex range is given as max, min.
  std::string_view min = ctx.args[at + 1], max = ctx.args[at + 2];
  if (reverse && type != RangeType::kRank) std::swap(min, max);
  int64_t start = 0, end = 0;
  ScoreRange sr;
  LexBound lmin, lmax;
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      if (!ParseIntArg(ctx, min, &start) || !ParseIntArg(ctx, max, &end)) return;
      break;
    case RangeType::kScore:
      if (!ParseScoreRange(min, max, &sr)) {
        ctx.reply.Error(kErrNotFloatRange);
        return;
      }
      break;
    case RangeType::kLex:
      if (!ParseLexBound(min, &lmin) || !ParseLexBound(max, &lmax)) {
        ctx.reply.Error(kErrNotLexRange);
        return;
      }
      break;
  }
  const std::string_view key = ctx.args[at];
  const ZSetObject* z;
  if (!ZSetForRead(ctx, key, &z)) return;
  RankSpan span;
  if (z != nullptr) {
    switch (type) {
      case RangeType::kAuto:
      case RangeType::kRank: span = RankSpanOf(*z, start, end, reverse); break;
      case RangeType::kScore: span = ScoreSpan(*z, sr, reverse, offset, limit); break;
      case RangeType::kLex: span = LexSpan(*z, lmin, lmax, reverse, offset, limit); break;
    }
  }
  if (!store) {
    ReplyZRange(ctx, z, span, withscores);
    return;
  }
  // Sized by the result's length, as Redis 7.0 and 7.2.5+ (7.2.0-7.2.4
  // made every score or lex range's result a skiplist).
  const ZSetLimits limits = ZLimits(ctx);
  ZSetObject result = ZSetObject::Create(span.count, 0, limits);
  if (z != nullptr) {
    ForEachInSpan(*z, span, [&](std::string_view m, double s) {
      double unused;
      result.Add(s, m, 0, limits, &unused);
    });
  }
  const bool stored = result.size() > 0;
  StoreZSet(ctx, ctx.args[1], std::move(result));
  if (stored) Notify(ctx, notify::kZset, "zrangestore", ctx.args[1]);
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
void ZrangeCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 1, false, RangeType::kAuto, false, true); }
// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
void ZrangestoreCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 2, true, RangeType::kAuto, false, true); }
void ZrevrangeCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 1, false, RangeType::kRank, true, false); }
void ZrangebyscoreCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 1, false, RangeType::kScore, false, false); }
void ZrevrangebyscoreCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 1, false, RangeType::kScore, true, false); }
void ZrangebylexCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 1, false, RangeType::kLex, false, false); }
void ZrevrangebylexCommand(CommandContext& ctx) { ZrangeGeneric(ctx, 1, false, RangeType::kLex, true, false); }

// ZREMRANGEBYRANK / BYSCORE / BYLEX key min max: the range is checked
// before the key is looked up, as Redis does.
void ZremrangeGeneric(CommandContext& ctx, RangeType type) {
  int64_t start = 0, end = 0;
  ScoreRange sr;
  LexBound lmin, lmax;
  if (type == RangeType::kRank) {
    if (!ParseIntArg(ctx, ctx.args[2], &start) || !ParseIntArg(ctx, ctx.args[3], &end)) return;
  } else if (type == RangeType::kScore) {
    if (!ParseScoreRange(ctx.args[2], ctx.args[3], &sr)) {
      ctx.reply.Error(kErrNotFloatRange);
      return;
    }
  } else if (!ParseLexBound(ctx.args[2], &lmin) || !ParseLexBound(ctx.args[3], &lmax)) {
    ctx.reply.Error(kErrNotLexRange);
    return;
  }
  Db::Entry* e;
  if (!LookupTyped(ctx, ctx.args[1], ValueType::kZSet, &e, /*write=*/true)) return;
  if (e == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  ZSetObject& z = e->value.mutable_zset();
  const RankSpan span = type == RangeType::kRank    ? RankSpanOf(z, start, end, false)
                        : type == RangeType::kScore ? ScoreSpan(z, sr)
                                                    : LexSpan(z, lmin, lmax);
  z.EraseRanks(span.first, span.count);
  NoteZSetWrite(ctx, ctx.args[1], z);
  const bool emptied = z.size() == 0;
  DeleteIfEmpty(ctx, ctx.args[1], z);
  if (span.count > 0) {
    SignalModifiedKey(ctx, ctx.args[1]);
    Notify(ctx, notify::kZset,
           type == RangeType::kRank    ? "zremrangebyrank"
           : type == RangeType::kScore ? "zremrangebyscore"
                                       : "zremrangebylex",
           ctx.args[1]);
    if (emptied) Notify(ctx, notify::kGeneric, "del", ctx.args[1]);
  }
  ctx.reply.Integer(static_cast<int64_t>(span.count));
}

void ZremrangebyrankCommand(CommandContext& ctx) { ZremrangeGeneric(ctx, RangeType::kRank); }
void ZremrangebyscoreCommand(CommandContext& ctx) { ZremrangeGeneric(ctx, RangeType::kScore); }
void ZremrangebylexCommand(CommandContext& ctx) { ZremrangeGeneric(ctx, RangeType::kLex); }

constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;

}  // namespace

void RegisterZSetCommands(CommandTable& t) {
  CommandFamily f(t, kAclSortedSet, "sorted-set");
  constexpr std::string_view kLogN = "O(log(N)) where N is the number of elements in the sorted set.";
  constexpr std::string_view kRangeCost =
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.";
  f.Add({.name = "zadd", .arity = -4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't "
                    "exist.",
         .since = "1.2.0",
         .complexity = "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
         .handler = ZaddCommand});
  f.Add({.name = "zincrby", .arity = 4, .flags = kWriteFlags | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Increments the score of a member in a sorted set.", .since = "1.2.0", .complexity = kLogN,
         .handler = ZincrbyCommand});
  f.Add({.name = "zrem", .arity = -3, .flags = kCmdWrite | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Removes one or more members from a sorted set. Deletes the sorted set if all members were "
                    "removed.",
         .since = "1.2.0",
         .complexity = "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements "
                       "to be removed.",
         .handler = ZremCommand});
  f.Add({.name = "zcard", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the number of members in a sorted set.", .since = "1.2.0", .complexity = "O(1)",
         .handler = ZcardCommand});
  f.Add({.name = "zscore", .arity = 3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the score of a member in a sorted set.", .since = "1.2.0", .complexity = "O(1)",
         .handler = ZscoreCommand});
  f.Add({.name = "zmscore", .arity = -3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the score of one or more members in a sorted set.", .since = "6.2.0",
         .complexity = "O(N) where N is the number of members being requested.", .handler = ZmscoreCommand});
  f.Add({.name = "zrank", .arity = -3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the index of a member in a sorted set ordered by ascending scores.", .since = "2.0.0",
         .complexity = kLogN, .handler = ZrankCommand});
  f.Add({.name = "zrevrank", .arity = -3, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the index of a member in a sorted set ordered by descending scores.", .since = "2.0.0",
         .complexity = kLogN, .handler = ZrevrankCommand});
  f.Add({.name = "zcount", .arity = 4, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the count of members in a sorted set that have scores within a range.", .since = "2.0.0",
         .complexity = kLogN, .handler = ZcountCommand});
  f.Add({.name = "zlexcount", .arity = 4, .flags = kCmdReadonly | kCmdFast, .first_key = 1, .last_key = 1,
         .summary = "Returns the number of members in a sorted set within a lexicographical range.", .since = "2.8.9",
         .complexity = kLogN, .handler = ZlexcountCommand});
  f.Add({.name = "zrange", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members in a sorted set within a range of indexes.", .since = "1.2.0",
         .complexity = kRangeCost, .handler = ZrangeCommand});
  f.Add({.name = "zrangestore", .arity = -5, .flags = kWriteFlags, .first_key = 1, .last_key = 2,
         .summary = "Stores a range of members from sorted set in a key.", .since = "6.2.0",
         .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements "
                       "stored into the destination key.",
         .handler = ZrangestoreCommand});
  f.Add({.name = "zrevrange", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members in a sorted set within a range of indexes in reverse order.", .since = "1.2.0",
         .complexity = kRangeCost, .handler = ZrevrangeCommand});
  f.Add({.name = "zrangebyscore", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members in a sorted set within a range of scores.", .since = "1.0.5",
         .complexity = kRangeCost, .handler = ZrangebyscoreCommand});
  f.Add({.name = "zrevrangebyscore", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members in a sorted set within a range of scores in reverse order.", .since = "2.2.0",
         .complexity = kRangeCost, .handler = ZrevrangebyscoreCommand});
  f.Add({.name = "zrangebylex", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members in a sorted set within a lexicographical range.", .since = "2.8.9",
         .complexity = kRangeCost, .handler = ZrangebylexCommand});
  f.Add({.name = "zrevrangebylex", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members in a sorted set within a lexicographical range in reverse order.",
         .since = "2.8.9", .complexity = kRangeCost, .handler = ZrevrangebylexCommand});
  constexpr std::string_view kRemCost =
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by "
      "the operation.";
  f.Add({.name = "zremrangebyrank", .arity = 4, .flags = kCmdWrite, .first_key = 1, .last_key = 1,
         .summary = "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members "
                    "were removed.",
         .since = "2.0.0", .complexity = kRemCost, .handler = ZremrangebyrankCommand});
  f.Add({.name = "zremrangebyscore", .arity = 4, .flags = kCmdWrite, .first_key = 1, .last_key = 1,
         .summary = "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members "
                    "were removed.",
         .since = "1.2.0", .complexity = kRemCost, .handler = ZremrangebyscoreCommand});
  f.Add({.name = "zremrangebylex", .arity = 4, .flags = kCmdWrite, .first_key = 1, .last_key = 1,
         .summary = "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all "
                    "members were removed.",
         .since = "2.8.9", .complexity = kRemCost, .handler = ZremrangebylexCommand});
  RegisterZSetOpCommands(t);
}

}  // namespace peregrine
