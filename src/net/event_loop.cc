// epoll event loop (see event_loop.h).
#include "net/event_loop.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

namespace peregrine {

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int64_t MonotonicUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

int64_t UnixTimeMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int64_t UnixTimeUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

EventLoop::EventLoop() : epfd_(epoll_create1(EPOLL_CLOEXEC)) {}

EventLoop::~EventLoop() {
  if (epfd_ >= 0) close(epfd_);
}

bool EventLoop::Add(int fd, uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool EventLoop::Modify(int fd, uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void EventLoop::Remove(int fd) { epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr); }

void EventLoop::SetTick(int interval_ms, std::function<void()> tick) {
  tick_interval_ms_ = interval_ms > 0 ? interval_ms : 1;
  tick_ = std::move(tick);
  next_tick_ms_ = MonotonicMs() + tick_interval_ms_;
}

void EventLoop::StartClock() {
  iter_ms_ = UnixTimeMs();
  iter_tsc_ = CycleClock::Now();
  ms_per_tick_ = 1.0 / (CycleClock::TicksPerUs() * 1000.0);
}

void EventLoop::Run() {
  running_ = true;
  StartClock();
  while (running_ && Iterate(-1)) {
  }
}

void EventLoop::DispatchReady(bool (*only)(IoHandler*)) {
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  const int n = epoll_wait(epfd_, events, kMaxEvents, 0);
  for (int i = 0; i < n; i++) {
    auto* h = static_cast<IoHandler*>(events[i].data.ptr);
    if (only == nullptr || only(h)) h->OnEvent(events[i].events);
  }
}

bool EventLoop::HasReadyEvents() const {
  pollfd p{epfd_, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

void EventLoop::Poll(int max_wait_ms) {
  if (iter_tsc_ == 0) StartClock();
  Iterate(max_wait_ms < 0 ? 0 : max_wait_ms);
}

bool EventLoop::Iterate(int cap_ms) {
  constexpr int kMaxEvents = 256;
  epoll_event events[kMaxEvents];
  int timeout = -1;
  if (tick_) {
    int64_t now = MonotonicMs();
    timeout = next_tick_ms_ > now ? static_cast<int>(next_tick_ms_ - now) : 0;
  }
  if (wake_within_ms_ >= 0) {
    timeout = timeout < 0 ? wake_within_ms_ : std::min(timeout, wake_within_ms_);
    wake_within_ms_ = -1;
  }
  if (before_wait_) {
    // (Its work counts as the loop's: mail served, a spin for more.)
    const uint64_t start = CycleClock::Now();
    const int cap = before_wait_();
    stats_.ticks += CycleClock::Now() - start;
    if (cap >= 0) timeout = timeout < 0 ? cap : std::min(timeout, cap);
  }
  if (cap_ms >= 0) timeout = timeout < 0 ? cap_ms : std::min(timeout, cap_ms);
  int n = epoll_wait(epfd_, events, kMaxEvents, timeout);
  if (after_wait_) after_wait_();
  if (n < 0 && errno != EINTR) return false;
  StartClock();
  for (int i = 0; i < n; i++) static_cast<IoHandler*>(events[i].data.ptr)->OnEvent(events[i].events);
  if (tick_) {
    int64_t now = MonotonicMs();
    if (now >= next_tick_ms_) {
      const uint64_t t = CycleClock::Now();
      tick_();
      stats_.cron_ticks += CycleClock::Now() - t;
      next_tick_ms_ = now + tick_interval_ms_;
    }
  }
  if (before_sleep_) before_sleep_();
  const uint64_t took = CycleClock::Now() - iter_tsc_;
  stats_.cycles++;
  stats_.ticks += took;
  stats_.max_ticks = std::max(stats_.max_ticks, took);
  return true;
}

}  // namespace peregrine
