// One logical database (as SELECT picks) of one shard: a hash table of keys to
// values with optional deadlines. Single-threaded: only the owning shard's
// thread may touch it. No sockets, no globals; time is passed in by the caller.
//
// The table is chained with a power-of-two bucket count, so that SCAN's
// reverse-binary cursor (as Redis's dictScan) returns every key present for
// the whole scan even when the table is resized between calls.
//
// Resizing is incremental, so that no insert pays for rehashing the whole
// table: a resize allocates the new bucket array and then moves the old
// array's buckets over in order, one per table operation (and in time-bounded
// chunks from the cron, RehashFor). While that runs, a key lives in exactly
// one place: old bucket b = hash & old_mask if b has not been moved yet
// (b >= rehash_idx_), else the new array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/memory.h"
#include "core/value.h"

namespace peregrine {

class Db {
 public:
  static constexpr int64_t kNoExpire = -1;
  // The top bit of an entry's stored hash is its SIEVE "visited" bit (set by
  // lookups, cleared by the eviction hand); Hash() never sets it.
  static constexpr uint64_t kVisited = uint64_t{1} << 63;

  // What eviction may pick (maxmemory-policy, without the LRU/LFU
  // distinction: both are approximated by SIEVE).
  enum class EvictFrom { kAllKeys, kVolatile };

  // One key: a single allocation holding the links, the deadline, the value
  // and the key bytes (at the end), so that a lookup's key comparison reads
  // the block it has already fetched. Created and destroyed only by Db.
  struct Entry {
    Entry* next = nullptr;
    uint64_t hash = 0;              // Hash(key); the top bit is the SIEVE visited bit
    int64_t expire_ms = kNoExpire;  // absolute unix time in ms, or kNoExpire
    Value value;
    uint32_t key_size = 0;
    char key_data[4];  // the key's first bytes; the block extends past the struct

    std::string_view key() const { return {key_data, key_size}; }
    bool has_expire() const { return expire_ms != kNoExpire; }

   private:
    friend class Db;
    Entry(std::string_view k, Value v, uint64_t h);
    // Allocates (counted, core/memory.h) and constructs an entry for `key`.
    static Entry* Create(std::string_view key, Value v, uint64_t hash);
    static void Destroy(Entry* e);
  };

  Db();
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Looks `key` up. A key whose deadline is at or before now_ms is deleted
  // (lazy expiry, counted in expired_keys()) and reported missing.
  Entry* Find(std::string_view key, int64_t now_ms);

  // Looks `key` up without expiring it (also returns logically expired keys).
  Entry* FindRaw(std::string_view key) const { return FindRaw(key, Hash(key)); }
  // The same with the key's hash already computed (see Hash()).
  Entry* FindRaw(std::string_view key, uint64_t hash) const;
  Entry* Find(std::string_view key, uint64_t hash, int64_t now_ms);

  // The hash the table uses for a key.
  static uint64_t Hash(std::string_view key);

  // Prefetching for a batch of lookups (a pipeline): PrefetchBucket() for
  // every key first, then PrefetchEntry() for every hash, then PrefetchKey(),
  // then the lookups; the cache misses of the whole batch then overlap
  // instead of adding up.
  void PrefetchBucket(uint64_t hash) const { __builtin_prefetch(&Bucket(hash)); }
  void PrefetchEntry(uint64_t hash) const {
    const Entry* head = Bucket(hash);
    if (head != nullptr) __builtin_prefetch(head);
  }
  // The key bytes of the chain head (at the end of its block, which for long
  // keys spans further cache lines).
  void PrefetchKey(uint64_t hash) const {
    const Entry* head = Bucket(hash);
    if (head != nullptr) __builtin_prefetch(head->key_data);
  }

  // Adds a key that must not exist (check with Find first).
  Entry* Insert(std::string_view key, Value value, int64_t expire_ms = kNoExpire);

  // Deletes `key` if present (expired or not). Returns whether it was there.
  bool Erase(std::string_view key);

  // Sets or clears (kNoExpire) the deadline of an entry of this table.
  void SetExpire(Entry* e, int64_t expire_ms);

  // True if the entry's deadline has passed at now_ms.
  static bool IsExpired(const Entry& e, int64_t now_ms) {
    return e.expire_ms != kNoExpire && e.expire_ms <= now_ms;
  }

  size_t size() const { return size_; }
  size_t expires_count() const { return expires_; }
  uint64_t expired_keys() const { return expired_keys_; }
  // Buckets of the main array (of the new one while rehashing).
  size_t bucket_count() const { return rehashing() ? t_[1].n : t_[0].n; }
  bool rehashing() const { return rehash_idx_ >= 0; }

  // One SCAN step: visits every entry that the cursor's bucket names (in both
  // arrays while rehashing; expired entries too: the caller filters) and
  // returns the next cursor, 0 when done.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, Fn&& visit) const {
    if (size_ == 0) return 0;
    return VisitBuckets(cursor, [&](Entry** link) {
      for (const Entry* e = *link; e != nullptr; e = e->next) visit(*e);
    });
  }

  // Visits every entry (expired ones too). `visit` must not modify the table.
  template <typename Fn>
  void ForEach(Fn&& visit) const {
    for (const Table& t : t_)
      for (size_t b = 0; b < t.n; b++)
        for (const Entry* e = t.buckets[b]; e != nullptr; e = e->next) visit(*e);
  }

  // Moves buckets to the new array for about `budget_us` microseconds, if a
  // resize is under way (the cron calls this). Returns true if one still is.
  bool RehashFor(int64_t budget_us);

  // A uniformly chosen bucket's random entry (as Redis's dictGetFairRandomKey
  // approximates); may be expired. nullptr if empty.
  const Entry* RandomEntry(std::mt19937_64& rng) const;

  // Active expiry: walks up to `max_buckets` buckets from where the last call
  // stopped, deleting expired keys. Returns how many it deleted.
  size_t ActiveExpire(int64_t now_ms, size_t max_buckets);

  // Eviction, one key per call (SIEVE: the unvisited keys of one bucket);
  // false if there was nothing to evict.
  // SIEVE (LRU and LFU policies): a hand walks the buckets; an entry looked
  // up since the hand last passed survives once (its bit is cleared), the
  // first entry not looked up is evicted.
  bool EvictSieve(EvictFrom from);
  // A random key (allkeys-random / volatile-random).
  bool EvictRandom(EvictFrom from, std::mt19937_64& rng);
  // Of `samples` keys with a deadline, the one that expires soonest (volatile-ttl).
  bool EvictSoonestExpiring(size_t samples, std::mt19937_64& rng);
  uint64_t evicted_keys() const { return evicted_keys_; }

  // MEMORY USAGE: the bytes the key costs (entry, key and value blocks, and
  // its share of the bucket array).
  static size_t MemoryUsage(const Entry& e);

  // Deletes everything.
  void Clear();

  // Exchanges the contents of two databases (SWAPDB).
  void Swap(Db& other);

 private:
  struct FreeBuckets {
    void operator()(Entry** p) const { CountedFree(p); }
  };
  static Entry** NewBuckets(size_t n) { return static_cast<Entry**>(CountedCalloc(n * sizeof(Entry*))); }
  struct Table {
    std::unique_ptr<Entry*[], FreeBuckets> buckets;
    size_t n = 0;  // a power of two, or 0 for no array
    size_t mask() const { return n - 1; }
  };

  static uint64_t NextCursor(uint64_t cursor, uint64_t mask);
  // The bucket where a key with this hash lives (see the class comment).
  Entry*& Bucket(uint64_t hash) const {
    const Table& old = t_[0];
    size_t b = hash & old.mask();
    if (rehash_idx_ >= 0 && b < static_cast<size_t>(rehash_idx_)) return t_[1].buckets[hash & t_[1].mask()];
    return old.buckets[b];
  }
  // Starts moving everything to an array of `nbuckets` (no-op while a resize runs).
  void StartResize(size_t nbuckets);
  // Moves up to `buckets` non-empty buckets (visiting at most 10x as many empty ones).
  void RehashStep(size_t buckets);
  void MaybeShrink();
  void Unlink(Entry* e);
  // Calls fn(Entry** head) for the bucket(s) the cursor names: one bucket
  // when not rehashing; while rehashing, the bucket of the smaller array and
  // every bucket of the larger one that it expands to (as Redis's dictScan).
  // fn may unlink entries of those buckets. Returns the next cursor.
  template <typename Fn>
  uint64_t VisitBuckets(uint64_t cursor, Fn&& fn) const {
    if (!rehashing()) {
      const uint64_t mask = t_[0].mask();
      fn(&t_[0].buckets[cursor & mask]);
      return NextCursor(cursor, mask);
    }
    const Table* small = &t_[0];
    const Table* large = &t_[1];
    if (small->n > large->n) std::swap(small, large);
    const uint64_t m0 = small->mask(), m1 = large->mask();
    fn(&small->buckets[cursor & m0]);
    do {
      fn(&large->buckets[cursor & m1]);
      cursor = (((cursor | m0) + 1) & ~m0) | (cursor & m0);  // next expansion of the small bucket
    } while (cursor & (m0 ^ m1));
    return NextCursor(cursor, m0);
  }

  Table t_[2];
  int64_t rehash_idx_ = -1;  // next bucket of t_[0] to move; -1 when not resizing
  size_t size_ = 0;
  size_t expires_ = 0;
  uint64_t expired_keys_ = 0;
  uint64_t expire_cursor_ = 0;
  uint64_t sieve_cursor_ = 0;
  uint64_t evicted_keys_ = 0;
};

}  // namespace peregrine
