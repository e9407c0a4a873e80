// What the filter of a run (mpe/log_filter.h, format v7) left out, read from a log's definitions:
// the one summary `mpe stat`, `mpe waits` and upshot show, so that no reader presents a filtered
// log as whole.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mpe/log_defs.h"

namespace mpe::format {

struct FilterReport {
  std::vector<std::string> filters;  // the distinct rules the ranks logged under (usually one)
  uint32_t ranks_filtered = 0;       // ranks that logged under a filter
  std::vector<std::pair<std::string, uint64_t>> left_out;  // calls per category, most first
  uint64_t calls_left_out = 0;
  bool any() const { return ranks_filtered > 0; }
};

FilterReport filter_report(const Definitions& d);

// "filter:     exclude routine MPI_Iprobe; only ranks 0-3 (on 4 of 8 ranks)\n"
// "left out:   2000000 calls: MPI_Iprobe 2000000 (their states; messages kept)\n"; empty when
// the log was not filtered. `indent` lines up the values (stat's column).
std::string filter_lines(const FilterReport& r, int indent = 12);
// One line for a view or an analysis: "filtered: 2000000 calls left out (MPI_Iprobe 2000000; ...)".
std::string filter_note(const FilterReport& r);

}  // namespace mpe::format
