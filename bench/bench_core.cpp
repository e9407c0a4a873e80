// What interposition alone costs: the core with the do-nothing tool against plain PMPI, in the
// same process and the same run, alternating so that machine noise hits both sides alike.
// Run: mpiexec -n 2 bench_core [rounds]  (linked with libmpenull.so). Prints medians.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cheap_call.h"

namespace {

using namespace mpe::bench;

// Half round trip of an 8-byte ping-pong between ranks 0 and 1, in wall-clock ns.
template <typename S, typename R>
double half_round_trip_ns(S send, R recv, int rank, int iterations) {
  char buf[8] = {};
  PMPI_Barrier(MPI_COMM_WORLD);
  const auto trip = [&] {
    if (rank == 0) {
      send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  };
  return ns_per_call(trip, iterations, wall_ns) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = count_arg(argc, argv, 1, 31);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_core: run with 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    constexpr int kIters = 200000;
    iprobe_ns(PMPI_Iprobe, kIters);  // warm up
    iprobe_ns(MPI_Iprobe, kIters);
    const Paired p = paired(
        rounds, [] { return iprobe_ns(PMPI_Iprobe, kIters); }, [] { return iprobe_ns(MPI_Iprobe, kIters); });
    PMPI_Send(nullptr, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);  // release rank 1
    std::printf(
        "MPI_Iprobe (empty queue): plain %.1f ns, core + do-nothing tool %.1f ns, "
        "added %.1f ns per call (medians of %d paired rounds of %d calls, thread CPU time)\n",
        p.baseline, p.candidate, p.added, rounds, kIters);
  } else {
    // Idle without busy-polling, so the other core stays free for rank 0's loops.
    int flag = 0;
    while (!flag) {
      usleep(1000);
      PMPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    PMPI_Recv(nullptr, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  constexpr int kTrips = 20000;
  const Paired p = paired(
      rounds, [&] { return half_round_trip_ns(PMPI_Send, PMPI_Recv, rank, kTrips); },
      [&] { return half_round_trip_ns(MPI_Send, MPI_Recv, rank, kTrips); });
  if (rank == 0)
    std::printf(
        "8-byte ping-pong half round trip: plain %.1f ns, core + do-nothing tool %.1f ns, "
        "added %.1f ns (medians of %d paired rounds of %d round trips)\n",
        p.baseline, p.candidate, p.added, rounds, kTrips);
  MPI_Finalize();
  return 0;
}
