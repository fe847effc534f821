// Logging (see log.h).
#include "server/log.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace peregrine {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kNotice)};
std::atomic<int> g_fd{STDOUT_FILENO};
std::atomic<char> g_role{'M'};
}  // namespace

void SetLogRole(char role) { g_role.store(role, std::memory_order_relaxed); }

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

bool SetLogFile(const std::string& path, std::string* err) {
  if (path.empty()) {
    g_fd = STDOUT_FILENO;
    return true;
  }
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = strerror(errno);
    return false;
  }
  g_fd = fd;
  return true;
}

void Log(LogLevel level, const char* fmt, ...) {
  if (static_cast<int>(level) < g_level.load() || level == LogLevel::kNothing) return;
  char line[1024];
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm local;
  localtime_r(&tv.tv_sec, &local);
  int n = snprintf(line, sizeof(line), "%d:%c ", static_cast<int>(getpid()), g_role.load(std::memory_order_relaxed));
  n += static_cast<int>(strftime(line + n, sizeof(line) - n, "%d %b %Y %H:%M:%S.", &local));
  static const char kMarks[] = ".-*#";
  n += snprintf(line + n, sizeof(line) - n, "%03d %c ", static_cast<int>(tv.tv_usec / 1000),
                kMarks[static_cast<int>(level)]);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
  va_end(ap);
  n = m < 0 ? n : std::min<int>(n + m, static_cast<int>(sizeof(line)) - 2);
  line[n++] = '\n';
  ssize_t ignored = write(g_fd.load(), line, static_cast<size_t>(n));
  (void)ignored;
}

}  // namespace peregrine
