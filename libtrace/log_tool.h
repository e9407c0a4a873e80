// What liblog's recorder offers the MPE user API in the same library (not installed).
#pragma once

#include <string>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"

namespace mpe::liblog {

// True between MPI_Init and MPI_Finalize.
bool active();
// True unless paused by MPI_Pcontrol(0) or MPE_Stop_log.
bool logging();
void set_logging(bool on);
// Appends a record to the calling thread's buffer (~3 ns).
void put_record(const log::Record& r);
// Adds or replaces a user category in this rank's definitions.
void define_category(const log::Category& c);
// Names the logfile (MPE_Finish_log).
void set_finish_name(const std::string& name);
// Spills every thread's buffer to the per-rank file (before MPI_Abort).
void flush_now() noexcept;

}  // namespace mpe::liblog
