// What the OTF2 writer and reader share: error capture, the routine class -> OTF2 collective
// operation / region role table, and the names of Score-P's calling-context properties.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <optional>
#include <string>

#include "mpe/rma.h"
#include "mpe/routine.h"
#include "mpe/status.h"

namespace mpe::interop::detail {

// Installs (once) an OTF2 error callback that records the last error message instead of
// printing it, and returns a Status naming `what` and that message.
void capture_otf2_errors();
Status otf2_error(const std::string& what, OTF2_ErrorCode code);

// The collective operation of a routine (MPI_Allreduce, MPI_Ibcast, MPI_Bcast_init,
// MPI_Neighbor_alltoall_c...), if it is one.
std::optional<OTF2_CollectiveOp> collective_op(const format::RoutineInfo& routine);
// The region role of a routine: barrier, one-to-all/all-to-one/all-to-all/other collective,
// point-to-point, or function.
OTF2_RegionRole region_role(const format::RoutineInfo& routine);
// The same for a name only (a foreign archive's region), mapped through the routine table;
// `is_mpi` false is a user function.
std::optional<OTF2_CollectiveOp> collective_op(const std::string& mpi_name);
OTF2_RegionRole region_role(const std::string& name, bool is_mpi);
// The name of an OTF2 collective operation as an MPI function ("MPI_Allreduce").
const char* collective_name(OTF2_CollectiveOp op);
// The OTF2 atomic type of an accumulating RMA operation (Accumulate, Get_accumulate,
// Fetch_and_op, Compare_and_swap), and back the MPI function a reader assumes for an atomic type
// when no enclosing call names it.
OTF2_RmaAtomicType rma_atomic_type(format::RmaKind kind);
const char* rma_atomic_function(OTF2_RmaAtomicType type);

// A location's id, numbered as Score-P numbers them: the master thread of rank r is location r,
// thread t of rank r is (t << 32) | r. Readers that cannot resolve a communicator's group (ViTE)
// take a message's rank for its location id; with this numbering that lands on the rank's master
// thread instead of on no location at all. Readers of our archives go by location groups, so
// archives with the old numbering ((rank << 16) | thread) still read.
inline uint64_t location_ref(uint32_t rank, uint32_t thread) { return (uint64_t{thread} << 32) | rank; }

// The CallingContextProperty names Score-P gives an unwound frame (scorep_tracing.c): the
// executable or shared library (string) and the instruction's offset in it (uint64), or the
// instruction's address (uint64) when the module is unknown.
inline constexpr const char* kModuleProperty = "EXECUTABLE/SHARED OBJECT";
inline constexpr const char* kOffsetProperty = "INSTRUCTION OFFSET";
inline constexpr const char* kAddressProperty = "INSTRUCTION ADDRESS";

}  // namespace mpe::interop::detail
