/* Test helper, preloaded before the tools: counts the process's MPI_T_pvar_read calls (the tools
 * call PMPI_T_pvar_read) and prints "pvar reads: rank R: N" at exit, to check that two tools
 * reading one variable in one call read it once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long reads;

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
  static int (*real)(MPI_T_pvar_session, MPI_T_pvar_handle, void *);
  if (!real)
    real = (int (*)(MPI_T_pvar_session, MPI_T_pvar_handle, void *))dlsym(RTLD_NEXT, "PMPI_T_pvar_read");
  ++reads;
  return real(session, handle, buf);
}

static void __attribute__((destructor)) report(void) {
  const char *rank = getenv("PMI_RANK");
  if (!rank) rank = getenv("OMPI_COMM_WORLD_RANK");
  fprintf(stderr, "pvar reads: rank %s: %lu\n", rank ? rank : "?", reads);
}
