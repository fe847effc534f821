// Geo commands, part one: GEOADD (NX XX CH), GEODIST, GEOHASH and GEOPOS,
// with Redis 7.2's replies and error texts. A geo set is an ordinary sorted
// set whose scores are 52-bit geohashes: GEOADD is ZADD with the coordinates
// encoded (as Redis, which rewrites GEOADD into a ZADD), and any sorted set
// can be read back as positions. The math is core/geohash.h; the searches
// are in geo_search_commands.cc.
#include <cstdio>
#include <string>
#include <vector>

#include "commands/geo_commands.h"
#include "commands/zset_commands.h"
#include "core/numbers.h"

namespace peregrine {

bool ParseLonLatOrReply(CommandContext& ctx, size_t at, geo::Point* out) {
  if (!ParseDouble(ctx.args[at], &out->lon) || !ParseDouble(ctx.args[at + 1], &out->lat)) {
    ctx.reply.Error(kErrNotFloat);
    return false;
  }
  if (!geo::ValidLonLat(out->lon, out->lat)) {
    // C's %f, as Redis formats it: every digit of a huge value, "inf".
    char buf[768];  // two %f of the largest doubles fit
    std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", out->lon, out->lat);
    ctx.reply.Error(buf);
    return false;
  }
  return true;
}

bool ParseUnitOrReply(CommandContext& ctx, std::string_view arg, double* conversion) {
  // Redis compares the argument as a C string: a NUL ends it.
  const std::optional<double> c = geo::ParseUnit(UpToNul(arg));
  if (!c) {
    ctx.reply.Error("ERR unsupported unit provided. please use M, KM, FT, MI");
    return false;
  }
  *conversion = *c;
  return true;
}

namespace {

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: every argument
// is checked before the key is looked at (so syntax and coordinate errors
// come before WRONGTYPE), then ZADD's work with the encoded positions.
void GeoaddCommand(CommandContext& ctx) {
  bool nx = false, xx = false, ch = false;
  size_t at = 2;
  for (; at < ctx.args.size(); ++at) {
    const std::string_view o = ctx.args[at];
    if (IsWord(o, "nx"))
      nx = true;
    else if (IsWord(o, "xx"))
      xx = true;
    else if (IsWord(o, "ch"))
      ch = true;
    else
      break;
  }
  const size_t rest = ctx.args.size() - at;
  // No triple at all is ZADD's syntax error, after the rewrite.
  if (rest % 3 != 0 || (nx && xx) || rest == 0) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  std::vector<double> scores(rest / 3);
  for (size_t j = 0; j < scores.size(); ++j) {
    geo::Point p;
    if (!ParseLonLatOrReply(ctx, at + 3 * j, &p)) return;
    // Redis passes ZADD the score as a decimal integer, which ZADD's strtod
    // rounds exactly as this conversion does.
    scores[j] = static_cast<double>(geo::EncodeScore(p.lon, p.lat));
  }
  const int flags = (nx ? ZSetObject::kNx : 0) | (xx ? ZSetObject::kXx : 0);
  ZaddScores(ctx, ctx.args[1], flags, ch, scores, at + 2, 3);
}

// GEODIST key member1 member2 [unit]: the unit and the argument count are
// checked before the key.
void GeodistCommand(CommandContext& ctx) {
  double conversion = 1;
  if (ctx.args.size() == 5) {
    if (!ParseUnitOrReply(ctx, ctx.args[4], &conversion)) return;
  } else if (ctx.args.size() > 5) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  double s1, s2;
  if (z == nullptr || !z->Score(ctx.args[2], &s1) || !z->Score(ctx.args[3], &s2)) {
    ctx.reply.Null();
    return;
  }
  const geo::Point a = geo::DecodeScore(s1), b = geo::DecodeScore(s2);
  // A distance stays a bulk string in RESP3, as in Redis.
  ctx.reply.Bulk(geo::FormatDistance(geo::Distance(a.lon, a.lat, b.lon, b.lat) / conversion));
}

// GEOHASH key [member ...]: 11-character standard geohashes, nil for a
// missing member.
void GeohashCommand(CommandContext& ctx) {
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    double s;
    if (z != nullptr && z->Score(ctx.args[i], &s))
      ctx.reply.Bulk(geo::GeohashString(s));
    else
      ctx.reply.Null();
  }
}

// GEOPOS key [member ...]: [longitude, latitude] pairs (bulk strings in
// RESP2, doubles in RESP3, Redis's 17 decimals either way), a nil array for
// a missing member.
void GeoposCommand(CommandContext& ctx) {
  const ZSetObject* z;
  if (!ZSetForRead(ctx, ctx.args[1], &z)) return;
  ctx.reply.ArrayHeader(ctx.args.size() - 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    double s;
    if (z == nullptr || !z->Score(ctx.args[i], &s)) {
      ctx.reply.NullArray();
      continue;
    }
    const geo::Point p = geo::DecodeScore(s);
    ctx.reply.ArrayHeader(2);
    ctx.reply.DoubleText(geo::FormatCoordinate(p.lon));
    ctx.reply.DoubleText(geo::FormatCoordinate(p.lat));
  }
}

}  // namespace

void RegisterGeoCommands(CommandTable& t) {
  CommandFamily f(t, kAclGeo, "geo");
  f.Add({.name = "geoadd", .arity = -5, .flags = kCmdWrite | kCmdDenyOom, .first_key = 1, .last_key = 1,
         .summary = "Adds one or more members to a geospatial index. The key is created if it doesn't exist.",
         .since = "3.2.0",
         .complexity = "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
         .handler = GeoaddCommand});
  f.Add({.name = "geodist", .arity = -4, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns the distance between two members of a geospatial index.", .since = "3.2.0",
         .complexity = "O(1)", .handler = GeodistCommand});
  f.Add({.name = "geohash", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns members from a geospatial index as geohash strings.", .since = "3.2.0",
         .complexity = "O(1) for each member requested.", .handler = GeohashCommand});
  f.Add({.name = "geopos", .arity = -2, .flags = kCmdReadonly, .first_key = 1, .last_key = 1,
         .summary = "Returns the longitude and latitude of members from a geospatial index.", .since = "3.2.0",
         .complexity = "O(1) for each member requested.", .handler = GeoposCommand});
  RegisterGeoSearchCommands(t);
}

}  // namespace peregrine
