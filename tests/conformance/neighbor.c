/* Conformance test: neighbourhood collectives on Cartesian and distributed-graph topologies with a tool
 * interposed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

enum { DEGREE_CART = 4, DEGREE_GRAPH = 2 };

static long long weighted_sum(const int *values, int count) {
  long long sum = 0;
  for (int i = 0; i < count; i++) sum += (long long)(i + 1) * values[i];
  return sum;
}

/*
 * GCC 11+ mistakes Open MPI's MPI_UNWEIGHTED, the constant (int *)2, for a
 * pointer to a zero-sized array and warns under -Wstringop-overread, which is
 * on by default. The argument is valid MPI, so only this wrapper silences it.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
static void create_unweighted_graph(int degree, const int sources[], const int destinations[],
                                    MPI_Comm *graph) {
  /* Without reordering, ranks stay as in MPI_COMM_WORLD. */
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, degree, sources, MPI_UNWEIGHTED, degree, destinations,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, graph);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/*
 * On the 2x2 periodic grid the -1 and +1 neighbours along a dimension are the
 * same process, and MPI implementations have disagreed about which of the two
 * blocks then pairs with which. Data and counts sent along a dimension
 * therefore depend only on the dimension, never on the direction.
 */
static int cart_dimension_of(int neighbour_index) { return neighbour_index / 2; }

static void test_cart(MPI_Comm cart) {
  int neighbours[DEGREE_CART];
  for (int d = 0; d < 2; d++) MPI_Cart_shift(cart, d, 1, &neighbours[2 * d], &neighbours[2 * d + 1]);
  /* Coordinates are (rank/2, rank%2), so moving along dimension 0 flips bit 1 and along 1 flips bit 0. */
  int ok = neighbours[0] == (rank ^ 2) && neighbours[1] == (rank ^ 2) && neighbours[2] == (rank ^ 1) &&
           neighbours[3] == (rank ^ 1);
  check("cart_neighbours", weighted_sum(neighbours, DEGREE_CART), ok);

  int mine = rank * 10 + 1, gathered[DEGREE_CART] = {-1, -1, -1, -1};
  MPI_Neighbor_allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, cart);
  ok = 1;
  for (int k = 0; k < DEGREE_CART; k++) ok &= gathered[k] == neighbours[k] * 10 + 1;
  check("cart_neighbor_allgather", weighted_sum(gathered, DEGREE_CART), ok);

  /* Allgatherv: every rank contributes rank+1 ints. */
  int contribution[NRANKS], counts[DEGREE_CART], displs[DEGREE_CART], all[4 * DEGREE_CART];
  for (int k = 0; k <= rank; k++) contribution[k] = rank * 100 + k;
  for (int k = 0, offset = 0; k < DEGREE_CART; k++) {
    counts[k] = neighbours[k] + 1;
    displs[k] = offset;
    offset += counts[k];
  }
  for (int i = 0; i < 4 * DEGREE_CART; i++) all[i] = -1;
  MPI_Neighbor_allgatherv(contribution, rank + 1, MPI_INT, all, counts, displs, MPI_INT, cart);
  ok = 1;
  for (int k = 0; k < DEGREE_CART; k++)
    for (int i = 0; i < counts[k]; i++) ok &= all[displs[k] + i] == neighbours[k] * 100 + i;
  check("cart_neighbor_allgatherv", weighted_sum(all, 4 * DEGREE_CART), ok);

  int send[DEGREE_CART], recv[DEGREE_CART] = {-1, -1, -1, -1};
  for (int k = 0; k < DEGREE_CART; k++) send[k] = rank * 100 + cart_dimension_of(k) * 10;
  MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, cart);
  ok = 1;
  for (int k = 0; k < DEGREE_CART; k++) ok &= recv[k] == neighbours[k] * 100 + cart_dimension_of(k) * 10;
  check("cart_neighbor_alltoall", weighted_sum(recv, DEGREE_CART), ok);

  /* Alltoallv: 2 ints per block along dimension 0, 3 along dimension 1, packed back to back. */
  int vcounts[DEGREE_CART], vdispls[DEGREE_CART], vsend[12], vrecv[12];
  for (int k = 0, offset = 0; k < DEGREE_CART; k++) {
    vcounts[k] = 2 + cart_dimension_of(k);
    vdispls[k] = offset;
    for (int i = 0; i < vcounts[k]; i++) vsend[offset + i] = rank * 100 + cart_dimension_of(k) * 10 + i;
    offset += vcounts[k];
  }
  for (int i = 0; i < 12; i++) vrecv[i] = -1;
  MPI_Neighbor_alltoallv(vsend, vcounts, vdispls, MPI_INT, vrecv, vcounts, vdispls, MPI_INT, cart);
  ok = 1;
  for (int k = 0; k < DEGREE_CART; k++)
    for (int i = 0; i < vcounts[k]; i++)
      ok &= vrecv[vdispls[k] + i] == neighbours[k] * 100 + cart_dimension_of(k) * 10 + i;
  check("cart_neighbor_alltoallv", weighted_sum(vrecv, 12), ok);

  /*
   * Alltoallw: along dimension 1 the sender uses one 3-int contiguous type and
   * the receiver three MPI_INTs (same type signature); byte displacements put
   * the received blocks in reverse order.
   */
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int wsend_counts[DEGREE_CART], wrecv_counts[DEGREE_CART];
  MPI_Aint wsend_displs[DEGREE_CART], wrecv_displs[DEGREE_CART];
  MPI_Datatype wsend_types[DEGREE_CART], wrecv_types[DEGREE_CART];
  int wsend[16], wrecv[16];
  for (int k = 0; k < DEGREE_CART; k++) {
    int dim = cart_dimension_of(k);
    wsend_counts[k] = dim == 0 ? 2 : 1;
    wsend_types[k] = dim == 0 ? MPI_INT : triple;
    wsend_displs[k] = (MPI_Aint)(k * 4 * sizeof(int));
    wrecv_counts[k] = dim == 0 ? 2 : 3;
    wrecv_types[k] = MPI_INT;
    wrecv_displs[k] = (MPI_Aint)((DEGREE_CART - 1 - k) * 4 * sizeof(int));
    for (int i = 0; i < 4; i++) wsend[k * 4 + i] = rank * 100 + dim * 10 + i;
  }
  for (int i = 0; i < 16; i++) wrecv[i] = -1;
  MPI_Neighbor_alltoallw(wsend, wsend_counts, wsend_displs, wsend_types, wrecv, wrecv_counts, wrecv_displs,
                         wrecv_types, cart);
  ok = 1;
  for (int k = 0; k < DEGREE_CART; k++) {
    const int *block = &wrecv[(DEGREE_CART - 1 - k) * 4];
    int dim = cart_dimension_of(k);
    for (int i = 0; i < wrecv_counts[k]; i++) ok &= block[i] == neighbours[k] * 100 + dim * 10 + i;
    for (int i = wrecv_counts[k]; i < 4; i++) ok &= block[i] == -1;
  }
  MPI_Type_free(&triple);
  check("cart_neighbor_alltoallw", weighted_sum(wrecv, 16), ok);

  int isend[DEGREE_CART], irecv[DEGREE_CART] = {-1, -1, -1, -1};
  for (int k = 0; k < DEGREE_CART; k++) isend[k] = rank * 1000 + cart_dimension_of(k) * 7;
  MPI_Request request;
  MPI_Ineighbor_alltoall(isend, 1, MPI_INT, irecv, 1, MPI_INT, cart, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  ok = request == MPI_REQUEST_NULL;
  for (int k = 0; k < DEGREE_CART; k++) ok &= irecv[k] == neighbours[k] * 1000 + cart_dimension_of(k) * 7;
  check("cart_ineighbor_alltoall", weighted_sum(irecv, DEGREE_CART), ok);
}

/*
 * Directed graph with edges r -> r+1 and r -> r+2 (mod 4): every ordered pair
 * of processes is joined by at most one edge, so block order is unambiguous.
 */
static void test_dist_graph(MPI_Comm graph) {
  int sources[DEGREE_GRAPH] = {(rank + NRANKS - 1) % NRANKS, (rank + NRANKS - 2) % NRANKS};
  int destinations[DEGREE_GRAPH] = {(rank + 1) % NRANKS, (rank + 2) % NRANKS};

  int indegree = -1, outdegree = -1, weighted = -1;
  MPI_Dist_graph_neighbors_count(graph, &indegree, &outdegree, &weighted);
  int got_sources[DEGREE_GRAPH] = {-1, -1}, got_destinations[DEGREE_GRAPH] = {-1, -1};
  int source_weights[DEGREE_GRAPH], destination_weights[DEGREE_GRAPH];
  MPI_Dist_graph_neighbors(graph, DEGREE_GRAPH, got_sources, source_weights, DEGREE_GRAPH, got_destinations,
                           destination_weights);
  /* The adjacent constructor keeps the neighbour order it was given. */
  int ok = indegree == DEGREE_GRAPH && outdegree == DEGREE_GRAPH && weighted == 0 &&
           got_sources[0] == sources[0] && got_sources[1] == sources[1] &&
           got_destinations[0] == destinations[0] && got_destinations[1] == destinations[1];
  check("graph_neighbours",
        indegree * 1000 + outdegree * 100 + weighted_sum(got_sources, 2) * 10 +
            weighted_sum(got_destinations, 2),
        ok);

  int mine = rank * 10 + 3, gathered[DEGREE_GRAPH] = {-1, -1};
  MPI_Neighbor_allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, graph);
  ok = gathered[0] == sources[0] * 10 + 3 && gathered[1] == sources[1] * 10 + 3;
  check("graph_neighbor_allgather", weighted_sum(gathered, DEGREE_GRAPH), ok);

  int contribution[NRANKS], counts[DEGREE_GRAPH], displs[DEGREE_GRAPH], all[2 * NRANKS];
  for (int k = 0; k <= rank; k++) contribution[k] = rank * 100 + k;
  for (int k = 0, offset = 0; k < DEGREE_GRAPH; k++) {
    counts[k] = sources[k] + 1;
    displs[k] = offset;
    offset += counts[k];
  }
  for (int i = 0; i < 2 * NRANKS; i++) all[i] = -1;
  MPI_Neighbor_allgatherv(contribution, rank + 1, MPI_INT, all, counts, displs, MPI_INT, graph);
  ok = 1;
  for (int k = 0; k < DEGREE_GRAPH; k++)
    for (int i = 0; i < counts[k]; i++) ok &= all[displs[k] + i] == sources[k] * 100 + i;
  check("graph_neighbor_allgatherv", weighted_sum(all, 2 * NRANKS), ok);

  /* Block j goes to destinations[j] and names both ends, so any misrouting shows. */
  int send[DEGREE_GRAPH], recv[DEGREE_GRAPH] = {-1, -1};
  for (int j = 0; j < DEGREE_GRAPH; j++) send[j] = rank * 100 + destinations[j];
  MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, graph);
  ok = recv[0] == sources[0] * 100 + rank && recv[1] == sources[1] * 100 + rank;
  check("graph_neighbor_alltoall", weighted_sum(recv, DEGREE_GRAPH), ok);

  /* Alltoallv: the block on edge a -> b holds a + b + 1 ints. */
  int send_counts[DEGREE_GRAPH], send_displs[DEGREE_GRAPH], recv_counts[DEGREE_GRAPH],
      recv_displs[DEGREE_GRAPH];
  int vsend[16], vrecv[16];
  for (int j = 0, offset = 0; j < DEGREE_GRAPH; j++) {
    send_counts[j] = rank + destinations[j] + 1;
    send_displs[j] = offset;
    for (int i = 0; i < send_counts[j]; i++) vsend[offset + i] = rank * 100 + destinations[j] * 10 + i;
    offset += send_counts[j];
  }
  for (int k = 0, offset = 0; k < DEGREE_GRAPH; k++) {
    recv_counts[k] = sources[k] + rank + 1;
    recv_displs[k] = offset;
    offset += recv_counts[k];
  }
  for (int i = 0; i < 16; i++) vrecv[i] = -1;
  MPI_Neighbor_alltoallv(vsend, send_counts, send_displs, MPI_INT, vrecv, recv_counts, recv_displs, MPI_INT,
                         graph);
  ok = 1;
  for (int k = 0; k < DEGREE_GRAPH; k++)
    for (int i = 0; i < recv_counts[k]; i++)
      ok &= vrecv[recv_displs[k] + i] == sources[k] * 100 + rank * 10 + i;
  check("graph_neighbor_alltoallv", weighted_sum(vrecv, 16), ok);

  /* Alltoallw: an int to the first destination, a double to the second. */
  union {
    int integer;
    double real;
  } wsend[DEGREE_GRAPH], wrecv[DEGREE_GRAPH];
  int wcounts[DEGREE_GRAPH] = {1, 1};
  MPI_Aint wdispls[DEGREE_GRAPH] = {0, (MPI_Aint)sizeof wsend[0]};
  MPI_Datatype wtypes[DEGREE_GRAPH] = {MPI_INT, MPI_DOUBLE};
  wsend[0].integer = rank * 100 + destinations[0];
  wsend[1].real = rank * 100 + destinations[1] + 0.25;
  wrecv[0].integer = -1;
  wrecv[1].real = -1.0;
  /* My first source sends me its first block (an int), my second source its second (a double). */
  MPI_Neighbor_alltoallw(wsend, wcounts, wdispls, wtypes, wrecv, wcounts, wdispls, wtypes, graph);
  ok = wrecv[0].integer == sources[0] * 100 + rank && wrecv[1].real == sources[1] * 100 + rank + 0.25;
  check("graph_neighbor_alltoallw", wrecv[0].integer * 1000 + (long long)(wrecv[1].real * 4), ok);

  int isend[DEGREE_GRAPH], irecv[DEGREE_GRAPH] = {-1, -1};
  for (int j = 0; j < DEGREE_GRAPH; j++) isend[j] = rank * 1000 + destinations[j] * 3;
  MPI_Request request;
  MPI_Ineighbor_alltoall(isend, 1, MPI_INT, irecv, 1, MPI_INT, graph, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  ok = request == MPI_REQUEST_NULL && irecv[0] == sources[0] * 1000 + rank * 3 &&
       irecv[1] == sources[1] * 1000 + rank * 3;
  check("graph_ineighbor_alltoall", weighted_sum(irecv, DEGREE_GRAPH), ok);
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "neighbor")) return 1;

  int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Comm cart;
  /* Without reordering, ranks and coordinates are known in advance. */
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  test_cart(cart);
  MPI_Comm_free(&cart);

  /* The second edge's partner is also the second source, because r+2 == r-2 (mod 4). */
  int sources[DEGREE_GRAPH] = {(rank + NRANKS - 1) % NRANKS, (rank + NRANKS - 2) % NRANKS};
  int destinations[DEGREE_GRAPH] = {(rank + 1) % NRANKS, (rank + 2) % NRANKS};
  MPI_Comm graph;
  create_unweighted_graph(DEGREE_GRAPH, sources, destinations, &graph);
  test_dist_graph(graph);
  MPI_Comm_free(&graph);

  return finish("neighbor");
}
