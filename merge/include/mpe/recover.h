// `mpe merge --recover`: a logfile from the spill files of a run that did not finish.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/status.h"

namespace mpe::format {

struct RecoverReport {
  int ranks = 0;
  int ranks_missing = 0;
  uint64_t chunks = 0;
  uint64_t records = 0;
  std::vector<std::string> notes;  // one line per damaged or missing part
};

// Builds a logfile from spill files (one per rank, `<prefix>.mpelog.<rank>.part`), laid out by the
// merge planner (log_layout.h). Each part starts with a definitions chunk (program, clock, MPI
// categories) that the merge reuses. The parts may come from several directories (one per node);
// parts of different runs (another world size or program) or two parts of one rank are an error.
// On failure no output file is left behind.
Status recover(const std::vector<std::string>& parts, const std::string& out, RecoverReport* report);

}  // namespace mpe::format
