// Unit tests of the scripts' own libraries (bit, struct, cmsgpack) and of
// the reply <-> Lua conversions, in a bare interpreter: results, error texts
// and the public reproducers of the CVEs Redis fixed in them
// (CVE-2024-31449, CVE-2020-14147, CVE-2018-11218/11219, CVE-2021-32626).
// The expected values are Redis 7.0.15's (Debian's redis-server) unless a
// comment says why not. Run under ASan + UBSan, a write past the Lua stack
// or a buffer is a failure even where the result looks right.
#include <gtest/gtest.h>

#include <lua.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "protocol/buffer.h"
#include "protocol/reply.h"
#include "scripting/lua_convert.h"
#include "scripting/lua_libs.h"

namespace peregrine {
namespace {

// An allocator with a limit (as LuaEngine's, for script-memory-limit).
struct Budget {
  size_t used = 0;
  size_t limit = 0;  // 0: none
};

void* BudgetAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* b = static_cast<Budget*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    b->used -= osize;
    return nullptr;
  }
  if (b->limit != 0 && nsize > osize && b->used + (nsize - osize) > b->limit) return nullptr;
  void* p = std::realloc(ptr, nsize);
  if (p != nullptr) b->used = b->used - osize + nsize;
  return p;
}

constexpr char kHelpers[] = R"lua(
function hex(s)
  return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end
function unhex(h)
  return (h:gsub('..', function(x) return string.char(tonumber(x, 16)) end))
end
)lua";

class LuaLibsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L_ = lua_newstate(BudgetAlloc, &budget_);
    ASSERT_NE(L_, nullptr);
    const std::pair<const char*, lua_CFunction> base[] = {
        {"", luaopen_base}, {LUA_TABLIBNAME, luaopen_table}, {LUA_STRLIBNAME, luaopen_string},
        {LUA_MATHLIBNAME, luaopen_math}};
    for (auto [name, f] : base) {
      lua_pushcfunction(L_, f);
      lua_pushstring(L_, name);
      lua_call(L_, 1, 0);
    }
    const std::pair<const char*, lua_CFunction> ours[] = {
        {"bit", OpenBit}, {"cmsgpack", OpenCmsgpack}, {"struct", OpenStruct}};
    for (auto [name, f] : ours) {
      lua_pushcfunction(L_, f);
      lua_pushstring(L_, name);
      lua_call(L_, 1, 1);
      lua_setglobal(L_, name);
    }
    ASSERT_EQ(luaL_dostring(L_, kHelpers), 0);
    ASSERT_EQ(lua_gettop(L_), 0);
  }
  void TearDown() override {
    budget_.limit = 0;
    lua_close(L_);
  }

  // Runs `code`: its results as tostring() gives them, joined by " ", or
  // "error: <message>".
  std::string Run(std::string_view code) {
    const int top = lua_gettop(L_);
    std::string out;
    if (luaL_loadbuffer(L_, code.data(), code.size(), "=test") != 0 || lua_pcall(L_, 0, LUA_MULTRET, 0) != 0) {
      out = std::string("error: ") + (lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "(not a string)");
      lua_settop(L_, top);
      return out;
    }
    for (int i = top + 1; i <= lua_gettop(L_); i++) {
      lua_getglobal(L_, "tostring");
      lua_pushvalue(L_, i);
      lua_call(L_, 1, 1);
      if (i > top + 1) out += ' ';
      out += lua_tostring(L_, -1);
      lua_pop(L_, 1);
    }
    lua_settop(L_, top);
    return out;
  }

  // The Lua value of `code`'s first result, replied by ReplyValue.
  std::string Reply(std::string_view code, int resp = 2, int script_resp = 2) {
    const int top = lua_gettop(L_);
    if (luaL_loadbuffer(L_, code.data(), code.size(), "=test") != 0 || lua_pcall(L_, 0, 1, 0) != 0) {
      std::string err = lua_tostring(L_, -1);
      lua_settop(L_, top);
      return "error: " + err;
    }
    Buffer out;
    ReplyWriter writer(&out, resp);
    lua_convert::ReplyValue(L_, writer, script_resp, 0);
    EXPECT_EQ(lua_gettop(L_), top);  // it popped the value and nothing else
    lua_settop(L_, top);
    return std::string(out.view());
  }

  // PushReply of `resp` as a C function would call it (with only the
  // LUA_MINSTACK slots Lua promises one); the value becomes the global r.
  // Returns "" or the error raised.
  std::string PushToGlobal(std::string_view resp, const char** next = nullptr) {
    struct Call {
      std::string_view resp;
      const char* next = nullptr;
    } call{resp};
    auto fn = [](lua_State* L) -> int {
      auto* c = static_cast<Call*>(lua_touserdata(L, 1));
      c->next = lua_convert::PushReply(L, c->resp.data(), c->resp.data() + c->resp.size());
      lua_setglobal(L, "r");
      return 0;
    };
    if (lua_cpcall(L_, fn, &call) != 0) {
      std::string err = lua_tostring(L_, -1);
      lua_pop(L_, 1);
      return err;
    }
    if (next != nullptr) *next = call.next;
    return "";
  }

  Budget budget_;
  lua_State* L_ = nullptr;
};

std::string Repeat(std::string_view s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int i = 0; i < n; i++) out += s;
  return out;
}

// ---------------------------------------------------------------- bit ---

TEST_F(LuaLibsTest, BitHasLuaBitOpsFunctions) {
  EXPECT_EQ(Run("local r = {} for k in pairs(bit) do r[#r + 1] = k end table.sort(r) return table.concat(r, ',')"),
            "arshift,band,bnot,bor,bswap,bxor,lshift,rol,ror,rshift,tobit,tohex");
}

TEST_F(LuaLibsTest, BitToBitNormalisesAsLuaBitOp) {
  EXPECT_EQ(Run("return bit.tobit(2^32 + 1), bit.tobit(2^31), bit.tobit(-2^31), bit.tobit(2^32)"),
            "1 -2147483648 -2147483648 0");
  EXPECT_EQ(Run("return bit.tobit(2^53), bit.tobit(2^53 + 2), bit.tobit(2^60 + 2^40 + 3 * 2^8), bit.tobit(4294967295)"),
            "0 1 3 -1");
  // Fractions round to nearest, ties to even (the 2^52 + 2^51 addition).
  EXPECT_EQ(Run("return bit.tobit(0.5), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5), bit.tobit(-0.5) == 0"),
            "0 2 2 -2 true");
  EXPECT_EQ(Run("return bit.tobit(2^52 + 0.5), bit.tobit(0.49999999999999994), bit.tobit(-2^31 - 0.5)"),
            "0 0 -2147483648");
  EXPECT_EQ(Run("return bit.tobit(0/0), bit.tobit(1/0), bit.tobit(-1/0), bit.tobit(1e300), bit.tobit('12')"),
            "0 0 0 -2013235812 12");
  // Results are numbers (signed 32 bits), not strings.
  EXPECT_EQ(Run("return type(bit.tobit(1)), type(bit.tohex(1))"), "number string");
}

TEST_F(LuaLibsTest, BitLogicalOperations) {
  EXPECT_EQ(Run("return bit.bnot(0), bit.bnot(-1), bit.bnot(2^31), bit.bnot(2^32 + 5)"), "-1 0 2147483647 -6");
  EXPECT_EQ(Run("return bit.band(0xff, 0x0f, 0x3), bit.band(1), bit.band(-1, 2^31), bit.band(2^32 + 7, 5)"),
            "3 1 -2147483648 5");
  EXPECT_EQ(Run("return bit.bor(1, 2, 4, 8), bit.bor(2^31, 1), bit.bor(0)"), "15 -2147483647 0");
  EXPECT_EQ(Run("return bit.bxor(5, 3), bit.bxor(-1, 2^31), bit.bxor(1, 1, 1)"), "6 2147483647 1");
}

TEST_F(LuaLibsTest, BitShiftsAndRotations) {
  EXPECT_EQ(Run("return bit.lshift(1, 0), bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(1, -1)"),
            "1 -2147483648 1 2 -2147483648");
  EXPECT_EQ(Run("return bit.rshift(-1, 28), bit.rshift(-2^31, 31), bit.rshift(256, 4), bit.rshift(-1, 0)"),
            "15 1 16 -1");
  EXPECT_EQ(Run("return bit.arshift(-2^31, 31), bit.arshift(256, 4), bit.arshift(-256, 4), bit.arshift(-1, 32)"),
            "-1 16 -16 -1");
  EXPECT_EQ(Run("return bit.rol(0x12345678, 12) == 0x45678123, bit.ror(0x12345678, 12) == 0x67812345"),
            "true true");
  EXPECT_EQ(Run("return bit.rol(0x12345678, 0) == 0x12345678, bit.ror(0x12345678, 32) == 0x12345678"),
            "true true");
  EXPECT_EQ(Run("return bit.rol(1, -1), bit.ror(1, 1), bit.rol(-2^31, 1), bit.ror(3, 1)"),
            "-2147483648 -2147483648 1 -2147483647");
  EXPECT_EQ(Run("return bit.bswap(0x12345678) == 0x78563412, bit.bswap(0xff), bit.bswap(-1)"), "true -16777216 -1");
}

TEST_F(LuaLibsTest, BitToHexEveryCount) {
  // CVE-2024-31449: n = -2^31 (no positive counterpart) crashed the server.
  EXPECT_EQ(Run("return bit.tohex(65535, -2147483648)"), "0000FFFF");
  EXPECT_EQ(Run("return bit.tohex(65535, 2^31)"), "0000FFFF");  // (2^31 is -2^31 in 32 bits)
  EXPECT_EQ(Run("return bit.tohex(65535, 2147483647), bit.tohex(65535, -2147483647)"), "0000ffff 0000FFFF");
  EXPECT_EQ(Run("return '[' .. bit.tohex(65535, 0) .. ']', bit.tohex(65535, 9), bit.tohex(65535, -9)"),
            "[] 0000ffff 0000FFFF");
  EXPECT_EQ(Run("return bit.tohex(-1), bit.tohex(65535, -3), bit.tohex(65535, 2^32 + 4), bit.tohex(0x12345678, 2)"),
            "ffffffff FFF ffff 78");
  EXPECT_EQ(Run("return bit.tohex(255, -2), bit.tohex(2^32 + 255, 4), bit.tohex(255, 2.5), bit.tohex(255, 3.5)"),
            "FF 00ff ff 00ff");
  EXPECT_EQ(Run("return '[' .. bit.tohex(255, 0/0) .. ']', bit.tohex(-2^31), bit.tohex(0x1234abcd, 8)"),
            "[] 80000000 1234abcd");
  for (int n = -10; n <= 10; n++) {
    const int digits = n == 0 ? 0 : std::min(std::abs(n), 8);
    const std::string want = std::string(n < 0 ? "89ABCDEF" : "89abcdef").substr(8 - static_cast<size_t>(digits));
    EXPECT_EQ(Run("return bit.tohex(0x89abcdef, " + std::to_string(n) + ")"), want) << n;
  }
}

TEST_F(LuaLibsTest, BitErrorsAreLuaBitOps) {
  EXPECT_EQ(Run("return bit.band('x')"), "error: test:1: bad argument #1 to 'band' (number expected, got string)");
  EXPECT_EQ(Run("return bit.band()"), "error: test:1: bad argument #1 to 'band' (number expected, got no value)");
  EXPECT_EQ(Run("return bit.band(1, {})"), "error: test:1: bad argument #2 to 'band' (number expected, got table)");
  EXPECT_EQ(Run("return bit.tohex()"), "error: test:1: bad argument #1 to 'tohex' (number expected, got no value)");
  EXPECT_EQ(Run("return bit.tohex(1, 'z')"), "error: test:1: bad argument #2 to 'tohex' (number expected, got string)");
  EXPECT_EQ(Run("return bit.lshift(1)"), "error: test:1: bad argument #2 to 'lshift' (number expected, got no value)");
  EXPECT_EQ(Run("return bit.tobit(nil)"), "error: test:1: bad argument #1 to 'tobit' (number expected, got nil)");
}

// ------------------------------------------------------------- struct ---

TEST_F(LuaLibsTest, StructSizeNumbersCannotOverflow) {  // CVE-2020-14147
  EXPECT_EQ(Run("return struct.pack('i99999999999999999', 1)"), "error: test:1: integral size overflow");
  EXPECT_EQ(Run("return struct.pack('i9999999999', 1)"), "error: test:1: integral size overflow");
  EXPECT_EQ(Run("return struct.unpack('c99999999999999', 'abc')"), "error: test:1: integral size overflow");
  EXPECT_EQ(Run("return struct.size('c2147483648')"), "error: test:1: integral size overflow");
  EXPECT_EQ(Run("return struct.pack('!99999999999i', 1)"), "error: test:1: integral size overflow");
  EXPECT_EQ(Run("return struct.pack('>I33', 1)"), "error: test:1: integral size 33 is larger than limit of 32");
  EXPECT_EQ(Run("return struct.pack('!3i', 1)"), "error: test:1: alignment 3 is not a power of 2");
  EXPECT_EQ(Run("return struct.pack('!0i', 1)"), "error: test:1: alignment 0 is not a power of 2");
  EXPECT_EQ(Run("return struct.pack('q')"), "error: test:1: bad argument #1 to 'pack' (invalid format option 'q')");
  // Integers wider than 8 bytes: the low 8 bytes, the rest zero.
  EXPECT_EQ(Run("return hex(struct.pack('>I16', 1))"), "00000000000000000000000000000001");
  EXPECT_EQ(Run("return hex(struct.pack('<i16', -2))"), "feffffffffffffff0000000000000000");
  // The largest alignment: an item aligns to its own size at most.
  EXPECT_EQ(Run("return hex(struct.pack('!1073741824bi', 1, 2)), struct.size('!1073741824bi')"),
            "0100000002000000 8");
  EXPECT_EQ(Run("return struct.size('c2147483647c2147483647')"), "4294967294");
}

TEST_F(LuaLibsTest, StructUnpackNeverReadsPastItsInput) {  // CVE-2020-14147
  const std::string too_short = "error: test:1: bad argument #2 to 'unpack' (data string too short)";
  EXPECT_EQ(Run("return struct.unpack('i', 'abc')"), too_short);
  EXPECT_EQ(Run("return struct.unpack('i', 'abcd', 2)"), too_short);
  EXPECT_EQ(Run("return struct.unpack('i', 'abcd', 0)"),
            "error: test:1: bad argument #3 to 'unpack' (offset must be 1 or greater)");
  EXPECT_EQ(Run("return struct.unpack('i', 'abcd', -5)"), too_short);  // (a size_t in Redis: past the end)
  EXPECT_EQ(Run("return struct.unpack('b', 'abcd', 2^53)"), too_short);
  EXPECT_EQ(Run("return struct.unpack('b', 'abcd', 5)"), too_short);
  EXPECT_EQ(Run("return struct.unpack('x', 'abcd', 5)"), too_short);
  EXPECT_EQ(Run("return struct.unpack('c2147483647', 'abcd')"), too_short);
  EXPECT_EQ(Run("return struct.unpack('>d', '1234567')"), too_short);
  EXPECT_EQ(Run("return struct.unpack('s', 'abcd', 5)"), "error: test:1: unfinished string in data");
  EXPECT_EQ(Run("return struct.unpack('s', 'abcd')"), "error: test:1: unfinished string in data");
  EXPECT_EQ(Run("return struct.unpack('s', 'ab\\0cd')"), "ab 4");
  EXPECT_EQ(Run("return struct.unpack('b', 'abcd', 4)"), "100 5");
  // Alignment padding past the end (checked before it is added: a negative
  // offset's position plus its padding cannot wrap to the start).
  EXPECT_EQ(Run("return struct.unpack('!8d', string.rep('\\0', 16), -1)"), too_short);
  EXPECT_EQ(Run("return struct.unpack('!8bd', 'a1234567')"), too_short);
}

TEST_F(LuaLibsTest, StructC0TakesThePreviousNumberSafely) {
  const std::string too_short = "error: test:1: bad argument #2 to 'unpack' (data string too short)";
  EXPECT_EQ(Run("return struct.unpack('bc0', struct.pack('bc0', 3, 'abc'))"), "abc 5");
  EXPECT_EQ(Run("return struct.unpack('bc0', struct.pack('b', 2) .. 'abc')"), "ab 4");
  EXPECT_EQ(Run("return struct.unpack('c1c0', '2abc')"), "ab 4");
  EXPECT_EQ(Run("return struct.unpack('bc0', struct.pack('b', -3) .. 'abc')"), too_short);
  EXPECT_EQ(Run("return struct.unpack('dc0', struct.pack('d', 2.7) .. 'abc')"), "ab 11");
  EXPECT_EQ(Run("return struct.unpack('dc0', struct.pack('d', 0/0) .. 'abc')"), too_short);
  EXPECT_EQ(Run("return struct.unpack('dc0', struct.pack('d', 2^63) .. 'abc')"), too_short);
  // As x86-64 converts them in Redis: -0.5 and +infinity are 0 bytes.
  EXPECT_EQ(Run("local s, n = struct.unpack('dc0', struct.pack('d', -0.5) .. 'abc') return #s, n"), "0 9");
  EXPECT_EQ(Run("local s, n = struct.unpack('dc0', struct.pack('d', 1/0) .. 'abc') return #s, n"), "0 9");
  EXPECT_EQ(Run("return struct.unpack('c0', 'abc')"), "error: test:1: format 'c0' needs a previous size");
  EXPECT_EQ(Run("return struct.size('c0')"),
            "error: test:1: bad argument #1 to 'size' (option 'c0' has no fixed size)");
  EXPECT_EQ(Run("return struct.size('s')"), "error: test:1: bad argument #1 to 'size' (option 's' has no fixed size)");
}

TEST_F(LuaLibsTest, StructIntegersConvertAsOnX86) {
  // Numbers out of an integer's range: the values Redis's casts give on x86-64.
  const std::pair<const char*, const char*> cases[] = {
      {"2^64", "0000000000000000"},       {"1e300", "0000000000000000"},      {"-1e300", "8000000000000000"},
      {"1/0", "0000000000000000"},        {"-1/0", "8000000000000000"},       {"0/0", "8000000000000000"},
      {"2^63", "8000000000000000"},       {"-2^63", "8000000000000000"},      {"2^63+2^11", "8000000000000800"},
      {"-2^63-2^11", "8000000000000000"}, {"2^53+1", "0020000000000000"},     {"-0.5", "0000000000000000"},
      {"1.9", "0000000000000001"},        {"-1.9", "ffffffffffffffff"},       {"2^40", "0000010000000000"}};
  for (auto [value, want] : cases) {
    EXPECT_EQ(Run(std::string("return hex(struct.pack('>i8', ") + value + "))"), want) << value;
    EXPECT_EQ(Run(std::string("return hex(struct.pack('>I8', ") + value + "))"), want) << value;
    EXPECT_EQ(Run(std::string("return hex(struct.pack('>i2', ") + value + "))"), std::string(want).substr(12))
        << value;
  }
  EXPECT_EQ(Run("return struct.unpack('i0', 'abc')"), "0 1");
  EXPECT_EQ(Run("return struct.unpack('I0', 'abc')"), "0 1");
  EXPECT_EQ(Run("return #struct.pack('i0', 5)"), "0");
  EXPECT_EQ(Run("return struct.unpack('<i9', string.rep('\\255', 9))"), "-1 10");
  EXPECT_EQ(Run("return struct.unpack('>i3', '\\255\\255\\254')"), "-2 4");
  EXPECT_EQ(Run("return struct.unpack('<i8', '\\0\\0\\0\\0\\0\\0\\0\\128') == -2^63"), "true");
  EXPECT_EQ(Run("return struct.unpack('<I8', string.rep('\\255', 8)) == 2^64"), "true");
  EXPECT_EQ(Run("return struct.unpack('<I16', string.rep('\\255', 16)) == 2^64"), "true");
  EXPECT_EQ(Run("return hex(struct.pack('<hH>hH', -2, 65535, 258, 1))"), "feffffff01020001");
  EXPECT_EQ(Run("return struct.unpack('>f<d', struct.pack('>f<d', 1.5, -0.25))"), "1.5 -0.25 13");
}

TEST_F(LuaLibsTest, StructUnpackResultsAreBoundedByTheStack) {
  EXPECT_EQ(Run("return #{struct.unpack(string.rep('b', 7997), string.rep('\\1', 7997))}"), "7998");
  EXPECT_EQ(Run("return struct.unpack(string.rep('b', 7998), string.rep('\\1', 7998))"),
            "error: test:1: stack overflow (too many results)");
  EXPECT_EQ(Run("return struct.unpack(string.rep('b', 100000), string.rep('\\1', 100000))"),
            "error: test:1: stack overflow (too many results)");
}

// ----------------------------------------------------------- cmsgpack ---

TEST_F(LuaLibsTest, CmsgpackPackOfManyArguments) {  // CVE-2018-11218
  EXPECT_EQ(Run("local t = {} for i = 1, 4000 do t[i] = i end\n"
                "local s = cmsgpack.pack(unpack(t))\n"
                "local u = {cmsgpack.unpack(s)} local sum = 0 for i = 1, #u do sum = sum + u[i] end\n"
                "return #s, #u, sum"),
            "11618 4000 8002000");
  EXPECT_EQ(Run("local t = {} for i = 1, 7000 do t[i] = i end return cmsgpack.pack(unpack(t))"),
            "error: test:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)");
  EXPECT_EQ(Run("return cmsgpack.pack()"), "error: test:1: bad argument #0 to 'pack' (MessagePack pack needs input.)");
}

TEST_F(LuaLibsTest, CmsgpackUnpackOfHugeDeclaredLengths) {  // CVE-2018-11218
  // An array, a map, a string of 2^32 - 1: read as far as the bytes go.
  EXPECT_EQ(Run("return cmsgpack.unpack('\\221\\255\\255\\255\\255')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\223\\255\\255\\255\\255')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\219\\255\\255\\255\\255abc')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\221\\255\\255\\255\\255' .. string.rep('\\1', 100000))"),
            "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\220\\255\\255\\1\\2')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\145\\220\\0')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\218\\0\\5abcd')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\218\\0\\5abcde')"), "abcde");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\203\\0\\0')"), "error: test:1: Missing bytes in input.");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\165abc')"), "error: test:1: Missing bytes in input.");
}

TEST_F(LuaLibsTest, CmsgpackUnpackOfManyValuesAndDeepNesting) {  // CVE-2018-11218
  EXPECT_EQ(Run("return select('#', cmsgpack.unpack(string.rep('\\1', 7999)))"), "7999");
  const std::string too_many =
      "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)";
  EXPECT_EQ(Run("return select('#', cmsgpack.unpack(string.rep('\\1', 8000)))"), "error: test:1: " + too_many);
  EXPECT_EQ(Run("return select('#', cmsgpack.unpack(string.rep('\\1', 100000)))"), "error: test:1: " + too_many);
  // Nested arrays: 3999 levels fit the stack, 4000 do not.
  EXPECT_EQ(Run("local t = cmsgpack.unpack(string.rep('\\145', 3999) .. '\\7')\n"
                "local d = 0 while type(t) == 'table' do t = t[1] d = d + 1 end return d, t"),
            "3999 7");
  EXPECT_EQ(Run("return pcall(cmsgpack.unpack, string.rep('\\145', 4000) .. '\\1')"),
            "false stack overflow (in function mp_decode_to_lua_array)");
  EXPECT_EQ(Run("return pcall(cmsgpack.unpack, string.rep('\\129\\1', 7999) .. '\\1')"), "false " + too_many);
  EXPECT_EQ(Run("return pcall(cmsgpack.unpack, string.rep('\\129', 7999) .. '\\1')"), "false " + too_many);
  EXPECT_EQ(Run("return pcall(cmsgpack.unpack, string.rep('\\145', 1000000))"),
            "false stack overflow (in function mp_decode_to_lua_array)");
  // unpack_limit takes any number of values, a few at a time.
  EXPECT_EQ(Run("return cmsgpack.unpack_limit(string.rep('\\1', 100000), 3, 99998)"), "-1 1 1");
  EXPECT_EQ(Run("local s, n, off = string.rep('\\1', 100000), 0, 0\n"
                "repeat local r = {cmsgpack.unpack_limit(s, 5000, off)} off = r[1] n = n + #r - 1 until off == -1\n"
                "return n"),
            "100000");
}

TEST_F(LuaLibsTest, CmsgpackOffsetsAndLimits) {
  EXPECT_EQ(Run("return cmsgpack.unpack_limit('\\1\\2', -1)"),
            "error: test:1: Invalid request to unpack with offset of 0 and limit of 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', -1)"),
            "error: test:1: Invalid request to unpack with offset of -1 and limit of 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', 3)"),
            "error: test:1: Start offset 3 greater than input length 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', 2)"), "-1");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', 1)"), "-1 2");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2')"), "1 1");
  // Printed with %d (the low 32 bits), as Redis prints them.
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', 2^32)"),
            "error: test:1: Start offset 0 greater than input length 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', 2^32 + 1)"),
            "error: test:1: Start offset 1 greater than input length 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', 1e300)"),
            "error: test:1: Invalid request to unpack with offset of 0 and limit of 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_one('\\1\\2', -2^63)"),
            "error: test:1: Invalid request to unpack with offset of 0 and limit of 2.");
  EXPECT_EQ(Run("return cmsgpack.unpack_limit('\\1\\2', 2^32 + 1)"), "-1 1 2");
  EXPECT_EQ(Run("return cmsgpack.unpack_limit('\\1\\2\\3', 0)"), "1 2 3");
  EXPECT_EQ(Run("return cmsgpack.unpack_limit('\\1\\2\\3', 0, 1)"), "1");
  EXPECT_EQ(Run("return cmsgpack.unpack_limit('\\1')"),
            "error: test:1: bad argument #2 to 'unpack_limit' (number expected, got no value)");
  EXPECT_EQ(Run("return cmsgpack.unpack()"),
            "error: test:1: bad argument #1 to 'unpack' (string expected, got no value)");
  EXPECT_EQ(Run("return select('#', cmsgpack.unpack(''))"), "0");
}

TEST_F(LuaLibsTest, CmsgpackDecodesAsRedis) {
  EXPECT_EQ(Run("return cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')"), "-1");  // (as Redis)
  EXPECT_EQ(Run("return cmsgpack.unpack('\\211\\128\\0\\0\\0\\0\\0\\0\\1') == -2^63"), "true");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\209\\255\\1'), cmsgpack.unpack('\\210\\255\\255\\255\\1')"), "-255 -255");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\206\\255\\255\\255\\1'), cmsgpack.unpack('\\205\\255\\1')"),
            "4294967041 65281");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\208\\128'), cmsgpack.unpack('\\204\\200'), cmsgpack.unpack('\\224')"),
            "-128 200 -32");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\202\\63\\192\\0\\0'), cmsgpack.unpack(unhex('cb3fb999999999999a'))"),
            "1.5 0.1");
  EXPECT_EQ(Run("return cmsgpack.unpack('\\192\\194\\195')"), "nil false true");
  // (A border of a table with a hole: 1, in Redis too.)
  EXPECT_EQ(Run("local t = cmsgpack.unpack('\\147\\1\\192\\3') return #t, t[1], t[2], t[3]"), "1 1 nil 3");
  EXPECT_EQ(Run("local t = cmsgpack.unpack('\\130\\161a\\1\\161b\\145\\2') return t.a, t.b[1]"), "1 2");
  EXPECT_EQ(Run("return cmsgpack.unpack(unhex('d903616263'), unhex('db00000003616263'))"), "abc");
  EXPECT_EQ(Run("return pcall(cmsgpack.unpack, '\\129\\192\\1')"), "false table index is nil");
  EXPECT_EQ(Run("return pcall(cmsgpack.unpack, unhex('81cbfff800000000000001'))"), "false table index is NaN");
  // bin, ext and 0xc1: not decoded, as in Redis.
  for (const char* bad : {"c4010101", "c1", "91d40101", "c70101", "d80100000000000000000000000000000000", "010294c1"})
    EXPECT_EQ(Run(std::string("return pcall(cmsgpack.unpack, unhex('") + bad + "'))"),
              "false Bad data format in input.")
        << bad;
}

TEST_F(LuaLibsTest, CmsgpackEncodesAsRedis) {
  const std::pair<const char*, const char*> cases[] = {
      {"2^63", "ca5f000000"},
      {"-2^63", "d38000000000000000"},
      {"1/0", "ca7f800000"},
      {"-1/0", "caff800000"},
      {"1.5", "ca3fc00000"},
      {"0.1", "cb3fb999999999999a"},
      {"2^64", "ca5f800000"},
      {"-1", "ff"},
      {"-33", "d0df"},
      {"-129", "d1ff7f"},
      {"-32769", "d2ffff7fff"},
      {"-2^31-1", "d3ffffffff7fffffff"},
      {"255", "ccff"},
      {"65536", "ce00010000"},
      {"2^32", "cf0000000100000000"},
      {"string.rep('a', 31)", "bf61616161616161616161616161616161616161616161616161616161616161"},
      {"string.rep('a', 32)", "d9206161616161616161616161616161616161616161616161616161616161616161"},
      {"{1, 2, 3}", "93010203"},
      {"{a = 1}", "81a16101"},
      {"{[1] = 1, [3] = 3}", "8201010303"},
      {"{true, false}", "92c3c2"},
      {"-0.0", "00"},
      {"2^53 + 1", "cf0020000000000000"},
      {"nil, print, 1", "c0c001"},
  };
  for (auto [value, want] : cases)
    EXPECT_EQ(Run(std::string("return hex(cmsgpack.pack(") + value + "))"), want) << value;
  EXPECT_EQ(Run("return #cmsgpack.pack(string.rep('x', 70000)), hex(cmsgpack.pack(string.rep('x', 300))):sub(1, 6)"),
            "70005 da012c");
}

TEST_F(LuaLibsTest, CmsgpackTablesThatHoldThemselves) {
  EXPECT_EQ(Run("local t = {} t[1] = t return hex(cmsgpack.pack(t))"), "91919191919191919191919191919191c0");
  EXPECT_EQ(Run("local t = {} t.a = t return hex(cmsgpack.pack(t))"), Repeat("81a161", 16).append("c0"));
  EXPECT_EQ(Run("local t = {} t[1] = t t[2] = t return #cmsgpack.pack(t)"), "131071");
  EXPECT_EQ(Run("local v = {1, {2, {3, 'x'}}, {a = {b = true}}} local u = cmsgpack.unpack(cmsgpack.pack(v))\n"
                "return u[1], u[2][1], u[2][2][1], u[2][2][2], u[3].a.b"),
            "1 2 3 x true");
}

TEST_F(LuaLibsTest, CmsgpackPackCountsAgainstTheMemoryLimit) {  // CVE-2018-11219's buffer
  // A table holding itself 100 times packs to 100^16 values: the buffer is
  // the interpreter's memory, so the limit stops it (and frees it: ASan's
  // leak check).
  ASSERT_EQ(Run("t = {} for i = 1, 100 do t[i] = t end return #t"), "100");
  budget_.limit = budget_.used + (size_t{4} << 20);
  EXPECT_EQ(Run("return cmsgpack.pack(t)"), "error: test:1: not enough memory");
  EXPECT_EQ(Run("return #cmsgpack.pack({1, 2, 3})"), "4");
  budget_.limit = 0;
}

// ------------------------------------------------ replies <-> Lua ---

TEST_F(LuaLibsTest, WideReplyIntoLuaAndBack) {  // CVE-2021-32626
  Buffer resp;
  ReplyWriter writer(&resp, 2);
  writer.ArrayHeader(100000);
  for (int i = 1; i <= 100000; i++) {
    if (i % 2 == 0)
      writer.Integer(i);
    else
      writer.Bulk("v" + std::to_string(i));
  }
  const char* next = nullptr;
  ASSERT_EQ(PushToGlobal(resp.view(), &next), "");
  EXPECT_EQ(next, resp.view().data() + resp.size());
  EXPECT_EQ(Run("return #r, r[1], r[2], r[99999], r[100000]"), "100000 v1 2 v99999 100000");
  EXPECT_EQ(Reply("return r"), resp.view());
  EXPECT_EQ(Reply("return r", 3), resp.view());
}

TEST_F(LuaLibsTest, WideResp3MapIntoLuaAndBack) {  // CVE-2021-32626
  Buffer resp;
  ReplyWriter writer(&resp, 3);
  writer.MapHeader(100000);
  for (int i = 1; i <= 100000; i++) {
    writer.Bulk("k" + std::to_string(i));
    writer.Integer(i);
  }
  ASSERT_EQ(PushToGlobal(resp.view()), "");
  EXPECT_EQ(Run("local n, sum = 0, 0 for k, v in pairs(r.map) do n = n + 1 sum = sum + v end\n"
                "return n, sum, r.map.k1, r.map.k100000"),
            "100000 5000050000 1 100000");
  const std::string back = Reply("return r", 3);
  EXPECT_EQ(back.size(), resp.size());  // the same pairs, in the table's order
  EXPECT_EQ(back.substr(0, 10), "%100000\r\n$");
  const std::string flat = Reply("return r", 2);  // RESP2: a flat array
  EXPECT_EQ(flat.substr(0, 10), "*200000\r\n$");
  // A set, and nested aggregates of every kind.
  ASSERT_EQ(PushToGlobal("~3\r\n+a\r\n$1\r\nb\r\n:3\r\n"), "");
  EXPECT_EQ(Run("local n = 0 for k, v in pairs(r.set) do n = n + 1 assert(v == true) end return n, r.set[3]"),
            "3 true");
  ASSERT_EQ(PushToGlobal("*6\r\n,1.5\r\n(123\r\n+x\r\n-ERR y\r\n#t\r\n_\r\n"), "");
  EXPECT_EQ(Run("return r[1].double, r[2].big_number, r[3].ok, r[4].err, r[5], r[6]"), "1.5 123 x ERR y true nil");
  ASSERT_EQ(PushToGlobal("=9\r\ntxt:hello\r\n"), "");
  EXPECT_EQ(Run("return r.verbatim_string.format, r.verbatim_string.string"), "txt hello");
}

TEST_F(LuaLibsTest, DeepReplyIntoLua) {  // CVE-2021-32626
  // 1,000 levels of arrays fit; deeper is a Lua error, never a write past
  // the stack the C function was given.
  ASSERT_EQ(PushToGlobal(Repeat("*1\r\n", 1000) + ":7\r\n"), "");
  EXPECT_EQ(Run("local t, d = r, 0 while type(t) == 'table' do t = t[1] d = d + 1 end return d, t"), "1000 7");
  EXPECT_EQ(Reply("return r"), Repeat("*1\r\n", 1000) + ":7\r\n");
  EXPECT_EQ(PushToGlobal(Repeat("*1\r\n", 1001) + ":7\r\n"), "reached lua stack limit");
  EXPECT_EQ(PushToGlobal(Repeat("*1\r\n", 100000) + ":7\r\n"), "reached lua stack limit");
  EXPECT_EQ(PushToGlobal(Repeat("%1\r\n$1\r\nk\r\n", 1000) + ":7\r\n"), "");
  EXPECT_EQ(Run("local t, d = r, 0 while type(t) == 'table' do t = t.map.k d = d + 1 end return d, t"), "1000 7");
  EXPECT_EQ(PushToGlobal(Repeat("%1\r\n$1\r\nk\r\n", 5000) + ":7\r\n"), "reached lua stack limit");
  EXPECT_EQ(PushToGlobal(Repeat("*2\r\n:1\r\n", 999) + "=7\r\ntxt:abc\r\n"), "");
  EXPECT_EQ(Run("local t = r for i = 1, 999 do t = t[2] end return t.verbatim_string.string"), "abc");
  // Attributes are skipped without recursion, however deep.
  ASSERT_EQ(PushToGlobal("|1\r\n+k\r\n" + Repeat("*1\r\n", 100000) + ":1\r\n:5\r\n"), "");
  EXPECT_EQ(Run("return r"), "5");
}

TEST_F(LuaLibsTest, CutOrMalformedReplyIntoLua) {
  // A reply cut at ReplyWriter::kMaxRequestSized keeps its header's count:
  // only what is there is read (quickly).
  const char* next = nullptr;
  ASSERT_EQ(PushToGlobal("*1000000000000\r\n:1\r\n", &next), "");
  EXPECT_EQ(Run("return #r, r[1]"), "1 1");
  ASSERT_EQ(PushToGlobal("%1000000000000\r\n$1\r\na\r\n:1\r\n"), "");
  EXPECT_EQ(Run("return r.map.a"), "1");
  ASSERT_EQ(PushToGlobal("$100\r\nabc"), "");
  EXPECT_EQ(Run("return r"), "abc");
  ASSERT_EQ(PushToGlobal("*2\r\n$5\r\nab"), "");
  EXPECT_EQ(Run("return r[1], r[2]"), "ab nil");
  ASSERT_EQ(PushToGlobal("$9223372036854775807\r\nab"), "");
  EXPECT_EQ(Run("return r"), "ab");
  ASSERT_EQ(PushToGlobal("=2\r\nab"), "");
  EXPECT_EQ(Run("return r.verbatim_string.format, r.verbatim_string.string"), "ab ");
  ASSERT_EQ(PushToGlobal("|9223372036854775807\r\n:1\r\n"), "");
  EXPECT_EQ(Run("return r"), "nil");
  ASSERT_EQ(PushToGlobal(""), "");
  EXPECT_EQ(Run("return r"), "nil");
  ASSERT_EQ(PushToGlobal("+no end"), "");
  EXPECT_EQ(Run("return r.ok"), "no end");
  ASSERT_EQ(PushToGlobal("$-1\r\n"), "");
  EXPECT_EQ(Run("return r"), "false");
  ASSERT_EQ(PushToGlobal("*-1\r\n"), "");
  EXPECT_EQ(Run("return r"), "false");
  // Skipping (push false) stops at the end as well.
  const std::string deep = "*3\r\n*1000000\r\n:1\r\n";
  EXPECT_EQ(lua_convert::PushReply(L_, deep.data(), deep.data() + deep.size(), false), deep.data() + deep.size());
  const std::string two = "*2\r\n:1\r\n$3\r\nabc\r\n:9\r\n";
  EXPECT_EQ(lua_convert::PushReply(L_, two.data(), two.data() + two.size(), false), two.data() + two.size() - 4);
  EXPECT_EQ(lua_gettop(L_), 0);
}

TEST_F(LuaLibsTest, ScriptResultThatHoldsItselfOrIsDeep) {  // CVE-2021-32626
  const std::string limit = Repeat("*1\r\n", 1001) + "-ERR reached lua stack limit\r\n";
  EXPECT_EQ(Reply("local t = {} t[1] = t return t"), limit);
  EXPECT_EQ(Reply("local t = {} local c = t for i = 1, 5000 do c[1] = {} c = c[1] end return t"), limit);
  EXPECT_EQ(Reply("local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end c[1] = 'x' return t"),
            Repeat("*1\r\n", 1000) + "$1\r\nx\r\n");
  // Maps and sets of themselves: ended the same way (and the walk keeps to
  // the stack Prepare grew, which ASan checks).
  const std::string map = Reply("local t = {} t.map = {k = t} return t", 3);
  EXPECT_EQ(map.substr(0, 12), "%1\r\n$1\r\nk\r\n%");
  EXPECT_NE(map.find("-ERR reached lua stack limit\r\n"), std::string::npos);
  const std::string set = Reply("local t = {} t.set = {} t.set[t] = true return t", 3);
  EXPECT_EQ(set.substr(0, 8), "~1\r\n~1\r\n");
  EXPECT_NE(set.find("-ERR reached lua stack limit\r\n"), std::string::npos);
  // Wide and deep: 200 levels of 100 elements each holding the next.
  const std::string wide =
      Reply("local t = {} local c = t for i = 1, 200 do for j = 1, 99 do c[j] = j end c[100] = {} c = c[100] end "
            "return t");
  EXPECT_EQ(wide.size(), 200 * (6 + 9 * 4 + 90 * 5) + 4);
}

TEST_F(LuaLibsTest, ScriptResultValuesAsRedisReplies) {
  EXPECT_EQ(Reply("return {{double = 1.5}, {big_number = '123'}, {ok = 'x'}, {err = 'ERR y'}, true, false}", 3),
            "*6\r\n,1.5\r\n(123\r\n+x\r\n-ERR y\r\n:1\r\n_\r\n");
  EXPECT_EQ(Reply("return {{double = 1.5}, {big_number = '123'}, {ok = 'x'}, {err = 'ERR y'}, true, false, "
                  "{verbatim_string = {format = 'txt', string = 'hello'}}}"),
            "*7\r\n$3\r\n1.5\r\n$3\r\n123\r\n+x\r\n-ERR y\r\n:1\r\n$-1\r\n$5\r\nhello\r\n");
  EXPECT_EQ(Reply("return {verbatim_string = {format = 'txt', string = 'hello'}}", 3), "=9\r\ntxt:hello\r\n");
  EXPECT_EQ(Reply("return {verbatim_string = {format = 'markdownx', string = 'hello'}}", 3), "=9\r\nmar:hello\r\n");
  EXPECT_EQ(Reply("return {map = {a = 1}, set = {b = true}}", 3), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Reply("return {true, false}", 3, 3), "*2\r\n#t\r\n#f\r\n");
  // Numbers as (long long) on x86-64: NaN, infinities, out of range: -2^63.
  const std::pair<const char*, const char*> numbers[] = {
      {"0/0", ":-9223372036854775808\r\n"},     {"1/0", ":-9223372036854775808\r\n"},
      {"-1/0", ":-9223372036854775808\r\n"},    {"1e300", ":-9223372036854775808\r\n"},
      {"-1e300", ":-9223372036854775808\r\n"},  {"2^63", ":-9223372036854775808\r\n"},
      {"-2^63", ":-9223372036854775808\r\n"},   {"2^63 + 2^11", ":-9223372036854775808\r\n"},
      {"3.99", ":3\r\n"},                       {"-3.99", ":-3\r\n"},
      {"-0.0", ":0\r\n"},                       {"2^62", ":4611686018427387904\r\n"}};
  for (auto [value, want] : numbers) EXPECT_EQ(Reply(std::string("return ") + value), want) << value;
  EXPECT_EQ(Reply("return nil"), "$-1\r\n");
  EXPECT_EQ(Reply("return 'a\\0b'"), std::string("$3\r\na\0b\r\n", 9));
  // Metatables are not consulted (raw access).
  EXPECT_EQ(Reply("return setmetatable({}, {__index = function() error('no') end})"), "*0\r\n");
}

TEST_F(LuaLibsTest, ScriptResultWhenTheMemoryLimitIsReached) {
  // ReplyValue runs outside any protected call, where a Lua error (out of
  // memory growing the stack) would abort the process: it replies an error.
  ASSERT_EQ(Run("t = {} local c = t for i = 1, 900 do c[1] = {} c = c[1] end collectgarbage() return 1"), "1");
  lua_getglobal(L_, "t");
  budget_.limit = budget_.used;  // nothing more can be allocated
  Buffer out;
  ReplyWriter writer(&out, 2);
  lua_convert::ReplyValue(L_, writer, 2, 0);
  EXPECT_EQ(out.view(), "-ERR reached lua stack limit\r\n");
  EXPECT_EQ(lua_gettop(L_), 0);
  budget_.limit = 0;
  // With memory, the same table replies in full.
  EXPECT_EQ(Reply("return t"), Repeat("*1\r\n", 900) + "*0\r\n");
}

}  // namespace
}  // namespace peregrine
