/* Conformance test: blocking, in-place, user-op and nonblocking collectives must give identical results with
 * a tool interposed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

static const MPI_Comm world = MPI_COMM_WORLD;

/* Position-weighted so that a permuted result changes the checksum. */
static long long weighted_sum(const int *values, int count) {
  long long sum = 0;
  for (int i = 0; i < count; i++) sum += (long long)(i + 1) * values[i];
  return sum;
}

static void fill_constant(int *values, int count, int constant) {
  for (int i = 0; i < count; i++) values[i] = constant;
}

/* Inputs and expected results below are shared by the blocking and the nonblocking variants. */

/* Reduce/Allreduce of send[i] = rank*10 + i with MPI_SUM. */
static void reduce_input(int send[5]) {
  for (int i = 0; i < 5; i++) send[i] = rank * 10 + i;
}

static int reduce_ok(const int recv[5]) {
  for (int i = 0; i < 5; i++)
    if (recv[i] != 60 + 4 * i) return 0;
  return 1;
}

/* Gather/Allgather of two ints per rank: {10*rank, 10*rank + 1}. */
static int gathered_ok(const int recv[2 * NRANKS]) {
  for (int r = 0; r < NRANKS; r++)
    if (recv[2 * r] != 10 * r || recv[2 * r + 1] != 10 * r + 1) return 0;
  return 1;
}

/* Scatter from a root buffer holding 500 + i, three ints per rank. */
static int scattered_ok(const int recv[3]) {
  for (int k = 0; k < 3; k++)
    if (recv[k] != 500 + 3 * rank + k) return 0;
  return 1;
}

/* Alltoall: block j of rank r holds r*100 + j*10 + k, so rank r must receive i*100 + r*10 + k from rank i. */
static void alltoall_input(int send[2 * NRANKS]) {
  for (int j = 0; j < NRANKS; j++)
    for (int k = 0; k < 2; k++) send[j * 2 + k] = rank * 100 + j * 10 + k;
}

static int alltoall_ok(const int recv[2 * NRANKS]) {
  for (int i = 0; i < NRANKS; i++)
    for (int k = 0; k < 2; k++)
      if (recv[i * 2 + k] != i * 100 + rank * 10 + k) return 0;
  return 1;
}

/* Alltoallv: rank r sends (r+j)%3 + 1 ints to rank j. */
static int alltoallv_count(int from, int to) { return (from + to) % 3 + 1; }

static void alltoallv_layout(int counts_to[NRANKS], int send_displs[NRANKS], int counts_from[NRANKS],
                             int recv_displs[NRANKS], int send[4 * NRANKS]) {
  int send_offset = 0, recv_offset = 0;
  for (int j = 0; j < NRANKS; j++) {
    counts_to[j] = alltoallv_count(rank, j);
    send_displs[j] = send_offset;
    for (int k = 0; k < counts_to[j]; k++) send[send_offset + k] = rank * 100 + j * 10 + k;
    send_offset += counts_to[j];
    counts_from[j] = alltoallv_count(j, rank);
    recv_displs[j] = recv_offset;
    recv_offset += counts_from[j];
  }
}

static int alltoallv_ok(const int recv[4 * NRANKS], const int recv_displs[NRANKS]) {
  for (int i = 0; i < NRANKS; i++)
    for (int k = 0; k < alltoallv_count(i, rank); k++)
      if (recv[recv_displs[i] + k] != i * 100 + rank * 10 + k) return 0;
  return 1;
}

/* Scan and Exscan of rank + 1 with MPI_SUM. */
static int scan_expected(void) { return (rank + 1) * (rank + 2) / 2; }

static int exscan_expected(void) { return rank * (rank + 1) / 2; }

/* Reduce_scatter_block of send[i] = rank * i: rank r gets the sums 6*(2r) and 6*(2r+1). */
static void reduce_scatter_block_input(int send[2 * NRANKS]) {
  for (int i = 0; i < 2 * NRANKS; i++) send[i] = rank * i;
}

static int reduce_scatter_block_ok(const int recv[2]) {
  return recv[0] == 6 * (2 * rank) && recv[1] == 6 * (2 * rank + 1);
}

static void test_barrier_bcast(void) {
  MPI_Barrier(world);
  check("barrier", 1, 1);

  int values[10];
  for (int i = 0; i < 10; i++) values[i] = rank == 2 ? i * i + 7 : -1;
  MPI_Bcast(values, 10, MPI_INT, 2, world);
  int ok = 1;
  for (int i = 0; i < 10; i++) ok &= values[i] == i * i + 7;
  check("bcast", weighted_sum(values, 10), ok);
}

static void test_reduce(void) {
  int send[5], recv[5];
  reduce_input(send);
  fill_constant(recv, 5, -1);
  MPI_Reduce(send, recv, 5, MPI_INT, MPI_SUM, 1, world);
  check("reduce", rank == 1 ? weighted_sum(recv, 5) : 0, rank != 1 || reduce_ok(recv));

  /* In place at the root: its own contribution is read from and overwritten in the receive buffer. */
  int values[4];
  for (int i = 0; i < 4; i++) values[i] = (rank + 1) * (i + 1);
  if (rank == 0)
    MPI_Reduce(MPI_IN_PLACE, values, 4, MPI_INT, MPI_PROD, 0, world);
  else
    MPI_Reduce(values, NULL, 4, MPI_INT, MPI_PROD, 0, world);
  int ok = 1;
  if (rank == 0)
    for (int i = 0; i < 4; i++) ok &= values[i] == 24 * (i + 1) * (i + 1) * (i + 1) * (i + 1);
  check("reduce_in_place", rank == 0 ? weighted_sum(values, 4) : 0, ok);
}

static void test_allreduce(void) {
  int send[3] = {rank, -rank, rank * rank}, max[3], min[3];
  MPI_Allreduce(send, max, 3, MPI_INT, MPI_MAX, world);
  MPI_Allreduce(send, min, 3, MPI_INT, MPI_MIN, world);
  int ok = max[0] == 3 && max[1] == 0 && max[2] == 9 && min[0] == 0 && min[1] == -3 && min[2] == 0;
  check("allreduce_max_min", weighted_sum(max, 3) * 1000 + weighted_sum(min, 3), ok);

  int values[5];
  reduce_input(values);
  MPI_Allreduce(MPI_IN_PLACE, values, 5, MPI_INT, MPI_SUM, world);
  check("allreduce_in_place", weighted_sum(values, 5), reduce_ok(values));

  /* Ties must resolve to the lowest rank, as the standard requires for MINLOC/MAXLOC. */
  struct {
    int value;
    int index;
  } mine = {rank % 2, rank}, minloc, maxloc;
  MPI_Allreduce(&mine, &minloc, 1, MPI_2INT, MPI_MINLOC, world);
  MPI_Allreduce(&mine, &maxloc, 1, MPI_2INT, MPI_MAXLOC, world);
  ok = minloc.value == 0 && minloc.index == 0 && maxloc.value == 1 && maxloc.index == 1;
  check("allreduce_minloc_maxloc", minloc.index * 10 + maxloc.index, ok);
}

static void test_gather(void) {
  int send[2] = {10 * rank, 10 * rank + 1}, recv[2 * NRANKS];
  fill_constant(recv, 2 * NRANKS, -1);
  MPI_Gather(send, 2, MPI_INT, recv, 2, MPI_INT, 3, world);
  check("gather", rank == 3 ? weighted_sum(recv, 2 * NRANKS) : 0, rank != 3 || gathered_ok(recv));

  fill_constant(recv, 2 * NRANKS, -1);
  if (rank == 0) {
    recv[0] = send[0];
    recv[1] = send[1];
    MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, recv, 2, MPI_INT, 0, world);
  } else {
    MPI_Gather(send, 2, MPI_INT, NULL, 2, MPI_INT, 0, world);
  }
  check("gather_in_place", rank == 0 ? weighted_sum(recv, 2 * NRANKS) : 0, rank != 0 || gathered_ok(recv));

  /* Gatherv leaves one unused slot after every rank's block; those must stay untouched. */
  int counts[NRANKS], displs[NRANKS];
  for (int r = 0; r < NRANKS; r++) {
    counts[r] = r + 1;
    displs[r] = r * (r + 1) / 2 + r;
  }
  int mine[NRANKS], gathered[14];
  for (int k = 0; k <= rank; k++) mine[k] = 100 * rank + k;
  fill_constant(gathered, 14, -1);
  MPI_Gatherv(mine, rank + 1, MPI_INT, gathered, counts, displs, MPI_INT, 0, world);
  int ok = 1;
  if (rank == 0) {
    int expected[14];
    fill_constant(expected, 14, -1);
    for (int r = 0; r < NRANKS; r++)
      for (int k = 0; k < counts[r]; k++) expected[displs[r] + k] = 100 * r + k;
    for (int i = 0; i < 14; i++) ok &= gathered[i] == expected[i];
  }
  check("gatherv", rank == 0 ? weighted_sum(gathered, 14) : 0, ok);
}

static void test_scatter(void) {
  int source[3 * NRANKS], recv[3];
  for (int i = 0; i < 3 * NRANKS; i++) source[i] = 500 + i;
  fill_constant(recv, 3, -1);
  MPI_Scatter(source, 3, MPI_INT, recv, 3, MPI_INT, 1, world);
  check("scatter", weighted_sum(recv, 3), scattered_ok(recv));

  /* Scatterv with the blocks stored in reverse rank order in the root's buffer. */
  int counts[NRANKS] = {1, 2, 3, 4}, displs[NRANKS] = {9, 7, 4, 0};
  int values[10], mine[NRANKS];
  for (int i = 0; i < 10; i++) values[i] = 700 + i;
  fill_constant(mine, NRANKS, -1);
  MPI_Scatterv(values, counts, displs, MPI_INT, mine, rank + 1, MPI_INT, 2, world);
  int ok = rank + 1 >= NRANKS || mine[rank + 1] == -1;
  for (int k = 0; k <= rank; k++) ok &= mine[k] == 700 + displs[rank] + k;
  check("scatterv", weighted_sum(mine, rank + 1), ok);
}

static void test_allgather(void) {
  int send[2] = {10 * rank, 10 * rank + 1}, recv[2 * NRANKS];
  fill_constant(recv, 2 * NRANKS, -1);
  MPI_Allgather(send, 2, MPI_INT, recv, 2, MPI_INT, world);
  check("allgather", weighted_sum(recv, 2 * NRANKS), gathered_ok(recv));

  fill_constant(recv, 2 * NRANKS, -1);
  recv[2 * rank] = send[0];
  recv[2 * rank + 1] = send[1];
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, 2, MPI_INT, world);
  check("allgather_in_place", weighted_sum(recv, 2 * NRANKS), gathered_ok(recv));

  int counts[NRANKS], displs[NRANKS], mine[NRANKS], all[10];
  for (int r = 0; r < NRANKS; r++) {
    counts[r] = r + 1;
    displs[r] = r * (r + 1) / 2;
  }
  for (int k = 0; k <= rank; k++) mine[k] = 100 * rank + k;
  fill_constant(all, 10, -1);
  MPI_Allgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, world);
  int ok = 1;
  for (int r = 0; r < NRANKS; r++)
    for (int k = 0; k < counts[r]; k++) ok &= all[displs[r] + k] == 100 * r + k;
  check("allgatherv", weighted_sum(all, 10), ok);
}

static void test_alltoall(void) {
  int send[2 * NRANKS], recv[2 * NRANKS];
  alltoall_input(send);
  fill_constant(recv, 2 * NRANKS, -1);
  MPI_Alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, world);
  check("alltoall", weighted_sum(recv, 2 * NRANKS), alltoall_ok(recv));

  int values[2 * NRANKS];
  alltoall_input(values);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, values, 2, MPI_INT, world);
  check("alltoall_in_place", weighted_sum(values, 2 * NRANKS), alltoall_ok(values));

  int counts_to[NRANKS], send_displs[NRANKS], counts_from[NRANKS], recv_displs[NRANKS];
  int vsend[4 * NRANKS], vrecv[4 * NRANKS];
  fill_constant(vrecv, 4 * NRANKS, -1);
  alltoallv_layout(counts_to, send_displs, counts_from, recv_displs, vsend);
  MPI_Alltoallv(vsend, counts_to, send_displs, MPI_INT, vrecv, counts_from, recv_displs, MPI_INT, world);
  check("alltoallv", weighted_sum(vrecv, 4 * NRANKS), alltoallv_ok(vrecv, recv_displs));
}

/* One 8-byte slot per peer; the union makes storing ints or a double in it well defined. */
union peer_slot {
  int pair[2];
  double value;
};

/*
 * Alltoallw with a different datatype per peer: to an even rank two MPI_INTs,
 * to an odd rank one MPI_DOUBLE. Every block occupies an 8-byte slot; the
 * receive slots are in reverse rank order to exercise the byte displacements.
 */
static void test_alltoallw(void) {
  union peer_slot send_slots[NRANKS], recv_slots[NRANKS];
  int send_counts[NRANKS], send_displs[NRANKS], recv_counts[NRANKS], recv_displs[NRANKS];
  MPI_Datatype send_types[NRANKS], recv_types[NRANKS];

  for (int j = 0; j < NRANKS; j++) {
    send_displs[j] = (int)(j * sizeof(union peer_slot));
    if (j % 2 == 0) {
      send_slots[j].pair[0] = rank * 100 + j;
      send_slots[j].pair[1] = -rank;
      send_counts[j] = 2;
      send_types[j] = MPI_INT;
    } else {
      send_slots[j].value = rank * 100 + j + 0.5;
      send_counts[j] = 1;
      send_types[j] = MPI_DOUBLE;
    }
    recv_slots[j].value = -1.0;
    recv_displs[j] = (int)((NRANKS - 1 - j) * sizeof(union peer_slot));
    recv_counts[j] = rank % 2 == 0 ? 2 : 1;
    recv_types[j] = rank % 2 == 0 ? MPI_INT : MPI_DOUBLE;
  }
  MPI_Alltoallw(send_slots, send_counts, send_displs, send_types, recv_slots, recv_counts, recv_displs,
                recv_types, world);

  int ok = 1;
  long long value = 0;
  for (int i = 0; i < NRANKS; i++) {
    const union peer_slot *slot = &recv_slots[NRANKS - 1 - i];
    if (rank % 2 == 0) {
      ok &= slot->pair[0] == i * 100 + rank && slot->pair[1] == -i;
      value += (i + 1) * (long long)(slot->pair[0] + slot->pair[1]);
    } else {
      ok &= slot->value == i * 100 + rank + 0.5;
      value += (i + 1) * (long long)(slot->value * 2);
    }
  }
  check("alltoallw", value, ok);
}

static void test_reduce_scatter(void) {
  int counts[NRANKS] = {1, 2, 3, 4}, send[10], recv[NRANKS];
  for (int i = 0; i < 10; i++) send[i] = rank + i;
  fill_constant(recv, NRANKS, -1);
  MPI_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, world);
  int first = rank * (rank + 1) / 2, ok = 1;
  for (int k = 0; k <= rank; k++) ok &= recv[k] == 6 + 4 * (first + k);
  check("reduce_scatter", weighted_sum(recv, rank + 1), ok);

  int block_send[2 * NRANKS], block_recv[2] = {-1, -1};
  reduce_scatter_block_input(block_send);
  MPI_Reduce_scatter_block(block_send, block_recv, 2, MPI_INT, MPI_SUM, world);
  check("reduce_scatter_block", weighted_sum(block_recv, 2), reduce_scatter_block_ok(block_recv));
}

static void test_scan(void) {
  int mine = rank + 1, prefix = -1, exclusive = -1;
  MPI_Scan(&mine, &prefix, 1, MPI_INT, MPI_SUM, world);
  check("scan", prefix, prefix == scan_expected());
  MPI_Exscan(&mine, &exclusive, 1, MPI_INT, MPI_SUM, world);
  /* Exscan leaves rank 0's result undefined, so it is neither checked nor reported. */
  check("exscan", rank == 0 ? 0 : exclusive, rank == 0 || exclusive == exscan_expected());
}

enum { AFFINE_MODULUS = 1000003 };

/* x -> a*x + b (mod AFFINE_MODULUS); composing such maps is associative but not commutative. */
typedef struct {
  long long a, b;
} affine_map;

static affine_map rank_map(int r, int element) {
  affine_map m = {r + 2 + element, 3 * r + 1 + 5 * element};
  return m;
}

/* left then right: right(left(x)) */
static affine_map compose(affine_map left_map, affine_map right_map) {
  affine_map m = {(right_map.a * left_map.a) % AFFINE_MODULUS,
                  (right_map.a * left_map.b + right_map.b) % AFFINE_MODULUS};
  return m;
}

/* MPI calls this with invec holding the lower ranks' partial result: inout = in o inout. */
static void compose_op(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype) {
  (void)datatype;
  const affine_map *in = invec;
  affine_map *inout = inoutvec;
  for (int i = 0; i < *len; i++) inout[i] = compose(in[i], inout[i]);
}

static void sum_mod_op(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype) {
  (void)datatype;
  const int *in = invec;
  int *inout = inoutvec;
  for (int i = 0; i < *len; i++) inout[i] = (inout[i] + in[i]) % 97;
}

/* The composition of ranks first..last, in rank order. */
static affine_map expected_composition(int last, int element) {
  affine_map m = rank_map(0, element);
  for (int r = 1; r <= last; r++) m = compose(m, rank_map(r, element));
  return m;
}

static long long affine_value(const affine_map maps[2]) {
  return (maps[0].a + maps[0].b) * 10 + (maps[1].a + maps[1].b) % 10;
}

static void test_user_ops(void) {
  MPI_Datatype affine_type;
  MPI_Type_contiguous(2, MPI_LONG_LONG, &affine_type);
  MPI_Type_commit(&affine_type);
  MPI_Op compose_mpi_op, sum_mod_mpi_op;
  MPI_Op_create(compose_op, 0, &compose_mpi_op);
  MPI_Op_create(sum_mod_op, 1, &sum_mod_mpi_op);

  int commutative_compose = -1, commutative_sum = -1;
  MPI_Op_commutative(compose_mpi_op, &commutative_compose);
  MPI_Op_commutative(sum_mod_mpi_op, &commutative_sum);
  check("op_commutative", commutative_compose * 10 + commutative_sum,
        commutative_compose == 0 && commutative_sum == 1);

  affine_map mine[2] = {rank_map(rank, 0), rank_map(rank, 1)}, result[2];
  affine_map whole[2] = {expected_composition(NRANKS - 1, 0), expected_composition(NRANKS - 1, 1)};

  MPI_Reduce(mine, result, 2, affine_type, compose_mpi_op, 3, world);
  int ok = rank != 3 || (result[0].a == whole[0].a && result[0].b == whole[0].b &&
                         result[1].a == whole[1].a && result[1].b == whole[1].b);
  check("user_op_reduce", rank == 3 ? affine_value(result) : 0, ok);

  MPI_Allreduce(mine, result, 2, affine_type, compose_mpi_op, world);
  ok = result[0].a == whole[0].a && result[0].b == whole[0].b && result[1].a == whole[1].a &&
       result[1].b == whole[1].b;
  check("user_op_allreduce", affine_value(result), ok);

  MPI_Scan(mine, result, 2, affine_type, compose_mpi_op, world);
  affine_map prefix[2] = {expected_composition(rank, 0), expected_composition(rank, 1)};
  ok = result[0].a == prefix[0].a && result[0].b == prefix[0].b && result[1].a == prefix[1].a &&
       result[1].b == prefix[1].b;
  check("user_op_scan", affine_value(result), ok);

  int values[3] = {rank * 40, rank * 40 + 1, 96}, sums[3];
  MPI_Allreduce(values, sums, 3, MPI_INT, sum_mod_mpi_op, world);
  /* Each partial result is reduced mod 97, so any association order gives the plain sum mod 97. */
  ok = sums[0] == 240 % 97 && sums[1] == 244 % 97 && sums[2] == (96 * 4) % 97;
  check("user_op_commutative_allreduce", weighted_sum(sums, 3), ok);

  MPI_Op_free(&compose_mpi_op);
  MPI_Op_free(&sum_mod_mpi_op);
  MPI_Type_free(&affine_type);
  check("op_free", 1, compose_mpi_op == MPI_OP_NULL && sum_mod_mpi_op == MPI_OP_NULL);
}

static void test_nonblocking(void) {
  MPI_Request request;
  int flag = 0;
  long long polls_done = 0;
  MPI_Ibarrier(world, &request);
  while (!flag) {
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    polls_done = 1;
  }
  check("ibarrier_test_loop", polls_done, flag && request == MPI_REQUEST_NULL);

  int bcast_values[6];
  for (int i = 0; i < 6; i++) bcast_values[i] = rank == 1 ? 3 * i + 2 : -1;
  MPI_Ibcast(bcast_values, 6, MPI_INT, 1, world, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= bcast_values[i] == 3 * i + 2;
  check("ibcast_wait", weighted_sum(bcast_values, 6), ok);

  /* Many collectives in flight at once on the same communicator, completed by one MPI_Waitall. */
  enum {
    IREDUCE,
    IALLREDUCE,
    IGATHER,
    ISCATTER,
    IALLGATHER,
    IALLTOALL,
    IALLTOALLV,
    ISCAN,
    IEXSCAN,
    IREDUCE_SCATTER_BLOCK,
    OUTSTANDING
  };
  MPI_Request requests[OUTSTANDING];
  MPI_Status statuses[OUTSTANDING];

  int reduce_send[5], reduce_recv[5], allreduce_recv[5];
  reduce_input(reduce_send);
  fill_constant(reduce_recv, 5, -1);
  fill_constant(allreduce_recv, 5, -1);
  int gather_send[2] = {10 * rank, 10 * rank + 1}, gather_recv[2 * NRANKS], allgather_recv[2 * NRANKS];
  fill_constant(gather_recv, 2 * NRANKS, -1);
  fill_constant(allgather_recv, 2 * NRANKS, -1);
  int scatter_source[3 * NRANKS], scatter_recv[3];
  for (int i = 0; i < 3 * NRANKS; i++) scatter_source[i] = 500 + i;
  fill_constant(scatter_recv, 3, -1);
  int alltoall_send[2 * NRANKS], alltoall_recv[2 * NRANKS];
  alltoall_input(alltoall_send);
  fill_constant(alltoall_recv, 2 * NRANKS, -1);
  int counts_to[NRANKS], send_displs[NRANKS], counts_from[NRANKS], recv_displs[NRANKS];
  int vsend[4 * NRANKS], vrecv[4 * NRANKS];
  fill_constant(vrecv, 4 * NRANKS, -1);
  alltoallv_layout(counts_to, send_displs, counts_from, recv_displs, vsend);
  int mine = rank + 1, prefix = -1, exclusive = -1;
  int block_send[2 * NRANKS], block_recv[2] = {-1, -1};
  reduce_scatter_block_input(block_send);

  MPI_Ireduce(reduce_send, reduce_recv, 5, MPI_INT, MPI_SUM, 2, world, &requests[IREDUCE]);
  MPI_Iallreduce(reduce_send, allreduce_recv, 5, MPI_INT, MPI_SUM, world, &requests[IALLREDUCE]);
  MPI_Igather(gather_send, 2, MPI_INT, gather_recv, 2, MPI_INT, 0, world, &requests[IGATHER]);
  MPI_Iscatter(scatter_source, 3, MPI_INT, scatter_recv, 3, MPI_INT, 3, world, &requests[ISCATTER]);
  MPI_Iallgather(gather_send, 2, MPI_INT, allgather_recv, 2, MPI_INT, world, &requests[IALLGATHER]);
  MPI_Ialltoall(alltoall_send, 2, MPI_INT, alltoall_recv, 2, MPI_INT, world, &requests[IALLTOALL]);
  MPI_Ialltoallv(vsend, counts_to, send_displs, MPI_INT, vrecv, counts_from, recv_displs, MPI_INT, world,
                 &requests[IALLTOALLV]);
  MPI_Iscan(&mine, &prefix, 1, MPI_INT, MPI_SUM, world, &requests[ISCAN]);
  MPI_Iexscan(&mine, &exclusive, 1, MPI_INT, MPI_SUM, world, &requests[IEXSCAN]);
  MPI_Ireduce_scatter_block(block_send, block_recv, 2, MPI_INT, MPI_SUM, world,
                            &requests[IREDUCE_SCATTER_BLOCK]);
  MPI_Waitall(OUTSTANDING, requests, statuses);

  int all_null = 1;
  for (int i = 0; i < OUTSTANDING; i++) all_null &= requests[i] == MPI_REQUEST_NULL;
  check("nonblocking_waitall", all_null, all_null);
  check("ireduce", rank == 2 ? weighted_sum(reduce_recv, 5) : 0, rank != 2 || reduce_ok(reduce_recv));
  check("iallreduce", weighted_sum(allreduce_recv, 5), reduce_ok(allreduce_recv));
  check("igather", rank == 0 ? weighted_sum(gather_recv, 2 * NRANKS) : 0,
        rank != 0 || gathered_ok(gather_recv));
  check("iscatter", weighted_sum(scatter_recv, 3), scattered_ok(scatter_recv));
  check("iallgather", weighted_sum(allgather_recv, 2 * NRANKS), gathered_ok(allgather_recv));
  check("ialltoall", weighted_sum(alltoall_recv, 2 * NRANKS), alltoall_ok(alltoall_recv));
  check("ialltoallv", weighted_sum(vrecv, 4 * NRANKS), alltoallv_ok(vrecv, recv_displs));
  check("iscan", prefix, prefix == scan_expected());
  check("iexscan", rank == 0 ? 0 : exclusive, rank == 0 || exclusive == exscan_expected());
  check("ireduce_scatter_block", weighted_sum(block_recv, 2), reduce_scatter_block_ok(block_recv));

  /* Completion by polling instead of waiting. */
  int values[5];
  reduce_input(values);
  MPI_Iallreduce(MPI_IN_PLACE, values, 5, MPI_INT, MPI_SUM, world, &request);
  for (flag = 0; !flag;) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
  check("iallreduce_in_place_test_loop", weighted_sum(values, 5), reduce_ok(values));
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "collectives")) return 1;

  test_barrier_bcast();
  test_reduce();
  test_allreduce();
  test_gather();
  test_scatter();
  test_allgather();
  test_alltoall();
  test_alltoallw();
  test_reduce_scatter();
  test_scan();
  test_user_ops();
  test_nonblocking();

  return finish("collectives");
}
