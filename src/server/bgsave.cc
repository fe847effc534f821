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

std::unique_ptr<BgSave> BgSave::StartToReplicas(Server& server, std::string* err, std::vector<Target> targets,
                                                std::string mark, bool disk, uint8_t filter) {
  for (const Target& t : targets)
    if (t.fd < 0) {
      *err = "no socket for the replica";
      return nullptr;
    }
  std::unique_ptr<BgSave> job = Make(server);
  job->for_replicas_ = true;
  job->filter_ = filter;
  job->send_timeout_ms_ = int64_t{server.config().repl_timeout} * 1000;
  job->mark_ = std::move(mark);
  job->disk_ = disk;
  job->accepting_ = disk;  // (AddTarget: a disk-based sync takes joiners until its file is written)
  if (!disk) job->max_queued_ = kMaxQueuedSocket;
  if (disk) {
    // (The file BGSAVE writes, as Redis's disk-based sync.)
    job->temp_ = "temp-bg-" + std::to_string(getpid()) + ".rdb";
    job->filename_ = server.config().dbfilename;
    if (!job->OpenTemp(err)) return nullptr;
  }
  // (The sockets are the caller's until here.)
  for (Target& t : targets) job->outs_.push_back(std::make_unique<Out>(Out{t.id, t.fd, std::move(t.prefix)}));
  job->Begin(server);
  job->writer_ = std::thread([j = job.get()] { j->WriterMain(); });
  return job;
}

bool BgSave::AddTarget(Target target) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!accepting_) return false;
  outs_.push_back(std::make_unique<Out>(Out{target.id, target.fd, std::move(target.prefix)}));
  cv_.notify_one();
  return true;
}

std::vector<uint64_t> BgSave::replicas() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint64_t> ids;
  for (auto& o : outs_) ids.push_back(o->id);
  return ids;
}

std::vector<BgSave::Outcome> BgSave::outcomes() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Outcome> all;
  for (auto& o : outs_) {
    const bool sent = ok_ && !o->failed;
    all.push_back(Outcome{o->id, sent, sent ? std::string() : o->failed ? o->error : error_});
  }
  return all;
}

void BgSave::Begin(Server& server) {
  if (commands_) {
    std::string header = FunctionLoadCommands(server);
    if (!header.empty()) Push(std::move(header), 0);
  } else {
    RdbWriter header(server.config().rdbcompression, false);
    WriteRdbHeader(server, header, start_ms_, aof_base_, !(filter_ & kNoFunctions));
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
    if (filter_ & kNoData) {
      sink->next_db = shard.num_dbs();  // (nothing to walk: its first Step ends it)
      shards_.push_back(std::move(sink));
      continue;
    }
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
  return for_replicas_ && !disk_ ? SendTo(writer_outs_, bytes) : WriteAll(fd_, bytes);
}

bool BgSave::SendTo(const std::vector<Out*>& outs, std::string_view bytes) {
  // The replicas' sockets are non-blocking (their workers'): each takes
  // what it can, and a poll waits for those that are full. (send: a
  // replica gone is an error here, not SIGPIPE, whatever the process does
  // with the signal; the fuzzers do not ignore it.)
  auto fail = [](Out* o, int err) {
    o->failed = true;
    o->error = std::string("Write error sending the snapshot to the replica: ") + std::strerror(err);
    ::shutdown(o->fd, SHUT_RDWR);  // (its worker sees it go at once)
  };
  const int64_t start_ms = MonotonicMs();
  for (Out* o : outs) {
    o->done = 0;
    o->progress_ms = start_ms;
  }
  for (;;) {
    polls_.clear();
    polled_.clear();
    for (Out* o : outs) {
      while (!o->failed && o->done < bytes.size()) {
        const ssize_t n = ::send(o->fd, bytes.data() + o->done, bytes.size() - o->done, MSG_NOSIGNAL);
        if (n > 0) {
          o->done += static_cast<size_t>(n);
          o->progress_ms = MonotonicMs();
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          polls_.push_back(pollfd{o->fd, POLLOUT, 0});
          polled_.push_back(o);
          break;
        } else if (!(n < 0 && errno == EINTR)) {
          fail(o, n < 0 ? errno : EPIPE);
        }
      }
    }
    if (polls_.empty()) break;
    int wait_ms = -1;
    if (send_timeout_ms_ > 0) {
      int64_t until = INT64_MAX;
      for (Out* o : polled_) until = std::min(until, o->progress_ms + send_timeout_ms_);
      wait_ms = static_cast<int>(std::clamp<int64_t>(until - MonotonicMs(), 0, INT32_MAX));
    }
    const int r = ::poll(polls_.data(), polls_.size(), wait_ms);
    if (r < 0 && errno == EINTR) continue;
    const int64_t now_ms = MonotonicMs();
    for (size_t i = 0; i < polls_.size(); i++) {
      if (polls_[i].revents & (POLLERR | POLLHUP | POLLNVAL))
        fail(polled_[i], EPIPE);  // (its end went)
      else if (polls_[i].revents == 0 && send_timeout_ms_ > 0 && now_ms - polled_[i]->progress_ms >= send_timeout_ms_)
        fail(polled_[i], ETIMEDOUT);
    }
  }
  return std::any_of(outs.begin(), outs.end(), [](const Out* o) { return !o->failed; });
}

void BgSave::TakeNewOuts() {
  std::vector<Out*> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = writer_outs_.size(); i < outs_.size(); i++) fresh.push_back(outs_[i].get());
  }
  // (The +FULLRESYNC line, and a diskless snapshot's `$EOF:` header,
  // outside the checksum.)
  for (Out* o : fresh) {
    if (!o->prefix.empty()) SendTo({o}, o->prefix);
    writer_outs_.push_back(o);
  }
}

bool BgSave::SendFile(int file, std::string* why) {
  struct stat st;
  if (::fstat(file, &st) != 0) {
    *why = std::string("Can't stat the RDB file to send: ") + std::strerror(errno);
    return false;
  }
  sending_file_.store(true, std::memory_order_release);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  bool ok = SendTo(writer_outs_, "$" + std::to_string(size) + "\r\n");
  std::string buf(kChunkBytes, '\0');
  for (uint64_t off = 0; ok && off < size;) {
    const ssize_t n = ::pread(file, buf.data(), buf.size(), static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = std::string("Read error sending DB to replica: ") + (n == 0 ? "unexpected end" : std::strerror(errno));
      return false;
    }
    off += static_cast<uint64_t>(n);
    ok = SendTo(writer_outs_, std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  if (!ok) *why = "Write error sending DB to replica: every replica failed";
  return ok;
}

BgSave::~BgSave() {
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) ::close(fd_);
  for (auto& o : outs_) ::close(o->fd);
}

bool BgSave::Step(size_t shard, size_t max_entries) {
  ShardSink& sink = *shards_[shard];
  Shard& s = *sink.shard;
  if (give_up_.load(std::memory_order_relaxed)) [[unlikely]] {
    // (The replicas are gone: nothing more is read.)
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
    if (!(filter_ & kNoData))
      for (int d = 0; d < sink->shard->num_dbs(); d++) sink->shard->db(d).EndSnapshot();
    sink->next_db = sink->shard->num_dbs();
  }
  // The replicas' sockets: a writer waiting for them to drain stops now.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& o : outs_) ::shutdown(o->fd, SHUT_RDWR);
  aborted_ = true;
  accepting_ = false;
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
  // A full sync goes on while one of its replicas does.
  static constexpr const char* kNoneLeft = "Write error sending the snapshot to the replicas: none is left";
  auto replicas_left = [&] {
    if (std::any_of(writer_outs_.begin(), writer_outs_.end(), [](const Out* o) { return !o->failed; })) return true;
    {
      // (One that joined since the last look goes on with it; else none
      // may join any more.)
      std::lock_guard<std::mutex> lock(mu_);
      if (outs_.size() > writer_outs_.size()) return true;
      accepting_ = false;
    }
    failed = true;
    give_up_.store(true, std::memory_order_relaxed);
    why = kNoneLeft;
    return false;
  };
  if (for_replicas_) {
    TakeNewOuts();
    replicas_left();
  }
  int64_t keepalive_ms = MonotonicMs();
  for (;;) {
    if (for_replicas_ && disk_ && !failed) {
      // Writing the file: replicas that joined get their prefix, and a
      // newline a second keeps them waiting (Redis's keep-alive).
      TakeNewOuts();
      if (MonotonicMs() - keepalive_ms >= 1000) {
        keepalive_ms = MonotonicMs();
        SendTo(writer_outs_, "\n");
      }
      replicas_left();
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
        if (for_replicas_) give_up_.store(true, std::memory_order_relaxed);
        why = for_replicas_ && !disk_ ? kNoneLeft : std::string("Write error saving DB on disk: ") + std::strerror(errno);
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
    // (No replica joins from here on: those that did are taken below.)
    std::lock_guard<std::mutex> lock(mu_);
    aborted = aborted_;
    accepting_ = false;
  }
  if (for_replicas_) TakeNewOuts();
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
      why = for_replicas_ && !disk_ ? kNoneLeft : std::string("Write error saving DB on disk: ") + std::strerror(errno);
    }
  }
  if (for_replicas_ && !disk_) {
    // (The duplicates stay open until the job goes, ~BgSave: Abort may
    // shut the sockets down meanwhile.)
    ok_ = !failed;
  } else if (for_replicas_) {
    // The file goes into place as BGSAVE's does; then its bytes go to the
    // replicas (read through a descriptor of the same file, whatever is
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
