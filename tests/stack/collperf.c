/* libcollperf.so: a collective-timing PMPI library written the way users write one (like the seed's
 * libCollPerf): each collective's wrapper asks PMPI_Comm_size for the group and times the call
 * with MPI_Wtime (through MPI_, as the seed does), and MPI_Finalize sums the time on rank 0 with
 * PMPI_Reduce. With COLLPERF_BARRIER_IN_ALLGATHER=1, MPI_Allgather first calls MPI_Barrier through
 * MPI_, as the seed's example does: PMPI semantics send that call to this layer's own
 * MPI_Barrier and to the layers below it, never to those above. MPI_Pcontrol is recorded and not
 * passed on (profilers often keep it). At MPI_Finalize it writes what it saw (layer_report.h).
 * A test fixture for tests/stack: loaded only by path, through MPE_STACK. */
#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>

#define LAYER_NAME "libcollperf"
// clang-format off
#define LAYER_ROUTINES(X) \
  X(Init) X(Init_thread) X(Finalize) X(Pcontrol) X(Allgather) X(Barrier) X(Bcast) X(Reduce) \
  X(Allreduce) X(Gather) X(Gatherv) X(Scatter) X(Scatterv) X(Allgatherv) X(Alltoall) X(Alltoallv) \
  X(Alltoallw) X(Reduce_scatter) X(Reduce_scatter_block) X(Scan) X(Exscan)
// clang-format on
#define LAYER_OWN(X) X(Comm_rank) X(Comm_size) X(Wtime) X(Barrier) X(Reduce)
#include "layer_report.h"

static double seconds_in_collectives;
static int barrier_in_allgather;

/* The wall-clock time of the collective, through MPI_Wtime as the seed's library reads it. */
static double now(void) {
  layer_own(O_Wtime, 0);
  return MPI_Wtime();
}

static int group_size(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  layer_own(O_Comm_size, 1);
  return size;
}

static void started(void) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &layer_rank);
  layer_own(O_Comm_rank, 1);
  const char *v = getenv("COLLPERF_BARRIER_IN_ALLGATHER");
  barrier_in_allgather = v && atoi(v) == 1;
}

int MPI_Init(int *argc, char ***argv) {
  layer_enter(R_Init);
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) started();
  layer_leave();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  layer_enter(R_Init_thread);
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) started();
  layer_leave();
  return rc;
}

int MPI_Finalize(void) {
  layer_enter(R_Finalize);
  if (layer_rank < 0) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &layer_rank);
    layer_own(O_Comm_rank, 1);
  }
  double total = 0;
  PMPI_Reduce(&seconds_in_collectives, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  layer_own(O_Reduce, 1);
  layer_write();
  int rc = PMPI_Finalize();
  layer_leave();
  return rc;
}

/* Kept here: not passed on through PMPI_Pcontrol. */
int MPI_Pcontrol(const int level, ...) {
  layer_enter(R_Pcontrol);
  layer_record_pcontrol(level);
  layer_leave();
  return MPI_SUCCESS;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  const int nested = layer_begin(R_Allgather);
  if (barrier_in_allgather) {
    layer_own(O_Barrier, 0);
    MPI_Barrier(comm);
  }
  layer_depth(R_Allgather, nested);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Barrier(MPI_Comm comm) {
  layer_enter(R_Barrier);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Barrier(comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  layer_enter(R_Bcast);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Bcast(buf, count, type, root, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  layer_enter(R_Reduce);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  layer_enter(R_Allreduce);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  layer_enter(R_Gather);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  layer_enter(R_Gatherv);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  layer_enter(R_Scatter);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  layer_enter(R_Scatterv);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  layer_enter(R_Allgatherv);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  layer_enter(R_Alltoall);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm) {
  layer_enter(R_Alltoallv);
  group_size(comm);
  const double t0 = now();
  int rc =
      PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  layer_enter(R_Alltoallw);
  group_size(comm);
  const double t0 = now();
  int rc =
      PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  layer_enter(R_Reduce_scatter);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  layer_enter(R_Reduce_scatter_block);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  layer_enter(R_Scan);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  layer_enter(R_Exscan);
  group_size(comm);
  const double t0 = now();
  int rc = PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  seconds_in_collectives += now() - t0;
  layer_leave();
  return rc;
}
