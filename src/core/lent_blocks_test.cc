// Lent blocks: references counted per block, a released block kept until its
// last reference, the keyspace count dropping at release, and a randomized
// check of the table against a model (growth and deletion by backward shift
// included). Under ASan a block freed too early or never is reported.
#include "core/lent_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "core/memory.h"

namespace peregrine {
namespace {

char* NewBlock(size_t n, char fill) {
  char* p = static_cast<char*>(CountedAlloc(n));
  std::memset(p, fill, n);
  return p;
}

TEST(LentBlocks, LendAndReturn) {
  char* b = NewBlock(100, 'a');
  EXPECT_FALSE(lent_blocks::IsLent(b));
  const size_t before = lent_blocks::LentCount();
  lent_blocks::Lend(b);
  lent_blocks::Lend(b);
  EXPECT_TRUE(lent_blocks::IsLent(b));
  EXPECT_EQ(lent_blocks::LentCount(), before + 1);
  lent_blocks::Return(b);
  EXPECT_TRUE(lent_blocks::IsLent(b));
  lent_blocks::Return(b);
  EXPECT_FALSE(lent_blocks::IsLent(b));
  EXPECT_EQ(lent_blocks::LentCount(), before);
  CountedFree(b);
}

TEST(LentBlocks, ReturnOfABlockNeverLentIsIgnored) {
  char* b = NewBlock(10, 'x');
  lent_blocks::Return(b);
  EXPECT_FALSE(lent_blocks::IsLent(b));
  CountedFree(b);
}

TEST(LentBlocks, ReleasedWhileLentLivesUntilTheLastReturn) {
  const int64_t base = KeyspaceBytes();
  char* b = NewBlock(4000, 'z');
  const int64_t size = static_cast<int64_t>(CountedUsableSize(b));
  EXPECT_EQ(KeyspaceBytes() - base, size);
  lent_blocks::Lend(b);
  lent_blocks::Lend(b);
  lent_blocks::Release(b);
  // The keyspace no longer holds it; the replies still do.
  EXPECT_EQ(KeyspaceBytes() - base, 0);
  EXPECT_TRUE(lent_blocks::IsLent(b));
  lent_blocks::Return(b);
  EXPECT_EQ(b[0], 'z');  // still allocated (ASan would report otherwise)
  EXPECT_EQ(b[3999], 'z');
  lent_blocks::Return(b);  // frees it
  EXPECT_FALSE(lent_blocks::IsLent(b));
  EXPECT_EQ(KeyspaceBytes() - base, 0);
}

TEST(LentBlocks, ReleasedWhenNotLentIsFreedAtOnce) {
  const int64_t base = KeyspaceBytes();
  char* b = NewBlock(3000, 'q');
  lent_blocks::Lend(b);
  lent_blocks::Return(b);
  lent_blocks::Release(b);
  EXPECT_EQ(KeyspaceBytes() - base, 0);
  EXPECT_EQ(lent_blocks::LentCount(), 0u);
}

TEST(LentBlocks, TablesArePerThread) {
  char* b = NewBlock(64, 'm');
  lent_blocks::Lend(b);
  bool seen_elsewhere = true;
  std::thread t([&] { seen_elsewhere = lent_blocks::IsLent(b); });
  t.join();
  EXPECT_FALSE(seen_elsewhere);
  EXPECT_TRUE(lent_blocks::IsLent(b));
  lent_blocks::Return(b);
  CountedFree(b);
}

// Random Lend / Return / Release over many blocks against a model, with the
// table growing to thousands of members and shrinking back.
TEST(LentBlocks, RandomizedAgainstAModel) {
  std::mt19937_64 rng(20261123);
  struct Model {
    int refs = 0;
    bool released = false;
    char fill = 0;
  };
  std::map<char*, Model> model;
  std::vector<char*> live;  // blocks allocated and not yet freed
  const int64_t base = KeyspaceBytes();
  int64_t owned_bytes = 0;  // bytes of blocks not yet released
  for (int step = 0; step < 200000; step++) {
    const int op = static_cast<int>(rng() % 100);
    if (live.empty() || (op < 15 && live.size() < 5000)) {
      const char fill = static_cast<char>('a' + rng() % 26);
      char* b = NewBlock(16 + rng() % 200, fill);
      owned_bytes += static_cast<int64_t>(CountedUsableSize(b));
      live.push_back(b);
      model[b] = Model{0, false, fill};
      continue;
    }
    const size_t i = rng() % live.size();
    char* b = live[i];
    Model& m = model[b];
    ASSERT_EQ(b[0], m.fill);  // never freed under a reference
    if (op < 55) {
      lent_blocks::Lend(b);
      m.refs++;
    } else if (op < 85) {
      if (m.refs == 0) continue;
      m.refs--;
      lent_blocks::Return(b);
      if (m.refs == 0 && m.released) {
        live[i] = live.back();
        live.pop_back();
        model.erase(b);
        continue;
      }
    } else if (!m.released) {
      owned_bytes -= static_cast<int64_t>(CountedUsableSize(b));
      lent_blocks::Release(b);
      m.released = true;
      if (m.refs == 0) {
        live[i] = live.back();
        live.pop_back();
        model.erase(b);
        continue;
      }
    }
    ASSERT_EQ(lent_blocks::IsLent(b), m.refs > 0);
    if (step % 1000 == 0) {
      size_t lent = 0;
      for (const auto& [blk, mm] : model) {
        ASSERT_EQ(lent_blocks::IsLent(blk), mm.refs > 0);
        lent += mm.refs > 0;
      }
      ASSERT_EQ(lent_blocks::LentCount(), lent);
      ASSERT_EQ(KeyspaceBytes() - base, owned_bytes);
    }
  }
  // Drain: every reference back, every block released.
  for (auto& [b, m] : model) {
    while (m.refs-- > 0) lent_blocks::Return(b);
    if (!m.released) lent_blocks::Release(b);
  }
  EXPECT_EQ(lent_blocks::LentCount(), 0u);
  EXPECT_EQ(KeyspaceBytes() - base, 0);
}

}  // namespace
}  // namespace peregrine
