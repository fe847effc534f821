// The append-only file's life in the server (docs/persistence.md): the
// rewrite (BGREWRITEAOF, auto-aof-rewrite-*), switching it on and off with
// CONFIG SET, and loading it at start (the manifest's base, then each
// incremental file's commands, run as Redis's AOF client runs them).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "persist/aof_rewrite.h"
#include "server/aof.h"
#include "server/log.h"
#include "server/server.h"

namespace peregrine {

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
  // incremental file.
  for (size_t i = 0; i < num_shards(); i++) {
    AofChunk& chunk = shard(i).aof();
    if (!chunk.empty() && aof.active()) aof.Write(chunk);
    chunk.Clear();
  }
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
    if (bgsave_ != nullptr && bgsave_->aof_base()) AbortBgSave();
    for (size_t i = 0; i < num_shards(); i++) {
      shard(i).aof().Clear();
      shard(i).SetLogRemovals(false);
    }
    aof.TurnOff();
    LOG_NOTICE("Background append only file rewriting stopped: the AOF is off");
    return true;
  }
  // On: writes go to a temporary incremental file at once; the first
  // rewrite's base makes the manifest (Redis's startAppendOnly). A BGSAVE
  // in progress is stopped for it, as Redis kills an RDB child.
  if (bgsave_ != nullptr) AbortBgSave();
  if (!aof.TurnOn(err)) return false;
  for (size_t i = 0; i < num_shards(); i++) {
    shard(i).aof().Clear();
    shard(i).SetLogRemovals(true);
  }
  bool scheduled;
  if (!StartAofRewrite(err, &scheduled)) {
    for (size_t i = 0; i < num_shards(); i++) shard(i).SetLogRemovals(false);
    aof.TurnOff();
    return false;
  }
  return true;
}

bool Server::AofRewriteDue() {
  if (bgsave_ != nullptr) return false;
  if (aof_stats_.rewrite_scheduled) return true;
  if (!aof_->active() || config_.auto_aof_rewrite_percentage == 0) return false;
  // A failed rewrite is retried after a pause (Redis waits a minute).
  const uint64_t size = aof_->current_size();
  if (size < config_.auto_aof_rewrite_min_size) return false;
  const uint64_t base = std::max<uint64_t>(aof_stats_.base_size_at_rewrite, 1);
  const uint64_t growth = size > base ? (size - base) * 100 / base : 0;
  return growth >= static_cast<uint64_t>(config_.auto_aof_rewrite_percentage);
}

namespace {

// Runs one command of the file as Redis's AOF client does (no reply kept,
// nothing blocks, nothing expires: the file says when keys went).
class Replayer {
 public:
  Replayer(Server& server, Worker& worker) : server_(server), worker_(worker), client_(&worker, UINT64_MAX, -1) {}

  // False with *err for a command the server does not know.
  bool Run(std::span<const std::string_view> args, std::string* err) {
    const CommandSpec* cmd = server_.commands().Find(args[0]);
    if (cmd != nullptr && !cmd->subcommands.empty() && args.size() > 1)
      cmd = CommandTable::FindSubcommand(*cmd, args[1]);
    if (cmd == nullptr) {
      *err = "Unknown command '" + std::string(args[0]) + "' reading the append only file";
      return false;
    }
    const int n = static_cast<int>(args.size());
    if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) return true;  // (Redis runs it; it errs)
    if (cmd->handler == nullptr) return true;
    Shard* shard = &server_.shard(0);
    std::vector<size_t> keys;
    if (cmd->first_key > 0 && cmd->KeyPositions(args, &keys) && !keys.empty())
      shard = &server_.shard(server_.ShardIndexOf(args[keys[0]]));
    out_.Clear();
    ReplyWriter reply(&out_, 2, nullptr);
    // now_ms 0: no key counts as expired while the file is replayed.
    CommandContext ctx{server_, worker_, client_, *shard, args, reply, 0, nullptr};
    client_.last_cmd = cmd;
    worker_.RunScriptNoBlocking([&] {
      cmd->handler(ctx);
      return 0;
    });
    return true;
  }

 private:
  Server& server_;
  Worker& worker_;
  Client client_;
  Buffer out_;
};

// Loads one file of commands from byte `from`; `last`: the manifest's last
// file, whose cut off tail aof-load-truncated lets go.
bool ReplayFile(Server& server, Replayer& replayer, const std::string& path, const std::string& name, bool last,
                uint64_t from, std::string* err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && last) {
      LOG_WARNING("The append log file %s doesn't exist: %s", name.c_str(), std::strerror(errno));
      return true;
    }
    *err = "Fatal error: can't open the append log file " + name + " for reading: " + std::strerror(errno);
    return false;
  }
  if (from > 0 && lseek(fd, static_cast<off_t>(from), SEEK_SET) < 0) {
    *err = "Unrecoverable error reading the append only file " + name + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  AofReader reader;
  std::string buf;
  size_t pos = 0;        // the next command's start in buf
  uint64_t base = from;  // buf[0]'s offset in the file
  uint64_t valid = from;  // the end of the last command run (before an open MULTI)
  bool eof = false, in_multi = false;
  uint64_t before_multi = 0;
  std::vector<std::vector<std::string>> queued;  // MULTI ... EXEC, run at EXEC as Redis does
  std::vector<std::string_view> views;
  bool truncated = false;
  for (;;) {
    const auto r = reader.Next(buf.data() + pos, buf.size() - pos);
    if (r == AofReader::Result::kCommand) {
      const auto args = reader.args();
      pos += reader.consumed();
      if (args.size() == 1 && strncasecmp(args[0].data(), "multi", 5) == 0 && args[0].size() == 5) {
        in_multi = true;
        before_multi = valid;
        queued.clear();
      } else if (args.size() == 1 && strncasecmp(args[0].data(), "exec", 4) == 0 && args[0].size() == 4 &&
                 in_multi) {
        for (const auto& q : queued) {
          views.assign(q.begin(), q.end());
          if (!replayer.Run(views, err)) break;
        }
        if (!err->empty()) break;
        in_multi = false;
        queued.clear();
        valid = base + pos;
      } else if (in_multi) {
        queued.emplace_back(args.begin(), args.end());
      } else {
        if (!replayer.Run(args, err)) break;
        valid = base + pos;
      }
      continue;
    }
    if (r == AofReader::Result::kFormatError) {
      *err = "Bad file format reading the append only file " + name +
             ": make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>";
      break;
    }
    // More bytes, or the end.
    if (eof) {
      if (pos < buf.size()) truncated = true;
      break;
    }
    buf.erase(0, pos);
    base += pos;
    pos = 0;
    const size_t want = std::max<size_t>(reader.needed() > buf.size() ? reader.needed() - buf.size() : 0, 1 << 20);
    const size_t old = buf.size();
    buf.resize(old + want);
    ssize_t n;
    do {
      n = ::read(fd, buf.data() + old, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      *err = "Unrecoverable error reading the append only file " + name + ": " + std::strerror(errno);
      break;
    }
    buf.resize(old + static_cast<size_t>(n));
    if (n == 0) eof = true;
  }
  ::close(fd);
  if (!err->empty()) return false;
  if (in_multi && !truncated) {
    LOG_WARNING("Revert incomplete MULTI/EXEC transaction in AOF file %s", name.c_str());
    truncated = true;
    valid = before_multi;
  } else if (in_multi) {
    valid = before_multi;
  }
  if (!truncated) return true;
  if (last && server.config().aof_load_truncated) {
    LOG_WARNING("!!! Warning: short read while loading the AOF file %s!!!", name.c_str());
    LOG_WARNING("!!! Truncating the AOF %s at offset %llu !!!", name.c_str(), static_cast<unsigned long long>(valid));
    if (truncate(path.c_str(), static_cast<off_t>(valid)) != 0) {
      *err = "Error truncating the AOF file " + name + ": " + std::strerror(errno);
      return false;
    }
    LOG_WARNING("AOF %s loaded anyway because aof-load-truncated is enabled", name.c_str());
    return true;
  }
  if (!last) {
    *err = "Fatal error: the truncated file is not the last file";
    return false;
  }
  *err = "Unexpected end of file reading the append only file " + name +
         ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) "
         "Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.";
  return false;
}

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

bool LoadAppendOnlyFiles(Server& server, Worker& worker, std::string* err) {
  AppendOnlyFile& aof = server.aof();
  bool found = false;
  if (!aof.ReadManifest(&found, err)) return false;
  if (!found && !aof.UpgradeOldStyle(&found, err)) return false;
  if (found) {
    const AofManifest& m = aof.manifest();
    const int64_t start_ms = UnixTimeMs();
    Replayer replayer(server, worker);
    worker.HoldAllForReplay(true);
    struct Release {
      Worker& w;
      ~Release() { w.HoldAllForReplay(false); }
    } release{worker};
    std::vector<const AofManifest::File*> files;
    if (m.base) files.push_back(&*m.base);
    for (const auto& f : m.incr) files.push_back(&f);
    if (files.empty()) {
      *err = "Found an empty AOF manifest";
      return false;
    }
    for (size_t i = 0; i < files.size(); i++) {
      const std::string path = aof.PathOf(files[i]->name);
      const bool last = i + 1 == files.size();
      uint64_t from = 0;
      if (StartsWithRdb(path)) {
        // An RDB base (aof-use-rdb-preamble): the snapshot's keys, expired
        // ones too (the commands after it may touch them). An old-style
        // AOF (Redis 4-6's appendonly.aof) goes on with commands after it.
        LOG_NOTICE("Reading RDB base file on AOF loading...");
        RdbLoader loader(server, worker.lua(), /*merge=*/false);
        loader.set_keep_expired();
        bool exists = false;
        if (!loader.Open(path, &exists, err)) return false;
        if (!exists) {
          *err = "The AOF base file " + files[i]->name + " doesn't exist";
          return false;
        }
        RdbLoader::Status st;
        while ((st = loader.Step(4096)) == RdbLoader::Status::kMore) {
        }
        if (st == RdbLoader::Status::kError) {
          *err = "Error reading the RDB base file " + files[i]->name + ", AOF loading aborted: " + loader.error();
          return false;
        }
        from = loader.consumed();
      }
      if (!ReplayFile(server, replayer, path, files[i]->name, last, from, err)) return false;
    }
    LOG_NOTICE("DB loaded from append only file: %.3f seconds",
               static_cast<double>(UnixTimeMs() - start_ms) / 1000.0);
  }
  return true;
}

}  // namespace peregrine
