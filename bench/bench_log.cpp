// What liblog costs: (1) ns added per logged cheap call (MPI_Iprobe through liblog against
// PMPI_Iprobe, same process, same run, alternating); (2) the finalize merge: N logged calls per
// rank, the time MPI_Finalize takes and its throughput; peak memory per rank.
// (3) "pvar": the same added cost per MPI_Iprobe (a receive-family call, where MPE_LOG_PVARS reads)
// and, in the same run, one raw PMPI_T_pvar_read of the queue variable; bench/log_pvars.sh runs it
// with and without MPE_LOG_PVARS=umq and prints what the variable adds beyond liblog alone.
// Run: mpiexec -n 2 bench_log cost [reps]      mpiexec -n 8 bench_log merge [calls per rank]
//      mpiexec -n 1 bench_log pvar [reps]
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

#include "cheap_call.h"
#include "queue_variable.h"

namespace {

using namespace mpe::bench;
using Clock = std::chrono::steady_clock;

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
    const int reps = count_arg(argc, argv, 2, 31);
    constexpr int kIters = 200000;
    if (rank == 0) {
      iprobe_ns(PMPI_Iprobe, kIters);  // warm up both paths
      iprobe_ns(MPI_Iprobe, kIters);
      const Paired p = paired(
          reps, [] { return iprobe_ns(PMPI_Iprobe, kIters); }, [] { return iprobe_ns(MPI_Iprobe, kIters); });
      const double clock_ns = median_of(reps, [] { return two_clock_reads_ns(kIters); });
      std::printf(
          "MPI_Iprobe (empty queue): no tool %.1f ns, liblog %.1f ns, added %.1f ns per logged call, "
          "of which the two clock reads take %.1f ns (medians of %d paired runs of %d calls, thread CPU "
          "time; includes compression and spilling)\n",
          p.baseline, p.candidate, p.added, clock_ns, reps, kIters);
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
  }
  if (mode == "pvar") {
    const int reps = count_arg(argc, argv, 2, 31);
    constexpr int kIters = 200000;
    int provided;
    PMPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    char name[256];
    if (rank == 0 && open_queue_variable(&session, &handle, name)) {
      static unsigned char buf[1 << 16];
      iprobe_ns(PMPI_Iprobe, kIters);  // warm up both paths
      iprobe_ns(MPI_Iprobe, kIters);
      const Paired p = paired(
          reps, [] { return iprobe_ns(PMPI_Iprobe, kIters); }, [] { return iprobe_ns(MPI_Iprobe, kIters); });
      const double read_ns = median_of(
          reps, [&] { return ns_per_call([&] { PMPI_T_pvar_read(session, handle, buf); }, kIters, cpu_ns); });
      std::printf("bench_log pvar: variable=%s MPE_LOG_PVARS=%s added=%.2f read=%.2f\n", name,
                  std::getenv("MPE_LOG_PVARS") ? std::getenv("MPE_LOG_PVARS") : "", p.added, read_ns);
      PMPI_T_pvar_handle_free(session, &handle);
      PMPI_T_pvar_session_free(&session);
    } else if (rank == 0) {
      std::printf("bench_log pvar: skipped: this MPI exports no unexpected-queue variable\n");
    }
    PMPI_T_finalize();
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
