// The one clock of all tools: the TSC where it is invariant, else CLOCK_MONOTONIC; chosen once.
#pragma once

#include <time.h>
#include <x86intrin.h>

#include <cstdint>

#include "mpe/tool.h"

namespace mpe::clock {

extern bool g_use_tsc MPE_HIDDEN;

// Ticks since an arbitrary origin. ~7 ns with the TSC, ~20-40 ns with clock_gettime.
inline uint64_t now() {
  if (g_use_tsc) return __rdtsc();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace mpe::clock

extern "C" {
// Ticks of the active core's clock (for tools outside the hot path).
MPE_EXPORT uint64_t mpe_clock_now();
// Ticks per second of the active core's clock, calibrated against CLOCK_MONOTONIC.
MPE_EXPORT double mpe_clock_ticks_per_second();
// "tsc" or "monotonic".
MPE_EXPORT const char* mpe_clock_name();
}
