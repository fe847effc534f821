// Redis 7's globals protection on a stock Lua 5.1 (docs/scripting.md).
// Redis patches its Lua with read-only tables; Debian's Lua has none, so the
// same rules are kept with proxies: scripts see _G and every library table
// (redis, string, math, table, cjson, bit, coroutine) as empty proxies whose
// reads go to the real table and whose writes raise "Attempt to modify a
// readonly table"; reading a global that does not exist raises "Script
// attempted to access nonexistent global variable". rawset, setmetatable
// and table.insert / remove / sort / setn refuse a protected table;
// loadstring and load refuse precompiled chunks (which could break out of
// any sandbox).
#pragma once

#include <string_view>

struct lua_State;

namespace peregrine::lua_sandbox {

// Protects the state's globals and libraries (call once, after the
// libraries and the redis table are in place). *globals_ref: the proxy
// scripts get as their globals; *real_ref: the table behind it (in the Lua
// registry).
void Protect(lua_State* L, int* globals_ref, int* real_ref);

// Replaces the table at the top with a read-only proxy of it (left at the
// top); reading through it goes to the table.
void MakeReadonlyProxy(lua_State* L);
// Gives the table at the top a metatable that makes reading a missing key
// Redis's "nonexistent global variable" error.
void SetMissingGlobalError(lua_State* L);

// Compiles `text` (source only: a precompiled chunk is refused) as a
// function pushed on the stack; false with the message pushed instead.
bool LoadText(lua_State* L, std::string_view text, const char* chunkname);

}  // namespace peregrine::lua_sandbox
