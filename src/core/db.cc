// The per-database key table (see db.h).
#include "core/db.h"

#include <malloc.h>
// xxHash's header-only mode: XXH3 inlined into Db::Hash instead of a call
// through the shared library's PLT (the hash runs once per request).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>
#include <utility>

namespace peregrine {
namespace {
constexpr size_t kMinBuckets = 4;

uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}
}  // namespace

Db::Entry::Entry(std::string_view k, Value v, uint64_t h)
    : hash(h), value(std::move(v)), key_size(static_cast<uint32_t>(k.size())) {
  if (!k.empty()) std::memcpy(key_data, k.data(), k.size());
}

Db::Entry* Db::Entry::Create(std::string_view key, Value v, uint64_t hash) {
  const size_t bytes = std::max(sizeof(Entry), offsetof(Entry, key_data) + key.size());
  void* block = CountedAlloc(bytes);
  return new (block) Entry(key, std::move(v), hash);
}

void Db::Entry::Destroy(Entry* e) {
  e->~Entry();
  CountedFree(e);
}

Db::Db() {
  t_[0].buckets.reset(NewBuckets(kMinBuckets));
  t_[0].n = kMinBuckets;
}

Db::~Db() { Clear(); }

uint64_t Db::Hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()) & ~kVisited; }

// Reverse-binary increment: the high bits of the bucket index advance first, so
// a cursor stays meaningful when the bucket count doubles or halves.
uint64_t Db::NextCursor(uint64_t cursor, uint64_t mask) {
  cursor |= ~mask;
  cursor = ReverseBits(cursor);
  cursor++;
  return ReverseBits(cursor);
}

Db::Entry* Db::FindRaw(std::string_view key, uint64_t h) const {
  for (Entry* e = Bucket(h); e != nullptr; e = e->next)
    if ((e->hash & ~kVisited) == h && e->key() == key) return e;
  return nullptr;
}

Db::Entry* Db::Find(std::string_view key, int64_t now_ms) { return Find(key, Hash(key), now_ms); }

Db::Entry* Db::Find(std::string_view key, uint64_t hash, int64_t now_ms) {
  if (rehashing()) RehashStep(1);
  Entry* e = FindRaw(key, hash);
  if (e == nullptr) return nullptr;
  if (IsExpired(*e, now_ms)) {
    Unlink(e);
    expired_keys_++;
    MaybeShrink();
    return nullptr;
  }
  e->hash |= kVisited;
  return e;
}

Db::Entry* Db::Insert(std::string_view key, Value value, int64_t expire_ms) {
  if (rehashing())
    RehashStep(1);
  else if (size_ >= t_[0].n)
    StartResize(t_[0].n * 2);
  uint64_t h = Hash(key);
  Entry* e = Entry::Create(key, std::move(value), h);
  Entry*& head = Bucket(h);
  e->next = head;
  head = e;
  size_++;
  if (expire_ms != kNoExpire) SetExpire(e, expire_ms);
  return e;
}

void Db::Unlink(Entry* target) {
  Entry** link = &Bucket(target->hash & ~kVisited);
  while (*link != target) link = &(*link)->next;
  *link = target->next;
  if (target->has_expire()) expires_--;
  size_--;
  Entry::Destroy(target);
}

bool Db::Erase(std::string_view key) {
  if (rehashing()) RehashStep(1);
  Entry* e = FindRaw(key);
  if (e == nullptr) return false;
  Unlink(e);
  MaybeShrink();
  return true;
}

void Db::SetExpire(Entry* e, int64_t expire_ms) {
  if (e->has_expire() && expire_ms == kNoExpire) expires_--;
  if (!e->has_expire() && expire_ms != kNoExpire) expires_++;
  e->expire_ms = expire_ms;
}

void Db::StartResize(size_t nbuckets) {
  if (rehashing() || nbuckets == t_[0].n) return;
  t_[1].buckets.reset(NewBuckets(nbuckets));
  t_[1].n = nbuckets;
  rehash_idx_ = 0;
}

void Db::RehashStep(size_t buckets) {
  size_t empty_visits = buckets * 10;
  const size_t mask1 = t_[1].mask();
  while (buckets > 0 && static_cast<size_t>(rehash_idx_) < t_[0].n) {
    Entry*& head = t_[0].buckets[static_cast<size_t>(rehash_idx_)];
    if (head == nullptr) {
      rehash_idx_++;
      if (--empty_visits == 0) break;
      continue;
    }
    Entry* e = head;
    while (e != nullptr) {
      Entry* next = e->next;
      Entry*& dst = t_[1].buckets[e->hash & mask1];
      e->next = dst;
      dst = e;
      e = next;
    }
    head = nullptr;
    rehash_idx_++;
    buckets--;
  }
  if (static_cast<size_t>(rehash_idx_) == t_[0].n) {
    t_[0] = std::move(t_[1]);
    t_[1] = Table{};
    rehash_idx_ = -1;
    // The size may have moved on while this resize ran: follow it.
    if (size_ >= t_[0].n)
      StartResize(t_[0].n * 2);
    else
      MaybeShrink();
  }
}

bool Db::RehashFor(int64_t budget_us) {
  if (!rehashing()) return false;
  const auto start = std::chrono::steady_clock::now();
  while (rehashing()) {
    RehashStep(100);
    if (std::chrono::steady_clock::now() - start > std::chrono::microseconds(budget_us)) break;
  }
  return rehashing();
}

void Db::MaybeShrink() {
  if (!rehashing() && t_[0].n > 64 && size_ * 8 < t_[0].n)
    StartResize(std::bit_ceil(std::max(size_ * 2, kMinBuckets)));
}

const Db::Entry* Db::RandomEntry(std::mt19937_64& rng) const {
  if (size_ == 0) return nullptr;
  // A random bucket over both arrays (the moved part of the old one is empty).
  const size_t total = t_[0].n + t_[1].n;
  const Entry* head;
  do {
    size_t i = rng() % total;
    head = i < t_[0].n ? t_[0].buckets[i] : t_[1].buckets[i - t_[0].n];
  } while (head == nullptr);
  size_t len = 0;
  for (const Entry* e = head; e != nullptr; e = e->next) len++;
  size_t pick = rng() % len;
  while (pick-- > 0) head = head->next;
  return head;
}

size_t Db::ActiveExpire(int64_t now_ms, size_t max_buckets) {
  if (expires_ == 0) return 0;
  size_t deleted = 0;
  for (size_t i = 0; i < max_buckets; i++) {
    expire_cursor_ = VisitBuckets(expire_cursor_, [&](Entry** link) {
      while (*link != nullptr) {
        Entry* e = *link;
        if (IsExpired(*e, now_ms)) {
          *link = e->next;
          expires_--;
          size_--;
          Entry::Destroy(e);
          deleted++;
        } else {
          link = &e->next;
        }
      }
    });
  }
  expired_keys_ += deleted;
  if (deleted > 0) MaybeShrink();
  return deleted;
}

bool Db::EvictSieve(EvictFrom from) {
  if (size_ == 0 || (from == EvictFrom::kVolatile && expires_ == 0)) return false;
  // Two passes at most: the first may only clear bits.
  const size_t limit = 2 * (t_[0].n + t_[1].n) + 2;
  // The hand moves a bucket at a time and finishes the bucket it is in: every
  // entry there not visited goes (usually one; buckets hold ~1 entry).
  size_t evicted = 0;
  for (size_t visited = 0; evicted == 0 && visited < limit; visited++) {
    sieve_cursor_ = VisitBuckets(sieve_cursor_, [&](Entry** link) {
      while (*link != nullptr) {
        Entry* e = *link;
        if (from == EvictFrom::kVolatile && !e->has_expire()) {
          link = &e->next;
        } else if (e->hash & kVisited) {
          e->hash &= ~kVisited;
          link = &e->next;
        } else {
          *link = e->next;
          if (e->has_expire()) expires_--;
          size_--;
          Entry::Destroy(e);
          evicted++;
        }
      }
    });
  }
  if (evicted > 0) {
    evicted_keys_ += evicted;
    MaybeShrink();
  }
  return evicted > 0;
}

bool Db::EvictRandom(EvictFrom from, std::mt19937_64& rng) {
  if (size_ == 0 || (from == EvictFrom::kVolatile && expires_ == 0)) return false;
  const Entry* victim = nullptr;
  if (from == EvictFrom::kAllKeys) {
    victim = RandomEntry(rng);
  } else {
    // A walk from a random bucket to the first key with a deadline.
    uint64_t cursor = rng();
    for (size_t steps = 0; victim == nullptr && steps <= t_[0].n + t_[1].n; steps++) {
      cursor = VisitBuckets(cursor, [&](Entry** link) {
        for (Entry* e = *link; victim == nullptr && e != nullptr; e = e->next)
          if (e->has_expire()) victim = e;
      });
    }
  }
  if (victim == nullptr) return false;
  Unlink(const_cast<Entry*>(victim));
  evicted_keys_++;
  MaybeShrink();
  return true;
}

bool Db::EvictSoonestExpiring(size_t samples, std::mt19937_64& rng) {
  if (expires_ == 0) return false;
  Entry* best = nullptr;
  size_t seen = 0;
  uint64_t cursor = rng();
  for (size_t steps = 0; seen < samples && steps <= t_[0].n + t_[1].n; steps++) {
    cursor = VisitBuckets(cursor, [&](Entry** link) {
      for (Entry* e = *link; e != nullptr && seen < samples; e = e->next) {
        if (!e->has_expire()) continue;
        seen++;
        if (best == nullptr || e->expire_ms < best->expire_ms) best = e;
      }
    });
  }
  if (best == nullptr) return false;
  Unlink(best);
  evicted_keys_++;
  MaybeShrink();
  return true;
}

size_t Db::MemoryUsage(const Entry& e) {
  return malloc_usable_size(const_cast<Entry*>(&e)) + e.value.str().HeapBytes() + sizeof(Entry*);
}

void Db::Clear() {
  for (Table& t : t_) {
    for (size_t b = 0; b < t.n; b++) {
      Entry* e = t.buckets[b];
      while (e != nullptr) {
        Entry* next = e->next;
        Entry::Destroy(e);
        e = next;
      }
    }
  }
  t_[1] = Table{};
  rehash_idx_ = -1;
  t_[0].buckets.reset(NewBuckets(kMinBuckets));
  t_[0].n = kMinBuckets;
  size_ = 0;
  expires_ = 0;
  expire_cursor_ = 0;
}

void Db::Swap(Db& other) {
  std::swap(t_[0], other.t_[0]);
  std::swap(t_[1], other.t_[1]);
  std::swap(rehash_idx_, other.rehash_idx_);
  std::swap(size_, other.size_);
  std::swap(expires_, other.expires_);
  std::swap(expire_cursor_, other.expire_cursor_);
}

}  // namespace peregrine
