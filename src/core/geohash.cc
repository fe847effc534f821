// GEO arithmetic (see geohash.h). The floating-point expressions keep Redis's
// operand order and grouping on purpose: (a * b) * c and a * (b * c) can
// differ in the last bit, and that bit shows in the 17 printed decimals of a
// coordinate or moves a member across a search's edge. The file is compiled
// with -ffp-contract=off (CMakeLists.txt) so that no a * b + c becomes a fused
// multiply-add on targets that have one.
#include "core/geohash.h"

#include <cmath>
#include <numbers>

#include "core/numbers.h"

namespace peregrine::geo {
namespace {

// Redis's D_R: M_PI / 180.0, as a double (its unused DEG_TO_RAD literal
// rounds to the same value).
constexpr double kDegToRad = std::numbers::pi / 180.0;

double DegToRad(double deg) { return deg * kDegToRad; }
double RadToDeg(double rad) { return rad / kDegToRad; }

constexpr uint64_t kEvenBits = 0x5555555555555555ull;  // latitude's positions
constexpr uint64_t kOddBits = 0xAAAAAAAAAAAAAAAAull;   // longitude's positions

// Moves bit i of v to bit 2i.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & kEvenBits;
  return x;
}

// The inverse of Spread: bit 2i of x to bit i; odd bits are ignored.
uint32_t Gather(uint64_t x) {
  x &= kEvenBits;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<uint32_t>(x);
}

// A cell offset in [0, 2^step] as Redis's implicit double -> uint32_t
// conversion gives it on x86-64 (through a 64-bit truncation, so 2^32 at
// step 32 wraps to 0 instead of being undefined).
uint32_t OffsetBits(double offset) { return static_cast<uint32_t>(static_cast<uint64_t>(offset)); }

// Steps one cell along the coordinate whose bits sit under `mine` (the other
// coordinate's under `other`), wrapping around within the cell's 2 * step
// bits. Filling the other coordinate's positions with ones lets the carry of
// +1 (or the borrow of -1) ripple across them (geohash_move_x / _y).
void Move(HashBits* hash, uint64_t mine, uint64_t other, int direction) {
  const int shift = 64 - hash->step * 2;
  uint64_t self = hash->bits & mine;
  const uint64_t rest = hash->bits & other;
  const uint64_t gaps = other >> shift;
  if (direction > 0) {
    self = self + (gaps + 1);
  } else {
    self = self | gaps;
    self = self - (gaps + 1);
  }
  self &= mine >> shift;
  hash->bits = self | rest;
}

HashBits Neighbor(HashBits hash, int east, int north) {
  if (east != 0) Move(&hash, kOddBits, kEvenBits, east);
  if (north != 0) Move(&hash, kEvenBits, kOddBits, north);
  return hash;
}

}  // namespace

bool ValidLonLat(double lon, double lat) {
  return lon >= kLongMin && lon <= kLongMax && lat >= kLatMin && lat <= kLatMax;
}

std::optional<HashBits> Encode(double lon, double lat, int step, Range lon_range, Range lat_range) {
  if (step < 1 || step > 32) return std::nullopt;
  // Redis's limits apply whatever the ranges (GEOHASH re-encodes over
  // [-90, 90] points that are within +-85.05 anyway). NaN fails here too; in
  // Redis it never gets this far.
  if (!ValidLonLat(lon, lat)) return std::nullopt;
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return std::nullopt;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  // At the ranges' maxima the offset is 2^step itself: one past the last
  // cell. Redis keeps it, so a point at +180 or +85.05112878 gets a score of
  // 2^52 or more.
  lat_offset *= static_cast<double>(uint64_t{1} << step);
  lon_offset *= static_cast<double>(uint64_t{1} << step);
  const uint64_t bits = Spread(OffsetBits(lat_offset)) | (Spread(OffsetBits(lon_offset)) << 1);
  return HashBits{bits, static_cast<uint8_t>(step)};
}

uint64_t Align52(HashBits hash) { return hash.bits << (52 - hash.step * 2); }

uint64_t EncodeScore(double lon, double lat) {
  std::optional<HashBits> hash = Encode(lon, lat, kStepMax);
  return hash ? Align52(*hash) : 0;
}

Area DecodeArea(HashBits hash, Range lon_range, Range lat_range) {
  // All 32 bits of each coordinate are read, not just `step` of them: a score
  // of 2^52 or more decodes past the range's maximum (and is clamped later).
  const uint32_t ilat = Gather(hash.bits);
  const uint32_t ilon = Gather(hash.bits >> 1);
  const double lat_scale = lat_range.max - lat_range.min;
  const double lon_scale = lon_range.max - lon_range.min;
  const double cells = static_cast<double>(uint64_t{1} << hash.step);
  // The +1 is 32-bit arithmetic in Redis: it wraps to 0 for 0xFFFFFFFF.
  const uint32_t ilat_next = ilat + 1;
  const uint32_t ilon_next = ilon + 1;
  Area area;
  area.hash = hash;
  area.lat.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
  area.lat.max = lat_range.min + (ilat_next * 1.0 / cells) * lat_scale;
  area.lon.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
  area.lon.max = lon_range.min + (ilon_next * 1.0 / cells) * lon_scale;
  return area;
}

uint64_t ScoreToBits(double score) {
  // GCC's x86-64 sequence: below 2^63 one signed truncation (whose "integer
  // indefinite" result for NaN and for values below -2^63 is 2^63); from 2^63
  // on, a truncation of score - 2^63 with the top bit flipped.
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = uint64_t{1} << 63;
  if (!(score >= kTwo63)) {
    if (score >= -kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(score));
    return kIndefinite;
  }
  const double rest = score - kTwo63;
  if (rest < kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(rest)) ^ kIndefinite;
  return kIndefinite ^ kIndefinite;
}

Point DecodeScore(double score) {
  const Area area = DecodeArea(HashBits{ScoreToBits(score), kStepMax});
  Point p;
  p.lon = (area.lon.min + area.lon.max) / 2;
  if (p.lon > kLongMax) p.lon = kLongMax;
  if (p.lon < kLongMin) p.lon = kLongMin;
  p.lat = (area.lat.min + area.lat.max) / 2;
  if (p.lat > kLatMax) p.lat = kLatMax;
  if (p.lat < kLatMin) p.lat = kLatMin;
  return p;
}

std::string GeohashString(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  const Point p = DecodeScore(score);
  // A decoded point is always within the limits, so this cannot fail.
  const uint64_t bits = Encode(p.lon, p.lat, kStepMax, kLongRange, kStandardLatRange).value_or(HashBits{}).bits;
  std::string out(11, '0');
  // 52 bits make ten 5-bit characters and 2 bits over, which are dropped; the
  // 11th character (the length clients expect) is always '0'.
  for (int i = 0; i < 10; i++) out[i] = kAlphabet[(bits >> (52 - (i + 1) * 5)) & 0x1F];
  return out;
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  const double lon1r = DegToRad(lon1);
  const double lon2r = DegToRad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Same meridian: the haversine reduces to the latitude difference. This
  // changes the last digits against the full formula, so it must stay.
  if (v == 0.0) return LatDistance(lat1, lat2);
  const double lat1r = DegToRad(lat1);
  const double lat2r = DegToRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

std::optional<double> ParseUnit(std::string_view unit) {
  // Redis compares with strcasecmp, which stops at a NUL byte: "km\0junk" is
  // "km" to it.
  unit = unit.substr(0, unit.find('\0'));
  auto is = [unit](std::string_view name) {
    if (unit.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); i++) {
      char c = unit[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != name[i]) return false;
    }
    return true;
  };
  if (is("m")) return 1;
  if (is("km")) return 1000;
  if (is("ft")) return 0.3048;
  if (is("mi")) return 1609.34;
  return std::nullopt;
}

std::string FormatCoordinate(double v) {
  std::string out;
  if (FormatLongDoubleHuman(static_cast<long double>(v), &out)) return out;
  // Not reached for decoded points; ld2string's spellings otherwise.
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

std::string FormatDistance(double d) {
  // llrint rounds half to even (the default rounding mode), after the product
  // itself was rounded; out of range (or NaN) it gives LLONG_MIN on x86-64,
  // which prints as Redis prints it.
  const long long scaled = std::llrint(d * 10000.0);
  const bool negative = scaled < 0;
  const unsigned long long magnitude =
      negative ? 0ull - static_cast<unsigned long long>(scaled) : static_cast<unsigned long long>(scaled);
  std::string digits = std::to_string(magnitude);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  digits.insert(digits.size() - 4, 1, '.');
  if (negative) digits.insert(0, 1, '-');
  return digits;
}

BoundingBox ShapeBoundingBox(const Shape& shape) {
  const bool circle = shape.kind == Shape::Kind::kRadius;
  const double lon = shape.centre.lon;
  const double lat = shape.centre.lat;
  const double height = shape.conversion * (circle ? shape.radius : shape.height / 2);
  const double width = shape.conversion * (circle ? shape.radius : shape.width / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  // A parallel is shorter the nearer it is to a pole, so the same width spans
  // more degrees there: the poleward edge of the box is the wider one.
  const double lon_delta_top = RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(lat + lat_delta)));
  const double lon_delta_bottom = RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(lat - lat_delta)));
  const bool southern = lat < 0;
  BoundingBox box;
  box.min_lon = southern ? lon - lon_delta_bottom : lon - lon_delta_top;
  box.max_lon = southern ? lon + lon_delta_bottom : lon + lon_delta_top;
  box.min_lat = lat - lat_delta;
  box.max_lat = lat + lat_delta;
  return box;
}

int EstimateSteps(double radius_meters, double lat) {
  if (radius_meters == 0) return kStepMax;
  int step = 1;
  while (radius_meters < kMercatorMax) {
    radius_meters *= 2;
    step++;
  }
  step -= 2;  // one cell size coarser: the radius then fits in most cases
  // Meridians converge towards the poles, so cells narrow there.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return step;
}

Neighbors NeighborsOf(HashBits hash) {
  Neighbors n;
  n.north = Neighbor(hash, 0, 1);
  n.east = Neighbor(hash, 1, 0);
  n.west = Neighbor(hash, -1, 0);
  n.south = Neighbor(hash, 0, -1);
  n.north_east = Neighbor(hash, 1, 1);
  n.south_east = Neighbor(hash, 1, -1);
  n.north_west = Neighbor(hash, -1, 1);
  n.south_west = Neighbor(hash, -1, -1);
  return n;
}

SearchAreas CalculateAreas(const Shape& shape) {
  SearchAreas out;
  out.bounds = ShapeBoundingBox(shape);
  const BoundingBox& b = out.bounds;
  const double lon = shape.centre.lon;
  const double lat = shape.centre.lat;
  // A box is estimated by its half-diagonal: the distance to its corners.
  const double half_width = shape.width / 2;
  const double half_height = shape.height / 2;
  double radius_meters = shape.kind == Shape::Kind::kRadius
                             ? shape.radius
                             : std::sqrt(half_width * half_width + half_height * half_height);
  radius_meters *= shape.conversion;
  int steps = EstimateSteps(radius_meters, lat);

  // The centre is valid (checked by the caller or decoded from a score);
  // Redis would search cell 0 otherwise, which value_or repeats.
  auto locate = [&](int step) {
    out.hash = Encode(lon, lat, step).value_or(HashBits{0, static_cast<uint8_t>(step)});
    out.neighbors = NeighborsOf(out.hash);
    out.area = DecodeArea(out.hash);
  };
  locate(steps);

  // Near a cell's edge the estimated step can be too fine: the neighbour on
  // that side does not reach the box's edge. One step coarser then.
  const bool too_fine = DecodeArea(out.neighbors.north).lat.max < b.max_lat ||
                        DecodeArea(out.neighbors.south).lat.min > b.min_lat ||
                        DecodeArea(out.neighbors.east).lon.max < b.max_lon ||
                        DecodeArea(out.neighbors.west).lon.min > b.min_lon;
  if (steps > 1 && too_fine) locate(--steps);

  // Neighbours on a side that the centre cell already covers past the box's
  // edge hold nothing of interest. (Not at step 1, whose four cells wrap
  // around the whole world.)
  if (steps >= 2) {
    Neighbors& n = out.neighbors;
    if (out.area.lat.min < b.min_lat) n.south = n.south_west = n.south_east = HashBits{};
    if (out.area.lat.max > b.max_lat) n.north = n.north_east = n.north_west = HashBits{};
    if (out.area.lon.min < b.min_lon) n.west = n.south_west = n.north_west = HashBits{};
    if (out.area.lon.max > b.max_lon) n.east = n.south_east = n.north_east = HashBits{};
  }
  return out;
}

ScoreRange ScoresOfCell(HashBits hash) {
  ScoreRange range;
  range.min = Align52(hash);
  hash.bits++;
  range.max = Align52(hash);
  return range;
}

ScanPlan PlanScan(const SearchAreas& areas) {
  const Neighbors& n = areas.neighbors;
  const std::array<HashBits, 9> cells = {areas.hash,   n.north,      n.south,      n.east,      n.west,
                                         n.north_east, n.north_west, n.south_east, n.south_west};
  ScanPlan plan;
  // Redis remembers the last scanned index, and 0 doubles as "none yet": so
  // the centre (index 0) is never compared with what follows it.
  size_t last = 0;
  for (size_t i = 0; i < cells.size(); i++) {
    if (cells[i].IsZero()) continue;
    if (last != 0 && cells[i] == cells[last]) continue;
    plan.ranges[plan.count++] = ScoresOfCell(cells[i]);
    last = i;
  }
  return plan;
}

std::optional<double> DistanceIfInRadius(Point centre, Point p, double radius_meters) {
  const double distance = Distance(centre.lon, centre.lat, p.lon, p.lat);
  if (distance > radius_meters) return std::nullopt;
  return distance;
}

std::optional<double> DistanceIfInRectangle(Point centre, Point p, double width_meters, double height_meters) {
  // The latitude test is the cheaper one, so it goes first.
  if (LatDistance(p.lat, centre.lat) > height_meters / 2) return std::nullopt;
  if (Distance(p.lon, p.lat, centre.lon, p.lat) > width_meters / 2) return std::nullopt;
  return Distance(centre.lon, centre.lat, p.lon, p.lat);
}

std::optional<double> DistanceIfWithin(const Shape& shape, double score, Point* point) {
  *point = DecodeScore(score);
  if (shape.kind == Shape::Kind::kRadius) {
    return DistanceIfInRadius(shape.centre, *point, shape.radius * shape.conversion);
  }
  return DistanceIfInRectangle(shape.centre, *point, shape.width * shape.conversion, shape.height * shape.conversion);
}

}  // namespace peregrine::geo
