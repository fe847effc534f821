// Atomic slot migration (see slot_migration.h): the registry of jobs, what
// MIGRATESLOTS, GETSLOTMIGRATIONS and CANCELSLOTMIGRATIONS ask of it, and the
// target's side (ESTABLISH, TAKEOVER, an import that ends early). The
// shards' steps are in slot_migration_steps.cc, the job's thread in
// slot_migration_link.cc.
#include "cluster/slot_migration.h"

#include <algorithm>

#include "cluster/cluster_bus.h"
#include "core/slot.h"
#include "cluster/slot_migration_internal.h"
#include "server/log.h"
#include "server/server_state.h"
#include "server/shard.h"

namespace peregrine::cluster {

using namespace migration_internal;


const char* SlotMigrations::StateName(State s, bool is_export) {
  switch (s) {
    case State::kConnecting: return "connecting";
    case State::kSnapshot: return is_export ? "snapshotting" : "receiving-snapshot";
    case State::kStreaming: return "replicating";
    case State::kPausing: return "waiting-to-pause";
    case State::kFinishing: return "failover-paused";
    case State::kSuccess: return "success";
    case State::kFailed: return "failed";
    case State::kCancelled: return "cancelled";
  }
  return "?";
}

SlotMigrations::SlotMigrations(ServerState& server, ClusterBus& bus) : server_(server), bus_(bus) {}

SlotMigrations::~SlotMigrations() {
  for (auto& j : jobs_) {
    j->cancel.store(true);
    j->qcv.notify_all();
  }
  for (auto& j : jobs_)
    if (j->thread.joinable()) j->thread.join();
}

void SlotMigrations::Start(std::vector<Request> requests) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t shards = server_.num_shards();
  for (Request& r : requests) {
    auto job = std::make_unique<Job>();
    job->name = RandomHex(40);
    job->source = bus_.MyId();
    job->target = r.target;
    job->slots = std::move(r.slots);
    job->ranges = std::move(r.ranges);
    job->create_ms = UnixTimeMs();
    job->update_ms.store(job->create_ms);
    // A part on each shard the slots live on: from now on it records the
    // changes of their keys (every shard is held: nothing runs meanwhile).
    std::vector<bool> on_shard(shards, false);
    for (size_t s = 0; s < kNumSlots; s++)
      if (job->slots[s]) on_shard[s * shards / kNumSlots] = true;
    for (size_t i = 0; i < shards; i++) {
      if (!on_shard[i]) continue;
      auto p = std::make_unique<Part>();
      p->shard = i;
      p->moving.slots = job->slots;
      p->attached = true;
      server_.shard(i).watches().AddMoving(&p->moving);
      server_.watched_keys().fetch_add(1, std::memory_order_relaxed);
      job->parts.push_back(std::move(p));
    }
    job->counted = true;
    MarkExporting(job->slots, true);
    active_.fetch_add(1, std::memory_order_acq_rel);
    LOG_NOTICE("Slot migration %s: slots %s to node %s started", job->name.c_str(), RangesText(job->ranges).c_str(),
               job->target.c_str());
    Job* raw = job.get();
    jobs_.push_back(std::move(job));
    raw->thread = std::thread([this, raw] { Run(raw); });
  }
  Trim();
  server_.WakeWorkers();
}

int SlotMigrations::FirstExporting(const std::vector<bool>& slots) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& j : jobs_) {
    // (A job over whose shards have not let go yet counts: its exporting
    // marks are cleared then.)
    if (!j->is_export || (j->terminal() && !j->counted)) continue;
    for (size_t s = 0; s < kNumSlots; s++)
      if (slots[s] && j->slots[s]) return static_cast<int>(s);
  }
  return -1;
}

bool SlotMigrations::Importing() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return !j->is_export && !j->terminal(); });
}

bool SlotMigrations::Exporting() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->is_export && !j->terminal(); });
}

int SlotMigrations::CancelAll() {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (auto& j : jobs_) {
    if (!j->is_export || j->terminal() || j->cancel.load() || j->state.load() == State::kFinishing) continue;
    j->cancel.store(true);
    j->qcv.notify_all();
    n++;
  }
  return n;
}

std::vector<SlotMigrations::Info> SlotMigrations::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Info> out;
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) {
    const Job& j = **it;
    Info i;
    i.name = j.name;
    i.operation = j.is_export ? "EXPORT" : "IMPORT";
    i.slot_ranges = RangesText(j.ranges);
    i.target_node = j.target;
    i.source_node = j.source;
    i.create_time = j.create_ms / 1000;
    i.last_update_time = j.update_ms.load() / 1000;
    i.last_ack_time = j.ack_ms.load() / 1000;
    i.state = StateName(j.state.load(), j.is_export);
    i.message = j.message;
    out.push_back(std::move(i));
  }
  return out;
}

void SlotMigrations::Trim() {
  // (Under mu_.) Finished jobs whose shards let go of them are kept for
  // GETSLOTMIGRATIONS, the oldest dropped past kLogMax.
  size_t finished = 0;
  for (const auto& j : jobs_) {
    if (!j->terminal()) continue;
    // (A thread that ended is joined now: its stack goes.)
    if (j->thread.joinable() && j->thread_done.load(std::memory_order_acquire)) j->thread.join();
    if (!j->counted) finished++;
  }
  for (auto it = jobs_.begin(); it != jobs_.end() && finished > kLogMax;) {
    Job& j = **it;
    if (j.terminal() && !j.counted) {
      if (j.thread.joinable()) j.thread.join();
      it = jobs_.erase(it);
      finished--;
    } else {
      ++it;
    }
  }
}

// --- The target's side ---

std::string SlotMigrations::BeginImport(const std::string& name, const std::string& source,
                                        std::vector<std::pair<int, int>> ranges, uint64_t client_id,
                                        std::shared_ptr<const std::vector<bool>>* slots_out) {
  std::vector<bool> slots(kNumSlots, false);
  for (const auto& [s, e] : ranges)
    for (int i = s; i <= e; i++) slots[static_cast<size_t>(i)] = true;
  std::string error = bus_.CheckImport(slots, source);
  if (!error.empty()) return error;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& j : jobs_) {
    if (j->terminal()) continue;
    if (j->name == name) return "ERR Slot migration " + name + " already exists";
    for (size_t s = 0; s < kNumSlots; s++)
      if (slots[s] && j->slots[s]) return "ERR Slot is already being imported on the target by a different migration";
  }
  for (const Cleanup& c : cleanups_)
    for (size_t s = 0; s < kNumSlots; s++)
      if (slots[s] && c.slots[s]) return "ERR Slot " + std::to_string(s) + " already holds keys on the target node";
  auto job = std::make_unique<Job>();
  job->name = name;
  job->is_export = false;
  job->source = source;
  job->target = bus_.MyId();
  job->slots = slots;
  job->ranges = std::move(ranges);
  job->create_ms = UnixTimeMs();
  job->update_ms.store(job->create_ms);
  job->client_id = client_id;
  job->SetState(State::kSnapshot);
  *slots_out = std::make_shared<const std::vector<bool>>(std::move(slots));
  LOG_NOTICE("Slot migration %s: importing slots %s from node %s", name.c_str(), RangesText(job->ranges).c_str(),
             source.c_str());
  jobs_.push_back(std::move(job));
  Trim();
  return "";
}

void SlotMigrations::RemoveLeftovers(const std::vector<bool>& slots) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& j : jobs_)
    if (!j->is_export && !j->terminal())
      for (size_t s = 0; s < kNumSlots; s++)
        if (slots[s] && j->slots[s]) return;  // (an import's own keys)
  for (const Cleanup& c : cleanups_)
    for (size_t s = 0; s < kNumSlots; s++)
      if (slots[s] && c.slots[s]) return;  // (going already)
  std::vector<bool> on_shard(server_.num_shards(), false);
  for (size_t s = 0; s < kNumSlots; s++)
    if (slots[s]) on_shard[s * server_.num_shards() / kNumSlots] = true;
  for (size_t i = 0; i < on_shard.size(); i++)
    if (on_shard[i]) AddCleanup(i, slots, /*exported=*/false);
  server_.WakeWorkers();
}

std::string SlotMigrations::FinishImport(const std::string& name, uint64_t client_id) {
  Job* job = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& j : jobs_)
      if (!j->is_export && j->name == name && j->client_id == client_id && !j->terminal()) job = j.get();
    if (job == nullptr) return "ERR No slot migration " + name + " is being imported by this connection";
  }
  bus_.TakeImportedSlots(job->slots);
  job->SetState(State::kSuccess);
  LOG_NOTICE("Slot migration %s: slots %s are this node's now", name.c_str(), RangesText(job->ranges).c_str());
  return "";
}

void SlotMigrations::EndImport(const std::string& name, uint64_t client_id, const char* why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Job* job = nullptr;
    for (auto& j : jobs_)
      if (!j->is_export && j->name == name && j->client_id == client_id && !j->terminal()) job = j.get();
    if (job == nullptr) return;
    job->message = why;
    job->SetState(State::kFailed);
    LOG_WARNING("Slot migration %s: the import of slots %s failed (%s): its keys go", name.c_str(),
                RangesText(job->ranges).c_str(), why);
    std::vector<bool> on_shard(server_.num_shards(), false);
    for (size_t s = 0; s < kNumSlots; s++)
      if (job->slots[s]) on_shard[s * server_.num_shards() / kNumSlots] = true;
    for (size_t i = 0; i < on_shard.size(); i++)
      if (on_shard[i]) AddCleanup(i, job->slots, /*exported=*/false);
  }
  server_.WakeWorkers();
}

}  // namespace peregrine::cluster
