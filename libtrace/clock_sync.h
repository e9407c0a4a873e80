// Clock synchronisation across ranks, at init and at finalize: each rank's offset to rank 0's
// clock, which the reader turns into offset and drift corrections.
#pragma once

#include "mpe/tool.h"

namespace mpe::tools::log {

// Measures this rank's clock offset and stores it in the rank's definitions (g_meta.sync), as the
// first (init) or final measurement. Collective over liblog's private communicator. MPE_CLOCKS_SYNC
// = no turns it off, = force makes every rank measure (ranks on one host share a clock otherwise).
void sync_clocks(bool final) noexcept MPE_HIDDEN;
// Frees what the synchronisation kept from init to finalize (which ranks measure).
void free_clock_layout() noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log
