// The cmsgpack library of Redis's scripts (pack, unpack, unpack_one,
// unpack_limit), with Redis's lua_cmsgpack's encoding rules (an integral
// number as the smallest integer, a float as float32 when that is exact, a
// table with keys 1..n as an array, tables nested past 16 levels as nil),
// so a script packs the same bytes here as there; msgpack-c writes the
// format. The decoder is written here, as Redis's: it reads from the input
// straight into Lua values (msgpack-c's unpacker would allocate what a
// header declares before reading a byte of it, and stops at 32 levels of
// nesting where Redis goes on). Its texts are Redis's.
//
// Redis's CVEs of this library, and what stands against each here:
// - CVE-2018-11218 (stack overflow): every value pushed, packing or
//   unpacking, is preceded by a lua_checkstack (the same checks Redis
//   makes, so the same limits and texts: pack refuses more arguments than
//   the stack could hold twice, unpack more values or deeper nesting than
//   the Lua stack holds); a declared length is never trusted: every byte
//   read is checked against what is left ("Missing bytes in input."), and
//   nothing is allocated for what a header declares.
// - CVE-2018-11219 (integer overflow in the buffer's growth): the packing
//   buffer grows with checked sizes, through the interpreter's allocator
//   (so a script's memory limit counts it) and up to kMaxPacked.
#include <lua.hpp>
#include <msgpack.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "scripting/lua_libs.h"

namespace peregrine {

namespace {

constexpr int kMaxNesting = 16;
// The most pack writes: past it (a table holding itself many times over
// makes an output exponential in its width) it raises an error rather than
// take the server's memory and time (the C loop cannot be killed).
constexpr size_t kMaxPacked = size_t{512} << 20;

// pack's output, in memory of the interpreter's allocator. Freed when it
// goes out of scope, also when a Lua error (a C++ exception) unwinds it.
class PackBuffer {
 public:
  explicit PackBuffer(lua_State* L) { alloc_ = lua_getallocf(L, &ud_); }
  ~PackBuffer() {
    if (data_ != nullptr) alloc_(ud_, data_, capacity_, 0);
  }
  PackBuffer(const PackBuffer&) = delete;
  PackBuffer& operator=(const PackBuffer&) = delete;

  // msgpack_packer's writer: appends, or records why it could not.
  static int Write(void* self, const char* buf, size_t len) { return static_cast<PackBuffer*>(self)->Append(buf, len); }

  // Raises the error of a failed write, if one failed.
  void Check(lua_State* L) const {
    if (error_ != nullptr) luaL_error(L, "%s", error_);
  }
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  int Append(const char* buf, size_t len) {
    if (error_ != nullptr) return -1;
    if (len > kMaxPacked - size_) {
      error_ = "MessagePack pack: the packed data would pass 512 MB.";
      return -1;
    }
    if (len > capacity_ - size_) {
      const size_t want = size_ + len;
      size_t capacity = std::max<size_t>(capacity_, 64);
      while (capacity < want) capacity = capacity < kMaxPacked / 2 ? capacity * 2 : kMaxPacked;
      void* p = alloc_(ud_, data_, capacity_, capacity);
      if (p == nullptr) {
        error_ = "not enough memory";
        return -1;
      }
      data_ = static_cast<char*>(p);
      capacity_ = capacity;
    }
    std::memcpy(data_ + size_, buf, len);
    size_ += len;
    return 0;
  }

  lua_Alloc alloc_;
  void* ud_ = nullptr;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  const char* error_ = nullptr;
};

// luaL_checkstack, with room for its error: a failed check first drops this
// call's values (the error unwinds them anyway), so raising it pushes
// nothing past the slots the stack was given (luaL_checkstack's own error
// would, at the limit).
void CheckStack(lua_State* L, int n, const char* what) {
  if (lua_checkstack(L, n)) return;
  lua_settop(L, 0);
  luaL_error(L, "stack overflow (%s)", what);
}

bool IsInt64(lua_Number n) {
  return std::isfinite(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
         static_cast<lua_Number>(static_cast<int64_t>(n)) == n;
}

// Whether the table at the top has exactly the keys 1..n.
bool IsArray(lua_State* L) {
  const int top = lua_gettop(L);
  int64_t count = 0, max = 0;
  CheckStack(L, 2, "in function table_is_an_array");
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

// Packs the value at the top and pops it. Stops with the buffer's error as
// soon as a write fails (which also bounds the time a table that holds
// itself can take).
void Encode(lua_State* L, msgpack_packer* pk, const PackBuffer& buf, int level) {
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
      CheckStack(L, 3, "in function mp_encode_lua_table");
      if (IsArray(L)) {
        const size_t len = lua_objlen(L, -1);
        msgpack_pack_array(pk, len);
        for (size_t j = 1; j <= len; j++) {
          buf.Check(L);
          lua_pushnumber(L, static_cast<lua_Number>(j));
          lua_gettable(L, -2);
          Encode(L, pk, buf, level + 1);
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
          buf.Check(L);
          lua_pushvalue(L, -2);
          Encode(L, pk, buf, level + 1);  // the key
          Encode(L, pk, buf, level + 1);  // the value
        }
      }
      break;
    default:
      msgpack_pack_nil(pk);
  }
  lua_pop(L, 1);
  buf.Check(L);
}

int Pack(lua_State* L) {
  const int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  // Redis's check (it keeps one string per argument on the stack): the same
  // limit on the number of arguments.
  if (!lua_checkstack(L, nargs)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  PackBuffer buf(L);
  msgpack_packer pk;
  msgpack_packer_init(&pk, &buf, PackBuffer::Write);
  for (int i = 1; i <= nargs; i++) {
    CheckStack(L, 1, "in function mp_check");
    lua_pushvalue(L, i);
    Encode(L, &pk, buf, 0);
  }
  lua_pushlstring(L, buf.data() != nullptr ? buf.data() : "", buf.size());
  return 1;
}

// --- Decoding ---

// The input left to decode, and the first error met.
struct Cursor {
  enum Error { kNone, kEof, kBadFormat };
  const unsigned char* p;
  size_t left;
  Error err = kNone;

  // Whether n more bytes are there; if not, the error is kEof.
  bool Need(size_t n) {
    if (left >= n) return true;
    err = kEof;
    return false;
  }
  void Consume(size_t n) {
    p += n;
    left -= n;
  }
  // The big-endian unsigned integer of n bytes at p + at (REQUIRES: Need).
  uint64_t Big(size_t at, size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = (v << 8) | p[at + i];
    return v;
  }
};

void Decode(lua_State* L, Cursor* c);

// An array of len elements (len from the input: only ever read, one
// element at a time, as far as the input goes).
void DecodeArray(lua_State* L, Cursor* c, uint64_t len) {
  lua_newtable(L);
  CheckStack(L, 1, "in function mp_decode_to_lua_array");
  for (uint64_t i = 1; i <= len; i++) {
    lua_pushnumber(L, static_cast<lua_Number>(i));
    Decode(L, c);
    if (c->err != Cursor::kNone) return;
    lua_settable(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, uint64_t len) {
  lua_newtable(L);
  for (uint64_t i = 0; i < len; i++) {
    Decode(L, c);  // the key
    if (c->err != Cursor::kNone) return;
    Decode(L, c);  // the value
    if (c->err != Cursor::kNone) return;
    lua_settable(L, -3);  // (a nil or NaN key raises, as in Redis)
  }
}

void PushString(lua_State* L, Cursor* c, size_t header, size_t len) {
  c->Consume(header);
  if (!c->Need(len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  c->Consume(len);
}

// Pushes the value at the cursor, as Redis's mp_decode_to_lua_type: at most
// one value on the stack more, after a stack check (with Redis's text).
// On bad or missing bytes it sets c->err and may leave a partial value.
void Decode(lua_State* L, Cursor* c) {
  if (!c->Need(1)) return;
  CheckStack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
  const unsigned char b = c->p[0];
  // Fixed-size values: the byte, its payload's size.
  size_t payload = 0;
  switch (b) {
    case 0xcc: case 0xd0: case 0xd9: payload = 1; break;                        // uint8 int8 str8
    case 0xcd: case 0xd1: case 0xda: case 0xdc: case 0xde: payload = 2; break;  // ... str16 array16 map16
    case 0xce: case 0xd2: case 0xca: case 0xdb: case 0xdd: case 0xdf: payload = 4; break;
    case 0xcf: case 0xd3: case 0xcb: payload = 8; break;  // uint64 int64 float64
    default: break;
  }
  if (!c->Need(1 + payload)) return;
  const uint64_t v = c->Big(1, payload);
  switch (b) {
    case 0xcc: case 0xcd: case 0xce:  // uint 8/16/32
      lua_pushnumber(L, static_cast<lua_Number>(v));
      break;
    case 0xcf:  // uint 64: Redis pushes it through a signed integer (2^64 - 1 is -1)
      lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(v)));
      break;
    case 0xd0: lua_pushnumber(L, static_cast<int8_t>(v)); break;
    case 0xd1: lua_pushnumber(L, static_cast<int16_t>(v)); break;
    case 0xd2: lua_pushnumber(L, static_cast<int32_t>(v)); break;
    case 0xd3: lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(v))); break;
    case 0xc0: lua_pushnil(L); break;
    case 0xc2: lua_pushboolean(L, 0); break;
    case 0xc3: lua_pushboolean(L, 1); break;
    case 0xca: {
      const auto bits = static_cast<uint32_t>(v);
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      lua_pushnumber(L, f);
      break;
    }
    case 0xcb: {
      double d;
      std::memcpy(&d, &v, sizeof(d));
      lua_pushnumber(L, d);
      break;
    }
    case 0xd9: case 0xda: case 0xdb:  // str 8/16/32
      PushString(L, c, 1 + payload, static_cast<size_t>(v));
      return;
    case 0xdc: case 0xdd:  // array 16/32
      c->Consume(1 + payload);
      DecodeArray(L, c, v);
      return;
    case 0xde: case 0xdf:  // map 16/32
      c->Consume(1 + payload);
      DecodeMap(L, c, v);
      return;
    default:
      if ((b & 0x80) == 0) {  // positive fixint
        lua_pushnumber(L, b);
      } else if ((b & 0xe0) == 0xe0) {  // negative fixint
        lua_pushnumber(L, static_cast<int8_t>(b));
      } else if ((b & 0xe0) == 0xa0) {  // fixstr
        PushString(L, c, 1, b & 0x1f);
        return;
      } else if ((b & 0xf0) == 0x90) {  // fixarray
        c->Consume(1);
        DecodeArray(L, c, b & 0x0f);
        return;
      } else if ((b & 0xf0) == 0x80) {  // fixmap
        c->Consume(1);
        DecodeMap(L, c, b & 0x0f);
        return;
      } else {  // 0xc1, bin, ext: not decoded by Redis's either
        c->err = Cursor::kBadFormat;
        return;
      }
  }
  c->Consume(1 + payload);
}

int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool all = limit == 0 && offset == 0;
  // (Redis prints these with %d, that is their low 32 bits, and the length
  // where it means the limit.)
  if (offset < 0 || limit < 0)
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  if (static_cast<uint64_t>(offset) > len)
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  if (all) limit = 2147483647;
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset)};
  int count = 0;
  for (; c.left > 0 && count < limit; count++) {
    Decode(L, &c);
    if (c.err == Cursor::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.err == Cursor::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (!all) {
    CheckStack(L, 1, "in function mp_unpack_full");
    // The offset of what is left, or -1 once it is all read.
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_insert(L, 2);
    count++;
  }
  return count;
}

int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  const lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, std::min(lua_gettop(L), 1));
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  const lua_Integer limit = luaL_checkinteger(L, 2);
  const lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
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
