// What liblog's recorder offers the MPE user API in the same library (not installed).
#pragma once

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/status.h"
#include "mpe/tool.h"

namespace mpe::tools::log {

// True between MPI_Init and MPI_Finalize.
bool active() noexcept MPE_HIDDEN;
// True unless paused by MPI_Pcontrol(0) or MPE_Stop_log.
bool logging() noexcept MPE_HIDDEN;
void set_logging(bool on) noexcept MPE_HIDDEN;
// Appends a record to the calling thread's buffer (~3 ns).
void put_record(const format::Record& r) noexcept MPE_HIDDEN;
// Adds or replaces a user category in this rank's definitions; kOutOfMemory when it cannot.
Status define_category(const format::Category& c) noexcept MPE_HIDDEN;
// Names the logfile (MPE_Finish_log); kOutOfMemory when it cannot.
Status set_finish_name(const char* name) noexcept MPE_HIDDEN;
// Spills every thread's buffer to the per-rank file (before MPI_Abort).
void flush_now() noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log
