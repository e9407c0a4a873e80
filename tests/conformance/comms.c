/* Conformance test: communicators, groups, topologies and names behave the same with a tool interposed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int sum_over(MPI_Comm comm, int value) {
  int sum = -1;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm);
  return sum;
}

/* Frees a communicator and reports whether the handle was reset, as the standard requires. */
static int free_comm(MPI_Comm *comm) {
  MPI_Comm_free(comm);
  return *comm == MPI_COMM_NULL;
}

static void test_dup_idup_compare(void) {
  int ident = -1, congruent = -1, idup_congruent = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &ident);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &congruent);
  int dup_rank = -1;
  MPI_Comm_rank(dup, &dup_rank);
  int ok = ident == MPI_IDENT && congruent == MPI_CONGRUENT && dup_rank == rank && sum_over(dup, rank) == 6;
  ok &= free_comm(&dup);
  check("comm_dup", congruent == MPI_CONGRUENT, ok);

  MPI_Comm idup;
  MPI_Request request;
  MPI_Comm_idup(MPI_COMM_WORLD, &idup, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Comm_compare(MPI_COMM_WORLD, idup, &idup_congruent);
  ok = idup_congruent == MPI_CONGRUENT && request == MPI_REQUEST_NULL && sum_over(idup, rank + 1) == 10;
  ok &= free_comm(&idup);
  check("comm_idup", idup_congruent == MPI_CONGRUENT, ok);
}

static void test_split(void) {
  /* Negative keys reverse the order: evens become {2, 0} and odds {3, 1}. */
  MPI_Comm halves;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &halves);
  int half_rank = -1, half_size = -1, relation = -1;
  MPI_Comm_rank(halves, &half_rank);
  MPI_Comm_size(halves, &half_size);
  MPI_Comm_compare(MPI_COMM_WORLD, halves, &relation);
  int members_sum = sum_over(halves, rank);
  int ok = half_size == 2 && half_rank == (rank < 2 ? 1 : 0) && relation == MPI_UNEQUAL &&
           members_sum == (rank % 2 == 0 ? 2 : 4);
  ok &= free_comm(&halves);
  check("comm_split", half_rank * 10 + members_sum, ok);

  /* MPI_UNDEFINED opts a rank out; the rest keep world order through equal keys. */
  MPI_Comm most;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 3 ? MPI_UNDEFINED : 0, 0, &most);
  int most_rank = -1;
  ok = rank == 3 ? most == MPI_COMM_NULL : most != MPI_COMM_NULL;
  if (most != MPI_COMM_NULL) {
    MPI_Comm_rank(most, &most_rank);
    ok &= most_rank == rank && sum_over(most, 1) == 3;
    ok &= free_comm(&most);
  }
  check("comm_split_undefined", most_rank, ok);

  /* How many ranks share a node depends on where the job runs, so only consistency is reported. */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size = -1, node_rank = -1, bounds[2], extremes[2];
  MPI_Comm_size(node, &node_size);
  MPI_Comm_rank(node, &node_rank);
  bounds[0] = node_size;
  bounds[1] = -node_size;
  MPI_Allreduce(bounds, extremes, 2, MPI_INT, MPI_MIN, node);
  int rank_max = -1;
  MPI_Allreduce(&node_rank, &rank_max, 1, MPI_INT, MPI_MAX, node);
  ok = node_size >= 1 && node_size <= NRANKS && extremes[0] == node_size && -extremes[1] == node_size &&
       rank_max == node_size - 1;
  ok &= free_comm(&node);
  check("comm_split_type_shared", ok, ok);
}

static void test_create(void) {
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);

  /* Group order decides the new ranks: world 3 becomes 0 and world 1 becomes 1. */
  int members[2] = {3, 1};
  MPI_Group pair;
  MPI_Group_incl(world_group, 2, members, &pair);
  MPI_Comm created;
  MPI_Comm_create(MPI_COMM_WORLD, pair, &created);
  int created_rank = -1;
  int ok = (rank == 1 || rank == 3) ? created != MPI_COMM_NULL : created == MPI_COMM_NULL;
  if (created != MPI_COMM_NULL) {
    MPI_Comm_rank(created, &created_rank);
    ok &= created_rank == (rank == 3 ? 0 : 1) && sum_over(created, rank) == 4;
    ok &= free_comm(&created);
  }
  check("comm_create", created_rank, ok);

  /* Only the members call MPI_Comm_create_group. */
  int evens[2] = {0, 2};
  MPI_Group even_group;
  MPI_Group_incl(world_group, 2, evens, &even_group);
  int group_rank = -1;
  ok = 1;
  if (rank % 2 == 0) {
    MPI_Comm from_group;
    MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 17, &from_group);
    MPI_Comm_rank(from_group, &group_rank);
    ok = group_rank == rank / 2 && sum_over(from_group, rank) == 2;
    ok &= free_comm(&from_group);
  }
  check("comm_create_group", group_rank, ok);

  MPI_Group_free(&pair);
  MPI_Group_free(&even_group);
  MPI_Group_free(&world_group);
}

static void test_intercomm(void) {
  /* Evens and odds form the two sides; each side's leader is its lowest world rank. */
  MPI_Comm side;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &side);
  int remote_leader = rank % 2 == 0 ? 1 : 0;
  MPI_Comm inter;
  MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, remote_leader, 42, &inter);

  int is_inter = -1, local_size = -1, remote_size = -1, local_rank = -1;
  MPI_Comm_test_inter(inter, &is_inter);
  MPI_Comm_size(inter, &local_size);
  MPI_Comm_remote_size(inter, &remote_size);
  MPI_Comm_rank(inter, &local_rank);

  /* Ranks in an intercommunicator address the other side: local k talks to remote k. */
  int partner_world = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, local_rank, 5, &partner_world, 1, MPI_INT, local_rank, 5, inter,
               MPI_STATUS_IGNORE);
  int ok = is_inter == 1 && local_size == 2 && remote_size == 2 && local_rank == rank / 2 &&
           partner_world == (rank ^ 1);
  check("intercomm_create", partner_world, ok);

  /* high=1 for the odd side puts the even ranks first in the merged communicator. */
  MPI_Comm merged;
  MPI_Intercomm_merge(inter, rank % 2, &merged);
  int merged_rank = -1, merged_size = -1, merged_inter = -1;
  MPI_Comm_rank(merged, &merged_rank);
  MPI_Comm_size(merged, &merged_size);
  MPI_Comm_test_inter(merged, &merged_inter);
  int expected_rank = rank % 2 == 0 ? rank / 2 : 2 + rank / 2;
  ok = merged_rank == expected_rank && merged_size == NRANKS && merged_inter == 0 &&
       sum_over(merged, merged_rank) == 6;
  ok &= free_comm(&merged);
  ok &= free_comm(&inter);
  ok &= free_comm(&side);
  check("intercomm_merge", merged_rank, ok);
}

static void test_groups(void) {
  MPI_Group world_group, picked, without_zero, joined, common, reversed;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);

  int picked_ranks[3] = {3, 1, 2};
  MPI_Group_incl(world_group, 3, picked_ranks, &picked);
  int excluded[1] = {0};
  MPI_Group_excl(world_group, 1, excluded, &without_zero);
  /* Union keeps the first group's order then appends the rest; intersection keeps the first group's order. */
  MPI_Group_union(picked, without_zero, &joined);
  MPI_Group_intersection(without_zero, picked, &common);
  int ranges[1][3] = {{3, 0, -1}};
  MPI_Group_range_incl(world_group, 1, ranges, &reversed);

  int sizes[5];
  MPI_Group_size(picked, &sizes[0]);
  MPI_Group_size(without_zero, &sizes[1]);
  MPI_Group_size(joined, &sizes[2]);
  MPI_Group_size(common, &sizes[3]);
  MPI_Group_size(reversed, &sizes[4]);
  int ok = sizes[0] == 3 && sizes[1] == 3 && sizes[2] == 3 && sizes[3] == 3 && sizes[4] == 4;

  int in_picked = -2, in_reversed = -2;
  MPI_Group_rank(picked, &in_picked);
  MPI_Group_rank(reversed, &in_reversed);
  int expected_picked = rank == 3 ? 0 : rank == 1 ? 1 : rank == 2 ? 2 : MPI_UNDEFINED;
  ok &= in_picked == expected_picked && in_reversed == 3 - rank;

  /* Translating group ranks back to world ranks reveals each group's order. */
  int probe[4] = {0, 1, 2, 3}, translated[4];
  int order_code = 0;
  MPI_Group groups[4] = {picked, joined, common, reversed};
  int group_sizes[4] = {3, 3, 3, 4};
  int expected_codes[4] = {312, 312, 123, 3210};
  for (int g = 0; g < 4; g++) {
    MPI_Group_translate_ranks(groups[g], group_sizes[g], probe, world_group, translated);
    int code = 0;
    for (int i = 0; i < group_sizes[g]; i++) code = code * 10 + translated[i];
    ok &= code == expected_codes[g];
    order_code = order_code * 10 + (code == expected_codes[g]);
  }
  /* World rank 0 is not in without_zero. */
  MPI_Group_translate_ranks(world_group, 1, probe, without_zero, translated);
  ok &= translated[0] == MPI_UNDEFINED;

  int relations[4];
  MPI_Group_compare(picked, joined, &relations[0]);
  MPI_Group_compare(without_zero, common, &relations[1]);
  MPI_Group_compare(picked, common, &relations[2]);
  MPI_Group_compare(world_group, reversed, &relations[3]);
  ok &= relations[0] == MPI_IDENT && relations[1] == MPI_IDENT && relations[2] == MPI_SIMILAR &&
        relations[3] == MPI_SIMILAR;
  MPI_Group unrelated;
  int only_zero[1] = {0};
  MPI_Group_incl(world_group, 1, only_zero, &unrelated);
  int unequal = -1;
  MPI_Group_compare(unrelated, picked, &unequal);
  ok &= unequal == MPI_UNEQUAL;

  MPI_Group to_free[7] = {world_group, picked, without_zero, joined, common, reversed, unrelated};
  for (int i = 0; i < 7; i++) {
    MPI_Group_free(&to_free[i]);
    ok &= to_free[i] == MPI_GROUP_NULL;
  }
  check("groups", order_code * 100 + in_reversed * 10 + (in_picked == MPI_UNDEFINED ? 9 : in_picked), ok);
}

static void test_cart(void) {
  int dims[2] = {0, 0};
  MPI_Dims_create(NRANKS, 2, dims);
  int ok = dims[0] == 2 && dims[1] == 2;

  /* Periodic along dimension 0 only; no reordering so coordinates are (rank/2, rank%2). */
  int periods[2] = {1, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int topology = -1, ndims = -1;
  MPI_Topo_test(cart, &topology);
  MPI_Cartdim_get(cart, &ndims);
  int got_dims[2], got_periods[2], my_coords[2], coords[2];
  MPI_Cart_get(cart, 2, got_dims, got_periods, my_coords);
  MPI_Cart_coords(cart, rank, 2, coords);
  ok &= topology == MPI_CART && ndims == 2 && got_dims[0] == 2 && got_dims[1] == 2 && got_periods[0] == 1 &&
        got_periods[1] == 0 && my_coords[0] == rank / 2 && my_coords[1] == rank % 2 &&
        coords[0] == my_coords[0] && coords[1] == my_coords[1];

  int back = -1, wrapped = -1;
  MPI_Cart_rank(cart, coords, &back);
  /* Out-of-range coordinates wrap along the periodic dimension. */
  int outside[2] = {coords[0] - 1, coords[1]};
  MPI_Cart_rank(cart, outside, &wrapped);
  ok &= back == rank && wrapped == (rank ^ 2);

  int source0, dest0, source1, dest1;
  MPI_Cart_shift(cart, 0, 1, &source0, &dest0);
  MPI_Cart_shift(cart, 1, 1, &source1, &dest1);
  int edge = rank % 2;
  ok &= source0 == (rank ^ 2) && dest0 == (rank ^ 2) && source1 == (edge == 0 ? MPI_PROC_NULL : rank - 1) &&
        dest1 == (edge == 0 ? rank + 1 : MPI_PROC_NULL);
  check("cart", coords[0] * 10 + coords[1], ok);

  /* Keeping dimension 1 gives the rows {0,1} and {2,3}. */
  int remain[2] = {0, 1};
  MPI_Comm row;
  MPI_Cart_sub(cart, remain, &row);
  int row_rank = -1, row_size = -1, row_topology = -1;
  MPI_Comm_rank(row, &row_rank);
  MPI_Comm_size(row, &row_size);
  MPI_Topo_test(row, &row_topology);
  ok = row_rank == rank % 2 && row_size == 2 && row_topology == MPI_CART &&
       sum_over(row, rank) == (rank < 2 ? 1 : 5);
  ok &= free_comm(&row);
  ok &= free_comm(&cart);
  check("cart_sub", row_rank * 10 + row_size, ok);
}

/* MPI_UNWEIGHTED in Open MPI is (int *)2, which GCC 11+ flags under -Wstringop-overread; it is valid MPI. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
static void create_unweighted_dist_graph(int degree, const int destinations[], MPI_Comm *graph) {
  int sources[1] = {rank};
  int degrees[1] = {degree};
  MPI_Dist_graph_create(MPI_COMM_WORLD, 1, sources, degrees, destinations, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                        graph);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static void test_graphs(void) {
  /* An undirected ring: node r is linked to r+1 and r-1. */
  int index[NRANKS] = {2, 4, 6, 8};
  int edges[8] = {1, 3, 0, 2, 1, 3, 0, 2};
  MPI_Comm graph;
  MPI_Graph_create(MPI_COMM_WORLD, NRANKS, index, edges, 0, &graph);
  int topology = -1, nnodes = -1, nedges = -1, count = -1, neighbours[2] = {-1, -1};
  MPI_Topo_test(graph, &topology);
  MPI_Graphdims_get(graph, &nnodes, &nedges);
  MPI_Graph_neighbors_count(graph, rank, &count);
  MPI_Graph_neighbors(graph, rank, 2, neighbours);
  /* Graph_neighbors returns the edges in the order they were given. */
  int ok = topology == MPI_GRAPH && nnodes == NRANKS && nedges == 8 && count == 2 &&
           neighbours[0] == edges[2 * rank] && neighbours[1] == edges[2 * rank + 1];
  ok &= free_comm(&graph);
  check("graph", neighbours[0] * 10 + neighbours[1], ok);

  /* Each rank declares its own outgoing edges r -> r+1 and r -> r+2. */
  int destinations[2] = {(rank + 1) % NRANKS, (rank + 2) % NRANKS};
  MPI_Comm dist;
  create_unweighted_dist_graph(2, destinations, &dist);
  int dist_topology = -1, indegree = -1, outdegree = -1, weighted = -1;
  MPI_Topo_test(dist, &dist_topology);
  MPI_Dist_graph_neighbors_count(dist, &indegree, &outdegree, &weighted);
  int got_sources[2] = {-1, -1}, got_destinations[2] = {-1, -1}, source_weights[2], destination_weights[2];
  MPI_Dist_graph_neighbors(dist, 2, got_sources, source_weights, 2, got_destinations, destination_weights);
  /* MPI_Dist_graph_create leaves the neighbour order to the implementation, so compare sorted lists. */
  qsort(got_sources, 2, sizeof(int), compare_ints);
  qsort(got_destinations, 2, sizeof(int), compare_ints);
  int expected_sources[2] = {(rank + NRANKS - 1) % NRANKS, (rank + NRANKS - 2) % NRANKS};
  qsort(expected_sources, 2, sizeof(int), compare_ints);
  qsort(destinations, 2, sizeof(int), compare_ints);
  ok = dist_topology == MPI_DIST_GRAPH && indegree == 2 && outdegree == 2 && weighted == 0 &&
       got_sources[0] == expected_sources[0] && got_sources[1] == expected_sources[1] &&
       got_destinations[0] == destinations[0] && got_destinations[1] == destinations[1];
  ok &= free_comm(&dist);
  check("dist_graph",
        got_sources[0] * 1000 + got_sources[1] * 100 + got_destinations[0] * 10 + got_destinations[1], ok);

  int world_topology = -1;
  MPI_Topo_test(MPI_COMM_WORLD, &world_topology);
  check("topo_test_world", world_topology == MPI_UNDEFINED, world_topology == MPI_UNDEFINED);
}

static void test_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &length);
  int ok = strcmp(name, "MPI_COMM_WORLD") == 0 && length == (int)strlen(name);

  MPI_Comm named;
  MPI_Comm_dup(MPI_COMM_WORLD, &named);
  const char *wanted = "conformance-named-dup";
  MPI_Comm_set_name(named, wanted);
  length = -1;
  MPI_Comm_get_name(named, name, &length);
  ok &= strcmp(name, wanted) == 0 && length == (int)strlen(wanted);
  ok &= free_comm(&named);
  check("comm_names", length, ok);
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "comms")) return 1;

  test_dup_idup_compare();
  test_split();
  test_create();
  test_intercomm();
  test_groups();
  test_cart();
  test_graphs();
  test_names();

  return finish("comms");
}
