// The subcommands of `mpe`; each lives in its own cmd_*.cpp and registers itself here.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "mpe/interop.h"
#include "mpe/log_reader.h"

namespace mpe::cli {

void add_run_command(CLI::App& app);
void add_coverage_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_stat_command(CLI::App& app);
void add_print_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_convert_command(CLI::App& app);

// Directory holding the tool libraries: <dir of the mpe executable>/../lib.
std::string library_dir();

// A logfile or OTF2 archive, opened and fully decoded, for the commands that read one.
struct LoadedLog {
  std::shared_ptr<interop::OpenedLog> opened;  // keeps an OTF2 archive's scratch file alive
  const log::LogFile* file;
  log::Trace trace;
};
// Throws std::runtime_error with a one-line message when the file cannot be read.
LoadedLog load_log(const std::string& path);

}  // namespace mpe::cli
