// The append-only file as the server runs it (docs/persistence.md): Redis 7's
// multi-part directory (appenddirname: a manifest, one base file, the
// incremental files of commands), written by every worker, made durable as
// appendfsync asks, rewritten without fork (a BgSave into a new base while
// writes go to a new incremental file), and loaded at start.
//
// Threads: the workers append chunks (their shard's commands, AofChunk) under
// one mutex, each at its own flush points (before replies leave); fsync is
// grouped: a worker asks for the file to be durable up to the end of its
// last write, and one fdatasync covers every write before it. With
// everysec a thread of this class syncs once a second. What changes the
// files (start, rewrite, switching it on or off) runs holding every shard,
// or before the workers start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include <memory>
#include <vector>

#include "persist/aof_format.h"
#include "server/config.h"
#include "server/persistence.h"

namespace peregrine {

class Server;
class Worker;
class CommandReplayer;  // (command_replayer.h)
class AofFileReplay;  // (aof_control.cc)

// The start-up load with appendonly yes, as Redis's loadAppendOnlyFiles:
// the manifest's base (an RDB file, or commands) and incremental files, a
// step at a time on worker 0 (no other worker running; its interpreter
// checks function libraries) while clients get -LOADING; then the file
// is opened for appending (OpenForAppending).
class AofLoader final : public StartupLoader {
 public:
  struct Options {
    bool open_for_appending = true;  // when done (the fuzzer only loads)
    bool scripts = true;             // EVAL / FCALL in the file run (the fuzzer skips them)
  };
  AofLoader(Server& server, Worker& worker) : AofLoader(server, worker, Options{}) {}
  AofLoader(Server& server, Worker& worker, Options options);
  ~AofLoader() override;
  // Reads the manifest (moving an old-style AOF in first). *found false:
  // no AOF, no data (the caller opens the file for appending at once).
  bool Open(bool* found, std::string* err);
  Status Step(size_t max_keys) override;
  const std::string& error() const override { return error_; }

 private:
  bool StartReplay(size_t file, uint64_t from);

  Server& server_;
  Worker& worker_;
  Options options_;
  std::vector<AofManifest::File> files_;
  size_t next_ = 0;  // the next file to open
  std::unique_ptr<CommandReplayer> replayer_;
  std::unique_ptr<RdbLoader> rdb_;
  std::unique_ptr<AofFileReplay> replay_;
  std::string error_;
  int64_t start_ms_ = 0;
};

// After the load (or with no AOF to load): the file opened for appending
// (AppendOnlyFile::OpenOnStart) and the databases' own deletions logged.
// No worker but the caller running. False with *err.
bool OpenForAppending(Server& server, std::string* err);
// Writes the dataset as commands (an AOF base with aof-use-rdb-preamble
// no) into `path` (a temporary file, fsynced, renamed). Every shard held,
// or no worker running. False with *err.
bool SaveAofCommandsFile(Server& server, const std::string& path, std::string* err);

class AppendOnlyFile {
 public:
  explicit AppendOnlyFile(Server& server) : server_(server) {}
  ~AppendOnlyFile();
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // --- Start-up (no worker running) ---
  // Reads appenddirname's manifest; *found false if there is none (no
  // directory, or no manifest in it). False with *err on a bad manifest.
  bool ReadManifest(bool* found, std::string* err);
  // No manifest, but an appendfilename file in the working directory
  // (Redis 4-6's single AOF): it moves into the directory as the base of a
  // new manifest, as Redis 7's aofUpgradePrepare does. *found says whether
  // there was one.
  bool UpgradeOldStyle(bool* found, std::string* err);
  const AofManifest& manifest() const { return manifest_; }
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }
  // After loading, with appendonly yes (Redis's aofOpenIfNeededOnServerStart):
  // creates the directory, writes a base file if there is neither base nor
  // incremental file (the dataset as loaded), opens the last incremental
  // file (or a new one) for appending and persists the manifest.
  bool OpenOnStart(std::string* err);

  // --- Writing (a worker, holding the shard the chunk comes from) ---
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // Appends the chunk (after a SELECT if the file is in another database)
  // and returns the position after it (bytes ever written, across files),
  // for SyncTo.
  uint64_t Write(const AofChunk& chunk);
  // appendfsync always: makes everything up to `pos` durable before the
  // caller's replies leave (one fdatasync for every write before it).
  void SyncTo(uint64_t pos);
  bool always() const { return fsync_.load(std::memory_order_relaxed) == AppendFsync::kAlways; }
  // Whether a write failed and has not been retried successfully (writes
  // are then refused: Redis's "-MISCONF Errors writing to the AOF file").
  bool write_failed() const { return write_failed_.load(std::memory_order_relaxed); }
  std::string last_write_error() const;
  // Retries what failed to reach the file (the cron).
  void RetryFailedWrite();

  // --- Switching and rewriting (every shard held) ---
  // CONFIG SET appendfsync.
  void SetFsync(AppendFsync f) { fsync_.store(f, std::memory_order_relaxed); }
  // Starts a rewrite: everything logged so far goes to the current file,
  // which is synced; a new incremental file takes the writes from now on
  // (a temporary one, not in the manifest, when the AOF is being turned on).
  // *base_temp is where the snapshot writes the new base. False with *err.
  bool BeginRewrite(std::string* base_temp, std::string* base_name, std::string* err);
  // The snapshot is done (worker 0's cron; ok: the base is in place as
  // `base_name`): the new base and the incremental files since the
  // rewrite began make the manifest, the older files go. False (logged)
  // if it failed.
  bool FinishRewrite(bool ok, const std::string& base_name);
  // BGREWRITEAOF with the AOF off (Redis writes a base into the directory
  // all the same): the directory and its manifest, if any, as configured.
  bool PrepareOffRewrite(std::string* err);
  // CONFIG SET appendonly yes: writes go to a temporary incremental file
  // until the first rewrite, started by the caller, finishes.
  bool TurnOn(std::string* err);
  // CONFIG SET appendonly no: flushes and closes the file.
  void TurnOff();
  // Shutdown: syncs what was written (every worker stopped).
  void Close();
  // Whether the AOF is waiting for its first base (turned on at run time).
  bool waiting_for_base() const { return waiting_.load(std::memory_order_acquire); }

  // --- INFO ---
  uint64_t current_size() const { return current_size_.load(std::memory_order_relaxed); }
  // Bytes ever written, and of them made durable (fsync): WAITAOF's local
  // count compares the two (any thread).
  uint64_t written() const { return written_.load(std::memory_order_acquire); }
  uint64_t synced() const { return synced_.load(std::memory_order_acquire); }
  uint64_t base_size() const { return base_size_.load(std::memory_order_relaxed); }

 private:
  bool PersistManifest(const AofManifest& m, std::string* err);
  bool OpenIncr(const std::string& name, std::string* err);
  void WriteLocked(std::string_view bytes);
  void SyncAllLocked();
  void StartSyncThread();
  void StopSyncThread();
  void SyncThreadMain();
  void DeleteHistory();

  Server& server_;
  std::string dir_, prefix_;
  AofManifest manifest_;
  std::atomic<bool> waiting_{false};  // on, writing the temporary incremental file, no base yet (read by any worker: WAITAOF)
  std::atomic<bool> active_{false};
  std::atomic<AppendFsync> fsync_{AppendFsync::kEverysec};

  mutable std::mutex mu_;  // the file: fd_, file_db_, pending_, last_error_, written_
  int fd_ = -1;
  int file_db_ = -1;     // the database the file's last command is in (-1: none yet)
  int64_t last_ts_s_ = 0;  // the last #TS annotation's second (aof-timestamp-enabled)
  std::string pending_;  // bytes a failed write left (written first next time)
  std::string last_error_;
  std::atomic<bool> write_failed_{false};
  std::atomic<uint64_t> written_{0};  // bytes ever written, across files
  std::atomic<uint64_t> current_size_{0}, base_size_{0};

  std::mutex sync_mu_;  // one fdatasync at a time; fd_ changes under both
  std::atomic<uint64_t> synced_{0};

  std::mutex thread_mu_;
  std::condition_variable thread_cv_;
  bool thread_stop_ = false;
  std::thread sync_thread_;
};

}  // namespace peregrine
