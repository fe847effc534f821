// BgSave (see bgsave.h).
#include "server/bgsave.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstring>

#include "net/event_loop.h"
#include "persist/aof_format.h"
#include "persist/aof_rewrite.h"
#include "persist/crc64.h"
#include "persist/rdb_format.h"
#include "server/log.h"
#include "server/persistence.h"
#include "server/server.h"

namespace peregrine {

// One shard's side: the sinks of its databases (each names its database)
// and the chunk being filled. Touched only by whoever holds the shard.
struct BgSave::ShardSink {
  struct DbSink final : Db::SnapshotSink {
    ShardSink* owner = nullptr;
    int db = 0;
    void SaveEntry(const Db::Entry& e) override { owner->Save(db, e); }
  };

  ShardSink(BgSave* job, Shard* shard, const RdbKeyWriter& keys, bool compress)
      : job(job), shard(shard), keys(keys), writer(compress, /*checksum=*/false) {}

  void Save(int db, const Db::Entry& e) {
    if (job->commands_) {
      // An AOF base without the RDB preamble: the commands that rebuild it.
      if (Db::IsExpired(e, job->start_ms_)) return;
      if (db != current_db) {
        const std::string n = std::to_string(db);
        AppendRespCommand(&writer.buffer(), {"SELECT", n});
        current_db = db;
      }
      char scratch[CompactKey::kScratchSize];
      AppendKeyCommands(&writer.buffer(), e.key(scratch), e.value, e.expire_ms());
      chunk_keys++;
      if (writer.buffer().size() >= kChunkBytes) Flush();
      return;
    }
    if (db != current_db) {
      writer.Byte(rdb::kOpSelectDb);
      writer.Len(static_cast<uint64_t>(db));
      // The whole database's size as the snapshot began (every shard's
      // part says the same): a loader sizes its table once (Redis's
      // dictExpand; without it a Redis replica rehashes as it loads).
      const auto& [count, expires] = job->db_totals_[static_cast<size_t>(db)];
      writer.Byte(rdb::kOpResizeDb);
      writer.Len(count);
      writer.Len(expires);
      current_db = db;
    }
    if (keys.Write(writer, *shard, e)) chunk_keys++;
    if (writer.buffer().size() >= kChunkBytes) Flush();
  }
  void Flush() {
    if (writer.buffer().empty()) return;
    job->Push(std::move(writer.buffer()), chunk_keys);
    writer.buffer().clear();
    chunk_keys = 0;
    current_db = -1;  // the next chunk starts with its database
  }

  BgSave* job;
  Shard* shard;
  RdbKeyWriter keys;
  RdbWriter writer;
  std::vector<DbSink> dbs;
  int current_db = -1;
  uint64_t chunk_keys = 0;
  int next_db = 0;  // the database Step goes on with
};

std::unique_ptr<BgSave> BgSave::Start(Server& server, std::string* err) {
  return Start(server, err, "temp-bg-" + std::to_string(getpid()) + ".rdb", server.config().dbfilename, false,
               false);
}

std::unique_ptr<BgSave> BgSave::Make(Server& server) {
  std::unique_ptr<BgSave> job(new BgSave());
  job->server_ = &server;
  job->start_ms_ = UnixTimeMs();
  job->dirty_at_start_ = TotalDirty(server);
  job->key_delay_us_ = server.config().rdb_key_save_delay;
  job->checksum_ = server.config().rdbchecksum;
  return job;
}

bool BgSave::OpenTemp(std::string* err) {
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ >= 0) return true;
  *err = aof_base_ ? "Can't open the temporary file for AOF rewrite " + temp_ + ": " + std::strerror(errno)
                   : "Failed opening the temp RDB file " + temp_ + " for saving: " + std::strerror(errno);
  return false;
}

std::unique_ptr<BgSave> BgSave::Start(Server& server, std::string* err, std::string temp, std::string filename,
                                      bool aof_base, bool commands) {
  std::unique_ptr<BgSave> job = Make(server);
  job->filename_ = std::move(filename);
  job->aof_base_ = aof_base;
  job->commands_ = commands;
  job->temp_ = std::move(temp);
  if (!job->OpenTemp(err)) return nullptr;
  job->Begin(server);
  job->writer_ = std::thread([j = job.get()] { j->WriterMain(); });
  return job;
}

std::unique_ptr<BgSave> BgSave::StartToReplica(Server& server, std::string* err, uint64_t client_id, int fd,
                                               std::string prefix, std::string mark, bool disk) {
  if (fd < 0) {
    *err = "no socket for the replica";
    return nullptr;
  }
  std::unique_ptr<BgSave> job = Make(server);
  job->replica_ = client_id;
  job->send_timeout_ms_ = int64_t{server.config().repl_timeout} * 1000;
  job->mark_ = std::move(mark);
  job->disk_ = disk;
  if (!disk) job->max_queued_ = kMaxQueuedSocket;
  if (disk) {
    // (The file BGSAVE writes, as Redis's disk-based sync.)
    job->temp_ = "temp-bg-" + std::to_string(getpid()) + ".rdb";
    job->filename_ = server.config().dbfilename;
    if (!job->OpenTemp(err)) return nullptr;
  }
  job->out_fd_ = fd;  // (the caller's until here)
  job->prefix_ = std::move(prefix);
  job->Begin(server);
  job->writer_ = std::thread([j = job.get()] { j->WriterMain(); });
  return job;
}

void BgSave::Begin(Server& server) {
  if (commands_) {
    std::string header = FunctionLoadCommands(server);
    if (!header.empty()) Push(std::move(header), 0);
  } else {
    RdbWriter header(server.config().rdbcompression, false);
    WriteRdbHeader(server, header, start_ms_, aof_base_);
    Push(std::move(header.buffer()), 0);
  }
  // Every database of every shard starts its snapshot now, at one epoch
  // above any before (Db::BeginSnapshot).
  static std::atomic<uint32_t> epochs{0};
  const uint32_t epoch = epochs.fetch_add(1, std::memory_order_relaxed) + 1;
  const RdbKeyWriter keys(server.config().maxmemory_policy, start_ms_);
  db_totals_.clear();
  for (int d = 0; d < server.config().databases; d++) db_totals_.push_back(DbSizes(server, d));
  for (size_t s = 0; s < server.num_shards(); s++) {
    Shard& shard = server.shard(s);
    auto sink = std::make_unique<ShardSink>(this, &shard, keys, server.config().rdbcompression);
    sink->dbs.resize(static_cast<size_t>(shard.num_dbs()));
    for (int d = 0; d < shard.num_dbs(); d++) {
      sink->dbs[static_cast<size_t>(d)].owner = sink.get();
      sink->dbs[static_cast<size_t>(d)].db = d;
      shard.db(d).BeginSnapshot(&sink->dbs[static_cast<size_t>(d)], epoch);
      keys_total_ += shard.db(d).size();
    }
    shards_.push_back(std::move(sink));
  }
}

bool BgSave::Write(std::string_view bytes) {
  return replica_ == 0 || disk_ ? WriteAll(fd_, bytes) : Send(bytes);
}

bool BgSave::Send(std::string_view bytes) {
  // The replica's socket is non-blocking (its worker's): wait while full.
  const int timeout_ms = static_cast<int>(std::min<int64_t>(send_timeout_ms_, INT32_MAX));
  while (!bytes.empty()) {
    // (send: a replica gone is an error here, not SIGPIPE, whatever the
    // process does with the signal; the fuzzers do not ignore it.)
    const ssize_t n = ::send(out_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{out_fd_, POLLOUT, 0};
      const int r = ::poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1);
      if (r > 0 && !(p.revents & (POLLERR | POLLHUP))) continue;
      if (r == 0) errno = ETIMEDOUT;
      if (r > 0) errno = EPIPE;  // (its end went)
    }
    return false;
  }
  return true;
}

bool BgSave::SendFile(int file, std::string* why) {
  struct stat st;
  if (::fstat(file, &st) != 0) {
    *why = std::string("Can't stat the RDB file to send: ") + std::strerror(errno);
    return false;
  }
  sending_file_.store(true, std::memory_order_release);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  bool ok = Send("$" + std::to_string(size) + "\r\n");
  std::string buf(kChunkBytes, '\0');
  for (uint64_t off = 0; ok && off < size;) {
    const ssize_t n = ::pread(file, buf.data(), buf.size(), static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = std::string("Read error sending DB to replica: ") + (n == 0 ? "unexpected end" : std::strerror(errno));
      return false;
    }
    off += static_cast<uint64_t>(n);
    ok = Send(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  if (!ok) *why = std::string("Write error sending DB to replica: ") + std::strerror(errno);
  return ok;
}

BgSave::~BgSave() {
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) ::close(fd_);
  if (out_fd_ >= 0) ::close(out_fd_);
}

bool BgSave::Step(size_t shard, size_t max_entries) {
  ShardSink& sink = *shards_[shard];
  Shard& s = *sink.shard;
  if (give_up_.load(std::memory_order_relaxed)) [[unlikely]] {
    // (The replica is gone: nothing more is read.)
    for (; sink.next_db < s.num_dbs(); sink.next_db++) s.db(sink.next_db).EndSnapshot();
  }
  // The disk is behind: wait (the writes' own copies still go).
  if (queued_bytes_.load(std::memory_order_relaxed) >= max_queued_ && sink.next_db < s.num_dbs()) return true;
  while (sink.next_db < s.num_dbs()) {
    if (s.db(sink.next_db).SnapshotStep(max_entries)) return true;
    s.db(sink.next_db).EndSnapshot();
    sink.next_db++;
  }
  sink.Flush();
  // The last touch of this object by this worker: counted under the lock,
  // so that the writer (and whoever destroys the job after it) sees it only
  // once nothing here is used any more.
  std::lock_guard<std::mutex> lock(mu_);
  shards_done_++;
  cv_.notify_one();
  return false;
}

void BgSave::Abort() {
  for (auto& sink : shards_) {
    for (int d = 0; d < sink->shard->num_dbs(); d++) sink->shard->db(d).EndSnapshot();
    sink->next_db = sink->shard->num_dbs();
  }
  // A replica's socket: a writer waiting for it to drain stops now.
  if (replica_ != 0) ::shutdown(out_fd_, SHUT_RDWR);
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  cv_.notify_one();
}

void BgSave::Push(std::string&& chunk, uint64_t keys) {
  queued_bytes_.fetch_add(chunk.size(), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  queue_.emplace_back(std::move(chunk), keys);
  cv_.notify_one();
}

void BgSave::WriterMain() {
  uint64_t crc = 0;
  bool failed = false;
  std::string why;
  const size_t nshards = shards_.size();
  // (To a replica: the +FULLRESYNC line and the payload's header first,
  // outside the checksum.)
  if (!prefix_.empty() && !Send(prefix_)) {
    failed = true;
    give_up_.store(true, std::memory_order_relaxed);
    why = std::string("Write error sending the snapshot to the replica: ") + std::strerror(errno);
  }
  int64_t keepalive_ms = MonotonicMs();
  for (;;) {
    if (disk_ && !failed && MonotonicMs() - keepalive_ms >= 1000) {
      // Writing the file: a newline a second keeps the replica waiting
      // (Redis's keep-alive); one gone stops the snapshot.
      keepalive_ms = MonotonicMs();
      if (!Send("\n")) {
        failed = true;
        give_up_.store(true, std::memory_order_relaxed);
        why = std::string("Write error sending the snapshot to the replica: ") + std::strerror(errno);
      }
    }
    std::pair<std::string, uint64_t> item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(10),
                   [&] { return !queue_.empty() || aborted_ || shards_done_ == nshards; });
      if (aborted_) break;
      if (queue_.empty()) {
        if (shards_done_ == nshards) break;
        continue;
      }
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    const std::string& chunk = item.first;
    if (!failed) {
      crc = Crc64(crc, chunk);
      if (!Write(chunk)) {
        failed = true;
        file_error_ = disk_;
        if (replica_ != 0) give_up_.store(true, std::memory_order_relaxed);
        why = std::string("Write error saving DB on disk: ") + std::strerror(errno);
      }
      bytes_written_.fetch_add(chunk.size(), std::memory_order_relaxed);
    }
    keys_saved_.fetch_add(item.second, std::memory_order_relaxed);
    queued_bytes_.fetch_sub(chunk.size(), std::memory_order_relaxed);
    // rdb-key-save-delay (tests): the writer sleeps for the chunk's keys,
    // so that the save takes long while the workers keep serving.
    if (key_delay_us_ > 0 && item.second > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(key_delay_us_ * static_cast<int64_t>(item.second)));
  }
  bool aborted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted = aborted_;
  }
  if (aborted) {
    failed = true;
    why = "Background saving aborted";
  }
  if (!failed && !commands_) {
    std::string tail(1, static_cast<char>(rdb::kOpEof));
    crc = checksum_ ? Crc64(crc, tail) : 0;
    tail.append(reinterpret_cast<const char*>(&crc), 8);
    tail += mark_;
    if (!Write(tail)) {
      failed = true;
      file_error_ = disk_;
      why = std::string("Write error saving DB on disk: ") + std::strerror(errno);
    }
  }
  if (replica_ != 0 && !disk_) {
    // (The duplicate stays open until the job goes, ~BgSave: Abort may
    // shut the socket down meanwhile.)
    ok_ = !failed;
  } else if (replica_ != 0) {
    // The file goes into place as BGSAVE's does; then its bytes go to the
    // replica (read through a descriptor of the same file, whatever is
    // renamed meanwhile).
    const int file = failed ? -1 : ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
    const int open_errno = errno;
    file_ok_ = CommitRdbFile(fd_, !failed, temp_, filename_, &why);
    fd_ = -1;
    file_error_ = file_error_ || (!failed && !file_ok_);
    file_end_ms_ = UnixTimeMs();
    if (file_ok_ && file < 0) why = std::string("Can't open the RDB file to send: ") + std::strerror(open_errno);
    ok_ = file_ok_ && file >= 0 && SendFile(file, &why);
    if (file >= 0) ::close(file);
  } else {
    ok_ = CommitRdbFile(fd_, !failed, temp_, filename_, &why);
    fd_ = -1;
  }
  error_ = why;
  finished_.store(true, std::memory_order_release);
}

}  // namespace peregrine
