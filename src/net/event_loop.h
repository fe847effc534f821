// The event loop: epoll over file descriptors plus one periodic timer. One
// loop per thread; every method must be called on the loop's own thread.
// (io_uring may later sit behind the same interface.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "net/clock.h"

namespace peregrine {

// Receives readiness events for one file descriptor. The loop holds a raw
// pointer: a handler must be removed (Remove) before it is destroyed, and a
// handler destroyed while a batch of events is being dispatched must be
// destroyed only after the batch (see EventLoop::Defer).
class IoHandler {
 public:
  virtual ~IoHandler() = default;
  // `events` is a mask of EPOLLIN / EPOLLOUT / EPOLLERR / EPOLLHUP.
  virtual void OnEvent(uint32_t events) = 0;
  // Whether the handler runs while its worker is parked during a busy
  // script (clients and listeners: they are answered -BUSY meanwhile).
  virtual bool ServedWhileParked() const { return false; }
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  bool ok() const { return epfd_ >= 0; }

  bool Add(int fd, uint32_t events, IoHandler* handler);
  bool Modify(int fd, uint32_t events, IoHandler* handler);
  void Remove(int fd);

  // Calls `tick` every `interval_ms` (the server cron).
  void SetTick(int interval_ms, std::function<void()> tick);

  // Called after every batch of events, before the loop sleeps again: the
  // place to flush replies once per batch.
  void SetBeforeSleep(std::function<void()> fn) { before_sleep_ = std::move(fn); }

  // Hooks around the wait for events (threads with a mailbox): `before_wait`
  // runs just before each wait and returns the longest the wait may last in
  // ms (-1: no limit of its own, 0: do not block, there is work to come back
  // to); `after_wait` runs after every wait. Unset, the loop pays nothing.
  void SetWaitHooks(std::function<int()> before_wait, std::function<void()> after_wait) {
    before_wait_ = std::move(before_wait);
    after_wait_ = std::move(after_wait);
  }
  // Whether a wait now would return events at once (it consumes none).
  bool HasReadyEvents() const;

  // Makes the next wait last at most `ms` milliseconds (one-shot), for work
  // that must continue soon even if no event arrives.
  void WakeWithin(int ms) { wake_within_ms_ = wake_within_ms_ < 0 ? ms : std::min(wake_within_ms_, ms); }

  // Runs until Stop() is called.
  void Run();
  void Stop() { running_ = false; }
  // One iteration without Run(): waits at most `max_wait_ms` for events,
  // handles them, runs the tick if due and the before-sleep hook. For a
  // caller that drives the loop itself (the fuzzer's in-process connection).
  void Poll(int max_wait_ms);
  // Only the events ready now, handled: no wait, no tick, no hooks (a
  // worker busy with a long script answering other clients meanwhile).
  // With `only`, just the events of handlers it accepts.
  void DispatchReady(bool (*only)(IoHandler*) = nullptr);

  // INFO's eventloop_* (Redis 7.2): iterations, and the CycleClock ticks
  // from each wake-up to the end of its before-sleep hook, plus the
  // before-wait hook's (all, the longest, the tick's part).
  // `max_progress`: the most a count the owner reports once per iteration
  // (NoteProgress: commands processed) grew in one.
  struct Stats {
    uint64_t cycles = 0, ticks = 0, max_ticks = 0, cron_ticks = 0, max_progress = 0;
  };
  const Stats& stats() const { return stats_; }
  void ResetStats() {
    stats_ = Stats{};
    last_progress_ = 0;
  }
  void NoteProgress(uint64_t total) {
    stats_.max_progress = std::max(stats_.max_progress, total - last_progress_);
    last_progress_ = total;
  }

  // Wall-clock unix ms read once when the current iteration woke up.
  int64_t iteration_ms() const { return iter_ms_; }
  // Wall-clock unix ms at TSC reading `tsc` (taken during this iteration),
  // without another clock_gettime.
  int64_t MsAt(uint64_t tsc) const {
    return iter_ms_ + static_cast<int64_t>(static_cast<double>(tsc - iter_tsc_) * ms_per_tick_);
  }

 private:
  // One wait-and-dispatch round; the wait lasts at most `cap_ms` (-1: as
  // long as the tick and the hooks allow).
  bool Iterate(int cap_ms);
  void StartClock();

  int epfd_ = -1;
  bool running_ = false;
  int tick_interval_ms_ = 100;
  int wake_within_ms_ = -1;
  int64_t iter_ms_ = 0;
  uint64_t iter_tsc_ = 0;
  double ms_per_tick_ = 0;  // refreshed every iteration from the calibration
  int64_t next_tick_ms_ = 0;
  std::function<void()> tick_;
  std::function<void()> before_sleep_;
  std::function<int()> before_wait_;
  std::function<void()> after_wait_;
  Stats stats_;
  uint64_t last_progress_ = 0;
};

// Monotonic milliseconds, for timers.
int64_t MonotonicMs();
// Monotonic microseconds, for command timing.
int64_t MonotonicUs();
// Wall-clock unix time in milliseconds and microseconds.
int64_t UnixTimeMs();
int64_t UnixTimeUs();

}  // namespace peregrine
