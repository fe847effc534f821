// Geo commands, part two: the searches. GEOSEARCH, GEOSEARCHSTORE,
// GEORADIUS, GEORADIUSBYMEMBER and their _RO forms are one function, as in
// Redis (georadiusGeneric): the same option parser, checks in the same
// order, and the same scan: the score ranges of the centre's geohash cell
// and its neighbours (geo::PlanScan), in Redis's order, each member decoded
// and tested against the shape. Results come out in that scan order unless
// sorted by distance (ASC, DESC, or COUNT without ANY, which implies ASC).
// The store forms write a sorted set at their destination, which lives on
// whatever shard owns it (the dispatcher holds it: first/last keys for
// GEOSEARCHSTORE, GeoradiusKeys for GEORADIUS ... STORE).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "commands/geo_commands.h"
#include "commands/zset_commands.h"
#include "core/numbers.h"

namespace peregrine {
namespace {

// Which command runs the search (Redis's RADIUS_* and GEOSEARCH* flags).
enum SearchFlags : int {
  kFromCoords = 1 << 0,      // GEORADIUS[_RO] key longitude latitude radius unit
  kFromMember = 1 << 1,      // GEORADIUSBYMEMBER[_RO] key member radius unit
  kNoStore = 1 << 2,         // the _RO forms: no STORE / STOREDIST
  kGeoSearch = 1 << 3,       // GEOSEARCH's syntax: the centre and shape are options
  kGeoSearchStore = 1 << 4,  // GEOSEARCHSTORE dst src: STOREDIST takes no key
};

enum class Sort : uint8_t { kNone, kAsc, kDesc };

constexpr std::string_view kErrNoMember = "ERR could not decode requested zset member";

// A member found inside the shape.
struct Found {
  std::string member;
  double dist;  // from the centre, in metres
  double score;
  geo::Point point;  // its decoded position
};

// longLatFromMember: the position `member` stands for; false after
// replying if it is not in the set.
bool MemberPointOrReply(CommandContext& ctx, const ZSetObject& z, std::string_view member, geo::Point* out) {
  double score;
  if (!z.Score(member, &score)) {
    ctx.reply.Error(kErrNoMember);
    return false;
  }
  *out = geo::DecodeScore(score);
  return true;
}

// extractDistanceOrReply: args[at] radius, args[at + 1] unit.
bool ParseRadiusOrReply(CommandContext& ctx, size_t at, geo::Shape* shape) {
  double radius;
  if (!ParseDouble(ctx.args[at], &radius)) {
    ctx.reply.Error("ERR need numeric radius");
    return false;
  }
  if (radius < 0) {
    ctx.reply.Error("ERR radius cannot be negative");
    return false;
  }
  double conversion;
  if (!ParseUnitOrReply(ctx, ctx.args[at + 1], &conversion)) return false;
  shape->kind = geo::Shape::Kind::kRadius;
  shape->radius = radius;
  shape->conversion = conversion;
  return true;
}

// extractBoxOrReply: args[at] width, args[at + 1] height, args[at + 2]
// unit; both numbers are parsed before either's sign is checked.
bool ParseBoxOrReply(CommandContext& ctx, size_t at, geo::Shape* shape) {
  double width, height;
  if (!ParseDouble(ctx.args[at], &width)) {
    ctx.reply.Error("ERR need numeric width");
    return false;
  }
  if (!ParseDouble(ctx.args[at + 1], &height)) {
    ctx.reply.Error("ERR need numeric height");
    return false;
  }
  if (height < 0 || width < 0) {
    ctx.reply.Error("ERR height or width cannot be negative");
    return false;
  }
  double conversion;
  if (!ParseUnitOrReply(ctx, ctx.args[at + 2], &conversion)) return false;
  shape->kind = geo::Shape::Kind::kBox;
  shape->width = width;
  shape->height = height;
  shape->conversion = conversion;
  return true;
}

// membersOfAllNeighbors: the members of `z` inside `shape`, in scan order
// (each score range ascending, by score then member). With a `limit`
// (COUNT n ANY) it stops as soon as that many matched: checked before each
// range and after each member looked at, as Redis does.
std::vector<Found> FindMembers(const ZSetObject& z, const geo::Shape& shape, uint64_t limit) {
  std::vector<Found> found;
  const auto full = [&] { return limit != 0 && found.size() >= limit; };
  char scratch[packed::kScratchSize];
  for (const geo::ScoreRange& range : geo::PlanScan(shape)) {
    if (full()) break;
    // min <= score < max, as doubles (Redis passes the bounds as doubles).
    const double max = static_cast<double>(range.max);
    ZSetObject::Pos p = z.LowerBoundScore(static_cast<double>(range.min), false);
    for (bool ok = p.valid(); ok; ok = z.Next(&p)) {
      const double score = ZSetObject::ScoreAt(p);
      if (!(score < max)) break;
      geo::Point point;
      if (const std::optional<double> d = geo::DistanceIfWithin(shape, score, &point))
        found.push_back(Found{std::string(ZSetObject::MemberAt(p, scratch)), *d, score, point});
      if (full()) break;
    }
  }
  return found;
}

// -1, 0 or 1 as x is nearer, as near or farther than y; a NaN distance
// (possible in haversine's last bits) counts as the farthest, so that the
// order is total.
int CompareDistance(double x, double y) {
  const bool xn = std::isnan(x), yn = std::isnan(y);
  if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
  return x < y ? -1 : (x > y ? 1 : 0);
}

// The first `n` results in reply order, as indexes into `found`: scan
// order, or sorted by distance. Redis sorts with qsort (all) or pqsort (the
// first n); ties keep scan order here, which is one of the orders those
// could give.
std::vector<uint32_t> ReplyOrder(const std::vector<Found>& found, Sort sort, size_t n) {
  std::vector<uint32_t> order(found.size());
  std::iota(order.begin(), order.end(), 0u);
  if (sort != Sort::kNone) {
    const int sign = sort == Sort::kAsc ? 1 : -1;
    const auto before = [&](uint32_t a, uint32_t b) {
      const int c = sign * CompareDistance(found[a].dist, found[b].dist);
      return c != 0 ? c < 0 : a < b;
    };
    if (n == found.size())
      std::sort(order.begin(), order.end(), before);
    else
      std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(n), order.end(), before);
  }
  order.resize(n);
  return order;
}

// Redis's georadiusGeneric. The source key is args[src_index]; it is looked
// up first (WRONGTYPE before anything else), then the arguments are checked
// left to right, each error replied as soon as it is met.
void SearchGeneric(CommandContext& ctx, size_t src_index, int flags) {
  const std::span<const std::string_view> args = ctx.args;
  const ZSetObject* z;
  if (!ZSetForRead(ctx, args[src_index], &z)) return;

  geo::Shape shape;
  std::string_view store_key;
  bool store = false, storedist = false;
  size_t base;  // the first option
  if (flags & kFromCoords) {
    base = 6;
    if (!ParseLonLatOrReply(ctx, 2, &shape.centre) || !ParseRadiusOrReply(ctx, 4, &shape)) return;
  } else if (flags & kFromMember) {
    base = 5;
    // Without the key Redis still parses the options (for which reply to
    // send) but looks at neither the member nor the radius.
    if (z != nullptr && (!MemberPointOrReply(ctx, *z, args[2], &shape.centre) || !ParseRadiusOrReply(ctx, 3, &shape)))
      return;
  } else {
    base = 2;
    if (flags & kGeoSearchStore) {
      base = 3;
      store = true;
      store_key = args[1];
    }
  }

  bool withdist = false, withhash = false, withcoord = false, any = false;
  bool frommember = false, fromlonlat = false, byradius = false, bybox = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;  // 0: no limit
  const bool geosearch = flags & kGeoSearch;
  const bool store_options = !(flags & kNoStore) && !geosearch;
  for (size_t i = base; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const size_t left = args.size() - i - 1;  // the arguments after this one
    if (IsWord(a, "withdist")) {
      withdist = true;
    } else if (IsWord(a, "withhash")) {
      withhash = true;
    } else if (IsWord(a, "withcoord")) {
      withcoord = true;
    } else if (IsWord(a, "any")) {
      any = true;
    } else if (IsWord(a, "asc")) {
      sort = Sort::kAsc;
    } else if (IsWord(a, "desc")) {
      sort = Sort::kDesc;
    } else if (IsWord(a, "count") && left >= 1) {
      if (!ParseIntArg(ctx, args[++i], &count)) return;
      if (count <= 0) {
        ctx.reply.Error("ERR COUNT must be > 0");
        return;
      }
    } else if ((IsWord(a, "store") || IsWord(a, "storedist")) && left >= 1 && store_options) {
      // Repeated, the last one counts (GeoradiusKeys routes by it).
      storedist = IsWord(a, "storedist");
      store = true;
      store_key = args[++i];
    } else if (IsWord(a, "storedist") && (flags & kGeoSearchStore)) {
      storedist = true;
    } else if (IsWord(a, "frommember") && left >= 1 && geosearch && !fromlonlat) {
      ++i;
      if (z != nullptr && !MemberPointOrReply(ctx, *z, args[i], &shape.centre)) return;
      frommember = true;
    } else if (IsWord(a, "fromlonlat") && left >= 2 && geosearch && !frommember) {
      if (!ParseLonLatOrReply(ctx, i + 1, &shape.centre)) return;
      fromlonlat = true;
      i += 2;
    } else if (IsWord(a, "byradius") && left >= 2 && geosearch && !bybox) {
      if (!ParseRadiusOrReply(ctx, i + 1, &shape)) return;
      byradius = true;
      i += 2;
    } else if (IsWord(a, "bybox") && left >= 3 && geosearch && !byradius) {
      if (!ParseBoxOrReply(ctx, i + 1, &shape)) return;
      bybox = true;
      i += 3;
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }

  if (store && (withdist || withhash || withcoord)) {
    ctx.reply.Error((flags & kGeoSearchStore)
                        ? "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
                        : "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
                          "options");
    return;
  }
  // The command's name as the client spelled it.
  if (geosearch && !frommember && !fromlonlat) {
    ctx.reply.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + AsCString(args[0]));
    return;
  }
  if (geosearch && !byradius && !bybox) {
    ctx.reply.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + AsCString(args[0]));
    return;
  }
  if (any && count == 0) {
    ctx.reply.Error("ERR the ANY argument requires COUNT argument");
    return;
  }

  if (z == nullptr) {
    // No source: an empty result; a store deletes its destination.
    if (store) {
      if (ctx.DbOf(store_key).Erase(store_key)) {
        SignalModifiedKey(ctx, store_key);
        Notify(ctx, notify::kGeneric, "del", store_key);
      }
      ctx.reply.Integer(0);
    } else {
      ctx.reply.ArrayHeader(0);
    }
    return;
  }

  // COUNT picks the nearest, so it sorts, unless ANY says any will do.
  if (count != 0 && sort == Sort::kNone && !any) sort = Sort::kAsc;
  const std::vector<Found> found = FindMembers(*z, shape, any ? static_cast<uint64_t>(count) : 0);
  if (found.empty() && !store) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const size_t n = count == 0 ? found.size() : std::min(found.size(), static_cast<size_t>(count));
  const std::vector<uint32_t> order = ReplyOrder(found, sort, n);

  if (store) {
    // Redis builds a skiplist and turns it into a listpack if small enough:
    // the same encoding as creating it for n members of the longest length.
    size_t longest = 0;
    for (uint32_t k : order) longest = std::max(longest, found[k].member.size());
    const ZSetLimits limits = ZLimits(ctx);
    ZSetObject result = ZSetObject::Create(n, longest, limits);
    for (uint32_t k : order) {
      const Found& f = found[k];
      double unused;
      result.Add(storedist ? f.dist / shape.conversion : f.score, f.member, 0, limits, &unused);
    }
    StoreZSet(ctx, store_key, std::move(result));
    if (n > 0)
      Notify(ctx, notify::kZset, (flags & kGeoSearchStore) ? "geosearchstore" : "georadiusstore", store_key);
    return;
  }

  const size_t fields = size_t{withdist} + size_t{withhash} + size_t{withcoord};
  ctx.reply.ArrayHeader(n);
  for (uint32_t k : order) {
    const Found& f = found[k];
    if (fields != 0) ctx.reply.ArrayHeader(fields + 1);
    ctx.reply.Bulk(f.member);
    // In the query's unit, 4 decimals, a bulk string even in RESP3.
    if (withdist) ctx.reply.Bulk(geo::FormatDistance(f.dist / shape.conversion));
    if (withhash) ctx.reply.Integer(static_cast<int64_t>(f.score));
    if (withcoord) {
      ctx.reply.ArrayHeader(2);
      ctx.reply.DoubleText(geo::FormatCoordinate(f.point.lon));
      ctx.reply.DoubleText(geo::FormatCoordinate(f.point.lat));
    }
  }
}

void GeoradiusCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromCoords); }
void GeoradiusRoCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromCoords | kNoStore); }
void GeoradiusbymemberCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromMember); }
void GeoradiusbymemberRoCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kFromMember | kNoStore); }
void GeosearchCommand(CommandContext& ctx) { SearchGeneric(ctx, 1, kGeoSearch); }
void GeosearchstoreCommand(CommandContext& ctx) { SearchGeneric(ctx, 2, kGeoSearch | kGeoSearchStore); }

// The keys of GEORADIUS[BYMEMBER] (options from args[base] on): the source,
// and the destination the command will write, if any. The options are read
// as SearchGeneric reads them: COUNT, STORE and STOREDIST take the next
// argument when there is one, and of several STORE / STOREDIST the last
// counts. (Arguments the parser would reject make the command fail before it
// writes, so where they send the routing does not matter.)
bool GeoradiusKeys(std::span<const std::string_view> args, size_t base, std::vector<size_t>* out) {
  out->push_back(1);
  size_t dst = 0;
  for (size_t i = base; i + 1 < args.size(); ++i) {
    if (IsWord(args[i], "count"))
      ++i;
    else if (IsWord(args[i], "store") || IsWord(args[i], "storedist"))
      dst = ++i;
  }
  if (dst != 0) out->push_back(dst);
  return true;
}

bool GeoradiusFindKeys(std::span<const std::string_view> args, std::vector<size_t>* out) {
  return GeoradiusKeys(args, 6, out);
}
bool GeoradiusbymemberFindKeys(std::span<const std::string_view> args, std::vector<size_t>* out) {
  return GeoradiusKeys(args, 5, out);
}

constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;

}  // namespace

void RegisterGeoSearchCommands(CommandTable& t) {
  CommandFamily f(t, kAclGeo, "geo");
  constexpr std::string_view kRadiusCost =
      "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by "
      "center and radius and M is the number of items inside the index.";
  constexpr std::string_view kSearchCost =
      "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape "
      "provided as the filter and M is the number of items inside the shape";
  // GEORADIUS and GEORADIUSBYMEMBER may write a key named among their
  // options: movable keys, found by reading the arguments.
  f.Add({.name = "georadius", .arity = -6, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .find_keys = GeoradiusFindKeys,
         .summary = "Queries a geospatial index for members within a distance from a coordinate, optionally stores the "
                    "result.",
         .since = "3.2.0", .complexity = kRadiusCost, .handler = GeoradiusCommand});
  f.Add({.name = "georadiusbymember", .arity = -5, .flags = kWriteFlags, .first_key = 1, .last_key = 1,
         .find_keys = GeoradiusbymemberFindKeys,
         .summary = "Queries a geospatial index for members within a distance from a member, optionally stores the "
                    "result.",
         .since = "3.2.0", .complexity = kRadiusCost, .handler = GeoradiusbymemberCommand});
  f.Add({.name = "georadius_ro", .arity = -6, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members from a geospatial index that are within a distance from a coordinate.",
         .since = "3.2.10", .complexity = kRadiusCost, .handler = GeoradiusRoCommand});
  f.Add({.name = "georadiusbymember_ro", .arity = -5, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members from a geospatial index that are within a distance from a member.",
         .since = "3.2.10", .complexity = kRadiusCost, .handler = GeoradiusbymemberRoCommand});
  f.Add({.name = "geosearch", .arity = -7, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Queries a geospatial index for members inside an area of a box or a circle.", .since = "6.2.0",
         .complexity = kSearchCost, .handler = GeosearchCommand});
  f.Add({.name = "geosearchstore", .arity = -8, .flags = kWriteFlags, .first_key = 1, .last_key = 2,
         .summary = "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the "
                    "result.",
         .since = "6.2.0", .complexity = kSearchCost, .handler = GeosearchstoreCommand});
}

}  // namespace peregrine
