// Persistence as the server runs it (docs/persistence.md): RDB files saved
// from and loaded into every shard, the state INFO persistence reports,
// and the container limits values are rebuilt with.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/db.h"
#include "persist/rdb_value.h"
#include "persist/rdb_writer.h"
#include "server/config.h"

namespace peregrine {

class LuaEngine;
class Server;
class Shard;

// The start of an RDB file: "REDIS00NN", Redis's aux fields, the function
// libraries (every shard held).
void WriteRdbHeader(Server& server, RdbWriter& w, int64_t now_ms);

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
};

// Writes made since the start: the sum of every shard's counter (any
// thread; approximate while workers write).
uint64_t TotalDirty(Server& server);

// Who asks for a snapshot: a command (SAVE, SHUTDOWN, DEBUG RELOAD,
// FLUSHALL), whose failure is its caller's to report, or the schedule (or
// a signal), whose failure is rdb_last_bgsave_status's (and stops writes,
// with stop-writes-on-bgsave-error), as Redis's BGSAVE failures are.
enum class SaveKind { kCommand, kScheduled };

// Writes every database of every shard, the function libraries and
// Redis's aux fields as an RDB file named `filename` in the working
// directory (a temporary file, fsynced, renamed over it). Every shard held,
// or no worker running. False with *err (logged as well).
bool SaveRdbFile(Server& server, const std::string& filename, std::string* err,
                 SaveKind kind = SaveKind::kCommand);

// Loads an RDB file into the shards (keys to the shard owning them). A key
// that exists already is an error, unless `merge` (DEBUG RELOAD MERGE),
// which replaces it. A missing file is not an error: *found says whether
// there was one. Function libraries are checked by running them in `lua`
// (the calling thread's interpreter). Every shard held, or no worker
// running. False with *err.
bool LoadRdbFile(Server& server, LuaEngine& lua, const std::string& filename, bool merge, bool* found,
                 std::string* err);

// Redis's writeCommandsDeniedByDiskError for RDB: the last save failed,
// a schedule is configured and stop-writes-on-bgsave-error is on.
bool WritesRefusedAfterSaveError(Server& server);
inline constexpr std::string_view kErrMisconf =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands "
    "that may modify the data set are disabled, because this instance is configured to report errors during "
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for "
    "details about the RDB error.";

// Whether the save schedule says a save is due now (unix seconds).
bool SaveDue(Server& server, int64_t now_s);

}  // namespace peregrine
