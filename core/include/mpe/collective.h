// The finalize-time collectives the tools run on their private communicators: agreement on
// failure before each step, gathering every rank's bytes on one rank, and broadcasting one rank's
// bytes to all. The tools take every finalize collective step through here, so that a rank that
// fails (no memory, a failed write) never leaves the others waiting in a collective.
#pragma once

#include <mpi.h>

#include <string>
#include <type_traits>
#include <vector>

#include "mpe/status.h"
#include "mpe/tool.h"

namespace mpe::collective {

// Completes `req` without spinning: a few tests at once (a short collective among ranks with a
// core each ends there), then a 20 us sleep between tests. On a node with more ranks than cores,
// a rank that busy-polls takes the core of a rank it waits for, and each step of a blocking
// collective then costs a scheduler slice: among 8 ranks on 2 cores MPICH's MPI_Comm_split_type
// took 0.27 s, the same exchange through this a few milliseconds. Every collective here, and
// the tools' other start and finish collectives, wait through it.
void wait_without_spinning(MPI_Request* req) noexcept MPE_HIDDEN;

// MPI_Comm_dup, through MPI_Comm_idup and wait_without_spinning; returns its error code.
int duplicate(MPI_Comm comm, MPI_Comm* out) noexcept MPE_HIDDEN;

// True on every rank when `ok` is true on every rank (one allreduce). Call it before each
// collective step that follows a local step that can fail, so that one rank's failure makes every
// rank skip the step instead of leaving the others waiting in it.
bool all_ok(bool ok, MPI_Comm comm) noexcept MPE_HIDDEN;

// Gathers each rank's bytes on `root`, in rank order: on root, one string per rank; elsewhere an
// empty vector. Collective over comm. Every rank returns the same verdict: when any rank (root's
// buffer included) cannot allocate, or the total exceeds what MPI_Gatherv can address, all return
// an error and no collective is left half done. Cost: one allreduce, one gather of ints, one
// broadcast of a flag, one gatherv.
StatusOr<std::vector<std::string>> gather_to_root(const std::string& mine, int root,
                                                  MPI_Comm comm) noexcept MPE_HIDDEN;

// Sends root's bytes to every rank: on return every rank's *bytes holds root's. Collective over
// comm. Every rank returns the same verdict: when a rank cannot allocate root's size (or root's
// bytes exceed what MPI_Bcast can address), all return an error and the ranks other than root
// leave *bytes as it was. Cost: one broadcast of the size, one allreduce, one broadcast.
Status broadcast_from_root(std::string* bytes, int root, MPI_Comm comm) noexcept MPE_HIDDEN;

// Sends root's *value, a plain fixed-size struct, to every rank. Nothing to allocate, so nothing
// can fail on one rank only: what root puts in it (a success flag) is how the ranks agree.
template <typename T>
void broadcast_value(T* value, int root, MPI_Comm comm) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  MPI_Request req;
  PMPI_Ibcast(value, sizeof(T), MPI_BYTE, root, comm, &req);
  wait_without_spinning(&req);
}

// Every rank's `mine`, a plain fixed-size struct, in rank order into all[0..size): the caller
// allocates `all` before, and agrees on that allocation (all_ok) if it can fail.
template <typename T>
void all_gather_values(const T& mine, T* all, MPI_Comm comm) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  MPI_Request req;
  PMPI_Iallgather(&mine, sizeof(T), MPI_BYTE, all, sizeof(T), MPI_BYTE, comm, &req);
  wait_without_spinning(&req);
}

}  // namespace mpe::collective
