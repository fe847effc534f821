// Unit tests for SpscRing and Waker: FIFO order and no loss across two
// threads, full-ring refusal, and the wake-up protocol (no lost wake-up over
// many sleep/wake cycles; no eventfd write while the consumer is awake).
// The ThreadSanitizer build runs these too (make test-tsan).
#include "server/mailbox.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace peregrine {
namespace {

TEST(SpscRing, FifoAndFullRingRefuses) {
  SpscRing<uint64_t, 8> ring;
  uint64_t out[16];
  EXPECT_EQ(ring.PopBatch(out, 16), 0u);
  EXPECT_TRUE(ring.empty());
  for (uint64_t i = 0; i < 8; i++) EXPECT_TRUE(ring.TryPush(i));
  EXPECT_FALSE(ring.TryPush(99)) << "full";
  EXPECT_EQ(ring.PopBatch(out, 3), 3u);
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[2], 2u);
  EXPECT_TRUE(ring.TryPush(8));
  EXPECT_EQ(ring.PopBatch(out, 16), 6u);
  for (uint64_t i = 0; i < 6; i++) EXPECT_EQ(out[i], i + 3);
  EXPECT_TRUE(ring.empty());
  // Many times around the ring.
  uint64_t next_in = 100, next_out = 100;
  for (int round = 0; round < 1000; round++) {
    const int n = round % 9;
    for (int i = 0; i < n; i++)
      if (ring.TryPush(next_in)) next_in++;
    const size_t got = ring.PopBatch(out, static_cast<size_t>(round % 5 + 1));
    for (size_t i = 0; i < got; i++) ASSERT_EQ(out[i], next_out++);
  }
}

TEST(SpscRing, TwoThreadsKeepOrderAndLoseNothing) {
  constexpr uint64_t kCount = 2'000'000;
  SpscRing<uint64_t, 256> ring;
  std::thread producer([&] {
    std::mt19937 rng(1);
    for (uint64_t i = 0; i < kCount;) {
      if (ring.TryPush(i))
        i++;
      else if (rng() % 4 == 0)
        std::this_thread::yield();
    }
  });
  uint64_t expect = 0;
  bool in_order = true;
  uint64_t buf[64];
  while (expect < kCount) {
    const size_t n = ring.PopBatch(buf, 64);
    for (size_t i = 0; i < n; i++) in_order &= buf[i] == expect++;
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_TRUE(ring.empty());
}

TEST(SpscRing, PushBatchTakesWhatFitsInOrder) {
  SpscRing<uint64_t, 8> ring;
  uint64_t in[12], out[16];
  for (uint64_t i = 0; i < 12; i++) in[i] = i;
  EXPECT_EQ(ring.PushBatch(in, 0), 0u);
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.PushBatch(in, 5), 5u);
  EXPECT_EQ(ring.PushBatch(in + 5, 7), 3u) << "only the room left";
  EXPECT_EQ(ring.PushBatch(in + 8, 4), 0u) << "full";
  EXPECT_EQ(ring.PopBatch(out, 2), 2u);
  EXPECT_EQ(ring.PushBatch(in + 8, 4), 2u) << "the room the pop made";
  EXPECT_EQ(ring.PopBatch(out, 16), 8u);
  for (uint64_t i = 0; i < 8; i++) EXPECT_EQ(out[i], i + 2);
}

TEST(SpscRing, PushBatchAcrossThreadsKeepsOrder) {
  constexpr uint64_t kCount = 1'000'000;
  SpscRing<uint64_t, 64> ring;
  std::thread producer([&] {
    std::mt19937 rng(2);
    uint64_t batch[24];
    for (uint64_t i = 0; i < kCount;) {
      const size_t want = std::min<uint64_t>(1 + rng() % 24, kCount - i);
      for (size_t j = 0; j < want; j++) batch[j] = i + j;
      const size_t n = ring.PushBatch(batch, want);
      i += n;
      if (n < want && rng() % 4 == 0) std::this_thread::yield();
    }
  });
  uint64_t expect = 0;
  bool in_order = true;
  uint64_t buf[64];
  while (expect < kCount) {
    const size_t n = ring.PopBatch(buf, 1 + expect % 64);
    for (size_t i = 0; i < n; i++) in_order &= buf[i] == expect++;
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_TRUE(ring.empty());
}

// The consumer sleeps in poll() whenever its ring is empty; the producer
// sends one message at a time and waits for it to be consumed. A lost
// wake-up leaves the consumer asleep (its poll has no timeout to speak of),
// which the producer notices as a message not consumed within 5 s.
TEST(Waker, NoLostWakeUpsOverManySleeps) {
  constexpr uint64_t kRounds = 20'000;
  SpscRing<uint64_t, 64> ring;
  Waker waker;
  std::atomic<uint64_t> consumed{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sleeps{0};
  std::thread consumer([&] {
    uint64_t buf[64];
    while (!stop.load(std::memory_order_acquire)) {
      const uint64_t seen = waker.Prepare();
      const size_t n = ring.PopBatch(buf, 64);
      if (n > 0) {
        consumed.fetch_add(n, std::memory_order_release);
        continue;
      }
      if (!waker.TrySleep(seen)) continue;
      sleeps.fetch_add(1, std::memory_order_relaxed);
      pollfd p{waker.fd(), POLLIN, 0};
      poll(&p, 1, 60'000);
      waker.Woke();
    }
  });
  std::mt19937 rng(7);
  bool lost = false;
  for (uint64_t i = 0; i < kRounds && !lost; i++) {
    while (!ring.TryPush(i)) {
    }
    waker.Notify();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (consumed.load(std::memory_order_acquire) <= i) {
      if (std::chrono::steady_clock::now() > deadline) {
        lost = true;
        break;
      }
      if (rng() % 2) std::this_thread::yield();
    }
  }
  stop.store(true, std::memory_order_release);
  waker.Notify();
  consumer.join();
  EXPECT_FALSE(lost) << "a message sat in the ring while its consumer slept";
  EXPECT_EQ(consumed.load(), kRounds);
  // The test only means something if the consumer did sleep, often.
  EXPECT_GT(sleeps.load(), kRounds / 20);
  EXPECT_LE(waker.signals(), kRounds + 1);
}

// While the consumer never sleeps, notifications cost no system call.
TEST(Waker, NoSignalWhileTheConsumerIsAwake) {
  Waker waker;
  for (int i = 0; i < 1000; i++) waker.Notify();
  EXPECT_EQ(waker.signals(), 0u);
  // Asleep: exactly one signal however many producers notify.
  uint64_t seen = waker.Prepare();
  ASSERT_TRUE(waker.TrySleep(seen));
  for (int i = 0; i < 10; i++) waker.Notify();
  EXPECT_EQ(waker.signals(), 1u);
  pollfd p{waker.fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1) << "the eventfd is readable";
  waker.Woke();
  EXPECT_EQ(poll(&p, 1, 0), 0) << "and emptied by Woke()";
  // A notification between Prepare and TrySleep makes TrySleep fail.
  seen = waker.Prepare();
  waker.Notify();
  EXPECT_FALSE(waker.TrySleep(seen));
  EXPECT_EQ(waker.signals(), 1u);
}

}  // namespace
}  // namespace peregrine
