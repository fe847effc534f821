#include "scripting/script_cache.h"

#include <openssl/evp.h>

#include <cctype>

#include <vector>

#include "core/numbers.h"
#include "protocol/parser.h"

namespace peregrine {

std::string Sha1Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha1(), nullptr);
  return HexOf(digest, len);
}


bool ParseShebang(std::string_view body, uint32_t* flags, size_t* shebang_len, std::string* err) {
  *flags = kScriptEvalCompat;
  *shebang_len = 0;
  if (!body.starts_with("#!")) return true;
  const size_t end = body.find('\n');
  if (end == std::string_view::npos) {
    *err = "Invalid script shebang";
    return false;
  }
  // Split as Redis's sdssplitargs (quotes allowed).
  std::vector<std::string> parts;
  if (!SplitArgs(body.substr(0, end), &parts) || parts.empty()) {
    *err = "Invalid engine in script shebang";
    return false;
  }
  if (parts[0] != "#!lua") {
    *err = "Unexpected engine in script shebang: " + std::string(parts[0]);
    return false;
  }
  uint32_t f = 0;
  for (size_t i = 1; i < parts.size(); i++) {
    if (!parts[i].starts_with("flags=")) {
      *err = "Unknown lua shebang option: " + std::string(parts[i]);
      return false;
    }
    std::string_view list = std::string_view(parts[i]).substr(6);
    size_t pos = 0;
    while (true) {
      const size_t comma = list.find(',', pos);
      const std::string_view name = list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos);
      if (name == "no-writes") {
        f |= kScriptNoWrites;
      } else if (name == "allow-oom") {
        f |= kScriptAllowOom;
      } else if (name == "allow-stale") {
        f |= kScriptAllowStale;
      } else if (name == "no-cluster") {
        f |= kScriptNoCluster;
      } else if (name == "allow-cross-slot-keys") {
        f |= kScriptAllowCrossSlot;
      } else if (!name.empty() || comma != std::string_view::npos || !list.empty()) {
        // (Redis splits "flags=" into no flags at all; an empty name
        // between commas is a flag it does not know.)
        *err = "Unexpected flag in script shebang: " + std::string(name);
        return false;
      }
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
  }
  *flags = f;
  *shebang_len = end;
  return true;
}

std::shared_ptr<ScriptInfo> ScriptCache::Find(std::string_view sha) const {
  // SHAs are kept lowercase; Redis's dict of scripts compares without case.
  if (sha.size() != 40) return nullptr;
  char lower[40];
  for (size_t i = 0; i < 40; i++) lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(sha[i])));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scripts_.find(std::string_view(lower, 40));
  return it == scripts_.end() ? nullptr : it->second;
}

std::shared_ptr<ScriptInfo> ScriptCache::Add(std::shared_ptr<ScriptInfo> info) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = scripts_.emplace(info->sha, info);
  if (added) bytes_ += info->body.size() + info->sha.size();
  return it->second;
}

void ScriptCache::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  scripts_.clear();
  bytes_ = 0;
  epoch_.fetch_add(1, std::memory_order_acq_rel);
}

size_t ScriptCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scripts_.size();
}

size_t ScriptCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace peregrine
