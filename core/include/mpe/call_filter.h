// The filter file a run logs under (MPE_LOG_FILTER, `mpe run --log --filter FILE`), as the
// recording tools apply it per call: liblog and liblive link this (mpe_call_filter), the rules
// themselves are mpe/log_filter.h's.
//
// Per call: a left-out routine is one byte of a table indexed by the routine; a site rule looks
// the call's site up in a table of verdicts, and the first call from a new site symbolizes it once
// (under a mutex, ~1 ms for a module's first lookup). Without MPE_LOG_FILTER nothing here runs:
// `g_active` is false and the tools keep their unfiltered path.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "mpe/calls.h"
#include "mpe/callsite.h"
#include "mpe/tool.h"

namespace mpe::call_filter {

// True once a filter with routine or site rules is loaded: the per-call test below is needed.
extern bool g_active MPE_HIDDEN;
// 1 for a routine the filter leaves out.
extern uint8_t g_routine_left_out[kFnCount] MPE_HIDDEN;
extern bool g_site_rules MPE_HIDDEN;

// Reads MPE_LOG_FILTER after MPI_Init. A filter that cannot be read or has a bad line is one
// warning from `tool` ("liblog: MPE_LOG_FILTER=f.txt:3: unknown rule ...; logging without a
// filter") and no filter: the program runs as it would without it. Idempotent.
void load(const char* tool) noexcept MPE_HIDDEN;

// Whether calls from this site are left out; symbolizes a site at its first sighting.
bool site_left_out(uint32_t site) noexcept MPE_HIDDEN;

// Whether the filter leaves this call's state out.
inline bool leaves_out(Fn fn, uintptr_t& caller) noexcept {
  if (g_routine_left_out[static_cast<size_t>(fn)]) return true;
  return g_site_rules && site_left_out(core::callsite_of(caller));
}
inline bool leaves_out(Call& c) noexcept { return leaves_out(c.fn, c.caller); }

// The rules' other parts, false/true without a filter.
bool records_rank(int rank) noexcept MPE_HIDDEN;
bool records_at_level(int level) noexcept MPE_HIDDEN;
bool drops_messages() noexcept MPE_HIDDEN;
// The rules, one a line (empty without a filter): what the log records. Throws std::bad_alloc.
std::string text() MPE_HIDDEN;

}  // namespace mpe::call_filter
