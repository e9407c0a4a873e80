// liblog's communicator registry: every communicator the program creates gets a per-rank index
// (what records carry), a run-wide id and its member list (what the merge and the reader match
// messages with). Creation is recorded even while logging is paused, or later records could not
// be resolved.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "log_state.h"

namespace mpe::liblog {

// Communicator handle -> per-rank index, read lock-free. Inserts happen under g_mutex and publish
// the index before the key. Stale entries of freed communicators are overwritten when MPI reuses
// the handle.
inline constexpr size_t kCommSlots = 4096;
struct CommSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint32_t> index;
};
extern CommSlot g_comm_slots[kCommSlots] MPE_HIDDEN;

inline uint64_t comm_key(MPI_Comm c) {
  uint64_t k = 0;
  std::memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
  return k;
}

// The per-rank index of a communicator; kUnknownComm for one created before liblog was active.
// ~2 ns for MPI_COMM_WORLD, ~5 ns otherwise.
inline uint32_t comm_index(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return 0;
  if (c == MPI_COMM_SELF) return 1;
  const uint64_t k = comm_key(c);
  for (size_t i = (k * 0x9E3779B97F4A7C15ull >> 40) % kCommSlots, n = 0; n < kCommSlots;
       i = (i + 1) % kCommSlots, ++n) {
    const uint64_t s = g_comm_slots[i].key.load(std::memory_order_acquire);
    if (s == k) return g_comm_slots[i].index.load(std::memory_order_relaxed);
    if (s == 0) break;
  }
  return log::kUnknownComm;
}

// Adds MPI_COMM_WORLD (index 0) and MPI_COMM_SELF (index 1) to the rank's definitions.
void define_builtin_comms() MPE_HIDDEN;

// Gives a new communicator its index, run-wide id and members, and records its creation on t
// (when t is not null). `collective`: every member is in this creating call, so the id can be
// agreed on with one allreduce; false for communicators to other jobs (spawn, connect, accept,
// join), which get a rank-local id and whose messages stay unmatched.
void register_comm(MPI_Comm c, uint64_t time, ThreadLog* t, bool collective) noexcept MPE_HIDDEN;

}  // namespace mpe::liblog
