// What the OTF2 writer and reader share: error capture and the MPI name -> collective table.
#include "otf2_common.h"

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <utility>

namespace mpe::interop::detail {

namespace {

thread_local std::string g_last_error;

OTF2_ErrorCode remember_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt,
                              va_list args) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt ? fmt : "", args);
  g_last_error = buf;
  return code;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct CollectiveName {
  const char* base;  // lower case, without "mpi_", the nonblocking "i", "_init" and "_c"
  OTF2_CollectiveOp op;
  OTF2_RegionRole role;
};

constexpr CollectiveName kCollectives[] = {
    {"barrier", OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER},
    {"bcast", OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL},
    {"scatter", OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL},
    {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL},
    {"gather", OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE},
    {"gatherv", OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE},
    {"reduce", OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE},
    {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, OTF2_REGION_ROLE_COLL_ALL2ALL},
    {"scan", OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_OTHER},
    {"exscan", OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_OTHER},
    // OTF2 has no neighbourhood operations: the closest global one, role "other".
    {"neighbor_allgather", OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_OTHER},
    {"neighbor_allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_OTHER},
    {"neighbor_alltoall", OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_OTHER},
    {"neighbor_alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_OTHER},
    {"neighbor_alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_OTHER},
};

const CollectiveName* find_collective(const std::string& mpi_name) {
  std::string n = lower(mpi_name);
  if (n.rfind("mpi_", 0) != 0) return nullptr;
  n = n.substr(4);
  if (n.ends_with("_c")) n.resize(n.size() - 2);
  if (n.ends_with("_init")) n.resize(n.size() - 5);
  for (const auto& c : kCollectives)
    if (n == c.base) return &c;
  if (!n.empty() && n[0] == 'i')
    for (const auto& c : kCollectives)
      if (n.compare(1, std::string::npos, c.base) == 0) return &c;
  return nullptr;
}

}  // namespace

void capture_otf2_errors() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(remember_error, nullptr); });
}

Status otf2_error(const std::string& what, OTF2_ErrorCode code) {
  std::string msg = what + ": " + OTF2_Error_GetName(code);
  if (!g_last_error.empty()) msg += " (" + g_last_error + ")";
  g_last_error.clear();
  return Status(code == OTF2_ERROR_FILE_INTERACTION || code == OTF2_ERROR_E2BIG ? StatusCode::kIoError
                                                                                : StatusCode::kCorrupt,
                msg);
}

std::optional<OTF2_CollectiveOp> collective_op(const std::string& mpi_name) {
  const CollectiveName* c = find_collective(mpi_name);
  if (!c) return std::nullopt;
  return c->op;
}

OTF2_RegionRole region_role(const std::string& name, bool is_mpi) {
  if (!is_mpi) return OTF2_REGION_ROLE_FUNCTION;
  if (const CollectiveName* c = find_collective(name)) return c->role;
  const std::string n = lower(name);
  for (const char* p2p : {"send", "recv", "sendrecv", "probe", "start"})
    if (n.find(p2p) != std::string::npos) return OTF2_REGION_ROLE_POINT2POINT;
  return OTF2_REGION_ROLE_FUNCTION;
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

OTF2_RmaAtomicType rma_atomic_type(log::RmaKind kind) {
  switch (kind) {
    case log::RmaKind::kCompareAndSwap:
      return OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP;
    case log::RmaKind::kGetAccumulate:
    case log::RmaKind::kFetchAndOp:
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
