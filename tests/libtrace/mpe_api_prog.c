/* Test program: MPE's user API, as an MPE-instrumented program uses it. Every rank logs 3
 * "compute" states (red), 2 "io" states (SeaGreen), 1 "tick" event, and rank 0 logs one
 * MPE_Log_send to rank 1, which logs the matching MPE_Log_receive. */
#include <mpi.h>
#include <stdio.h>

#include "mpe.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPE_Init_log();
  int cs, ce, is, ie, tick;
  MPE_Log_get_state_eventIDs(&cs, &ce);
  MPE_Log_get_state_eventIDs(&is, &ie);
  MPE_Log_get_solo_eventID(&tick);
  MPE_Describe_state(cs, ce, "compute", "red");
  MPE_Describe_info_state(is, ie, "io", "SeaGreen", "bytes=%d");
  MPE_Describe_event(tick, "tick", "blue");
  volatile double x = 0;
  for (int i = 0; i < 3; ++i) {
    MPE_Log_event(cs, i, NULL);
    for (int k = 0; k < 10000; ++k) x += k;
    MPE_Log_event(ce, i, NULL);
  }
  MPE_LOG_BYTES bytes;
  int pos = 0, v = 42;
  MPE_Log_pack(bytes, &pos, 'd', 1, &v);
  for (int i = 0; i < 2; ++i) {
    MPE_Log_bare_event(is);
    MPE_Log_info_event(ie, bytes);
  }
  MPE_Log_event(tick, 0, "t");
  if (size > 1 && rank == 0) MPE_Log_send(1, 3, 8);
  if (size > 1 && rank == 1) MPE_Log_receive(0, 3, 8);
  MPE_Log_sync_clocks();
  MPE_Finish_log("apitest");
  MPI_Finalize();
  if (rank == 0) printf("mpe_api_prog done\n");
  return 0;
}
