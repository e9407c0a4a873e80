// The subcommands of `mpe`; each lives in its own cmd_*.cpp and registers itself here.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "mpe/log_summary.h"
#include "mpe/status.h"

namespace mpe::cli {

// What a subcommand does when it runs; the Status it returns is how the command ended.
using Action = std::function<Status()>;
// Makes `action` the callback of `cmd`. main() turns a failed action into one line on stderr,
// "mpe: <code>: <message>", and exit status 1; commands never print their own errors.
void set_action(CLI::App* cmd, Action action);
// The same, for a command that does not spread over a launcher's processes (`mpiexec -n M mpe
// print LOG`): process 0 runs it, the others end at once with status 0, so that the output is
// one process's and no file is written M times at once. Only `mpe stat` and `mpe waits` spread.
void set_first_process_action(CLI::App* cmd, Action action);
// For the processes of a spread command other than process 0: a failure ends them with status 1
// but without its line, which process 0 prints once.
void quiet_errors();
// A spread command's failure, known to every process (the spread passes agree on it): process 0
// prints its line now, and the others wait for that before they go on to end with status 1.
// Without the wait, Open MPI's mpiexec sees another process exit 1 first and kills process 0
// before its line is out. Returns `failure`, which main() then does not print again.
Status fail_spread(Status failure, format::SummaryPeers& peers);

void add_run_command(CLI::App& app);
void add_coverage_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_estimate_command(CLI::App& app);
void add_stat_command(CLI::App& app);
void add_print_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_waits_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_mpit_command(CLI::App& app);
void add_umq_command(CLI::App& app);
void add_top_command(CLI::App& app);
void add_live_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_cut_command(CLI::App& app);

// Directory holding the tool libraries: <dir of the mpe executable>/../lib.
std::string library_dir();

// A logfile or OTF2 archive, opened and fully decoded, for the commands that read one.
struct LoadedLog {
  std::shared_ptr<interop::OpenedLog> opened;  // keeps an OTF2 archive's scratch file alive
  const format::LogFile* file;
  format::Trace trace;
};
// Opens and decodes `path`. Errors: those of interop::OpenedLog::open and format::load_trace.
StatusOr<LoadedLog> load_log(const std::string& path);

}  // namespace mpe::cli
