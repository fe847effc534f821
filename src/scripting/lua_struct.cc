// The struct library of Redis's scripts: struct.pack(fmt, ...),
// struct.unpack(fmt, s [, pos]) and struct.size(fmt), with the format and
// the error texts of the library Redis embeds (Debian has no Lua module
// with this interface). Format: '<' '>' endianness, '!'[n] alignment, ' '
// ignored, 'x' a pad byte, 'b'/'B' 'h'/'H' 'l'/'L' 'T' 'i'/'I'[n] integers
// (lower case signed; i/I of n bytes, at most 32), 'f' 'd' floats, 's' a
// zero-terminated string, 'c'[n] n bytes (c0: a string's own length in
// pack; in unpack the length unpacked just before).
//
// CVE-2020-14147 (Redis's struct): sizes in the format are checked for
// overflow as they are read ("integral size overflow"), every item's bytes
// are checked against what is left of the data before they are read (no
// pos + size that could wrap), and numbers are converted to integers the
// way they convert on x86-64 (where Redis's plain casts are undefined
// behaviour) rather than by undefined casts.
#include <lua.hpp>

#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "scripting/lua_libs.h"

namespace peregrine {

namespace {

constexpr int kMaxIntSize = 32;
constexpr int kMaxAlign = 8;  // the alignment of a double on this platform
enum Endian { kBig, kLittle };
constexpr Endian kNative = kLittle;

struct Header {
  Endian endian = kNative;
  int align = 1;
};

// The number n as Redis's struct gets it from a C cast to an unsigned
// 64-bit integer on x86-64 (its casts out of range are undefined behaviour
// in C; these are the values the instructions give): truncated toward 0,
// two's complement for negatives; below -2^63, -infinity or NaN: 2^63;
// 2^64 and above, +infinity: 0.
uint64_t CastToUint64(lua_Number n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(n)) return uint64_t{1} << 63;
  if (n < kTwo63) return n >= -kTwo63 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : uint64_t{1} << 63;
  if (n < 2 * kTwo63) return static_cast<uint64_t>(n);
  return 0;
}

int GetNum(lua_State* L, const char** fmt, int dflt) {
  if (!std::isdigit(static_cast<unsigned char>(**fmt))) return dflt;
  int a = 0;
  do {
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0')) luaL_error(L, "integral size overflow");
    a = a * 10 + (*(*fmt)++ - '0');
  } while (std::isdigit(static_cast<unsigned char>(**fmt)));
  return a;
}

size_t OptSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return 2;
    case 'L': case 'l': case 'T': return 8;
    case 'f': return 4;
    case 'd': return 8;
    case 'x': return 1;
    case 'c': return static_cast<size_t>(GetNum(L, fmt, 1));
    case 'i': case 'I': {
      const int sz = GetNum(L, fmt, 4);
      if (sz > kMaxIntSize) luaL_error(L, "integral size %d is larger than limit of %d", sz, kMaxIntSize);
      return static_cast<size_t>(sz);
    }
    default: return 0;
  }
}

// Padding before an item of `size` at offset `len`.
size_t ToAlign(size_t len, const Header& h, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(h.align)) size = static_cast<size_t>(h.align);
  return (size - (len & (size - 1))) & (size - 1);
}

void ControlOption(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ': return;
    case '>': h->endian = kBig; return;
    case '<': h->endian = kLittle; return;
    case '!': {
      const int a = GetNum(L, fmt, kMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default: {
      const char* msg = lua_pushfstring(L, "invalid format option '%c'", opt);
      luaL_argerror(L, 1, msg);
    }
  }
}

void PutInteger(lua_State* L, luaL_Buffer* b, int arg, Endian endian, size_t size) {
  uint64_t value = CastToUint64(luaL_checknumber(L, arg));
  char buf[kMaxIntSize];
  for (size_t i = 0; i < size; i++) {  // bytes past the eighth are 0, as there
    const size_t at = endian == kLittle ? i : size - 1 - i;
    buf[at] = static_cast<char>(value & 0xff);
    value = i < 7 ? value >> 8 : 0;
  }
  luaL_addlstring(b, buf, size);
}

// Copies `size` bytes of a float or double, turned to `endian`.
void PutBytes(luaL_Buffer* b, const void* p, size_t size, Endian endian) {
  char buf[8];
  std::memcpy(buf, p, size);
  if (endian != kNative)
    for (size_t i = 0, j = size - 1; i < j; i++, j--) std::swap(buf[i], buf[j]);
  luaL_addlstring(b, buf, size);
}

int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // (keeps the arguments apart from the buffer)
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    const char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    size_t pad = ToAlign(total, h, opt, size);
    total += pad;
    while (pad-- > 0) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        PutInteger(L, &b, arg++, h.endian, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        const float f = static_cast<float>(luaL_checknumber(L, arg++));
        PutBytes(&b, &f, 4, h.endian);
        break;
      }
      case 'd': {
        const double d = luaL_checknumber(L, arg++);
        PutBytes(&b, &d, 8, h.endian);
        break;
      }
      case 'c':
      case 's': {
        size_t l;
        const char* s = luaL_checklstring(L, arg++, &l);
        if (size == 0) size = l;
        luaL_argcheck(L, l >= size, arg, "string too short");
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          size++;
        }
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

lua_Number GetInteger(const char* p, Endian endian, bool is_signed, size_t size) {
  if (size == 0) return 0;  // (i0: Redis's sign mask would shift by -1)
  uint64_t l = 0;
  for (size_t i = 0; i < size; i++) {
    const size_t at = endian == kBig ? i : size - 1 - i;
    l = (l << 8) | static_cast<unsigned char>(p[at]);
  }
  if (!is_signed) return static_cast<lua_Number>(l);
  if (size < 8) {
    const uint64_t mask = ~uint64_t{0} << (size * 8 - 1);
    if (l & mask) l |= mask;  // sign extension
  }
  return static_cast<lua_Number>(static_cast<int64_t>(l));
}

int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld;
  const char* data = luaL_checklstring(L, 2, &ld);
  // As Redis, a size_t: a negative offset is past any data (too short).
  const size_t start = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, start > 0, 3, "offset must be 1 or greater");
  size_t pos = start - 1;
  Header h;
  int n = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    const size_t pad = ToAlign(pos, h, opt, size);
    luaL_argcheck(L, pos <= ld && pad <= ld - pos, 2, "data string too short");  // (and no wrap)
    pos += pad;
    luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
    if (!lua_checkstack(L, 2)) {  // (luaL_checkstack's text, with room to raise it)
      lua_settop(L, 0);
      luaL_error(L, "stack overflow (%s)", "too many results");
    }
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        lua_pushnumber(L, GetInteger(data + pos, h.endian, std::islower(static_cast<unsigned char>(opt)), size));
        n++;
        break;
      case 'x':
        break;
      case 'f':
      case 'd': {
        char buf[8];
        std::memcpy(buf, data + pos, size);
        if (h.endian != kNative)
          for (size_t i = 0, j = size - 1; i < j; i++, j--) std::swap(buf[i], buf[j]);
        if (opt == 'f') {
          float f;
          std::memcpy(&f, buf, 4);
          lua_pushnumber(L, f);
        } else {
          double d;
          std::memcpy(&d, buf, 8);
          lua_pushnumber(L, d);
        }
        n++;
        break;
      }
      case 'c':
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          size = static_cast<size_t>(CastToUint64(lua_tonumber(L, -1)));  // (-1: too short; 2.7: 2)
          lua_pop(L, 1);
          n--;
          luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        n++;
        break;
      case 's': {
        const char* e = static_cast<const char*>(std::memchr(data + pos, '\0', ld - pos));
        if (e == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(e - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        n++;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  size_t pos = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    const size_t size = OptSize(L, opt, &fmt);
    pos += ToAlign(pos, h, opt, size);
    if (opt == 's')
      luaL_argerror(L, 1, "option 's' has no fixed size");
    else if (opt == 'c' && size == 0)
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    if (!std::isalnum(static_cast<unsigned char>(opt))) ControlOption(L, opt, &fmt, &h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStruct(lua_State* L) {
  lua_newtable(L);
  static constexpr luaL_Reg kFunctions[] = {{"pack", Pack}, {"unpack", Unpack}, {"size", Size}};
  for (const luaL_Reg& f : kFunctions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  return 1;
}

}  // namespace peregrine
