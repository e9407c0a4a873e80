// Reads the runs `mpe diff` compares: a libmpetime profile (read here) or a log (read by
// analysis/'s mpe/diff.h), into the one model of mpe/diff.h, so that the comparison and its output
// have one code path.
#pragma once

#include <optional>
#include <string>

#include "mpe/diff.h"
#include "mpe/iterations.h"
#include "mpe/status.h"

namespace mpe::cli::diff {

using namespace mpe::analysis::diff;  // NOLINT: the model is the command's vocabulary

// What a path holds, by its first bytes: a profile (a JSON report or a per-process file) or a
// log (anything else: the log reader decides). Errors: io-error.
StatusOr<Kind> kind_of(const std::string& path);

// Loads a libmpetime JSON report (<prefix>.mpetime.json), or every per-process file beside a
// given one (<prefix>.mpetime.<rank>.txt). Errors: the libmpetime readers', naming the path.
StatusOr<Run> load_profile(const std::string& path);

struct LoadOptions {
  LogOptions log;
  bool iterations = false;  // also cut the log into iterations
};
// A log read: its run, and its iterations when asked for.
struct Loaded {
  Run run;
  analysis::Iterations iterations;
};
// Opens a logfile or OTF2 archive and reads it (mpe/diff.h's run_from_log, then
// find_iterations when asked). Errors: the log reader's.
StatusOr<Loaded> load_log(const std::string& path, const LoadOptions& options);

}  // namespace mpe::cli::diff
