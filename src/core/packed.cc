// Packed items (see packed.h).
#include "core/packed.h"

#include "core/compact_key.h"
#include "core/memory.h"
#include "core/numbers.h"

namespace peregrine::packed {

namespace {

// Bytes a signed integer needs (1..8).
uint8_t IntBytes(int64_t v) {
  uint8_t n = 1;
  while (n < 8) {
    const int64_t lo = -(int64_t{1} << (8 * n - 1));
    const int64_t hi = (int64_t{1} << (8 * n - 1)) - 1;
    if (v >= lo && v <= hi) break;
    ++n;
  }
  return n;
}

uint32_t StringItemSize(size_t n) {
  if (n < 0x80) return static_cast<uint32_t>(1 + n);
  if (n <= kMaxInline) return static_cast<uint32_t>(2 + n);
  return kExternalItemSize;
}

}  // namespace

bool AsInt(std::string_view s, int64_t* v) { return s.size() <= 20 && ParseInt64(s, v); }

// The keys' seeded XXH3: nobody outside can choose members that all land in
// one page.
uint64_t Hash(std::string_view s) { return CompactKey::HashLong(s); }

Probe::Probe(std::string_view str) : s(str), hash(Hash(str)) {
  is_int = AsInt(str, &int_value);
}

ItemPlan::ItemPlan(std::string_view str) : s(str) {
  if (AsInt(str, &int_value)) {
    int_bytes = IntBytes(int_value);
    size = 1u + int_bytes;
  } else {
    size = StringItemSize(str.size());
  }
}

ItemPlan::ItemPlan(std::string_view str, const Probe& p) : s(str) {
  if (p.is_int) {
    int_value = p.int_value;
    int_bytes = IntBytes(int_value);
    size = 1u + int_bytes;
  } else {
    size = StringItemSize(str.size());
  }
}

ItemPlan ItemPlan::Int(int64_t v) {
  ItemPlan plan{std::string_view()};
  plan.int_value = v;
  plan.int_bytes = IntBytes(v);
  plan.size = 1u + plan.int_bytes;
  return plan;
}

uint8_t* Write(uint8_t* out, const ItemPlan& plan) {
  if (plan.int_bytes != 0) {
    out[0] = static_cast<uint8_t>(kHeaderInt + plan.int_bytes - 1);
    const uint64_t u = static_cast<uint64_t>(plan.int_value);
    for (int i = 0; i < plan.int_bytes; ++i) out[1 + i] = static_cast<uint8_t>(u >> (8 * i));
    return out + 1 + plan.int_bytes;
  }
  const size_t n = plan.s.size();
  if (n < 0x80) {
    out[0] = static_cast<uint8_t>(n);
    if (n != 0) std::memcpy(out + 1, plan.s.data(), n);
    return out + 1 + n;
  }
  if (n <= kMaxInline) {
    out[0] = static_cast<uint8_t>(0x80 | (n >> 8));
    out[1] = static_cast<uint8_t>(n);
    std::memcpy(out + 2, plan.s.data(), n);
    return out + 2 + n;
  }
  char* block = static_cast<char*>(CountedAlloc(n));
  std::memcpy(block, plan.s.data(), n);
  out[0] = kHeaderExternal;
  const uint64_t len = n;
  std::memcpy(out + 1, &len, 6);
  std::memcpy(out + 7, &block, 8);
  return out + kExternalItemSize;
}

bool ItemInt(const uint8_t* p, int64_t* v) {
  const uint8_t h = p[0];
  if (h < kHeaderInt || h >= kHeaderExternal) return false;
  const int n = h - kHeaderInt + 1;
  uint64_t u = 0;
  for (int i = 0; i < n; ++i) u |= uint64_t{p[1 + i]} << (8 * i);
  if (n < 8) {
    const int shift = 64 - 8 * n;  // sign-extend
    *v = static_cast<int64_t>(u << shift) >> shift;
  } else {
    *v = static_cast<int64_t>(u);
  }
  return true;
}

std::string_view View(const uint8_t* p, char* scratch) {
  const uint8_t h = p[0];
  if (h < 0x80) return {reinterpret_cast<const char*>(p + 1), h};
  if (h < 0xC0) return {reinterpret_cast<const char*>(p + 2), (size_t{h} & 0x3F) << 8 | p[1]};
  if (h == kHeaderExternal) {
    uint64_t len = 0;
    std::memcpy(&len, p + 1, 6);
    const char* block;
    std::memcpy(&block, p + 7, 8);
    return {block, static_cast<size_t>(len)};
  }
  int64_t v = 0;
  ItemInt(p, &v);
  return {scratch, FormatInt64(v, scratch)};
}

size_t ExternalBytes(const uint8_t* p) {
  if (p[0] != kHeaderExternal) return 0;
  void* block;
  std::memcpy(&block, p + 7, 8);
  return CountedUsableSize(block);
}

void FreeItem(const uint8_t* p) {
  if (p[0] != kHeaderExternal) return;
  void* block;
  std::memcpy(&block, p + 7, 8);
  CountedFree(block);
}

}  // namespace peregrine::packed
