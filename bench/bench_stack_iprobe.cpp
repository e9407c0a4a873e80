// ns per MPI_Iprobe through whatever is preloaded (libmpestack, the do-nothing tool, foreign
// do-nothing layers: bench/stack_instructions.sh sets them) against the MPI library's own
// PMPI_Iprobe, in the same process and run, alternating so noise hits both sides alike.
// The baseline is looked up in the MPI library itself: under libmpestack the process's
// PMPI_Iprobe is the stack's, which enters the layers too.
// Run: mpiexec -n 1 bench_stack_iprobe [rounds]  (linked with no tool). Prints medians.
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cheap_call.h"

using namespace mpe::bench;

namespace {

using IprobeFn = int (*)(int, int, MPI_Comm, int*, MPI_Status*);
IprobeFn g_mpi_own = nullptr;

// Finds PMPI_Iprobe as defined by the MPI library itself (libmpich / libmpi), not by a library
// preloaded before it.
int find_mpi_library(dl_phdr_info* info, size_t, void*) {
  const char* base = std::strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  if (std::strncmp(base, "libmpi", 6) != 0) return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return 0;
  void* f = dlsym(handle, "PMPI_Iprobe");
  Dl_info where;
  if (f && dladdr(f, &where) && std::strcmp(where.dli_fname, info->dlpi_name) == 0) {
    g_mpi_own = reinterpret_cast<IprobeFn>(f);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  dl_iterate_phdr(find_mpi_library, nullptr);
  if (!g_mpi_own) {
    std::fprintf(stderr, "bench_stack_iprobe: cannot find the MPI library's own PMPI_Iprobe\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int rounds = count_arg(argc, argv, 1, 31);
  constexpr int kIters = 200000;
  iprobe_ns(g_mpi_own, kIters);  // warm up both paths
  iprobe_ns(MPI_Iprobe, kIters);
  const Paired p = paired(
      rounds, [] { return iprobe_ns(g_mpi_own, kIters); }, [] { return iprobe_ns(MPI_Iprobe, kIters); });
  std::printf(
      "MPI_Iprobe (empty queue): no tool %.1f ns, through what is preloaded %.1f ns, added %.1f ns per call "
      "(medians of %d paired rounds of %d calls, thread CPU time)\n",
      p.baseline, p.candidate, p.added, rounds, kIters);
  MPI_Finalize();
  return 0;
}
