// libumq's call-site table: one entry per distinct raw stack of a receive that met a long queue,
// filled lock-free on the receive path and symbolized at finalize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/symbolizer.h"
#include "mpe/tool.h"

namespace mpe::libumq {

inline constexpr int kMaxFrames = 32;     // raw frames captured at most (tool and wrapper frames included)
inline constexpr int kDefaultDepth = 24;  // raw frames captured unless MPE_UMQ_DEPTH says otherwise

// Sets what record() captures: `depth` raw frames (1 to kMaxFrames), and whether each new site is
// also printed on stderr (MPE_UMQ_PRINT).
void configure_call_sites(int depth, bool print) noexcept MPE_HIDDEN;

// Records a receive that met a queue of `length`, whose largest share (peer_value) came from
// `peer` of the communicator with label `label` (-1 for a process-wide value). Cost: one
// unw_backtrace (~75 ns for 4 frames, ~200 ns for 16), a hash, a probe of the fixed table, a few
// relaxed atomic adds. Lock-free and no allocation, except the MPE_UMQ_PRINT line of a new site.
void record(uint64_t length, int peer, uint64_t peer_value, int label) noexcept MPE_HIDDEN;

// How often one peer held the largest share of the queue at a call site.
struct PeerCount {
  int peer = -1;  // rank in the receive's communicator
  uint64_t times_top = 0;
  uint64_t max_queued = 0;
};

// One call site of this rank, symbolized: what each rank sends rank 0 for the report.
struct SiteRecord {
  std::string mpi_function;  // the MPI entry point, "?" when no frame is one
  std::string communicator;  // the communicator of the first occurrence
  uint64_t occurrences = 0;
  uint64_t sum_length = 0;
  uint64_t max_length = 0;
  std::vector<PeerCount> peers;
  std::vector<Frame> stack;  // the application's frames, innermost first
};

// Returns this rank's call sites, symbolized against its own memory map, without libumq's and the
// wrapper's frames; describe_communicator turns record()'s labels into text. Milliseconds per
// module on the stacks (see mpe/symbolizer.h). Throws std::bad_alloc.
std::vector<SiteRecord> symbolized_sites(const char* (*describe_communicator)(int label)) MPE_HIDDEN;

// Occurrences not recorded because the table was full.
uint64_t dropped_occurrences() noexcept MPE_HIDDEN;

// Frees the symbolizer and what it read (finalize).
void release_symbolizer() noexcept MPE_HIDDEN;

}  // namespace mpe::libumq
