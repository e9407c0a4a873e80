// What `mpe diff` compares of one run, read from a libmpetime profile or from a logfile: the
// whole run per rank, routines, call sites, and (logs only) wait states and regions. Both kinds
// land in the same model, so the comparison and its output have one code path.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mpe/status.h"

namespace mpe::cli::diff {

enum class Kind { kProfile, kLog };

// Calls, time and bytes of a set of MPI calls (a routine's, or a call site's), summed over ranks;
// the time also per rank (per_rank[r], ns).
struct Measure {
  uint64_t calls = 0;
  double ns = 0;  // profiles: exclusive time; logs: the states' durations
  uint64_t bytes = 0;
  std::vector<double> per_rank;
  void add(uint32_t rank, uint32_t ranks, uint64_t c, double t, uint64_t b) {
    calls += c;
    ns += t;
    bytes += b;
    if (per_rank.size() < ranks) per_rank.resize(ranks, 0.0);
    if (rank < ranks) per_rank[rank] += t;
  }
};

// One call site: one routine called from one source line (the innermost frame), over all ranks
// (and over the outer frames, when the run recorded deeper stacks).
struct Site {
  std::string routine;
  std::string file;  // base name; empty without a source line
  int line = 0;
  std::string function;
  std::string location;  // "halo2d.c:146 (main)", or the module+offset text without a line
  Measure m;
};

// Waiting of one wait-state pattern at one call site (logs).
struct SiteWait {
  std::string pattern;   // waits::pattern_key()
  std::string site_key;  // Run::sites key; "" for the unknown call site
  double ns = 0;
  uint64_t instances = 0;
};

struct Run {
  Kind kind = Kind::kProfile;
  std::string path;
  std::string program;
  uint32_t ranks = 0;
  // Per rank: its run (profiles: MPI_Init to MPI_Finalize; logs: first to last record) and its
  // time in MPI (outermost calls, threads summed).
  std::vector<double> wall_per_rank;
  std::vector<double> mpi_per_rank;
  double wall_ns = 0;  // the whole run: the longest rank (profiles), the log's span (logs)
  std::map<std::string, Measure> routines;
  std::map<std::string, Site> sites;  // by site_key()
  // Logs only.
  std::map<std::string, double> patterns;         // waits::pattern_key() -> ns waited
  std::map<std::string, uint64_t> pattern_count;  // instances
  std::vector<SiteWait> site_waits;
  std::map<std::string, Measure> regions;  // "user state X", "Pcontrol level L" -> time per rank
};

// The key of a site inside one run: routine, file, line and function of the innermost frame.
std::string site_key(const std::string& routine, const std::string& file, int line,
                     const std::string& function);

// What a path holds, by its first bytes: a profile (a JSON report or a per-process file) or a
// log (anything else: the log reader decides). Errors: io-error.
StatusOr<Kind> kind_of(const std::string& path);

// Loads a libmpetime JSON report (<prefix>.mpetime.json), or every per-process file beside a
// given one (<prefix>.mpetime.<rank>.txt). Errors: the libmpetime readers', naming the path.
StatusOr<Run> load_profile(const std::string& path);

// Streams a logfile or OTF2 archive: per-rank span and MPI time, routines, call sites and
// regions in one pass over the chunks, then the wait-state analysis. Errors: the log reader's.
StatusOr<Run> load_log(const std::string& path, uint64_t eager_limit);

}  // namespace mpe::cli::diff
