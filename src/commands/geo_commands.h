// Helpers shared by the geo commands: GEOADD, GEODIST, GEOHASH and GEOPOS
// (geo_commands.cc) and the searches (geo_search_commands.cc). A geo set is a sorted set whose
// scores are 52-bit geohashes (core/geohash.h).
#pragma once

#include <string_view>

#include "commands/common.h"
#include "core/geohash.h"

namespace peregrine {

// Redis's extractLongLatOrReply: args[at] and args[at + 1] as a longitude
// and a latitude. Replies "value is not a valid float" (the longitude is
// parsed first) or "invalid longitude,latitude pair <%f>,<%f>" and returns
// false if they are not a valid pair.
// An option word as Redis's strcasecmp compares it: the argument up to a
// NUL byte, in any case.
inline bool IsWord(std::string_view arg, std::string_view word) { return EqualsIgnoreCase(UpToNul(arg), word); }

bool ParseLonLatOrReply(CommandContext& ctx, size_t at, geo::Point* out);

// Redis's extractUnitOrReply: metres per unit (m, km, ft, mi in any case);
// replies "unsupported unit provided. please use M, KM, FT, MI" and returns
// false for anything else.
bool ParseUnitOrReply(CommandContext& ctx, std::string_view arg, double* conversion);

// Registers GEOSEARCH, GEOSEARCHSTORE, GEORADIUS[BYMEMBER][_RO]
// (geo_search_commands.cc).
void RegisterGeoSearchCommands(CommandTable& t);

}  // namespace peregrine
