// liblive's publisher: a background thread per process that turns the threads' slots, rings and
// counters into one frame per interval and hands it to ZeroMQ, never blocking and never calling MPI.
#pragma once

#include "mpe/tool.h"

namespace mpe::tools::live {

// Starts the thread (after MPI_Init); without MPE_LIVE_ENDPOINT and keys it says so once and
// records nothing.
void start_publisher(int rank, int size) noexcept MPE_HIDDEN;
// Publishes the last frame (marked finalized) and stops the thread (before MPI_Finalize).
void stop_publisher() noexcept MPE_HIDDEN;

}  // namespace mpe::tools::live
