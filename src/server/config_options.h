// The table of directives behind config.h, for the files that implement
// it (config.cc: parsing, CONFIG GET / SET; config_rewrite.cc: CONFIG
// REWRITE). Not for anyone else: they go through config.h.
#pragma once

#include <cctype>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/numbers.h"
#include "server/config.h"

namespace peregrine::config_options {

using Args = std::span<const std::string>;

// Whether CONFIG SET may change a directive.
enum Mutability : uint8_t {
  kImmutable,    // immutable in Redis too: refused before the value is looked at
  kMutable,      // CONFIG SET applies it
  kNotYet,       // Redis can change it at run time, Peregrine not yet: the value
                 // is validated first (as Redis would), then refused
  kProtected,    // CONFIG SET applies it if enable-protected-configs allows
  kFixed,        // Peregrine's own, set at start: CONFIG SET takes only the value it
                 // has (so that CONFIG GET * written back works, as Redis's own are)
};

struct Option {
  std::string_view name;
  Mutability mutability;
  int min_args, max_args;  // number of values the directive takes
  std::function<std::string(const Config&)> get;
  // Parses and stores; returns "" on success or the reason it failed.
  std::function<std::string(Config&, Args)> set;
  // One of Redis's that changes nothing here (config_compat.cc).
  bool inert = false;
};

// The checks the directives' shapes share, with Redis's error texts: each
// returns "" and stores the value, or says why not.
inline std::string CheckBool(std::string_view in, bool* out) {
  if (EqualsIgnoreCase(in, "yes")) *out = true;
  else if (EqualsIgnoreCase(in, "no")) *out = false;
  else return "argument must be 'yes' or 'no'";
  return "";
}
inline std::string CheckInt(std::string_view in, int64_t min, int64_t max, int64_t* out) {
  if (!ParseInt64(in, out)) return "argument couldn't be parsed into an integer";
  if (*out < min || *out > max)
    return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) + " inclusive";
  return "";
}
inline std::string CheckMemory(std::string_view in, uint64_t min, uint64_t max, uint64_t* out) {
  auto v = ParseMemorySize(in);
  if (!v) return "argument must be a memory value";
  if (*v < min || *v > max)
    return "argument must be between " + std::to_string(min) + " and " + std::to_string(max) + " inclusive";
  *out = *v;
  return "";
}
// An enum's refusal, its names in Redis's order.
template <typename Names>
std::string NotOneOf(const Names& names) {
  std::string all;
  for (std::string_view n : names) all += (all.empty() ? "" : ", ") + std::string(n);
  return "argument(s) must be one of the following: " + all;
}


// The directives' shapes, for the tables' files.
inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Where a directive's value lives: a member of Config, or of its tls-* or
// cluster-* settings.
template <typename T>
T& At(Config& c, T Config::*f) { return c.*f; }
template <typename T>
const T& At(const Config& c, T Config::*f) { return c.*f; }
template <typename T>
T& At(Config& c, T TlsSettings::*f) { return c.tls.*f; }
template <typename T>
const T& At(const Config& c, T TlsSettings::*f) { return c.tls.*f; }
template <typename T>
T& At(Config& c, T Config::ClusterSettings::*f) { return c.cluster.*f; }
template <typename T>
const T& At(const Config& c, T Config::ClusterSettings::*f) { return c.cluster.*f; }

template <typename T, typename Owner>
Option IntOption(std::string_view name, T Owner::*field, int64_t min, int64_t max, Mutability mut) {
  return Option{
      name, mut, 1, 1, [field](const Config& c) { return std::to_string(At(c, field)); },
      [field, min, max](Config& c, Args a) -> std::string {
        int64_t v;
        std::string err = CheckInt(a[0], min, max, &v);
        if (err.empty()) At(c, field) = static_cast<T>(v);
        return err;
      }};
}

template <typename Owner>
Option StringOption(std::string_view name, std::string Owner::*field, Mutability mut) {
  return Option{name, mut, 1, 1, [field](const Config& c) { return At(c, field); },
                [field](Config& c, Args a) -> std::string {
                  At(c, field) = a[0];
                  return "";
                }};
}

template <typename Owner>
Option BoolOption(std::string_view name, bool Owner::*field, Mutability mut) {
  return Option{name, mut, 1, 1, [field](const Config& c) { return At(c, field) ? "yes" : "no"; },
                [field](Config& c, Args a) -> std::string { return CheckBool(a[0], &At(c, field)); }};
}

// One of a few names, as Redis's enum configs: any case in, the name out;
// `names` in Redis's order (its error lists them so).
template <typename E, typename Owner>
Option EnumOption(std::string_view name, E Owner::*field, std::vector<std::pair<std::string_view, E>> names,
                  Mutability mut) {
  return Option{name, mut, 1, 1,
                [field, names](const Config& c) -> std::string {
                  for (const auto& [n, v] : names)
                    if (v == At(c, field)) return std::string(n);
                  return "";
                },
                [field, names](Config& c, Args a) -> std::string {
                  std::vector<std::string_view> all;
                  for (const auto& [n, e] : names) {
                    if (EqualsIgnoreCase(a[0], n)) {
                      At(c, field) = e;
                      return "";
                    }
                    all.push_back(n);
                  }
                  return NotOneOf(all);
                }};
}

// The cluster-* directives (config_cluster.cc).
void AddClusterOptions(std::vector<Option>& o);
// Redis's directives that change nothing here (config_compat.cc), and
// whether a name is one of them.
void AddInertOptions(std::vector<Option>& o);
bool IsInert(std::string_view name);

// Every directive, in CONFIG GET's order; one by name (aliases included).
const std::vector<Option>& Options();
const Option* FindOption(std::string_view name);

}  // namespace peregrine::config_options
