// The service manager's side (supervise.h). sd_notify's protocol is written
// here rather than linking libsystemd: the protocol is one datagram of
// "KEY=value" lines to a unix socket, documented as stable for exactly this
// (sd_notify(3), "NOTES"), and libsystemd would bring its own dependencies
// (lz4, zstd, lzma, gcrypt, capabilities) into the binary and the image for
// a dozen lines.
#include "server/supervise.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server/log.h"

namespace peregrine::supervise {

namespace {

std::atomic<Config::Supervised> g_mode{Config::Supervised::kNo};
// What Start found, logged by LogStart once the log is open.
std::string g_note;
bool g_note_warns = false;

}  // namespace

bool Notify(std::string_view message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return false;
  const size_t len = std::strlen(path);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // ('@' names an abstract socket: its name starts with a NUL byte.)
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const socklen_t addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  const ssize_t n = sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                           reinterpret_cast<const sockaddr*>(&addr), addr_len);
  close(fd);
  return n == static_cast<ssize_t>(message.size());
}

Config::Supervised Start(Config::Supervised mode) {
  if (mode == Config::Supervised::kAuto) {
    if (std::getenv("UPSTART_JOB") != nullptr) mode = Config::Supervised::kUpstart;
    else if (std::getenv("NOTIFY_SOCKET") != nullptr) mode = Config::Supervised::kSystemd;
    else mode = Config::Supervised::kNo;
  }
  if (mode == Config::Supervised::kUpstart && std::getenv("UPSTART_JOB") == nullptr) {
    g_note = "supervised upstart, but UPSTART_JOB is not set: there is no one to tell";
    g_note_warns = true;
    mode = Config::Supervised::kNo;
  } else if (mode == Config::Supervised::kSystemd && std::getenv("NOTIFY_SOCKET") == nullptr) {
    g_note = "supervised systemd, but NOTIFY_SOCKET is not set: there is no one to tell";
    g_note_warns = true;
    mode = Config::Supervised::kNo;
  } else if (mode == Config::Supervised::kSystemd) {
    g_note = "Supervised by systemd: the unit's TimeoutStartSec and TimeoutStopSec must allow for loading and "
             "saving the data";
  } else if (mode == Config::Supervised::kUpstart) {
    g_note = "Supervised by upstart: the process stops itself (SIGSTOP) once ready";
  }
  g_mode.store(mode, std::memory_order_relaxed);
  return mode;
}

void LogStart() {
  if (g_note.empty()) return;
  if (g_note_warns) LOG_WARNING("%s", g_note.c_str());
  else LOG_NOTICE("%s", g_note.c_str());
}

Config::Supervised Mode() { return g_mode.load(std::memory_order_relaxed); }

void Ready(bool replica) {
  switch (Mode()) {
    case Config::Supervised::kSystemd:
      Notify(replica ? "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA "
                       "sync\nREADY=1\n"
                     : "STATUS=Ready to accept connections\nREADY=1\n");
      break;
    case Config::Supervised::kUpstart:
      // (Upstart's "expect stop": it resumes the process once it stopped.
      // Told once: the variable goes, as Redis unsets it.)
      if (std::getenv("UPSTART_JOB") != nullptr) {
        unsetenv("UPSTART_JOB");
        raise(SIGSTOP);
      }
      break;
    default:
      break;
  }
}

void Status(std::string_view text) {
  if (Mode() != Config::Supervised::kSystemd) return;
  std::string m = "STATUS=";
  m.append(text);
  m += "\n";
  Notify(m);
}

void Stopping() {
  if (Mode() == Config::Supervised::kSystemd) Notify("STOPPING=1\n");
}

}  // namespace peregrine::supervise
