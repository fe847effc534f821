// Cheap time for the request path. Reading the clock with clock_gettime costs
// 20-50 ns even through the vDSO; the CPU's invariant time-stamp counter costs
// a few. The server reads the real clock once per event-loop iteration and
// derives each command's time and duration from the TSC.
#pragma once

#include <atomic>
#include <cstdint>

namespace peregrine {

class CycleClock {
 public:
  // The time-stamp counter (monotonic, constant rate on every CPU this runs on).
  static uint64_t Now() { return __builtin_ia32_rdtsc(); }

  // Counter ticks per microsecond, measured once at start-up and refined by
  // Recalibrate(). Never 0.
  static double TicksPerUs();

  // Refines TicksPerUs() from the monotonic clock over the whole run so far.
  // Call now and then (the server cron does).
  static void Recalibrate();

  // (Every command converts its run time: a multiplication by the cached
  // inverse, no call; 0 until the first calibration, which TicksPerUs makes.)
  static double ToMicros(uint64_t ticks) {
    double us_per_tick = us_per_tick_.load(std::memory_order_relaxed);
    if (us_per_tick == 0) [[unlikely]]
      us_per_tick = 1.0 / TicksPerUs();
    return static_cast<double>(ticks) * us_per_tick;
  }

  // 1 / TicksPerUs(), kept by the calibration (clock.cc).
  static inline std::atomic<double> us_per_tick_{0};
};

}  // namespace peregrine
