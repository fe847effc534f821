// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key ...]: moves keys to
// another server as Redis does (redis-cli --cluster reshard moves slots
// with it): each key's DUMP payload goes over as RESTORE (RESTORE-ASKING in
// cluster mode, so that an importing node takes it), and the keys the
// target took are deleted here (a DEL is what is logged), unless COPY.
//
// As Redis's, it waits for the target while it runs (a worker's thread, up
// to `timeout` ms per step), and keeps each worker's connection to a target
// for 10 s for the next MIGRATE (docs/cluster.md, "Migration").
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "commands/common.h"
#include "core/numbers.h"
#include "net/event_loop.h"
#include "persist/rdb_writer.h"
#include "protocol/parser.h"

namespace peregrine {

namespace {

constexpr int64_t kSocketCacheTtlMs = 10'000;
constexpr size_t kSocketCacheMax = 64;

struct CachedSocket {
  int fd = -1;
  int last_db = -1;
  int64_t last_use_ms = 0;
};

// This worker's connections to migration targets, by "host:port".
std::map<std::string, CachedSocket>& SocketCache() {
  thread_local std::map<std::string, CachedSocket> cache;
  return cache;
}

void CloseCached(const std::string& name) {
  auto& cache = SocketCache();
  auto it = cache.find(name);
  if (it == cache.end()) return;
  close(it->second.fd);
  cache.erase(it);
  ServerState::migrate_cached_sockets.fetch_sub(1, std::memory_order_relaxed);
}

// Waits for `fd` to be ready for `events` until `deadline_ms` (monotonic).
bool WaitFor(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    const int64_t left = deadline_ms - MonotonicMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, INT_MAX)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// A connection to host:port (cached, or new within `timeout_ms`); null on
// failure.
CachedSocket* Connect(const std::string& host, std::string_view port, int64_t timeout_ms, int64_t now_ms) {
  auto& cache = SocketCache();
  const std::string name = host + ":" + std::string(port);
  // Idle ones go first (Redis's cron closes them after 10 s).
  for (auto it = cache.begin(); it != cache.end();) {
    if (now_ms - it->second.last_use_ms > kSocketCacheTtlMs && it->first != name) {
      close(it->second.fd);
      it = cache.erase(it);
      ServerState::migrate_cached_sockets.fetch_sub(1, std::memory_order_relaxed);
    } else {
      ++it;
    }
  }
  if (auto it = cache.find(name); it != cache.end()) {
    it->second.last_use_ms = now_ms;
    return &it->second;
  }
  if (cache.size() >= kSocketCacheMax) {
    close(cache.begin()->second.fd);
    cache.erase(cache.begin());
    ServerState::migrate_cached_sockets.fetch_sub(1, std::memory_order_relaxed);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port_s(port);
  if (getaddrinfo(host.c_str(), port_s.c_str(), &hints, &res) != 0 || res == nullptr) return nullptr;
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  bool ok = fd >= 0 && (::connect(fd, res->ai_addr, res->ai_addrlen) == 0 || errno == EINPROGRESS);
  freeaddrinfo(res);
  // (Connected, or failed: as Redis's, a refused connection shows as the
  // first write failing.)
  if (ok) ok = WaitFor(fd, POLLOUT, MonotonicMs() + timeout_ms);
  if (!ok) {
    if (fd >= 0) close(fd);
    return nullptr;
  }
  CachedSocket& s = cache[name];
  ServerState::migrate_cached_sockets.fetch_add(1, std::memory_order_relaxed);
  s.fd = fd;
  s.last_use_ms = now_ms;
  return &s;
}

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  *out += "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    *out += "$" + std::to_string(a.size()) + "\r\n";
    out->append(a);
    *out += "\r\n";
  }
}

bool WriteAll(int fd, std::string_view data, int64_t timeout_ms) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && WaitFor(fd, POLLOUT, MonotonicMs() + timeout_ms)) continue;
    return false;
  }
  return true;
}

// Reads one reply line ("+OK", "-ERR ...") within timeout_ms; false on a
// socket error, a timeout (*timed_out) or a line past 1 KB (Redis reads
// its replies into 1 KB).
bool ReadLine(int fd, std::string* buffered, std::string* line, int64_t timeout_ms, bool* timed_out) {
  const int64_t deadline = MonotonicMs() + timeout_ms;
  for (;;) {
    const size_t nl = buffered->find("\r\n");
    if (nl != std::string::npos) {
      line->assign(*buffered, 0, nl);
      buffered->erase(0, nl + 2);
      return true;
    }
    if (buffered->size() > 1024) return false;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      buffered->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (WaitFor(fd, POLLIN, deadline)) continue;
      *timed_out = true;
    }
    return false;
  }
}

void MigrateCommand(CommandContext& ctx) {
  const auto& a = ctx.args;
  bool copy = false, replace = false;
  std::string_view user, password;
  size_t first_key = 3, num_keys = 1;
  for (size_t j = 6; j < a.size(); j++) {
    const size_t more = a.size() - 1 - j;
    if (EqualsIgnoreCase(a[j], "copy")) {
      copy = true;
    } else if (EqualsIgnoreCase(a[j], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(a[j], "auth")) {
      if (more == 0) return ctx.reply.Error(kErrSyntax);
      password = a[++j];
      user = {};
    } else if (EqualsIgnoreCase(a[j], "auth2")) {
      if (more < 2) return ctx.reply.Error(kErrSyntax);
      user = a[++j];
      password = a[++j];
    } else if (EqualsIgnoreCase(a[j], "keys")) {
      if (!a[3].empty()) {
        return ctx.reply.Error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
      }
      first_key = j + 1;
      num_keys = a.size() - j - 1;
      break;
    } else {
      return ctx.reply.Error(kErrSyntax);
    }
  }
  int64_t timeout, db;
  if (!ParseIntArg(ctx, a[5], &timeout) || !ParseIntArg(ctx, a[4], &db)) return;
  if (db < INT32_MIN || db > INT32_MAX) return ctx.reply.Error(kErrNotInteger);
  if (timeout <= 0) timeout = 1000;

  // The keys that exist (an expired one counts as gone).
  struct Moving {
    std::string_view key;
    int64_t ttl_ms;
    std::string payload;
  };
  std::vector<Moving> keys;
  for (size_t i = first_key; i < first_key + num_keys; i++) {
    Db::Entry* e = LookupRead(ctx, a[i], /*touch=*/false);
    if (e == nullptr) continue;
    int64_t ttl = 0;
    if (e->has_expire()) {
      ttl = e->expire_ms() - ctx.now_ms;
      if (ttl < 0) continue;
      if (ttl < 1) ttl = 1;
    }
    keys.push_back({a[i], ttl, RdbWriter::Dump(e->value)});
  }
  if (keys.empty()) return ctx.reply.SimpleString("NOKEY");

  const std::string host(UpToNul(a[1]));
  const std::string name = host + ":" + std::string(a[2]);
  const bool cluster = ctx.server.cluster() != nullptr;
  for (int attempt = 0; attempt < 2; attempt++) {
    CachedSocket* s = Connect(host, a[2], timeout, ctx.now_ms);
    if (s == nullptr) return ctx.reply.Error("IOERR error or timeout connecting to the client");
    std::string out;
    if (!password.empty()) {
      if (user.empty())
        AppendCommand(&out, {"AUTH", password});
      else
        AppendCommand(&out, {"AUTH", user, password});
    }
    const bool select = s->last_db != db;
    const std::string db_s = std::to_string(db);
    if (select) AppendCommand(&out, {"SELECT", db_s});
    std::vector<std::string> ttls;
    ttls.reserve(keys.size());
    for (const Moving& m : keys) {
      ttls.push_back(std::to_string(m.ttl_ms));
      const std::string_view restore = cluster ? "RESTORE-ASKING" : "RESTORE";
      if (replace)
        AppendCommand(&out, {restore, m.key, ttls.back(), m.payload, "REPLACE"});
      else
        AppendCommand(&out, {restore, m.key, ttls.back(), m.payload});
    }
    std::string in, line, target_error;
    const bool write_error = !WriteAll(s->fd, out, timeout);
    bool socket_error = write_error, timed_out = false;
    size_t replies = 0;
    if (!socket_error && !password.empty()) {
      if (!ReadLine(s->fd, &in, &line, timeout, &timed_out))
        socket_error = true;
      else if (!line.empty() && line[0] == '-')
        target_error = line.substr(1);
    }
    if (!socket_error && select) {
      if (!ReadLine(s->fd, &in, &line, timeout, &timed_out))
        socket_error = true;
      else if (!line.empty() && line[0] == '-' && target_error.empty())
        target_error = line.substr(1);  // (a refused AUTH's error is the one told, as Redis's)
      else if (target_error.empty())
        s->last_db = static_cast<int>(db);
    }
    // (A refused AUTH or SELECT makes every key's answer an error; else
    // each key the target took goes here, whatever came of the others, as
    // Redis's.)
    const bool refused_first = !target_error.empty();
    std::vector<std::string_view> deleted = {"DEL"};
    for (size_t i = 0; i < keys.size() && !socket_error; i++) {
      if (!ReadLine(s->fd, &in, &line, timeout, &timed_out)) {
        socket_error = true;
        break;
      }
      replies++;
      if (refused_first || (!line.empty() && line[0] == '-')) {
        if (target_error.empty()) target_error = line.substr(1);
        continue;
      }
      if (!copy) {
        // The target has it: it goes here.
        const std::string_view k = keys[i].key;
        if (ctx.DbOf(k).Erase(k)) {
          SignalModifiedKey(ctx, k);
          Notify(ctx, notify::kGeneric, "del", k);
          deleted.push_back(k);
        }
      }
    }
    if (deleted.size() > 1) {
      ctx.worker.LogAs(std::span<const std::string_view>(deleted));
      ctx.shard.AddDirty(deleted.size() - 1);
    } else {
      ctx.worker.LogOnlyForms();  // (nothing here changed)
    }
    if (socket_error) {
      CloseCached(name);
      // Once more on a fresh connection (a cached one may have gone), as
      // Redis: only if no key's answer came and it was not a timeout (a
      // slow RESTORE sent again would find its key there).
      if (attempt == 0 && replies == 0 && !timed_out) continue;
      return ctx.reply.Error(std::string("IOERR error or timeout ") + (write_error ? "writing" : "reading") +
                             " to target instance");
    }
    if (!target_error.empty()) {
      CloseCached(name);
      return ctx.reply.Error("ERR Target instance replied with error: " + target_error);
    }
    return ctx.reply.Ok();
  }
}

// MIGRATE's keys: argv[3], or those after KEYS (Redis's migrateGetKeys).
bool MigrateKeys(std::span<const std::string_view> args, std::vector<size_t>* out) {
  out->clear();
  if (args.size() < 6) return false;
  for (size_t i = 6; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "auth")) {
      i++;
    } else if (EqualsIgnoreCase(args[i], "auth2")) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "keys")) {
      if (!args[3].empty()) break;
      for (size_t k = i + 1; k < args.size(); k++) out->push_back(k);
      return true;
    }
  }
  out->push_back(3);
  return true;
}

}  // namespace

void RegisterMigrateCommands(CommandTable& t) {
  CommandFamily f(t, kAclKeyspace | kAclDangerous, "generic");
  f.Add({.name = "migrate", .arity = -6, .flags = kCmdWrite, .first_key = 3, .last_key = 3, .find_keys = MigrateKeys,
         .summary = "Atomically transfers a key from one Redis instance to another.", .since = "2.6.0",
         .complexity = "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target "
                       "instance. See the pages of these commands for time complexity. Also an O(N) data transfer "
                       "between the two instances is performed.",
         .tips = {"nondeterministic_output"}, .handler = MigrateCommand});
}

}  // namespace peregrine
