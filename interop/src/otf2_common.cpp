// What the OTF2 writer and reader share: error capture and the routine class -> collective table.
#include "otf2_common.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <utility>

namespace mpe::interop::detail {

namespace {

thread_local std::string g_last_error;
// An allocation inside OTF2 failed since the last error returned: what then fails (a writer not
// given, a call refused) is out of memory, not a damaged archive.
thread_local bool g_out_of_memory = false;

OTF2_ErrorCode remember_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt,
                              va_list args) {
  if (code == OTF2_ERROR_MEM_ALLOC_FAILED || code == OTF2_ERROR_MEM_FAULT || code == OTF2_ERROR_ENOMEM)
    g_out_of_memory = true;
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt ? fmt : "", args);
  g_last_error = buf;
  return code;
}

// The OTF2 operation of each collective class of the routine table (core/mpi_calls.tsv); OTF2 has no
// neighbourhood operations: the closest global one.
struct CollectiveClass {
  const char* cls;
  OTF2_CollectiveOp op;
};

constexpr CollectiveClass kCollectives[] = {
    {"barrier", OTF2_COLLECTIVE_OP_BARRIER},
    {"bcast", OTF2_COLLECTIVE_OP_BCAST},
    {"scatter", OTF2_COLLECTIVE_OP_SCATTER},
    {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
    {"gather", OTF2_COLLECTIVE_OP_GATHER},
    {"gatherv", OTF2_COLLECTIVE_OP_GATHERV},
    {"reduce", OTF2_COLLECTIVE_OP_REDUCE},
    {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
    {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
    {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
    {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
    {"alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
    {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
    {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
    {"reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
    {"scan", OTF2_COLLECTIVE_OP_SCAN},
    {"exscan", OTF2_COLLECTIVE_OP_EXSCAN},
    {"neighbor_allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
    {"neighbor_allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
    {"neighbor_alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
    {"neighbor_alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
    {"neighbor_alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
};

}  // namespace

void capture_otf2_errors() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(remember_error, nullptr); });
}

Status otf2_error(const std::string& what, OTF2_ErrorCode code) {
  if (std::exchange(g_out_of_memory, false) || code == OTF2_ERROR_MEM_ALLOC_FAILED) {
    g_last_error.clear();
    return Status::out_of_memory();
  }
  std::string msg = what + ": " + OTF2_Error_GetName(code);
  if (!g_last_error.empty()) msg += " (" + g_last_error + ")";
  g_last_error.clear();
  return Status(code == OTF2_ERROR_FILE_INTERACTION || code == OTF2_ERROR_E2BIG ? StatusCode::kIoError
                                                                                : StatusCode::kCorrupt,
                msg);
}

std::optional<OTF2_CollectiveOp> collective_op(const format::RoutineInfo& routine) {
  if (routine.family != format::RoutineFamily::kCollective) return std::nullopt;
  for (const auto& c : kCollectives)
    if (routine.cls == c.cls) return c.op;
  return std::nullopt;
}

std::optional<OTF2_CollectiveOp> collective_op(const std::string& mpi_name) {
  return collective_op(format::routine_by_name(mpi_name));
}

OTF2_RegionRole region_role(const format::RoutineInfo& routine) {
  switch (routine.family) {
    case format::RoutineFamily::kCollective:
      switch (routine.shape) {
        case format::CollectiveShape::kBarrier:
          return OTF2_REGION_ROLE_BARRIER;
        case format::CollectiveShape::kOneToAll:
          return OTF2_REGION_ROLE_COLL_ONE2ALL;
        case format::CollectiveShape::kAllToOne:
          return OTF2_REGION_ROLE_COLL_ALL2ONE;
        case format::CollectiveShape::kAllToAll:
          return OTF2_REGION_ROLE_COLL_ALL2ALL;
        default:
          return OTF2_REGION_ROLE_COLL_OTHER;
      }
    case format::RoutineFamily::kSend:
    case format::RoutineFamily::kRecv:
    case format::RoutineFamily::kSendrecv:
    case format::RoutineFamily::kProbe:
      return OTF2_REGION_ROLE_POINT2POINT;
    default:
      return OTF2_REGION_ROLE_FUNCTION;
  }
}

OTF2_RegionRole region_role(const std::string& name, bool is_mpi) {
  if (!is_mpi) return OTF2_REGION_ROLE_FUNCTION;
  return region_role(format::routine_by_name(name));
}

const char* collective_name(OTF2_CollectiveOp op) {
  static const std::pair<OTF2_CollectiveOp, const char*> kNames[] = {
      {OTF2_COLLECTIVE_OP_BARRIER, "MPI_Barrier"},
      {OTF2_COLLECTIVE_OP_BCAST, "MPI_Bcast"},
      {OTF2_COLLECTIVE_OP_GATHER, "MPI_Gather"},
      {OTF2_COLLECTIVE_OP_GATHERV, "MPI_Gatherv"},
      {OTF2_COLLECTIVE_OP_SCATTER, "MPI_Scatter"},
      {OTF2_COLLECTIVE_OP_SCATTERV, "MPI_Scatterv"},
      {OTF2_COLLECTIVE_OP_ALLGATHER, "MPI_Allgather"},
      {OTF2_COLLECTIVE_OP_ALLGATHERV, "MPI_Allgatherv"},
      {OTF2_COLLECTIVE_OP_ALLTOALL, "MPI_Alltoall"},
      {OTF2_COLLECTIVE_OP_ALLTOALLV, "MPI_Alltoallv"},
      {OTF2_COLLECTIVE_OP_ALLTOALLW, "MPI_Alltoallw"},
      {OTF2_COLLECTIVE_OP_ALLREDUCE, "MPI_Allreduce"},
      {OTF2_COLLECTIVE_OP_REDUCE, "MPI_Reduce"},
      {OTF2_COLLECTIVE_OP_REDUCE_SCATTER, "MPI_Reduce_scatter"},
      {OTF2_COLLECTIVE_OP_SCAN, "MPI_Scan"},
      {OTF2_COLLECTIVE_OP_EXSCAN, "MPI_Exscan"},
      {OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block"},
  };
  for (const auto& [o, n] : kNames)
    if (o == op) return n;
  return "MPI_collective";
}

OTF2_RmaAtomicType rma_atomic_type(format::RmaKind kind) {
  switch (kind) {
    case format::RmaKind::kCompareAndSwap:
      return OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP;
    case format::RmaKind::kGetAccumulate:
    case format::RmaKind::kFetchAndOp:
      return OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
    default:
      return OTF2_RMA_ATOMIC_TYPE_ACCUMULATE;
  }
}

const char* rma_atomic_function(OTF2_RmaAtomicType type) {
  switch (type) {
    case OTF2_RMA_ATOMIC_TYPE_ACCUMULATE:
    case OTF2_RMA_ATOMIC_TYPE_INCREMENT:
      return "MPI_Accumulate";
    case OTF2_RMA_ATOMIC_TYPE_TEST_AND_SET:
    case OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP:
    case OTF2_RMA_ATOMIC_TYPE_SWAP:
      return "MPI_Compare_and_swap";
    case OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE:
      return "MPI_Get_accumulate";
    default:
      return "MPI_Fetch_and_op";
  }
}

}  // namespace mpe::interop::detail
