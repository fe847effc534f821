// TSC calibration (see clock.h).
#include "net/clock.h"

#include <atomic>
#include <ctime>

namespace peregrine {
namespace {

uint64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

struct Calibration {
  uint64_t tsc0;
  uint64_t ns0;
  std::atomic<double> ticks_per_us;

  Calibration() {
    // A first estimate over ~2 ms of busy waiting.
    tsc0 = CycleClock::Now();
    ns0 = MonoNs();
    uint64_t ns;
    do {
      ns = MonoNs();
    } while (ns - ns0 < 2000000);
    double r = static_cast<double>(CycleClock::Now() - tsc0) * 1000.0 / static_cast<double>(ns - ns0);
    ticks_per_us.store(r > 0 ? r : 1.0);
    CycleClock::us_per_tick_.store(1.0 / ticks_per_us.load());
  }
};

Calibration& State() {
  static Calibration c;
  return c;
}

}  // namespace

double CycleClock::TicksPerUs() { return State().ticks_per_us.load(std::memory_order_relaxed); }

void CycleClock::Recalibrate() {
  Calibration& c = State();
  uint64_t ns = MonoNs();
  uint64_t tsc = Now();
  if (ns - c.ns0 < 100000000) return;  // wait for 100 ms of history
  double r = static_cast<double>(tsc - c.tsc0) * 1000.0 / static_cast<double>(ns - c.ns0);
  if (r > 0) {
    c.ticks_per_us.store(r, std::memory_order_relaxed);
    CycleClock::us_per_tick_.store(1.0 / r, std::memory_order_relaxed);
  }
}

}  // namespace peregrine
