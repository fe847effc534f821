// HyperLogLog checked against a model: an array of one byte per register.
// Random updates go to a sparse HLL and a dense one; both must decode to
// the model, stay within the sparse size bound, and give the same count as
// the model's one-byte registers. That the bytes are Redis's own is
// checked against redis-server by tests/test_hyperloglog.py.
#include "core/hyperloglog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace peregrine::hll {
namespace {


std::vector<uint8_t> Registers(std::string_view hll) {
  std::vector<uint8_t> r(kRegisters, 0);
  EXPECT_TRUE(MergeInto(r.data(), hll));
  return r;
}

std::string Dense() {
  StringBuffer b(NewSparse());
  EXPECT_TRUE(SparseToDense(b));
  return b.str();
}

TEST(Hll, NewSparseIsOneRunOfZeros) {
  const std::string s = NewSparse();
  ASSERT_EQ(s.size(), 18u);
  EXPECT_EQ(s.substr(0, 5), std::string("HYLL\x01", 5));
  EXPECT_TRUE(LooksValid(s));
  EXPECT_EQ(DecodeSparse(s), "Z:16384");
  bool invalid = false;
  EXPECT_EQ(Count(s, &invalid), 0u);
  EXPECT_FALSE(invalid);
  uint64_t card;
  ASSERT_TRUE(CachedCardinality(reinterpret_cast<const uint8_t*>(s.data()), &card));
  EXPECT_EQ(card, 0u);
}

TEST(Hll, DenseRegistersDoNotDisturbTheirNeighbours) {
  std::string d = Dense();
  ASSERT_EQ(d.size(), kDenseSize);
  uint8_t* regs = reinterpret_cast<uint8_t*>(d.data()) + kHeaderSize;
  std::vector<uint8_t> model(kRegisters);
  std::mt19937 rng(3);
  for (int round = 0; round < 20; round++) {
    for (uint32_t i = 0; i < kRegisters; i++) {
      model[i] = static_cast<uint8_t>(rng() & 63);
      DenseSet(regs, i, model[i]);
    }
    for (uint32_t i = 0; i < kRegisters; i++) ASSERT_EQ(DenseGet(regs, i), model[i]) << i;
  }
}

TEST(Hll, MurmurHashCoversEveryLength) {
  // (That it is Redis's function is checked through PFADD's bytes against
  // redis-server in tests/test_hyperloglog.py.)
  EXPECT_EQ(MurmurHash64A("", 0, 0), 0u);
  uint32_t index;
  const uint8_t len = PatternLength("a", &index);
  EXPECT_GE(len, 1);
  EXPECT_LE(len, 51);
  EXPECT_LT(index, kRegisters);
  // Any length reaches every tail case and the word loop.
  std::string s;
  std::set<uint64_t> seen;
  for (int n = 0; n < 40; n++, s += static_cast<char>('a' + n)) seen.insert(MurmurHash64A(s.data(), s.size(), 7));
  EXPECT_EQ(seen.size(), 40u);
}

// Random register updates against the model, on both forms.
TEST(Hll, SparseAndDenseMatchTheModel) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; round++) {
    const size_t sparse_max = round % 3 == 0 ? 3000 : round % 3 == 1 ? 200 : 100000;
    StringBuffer sparse(NewSparse());
    StringBuffer dense(Dense());
    std::vector<uint8_t> model(kRegisters, 0);
    const int steps = 1 + static_cast<int>(rng() % 3000);
    // Registers clustered or spread, values small or up to 51.
    const uint32_t span = round % 2 ? kRegisters : 1 + static_cast<uint32_t>(rng() % 300);
    const uint32_t offset = static_cast<uint32_t>(rng() % (kRegisters - span + 1));
    for (int k = 0; k < steps; k++) {
      const uint32_t i = offset + static_cast<uint32_t>(rng() % span);
      const uint8_t v = static_cast<uint8_t>(1 + (rng() % 100 == 0 ? rng() % 51 : rng() % 6));
      const int want = v > model[i] ? 1 : 0;
      model[i] = std::max(model[i], v);
      ASSERT_EQ(Set(sparse, i, v, sparse_max), want);
      ASSERT_EQ(Set(dense, i, v, sparse_max), want);
      if (Encoding(sparse.data()) == kSparse) {
        ASSERT_LE(sparse.size(), std::max<size_t>(sparse_max, 18));
      }
      if (k % 97 == 0 || k == steps - 1) {
        ASSERT_EQ(Registers(sparse.str()), model);
        ASSERT_EQ(Registers(dense.str()), model);
        bool invalid = false;
        const uint64_t c = Count(sparse.str(), &invalid);
        ASSERT_FALSE(invalid);
        ASSERT_EQ(c, Count(dense.str(), nullptr));
        ASSERT_EQ(c, CountRaw(model.data()));
      }
    }
  }
}

TEST(Hll, PromotesPastThirtyTwoAndPastTheSizeBound) {
  StringBuffer b(NewSparse());
  ASSERT_EQ(Set(b, 5, 32, 3000), 1);
  EXPECT_EQ(Encoding(b.data()), kSparse);
  EXPECT_EQ(DecodeSparse(b.str()), "z:5 v:32,1 Z:16378");
  ASSERT_EQ(Set(b, 6, 33, 3000), 1);
  EXPECT_EQ(Encoding(b.data()), kDense);
  EXPECT_EQ(b.size(), kDenseSize);
  EXPECT_EQ(DenseGet(b.data() + kHeaderSize, 5), 32);
  EXPECT_EQ(DenseGet(b.data() + kHeaderSize, 6), 33);
  StringBuffer small(NewSparse());
  uint32_t i = 0;
  while (Encoding(small.data()) == kSparse) {
    ASSERT_LE(small.size(), 30u);
    ASSERT_EQ(Set(small, i, 1 + i % 3, 30), 1);
    i += 2;
  }
  for (uint32_t k = 0; k < i; k += 2) EXPECT_EQ(DenseGet(small.data() + kHeaderSize, k), 1 + k % 3);
}

TEST(Hll, AdjacentValuesMerge) {
  StringBuffer b(NewSparse());
  ASSERT_EQ(Set(b, 0, 3, 3000), 1);
  ASSERT_EQ(Set(b, 1, 3, 3000), 1);
  ASSERT_EQ(Set(b, 2, 3, 3000), 1);
  EXPECT_EQ(DecodeSparse(b.str()), "v:3,3 Z:16381");
  ASSERT_EQ(Set(b, 3, 3, 3000), 1);
  EXPECT_EQ(DecodeSparse(b.str()), "v:3,4 Z:16380");
  ASSERT_EQ(Set(b, 4, 3, 3000), 1);
  EXPECT_EQ(DecodeSparse(b.str()), "v:3,4 v:3,1 Z:16379");
  ASSERT_EQ(Set(b, 2, 2, 3000), 0);
  ASSERT_EQ(Set(b, 2, 5, 3000), 1);
  EXPECT_EQ(DecodeSparse(b.str()), "v:3,2 v:5,1 v:3,2 Z:16379");
}

TEST(Hll, CorruptSparseFormsAreRefused) {
  std::string s = NewSparse();
  s.pop_back();  // an XZERO cut short: covers the wrong number of registers
  bool invalid = false;
  Count(s, &invalid);
  EXPECT_TRUE(invalid);
  uint8_t max[kRegisters] = {};
  EXPECT_FALSE(MergeInto(max, s));
  StringBuffer cut(s);
  EXPECT_FALSE(SparseToDense(cut));
  // VALs past the last register.
  std::string over = NewSparse();
  over += static_cast<char>(0x83);
  EXPECT_FALSE(MergeInto(max, over));
  // Nothing but the header: no opcode covers any register.
  StringBuffer empty(NewSparse().substr(0, kHeaderSize));
  EXPECT_EQ(Set(empty, 0, 1, 3000), -1);
  EXPECT_FALSE(LooksValid("HYLL"));
  EXPECT_FALSE(LooksValid(std::string("HYLX\x01", 5) + std::string(13, '\0')));
  EXPECT_FALSE(LooksValid(std::string("HYLL\x02", 5) + std::string(13, '\0')));
  EXPECT_FALSE(LooksValid(std::string("HYLL\x00", 5) + std::string(13, '\0')));
}

TEST(Hll, EstimateIsWithinTheStandardError) {
  StringBuffer b(NewSparse());
  const double relerr = 1.04 / std::sqrt(double{kRegisters});
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 1000000; j++) {
    const uint64_t e = j ^ 0x9e3779b97f4a7c15ULL;
    Add(b, std::string_view(reinterpret_cast<const char*>(&e), sizeof(e)), 3000);
    if (j == checkpoint) {
      const double err = std::fabs(double(j) - double(Count(b.str(), nullptr)));
      EXPECT_LE(err, std::ceil(relerr * 6 * double(j)) + (j == 10 ? 1 : 0)) << j;
      checkpoint *= 10;
    }
  }
  EXPECT_EQ(Encoding(b.data()), kDense);
}

TEST(Hll, CacheBytes) {
  std::string s = NewSparse();
  uint8_t* p = reinterpret_cast<uint8_t*>(s.data());
  SetCachedCardinality(p, 0x0102030405060708ULL);
  uint64_t card;
  ASSERT_TRUE(CachedCardinality(p, &card));
  EXPECT_EQ(card, 0x0102030405060708ULL);
  EXPECT_EQ(p[8], 0x08);
  InvalidateCache(p);
  EXPECT_FALSE(CachedCardinality(p, &card));
}

}  // namespace
}  // namespace peregrine::hll
