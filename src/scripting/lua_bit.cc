// The bit library of Redis's scripts: LuaBitOp 1.0.2's interface (tobit,
// bnot, band, bor, bxor, lshift, rshift, arshift, rol, ror, bswap, tohex)
// with its results, written here so that Redis's fix for CVE-2024-31449
// (bit.tohex with n = -2^31) is ours too; Debian's lua-bitop has no fix.
//
// As LuaBitOp on a Lua whose numbers are doubles: an argument is turned
// into 32 bits by adding 2^52 + 2^51 and taking the low 32 bits of the
// double (so integers wrap modulo 2^32, fractions round to nearest even,
// NaN and infinities give 0); results are signed 32-bit numbers; shift and
// rotate counts use their low 5 bits.
#include <lua.hpp>

#include <cstdint>
#include <cstring>

#include "scripting/lua_libs.h"

namespace peregrine {

namespace {

// The number at `arg` as 32 bits, the way LuaBitOp takes it. A missing or
// non-number argument raises luaL_checknumber's "number expected" error
// (LuaBitOp raises the same text through luaL_typerror).
uint32_t Arg(lua_State* L, int arg) {
  const double n = static_cast<double>(luaL_checknumber(L, arg)) + 6755399441055744.0;  // 2^52 + 2^51
  uint64_t bits;
  std::memcpy(&bits, &n, sizeof(bits));
  return static_cast<uint32_t>(bits);
}

int Push(lua_State* L, uint32_t b) {
  lua_pushnumber(L, static_cast<lua_Number>(static_cast<int32_t>(b)));
  return 1;
}

int ToBit(lua_State* L) { return Push(L, Arg(L, 1)); }
int BNot(lua_State* L) { return Push(L, ~Arg(L, 1)); }

// band, bor and bxor take one or more arguments; LuaBitOp folds them from
// the last to the second (the order decides which bad argument is named).
template <typename Op>
int Fold(lua_State* L, Op op) {
  uint32_t b = Arg(L, 1);
  for (int i = lua_gettop(L); i > 1; i--) b = op(b, Arg(L, i));
  return Push(L, b);
}
int BAnd(lua_State* L) { return Fold(L, [](uint32_t a, uint32_t b) { return a & b; }); }
int BOr(lua_State* L) { return Fold(L, [](uint32_t a, uint32_t b) { return a | b; }); }
int BXor(lua_State* L) { return Fold(L, [](uint32_t a, uint32_t b) { return a ^ b; }); }

// Shifts and rotations: (value, count), the count taken modulo 32.
template <typename Op>
int Shift(lua_State* L, Op op) {
  const uint32_t b = Arg(L, 1);
  const unsigned n = Arg(L, 2) & 31;
  return Push(L, op(b, n));
}
int LShift(lua_State* L) { return Shift(L, [](uint32_t b, unsigned n) { return b << n; }); }
int RShift(lua_State* L) { return Shift(L, [](uint32_t b, unsigned n) { return b >> n; }); }
int ARShift(lua_State* L) {
  // An arithmetic shift: the sign bit fills in (well defined in C++20).
  return Shift(L, [](uint32_t b, unsigned n) { return static_cast<uint32_t>(static_cast<int32_t>(b) >> n); });
}
int Rol(lua_State* L) {
  return Shift(L, [](uint32_t b, unsigned n) { return n == 0 ? b : (b << n) | (b >> (32 - n)); });
}
int Ror(lua_State* L) {
  return Shift(L, [](uint32_t b, unsigned n) { return n == 0 ? b : (b >> n) | (b << (32 - n)); });
}

int BSwap(lua_State* L) {
  const uint32_t b = Arg(L, 1);
  return Push(L, (b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24));
}

// tohex(x [, n]): the low |n| hex digits of x (n defaults to 8, at most 8),
// upper case when n is negative. CVE-2024-31449: n = -2^31 has no positive
// counterpart (LuaBitOp's -n stayed negative, and it pushed (size_t)n bytes
// from an 8-byte buffer); as in Redis's fix it counts as -(2^31 - 1):
// upper case, 8 digits.
int ToHex(lua_State* L) {
  uint32_t b = Arg(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(Arg(L, 2));
  if (n == INT32_MIN) n = INT32_MIN + 1;
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n - 1; i >= 0; i--) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

}  // namespace

int OpenBit(lua_State* L) {
  static constexpr luaL_Reg kFunctions[] = {
      {"tobit", ToBit},   {"bnot", BNot},     {"band", BAnd},       {"bor", BOr},
      {"bxor", BXor},     {"lshift", LShift}, {"rshift", RShift},   {"arshift", ARShift},
      {"rol", Rol},       {"ror", Ror},       {"bswap", BSwap},     {"tohex", ToHex}};
  lua_createtable(L, 0, static_cast<int>(sizeof(kFunctions) / sizeof(kFunctions[0])));
  for (const luaL_Reg& f : kFunctions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  return 1;
}

}  // namespace peregrine
