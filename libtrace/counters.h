// liblog's counter tracks (MPE_LOG_PVARS): MPI_T performance variables read at the entry of the
// calls that can change them, written as kCounter records only when a value changed.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "log_state.h"
#include "mpe/core.h"

namespace mpe::tools::log::counters {

// The call classes whose entry liblog must see for counters, from MPE_LOG_PVARS and
// MPE_LOG_PVARS_AT (read in the registering constructor): none when no variable is asked for,
// the receive family and MPI_Comm_free by default, kEveryClass with MPE_LOG_PVARS_AT=every.
// `*every` says the latter.
uint64_t enter_classes(bool* every) noexcept MPE_HIDDEN;
// Starts the shared MPI_T reader, watches the variables MPE_LOG_PVARS names (one line for each
// name it cannot read) and adds their definitions to the rank's (g_meta). After MPI_Init.
void start() noexcept MPE_HIDDEN;
// Stops reading (before MPI_Finalize).
void stop() noexcept MPE_HIDDEN;

// True while variables are read.
extern bool g_on MPE_HIDDEN;
// The call classes on_enter acts on (reads, MPI_Comm_free), one bit each: liblog's enter hook
// calls it for these only.
extern uint64_t g_enter MPE_HIDDEN;
inline bool enters(CallClass cls) { return g_enter >> static_cast<unsigned>(cls) & 1; }

// Enter hook part: reads the variables at the calls chosen and writes what changed on t; frees a
// communicator's handles at MPI_Comm_free. Cost per read call: one MPI_T read (7 ns on the pvar
// MPICH, 15 ns on Open MPI) plus 4-10 ns through liblog's own handles, or the shared reader's
// read when libumq watches the variable too (then read once for both); a record (with a clock
// read) only on change. No lock, no allocation.
void on_enter(ThreadLog* t, Call& c) noexcept MPE_HIDDEN;
// A communicator was created: bind the variables to it.
void comm_created(MPI_Comm c) noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log::counters
