// Helpers shared by the sorted set commands (zset_commands.cc, zset_op_commands.cc) and the
// geo commands (geo_commands.cc), which keep their points in sorted sets.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "commands/common.h"
#include "core/zset_object.h"

namespace peregrine {

// The zset-max-listpack-* directives.
ZSetLimits ZLimits(const CommandContext& ctx);

// The sorted set at `key` for a read: false after replying WRONGTYPE; *out
// is nullptr if the key is missing.
bool ZSetForRead(CommandContext& ctx, std::string_view key, const ZSetObject** out);

// ZADD's work once its arguments are checked (and GEOADD's: Redis's GEOADD
// rewrites itself into a ZADD): looks `key` up for a write (WRONGTYPE),
// creates it unless XX, gives scores[j] to the member at
// args[first_member + j * stride] as ZADD's `flags` (ZSetObject::AddFlags)
// say, and replies as ZADD does (CH: changed scores count too).
// REQUIRES: `key` is the command's first key; at least one score.
void ZaddScores(CommandContext& ctx, std::string_view key, int flags, bool ch, std::span<const double> scores,
                size_t first_member, size_t stride);

// After a write to the sorted set at `key`: a move of its index under way
// goes on between events too (Db::NoteZSetMove).
inline void NoteZSetWrite(CommandContext& ctx, std::string_view key, ZSetObject& z) {
  if (z.moving()) ctx.DbOf(key).NoteZSetMove(key, z);
}

// Redis's strtod-based parse of a score range bound (zslParseRange): the
// whole string (up to a NUL) must be a number strtod reads, "(" first for an
// exclusive bound; NaN refused; "inf", "1e400" (infinite) and "" (zero) pass,
// as in Redis.
bool ParseScoreBound(std::string_view arg, double* value, bool* exclusive);

// A run of entries by rank: `count` of them from rank `first`, towards
// lower ranks when `reverse`.
struct RankSpan {
  uint64_t first = 0;
  uint64_t count = 0;
  bool reverse = false;
};

// Calls f(member, score) for each entry of `span`, in its order. The member
// view lives for the call only.
template <typename F>
void ForEachInSpan(const ZSetObject& z, const RankSpan& span, F&& f) {
  if (span.count == 0) return;
  char scratch[packed::kScratchSize];
  uint64_t left = span.count;
  ZSetObject::Pos p = z.AtRank(span.first);
  if (!span.reverse) {
    for (;;) {
      f(ZSetObject::MemberAt(p, scratch), ZSetObject::ScoreAt(p));
      if (--left == 0 || !z.Next(&p)) return;
    }
  }
  // Backwards a leaf at a time: its entries' offsets gathered walking
  // forwards (entries have no back links), then visited in reverse.
  std::vector<uint32_t> offs;
  for (;;) {
    offs.clear();
    for (uint32_t off = 0, i = 0; i <= p.index; off += p.leaf->SizeAt(off), ++i) offs.push_back(off);
    for (size_t i = offs.size(); i-- > 0;) {
      f(p.leaf->MemberAt(offs[i], scratch), p.leaf->ScoreAt(offs[i]));
      if (--left == 0) return;
    }
    if (p.rank == p.index) return;  // the first leaf
    p = z.AtRank(p.rank - p.index - 1);
  }
}

// Replies the entries of `span`: members, with their scores after them
// (RESP2) or as [member, score] pairs (RESP3) when `withscores`.
void ReplyZRange(CommandContext& ctx, const ZSetObject* z, const RankSpan& span, bool withscores);

// Stores `z` at `dst` in place of whatever was there (deleting it when `z`
// is empty) and replies its size; clients blocked on `dst` are served.
void StoreZSet(CommandContext& ctx, std::string_view dst, ZSetObject z);

// Registers the pops, ZSCAN, ZRANDMEMBER and the numkeys commands
// (zset_op_commands.cc), after RegisterZSetCommands' own.
void RegisterZSetOpCommands(CommandTable& t);

}  // namespace peregrine
