// Keyspace accounting across threads: each thread counts its own bytes, and
// the total over threads (those that exited included) is what was allocated
// and not freed.
#include "core/memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace peregrine {
namespace {

TEST(KeyspaceBytes, PerThreadAndTotal) {
  const int64_t total_before = TotalKeyspaceBytes();
  const int64_t mine_before = KeyspaceBytes();
  void* p = CountedAlloc(1000);
  const int64_t size = static_cast<int64_t>(CountedUsableSize(p));
  EXPECT_GE(size, 1000);
  EXPECT_EQ(KeyspaceBytes() - mine_before, size);
  EXPECT_EQ(TotalKeyspaceBytes() - total_before, size);

  // Another thread allocates; its bytes show in the total, not in this
  // thread's figure.
  void* q = nullptr;
  int64_t other = 0;
  std::thread t([&] {
    q = CountedAlloc(5000);
    other = KeyspaceBytes();
  });
  t.join();
  EXPECT_EQ(other, static_cast<int64_t>(CountedUsableSize(q)));
  EXPECT_EQ(KeyspaceBytes() - mine_before, size);
  // The thread has exited: its count is retired into the total.
  EXPECT_EQ(TotalKeyspaceBytes() - total_before, size + other);

  // Freed on this thread (a block from another shard's thread, as a command
  // over several shards does): the total is right again, this thread's
  // figure goes below what it allocated.
  CountedFree(q);
  EXPECT_EQ(TotalKeyspaceBytes() - total_before, size);
  EXPECT_EQ(KeyspaceBytes() - mine_before, size - other);
  CountedFree(p);
  EXPECT_EQ(TotalKeyspaceBytes(), total_before);
}

TEST(KeyspaceBytes, ManyThreadsConcurrently) {
  const int64_t before = TotalKeyspaceBytes();
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  std::vector<void*> kept(kThreads);
  for (int i = 0; i < kThreads; i++) {
    threads.emplace_back([&, i] {
      // Churn, then keep one block of 100 bytes per thread.
      for (int n = 0; n < 20000; n++) CountedFree(CountedAlloc(static_cast<size_t>(16 + n % 200)));
      kept[static_cast<size_t>(i)] = CountedAlloc(100);
      ready.fetch_add(1);
      while (!stop.load()) std::this_thread::yield();
    });
  }
  while (ready.load() < kThreads) {
    (void)TotalKeyspaceBytes();  // read while they write (TSan checks this)
    std::this_thread::yield();
  }
  int64_t expected = 0;
  for (void* p : kept) expected += static_cast<int64_t>(CountedUsableSize(p));
  EXPECT_EQ(TotalKeyspaceBytes() - before, expected);
  stop.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(TotalKeyspaceBytes() - before, expected);
  for (void* p : kept) CountedFree(p);
  EXPECT_EQ(TotalKeyspaceBytes(), before);
}

}  // namespace
}  // namespace peregrine
