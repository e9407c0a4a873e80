// The unexpected-queue report: call sites where receives met a long queue, merged over the ranks
// and written as text and JSON. One writer for both producers: libumq (lengths read from MPI_T at
// run time) and `mpe umq` (lengths rebuilt from a logfile, mpe/umq.h). No MPI, no reader: it is
// linked into libumq.so and into the offline side alike.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mpe/frame.h"

namespace mpe::analysis::umq {

// Where the lengths come from, as the report's header says.
struct VariableInfo {
  std::string name;               // the MPI_T variable, or "rebuilt from <file>"
  bool per_communicator = false;  // per communicator and peer (Open MPI, rebuilt), else process-wide
  uint64_t threshold = 0;         // receives that met a longer queue are counted
};

// How often one peer held the largest share of the queue at a call site.
struct PeerCount {
  int peer = -1;  // rank in the receive's communicator
  uint64_t times_top = 0;
  uint64_t max_queued = 0;
};

// One call site of one rank: the receives there that met a queue above the threshold.
struct SiteRecord {
  std::string mpi_function;  // the MPI routine called there
  std::string communicator;  // the communicator of the first occurrence
  uint64_t occurrences = 0;
  uint64_t sum_length = 0;
  uint64_t max_length = 0;
  std::vector<PeerCount> peers;
  std::vector<Frame> stack;  // innermost (the line that called MPI) first
};

struct PeerTotals {
  uint64_t times = 0, max = 0;
};

// One call site merged over the ranks that share its MPI routine and callsite_key().
struct MergedSite {
  uint64_t occurrences = 0, sum = 0, max = 0;
  std::set<int> ranks;
  std::set<std::string> comms;
  std::string mpi_fn;
  std::map<std::pair<int, int>, PeerTotals> peers;  // (rank, peer) -> counts
  std::vector<Frame> stack;
};

// The call sites of every rank, merged by MPI routine and callsite_key(): the same site on every
// rank, PIE or not, as in every other report of the tools.
class SiteMerge {
 public:
  // Adds one rank's sites (their stacks are moved out). Throws std::bad_alloc.
  void add_rank(std::vector<SiteRecord>& sites, int rank);
  // The merged sites, most occurrences first (then the longest queue). Throws std::bad_alloc.
  std::vector<const MergedSite*> ranked() const;

 private:
  std::map<std::string, MergedSite> by_site_;
};

// Returns the text report (<prefix>.umq.txt). Throws std::bad_alloc.
std::string report_text(const std::vector<const MergedSite*>& sites, const VariableInfo& variable,
                        int nranks);
// Returns the JSON report (<prefix>.umq.json), newline-terminated. Throws std::bad_alloc.
std::string report_json(const std::vector<const MergedSite*>& sites, const VariableInfo& variable,
                        int nranks);

}  // namespace mpe::analysis::umq
