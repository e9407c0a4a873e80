// `mpe`: the command line of mpe-tools. Errors become one message and a non-zero exit here only.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "commands.h"

namespace mpe::cli {

namespace {

Status g_outcome;      // how the subcommand that ran ended
bool g_quiet = false;  // quiet_errors()

// Out of memory is an answer, not a crash: when operator new fails anywhere in `mpe`, on any
// thread (the decoders included), one line says which command on which log ran out, the memory it
// had reached, and what to do; then `mpe` exits 1 (never std::bad_alloc, never SIGABRT). The line
// is written before the command runs, since the handler must not allocate; it adds the peak
// resident memory (getrusage) when it runs.
char g_out_of_memory_line[4096];

[[noreturn]] void on_out_of_memory() {
  // Once: a second thread out of memory at the same moment waits for the first one's exit.
  static std::atomic_flag said = ATOMIC_FLAG_INIT;
  if (said.test_and_set())
    for (;;) pause();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  char line[sizeof g_out_of_memory_line + 64];
  const int n = std::snprintf(line, sizeof line, g_out_of_memory_line,
                              static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0));
  if (n > 0) (void)!write(STDERR_FILENO, line, std::min(static_cast<size_t>(n), sizeof line - 1));
  _exit(1);
}

// Prepares the line for the command in argv: its words, and the first that names a file (the log
// it reads: every command names its input before its output).
void prepare_out_of_memory_line(int argc, char** argv) {
  std::string command = "mpe", log;
  off_t log_bytes = -1;
  for (int i = 1; i < argc; ++i) {
    command += std::string(" ") + argv[i];
    struct stat st {};
    if (log.empty() && ::stat(argv[i], &st) == 0 && S_ISREG(st.st_mode))
      log_bytes = st.st_size, log = argv[i];
  }
  for (char& c : command)
    if (c == '%') c = '_';  // the line is a format
  std::string size;
  if (log_bytes >= 0) {
    char b[64];
    std::snprintf(b, sizeof b, " (%.2f GB on disk)", static_cast<double>(log_bytes) / 1e9);
    size = std::string(" reading ") + log + b;
    for (char& c : size)
      if (c == '%') c = '_';
  }
  // The commands that still hold the whole log can point to the one that streams it.
  const bool streams = argc > 1 && std::strcmp(argv[1], "stat") == 0;
  std::snprintf(
      g_out_of_memory_line, sizeof g_out_of_memory_line,
      "mpe: out of memory: `%s`%s could not get more memory after using %%.2f GiB; run it where "
      "more memory is free, or raise the limit (ulimit -v)%s\n",
      command.c_str(), size.c_str(),
      streams || log.empty() ? "" : "; `mpe stat` summarizes a log of any length in memory for its ranks");
}

}  // namespace

void quiet_errors() { g_quiet = true; }

Status fail_spread(Status failure, format::SummaryPeers& peers) {
  if (peers.rank() == 0) {
    std::fprintf(stderr, "mpe: %s\n", failure.to_string().c_str());
    std::fflush(stderr);
  }
  quiet_errors();
  peers.broadcast("");  // a barrier: process 0's line is written when it returns
  return failure;
}

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
  mpe::cli::prepare_out_of_memory_line(argc, argv);
  std::set_new_handler(mpe::cli::on_out_of_memory);
  CLI::App app{"mpe-tools: see where MPI programs spend their time", "mpe"};
  app.set_version_flag("--version", std::string("mpe-tools " MPE_VERSION " (built for " MPE_MPI_NAME ")"));
  app.require_subcommand(0, 1);
  mpe::cli::add_run_command(app);
  mpe::cli::add_coverage_command(app);
  mpe::cli::add_report_command(app);
  mpe::cli::add_estimate_command(app);
  mpe::cli::add_stat_command(app);
  mpe::cli::add_print_command(app);
  mpe::cli::add_merge_command(app);
  mpe::cli::add_cut_command(app);
  mpe::cli::add_synth_command(app);
  mpe::cli::add_convert_command(app);
  mpe::cli::add_waits_command(app);
  mpe::cli::add_diff_command(app);
  mpe::cli::add_mpit_command(app);
  mpe::cli::add_umq_command(app);
  mpe::cli::add_serve_command(app);
  mpe::cli::add_top_command(app);
  mpe::cli::add_live_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::system_error& e) {  // a thread that cannot get its stack is out of memory too
    if (e.code() == std::errc::resource_unavailable_try_again) mpe::cli::on_out_of_memory();
    std::fprintf(stderr, "mpe: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // not ours (a library's): still one line
    std::fprintf(stderr, "mpe: %s\n", e.what());
    return 1;
  }
  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "%s", app.help().c_str());
    return 1;
  }
  if (mpe::cli::g_outcome.code() == mpe::StatusCode::kOutOfMemory) mpe::cli::on_out_of_memory();
  if (!mpe::cli::g_outcome.ok()) {
    if (mpe::cli::g_quiet) return 1;
    std::fprintf(stderr, "mpe: %s\n", mpe::cli::g_outcome.to_string().c_str());
    return 1;
  }
  return 0;
}
