#include "core/hyperloglog.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace peregrine::hll {
namespace {

constexpr int kQ = 64 - kP;
constexpr uint32_t kZeroMaxLen = 64;
constexpr uint32_t kXZeroMaxLen = 16384;
constexpr uint32_t kValMaxLen = 4;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// One sparse opcode read at p (`end` is the end of the string: an XZERO cut
// after its first byte reads a zero second byte, as Redis reads the NUL
// that ends its strings).
struct Op {
  enum Kind : uint8_t { kZero, kXZero, kVal } kind;
  uint32_t len;   // registers covered
  uint8_t value;  // VAL's value
  uint8_t bytes;  // 1, or 2 for XZERO
};
inline Op ReadOp(const uint8_t* p, const uint8_t* end) {
  const uint8_t c = *p;
  if ((c & 0xc0) == 0) return {Op::kZero, (c & 0x3fu) + 1, 0, 1};
  if ((c & 0xc0) == 0x40) {
    const uint32_t low = p + 1 < end ? p[1] : 0;
    return {Op::kXZero, (((c & 0x3fu) << 8) | low) + 1, 0, 2};
  }
  return {Op::kVal, (c & 0x3u) + 1, static_cast<uint8_t>(((c >> 2) & 0x1f) + 1), 1};
}
inline uint8_t ValOp(uint32_t value, uint32_t len) { return static_cast<uint8_t>(0x80 | ((value - 1) << 2) | (len - 1)); }
// A run of `len` zero registers as ZERO or XZERO; returns the bytes written.
inline int ZeroOps(uint8_t* out, uint32_t len) {
  if (len > kZeroMaxLen) {
    out[0] = static_cast<uint8_t>(0x40 | ((len - 1) >> 8));
    out[1] = static_cast<uint8_t>((len - 1) & 0xff);
    return 2;
  }
  out[0] = static_cast<uint8_t>(len - 1);
  return 1;
}
inline bool IsVal(uint8_t c) { return (c & 0x80) != 0; }

void SetDenseRegisters(uint8_t* regs, const uint8_t* values) {
  for (uint32_t i = 0; i < kRegisters; i++) DenseSet(regs, i, values[i]);
}

// Ertl's sigma and tau ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284), computed in the same order of
// operations as Redis so that the estimate is the same double.
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double y = 1, z = x, previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}
double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double y = 1.0, z = 1 - x, previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}
uint64_t Estimate(const int* histogram) {
  const double m = kRegisters;
  double z = m * Tau((m - histogram[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llround(static_cast<long double>(kAlphaInf * m * m / z)));
}

void DenseHistogram(const uint8_t* r, int* histogram) {
  // Four registers in each three bytes.
  for (uint32_t j = 0; j < kRegisters / 4; j++, r += 3) {
    histogram[r[0] & 63]++;
    histogram[(r[0] >> 6 | r[1] << 2) & 63]++;
    histogram[(r[1] >> 4 | r[2] << 4) & 63]++;
    histogram[(r[2] >> 2) & 63]++;
  }
}

}  // namespace

uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995;
  constexpr int r = 47;
  uint64_t h = seed ^ (len * m);
  const uint8_t* data = static_cast<const uint8_t*>(key);
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; i--) k = (k << 8) | data[i];  // little endian, any host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7: h ^= uint64_t{data[6]} << 48; [[fallthrough]];
    case 6: h ^= uint64_t{data[5]} << 40; [[fallthrough]];
    case 5: h ^= uint64_t{data[4]} << 32; [[fallthrough]];
    case 4: h ^= uint64_t{data[3]} << 24; [[fallthrough]];
    case 3: h ^= uint64_t{data[2]} << 16; [[fallthrough]];
    case 2: h ^= uint64_t{data[1]} << 8; [[fallthrough]];
    case 1:
      h ^= uint64_t{data[0]};
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint8_t PatternLength(std::string_view element, uint32_t* index) {
  uint64_t hash = MurmurHash64A(element.data(), element.size(), 0xadc83b19ULL);
  *index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // the run ends by bit Q: at most Q+1
  return static_cast<uint8_t>(__builtin_ctzll(hash) + 1);
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(kSparse);
  for (uint32_t left = kRegisters; left > 0;) {
    const uint32_t run = std::min(left, kXZeroMaxLen);
    uint8_t op[2];
    ZeroOps(op, run);
    s.append(reinterpret_cast<const char*>(op), 2);
    left -= run;
  }
  return s;
}

bool LooksValid(std::string_view s) {
  if (s.size() < kHeaderSize || s.substr(0, 4) != "HYLL") return false;
  const uint8_t encoding = static_cast<uint8_t>(s[4]);
  if (encoding > kSparse) return false;
  return encoding != kDense || s.size() == kDenseSize;
}

bool CachedCardinality(const uint8_t* hll, uint64_t* card) {
  if (hll[15] & 0x80) return false;
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | hll[8 + i];
  *card = v;
  return true;
}

void SetCachedCardinality(uint8_t* hll, uint64_t card) {
  for (int i = 0; i < 8; i++) hll[8 + i] = static_cast<uint8_t>(card >> (8 * i));
}

bool SparseToDense(Buffer& b) {
  if (Encoding(b.data()) == kDense) return true;
  uint8_t values[kRegisters] = {};
  if (!MergeInto(values, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()))) return false;
  uint8_t header[kHeaderSize];
  std::memcpy(header, b.data(), kHeaderSize);
  uint8_t* p = b.Resize(kDenseSize);
  std::memcpy(p, header, kHeaderSize);
  p[4] = kDense;
  std::memset(p + kHeaderSize, 0, kDenseSize - kHeaderSize);
  SetDenseRegisters(p + kHeaderSize, values);
  return true;
}

namespace {

constexpr int kPromote = -2;

// Redis's hllSparseSet, on offsets (the buffer moves as it grows).
int SparseSet(Buffer& b, uint32_t index, uint8_t count, size_t sparse_max) {
  if (count > kSparseValMax) return kPromote;
  uint8_t* base = b.data();
  size_t size = b.size();
  // Step 1: the opcode covering `index` (at `at`), and the one before it.
  constexpr size_t kNone = SIZE_MAX;
  size_t at = kHeaderSize, prev = kNone;
  uint64_t first = 0;  // (64 bits: a corrupt string may cover more than 2^32)
  Op op{};
  bool found = false;
  while (at < size) {
    op = ReadOp(base + at, base + size);
    if (index <= first + op.len - 1) {
      found = true;
      break;
    }
    prev = at;
    at += op.bytes;
    first += op.len;
  }
  if (!found) return -1;
  const uint64_t last = first + op.len - 1;
  // Step 2: nothing to do; one byte rewritten in place; or the opcode
  // split in up to five bytes (XZERO VAL XZERO at worst).
  if (op.kind == Op::kVal && op.value >= count) return 0;
  if (op.len == 1 && op.kind != Op::kXZero) {
    base[at] = ValOp(count, 1);
  } else {
    uint8_t seq[5];
    int n = 0;
    if (op.kind != Op::kVal) {
      if (index != first) n += ZeroOps(seq + n, static_cast<uint32_t>(index - first));
      seq[n++] = ValOp(count, 1);
      if (index != last) n += ZeroOps(seq + n, static_cast<uint32_t>(last - index));
    } else {
      if (index != first) seq[n++] = ValOp(op.value, static_cast<uint32_t>(index - first));
      seq[n++] = ValOp(count, 1);
      if (index != last) seq[n++] = ValOp(op.value, static_cast<uint32_t>(last - index));
    }
    // Step 3: the sequence in place of the opcode (promoted instead if
    // that makes the string longer than sparse_max).
    const int delta = n - op.bytes;
    if (delta > 0 && size + delta > sparse_max) return kPromote;
    const size_t next = at + op.bytes;
    const size_t tail = next < size ? size - next : 0;
    const size_t new_size = size + delta;
    if (delta > 0) base = b.Resize(new_size);
    if (delta != 0 && tail > 0) std::memmove(base + at + n, base + next, tail);
    // (A last XZERO cut after its first byte loses the sequence's last
    // byte, as in Redis: the string is then as corrupt as it was.)
    std::memcpy(base + at, seq, std::min<size_t>(n, new_size - at));
    if (delta < 0) base = b.Resize(new_size);
    size = new_size;
  }
  // Step 4: adjacent VALs of one value merged where one opcode holds them,
  // over five opcodes from the one before (Redis's scan, so that the
  // bytes are Redis's).
  size_t q = prev != kNone ? prev : kHeaderSize;
  for (int scan = 5; q < size && scan-- > 0;) {
    const uint8_t c = base[q];
    if (!IsVal(c)) {
      q += (c & 0xc0) == 0x40 ? 2 : 1;
      continue;
    }
    if (q + 1 < size && IsVal(base[q + 1])) {
      const Op a = ReadOp(base + q, base + size), z = ReadOp(base + q + 1, base + size);
      if (a.value == z.value && a.len + z.len <= kValMaxLen) {
        base[q + 1] = ValOp(a.value, a.len + z.len);
        std::memmove(base + q, base + q + 1, size - q - 1);
        base = b.Resize(--size);
        continue;  // the merged opcode may merge with the next one
      }
    }
    q++;
  }
  InvalidateCache(base);
  return 1;
}

}  // namespace

int Set(Buffer& b, uint32_t index, uint8_t count, size_t sparse_max) {
  uint8_t* p = b.data();
  if (Encoding(p) == kDense) {
    if (count <= DenseGet(p + kHeaderSize, index)) return 0;
    DenseSet(p + kHeaderSize, index, count);
    return 1;
  }
  const int r = SparseSet(b, index, count, sparse_max);
  if (r != kPromote) return r;
  if (!SparseToDense(b)) return -1;
  // Promoted only when the register had to change: it does.
  DenseSet(b.data() + kHeaderSize, index, count);
  return 1;
}

int Add(Buffer& b, std::string_view element, size_t sparse_max) {
  uint32_t index;
  const uint8_t count = PatternLength(element, &index);
  return Set(b, index, count, sparse_max);
}

bool MergeInto(uint8_t* max, std::string_view hll) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(hll.data());
  if (Encoding(p) == kDense) {
    for (uint32_t i = 0; i < kRegisters; i++) max[i] = std::max(max[i], DenseGet(p + kHeaderSize, i));
    return true;
  }
  const uint8_t* end = p + hll.size();
  uint64_t i = 0;
  for (p += kHeaderSize; p < end;) {
    const Op op = ReadOp(p, end);
    p += op.bytes;
    if (op.kind == Op::kVal) {
      if (i + op.len > kRegisters) return false;
      for (uint32_t k = 0; k < op.len; k++, i++) max[i] = std::max(max[i], op.value);
    } else {
      i += op.len;
    }
  }
  return i == kRegisters;
}

uint64_t Count(std::string_view hll, bool* invalid) {
  int histogram[64] = {};
  const uint8_t* p = reinterpret_cast<const uint8_t*>(hll.data());
  if (Encoding(p) == kDense) {
    DenseHistogram(p + kHeaderSize, histogram);
  } else {
    const uint8_t* end = p + hll.size();
    uint64_t i = 0;
    for (p += kHeaderSize; p < end;) {
      const Op op = ReadOp(p, end);
      p += op.bytes;
      i += op.len;
      histogram[op.kind == Op::kVal ? op.value : 0] += static_cast<int>(op.len);
    }
    if (i != kRegisters && invalid != nullptr) *invalid = true;
  }
  return Estimate(histogram);
}

uint64_t CountRaw(const uint8_t* registers) {
  int histogram[64] = {};
  for (uint32_t i = 0; i < kRegisters; i++) histogram[registers[i] & 63]++;
  return Estimate(histogram);
}

std::string DecodeSparse(std::string_view hll) {
  std::string out;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(hll.data());
  const uint8_t* end = p + hll.size();
  for (p += kHeaderSize; p < end;) {
    const Op op = ReadOp(p, end);
    p += op.bytes;
    if (!out.empty()) out += ' ';
    if (op.kind == Op::kVal)
      out += "v:" + std::to_string(op.value) + "," + std::to_string(op.len);
    else
      out += (op.kind == Op::kZero ? "z:" : "Z:") + std::to_string(op.len);
  }
  return out;
}

}  // namespace peregrine::hll
