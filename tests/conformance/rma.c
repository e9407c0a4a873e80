/* Conformance test: one-sided communication (RMA) must give identical results with a tool interposed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

static int left, right;

enum { WINDOW_INTS = 16 };

/* Fence epochs on a window over user memory: Put, then Get and Accumulate. */
static void test_fence(MPI_Win win, int *memory) {
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int tag_value = 100 + rank;
  /* Slot i of every window is written only by rank i. */
  MPI_Put(&tag_value, 1, MPI_INT, right, rank, 1, MPI_INT, win);
  MPI_Win_fence(0, win);

  int ok = 1;
  for (int i = 0; i < NRANKS; i++) ok &= memory[i] == (i == left ? 100 + left : 0);
  check("fence_put", memory[left], ok);

  int fetched[NRANKS] = {-1, -1, -1, -1};
  MPI_Get(fetched, NRANKS, MPI_INT, left, 0, NRANKS, MPI_INT, win);
  /* Every rank adds rank+1 to slot 8 of every window. */
  int addend = rank + 1;
  for (int target = 0; target < NRANKS; target++)
    MPI_Accumulate(&addend, 1, MPI_INT, target, 8, 1, MPI_INT, MPI_SUM, win);
  /* NOSUCCEED ends fence synchronization, so the PSCW test may use this window next. */
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  int left_of_left = (left + NRANKS - 1) % NRANKS;
  ok = 1;
  for (int i = 0; i < NRANKS; i++) ok &= fetched[i] == (i == left_of_left ? 100 + left_of_left : 0);
  check("fence_get", fetched[left_of_left], ok);
  check("fence_accumulate", memory[8], memory[8] == 10);
}

/* Generalized active target: each rank exposes its window to its left neighbour and writes into its right
 * one. */
static void test_pscw(MPI_Win win, const int *memory) {
  MPI_Group world_group, exposure_group, access_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, 1, &left, &exposure_group);
  MPI_Group_incl(world_group, 1, &right, &access_group);

  MPI_Win_post(exposure_group, 0, win);
  MPI_Win_start(access_group, 0, win);
  int values[2] = {3000 + rank, 3100 + rank};
  MPI_Put(values, 2, MPI_INT, right, 12, 2, MPI_INT, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);

  check("pscw_put", memory[12] * 10000LL + memory[13],
        memory[12] == 3000 + left && memory[13] == 3100 + left && memory[8] == 10);

  MPI_Group_free(&exposure_group);
  MPI_Group_free(&access_group);
  MPI_Group_free(&world_group);
}

/* Local stores go through a lock epoch so they are visible under the separate memory model too. */
static void reset_window(MPI_Win win, int *memory) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < WINDOW_INTS; i++) memory[i] = 0;
  memory[2] = -1;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
}

static int read_remote(MPI_Win win, int target, int slot) {
  int value = -99;
  MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
  MPI_Get(&value, 1, MPI_INT, target, slot, 1, MPI_INT, win);
  MPI_Win_unlock(target, win);
  return value;
}

/*
 * Passive-target atomics. Which rank reaches a target first is timing-dependent,
 * so only aggregates that are the same in every order are reported.
 */
static void test_passive_atomics(MPI_Win win, int *memory) {
  reset_window(win, memory);

  /* Everyone adds 1 to a counter on rank 0 (shared lock) and on rank 1 (exclusive lock). */
  int one = 1, old_get_accumulate = -1, old_fetch_and_op = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Get_accumulate(&one, 1, MPI_INT, &old_get_accumulate, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_unlock(0, win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
  MPI_Fetch_and_op(&one, &old_fetch_and_op, MPI_INT, 1, 1, MPI_SUM, win);
  MPI_Win_unlock(1, win);

  /* Every rank tries to swap its rank into a slot holding -1: exactly one can succeed. */
  int compare = -1, swap = rank, result = -2;
  MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
  MPI_Compare_and_swap(&swap, &compare, &result, MPI_INT, 2, 2, win);
  MPI_Win_unlock(2, win);

  /* Unlock completed every operation at its target; the barrier means all ranks' operations. */
  MPI_Barrier(MPI_COMM_WORLD);
  int counter0 = read_remote(win, 0, 0), counter1 = read_remote(win, 1, 1);
  int swapped_in = read_remote(win, 2, 2);

  /* The old values seen are some order of 0..3, so the sums of 1 << old are exactly 0xF. */
  int mine[3] = {old_get_accumulate >= 0 && old_get_accumulate < NRANKS ? 1 << old_get_accumulate : 64,
                 old_fetch_and_op >= 0 && old_fetch_and_op < NRANKS ? 1 << old_fetch_and_op : 64,
                 result == -1};
  int sums[3];
  MPI_Allreduce(mine, sums, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  check("get_accumulate", sums[0] * 100LL + counter0, sums[0] == 0xF && counter0 == NRANKS);
  check("fetch_and_op", sums[1] * 100LL + counter1, sums[1] == 0xF && counter1 == NRANKS);
  /* The winner saw -1 and left its rank behind; every loser saw the winner's rank. */
  int consistent = result == -1 ? swapped_in == rank : result == swapped_in;
  check("compare_and_swap", sums[2], sums[2] == 1 && consistent);
}

/* A lock_all epoch with flushes, request-based Rput/Rget, then local reads. */
static void test_lock_all(MPI_Win win, int *memory) {
  reset_window(win, memory);

  MPI_Win_lock_all(0, win);
  int put_value = 1000 + rank, read_back = -1;
  MPI_Put(&put_value, 1, MPI_INT, right, 4, 1, MPI_INT, win);
  /* After the flush the Put is complete at the target, so a Get must see it. */
  MPI_Win_flush(right, win);
  MPI_Get(&read_back, 1, MPI_INT, right, 4, 1, MPI_INT, win);
  MPI_Win_flush(right, win);
  check("lock_all_flush", read_back, read_back == put_value);

  int rput_value = 2000 + rank, rget_value = -1;
  MPI_Request request;
  MPI_Rput(&rput_value, 1, MPI_INT, left, 5, 1, MPI_INT, win, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  /* MPI_Wait on an Rput only means local completion; the flush makes it visible at the target. */
  MPI_Win_flush_all(win);
  MPI_Rget(&rget_value, 1, MPI_INT, left, 5, 1, MPI_INT, win, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Win_unlock_all(win);
  check("rput_rget", rget_value, rget_value == rput_value && request == MPI_REQUEST_NULL);

  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  int from_left = memory[4], from_right = memory[5];
  MPI_Win_unlock(rank, win);
  check("lock_all_target_memory", from_left * 10000LL + from_right,
        from_left == 1000 + left && from_right == 2000 + right);
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "rma")) return 1;
  left = (rank + NRANKS - 1) % NRANKS;
  right = (rank + 1) % NRANKS;

  /* Only two windows: creating and freeing one is a slow collective with MPICH. */
  int created_memory[WINDOW_INTS] = {0};
  MPI_Win created;
  MPI_Win_create(created_memory, sizeof created_memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &created);
  test_fence(created, created_memory);
  test_pscw(created, created_memory);
  MPI_Win_free(&created);

  int *allocated_memory = NULL;
  MPI_Win allocated;
  MPI_Win_allocate(WINDOW_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &allocated_memory,
                   &allocated);
  test_passive_atomics(allocated, allocated_memory);
  test_lock_all(allocated, allocated_memory);
  MPI_Win_free(&allocated);
  check("win_free", 1, created == MPI_WIN_NULL && allocated == MPI_WIN_NULL);

  return finish("rma");
}
