// Conversions between Redis replies and Lua values, as Redis 7.2's
// script_lua.c makes them: the error table of a failed call, a command's
// RESP reply (RESP2 or RESP3) pushed as Lua values, and a script's result
// written as a reply.
#pragma once

#include <string>
#include <string_view>

struct lua_State;

namespace peregrine {

class ReplyWriter;

namespace lua_convert {

// Pushes the error table for `error` ("-CODE msg", or "msg", which gets the
// code ERR), as Redis's luaPushErrorBuff; `from_command`: already counted
// in the error statistics (the command replied it).
void PushErrorTable(lua_State* L, std::string_view error, bool from_command = false);

// Pushes the reply at p (with push false, only skips it); returns where the
// next one starts. Reads nothing past end (a reply cut short gives what is
// there). Raises a Lua error ("reached lua stack limit") for a reply nested
// past 1,000 levels or when the Lua stack cannot grow: call it where Lua
// errors are caught (from a C function that Lua called, as redis.call).
const char* PushReply(lua_State* L, const char* p, const char* end, bool push = true);

// Replies the value at the top of the stack and pops it. `script_resp`: the
// protocol the script speaks (redis.setresp), which decides how a boolean
// replies; the reply itself is in the caller's protocol. Raises no Lua
// error (it may run outside any protected call): a table nested past 1,000
// levels (or one that holds itself) replies "-ERR reached lua stack limit"
// at that depth, as does a table when the interpreter has no memory left.
void ReplyValue(lua_State* L, ReplyWriter& reply, int script_resp, int depth = 0);

// CR and LF as spaces (a status or error line).
std::string NoNewlines(std::string_view s);

}  // namespace lua_convert
}  // namespace peregrine
