// Libraries of Redis's scripting environment written here because Debian
// has no Lua module with their interface (cjson and bit come from Debian).
#pragma once

struct lua_State;

namespace peregrine {

// cmsgpack (lua_cmsgpack.cc): pushes the library's table.
int OpenCmsgpack(lua_State* L);
// struct (lua_struct.cc): pushes the library's table.
int OpenStruct(lua_State* L);

}  // namespace peregrine
