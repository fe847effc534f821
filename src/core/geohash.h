// The arithmetic behind the GEO commands, mirroring Redis 7.2's geohash.c,
// geohash_helper.c and the helpers of geo.c. A GEO set is a sorted set whose
// scores are 52-bit interleaved geohashes, and clients compare what we print
// (GEOPOS coordinates to 17 decimals, GEODIST to 4, GEOHASH strings) and which
// members a search returns, in which order, with Redis's. So every step here
// repeats Redis's floating-point operations in Redis's order, including its
// quirks (scores of 2^52 and more at the +180/+85 edges, the clamping of
// decoded points, the search areas' pruning); "simplifying" any of it changes
// the last digits or the members found. Pure functions; no allocation except
// where a std::string is returned.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peregrine::geo {

// The limits of EPSG:900913 (web Mercator): GEOADD rejects latitudes nearer
// the poles, which the projection cannot represent.
inline constexpr double kLongMin = -180;
inline constexpr double kLongMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;

// Bits per coordinate of a stored score: 26 + 26 = 52, exact in a double.
inline constexpr int kStepMax = 26;
inline constexpr double kEarthRadiusMeters = 6372797.560856;
// Half the Mercator world's width in metres: the search step estimate doubles
// the radius until it reaches this.
inline constexpr double kMercatorMax = 20037726.37;

struct Point {
  double lon = 0;
  double lat = 0;
};

struct Range {
  double min = 0;
  double max = 0;
};

// The coordinate ranges of stored scores, and those of the standard geohash
// that GEOHASH prints (latitude over the whole [-90, 90]).
inline constexpr Range kLongRange{kLongMin, kLongMax};
inline constexpr Range kLatRange{kLatMin, kLatMax};
inline constexpr Range kStandardLatRange{-90, 90};

// A geohash cell: `step` bits of each coordinate, interleaved with the
// longitude's bits at odd positions and the latitude's at even ones. The
// all-zero value is "no cell" (a pruned search neighbour).
struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;

  bool IsZero() const { return bits == 0 && step == 0; }
  bool operator==(const HashBits&) const = default;
};

// The rectangle a cell covers.
struct Area {
  HashBits hash;
  Range lon;
  Range lat;
};

// True if GEOADD (and FROMLONLAT, GEORADIUS) accept the pair; NaN is not.
bool ValidLonLat(double lon, double lat);

// Redis's geohashEncode: `step` (1..32) bits per coordinate of the point's
// position within the ranges. Nullopt if the point lies outside the ranges or
// outside Redis's limits (kLongMin..kLatMax, whatever the ranges).
std::optional<HashBits> Encode(double lon, double lat, int step, Range lon_range = kLongRange,
                               Range lat_range = kLatRange);

// Left-aligns a cell's bits to 52 (geohashAlign52Bits).
uint64_t Align52(HashBits hash);

// The hash GEOADD stores for a valid point (0 for an invalid one): Encode at
// kStepMax, aligned. At the +180 / +85.05112878 edges it is 2^52 or more (the
// offset reaches 2^26), as in Redis. The sorted set holds it as a double,
// static_cast<double>, which rounds as ZADD's parse of Redis's decimal string
// does: above 2^53 the last bit can go (10138940401276181 is stored as
// 10138940401276180).
uint64_t EncodeScore(double lon, double lat);

// The cell `hash` covers within the ranges (geohashDecode). Only the low 32
// bits of each coordinate count, as in Redis.
Area DecodeArea(HashBits hash, Range lon_range = kLongRange, Range lat_range = kLatRange);

// A sorted-set score as the 64-bit integer Redis's `(uint64_t)score` gives
// on x86-64 builds, where scores outside [0, 2^64) are undefined in C:
// negative ones wrap as int64, 2^64 and beyond (and +inf) give 0, and below
// -2^63 (and -inf) 2^63.
uint64_t ScoreToBits(double score);

// The point a score stands for, as GEOPOS, GEODIST and the searches see it
// (decodeGeohash): its cell's centre, clamped to Redis's limits. Any score
// decodes, even one no GEOADD wrote.
Point DecodeScore(double score);

// GEOHASH's 11 characters for a score: the decoded point re-encoded at 26
// bits over the standard ranges; the first 50 bits give 10 characters and the
// 11th is always '0'.
std::string GeohashString(double score);

// Great-circle distance in metres (geohashGetDistance): haversine, with
// Redis's shortcut when the longitudes' half-difference has a zero sine.
double Distance(double lon1, double lat1, double lon2, double lat2);

// The distance between two latitudes along a meridian (geohashGetLatDistance).
double LatDistance(double lat1, double lat2);

// Metres per unit for a unit argument: m, km, ft, mi (case-insensitive).
// Nullopt for anything else; the caller replies "unsupported unit provided.
// please use M, KM, FT, MI".
std::optional<double> ParseUnit(std::string_view unit);

// A coordinate as GEOPOS and WITHCOORD print it (addReplyHumanLongDouble, in
// RESP2 as a bulk string and in RESP3 as a double): "%.17Lf" of the value as
// a long double, trailing zeros and a trailing '.' removed. Coordinates are
// always finite.
std::string FormatCoordinate(double v);

// A distance as GEODIST and WITHDIST print it (fixedpoint_d2string with 4
// digits): llrint(d * 10000) written with exactly 4 decimals. This rounds
// differently from "%.4f" when the product lands on a half.
std::string FormatDistance(double d);

// The area of a search. Sizes are in the request's unit; `conversion` is
// metres per unit (from ParseUnit). Redis keeps them apart because the found
// distances are divided by `conversion` again for printing and STOREDIST.
struct Shape {
  enum class Kind { kRadius, kBox };
  Kind kind = Kind::kRadius;
  Point centre;
  double conversion = 1;
  double radius = 0;  // kRadius
  double width = 0;   // kBox
  double height = 0;  // kBox

  static Shape Radius(Point centre, double radius, double conversion) {
    return Shape{Kind::kRadius, centre, conversion, radius, 0, 0};
  }
  static Shape Box(Point centre, double width, double height, double conversion) {
    return Shape{Kind::kBox, centre, conversion, 0, width, height};
  }
};

// Longitude and latitude bounds of a shape (geohashBoundingBox). Near the
// poles or for huge shapes they can be inverted or NaN; Redis uses them as
// they come, so do we.
struct BoundingBox {
  double min_lon = 0;
  double min_lat = 0;
  double max_lon = 0;
  double max_lat = 0;
};
BoundingBox ShapeBoundingBox(const Shape& shape);

// The step (1..26) whose cells, with their neighbours, should hold a circle
// of this radius in metres centred at this latitude
// (geohashEstimateStepsByRadius).
int EstimateSteps(double radius_meters, double lat);

// The eight cells around one, wrapping at the grid's edges.
struct Neighbors {
  HashBits north, east, west, south;
  HashBits north_east, south_east, north_west, south_west;
};
Neighbors NeighborsOf(HashBits hash);  // hash.step in 1..32

// Where a search looks (geohashCalculateAreasByShapeWGS84): the centre's cell
// at the estimated step, one step coarser if a neighbour would not reach the
// bounding box, and the neighbours, those the bounding box cannot touch zeroed
// (only at steps of 2 or more).
struct SearchAreas {
  HashBits hash;
  Area area;
  Neighbors neighbors;
  BoundingBox bounds;
};
SearchAreas CalculateAreas(const Shape& shape);

// The scores of the members inside a cell: min <= score < max
// (scoresOfGeoHashBox).
struct ScoreRange {
  uint64_t min = 0;
  uint64_t max = 0;
};
ScoreRange ScoresOfCell(HashBits hash);

// The score ranges a search scans, in Redis's order: the centre cell, then
// north, south, east, west, north-east, north-west, south-east, south-west.
// Zeroed neighbours are left out, and so is a cell equal to the last one
// scanned (after a neighbour only: the centre is never compared), exactly as
// membersOfAllNeighbors does. The order matters: unsorted results come out in
// scan order (each range in ascending score order), and COUNT n ANY stops once
// n members matched, checking before each range and after each member.
struct ScanPlan {
  std::array<ScoreRange, 9> ranges;
  int count = 0;

  const ScoreRange* begin() const { return ranges.data(); }
  const ScoreRange* end() const { return ranges.data() + count; }
};
ScanPlan PlanScan(const SearchAreas& areas);
inline ScanPlan PlanScan(const Shape& shape) { return PlanScan(CalculateAreas(shape)); }

// The per-member filters. Each returns the distance in metres from the centre
// if the point is inside, else nullopt. Radius and sizes are in metres here.
// (geohashGetDistanceIfInRadiusWGS84: inside means distance <= radius.)
std::optional<double> DistanceIfInRadius(Point centre, Point p, double radius_meters);
// geohashGetDistanceIfInRectangle: the latitude distance and the longitude
// distance measured along the point's own parallel must each be within half
// the box; the distance returned is the great-circle one.
std::optional<double> DistanceIfInRectangle(Point centre, Point p, double width_meters, double height_meters);

// geoWithinShape: decodes a member's score and applies the shape's filter
// (sizes times `conversion`). `*point` receives the decoded point either way.
// The distance is in metres; Redis divides it by `conversion` before printing
// it or storing it with STOREDIST.
std::optional<double> DistanceIfWithin(const Shape& shape, double score, Point* point);

}  // namespace peregrine::geo
