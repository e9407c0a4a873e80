// The cheap call every per-call figure is measured on: MPI_Iprobe on an empty queue.
#pragma once

#include <mpi.h>

#include "paired.h"

namespace mpe::bench {

// ns of CPU time per MPI_Iprobe on an empty queue, through `probe` (PMPI_Iprobe or MPI_Iprobe).
template <typename F>
double iprobe_ns(F probe, int iterations) {
  int flag;
  return ns_per_call([&] { probe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); }, iterations,
                     cpu_ns);
}

}  // namespace mpe::bench
