// Reading the key specs (key_specs.h): by command name, and applied to an
// invocation's arguments as COMMAND GETKEYS and GETKEYSANDFLAGS do.
#include "server/key_specs.h"

#include <cstdint>
#include <iterator>
#include <unordered_map>

#include "core/numbers.h"
#include "server/command.h"

namespace peregrine {
namespace {

const std::unordered_map<std::string_view, std::span<const KeySpec>>& SpecsByName() {
  static const std::unordered_map<std::string_view, std::span<const KeySpec>> map = [] {
    std::unordered_map<std::string_view, std::span<const KeySpec>> m;
    const std::span<const KeySpec> all = AllKeySpecs();
    size_t i = 0;
    while (i < all.size()) {
      size_t j = i + 1;
      while (j < all.size() && all[j].command == all[i].command) j++;
      m.emplace(all[i].command, all.subspan(i, j - i));
      i = j;
    }
    return m;
  }();
  return map;
}

// An argument is a keyword as C's strcasecmp sees it (up to a NUL byte).
bool Is(std::string_view arg, std::string_view word) { return EqualsIgnoreCase(UpToNul(arg), word); }

// --- The specs applied to the arguments (Redis's getKeysUsingKeySpecs) ---

// Where a spec's keys begin: the index after its keyword (0: not found).
int KeywordEnd(const KeyBegin& begin, std::span<const std::string_view> args) {
  const int argc = static_cast<int>(args.size());
  const int start = begin.pos > 0 ? begin.pos : argc + begin.pos;
  const int end = begin.pos > 0 ? argc - 1 : 1;  // (not looked at: no key could follow)
  const int dir = start <= end ? 1 : -1;
  for (int i = start; i != end; i += dir) {
    if (i >= argc || i < 1) break;
    if (Is(args[static_cast<size_t>(i)], begin.keyword)) return i + 1;
  }
  return 0;
}

enum class SpecResult { kOk, kInvalid };

// The keys one spec finds (appended to out); kInvalid when the arguments do
// not fit it, or it cannot tell all its keys (unknown, INCOMPLETE).
SpecResult ApplySpec(const KeySpec& spec, std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  const int64_t argc = static_cast<int64_t>(args.size());
  int64_t first = 0;
  if (spec.begin.type == KeyBegin::kIndex) {
    first = spec.begin.pos;
  } else if (spec.begin.type == KeyBegin::kKeyword) {
    first = KeywordEnd(spec.begin, args);
    if (first == 0) return SpecResult::kOk;  // no keyword: no keys of this spec
  } else {
    return SpecResult::kInvalid;
  }
  int64_t last = 0, step = 1;
  const KeyFind& f = spec.find;
  if (f.type == KeyFind::kRange) {
    step = f.keystep;
    if (f.lastkey >= 0)
      last = first + f.lastkey;
    else if (f.limit == 0)
      last = argc + f.lastkey;
    else
      last = first + ((argc - first) / f.limit + f.lastkey);
  } else if (f.type == KeyFind::kKeynum) {
    step = f.keystep;
    const int64_t at = first + f.keynumidx;
    int64_t n;
    if (at >= argc || !ParseInt64(args[static_cast<size_t>(at)], &n) || n < 0) return SpecResult::kInvalid;
    first += f.firstkey;
    last = first + static_cast<int>(n) - 1;  // (the count as Redis's int holds it)
  } else {
    return SpecResult::kInvalid;
  }
  if (last >= argc || last < first || first >= argc || step <= 0) return SpecResult::kInvalid;
  for (int64_t i = first; i <= last; i += step) out->push_back({static_cast<size_t>(i), spec.flags});
  return (spec.flags & kKeySpecIncomplete) ? SpecResult::kInvalid : SpecResult::kOk;
}

// --- The commands' own parsers (Redis's getkeys procedures) ---

// C's atoi of an argument: strtol's value (clamped to 64 bits) cast to int.
int AtoI(std::string_view s) {
  s = UpToNul(s);
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) i++;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  uint64_t v = 0;
  bool clamped = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++) {
    if (v > (uint64_t{INT64_MAX} - static_cast<uint64_t>(s[i] - '0')) / 10) clamped = true;
    if (!clamped) v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  int64_t value;
  if (clamped)
    value = neg ? INT64_MIN : INT64_MAX;
  else
    value = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return static_cast<int>(value);
}

// "[destination] numkeys key ...": the keys, then the destination (0: none).
void CountedKeys(int store, int count, int firstkey, std::span<const std::string_view> args,
                 std::vector<KeyReference>* out) {
  const int argc = static_cast<int>(args.size());
  if (count >= argc) return;
  const int n = AtoI(args[static_cast<size_t>(count)]);
  if (n < 1 || n > argc - firstkey) return;  // (the command answers a syntax error)
  for (int i = 0; i < n; i++) out->push_back({static_cast<size_t>(firstkey + i), 0});
  if (store > 0) out->push_back({static_cast<size_t>(store), 0});
}

// SET: read as well as written with GET.
void SetKeys(std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  uint16_t flags = kKeySpecOW | kKeySpecUpdate;
  for (size_t i = 3; i < args.size(); i++)
    if (Is(args[i], "get")) flags = kKeySpecRW | kKeySpecAccess | kKeySpecUpdate;
  out->push_back({1, flags});
}

// BITFIELD: read only while it only has GETs (and OVERFLOWs).
void BitfieldKeys(std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  bool readonly = true;
  for (size_t i = 2; i < args.size() && readonly; i++) {
    const size_t more = args.size() - i - 1;
    if (Is(args[i], "get") && more >= 2)
      i += 2;
    else if (Is(args[i], "overflow") && more >= 1)
      i += 1;
    else
      readonly = false;  // a SET or INCRBY, or what it cannot read
  }
  out->push_back({1, readonly ? uint16_t{kKeySpecRO | kKeySpecAccess}
                              : uint16_t{kKeySpecRW | kKeySpecAccess | kKeySpecUpdate}});
}

// SORT key [BY p] [LIMIT o c] [GET p ...] [STORE dst]: the last STORE's key.
void SortKeys(std::span<const std::string_view> args, bool ro, std::vector<KeyReference>* out) {
  out->push_back({1, kKeySpecRO | kKeySpecAccess});
  if (ro) return;
  size_t store = 0;
  for (size_t i = 2; i < args.size(); i++) {
    if (Is(args[i], "limit"))
      i += 2;
    else if (Is(args[i], "get") || Is(args[i], "by"))
      i += 1;
    else if (Is(args[i], "store") && i + 1 < args.size())
      store = i + 1;
  }
  if (store > 0) out->push_back({store, kKeySpecOW | kKeySpecUpdate});
}

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw] [KEYS key ...]
void MigrateKeys(std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  size_t first = 3, n = 1;
  for (size_t i = 6; i < args.size(); i++) {
    if (Is(args[i], "keys")) {
      if (!args[3].empty()) {
        n = 0;  // a key and KEYS both: the command's syntax error
      } else {
        first = i + 1;
        n = args.size() - first;
      }
      break;
    }
    if (Is(args[i], "auth"))
      i += 1;
    else if (Is(args[i], "auth2"))
      i += 2;
  }
  for (size_t i = 0; i < n; i++) out->push_back({first + i, kKeySpecRW | kKeySpecAccess | kKeySpecDelete});
}

// GEORADIUS(BYMEMBER) ... [STORE|STOREDIST key]: the last one's key.
void GeoradiusKeys(std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  size_t store = 0;
  for (size_t i = 5; i + 1 < args.size(); i++) {
    if (Is(args[i], "store") || Is(args[i], "storedist")) store = ++i;
  }
  out->push_back({1, 0});
  if (store > 0) out->push_back({store, 0});
}

// XREAD / XREADGROUP ... STREAMS key ... id ...: the first half after STREAMS.
void XreadKeys(std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  size_t streams = 0;
  for (size_t i = 1; i < args.size(); i++) {
    if (Is(args[i], "block") || Is(args[i], "count")) {
      i += 1;
    } else if (Is(args[i], "group")) {
      i += 2;
    } else if (Is(args[i], "noack")) {
    } else {
      if (Is(args[i], "streams")) streams = i;
      break;
    }
  }
  const size_t rest = streams > 0 ? args.size() - streams - 1 : 0;
  if (rest == 0 || rest % 2 != 0) return;
  for (size_t i = 0; i < rest / 2; i++) out->push_back({streams + 1 + i, 0});
}

// The commands that have a parser of their own, and which.
enum class Parser { kNone, kCounted, kSet, kBitfield, kSort, kSortRo, kMigrate, kGeoradius, kXread };
struct ParserOf {
  std::string_view command;
  Parser parser;
  int store = 0, count = 0, firstkey = 0;  // kCounted's positions
};
constexpr ParserOf kParsers[] = {
    {"zunionstore", Parser::kCounted, 1, 2, 3}, {"zinterstore", Parser::kCounted, 1, 2, 3},
    {"zdiffstore", Parser::kCounted, 1, 2, 3},  {"zunion", Parser::kCounted, 0, 1, 2},
    {"zinter", Parser::kCounted, 0, 1, 2},      {"zdiff", Parser::kCounted, 0, 1, 2},
    {"sintercard", Parser::kCounted, 0, 1, 2},  {"zintercard", Parser::kCounted, 0, 1, 2},
    {"lmpop", Parser::kCounted, 0, 1, 2},       {"zmpop", Parser::kCounted, 0, 1, 2},
    {"blmpop", Parser::kCounted, 0, 2, 3},      {"bzmpop", Parser::kCounted, 0, 2, 3},
    {"eval", Parser::kCounted, 0, 2, 3},        {"evalsha", Parser::kCounted, 0, 2, 3},
    {"eval_ro", Parser::kCounted, 0, 2, 3},     {"evalsha_ro", Parser::kCounted, 0, 2, 3},
    {"fcall", Parser::kCounted, 0, 2, 3},       {"fcall_ro", Parser::kCounted, 0, 2, 3},
    {"set", Parser::kSet},                      {"bitfield", Parser::kBitfield},
    {"sort", Parser::kSort},                    {"sort_ro", Parser::kSortRo},
    {"migrate", Parser::kMigrate},              {"georadius", Parser::kGeoradius},
    {"georadiusbymember", Parser::kGeoradius},  {"xread", Parser::kXread},
    {"xreadgroup", Parser::kXread},
};

const ParserOf* FindParser(std::string_view fullname) {
  for (const ParserOf& p : kParsers)
    if (p.command == fullname) return &p;
  return nullptr;
}

void RunParser(const ParserOf& p, std::span<const std::string_view> args, std::vector<KeyReference>* out) {
  switch (p.parser) {
    case Parser::kCounted: CountedKeys(p.store, p.count, p.firstkey, args, out); break;
    case Parser::kSet: SetKeys(args, out); break;
    case Parser::kBitfield: BitfieldKeys(args, out); break;
    case Parser::kSort: SortKeys(args, false, out); break;
    case Parser::kSortRo: SortKeys(args, true, out); break;
    case Parser::kMigrate: MigrateKeys(args, out); break;
    case Parser::kGeoradius: GeoradiusKeys(args, out); break;
    case Parser::kXread: XreadKeys(args, out); break;
    case Parser::kNone: break;
  }
}

}  // namespace

std::span<const KeySpec> KeySpecsOf(std::string_view fullname) {
  auto it = SpecsByName().find(fullname);
  return it == SpecsByName().end() ? std::span<const KeySpec>() : it->second;
}

std::vector<std::string_view> KeySpecFlagNames(uint16_t flags) {
  static constexpr std::string_view kNames[] = {"RO",     "RW",     "OW",     "RM",      "access",     "update",
                                                "insert", "delete", "not_key", "incomplete", "variable_flags"};
  std::vector<std::string_view> names;
  for (size_t i = 0; i < std::size(kNames); i++)
    if (flags & (1u << i)) names.push_back(kNames[i]);
  return names;
}

bool CommandHasKeyArguments(const CommandSpec& cmd) {
  if (FindParser(cmd.fullname) != nullptr) return true;
  for (const KeySpec& spec : KeySpecsOf(cmd.fullname))
    if (!(spec.flags & kKeySpecNotKey)) return true;
  return false;
}

void FindKeysWithFlags(const CommandSpec& cmd, std::span<const std::string_view> args,
                       std::vector<KeyReference>* out) {
  out->clear();
  const std::span<const KeySpec> specs = KeySpecsOf(cmd.fullname);
  bool keys = false, variable = false;
  for (const KeySpec& spec : specs) {
    keys |= !(spec.flags & kKeySpecNotKey);
    variable |= (spec.flags & kKeySpecVariableFlags) != 0;
  }
  // The specs first, when their flags hold whatever the arguments.
  if (keys && !variable) {
    bool valid = true;
    for (const KeySpec& spec : specs) {
      if (spec.flags & kKeySpecNotKey) continue;
      if (ApplySpec(spec, args, out) == SpecResult::kInvalid) {
        valid = false;
        break;
      }
    }
    if (valid) return;
    out->clear();
  }
  if (const ParserOf* p = FindParser(cmd.fullname)) RunParser(*p, args, out);
}

}  // namespace peregrine
