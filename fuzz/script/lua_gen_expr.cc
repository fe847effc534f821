// The script fuzzer's Lua generator (script/lua_gen.h): expressions,
// library calls and redis.call.
#include "script/lua_gen.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "script/lua_gen_data.h"

namespace peregrine_fuzz {

std::string LuaGen::Quote(std::string_view s) {
  std::string q = "'";
  for (unsigned char c : s) {
    if (c == '\\' || c == '\'') {
      q += '\\';
      q += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      q += static_cast<char>(c);
    } else {
      char b[5];
      std::snprintf(b, sizeof(b), "\\%03u", c);
      q += b;
    }
  }
  return q + "'";
}

// --- Expressions ---

std::string LuaGen::Expr() {
  nodes_++;
  if (depth_ >= kMaxExprDepth || Spent()) return Terminal();
  depth_++;
  std::string s;
  switch (Pick(26)) {
    case 0:
    case 1:
    case 2:
      s = Terminal();
      break;
    case 3:
    case 4:
    case 5:
    case 6:
      s = LibCall();
      break;
    case 7:
    case 8:
      s = RedisCall();
      break;
    case 9:
      s = Table();
      break;
    case 10:
      s = SpecialTable();
      break;
    case 11: {
      static constexpr const char* kOps[] = {"+",  "-",  "*", "/",  "%",  "^",   "..",
                                             "==", "~=", "<", "<=", ">",  ">=",  "and", "or"};
      s = "(" + Expr() + " " + PickOf(kOps) + " " + Expr() + ")";
      break;
    }
    case 12: {
      static constexpr const char* kUnary[] = {"-", "not ", "#"};
      s = std::string("(") + PickOf(kUnary) + "(" + Expr() + "))";
      break;
    }
    case 13:
      s = Func();
      break;
    case 14:
      s = "f" + std::to_string(1 + Pick(3)) + "(" + Args(3) + ")";
      break;
    case 15:
      s = "(" + Expr() + ")[" + Expr() + "]";
      break;
    case 16: {
      static constexpr const char* kMethods[] = {"rep", "sub", "byte", "upper", "len", "format", "find",
                                                 "gsub", "match", "reverse", "lower", "gmatch"};
      s = "(" + Str() + "):" + PickOf(kMethods) + "(" + Args(2) + ")";
      break;
    }
    case 17:
      s = Coroutine();
      break;
    case 18:
      s = BigString();
      break;
    case 19:
      s = PickOf(kThings);
      break;
    case 20:
      s = "redis." + std::string(One({"error_reply", "status_reply"})) + "(" + Str() + ")";
      break;
    case 21:
      s = "(" + Expr() + ")." + One({"x", "map", "err", "ok", "n", "rep", "call"});
      break;
    case 22:
      s = Call() + "(" + Args(3) + ")";
      break;
    default:
      s = Terminal();
      break;
  }
  depth_--;
  return s;
}

std::string LuaGen::Terminal() {
  switch (Pick(7)) {
    case 0: return PickOf(kNumbers);
    case 1: return Str();
    case 2: return Var();
    case 3: return One({"nil", "true", "false", "{}", "cjson.null", "KEYS", "ARGV"});
    case 4: return Quote(in_.ConsumeRandomLengthString(12));
    case 5: return PickOf(kSmall);
    default: return Var();
  }
}

std::string LuaGen::Str() {
  switch (Pick(4)) {
    case 0: return Quote(in_.ConsumeRandomLengthString(16));
    case 1: return One({"[==[x]==]", "[[\n]]", "[[a\\0]]", "'\\0\\1\\2'", "\"\\255\"", "KEYS[1]", "ARGV[1]"});
    default: return Quote(PickOf(kStrings));
  }
}

// Any string: short, long, a variable, an expression.
std::string LuaGen::StrExpr() {
  switch (Pick(5)) {
    case 0: return BigString();
    case 1: return Var();
    case 2: return Expr();
    default: return Str();
  }
}

std::string LuaGen::BigString() {
  static constexpr const char* kSmallRepeats[] = {"0", "1", "2", "10", "100", "(-1)", "255", "1000"};
  return "string.rep(" + Str() + ", " + (Once() ? PickOf(kRepeats) : PickOf(kSmallRepeats)) +
         (in_.ConsumeBool() ? ", " + Str() : "") + ")";
}

std::string LuaGen::Table() {
  std::string s = "{";
  for (size_t i = 0, n = Pick(6); i < n; i++) {
    switch (Pick(3)) {
      case 0: s += "[" + Expr() + "] = " + Expr(); break;
      case 1: s += std::string(One({"x", "n", "map", "set", "err", "ok", "double", "a", "b"})) + " = " + Expr(); break;
      default: s += Expr(); break;
    }
    s += ", ";
  }
  return s + "}";
}

std::string LuaGen::SpecialTable() {
  static constexpr const char* kDeep[] = {"10", "100", "999", "1000", "1001", "2000", "10000", "100000"};
  static constexpr const char* kCount[] = {"0", "1", "100", "7000", "8000", "100000", "1e6"};
  const size_t kinds = Once() ? 8 : 4;  // (deep and long ones only where they run once)
  switch (Pick(12)) {
    case 0:
      return std::string("(function() local t = {} for i = 1, ") + kDeep[Pick(kinds)] + " do t = {t} end return t end)()";
    case 1:
      return "(function() local t = {1, 2} t[3] = t t.x = t return t end)()";
    case 2:
      return std::string("(function() local t = {} t.") + One({"map", "set"}) +
             " = t t[1] = t return t end)()";
    case 3:
      return "(function() local m = {} local t = {map = m} m[t] = t m.k = t m[1] = {set = m} return t end)()";
    case 4:
      return std::string("(function() local t = {} for i = 1, ") + kCount[Pick(kinds - 1)] + " do t[i] = " +
             One({"i", "'v'", "{i}", "i * 1.5", "{double = i}", "tostring(i)"}) + " end return t end)()";
    case 5:
      return "{[1] = 1, [2] = 2, [4] = 4, [1000000] = 5, [-1] = 0, [0] = 0, [1.5] = 1}";
    case 6: {
      static constexpr const char* kEvents[] = {"__index", "__newindex", "__call", "__tostring", "__len",
                                                "__eq",    "__lt",       "__le",   "__concat",   "__unm",
                                                "__add",   "__mode",     "__metatable", "__gc",   "__div"};
      std::string mt = "{";
      for (size_t i = 0, n = 1 + Pick(3); i < n; i++)
        mt += std::string(PickOf(kEvents)) + " = " + (in_.ConsumeBool() ? Func() : Expr()) + ", ";
      return "setmetatable(" + (in_.ConsumeBool() ? Table() : std::string("{}")) + ", " + mt + "})";
    }
    case 7:
      switch (Pick(9)) {
        case 0: return "{err = " + StrExpr() + "}";
        case 1: return "{ok = " + StrExpr() + "}";
        case 2: return "{double = " + std::string(PickOf(kNumbers)) + "}";
        case 3: return "{big_number = " + StrExpr() + "}";
        case 4: return "{verbatim_string = {format = " + Str() + ", string = " + StrExpr() + "}}";
        case 5: return "{map = " + Table() + "}";
        case 6: return "{set = " + Table() + "}";
        case 7: return "{err = " + Str() + ", ignore_error_stats_update = true}";
        default: return "{map = {[" + Expr() + "] = " + Expr() + "}, set = {}, ok = 1, err = {}}";
      }
    case 8:
      return "{...}";
    case 9:
      return "{n = select('#', ...), ...}";
    case 10:
      return "{" + Expr() + ", nil, " + Expr() + ", nil}";
    default:
      return "redis.call('" + std::string(One({"lrange', 'big', 0, -1", "hgetall', 'h", "smembers', 's",
                                                  "zrange', 'z', 0, -1, 'withscores", "xrange', 'x', '-', '+",
                                                  "keys', '*", "config', 'get', '*", "command', 'docs",
                                                  "info"})) + "')";
  }
}

std::string LuaGen::Func() {
  if (Spent()) return One({"print", "error", "pcall", "redis.call", "tostring", "f1"});
  switch (Pick(4)) {
    case 0:
      return One({"error", "pcall", "redis.call", "redis.pcall", "tostring", "coroutine.yield", "f1", "f2",
                     "string.rep", "select", "unpack", "next", "type", "loadstring", "coroutine.wrap",
                     "cjson.encode", "cmsgpack.pack", "table.sort", "setmetatable", "collectgarbage"});
    default: {
      const size_t scope = scope_.size();
      scope_.push_back("a");
      scope_.push_back("b");
      const int loops = loop_depth_;
      loop_depth_ = 0;  // (break cannot leave a function)
      fn_depth_++;
      std::string s = "function(a, b, ...)\n" + Block(4) + "return " + Returns() + "\nend";
      loop_depth_ = loops;
      fn_depth_--;
      scope_.resize(scope);
      return s;
    }
  }
}

std::string LuaGen::Handler() {
  switch (Pick(6)) {
    case 0: return "function(e) return e end";
    case 1: return "function(e) error(e) end";
    case 2: return "function(e) return redis.call('incr', 'handler') end";
    case 3: return One({"nil", "1", "'x'", "{}", "print", "error", "f1"});
    default: return Func();
  }
}

std::string LuaGen::ErrorValue() {
  switch (Pick(4)) {
    case 0: return Str();
    case 1: return SpecialTable();
    case 2: return One({"nil", "{}", "{err = 'x'}", "1", "0/0", "coroutine.running()", "print", "cjson.null"});
    default: return Expr();
  }
}

std::string LuaGen::Coroutine() {
  switch (Pick(5)) {
    case 0: return "coroutine.create(" + Func() + ")";
    case 1: return "coroutine.wrap(" + Func() + ")(" + Args(2) + ")";
    case 2: return "coroutine.resume(coroutine.create(" + Func() + "), " + Args(2) + ")";
    case 3: return "coroutine.running()";
    default: return "coroutine.yield(" + Args(2) + ")";
  }
}

std::string LuaGen::Returns() {
  if (Spent()) return Terminal();
  switch (Pick(6)) {
    case 0: return "";
    case 1: return Expr() + ", " + Expr();
    case 2: return SpecialTable();
    default: return Expr();
  }
}

std::string LuaGen::Call() {
  switch (Pick(3)) {
    case 0: return "f" + std::to_string(1 + Pick(3));
    case 1: return "(" + Func() + ")";
    default: return std::string("(") + PickOf(kThings) + ")";
  }
}

std::string LuaGen::Args(size_t max) {
  std::string s;
  for (size_t i = 0, n = Pick(max + 1); i < n; i++) s += (i ? ", " : "") + Expr();
  return s;
}

// --- Library calls ---

std::string LuaGen::LibCall() {
  const LibFn& fn = kLib[Pick(std::size(kLib))];
  std::string_view kinds(fn.args);
  if (kinds == "k") return RedisCall(fn.name);
  std::vector<std::string> args(kinds.size());
  const size_t how = Pick(10);
  // A pattern first: the subject (the first argument) depends on it.
  const size_t pattern = how == 7 ? std::string_view::npos : kinds.find('p');
  bool costly = false;
  if (pattern != std::string_view::npos) {
    args[pattern] = Pattern();
    costly = costly_pattern_;
  }
  for (size_t i = 0; i < kinds.size(); i++)
    if (i != pattern) args[i] = how == 7 ? Expr() : Arg(kinds[i]);
  if (costly) args[0] = "string.sub(tostring(" + args[0] + "), 1, 16)";
  if (how == 8 && !args.empty()) args.resize(Pick(args.size()));
  if (how == 9)
    for (size_t i = 0, n = 1 + Pick(3); i < n; i++) args.push_back(Expr());
  std::string s;
  const std::string_view name(fn.name);
  if (name.substr(0, 7) == "string." && !args.empty() && in_.ConsumeBool()) {
    // A method call on the first argument.
    s = "(" + args[0] + "):" + std::string(name.substr(7)) + "(";
    args.erase(args.begin());
  } else {
    s = std::string(name) + "(";
  }
  for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + args[i];
  return s + ")";
}

std::string LuaGen::Arg(char kind) {
  switch (kind) {
    case 'a': return Expr();
    case 'n': return Pick(4) == 0 ? Expr() : PickOf(kNumbers);
    case 'i': return Pick(5) == 0 ? Expr() : PickOf(kSmall);
    case 's': return Str();
    case 'S': return StrExpr();
    case 't': return Pick(3) == 0 ? SpecialTable() : Pick(2) == 0 ? Table() : Expr();
    case 'f': return Func();
    case 'p': return Pattern();
    case 'r':
      switch (Pick(5)) {
        case 0: return Quote(One({"%0", "%1", "%2%1", "%", "%%", "x%9", "%a", ""}));
        case 1: return Table();
        case 2: return Func();
        case 3: return One({"nil", "false", "1", "{}"});
        default: return Str();
      }
    case 'F': return Format();
    case 'T': return StructFormat();
    case 'J': return Pick(4) == 0 ? Expr() : Json();
    case 'M': return Pick(4) == 0 ? Expr() : Msgpack();
    case 'b': return PickOf(kBases);
    case 'c': return PickOf(kGcOptions);
    case 'C': return Pick(3) == 0 ? Expr() : Coroutine();
    case 'L':
      switch (Pick(5)) {
        case 0:
          return "(function() local n = 0 return function() n = n + 1 collectgarbage('" +
                 std::string(One({"collect", "step", "count"})) + "') if n < " + One({"2", "3", "10"}) +
                 " then return " + Quote(PickOf(kChunks)) + " end return " +
                 One({"nil", "''", "{}", "1", "'x'"}) + " end end)()";
        case 1: return "string.dump(" + Func() + ")";
        case 2: return Expr();
        default: return Quote(PickOf(kChunks));
      }
    case 'x': return Pick(4) == 0 ? Expr() : PickOf(kBitNumbers);
    case 'o': return PickOf(kCjsonSettings);
    case '*': return Args(3);
    default: return Expr();
  }
}

// A subject for a pattern: bounded when the pattern could take
// polynomially long (two or more unbounded repetitions: Lua's matcher
// backtracks, n^k steps for k of them on n bytes, with no hook inside;
// fuzz/regressions/script/lua-pattern-backtracking-unbounded-time).
std::string LuaGen::Subject(const std::string& pattern) {
  std::string subject = StrExpr();
  if (costly_pattern_) subject = "string.sub(tostring(" + subject + "), 1, 16)";
  return subject + ", " + pattern;
}

std::string LuaGen::Pattern() {
  costly_pattern_ = false;
  if (Pick(4) == 0) return Quote(One({"(a*)", "%a+", "[%w_]+", "(.-)", "%b()", "%f[%w]", "^(.-)$", "(()",
                                         "[a", "%", "(%1)", "%g", "[^]", "[]", "(.)%1", "()", "%z", "[%a-z]",
                                         "[a-]", "[]-a]", "%f", "%b", "%bx", "((((((((((x))))))))))", ".",
                                         "", "^", "$", "^$", "[^%s]+", "(%d+)-(%d+)", "%1", "%0"}));
  static constexpr const char* kSingles[] = {".",  "%a", "%d", "%s", "%w", "%x", "%p", "%c", "%u",
                                             "%l", "%z", "%A", "%S", "a",  "b",  "x",  " ",  "%%",
                                             "%.", "%[", "\\0", "\\255", "%g"};
  std::string p;
  int repeats = 0, open = 0;
  if (Pick(4) == 0) p += "^";
  for (size_t i = 0, n = 1 + Pick(7); i < n; i++) {
    switch (Pick(8)) {
      case 0:
      case 1:
      case 2: {
        if (Pick(5) == 0) {
          p += "[";
          if (in_.ConsumeBool()) p += "^";
          for (size_t j = 0, m = Pick(4); j < m; j++) p += One({"a", "a-z", "%d", "]", "-", "%", "0-9", "%w"});
          if (Pick(6) != 0) p += "]";
        } else {
          p += PickOf(kSingles);
        }
        const char* q = One({"", "", "*", "+", "-", "?"});
        if (q[0] == '*' || q[0] == '+' || q[0] == '-') repeats++;
        p += q;
        break;
      }
      case 3:
        p += "(";
        open++;
        break;
      case 4:
        p += open > 0 || Pick(4) == 0 ? ")" : "()";
        if (open > 0) open--;
        break;
      case 5:
        p += One({"%b()", "%bxy", "%f[%w]", "%f[^a]", "%f[", "%b"});
        break;
      case 6:
        p += "%" + std::to_string(Pick(10));
        break;
      default:
        p += One({"$", "%", "-", "x"});
        break;
    }
  }
  while (open-- > 0 && in_.ConsumeBool()) p += ")";
  costly_pattern_ = repeats >= 2;
  std::string lua;
  for (size_t i = 0; i < p.size(); i++) {  // "\\0" and "\\255" are Lua escapes already
    if (p[i] == '\'') lua += "\\'";
    else lua += p[i];
  }
  return "'" + lua + "'";
}

std::string LuaGen::Format() {
  if (Pick(5) == 0) return Str();
  std::string f;
  for (size_t i = 0, n = 1 + Pick(5); i < n; i++) {
    switch (Pick(4)) {
      case 0: f += One({"abc", " ", "\\0", "%%", "x\\n"}); break;
      default: {
        f += "%";
        for (size_t j = 0, m = Pick(3); j < m; j++) f += One({"-", "+", " ", "#", "0"});
        f += One({"", "", "5", "10", "99", "100", "999", "1"});
        f += One({"", "", ".0", ".2", ".99", ".100", ".", ".14"});
        f += One({"d", "i", "c", "o", "u", "x", "X", "e", "E", "f", "g", "G", "q", "s", "a", "A", "n", "p",
                     "*", "l", "h", "%", "z", ""});
      }
    }
  }
  return "'" + f + "'";
}

std::string LuaGen::StructFormat() {
  if (Pick(6) == 0) return Str();
  std::string f;
  for (size_t i = 0, n = 1 + Pick(8); i < n; i++) {
    switch (Pick(5)) {
      case 0: f += One({"<", ">", "=", "!", "!1", "!2", "!4", "!8", "!16", "!3", "!99999999999"}); break;
      default:
        f += One({"b", "B", "h", "H", "l", "L", "T", "i", "I", "f", "d", "c", "s", "x", "X", " ", "z", "j"});
        f += One({"", "", "", "0", "1", "2", "4", "8", "16", "32", "33", "3", "99999999999999999",
                     "4294967297", "7"});
    }
  }
  return "'" + f + "'";
}

std::string LuaGen::Json() {
  if (Pick(6) == 0) return Quote(PickOf(kStrings));
  std::string j;
  JsonValue(&j, 0);
  if (Pick(8) == 0 && !j.empty()) j.resize(Pick(j.size()));  // cut short
  return Quote(j);
}

void LuaGen::JsonValue(std::string* j, int depth) {
  switch (depth > 5 || Spent() ? Pick(3) : Pick(9)) {
    case 0: *j += One({"0", "-0", "1.5", "1e400", "-1e400", "123456789012345678901234567890", "0x10", "NaN",
                          "Infinity", "-Infinity", "1e-400", "01", "1.", ".5", "-", "2e", "9007199254740993"});
      break;
    case 1: *j += One({"\"\"", "\"a\"", "\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\udc00x\"",
                          "\"\\x\"", "\"\\u12\"", "\"\x01\"", "\"\xff\"", "\"\\/\\b\\f\\n\\r\\t\""});
      break;
    case 2: *j += One({"true", "false", "null", "nul", "tru", ""}); break;
    case 3: *j += std::string(1 + Pick(3000), '['); break;
    case 4:
    case 5: {
      *j += "[";
      for (size_t i = 0, n = Pick(4); i < n; i++) {
        if (i) *j += ",";
        JsonValue(j, depth + 1);
      }
      *j += One({"]", "]", "]", ",]", ""});
      break;
    }
    default: {
      *j += "{";
      for (size_t i = 0, n = Pick(4); i < n; i++) {
        if (i) *j += ",";
        *j += One({"\"a\"", "\"\"", "\"a\"", "1", "\"\\u0000\""});
        *j += ":";
        JsonValue(j, depth + 1);
      }
      *j += One({"}", "}", "}", ",}", ""});
    }
  }
}

std::string LuaGen::Msgpack() {
  static constexpr uint8_t kHeads[] = {0x90, 0x91, 0x93, 0x9f, 0x80, 0x81, 0x8f, 0xa0, 0xa3, 0xbf, 0xc0,
                                       0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb,
                                       0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd8, 0xd9,
                                       0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff, 0x00, 0x7f};
  std::string m;
  for (size_t i = 0, n = 1 + Pick(8); i < n; i++) {
    m += static_cast<char>(PickOf(kHeads));
    switch (Pick(4)) {
      case 0: break;
      case 1: m += std::string(Pick(9), '\xff'); break;
      case 2: m += std::string(Pick(9), '\0'); break;
      default: m += in_.ConsumeRandomLengthString(8); break;
    }
  }
  return Quote(m);
}

// redis.call / redis.pcall (or `fn`, any function taking a command) with
// a command from the templates.
std::string LuaGen::RedisCall(const char* fn) {
  std::string s = fn != nullptr ? fn : One({"redis.call", "redis.pcall", "redis.pcall", "redis.call"});
  s += "(";
  const std::string_view t = PickOf(kCommands);
  bool first = true;
  size_t pos = 0;
  const bool hostile = Pick(8) == 0;
  while (pos < t.size()) {
    size_t end = t.find(' ', pos);
    if (end == std::string_view::npos) end = t.size();
    const std::string_view word = t.substr(pos, end - pos);
    pos = end + 1;
    std::string arg;
    if (word == "K") {
      arg = Pick(6) == 0 ? "'k' .. " + std::string(PickOf(kSmall)) : PickOf(kKeys);
    } else if (word == "V" || word == "M") {
      arg = Pick(6) == 0 ? StrExpr() : PickOf(kValues);
    } else if (word == "N") {
      arg = Pick(3) == 0 ? PickOf(kNumbers) : PickOf(kSmall);
    } else if (word == "R") {
      arg = Quote(One({"-inf", "+inf", "(1", "[a", "-", "+", "0", "1", "(a", "x", "-1", "nan"}));
    } else if (word == "P") {
      arg = Quote(One({"*", "k*", "?", "[a-z]*", "\\", "[", "*{a}*", ""}));
    } else if (word == "A") {
      arg = Expr();
    } else {
      std::string w(word);
      if (first && Pick(3) == 0) std::transform(w.begin(), w.end(), w.begin(), ::toupper);
      arg = Quote(w);
    }
    if (hostile && Pick(3) == 0) arg = Expr();
    s += (first ? "" : ", ") + arg;
    first = false;
  }
  if (hostile)
    for (size_t i = 0, n = Pick(3); i < n; i++) s += ", " + Expr();
  return s + ")";
}

}  // namespace peregrine_fuzz
