// What the generated Fortran wrappers (mpif.h, use mpi, use mpi_f08) call to give the tools the
// C wrappers' view of a call: sentinels recognised, handle arrays converted, indices 0-based.
#pragma once
#include <mpi.h>

#include <cstddef>

#include "mpe/core.h"

namespace mpe::core::fortran {

// A Fortran status is sizeof(MPI_Status) Fortran integers on both MPIs (MPI_F_STATUS_SIZE), and
// an mpi_f08 TYPE(MPI_Status) has the same layout, so one conversion serves all three bindings.
inline constexpr int kStatusInts = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
#ifdef MPI_F_STATUS_SIZE
static_assert(kStatusInts == MPI_F_STATUS_SIZE, "a Fortran status is not sizeof(MPI_Status)");
#endif

// The C view of a Fortran choice buffer: MPI_IN_PLACE or MPI_BOTTOM for Fortran's sentinels
// (whose addresses are the MPI's Fortran symbols, not the C constants), else the address.
// ~2 ns: a few compares against addresses resolved once.
const void* buffer(const void* address) noexcept;
// The same for an mpi_f08 "ts" binding's assumed-rank buffer, passed as an array descriptor
// whose first member is the data address (gfortran's descriptor and ISO_Fortran_binding's alike).
inline const void* descriptor_buffer(const void* descriptor) noexcept {
  return buffer(descriptor ? *static_cast<void* const*>(descriptor) : nullptr);
}

// True for the Fortran MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE of any binding.
bool status_ignored(const void* status) noexcept;
bool statuses_ignored(const void* statuses) noexcept;

// Per-thread arrays: each returns nullptr when it cannot grow (out of memory), which the wrapper
// turns into a role the tools do not see, said once (lost()).
// Requests converted with PMPI_Request_f2c, before the call (MPI nulls completed handles).
MPI_Request* requests(ThreadState& ts, const void* fortran, int n) noexcept;
// Converts them again after the call, so the tools see what C's array would hold.
void refresh_requests(MPI_Request* c, const void* fortran, int n) noexcept;
// Statuses converted with PMPI_Status_f2c, after the call.
MPI_Status* statuses(ThreadState& ts, const void* fortran, int n) noexcept;
// Fortran storage for n statuses, passed to the MPI instead of MPI_STATUSES_IGNORE when a tool
// asked for statuses (kNeedsStatus).
MPI_Fint* status_storage(ThreadState& ts, int n) noexcept;
// Fortran indices made 0-based (MPI_UNDEFINED kept): `base` is what the binding returns, 1 as
// the standard says, 0 for a binding that returns 0-based ones (MPICH 4.0.2's mpi_f08).
int* indices(ThreadState& ts, const void* fortran, int n, int base) noexcept;
// Datatype arrays (MPI_ALLTOALLW and the neighbour variant), sendtypes or recvtypes.
MPI_Datatype* types(ThreadState& ts, bool send, const void* fortran, int n) noexcept;
// Says once per process that a Fortran call's array could not be converted (out of memory).
void lost(const char* role) noexcept;

}  // namespace mpe::core::fortran
