// Persistence as the server runs it (docs/persistence.md): RDB files saved
// from and loaded into every shard, the state INFO persistence reports,
// and the container limits values are rebuilt with.
#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include "core/db.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"
#include "server/config.h"

namespace peregrine {

struct FunctionLibrary;
class LuaEngine;
class ServerState;
class Shard;

// The start of an RDB file: "REDIS00NN", Redis's aux fields, the function
// libraries (every shard held).
// `aof_base`: the file is an append-only file's base (aux aof-base 1).
void WriteRdbHeader(ServerState& server, RdbWriter& w, int64_t now_ms, bool aof_base = false, bool functions = true);
// Database `db`'s keys and keys with a deadline over every shard (RDB's
// RESIZEDB). Every shard held.
std::pair<uint64_t, uint64_t> DbSizes(ServerState& server, int db);

// The function libraries as FUNCTION LOAD commands (an AOF base without
// the RDB preamble starts with them, as Redis's rewrite writes them; after
// a #TS annotation with aof-timestamp-enabled).
std::string FunctionLoadCommands(ServerState& server);

// One key as a file holds it (with its idle time or LFU counter when the
// policy asks, as Redis), skipping keys already expired at `now_ms`.
class RdbKeyWriter {
 public:
  RdbKeyWriter(MaxmemoryPolicy policy, int64_t now_ms);
  // Returns whether it wrote the key.
  bool Write(RdbWriter& w, Shard& shard, const Db::Entry& e) const;

 private:
  enum Access : uint8_t { kNone, kIdle, kFreq };
  int64_t now_ms_;
  Access access_ = kNone;
};

// The container directives of `config`, for values read from RDB data.
ContainerLimits ContainerLimitsOf(const Config& config);

// What INFO persistence, LASTSAVE and the save schedules read. Written by
// a save or load, which holds every shard (or runs before the workers
// start / after they stop); the atomics are read by any worker's cron.
struct PersistenceState {
  std::atomic<int64_t> lastsave_s{0};          // the last successful save (start-up time until one)
  std::atomic<int64_t> last_attempt_s{0};      // the last save tried (a failed one is retried after 5 s)
  std::atomic<bool> last_save_ok{true};
  std::atomic<uint64_t> dirty_at_save{0};      // TotalDirty() when the last save began
  int64_t last_save_duration_s = -1;
  uint64_t saves = 0;                          // rdb_saves
  // Loading (start-up, DEBUG RELOAD).
  std::atomic<bool> loading{false};
  int64_t loading_start_s = 0;
  uint64_t loading_total_bytes = 0;
  std::atomic<uint64_t> loading_loaded_bytes{0};
  std::atomic<uint64_t> loading_loaded_keys{0};
  int64_t last_load_keys_loaded = 0, last_load_keys_expired = 0;
  // A replica's history as the last file loaded kept it (aux repl-id,
  // repl-offset, repl-stream-db; empty id: none): a restarted replica
  // continues it.
  std::string loaded_repl_id;
  uint64_t loaded_repl_offset = 0;
  int loaded_repl_db = 0;
};

// Writes made since the start: the sum of every shard's counter (any
// thread; approximate while workers write).
uint64_t TotalDirty(ServerState& server);

// Writes all of `bytes` to `fd`; false on an error.
bool WriteAll(int fd, std::string_view bytes);
// Ends a save written to the temporary file `temp` (open as `fd`, which it
// closes): fsyncs it, renames it over `filename` and fsyncs the directory;
// with ok false, or on any failure, removes it instead. Returns whether the
// file is in place (*why says why not, unless it was already set).
bool CommitRdbFile(int fd, bool ok, const std::string& temp, const std::string& filename, std::string* why);

// Who asks for a snapshot: a command (SAVE, SHUTDOWN, DEBUG RELOAD,
// FLUSHALL), whose failure is its caller's to report, or the schedule (or
// a signal), whose failure is rdb_last_bgsave_status's (and stops writes,
// with stop-writes-on-bgsave-error), as Redis's BGSAVE failures are.
enum class SaveKind { kCommand, kScheduled };

// Writes every database of every shard, the function libraries and
// Redis's aux fields as an RDB file named `filename` in the working
// directory (a temporary file, fsynced, renamed over it). Every shard held,
// or no worker running. False with *err (logged as well).
bool SaveRdbFile(ServerState& server, const std::string& filename, std::string* err,
                 SaveKind kind = SaveKind::kCommand);

// What the start-up load is (an RDB file, or the append-only file): worker
// 0 runs Step between its events until it is done (Server::SetStartupLoader).
class StartupLoader {
 public:
  enum class Status { kMore, kDone, kError };
  virtual ~StartupLoader() = default;
  // Loads about `max_keys` more keys (or commands).
  virtual Status Step(size_t max_keys) = 0;
  virtual const std::string& error() const = 0;
};

// Loads an RDB file into the shards in steps (the start-up load goes on
// between worker 0's events, so that clients get -LOADING meanwhile; DEBUG
// RELOAD and LoadRdbFile run it to the end at once). Keys go to the shard
// owning them; a key that exists already is an error unless `merge`
// (DEBUG RELOAD MERGE), which replaces it. Function libraries are checked
// by running them in `lua` (the calling thread's interpreter). Every shard
// held, or no other worker running.
class RdbLoader final : public StartupLoader {
 public:
  RdbLoader(ServerState& server, LuaEngine& lua, bool merge) : server_(server), lua_(lua), merge_(merge) {}
  ~RdbLoader() override;
  RdbLoader(const RdbLoader&) = delete;
  RdbLoader& operator=(const RdbLoader&) = delete;

  // An append-only file's base: keys already expired are loaded too (the
  // file's commands after it may still touch them, as Redis loads a
  // base). Before Open.
  void set_keep_expired() { keep_expired_ = true; }
  // A replica's swapdb load: keys go to the shards' staged databases
  // (Shard::BeginStaging), and function libraries, checked as they come,
  // are kept aside (staged_libraries) rather than replacing the live ones.
  // Before Open.
  void set_staged() { staged_ = true; }
  std::vector<std::shared_ptr<FunctionLibrary>>& staged_libraries() { return staged_libs_; }
  // Opens the file and reads its header. A missing file is not an error:
  // *found says whether there was one. False with *err.
  bool Open(const std::string& filename, bool* found, std::string* err);
  // Reads from `fd` instead (a pipe: a replica's diskless load), which it
  // then owns; the RDB ends at its EOF opcode. `size`: the bytes to come if
  // known (INFO's loading figures), else 0.
  bool OpenStream(int fd, uint64_t size, std::string* err);
  // Loads about `max_keys` more keys (and what comes between them).
  Status Step(size_t max_keys) override;
  // OpenStream's pipe (made non-blocking by its writer): what has come is
  // read in without waiting (RdbReader::FillAvailable); the bytes read in
  // and not loaded yet; whether nothing more will come.
  bool streaming() const { return streaming_; }
  void FillAvailable() { reader_->FillAvailable(); }
  size_t buffered() const { return reader_->buffered(); }
  bool input_ended() const { return reader_->ended(); }
  const std::string& error() const override { return reader_->error(); }
  // The bytes of the file read so far (after kDone: where the RDB data
  // ends; an old-style AOF goes on with commands there).
  uint64_t consumed() const { return size_ - reader_->remaining(); }

 private:
  // After Open's or OpenStream's fd: the reader over `source` bytes (of
  // which `size` are known) and the header.
  bool Begin(uint64_t source, uint64_t size, std::string* err);
  bool LoadKey(int type);
  bool LoadFunction();
  bool Finish();

  ServerState& server_;
  LuaEngine& lua_;
  bool merge_;
  bool keep_expired_ = false;
  bool staged_ = false;
  std::vector<std::shared_ptr<FunctionLibrary>> staged_libs_;
  bool streaming_ = false;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::unique_ptr<RdbReader> reader_;
  ContainerLimits limits_;
  int version_ = 0;
  int64_t start_ms_ = 0, now_ms_ = 0;
  int64_t key_delay_us_ = 0;
  int db_ = 0;
  int64_t expire_ms_ = Db::kNoExpire;
  int64_t idle_ = -1, freq_ = -1;
  uint64_t keys_ = 0, expired_ = 0, empty_ = 0;
  std::string key_;
};

// A function library from an RDB file (its code), checked by running it in
// `lua`; null with *err if it does not load.
std::shared_ptr<FunctionLibrary> CheckFunctionLibrary(LuaEngine& lua, std::string_view code, std::string* err);

// Loads an RDB file into the shards (keys to the shard owning them). A key
// that exists already is an error, unless `merge` (DEBUG RELOAD MERGE),
// which replaces it. A missing file is not an error: *found says whether
// there was one. Function libraries are checked by running them in `lua`
// (the calling thread's interpreter). Every shard held, or no worker
// running. False with *err.
// `keep_expired`: keys past their deadline are loaded too (a replica's
// full sync: its primary's DELs remove them).
bool LoadRdbFile(ServerState& server, LuaEngine& lua, const std::string& filename, bool merge, bool* found,
                 std::string* err, bool keep_expired = false);
// The same from a stream (`fd`, closed after; `size`: its bytes if known,
// else 0), keys past their deadline included: a replica's diskless load.
bool LoadRdbStream(ServerState& server, LuaEngine& lua, int fd, uint64_t size, std::string* err);

// Redis's writeCommandsDeniedByDiskError for RDB: the last save failed,
// a schedule is configured and stop-writes-on-bgsave-error is on.
bool WritesRefusedAfterSaveError(ServerState& server);
inline constexpr std::string_view kErrMisconf =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands "
    "that may modify the data set are disabled, because this instance is configured to report errors during "
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for "
    "details about the RDB error.";

// Whether the save schedule says a save is due now (unix seconds).
bool SaveDue(ServerState& server, int64_t now_s);

}  // namespace peregrine
