// null_server: the "null server" of /work/shared/MEASURING.md, the ceiling that bench/run_bench.py
// measures beside Peregrine and Redis. One thread, epoll; it frames RESP requests exactly and answers
// without storing anything. Build: g++ -O2 -std=c++20 -o null_server bench/null_server.cc
// With --get-bulk N every GET is answered with an N-byte bulk string (from one buffer, always in
// cache) instead of nil: the floor for workloads whose GETs return values of that size.
// LRANGE key start stop (0 <= start <= stop) is answered with stop - start + 1 bulk strings "xxx":
// the floor for bench/lists.py's LRANGE rows (a list of "xxx" items).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr size_t kReadSize = 256 * 1024;  // bytes asked of each read()
constexpr long kMaxInline = 64 * 1024;    // an inline request or a header line longer than this is an error

struct Conn {
  int fd;
  std::string partial;    // the start of a request that has not fully arrived yet
  std::string out;        // replies; out[out_pos..] not written yet
  size_t out_pos = 0;
  bool dirty = false;     // in this iteration's flush list
  bool want_out = false;  // EPOLLOUT registered
};

// Calls per command, reported by INFO so the harness can check that every request was framed.
enum Cmd { kGet, kSet, kPing, kConfig, kInfo, kLrange, kOther, kNumCmds };
const char* const kCmdNames[kNumCmds] = {"get", "set", "ping", "config", "info", "lrange", "other"};
uint64_t calls[kNumCmds];
bool stop = false;
char rbuf[kReadSize];  // every read lands here first; only a partial request is copied
std::string get_reply = "$-1\r\n";  // what every GET is answered (--get-bulk N: an N-byte bulk)

bool ieq(std::string_view a, std::string_view lower) {  // ASCII case-insensitive; lower is lower case
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != lower[i]) return false;
  return true;
}

// Parses "<integer>\r\n" at p. Returns the position after it; nullptr with bad == false if the line
// is incomplete, nullptr with bad == true if it is malformed.
const char* read_int(const char* p, const char* e, long long& v, bool& bad) {
  const char* cr = static_cast<const char*>(memchr(p, '\r', e - p));
  if (!cr || cr + 1 >= e) {
    bad = e - p > kMaxInline;
    return nullptr;
  }
  bool neg = p < cr && *p == '-';
  const char* d = p + neg;
  bad = cr[1] != '\n' || d == cr || cr - d > 18;
  if (bad) return nullptr;
  for (v = 0; d < cr; ++d) {
    if (*d < '0' || *d > '9') return bad = true, nullptr;
    v = v * 10 + (*d - '0');
  }
  if (neg) v = -v;
  return cr + 2;
}

// Frames one request at p (multibulk, or inline if it does not start with '*'). Returns its length,
// 0 if it is incomplete, -1 if it is malformed. args receives up to the first kMaxArgs arguments.
constexpr int kMaxArgs = 4;
long frame(const char* p, const char* e, std::string_view* args, int& nargs) {
  nargs = 0;
  bool bad = false;
  if (*p == '*') {
    long long n, len;
    const char* q = read_int(p + 1, e, n, bad);
    if (!q) return bad ? -1 : 0;
    if (n > 1024 * 1024) return -1;
    for (long long i = 0; i < n; ++i) {  // n <= 0: an empty request, skipped
      if (q >= e) return 0;
      if (*q != '$') return -1;
      q = read_int(q + 1, e, len, bad);
      if (!q) return bad ? -1 : 0;
      if (len < 0 || len > (512LL << 20)) return -1;
      if (e - q < len + 2) return 0;
      if (q[len] != '\r' || q[len + 1] != '\n') return -1;
      if (nargs < kMaxArgs) args[nargs++] = std::string_view(q, len);
      q += len + 2;
    }
    return q - p;
  }
  const char* nl = static_cast<const char*>(memchr(p, '\n', e - p));
  if (!nl) return e - p > kMaxInline ? -1 : 0;
  const char* end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
  for (const char* q = p; q < end;) {  // space-separated words; quoting is not needed here
    while (q < end && (*q == ' ' || *q == '\t')) ++q;
    const char* w = q;
    while (q < end && *q != ' ' && *q != '\t') ++q;
    if (q > w && nargs < kMaxArgs) args[nargs++] = std::string_view(w, q - w);
  }
  return nl + 1 - p;
}

// The LRANGE reply of `n` items, built once per length.
const std::string& lrange_reply(long n) {
  static std::string cached;
  static long cached_n = -1;
  if (n != cached_n) {
    cached = "*" + std::to_string(n) + "\r\n";
    for (long i = 0; i < n; ++i) cached += "$3\r\nxxx\r\n";
    cached_n = n;
  }
  return cached;
}

void reply(Conn& c, const std::string_view* a, int n) {
  std::string& o = c.out;
  if (ieq(a[0], "lrange") && n == 4) {
    long start = -1, stop = -1;
    std::from_chars(a[2].data(), a[2].data() + a[2].size(), start);
    std::from_chars(a[3].data(), a[3].data() + a[3].size(), stop);
    ++calls[kLrange], o += lrange_reply(start >= 0 && stop >= start && stop - start < 100000 ? stop - start + 1 : 0);
  } else if (ieq(a[0], "get")) {
    ++calls[kGet], o += get_reply;
  } else if (ieq(a[0], "set")) {
    ++calls[kSet], o += "+OK\r\n";
  } else if (ieq(a[0], "ping")) {
    ++calls[kPing], o += "+PONG\r\n";
  } else if (ieq(a[0], "config")) {  // redis-benchmark asks for these two before it starts
    ++calls[kConfig];
    if (n == 3 && ieq(a[1], "get") && ieq(a[2], "save"))
      o += "*2\r\n$4\r\nsave\r\n$0\r\n\r\n";
    else if (n == 3 && ieq(a[1], "get") && ieq(a[2], "appendonly"))
      o += "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n";
    else
      o += "*0\r\n";
  } else if (ieq(a[0], "shutdown")) {
    stop = true;
  } else if (ieq(a[0], "info")) {  // whatever the section: the counters, and no error replies
    ++calls[kInfo];
    std::string s = "# Commandstats\r\n";
    for (int i = 0; i < kNumCmds; ++i)
      s += "cmdstat_" + std::string(kCmdNames[i]) + ":calls=" + std::to_string(calls[i]) + "\r\n";
    s += "# Stats\r\ntotal_error_replies:0\r\n";
    o += "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
  } else {  // any other command, taken to be a write
    ++calls[kOther], o += "+OK\r\n";
  }
}

// Reads what is there (again only if a read filled the buffer) and frames every complete request.
// Returns false if the connection is to be closed.
bool on_readable(Conn& c) {
  for (;;) {
    ssize_t r = read(c.fd, rbuf, kReadSize);
    if (r == 0) return false;
    if (r < 0) return errno == EAGAIN || errno == EINTR;
    const char *p = rbuf, *e = rbuf + r;
    if (!c.partial.empty()) {  // rare: a request split across reads
      c.partial.append(rbuf, r);
      p = c.partial.data(), e = p + c.partial.size();
    }
    const char* const begin = p;
    while (p < e && !stop) {
      std::string_view args[kMaxArgs];
      int nargs;
      long len = frame(p, e, args, nargs);
      if (len == 0) break;
      if (len < 0) {
        c.out += "-ERR Protocol error\r\n";
        (void)!send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL);
        return false;
      }
      p += len;
      if (nargs > 0) reply(c, args, nargs);
    }
    if (c.partial.empty())
      c.partial.assign(p, e);
    else
      c.partial.erase(0, p - begin);
    if (static_cast<size_t>(r) < kReadSize || stop) return true;
  }
}

// One write of everything pending; EPOLLOUT only while something is left over.
bool flush(int ep, Conn& c) {
  if (c.out_pos == c.out.size()) return true;
  ssize_t w = send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL);
  if (w < 0 && errno != EAGAIN && errno != EINTR) return false;
  if (w > 0) c.out_pos += w;
  bool left = c.out_pos < c.out.size();
  if (!left) c.out.clear(), c.out_pos = 0;
  if (left != c.want_out) {
    epoll_event ev{};
    ev.events = EPOLLIN | (left ? uint32_t{EPOLLOUT} : 0u);
    ev.data.fd = c.fd;
    epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_out = left;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6379;
  const char* bind_addr = "127.0.0.1";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--port") && i + 1 < argc) port = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--bind") && i + 1 < argc) bind_addr = argv[++i];
    else if (!strcmp(argv[i], "--get-bulk") && i + 1 < argc) {
      long n = atol(argv[++i]);
      if (n >= 0) get_reply = "$" + std::to_string(n) + "\r\n" + std::string(n, 'x') + "\r\n";
    } else {
      return fprintf(stderr, "usage: %s --port N [--bind 127.0.0.1] [--get-bulk BYTES]\n", argv[0]), 2;
    }
  }
  sigset_t sigs;  // SIGTERM / SIGINT arrive through a signalfd: a clean exit from the loop
  sigemptyset(&sigs), sigaddset(&sigs, SIGTERM), sigaddset(&sigs, SIGINT);
  sigprocmask(SIG_BLOCK, &sigs, nullptr);
  int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);

  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  int one = 1;
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (inet_pton(AF_INET, bind_addr, &sa.sin_addr) != 1 || bind(lfd, (sockaddr*)&sa, sizeof sa) < 0 ||
      listen(lfd, 511) < 0)
    return perror("null_server: bind/listen"), 1;

  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  for (int fd : {lfd, sfd}) {
    ev.data.fd = fd;
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  printf("null_server: listening on %s:%d\n", bind_addr, port);
  fflush(stdout);

  std::vector<std::unique_ptr<Conn>> conns;  // indexed by fd
  std::vector<int> dirty;
  auto close_conn = [&](int fd) { close(fd), conns[fd].reset(); };
  epoll_event evs[512];
  while (!stop) {
    int n = epoll_wait(ep, evs, 512, -1);
    if (n < 0 && errno != EINTR) return perror("null_server: epoll_wait"), 1;
    for (int i = 0; i < n; ++i) {
      int fd = evs[i].data.fd;
      if (fd == sfd) {
        stop = true;
      } else if (fd == lfd) {
        for (int cfd; (cfd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;) {
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          if (conns.size() <= static_cast<size_t>(cfd)) conns.resize(cfd + 1);
          conns[cfd] = std::make_unique<Conn>();
          conns[cfd]->fd = cfd;
          ev.data.fd = cfd;
          epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev);
        }
      } else if (Conn* c = conns[fd].get()) {
        if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && !on_readable(*c)) {
          close_conn(fd);
        } else if (c->out_pos < c->out.size() && !c->dirty) {
          c->dirty = true;
          dirty.push_back(fd);
        }
      }
    }
    for (int fd : dirty)  // replies are batched: one write per client per iteration
      if (Conn* c = conns[fd].get()) {
        c->dirty = false;
        if (!flush(ep, *c)) close_conn(fd);
      }
    dirty.clear();
  }
  for (auto& c : conns)
    if (c) close(c->fd);
  return close(lfd), close(ep), 0;
}
