// `mpe cut`'s streaming core: which records a cut keeps (CutSelection) and the passes that write
// them out as a smaller, valid .mpelog (cut_log).
//
// Design. A cut never holds the log: it streams the chunks, at most three times.
//   1. (`mpe cut` itself, before cut_log) the summary pass: the causality repair's per-rank shifts,
//      so that --from/--to mean the times `mpe print` and `mpe stat` show, and the Pcontrol
//      markers for --pcontrol.
//   2. The pairing pass, only when the selection has time windows or a record filter: a replay in
//      time order (chunks_by_start) that pairs sends with receives by the reader's one rule
//      (ReplayMessageMatcher) and finds the messages of which the selection keeps one side only.
//      A kept end whose partner is dropped is harmless at the end of its key's sequence (it stays
//      unmatched, as a send at the end of a window whose receive came later); anywhere else it would
//      shift every later pairing of its key by one (the k-th send meets the k-th receive), so it is
//      dropped too (a receive inside the window whose send came before it). Memory: the ends in
//      flight and those half-kept ends, never the records.
//   3. The writing pass, rank by rank, each rank's threads in order, each timeline's chunks oldest
//      first (what LogWriter's index promises). A cut of whole ranks copies their chunks as they
//      are, undecoded; otherwise the kept records of a timeline are re-encoded into chunks of up to
//      kCutChunkRecords. Records that belong together stay together: a send and its request post, a
//      request done and its receive, a collective and its request post, a user state's end event
//      and its start (a state is kept whole when it starts inside the selection, as an MPI call's
//      state record is). Communicator and window creations are kept at any time.
// Time base. The output's definitions are the input's, with the causality shifts of pass 1 added
// to each rank's clock correction (so the cut's times are those the original showed, repaired,
// and stay so when the cut leaves fewer messages to repair by), and with the run's start kept:
// the reader's origin is the earliest chunk start, so the output's first chunk of the timeline
// that started the run starts where it did (an empty chunk when nothing of it is kept).
// Cost: with time windows or a filter, the decode of every chunk of the kept ranks twice (pass 1
// decodes every chunk once more) and zstd of the kept records; whole ranks, pass 1 and a copy. Failure modes:
// a damaged chunk stops the cut with the reader's error; the output is written under a temporary name and
// renamed when complete, so no half-written file is ever under the output's name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace mpe::cli {

// A half-open span of time [begin, end), in ns since the start of the run as LogFile::to_ns
// gives it (before any causality shift).
struct TimeSpan {
  int64_t begin = INT64_MIN;
  int64_t end = INT64_MAX;
};
using TimeSpans = std::vector<TimeSpan>;  // sorted, disjoint

// The spans in both a and b.
TimeSpans intersect(const TimeSpans& a, const TimeSpans& b);

// Says whether a record inside the rank and time selection is kept (the slot for a filter by
// routine category and call site: a state's category is r.cat, its run-wide call site
// file.callsite(rank, r.b)). Communicator and window creations are not asked: they are always kept.
using RecordFilter = std::function<bool(const format::LogFile& file, uint32_t rank, const format::Record& r)>;

// What a cut keeps. Empty members select everything.
struct CutSelection {
  std::vector<bool> ranks;            // [world rank]: kept; empty: every rank
  std::vector<TimeSpans> windows;     // [world rank]: the kept spans; empty: all of the run
  RecordFilter keep;                  // null: every record
  std::string filter;                 // --filter's rules (mpe/log_filter.h), recorded in the output's ranks
  std::vector<int64_t> causality_ns;  // [world rank]: shifts added to the output's clocks

  bool rank_kept(uint32_t r) const { return ranks.empty() || (r < ranks.size() && ranks[r]); }
  // Whether time t (ns, LogFile::to_ns) of rank r lies in the rank's spans.
  bool in_window(uint32_t r, int64_t t) const;
  // Whether the selection needs the pairing pass (time windows or a filter).
  bool drops_within_ranks() const { return !windows.empty() || static_cast<bool>(keep); }
  // Whether the selection keeps every record.
  bool everything() const { return ranks.empty() && !drops_within_ranks(); }
};

// Records of a timeline held before they are encoded into one chunk (2 MiB).
inline constexpr size_t kCutChunkRecords = size_t{1} << 16;

struct CutCounts {
  uint64_t records_in = 0;
  uint64_t records_out = 0;
  uint64_t half_messages_dropped = 0;  // kept ends dropped since their partner was not kept
  uint64_t states_left_out = 0;        // states `keep` left out (the filter's calls)
};

// Writes the records of `file` that `sel` keeps to `out` (see the design above). Errors: the
// reader's (a damaged chunk), io-error (writing, renaming), kInvalidArgument (out is the input).
StatusOr<CutCounts> cut_log(const format::LogFile& file, const std::string& in_path, const CutSelection& sel,
                            const std::string& out);

}  // namespace mpe::cli
