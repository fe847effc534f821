#include "scripting/lua_sandbox.h"

#include <lua.hpp>

#include <string>

namespace peregrine::lua_sandbox {

namespace {

// The registry key of the weak set of protected proxies.
constexpr char kProtected[] = "peregrine.protected";
constexpr char kReadonly[] = "Attempt to modify a readonly table";

bool IsProtected(lua_State* L, int idx) {
  if (!lua_istable(L, idx)) return false;
  idx = idx < 0 && idx > LUA_REGISTRYINDEX ? lua_gettop(L) + idx + 1 : idx;
  lua_getfield(L, LUA_REGISTRYINDEX, kProtected);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  const bool yes = lua_toboolean(L, -1) != 0;
  lua_pop(L, 2);
  return yes;
}

// The read-only error, as Redis's VM raises it: with the position of the
// Lua code for an assignment, without one for rawset & co. (C functions).
int RaiseReadonly(lua_State* L) {
  lua_pushstring(L, kReadonly);
  return lua_error(L);
}

int ReadonlyNewindex(lua_State* L) {
  luaL_where(L, 1);
  lua_pushstring(L, kReadonly);
  lua_concat(L, 2);
  return lua_error(L);
}

int MissingGlobal(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

// Guards for the functions that write tables without metamethods: the
// original function is upvalue 1.
int GuardFirstArg(lua_State* L) {
  if (IsProtected(L, 1)) return RaiseReadonly(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void Guard(lua_State* L, int table_idx, const char* name) {
  lua_getfield(L, table_idx, name);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  lua_pushcclosure(L, GuardFirstArg, 1);
  lua_setfield(L, table_idx, name);
}

// Replaces the table at the top with a read-only proxy of it (the proxy is
// left at the top).
void MakeProxy(lua_State* L) {
  const int real = lua_gettop(L);
  lua_newtable(L);  // the proxy
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, real);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyNewindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");  // getmetatable() gives false; setmetatable() is refused
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kProtected);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_remove(L, real);
}

bool IsBinary(std::string_view text) { return !text.empty() && text[0] == LUA_SIGNATURE[0]; }

int SafeLoadstring(lua_State* L) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);
  if (!LoadText(L, std::string_view(s, len), name)) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return 1;
}

// load(func [, chunkname]): the pieces are gathered first, so that a
// precompiled chunk cannot come in through them.
int SafeLoad(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const char* name = luaL_optstring(L, 2, "=(load)");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (true) {
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  size_t len;
  const char* s = lua_tolstring(L, -1, &len);
  if (!LoadText(L, std::string_view(s, len), name)) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return 1;
}

}  // namespace

void MakeReadonlyProxy(lua_State* L) { MakeProxy(L); }

void SetMissingGlobalError(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

bool LoadText(lua_State* L, std::string_view text, const char* chunkname) {
  if (IsBinary(text)) {
    lua_pushstring(L, "precompiled chunks are not allowed");
    return false;
  }
  return luaL_loadbuffer(L, text.data(), text.size(), chunkname) == 0;
}

void Protect(lua_State* L, int* globals_ref, int* real_ref) {
  lua_newtable(L);
  lua_newtable(L);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kProtected);

  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int real = lua_gettop(L);

  // The functions that write tables directly refuse protected ones.
  Guard(L, real, "setmetatable");
  Guard(L, real, "rawset");
  lua_getfield(L, real, "table");
  const int table_lib = lua_gettop(L);
  for (const char* f : {"insert", "remove", "sort", "setn"}) Guard(L, table_lib, f);
  lua_pop(L, 1);
  lua_pushcfunction(L, SafeLoadstring);
  lua_setfield(L, real, "loadstring");
  lua_pushcfunction(L, SafeLoad);
  lua_setfield(L, real, "load");

  // The string metatable's methods go through the string proxy (set below).
  // Libraries become read-only proxies.
  for (const char* lib : {"redis", "string", "math", "table", "cjson", "bit", "coroutine", "struct", "cmsgpack"}) {
    lua_getfield(L, real, lib);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    MakeProxy(L);
    lua_setfield(L, real, lib);
  }
  lua_pushstring(L, "");
  if (lua_getmetatable(L, -1)) {
    lua_getfield(L, real, "string");
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);

  // Reading a global that is not there is an error.
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, real);

  // The globals scripts see: a proxy; _G is the proxy too.
  lua_pushvalue(L, real);
  MakeProxy(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, real, "_G");
  lua_pushvalue(L, -1);
  *globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_replace(L, LUA_GLOBALSINDEX);
  *real_ref = luaL_ref(L, LUA_REGISTRYINDEX);  // pops `real`
}

}  // namespace peregrine::lua_sandbox
