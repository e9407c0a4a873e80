// liblog's per-rank spill file: thread buffers compressed into chunks as the program runs, the
// rank's definitions rewritten whenever they change, and a raw flush on SIGTERM/SIGINT, so that a
// killed run leaves everything `mpe merge --recover` needs on disk.
#pragma once

#include <string>
#include <vector>

#include "log_state.h"
#include "mpe/status.h"

namespace mpe::tools::log {

// Creates the spill file, writes its part header and base definitions; not ok when it cannot.
Status open_spill(const std::string& path, const format::Definitions& base) MPE_HIDDEN;
// Rewrites the rank meta chunk (the last one in the file wins). Caller holds g_mutex.
void write_meta_locked() noexcept MPE_HIDDEN;
// Spills every thread's buffer and then the rank meta.
void spill_all() noexcept MPE_HIDDEN;
// The spill file's descriptor (for the merge's reads), or -1.
int spill_fd() MPE_HIDDEN;
// The events chunks spilled so far, with their offsets in the spill file.
std::vector<format::ChunkSource> spilled_chunks() MPE_HIDDEN;
// Closes the spill file; deletes it when `remove`.
void close_spill(bool remove) noexcept MPE_HIDDEN;

// Installs the SIGTERM/SIGINT handlers that flush every buffer raw before the signal's default.
void install_signal_flush() noexcept MPE_HIDDEN;
void remove_signal_flush() noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log
