// What the cjson library's files share (private to src/scripting):
// lua_cjson.cc holds the settings and the module table, lua_cjson_encode.cc
// cjson.encode, lua_cjson_decode.cc cjson.decode.
#pragma once

#include <lua.hpp>

#include <cstddef>

namespace peregrine::lua_cjson {

// One instance's settings: a userdata, the first upvalue of each of its
// functions. Its environment table keeps the encode buffer between calls
// (encode_keep_buffer) at [1].
struct Config {
  int encode_sparse_convert = 0;
  int encode_sparse_ratio = 2;
  int encode_sparse_safe = 10;
  int encode_max_depth = 1000;
  int decode_max_depth = 1000;
  int encode_invalid_numbers = 0;  // 0 refuse, 1 "nan"/"inf", 2 "null"
  int decode_invalid_numbers = 1;
  int encode_keep_buffer = 1;
  int encode_number_precision = 14;
};

// The smallest encode buffer or decode scratch userdata.
inline constexpr size_t kMinBuffer = 256;

// The settings of the instance whose function is running.
inline Config* GetConfig(lua_State* L) { return static_cast<Config*>(lua_touserdata(L, lua_upvalueindex(1))); }

// cjson.encode(value) (lua_cjson_encode.cc).
int Encode(lua_State* L);
// cjson.decode(text) (lua_cjson_decode.cc).
int Decode(lua_State* L);

}  // namespace peregrine::lua_cjson
