// Atomic slot migration (see slot_migration.h).
#include "cluster/slot_migration.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstring>

#include "cluster/cluster_bus.h"
#include "core/numbers.h"
#include "core/slot.h"
#include "persist/aof_format.h"
#include "persist/aof_rewrite.h"
#include "server/log.h"
#include "server/server_state.h"
#include "server/shard.h"

namespace peregrine::cluster {

namespace {
// What one step of a shard sends at most before it lets the shard serve
// again (the same bound as a snapshot's chunk), and the entries it looks
// at in its walk.
constexpr size_t kStepBytes = 64 << 10;
constexpr size_t kStepEntries = 1000;
// The commands waiting for the target's socket, at most: a step waits
// beyond (the memory a job takes).
constexpr size_t kMaxQueued = 4 << 20;
// Writes pause once the keys left to send again are fewer than this (or
// after kStreamMaxMs of rounds: then the pause sends what is left).
constexpr uint64_t kHandoverKeys = 1000;
constexpr int64_t kStreamMaxMs = 5000;
// A target that takes nothing (or does not answer) for this long fails
// the job.
constexpr int kIoTimeoutMs = 10000;
// How long a source whose TAKEOVER went unanswered waits for the target's
// claim to reach it over the bus before it keeps the slots.
constexpr int64_t kClaimWaitMs = 3000;
constexpr int64_t kImportCleanupDelayMs = 100;
constexpr const char* kLost =
    "Connection lost to target. Check CLUSTER GETSLOTMIGRATIONS on the target node for more information.";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RangesText(const std::vector<std::pair<int, int>>& ranges) {
  std::string out;
  for (const auto& [s, e] : ranges) {
    if (!out.empty()) out += ' ';
    out += std::to_string(s) + "-" + std::to_string(e);
  }
  return out;
}

std::string RandomHex40() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(40, '0');
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  unsigned char buf[20] = {};
  if (fd >= 0) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    (void)n;
    ::close(fd);
  }
  for (size_t i = 0; i < 20; i++) {
    name[2 * i] = kHex[buf[i] >> 4];
    name[2 * i + 1] = kHex[buf[i] & 15];
  }
  return name;
}

// The target's replies to the commands it is sent, read as they come (so
// that they never pile up on either side): each whole top-level reply
// goes to `on_reply(type, text)` (an array as its last element; the
// commands sent reply none).
class ReplyReader {
 public:
  std::string buf;
  template <class F>
  void Parse(F&& on_reply) {
    size_t pos = 0;
    for (;;) {
      const size_t eol = buf.find("\r\n", pos);
      if (pos >= buf.size() || eol == std::string::npos) break;
      const char t = buf[pos];
      std::string_view text(buf.data() + pos + 1, eol - pos - 1);
      size_t next = eol + 2;
      if (t == '$') {
        int64_t len = 0;
        if (!ParseInt64(text, &len)) len = -1;
        if (len >= 0) {
          if (next + static_cast<size_t>(len) + 2 > buf.size()) break;
          text = std::string_view(buf.data() + next, static_cast<size_t>(len));
          next += static_cast<size_t>(len) + 2;
        }
      }
      pos = next;
      if (t == '*') {
        int64_t n = 0;
        if (ParseInt64(text, &n) && n > 0) {
          stack_.push_back(n);
          continue;
        }
      }
      bool top = stack_.empty();
      while (!stack_.empty() && --stack_.back() == 0) {
        stack_.pop_back();
        top = stack_.empty();
      }
      if (top) on_reply(t, text);
    }
    buf.erase(0, pos);
  }

 private:
  std::vector<int64_t> stack_;  // the elements left of each open array
};

// A key as the target is to have it: DEL, then the commands that rebuild
// it (nothing more when it is gone).
void AppendKeyState(std::string* out, const Db& db, std::string_view key, int64_t now_ms) {
  AppendRespCommand(out, {"DEL", key});
  const Db::Entry* e = db.FindRaw(key);
  if (e == nullptr || Db::IsExpired(*e, now_ms)) return;
  AppendKeyCommands(out, key, e->value, e->expire_ms());
}

// A key too large to be serialized in one step of its worker goes a part
// at a time (AppendKeyCommandsPart): a string past 1 MB in 256 KB parts, a
// container past 8,192 items in parts of 4,096.
bool IsBig(const Value& v) { return KeyItems(v) > (v.type() == ValueType::kString ? (1u << 20) : 8192u); }
size_t PartItems(const Value& v) { return v.type() == ValueType::kString ? (256u << 10) : 4096u; }
}  // namespace

// One shard's part of an export: touched by the thread holding the shard,
// but for the atomics the job's thread reads.
struct SlotMigrations::Part {
  size_t shard = 0;
  MovingKeys moving;
  bool attached = false;
  uint64_t cursor = 0;
  bool walked = false;
  std::vector<std::string> round;  // keys to send again, from round_at on
  size_t round_at = 0;
  // Large keys waiting to be sent a part at a time, and the one going
  // (from its item big_from on).
  std::deque<std::string> big;
  std::string big_key;
  size_t big_from = 0;
  bool big_active = false;
  bool saw_pause = false;
  std::atomic<bool> walk_done{false};
  std::atomic<bool> drained{false};  // the last changes sent, recording over
  std::atomic<uint64_t> pending{0};  // keys to send again
};

struct SlotMigrations::Job {
  std::string name;
  bool is_export = true;
  std::string source, target;  // node ids
  std::vector<bool> slots;
  std::vector<std::pair<int, int>> ranges;
  std::atomic<State> state{State::kConnecting};
  std::string message;  // (under SlotMigrations::mu_)
  int64_t create_ms = 0;
  std::atomic<int64_t> update_ms{0};
  std::atomic<int64_t> ack_ms{0};  // the other side last took or sent bytes
  std::vector<std::unique_ptr<Part>> parts;
  bool counted = false;  // in active_ (under mu_)
  // The commands for the target, in order (the shards' steps push, the
  // job's thread sends).
  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<std::string> queue;
  std::atomic<size_t> queued{0};
  std::atomic<bool> cancel{false};
  std::atomic<bool> flushed{false};  // database 0 was emptied meanwhile
  std::atomic<uint64_t> keys_sent{0};
  std::thread thread;
  std::atomic<bool> thread_done{false};  // Run returned
  int fd = -1;
  ReplyReader replies;
  std::string target_error;   // the first error reply of the target
  std::string marker;         // ECHOed before TAKEOVER: the next reply is its
  bool marker_seen = false;
  std::string sync_marker;    // ECHOed before the pause: back once the target ran all before it
  bool synced = false;
  std::string takeover;       // TAKEOVER's reply ("+OK" or "-...")
  bool paused = false;
  uint64_t client_id = 0;  // an import's client

  bool terminal() const {
    const State s = state.load(std::memory_order_acquire);
    return s == State::kSuccess || s == State::kFailed || s == State::kCancelled;
  }
  void SetState(State s) {
    state.store(s, std::memory_order_release);
    update_ms.store(NowMs(), std::memory_order_relaxed);
  }
  void Push(std::string&& bytes) {
    if (bytes.empty()) return;
    queued.fetch_add(bytes.size(), std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(qmu);
    queue.push_back(std::move(bytes));
    qcv.notify_one();
  }
};

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
    job->name = RandomHex40();
    job->source = bus_.MyId();
    job->target = r.target;
    job->slots = std::move(r.slots);
    job->ranges = std::move(r.ranges);
    job->create_ms = NowMs();
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

void SlotMigrations::Release(Job* job, Part& p) {
  (void)job;
  if (!p.attached) return;
  server_.shard(p.shard).watches().RemoveMoving(&p.moving);
  server_.watched_keys().fetch_sub(1, std::memory_order_relaxed);
  p.attached = false;
  p.moving.changed.clear();
  p.round.clear();
  p.drained.store(true, std::memory_order_release);
}

bool SlotMigrations::Step(size_t shard, bool drained) {
  std::lock_guard<std::mutex> lock(mu_);
  bool more = false;
  const int64_t now_ms = NowMs();
  Db& db = server_.shard(shard).db(0);
  for (auto& jp : jobs_) {
    Job* job = jp.get();
    if (!job->is_export || !job->counted) continue;
    for (auto& pp : job->parts) {
      Part& p = *pp;
      if (p.shard != shard || !p.attached) continue;
      const State st = job->state.load(std::memory_order_acquire);
      if (job->terminal() || job->cancel.load(std::memory_order_relaxed)) {
        Release(job, p);
        continue;
      }
      if (p.moving.emptied) {
        // FLUSHALL, FLUSHDB or SWAPDB: the keys sent may not be the
        // source's any more; the target drops them.
        job->flushed.store(true);
        {
          std::lock_guard<std::mutex> ql(job->qmu);
          job->qcv.notify_all();
        }
        Release(job, p);
        continue;
      }
      if (st == State::kConnecting || st == State::kFinishing) continue;
      std::string out;
      uint64_t keys = 0;
      if (st == State::kPausing) {
        // Writes are paused: once this worker went round its loop since
        // (what it was running ran) and every batch admitted for the shard
        // before the pause has run here, what is left goes, and the shard
        // stops recording.
        if (!p.saw_pause || !drained) {
          p.saw_pause = true;
          more = true;
          continue;
        }
        // (Large keys too, whole: nothing is left for later.)
        for (const std::string& k : p.moving.changed) p.round.push_back(k);
        for (const std::string& k : p.big) p.round.push_back(k);
        if (p.big_active) p.round.push_back(p.big_key);
        for (size_t i = p.round_at; i < p.round.size(); i++, keys++) AppendKeyState(&out, db, p.round[i], now_ms);
        job->keys_sent.fetch_add(keys, std::memory_order_relaxed);
        job->Push(std::move(out));
        Release(job, p);
        continue;
      }
      if (job->queued.load(std::memory_order_relaxed) >= kMaxQueued) continue;  // (the job's thread wakes us)
      if (!p.walked) {
        // The walk: every key of the job's slots, as it is now.
        size_t seen = 0;
        do {
          p.cursor = db.Scan(p.cursor, [&](const Db::Entry& e) {
            seen++;
            char scratch[CompactKey::kScratchSize];
            const std::string_view k = e.key(scratch);
            if (!p.moving.slots[SlotOf(k)] || Db::IsExpired(e, now_ms)) return;
            if (IsBig(e.value)) {
              p.big.emplace_back(k);
              return;
            }
            AppendRespCommand(&out, {"DEL", k});
            AppendKeyCommands(&out, k, e.value, e.expire_ms());
            keys++;
          });
        } while (p.cursor != 0 && out.size() < kStepBytes && seen < kStepEntries);
        if (p.cursor == 0) p.walked = true;
        more = true;
      } else if (p.big_active || !p.big.empty()) {
        keys += StepBigKey(p, db, &out, now_ms);
        more = true;
      } else {
        // A round: the keys changed since they were sent, as they are now.
        if (p.round_at == p.round.size()) {
          p.round.assign(p.moving.changed.begin(), p.moving.changed.end());
          p.moving.changed.clear();
          p.round_at = 0;
        }
        while (p.round_at < p.round.size() && out.size() < kStepBytes) {
          const std::string& k = p.round[p.round_at++];
          const Db::Entry* e = db.FindRaw(k);
          if (e != nullptr && !Db::IsExpired(*e, now_ms) && IsBig(e->value)) {
            p.big.push_back(k);
            more = true;
            continue;
          }
          AppendKeyState(&out, db, k, now_ms);
          keys++;
        }
        if (p.round_at < p.round.size()) more = true;
      }
      if (p.walked && !p.big_active && p.big.empty()) p.walk_done.store(true, std::memory_order_release);
      p.pending.store((p.round.size() - p.round_at) + p.moving.changed.size() + p.big.size() + (p.big_active ? 1 : 0),
                      std::memory_order_release);
      job->keys_sent.fetch_add(keys, std::memory_order_relaxed);
      job->Push(std::move(out));
    }
    // A job over, its shards let go: no longer counted. Its keys here go
    // if the target has them now (a step at a time, each shard's own).
    if (job->terminal() && job->counted &&
        std::all_of(job->parts.begin(), job->parts.end(), [](const auto& p) { return !p->attached; })) {
      job->counted = false;
      if (job->state.load() == State::kSuccess) {
        for (const auto& p : job->parts) AddCleanup(p->shard, job->slots, /*exported=*/true);
      } else {
        MarkExporting(job->slots, false);
      }
      active_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  return StepCleanups(shard, db, now_ms) || more;
}

uint64_t SlotMigrations::StepBigKey(Part& p, Db& db, std::string* out, int64_t now_ms) {
  if (!p.big_active) {
    p.big_key = std::move(p.big.front());
    p.big.pop_front();
    p.big_from = 0;
    p.big_active = true;
    // (Its state now is what goes: a change from here on is seen below.)
    p.moving.changed.erase(p.big_key);
  } else if (p.moving.changed.count(p.big_key) != 0) {
    // Changed since its first part: the parts sent no longer add up; the
    // rounds send it again (DEL first), as any changed key.
    p.big_active = false;
    return 0;
  }
  const Db::Entry* e = db.FindRaw(p.big_key);
  if (e == nullptr || Db::IsExpired(*e, now_ms)) {
    AppendRespCommand(out, {"DEL", p.big_key});
    p.big_active = false;
    return 1;
  }
  if (p.big_from == 0) AppendRespCommand(out, {"DEL", p.big_key});
  bool done = false;
  p.big_from += AppendKeyCommandsPart(out, p.big_key, e->value, e->expire_ms(), p.big_from, PartItems(e->value), &done);
  if (!done) return 0;
  p.big_active = false;
  return 1;
}

void SlotMigrations::AddCleanup(size_t shard, const std::vector<bool>& slots, bool exported) {
  // (Under mu_.) Only the slots of this shard.
  Cleanup c;
  c.shard = shard;
  c.exported = exported;
  // (A failed import's begins a little later: the importing connection's
  // last commands may still be running on other workers when it goes.)
  if (!exported) c.start_ms = NowMs() + kImportCleanupDelayMs;
  c.slots.assign(kNumSlots, false);
  const size_t shards = server_.num_shards();
  for (size_t s = 0; s < kNumSlots; s++)
    if (slots[s] && s * shards / kNumSlots == shard) c.slots[s] = true;
  cleanups_.push_back(std::move(c));
  active_.fetch_add(1, std::memory_order_acq_rel);
}

bool SlotMigrations::StepCleanups(size_t shard, Db& db, int64_t now_ms) {
  bool more = false;
  if (server_.is_replica()) {
    // A replica's keys are its primary's (a source that gave its last slot
    // away follows the target): nothing of them is removed here.
    for (auto it = cleanups_.begin(); it != cleanups_.end();) {
      if (it->exported) MarkExporting(it->slots, false);
      it = cleanups_.erase(it);
      active_.fetch_sub(1, std::memory_order_acq_rel);
    }
    return false;
  }
  Shard& sh = server_.shard(shard);
  for (auto it = cleanups_.begin(); it != cleanups_.end();) {
    if (it->shard != shard || it->start_ms > now_ms) {
      ++it;
      continue;
    }
    // The keys of a slot this node no longer serves (or never did: a
    // failed import's), a step's worth at a time, their DELs propagated,
    // as a lost slot is emptied.
    std::vector<std::string> gone;
    size_t seen = 0;
    do {
      it->cursor = db.Scan(it->cursor, [&](const Db::Entry& e) {
        seen++;
        char scratch[CompactKey::kScratchSize];
        const std::string_view k = e.key(scratch);
        if (it->slots[SlotOf(k)]) gone.emplace_back(k);
      });
    } while (it->cursor != 0 && seen < kStepEntries);
    for (const std::string& k : gone) {
      sh.watches().Touch(0, k, db, now_ms);
      if (db.Erase(k) && server_.propagating()) sh.aof().Add(0, {"DEL", k});
    }
    sh.AddDirty(gone.size());
    if (it->cursor != 0) {
      more = true;
      ++it;
      continue;
    }
    if (it->exported) MarkExporting(it->slots, false);
    it = cleanups_.erase(it);
    active_.fetch_sub(1, std::memory_order_acq_rel);
  }
  return more;
}

void SlotMigrations::MarkExporting(const std::vector<bool>& slots, bool on) {
  for (size_t s = 0; s < kNumSlots; s++) {
    if (!slots[s]) continue;
    const uint64_t bit = uint64_t{1} << (s & 63);
    if (on)
      exporting_[s >> 6].fetch_or(bit, std::memory_order_acq_rel);
    else
      exporting_[s >> 6].fetch_and(~bit, std::memory_order_acq_rel);
  }
}

void SlotMigrations::PauseWrites(Job* job) {
  std::lock_guard<std::mutex> lock(pause_mu_);
  if (job->paused) return;
  job->paused = true;
  if (pauses_++ == 0) server_.client_pause().Pause(ClientPause::kForSlotMigration, INT64_MAX, ClientPause::kWrites);
}

void SlotMigrations::UnpauseWrites(Job* job) {
  {
    std::lock_guard<std::mutex> lock(pause_mu_);
    if (!job->paused) return;
    job->paused = false;
    if (--pauses_ != 0) return;  // (another job's pause goes on)
    server_.client_pause().Unpause(ClientPause::kForSlotMigration);
  }
  server_.WakeWorkers();
}

bool SlotMigrations::QueueEmpty(Job* job) {
  // (Called after every part said it is drained: its last chunk is queued.)
  std::lock_guard<std::mutex> lock(job->qmu);
  return job->queue.empty();
}

void SlotMigrations::Fail(Job* job, const std::string& why, const std::string& detail) {
  const bool cancelled = job->cancel.load() && job->state.load() != State::kFinishing;
  const std::string message = cancelled ? "" : job->flushed.load() ? "Data was flushed" : why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job->message = message;
  }
  UnpauseWrites(job);
  job->SetState(cancelled ? State::kCancelled : State::kFailed);
  if (job->fd >= 0) {
    ::close(job->fd);
    job->fd = -1;
  }
  LOG_WARNING("Slot migration %s: slots %s to node %s %s: %s%s%s", job->name.c_str(), RangesText(job->ranges).c_str(),
              job->target.c_str(), cancelled ? "cancelled" : "failed",
              (cancelled ? "by CANCELSLOTMIGRATIONS" : message.c_str()), detail.empty() ? "" : " ", detail.c_str());
  server_.WakeWorkers();
}

bool SlotMigrations::Pump(Job* job) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(job->fd, buf, sizeof(buf), 0);
    if (n > 0) {
      job->replies.buf.append(buf, static_cast<size_t>(n));
      job->ack_ms.store(NowMs(), std::memory_order_relaxed);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;  // (closed, or an error)
  }
  job->replies.Parse([&](char type, std::string_view text) {
    if (job->marker_seen && job->takeover.empty()) {
      job->takeover = std::string(1, type) + std::string(text);
    } else if (type == '-') {
      if (job->target_error.empty()) job->target_error = text;
    } else if (type == '$' && !job->marker.empty() && text == job->marker) {
      job->marker_seen = true;
    } else if (type == '$' && !job->sync_marker.empty() && text == job->sync_marker) {
      job->synced = true;
    }
  });
  return true;
}

bool SlotMigrations::SendAll(Job* job, std::string_view bytes) {
  size_t done = 0;
  int64_t progress_ms = NowMs();
  while (done < bytes.size()) {
    const ssize_t n = ::send(job->fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      progress_ms = NowMs();
      job->ack_ms.store(progress_ms, std::memory_order_relaxed);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (job->cancel.load() || NowMs() - progress_ms >= kIoTimeoutMs) return false;
      // (The target's replies are read meanwhile: it may wait for room to
      // send them before it reads more.)
      pollfd p{job->fd, POLLOUT | POLLIN, 0};
      ::poll(&p, 1, 100);
      if ((p.revents & POLLIN) && !Pump(job)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool SlotMigrations::ReadLine(Job* job, std::string* line) {
  line->clear();
  const int64_t until = NowMs() + kIoTimeoutMs;
  for (;;) {
    char c;
    const ssize_t n = ::recv(job->fd, &c, 1, 0);
    if (n == 1) {
      if (c == '\n') {
        if (!line->empty() && line->back() == '\r') line->pop_back();
        job->ack_ms.store(NowMs(), std::memory_order_relaxed);
        return true;
      }
      if (line->size() > 4096) return false;
      line->push_back(c);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (job->cancel.load() || job->flushed.load() || NowMs() >= until) return false;
      pollfd p{job->fd, POLLIN, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    return false;
  }
}

bool SlotMigrations::Connect(Job* job) {
  std::string host;
  int port = 0;
  if (!bus_.NodeAddress(job->target, &host, &port)) {
    Fail(job, "Unable to connect to target node: its address is not known");
    return false;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || res == nullptr) {
    Fail(job, "Unable to connect to target node: bad address " + host);
    return false;
  }
  job->fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int rc = job->fd < 0 ? -1 : ::connect(job->fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{job->fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    rc = ::poll(&p, 1, kIoTimeoutMs) == 1 && getsockopt(job->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0
             ? 0
             : -1;
  }
  if (rc != 0) {
    Fail(job, "Unable to connect to target node: " + host + ":" + std::to_string(port));
    return false;
  }
  const int one = 1;
  setsockopt(job->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string cmd, line;
  const Config& config = server_.config();
  if (!config.masterauth.empty()) {
    if (config.masteruser.empty())
      AppendRespCommand(&cmd, {"AUTH", config.masterauth});
    else
      AppendRespCommand(&cmd, {"AUTH", config.masteruser, config.masterauth});
    if (!SendAll(job, cmd) || !ReadLine(job, &line) || line != "+OK") {
      Fail(job, "Received error during handshake to target: " + line);
      return false;
    }
    cmd.clear();
  }
  std::vector<std::string> args = {"CLUSTER", "SYNCSLOTS", "ESTABLISH", "SOURCE", job->source, "NAME", job->name,
                                   "SLOTSRANGE"};
  for (const auto& [s, e] : job->ranges) {
    args.push_back(std::to_string(s));
    args.push_back(std::to_string(e));
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  AppendRespCommand(&cmd, views);
  if (!SendAll(job, cmd) || !ReadLine(job, &line) || line != "+OK") {
    Fail(job, line.empty() ? std::string(kLost) : "Received error during handshake to target: " + line);
    return false;
  }
  return true;
}

void SlotMigrations::Run(Job* job) {
  RunJob(job);
  job->thread_done.store(true, std::memory_order_release);
}

void SlotMigrations::RunJob(Job* job) {
  if (!Connect(job)) {
    if (!job->terminal()) Fail(job, kLost);
    return;
  }
  job->SetState(State::kSnapshot);
  server_.WakeWorkers();
  int64_t streaming_since = 0;
  for (;;) {
    if (job->cancel.load()) return Fail(job, "");
    if (job->flushed.load()) return Fail(job, "Data was flushed");
    if (bus_.is_replica()) return Fail(job, "Slots are no longer owned by myself");
    std::string chunk;
    {
      std::unique_lock<std::mutex> lock(job->qmu);
      job->qcv.wait_for(lock, std::chrono::milliseconds(5), [&] { return !job->queue.empty() || job->cancel.load(); });
      if (!job->queue.empty()) {
        chunk = std::move(job->queue.front());
        job->queue.pop_front();
      }
    }
    if (!chunk.empty()) {
      const bool ok = SendAll(job, chunk);
      job->queued.fetch_sub(chunk.size(), std::memory_order_relaxed);
      if (!ok) return Fail(job, kLost, std::string("sending: ") + std::strerror(errno));
      server_.WakeWorkers();  // (steps waiting for room go on)
    }
    if (!Pump(job)) return Fail(job, kLost, "(its connection closed)");
    // A command the target refused (out of memory, say): what it holds is
    // not the source's keys.
    if (!job->target_error.empty()) return Fail(job, "Received error from target: " + job->target_error);
    const State st = job->state.load();
    auto all = [&](auto pred) { return std::all_of(job->parts.begin(), job->parts.end(), pred); };
    if (st == State::kSnapshot && all([](const auto& p) { return p->walk_done.load() || p->drained.load(); })) {
      job->SetState(State::kStreaming);
      streaming_since = NowMs();
    } else if (st == State::kStreaming && job->queued.load() < kStepBytes) {
      uint64_t pending = 0;
      for (const auto& p : job->parts) pending += p->pending.load();
      if ((pending < kHandoverKeys || NowMs() - streaming_since >= kStreamMaxMs) && job->sync_marker.empty()) {
        // First the target catches up with what is in flight (the socket's
        // buffers hold megabytes): the pause then waits only for the little
        // sent after this.
        std::string cmd;
        job->sync_marker = job->name + "-sync";
        AppendRespCommand(&cmd, {"ECHO", job->sync_marker});
        if (!SendAll(job, cmd)) return Fail(job, kLost, "(sending ECHO)");
      } else if ((pending < kHandoverKeys || NowMs() - streaming_since >= kStreamMaxMs) && job->synced) {
        // Writes wait from here until the slots are the target's.
        PauseWrites(job);
        job->SetState(State::kPausing);
        server_.WakeWorkers();
      }
    } else if (st == State::kPausing && all([](const auto& p) { return p->drained.load(); }) && QueueEmpty(job)) {
      job->SetState(State::kFinishing);
      // The ECHO tells TAKEOVER's reply from those before it.
      std::string cmd;
      job->marker = job->name + "-takeover";
      AppendRespCommand(&cmd, {"ECHO", job->marker});
      AppendRespCommand(&cmd, {"CLUSTER", "SYNCSLOTS", "TAKEOVER", "NAME", job->name});
      // From here the outcome is the target's (a cancel no longer stops it).
      const bool sent = SendAll(job, cmd);
      const int64_t until = NowMs() + kIoTimeoutMs;
      bool answered = true;
      while (sent && job->takeover.empty() && job->target_error.empty()) {
        pollfd p{job->fd, POLLIN, 0};
        ::poll(&p, 1, 100);
        if (NowMs() >= until || !Pump(job)) {
          answered = false;
          break;
        }
      }
      if (!job->target_error.empty()) return Fail(job, "Received error from target: " + job->target_error);
      if (answered && sent && job->takeover != "+OK")
        return Fail(job, "The target refused the takeover: " + job->takeover.substr(1));
      if (!sent || !answered) {
        // No answer: the target may have taken the slots all the same.
        // The view settles it (its claim comes over the bus), writes
        // still paused meanwhile: the source must not serve slots the
        // target serves.
        const int64_t claim_until = NowMs() + kClaimWaitMs;
        while (!bus_.OwnsAll(job->target, job->slots) && NowMs() < claim_until)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!bus_.OwnsAll(job->target, job->slots)) return Fail(job, kLost, "(no answer to TAKEOVER)");
        LOG_WARNING("Slot migration %s: no answer to TAKEOVER, but the target claims the slots", job->name.c_str());
      }
      bus_.GiveExportedSlots(job->slots, job->target);
      UnpauseWrites(job);
      job->SetState(State::kSuccess);
      ::close(job->fd);
      job->fd = -1;
      LOG_NOTICE("Slot migration %s: slots %s are node %s's now (%llu keys sent)", job->name.c_str(),
                 RangesText(job->ranges).c_str(), job->target.c_str(),
                 static_cast<unsigned long long>(job->keys_sent.load()));
      server_.WakeWorkers();
      return;
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
  job->create_ms = NowMs();
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
