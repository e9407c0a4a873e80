// liblog's hooks: what each MPI call writes into the calling thread's log.
#pragma once

#include <atomic>
#include <cstdint>

#include "log_state.h"
#include "mpe/completion.h"
#include "mpe/core.h"

namespace mpe::tools::log {

// Clock ticks when MPI_Finalize was entered: its state is written before the merge.
extern std::atomic<uint64_t> g_finalize_enter MPE_HIDDEN;
extern std::atomic<uint32_t> g_finalize_site MPE_HIDDEN;  // and its call site

// Before the calls of kEnterClasses: snapshots the requests a Wait/Test is given, forgets freed
// requests, notes MPI_Finalize's entry, flushes before MPI_Abort.
void on_enter(Call& c) noexcept MPE_HIDDEN;
// After every call: the state record, then what the call's class means (messages, collectives,
// requests, communicators, Pcontrol). ~8-12 ns for a cheap call.
void on_leave(Call& c) noexcept MPE_HIDDEN;

// The classes on_enter acts on; every other call goes straight to on_leave.
inline constexpr uint64_t kEnterClasses =
    kCompletingClasses | classes(CallClass::kRequestFree, CallClass::kFinalize, CallClass::kAbort);

}  // namespace mpe::tools::log
