// The latency monitor's events, graph and report (see latency.h).
#include "server/latency.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace peregrine {

std::vector<LatencyMonitor::Sample> LatencyMonitor::Series::InOrder() const {
  std::vector<Sample> out;
  for (size_t j = 0; j < kSamples; j++) {
    const Sample& s = samples[(next + j) % kSamples];
    if (s.time != 0) out.push_back(s);
  }
  return out;
}

void LatencyMonitor::Configure(int64_t threshold_ms, uint64_t ticks_per_ms) {
  threshold_ms_.store(threshold_ms, std::memory_order_relaxed);
  threshold_ticks_.store(threshold_ms > 0 && static_cast<uint64_t>(threshold_ms) < UINT64_MAX / ticks_per_ms
                             ? static_cast<uint64_t>(threshold_ms) * ticks_per_ms
                             : UINT64_MAX,
                         std::memory_order_relaxed);
}

void LatencyMonitor::Add(std::string_view event, int64_t latency_ms, int64_t now_s) {
  if (now_s == 0) now_s = static_cast<int64_t>(std::time(nullptr));
  const auto latency = static_cast<uint32_t>(std::clamp<int64_t>(latency_ms, 0, UINT32_MAX));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  s.max = std::max(s.max, latency);
  // One sample a second: the second's highest.
  Sample& prev = s.samples[(s.next + kSamples - 1) % kSamples];
  if (prev.time == now_s) {
    prev.latency = std::max(prev.latency, latency);
    return;
  }
  s.samples[s.next] = {now_s, latency};
  s.next = (s.next + 1) % kSamples;
}

std::map<std::string, LatencyMonitor::Series, std::less<>> LatencyMonitor::Events() {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

std::optional<LatencyMonitor::Series> LatencyMonitor::Find(std::string_view event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) return std::nullopt;
  return it->second;
}

int LatencyMonitor::Reset(std::optional<std::string_view> event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!event) {
    const int n = static_cast<int>(events_.size());
    events_.clear();
    return n;
  }
  for (auto it = events_.begin(); it != events_.end(); ++it) {
    if (it->first.size() == event->size() && strncasecmp(it->first.data(), event->data(), event->size()) == 0) {
      events_.erase(it);
      return 1;
    }
  }
  return 0;
}

namespace {

// Redis's sparkline (sparkline.c), filled: each sample a column, its
// height in 4 rows of 3 steps ('_', 'o', '#', '|' below a full step), then
// its label written downwards after one blank row.
void RenderColumns(std::string& out, const std::vector<std::pair<double, std::string>>& samples, size_t from,
                   size_t len, double min, double max) {
  static constexpr char kFill[] = "_o#";
  constexpr int kRows = 4, kSteps = 3 * kRows;
  double range = max - min;
  if (range == 0) range = 1;
  std::string chars;
  for (int row = 0;; row++) {
    chars.assign(len, ' ');
    bool more = false;
    for (size_t j = 0; j < len; j++) {
      const auto& [value, label] = samples[from + j];
      int step = static_cast<int>((value - min) * kSteps / range);
      step = std::clamp(step, 0, kSteps - 1);
      if (row < kRows) {
        more = true;
        const int idx = step - (kRows - row - 1) * 3;
        if (idx >= 0 && idx < 3)
          chars[j] = kFill[idx];
        else if (idx >= 3)
          chars[j] = '|';
      } else if (row - kRows < 1) {  // the blank row above the labels
        more = true;
        break;
      } else if (static_cast<int>(label.size()) > row - kRows - 1) {
        more = true;
        chars[j] = label[static_cast<size_t>(row - kRows - 1)];
      }
    }
    if (!more) return;
    out += chars;
    out += '\n';
  }
}

}  // namespace

std::string LatencyMonitor::Graph(std::string_view event, const Series& s, int64_t now_s) {
  std::vector<std::pair<double, std::string>> samples;
  uint32_t lo = 0, hi = 0;
  for (const Sample& x : s.InOrder()) {
    if (samples.empty()) {
      lo = hi = x.latency;
    } else {
      lo = std::min(lo, x.latency);
      hi = std::max(hi, x.latency);
    }
    // The label: how long ago, in seconds, minutes, hours or days.
    const int64_t ago = now_s - x.time;
    char label[32];
    if (ago < 60)
      std::snprintf(label, sizeof(label), "%llds", static_cast<long long>(ago));
    else if (ago < 3600)
      std::snprintf(label, sizeof(label), "%lldm", static_cast<long long>(ago / 60));
    else if (ago < 86400)
      std::snprintf(label, sizeof(label), "%lldh", static_cast<long long>(ago / 3600));
    else
      std::snprintf(label, sizeof(label), "%lldd", static_cast<long long>(ago / 86400));
    samples.emplace_back(x.latency, label);
  }
  char head[256];
  std::snprintf(head, sizeof(head), "%.*s - high %lu ms, low %lu ms (all time high %lu ms)\n",
                static_cast<int>(event.size()), event.data(), static_cast<unsigned long>(hi),
                static_cast<unsigned long>(lo), static_cast<unsigned long>(s.max));
  std::string out = head;
  out.append(80, '-');
  out += '\n';
  const double min = lo, max = hi;
  for (size_t j = 0; j < samples.size(); j += 80) {
    if (j != 0) out += '\n';
    RenderColumns(out, samples, j, std::min<size_t>(80, samples.size() - j), min, max);
  }
  return out;
}

std::string LatencyMonitor::Doctor() {
  const int64_t threshold = threshold_ms();
  const auto events = Events();
  if (threshold == 0 && events.empty())
    return "The latency monitor is off: nothing is recorded. Set latency-monitor-threshold to a number of "
           "milliseconds (CONFIG SET latency-monitor-threshold 100) and what takes at least that long is "
           "recorded per event, for LATENCY LATEST, HISTORY, GRAPH and this report.\n";
  if (events.empty())
    return "No latency spikes were recorded (threshold " + std::to_string(threshold) +
           " ms): nothing took that long since the monitor started or was last reset.\n";
  std::string out = "Latency report: " + std::to_string(events.size()) + " event(s) reached the threshold of " +
                    std::to_string(threshold) + " ms.\n\n";
  int n = 1;
  for (const auto& [name, s] : events) {
    const std::vector<Sample> v = s.InOrder();
    uint64_t sum = 0;
    for (const Sample& x : v) sum += x.latency;
    const uint64_t avg = v.empty() ? 0 : sum / v.size();
    const int64_t period = v.size() > 1 ? (v.back().time - v.front().time) / static_cast<int64_t>(v.size() - 1) : 0;
    out += std::to_string(n++) + ". " + name + ": " + std::to_string(v.size()) + " spike(s), average " +
           std::to_string(avg) + " ms, highest " + std::to_string(s.max) + " ms";
    if (period > 0) out += ", one every " + std::to_string(period) + " s on average";
    out += ".\n";
  }
  out += "\nWhat the events mean and what helps:\n";
  for (const auto& [name, s] : events) {
    if (name == "command")
      out += "- command: slow commands ran. SLOWLOG GET names them; O(N) commands over large keys (KEYS, "
             "SMEMBERS, HGETALL, LRANGE of whole lists, SORT) are the usual cause.\n";
    else if (name == "fast-command")
      out += "- fast-command: commands that are O(1) or O(log N) were slow: the machine itself stalled "
             "(swapping, a noisy neighbour, CPU starvation). Check the system, not the workload.\n";
    else if (name == "expire-cycle")
      out += "- expire-cycle: many keys expired at once and the active expiry took its full slice. Spread "
             "the deadlines of keys set together.\n";
    else if (name == "eviction-cycle" || name == "eviction-del")
      out += "- " + name + ": maxmemory eviction ran long. Writes are faster than eviction frees memory; "
             "raise maxmemory or lower the write rate.\n";
    else if (name.starts_with("aof-"))
      out += "- " + name + ": writing or syncing the append-only file was slow: the disk is busy or slow. "
             "appendfsync everysec trades a second of writes for this latency.\n";
    else
      out += "- " + name + ": see docs/latency.md.\n";
  }
  return out;
}

}  // namespace peregrine
