// Unit tests for EventLoop: readiness dispatch, the tick, the before-sleep
// hook and the wait bounds, through Poll (one iteration, as the fuzzer drives
// the loop) and Run/Stop.
#include "net/event_loop.h"

#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace peregrine {
namespace {

struct Reader final : IoHandler {
  explicit Reader(int fd) : fd(fd) {}
  void OnEvent(uint32_t events) override {
    this->events |= events;
    char buf[64];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
  }
  int fd;
  uint32_t events = 0;
  std::string got;
};

class EventLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv_), 0);
  }
  void TearDown() override {
    close(sv_[0]);
    close(sv_[1]);
  }
  int sv_[2];
};

TEST_F(EventLoopTest, PollDispatchesReadyFdAndRunsBeforeSleep) {
  EventLoop loop;
  ASSERT_TRUE(loop.ok());
  Reader r(sv_[0]);
  ASSERT_TRUE(loop.Add(sv_[0], EPOLLIN, &r));
  int before_sleep = 0;
  loop.SetBeforeSleep([&] { before_sleep++; });

  loop.Poll(0);  // nothing ready: returns at once
  EXPECT_EQ(r.got, "");
  EXPECT_EQ(before_sleep, 1);
  EXPECT_GT(loop.iteration_ms(), 0);

  ASSERT_EQ(write(sv_[1], "hello", 5), 5);
  loop.Poll(1000);  // ready: does not wait the whole second
  EXPECT_EQ(r.got, "hello");
  EXPECT_TRUE(r.events & EPOLLIN);
  EXPECT_EQ(before_sleep, 2);

  loop.Remove(sv_[0]);
  ASSERT_EQ(write(sv_[1], "x", 1), 1);
  loop.Poll(0);
  EXPECT_EQ(r.got, "hello") << "removed fds are not dispatched";
}

TEST_F(EventLoopTest, PollWaitsAtMostItsBound) {
  EventLoop loop;
  const int64_t t0 = MonotonicMs();
  loop.Poll(20);
  const int64_t waited = MonotonicMs() - t0;
  EXPECT_GE(waited, 15);
  EXPECT_LT(waited, 2000);
}

TEST_F(EventLoopTest, TickRunsWhenDueUnderPollAndRun) {
  EventLoop loop;
  int ticks = 0;
  loop.SetTick(5, [&] { ticks++; });
  const int64_t deadline = MonotonicMs() + 2000;
  while (ticks < 2 && MonotonicMs() < deadline) loop.Poll(50);  // the tick bounds the wait
  EXPECT_GE(ticks, 2);

  // Run() until a tick stops it.
  ticks = 0;
  loop.SetTick(1, [&] {
    if (++ticks == 3) loop.Stop();
  });
  loop.Run();
  EXPECT_EQ(ticks, 3);
}

TEST_F(EventLoopTest, WaitHooksBoundTheWait) {
  EventLoop loop;
  int before = 0, after = 0;
  loop.SetWaitHooks(
      [&] {
        before++;
        return 0;  // work to come back to: do not block
      },
      [&] { after++; });
  const int64_t t0 = MonotonicMs();
  loop.Poll(5000);
  EXPECT_LT(MonotonicMs() - t0, 1000);
  EXPECT_EQ(before, 1);
  EXPECT_EQ(after, 1);
}

}  // namespace
}  // namespace peregrine
