// Unit tests for GlobMatch: Redis's stringmatchlen rules, corner cases included.
#include "core/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace peregrine {
namespace {

TEST(GlobMatch, LiteralPatterns) {
  EXPECT_TRUE(GlobMatch("hello", "hello"));
  EXPECT_FALSE(GlobMatch("hello", "hell"));
  EXPECT_FALSE(GlobMatch("hello", "helloo"));
  EXPECT_FALSE(GlobMatch("hello", "Hello"));
}

TEST(GlobMatch, Star) {
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("*", "x"));
  EXPECT_TRUE(GlobMatch("h*llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_FALSE(GlobMatch("h*llo", "heeeelo"));
  EXPECT_TRUE(GlobMatch("user:*", "user:1000"));
  EXPECT_TRUE(GlobMatch("user:*", "user:"));
  EXPECT_FALSE(GlobMatch("user:*", "user"));
  EXPECT_TRUE(GlobMatch("*:*:*", "a:b:c"));
  EXPECT_FALSE(GlobMatch("*:*:*", "a:b"));
  EXPECT_TRUE(GlobMatch("a**b", "ab"));
  EXPECT_TRUE(GlobMatch("a**", "a"));
  EXPECT_TRUE(GlobMatch("a*", "a"));
  EXPECT_TRUE(GlobMatch("*a", "a"));
  EXPECT_TRUE(GlobMatch("*b*", "abc"));
  EXPECT_FALSE(GlobMatch("*b*", "acd"));
}

TEST(GlobMatch, QuestionMarkMatchesExactlyOneCharacter) {
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h?llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_FALSE(GlobMatch("h?llo", "heello"));
  EXPECT_TRUE(GlobMatch("??", "ab"));
  EXPECT_FALSE(GlobMatch("??", "a"));
  EXPECT_FALSE(GlobMatch("?", "ab"));
  EXPECT_FALSE(GlobMatch("?", ""));
}

TEST(GlobMatch, CharacterClasses) {
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hllo"));
  EXPECT_TRUE(GlobMatch("[abc]", "c"));
  EXPECT_FALSE(GlobMatch("[abc]", "ab"));
}

TEST(GlobMatch, NegatedClass) {
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hbllo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("[^a]", "b"));
  EXPECT_FALSE(GlobMatch("[^a]", "a"));
  EXPECT_FALSE(GlobMatch("[^a]", ""));
  EXPECT_FALSE(GlobMatch("[^abc]", "b"));
}

TEST(GlobMatch, Ranges) {
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hallo"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_FALSE(GlobMatch("h[a-b]llo", "hcllo"));
  EXPECT_TRUE(GlobMatch("[a-z]", "m"));
  EXPECT_FALSE(GlobMatch("[a-z]", "M"));
  EXPECT_TRUE(GlobMatch("[0-9][0-9]", "42"));
  EXPECT_FALSE(GlobMatch("[0-9]", "x"));
  EXPECT_TRUE(GlobMatch("[a-cx-z]", "y"));
  EXPECT_FALSE(GlobMatch("[a-cx-z]", "m"));
  EXPECT_TRUE(GlobMatch("[^a-z]", "5"));
  EXPECT_FALSE(GlobMatch("[^a-z]", "q"));
}

TEST(GlobMatch, ReversedRangeIsSwapped) {
  EXPECT_TRUE(GlobMatch("[z-a]", "m"));
  EXPECT_TRUE(GlobMatch("[z-a]", "a"));
  EXPECT_TRUE(GlobMatch("[z-a]", "z"));
  EXPECT_FALSE(GlobMatch("[z-a]", "A"));
  EXPECT_TRUE(GlobMatch("[9-0]", "5"));
}

TEST(GlobMatch, Escapes) {
  EXPECT_TRUE(GlobMatch("\\*", "*"));
  EXPECT_FALSE(GlobMatch("\\*", "a"));
  EXPECT_FALSE(GlobMatch("\\*", "ab"));
  EXPECT_TRUE(GlobMatch("\\?", "?"));
  EXPECT_FALSE(GlobMatch("\\?", "x"));
  EXPECT_TRUE(GlobMatch("\\[", "["));
  EXPECT_TRUE(GlobMatch("\\[abc]", "[abc]"));
  EXPECT_FALSE(GlobMatch("\\[abc]", "a"));
  EXPECT_TRUE(GlobMatch("a\\\\b", "a\\b"));
  EXPECT_TRUE(GlobMatch("\\a", "a"));  // escaping an ordinary character
  EXPECT_TRUE(GlobMatch("*\\*", "foo*"));
  EXPECT_FALSE(GlobMatch("*\\*", "foo"));
}

TEST(GlobMatch, EscapesInsideClass) {
  EXPECT_TRUE(GlobMatch("[\\]]", "]"));
  EXPECT_TRUE(GlobMatch("[\\^]", "^"));
  EXPECT_TRUE(GlobMatch("[a\\-z]", "-"));
  EXPECT_FALSE(GlobMatch("[a\\-z]", "m"));  // an escaped '-' is not a range
  EXPECT_TRUE(GlobMatch("[\\*]", "*"));
  EXPECT_FALSE(GlobMatch("[\\*]", "x"));
}

TEST(GlobMatch, TrailingBackslashMatchesItself) {
  EXPECT_TRUE(GlobMatch("a\\", "a\\"));
  EXPECT_FALSE(GlobMatch("a\\", "a"));
  EXPECT_FALSE(GlobMatch("a\\", "ab"));
  EXPECT_TRUE(GlobMatch("\\", "\\"));
}

TEST(GlobMatch, UnterminatedClassEndsAtPatternEnd) {
  EXPECT_TRUE(GlobMatch("[abc", "a"));
  EXPECT_TRUE(GlobMatch("[abc", "c"));
  EXPECT_FALSE(GlobMatch("[abc", "d"));
  EXPECT_FALSE(GlobMatch("[abc", "ab"));
  EXPECT_TRUE(GlobMatch("x[abc", "xb"));
  EXPECT_TRUE(GlobMatch("[^abc", "d"));
  EXPECT_FALSE(GlobMatch("[", "a"));
  EXPECT_FALSE(GlobMatch("[", "["));
}

TEST(GlobMatch, EmptyAndDegenerateClasses) {
  // "[]" is an empty class (nothing matches); "[^]" matches any character.
  EXPECT_FALSE(GlobMatch("[]", "a"));
  EXPECT_FALSE(GlobMatch("[]", "]"));
  EXPECT_TRUE(GlobMatch("[^]", "a"));
}

TEST(GlobMatch, Nocase) {
  EXPECT_TRUE(GlobMatch("HELLO", "hello", true));
  EXPECT_FALSE(GlobMatch("HELLO", "hello", false));
  EXPECT_TRUE(GlobMatch("h*O", "HellO", true));
  EXPECT_TRUE(GlobMatch("[A-Z]", "q", true));
  EXPECT_TRUE(GlobMatch("[a-z]", "Q", true));
  EXPECT_FALSE(GlobMatch("[a-z]", "Q", false));
  EXPECT_TRUE(GlobMatch("[XYZ]", "y", true));
  EXPECT_FALSE(GlobMatch("[^a]", "A", true));
  EXPECT_TRUE(GlobMatch("[^a]", "A", false));
  EXPECT_TRUE(GlobMatch("Max*", "maxclients", true));
  EXPECT_TRUE(GlobMatch("\\A", "a", true));
}

// Redis's class loop compares an escaped class member with `==` even when
// nocase is set (util.c: `if (pattern[0] == string[0]) match = 1;`).
TEST(GlobMatch, EscapedClassMemberIsCaseSensitiveEvenWithNocase) {
  EXPECT_FALSE(GlobMatch("[\\A]", "a", true));
  EXPECT_TRUE(GlobMatch("[\\A]", "A", true));
}

TEST(GlobMatch, EmptyString) {
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
  // KEYS/SCAN special-case a lone "*"; the matcher itself needs a character.
  EXPECT_FALSE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("**", ""));
  EXPECT_FALSE(GlobMatch("a", ""));
  EXPECT_FALSE(GlobMatch("[a]", ""));
}

TEST(GlobMatch, BinarySafe) {
  const std::string pattern("a\0*", 3);
  EXPECT_TRUE(GlobMatch(pattern, std::string("a\0bc", 4)));
  EXPECT_FALSE(GlobMatch(pattern, std::string("ab", 2)));
  EXPECT_TRUE(GlobMatch("a?c", std::string("a\0c", 3)));
  EXPECT_TRUE(GlobMatch("*", std::string("\0", 1)));
  // The pattern's length is respected: bytes past its end are never read as '*'.
  const std::string backing = "ab*";
  EXPECT_FALSE(GlobMatch(std::string_view(backing.data(), 2), "abc"));
}

TEST(GlobMatch, HighBitCharacters) {
  EXPECT_TRUE(GlobMatch("caf\xc3\xa9", "caf\xc3\xa9"));
  EXPECT_TRUE(GlobMatch("caf??", "caf\xc3\xa9"));
  EXPECT_TRUE(GlobMatch("*\xa9", "caf\xc3\xa9"));
  EXPECT_FALSE(GlobMatch("caf?", "caf\xc3\xa9"));
}

TEST(GlobMatch, PathologicalPatternFinishesFast) {
  const std::string as(100, 'a');
  const std::string pattern = "a*a*a*a*a*a*a*a*a*a*b";
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch(pattern, as));
  EXPECT_FALSE(GlobMatch(pattern, as, true));
  EXPECT_TRUE(GlobMatch(pattern, as + "b"));
  // Without the skip-longer-matches cut this is exponential (C(100,10) tries).
  const std::string stars = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c";
  EXPECT_FALSE(GlobMatch(stars, std::string(1000, 'a')));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(1));
}

TEST(GlobMatch, VeryLongPatternsDoNotOverflowTheStack) {
  // 5000 "*?" groups against a long string: recursion is capped, so this
  // must simply return (Redis gives up past a nesting of 1000).
  std::string pattern;
  for (int i = 0; i < 5000; i++) pattern += "*?";
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch(pattern, std::string(3000, 'x')));  // needs >= 5000 characters
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // A modest pattern with many stars still matches correctly.
  std::string ok;
  for (int i = 0; i < 50; i++) ok += "*x";
  EXPECT_TRUE(GlobMatch(ok, std::string(100, 'x')));
  EXPECT_FALSE(GlobMatch(ok, std::string(49, 'x')));
}

}  // namespace
}  // namespace peregrine
