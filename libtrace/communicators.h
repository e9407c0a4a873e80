// liblog's communicator registry: every communicator the program creates gets a per-rank index
// (what records carry), a run-wide id and its member list (what the merge and the reader match
// messages with). Creation is recorded even while logging is paused, or later records could not
// be resolved.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "log_state.h"
#include "mpe/handle_map.h"

namespace mpe::tools::log {

// Communicator handle -> per-rank index, read lock-free. Inserts happen under g_mutex. Stale
// entries of freed communicators are overwritten when MPI reuses the handle.
extern HandleMap<MPI_Comm, 4096> g_comm_indices MPE_HIDDEN;

// The per-rank index of a communicator; kUnknownComm for one created before liblog was active.
// ~2 ns for MPI_COMM_WORLD, ~5 ns otherwise.
inline uint32_t comm_index(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return 0;
  if (c == MPI_COMM_SELF) return 1;
  uint64_t index;
  return g_comm_indices.find(c, &index) ? static_cast<uint32_t>(index) : format::kUnknownComm;
}

// Adds MPI_COMM_WORLD (index 0) and MPI_COMM_SELF (index 1) to the rank's definitions.
void define_builtin_comms() MPE_HIDDEN;

// Gives a new communicator its index, run-wide id and members, and records its creation on t
// (when t is not null). `collective`: every member is in this creating call, so the id can be
// agreed on with one allreduce; false for communicators to other jobs (spawn, connect, accept,
// join), which get a rank-local id and whose messages stay unmatched.
void register_comm(MPI_Comm c, uint64_t time, ThreadLog* t, bool collective) noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log
