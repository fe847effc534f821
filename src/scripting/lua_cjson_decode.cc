// cjson.decode, the cjson library's decoder (lua_cjson.cc describes the
// library and where it differs from Redis's copy): the tokenizer, numbers
// read as strtod reads them, strings and their escapes, and the recursive
// descent that pushes the value.
#include <lua.hpp>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <system_error>

#include "scripting/lua_cjson_internal.h"

namespace peregrine::lua_cjson {

namespace {

enum TokenType : uint8_t {
  kObjBegin,
  kObjEnd,
  kArrBegin,
  kArrEnd,
  kString,
  kNumber,
  kBoolean,
  kNull,
  kColon,
  kComma,
  kEnd,
  kWhitespace,
  kError,
  kUnknown,  // the first byte of a string, number or literal
};

// As lua-cjson names them in its errors.
constexpr const char* kTokenNames[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
                                       "T_NUMBER",    "T_BOOLEAN", "T_NULL",      "T_COLON",   "T_COMMA",
                                       "T_END",       "T_WHITESPACE", "T_ERROR",   "T_UNKNOWN"};

constexpr std::array<TokenType, 256> MakeTokenTable() {
  std::array<TokenType, 256> t{};
  for (auto& x : t) x = kError;
  t['{'] = kObjBegin;
  t['}'] = kObjEnd;
  t['['] = kArrBegin;
  t[']'] = kArrEnd;
  t[','] = kComma;
  t[':'] = kColon;
  t['\0'] = kEnd;  // the text ends at its first NUL, as in lua-cjson
  for (unsigned char c : {' ', '\t', '\n', '\r'}) t[c] = kWhitespace;
  for (unsigned char c : {'f', 'i', 'I', 'n', 'N', 't', '"', '+', '-'}) t[c] = kUnknown;
  for (unsigned char c = '0'; c <= '9'; ++c) t[c] = kUnknown;
  return t;
}

constexpr std::array<TokenType, 256> kTokenOf = MakeTokenTable();

// Bytes that stop the scan of a string: its end, an escape, a NUL.
constexpr std::array<bool, 256> MakeStringStops() {
  std::array<bool, 256> t{};
  t['"'] = t['\\'] = t['\0'] = true;
  return t;
}

constexpr std::array<bool, 256> kStringStop = MakeStringStops();

// The byte each one-character escape stands for; 0: not an escape ('u' is
// handled apart).
constexpr std::array<char, 256> MakeEscapeChars() {
  std::array<char, 256> t{};
  t['"'] = '"';
  t['\\'] = '\\';
  t['/'] = '/';
  t['b'] = '\b';
  t['t'] = '\t';
  t['n'] = '\n';
  t['f'] = '\f';
  t['r'] = '\r';
  return t;
}

constexpr std::array<char, 256> kEscapeChar = MakeEscapeChars();

struct Token {
  TokenType type;
  size_t index;  // of its first byte, or of the fault for kError
  union {
    const char* string;  // kString: the decoded bytes; kError: the fault
    double number;
    bool boolean;
  };
  size_t string_len;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  const char lower = static_cast<char>(c | 0x20);
  if (lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
  return -1;
}

// Four hex digits at s (stops at the first that is not, NUL included);
// -1 if they are not.
int Hex4(const char* s) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = HexDigit(s[i]);
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

bool StartsWithNoCase3(const char* p, const char* word) {
  for (int i = 0; i < 3; ++i)
    if ((p[i] | 0x20) != word[i]) return false;  // a NUL never matches
  return true;
}

// lua-cjson's test for the numbers strict JSON refuses: a leading '+', a
// hex number, leading zeros, inf and nan.
bool IsInvalidNumber(const char* p) {
  if (*p == '+') return true;
  if (*p == '-') ++p;
  if (*p == '0') {
    const char c = p[1];
    return (c | 0x20) == 'x' || (c >= '0' && c <= '9');
  }
  if (static_cast<signed char>(*p) <= '9') return false;
  return StartsWithNoCase3(p, "inf") || StartsWithNoCase3(p, "nan");
}

// For a number that from_chars found out of range (b..e, after any sign):
// infinity when its magnitude is huge, zero when it is tiny. A range error
// means its decimal exponent is past +-300, so where its first significant
// digit sits, plus its exponent, tells which.
double OutOfRange(const char* b, const char* e, bool hex) {
  const int64_t kCap = int64_t{1} << 40;
  int64_t magnitude = 0;
  const char* p = b;
  auto is_digit = [hex](char c) { return hex ? HexDigit(c) >= 0 : (c >= '0' && c <= '9'); };
  while (p < e && *p == '0') ++p;
  while (p < e && is_digit(*p)) {
    if (magnitude < kCap) ++magnitude;
    ++p;
  }
  if (magnitude == 0 && p < e && *p == '.') {
    ++p;
    while (p < e && *p == '0') {
      if (magnitude > -kCap) --magnitude;
      ++p;
    }
  }
  while (p < e && (is_digit(*p) || *p == '.')) ++p;
  int64_t exponent = 0;
  if (p < e && ((*p | 0x20) == (hex ? 'p' : 'e'))) {
    ++p;
    bool negative = false;
    if (p < e && (*p == '+' || *p == '-')) negative = *p++ == '-';
    while (p < e && *p >= '0' && *p <= '9') {
      if (exponent < kCap) exponent = exponent * 10 + (*p - '0');
      ++p;
    }
    if (negative) exponent = -exponent;
  }
  return (hex ? magnitude * 4 : magnitude) + exponent > 0 ? HUGE_VAL : 0.0;
}

class Decoder {
 public:
  // text: the argument (NUL-terminated by Lua); scratch_slot: a stack slot
  // holding nil, for the scratch userdata of escaped strings.
  Decoder(lua_State* L, const Config& cfg, const char* text, size_t len, int scratch_slot)
      : L_(L), cfg_(cfg), data_(text), end_(text + len), p_(text), scratch_slot_(scratch_slot) {}

  void Run() {
    Token token;
    NextToken(&token);
    PushValue(token);
    NextToken(&token);
    if (token.type != kEnd) ThrowParseError("the end", token);
  }

 private:
  void SetError(Token* t, const char* at, const char* what) {
    t->type = kError;
    t->index = static_cast<size_t>(at - data_);
    t->string = what;
  }

  [[noreturn]] void ThrowParseError(const char* expected, const Token& t) {
    const char* found = t.type == kError ? t.string : kTokenNames[t.type];
    char position[24];
    *std::to_chars(position, position + sizeof(position) - 1, t.index + 1).ptr = '\0';
    luaL_error(L_, "Expected %s but found %s at character %s", expected, found, position);
    __builtin_unreachable();
  }

  // Into a nested array or object, which will need `slots` stack slots.
  void Descend(int slots) {
    ++depth_;
    if (depth_ <= cfg_.decode_max_depth && lua_checkstack(L_, slots)) return;
    char position[24];
    *std::to_chars(position, position + sizeof(position) - 1, static_cast<size_t>(p_ - data_)).ptr = '\0';
    luaL_error(L_, "Found too many nested data structures (%d) at character %s", depth_, position);
  }

  void NextToken(Token* t) {
    TokenType type;
    while ((type = kTokenOf[static_cast<unsigned char>(*p_)]) == kWhitespace) ++p_;
    t->type = type;
    t->index = static_cast<size_t>(p_ - data_);
    if (type == kError) return SetError(t, p_, "invalid token");
    if (type == kEnd) return;
    if (type != kUnknown) {
      ++p_;
      return;
    }
    const char c = *p_;
    if (c == '"') return ReadString(t);
    if (c == '-' || (c >= '0' && c <= '9')) {
      if (!cfg_.decode_invalid_numbers && IsInvalidNumber(p_)) return SetError(t, p_, "invalid number");
      return ReadNumber(t);
    }
    const size_t left = static_cast<size_t>(end_ - p_);
    if (left >= 4 && std::memcmp(p_, "true", 4) == 0) {
      t->type = kBoolean;
      t->boolean = true;
      p_ += 4;
      return;
    }
    if (left >= 5 && std::memcmp(p_, "false", 5) == 0) {
      t->type = kBoolean;
      t->boolean = false;
      p_ += 5;
      return;
    }
    if (left >= 4 && std::memcmp(p_, "null", 4) == 0) {
      t->type = kNull;
      p_ += 4;
      return;
    }
    // Only numbers strict JSON refuses start with the other bytes.
    if (cfg_.decode_invalid_numbers && IsInvalidNumber(p_)) return ReadNumber(t);
    SetError(t, p_, "invalid token");
  }

  // A number as strtod reads it (decimal, hex, inf, infinity, nan, nan(...)
  // with an optional sign), without strtod's dependence on the locale.
  void ReadNumber(Token* t) {
    const char* q = p_;
    bool negative = false;
    if (*q == '-' || *q == '+') negative = *q++ == '-';
    // The common case: an integer of at most 15 digits, exact in a double.
    if (*q >= '0' && *q <= '9' && !(q[0] == '0' && (q[1] | 0x20) == 'x')) {
      uint64_t v = 0;
      const char* r = q;
      while (*r >= '0' && *r <= '9' && r - q < 15) v = v * 10 + static_cast<uint64_t>(*r++ - '0');
      if (!(*r >= '0' && *r <= '9') && *r != '.' && (*r | 0x20) != 'e') {
        const double d = static_cast<double>(v);
        t->type = kNumber;
        t->number = negative ? -d : d;
        p_ = r;
        return;
      }
    }
    double v = 0;
    const char* stop;
    if (q[0] == '0' && (q[1] | 0x20) == 'x') {
      // strtod's hex form needs a hex digit before or just after the point.
      std::from_chars_result r{q + 2, std::errc::invalid_argument};
      if (HexDigit(q[2]) >= 0 || (q[2] == '.' && HexDigit(q[3]) >= 0))
        r = std::from_chars(q + 2, end_, v, std::chars_format::hex);
      if (r.ec == std::errc::invalid_argument) {
        stop = q + 1;  // "0x" without hex digits: the number is the 0
        v = 0;
      } else {
        stop = r.ptr;
        if (r.ec == std::errc::result_out_of_range) v = OutOfRange(q + 2, stop, true);
      }
    } else {
      if (*q == '-' || *q == '+') return SetError(t, p_, "invalid number");
      const std::from_chars_result r = std::from_chars(q, end_, v, std::chars_format::general);
      if (r.ec == std::errc::invalid_argument) return SetError(t, p_, "invalid number");
      stop = r.ptr;
      if (r.ec == std::errc::result_out_of_range) v = OutOfRange(q, stop, false);
    }
    t->type = kNumber;
    t->number = negative ? -v : v;
    p_ = stop;
  }

  // The string at p_ (its opening quote). Without escapes the token points
  // into the text; with escapes into the scratch userdata, which is never
  // smaller than the string's encoded length.
  void ReadString(Token* t) {
    const char* const start = p_ + 1;
    const char* q = start;
    while (!kStringStop[static_cast<unsigned char>(*q)]) ++q;
    if (*q == '"') {
      t->type = kString;
      t->string = start;
      t->string_len = static_cast<size_t>(q - start);
      p_ = q + 1;
      return;
    }
    if (*q == '\0') return SetError(t, q, "unexpected end of string");
    // Escapes: find the bound of the encoded string, then decode it, a run
    // of plain bytes at a time.
    const char* r = q;
    for (;;) {
      while (!kStringStop[static_cast<unsigned char>(*r)]) ++r;
      if (*r != '\\' || r[1] == '\0') break;
      r += 2;
    }
    char* out = Scratch(static_cast<size_t>(r - start));
    char* d = out;
    const char* run = start;
    p_ = q;
    for (;;) {
      while (!kStringStop[static_cast<unsigned char>(*p_)]) ++p_;
      std::memcpy(d, run, static_cast<size_t>(p_ - run));
      d += p_ - run;
      const char c = *p_;
      if (c == '"') break;
      if (c == '\0') return SetError(t, p_, "unexpected end of string");
      const char e = p_[1];
      if (e == 'u') {
        const size_t used = UnicodeEscape(d);
        if (used == 0) return SetError(t, p_, "invalid unicode escape code");
        d += used;
      } else {
        const char unescaped = kEscapeChar[static_cast<unsigned char>(e)];
        if (unescaped == 0) return SetError(t, p_, "invalid escape code");
        *d++ = unescaped;
        p_ += 2;
      }
      run = p_;
    }
    ++p_;
    t->type = kString;
    t->string = out;
    t->string_len = static_cast<size_t>(d - out);
  }

  // The \uXXXX (or surrogate pair \uXXXX\uXXXX) at p_ as UTF-8 at d:
  // returns the bytes written, and moves p_ past it; 0 if it is invalid.
  size_t UnicodeEscape(char* d) {
    int cp = Hex4(p_ + 2);
    if (cp < 0) return 0;
    size_t consumed = 6;
    if ((cp & 0xF800) == 0xD800) {
      if (cp & 0x400) return 0;  // a low surrogate first
      if (p_[6] != '\\' || p_[7] != 'u') return 0;
      const int low = Hex4(p_ + 8);
      if (low < 0 || (low & 0xFC00) != 0xDC00) return 0;
      cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
      consumed = 12;
    }
    size_t n;
    if (cp < 0x80) {
      d[0] = static_cast<char>(cp);
      n = 1;
    } else if (cp < 0x800) {
      d[0] = static_cast<char>(0xC0 | (cp >> 6));
      d[1] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      d[0] = static_cast<char>(0xE0 | (cp >> 12));
      d[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      d[2] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 3;
    } else {
      d[0] = static_cast<char>(0xF0 | (cp >> 18));
      d[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      d[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      d[3] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 4;
    }
    p_ += consumed;
    return n;
  }

  // At least n bytes of scratch space: a short string's in the decoder
  // itself, a longer one's in a userdata. Uses one stack slot for a moment:
  // the one the string's value will take.
  char* Scratch(size_t n) {
    if (n <= sizeof(small_)) return small_;
    if (n > scratch_cap_) {
      size_t want = scratch_cap_ > SIZE_MAX / 2 ? SIZE_MAX : scratch_cap_ * 2;
      const size_t text_len = static_cast<size_t>(end_ - data_);
      if (want > text_len) want = text_len;  // no string is longer than the text
      if (want < kMinBuffer) want = kMinBuffer;
      if (want < n) want = n;
      scratch_ = static_cast<char*>(lua_newuserdata(L_, want));
      lua_replace(L_, scratch_slot_);
      scratch_cap_ = want;
    }
    return scratch_;
  }

  void PushValue(const Token& t) {
    switch (t.type) {
      case kString:
        lua_pushlstring(L_, t.string, t.string_len);
        return;
      case kNumber:
        lua_pushnumber(L_, t.number);
        return;
      case kBoolean:
        lua_pushboolean(L_, t.boolean);
        return;
      case kObjBegin:
        return PushObject();
      case kArrBegin:
        return PushArray();
      case kNull:
        lua_pushlightuserdata(L_, nullptr);
        return;
      default:
        ThrowParseError("value", t);
    }
  }

  void PushObject() {
    Descend(3);  // the table, a key, a value
    lua_newtable(L_);
    Token t;
    NextToken(&t);
    if (t.type == kObjEnd) {
      --depth_;
      return;
    }
    for (;;) {
      if (t.type != kString) ThrowParseError("object key string", t);
      lua_pushlstring(L_, t.string, t.string_len);
      NextToken(&t);
      if (t.type != kColon) ThrowParseError("colon", t);
      NextToken(&t);
      PushValue(t);
      lua_rawset(L_, -3);
      NextToken(&t);
      if (t.type == kObjEnd) {
        --depth_;
        return;
      }
      if (t.type != kComma) ThrowParseError("comma or object end", t);
      NextToken(&t);
    }
  }

  void PushArray() {
    Descend(2);  // the table, a value
    lua_newtable(L_);
    Token t;
    NextToken(&t);
    if (t.type == kArrEnd) {
      --depth_;
      return;
    }
    for (int i = 1;; ++i) {
      PushValue(t);
      lua_rawseti(L_, -2, i);
      NextToken(&t);
      if (t.type == kArrEnd) {
        --depth_;
        return;
      }
      if (t.type != kComma) ThrowParseError("comma or array end", t);
      if (i == INT_MAX) luaL_error(L_, "array too large");  // beyond any memory
      NextToken(&t);
    }
  }

  lua_State* L_;
  const Config& cfg_;
  const char* data_;
  const char* end_;  // the terminating NUL Lua keeps after every string
  const char* p_;
  int depth_ = 0;
  int scratch_slot_;
  char* scratch_ = nullptr;
  size_t scratch_cap_ = 0;
  char small_[256];
};

}  // namespace

// cjson.decode(text). Stack: [text, scratch, value] (within LUA_MINSTACK;
// each nested array or object checks for its own slots).
int Decode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  const Config& cfg = *GetConfig(L);
  size_t len;
  const char* text = luaL_checklstring(L, 1, &len);
  // Any JSON text starts with an ASCII byte, so a NUL among the first two
  // means UTF-16 or UTF-32.
  if (len >= 2 && (text[0] == '\0' || text[1] == '\0')) luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
  lua_pushnil(L);
  Decoder(L, cfg, text, len, 2).Run();
  return 1;
}

}  // namespace peregrine::lua_cjson
