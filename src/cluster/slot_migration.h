// Atomic slot migration (docs/cluster.md, "Atomic slot migration"), with
// Valkey 9's commands: CLUSTER MIGRATESLOTS on the source starts a job per
// target; the job moves its slots' keys in the background, then the
// changes made meanwhile, and hands the slots over while writes wait for
// an instant; no client sees -ASK or -TRYAGAIN.
//
// The source (an export): MIGRATESLOTS, holding every shard, makes each
// shard with keys of those slots record which of them change from then on
// (MovingKeys in the shard's WatchTable, fed by every write's
// SignalModifiedKey). Each shard's owner then walks its keys between
// events (Step): a key of the job's slots is sent whole (DEL, then the
// commands that rebuild it, of at most 64 items each, as an AOF rewrite
// writes it). Once the walk is done, the keys changed meanwhile are sent
// again as they are now (or DEL when gone), round after round. A key's
// last state is sent after its last change, so the target ends up with the
// source's keys whatever ran when. When little is left, writes pause
// (ClientPause), each shard sends what is left and stops recording, and
// the job says TAKEOVER; the target takes the slots under a new epoch and
// the source gives them to it, deleting its copies; writes go on, to the
// target (-MOVED).
//
// The wire: the job's thread connects to the target's client port as a
// client (AUTH with masteruser/masterauth when set), says CLUSTER
// SYNCSLOTS ESTABLISH SOURCE <id> NAME <name> SLOTSRANGE <start end>...
// (Valkey's words), turns its replies off, and sends the commands; the
// target runs them as any client's, except that this client is served for
// the imported slots (which the target does not own yet); its replicas and
// AOF get them as any write. CLUSTER SYNCSLOTS TAKEOVER NAME <name>
// (Peregrine's own: the rest of the wire differs from Valkey's) replies +OK
// once everything before it ran and the slots are the target's. A target
// whose importing client goes before TAKEOVER deletes what it imported.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/watch.h"

namespace peregrine {
class Db;
class ServerState;
}

namespace peregrine::cluster {

class ClusterBus;

class SlotMigrations {
 public:
  // A job's states (GETSLOTMIGRATIONS names them in Valkey's words,
  // StateName).
  enum class State : int {
    kConnecting,
    kSnapshot,   // the shards' walk (an import: receiving it all along)
    kStreaming,  // rounds of changed keys
    kPausing,    // writes paused, the last changes going
    kFinishing,  // TAKEOVER sent
    kSuccess,
    kFailed,
    kCancelled,
  };
  static const char* StateName(State s, bool is_export);

  SlotMigrations(ServerState& server, ClusterBus& bus);
  ~SlotMigrations();
  SlotMigrations(const SlotMigrations&) = delete;
  SlotMigrations& operator=(const SlotMigrations&) = delete;

  // One job of MIGRATESLOTS: its slots (kNumSlots flags, the ranges as
  // given) and target.
  struct Request {
    std::vector<bool> slots;
    std::vector<std::pair<int, int>> ranges;
    std::string target;  // node id
  };
  // MIGRATESLOTS (its checks done), every shard held: the jobs start.
  void Start(std::vector<Request> requests);
  // The first slot of `slots` an export in progress moves, or -1.
  int FirstExporting(const std::vector<bool>& slots);
  // Whether an import or an export is in progress (SETSLOT is refused).
  bool Importing();
  bool Exporting();
  // CANCELSLOTMIGRATIONS: the exports in progress stop (their targets drop
  // what they imported). How many.
  int CancelAll();
  // GETSLOTMIGRATIONS: each job, the newest first.
  struct Info {
    std::string name, operation, slot_ranges, target_node, source_node;
    int64_t create_time = 0, last_update_time = 0, last_ack_time = 0;  // unix seconds
    std::string state, message;
  };
  std::vector<Info> List();
  // DEBUG SLOTMIGRATION PREVENT-PAUSE|PREVENT-FAILOVER <0|1>.
  void SetPreventPause(bool on) { prevent_pause_.store(on); }
  void SetPreventFailover(bool on) { prevent_failover_.store(on); }
  // Whether a shard has work (any worker between events: a cheap check).
  bool active() const { return active_.load(std::memory_order_acquire) > 0; }
  // Whether an export moves `slot`, or its keys here are still being
  // removed after it (any thread; the bus then leaves them to the job).
  bool ExportingSlot(int slot) const {
    return exporting_[static_cast<size_t>(slot) >> 6].load(std::memory_order_acquire) >> (slot & 63) & 1;
  }
  // Whether a write to `slot` must be refused (TRYAGAIN) where it runs:
  // its shard sent its last changes for a handover, and records no more
  // (a write that passed the pause check just before the pause began);
  // until the job fails, or after its success until the slot's keys here
  // are gone (the routes send it to the target by then).
  bool FrozenSlot(int slot) const {
    return frozen_[static_cast<size_t>(slot) >> 6].load(std::memory_order_acquire) >> (slot & 63) & 1;
  }
  // The worker owning shard `shard`, holding it, between events: its part
  // of every job (`drained`: every batch admitted for the shard has run).
  // True if it has more to do at once.
  bool Step(size_t shard, bool drained);

  // --- The target's side (CLUSTER SYNCSLOTS) ---
  // ESTABLISH: "" and the slots (for the client), or the error.
  std::string BeginImport(const std::string& name, const std::string& source, std::vector<std::pair<int, int>> ranges,
                          uint64_t client_id, std::shared_ptr<const std::vector<bool>>* slots);
  // TAKEOVER: the slots become this node's. "" or the error.
  std::string FinishImport(const std::string& name, uint64_t client_id);
  // ESTABLISH found keys in slots this node does not serve (a failed
  // import's that came after its end, or from before a restart): they go,
  // unless an import or a removal covers them already.
  void RemoveLeftovers(const std::vector<bool>& slots);
  // The importing client went before TAKEOVER: what it imported goes.
  void EndImport(const std::string& name, uint64_t client_id, const char* why);

 private:
  struct Job;
  struct Part;
  void Run(Job* job);  // the job's thread
  void RunJob(Job* job);
  bool Connect(Job* job);
  bool SendAll(Job* job, std::string_view bytes);
  // Reads the target's replies that came (an error reply is kept); false
  // once its connection is gone.
  bool Pump(Job* job);
  bool ReadLine(Job* job, std::string* line);
  // The job ends (failed, or cancelled): `why` is its message, `detail`
  // goes to the log only.
  void Fail(Job* job, const std::string& why, const std::string& detail = "");
  // Writes to a job's slots paused for its handover (one ClientPause scoped
  // to the slots of every job paused: the last one to be done lets them go;
  // writes to other slots go on).
  void PauseWrites(Job* job);
  void UnpauseWrites(Job* job);
  bool QueueEmpty(Job* job);
  void Release(Job* job, Part& p);
  // Removing the keys of slots from a shard, a step at a time (a source's
  // after the handover, a target's after a failed import).
  struct Cleanup {
    size_t shard = 0;
    std::vector<bool> slots;
    uint64_t cursor = 0;
    bool exported = false;
    int64_t start_ms = 0;  // not before (unix ms)
  };
  void AddCleanup(size_t shard, const std::vector<bool>& slots, bool exported);
  // A step of a round (the changed keys again, as they are now); the keys
  // it sent.
  uint64_t StepRound(Part& p, Db& db, std::string* out, int64_t now_ms);
  // One part of the large key a shard is sending (or the next one's first);
  // the keys it completed.
  uint64_t StepBigKey(Part& p, Db& db, std::string* out, int64_t now_ms);
  bool StepCleanups(size_t shard, Db& db, int64_t now_ms);
  using SlotBits = std::array<std::atomic<uint64_t>, 256>;  // (kNumSlots bits)
  static constexpr size_t kAllShards = SIZE_MAX;
  // Sets or clears the bits of `slots` (those of shard `shard` only, if given).
  void MarkBits(SlotBits& bits, const std::vector<bool>& slots, bool on, size_t shard = kAllShards);
  void MarkExporting(const std::vector<bool>& slots, bool on) { MarkBits(exporting_, slots, on); }
  // These slots no longer move from here: neither exporting nor frozen.
  void EndExport(const std::vector<bool>& slots) {
    MarkExporting(slots, false);
    MarkBits(frozen_, slots, false);
  }
  // Reaps finished jobs' threads, keeps the last kLogMax entries.
  void Trim();
  static constexpr size_t kLogMax = 1000;

  ServerState& server_;
  ClusterBus& bus_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Job>> jobs_;  // exports and imports, oldest first
  std::vector<Cleanup> cleanups_;
  std::mutex pause_mu_;
  std::vector<bool> paused_slots_;  // (under pause_mu_) the paused jobs' slots
  int pauses_ = 0;
  // DEBUG SLOTMIGRATION (as Valkey's, for tests): PREVENT-PAUSE keeps jobs
  // streaming, PREVENT-FAILOVER holds them paused before TAKEOVER.
  std::atomic<bool> prevent_pause_{false}, prevent_failover_{false};
  std::atomic<int> active_{0};  // exports with parts still recording, and cleanups
  SlotBits exporting_{};  // (ExportingSlot)
  SlotBits frozen_{};     // (FrozenSlot)
};

}  // namespace peregrine::cluster
