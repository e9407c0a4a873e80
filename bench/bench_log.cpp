// What liblog costs: (1) ns added per logged cheap call (MPI_Iprobe through liblog against
// PMPI_Iprobe, same process, same run, alternating); (2) the finalize merge: N logged calls per
// rank, the time MPI_Finalize takes and its throughput; peak memory per rank.
// Run: mpiexec -n 2 bench_log cost [reps]      mpiexec -n 8 bench_log merge [calls per rank]
// (linked with liblog.so; MPE_LOG_BUFFER bounds the record buffer).
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double iprobe_ns(F probe, int iterations) {
  int flag;
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) probe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iterations;
}

long peak_rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "cost";
  if (mode == "cost") {
    const int reps = argc > 2 ? std::atoi(argv[2]) : 31;
    constexpr int kIters = 200000;
    if (rank == 0) {
      std::vector<double> plain, logged, diff;
      iprobe_ns(PMPI_Iprobe, kIters);
      iprobe_ns(MPI_Iprobe, kIters);
      for (int r = 0; r < reps; ++r) {
        const bool plain_first = r % 2 == 0;
        const double a = plain_first ? iprobe_ns(PMPI_Iprobe, kIters) : iprobe_ns(MPI_Iprobe, kIters);
        const double b = plain_first ? iprobe_ns(MPI_Iprobe, kIters) : iprobe_ns(PMPI_Iprobe, kIters);
        const double p = plain_first ? a : b, w = plain_first ? b : a;
        plain.push_back(p);
        logged.push_back(w);
        diff.push_back(w - p);
      }
      std::printf(
          "MPI_Iprobe (empty queue): no tool %.1f ns, liblog %.1f ns, added %.1f ns per logged call "
          "(medians of %d paired runs of %d calls; includes compression and spilling)\n",
          median(plain), median(logged), median(diff), reps, kIters);
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
  }
  const long calls = argc > 2 ? std::atol(argv[2]) : 5000000;
  int flag;
  for (long i = 0; i < calls; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  long rss = peak_rss_kib(), max_rss = 0;
  PMPI_Reduce(&rss, &max_rss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  PMPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  MPI_Finalize();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (rank == 0)
    std::printf(
        "merge: %d ranks x %ld events, MPI_Finalize (final sync, flush, parallel merge) took %.3f s on rank "
        "0: "
        "%.1f M events/s; peak RSS per rank before finalize %ld KiB\n",
        size, calls, s, size * static_cast<double>(calls) / s / 1e6, max_rss);
  return 0;
}
