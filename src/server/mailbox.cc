// Waker's eventfd (see mailbox.h).
#include "server/mailbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace peregrine {

Waker::Waker() {
  fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) {
    std::perror("eventfd");
    std::abort();
  }
}

Waker::~Waker() {
  if (fd_ >= 0) close(fd_);
}

void Waker::ConsumeSignal() {
  uint64_t n;
  // Non-blocking: empty when the producer has not written (yet).
  while (read(fd_, &n, sizeof(n)) < 0 && errno == EINTR) {
  }
}

void Waker::Signal() {
  signals_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t one = 1;
  // The counter cannot overflow (it is emptied on every wake-up), so the
  // write only fails on EINTR.
  while (write(fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

}  // namespace peregrine
