// Cheap time for the request path. Reading the clock with clock_gettime costs
// 20-50 ns even through the vDSO; the CPU's invariant time-stamp counter costs
// a few. The server reads the real clock once per event-loop iteration and
// derives each command's time and duration from the TSC.
#pragma once

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

  static double ToMicros(uint64_t ticks) { return static_cast<double>(ticks) / TicksPerUs(); }
};

}  // namespace peregrine
