// The ACL log (ACL LOG): denied commands, keys, channels and failed
// authentications, newest first, similar events within a minute counted in
// one entry (Redis's addACLLogEntry). Written by any worker on a denial.
#include <cstdlib>

#include "server/acl.h"

namespace peregrine {

void Acl::AddLogEntry(AclResult reason, LogContext context, std::string object, std::string username,
                      std::string client_info, int64_t now_ms, size_t max_len) {
  denied_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(log_mu_);
  // Look for the same event among the ten latest: counted there.
  constexpr int64_t kGroupingMs = 60000;
  const size_t scan = std::min<size_t>(10, log_.size());
  for (size_t i = 0; i < scan; i++) {
    LogEntry& e = log_[i];
    if (e.reason == reason && e.context == context && std::llabs(e.ctime_ms - now_ms) <= kGroupingMs &&
        e.object == object && e.username == username) {
      LogEntry moved = std::move(e);
      log_.erase(log_.begin() + static_cast<ptrdiff_t>(i));
      moved.client_info = std::move(client_info);
      moved.ctime_ms = now_ms;
      moved.count++;
      log_.push_front(std::move(moved));
      return;
    }
  }
  log_.push_front(LogEntry{1, reason, context, std::move(object), std::move(username), now_ms, std::move(client_info),
                           log_next_id_++, now_ms});
  while (log_.size() > max_len) log_.pop_back();
}

std::vector<Acl::LogEntry> Acl::LogEntries(size_t count) const {
  std::lock_guard<std::mutex> lock(log_mu_);
  count = std::min(count, log_.size());
  return std::vector<LogEntry>(log_.begin(), log_.begin() + static_cast<ptrdiff_t>(count));
}

void Acl::ResetLog() {
  std::lock_guard<std::mutex> lock(log_mu_);
  log_.clear();
}

}  // namespace peregrine
