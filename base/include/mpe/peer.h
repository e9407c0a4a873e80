// The message peers that are not ranks, named once: the core's traffic rule, liblive and the live
// stream (its frames, `mpe top` and upshot) all use these codes beside world or communicator ranks.
#pragma once

#include <cstdint>

namespace mpe::peer {

inline constexpr int32_t kUnknown = -1;    // none, or on a communicator the tool never saw
inline constexpr int32_t kAnySource = -2;  // MPI_ANY_SOURCE
inline constexpr int32_t kProcNull = -3;   // MPI_PROC_NULL

}  // namespace mpe::peer
