// libumq's call sites: per-site statistics of the receives that met a long queue, keyed by the
// core's call-site ids (mpe/callsite.h), filled lock-free on the receive path and symbolized at
// finalize with the core's site table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/callsite.h"
#include "mpe/core.h"
#include "mpe/frame.h"
#include "umq_report.h"

namespace mpe::tools::umq {

// Application frames per site unless MPE_UMQ_DEPTH says otherwise: the line that called MPI and
// 7 callers, enough to get out of a wrapper library into the code that decides.
inline constexpr int kDefaultDepth = 8;
inline constexpr int kMaxDepth = core::kMaxCallsiteDepth;

// Sets what record() identifies a site by: `depth` application frames (1 to kMaxDepth), and
// whether each new site is also printed on stderr (MPE_UMQ_PRINT).
void configure_call_sites(int depth, bool print) noexcept MPE_HIDDEN;

// Records the receive `call` that met a queue of `length`, whose largest share (peer_value) came
// from `peer` of the communicator with label `label` (-1 for a process-wide value). Only above the
// threshold, since it costs the core's callsite_deep: one unw_backtrace of the stack from the
// hook outwards (libunwind's fast path: ~75 ns for 4 frames, ~200 ns for 16) and a lookup under
// the site registry's mutex; then a probe of the fixed table and a few relaxed atomic adds. No
// allocation, except the core's at a site's first sighting and the MPE_UMQ_PRINT line.
void record(const Call& call, uint64_t length, int peer, uint64_t peer_value, int label) noexcept MPE_HIDDEN;

using analysis::umq::PeerCount;
using analysis::umq::SiteRecord;

// Returns this rank's call sites, symbolized against its own memory map; describe_communicator
// turns record()'s labels into text. Milliseconds per module on the stacks (see
// mpe/symbolizer.h). Throws std::bad_alloc.
std::vector<SiteRecord> symbolized_sites(const char* (*describe_communicator)(int label)) MPE_HIDDEN;

// Occurrences not recorded: the table was full, or the core had no memory for a new site.
uint64_t dropped_occurrences() noexcept MPE_HIDDEN;

// Frees the symbolizer and what it read (finalize).
void release_symbolizer() noexcept MPE_HIDDEN;

}  // namespace mpe::tools::umq
