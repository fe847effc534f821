// Atomic slot migration (see slot_migration.h): a shard's part of a job,
// stepped by its worker between events (the walk, the rounds, large keys a
// part at a time, the last changes under the pause), and the removal of a
// moved slot's keys afterwards.
#include <algorithm>

#include "core/slot.h"
#include "cluster/slot_migration_internal.h"
#include "server/server_state.h"
#include "server/shard.h"

namespace peregrine::cluster {

using namespace migration_internal;

void SlotMigrations::Release(Job* job, Part& p) {
  if (!p.attached) return;
  server_.shard(p.shard).watches().RemoveMoving(&p.moving);
  server_.watched_keys().fetch_sub(1, std::memory_order_relaxed);
  p.attached = false;
  p.moving.changed.clear();
  p.round.clear();
  p.drained.store(true, std::memory_order_release);
  // The job's thread waits for every part to be drained before TAKEOVER,
  // writes paused meanwhile: told now, not at its next 5 ms look.
  std::lock_guard<std::mutex> ql(job->qmu);
  job->poked = true;
  job->qcv.notify_all();
}

bool SlotMigrations::Step(size_t shard, bool drained) {
  std::lock_guard<std::mutex> lock(mu_);
  bool more = false;
  const int64_t now_ms = UnixTimeMs();
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
        // From here a write to these slots that passed the pause check
        // before the pause began (the instant before its admission here)
        // is refused, not lost: nothing records it any more.
        MarkBits(frozen_, job->slots, true, shard);
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
      } else if (job->closing.load(std::memory_order_relaxed)) {
        // (The large keys wait for the pause; a round's keys go while the
        // queue is short.)
        if (job->queued.load(std::memory_order_relaxed) < kStepBytes) keys += StepRound(p, db, &out, now_ms);
        more = true;
      } else if (p.big_active || !p.big.empty()) {
        keys += StepBigKey(p, db, &out, now_ms);
        more = true;
      } else {
        keys += StepRound(p, db, &out, now_ms);
        if (p.round_at < p.round.size() || !p.big.empty()) more = true;
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
        EndExport(job->slots);
      }
      active_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  return StepCleanups(shard, db, now_ms) || more;
}

uint64_t SlotMigrations::StepRound(Part& p, Db& db, std::string* out, int64_t now_ms) {
  // A round: the keys changed since they were sent, as they are now (a
  // large one joins the large keys, sent a part at a time).
  if (p.round_at == p.round.size()) {
    p.round.assign(p.moving.changed.begin(), p.moving.changed.end());
    p.moving.changed.clear();
    p.round_at = 0;
  }
  uint64_t keys = 0;
  while (p.round_at < p.round.size() && out->size() < kStepBytes) {
    const std::string& k = p.round[p.round_at++];
    const Db::Entry* e = db.FindRaw(k);
    if (e != nullptr && !Db::IsExpired(*e, now_ms) && IsBig(e->value)) {
      if (std::find(p.big.begin(), p.big.end(), k) == p.big.end() && !(p.big_active && p.big_key == k))
        p.big.push_back(k);
      continue;
    }
    AppendKeyState(out, db, k, now_ms);
    keys++;
  }
  return keys;
}

uint64_t SlotMigrations::StepBigKey(Part& p, Db& db, std::string* out, int64_t now_ms) {
  if (!p.big_active) {
    p.big_key = std::move(p.big.front());
    p.big.pop_front();
    p.big_from = 0;
    p.big_scan = 0;
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
  p.big_from += AppendKeyCommandsPart(out, p.big_key, e->value, e->expire_ms(), p.big_from, PartItems(e->value), &done,
                                      &p.big_scan);
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
  if (!exported) c.start_ms = UnixTimeMs() + kImportCleanupDelayMs;
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
      if (it->exported) EndExport(it->slots);
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
    // (This shard's worker: no write of these slots is between its route
    // check and this, and the routes give them to the target.)
    if (it->exported) EndExport(it->slots);
    it = cleanups_.erase(it);
    active_.fetch_sub(1, std::memory_order_acq_rel);
  }
  return more;
}

void SlotMigrations::MarkBits(SlotBits& bits, const std::vector<bool>& slots, bool on, size_t shard) {
  const size_t shards = server_.num_shards();
  for (size_t s = 0; s < kNumSlots; s++) {
    if (!slots[s] || (shard != kAllShards && s * shards / kNumSlots != shard)) continue;
    const uint64_t bit = uint64_t{1} << (s & 63);
    if (on)
      bits[s >> 6].fetch_or(bit, std::memory_order_acq_rel);
    else
      bits[s >> 6].fetch_and(~bit, std::memory_order_acq_rel);
  }
}

}  // namespace peregrine::cluster
