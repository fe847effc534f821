// SLOWLOG's log (see slowlog.h).
#include "server/slowlog.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "server/command.h"

namespace peregrine {

void SlowLog::Configure(int64_t slower_than_us, int64_t max_len, double ticks_per_us) {
  std::lock_guard<std::mutex> lock(mu_);
  max_len_ = static_cast<size_t>(std::max<int64_t>(0, max_len));
  uint64_t ticks = UINT64_MAX;
  if (slower_than_us >= 0 && max_len > 0) {
    const double t = std::ceil(static_cast<double>(slower_than_us) * ticks_per_us);
    ticks = t >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(t);
  }
  threshold_ticks_.store(ticks, std::memory_order_relaxed);
  // (As Redis, which trims after every command: CONFIG SET's own.)
  Trim();
}

void SlowLog::Trim() {
  while (entries_.size() > max_len_) {
    if (!entries_.back().resolved) unresolved_.fetch_sub(1, std::memory_order_relaxed);
    entries_.pop_back();
  }
}

std::vector<bool> SlowLog::Redacted(const CommandSpec& spec, std::span<const std::string_view> args) {
  std::vector<bool> redact;
  // (Sized only for the commands that may redact: MONITOR asks of every command.)
  const std::string_view fullname = spec.fullname;
  if (fullname != "auth" && fullname != "hello" && fullname != "migrate" && fullname != "acl|setuser" &&
      fullname != "acl|deluser" && fullname != "acl|getuser" && fullname != "config|set")
    return redact;
  redact.assign(args.size(), false);
  const std::string_view name = spec.name;
  auto is = [&](size_t i, std::string_view word) { return i < args.size() && EqualsIgnoreCase(args[i], word); };
  if (name == "auth" && args.size() <= 3) {
    for (size_t i = 1; i < args.size(); i++) redact[i] = true;
  } else if (name == "hello") {
    for (size_t j = 2; j < args.size(); j++) {
      const size_t more = args.size() - 1 - j;
      if (is(j, "auth") && more >= 2) {
        redact[j + 1] = redact[j + 2] = true;
        j += 2;
      } else if (is(j, "setname") && more >= 1) {
        j++;
      }
    }
  } else if (name == "migrate") {
    for (size_t j = 6; j < args.size(); j++) {
      if (is(j, "keys")) break;
      if (is(j, "auth") && j + 1 < args.size()) {
        redact[++j] = true;
      } else if (is(j, "auth2") && j + 2 < args.size()) {
        redact[j + 1] = redact[j + 2] = true;
        j += 2;
      }
    }
  } else if (spec.fullname == "acl|setuser" || spec.fullname == "acl|deluser") {
    for (size_t i = 2; i < args.size(); i++) redact[i] = true;
  } else if (spec.fullname == "acl|getuser" && args.size() == 3) {
    redact[2] = true;
  } else if (spec.fullname == "config|set") {
    for (size_t i = 2; i + 1 < args.size(); i += 2)
      for (std::string_view s : {"masteruser", "masterauth", "requirepass", "tls-key-file-pass",
                                 "tls-client-key-file-pass"})
        if (EqualsIgnoreCase(args[i], s)) redact[i + 1] = true;
  }
  return redact;
}

std::vector<std::string> SlowLog::LoggedArgs(const CommandSpec& spec, std::span<const std::string_view> args) {
  std::vector<bool> redact = Redacted(spec, args);
  redact.resize(args.size(), false);
  const size_t n = std::min(args.size(), kMaxArgs);
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; i++) {
    if (n < args.size() && i == n - 1) {
      out.push_back("... (" + std::to_string(args.size() - n + 1) + " more arguments)");
    } else if (redact[i]) {
      out.emplace_back("(redacted)");
    } else if (args[i].size() > kMaxString) {
      out.push_back(std::string(args[i].substr(0, kMaxString)) + "... (" + std::to_string(args[i].size() - kMaxString) +
                    " more bytes)");
    } else {
      out.emplace_back(args[i]);
    }
  }
  return out;
}

void SlowLog::Push(const CommandSpec& spec, std::span<const std::string_view> args, int64_t duration_us,
                   std::string peer, std::string name, uint64_t client_id, bool resolved) {
  if (spec.flags & kCmdSkipSlowlog) return;  // (EXEC: its commands are logged)
  Entry e;
  e.args = LoggedArgs(spec, args);
  e.time_s = static_cast<int64_t>(std::time(nullptr));
  e.duration_us = duration_us;
  e.peer = std::move(peer);
  e.name = std::move(name);
  e.client_id = client_id;
  e.resolved = resolved;
  std::lock_guard<std::mutex> lock(mu_);
  if (max_len_ == 0) return;
  e.id = next_id_++;
  if (!e.resolved) unresolved_.fetch_add(1, std::memory_order_relaxed);
  entries_.push_front(std::move(e));
  Trim();
}

void SlowLog::Resolve(uint64_t client_id, const std::string& peer, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Entry& e : entries_) {
    if (e.resolved || e.client_id != client_id) continue;
    e.peer = peer;
    e.name = name;
    e.resolved = true;
    unresolved_.fetch_sub(1, std::memory_order_relaxed);
  }
}

std::vector<SlowLog::Entry> SlowLog::Get(size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = std::min(count, entries_.size());
  return std::vector<Entry>(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n));
}

size_t SlowLog::Len() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  unresolved_.store(0, std::memory_order_relaxed);
}

}  // namespace peregrine
