// What changed between two runs (`mpe diff`, upshot's diff table): the model of one run (from a
// log here, from a libmpetime profile in cli/), the comparison of two, and the comparison of their
// iterations. No output: `mpe diff` prints text or JSON, upshot draws.
//
// A viewer calls, per log: run_from_log() (one streamed pass; or a RunBuilder fed by its own chunk
// pass, then finish()), find_iterations() (mpe/iterations.h; or an IterationCollector on the same
// pass) when it aligns the timelines; then compare(a, b) for the tables (rows ranked by the change
// in time) and compare_iterations(a, b) for the per-iteration, per-rank difference band.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/frame.h"
#include "mpe/iterations.h"
#include "mpe/log_reader.h"
#include "mpe/spread.h"
#include "mpe/status.h"

namespace mpe::analysis::diff {

enum class Kind { kProfile, kLog };

// Calls, time and bytes of a set of MPI calls (a routine's, a call site's, a region's), summed
// over ranks; the time also per rank (per_rank[r], ns).
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

// Where a call site is: its innermost frame, as `mpe diff` names and matches it. Two are the same
// site (of the same routine) when every field is equal.
struct Where {
  std::string file;  // base name; empty without a source line
  int line = 0;
  std::string function;
  std::string location;  // "halo2d.c:146 (main)", the module+offset text without a line, "?" unknown
  bool operator==(const Where&) const = default;
};
// The Where of a call site's frames, innermost first (none: the unknown site, "?").
Where where_of(const std::vector<Frame>& frames);

// One call site: one routine called from one source line (the innermost frame), over all ranks
// (and over the outer frames, when the run recorded deeper stacks).
struct Site {
  std::string routine;
  Where where;
  Measure m;
};

// Waiting of one wait-state pattern at one call site (logs).
struct SiteWait {
  std::string pattern;   // analysis::waits::pattern_key()
  std::string site_key;  // Run::sites key
  double ns = 0;
  uint64_t instances = 0;
};

// One run, as `mpe diff` compares it.
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
  std::map<std::string, double> patterns;         // analysis::waits::pattern_key() -> ns waited
  std::map<std::string, uint64_t> pattern_count;  // instances
  std::vector<SiteWait> site_waits;
  std::map<std::string, Measure> regions;  // "user state X", "Pcontrol level L" -> time per rank
};

// The key of a site inside one run: routine, file, line and function of the innermost frame (and
// the location text when there is no line, which keeps distinct addresses apart).
std::string site_key(const Site& s);
// Finds or adds the site of `routine` at the innermost frame of `frames` (empty: unknown).
Site& site_of(Run* run, const std::string& routine, const std::vector<Frame>& frames);

struct LogOptions {
  uint64_t eager_limit = 65536;  // the wait-state analysis's (analysis::waits::Options)
  int decoders = 1;              // the chunk pass's decoding threads
};

// Builds a Run from the chunks of a log in index order: per-rank span and MPI time, routines, call
// sites and regions, and what the wait-state analysis's collector keeps
// (mpe/endpoint_collector.h). Feed it from a chunk pass (consumer()), then finish() it once.
class RunBuilder {
 public:
  RunBuilder(const format::LogFile& file, std::string path, const LogOptions& options = {});
  ~RunBuilder();
  RunBuilder(const RunBuilder&) = delete;
  RunBuilder& operator=(const RunBuilder&) = delete;
  void consume(const format::Chunk& chunk);
  format::ChunkConsumer consumer() {
    return [this](const format::Chunk& c) { consume(c); };
  }
  // Ends the pass: closes the open Pcontrol levels, sets the spans, then measures the wait states
  // from what the collector kept. Errors: the wait-state analysis's.
  StatusOr<Run> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  // Without the collector: run_from_log's, whose wait states come from the replay.
  RunBuilder(const format::LogFile& file, std::string path, const LogOptions& options, bool collect);
  friend StatusOr<Run> run_from_log(const format::LogFile&, const std::string&, const LogOptions&);
};

// Reads a log into a Run: the tables in one pass over its chunks, then the wait states by the
// streaming replay (mpe/waits.h), so that memory does not follow the records. Errors: the reader's.
StatusOr<Run> run_from_log(const format::LogFile& file, const std::string& path,
                           const LogOptions& options = {});

// One row of a compared table: a measure of A and of B (already scaled), and what it is.
struct Row {
  std::string name;  // routine, site location, pattern, region
  std::string routine;
  std::string note;  // "moved from L1 to L2", "only in A", "only in B"
  // Call-site rows and their wait rows: the site in A and in B (a default Where where the run has
  // none), so that a front end finds each run's instances without reading the name or the note.
  Where site_a, site_b;
  uint64_t calls_a = 0, calls_b = 0;
  double ns_a = 0, ns_b = 0;
  double bytes_a = 0, bytes_b = 0;
  int64_t rank = -1;  // the rank whose time here changed most (same rank counts only)
  double rank_delta = 0;
  std::vector<double> rank_deltas;  // B - A per rank (same rank counts), ns
  std::string pattern;              // wait rows
  double delta() const { return ns_b - ns_a; }
};

// Per-rank values (wall_per_rank, mpi_per_rank, outside_mpi()) spread over the ranks: mpe::spread()
// (mpe/spread.h), whose imbalance is libmpetime's.
double sum(const std::vector<double>& v);
// Each rank's time outside MPI (the application's): its wall time less its MPI time.
std::vector<double> outside_mpi(const Run& r);
// B - A as a percentage of A; NaN when A is 0.
double pct_change(double a, double b);

// The rank groups of runs of different sizes: up to 4 groups by rank fraction (the first quarter
// of A's ranks against the first quarter of B's...), mean per rank of MPI time and time outside.
struct Group {
  uint32_t a_first, a_last, b_first, b_last;  // inclusive
  double mpi_a, mpi_b, out_a, out_b;
};
// Per rank, the time outside MPI and in MPI of A and B (same rank counts).
struct RankChange {
  uint32_t rank;
  double out_a, out_b, mpi_a, mpi_b;
};

// Which measure a threshold compares, and its value in A and in B.
struct Verdict {
  std::string what;  // "wall time", "MPI time", "MPI time per rank", "region user state solve"
  double a = 0, b = 0;
};

// Two runs compared. With different rank counts every sum over ranks is divided by the run's
// ranks (a per-rank mean, fa and fb), so that A and B compare; `scaled` says so.
struct Comparison {
  Run a, b;
  bool scaled = false;
  double fa = 1, fb = 1;
  std::vector<Row> routines, sites, waits, site_waits, regions;  // each ranked by |B - A|
  size_t common_sites = 0, moved_sites = 0, known_sites_a = 0, known_sites_b = 0;
  std::vector<Group> groups;             // scaled only
  std::vector<RankChange> rank_changes;  // same rank counts: by growth of the time outside MPI
  // True when both runs have call sites but none in common: different programs.
  bool unrelated() const { return common_sites == 0 && known_sites_a && known_sites_b; }
  // The whole run's measure for a threshold: the wall time when both runs have one, else MPI time.
  Verdict whole_run() const;
  // The region named `name` ("user state solve", or a unique part of a region's name, "solve"):
  // its time (per rank when scaled). Errors: invalid-argument naming the regions there are.
  StatusOr<Verdict> region(const std::string& name) const;
};

// Compares two runs of the same kind. A and B are moved in: the comparison owns them.
Comparison compare(Run a, Run b);

// Iterations of A and B side by side, k against k: one row per iteration present in both.
struct IterationRow {
  size_t k;
  double a_ns, b_ns;                 // the iteration's span over the ranks (latest end - earliest start)
  std::vector<double> delta_ns;      // per rank: B - A of the rank's iteration length
  std::vector<double> app_delta_ns;  // per rank: B - A of its time outside MPI in the iteration
  bool parts = false;                // the span, a rank's length or its time outside MPI beyond the noise
  // Where they part: the ranks whose iteration length changed beyond noise_ns, largest first.
  std::vector<uint32_t> ranks;
  // Where the change comes from: the ranks whose time outside MPI changed beyond app_noise_ns
  // (a rank that computed longer; the ranks that waited for it grew in MPI), largest first.
  std::vector<uint32_t> app_ranks;
  double delta() const { return b_ns - a_ns; }
};
// What B - A varies by without a change, per measure: 5 x the median absolute deviation (x 1.4826)
// of every rank's B - A in every iteration, at least 2% of a typical iteration.
struct IterationComparison {
  std::string basis_a, basis_b;
  size_t count_a = 0, count_b = 0;
  uint32_t ranks = 0;       // per-rank columns only when A and B have the same ranks, else 0
  double noise_ns = 0;      // of a rank's iteration length (of the span when ranks is 0)
  double app_noise_ns = 0;  // of a rank's time outside MPI in an iteration
  std::vector<IterationRow> rows;
  std::vector<size_t> parting;  // the iterations where A and B part
};
IterationComparison compare_iterations(const Iterations& a, const Iterations& b);

}  // namespace mpe::analysis::diff
