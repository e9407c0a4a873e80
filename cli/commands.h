// The subcommands of `mpe`; each lives in its own cmd_*.cpp and registers itself here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

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

}  // namespace mpe::cli
