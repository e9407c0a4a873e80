// liblog's one-sided communication: the window registry and the records of RMA operations, of
// the synchronisations that complete them and of window creation (docs/FORMAT.md, kRmaOp).
#pragma once

#include "log_state.h"
#include "mpe/core.h"

namespace mpe::tools::log {

// Gives a new window its per-rank index and records its creation on t (when t is not null: it is
// recorded even while logging is paused, or later operations on it could not be resolved).
void register_window(const Call& c, ThreadLog* t) noexcept MPE_HIDDEN;
// Records an RMA operation (MPI_Put, MPI_Rget, MPI_Accumulate, ...): target, window and bytes.
void put_rma_op(ThreadLog* t, const Call& c) noexcept MPE_HIDDEN;
// Records that a synchronisation (fence, unlock, flush, complete...) completed the rank's pending
// operations on its window; nothing for the calls that complete none (lock, post, start, wait).
void put_rma_complete(ThreadLog* t, const Call& c) noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log
