// The script fuzzer's generator of Lua programs (fuzz/script_fuzzer.cc):
// statements in lua_gen_stmt.cc, expressions and library calls in
// lua_gen_expr.cc, the tables it picks from in lua_gen_data.h.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine_fuzz {

// Counts a nesting level for as long as it lives.
class Nest {
 public:
  explicit Nest(int* depth) : depth_(depth) { ++*depth_; }
  ~Nest() { --*depth_; }
  Nest(const Nest&) = delete;
  Nest& operator=(const Nest&) = delete;

 private:
  int* depth_;
};

// --- The Lua program generator ---
//
// Reads its choices from `in`; what it writes is described in the header
// comment of fuzz/script_fuzzer.cc.
class LuaGen {
 public:
  explicit LuaGen(FuzzedDataProvider& in) : in_(in) {}

  std::string Program();

 private:
  static constexpr int kMaxNodes = 260;
  static constexpr int kMaxExprDepth = 5;
  static constexpr int kMaxBlockDepth = 4;

  bool Spent() const { return nodes_ >= kMaxNodes || in_.remaining_bytes() == 0; }
  size_t Pick(size_t n) { return in_.ConsumeIntegralInRange<size_t>(0, n - 1); }
  template <typename T, size_t N>
  T PickOf(const T (&a)[N]) {
    return a[Pick(N)];
  }
  const char* One(std::initializer_list<const char*> l) { return l.begin()[Pick(l.size())]; }
  std::string Name(char prefix) { return std::string(1, prefix) + std::to_string(next_name_++); }

  // `s` as a Lua string literal.
  static std::string Quote(std::string_view s);

  // Whether a construct that costs much (a string of MBs, a table of a
  // million elements, a written-out hard case) may go here: not where it
  // could run many times (a loop, a function), so that a program stays
  // fast under the sanitizers.
  bool Once() const { return loop_depth_ == 0 && fn_depth_ == 0; }

  // --- Statements (lua_gen_stmt.cc) ---
  std::string Block(size_t max);
  std::string Stmt();
  std::string LoopBody(const std::string& var);
  std::string Fresh();
  std::string Var();
  std::string Target();
  std::string Prefix();
  std::string Protected();
  std::string Recursion();
  std::string Special();

  // --- Expressions (lua_gen_expr.cc) ---
  std::string Expr();
  std::string Terminal();
  std::string Str();
  std::string StrExpr();
  std::string BigString();
  std::string Table();
  std::string SpecialTable();
  std::string Func();
  std::string Handler();
  std::string ErrorValue();
  std::string Coroutine();
  std::string Returns();
  std::string Call();
  std::string Args(size_t max);

  // --- Library calls (lua_gen_expr.cc) ---
  std::string LibCall();
  std::string Arg(char kind);
  std::string Subject(const std::string& pattern);
  std::string Pattern();
  std::string Format();
  std::string StructFormat();
  std::string Json();
  void JsonValue(std::string* j, int depth);
  std::string Msgpack();
  std::string RedisCall(const char* fn = nullptr);

  FuzzedDataProvider& in_;
  int nodes_ = 0;
  int depth_ = 0;
  int block_depth_ = 0;
  int loop_depth_ = 0;
  int fn_depth_ = 0;
  int next_name_ = 0;
  bool costly_pattern_ = false;
  std::vector<std::string> scope_;
};

}  // namespace peregrine_fuzz
