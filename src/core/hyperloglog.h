// HyperLogLog in Redis's exact representation (hyperloglog.c), so that an HLL
// is a string value Redis and Peregrine exchange byte for byte (GET/SET,
// DUMP/RESTORE, RDB) and PFCOUNT gives Redis's numbers:
//
//   header (16 bytes): "HYLL", encoding (0 dense, 1 sparse), 3 zero bytes,
//                      the cached cardinality (8 bytes little endian; the
//                      top bit of the last byte set = not valid)
//   dense:  16384 registers of 6 bits, register i at bit 6i from the least
//           significant bit of byte 0 (12288 bytes)
//   sparse: opcodes run over the registers in order:
//           00xxxxxx      ZERO  xxxxxx+1 registers at 0 (1..64)
//           01xxxxxx yyyyyyyy  XZERO  (x<<8|y)+1 registers at 0 (1..16384)
//           1vvvvvxx      VAL   xx+1 registers (1..4) at vvvvv+1 (1..32)
//
// A new HLL is sparse; it becomes dense when a register needs a value over
// 32 or the sparse form would pass hll-sparse-max-bytes. Every operation
// here leaves the same bytes as Redis's (the merging of adjacent VAL
// opcodes after an update included), which the black-box tests check
// against redis-server. Pure functions of bytes; the string that holds an
// HLL grows and shrinks through a Buffer.
//
// Written here rather than taken from a library: no packaged library keeps
// Redis's byte layout, and the layout is the point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace peregrine::hll {

constexpr size_t kHeaderSize = 16;
constexpr int kP = 14;
constexpr uint32_t kRegisters = 1u << kP;
constexpr int kBits = 6;
constexpr size_t kDenseSize = kHeaderSize + (kRegisters * kBits + 7) / 8;
constexpr uint8_t kDense = 0;
constexpr uint8_t kSparse = 1;
// The largest value a sparse VAL opcode holds.
constexpr uint8_t kSparseValMax = 32;

// Redis's MurmurHash64A (the endian-neutral variant), which places elements.
uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed);

// The register `element` goes to (*index) and the length of its 0...01
// pattern (1..51): the value the register takes at least.
uint8_t PatternLength(std::string_view element, uint32_t* index);

// A new, empty HLL: sparse, one XZERO for all registers (18 bytes).
std::string NewSparse();

// Whether `s` has an HLL's header (magic, known encoding, a dense one of
// the exact size): what Redis checks before any HLL command reads a string.
// The sparse opcodes are checked as they are read.
bool LooksValid(std::string_view s);

inline uint8_t Encoding(const uint8_t* hll) { return hll[4]; }

// The cached cardinality, if it is valid.
bool CachedCardinality(const uint8_t* hll, uint64_t* card);
void SetCachedCardinality(uint8_t* hll, uint64_t card);
inline void InvalidateCache(uint8_t* hll) { hll[15] |= 0x80; }

// Dense registers (the bytes after the header; p[kDenseSize-header] exists).
inline uint8_t DenseGet(const uint8_t* regs, uint32_t i) {
  const uint32_t byte = i * kBits / 8, fb = i * kBits & 7;
  const unsigned b0 = regs[byte], b1 = fb > 2 ? regs[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & 63);
}
inline void DenseSet(uint8_t* regs, uint32_t i, uint8_t v) {
  const uint32_t byte = i * kBits / 8, fb = i * kBits & 7;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(63u << fb)) | (unsigned{v} << fb));
  if (fb > 2)
    regs[byte + 1] = static_cast<uint8_t>((regs[byte + 1] & ~(63u >> (8 - fb))) | (unsigned{v} >> (8 - fb)));
}

// The storage of an HLL being changed: its bytes, and a way to change
// their number (keeping the first ones; new ones are zero).
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual uint8_t* data() = 0;
  virtual size_t size() const = 0;
  virtual uint8_t* Resize(size_t size) = 0;
};

// A Buffer over a std::string (tests, benchmarks, PFSELFTEST's HLLs).
class StringBuffer : public Buffer {
 public:
  explicit StringBuffer(std::string s) : s_(std::move(s)) {}
  uint8_t* data() override { return reinterpret_cast<uint8_t*>(s_.data()); }
  size_t size() const override { return s_.size(); }
  uint8_t* Resize(size_t size) override {
    s_.resize(size, '\0');
    return data();
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

// Raises register `index` to `count` if it is lower (Redis's hllDenseSet /
// hllSparseSet, a sparse HLL promoted to dense where it must be; a sparse
// one is never made longer than `sparse_max` bytes). Returns 1 if the
// register changed (the cache is then invalid), 0 if not, -1 if the
// sparse form is corrupt.
int Set(Buffer& b, uint32_t index, uint8_t count, size_t sparse_max);

// PFADD of one element: Set at its register and pattern length.
int Add(Buffer& b, std::string_view element, size_t sparse_max);

// Rewrites a sparse HLL as dense (the header and its cache kept); false if
// the sparse form is corrupt (then nothing changed). A dense one is left.
bool SparseToDense(Buffer& b);

// max[i] = max(max[i], register i of `hll`) for every register; false if
// the sparse form is corrupt. `hll` passed LooksValid.
bool MergeInto(uint8_t* max, std::string_view hll);

// The estimated cardinality (Ertl's estimator, as Redis 5+). *invalid is
// set when a sparse form does not cover exactly every register.
uint64_t Count(std::string_view hll, bool* invalid);
// The same for registers one per byte (PFCOUNT over several keys).
uint64_t CountRaw(const uint8_t* registers);

// PFDEBUG DECODE's text of a sparse HLL ("z:3 v:2,1 Z:16380").
std::string DecodeSparse(std::string_view hll);

}  // namespace peregrine::hll
