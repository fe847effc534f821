#include "scripting/functions.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/glob.h"
#include "protocol/parser.h"

namespace peregrine {

namespace {

// Redis's scripts_flags_def, in its order.
constexpr std::pair<uint32_t, std::string_view> kFlagNames[] = {
    {kScriptNoWrites, "no-writes"},     {kScriptAllowOom, "allow-oom"},
    {kScriptAllowStale, "allow-stale"}, {kScriptNoCluster, "no-cluster"},
    {kScriptAllowCrossSlot, "allow-cross-slot-keys"},
};

}  // namespace

bool FunctionNameLess::operator()(std::string_view a, std::string_view b) const {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; i++) {
    const int ca = std::tolower(static_cast<unsigned char>(a[i]));
    const int cb = std::tolower(static_cast<unsigned char>(b[i]));
    if (ca != cb) return ca < cb;
  }
  return a.size() < b.size();
}

bool ValidFunctionName(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

std::optional<uint32_t> FunctionFlag(std::string_view name) {
  for (auto [bit, n] : kFlagNames)
    if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return bit;
  return std::nullopt;
}

std::vector<std::string_view> FunctionFlagNames(uint32_t flags) {
  std::vector<std::string_view> out;
  for (auto [bit, n] : kFlagNames)
    if (flags & bit) out.push_back(n);
  return out;
}

bool ParseLibraryMetadata(std::string_view code, FunctionLibrary* lib, std::string* err) {
  if (!code.starts_with("#!")) {
    *err = "Missing library metadata";
    return false;
  }
  const size_t end = code.find('\n');
  if (end == std::string_view::npos) {
    *err = "Invalid library metadata";
    return false;
  }
  // Split as Redis's sdssplitargs (quotes allowed).
  std::vector<std::string> parts;
  if (!SplitArgs(code.substr(0, end), &parts) || parts.empty()) {
    *err = "Invalid library metadata";
    return false;
  }
  const std::string_view engine = std::string_view(parts[0]).substr(2);
  std::optional<std::string_view> name;
  for (size_t i = 1; i < parts.size(); i++) {
    if (parts[i].size() >= 5 && strncasecmp(parts[i].data(), "name=", 5) == 0) {
      if (name) {
        *err = "Invalid metadata value, name argument was given multiple times";
        return false;
      }
      name = std::string_view(parts[i]).substr(5);
      continue;
    }
    *err = "Invalid metadata value given: " + std::string(parts[i]);
    return false;
  }
  if (!name) {
    *err = "Library name was not given";
    return false;
  }
  if (!ValidFunctionName(*name)) {
    *err = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";
    return false;
  }
  if (engine.size() != 3 || strncasecmp(engine.data(), "lua", 3) != 0) {
    *err = "Engine '" + std::string(engine) + "' not found";
    return false;
  }
  lib->name = std::string(*name);
  lib->code = std::string(code);
  lib->body_at = end;
  return true;
}

std::optional<FunctionRegistry::Found> FunctionRegistry::Find(std::string_view function) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = functions_.find(function);
  if (it == functions_.end()) return std::nullopt;
  return it->second;
}

bool FunctionRegistry::Add(std::shared_ptr<FunctionLibrary> lib, bool replace, std::string* err) {
  std::lock_guard<std::mutex> lock(mu_);
  auto old = libraries_.find(lib->name);
  if (old != libraries_.end() && !replace) {
    *err = "Library '" + lib->name + "' already exists";
    return false;
  }
  for (const auto& [name, f] : lib->functions) {
    auto it = functions_.find(name);
    if (it != functions_.end() && (old == libraries_.end() || it->second.library != old->second)) {
      *err = "Function " + name + " already exists";
      return false;
    }
  }
  if (old != libraries_.end()) {
    for (const auto& [name, f] : old->second->functions) functions_.erase(name);
    libraries_.erase(old);
  }
  lib->id = next_id_++;
  for (const auto& [name, f] : lib->functions) functions_[name] = Found{lib, f.run};
  libraries_[lib->name] = std::move(lib);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

bool FunctionRegistry::Join(std::vector<std::shared_ptr<FunctionLibrary>> libs, bool replace, bool flush,
                            std::string* err) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!flush) {
    // The libraries that would go, and then no function may collide with
    // one that stays.
    std::set<const FunctionLibrary*> going;
    for (const auto& lib : libs) {
      auto old = libraries_.find(lib->name);
      if (old == libraries_.end()) continue;
      if (!replace) {
        *err = "Library " + lib->name + " already exists";
        return false;
      }
      going.insert(old->second.get());
    }
    for (const auto& lib : libs)
      for (const auto& [name, f] : lib->functions) {
        auto it = functions_.find(name);
        if (it != functions_.end() && going.count(it->second.library.get()) == 0) {
          *err = "Function " + name + " already exists";
          return false;
        }
      }
    for (const auto& lib : libs) {
      auto old = libraries_.find(lib->name);
      if (old == libraries_.end()) continue;
      for (const auto& [name, f] : old->second->functions) functions_.erase(name);
      libraries_.erase(old);
    }
  } else {
    libraries_.clear();
    functions_.clear();
  }
  for (auto& lib : libs) {
    lib->id = next_id_++;
    for (const auto& [name, f] : lib->functions) functions_[name] = Found{lib, f.run};
    libraries_[lib->name] = std::move(lib);
  }
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

bool FunctionRegistry::HasLibrary(std::string_view library) const {
  std::lock_guard<std::mutex> lock(mu_);
  return libraries_.count(std::string(library)) > 0;
}

bool FunctionRegistry::Delete(std::string_view library) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = libraries_.find(std::string(library));
  if (it == libraries_.end()) return false;
  for (const auto& [name, f] : it->second->functions) functions_.erase(name);
  libraries_.erase(it);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void FunctionRegistry::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  libraries_.clear();
  functions_.clear();
  epoch_.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<std::shared_ptr<FunctionLibrary>> FunctionRegistry::List(std::optional<std::string_view> pattern) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<FunctionLibrary>> out;
  for (const auto& [name, lib] : libraries_)
    if (!pattern || GlobMatch(*pattern, name, /*nocase=*/true)) out.push_back(lib);
  return out;
}

size_t FunctionRegistry::libraries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return libraries_.size();
}

size_t FunctionRegistry::functions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return functions_.size();
}

size_t FunctionRegistry::code_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) n += lib->code.size();
  return n;
}

}  // namespace peregrine
