// What interposition alone costs: the core with the do-nothing tool against plain PMPI, in the
// same process and the same run, alternating so that machine noise hits both sides alike.
// Run: mpiexec -n 2 bench_core [reps]  (linked with libmpenull.so). Prints medians.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ns per MPI_Iprobe on an empty queue, through `probe`.
template <typename F>
double iprobe_ns(F probe, int iterations) {
  int flag;
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) probe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iterations;
}

// Half round trip of an 8-byte ping-pong between ranks 0 and 1, in ns.
template <typename S, typename R>
double half_round_trip_ns(S send, R recv, int rank, int iterations) {
  char buf[8] = {};
  PMPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    if (rank == 0) {
      send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iterations / 2;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 31;
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_core: run with 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::vector<double> plain, wrapped, diff;
  if (rank == 0) {
    constexpr int kIters = 200000;
    iprobe_ns(PMPI_Iprobe, kIters);  // warm up
    iprobe_ns(MPI_Iprobe, kIters);
    for (int r = 0; r < reps; ++r) {
      const bool plain_first = r % 2 == 0;
      const double a = plain_first ? iprobe_ns(PMPI_Iprobe, kIters) : iprobe_ns(MPI_Iprobe, kIters);
      const double b = plain_first ? iprobe_ns(MPI_Iprobe, kIters) : iprobe_ns(PMPI_Iprobe, kIters);
      const double p = plain_first ? a : b, w = plain_first ? b : a;
      plain.push_back(p);
      wrapped.push_back(w);
      diff.push_back(w - p);
    }
    PMPI_Send(nullptr, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);  // release rank 1
    std::printf("MPI_Iprobe (empty queue): plain %.1f ns, core + do-nothing tool %.1f ns, "
                "added %.1f ns per call (medians of %d paired runs of %d calls)\n",
                median(plain), median(wrapped), median(diff), reps, kIters);
  }
  else {
    // Idle without busy-polling, so the other core stays free for rank 0's loops.
    int flag = 0;
    while (!flag) {
      usleep(1000);
      PMPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    PMPI_Recv(nullptr, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  plain.clear(), wrapped.clear(), diff.clear();
  constexpr int kTrips = 20000;
  for (int r = 0; r < reps; ++r) {
    const double p = half_round_trip_ns(PMPI_Send, PMPI_Recv, rank, kTrips);
    const double w = half_round_trip_ns(MPI_Send, MPI_Recv, rank, kTrips);
    plain.push_back(p);
    wrapped.push_back(w);
    diff.push_back(w - p);
  }
  if (rank == 0)
    std::printf("8-byte ping-pong half round trip: plain %.1f ns, core + do-nothing tool %.1f ns, "
                "added %.1f ns (medians of %d paired runs of %d round trips)\n",
                median(plain), median(wrapped), median(diff), reps, kTrips);
  MPI_Finalize();
  return 0;
}
