// One logical database (as SELECT picks) of one shard: a hash table of keys to
// values with optional deadlines. Single-threaded: only the owning shard's
// thread may touch it. No sockets, no globals; time is passed in by the caller.
//
// The table's parts (directory, segments, index groups, arenas) and the
// arithmetic that finds a key among them are in core/db_layout.h, with the
// layout; docs/storage.md has the diagram and the measurements.
//
// Entries move (inside their segment or to a new one) when the table grows,
// when a deadline is set on a key without one or removed, and when the cron
// repacks a segment. So an Entry* stays valid only until the next Insert,
// SetExpire or Maintain on this Db; Find and Erase never move other entries.
#pragma once

#include <atomic>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "core/access.h"
#include "core/compact_key.h"
#include "core/db_layout.h"
#include "core/memory.h"
#include "core/value.h"

namespace peregrine {

class Db : private DbLayout {
 public:
  static constexpr int64_t kNoExpire = -1;

  // What eviction may pick (maxmemory-policy, without the LRU/LFU
  // distinction: both are approximated by SIEVE).
  enum class EvictFrom { kAllKeys, kVolatile };

  // A key's entry (its CompactKey and value), and one with a deadline
  // (core/db_layout.h).
  using DbLayout::Entry;
  using DbLayout::TtlEntry;

  Db();
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Where the keys' access data is kept up to date (the owning shard's);
  // without one (nullptr, the default) it is left at 0.
  void set_access_tracker(AccessTracker* t) { access_ = t; }

  // Told of keys that change outside a command: evicted, or hash fields
  // expired (the shard's WATCH table, server/watch.h). Asked active() first,
  // told after the change.
  class KeyObserver {
   public:
    virtual bool active() const = 0;
    virtual void KeyChanged(const Db& db, std::string_view key, int64_t now_ms) = 0;
    // A key the table deleted by itself (expired, on access or by the
    // active cycle, or `evicted`), told only with set_report_removals(true)
    // (the append-only file logs it as a DEL; keyspace events).
    virtual void KeyRemoved(const Db& db, std::string_view key, bool evicted) = 0;
    // Fields of the hash at `key` removed by field expiry (the same);
    // `key_gone`: they were its last, the hash went with them.
    virtual void FieldsRemoved(const Db& db, std::string_view key, std::span<const std::string> fields,
                               bool key_gone) = 0;

   protected:
    ~KeyObserver() = default;
  };
  void set_key_observer(KeyObserver* o) { observer_ = o; }
  // A counter advanced (by whichever thread owns the table) each time the
  // table itself removes keys or hash fields whose time has come, so that
  // a reader elsewhere can tell that nothing changed between two points
  // (its owner's shard version; server/shard.h).
  void set_change_counter(std::atomic<uint64_t>* c) { changes_ = c; }
  void set_report_removals(bool on) { report_removals_ = on; }
  // A replica's keys (docs/replication.md): Find reports a key past its
  // deadline missing but leaves it (its primary's DEL removes it).
  void set_hide_expired(bool on) { hide_expired_ = on; }

  // Looks `key` up. A key whose deadline is at or before now_ms is deleted
  // (lazy expiry, counted in expired_keys()) and reported missing. A key
  // found is marked visited for SIEVE and its access data is updated.
  Entry* Find(std::string_view key, int64_t now_ms) { return Find(CompactKey::MakeProbe(key), now_ms); }
  // The same with the key already encoded (CompactKey::MakeProbe). With
  // touch false the key is not marked visited (Redis's LOOKUP_NOTOUCH:
  // EXISTS, TYPE, TTL, OBJECT and SCAN must not make a key look used).
  Entry* Find(const CompactKey::Probe& p, int64_t now_ms, bool touch = true);

  // Looks `key` up without expiring it or marking it (also returns
  // logically expired keys).
  Entry* FindRaw(std::string_view key) const { return FindRaw(CompactKey::MakeProbe(key)); }
  Entry* FindRaw(const CompactKey::Probe& p) const;

  // Prefetching for a batch of lookups (a pipeline): PrefetchSegment() for
  // every key first, then PrefetchGroup(), then PrefetchEntry(), then the
  // lookups; the cache misses of the whole batch then overlap.
  // Stage 1: the key's home group.
  void PrefetchGroup(uint64_t hash) const {
    const DirEntry& d = dir_[DirIndex(hash)];
    __builtin_prefetch(&d.groups()[HomeGroup(hash, d.depth(), d.ngroups())]);
  }
  // Stage 2: the arena chunk table line of the entry the key's tag names.
  void PrefetchArena(uint64_t hash) const;
  // Stage 3: that entry.
  void PrefetchEntry(uint64_t hash) const;

  // Adds a key that must not exist (check with Find first).
  // REQUIRES: key.size() <= CompactKey::kMaxSize.
  Entry* Insert(std::string_view key, Value value, int64_t expire_ms = kNoExpire) {
    return Insert(CompactKey::MakeProbe(key), std::move(value), expire_ms);
  }
  // The same with the key already encoded (the probe of a lookup that missed).
  Entry* Insert(const CompactKey::Probe& p, Value value, int64_t expire_ms = kNoExpire);

  // Deletes `key` if present (expired or not). Returns whether it was there.
  bool Erase(std::string_view key);

  // Sets or clears (kNoExpire) the deadline of an entry of this table and
  // returns where the entry now is (it moves between arenas when it gains
  // or loses a deadline).
  Entry* SetExpire(Entry* e, int64_t expire_ms);

  // True if the entry's deadline has passed at now_ms.
  static bool IsExpired(const Entry& e, int64_t now_ms) {
    return e.has_expire() && e.expire_ms() <= now_ms;
  }

  size_t size() const { return size_; }
  // Redis Cluster: keys counted per hash slot from CountSlots() on (every
  // insert and removal pays a CRC16 then), as Redis's COUNTKEYSINSLOT
  // (expired keys not yet removed included); 0 when not counting.
  void CountSlots();
  uint32_t KeysInSlot(uint32_t slot) const { return slot_counts_ ? slot_counts_[slot] : 0; }
  bool counts_slots() const { return slot_counts_ != nullptr; }
  size_t expires_count() const { return expires_; }
  // INFO keyspace's avg_ttl (ms): a running average over the keys active
  // expiry passes (as Redis's), 0 without deadlines.
  int64_t avg_ttl() const { return avg_ttl_; }
  uint64_t expired_keys() const { return expired_keys_; }

  // One SCAN step: visits every entry of one home group (expired entries
  // too: the caller filters) and returns the next cursor, 0 when done.
  //
  // The cursor is a hash value: every key whose hash is below it was
  // visited by an earlier step. A step visits all keys of the home group the
  // cursor falls in, and returns the first hash of the next group. Splits
  // and index resizes only refine or coarsen the ranges, so every key present
  // for the whole scan is visited at least once (some perhaps twice).
  uint64_t Scan(uint64_t cursor, const std::function<void(const Entry&)>& visit) const;

  // Visits every entry (expired ones too). `visit` must not modify the table.
  void ForEach(const std::function<void(const Entry&)>& visit) const;

  // The access-data sweep (see AccessTracker): BeginAccessSweep() starts a
  // pass over all keys, SweepAccess() goes on with it for about
  // `max_entries` keys (whole segments) and returns whether the pass has
  // keys left. The tracker's BeginPass() comes first.
  void BeginAccessSweep();
  bool SweepAccess(size_t max_entries);

  // Housekeeping for about `budget_us` microseconds (the cron calls this):
  // repacks segments whose arenas have many free slots or whose index is
  // mostly empty, so memory follows deletions. Returns true if work is left.
  bool Maintain(int64_t budget_us);

  // A random entry (segments picked in proportion to their hash range);
  // may be expired. nullptr if empty.
  const Entry* RandomEntry(std::mt19937_64& rng) const;

  // Active expiry: checks up to `max_entries` keys with a deadline from where
  // the last call stopped, deleting expired ones. Returns how many it deleted.
  size_t ActiveExpire(int64_t now_ms, size_t max_entries);

  // Eviction, one key per call; false if there was nothing to evict.
  // SIEVE (LRU and LFU policies): a hand walks the index; a key looked up
  // since the hand last passed survives once (its visited bit is cleared),
  // the first key not looked up is evicted.
  bool EvictSieve(EvictFrom from);
  // A random key (allkeys-random / volatile-random).
  bool EvictRandom(EvictFrom from, std::mt19937_64& rng);
  // Of `samples` keys with a deadline, the one that expires soonest (volatile-ttl).
  bool EvictSoonestExpiring(size_t samples, std::mt19937_64& rng);
  uint64_t evicted_keys() const { return evicted_keys_; }
  // CONFIG RESETSTAT: expired_keys() and evicted_keys() start again at 0.
  void ResetStats() { expired_keys_ = evicted_keys_ = expired_fields_ = 0; }

  // MEMORY STATS: the bytes of the table's structure (directory, segment
  // headers, index groups), without the entries; O(segments).
  size_t StructureBytes() const;

  // MEMORY USAGE: the bytes the key costs (its arena entry, its share of the
  // index, and the key's and value's heap blocks).
  static size_t MemoryUsage(const Entry& e);

  // Field expiry (core/hash_object.h): the hashes whose fields have
  // deadlines, by their earliest one, in a heap of (deadline, key) timers.
  // Whoever lowers a hash's min_deadline() or makes it exact calls
  // NoteHashDeadline (Insert does for a hash that arrives with one: RENAME,
  // MOVE, COPY). A timer whose hash is gone or whose bound moved is dropped
  // when it comes due; the heap is rebuilt without such timers when it
  // grows past twice its live size, so it stays proportional to the hashes
  // with field deadlines.
  void NoteHashDeadline(std::string_view key, int64_t ms);
  // Whether some hash's earliest field deadline is at or before now_ms.
  bool HashFieldsDue(int64_t now_ms) const { return !field_timers_.empty() && field_timers_.front().ms <= now_ms; }
  // Active field expiry: for up to `max_hashes` due timers, removes the
  // expired fields of their hash (deleting a hash left empty). Returns how
  // many fields went.
  size_t ExpireHashFields(int64_t now_ms, size_t max_hashes);
  // Lazy field expiry of the hash at `e` (key `key`) before a command reads
  // or writes it: removes its expired fields if any are due, and deletes the
  // key if none are left. Returns e, or nullptr if the key went.
  Entry* ExpireFieldsOf(Entry* e, std::string_view key, int64_t now_ms) {
    if (e == nullptr || !e->value.is_hash() || hide_expired_ || !e->value.hash().FieldsDue(now_ms)) return e;
    return ExpireFieldsNow(e, key, now_ms);
  }
  // Fields removed by field expiry (INFO expired_subkeys).
  uint64_t expired_fields() const { return expired_fields_; }
  size_t field_timers() const { return field_timers_.size(); }

  // Sorted sets whose member -> score table is being resized a few members
  // a write (core/zset_index.h), by key: the event loop goes on with the
  // moves between events so that a set nobody writes to does not keep two
  // tables. Whoever writes a sorted set calls NoteZSetMove after (Insert
  // does for one that arrives moving: RENAME, MOVE). An entry whose key no
  // longer holds a moving sorted set is dropped when its turn comes.
  void NoteZSetMove(std::string_view key, ZSetObject& z) {
    if (z.TakeMoveNote()) zset_moves_.emplace_back(key);
  }
  bool HasZSetMoves() const { return !zset_moves_.empty(); }
  // Goes on with the moves for about `budget_us`; returns whether any are
  // left.
  bool StepZSetMoves(int64_t budget_us);

  // Point-in-time snapshots without fork (BGSAVE; docs/persistence.md):
  // copy-on-write at the segment level. BeginSnapshot marks every segment
  // pending; before anything changes a pending segment (a lookup that
  // hands out an entry, an insertion, a deletion, an expiry, an eviction,
  // a repack, Clear, Swap), the segment's entries go to the sink as they
  // are, and it is done; SnapshotStep walks the table and sends the
  // pending segments it meets. Segments made after the start (splits of
  // done ones, a cleared table's) are done. So the sink gets every key
  // exactly once, as it was when the snapshot began, while the table
  // keeps serving. Entries reach the sink from whichever thread holds the
  // table. `epoch` is the snapshot's number, the same for every Db of it,
  // above any before (Swap exchanges segments between Dbs).
  class SnapshotSink {
   public:
    virtual void SaveEntry(const Entry& e) = 0;

   protected:
    ~SnapshotSink() = default;
  };
  void BeginSnapshot(SnapshotSink* sink, uint32_t epoch);
  // Sends pending segments until about `max_entries` entries went; returns
  // whether any are left (false: every key has gone to the sink).
  bool SnapshotStep(size_t max_entries);
  // Detaches the sink (after SnapshotStep returned false, or to abandon it).
  void EndSnapshot() { snap_sink_ = nullptr; }
  bool snapshot_active() const { return snap_sink_ != nullptr; }

  // Sizes an empty table for about `keys` keys at once (a file's RESIZEDB
  // hint): as many segments as growth would have split it into, so that
  // loading re-indexes nothing. Does nothing to a table with keys.
  void Reserve(size_t keys);

  // Deletes everything.
  void Clear();
  // The same, the table empty at once, but a large one's keys freed later,
  // a segment at a time between the calling thread's events
  // (lazy_free::Queue; their bytes counted until then): a whole database
  // dropped without a pause (a replica's swapdb load replacing it).
  void ClearLater();

  // Exchanges the contents of two databases (SWAPDB).
  void Swap(Db& other);

  // Tests, benchmarks, DEBUG HTSTATS (TableStats: the shape; `full`: with probe lengths).
  size_t segment_count() const { return segments_; }
  int directory_depth() const { return depth_; }
  std::string TableStats(bool full) const;
  // Every structural invariant checked: the first violation, or "" (slow).
  std::string CheckInvariants() const;

 private:
  // The directory (DbLayout has the segments' parts and their arithmetic).
  uint64_t DirIndex(uint64_t hash) const { return (hash >> 1) >> (63 - depth_); }
  Segment* SegmentOf(uint64_t hash) const { return dir_[DirIndex(hash)].seg(); }
  // Points the directory entries of the segment holding hash `pos` at `s`.
  void SetDirectory(uint64_t pos, Segment* s);
  // The slot of the first key in the probe sequence of `hash` whose entry
  // satisfies is_it(const Entry*), or no slot.
  template <typename Pred>
  Slot Search(uint64_t hash, Pred&& is_it) const;
  Slot Locate(const CompactKey::Probe& p) const;
  [[gnu::noinline]] Slot LocateLong(const CompactKey::Probe& p) const;
  // For prefetching: the ref of the first slot of the home group of `hash`
  // whose tag matches (the likely entry), or nullptr.
  const uint16_t* LikelyRef(uint64_t hash, const Segment** seg) const;
  // The index slot whose ref names `e` (which must be in the table).
  Slot LocateEntry(const Entry* e) const;
  // Deletes the key at `at` (frees its entry, clears its index slot).
  void RemoveAt(const Slot& at);

  Segment* NewSegment(uint8_t depth, uint32_t ngroups);
  static void FreeSegment(Segment* s, bool destroy_entries);
  // ClearLater's job: some of the detached segments freed (lazy_free).
  static bool FreeSomeDetached(void* detached, size_t blocks);
  // Makes room for one more key in the segment of `hash`.
  void MakeRoom(uint64_t hash);
  // Rebuilds the index of `s` (which holds hash `pos`) with `ngroups`
  // groups; entries do not move.
  void ResizeIndex(Segment* s, uint32_t ngroups, uint64_t pos);
  // Moves every key of `s` into fresh segments: one (a repack) or two (a
  // split, by the hash bit below the prefix); `s` (which holds the hash
  // `pos`) is freed.
  void Rebuild(Segment* s, bool split, uint64_t pos);

  // Calls fn(segment, first hash) for each segment once, in hash order,
  // starting at the segment of `from`, wrapping around.
  template <typename Fn>
  void ForEachSegmentFrom(uint64_t from, Fn&& fn) const;
  // A random entry of either arena, or of the TTL arenas only.
  const Entry* Random(bool ttl_only, std::mt19937_64& rng) const;
  void RemoveEntry(const Entry* e) { RemoveAt(LocateEntry(e)); }
  // The snapshot's copy-on-write: sends `s` to the sink if it is pending.
  // Cheap when no snapshot runs (one test of a member).
  void BeforeChange(const Segment* s) const {
    if (snap_sink_ != nullptr && s->saved_epoch != snap_epoch_) [[unlikely]]
      SaveSegment(const_cast<Segment*>(s));
  }
  [[gnu::noinline]] void SaveSegment(Segment* s) const;
  // Sends every pending segment (before Clear or Swap).
  void SaveAllPending();
  // Eviction's removal: counts it and tells the observer.
  void EvictAt(const Slot& at);
  [[gnu::noinline]] void RemoveExpired(const Entry* e);
  // Tells the observer of a key the table deletes by itself.
  void ReportRemoval(const Entry& e, bool evicted = false);
  void FreeAll();
  void InitEmpty();
  [[gnu::noinline]] Entry* ExpireFieldsNow(Entry* e, std::string_view key, int64_t now_ms);
  // Drops the timers whose hash is gone or whose bound moved.
  void CompactFieldTimers();

  struct FieldTimer {
    int64_t ms;
    std::string key;
    // The heap's order: the earliest deadline on top.
    bool operator<(const FieldTimer& o) const { return ms > o.ms; }
  };
  std::vector<FieldTimer> field_timers_;
  std::vector<std::string> zset_moves_;
  size_t field_timers_compact_at_ = 1024;
  uint64_t expired_fields_ = 0;

  DirEntry* dir_ = nullptr;
  int depth_ = 0;  // global depth: the directory has 2^depth_ entries
  size_t segments_ = 0;
  size_t size_ = 0;
  std::unique_ptr<uint32_t[]> slot_counts_;  // (CountSlots)
  size_t expires_ = 0;
  uint64_t expired_keys_ = 0;
  uint64_t evicted_keys_ = 0;
  int64_t avg_ttl_ = 0;
  // Cursors (hash positions, so that they survive splits): active expiry
  // (segment and TTL-arena index), the SIEVE hand (segment, group, slot),
  // and the cron's maintenance.
  uint64_t expire_pos_ = 0;
  uint32_t expire_idx_ = 0;
  uint64_t sieve_pos_ = 0;
  uint32_t sieve_group_ = 0;
  int sieve_slot_ = 0;
  uint64_t maintain_pos_ = 0;
  uint64_t sweep_pos_ = 0;
  bool sweep_active_ = false;
  AccessTracker* access_ = nullptr;
  KeyObserver* observer_ = nullptr;
  std::atomic<uint64_t>* changes_ = nullptr;
  void NoteExpired() {
    if (changes_ != nullptr) changes_->store(changes_->load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  bool report_removals_ = false;  // the observer hears of KeyRemoved
  bool hide_expired_ = false;
  // The snapshot in progress (BeginSnapshot): its sink, its epoch, and
  // where SnapshotStep goes on (a hash position; done once it wraps).
  SnapshotSink* snap_sink_ = nullptr;
  uint32_t snap_epoch_ = 0;
  uint64_t snap_pos_ = 0;
  bool snap_walked_ = false;
};

}  // namespace peregrine
