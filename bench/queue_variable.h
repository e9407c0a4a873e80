// The unexpected-queue variable libumq and MPE_LOG_PVARS=umq read, opened alone (its own session,
// bound to MPI_COMM_WORLD when it is per communicator), to time one raw PMPI_T_pvar_read against
// what the tools add in the same run.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mpe::bench {

// Opens MPE_UMQ_PVAR, else unexpected_recvq_length or pml_ob1_unexpected_msgq_length, writing its
// name into name_out (256 bytes). MPI_T must be initialized. False when this MPI has none.
inline bool open_queue_variable(MPI_T_pvar_session* session, MPI_T_pvar_handle* handle, char* name_out) {
  const char* env = std::getenv("MPE_UMQ_PVAR");
  const char* names[] = {env && *env ? env : "unexpected_recvq_length", "pml_ob1_unexpected_msgq_length"};
  int num = 0;
  PMPI_T_pvar_get_num(&num);
  for (const char* want : names)
    for (int i = 0; i < num; ++i) {
      char name[256], desc[256];
      int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atom;
      MPI_Datatype type;
      MPI_T_enum et;
      if (PMPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &type, &et, desc, &dl, &bind, &ro, &cont, &atom) !=
              MPI_SUCCESS ||
          std::strcmp(name, want) != 0)
        continue;
      MPI_Comm world = MPI_COMM_WORLD;
      int count = 0;
      if (PMPI_T_pvar_session_create(session) != MPI_SUCCESS) return false;
      if (PMPI_T_pvar_handle_alloc(*session, i, bind == MPI_T_BIND_MPI_COMM ? &world : nullptr, handle,
                                   &count) != MPI_SUCCESS)
        return false;
      if (!cont) PMPI_T_pvar_start(*session, *handle);
      std::snprintf(name_out, 256, "%s", name);
      return true;
    }
  return false;
}

}  // namespace mpe::bench
