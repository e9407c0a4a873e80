/* libjoblog.so: a job-accounting PMPI library written the way users write one (like the seed's
 * libJobLog): MPI_X wrappers that call PMPI_X. It notes the host and the start and end times at
 * MPI_Init and MPI_Finalize, follows MPI_Pcontrol, and counts the point-to-point calls (and
 * MPI_Barrier, a synchronisation point). At MPI_Finalize it writes what it saw (layer_report.h).
 * A test fixture for tests/stack: loaded only by path, through MPE_STACK. */
#include <mpi.h>
#include <stdarg.h>

#define LAYER_NAME "libjoblog"
// clang-format off
#define LAYER_ROUTINES(X) \
  X(Init) X(Init_thread) X(Finalize) X(Pcontrol) X(Send) X(Ssend) X(Rsend) X(Bsend) X(Recv) \
  X(Isend) X(Issend) X(Irecv) X(Sendrecv) X(Sendrecv_replace) X(Send_init) X(Recv_init) X(Start) \
  X(Startall) X(Request_free) X(Wait) X(Waitall) X(Waitany) X(Waitsome) X(Test) X(Testall) \
  X(Testany) X(Testsome) X(Probe) X(Iprobe) X(Barrier)
// clang-format on
#define LAYER_OWN(X) X(Comm_rank) X(Comm_size) X(Get_processor_name) X(Wtime)
#include "layer_report.h"

static double start_time;
static char host[MPI_MAX_PROCESSOR_NAME];

/* What a job log notes at the start: where and when, all through PMPI_ (the layers below see it). */
static void job_started(void) {
  int size, len;
  PMPI_Comm_rank(MPI_COMM_WORLD, &layer_rank);
  layer_own(O_Comm_rank, 1);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  layer_own(O_Comm_size, 1);
  PMPI_Get_processor_name(host, &len);
  layer_own(O_Get_processor_name, 1);
  start_time = PMPI_Wtime();
  layer_own(O_Wtime, 1);
}

int MPI_Init(int *argc, char ***argv) {
  layer_enter(R_Init);
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) job_started();
  layer_leave();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  layer_enter(R_Init_thread);
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) job_started();
  layer_leave();
  return rc;
}

int MPI_Finalize(void) {
  layer_enter(R_Finalize);
  double elapsed = PMPI_Wtime() - start_time;
  layer_own(O_Wtime, 1);
  (void)elapsed;
  if (layer_rank < 0) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &layer_rank);
    layer_own(O_Comm_rank, 1);
  }
  layer_write();
  int rc = PMPI_Finalize();
  layer_leave();
  return rc;
}

/* Passes the level on, as the MPI standard's profiling interface suggests. */
int MPI_Pcontrol(const int level, ...) {
  layer_enter(R_Pcontrol);
  layer_record_pcontrol(level);
  int rc = PMPI_Pcontrol(level);
  layer_leave();
  return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  layer_enter(R_Send);
  int rc = PMPI_Send(buf, count, type, dest, tag, comm);
  layer_leave();
  return rc;
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  layer_enter(R_Ssend);
  int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
  layer_leave();
  return rc;
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  layer_enter(R_Rsend);
  int rc = PMPI_Rsend(buf, count, type, dest, tag, comm);
  layer_leave();
  return rc;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  layer_enter(R_Bsend);
  int rc = PMPI_Bsend(buf, count, type, dest, tag, comm);
  layer_leave();
  return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  layer_enter(R_Recv);
  int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
  layer_leave();
  return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request) {
  layer_enter(R_Isend);
  int rc = PMPI_Isend(buf, count, type, dest, tag, comm, request);
  layer_leave();
  return rc;
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
  layer_enter(R_Issend);
  int rc = PMPI_Issend(buf, count, type, dest, tag, comm, request);
  layer_leave();
  return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
  layer_enter(R_Irecv);
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  layer_leave();
  return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status *status) {
  layer_enter(R_Sendrecv);
  int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                         recvtag, comm, status);
  layer_leave();
  return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status) {
  layer_enter(R_Sendrecv_replace);
  int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  layer_leave();
  return rc;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
  layer_enter(R_Send_init);
  int rc = PMPI_Send_init(buf, count, type, dest, tag, comm, request);
  layer_leave();
  return rc;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
  layer_enter(R_Recv_init);
  int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  layer_leave();
  return rc;
}

int MPI_Start(MPI_Request *request) {
  layer_enter(R_Start);
  int rc = PMPI_Start(request);
  layer_leave();
  return rc;
}

int MPI_Startall(int count, MPI_Request requests[]) {
  layer_enter(R_Startall);
  int rc = PMPI_Startall(count, requests);
  layer_leave();
  return rc;
}

int MPI_Request_free(MPI_Request *request) {
  layer_enter(R_Request_free);
  int rc = PMPI_Request_free(request);
  layer_leave();
  return rc;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  layer_enter(R_Wait);
  int rc = PMPI_Wait(request, status);
  layer_leave();
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  layer_enter(R_Waitall);
  int rc = PMPI_Waitall(count, requests, statuses);
  layer_leave();
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  layer_enter(R_Waitany);
  int rc = PMPI_Waitany(count, requests, index, status);
  layer_leave();
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  layer_enter(R_Waitsome);
  int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  layer_leave();
  return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
  layer_enter(R_Test);
  int rc = PMPI_Test(request, flag, status);
  layer_leave();
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
  layer_enter(R_Testall);
  int rc = PMPI_Testall(count, requests, flag, statuses);
  layer_leave();
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
  layer_enter(R_Testany);
  int rc = PMPI_Testany(count, requests, index, flag, status);
  layer_leave();
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  layer_enter(R_Testsome);
  int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  layer_leave();
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  layer_enter(R_Probe);
  int rc = PMPI_Probe(source, tag, comm, status);
  layer_leave();
  return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  layer_enter(R_Iprobe);
  int rc = PMPI_Iprobe(source, tag, comm, flag, status);
  layer_leave();
  return rc;
}

int MPI_Barrier(MPI_Comm comm) {
  layer_enter(R_Barrier);
  int rc = PMPI_Barrier(comm);
  layer_leave();
  return rc;
}
