// The per-process file of libmpetime and the reports built from it: one place for the format,
// shared by the tool (which writes files and the finalize report) and `mpe report`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mpe/frame.h"
#include "mpe/spread.h"
#include "mpe/status.h"

namespace mpe::tools::time {

// Version of the per-process file; a reader accepts kMinSupportedVersion..kCurrentVersion.
// Version 2 added the call sites; a version 1 file reads as a profile without any. Version 3 added
// the messages of each routine and site; older files read with 0 messages.
inline constexpr int kCurrentVersion = 3;
// The first version whose files and JSON reports count messages (CallStats::messages).
inline constexpr int kMessagesVersion = 3;
inline constexpr int kMinSupportedVersion = 1;
inline constexpr const char* kMagic = "mpetime";

// What libmpetime measures of a set of calls in one process (a routine's, or one call site's),
// summed over its threads. Times are nanoseconds.
struct CallStats {
  uint64_t calls = 0;
  uint64_t incl_ns = 0;  // inclusive: wall time inside the calls
  uint64_t excl_ns = 0;  // exclusive: minus the time of MPI calls nested inside them
  uint64_t min_ns = 0;   // shortest and longest single call (inclusive)
  uint64_t max_ns = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_recv = 0;
  // Point-to-point messages: each sent (at the send, or MPI_Start of a persistent send) and each
  // received (a nonblocking receive's at the Wait/Test that completes it), as the bytes are.
  uint64_t messages = 0;
};

// One MPI routine in one process.
struct RoutineStats : CallStats {
  std::string name;
};

// One call site of one process: one MPI routine called from one place of the code (its frames,
// innermost first, as MPE_CALLSITE_DEPTH asked).
struct SiteStats : CallStats {
  uint32_t id = 0;  // the process's call-site id (mpe/callsite.h); 0: unknown call site
  std::string routine;
  std::vector<Frame> frames;  // empty when unknown
};

// Everything one process measured.
struct RankProfile {
  int rank = 0;
  int size = 1;
  int threads = 1;
  std::string host;
  std::string command;
  std::string mpi;
  std::string timer;
  uint64_t run_ns = 0;                 // leaving MPI_Init to entering MPI_Finalize
  uint64_t mpi_ns = 0;                 // exclusive time of all MPI calls in that span, summed over threads
  std::vector<RoutineStats> routines;  // only routines called at least once, in name order
  std::vector<SiteStats> sites;        // call sites called at least once, by id then routine
};

// One call site over the whole run: the sites of every rank with the same routine and the same
// callsite_key() of their frames (the same source lines), which is what makes them the same site.
struct SiteSummary {
  int id = 0;  // 1, 2, ... in the report's order (by exclusive time, descending)
  std::string routine;
  std::vector<Frame> frames;  // innermost first; empty for the unknown call site
  std::string text;           // callsite_text(frames): "halo.c:42 (exchange) <- main.c:10 (main)"
  uint64_t calls = 0;
  uint64_t incl_ns = 0;
  uint64_t excl_ns = 0;  // summed over ranks: the site's "time"
  double mpi_pct = 0;    // excl_ns as a share of the run's MPI time
  uint64_t bytes_sent = 0;
  uint64_t bytes_recv = 0;
  uint64_t call_min_ns = 0;  // shortest and longest single call on any rank (inclusive)
  uint64_t call_max_ns = 0;
  // The site's exclusive time per rank, over the ranks that made its calls only (per_rank.n).
  Spread per_rank;
};

// Renders a profile as the per-process file (line-based text, integers only).
std::string serialize(const RankProfile& p);
// Parses a per-process file. Errors: not-a-logfile (not such a file), unsupported-version,
// truncated, corrupt.
StatusOr<RankProfile> parse(const std::string& text);
// Reads and parses a file; errors as parse(), or io-error, each naming the path.
StatusOr<RankProfile> load(const std::string& path);

// A profile in the tools' gather encoding (mpe::ByteWriter), for the trip to rank 0 at finalize;
// the per-process file stays the text of serialize(). Throws std::bad_alloc.
std::string encode_profile(const RankProfile& p);
// Reads what encode_profile wrote. Errors: truncated (the bytes end early), corrupt (bytes left
// over, or values no profile has).
StatusOr<RankProfile> decode_profile(std::string_view bytes);

// Checks that the profiles form one run (same size, each rank once) and sorts them by rank.
// Errors: invalid-argument.
Status check_run(std::vector<RankProfile>* profiles);
// The whole-run report as text and as JSON. Profiles must have passed check_run.
std::string text_report(const std::vector<RankProfile>& profiles);
std::string json_report(const std::vector<RankProfile>& profiles);
// The report for one process.
std::string rank_report(const RankProfile& p);

// The run's call sites, merged over the ranks, by exclusive time descending. Profiles must have
// passed check_run.
std::vector<SiteSummary> summarize_sites(const std::vector<RankProfile>& profiles);
// The call-site table of the text reports: the first `top` sites (all for 0), one line each.
std::string callsite_table(const std::vector<SiteSummary>& sites, size_t top = 0);
// The sites as the JSON report's "callsites" array writes them.
std::string callsites_json(const std::vector<SiteSummary>& sites);
// The JSON report (<prefix>.mpetime.json, json_report()) read back, written and read in
// profile_json.cpp. Errors of both readers: not-a-logfile (not a libmpetime JSON report), corrupt.
// A report's run and the per-rank profiles it holds (each as its per-process file had it, with
// the report's size, command, MPI library and timer), in the report's order. Errors: corrupt when
// the size or a rank is out of range or a key is missing or mistyped.
struct JsonReport {
  std::string command;
  int size = 0;
  int version = 1;  // the report's version: from kMessagesVersion on, CallStats::messages is measured
  std::vector<RankProfile> ranks;
};
StatusOr<JsonReport> read_json_report(const std::string& text);
// The run's call sites. Errors: corrupt also when it has none (written before version 2).
StatusOr<std::vector<SiteSummary>> sites_from_json_report(const std::string& text);

}  // namespace mpe::tools::time
