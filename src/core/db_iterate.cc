// The keyspace table, its second half: SCAN, iteration, random keys, active
// expiry, eviction and the invariant check for tests (see db.h; lookup,
// insertion and growth are in db.cc).
#include "core/db.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/db_internal.h"
#include "core/lazy_free.h"
#include "core/memory.h"

namespace peregrine {

// ---- iteration ---------------------------------------------------------------------

uint64_t Db::Scan(uint64_t cursor, const std::function<void(const Entry&)>& visit) const {
  if (size_ == 0) return 0;
  const Segment* s = SegmentOf(cursor);
  const uint32_t home = HomeGroup(cursor, s);
  const uint32_t n = s->ngroups;
  // The keys of this home group are in it or, past it, in groups reached
  // through overflow counts.
  uint32_t g = home;
  for (uint32_t k = 0; k < n; k++) {
    const Group& grp = s->groups[g];
    for (int i = 0; i < kGroupSlots; i++) {
      if (grp.ctrl[i] == 0) continue;
      const Entry* e = EntryAt(s, grp.ref[i]);
      if (HomeGroup(e->key_.StoredHash(), s) == home) visit(*e);
    }
    if (grp.overflow == 0) break;
    if (++g == n) g = 0;
  }
  // The next cursor: the first hash whose home is the next group.
  const int d = s->depth;
  const uint64_t f = ((uint64_t{home} + 1) * 65536 + n - 1) / n;
  if (f < 65536) return db_internal::SegmentBase(cursor, d) | (f << (48 - d));
  return SegmentEnd(cursor, s);
}

void Db::ForEach(const std::function<void(const Entry&)>& visit) const {
  ForEachSegmentFrom(0, [&](const Segment* s, uint64_t) {
    return ForEachLive(s, false, [&](const Entry& e) {
      visit(e);
      return true;
    });
  });
}

const Db::Entry* Db::RandomEntry(std::mt19937_64& rng) const { return Random(false, rng); }

const Db::Entry* Db::Random(bool ttl_only, std::mt19937_64& rng) const {
  if (ttl_only ? expires_ == 0 : size_ == 0) return nullptr;
  const uint64_t mask = (uint64_t{1} << depth_) - 1;
  for (int tries = 0; tries < 64; tries++) {
    const Segment* s = dir_[rng() & mask].seg();
    const uint32_t plain = ttl_only ? 0 : s->plain.size;
    const uint32_t total = plain + s->ttl.size;
    if (total == 0) continue;
    const uint32_t i = static_cast<uint32_t>(rng() % total);
    const Entry* e = i < plain ? &s->plain.at(i) : &s->ttl.at(i - plain).entry;
    if (!e->key_.is_hole()) return e;
  }
  // A sparse table: the first key from a random position.
  const Entry* found = nullptr;
  ForEachSegmentFrom(rng(), [&](const Segment* s, uint64_t) {
    return ForEachLive(s, ttl_only, [&](const Entry& e) {
      found = &e;
      return false;
    });
  });
  return found;
}

// ---- expiry and eviction ---------------------------------------------------------------

size_t Db::ActiveExpire(int64_t now_ms, size_t max_entries) {
  size_t checked = 0, deleted = 0, segments = 0;
  int64_t ttl_sum = 0, ttl_samples = 0;
  if (expires_ == 0) avg_ttl_ = 0;
  while (expires_ > 0 && checked < max_entries && segments <= segments_) {
    Segment* s = SegmentOf(expire_pos_);
    while (expire_idx_ < s->ttl.size && checked < max_entries) {
      TtlEntry& t = s->ttl.at(expire_idx_);
      checked++;
      if (!t.entry.key_.is_hole()) {
        if (t.expire_ms <= now_ms) {
          if (report_removals_) [[unlikely]]
            ReportRemoval(t.entry);
          RemoveEntry(&t.entry);
          deleted++;
        } else {
          ttl_sum += std::min<int64_t>(t.expire_ms - now_ms, int64_t{1} << 40);  // no overflow of the sum
          ttl_samples++;
        }
      }
      expire_idx_++;
    }
    if (expire_idx_ >= s->ttl.size) {
      expire_pos_ = SegmentEnd(expire_pos_, s);
      expire_idx_ = 0;
      segments++;
    }
  }
  expired_keys_ += deleted;
  if (deleted > 0) NoteExpired();
  if (ttl_samples > 0) {
    // Redis's running estimate: 2% the new sample, 98% the old one.
    const int64_t sample = ttl_sum / ttl_samples;
    if (avg_ttl_ == 0) avg_ttl_ = sample;
    avg_ttl_ = (avg_ttl_ / 50) * 49 + sample / 50;
  }
  return deleted;
}

bool Db::EvictSieve(EvictFrom from) {
  const bool volatile_only = from == EvictFrom::kVolatile;
  if (size_ == 0 || (volatile_only && expires_ == 0)) return false;
  // Two passes over the index at most: the first may only clear bits.
  for (size_t steps = 0, limit = 2 * (size_ + segments_ * kMaxGroups) + 2; steps < limit; steps++) {
    Segment* s = SegmentOf(sieve_pos_);
    if (sieve_group_ >= s->ngroups) {
      sieve_pos_ = SegmentEnd(sieve_pos_, s);
      sieve_group_ = 0;
      sieve_slot_ = 0;
      continue;
    }
    Group& grp = s->groups[sieve_group_];
    for (; sieve_slot_ < kGroupSlots; sieve_slot_++) {
      if (grp.ctrl[sieve_slot_] == 0) continue;
      uint16_t& ref = grp.ref[sieve_slot_];
      if (volatile_only && !(ref & kRefTtl)) continue;
      steps++;
      if (ref & kRefVisited) {
        ref &= static_cast<uint16_t>(~kRefVisited);
        continue;
      }
      EvictAt({s, sieve_group_, sieve_slot_, EntryAt(s, ref), &ref});
      sieve_slot_++;
      return true;
    }
    sieve_slot_ = 0;
    sieve_group_++;
  }
  return false;
}

bool Db::EvictRandom(EvictFrom from, std::mt19937_64& rng) {
  const Entry* victim = from == EvictFrom::kAllKeys ? RandomEntry(rng) : Random(true, rng);
  if (victim == nullptr) return false;
  EvictAt(LocateEntry(victim));
  return true;
}

bool Db::EvictSoonestExpiring(size_t samples, std::mt19937_64& rng) {
  if (expires_ == 0 || samples == 0) return false;
  // Distinct keys with a deadline, in table order from a random one (as
  // Redis samples its expires dict), so that enough samples is exact.
  const Entry* start = Random(true, rng);
  const Slot at = LocateEntry(start);
  const uint32_t first = *at.ref & kRefIndex;
  const uint64_t pos = db_internal::SegmentBase(start->key_.StoredHash(), at.seg->depth);
  const Entry* best = nullptr;
  size_t seen = 0;
  auto sample = [&](const Segment* s, uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to && seen < samples; i++) {
      const TtlEntry& t = s->ttl.at(i);
      if (t.entry.key_.is_hole()) continue;
      seen++;
      if (best == nullptr || t.expire_ms < best->expire_ms()) best = &t.entry;
    }
  };
  bool head = true;
  ForEachSegmentFrom(pos, [&](const Segment* s, uint64_t) {
    sample(s, head ? first : 0, s->ttl.size);
    head = false;
    return seen < samples && seen < expires_;
  });
  sample(at.seg, 0, first);  // the part of the first segment before the start
  EvictAt(LocateEntry(best));
  return true;
}

void Db::EvictAt(const Slot& at) {
  evicted_keys_++;
  if (report_removals_) [[unlikely]]
    ReportRemoval(*at.entry, /*evicted=*/true);
  if (observer_ == nullptr || !observer_->active()) [[likely]] {
    RemoveAt(at);
    return;
  }
  const std::string key = at.entry->key_string();
  RemoveAt(at);
  observer_->KeyChanged(*this, key, 0);
}

size_t Db::MemoryUsage(const Entry& e) {
  // The arena entry, its index slot (a 64-byte group of 20 slots, ~80% full),
  // and the heap blocks.
  const size_t entry = e.has_expire() ? sizeof(TtlEntry) : sizeof(Entry);
  return entry + 4 + e.key_.HeapBytes() + e.value.HeapBytes();
}

void Db::Clear() {
  SaveAllPending();
  FreeAll();
  InitEmpty();
  field_timers_.clear();
  field_timers_.shrink_to_fit();
  field_timers_compact_at_ = 1024;
  zset_moves_.clear();
}

namespace {

// A table's segments (Db::Segment, private to it) and directory, detached
// by ClearLater.
struct DetachedTable {
  std::vector<void*> segments;
  size_t next = 0;
  void* dir = nullptr;
};

}  // namespace

void Db::ClearLater() {
  SaveAllPending();  // (a snapshot in progress takes what it has not yet)
  if (dir_ != nullptr && size_ >= lazy_free::kMinQueuedEntries) {
    auto* d = new DetachedTable();
    ForEachSegmentFrom(0, [&](Segment* s, uint64_t) {
      d->segments.push_back(s);
      return true;
    });
    d->dir = dir_;
    dir_ = nullptr;  // (Clear's FreeAll then has nothing to free)
    lazy_free::Queue(d, &Db::FreeSomeDetached);
  }
  Clear();
}

bool Db::FreeSomeDetached(void* detached, size_t blocks) {
  auto* d = static_cast<DetachedTable*>(detached);
  // (A segment is some tens of pages of entries: one per 16 asked.)
  const size_t n = std::max<size_t>(1, blocks / 16);
  for (size_t i = 0; i < n && d->next < d->segments.size(); i++)
    FreeSegment(static_cast<Segment*>(d->segments[d->next++]), true);
  if (d->next < d->segments.size()) return false;
  CountedFree(d->dir);
  delete d;
  return true;
}

void Db::Swap(Db& other) {
  // Each table's snapshot has its own contents first (the segments then
  // change tables, done as they are: both snapshots share an epoch).
  SaveAllPending();
  other.SaveAllPending();
  std::swap(dir_, other.dir_);
  std::swap(depth_, other.depth_);
  std::swap(segments_, other.segments_);
  std::swap(size_, other.size_);
  std::swap(expires_, other.expires_);
  std::swap(expire_pos_, other.expire_pos_);
  std::swap(expire_idx_, other.expire_idx_);
  std::swap(sieve_pos_, other.sieve_pos_);
  std::swap(sieve_group_, other.sieve_group_);
  std::swap(sieve_slot_, other.sieve_slot_);
  std::swap(maintain_pos_, other.maintain_pos_);
  std::swap(sweep_pos_, other.sweep_pos_);
  std::swap(sweep_active_, other.sweep_active_);
  std::swap(avg_ttl_, other.avg_ttl_);
  std::swap(field_timers_, other.field_timers_);
  std::swap(field_timers_compact_at_, other.field_timers_compact_at_);
  std::swap(zset_moves_, other.zset_moves_);
  // (Each table keeps whether it counts its slots; the counts go with
  // the keys.)
  if (slot_counts_) CountSlots();
  if (other.slot_counts_) other.CountSlots();
}

// ---- snapshots ------------------------------------------------------------------------

void Db::BeginSnapshot(SnapshotSink* sink, uint32_t epoch) {
  snap_sink_ = sink;
  snap_epoch_ = epoch;
  snap_pos_ = 0;
  snap_walked_ = false;
}

void Db::SaveSegment(Segment* s) const {
  s->saved_epoch = snap_epoch_;
  ForEachLive(s, false, [this](const Entry& e) {
    snap_sink_->SaveEntry(e);
    return true;
  });
}

bool Db::SnapshotStep(size_t max_entries) {
  if (snap_sink_ == nullptr || snap_walked_) return false;
  size_t sent = 0;
  while (sent < max_entries) {
    Segment* s = SegmentOf(snap_pos_);
    if (s->saved_epoch != snap_epoch_) {
      sent += s->live + 1;
      SaveSegment(s);
    } else {
      sent++;
    }
    snap_pos_ = SegmentEnd(snap_pos_, s);
    if (snap_pos_ == 0) {
      snap_walked_ = true;
      return false;
    }
  }
  return true;
}

void Db::SaveAllPending() {
  if (snap_sink_ == nullptr) return;
  ForEachSegmentFrom(0, [this](Segment* s, uint64_t) {
    BeforeChange(s);
    return true;
  });
}

// ---- DEBUG HTSTATS -------------------------------------------------------------------

std::string Db::TableStats(bool full) const {
  if (size_ == 0) return "No stats available for empty dictionaries\n";
  size_t groups = 0, displaced = 0, max_probe = 0;
  std::vector<size_t> probes;  // keys by groups probed past their home
  ForEachSegmentFrom(0, [&](const Segment* s, uint64_t) {
    groups += s->ngroups;
    for (uint32_t g = 0; g < s->ngroups; g++)
      for (int i = 0; i < kGroupSlots; i++) {
        if (s->groups[g].ctrl[i] == 0) continue;
        const uint32_t home = HomeGroup(EntryAt(s, s->groups[g].ref[i])->key_.StoredHash(), s);
        const size_t probe = g >= home ? g - home : g + s->ngroups - home;
        if (probe > 0) displaced++;
        max_probe = std::max(max_probe, probe);
        if (probes.size() <= probe) probes.resize(probe + 1);
        probes[probe]++;
      }
    return true;
  });
  // (Redis's dictGetStats lines where they mean the same; then the table's own.)
  std::string out = "Hash table 0 stats (main hash table):\n";
  out += " table size: " + std::to_string(groups * kGroupSlots) + "\n";
  out += " number of elements: " + std::to_string(size_) + "\n";
  out += " keys with a deadline: " + std::to_string(expires_) + "\n";
  out += " directory size: " + std::to_string(uint64_t{1} << depth_) + "\n";
  out += " segments: " + std::to_string(segments_) + "\n";
  out += " index groups: " + std::to_string(groups) + " of " + std::to_string(kGroupSlots) + " slots\n";
  out += " keys outside their home group: " + std::to_string(displaced) + "\n";
  out += " max probe length: " + std::to_string(max_probe) + "\n";
  if (full) {
    out += " Probe length distribution:\n";
    for (size_t p = 0; p < probes.size(); p++) {
      if (probes[p] == 0) continue;
      char line[96];
      snprintf(line, sizeof(line), "   %zu: %zu (%.02f%%)\n", p, probes[p],
               100.0 * static_cast<double>(probes[p]) / static_cast<double>(size_));
      out += line;
    }
  }
  return out;
}

// ---- invariants (tests) ---------------------------------------------------------------

std::string Db::CheckInvariants() const {
  std::string err;
  auto fail = [&](const std::string& what) {
    if (err.empty()) err = what;
  };
  size_t total = 0, total_ttl = 0, nsegments = 0;
  // Every directory entry names a segment whose prefix matches.
  const uint64_t ndir = uint64_t{1} << depth_;
  for (uint64_t i = 0; i < ndir; i++) {
    const Segment* s = dir_[i].seg();
    if (s->depth > depth_) fail("segment deeper than the directory");
    if (dir_[i].groups() != s->groups || dir_[i].ngroups() != s->ngroups || dir_[i].depth() != s->depth)
      fail("directory entry out of date");
    const uint64_t span = uint64_t{1} << (depth_ - s->depth);
    const uint64_t start = i & ~(span - 1);
    for (uint64_t j = start; j < start + span; j++)
      if (dir_[j].seg() != s) fail("directory range of a segment is not contiguous");
  }
  ForEachSegmentFrom(0, [&](const Segment* s, uint64_t base) {
    nsegments++;
    uint32_t full = 0;
    std::vector<uint32_t> overflow(s->ngroups, 0);
    std::vector<bool> seen_plain(s->plain.size), seen_ttl(s->ttl.size);
    for (uint32_t g = 0; g < s->ngroups; g++)
      for (int i = 0; i < kGroupSlots; i++) {
        if (s->groups[g].ctrl[i] == 0) continue;
        full++;
        const uint16_t ref = s->groups[g].ref[i];
        const uint32_t idx = ref & kRefIndex;
        const bool ttl = ref & kRefTtl;
        if (idx >= (ttl ? s->ttl.size : s->plain.size)) {
          fail("ref past the arena");
          continue;
        }
        auto& seen = ttl ? seen_ttl : seen_plain;
        if (seen[idx]) fail("two refs to one entry");
        seen[idx] = true;
        const Entry* e = EntryAt(s, ref);
        if (e->key_.is_hole()) {
          fail("ref to a hole");
          continue;
        }
        if (e->has_expire() != ttl) fail("TTL flag and arena disagree");
        const uint64_t h = e->key_.StoredHash();
        if (db_internal::SegmentBase(h, s->depth) != base) fail("key in the wrong segment");
        if (s->groups[g].ctrl[i] != Tag(h)) fail("wrong tag");
        // Every group from the home up to this one counts the key.
        for (uint32_t k = HomeGroup(h, s); k != g; k = k + 1 == s->ngroups ? 0 : k + 1) overflow[k]++;
      }
    for (uint32_t g = 0; g < s->ngroups; g++) {
      const uint8_t c = s->groups[g].overflow;
      if (c != 255 && c != overflow[g]) fail("overflow count " + std::to_string(c) + " != " + std::to_string(overflow[g]));
      if (c == 255 && overflow[g] < 255) fail("saturated overflow count without cause");
    }
    if (full != s->live) fail("live count");
    if (s->live != s->plain.live() + s->ttl.live()) fail("arena live counts");
    if (full >= Capacity(s->ngroups) + 1) fail("segment over capacity");
    if (s->ngroups > kMaxGroups) fail("index past kMaxGroups");
    for (uint32_t i = 0; i < s->plain.size; i++)
      if (s->plain.at(i).key_.is_hole() == seen_plain[i]) fail("plain arena: hole/ref mismatch");
    for (uint32_t i = 0; i < s->ttl.size; i++)
      if (s->ttl.at(i).entry.key_.is_hole() == seen_ttl[i]) fail("ttl arena: hole/ref mismatch");
    uint32_t holes = 0;
    for (uint32_t f = s->plain.free_head; f != kNoFree && holes <= s->plain.size; f = s->plain.at(f).key_.next_free())
      holes++;
    if (holes != s->plain.holes) fail("plain free list length");
    holes = 0;
    for (uint32_t f = s->ttl.free_head; f != kNoFree && holes <= s->ttl.size; f = s->ttl.at(f).entry.key_.next_free())
      holes++;
    if (holes != s->ttl.holes) fail("ttl free list length");
    total += s->live;
    total_ttl += s->ttl.live();
    return true;
  });
  if (nsegments != segments_) fail("segment count");
  if (total != size_) fail("size");
  if (total_ttl != expires_) fail("expires count");
  return err;
}

}  // namespace peregrine
