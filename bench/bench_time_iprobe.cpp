// What libmpetime adds to a cheap MPI call: MPI_Iprobe through the core and libmpetime against
// PMPI_Iprobe (no tool) in the same process and run, alternating so noise hits both sides alike.
// Run: mpiexec -n 1 bench_time_iprobe [reps]  (linked with libmpetime.so). Prints medians; the
// tool's own files go to MPE_TMPDIR (set it to a scratch directory). Timed with this thread's CPU
// clock, so time the thread spends descheduled on a busy machine does not count.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "cheap_call.h"

using namespace mpe::bench;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int reps = count_arg(argc, argv, 1, 31);
  constexpr int kIters = 200000;
  iprobe_ns(PMPI_Iprobe, kIters);  // warm up both paths (and the tool's thread table)
  iprobe_ns(MPI_Iprobe, kIters);
  const Paired p = paired(
      reps, [] { return iprobe_ns(PMPI_Iprobe, kIters); }, [] { return iprobe_ns(MPI_Iprobe, kIters); });
  const double clock_ns = median_of(reps, [] { return two_clock_reads_ns(kIters); });
  if (rank == 0)
    std::printf(
        "MPI_Iprobe (empty queue): no tool %.1f ns, libmpetime %.1f ns, "
        "added %.1f ns per call, of which the two clock reads take %.1f ns "
        "(medians of %d paired runs of %d calls)\n",
        p.baseline, p.candidate, p.added, clock_ns, reps, kIters);
  MPI_Finalize();
  return 0;
}
