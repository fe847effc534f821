// The libraries of Redis's scripting environment, written here (Debian's
// lua-cjson and lua-bitop carry the faults Redis fixed in its own copies:
// CVE-2022-24834, CVE-2024-31449; Debian has no module with cmsgpack's or
// struct's interface).
#pragma once

struct lua_State;

namespace peregrine {

// cmsgpack (lua_cmsgpack.cc): pushes the library's table.
int OpenCmsgpack(lua_State* L);
// struct (lua_struct.cc): pushes the library's table.
int OpenStruct(lua_State* L);
// cjson (lua_cjson.cc): pushes a new instance's table (Redis's lua-cjson 2.1.0).
int OpenCjson(lua_State* L);
// bit (lua_bit.cc, LuaBitOp 1.0.2's interface with Redis's CVE-2024-31449
// fix): pushes the library's table.
int OpenBit(lua_State* L);

}  // namespace peregrine
