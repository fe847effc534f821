// Redis 7.2's scripting sandbox, over the read-only tables our Lua has
// (patches/lua5.1/0001, as Redis's Lua has them): what scripts may not
// reach is removed from the globals, every table reachable from the
// globals (the libraries, redis, _G itself) and the basic types'
// metatables are read-only, and reading a global that does not exist is an
// error. Precompiled chunks never load (patches/lua5.1/0007).
#pragma once

struct lua_State;

namespace peregrine::lua_sandbox {

// Removes the globals scripts may not have: dofile, loadfile and print
// always; newproxy, setfenv and getfenv unless `deprecated_api`
// (lua-enable-deprecated-api, as Redis 7.2.11 removed them).
void RemoveDenied(lua_State* L, bool deprecated_api);

// Marks the table at the top read-only, and every table reachable from it
// through values and metatables (Redis's luaSetTableProtectionRecursively).
void ProtectRecursively(lua_State* L);

// Marks the metatables of the basic types (strings' is the only one a state
// has unless C code sets others) read-only (CVE-2025-46818: a script could
// otherwise change what every later script's string methods do).
void ProtectBasicTypes(lua_State* L);

// Gives the table at the top a metatable whose __index raises Redis's
// "Script attempted to access nonexistent global variable 'name'".
void SetMissingGlobalError(lua_State* L);

}  // namespace peregrine::lua_sandbox
