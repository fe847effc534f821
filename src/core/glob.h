// Glob-style pattern matching with Redis's rules (KEYS, SCAN MATCH, CONFIG GET,
// CLIENT/COMMAND LIST filters): '*', '?', '[...]' with '^' negation and 'a-z'
// ranges, and '\' escapes.
#pragma once

#include <string_view>

namespace peregrine {

// True if `str` matches `pattern`. Pathological patterns are bounded: star
// backtracking stops as soon as a longer match cannot succeed, and recursion
// is capped, so a hostile pattern cannot stall the server.
bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

}  // namespace peregrine
