/* One-sided communication with known counts: fence epochs on a window over MPI_COMM_WORLD, then
 * passive-target epochs (lock/unlock, lock_all/unlock_all, flush, flush_all) on a window over a
 * communicator whose rank order is reversed, so that target ranks must be converted to world ranks
 * through the window's group. Every rank issues the same 9 operations (and one to MPI_PROC_NULL,
 * which moves nothing):
 *   window 0 (MPI_Win_create, MPI_COMM_WORLD, 64 doubles), completed by MPI_Win_fence:
 *     MPI_Put 8 doubles to world rank+1            64 bytes sent
 *     MPI_Get 4 doubles from world rank-1          32 bytes received
 *     MPI_Accumulate 2 doubles to world rank+1     16 bytes sent
 *   window 1 (MPI_Win_allocate, reversed communicator, 16 long longs), target = the next rank of the
 *   reversed communicator, which is world rank-1:
 *     MPI_Get_accumulate 1 long long               8 sent, 8 received  } completed by MPI_Win_flush
 *     MPI_Fetch_and_op 1 long long                 8 sent, 8 received  }
 *     MPI_Compare_and_swap 1 long long             8 sent, 8 received  } completed by MPI_Win_unlock
 *     MPI_Rput 3 ints                              12 bytes sent       }
 *     MPI_Rget 5 ints                              20 bytes received     completed by MPI_Win_flush_all
 *     MPI_Raccumulate 2 ints                       8 bytes sent          completed by MPI_Win_unlock_all
 * Per rank: 124 bytes sent, 76 bytes received. Exits non-zero when a result is wrong. */
#include <mpi.h>
#include <stdio.h>

static int failures = 0;

static void check(int ok, const char* what, int rank) {
  if (!ok) {
    fprintf(stderr, "rma_epochs: rank %d: %s is wrong\n", rank, what);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* Active target: fence epochs. */
  double memory[64];
  for (int i = 0; i < 64; ++i) memory[i] = rank * 100 + i;
  MPI_Win win;
  MPI_Win_create(memory, sizeof memory, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  double put[8], got[4], add[2] = {0.5, 0.25}, nothing = 0;
  for (int i = 0; i < 8; ++i) put[i] = 1000 * rank + i;
  MPI_Win_fence(0, win);
  MPI_Put(put, 8, MPI_DOUBLE, right, 8, 8, MPI_DOUBLE, win);
  MPI_Get(got, 4, MPI_DOUBLE, left, 0, 4, MPI_DOUBLE, win);
  MPI_Accumulate(add, 2, MPI_DOUBLE, right, 20, 2, MPI_DOUBLE, MPI_SUM, win);
  MPI_Put(&nothing, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, 1, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  check(got[3] == left * 100 + 3, "MPI_Get", rank);
  check(memory[8 + 7] == 1000 * left + 7, "MPI_Put", rank);
  check(memory[20] == 20 + rank * 100 + 0.5, "MPI_Accumulate", rank);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  /* Passive target on a window over the reversed communicator. */
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
  int rrank;
  MPI_Comm_rank(reversed, &rrank);
  const int target = (rrank + 1) % size; /* world rank (size-1-target) == world rank - 1 */
  long long* cells = NULL;
  MPI_Win rwin;
  MPI_Win_allocate(16 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, reversed, &cells, &rwin);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rrank, 0, rwin);
  for (int i = 0; i < 16; ++i) cells[i] = 0;
  MPI_Win_unlock(rrank, rwin);
  MPI_Barrier(reversed);

  long long one = 1, old_ga = -1, old_fop = -1, compare = 0, swap = 7, old_cas = -1;
  int three[3] = {1, 2, 3}, five[5], two[2] = {4, 5};
  MPI_Request req;
  MPI_Win_lock(MPI_LOCK_SHARED, target, 0, rwin);
  MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &old_ga, 1, MPI_LONG_LONG, target, 0, 1, MPI_LONG_LONG, MPI_SUM,
                     rwin);
  MPI_Fetch_and_op(&one, &old_fop, MPI_LONG_LONG, target, 1, MPI_SUM, rwin);
  MPI_Win_flush(target, rwin);
  MPI_Compare_and_swap(&swap, &compare, &old_cas, MPI_LONG_LONG, target, 2, rwin);
  MPI_Rput(three, 3, MPI_INT, target, 4, 3, MPI_INT, rwin, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Win_unlock(target, rwin);
  check(old_ga == 0 && old_fop == 0 && old_cas == 0, "the fetched old values", rank);
  MPI_Barrier(reversed);

  MPI_Win_lock_all(0, rwin);
  MPI_Rget(five, 5, MPI_INT, target, 4, 5, MPI_INT, rwin, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Win_flush_all(rwin);
  MPI_Raccumulate(two, 2, MPI_INT, target, 12, 2, MPI_INT, MPI_SUM, rwin, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Win_unlock_all(rwin);
  check(five[0] == 1 && five[2] == 3, "MPI_Rget", rank);
  MPI_Barrier(reversed);

  MPI_Win_lock(MPI_LOCK_SHARED, rrank, 0, rwin);
  check(cells[0] == 1 && cells[1] == 1 && cells[2] == 7, "the atomics' results at the target", rank);
  MPI_Win_unlock(rrank, rwin);

  MPI_Win_free(&rwin);
  MPI_Comm_free(&reversed);
  MPI_Win_free(&win);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("rma_epochs: %d ranks, %s\n", size, all ? "FAILED" : "ok");
  MPI_Finalize();
  return all ? 1 : 0;
}
