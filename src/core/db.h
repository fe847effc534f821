// One logical database (as SELECT picks) of one shard: a hash table of keys to
// values with optional deadlines. Single-threaded: only the owning shard's
// thread may touch it. No sockets, no globals; time is passed in by the caller.
//
// The table is chained with a power-of-two bucket count, so that SCAN's
// reverse-binary cursor (as Redis's dictScan) returns every key present for
// the whole scan even when the table is resized between calls. Resizing is
// done at once; incremental growth and the compact layout are issue #4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/value.h"

namespace peregrine {

class Db {
 public:
  static constexpr int64_t kNoExpire = -1;

  struct Entry {
    Entry* next = nullptr;
    uint64_t hash = 0;
    int64_t expire_ms = kNoExpire;  // absolute unix time in ms, or kNoExpire
    CompactString key;
    Value value;

    Entry(std::string_view k, Value v, uint64_t h) : hash(h), key(k), value(std::move(v)) {}
    bool has_expire() const { return expire_ms != kNoExpire; }
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
  // every key first, then PrefetchEntry() for every hash, then the lookups;
  // the cache misses of the whole batch then overlap instead of adding up.
  void PrefetchBucket(uint64_t hash) const { __builtin_prefetch(&buckets_[hash & (nbuckets_ - 1)]); }
  void PrefetchEntry(uint64_t hash) const {
    const Entry* head = buckets_[hash & (nbuckets_ - 1)];
    if (head != nullptr) __builtin_prefetch(head);
  }
  // The third step: the key bytes of the chain head (a separate allocation
  // for keys longer than the inline 15 bytes).
  void PrefetchKey(uint64_t hash) const {
    const Entry* head = buckets_[hash & (nbuckets_ - 1)];
    if (head != nullptr) __builtin_prefetch(head->key.data_address());
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
  size_t bucket_count() const { return nbuckets_; }

  // One SCAN step: visits every entry of the bucket the cursor names (expired
  // ones too: the caller filters) and returns the next cursor, 0 when done.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, Fn&& visit) const {
    if (size_ == 0) return 0;
    const uint64_t mask = nbuckets_ - 1;
    for (const Entry* e = buckets_[cursor & mask]; e != nullptr; e = e->next) visit(*e);
    return NextCursor(cursor, mask);
  }

  // Visits every entry (expired ones too). `visit` must not modify the table.
  template <typename Fn>
  void ForEach(Fn&& visit) const {
    for (size_t b = 0; b < nbuckets_; b++)
      for (const Entry* e = buckets_[b]; e != nullptr; e = e->next) visit(*e);
  }

  // A uniformly chosen bucket's random entry (as Redis's dictGetFairRandomKey
  // approximates); may be expired. nullptr if empty.
  const Entry* RandomEntry(std::mt19937_64& rng) const;

  // Active expiry: walks up to `max_buckets` buckets from where the last call
  // stopped, deleting expired keys. Returns how many it deleted.
  size_t ActiveExpire(int64_t now_ms, size_t max_buckets);

  // Deletes everything.
  void Clear();

  // Exchanges the contents of two databases (SWAPDB).
  void Swap(Db& other);

 private:
  static uint64_t NextCursor(uint64_t cursor, uint64_t mask);
  void Resize(size_t nbuckets);
  void MaybeShrink();
  void Unlink(Entry* e);

  std::unique_ptr<Entry*[]> buckets_;
  size_t nbuckets_ = 0;
  size_t size_ = 0;
  size_t expires_ = 0;
  uint64_t expired_keys_ = 0;
  uint64_t expire_cursor_ = 0;
};

}  // namespace peregrine
