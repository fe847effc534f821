// Cross-thread messaging between shards (issue #5, docs/transactions.md):
// SpscRing, a bounded lock-free queue with one producer thread and one
// consumer thread (one per ordered pair of shards), and Waker, which lets a
// shard's thread sleep in its event loop and be woken by a producer only when
// it is actually asleep (no eventfd write while it is busy).
//
// Written by hand rather than taken from a library: the ring is a few lines
// around two atomics, and the wake-up protocol must be tied to our own event
// loop's sleep (no Debian-packaged library offers that pair; Boost.Lockfree's
// spsc_queue would cover the ring alone).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace peregrine {

// A bounded FIFO for exactly one producer thread and one consumer thread.
// `Capacity` must be a power of two. T must be trivially copyable (messages
// travel as pointers or small handles). Never blocks: a full ring refuses the
// push, and the producer keeps the message for later (it must never wait for
// a consumer that may be waiting for it).
template <typename T, size_t Capacity>
class SpscRing {
  static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0, "Capacity must be a power of two");
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  // Producer thread only. False if the ring is full.
  bool TryPush(const T& v) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ == Capacity) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail - cached_head_ == Capacity) return false;
    }
    slots_[tail & (Capacity - 1)] = v;
    tail_.store(tail + 1, std::memory_order_release);  // publishes the slot
    return true;
  }

  // Producer thread only. Pushes as many of the `n` messages as fit, in
  // order, and publishes them with one store; returns how many.
  size_t PushBatch(const T* items, size_t n) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (Capacity - (tail - cached_head_) < n) cached_head_ = head_.load(std::memory_order_acquire);
    const size_t room = static_cast<size_t>(Capacity - (tail - cached_head_));
    if (n > room) n = room;
    for (size_t i = 0; i < n; i++) slots_[(tail + i) & (Capacity - 1)] = items[i];
    if (n > 0) tail_.store(tail + n, std::memory_order_release);  // publishes the slots
    return n;
  }

  // Consumer thread only. Moves up to `max` messages into `out`, oldest
  // first; returns how many.
  size_t PopBatch(T* out, size_t max) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    // Look at the producer's line only when what is known to be there
    // would not fill the batch.
    if (cached_tail_ - head < max) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (cached_tail_ == head) return 0;
    }
    size_t n = static_cast<size_t>(cached_tail_ - head);
    if (n > max) n = max;
    for (size_t i = 0; i < n; i++) out[i] = slots_[(head + i) & (Capacity - 1)];
    head_.store(head + n, std::memory_order_release);  // frees the slots
    return n;
  }

  // Either thread; a snapshot.
  bool empty() const {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }
  static constexpr size_t capacity() { return Capacity; }

 private:
  // The producer's line: where it writes next, and its last view of head_.
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t cached_head_ = 0;
  // The consumer's line.
  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  alignas(64) T slots_[Capacity] = {};
};

// The ring between two workers: one per ordered pair (Server::ring).
using MailRing = SpscRing<uint64_t, 1024>;

// Wakes a thread that sleeps in its event loop, only when it sleeps.
//
// One 64-bit word: a count that every notification advances by 2, and bit 0,
// "asleep". The sleeper (the thread that owns the Waker):
//   1. seen = Prepare()            before looking at its rings;
//   2. drains its rings, handles its events;
//   3. if it found nothing to do: if TrySleep(seen) it may block on fd()
//      (epoll), then calls Woke(); if TrySleep fails, something arrived
//      after step 1: go back to 1.
// A producer pushes its messages, then calls Notify(). Every operation on
// the word is a read-modify-write, so they are totally ordered: either the
// producer's add comes before the sleeper's compare-and-swap (which then
// fails, and its acquire makes the messages visible), or after it (and the
// producer sees bit 0 and writes the eventfd). Of several producers, the one
// that clears bit 0 writes; an eventfd write that lands after the sleeper
// has woken only makes its next epoll_wait return at once.
class Waker {
 public:
  Waker();
  ~Waker();
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;

  // The eventfd to watch for readability while asleep.
  int fd() const { return fd_; }

  // Sleeper side (the owning thread).
  uint64_t Prepare() const { return state_.load(std::memory_order_acquire); }
  bool TrySleep(uint64_t seen) {
    return state_.compare_exchange_strong(seen, seen | 1, std::memory_order_acq_rel, std::memory_order_acquire);
  }
  // After blocking (or deciding not to): clears "asleep" and empties the
  // eventfd.
  void Woke() {
    Awake();
    ConsumeSignal();
  }
  // The two halves of Woke(), for an event loop that watches fd() itself:
  // Awake() after every wait, ConsumeSignal() only when fd() was readable
  // (saves a read() per wake-up that the Waker did not cause).
  void Awake() { state_.fetch_and(~uint64_t{1}, std::memory_order_acq_rel); }
  void ConsumeSignal();

  // Producer side (any other thread), after its messages are pushed.
  void Notify() {
    const uint64_t prev = state_.fetch_add(2, std::memory_order_acq_rel);
    if ((prev & 1) && (state_.fetch_and(~uint64_t{1}, std::memory_order_acq_rel) & 1)) Signal();
  }

  // How many times Notify() wrote the eventfd (tests, stats).
  uint64_t signals() const { return signals_.load(std::memory_order_relaxed); }

 private:
  void Signal();

  alignas(64) std::atomic<uint64_t> state_{0};
  std::atomic<uint64_t> signals_{0};
  int fd_ = -1;
};

}  // namespace peregrine
