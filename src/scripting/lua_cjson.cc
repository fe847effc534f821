// The cjson library's settings functions and module table (OpenCjson,
// cjson.new()); the encoder is in lua_cjson_encode.cc, the decoder in
// lua_cjson_decode.cc, what they share in lua_cjson_internal.h.
//
// The cjson library of Redis's scripts: the interface, settings, error texts
// and output bytes of the lua-cjson 2.1.0 that Redis 7 embeds, written here
// instead of linking Debian's copy, whose int-sized string buffer overflows
// the heap on strings past ~357 MB (CVE-2022-24834), whose buffers come
// from malloc outside the interpreter's memory limit, and which exit()s when
// malloc fails. Here every size is a size_t, every byte of output and of
// scratch space is a Lua userdata or string (so the interpreter's allocator
// counts it and a failure raises Lua's "not enough memory"), recursion stops
// at the depth settings or when the Lua stack is full, and each instance's
// settings live in its own userdata (cjson.new() instances and interpreters
// share nothing). Numbers are written and read without printf/strtod
// (std::to_chars / from_chars give the same text and values, whatever the
// locale).
//
// Deliberate differences from Redis's copy (lua_cjson_test.cc shows each):
// - A table key past INT_MAX makes the table an object (lua-cjson converts
//   it to a C int, undefined; Redis can drop a key: {[2^31]=1,[5]=1} gives
//   [null,null,null,null,1]), and the sparse test's items * ratio cannot
//   overflow (Redis calls a dense array "excessively sparse" when it does).
// - Encode's output buffer and decode's scratch space hold a Lua stack slot,
//   so at the Lua stack's limit (LUAI_MAXCSTACK, reachable only with the
//   max depth settings raised past ~4000) nesting stops one level sooner.
// - encode_keep_buffer keeps a buffer of at most 1 MB between calls.
// - "nan(...)" is read as a plain NaN (strtod keeps the digits as payload).
#include <lua.hpp>

#include <climits>
#include <cstdint>
#include <new>

#include "scripting/lua_cjson_internal.h"
#include "scripting/lua_libs.h"

namespace peregrine::lua_cjson {

namespace {

// ---------------------------------------------------------------------------
// Settings

// The configuration functions take at most `args` arguments; missing ones
// become nil.
Config* ConfigArgs(lua_State* L, int args) {
  luaL_argcheck(L, lua_gettop(L) <= args, args + 1, "found too many arguments");
  lua_settop(L, args);
  return GetConfig(L);
}

// An integer setting at argument `arg` (nil: unchanged), pushed. As in
// lua-cjson the value is taken as a C int (modulo 2^32) and a range error
// names argument #1 whichever argument it is.
void IntegerOption(lua_State* L, int arg, int* setting, int min, int max) {
  if (!lua_isnil(L, arg)) {
    const int value = static_cast<int>(static_cast<uint32_t>(luaL_checkinteger(L, arg)));
    if (value < min || value > max) {
      const char* msg = lua_pushfstring(L, "expected integer between %d and %d", min, max);
      luaL_argerror(L, 1, msg);
    }
    *setting = value;
  }
  lua_pushinteger(L, *setting);
}

// An enumerated setting: true/false or one of `options` by name. Pushes
// the setting: a boolean for off/on, else the option's name.
void EnumOption(lua_State* L, int arg, int* setting, const char* const* options) {
  if (!lua_isnil(L, arg)) {
    if (lua_isboolean(L, arg))
      *setting = lua_toboolean(L, arg);
    else
      *setting = luaL_checkoption(L, arg, nullptr, options);
  }
  if (*setting == 0 || *setting == 1)
    lua_pushboolean(L, *setting);
  else
    lua_pushstring(L, options[*setting]);
}

constexpr const char* kOffOn[] = {"off", "on", nullptr};
constexpr const char* kOffOnNull[] = {"off", "on", "null", nullptr};

int CfgEncodeSparseArray(lua_State* L) {
  Config* cfg = ConfigArgs(L, 3);
  EnumOption(L, 1, &cfg->encode_sparse_convert, kOffOn);
  IntegerOption(L, 2, &cfg->encode_sparse_ratio, 0, INT_MAX);
  IntegerOption(L, 3, &cfg->encode_sparse_safe, 0, INT_MAX);
  return 3;
}

int CfgEncodeMaxDepth(lua_State* L) {
  IntegerOption(L, 1, &ConfigArgs(L, 1)->encode_max_depth, 1, INT_MAX);
  return 1;
}

int CfgDecodeMaxDepth(lua_State* L) {
  IntegerOption(L, 1, &ConfigArgs(L, 1)->decode_max_depth, 1, INT_MAX);
  return 1;
}

int CfgEncodeNumberPrecision(lua_State* L) {
  IntegerOption(L, 1, &ConfigArgs(L, 1)->encode_number_precision, 1, 14);
  return 1;
}

int CfgEncodeKeepBuffer(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->encode_keep_buffer, kOffOn);
  if (!cfg->encode_keep_buffer) {  // drop a kept buffer
    lua_getfenv(L, lua_upvalueindex(1));
    lua_pushnil(L);
    lua_rawseti(L, -2, 1);
    lua_pop(L, 1);
  }
  return 1;
}

int CfgEncodeInvalidNumbers(lua_State* L) {
  EnumOption(L, 1, &ConfigArgs(L, 1)->encode_invalid_numbers, kOffOnNull);
  return 1;
}

int CfgDecodeInvalidNumbers(lua_State* L) {
  EnumOption(L, 1, &ConfigArgs(L, 1)->decode_invalid_numbers, kOffOn);
  return 1;
}

// ---------------------------------------------------------------------------
// The module

int NewInstance(lua_State* L) {
  static constexpr luaL_Reg kFunctions[] = {
      {"encode", Encode},
      {"decode", Decode},
      {"encode_sparse_array", CfgEncodeSparseArray},
      {"encode_max_depth", CfgEncodeMaxDepth},
      {"decode_max_depth", CfgDecodeMaxDepth},
      {"encode_number_precision", CfgEncodeNumberPrecision},
      {"encode_keep_buffer", CfgEncodeKeepBuffer},
      {"encode_invalid_numbers", CfgEncodeInvalidNumbers},
      {"decode_invalid_numbers", CfgDecodeInvalidNumbers},
      {"new", NewInstance},
  };
  lua_newtable(L);
  new (lua_newuserdata(L, sizeof(Config))) Config();  // trivially destructible: no __gc
  lua_newtable(L);  // the kept encode buffer
  lua_setfenv(L, -2);
  for (const luaL_Reg& f : kFunctions) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, f.func, 1);
    lua_setfield(L, -3, f.name);
  }
  lua_pop(L, 1);
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
  return 1;
}

}  // namespace

}  // namespace peregrine::lua_cjson

namespace peregrine {

int OpenCjson(lua_State* L) { return lua_cjson::NewInstance(L); }

}  // namespace peregrine
