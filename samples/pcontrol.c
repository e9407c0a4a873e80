/* Sample: brackets a region with a known amount of MPI work between MPI_Pcontrol(1) and MPI_Pcontrol(0). */
/*
 * Usage: mpiexec -n P pcontrol
 *
 * Exact MPI calls made by EVERY rank, in program order:
 *   before the region: MPI_Allreduce 2, MPI_Barrier 1, MPI_Sendrecv 1
 *   MPI_Pcontrol(1)
 *   inside the region: MPI_Allreduce 10, MPI_Barrier 5
 *   MPI_Pcontrol(0)
 *   after the region:  MPI_Allreduce 1, MPI_Barrier 1, MPI_Sendrecv 1
 * Totals outside the region: MPI_Allreduce 3, MPI_Barrier 2, MPI_Sendrecv 2.
 * Also: MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1, MPI_Pcontrol 2, MPI_Finalize 1.
 * All calls use MPI_COMM_WORLD; MPI_Sendrecv sends one MPI_INT to (rank+1)%P
 * and receives from (rank-1+P)%P.
 */
#include <mpi.h>
#include <stdio.h>

enum { REGION_ALLREDUCE = 10, REGION_BARRIER = 5 };

static int rank, nranks;
static int outside_allreduce, outside_barrier, outside_sendrecv;
static int ok = 1;

/* Sums rank+offset over all ranks and checks it against the closed form. */
static void checked_allreduce(int offset) {
  int mine = rank + offset, sum;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != nranks * (nranks - 1) / 2 + nranks * offset) ok = 0;
}

static void checked_sendrecv(int value) {
  int next = (rank + 1) % nranks;
  int prev = (rank - 1 + nranks) % nranks;
  int mine = value * 1000 + rank, theirs = -1;
  MPI_Sendrecv(&mine, 1, MPI_INT, next, 3, &theirs, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (theirs != value * 1000 + prev) ok = 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  checked_allreduce(1);
  checked_allreduce(2);
  MPI_Barrier(MPI_COMM_WORLD);
  checked_sendrecv(1);
  outside_allreduce += 2;
  outside_barrier += 1;
  outside_sendrecv += 1;

  MPI_Pcontrol(1);
  int region_allreduce = 0, region_barrier = 0;
  for (int i = 0; i < REGION_ALLREDUCE; i++) {
    checked_allreduce(10 + i);
    region_allreduce++;
    if (i % 2 == 1) {
      MPI_Barrier(MPI_COMM_WORLD);
      region_barrier++;
    }
  }
  MPI_Pcontrol(0);

  checked_allreduce(3);
  MPI_Barrier(MPI_COMM_WORLD);
  checked_sendrecv(2);
  outside_allreduce += 1;
  outside_barrier += 1;
  outside_sendrecv += 1;

  if (rank == 0)
    printf(
        "pcontrol: region_allreduce=%d region_barrier=%d outside_allreduce=%d "
        "outside_barrier=%d outside_sendrecv=%d\n",
        region_allreduce, region_barrier, outside_allreduce, outside_barrier, outside_sendrecv);
  if (!ok) fprintf(stderr, "pcontrol: rank %d received a wrong result\n", rank);

  MPI_Finalize();
  return ok ? 0 : 1;
}
