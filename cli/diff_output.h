// The output of `mpe diff`: a comparison (mpe/diff.h) as text or as JSON, and the comparison of
// the runs' iterations (--iterations).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "diff_runs.h"

namespace mpe::cli::diff {

using Json = nlohmann::ordered_json;  // keeps the keys in the order written

inline double sec(double ns) { return ns * 1e-9; }
const char* kind_name(Kind k);
std::string scaled_line(const Comparison& c);
std::string unrelated_line(const Comparison& c);

// Prints the comparison: the whole run, ranks or rank groups, then top rows of each table.
void print_text(const Comparison& c, size_t top);
// Every row of every table.
Json to_json(const Comparison& c);

// Prints the iterations of A and B side by side, the ones where they part first named.
void print_iterations_text(const IterationComparison& c, size_t top);
Json iterations_json(const IterationComparison& c);

}  // namespace mpe::cli::diff
