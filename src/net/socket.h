// Socket helpers: listening on TCP addresses and unix sockets, accepting, and
// per-connection options. Errors are returned as text for the log.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

// Listens on host:port (host "*" = every IPv4 address, "::*" = every IPv6
// address). Returns the fd, or -1 with *err set.
int ListenTcp(const std::string& host, int port, int backlog, std::string* err);

// Listens on `port` at each of the `bind` addresses (one marked '-' may
// fail: it is left out, with "host: why" added to *skipped if given).
// Returns the fds; empty, with *err = "host: why", when another failed (the
// others closed again).
std::vector<int> ListenAll(const std::vector<std::string>& bind, int port, int backlog, std::string* err,
                           std::vector<std::string>* skipped = nullptr);

// Listens on a unix socket path (an existing file is replaced) with mode
// `perm` when non-zero. Returns the fd, or -1 with *err set.
int ListenUnix(const std::string& path, unsigned perm, int backlog, std::string* err);

// Sets TCP_NODELAY and, when keepalive_s > 0, TCP keepalive probes.
void ConfigureTcpConnection(int fd, int keepalive_s);

// "ip:port" of the peer / of the local end ("/path:0" for unix sockets).
std::string PeerAddress(int fd);
std::string LocalAddress(int fd);
// The ip of such an "ip:port" (the part before its last colon).
inline std::string_view AddressIp(std::string_view addr) {
  const size_t colon = addr.rfind(':');
  return colon == std::string_view::npos ? addr : addr.substr(0, colon);
}

}  // namespace peregrine
