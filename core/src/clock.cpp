// Chooses the clock once and calibrates TSC ticks against CLOCK_MONOTONIC.
#include "mpe/clock.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>

namespace mpe::clock {

namespace {

bool tsc_is_invariant() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;  // "Invariant TSC": constant rate across P-, C- and T-states
}

bool choose_tsc() {
  const char* forced = std::getenv("MPE_CLOCK");
  if (forced && std::strcmp(forced, "monotonic") == 0) return false;
  if (forced && std::strcmp(forced, "tsc") == 0) return true;
  return tsc_is_invariant();
}

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The reference pair taken at load; calibration stretches from here to the moment of asking,
// so the longer the run, the more exact the rate.
uint64_t g_ref_ticks;
uint64_t g_ref_ns;

__attribute__((constructor(101))) void init_clock() {
  g_use_tsc = choose_tsc();
  g_ref_ns = monotonic_ns();
  g_ref_ticks = now();
}

}  // namespace

bool g_use_tsc;

}  // namespace mpe::clock

extern "C" uint64_t mpe_clock_now() { return mpe::clock::now(); }

extern "C" double mpe_clock_ticks_per_second() {
  using namespace mpe::clock;
  if (!g_use_tsc) return 1e9;
  uint64_t ns = monotonic_ns() - g_ref_ns;
  if (ns < 20000000) {  // under 20 ms since load: wait until the span is long enough
    const uint64_t until = g_ref_ns + 20000000;
    while (monotonic_ns() < until) {
    }
  }
  ns = monotonic_ns() - g_ref_ns;
  const uint64_t ticks = now() - g_ref_ticks;
  return static_cast<double>(ticks) * 1e9 / static_cast<double>(ns);
}

extern "C" const char* mpe_clock_name() { return mpe::clock::g_use_tsc ? "tsc" : "monotonic"; }
