// What libmpetime adds to a cheap MPI call: MPI_Iprobe through the core and libmpetime against
// PMPI_Iprobe (no tool) in the same process and run, alternating so noise hits both sides alike.
// Run: mpiexec -n 1 bench_time_iprobe [reps]  (linked with libmpetime.so). Prints medians; the
// tool's own files go to MPE_TMPDIR (set it to a scratch directory). Timed with this thread's CPU
// clock, so time the thread spends descheduled on a busy machine does not count.
#include <mpi.h>

#include <algorithm>
#include <time.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ns per MPI_Iprobe on an empty queue, through `probe`.
template <typename F>
double iprobe_ns(F probe, int iterations) {
  int flag;
  const double t0 = cpu_ns();
  for (int i = 0; i < iterations; ++i) probe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  return (cpu_ns() - t0) / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 31;
  constexpr int kIters = 200000;
  std::vector<double> plain, timed, diff;
  iprobe_ns(PMPI_Iprobe, kIters);  // warm up both paths (and the tool's thread table)
  iprobe_ns(MPI_Iprobe, kIters);
  for (int r = 0; r < reps; ++r) {
    const bool plain_first = r % 2 == 0;
    const double a = plain_first ? iprobe_ns(PMPI_Iprobe, kIters) : iprobe_ns(MPI_Iprobe, kIters);
    const double b = plain_first ? iprobe_ns(MPI_Iprobe, kIters) : iprobe_ns(PMPI_Iprobe, kIters);
    const double p = plain_first ? a : b, t = plain_first ? b : a;
    plain.push_back(p);
    timed.push_back(t);
    diff.push_back(t - p);
  }
  if (rank == 0)
    std::printf("MPI_Iprobe (empty queue): no tool %.1f ns, libmpetime %.1f ns, "
                "added %.1f ns per call (medians of %d paired runs of %d calls)\n",
                median(plain), median(timed), median(diff), reps, kIters);
  MPI_Finalize();
  return 0;
}
