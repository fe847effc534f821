// The cmsgpack library of Redis's scripts (pack, unpack, unpack_one,
// unpack_limit) over msgpack-c: the encoding rules are Redis's
// lua_cmsgpack's (an integral number as the smallest integer, a float as
// float32 when that is exact, a table with keys 1..n as an array, tables
// nested past 16 levels as nil), so a script packs the same bytes here as
// there; msgpack-c writes and reads the format. Its texts are Redis's.
#include <lua.hpp>
#include <msgpack.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "scripting/lua_libs.h"

namespace peregrine {

namespace {

constexpr int kMaxNesting = 16;

int WriteToString(void* data, const char* buf, size_t len) {
  static_cast<std::string*>(data)->append(buf, len);
  return 0;
}

bool IsInt64(lua_Number n) {
  return std::isfinite(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
         static_cast<lua_Number>(static_cast<int64_t>(n)) == n;
}

// Whether the table at the top has exactly the keys 1..n.
bool IsArray(lua_State* L) {
  const int top = lua_gettop(L);
  int64_t count = 0, max = 0;
  luaL_checkstack(L, 2, "in function table_is_an_array");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    const lua_Number n = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (n <= 0 || n > 2147483647.0 || static_cast<lua_Number>(static_cast<int>(n)) != n) {
      lua_settop(L, top);
      return false;
    }
    max = std::max<int64_t>(max, static_cast<int64_t>(n));
    count++;
  }
  lua_settop(L, top);
  return max == count;
}

// Packs the value at the top and pops it.
void Encode(lua_State* L, msgpack_packer* pk, int level) {
  int t = lua_type(L, -1);
  if (t == LUA_TTABLE && level == kMaxNesting) t = LUA_TNIL;  // (tables that hold themselves)
  switch (t) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      msgpack_pack_str(pk, len);
      msgpack_pack_str_body(pk, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, -1))
        msgpack_pack_true(pk);
      else
        msgpack_pack_false(pk);
      break;
    case LUA_TNUMBER: {
      const lua_Number n = lua_tonumber(L, -1);
      if (IsInt64(n)) {
        msgpack_pack_int64(pk, static_cast<int64_t>(n));
      } else if (static_cast<double>(static_cast<float>(n)) == n) {
        msgpack_pack_float(pk, static_cast<float>(n));
      } else {
        msgpack_pack_double(pk, n);
      }
      break;
    }
    case LUA_TTABLE:
      luaL_checkstack(L, 3, "in function mp_encode_lua_table");
      if (IsArray(L)) {
        const size_t len = lua_objlen(L, -1);
        msgpack_pack_array(pk, len);
        for (size_t j = 1; j <= len; j++) {
          lua_pushnumber(L, static_cast<lua_Number>(j));
          lua_gettable(L, -2);
          Encode(L, pk, level + 1);
        }
      } else {
        size_t len = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pop(L, 1);
          len++;
        }
        msgpack_pack_map(pk, len);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          lua_pushvalue(L, -2);
          Encode(L, pk, level + 1);  // the key
          Encode(L, pk, level + 1);  // the value
        }
      }
      break;
    default:
      msgpack_pack_nil(pk);
  }
  lua_pop(L, 1);
}

int Pack(lua_State* L) {
  const int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  std::string out;
  msgpack_packer pk;
  msgpack_packer_init(&pk, &out, WriteToString);
  for (int i = 1; i <= nargs; i++) {
    luaL_checkstack(L, 1, "in function mp_check");
    lua_pushvalue(L, i);
    Encode(L, &pk, 0);
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

// Pushes a decoded object (what Redis's decoder gives: integers and floats
// as numbers, strings and binaries as strings, arrays and maps as tables).
void Push(lua_State* L, const msgpack_object& o) {
  luaL_checkstack(L, 3, "in function mp_decode_to_lua_type");
  switch (o.type) {
    case MSGPACK_OBJECT_NIL: lua_pushnil(L); break;
    case MSGPACK_OBJECT_BOOLEAN: lua_pushboolean(L, o.via.boolean); break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: lua_pushnumber(L, static_cast<lua_Number>(o.via.u64)); break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: lua_pushnumber(L, static_cast<lua_Number>(o.via.i64)); break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: lua_pushnumber(L, o.via.f64); break;
    case MSGPACK_OBJECT_STR: lua_pushlstring(L, o.via.str.ptr, o.via.str.size); break;
    case MSGPACK_OBJECT_BIN: lua_pushlstring(L, o.via.bin.ptr, o.via.bin.size); break;
    case MSGPACK_OBJECT_ARRAY:
      lua_newtable(L);
      for (uint32_t i = 0; i < o.via.array.size; i++) {
        lua_pushnumber(L, i + 1);
        Push(L, o.via.array.ptr[i]);
        lua_settable(L, -3);
      }
      break;
    case MSGPACK_OBJECT_MAP:
      lua_newtable(L);
      for (uint32_t i = 0; i < o.via.map.size; i++) {
        Push(L, o.via.map.ptr[i].key);
        Push(L, o.via.map.ptr[i].val);
        lua_settable(L, -3);  // (a nil key raises, as a table index must)
      }
      break;
    default:
      lua_pushnil(L);  // (ext types: Redis's decoder refuses them; nil here)
  }
}

// Types Redis's decoder does not know (bin, ext): bad data there, so here.
bool Unsupported(const msgpack_object& o) {
  switch (o.type) {
    case MSGPACK_OBJECT_BIN:
    case MSGPACK_OBJECT_EXT: return true;
    case MSGPACK_OBJECT_ARRAY:
      for (uint32_t i = 0; i < o.via.array.size; i++)
        if (Unsupported(o.via.array.ptr[i])) return true;
      return false;
    case MSGPACK_OBJECT_MAP:
      for (uint32_t i = 0; i < o.via.map.size; i++)
        if (Unsupported(o.via.map.ptr[i].key) || Unsupported(o.via.map.ptr[i].val)) return true;
      return false;
    default: return false;
  }
}

bool UnsupportedByte(unsigned char b) { return b == 0xc1 || (b >= 0xc4 && b <= 0xc9) || (b >= 0xd4 && b <= 0xd8); }

int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0)
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  if (static_cast<size_t>(offset) > len)
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  if (all) limit = 2147483647;
  msgpack_unpacked result;
  msgpack_unpacked_init(&result);
  size_t pos = static_cast<size_t>(offset);
  int count = 0;
  const char* error = nullptr;
  for (; pos < len && count < limit; count++) {
    if (UnsupportedByte(static_cast<unsigned char>(s[pos]))) {
      error = "Bad data format in input.";
      break;
    }
    const msgpack_unpack_return r = msgpack_unpack_next(&result, s, len, &pos);
    if (r == MSGPACK_UNPACK_CONTINUE) {
      error = "Missing bytes in input.";
      break;
    }
    if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES) {
      error = "Bad data format in input.";
      break;
    }
    if (Unsupported(result.data)) {
      error = "Bad data format in input.";
      break;
    }
    Push(L, result.data);
  }
  msgpack_unpacked_destroy(&result);
  if (error != nullptr) return luaL_error(L, "%s", error);
  if (!all) {
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, pos >= len ? -1 : static_cast<lua_Integer>(pos));
    lua_insert(L, 2);
    count++;
  }
  return count;
}

int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  const lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  const lua_Integer limit = luaL_checkinteger(L, 2);
  const lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return UnpackFull(L, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  lua_newtable(L);
  static constexpr luaL_Reg kFunctions[] = {
      {"pack", Pack}, {"unpack", Unpack}, {"unpack_one", UnpackOne}, {"unpack_limit", UnpackLimit}};
  for (const luaL_Reg& f : kFunctions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  lua_pushliteral(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  return 1;
}

}  // namespace peregrine
