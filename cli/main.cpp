// `mpe`: the command line of mpe-tools. Errors become one message and a non-zero exit here only.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "commands.h"

namespace mpe::cli {

namespace {

Status g_outcome;  // how the subcommand that ran ended

}  // namespace

void set_action(CLI::App* cmd, Action action) {
  cmd->callback([action = std::move(action)] { g_outcome = action(); });
}

std::string library_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return MPE_INSTALL_LIBDIR;
  buf[n] = '\0';
  const auto dir = std::filesystem::path(buf).parent_path().parent_path() / "lib";
  return std::filesystem::exists(dir) ? dir.string() : std::string(MPE_INSTALL_LIBDIR);
}

StatusOr<LoadedLog> load_log(const std::string& path) {
  auto opened = interop::OpenedLog::open(path);
  if (!opened.ok()) return opened.status();
  auto trace = format::load_trace((*opened)->file());
  if (!trace.ok()) return Status(trace.status().code(), path + ": " + trace.status().message());
  const format::LogFile* file = &(*opened)->file();
  return LoadedLog{std::move(*opened), file, std::move(*trace)};
}

}  // namespace mpe::cli

int main(int argc, char** argv) {
  CLI::App app{"mpe-tools: see where MPI programs spend their time", "mpe"};
  app.set_version_flag("--version", std::string("mpe-tools " MPE_VERSION " (built for " MPE_MPI_NAME ")"));
  app.require_subcommand(0, 1);
  mpe::cli::add_run_command(app);
  mpe::cli::add_coverage_command(app);
  mpe::cli::add_report_command(app);
  mpe::cli::add_stat_command(app);
  mpe::cli::add_print_command(app);
  mpe::cli::add_merge_command(app);
  mpe::cli::add_synth_command(app);
  mpe::cli::add_convert_command(app);
  mpe::cli::add_waits_command(app);
  mpe::cli::add_diff_command(app);
  mpe::cli::add_mpit_command(app);
  mpe::cli::add_umq_command(app);
  mpe::cli::add_top_command(app);
  mpe::cli::add_live_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {  // not ours (out of memory, a library's): still one line
    std::fprintf(stderr, "mpe: %s\n", e.what());
    return 1;
  }
  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "%s", app.help().c_str());
    return 1;
  }
  if (!mpe::cli::g_outcome.ok()) {
    std::fprintf(stderr, "mpe: %s\n", mpe::cli::g_outcome.to_string().c_str());
    return 1;
  }
  return 0;
}
