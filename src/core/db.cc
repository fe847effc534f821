// The per-database key table (see db.h).
#include "core/db.h"

#include <xxhash.h>

#include <bit>
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

Db::Db() : buckets_(new Entry*[kMinBuckets]()), nbuckets_(kMinBuckets) {}

Db::~Db() { Clear(); }

uint64_t Db::Hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

// Reverse-binary increment: the high bits of the bucket index advance first, so
// a cursor stays meaningful when the bucket count doubles or halves.
uint64_t Db::NextCursor(uint64_t cursor, uint64_t mask) {
  cursor |= ~mask;
  cursor = ReverseBits(cursor);
  cursor++;
  return ReverseBits(cursor);
}

Db::Entry* Db::FindRaw(std::string_view key, uint64_t h) const {
  for (Entry* e = buckets_[h & (nbuckets_ - 1)]; e != nullptr; e = e->next)
    if (e->hash == h && e->key.Equals(key)) return e;
  return nullptr;
}

Db::Entry* Db::Find(std::string_view key, int64_t now_ms) { return Find(key, Hash(key), now_ms); }

Db::Entry* Db::Find(std::string_view key, uint64_t hash, int64_t now_ms) {
  Entry* e = FindRaw(key, hash);
  if (e != nullptr && IsExpired(*e, now_ms)) {
    Unlink(e);
    expired_keys_++;
    MaybeShrink();
    return nullptr;
  }
  return e;
}

Db::Entry* Db::Insert(std::string_view key, Value value, int64_t expire_ms) {
  if (size_ >= nbuckets_) Resize(nbuckets_ * 2);
  uint64_t h = Hash(key);
  Entry* e = new Entry(key, std::move(value), h);
  Entry*& head = buckets_[h & (nbuckets_ - 1)];
  e->next = head;
  head = e;
  size_++;
  if (expire_ms != kNoExpire) SetExpire(e, expire_ms);
  return e;
}

void Db::Unlink(Entry* target) {
  Entry** link = &buckets_[target->hash & (nbuckets_ - 1)];
  while (*link != target) link = &(*link)->next;
  *link = target->next;
  if (target->has_expire()) expires_--;
  size_--;
  delete target;
}

bool Db::Erase(std::string_view key) {
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

void Db::Resize(size_t nbuckets) {
  std::unique_ptr<Entry*[]> fresh(new Entry*[nbuckets]());
  const size_t mask = nbuckets - 1;
  for (size_t b = 0; b < nbuckets_; b++) {
    Entry* e = buckets_[b];
    while (e != nullptr) {
      Entry* next = e->next;
      Entry*& head = fresh[e->hash & mask];
      e->next = head;
      head = e;
      e = next;
    }
  }
  buckets_ = std::move(fresh);
  nbuckets_ = nbuckets;
}

void Db::MaybeShrink() {
  if (nbuckets_ > 64 && size_ * 8 < nbuckets_) Resize(std::bit_ceil(std::max(size_ * 2, kMinBuckets)));
}

const Db::Entry* Db::RandomEntry(std::mt19937_64& rng) const {
  if (size_ == 0) return nullptr;
  const Entry* head;
  do {
    head = buckets_[rng() & (nbuckets_ - 1)];
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
  for (size_t i = 0; i < max_buckets && i < nbuckets_; i++) {
    Entry** link = &buckets_[expire_cursor_ & (nbuckets_ - 1)];
    while (*link != nullptr) {
      Entry* e = *link;
      if (IsExpired(*e, now_ms)) {
        *link = e->next;
        expires_--;
        size_--;
        delete e;
        deleted++;
      } else {
        link = &e->next;
      }
    }
    expire_cursor_ = NextCursor(expire_cursor_, nbuckets_ - 1);
  }
  expired_keys_ += deleted;
  if (deleted > 0) MaybeShrink();
  return deleted;
}

void Db::Clear() {
  for (size_t b = 0; b < nbuckets_; b++) {
    Entry* e = buckets_[b];
    while (e != nullptr) {
      Entry* next = e->next;
      delete e;
      e = next;
    }
  }
  buckets_.reset(new Entry*[kMinBuckets]());
  nbuckets_ = kMinBuckets;
  size_ = 0;
  expires_ = 0;
  expire_cursor_ = 0;
}

void Db::Swap(Db& other) {
  std::swap(buckets_, other.buckets_);
  std::swap(nbuckets_, other.nbuckets_);
  std::swap(size_, other.size_);
  std::swap(expires_, other.expires_);
  std::swap(expire_cursor_, other.expire_cursor_);
}

}  // namespace peregrine
