// The scripts the server knows (EVAL, SCRIPT LOAD), by SHA1 of the body:
// one cache for the whole server, so that a script loaded through one
// connection is there for EVALSHA on every other at once. Each worker
// compiles a script into its own interpreter the first time it runs it
// (server/lua_engine.h); the cache holds only the bodies and what is
// known about them. Read under a mutex, on a worker's first use of a script.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace peregrine {

// SHA1 of `data` as 40 lowercase hex digits (Redis's sha1hex).
std::string Sha1Hex(std::string_view data);

// The `#!lua` shebang's flags (Redis's SCRIPT_FLAG_*).
enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1u << 0,
  kScriptAllowOom = 1u << 1,
  kScriptAllowStale = 1u << 2,
  kScriptNoCluster = 1u << 3,
  kScriptAllowCrossSlot = 1u << 4,
  // No shebang: the compatibility mode of scripts before Redis 7.
  kScriptEvalCompat = 1u << 5,
};

// Parses the shebang line of `body` (Redis's evalExtractShebangFlags):
// *flags, and *shebang_len, the bytes to skip (the line feed stays, so that
// line numbers do not move). False with *err (Redis's text, no "ERR ").
bool ParseShebang(std::string_view body, uint32_t* flags, size_t* shebang_len, std::string* err);

struct ScriptInfo {
  std::string sha;   // 40 lowercase hex digits
  std::string body;  // as sent, shebang included
  uint32_t flags = 0;
  // What runs learn (any worker's, hence atomic and mutable on a const
  // script): a run touched a key outside its declared keys' shards, so
  // every later run holds every shard (docs/scripting.md); a run completed
  // (the first holds every shard, to learn the first).
  mutable std::atomic<bool> all_shards{false};
  mutable std::atomic<bool> seen{false};
  // Whether the next run must hold every shard.
  bool NeedsAllShards() const {
    return !seen.load(std::memory_order_relaxed) || all_shards.load(std::memory_order_relaxed);
  }
  void MarkAllShards() const { all_shards.store(true, std::memory_order_relaxed); }
};

class ScriptCache {
 public:
  // The script with this SHA (40 hex digits, any case), or null.
  std::shared_ptr<ScriptInfo> Find(std::string_view sha) const;
  // Adds a script (already compiled by the caller's interpreter); returns
  // the one kept (an earlier one with the same SHA wins).
  std::shared_ptr<ScriptInfo> Add(std::shared_ptr<ScriptInfo> info);
  // SCRIPT FLUSH: forgets every script; workers drop their compiled ones
  // when they see the epoch change.
  void Flush();
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  size_t size() const;
  // The bytes of the bodies (INFO used_memory_scripts_eval).
  size_t bytes() const;

 private:
  mutable std::mutex mu_;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::shared_ptr<ScriptInfo>, Hash, std::equal_to<>> scripts_;
  size_t bytes_ = 0;
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace peregrine
