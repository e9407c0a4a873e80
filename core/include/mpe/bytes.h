// What an MPI call moves, by the standard's semantics: the one place that knows the bytes of
// every collective (roots, MPI_IN_PLACE, intercommunicators, v/w variants, neighbourhood
// topologies) and point-to-point sends. libmpetime's byte counters and liblog's records both use it.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "mpe/calls.h"
#include "mpe/tool.h"

namespace mpe {

// Bytes of one element of a datatype; 0 for MPI_DATATYPE_NULL or on error.
int64_t type_size(MPI_Datatype t) noexcept MPE_HIDDEN;
// Bytes a completed receive delivered, from its status; 0 for MPI_STATUS_IGNORE or PROC_NULL.
int64_t status_bytes(const MPI_Status* st) noexcept MPE_HIDDEN;
// Whether st says its request was cancelled (MPI_Test_cancelled); false for MPI_STATUS_IGNORE.
bool status_cancelled(const MPI_Status* st) noexcept MPE_HIDDEN;
// Whether the two above read the status's fields (MPICH, Open MPI, once seen to agree with the
// library) rather than ask the library; after MPI_Init.
bool reads_status_fields() noexcept MPE_HIDDEN;
// A call's status, or MPI_STATUS_IGNORE when its role bit is not set.
inline const MPI_Status* status_of(const Call& c) {
  return c.has(role::status) ? c.status : MPI_STATUS_IGNORE;
}

// Bytes the send half of a point-to-point call puts on the wire (MPI_Send and its modes, the
// nonblocking, persistent and partitioned inits, the send of a Sendrecv): count x type size, x
// partitions for a partitioned send; 0 to MPI_PROC_NULL. A persistent or partitioned send moves
// these bytes at each MPI_Start of its request, so tools count them there.
int64_t send_bytes(const Call& c) noexcept MPE_HIDDEN;

// The collective classes (barrier included: it moves nothing).
constexpr bool is_collective(CallClass c) {
  return c >= CallClass::kBarrier && c <= CallClass::kNeighborAlltoallw;
}

struct Bytes {
  int64_t sent = 0;  // by this process
  int64_t recv = 0;  // into this process
};

// What this process sends and receives in collective `c`, blocking or nonblocking, from its
// arguments (call it in a leave hook: it asks the communicator for its rank, size and topology).
Bytes collective_bytes(const Call& c) noexcept MPE_HIDDEN;

// What a one-sided operation (MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate,
// MPI_Fetch_and_op, MPI_Compare_and_swap and the request-based R variants) moves: `sent` is the
// origin data it carries to the target (count x type size; one element for Fetch_and_op and
// Compare_and_swap), `recv` the result it brings back into the origin (Get, Get_accumulate,
// Fetch_and_op, Compare_and_swap). 0 and 0 to MPI_PROC_NULL.
Bytes rma_bytes(const Call& c) noexcept MPE_HIDDEN;

// How many per-peer entries (counts, datatypes) the send or receive side of a vector collective
// of class `cls` has on comm: the group size (the remote group's for an intercommunicator), or a
// neighbourhood collective's out-degree (send) or in-degree (receive).
int per_peer_count(CallClass cls, MPI_Comm comm, bool send) noexcept MPE_HIDDEN;

}  // namespace mpe
