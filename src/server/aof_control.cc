// The append-only file's life in the server (docs/persistence.md): the
// rewrite (BGREWRITEAOF, auto-aof-rewrite-*), switching it on and off with
// CONFIG SET, and loading it at start (the manifest's base, then each
// incremental file's commands, run as Redis's AOF client runs them).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "persist/aof_rewrite.h"
#include "server/aof.h"
#include "server/command_replayer.h"
#include "server/log.h"
#include "server/server.h"
#include "server/tracking.h"

namespace peregrine {

// As Redis's: what the shards logged goes to the file, the data (keys,
// functions) is emptied and the manifest's files load as at start.
// Refused while a snapshot or rewrite runs (Redis's child goes on from the
// old data; here it reads the shards being emptied).
bool Server::LoadAof(uint32_t w, std::string* err) {
  if (bgsave_ != nullptr) {
    *err = "Background save or append only file rewrite in progress";
    return false;
  }
  EmitShardChunks();
  const int64_t now_ms = UnixTimeMs();
  for (size_t s = 0; s < num_shards(); s++)
    for (int d = 0; d < shard(s).num_dbs(); d++) {
      shard(s).watches().TouchAll(d, shard(s).db(d), nullptr, now_ms);
      shard(s).db(d).Clear();
    }
  functions().Flush();
  FlushTracking(*this);
  AofLoader loader(*this, worker(w), AofLoader::Options{.open_for_appending = false});
  bool found = false;
  if (!loader.Open(&found, err)) return false;
  if (!found) {
    *err = "There is no append only file to load";
    return false;
  }
  for (;;) {
    const StartupLoader::Status st = loader.Step(size_t{1} << 20);
    if (st == StartupLoader::Status::kDone) return true;
    if (st == StartupLoader::Status::kError) {
      *err = loader.error();
      persistence().loading.store(false, std::memory_order_release);
      return false;
    }
  }
}

bool Server::StartAofRewrite(std::string* err, bool* scheduled) {
  *scheduled = false;
  if (bgsave_ != nullptr) {
    if (bgsave_->aof_base()) {
      *err = "Background append only file rewriting already in progress";
      return false;
    }
    // As Redis with a child running: after it.
    aof_stats_.rewrite_scheduled = true;
    *scheduled = true;
    return true;
  }
  aof_stats_.rewrite_scheduled = false;
  AppendOnlyFile& aof = *aof_;
  if (!aof.active() && !aof.PrepareOffRewrite(err)) return false;
  // Every shard is held: what they logged so far belongs before the new
  // incremental file (and to the replication stream).
  EmitShardChunks();
  std::string temp;
  if (!aof.BeginRewrite(&temp, &aof_base_name_, err)) return false;
  bgsave_ = BgSave::Start(*this, err, temp, aof.PathOf(aof_base_name_), /*aof_base=*/true,
                          /*commands=*/!config_.aof_use_rdb_preamble);
  if (bgsave_ == nullptr) {
    aof_stats_.last_rewrite_ok = false;
    aof_stats_.consecutive_failures++;
    return false;
  }
  LOG_NOTICE("Background append only file rewriting started");
  for (size_t i = 0; i < num_shards(); i++) worker(i).StartSnapshotWork();
  return true;
}

bool Server::ApplyAofConfig(std::string* err) {
  AppendOnlyFile& aof = *aof_;
  aof.SetFsync(config_.appendfsync);
  if (config_.appendonly == aof.active()) return true;
  if (!config_.appendonly) {
    // A rewrite in progress stops (its base would belong to nothing).
    if (bgsave_ != nullptr && bgsave_->aof_base()) AbortBgSave(true);
    // What they logged goes to the file before it closes, as Redis flushes
    // it, and to the stream; removals stay logged while the stream is on.
    EmitShardChunks();
    for (size_t i = 0; i < num_shards(); i++) shard(i).SetLogRemovals(replication_->feeding());
    aof.TurnOff();
    LOG_NOTICE("Background append only file rewriting stopped: the AOF is off");
    return true;
  }
  // On: writes go to a temporary incremental file at once; the first
  // rewrite's base makes the manifest (Redis's startAppendOnly). A BGSAVE
  // in progress is stopped for it, as Redis kills an RDB child.
  if (bgsave_ != nullptr) AbortBgSave(true);
  EmitShardChunks();  // (the stream's, if on: before the file opens)
  if (!aof.TurnOn(err)) return false;
  for (size_t i = 0; i < num_shards(); i++) {
    shard(i).aof().Clear();
    shard(i).SetLogRemovals(true);
  }
  bool scheduled;
  if (!StartAofRewrite(err, &scheduled)) {
    for (size_t i = 0; i < num_shards(); i++) shard(i).SetLogRemovals(replication_->feeding());
    aof.TurnOff();
    return false;
  }
  return true;
}

bool Server::AofRewriteDue() {
  if (bgsave_ != nullptr) return false;
  if (aof_stats_.consecutive_failures > 0 && UnixTimeMs() - aof_stats_.last_failure_ms < 5000) return false;
  if (aof_stats_.rewrite_scheduled) return true;
  if (!aof_->active() || config_.auto_aof_rewrite_percentage == 0) return false;
  // A failed rewrite is retried after a pause (Redis waits a minute).
  const uint64_t size = aof_->current_size();
  if (size < config_.auto_aof_rewrite_min_size) return false;
  const uint64_t base = std::max<uint64_t>(aof_stats_.base_size_at_rewrite, 1);
  const uint64_t growth = size > base ? (size - base) * 100 / base : 0;
  return growth >= static_cast<uint64_t>(config_.auto_aof_rewrite_percentage);
}

// One file of commands replayed from byte `from`, a step at a time; `last`:
// the manifest's last file, whose cut-off tail aof-load-truncated lets go
// (Redis's loadSingleAppendOnlyFile).
class AofFileReplay {
 public:
  AofFileReplay(Server& server, CommandReplayer& replayer, std::string path, std::string name, bool last, uint64_t from)
      : server_(server), replayer_(replayer), path_(std::move(path)), name_(std::move(name)), last_(last),
        base_(from), valid_(from) {}
  ~AofFileReplay() {
    if (fd_ >= 0) ::close(fd_);
  }

  // False with *err if the file cannot be read; *missing for a last file
  // that does not exist (Redis carries on).
  bool Open(std::string* err) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      if (errno == ENOENT && last_) {
        LOG_WARNING("The append log file %s doesn't exist: %s", name_.c_str(), std::strerror(errno));
        done_ = true;
        return true;
      }
      *err = "Fatal error: can't open the append log file " + name_ + " for reading: " + std::strerror(errno);
      return false;
    }
    struct stat sb;
    if (fstat(fd_, &sb) != 0) {
      *err = "Unrecoverable error reading the append only file " + name_ + ": " + std::strerror(errno);
      return false;
    }
    size_ = static_cast<uint64_t>(sb.st_size);
    if (base_ > 0 && lseek(fd_, static_cast<off_t>(base_), SEEK_SET) < 0) {
      *err = "Unrecoverable error reading the append only file " + name_ + ": " + std::strerror(errno);
      return false;
    }
    return true;
  }

  // Runs up to about `max` commands; kDone at the end of the file.
  StartupLoader::Status Step(size_t max, std::string* err) {
    using Status = StartupLoader::Status;
    if (done_) return Status::kDone;
    for (size_t n = 0; n < max;) {
      const auto r = reader_.Next(buf_.data() + pos_, buf_.size() - pos_);
      if (r == AofReader::Result::kCommand) {
        n++;
        if (!Command(reader_.args(), err)) return Status::kError;
        continue;
      }
      if (r == AofReader::Result::kFormatError) {
        *err = "Bad file format reading the append only file " + name_ +
               ": make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>";
        return Status::kError;
      }
      if (eof_) return Finish(pos_ < buf_.size(), err) ? Status::kDone : Status::kError;
      if (!Read(err)) return Status::kError;
    }
    return Status::kMore;
  }

 private:
  static bool Unknown(std::string_view name, std::string* err) {
    *err = "Unknown command '" + std::string(name) + "' reading the append only file";
    return false;
  }
  bool Command(std::span<const std::string_view> args, std::string* err) {
    pos_ += reader_.consumed();
    auto is = [&](std::string_view name) {
      return args.size() == 1 && args[0].size() == name.size() &&
             strncasecmp(args[0].data(), name.data(), name.size()) == 0;
    };
    if (is("multi")) {
      // Redis queues a transaction's commands and runs them at its EXEC.
      in_multi_ = true;
      before_multi_ = valid_;
      queued_.clear();
    } else if (is("exec") && in_multi_) {
      std::vector<std::string_view> views;
      for (const auto& q : queued_) {
        views.assign(q.begin(), q.end());
        if (!replayer_.Run(views)) return Unknown(views[0], err);
      }
      in_multi_ = false;
      queued_.clear();
      valid_ = base_ + pos_;
    } else if (in_multi_) {
      queued_.emplace_back(args.begin(), args.end());
    } else {
      if (!replayer_.Run(args)) return Unknown(args[0], err);
      valid_ = base_ + pos_;
    }
    // key-load-delay (tests): a pause per command, as Redis's AOF load.
    if (const int64_t us = server_.config().key_load_delay; us > 0) [[unlikely]]
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    return true;
  }

  bool Read(std::string* err) {
    buf_.erase(0, pos_);
    base_ += pos_;
    pos_ = 0;
    // What the command needs, or 1 MB, but never more than the file has
    // left: a corrupt length cannot make the buffer larger than the file
    // (it reads as a cut-off command).
    const uint64_t left = size_ > base_ + buf_.size() ? size_ - base_ - buf_.size() : 0;
    if (left == 0) {
      eof_ = true;
      return true;
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(
        left, std::max<size_t>(reader_.needed() > buf_.size() ? reader_.needed() - buf_.size() : 0, 1 << 20)));
    const size_t old = buf_.size();
    buf_.resize(old + want);
    ssize_t n;
    do {
      n = ::read(fd_, buf_.data() + old, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      *err = "Unrecoverable error reading the append only file " + name_ + ": " + std::strerror(errno);
      return false;
    }
    buf_.resize(old + static_cast<size_t>(n));
    if (n == 0) eof_ = true;
    return true;
  }

  // The end of the file: a cut-off command, or an open MULTI, is handled
  // as Redis does.
  bool Finish(bool truncated, std::string* err) {
    done_ = true;
    if (in_multi_) {
      if (!truncated) LOG_WARNING("Revert incomplete MULTI/EXEC transaction in AOF file %s", name_.c_str());
      truncated = true;
      valid_ = before_multi_;
    }
    if (!truncated) return true;
    if (last_ && server_.config().aof_load_truncated) {
      LOG_WARNING("!!! Warning: short read while loading the AOF file %s!!!", name_.c_str());
      LOG_WARNING("!!! Truncating the AOF %s at offset %llu !!!", name_.c_str(),
                  static_cast<unsigned long long>(valid_));
      if (truncate(path_.c_str(), static_cast<off_t>(valid_)) != 0) {
        *err = "Error truncating the AOF file " + name_ + ": " + std::strerror(errno);
        return false;
      }
      LOG_WARNING("AOF %s loaded anyway because aof-load-truncated is enabled", name_.c_str());
      return true;
    }
    if (!last_) {
      *err = "Fatal error: the truncated file is not the last file";
      return false;
    }
    *err = "Unexpected end of file reading the append only file " + name_ +
           ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) "
           "Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.";
    return false;
  }

  Server& server_;
  CommandReplayer& replayer_;
  std::string path_, name_;
  bool last_;
  int fd_ = -1;
  uint64_t size_ = 0;  // the file's size when opened
  AofReader reader_;
  std::string buf_;
  size_t pos_ = 0;     // the next command's start in buf_
  uint64_t base_;      // buf_[0]'s offset in the file
  uint64_t valid_;     // the end of the last command run (before an open MULTI)
  bool eof_ = false, done_ = false, in_multi_ = false;
  uint64_t before_multi_ = 0;
  std::vector<std::vector<std::string>> queued_;
};

namespace {

bool StartsWithRdb(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char sig[5];
  const bool rdb = ::read(fd, sig, 5) == 5 && std::memcmp(sig, "REDIS", 5) == 0;
  ::close(fd);
  return rdb;
}

}  // namespace

bool SaveAofCommandsFile(Server& server, const std::string& path, std::string* err) {
  const std::string temp = path + ".temp-" + std::to_string(getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): " + std::string(std::strerror(errno));
    return false;
  }
  const int64_t now_ms = UnixTimeMs();
  std::string out = FunctionLoadCommands(server);
  bool ok = true;
  for (int d = 0; d < server.config().databases && ok; d++) {
    bool selected = false;
    for (size_t s = 0; s < server.num_shards() && ok; s++) {
      server.shard(s).db(d).ForEach([&](const Db::Entry& e) {
        if (!ok || Db::IsExpired(e, now_ms)) return;
        if (!selected) {
          const std::string n = std::to_string(d);
          AppendRespCommand(&out, {"SELECT", n});
          selected = true;
        }
        char scratch[CompactKey::kScratchSize];
        AppendKeyCommands(&out, e.key(scratch), e.value, e.expire_ms());
        if (out.size() >= (1 << 20)) {
          ok = WriteAll(fd, out);
          out.clear();
        }
      });
    }
  }
  if (ok) ok = WriteAll(fd, out);
  std::string why = ok ? "" : std::string("Write error writing append only file on disk: ") + std::strerror(errno);
  if (!CommitRdbFile(fd, ok, temp, path, &why)) {
    *err = why;
    return false;
  }
  return true;
}

AofLoader::AofLoader(Server& server, Worker& worker, Options options)
    : server_(server), worker_(worker), options_(options),
      replayer_(std::make_unique<CommandReplayer>(server, worker, options.scripts)) {}

AofLoader::~AofLoader() = default;

bool AofLoader::Open(bool* found, std::string* err) {
  AppendOnlyFile& aof = server_.aof();
  if (!aof.ReadManifest(found, err)) return false;
  if (!*found && !aof.UpgradeOldStyle(found, err)) return false;
  if (!*found) return true;
  const AofManifest& m = aof.manifest();
  if (m.base) files_.push_back(*m.base);
  files_.insert(files_.end(), m.incr.begin(), m.incr.end());
  if (files_.empty()) {
    *err = "Found an empty AOF manifest";
    return false;
  }
  start_ms_ = UnixTimeMs();
  return true;
}

StartupLoader::Status AofLoader::Step(size_t max_keys) {
  // Every shard is this thread's while the file loads (no other worker
  // runs yet, or DEBUG LOADAOF's command holds them all); the replayed
  // commands may touch any.
  const bool held = worker_.holding();
  if (!held) worker_.HoldAllForReplay(true);
  struct Release {
    Worker& w;
    bool on;
    ~Release() {
      if (on) w.HoldAllForReplay(false);
    }
  } release{worker_, !held};
  PersistenceState& st = server_.persistence();
  st.loading.store(true, std::memory_order_release);
  for (;;) {
    if (rdb_ != nullptr) {
      const Status s = rdb_->Step(max_keys);
      if (s == Status::kError) {
        error_ = "Error reading the RDB base file " + files_[next_ - 1].name + ", AOF loading aborted: " +
                 rdb_->error();
        return Status::kError;
      }
      if (s == Status::kMore) return Status::kMore;
      // The RDB data is done; an old-style AOF goes on with commands.
      st.loading.store(true, std::memory_order_release);
      const uint64_t from = rdb_->consumed();
      rdb_.reset();
      if (!StartReplay(next_ - 1, from)) return Status::kError;
      continue;
    }
    if (replay_ != nullptr) {
      const Status s = replay_->Step(max_keys, &error_);
      if (s != Status::kDone) return s;
      replay_.reset();
      continue;
    }
    if (next_ == files_.size()) break;
    const size_t i = next_++;
    const std::string path = server_.aof().PathOf(files_[i].name);
    if (StartsWithRdb(path)) {
      // An RDB base (aof-use-rdb-preamble): the snapshot's keys, expired
      // ones too (the commands after it may touch them).
      LOG_NOTICE("Reading RDB base file on AOF loading...");
      rdb_ = std::make_unique<RdbLoader>(server_, worker_.lua(), /*merge=*/false);
      rdb_->set_keep_expired();
      bool exists = false;
      std::string err;
      if (!rdb_->Open(path, &exists, &err) || !exists) {
        error_ = "Error reading the RDB base file " + files_[i].name + ", AOF loading aborted: " +
                 (exists ? err : "the file does not exist");
        return Status::kError;
      }
      continue;
    }
    if (!StartReplay(i, 0)) return Status::kError;
  }
  st.loading.store(false, std::memory_order_release);
  LOG_NOTICE("DB loaded from append only file: %.3f seconds", static_cast<double>(UnixTimeMs() - start_ms_) / 1000.0);
  if (!options_.open_for_appending) return Status::kDone;
  return OpenForAppending(server_, &error_) ? Status::kDone : Status::kError;
}

bool AofLoader::StartReplay(size_t i, uint64_t from) {
  replay_ = std::make_unique<AofFileReplay>(server_, *replayer_, server_.aof().PathOf(files_[i].name), files_[i].name,
                                         i + 1 == files_.size(), from);
  return replay_->Open(&error_);
}

bool OpenForAppending(Server& server, std::string* err) {
  if (!server.aof().OpenOnStart(err)) return false;
  for (size_t i = 0; i < server.num_shards(); i++) server.shard(i).SetLogRemovals(true);
  return true;
}

}  // namespace peregrine
