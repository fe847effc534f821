// Persistence as the server runs it (see persistence.h): the RDB file's
// layout around the values (header, aux fields, function libraries,
// databases, checksum), written from and read into every shard.
#include "server/persistence.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/memory.h"
#include "net/event_loop.h"
#include "persist/aof_format.h"
#include "persist/rdb_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_writer.h"
#include "server/lua_engine.h"
#include "server/log.h"
#include "server/server.h"

namespace peregrine {

ContainerLimits ContainerLimitsOf(const Config& c) {
  return ContainerLimits{ListLimitsOf(c), SetLimitsOf(c), HashLimitsOf(c), ZSetLimitsOf(c)};
}

uint64_t TotalDirty(ServerState& server) {
  uint64_t n = 0;
  for (size_t i = 0; i < server.num_shards(); i++) n += server.shard(i).dirty();
  return n;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool CommitRdbFile(int fd, bool ok, const std::string& temp, const std::string& filename, std::string* why) {
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    *why = std::string("Write error saving DB on disk (fsync): ") + std::strerror(errno);
  }
  ::close(fd);
  if (ok && std::rename(temp.c_str(), filename.c_str()) != 0) {
    ok = false;
    *why = "Error moving temp DB file " + temp + " on the final destination " + filename + ": " + std::strerror(errno);
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return false;
  }
  // The rename itself is durable once the directory is.
  if (const int dfd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

namespace {

void Aux(RdbWriter& w, std::string_view key, std::string_view value) {
  w.Byte(rdb::kOpAux);
  w.String(key);
  w.String(value);
}

// The file's contents (everything but the trailing checksum's handling,
// which the writer does).
bool WriteRdb(ServerState& server, RdbWriter& w, int64_t now_ms, std::string* err) {
  WriteRdbHeader(server, w, now_ms);
  const Config& config = server.config();
  const RdbKeyWriter keys(config.maxmemory_policy, now_ms);
  const int64_t delay_us = config.rdb_key_save_delay;
  for (int d = 0; d < config.databases; d++) {
    const auto [count, expires] = DbSizes(server, d);
    if (count == 0) continue;
    w.Byte(rdb::kOpSelectDb);
    w.Len(static_cast<uint64_t>(d));
    w.Byte(rdb::kOpResizeDb);
    w.Len(count);
    w.Len(expires);
    for (size_t s = 0; s < server.num_shards(); s++) {
      Shard& shard = server.shard(s);
      shard.db(d).ForEach([&](const Db::Entry& e) {
        if (w.failed()) return;
        keys.Write(w, shard, e);
        w.MaybeFlush();
        if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      });
    }
  }
  if (!w.Finish()) {
    *err = std::string("Write error saving DB on disk: ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

std::pair<uint64_t, uint64_t> DbSizes(ServerState& server, int db) {
  uint64_t count = 0, expires = 0;
  for (size_t s = 0; s < server.num_shards(); s++) {
    count += server.shard(s).db(db).size();
    expires += server.shard(s).db(db).expires_count();
  }
  return {count, expires};
}

void WriteRdbHeader(ServerState& server, RdbWriter& w, int64_t now_ms, bool aof_base, bool functions) {
  // A hash with field deadlines needs Redis 7.4's form (version 12): known
  // from the databases' field timers before the header is written.
  int version = rdb::kVersion;
  for (size_t s = 0; s < server.num_shards(); s++)
    for (int d = 0; d < server.shard(s).num_dbs(); d++)
      if (server.shard(s).db(d).field_timers() > 0) version = rdb::kVersionFieldTtl;
  char header[16];
  std::snprintf(header, sizeof(header), "REDIS%04d", version);
  w.Raw(header);
  Aux(w, "redis-ver", kRedisCompatVersion);
  Aux(w, "redis-bits", "64");
  Aux(w, "ctime", std::to_string(now_ms / 1000));
  Aux(w, "used-mem", std::to_string(std::max<int64_t>(TotalKeyspaceBytes(), 0)));
  Aux(w, "aof-base", aof_base ? "1" : "0");
  // A replica's history (Redis's rdbSaveInfoAuxFields), for its restart.
  std::string id;
  uint64_t offset;
  int db;
  if (server.ReplicaHistory(&id, &offset, &db)) {
    Aux(w, "repl-stream-db", std::to_string(db));
    Aux(w, "repl-id", id);
    Aux(w, "repl-offset", std::to_string(offset));
  }
  if (!functions) return;  // (a replica's filtered snapshot: REPLCONF rdb-filter-only)
  for (const auto& lib : server.functions().List(std::nullopt)) {
    w.Byte(rdb::kOpFunction2);
    w.String(lib->code);
  }
}

std::string FunctionLoadCommands(ServerState& server) {
  std::string out;
  // (With aof-timestamp-enabled the file starts with its time, as Redis's.)
  if (server.config().aof_timestamp_enabled) out = "#TS:" + std::to_string(UnixTimeMs() / 1000) + "\r\n";
  for (const auto& lib : server.functions().List(std::nullopt)) AppendRespCommand(&out, {"FUNCTION", "LOAD", lib->code});
  return out;
}

RdbKeyWriter::RdbKeyWriter(MaxmemoryPolicy policy, int64_t now_ms) : now_ms_(now_ms) {
  // Redis writes idle times under an LRU policy and LFU counters under an
  // LFU one, nothing otherwise.
  if (policy == MaxmemoryPolicy::kAllKeysLru || policy == MaxmemoryPolicy::kVolatileLru) access_ = kIdle;
  if (policy == MaxmemoryPolicy::kAllKeysLfu || policy == MaxmemoryPolicy::kVolatileLfu) access_ = kFreq;
}

bool RdbKeyWriter::Write(RdbWriter& w, Shard& shard, const Db::Entry& e) const {
  if (Db::IsExpired(e, now_ms_)) return false;
  if (access_ == kIdle) {
    w.Byte(rdb::kOpIdle);
    w.Len(shard.access().IdleSeconds(e.value.access()));
  } else if (access_ == kFreq) {
    w.Byte(rdb::kOpFreq);
    w.Byte(AccessTracker::Frequency(e.value.access()));
  }
  char scratch[CompactKey::kScratchSize];
  w.KeyValue(e.key(scratch), e.value, e.expire_ms());
  if (e.value.is_list()) e.value.list().DropCache();
  return true;
}

bool SaveRdbFile(ServerState& server, const std::string& filename, std::string* err, SaveKind kind) {
  PersistenceState& st = server.persistence();
  const int64_t start_ms = UnixTimeMs();
  const uint64_t dirty = TotalDirty(server);
  if (kind == SaveKind::kScheduled) st.last_attempt_s.store(start_ms / 1000, std::memory_order_relaxed);
  const std::string temp = "temp-" + std::to_string(getpid()) + ".rdb";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  auto fail = [&](const std::string& why) {
    *err = why;
    LOG_WARNING("%s", why.c_str());
    if (kind == SaveKind::kScheduled) st.last_save_ok.store(false, std::memory_order_relaxed);
    return false;
  };
  if (fd < 0) {
    char cwd[4096];
    return fail("Failed opening the temp RDB file " + temp + " (in server root dir " +
                (getcwd(cwd, sizeof(cwd)) ? cwd : "?") + ") for saving: " + std::strerror(errno));
  }
  RdbWriter w(server.config().rdbcompression, server.config().rdbchecksum,
              [fd](std::string_view bytes) { return WriteAll(fd, bytes); });
  std::string why;
  if (!CommitRdbFile(fd, WriteRdb(server, w, start_ms, &why), temp, filename, &why)) return fail(why);
  const int64_t end_ms = UnixTimeMs();
  st.lastsave_s.store(end_ms / 1000, std::memory_order_relaxed);
  st.dirty_at_save.store(dirty, std::memory_order_relaxed);
  st.last_save_ok.store(true, std::memory_order_relaxed);
  st.last_save_duration_s = (end_ms - start_ms) / 1000;
  st.saves++;
  LOG_NOTICE("DB saved on disk (%llu bytes in %lld ms)", static_cast<unsigned long long>(w.bytes()),
             static_cast<long long>(end_ms - start_ms));
  return true;
}

bool RdbLoader::Open(const std::string& filename, bool* found, std::string* err) {
  fd_ = ::open(filename.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    *found = false;
    if (errno == ENOENT) return true;
    *err = "Fatal error: can't open the RDB file " + filename + " for reading: " + std::strerror(errno);
    return false;
  }
  *found = true;
  struct stat sb;
  if (::fstat(fd_, &sb) != 0) {
    *err = std::string("Fatal error: can't stat the RDB file: ") + std::strerror(errno);
    return false;
  }
  return Begin(static_cast<uint64_t>(sb.st_size), static_cast<uint64_t>(sb.st_size), err);
}

bool RdbLoader::OpenStream(int fd, uint64_t size, std::string* err) {
  fd_ = fd;
  streaming_ = true;
  // (Read until the RDB's end, however long: the writer's close ends it.)
  return Begin(UINT64_MAX, size, err);
}

bool RdbLoader::Begin(uint64_t source, uint64_t size, std::string* err) {
  size_ = source;
  reader_ = std::make_unique<RdbReader>(fd_, source);
  limits_ = ContainerLimitsOf(server_.config());
  start_ms_ = now_ms_ = UnixTimeMs();
  if (keep_expired_) now_ms_ = 0;  // nothing counts as expired
  key_delay_us_ = server_.config().key_load_delay;
  PersistenceState& st = server_.persistence();
  st.loading_start_s = start_ms_ / 1000;
  st.loading_total_bytes = size;
  st.loading_loaded_bytes.store(0, std::memory_order_relaxed);
  st.loading_loaded_keys.store(0, std::memory_order_relaxed);
  st.loading.store(true, std::memory_order_release);
  if (!ReadRdbHeader(*reader_, &version_)) {
    *err = reader_->error();
    st.loading.store(false, std::memory_order_release);
    return false;
  }
  return true;
}

RdbLoader::~RdbLoader() {
  if (fd_ >= 0) ::close(fd_);
}

bool RdbLoader::LoadKey(int type) {
  RdbReader& r = *reader_;
  if (!r.String(&key_)) return false;
  if (key_.size() > CompactKey::kMaxSize) return r.Fail("Key too long");
  Value value;
  const RdbLoadStatus st = LoadRdbObject(r, type, limits_, now_ms_, &value);
  const int64_t expire_ms = expire_ms_;
  const int64_t idle = idle_, freq = freq_;
  expire_ms_ = Db::kNoExpire;
  idle_ = freq_ = -1;
  if (st == RdbLoadStatus::kError) return false;
  if (st == RdbLoadStatus::kEmpty) {
    empty_++;
    return true;
  }
  // A key already expired is not loaded (Redis does the same on a master).
  if (expire_ms != Db::kNoExpire && expire_ms <= now_ms_) {
    expired_++;
    return true;
  }
  Shard& shard = server_.shard(server_.ShardIndexOf(key_));
  Db& db = staged_ ? shard.staged(db_) : shard.db(db_);
  if (db.FindRaw(key_) != nullptr) {
    if (!merge_) return r.Fail("RDB has duplicated key '" + key_ + "' in DB " + std::to_string(db_));
    db.Erase(key_);
  }
  Db::Entry* e = db.Insert(key_, std::move(value), expire_ms);
  e->value.set_access(shard.access().Restored(e->value.access(), idle, freq));
  keys_++;
  return true;
}

bool RdbLoader::LoadFunction() {
  std::string code;
  if (!reader_->String(&code)) return reader_->Fail("Failed loading library payload");
  std::string err;
  std::shared_ptr<FunctionLibrary> lib = CheckFunctionLibrary(lua_, code, &err);
  if (lib == nullptr) return reader_->Fail("Failed loading library, " + err);
  if (staged_) {
    staged_libs_.push_back(std::move(lib));  // (added when the staged data goes live)
    return true;
  }
  if (!server_.functions().Add(lib, /*replace=*/merge_, &err)) return reader_->Fail("Failed loading library, " + err);
  return true;
}

std::shared_ptr<FunctionLibrary> CheckFunctionLibrary(LuaEngine& lua, std::string_view code, std::string* err) {
  auto lib = std::make_shared<FunctionLibrary>();
  if (!ParseLibraryMetadata(code, lib.get(), err) || !lua.LoadLibrary(lib.get(), err)) return nullptr;
  return lib;
}

RdbLoader::Status RdbLoader::Step(size_t max_keys) {
  RdbReader& r = *reader_;
  PersistenceState& st = server_.persistence();
  const uint64_t keys_at_start = keys_ + expired_ + empty_;
  std::string a, b;
  auto fail = [&] {
    st.loading.store(false, std::memory_order_release);
    return Status::kError;
  };
  while (keys_ + expired_ + empty_ - keys_at_start < max_keys) {
    st.loading_loaded_bytes.store(size_ - r.remaining(), std::memory_order_relaxed);
    uint8_t op;
    if (!r.Byte(&op)) return fail();
    switch (op) {
      case rdb::kOpExpireTime: {
        int64_t s;
        if (!r.SecondsTime(&s)) return fail();
        expire_ms_ = s * 1000;
        continue;
      }
      case rdb::kOpExpireTimeMs:
        if (!r.MillisTime(&expire_ms_)) return fail();
        continue;
      case rdb::kOpFreq: {
        uint8_t f;
        if (!r.Byte(&f)) return fail();
        freq_ = f;
        continue;
      }
      case rdb::kOpIdle: {
        uint64_t idle;
        if (!r.Len(&idle)) return fail();
        idle_ = static_cast<int64_t>(std::min<uint64_t>(idle, INT64_MAX));
        continue;
      }
      case rdb::kOpEof:
        return Finish() ? Status::kDone : fail();
      case rdb::kOpSelectDb: {
        uint64_t db;
        if (!r.Len(&db)) return fail();
        if (db >= static_cast<uint64_t>(server_.config().databases)) {
          r.Fail("FATAL: Data file was created with a Redis server configured to handle more than " +
                 std::to_string(server_.config().databases) + " databases. Exiting");
          return fail();
        }
        db_ = static_cast<int>(db);
        continue;
      }
      case rdb::kOpResizeDb: {
        // The database's size: each shard's table is sized for its share
        // at once (capped by what the file could hold).
        uint64_t n, expires;
        if (!r.Len(&n) || !r.Len(&expires)) return fail();
        n = std::min<uint64_t>(n, r.remaining() / 3);
        for (size_t s = 0; s < server_.num_shards(); s++)
          (staged_ ? server_.shard(s).staged(db_) : server_.shard(s).db(db_))
              .Reserve(static_cast<size_t>(n / server_.num_shards()));
        continue;
      }
      case rdb::kOpSlotInfo: {
        uint64_t n;
        if (!r.Len(&n) || !r.Len(&n) || !r.Len(&n)) return fail();
        continue;
      }
      case rdb::kOpAux:
        if (!r.String(&a) || !r.String(&b)) return fail();
        if (a == "redis-ver") LOG_NOTICE("Loading RDB produced by version %s", b.c_str());
        if (a == "repl-id" && b.size() == 40) server_.persistence().loaded_repl_id = b;
        if (a == "repl-offset") server_.persistence().loaded_repl_offset = std::strtoull(b.c_str(), nullptr, 10);
        if (a == "repl-stream-db") server_.persistence().loaded_repl_db = std::atoi(b.c_str());
        continue;
      case rdb::kOpModuleAux:
        r.Fail("The RDB file contains AUX module data I can't load: modules are not supported");
        return fail();
      case rdb::kOpFunctionPreGa:
        r.Fail("Pre-release function format not supported.");
        return fail();
      case rdb::kOpFunction2:
        if (!LoadFunction()) return fail();
        continue;
      default:
        if (!rdb::IsObjectType(op)) {
          r.Fail("Unknown RDB encoding type " + std::to_string(op));
          return fail();
        }
        if (!LoadKey(op)) return fail();
        st.loading_loaded_keys.store(keys_, std::memory_order_relaxed);
        if (key_delay_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(key_delay_us_));
        continue;
    }
  }
  return Status::kMore;
}

bool RdbLoader::Finish() {
  RdbReader& r = *reader_;
  PersistenceState& st = server_.persistence();
  uint64_t expected, computed;
  if (!ReadRdbChecksum(r, version_, &expected, &computed)) return false;
  if (version_ >= 5 && expected == 0) {
    LOG_WARNING("RDB file was saved with checksum disabled: no check performed.");
  } else if (server_.config().rdbchecksum && expected != computed &&
             !server_.debug().skip_checksum_validation.load(std::memory_order_relaxed)) {
    return r.Fail("Wrong RDB checksum expected: (" + std::to_string(expected) + ") got: (" +
                  std::to_string(computed) + "). Aborting now.");
  }
  st.loading.store(false, std::memory_order_release);
  st.last_load_keys_loaded = static_cast<int64_t>(keys_);
  st.last_load_keys_expired = static_cast<int64_t>(expired_);
  LOG_NOTICE("Done loading RDB, keys loaded: %llu, keys expired: %llu.", static_cast<unsigned long long>(keys_),
             static_cast<unsigned long long>(expired_));
  LOG_NOTICE("DB loaded from disk: %.3f seconds", static_cast<double>(UnixTimeMs() - start_ms_) / 1000.0);
  return true;
}

namespace {

bool RunLoader(RdbLoader& loader, std::string* err) {
  for (;;) {
    switch (loader.Step(SIZE_MAX)) {
      case RdbLoader::Status::kMore:
        continue;
      case RdbLoader::Status::kDone:
        return true;
      case RdbLoader::Status::kError:
        *err = loader.error();
        return false;
    }
  }
}

}  // namespace

bool LoadRdbFile(ServerState& server, LuaEngine& lua, const std::string& filename, bool merge, bool* found,
                 std::string* err, bool keep_expired) {
  RdbLoader loader(server, lua, merge);
  if (keep_expired) loader.set_keep_expired();
  if (!loader.Open(filename, found, err)) return false;
  if (!*found) return true;
  return RunLoader(loader, err);
}

bool LoadRdbStream(ServerState& server, LuaEngine& lua, int fd, uint64_t size, std::string* err) {
  RdbLoader loader(server, lua, /*merge=*/false);
  loader.set_keep_expired();
  if (!loader.OpenStream(fd, size, err)) return false;
  return RunLoader(loader, err);
}

bool Server::StartBgSave(std::string* err) {
  if (bgsave_ != nullptr) {
    *err = "Background save already in progress";
    return false;
  }
  persistence_.last_attempt_s.store(UnixTimeMs() / 1000, std::memory_order_relaxed);
  bgsave_ = BgSave::Start(*this, err);
  if (bgsave_ == nullptr) {
    LOG_WARNING("Can't save in background: %s", err->c_str());
    persistence_.last_save_ok.store(false, std::memory_order_relaxed);
    return false;
  }
  LOG_NOTICE("Background saving started");
  for (size_t i = 0; i < num_shards(); i++) worker(i).StartSnapshotWork();
  return true;
}

void Server::AbortBgSave(bool aof_rewrite_too) {
  if (bgsave_ == nullptr || (bgsave_->aof_base() && !aof_rewrite_too)) return;
  for (size_t i = 0; i < num_shards(); i++) worker(i).StopSnapshotWork();
  // A replica's sync stops too: it is closed, and will ask again.
  for (uint64_t id : bgsave_->replicas()) replication_->SyncDone(id, false);
  bgsave_->Abort();
  bgsave_.reset();  // (joins the writer, which removes the temporary file)
  LOG_NOTICE("Background saving stopped: a save in the foreground replaces it");
}

void Server::ReapBgSave() {
  if (bgsave_ == nullptr || !bgsave_->finished()) return;
  if (ReapReplicaSync()) return;
  const int64_t end_ms = UnixTimeMs();
  if (bgsave_->aof_base()) {
    // A rewrite's base: the manifest takes it (server/aof.h).
    const bool ok = bgsave_->ok() && aof_->FinishRewrite(true, aof_base_name_);
    if (!bgsave_->ok()) LOG_WARNING("Background AOF rewrite failed: %s", bgsave_->error().c_str());
    aof_stats_.last_rewrite_ok = ok;
    aof_stats_.last_rewrite_time_s = (end_ms - bgsave_->start_ms()) / 1000;
    if (ok) {
      aof_stats_.rewrites++;
      aof_stats_.consecutive_failures = 0;
      aof_stats_.base_size_at_rewrite = aof_->current_size();
      LOG_NOTICE("Background AOF rewrite finished successfully");
    } else {
      aof_stats_.consecutive_failures++;
      aof_stats_.last_failure_ms = end_ms;
      // Turned on at run time and still without a base: tried again (the
      // cron, after a pause), as Redis retries in AOF_WAIT_REWRITE.
      if (aof_->waiting_for_base()) aof_stats_.rewrite_scheduled = true;
    }
    bgsave_.reset();
    return;
  }
  NoteRdbSaveEnd(bgsave_->ok(), end_ms);
  bgsave_.reset();
}

void Server::NoteRdbSaveEnd(bool ok, int64_t end_ms) {
  PersistenceState& st = persistence_;
  if (ok) {
    st.lastsave_s.store(end_ms / 1000, std::memory_order_relaxed);
    st.dirty_at_save.store(bgsave_->dirty_at_start(), std::memory_order_relaxed);
    st.last_save_ok.store(true, std::memory_order_relaxed);
    st.saves++;
    LOG_NOTICE("Background saving terminated with success (%llu keys, %llu bytes in %lld ms)",
               static_cast<unsigned long long>(bgsave_->keys_saved()),
               static_cast<unsigned long long>(bgsave_->bytes_written()),
               static_cast<long long>(end_ms - bgsave_->start_ms()));
  } else {
    st.last_save_ok.store(false, std::memory_order_relaxed);
    LOG_WARNING("Background saving error: %s", bgsave_->error().c_str());
  }
  st.last_save_duration_s = (end_ms - bgsave_->start_ms()) / 1000;
}

bool WritesRefusedAfterSaveError(ServerState& server) {
  const Config& c = server.config();
  return c.stop_writes_on_bgsave_error && !c.save_params.empty() &&
         !server.persistence().last_save_ok.load(std::memory_order_relaxed);
}

bool SaveDue(ServerState& server, int64_t now_s) {
  PersistenceState& st = server.persistence();
  const Config& c = server.config();
  if (c.save_params.empty() || server.bgsave() != nullptr) return false;
  const uint64_t changes = TotalDirty(server) - st.dirty_at_save.load(std::memory_order_relaxed);
  const int64_t last = st.lastsave_s.load(std::memory_order_relaxed);
  // As Redis: after a failed save, wait 5 s before trying again.
  const bool may_retry = st.last_save_ok.load(std::memory_order_relaxed) ||
                         now_s - st.last_attempt_s.load(std::memory_order_relaxed) > 5;
  if (!may_retry) return false;
  for (const Config::SaveParam& p : c.save_params)
    if (changes >= static_cast<uint64_t>(std::max<int64_t>(p.changes, 0)) && now_s - last > p.seconds) return true;
  return false;
}

}  // namespace peregrine
