/* Call sites with known counts, for the call-site tests of every tool. Even rank r sends to
 * r + 1, which receives; every line marked SITE:<name> is a call site whose count and bytes per
 * rank the tests read from the table below, and whose line they find by its mark.
 *
 *   site           routine        calls (on each sender / receiver)   bytes per call
 *   send_small     MPI_Send       3                                    10 ints = 40
 *   send_large     MPI_Send       5                                    100 ints = 400
 *   recv_small     MPI_Recv       3                                    40
 *   recv_large     MPI_Recv       5                                    400
 *   lib_barrier    MPI_Barrier    2 on every rank, inside libcsite.so (csite.c)
 *   deep_allreduce MPI_Allreduce  4 on every rank, through layer_two() <- layer_one() <- main
 *
 * Built as a PIE (Debian's default); the shared library has its own load address on each rank. */
#include <mpi.h>
#include <stdio.h>

#include "csite.h"

/* Two small wrapper layers: MPE_CALLSITE_DEPTH=3 names all three lines. Not inlined, so the
 * frames exist whatever the optimisation level. */
__attribute__((noinline)) static int layer_two(int *value) {
  int sum = 0;
  MPI_Allreduce(value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* SITE:deep_allreduce */
  return sum;
}

__attribute__((noinline)) static int layer_one(int *value) {
  int r = layer_two(value);          /* SITE:deep_layer_one */
  __asm__ volatile("" ::: "memory"); /* keeps the call above from becoming a tail call */
  return r;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int small[10] = {0}, large[100] = {0};
  const int peer = rank % 2 == 0 ? rank + 1 : rank - 1;
  if (peer < size) {
    if (rank % 2 == 0) {
      for (int i = 0; i < 3; ++i) MPI_Send(small, 10, MPI_INT, peer, 1, MPI_COMM_WORLD); /* SITE:send_small */
      for (int i = 0; i < 5; ++i)
        MPI_Send(large, 100, MPI_INT, peer, 2, MPI_COMM_WORLD); /* SITE:send_large */
    } else {
      for (int i = 0; i < 3; ++i)
        MPI_Recv(small, 10, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:recv_small */
      for (int i = 0; i < 5; ++i)
        MPI_Recv(large, 100, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:recv_large */
    }
  }
  csite_barriers(MPI_COMM_WORLD, 2);
  int total = 0;
  for (int i = 0; i < 4; ++i) {
    int one = 1;
    total += layer_one(&one); /* SITE:deep_main */
  }
  if (rank == 0) printf("callsites: allreduce total %d\n", total);
  MPI_Finalize();
  return 0;
}
