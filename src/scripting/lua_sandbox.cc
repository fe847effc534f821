#include "scripting/lua_sandbox.h"

#include <lua.hpp>

#include <initializer_list>

namespace peregrine::lua_sandbox {

namespace {

// __index of the globals: a read of a global that is not there (Redis's
// luaProtectedTableError, with its texts).
int MissingGlobal(lua_State* L) {
  if (lua_gettop(L) != 2) return luaL_error(L, "Wrong number of arguments to luaProtectedTableError");
  if (!lua_isstring(L, -1)) return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, -1));
}

}  // namespace

void RemoveDenied(lua_State* L, bool deprecated_api) {
  for (const char* name : {"dofile", "loadfile", "print"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  if (deprecated_api) return;
  for (const char* name : {"newproxy", "setfenv", "getfenv"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
}

void ProtectRecursively(lua_State* L) {
  if (lua_isreadonlytable(L, -1)) return;  // seen (_G._G, a shared table)
  lua_enablereadonlytable(L, -1, 1);
  // Two slots for the key and the value, two more for the next level's
  // iteration (the depth is the few levels of the globals' tables).
  luaL_checkstack(L, 4, "protecting the globals");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_istable(L, -1)) ProtectRecursively(L);
    lua_pop(L, 1);
  }
  if (lua_getmetatable(L, -1)) {
    ProtectRecursively(L);
    lua_pop(L, 1);
  }
}

void ProtectBasicTypes(lua_State* L) {
  const auto push = [L](int type) {
    switch (type) {
      case LUA_TSTRING: lua_pushliteral(L, ""); break;
      case LUA_TNUMBER: lua_pushnumber(L, 0); break;
      case LUA_TBOOLEAN: lua_pushboolean(L, 0); break;
      case LUA_TNIL: lua_pushnil(L); break;
      case LUA_TFUNCTION: lua_pushcfunction(L, MissingGlobal); break;
      case LUA_TTHREAD: lua_pushthread(L); break;
      default: lua_pushlightuserdata(L, L); break;
    }
  };
  for (int type : {LUA_TSTRING, LUA_TNUMBER, LUA_TBOOLEAN, LUA_TNIL, LUA_TFUNCTION, LUA_TTHREAD,
                   LUA_TLIGHTUSERDATA}) {
    push(type);
    if (lua_getmetatable(L, -1)) {
      ProtectRecursively(L);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
}

void SetMissingGlobalError(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

}  // namespace peregrine::lua_sandbox
