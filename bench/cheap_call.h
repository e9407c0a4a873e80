// The cheap call every per-call figure is measured on: MPI_Iprobe on an empty queue.
#pragma once

#include <mpi.h>
#include <x86intrin.h>

#include <cstdint>

#include "paired.h"

namespace mpe::bench {

// ns of CPU time per MPI_Iprobe on an empty queue, through `probe` (PMPI_Iprobe or MPI_Iprobe).
template <typename F>
double iprobe_ns(F probe, int iterations) {
  int flag;
  return ns_per_call([&] { probe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); }, iterations,
                     cpu_ns);
}

// ns of CPU time for two TSC reads, what a tool that times each call reads (at entry and exit):
// the floor under the cost of any such tool on this machine, measured in the same run.
inline double two_clock_reads_ns(int iterations) {
  uint64_t sink = 0;
  const double ns = ns_per_call([&] { sink += __rdtsc() + __rdtsc(); }, iterations, cpu_ns);
  asm volatile("" : : "r"(sink));
  return ns;
}

}  // namespace mpe::bench
