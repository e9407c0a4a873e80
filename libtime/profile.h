// The per-process file of libmpetime and the reports built from it: one place for the format,
// shared by the tool (which writes files and the finalize report) and `mpe report`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/status.h"

namespace mpe::time {

// Version of the per-process file; a reader accepts kMinSupportedVersion..kCurrentVersion.
inline constexpr int kCurrentVersion = 1;
inline constexpr int kMinSupportedVersion = 1;
inline constexpr const char* kMagic = "mpetime";

// One MPI routine in one process, summed over its threads. Times are nanoseconds.
struct RoutineStats {
  std::string name;
  uint64_t calls = 0;
  uint64_t incl_ns = 0;  // inclusive: wall time inside the routine
  uint64_t excl_ns = 0;  // exclusive: minus the time of MPI calls nested inside it
  uint64_t min_ns = 0;   // shortest and longest single call (inclusive)
  uint64_t max_ns = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_recv = 0;
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
};

// Renders a profile as the per-process file (line-based text, integers only).
std::string serialize(const RankProfile& p);
// Parses a per-process file. Errors: not-a-logfile (not such a file), unsupported-version,
// truncated, corrupt.
StatusOr<RankProfile> parse(const std::string& text);
// Reads and parses a file; errors as parse(), or io-error, each naming the path.
StatusOr<RankProfile> load(const std::string& path);

// Checks that the profiles form one run (same size, each rank once) and sorts them by rank.
// Errors: invalid-argument.
Status check_run(std::vector<RankProfile>* profiles);
// The whole-run report as text and as JSON. Profiles must have passed check_run.
std::string text_report(const std::vector<RankProfile>& profiles);
std::string json_report(const std::vector<RankProfile>& profiles);
// The report for one process.
std::string rank_report(const RankProfile& p);

}  // namespace mpe::time
