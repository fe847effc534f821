// The script fuzzer's Lua generator (script/lua_gen.h): the constant tables
// it picks from. Included by the generator's sources only.
#pragma once

#include <string_view>

namespace peregrine_fuzz {

using namespace std::string_view_literals;

// Hostile numbers, as Lua source (each a primary expression).
inline constexpr const char* kNumbers[] = {
    "0",          "1",           "-1",          "2",          "3",          "(-0)",        "0.5",
    "(-0.5)",     "1.5",         "7",           "10",         "16",         "100",         "255",
    "256",        "1000",        "65535",       "65536",      "(2^31)",     "(-2^31)",     "(2^31-1)",
    "(-2^31-1)",  "(2^32)",      "(2^32+1)",    "(-2^32)",    "(2^53)",     "(2^53+1)",    "(-2^53)",
    "(2^63)",     "(-2^63)",     "(2^64)",      "1e308",      "(-1e308)",   "(1/0)",       "(-1/0)",
    "(0/0)",      "4.9e-324",    "2.2250738585072014e-308",   "1e-310",     "0x7fffffff",  "0xffffffff",
    "0x80000000", "1e15",        "1e16",        "123456789012",           "3.14159",    "9007199254740993",
    "1e100",      "math.huge",   "(-math.huge)", "math.pi",   "(-2)",       "17",         "33",
    "4294967295", "(2^52+0.5)",  "1e-5",        "#KEYS",      "#ARGV",
};

// Small counts, sizes, indices, depths.
inline constexpr const char* kSmall[] = {
    "0",      "1",        "2",          "3",          "(-1)",    "5",       "10",    "16",    "17",
    "31",     "32",       "33",         "100",        "255",     "1000",    "(-2)",  "10000", "65536",
    "100000", "(2^31-1)", "(-2^31)",    "(2^31)",     "(2^32)",  "1e308",   "(0/0)", "(1/0)", "0.5",
    "(-0.5)", "7000",     "(2^53)",     "2147483647", "8000",    "(-100)",  "4",     "8",     "64",
};

// Sizes for string.rep: up to a few MB (lua-maxmemory stops what is more).
inline constexpr const char* kRepeats[] = {"0",     "1",      "2",       "10",      "100",     "255",    "1000",
                                           "4096",  "65536",  "100000",  "1000000", "3000000", "(-1)",   "(2^31)",
                                           "1e308", "(0/0)",  "(1/0)",   "70000",   "65535",   "(2^32)", "512"};

// Hostile strings (raw bytes, quoted when used).
inline constexpr std::string_view kStrings[] = {
    ""sv,        "a"sv,      "abc"sv,     "hello world"sv, "\0"sv,      "a\0b"sv,     "\xff\xff\xff\xff"sv,
    "\r\n"sv,    "-ERR x"sv, "+OK\r\n"sv, "%"sv,           "%s"sv,      "%d"sv,       "%5.2f"sv,
    "%q"sv,      "%c"sv,     "%x"sv,      "%-99s"sv,       "%099d"sv,   "%.99f"sv,    "%1$s"sv,
    "%n"sv,      "%%"sv,     "%a"sv,      "%*d"sv,         "(a*)"sv,    "%a+"sv,      "[%w_]+"sv,
    "(.-)"sv,    "%b()"sv,   "%f[%w]"sv,  "^(.-)$"sv,      "(()"sv,     "[a"sv,       "(%1)"sv,
    "[^]"sv,     "(.)%1"sv,  "()"sv,      "{\"a\":1}"sv,   "[1,2,[3]]"sv, "[[[[[[[[[["sv, "{\"a\":"sv,
    "\"\\u0000\""sv, "1e400"sv, "nan"sv, "-0"sv,          "[1,2,3,]"sv, "\"\\ud800\""sv, "k"sv,
    "{a}1"sv,    "nil"sv,    "true"sv,    "1"sv,           "-1"sv,      "1e5"sv,      "0x10"sv,
    "  12  "sv,  "9223372036854775807"sv, "9223372036854775808"sv,    "inf"sv,      "-inf"sv,  "0.1"sv,
    "\x1bLua"sv, "\x1bLuaQ\0\x01\x04\x08\x04\x08\0"sv,      "return 1"sv, "]]"sv,     "]==]"sv,  "[==["sv,
    "x"sv,       "\x80"sv,   "\xc3\xa9"sv, "\xed\xa0\x80"sv, "\xf4\x90\x80\x80"sv, "OK"sv, "QUEUED"sv,
    "ok"sv,      "err"sv,    "map"sv,     "set"sv,         "double"sv,  "big_number"sv, "verbatim_string"sv,
    "txt"sv,     "mkd"sv,    "tx"sv,      "__index"sv,     "__gc"sv,    "__mode"sv,   "kv"sv,
    "*"sv,       "?"sv,      "[a-z]*"sv,  "h?llo"sv,       "\\"sv,      "'"sv,        "\""sv,
};

// Lua code for load / loadstring (raw bytes, quoted when used).
inline constexpr std::string_view kChunks[] = {
    "return 1"sv,
    "return ..."sv,
    "return KEYS"sv,
    "x = 1"sv,
    "return [==[x]==]"sv,
    "return [[a]] .. [=[b]=]"sv,
    "--[==[ long\ncomment ]==] return 5"sv,
    "return [==x"sv,
    "return [==[x]=]"sv,
    "--[[ x"sv,
    "return 1 +"sv,
    "local t = {} t[1] = t return t"sv,
    "error('in chunk')"sv,
    "return redis.call('ping')"sv,
    "while true do end"sv,
    "return function() return 1 end"sv,
    "\x1bLua"sv,
    "\x1bLuaQ\0\x01\x04\x08\x04\x08\0"sv,
    ""sv,
    "return getfenv(0)"sv,
    "return string.rep('x', 100)"sv,
    "local a <const> = 1"sv,
    "goto x"sv,
    "return 0x"sv,
    "return '\\300'"sv,
    "return \"\\z\""sv,
    "a.b:c'd'"sv,
    "return ((((((((((((((((((((1))))))))))))))))))))"sv,
};

// Key names of redis.call (a few on each shard of two, every type).
inline constexpr const char* kKeys[] = {"'k'", "'l'", "'h'", "'s'", "'z'", "'x'", "'b'", "'p'", "'g'", "'{a}1'",
                                        "'{a}2'", "'{b}1'", "'big'", "'nosuch'", "KEYS[1]", "KEYS[2]", "ARGV[1]",
                                        "''", "'k\\0'", "'{b}2'"};

// Values of redis.call.
inline constexpr const char* kValues[] = {"'v'", "''", "'1'", "1", "-1", "'abc'", "'\\0\\255'", "1.5", "(0/0)",
                                          "(1/0)", "(2^63)", "'9223372036854775807'", "'-9223372036854775808'",
                                          "'1e400'", "string.rep('x', 100)", "string.rep('\\255', 70000)",
                                          "'\\r\\n'", "ARGV[1]", "KEYS[1]", "'a'", "'b'", "'c'", "'*'", "'0'",
                                          "'3.0'", "'-inf'", "'+inf'", "'(1'", "'[a'", "'-'", "'+'", "'$'", "'>'"};

// redis.call templates: K a key, V a value, N a number, M a member, P a
// glob pattern, R a range bound, A any expression; other words literal.
inline constexpr const char* kCommands[] = {
    "set K V", "set K V ex N", "set K V px N nx", "set K V xx get", "set K V keepttl", "get K", "getdel K",
    "getex K persist", "incr K", "incrby K N", "incrbyfloat K N", "decr K", "decrby K N", "append K V",
    "strlen K", "getrange K N N", "setrange K N V", "mset K V K V", "mget K K", "msetnx K V", "setnx K V",
    "psetex K N V", "substr K N N", "lcs K K", "setbit K N N", "getbit K N", "bitcount K N N", "bitpos K N",
    "bitop and K K K", "bitfield K set i8 N N get u4 N", "bitfield_ro K get i8 N", "del K K", "unlink K",
    "exists K K", "expire K N", "pexpire K N gt", "expireat K N", "ttl K", "pttl K", "persist K",
    "expiretime K", "type K", "keys P", "scan N match P count N", "dbsize", "randomkey", "rename K K",
    "renamenx K K", "copy K K replace", "move K N", "select N", "swapdb N N", "object encoding K",
    "object freq K", "dump K", "restore K N V", "touch K", "memory usage K", "sort K limit N N alpha",
    "sort K by nosort get # store K", "sort_ro K", "flushdb", "flushall", "lpush K V V", "rpush K V",
    "lpushx K V", "lpop K N", "rpop K", "lrange K N N", "llen K", "lindex K N", "lset K N V",
    "linsert K before V V", "lrem K N V", "ltrim K N N", "lmove K K left right", "rpoplpush K K", "lpos K V rank N",
    "lmpop N K left count N", "blpop K N", "brpop K K N", "brpoplpush K K N", "blmove K K left left N",
    "hset K V V V V", "hsetnx K V V", "hget K V", "hmget K V V", "hgetall K", "hdel K V", "hincrby K V N",
    "hincrbyfloat K V N", "hkeys K", "hvals K", "hlen K", "hexists K V", "hstrlen K V", "hscan K N",
    "hrandfield K N withvalues", "sadd K M M", "srem K M", "smembers K", "sismember K M", "smismember K M M",
    "scard K", "spop K N", "srandmember K N", "sinter K K", "sintercard N K K", "sunionstore K K K",
    "sdiff K K", "smove K K M", "sscan K N", "zadd K N M", "zadd K nx ch N M N M", "zadd K incr N M",
    "zincrby K N M", "zscore K M", "zmscore K M M", "zrank K M", "zrevrank K M", "zrem K M", "zcard K",
    "zcount K R R", "zrange K N N withscores", "zrange K R R byscore limit N N", "zrange K R R bylex rev",
    "zrangebyscore K R R", "zrevrangebyscore K R R", "zrangebylex K R R", "zremrangebyrank K N N",
    "zremrangebyscore K R R", "zpopmin K N", "zpopmax K", "bzpopmin K N", "zrandmember K N withscores",
    "zunionstore K N K K weights N N", "zinterstore K N K", "zdiff N K K", "zrangestore K K N N",
    "zmpop N K min", "zscan K N", "xadd K * V V", "xadd K maxlen ~ N * V V", "xadd K N V V",
    "xrange K R R count N", "xrevrange K + -", "xlen K", "xdel K V", "xtrim K maxlen N",
    "xread count N streams K N", "xgroup create K V N mkstream", "xreadgroup group V V streams K >",
    "xack K V V", "xpending K V", "xclaim K V V N V", "xautoclaim K V V N N", "xinfo stream K", "xsetid K V",
    "pfadd K M M", "pfcount K K", "pfmerge K K", "geoadd K N N M", "geodist K M M", "geopos K M",
    "geosearch K fromlonlat N N byradius N km asc", "georadius K N N N m withdist", "geohash K M",
    "publish V V", "spublish K V", "ping", "ping V", "echo V", "time", "info", "info keyspace",
    "config get V", "config set V V", "command count", "command info V", "command getkeys V V V",
    "lastsave", "role", "wait N N", "slowlog get", "acl whoami", "acl cat", "client id", "client info",
    "client list", "client setname V", "client reply off", "client tracking on", "client kill V",
    "hello 3", "auth V V", "quit", "reset", "multi", "exec", "discard", "watch K", "unwatch",
    "subscribe V", "psubscribe P", "unsubscribe", "monitor", "sync", "shutdown nosave", "debug sleep 0",
    "debug object K", "debug set-active-expire 0", "eval V N", "evalsha V N", "eval_ro V N", "fcall V N",
    "script load V", "script flush", "script exists V", "script kill", "function load V", "function flush",
    "function list", "function kill", "function stats", "save", "bgsave", "bgrewriteaof", "replicaof no one",
    "failover", "latency latest", "memory stats", "module list", "object help", "pubsub channels",
    "randomkey", "lolwut", "dbsize", "getset K V", "pexpiretime K", "V", "V V V",
};

// Library functions and what their arguments are: a any expression, n a
// number, i a small count or index, s a string literal, S any string
// (short, long, a variable ...), t a table, f a function, p a Lua pattern,
// r gsub's replacement, F a string.format format, T a struct format, J a
// JSON text, M a MessagePack text, b a tonumber base, c a collectgarbage
// option, C a coroutine, L what load/loadstring take, x a bit.* number, o a
// cjson setting, k a redis.call command and its arguments, * 0-3 more.
struct LibFn {
  const char* name;
  const char* args;
};
inline constexpr LibFn kLib[] = {
    {"assert", "a*"}, {"collectgarbage", "ci"}, {"error", "ai"}, {"gcinfo", ""}, {"getmetatable", "a"},
    {"ipairs", "t"}, {"load", "Ls"}, {"loadstring", "Ls"}, {"next", "ta"}, {"pairs", "t"}, {"pcall", "f*"},
    {"rawequal", "aa"}, {"rawget", "ta"}, {"rawset", "taa"}, {"select", "i*"}, {"setmetatable", "tt"},
    {"tonumber", "Sb"}, {"tostring", "a"}, {"type", "a"}, {"unpack", "tii"}, {"xpcall", "ff"},
    {"newproxy", "a"}, {"setfenv", "ft"}, {"getfenv", "a"}, {"print", "a"}, {"require", "s"},
    {"dofile", "s"}, {"module", "s"},
    {"coroutine.create", "f"}, {"coroutine.resume", "C*"}, {"coroutine.running", ""},
    {"coroutine.status", "C"}, {"coroutine.wrap", "f"}, {"coroutine.yield", "*"},
    {"string.byte", "Sii"}, {"string.char", "nn*"}, {"string.dump", "f"}, {"string.find", "Spib"},
    {"string.format", "F*"}, {"string.gmatch", "Sp"}, {"string.gsub", "Spri"}, {"string.len", "S"},
    {"string.lower", "S"}, {"string.match", "Spi"}, {"string.rep", "Si"}, {"string.reverse", "S"},
    {"string.sub", "Sii"}, {"string.upper", "S"}, {"string.gfind", "Sp"},
    {"table.concat", "tsii"}, {"table.insert", "tia"}, {"table.maxn", "t"}, {"table.remove", "ti"},
    {"table.sort", "tf"}, {"table.getn", "t"}, {"table.setn", "ti"}, {"table.foreach", "tf"},
    {"table.foreachi", "tf"},
    {"math.abs", "n"}, {"math.acos", "n"}, {"math.asin", "n"}, {"math.atan", "n"}, {"math.atan2", "nn"},
    {"math.ceil", "n"}, {"math.cos", "n"}, {"math.cosh", "n"}, {"math.deg", "n"}, {"math.exp", "n"},
    {"math.floor", "n"}, {"math.fmod", "nn"}, {"math.frexp", "n"}, {"math.ldexp", "nn"}, {"math.log", "n"},
    {"math.log10", "n"}, {"math.max", "nn*"}, {"math.min", "nn*"}, {"math.mod", "nn"}, {"math.modf", "n"},
    {"math.pow", "nn"}, {"math.rad", "n"}, {"math.random", "ii"}, {"math.randomseed", "n"},
    {"math.sin", "n"}, {"math.sinh", "n"}, {"math.sqrt", "n"}, {"math.tan", "n"}, {"math.tanh", "n"},
    {"os.clock", ""}, {"os.time", ""}, {"os.exit", "i"}, {"io.write", "s"},
    {"cjson.encode", "a"}, {"cjson.decode", "J"}, {"cjson.encode_keep_buffer", "o"},
    {"cjson.encode_max_depth", "i"}, {"cjson.decode_max_depth", "i"}, {"cjson.encode_number_precision", "i"},
    {"cjson.encode_sparse_array", "ooo"}, {"cjson.encode_invalid_numbers", "o"},
    {"cjson.decode_invalid_numbers", "o"}, {"cjson.new", ""},
    {"cmsgpack.pack", "a*"}, {"cmsgpack.unpack", "M"}, {"cmsgpack.unpack_one", "Mi"},
    {"cmsgpack.unpack_limit", "Mii"},
    {"struct.pack", "T*"}, {"struct.unpack", "TSi"}, {"struct.size", "T"},
    {"bit.tobit", "x"}, {"bit.tohex", "xi"}, {"bit.bnot", "x"}, {"bit.band", "xx*"}, {"bit.bor", "xx*"},
    {"bit.bxor", "xx*"}, {"bit.lshift", "xi"}, {"bit.rshift", "xi"}, {"bit.arshift", "xi"},
    {"bit.rol", "xi"}, {"bit.ror", "xi"}, {"bit.bswap", "x"},
    {"redis.call", "k"}, {"redis.pcall", "k"}, {"redis.sha1hex", "S"}, {"redis.error_reply", "s"},
    {"redis.status_reply", "s"}, {"redis.log", "ia*"}, {"redis.setresp", "n"}, {"redis.set_repl", "n"},
    {"redis.replicate_commands", ""}, {"redis.breakpoint", ""}, {"redis.debug", "a*"},
    {"redis.acl_check_cmd", "k"}, {"redis.register_function", "sf"},
};

// Values that are not calls: constants, library tables, protected things.
inline constexpr const char* kThings[] = {
    "_G",           "_G._G",             "_VERSION",          "getmetatable('')",
    "getmetatable('').__index",          "redis",             "string",           "cjson.null",
    "redis.REDIS_VERSION",               "redis.REDIS_VERSION_NUM", "redis.LOG_WARNING", "redis.REPL_ALL",
    "KEYS",         "ARGV",              "cjson._NAME",       "cjson._VERSION",   "math.huge",
    "cjson",        "cmsgpack",          "struct",            "bit",              "os",
    "coroutine",    "table",             "math",              "debug",            "package",
    "nosuchglobal", "redis.nosuch",      "string.nosuch",     "_G.KEYS",          "getmetatable(_G)",
    "getmetatable(redis)",               "select('#', ...)",  "{...}",            "arg",
    "print",        "loadfile",          "newproxy",          "getfenv",          "setfenv",
    "redis.call",   "pcall",             "error",             "unpack",           "next",
};

// collectgarbage's options.
inline constexpr const char* kGcOptions[] = {"'collect'", "'stop'",       "'restart'", "'count'", "'step'",
                                             "'setpause'", "'setstepmul'", "'nope'",    "''",      "nil",
                                             "1"};
inline constexpr const char* kBases[] = {"10", "2", "16", "36", "37", "1", "0", "(-1)", "8", "1e308",
                                         "(2^31)", "(0/0)"};
inline constexpr const char* kBitNumbers[] = {"0",          "1",          "(-1)",   "(2^31)",   "(-2^31)",   "(2^32)",
                                              "(2^53)",     "(0/0)",      "(1/0)",  "0x7fffffff", "0x80000000",
                                              "65535",      "1.5",        "(-0.5)", "(2^52+0.5)", "1e308",    "(-1e308)",
                                              "4294967295", "0x12345678", "(-2147483648)", "2147483647", "'12'",
                                              "'0x10'", "'x'"};
inline constexpr const char* kCjsonSettings[] = {"'on'", "'off'", "'null'", "true", "false", "0",   "1",
                                                 "nil",  "1000",  "(-1)",   "'x'",  "14",    "0.5", "(2^31)"};

}  // namespace peregrine_fuzz
