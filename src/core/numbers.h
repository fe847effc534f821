// Number parsing and formatting with Redis's exact rules: which strings are
// integers (no sign '+', no leading zeros, no spaces), how floats are read and
// how INCRBYFLOAT and RESP doubles print them; names compared as strcasecmp
// does. Pure functions; no allocation
// except where a std::string is returned.
#pragma once

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peregrine {

// ASCII case-insensitive equality (option and command names, as strcasecmp).
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Redis's string2ll: optional '-', then digits with no leading zero (except
// "0"); the whole input must be consumed and fit in int64_t.
bool ParseInt64(std::string_view s, int64_t* out);

// Unsigned variant for cursors (digits only, fits in uint64_t). Leading zeros
// are accepted, as strtoull does.
bool ParseUint64(std::string_view s, uint64_t* out);

// Redis's string2ld: strtold over the whole input; no leading space, no NaN,
// no overflow. Infinity is accepted (callers reject an infinite result).
bool ParseLongDouble(std::string_view s, long double* out);

// Redis's string2d: like ParseLongDouble but for double, used by commands that
// take a float argument (e.g. DEBUG SLEEP, later ZADD).
bool ParseDouble(std::string_view s, double* out);

// Writes the decimal form of v into buf (at least 21 bytes) and returns the
// number of bytes written.
size_t FormatInt64(int64_t v, char* buf);
std::string Int64ToString(int64_t v);

// INCRBYFLOAT's output: "%.17Lf" with trailing zeros (and a trailing '.')
// removed, as Redis's ld2string(LD_STR_HUMAN). Returns false if v is not finite.
bool FormatLongDoubleHuman(long double v, std::string* out);

// A double as RESP prints it: shortest round-trip form, "inf"/"-inf"/"nan".
std::string FormatDouble(double v);
// The same into `out` (kMaxDoubleChars bytes); returns the length.
inline constexpr size_t kMaxDoubleChars = 32;
size_t FormatDouble(double v, char* out);

// Redis's memtoull: an integer with an optional unit (k, kb, m, mb, g, gb;
// case-insensitive; "k" = 1000, "kb" = 1024). Returns nullopt if malformed.
std::optional<uint64_t> ParseMemorySize(std::string_view s);

// `n` random lowercase hex digits, seeded from std::random_device (run ids,
// replication ids, slot migrations' names).
std::string RandomHex(size_t n);
// `n` bytes as 2n lowercase hex digits (a digest's usual form).
std::string HexOf(const unsigned char* data, size_t n);

}  // namespace peregrine
