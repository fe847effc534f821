// cjson.encode, the cjson library's encoder (lua_cjson.cc describes the
// library and where it differs from Redis's copy): its output buffer, a Lua
// userdata, and the writers of strings, numbers, arrays and objects.
#include <lua.hpp>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "scripting/lua_cjson_internal.h"

namespace peregrine::lua_cjson {

namespace {

// The largest encode buffer kept between calls: a script that encoded one
// huge value does not hold that much memory for the interpreter's lifetime.
constexpr size_t kMaxKeptBuffer = size_t{1} << 20;

// How a byte is written inside a JSON string: itself (len 0) or an escape.
struct Escape {
  char text[8];  // at most 6 used; copied as 8 bytes
  uint8_t len;
};

constexpr std::array<Escape, 256> MakeEscapes() {
  std::array<Escape, 256> t{};
  constexpr char kHex[] = "0123456789abcdef";
  auto set = [&t](int c, const char* s) {
    uint8_t n = 0;
    while (s[n] != '\0') {
      t[c].text[n] = s[n];
      ++n;
    }
    t[c].len = n;
  };
  for (int c = 0; c < 0x20; ++c) {
    const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15], '\0'};
    set(c, u);
  }
  set('\b', "\\b");
  set('\t', "\\t");
  set('\n', "\\n");
  set('\f', "\\f");
  set('\r', "\\r");
  set('"', "\\\"");
  set('\\', "\\\\");
  set('/', "\\/");
  set(0x7f, "\\u007f");
  return t;
}

constexpr std::array<Escape, 256> kEscapes = MakeEscapes();

// The output of one encode: a userdata at a fixed stack slot, replaced by a
// larger one when it fills (the old one is garbage). Nothing is allocated
// outside Lua, so an error anywhere leaves nothing to free.
class Output {
 public:
  Output(lua_State* L, int slot, char* data, size_t cap) : L_(L), slot_(slot), data_(data), cap_(cap) {}

  // Room for n more bytes; returns where they go (Commit what was written).
  char* Reserve(size_t n) {
    if (cap_ - len_ < n) Grow(n);
    return data_ + len_;
  }
  void Commit(size_t n) { len_ += n; }
  void Put(char c) { *Reserve(1) = c; ++len_; }
  void Append(const char* s, size_t n) {
    std::memcpy(Reserve(n), s, n);
    len_ += n;
  }

  const char* data() const { return data_; }
  size_t size() const { return len_; }
  size_t capacity() const { return cap_; }

 private:
  // Uses one stack slot for a moment (the new userdata before it replaces
  // the old one).
  void Grow(size_t n) {
    // A request that cannot be met asks Lua for SIZE_MAX, which it refuses
    // with its memory error.
    size_t want = n > SIZE_MAX - len_ ? SIZE_MAX : len_ + n;
    const size_t bigger = cap_ > SIZE_MAX / 3 * 2 ? SIZE_MAX : cap_ + cap_ / 2;
    if (want < bigger) want = bigger;
    if (want < kMinBuffer) want = kMinBuffer;
    char* grown = static_cast<char*>(lua_newuserdata(L_, want));
    if (len_ != 0) std::memcpy(grown, data_, len_);
    lua_replace(L_, slot_);
    data_ = grown;
    cap_ = want;
  }

  lua_State* L_;
  int slot_;
  char* data_;
  size_t len_ = 0;
  size_t cap_;
};

[[noreturn]] void EncodeError(lua_State* L, int idx, const char* reason) {
  luaL_error(L, "Cannot serialise %s: %s", luaL_typename(L, idx), reason);
  __builtin_unreachable();  // luaL_error does not return
}

// Bytes of an escaped string are written in blocks, each reserved for its
// worst case (every byte a \u00XX escape): a block's reservation cannot
// overflow, and a long string needs no reservation of six times its size.
constexpr size_t kStringBlock = 16384;

void AppendString(Output* out, const char* s, size_t n) {
  out->Put('"');
  while (n > 0) {
    const size_t block = n < kStringBlock ? n : kStringBlock;
    char* const begin = out->Reserve(block * 6 + 2);
    char* d = begin;
    for (size_t i = 0; i < block; ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      const Escape& e = kEscapes[c];
      if (e.len == 0) {
        *d++ = static_cast<char>(c);
      } else {
        std::memcpy(d, e.text, 8);  // into the reservation's two spare bytes
        d += e.len;
      }
    }
    out->Commit(static_cast<size_t>(d - begin));
    s += block;
    n -= block;
  }
  out->Put('"');
}

constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14};

// Writes v as printf's "%.<precision>g" would (precision 1..14) into buf
// (at least 32 bytes); returns the length. Locale-independent.
size_t FormatNumber(char* buf, double v, int precision) {
  if (v == 0) {
    if (std::signbit(v)) {
      buf[0] = '-';
      buf[1] = '0';
      return 2;
    }
    buf[0] = '0';
    return 1;
  }
  // Integers of at most `precision` digits print as themselves.
  if (v > -kPow10[precision] && v < kPow10[precision]) {
    const auto i = static_cast<int64_t>(v);
    if (static_cast<double>(i) == v) return static_cast<size_t>(std::to_chars(buf, buf + 32, i).ptr - buf);
  }
  return static_cast<size_t>(std::to_chars(buf, buf + 32, v, std::chars_format::general, precision).ptr - buf);
}

// The number at idx (a value, or a key of an object).
void AppendNumber(lua_State* L, const Config& cfg, Output* out, int idx) {
  const double v = lua_tonumber(L, idx);
  if (!std::isfinite(v)) {
    if (cfg.encode_invalid_numbers == 0) EncodeError(L, idx, "must not be NaN or Inf");
    if (cfg.encode_invalid_numbers == 2) return out->Append("null", 4);
    if (std::isnan(v)) return out->Append("nan", 3);  // never "-nan"
  }
  char* d = out->Reserve(32);
  out->Commit(FormatNumber(d, v, cfg.encode_number_precision));
}

// The length of the table at the top if it is to be written as an array
// (only keys that are integers >= 1), else -1; raises for an excessively
// sparse array unless encode_sparse_array converts it to an object. Keys
// past INT_MAX make an object (lua-cjson's C int overflows there).
int64_t ArrayLength(lua_State* L, const Config& cfg) {
  double max = 0;
  int64_t items = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (lua_type(L, -2) == LUA_TNUMBER) {
      const double k = lua_tonumber(L, -2);
      if (k >= 1 && k <= INT_MAX && std::floor(k) == k) {
        if (k > max) max = k;
        ++items;
        lua_pop(L, 1);
        continue;
      }
    }
    lua_pop(L, 2);
    return -1;
  }
  const auto length = static_cast<int64_t>(max);
  if (cfg.encode_sparse_ratio > 0 && length > items * cfg.encode_sparse_ratio && length > cfg.encode_sparse_safe) {
    if (!cfg.encode_sparse_convert) EncodeError(L, -1, "excessively sparse array");
    return -1;
  }
  return length;
}

void AppendValue(lua_State* L, const Config& cfg, Output* out, int depth);

// The table at the top, written as an array of `length` elements.
void AppendArray(lua_State* L, const Config& cfg, Output* out, int depth, int64_t length) {
  out->Put('[');
  for (int64_t i = 1; i <= length; ++i) {
    if (i > 1) out->Put(',');
    lua_rawgeti(L, -1, static_cast<int>(i));
    AppendValue(L, cfg, out, depth);
    lua_pop(L, 1);
  }
  out->Put(']');
}

// The table at the top, written as an object in lua_next's order.
void AppendObject(lua_State* L, const Config& cfg, Output* out, int depth) {
  out->Put('{');
  bool first = true;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (!first) out->Put(',');
    first = false;
    const int key_type = lua_type(L, -2);
    if (key_type == LUA_TNUMBER) {
      out->Put('"');
      AppendNumber(L, cfg, out, -2);
      out->Append("\":", 2);
    } else if (key_type == LUA_TSTRING) {
      size_t len;
      const char* s = lua_tolstring(L, -2, &len);
      AppendString(out, s, len);
      out->Put(':');
    } else {
      EncodeError(L, -2, "table key must be a number or string");
    }
    AppendValue(L, cfg, out, depth);
    lua_pop(L, 1);
  }
  out->Put('}');
}

// The value at the top; `depth` tables enclose it.
void AppendValue(lua_State* L, const Config& cfg, Output* out, int depth) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      AppendString(out, s, len);
      return;
    }
    case LUA_TNUMBER:
      AppendNumber(L, cfg, out, -1);
      return;
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, -1))
        out->Append("true", 4);
      else
        out->Append("false", 5);
      return;
    case LUA_TTABLE: {
      ++depth;
      // A table level uses a key and a value slot, and one more for a
      // moment when the output grows.
      if (depth > cfg.encode_max_depth || !lua_checkstack(L, 3))
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
      const int64_t length = ArrayLength(L, cfg);
      if (length > 0)
        AppendArray(L, cfg, out, depth, length);
      else
        AppendObject(L, cfg, out, depth);
      return;
    }
    case LUA_TNIL:
      out->Append("null", 4);
      return;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, -1) == nullptr) {
        out->Append("null", 4);
        return;
      }
      break;
    default:
      break;
  }
  EncodeError(L, -1, "type not supported");
}

}  // namespace

// cjson.encode(value). Stack: [buffer, value, ...]; the pushes outside
// AppendValue's checked levels stay within the LUA_MINSTACK slots Lua
// guarantees a C function.
int Encode(lua_State* L) {
  const Config& cfg = *GetConfig(L);
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  // The kept buffer, taken out of the instance while in use (an encode
  // called meanwhile, from a finalizer, makes its own).
  char* data = nullptr;
  size_t cap = 0;
  lua_getfenv(L, lua_upvalueindex(1));
  lua_rawgeti(L, -1, 1);
  if (lua_type(L, -1) == LUA_TUSERDATA) {
    data = static_cast<char*>(lua_touserdata(L, -1));
    cap = lua_objlen(L, -1);
    lua_pushnil(L);
    lua_rawseti(L, -3, 1);
  } else {
    lua_pop(L, 1);
    data = static_cast<char*>(lua_newuserdata(L, kMinBuffer));
    cap = kMinBuffer;
  }
  lua_replace(L, -2);
  lua_insert(L, 1);
  Output out(L, 1, data, cap);
  AppendValue(L, cfg, &out, 0);
  lua_pushlstring(L, out.data(), out.size());
  if (cfg.encode_keep_buffer && out.capacity() <= kMaxKeptBuffer) {
    lua_getfenv(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_pop(L, 1);
  }
  return 1;
}

}  // namespace peregrine::lua_cjson
