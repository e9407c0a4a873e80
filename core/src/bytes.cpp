// Bytes per MPI call: see mpe/bytes.h.
#include "mpe/bytes.h"

#include <algorithm>
#include <cstring>

namespace mpe {

namespace {

int64_t size_from_library(MPI_Datatype t) noexcept {
  MPI_Count size = 0;
  if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0) return 0;
  return size;
}

// The predefined datatypes' table (mpe/bytes.h), filled at the first type_size_slow, after
// MPI_Init: PMPI_Type_size_x needs MPI started.
__attribute__((cold)) const TypeSizeTable* make_type_sizes() noexcept {
  static TypeSizeTable table;
  const MPI_Datatype kPredefined[] = {MPI_CHAR,
                                      MPI_SIGNED_CHAR,
                                      MPI_UNSIGNED_CHAR,
                                      MPI_BYTE,
                                      MPI_WCHAR,
                                      MPI_SHORT,
                                      MPI_UNSIGNED_SHORT,
                                      MPI_INT,
                                      MPI_UNSIGNED,
                                      MPI_LONG,
                                      MPI_UNSIGNED_LONG,
                                      MPI_LONG_LONG,
                                      MPI_UNSIGNED_LONG_LONG,
                                      MPI_FLOAT,
                                      MPI_DOUBLE,
                                      MPI_LONG_DOUBLE,
                                      MPI_C_BOOL,
                                      MPI_INT8_T,
                                      MPI_INT16_T,
                                      MPI_INT32_T,
                                      MPI_INT64_T,
                                      MPI_UINT8_T,
                                      MPI_UINT16_T,
                                      MPI_UINT32_T,
                                      MPI_UINT64_T,
                                      MPI_C_FLOAT_COMPLEX,
                                      MPI_C_DOUBLE_COMPLEX,
                                      MPI_AINT,
                                      MPI_OFFSET,
                                      MPI_COUNT,
                                      MPI_PACKED,
                                      MPI_FLOAT_INT,
                                      MPI_DOUBLE_INT,
                                      MPI_LONG_INT,
                                      MPI_2INT,
                                      MPI_SHORT_INT,
                                      MPI_INTEGER,
                                      MPI_REAL,
                                      MPI_DOUBLE_PRECISION,
                                      MPI_COMPLEX,
                                      MPI_DOUBLE_COMPLEX,
                                      MPI_LOGICAL,
                                      MPI_CHARACTER,
                                      MPI_2REAL,
                                      MPI_2DOUBLE_PRECISION,
                                      MPI_2INTEGER};
  for (MPI_Datatype t : kPredefined) {
    if (t == MPI_DATATYPE_NULL) continue;  // a type this MPI was built without (Fortran's)
    const int64_t size = size_from_library(t);
    uint32_t slot = TypeSizeTable::slot_of(t);
    while (table.used[slot] && table.handle[slot] != t) slot = (slot + 1) % TypeSizeTable::kSlots;
    table.handle[slot] = t;
    table.size[slot] = size;
    table.used[slot] = true;
  }
  return &table;
}

// Whether the library writes counts and cancel flags where status_field_bytes and
// status_field_cancelled read them: statuses set through the standard's own calls, for counts on
// either side of 2^31 and 2^32.
bool fields_agree() noexcept {
  if (!kHasStatusFields) return false;
  for (const MPI_Count bytes :
       {MPI_Count{0}, MPI_Count{1}, MPI_Count{12345}, (MPI_Count{1} << 31) + 5, (MPI_Count{1} << 35) + 3})
    for (const int cancelled : {0, 1}) {
      MPI_Status st{};
      if (PMPI_Status_set_elements_x(&st, MPI_BYTE, bytes) != MPI_SUCCESS ||
          PMPI_Status_set_cancelled(&st, cancelled) != MPI_SUCCESS || status_field_bytes(&st) != bytes ||
          status_field_cancelled(&st) != (cancelled != 0))
        return false;
    }
  return true;
}

}  // namespace

std::atomic<const TypeSizeTable*> g_type_sizes{nullptr};
std::atomic<int> g_status_fields{-1};

int64_t type_size_slow(MPI_Datatype t) noexcept {
  if (t == MPI_DATATYPE_NULL) return 0;
  if (!g_type_sizes.load(std::memory_order_acquire)) {
    static const TypeSizeTable* const made = make_type_sizes();  // once, whichever thread is first
    g_type_sizes.store(made, std::memory_order_release);
    if (const int64_t* size = made->find(t)) return *size;
  }
  return size_from_library(t);
}

bool reads_status_fields() noexcept {
  int known = g_status_fields.load(std::memory_order_relaxed);
  if (known < 0) {
    known = fields_agree() ? 1 : 0;  // the same answer in every thread that races here
    g_status_fields.store(known, std::memory_order_relaxed);
  }
  return known > 0;
}

int64_t status_bytes_slow(const MPI_Status* st) noexcept {
  if (reads_status_fields()) return std::max<int64_t>(status_field_bytes(st), 0);
  MPI_Count n = 0;
  if (PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0) return 0;
  return n;
}

bool status_cancelled_slow(const MPI_Status* st) noexcept {
  if (reads_status_fields()) return status_field_cancelled(st);
  int flag = 0;
  PMPI_Test_cancelled(st, &flag);
  return flag != 0;
}

int64_t send_bytes(const Call& c) noexcept {
  if (!c.has(role::dest) || c.dest == MPI_PROC_NULL || c.sendcount <= 0) return 0;
  int64_t bytes = c.sendcount * type_size(c.sendtype);
  if (c.has(role::partitions)) bytes *= c.partitions;
  return bytes;
}

namespace {

struct CommShape {
  int rank = 0, size = 0;
  bool inter = false;
};

CommShape shape(MPI_Comm comm) noexcept {
  CommShape s;
  if (comm == MPI_COMM_NULL) return s;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  s.inter = inter != 0;
  PMPI_Comm_rank(comm, &s.rank);
  if (s.inter)
    PMPI_Comm_remote_size(comm, &s.size);
  else
    PMPI_Comm_size(comm, &s.size);
  return s;
}

// In- and out-degree of a communicator's topology (neighbourhood collectives).
void degrees(MPI_Comm comm, int* in, int* out) noexcept {
  *in = *out = 0;
  int topo = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return;
  if (topo == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    *in = *out = 2 * ndims;
  } else if (topo == MPI_GRAPH) {
    int rank = 0, n = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    *in = *out = n;
  } else if (topo == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
  }
}

int64_t sum_counts(const Call& c, const void* counts, MPI_Datatype t, int n, int skip = -1) noexcept {
  if (!counts) return 0;
  int64_t total = 0;
  for (int i = 0; i < n; ++i)
    if (i != skip) total += c.count_at(counts, i);
  return total * type_size(t);
}

int64_t sum_counts_w(const Call& c, const void* counts, const MPI_Datatype* types, int n,
                     int skip = -1) noexcept {
  if (!counts || !types) return 0;
  int64_t total = 0;
  for (int i = 0; i < n; ++i)
    if (i != skip) total += c.count_at(counts, i) * type_size(types[i]);
  return total;
}

// Root-based collectives: is this process the root, a non-root, or idle (intercomm PROC_NULL)?
enum class RootRole { kRoot, kOther, kIdle };
RootRole root_role(const Call& c, const CommShape& s) noexcept {
  if (s.inter)
    return c.root == MPI_ROOT        ? RootRole::kRoot
           : c.root == MPI_PROC_NULL ? RootRole::kIdle
                                     : RootRole::kOther;
  return c.root == s.rank ? RootRole::kRoot : RootRole::kOther;
}

// Neighbourhood collectives: out-degree sends, in-degree receives, one count (or counts[i]) each.
// A datatype is read only where the routine has it: the v and w forms' sendtype and recvtype are
// not set, and MPI aborts on a type it does not know.
Bytes neighbor_collective_bytes(const Call& c) noexcept {
  int in = 0, out = 0;
  degrees(c.comm, &in, &out);
  auto send_one = [&] { return c.sendcount * type_size(c.sendtype); };
  auto recv_one = [&] { return c.recvcount * type_size(c.recvtype); };
  switch (c.cls) {
    case CallClass::kNeighborAllgather:
    case CallClass::kNeighborAlltoall:
      return Bytes{out * send_one(), in * recv_one()};
    case CallClass::kNeighborAllgatherv:
      return Bytes{out * send_one(), sum_counts(c, c.recvcounts, c.recvtype, in)};
    case CallClass::kNeighborAlltoallv:
      return Bytes{sum_counts(c, c.sendcounts, c.sendtype, out), sum_counts(c, c.recvcounts, c.recvtype, in)};
    case CallClass::kNeighborAlltoallw:
      return Bytes{sum_counts_w(c, c.sendcounts, c.sendtypes, out),
                   sum_counts_w(c, c.recvcounts, c.recvtypes, in)};
    default:
      return Bytes{};
  }
}

}  // namespace

int per_peer_count(CallClass cls, MPI_Comm comm, bool send) noexcept {
  if (comm == MPI_COMM_NULL) return 0;
  if (cls >= CallClass::kNeighborAllgather && cls <= CallClass::kNeighborAlltoallw) {
    int in = 0, out = 0;
    degrees(comm, &in, &out);
    return send ? out : in;
  }
  return shape(comm).size;
}

Bytes rma_bytes(const Call& c) noexcept {
  Bytes b;
  const int target = c.has(role::dest) ? c.dest : c.has(role::source) ? c.source : MPI_PROC_NULL;
  if (target == MPI_PROC_NULL) return b;
  if (c.has(role::sendtype)) b.sent = (c.has(role::sendcount) ? c.sendcount : 1) * type_size(c.sendtype);
  if (c.has(role::recvtype)) b.recv = (c.has(role::recvcount) ? c.recvcount : 1) * type_size(c.recvtype);
  return b;
}

Bytes collective_bytes_general(const Call& c) noexcept {
  const bool in_place = c.has(role::sendbuf) && c.sendbuf == MPI_IN_PLACE;
  auto sbytes = [&] { return c.sendcount * type_size(c.sendtype); };
  auto rbytes = [&] { return c.recvcount * type_size(c.recvtype); };
  int64_t sent = 0, recv = 0;
  switch (c.cls) {
    case CallClass::kBcast: {
      const CommShape s = shape(c.comm);
      const RootRole r = root_role(c, s);
      if (r == RootRole::kRoot) sent = sbytes();
      if (r == RootRole::kOther) recv = sbytes();
      break;
    }
    case CallClass::kReduce: {
      const CommShape s = shape(c.comm);
      const RootRole r = root_role(c, s);
      if (r == RootRole::kOther || (r == RootRole::kRoot && !s.inter)) sent = sbytes();
      if (r == RootRole::kRoot) recv = sbytes();
      break;
    }
    case CallClass::kAllreduce:
    case CallClass::kScan:
      sent = recv = sbytes();
      break;
    case CallClass::kExscan:
      sent = sbytes();
      if (shape(c.comm).rank > 0) recv = sbytes();
      break;
    case CallClass::kReduceScatter: {
      const CommShape s = shape(c.comm);
      if (!s.inter && c.has(role::recvcounts)) {
        sent = sum_counts(c, c.recvcounts, c.recvtype, s.size);
        recv = c.count_at(c.recvcounts, s.rank) * type_size(c.recvtype);
      }
      break;
    }
    case CallClass::kReduceScatterBlock: {
      const CommShape s = shape(c.comm);
      recv = rbytes();
      sent = s.size * recv;
      break;
    }
    case CallClass::kGather:
    case CallClass::kGatherv: {
      const CommShape s = shape(c.comm);
      const RootRole r = root_role(c, s);
      const bool root_in_place = r == RootRole::kRoot && !s.inter && in_place;
      if (r == RootRole::kOther || (r == RootRole::kRoot && !s.inter && !in_place)) sent = sbytes();
      if (r == RootRole::kRoot) {
        const int skip = root_in_place ? s.rank : -1;
        recv = c.cls == CallClass::kGather ? (s.size - (root_in_place ? 1 : 0)) * rbytes()
                                           : sum_counts(c, c.recvcounts, c.recvtype, s.size, skip);
      }
      break;
    }
    case CallClass::kScatter:
    case CallClass::kScatterv: {
      const CommShape s = shape(c.comm);
      const RootRole r = root_role(c, s);
      const bool root_in_place = r == RootRole::kRoot && !s.inter && c.recvbuf == MPI_IN_PLACE;
      if (r == RootRole::kRoot) {
        const int skip = root_in_place ? s.rank : -1;
        sent = c.cls == CallClass::kScatter ? (s.size - (root_in_place ? 1 : 0)) * sbytes()
                                            : sum_counts(c, c.sendcounts, c.sendtype, s.size, skip);
      }
      if (r == RootRole::kOther || (r == RootRole::kRoot && !s.inter && !root_in_place)) recv = rbytes();
      break;
    }
    case CallClass::kAllgather: {
      const CommShape s = shape(c.comm);
      if (in_place) {
        sent = rbytes();
        recv = (s.size - 1) * rbytes();
      } else {
        sent = sbytes();
        recv = s.size * rbytes();
      }
      break;
    }
    case CallClass::kAllgatherv: {
      const CommShape s = shape(c.comm);
      if (!c.has(role::recvcounts)) break;
      const int64_t own = s.inter ? 0 : c.count_at(c.recvcounts, s.rank) * type_size(c.recvtype);
      sent = in_place ? own : sbytes();
      recv = sum_counts(c, c.recvcounts, c.recvtype, s.size, in_place ? s.rank : -1);
      break;
    }
    case CallClass::kAlltoall: {
      const CommShape s = shape(c.comm);
      recv = s.size * rbytes();
      sent = in_place ? recv : s.size * sbytes();
      break;
    }
    case CallClass::kAlltoallv: {
      const CommShape s = shape(c.comm);
      recv = sum_counts(c, c.recvcounts, c.recvtype, s.size);
      sent = in_place ? recv : sum_counts(c, c.sendcounts, c.sendtype, s.size);
      break;
    }
    case CallClass::kAlltoallw: {
      const CommShape s = shape(c.comm);
      recv = sum_counts_w(c, c.recvcounts, c.recvtypes, s.size);
      sent = in_place ? recv : sum_counts_w(c, c.sendcounts, c.sendtypes, s.size);
      break;
    }
    case CallClass::kNeighborAllgather:
    case CallClass::kNeighborAllgatherv:
    case CallClass::kNeighborAlltoall:
    case CallClass::kNeighborAlltoallv:
    case CallClass::kNeighborAlltoallw: {
      const Bytes b = neighbor_collective_bytes(c);
      sent = b.sent;
      recv = b.recv;
      break;
    }
    default:
      break;
  }
  return Bytes{sent > 0 ? sent : 0, recv > 0 ? recv : 0};
}

}  // namespace mpe
