// Socket helpers (see socket.h).
#include "net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace peregrine {

int ListenTcp(const std::string& host_in, int port, int backlog, std::string* err) {
  std::string host = host_in;
  bool v6 = host.find(':') != std::string::npos;
  if (host == "*") host = "0.0.0.0";
  if (host == "::*") host = "::";
  addrinfo hints{};
  hints.ai_family = v6 ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  std::string port_s = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), port_s.c_str(), &hints, &res);
  if (rc != 0) {
    *err = gai_strerror(rc);
    return -1;
  }
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = strerror(errno);
    freeaddrinfo(res);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
    *err = strerror(errno);
    close(fd);
    freeaddrinfo(res);
    return -1;
  }
  freeaddrinfo(res);
  return fd;
}

std::vector<int> ListenAll(const std::vector<std::string>& bind, int port, int backlog, std::string* err,
                           std::vector<std::string>* skipped) {
  std::vector<int> fds;
  for (const std::string& b : bind) {
    const bool optional = !b.empty() && b[0] == '-';
    const std::string host = optional ? b.substr(1) : b;
    std::string why;
    const int fd = ListenTcp(host, port, backlog, &why);
    if (fd >= 0) {
      fds.push_back(fd);
    } else if (optional) {
      if (skipped != nullptr) skipped->push_back(host + ": " + why);
    } else {
      for (int f : fds) close(f);
      *err = host + ": " + why;
      return {};
    }
  }
  return fds;
}

int ListenUnix(const std::string& path, unsigned perm, int backlog, std::string* err) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    *err = "unix socket path too long";
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = strerror(errno);
    return -1;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, backlog) != 0) {
    *err = strerror(errno);
    close(fd);
    return -1;
  }
  if (perm != 0) chmod(path.c_str(), perm);
  return fd;
}

void ConfigureTcpConnection(int fd, int keepalive_s) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (keepalive_s > 0) {
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    int idle = keepalive_s;
    int interval = keepalive_s / 3 > 0 ? keepalive_s / 3 : 1;
    int count = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  }
}

namespace {
std::string FormatAddress(const sockaddr_storage& ss, socklen_t len) {
  char ip[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    return std::string(ip) + ":" + std::to_string(ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
    return std::string(ip) + ":" + std::to_string(ntohs(a->sin6_port));
  }
  if (ss.ss_family == AF_UNIX) {
    auto* a = reinterpret_cast<const sockaddr_un*>(&ss);
    size_t n = len > offsetof(sockaddr_un, sun_path) ? strnlen(a->sun_path, sizeof(a->sun_path)) : 0;
    return std::string(a->sun_path, n) + ":0";
  }
  return "?:0";
}
}  // namespace

std::string PeerAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?:0";
  return FormatAddress(ss, len);
}

std::string LocalAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?:0";
  return FormatAddress(ss, len);
}

}  // namespace peregrine
