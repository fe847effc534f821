// The replica's link thread, a full sync's snapshot (see replica_link.h):
// read from the primary into a file for worker 0 to load. Log texts are
// Redis's (replication.c, readSyncBulkPayload).
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "net/event_loop.h"
#include "server/log.h"
#include "server/replica_link.h"
#include "server/supervise.h"

namespace peregrine {

bool ReplicaLink::ReceiveSnapshot(const std::string& replid, uint64_t offset) {
  SetState(State::kTransfer);
  std::string line;
  do {
    if (!ReadLine(&line)) return false;
  } while (line.empty());  // (the primary's keep-alive while its snapshot waits)
  if (line[0] == '-') {
    LOG_WARNING("MASTER aborted replication with an error: %s", line.c_str() + 1);
    return false;
  }
  if (line[0] != '$') {
    LOG_WARNING("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host "
                "and port are right?",
                line.c_str());
    return false;
  }
  std::string mark;
  int64_t total = -1;
  if (line.starts_with("$EOF:") && line.size() == 5 + 40) {
    mark = line.substr(5);
  } else {
    char* end = nullptr;
    total = std::strtoll(line.c_str() + 1, &end, 10);
    if (end == line.c_str() + 1 || *end != '\0' || total < 0) {
      LOG_WARNING("Bad protocol from MASTER: bad transfer length '%s'", line.c_str());
      return false;
    }
  }
  // As Redis's useDisklessLoad: swapdb always, on-empty-db when this server
  // has no keys.
  const int mode = diskless_load_.load(std::memory_order_relaxed);
  const bool diskless = mode == 2 || (mode == 1 && dataset_empty_.load(std::memory_order_relaxed));
  const char* to = diskless ? "to parser" : "to disk";
  if (total < 0)
    LOG_NOTICE("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF %s", to);
  else
    LOG_NOTICE("MASTER <-> REPLICA sync: receiving %lld bytes from master %s", static_cast<long long>(total), to);
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.sync_total = total;
    status_.sync_read = 0;
  }
  if (diskless) {
    if (!PayloadToPipe(replid, offset, total, mark)) return false;
  } else {
    char name[64];
    std::snprintf(name, sizeof(name), "temp-%d.%ld.rdb", static_cast<int>(UnixTimeMs() / 1000),
                  static_cast<long>(::getpid()));
    if (!PayloadToFile(name, total, mark)) return false;
    LOG_NOTICE("MASTER <-> REPLICA sync: Flushing old data");
    {
      std::lock_guard<std::mutex> lock(mu_);
      load_result_ = -1;
    }
    Push(Event{Event::Kind::kFullSync, name, replid, offset});
    temp_file_.clear();
  }
  if (!WaitLoaded()) return false;
  status_.sync_total = -1;
  status_.read_offset = offset;
  LOG_NOTICE("MASTER <-> REPLICA sync: Finished with success");
  supervise::Status(
      "MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.");
  return true;
}

bool ReplicaLink::ReadPayload(int64_t total, const std::string& mark,
                              const std::function<bool(const char*, size_t)>& out) {
  int64_t got = 0;
  for (;;) {
    if (total >= 0) {
      const size_t take = static_cast<size_t>(std::min<int64_t>(total - got, static_cast<int64_t>(in_.size())));
      if (!out(in_.data(), take)) return false;
      in_.erase(0, take);
      got += static_cast<int64_t>(take);
      if (got == total) return true;
    } else {
      const size_t at = in_.find(mark);
      if (at != std::string::npos) {
        if (!out(in_.data(), at)) return false;
        in_.erase(0, at + mark.size());
        return true;
      }
      // Keep what could be the start of the mark.
      if (in_.size() > mark.size()) {
        const size_t take = in_.size() - mark.size();
        if (!out(in_.data(), take)) return false;
        in_.erase(0, take);
        got += static_cast<int64_t>(take);
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_.sync_read = got;
    }
    if (!ReadMore()) {
      LOG_WARNING("I/O error trying to sync with MASTER: connection lost");
      return false;
    }
  }
}

bool ReplicaLink::PayloadToFile(const char* name, int64_t total, const std::string& mark) {
  const int file = ::open(name, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (file < 0) {
    LOG_WARNING("Opening the temp file needed for MASTER <-> REPLICA synchronization: %s", std::strerror(errno));
    return false;
  }
  temp_file_ = name;
  bool ok = ReadPayload(total, mark, [&](const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(file, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  });
  if (ok && ::fsync(file) != 0) {
    LOG_WARNING("Failed trying to sync the temp DB to disk in MASTER <-> REPLICA synchronization: %s",
                std::strerror(errno));
    ok = false;
  }
  ::close(file);
  if (!ok) {
    ::unlink(name);
    temp_file_.clear();
  }
  return ok;
}

bool ReplicaLink::PayloadToPipe(const std::string& replid, uint64_t offset, int64_t total, const std::string& mark) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    LOG_WARNING("Can't create a pipe for the diskless load: %s", std::strerror(errno));
    return false;
  }
  // (A larger pipe: fewer wake-ups of the loader; best effort.)
  ::fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  ::fcntl(p[1], F_SETFL, O_NONBLOCK);
  // (And the loader's end: it reads what has come between its slices,
  // holding no shard, and waits only inside a key: RdbLoader::FillAvailable.)
  ::fcntl(p[0], F_SETFL, O_NONBLOCK);
  // (swapdb keeps the old data until the new is whole.)
  if (diskless_load_.load(std::memory_order_relaxed) != 2) LOG_NOTICE("MASTER <-> REPLICA sync: Flushing old data");
  {
    std::lock_guard<std::mutex> lock(mu_);
    load_result_ = -1;
  }
  // Worker 0 loads as the bytes come: it owns the reading end from here.
  Event ev{Event::Kind::kFullSync, {}, replid, offset};
  ev.fd = p[0];
  ev.size = total > 0 ? static_cast<uint64_t>(total) : 0;
  Push(std::move(ev));
  // Written without blocking, so that a stop is seen while worker 0 is not
  // reading (it may stop this link before it takes the event).
  const bool ok = ReadPayload(total, mark, [&](const char* data, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(p[1], data, n);
      if (w > 0) {
        data += w;
        n -= static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno != EAGAIN) return false;  // (EPIPE: the load stopped)
      pollfd pf{p[1], POLLOUT, 0};
      ::poll(&pf, 1, 100);
      if (stop_.load(std::memory_order_acquire)) return false;
    }
    return true;
  });
  ::close(p[1]);  // (the load sees the end: a payload cut short fails it)
  return ok;
}

bool ReplicaLink::WaitLoaded() {
  std::unique_lock<std::mutex> lock(mu_);
  // A newline a second while it loads, so that the primary does not take
  // the replica for gone (Redis's replicationSendNewlineToMaster).
  while (!cv_.wait_for(lock, std::chrono::seconds(1),
                       [&] { return stop_.load(std::memory_order_acquire) || load_result_ >= 0; })) {
    lock.unlock();
    SendAll("\n");
    lock.lock();
  }
  if (load_result_ != 1) {
    if (load_result_ == 0) LOG_WARNING("Failed trying to load the MASTER synchronization DB from disk");
    return false;
  }
  return true;
}

}  // namespace peregrine
