// What an MPI call moves, by the standard's semantics: the one place that knows the bytes of
// every collective (roots, MPI_IN_PLACE, intercommunicators, v/w variants, neighbourhood
// topologies) and point-to-point sends. libmpetime's byte counters and liblog's records both use it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "mpe/calls.h"
#include "mpe/tool.h"

namespace mpe {

// The sizes of the predefined datatypes, by handle. PMPI_Type_size_x costs about 200 instructions
// in MPICH (its checks, then the datatype's object), and most messages are of a predefined type.
// A predefined handle is never freed, so its size cannot go stale; a derived type's handle may be
// reused after MPI_Type_free, so those still ask the library. Open addressing on the handle's bits
// (an integer in MPICH, an address in Open MPI); filled once, at the first type_size_slow.
struct TypeSizeTable {
  static constexpr uint32_t kSlots = 128;  // over twice the predefined types: short probes
  static uint32_t slot_of(MPI_Datatype t) noexcept {
    uint64_t bits = 0;
    std::memcpy(&bits, &t, sizeof t < sizeof bits ? sizeof t : sizeof bits);
    return static_cast<uint32_t>((bits * 0x9E3779B97F4A7C15ull) >> 57);  // the top 7 bits
  }
  // The size of t when it is predefined, else null.
  const int64_t* find(MPI_Datatype t) const noexcept {
    for (uint32_t slot = slot_of(t);; slot = (slot + 1) % kSlots) {
      if (!used[slot]) return nullptr;
      if (handle[slot] == t) return &size[slot];
    }
  }
  MPI_Datatype handle[kSlots] = {};
  int64_t size[kSlots] = {};
  bool used[kSlots] = {};
};
extern std::atomic<const TypeSizeTable*> g_type_sizes MPE_HIDDEN;
// A derived type (or the first call): asks the library; 0 for MPI_DATATYPE_NULL or on error.
int64_t type_size_slow(MPI_Datatype t) noexcept MPE_HIDDEN;

// Bytes of one element of a datatype; 0 for MPI_DATATYPE_NULL or on error. Inline: ~10
// instructions for a predefined type.
inline int64_t type_size(MPI_Datatype t) noexcept {
  if (const TypeSizeTable* table = g_type_sizes.load(std::memory_order_acquire))
    if (const int64_t* size = table->find(t)) return *size;
  return type_size_slow(t);
}

// A status's byte count and cancel flag, read from the fields where this MPI keeps them: asking
// the library (PMPI_Get_elements_x, PMPI_Test_cancelled) costs about 150 instructions per
// completed receive in MPICH, paid by libmpetime and by liblog alike. The fields are the
// library's own, so they are read only once the library has been seen to write them there
// (reads_status_fields); elsewhere, and on another MPI, the tools ask the library.
#if defined(MPICH_NUMVERSION) && !defined(MPI_ABI_VERSION)
inline constexpr bool kHasStatusFields = true;
// MPICH: the low 32 bits of the count in count_lo, the rest above the cancel bit.
inline int64_t status_field_bytes(const MPI_Status* st) {
  const uint64_t high = static_cast<unsigned>(st->count_hi_and_cancelled) >> 1;
  return static_cast<int64_t>((high << 32) + static_cast<unsigned>(st->count_lo));
}
inline bool status_field_cancelled(const MPI_Status* st) { return (st->count_hi_and_cancelled & 1) != 0; }
#elif defined(OPEN_MPI)
inline constexpr bool kHasStatusFields = true;
inline int64_t status_field_bytes(const MPI_Status* st) { return static_cast<int64_t>(st->_ucount); }
inline bool status_field_cancelled(const MPI_Status* st) { return st->_cancelled != 0; }
#else
inline constexpr bool kHasStatusFields = false;
inline int64_t status_field_bytes(const MPI_Status*) { return 0; }
inline bool status_field_cancelled(const MPI_Status*) { return false; }
#endif
// 1 once the fields are seen to agree with the library, 0 when they do not, -1 until checked.
extern std::atomic<int> g_status_fields MPE_HIDDEN;
// Whether the status readers use the fields (checks them at its first call, after MPI_Init).
bool reads_status_fields() noexcept MPE_HIDDEN;
int64_t status_bytes_slow(const MPI_Status* st) noexcept MPE_HIDDEN;
bool status_cancelled_slow(const MPI_Status* st) noexcept MPE_HIDDEN;

// Bytes a completed receive delivered, from its status; 0 for MPI_STATUS_IGNORE or PROC_NULL.
inline int64_t status_bytes(const MPI_Status* st) noexcept {
  if (st == nullptr || st == MPI_STATUS_IGNORE || st->MPI_SOURCE == MPI_PROC_NULL) return 0;
  if (kHasStatusFields && g_status_fields.load(std::memory_order_relaxed) > 0) {
    const int64_t n = status_field_bytes(st);
    return n > 0 ? n : 0;
  }
  return status_bytes_slow(st);
}
// Whether st says its request was cancelled (MPI_Test_cancelled); false for MPI_STATUS_IGNORE.
inline bool status_cancelled(const MPI_Status* st) noexcept {
  if (st == nullptr || st == MPI_STATUS_IGNORE) return false;
  if (kHasStatusFields && g_status_fields.load(std::memory_order_relaxed) > 0)
    return status_field_cancelled(st);
  return status_cancelled_slow(st);
}

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

// collective_bytes for the classes it does not take inline.
Bytes collective_bytes_general(const Call& c) noexcept MPE_HIDDEN;

// What this process sends and receives in collective `c`, blocking or nonblocking, from its
// arguments (call it in a leave hook: it asks the communicator for its rank, size and topology).
// MPI_Allreduce, MPI_Scan and MPI_Barrier, which need no communicator, inline (~12 instructions):
// libmpetime and liblog both count every collective, and the call out of line took ~45
// instructions each, a tenth of what the three tools add to an MPI_Allreduce.
inline Bytes collective_bytes(const Call& c) noexcept {
  if (c.cls == CallClass::kAllreduce || c.cls == CallClass::kScan) {
    const int64_t each_way = c.sendcount * type_size(c.sendtype);
    return each_way > 0 ? Bytes{each_way, each_way} : Bytes{};
  }
  if (c.cls == CallClass::kBarrier) return Bytes{};
  return collective_bytes_general(c);
}

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
