// liblive's cost inside a rank. Linked with no tool: run it under `mpe run --live` (liblive
// preloaded, the publisher connected to the run's relay), with or without a viewer attached.
// (1) "cost": ns of thread CPU time added per cheap call (MPI_Iprobe through liblive against
//     PMPI_Iprobe, same process, same run, alternating) and per message to self (MPI_Isend +
//     MPI_Irecv + MPI_Waitall, which records a send and a receive event), beside two clock reads.
//     The publisher thread's own work is not in these figures (it runs on its own thread).
// (2) "memory": every rank exchanges halo-like messages (1 KiB to 64 KiB) with its ring
//     neighbours, an MPI_Allreduce now and then, for the given seconds; then prints each rank's
//     peak resident memory (VmHWM) and its own anonymous memory (RssAnon) before MPI_Finalize: run it with no
//     tool and under `mpe run --live` (bench/live.sh subtracts the two).
// Run: mpiexec -n 1 bench_live cost [reps]      mpiexec -n 4 bench_live memory [seconds]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cheap_call.h"

namespace {

using namespace mpe::bench;

// A "Name:   123 kB" line of /proc/self/status, in KiB: VmHWM (peak resident memory), RssAnon
// (resident memory that is this process's own: heap, stacks, buffers; not the libraries' pages).
long status_kib(const std::string& name) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(name + ":", 0) == 0) return std::atol(line.c_str() + name.size() + 1);
  return -1;
}

using IsendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
using IrecvFn = int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
using WaitallFn = int (*)(int, MPI_Request*, MPI_Status*);

// ns of CPU time per message to self: one MPI_Isend, one MPI_Irecv, one MPI_Waitall.
double self_message_ns(IsendFn isend, IrecvFn irecv, WaitallFn waitall, int iterations) {
  int out = 1, in = 0;
  MPI_Request r[2];
  return ns_per_call(
      [&] {
        irecv(&in, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &r[0]);
        isend(&out, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &r[1]);
        waitall(2, r, MPI_STATUSES_IGNORE);
      },
      iterations, cpu_ns);
}

void cost(int reps) {
  constexpr int kIters = 200000, kMessages = 50000;
  iprobe_ns(PMPI_Iprobe, kIters);  // warm up both paths
  iprobe_ns(MPI_Iprobe, kIters);
  const Paired probe = paired(
      reps, [] { return iprobe_ns(PMPI_Iprobe, kIters); }, [] { return iprobe_ns(MPI_Iprobe, kIters); });
  const Paired message = paired(
      reps, [] { return self_message_ns(PMPI_Isend, PMPI_Irecv, PMPI_Waitall, kMessages); },
      [] { return self_message_ns(MPI_Isend, MPI_Irecv, MPI_Waitall, kMessages); });
  const double clock_ns = median_of(reps, [] { return two_clock_reads_ns(kIters); });
  std::printf(
      "MPI_Iprobe (empty queue): no tool %.1f ns, with the tool %.1f ns, added %.1f ns per call; "
      "message to self (Isend+Irecv+Waitall): no tool %.1f ns, with the tool %.1f ns, added %.1f ns; "
      "two clock reads %.1f ns (medians of %d paired runs, thread CPU time)\n",
      probe.baseline, probe.candidate, probe.added, message.baseline, message.candidate, message.added,
      clock_ns, reps);
  std::printf("bench_live cost: iprobe_added_ns=%.2f message_added_ns=%.2f clock_ns=%.2f\n", probe.added,
              message.added, clock_ns);
}

void memory(int rank, int size, double seconds) {
  const int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
  constexpr int kMaxBytes = 64 * 1024;
  std::vector<char> out(2 * kMaxBytes, 1), in(2 * kMaxBytes);
  const auto start = std::chrono::steady_clock::now();
  long iterations = 0;
  for (int stop = 0; !stop; ++iterations) {
    const int bytes = 1024 << (iterations % 7);  // 1 KiB .. 64 KiB
    MPI_Request r[4];
    MPI_Irecv(in.data(), bytes, MPI_BYTE, prev, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(in.data() + kMaxBytes, bytes, MPI_BYTE, next, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(out.data(), bytes, MPI_BYTE, next, 1, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(out.data() + kMaxBytes, bytes, MPI_BYTE, prev, 2, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    if (iterations % 50 == 49) {
      // Rank 0's clock decides when all stop, in a collective the tool sees like any other.
      int done = rank == 0 &&
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds;
      MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      stop = done;
    }
  }
  long mine[2] = {status_kib("VmHWM"), status_kib("RssAnon")};
  std::vector<long> all(2 * static_cast<size_t>(size));
  PMPI_Gather(mine, 2, MPI_LONG, all.data(), 2, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("bench_live memory: ranks=%d iterations=%ld", size, iterations);
    for (int k = 0; k < 2; ++k) {
      std::printf(k == 0 ? " vmhwm_kib=" : " rssanon_kib=");
      for (int i = 0; i < size; ++i) std::printf("%s%ld", i ? "," : "", all[2 * static_cast<size_t>(i) + k]);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "cost";
  if (mode == "cost") {
    if (rank == 0) cost(count_arg(argc, argv, 2, 21));
    PMPI_Barrier(MPI_COMM_WORLD);
  } else if (mode == "memory") {
    memory(rank, size, argc > 2 ? std::atof(argv[2]) : 10.0);
  } else {
    if (rank == 0) std::fprintf(stderr, "usage: bench_live cost [reps] | memory [seconds]\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Finalize();
  return 0;
}
