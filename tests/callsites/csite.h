/* libcsite.so: MPI calls made from inside a shared library, for the call-site tests. */
#pragma once
#include <mpi.h>

/* Calls MPI_Barrier n times on comm, from one line of csite.c. */
void csite_barriers(MPI_Comm comm, int n);
