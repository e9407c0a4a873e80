#include "csite.h"

void csite_barriers(MPI_Comm comm, int n) {
  for (int i = 0; i < n; ++i) MPI_Barrier(comm); /* SITE:lib_barrier */
}
