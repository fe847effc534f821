// Glob matching (see glob.h). The semantics follow Redis's stringmatchlen,
// including its corner cases: an unterminated '[' class ends at the pattern's
// end, a trailing '\' matches itself, and an empty string matches no pattern
// but an empty one (KEYS/SCAN special-case a lone "*" before calling this).
#include "core/glob.h"

#include <cctype>
#include <utility>

namespace peregrine {
namespace {

constexpr int kMaxNesting = 1000;

int Fold(int c, bool nocase) { return nocase ? std::tolower(c) : c; }

// Matches one '[...]' class starting just after '[' at p (pattern end `pe`)
// against character `c`. Advances p past the closing ']' (or to pe).
bool MatchClass(const char*& p, const char* pe, char c, bool nocase) {
  bool negate = p < pe && *p == '^';
  if (negate) p++;
  bool match = false;
  while (p < pe) {
    if (*p == '\\' && pe - p >= 2) {
      p++;
      if (*p == c) match = true;  // an escaped character compares exactly, even with nocase
    } else if (*p == ']') {
      break;
    } else if (pe - p >= 3 && p[1] == '-') {
      // Ranges compare as (signed) char, as Redis does on x86.
      int start = p[0], end = p[2], ch = c;
      if (start > end) std::swap(start, end);
      if (nocase) {
        start = std::tolower(static_cast<unsigned char>(start));
        end = std::tolower(static_cast<unsigned char>(end));
        ch = std::tolower(static_cast<unsigned char>(ch));
      }
      p += 2;
      if (ch >= start && ch <= end) match = true;
    } else if (Fold(static_cast<unsigned char>(*p), nocase) ==
               Fold(static_cast<unsigned char>(c), nocase)) {
      match = true;
    }
    p++;
  }
  if (p < pe) p++;  // skip ']'
  return negate ? !match : match;
}

// skip_longer: set once a '*' has tried every suffix and failed; an outer '*'
// trying a longer prefix cannot succeed either, so it stops (linear time).
bool Match(const char* p, const char* pe, const char* s, const char* se, bool nocase,
           bool* skip_longer, int nesting) {
  if (nesting > kMaxNesting) return false;
  while (p < pe && s < se) {
    switch (*p) {
      case '*': {
        while (pe - p > 1 && p[1] == '*') p++;
        if (pe - p == 1) return true;
        while (s < se) {
          if (Match(p + 1, pe, s, se, nocase, skip_longer, nesting + 1)) return true;
          if (*skip_longer) return false;
          s++;
        }
        *skip_longer = true;
        return false;
      }
      case '?':
        p++;
        s++;
        break;
      case '[': {
        p++;
        if (!MatchClass(p, pe, *s, nocase)) return false;
        s++;
        break;
      }
      case '\\':
        if (pe - p >= 2) p++;
        [[fallthrough]];
      default:
        if (Fold(static_cast<unsigned char>(*p), nocase) != Fold(static_cast<unsigned char>(*s), nocase))
          return false;
        p++;
        s++;
        break;
    }
    if (s == se) {
      while (p < pe && *p == '*') p++;
      break;
    }
  }
  return p == pe && s == se;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  bool skip_longer = false;
  return Match(pattern.data(), pattern.data() + pattern.size(), str.data(),
               str.data() + str.size(), nocase, &skip_longer, 0);
}

}  // namespace peregrine
