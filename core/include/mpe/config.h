// Environment settings shared by the tools, and the one way a tool reports a problem.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace mpe::config {

// Reads an integer setting; a malformed or out-of-range value is reported and the default used.
int64_t env_int(const char* name, int64_t fallback, int64_t min, int64_t max);
// Reads a string setting, or the fallback when it is unset or empty.
std::string env_string(const char* name, const std::string& fallback);
// True for 1/yes/true/on; a value that is none of those nor 0/no/false/off is reported.
bool env_bool(const char* name, bool fallback);

// Where per-rank temporary files go (liblog's spill files), as MPE defines MPE_TMPDIR: that
// directory, else the working directory.
std::string temp_dir();
// The file prefix: MPE_LOGFILE_PREFIX, else the program name. As in MPE it may include a
// directory, absolute or relative to the working directory ("/scratch/run7", "out/run7").
std::string output_prefix();
// The prefix without its directory ("run7"): names temporary files and the program.
std::string output_name();
// Where an output file (logfile, report) named `suffix` goes: prefix + suffix when the prefix
// includes a directory, else MPE_LOG_DIR (or the working directory) / prefix + suffix. A
// directory that does not exist or cannot be written gets one line, and the working directory
// is used instead.
std::string output_path(const std::string& suffix);

// Returns the rank the launcher (MPICH's Hydra, Open MPI's ORTE/PRRTE) gave this process, or -1
// when none did. Inline: libmpestack, which carries no core objects, asks it too.
inline int launcher_rank() noexcept {
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  return -1;
}

// Prints one line "mpe-tools: <message>" on stderr; from rank 0 only when rank0_only is set.
void warn(const std::string& message, bool rank0_only = true) noexcept;
// The same without allocating: for reporting a failed allocation (pass a string literal).
void warn(const char* message, bool rank0_only = true) noexcept;

// An informational line ("liblog wrote ...", "report in ..."): printed as warn() does, except
// under MPE_QUIET=1, which silences these and only these. A line that says data was lost, or
// that a tool could not do its job, is a warn() and always prints.
void inform(const std::string& message, bool rank0_only = true) noexcept;

}  // namespace mpe::config
