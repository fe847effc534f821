// The append-only file's directory and writes (see aof.h).
#include "server/aof.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "net/event_loop.h"
#include "server/log.h"
#include "server/persistence.h"
#include "server/server.h"

namespace peregrine {
namespace {

bool ReadWholeFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return n == 0;
    }
    out->append(buf, static_cast<size_t>(n));
  }
}

bool FsyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fsync(fd) == 0;
  ::close(fd);
  return ok;
}

uint64_t FileSize(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0 ? static_cast<uint64_t>(sb.st_size) : 0;
}

}  // namespace

AppendOnlyFile::~AppendOnlyFile() {
  StopSyncThread();
  if (fd_ >= 0) ::close(fd_);
}

bool AppendOnlyFile::ReadManifest(bool* found, std::string* err) {
  const Config& c = server_.config();
  dir_ = c.appenddirname;
  prefix_ = c.appendfilename;
  fsync_.store(c.appendfsync, std::memory_order_relaxed);
  *found = false;
  manifest_ = AofManifest{};
  struct stat sb;
  if (stat(dir_.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode)) return true;
  const std::string path = PathOf(prefix_ + ".manifest");
  if (access(path.c_str(), F_OK) != 0) return true;
  std::string text;
  if (!ReadWholeFile(path, &text)) {
    *err = "Fatal error: can't open the AOF manifest file " + path + " for reading: " + std::strerror(errno);
    return false;
  }
  if (!AofManifest::Parse(text, &manifest_, err)) return false;
  *found = true;
  return true;
}

bool AppendOnlyFile::UpgradeOldStyle(bool* found, std::string* err) {
  *found = false;
  struct stat sb;
  if (stat(prefix_.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) return true;
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = "Can't open or create append-only dir " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  AofManifest m;
  m.base_seq = 1;
  m.base = AofManifest::File{prefix_, 1, 'b'};
  // The manifest first, then the move (Redis's order: a crash between the
  // two leaves a manifest naming a file still outside, which the next
  // start moves again).
  if (!PersistManifest(m, err)) return false;
  if (rename(prefix_.c_str(), PathOf(prefix_).c_str()) != 0) {
    *err = "Error trying to rename the old AOF file " + prefix_ + " into " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  FsyncDir(".");
  manifest_ = std::move(m);
  LOG_NOTICE("Successfully migrated an old-style AOF into the AOF directory");
  *found = true;
  return true;
}

bool AppendOnlyFile::PersistManifest(const AofManifest& m, std::string* err) {
  // As Redis's persistAofManifest: a temporary file, fsynced, renamed over
  // the manifest, the directory fsynced.
  const std::string temp = PathOf("temp-" + prefix_ + ".manifest");
  const std::string path = PathOf(prefix_ + ".manifest");
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = "Can't open the AOF manifest file " + temp + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = WriteAll(fd, m.Format()) && fsync(fd) == 0;
  ::close(fd);
  if (!ok || rename(temp.c_str(), path.c_str()) != 0 || !FsyncDir(dir_)) {
    *err = "Error trying to write the AOF manifest file " + path + ": " + std::strerror(errno);
    unlink(temp.c_str());
    return false;
  }
  return true;
}

bool AppendOnlyFile::OpenIncr(const std::string& name, std::string* err) {
  const std::string path = PathOf(name);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = "Can't open the append-only file " + name + ": " + std::strerror(errno);
    return false;
  }
  std::scoped_lock lock(mu_, sync_mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  file_db_ = -1;  // a new file starts by selecting its database
  last_ts_s_ = 0;  // (and with its time, when annotated)
  synced_.store(written_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  return true;
}

bool AppendOnlyFile::OpenOnStart(std::string* err) {
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = "Can't open or create append-only dir " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  AofManifest m = manifest_;
  if (!m.base && m.incr.empty()) {
    // An empty start (or a dataset from an RDB file): a base file now, so
    // that the directory alone holds the data from here on.
    m.base_seq++;
    const bool rdb = server_.config().aof_use_rdb_preamble;
    const std::string name = AofManifest::BaseName(prefix_, m.base_seq, rdb);
    if (!(rdb ? SaveRdbFile(server_, PathOf(name), err) : SaveAofCommandsFile(server_, PathOf(name), err)))
      return false;
    m.base = AofManifest::File{name, m.base_seq, 'b'};
    LOG_NOTICE("Creating AOF base file %s on server start", name.c_str());
  }
  const bool fresh = m.incr.empty();
  if (fresh) {
    m.incr_seq++;
    m.incr.push_back(AofManifest::File{AofManifest::IncrName(prefix_, m.incr_seq), m.incr_seq, 'i'});
  }
  const std::string& name = m.incr.back().name;
  if (!OpenIncr(name, err) || !PersistManifest(m, err)) return false;
  manifest_ = std::move(m);
  base_size_.store(manifest_.base ? FileSize(PathOf(manifest_.base->name)) : 0, std::memory_order_relaxed);
  uint64_t size = base_size_.load(std::memory_order_relaxed);
  for (const auto& f : manifest_.incr) size += FileSize(PathOf(f.name));
  current_size_.store(size, std::memory_order_relaxed);
  LOG_NOTICE("%s AOF incr file %s on server start", fresh ? "Creating" : "Opening", name.c_str());
  active_.store(true, std::memory_order_release);
  StartSyncThread();
  return true;
}

void AppendOnlyFile::WriteLocked(std::string_view bytes) {
  if (!pending_.empty() || fd_ < 0) {
    pending_.append(bytes);
    bytes = pending_;
    if (fd_ < 0) return;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // Kept for the next write or the cron's retry; writes are refused
      // meanwhile (Redis: aof_last_write_status).
      if (!write_failed_.exchange(true, std::memory_order_relaxed)) {
        last_error_ = n < 0 ? std::strerror(errno) : "short write";
        LOG_WARNING("Error writing to the AOF file: %s", last_error_.c_str());
      }
      if (pending_.empty()) {
        pending_.assign(bytes.substr(done));
      } else {
        pending_.erase(0, done);
      }
      written_.fetch_add(done, std::memory_order_relaxed);
      current_size_.fetch_add(done, std::memory_order_relaxed);
      return;
    }
    done += static_cast<size_t>(n);
  }
  if (!pending_.empty()) pending_.clear();
  if (write_failed_.exchange(false, std::memory_order_relaxed))
    LOG_WARNING("AOF write error looks solved, Redis can write again.");
  written_.fetch_add(done, std::memory_order_relaxed);
  current_size_.fetch_add(done, std::memory_order_relaxed);
}

uint64_t AppendOnlyFile::Write(const AofChunk& chunk) {
  std::lock_guard<std::mutex> lock(mu_);
  // Turned off meanwhile (a transaction that ran CONFIG SET appendonly no
  // ends): nothing goes anywhere.
  if (!active()) return written_.load(std::memory_order_relaxed);
  if (server_.config().aof_timestamp_enabled) [[unlikely]] {
    // Redis's genAofTimestampAnnotationIfNeeded: one annotation when the
    // second changes, before what follows it.
    const int64_t now_s = UnixTimeMs() / 1000;
    if (now_s > last_ts_s_) {
      last_ts_s_ = now_s;
      WriteLocked("#TS:" + std::to_string(now_s) + "\r\n");
    }
  }
  if (chunk.first_db() != file_db_) {
    // The chunk's commands are in its first database: the file goes there.
    std::string select;
    const std::string n = std::to_string(chunk.first_db());
    AppendRespCommand(&select, {"SELECT", n});
    select += chunk.bytes();
    WriteLocked(select);
  } else {
    WriteLocked(chunk.bytes());
  }
  file_db_ = chunk.last_db();
  return written_.load(std::memory_order_relaxed);
}

void AppendOnlyFile::RetryFailedWrite() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_.empty()) WriteLocked({});
}

std::string AppendOnlyFile::last_write_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

void AppendOnlyFile::SyncTo(uint64_t pos) {
  if (synced_.load(std::memory_order_acquire) >= pos) return;
  std::lock_guard<std::mutex> lock(sync_mu_);
  if (synced_.load(std::memory_order_relaxed) >= pos || fd_ < 0) return;
  // Everything written before now is covered by this one call.
  const uint64_t upto = written_.load(std::memory_order_acquire);
  const int64_t start = MonotonicUs();
  if (fdatasync(fd_) != 0) {
    LOG_WARNING("Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...",
                std::strerror(errno));
    std::_Exit(1);  // as Redis: a reply must not say a write is on disk when it is not
  }
  synced_.store(upto, std::memory_order_release);
  server_.latency().AddIfNeeded("aof-fsync-always", (MonotonicUs() - start) / 1000);
}

void AppendOnlyFile::SyncAllLocked() {
  if (fd_ >= 0) fdatasync(fd_);
  synced_.store(written_.load(std::memory_order_relaxed), std::memory_order_release);
}

void AppendOnlyFile::StartSyncThread() {
  if (sync_thread_.joinable()) return;
  thread_stop_ = false;
  sync_thread_ = std::thread([this] { SyncThreadMain(); });
}

void AppendOnlyFile::StopSyncThread() {
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    thread_stop_ = true;
  }
  thread_cv_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
}

void AppendOnlyFile::SyncThreadMain() {
  // appendfsync everysec: what the workers wrote is synced once a second
  // (Redis's bio fsync job, started from its beforeSleep).
  std::unique_lock<std::mutex> lock(thread_mu_);
  while (!thread_stop_) {
    thread_cv_.wait_for(lock, std::chrono::seconds(1));
    if (thread_stop_) break;
    if (fsync_.load(std::memory_order_relaxed) != AppendFsync::kEverysec) continue;
    const uint64_t w = written_.load(std::memory_order_acquire);
    if (synced_.load(std::memory_order_acquire) >= w) continue;
    std::lock_guard<std::mutex> sync(sync_mu_);
    if (fd_ < 0) continue;
    const uint64_t upto = written_.load(std::memory_order_acquire);
    if (fdatasync(fd_) == 0) synced_.store(upto, std::memory_order_release);
  }
}

bool AppendOnlyFile::BeginRewrite(std::string* base_temp, std::string* base_name, std::string* err) {
  // Everything before the snapshot's instant goes to the current file (the
  // caller flushed every shard's chunk into it), durable before the switch.
  {
    std::scoped_lock lock(mu_, sync_mu_);
    SyncAllLocked();
  }
  if (!waiting_ && active()) {
    AofManifest m = manifest_;
    m.incr_seq++;
    m.incr.push_back(AofManifest::File{AofManifest::IncrName(prefix_, m.incr_seq), m.incr_seq, 'i'});
    if (!OpenIncr(m.incr.back().name, err)) return false;
    if (!PersistManifest(m, err)) {
      // Back to the file before (Redis rolls back the same way).
      std::string ignored;
      OpenIncr(manifest_.incr.back().name, &ignored);
      unlink(PathOf(m.incr.back().name).c_str());
      return false;
    }
    manifest_ = std::move(m);
    LOG_NOTICE("Creating AOF incr file %s on background rewrite", manifest_.incr.back().name.c_str());
  }
  *base_name = AofManifest::BaseName(prefix_, manifest_.base_seq + 1, server_.config().aof_use_rdb_preamble);
  *base_temp = PathOf("temp-rewriteaof-bg-" + std::to_string(getpid()) + ".aof");
  return true;
}

bool AppendOnlyFile::FinishRewrite(bool ok, const std::string& base_name) {
  if (!ok) return false;
  std::string err;
  AofManifest m = manifest_;
  if (m.base) {
    m.base->type = 'h';
    m.history.push_back(*m.base);
  }
  m.base_seq++;
  m.base = AofManifest::File{base_name, m.base_seq, 'b'};
  std::string incr_temp_path;
  if (waiting_) {
    // Turned on at run time: the temporary incremental file becomes the
    // first one of the manifest.
    m.incr_seq++;
    m.incr.clear();
    m.incr.push_back(AofManifest::File{AofManifest::IncrName(prefix_, m.incr_seq), m.incr_seq, 'i'});
    incr_temp_path = PathOf("temp-" + prefix_ + ".incr");
  } else {
    // Every incremental file but the one being written (none with the AOF
    // off) holds what the new base has already.
    const size_t keep = active() && !m.incr.empty() ? 1 : 0;
    for (size_t i = 0; i + keep < m.incr.size(); i++) {
      m.incr[i].type = 'h';
      m.history.push_back(m.incr[i]);
    }
    m.incr.erase(m.incr.begin(), m.incr.end() - static_cast<ptrdiff_t>(keep));
  }
  if (!incr_temp_path.empty() && rename(incr_temp_path.c_str(), PathOf(m.incr.back().name).c_str()) != 0) {
    LOG_WARNING("Error trying to rename the temporary AOF incr file: %s", std::strerror(errno));
    unlink(PathOf(base_name).c_str());
    return false;
  }
  if (!PersistManifest(m, &err)) {
    LOG_WARNING("%s", err.c_str());
    unlink(PathOf(base_name).c_str());
    if (!incr_temp_path.empty()) rename(PathOf(m.incr.back().name).c_str(), incr_temp_path.c_str());
    return false;
  }
  manifest_ = std::move(m);
  waiting_ = false;
  base_size_.store(FileSize(PathOf(base_name)), std::memory_order_relaxed);
  current_size_.store(base_size_.load(std::memory_order_relaxed) +
                          (manifest_.incr.empty() ? 0 : FileSize(PathOf(manifest_.incr.back().name))),
                      std::memory_order_relaxed);
  DeleteHistory();
  return true;
}

void AppendOnlyFile::DeleteHistory() {
  for (const auto& f : manifest_.history) {
    if (unlink(PathOf(f.name).c_str()) == 0)
      LOG_NOTICE("Removing the history file %s in the background", f.name.c_str());
  }
  if (manifest_.history.empty()) return;
  manifest_.history.clear();
  std::string err;
  if (!PersistManifest(manifest_, &err)) LOG_WARNING("%s", err.c_str());
}

bool AppendOnlyFile::PrepareOffRewrite(std::string* err) {
  bool found = false;
  if (!ReadManifest(&found, err)) return false;  // (sets the directory and prefix)
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = "Can't open or create append-only dir " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  waiting_ = false;
  return true;
}

bool AppendOnlyFile::TurnOn(std::string* err) {
  const Config& c = server_.config();
  dir_ = c.appenddirname;
  prefix_ = c.appendfilename;
  fsync_.store(c.appendfsync, std::memory_order_relaxed);
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = "Can't open or create append-only dir " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  // The directory may hold the files of an earlier run: the manifest
  // carries on their sequence numbers (they become history at the first
  // rewrite's end).
  bool found = false;
  std::string ignored;
  if (!ReadManifest(&found, &ignored)) manifest_ = AofManifest{};
  const std::string temp = PathOf("temp-" + prefix_ + ".incr");
  unlink(temp.c_str());
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.clear();
    write_failed_.store(false, std::memory_order_relaxed);
  }
  if (!OpenIncr("temp-" + prefix_ + ".incr", err)) return false;
  // What the manifest listed is history now: only the new base counts.
  if (manifest_.base) {
    manifest_.base->type = 'h';
    manifest_.history.push_back(*manifest_.base);
    manifest_.base.reset();
  }
  for (auto& f : manifest_.incr) {
    f.type = 'h';
    manifest_.history.push_back(f);
  }
  manifest_.incr.clear();
  waiting_ = true;
  active_.store(true, std::memory_order_release);
  StartSyncThread();
  return true;
}

void AppendOnlyFile::TurnOff() {
  active_.store(false, std::memory_order_release);
  StopSyncThread();
  std::scoped_lock lock(mu_, sync_mu_);
  if (fd_ >= 0) {
    if (!pending_.empty()) WriteLocked({});
    SyncAllLocked();
    ::close(fd_);
    fd_ = -1;
  }
  if (waiting_) unlink(PathOf("temp-" + prefix_ + ".incr").c_str());
  waiting_ = false;
  pending_.clear();
  write_failed_.store(false, std::memory_order_relaxed);
}

void AppendOnlyFile::Close() {
  if (!active()) return;
  StopSyncThread();
  std::scoped_lock lock(mu_, sync_mu_);
  if (fd_ >= 0) {
    if (!pending_.empty()) WriteLocked({});
    SyncAllLocked();
  }
}

}  // namespace peregrine
