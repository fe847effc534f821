// FUNCTION libraries (Redis 7 functions; docs/scripting.md): the server's
// registry of libraries and their functions, shared by every worker (read
// under a mutex when a worker meets a library it has not loaded, or a
// change). Each worker loads a library's code into its own interpreter on
// first use (LuaEngine::FindFunction).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scripting/script_cache.h"

namespace peregrine {

// Function names compare without case in the server's function index, as
// Redis's functions dictionary hashes them (FCALL test finds TEST; two
// libraries cannot both have test and Test); library names keep theirs.
struct FunctionNameLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const;
};

struct FunctionLibrary {
  std::string name;
  std::string code;  // as loaded, the "#!lua name=..." line included
  size_t body_at = 0;  // where the code after that line starts (its line feed kept)
  struct Function {
    std::shared_ptr<ScriptInfo> run;  // sha: the function's name; flags: its flags
    std::optional<std::string> description;
  };
  std::map<std::string, Function> functions;  // by name (with its case, as Redis's library dict)
  uint64_t id = 0;  // the registry's, new for every load
};

// Parses a library's first line ("#!<engine> name=<name>", Redis's
// functionExtractLibMetaData) into lib->name and lib->body_at. False with
// *err (Redis's text, without "ERR ").
bool ParseLibraryMetadata(std::string_view code, FunctionLibrary* lib, std::string* err);

// Letters, digits and '_' only, at least one (library and function names).
bool ValidFunctionName(std::string_view name);

// Parses one register_function flag (Redis's flag names, any case).
std::optional<uint32_t> FunctionFlag(std::string_view name);
// The names of `flags`, in Redis's order (FUNCTION LIST).
std::vector<std::string_view> FunctionFlagNames(uint32_t flags);

class FunctionRegistry {
 public:
  struct Found {
    std::shared_ptr<FunctionLibrary> library;
    std::shared_ptr<ScriptInfo> run;
  };
  std::optional<Found> Find(std::string_view function) const;
  // Adds a library (its functions registered already); with replace, one of
  // the same name goes. False with *err (Redis's text, without "ERR ").
  bool Add(std::shared_ptr<FunctionLibrary> lib, bool replace, std::string* err);
  // FUNCTION RESTORE: adds `libs` (distinct names, functions registered)
  // all or none: with flush, they become the only libraries; else a
  // library of the same name stays (an error) or, with replace, goes.
  // False with *err (Redis's libraryJoin texts).
  bool Join(std::vector<std::shared_ptr<FunctionLibrary>> libs, bool replace, bool flush, std::string* err);
  bool Delete(std::string_view library);
  bool HasLibrary(std::string_view library) const;
  void Flush();
  // The libraries whose names match `pattern` (all without one), by name.
  std::vector<std::shared_ptr<FunctionLibrary>> List(std::optional<std::string_view> pattern) const;
  size_t libraries() const;
  size_t functions() const;
  size_t code_bytes() const;
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<FunctionLibrary>> libraries_;
  std::map<std::string, Found, FunctionNameLess> functions_;
  uint64_t next_id_ = 1;
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace peregrine
