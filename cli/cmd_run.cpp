// `mpe run`: runs an unmodified program under the chosen tools by preloading their libraries.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "commands.h"
#include "live_relay.h"
#include "mpe/log_filter.h"
#include "stack_layers.h"

namespace mpe::cli {

namespace {

enum class Launcher { kNone, kMpich, kOpenMpi };

// Tells the launcher flavour from the name it resolves to: /usr/bin/mpiexec is an alternatives
// link to mpiexec.hydra (MPICH) or orterun (Open MPI).
Launcher launcher_of(const std::string& command) {
  namespace fs = std::filesystem;
  const std::string base = fs::path(command).filename();
  if (base.rfind("mpiexec", 0) != 0 && base.rfind("mpirun", 0) != 0 && base.rfind("orterun", 0) != 0)
    return Launcher::kNone;
  std::string resolved = base;
  if (const char* path = std::getenv("PATH"); path && command.find('/') == std::string::npos) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      const size_t end = dirs.find(':', start);
      const fs::path candidate = fs::path(dirs.substr(start, end - start)) / command;
      std::error_code ec;
      if (fs::exists(candidate, ec)) {
        resolved = fs::canonical(candidate, ec).filename();
        break;
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
  } else {
    std::error_code ec;
    const auto canonical = fs::canonical(command, ec);
    if (!ec) resolved = canonical.filename();
  }
  if (resolved.find("openmpi") != std::string::npos || resolved.find("orterun") != std::string::npos)
    return Launcher::kOpenMpi;
  return Launcher::kMpich;
}

// True when the launcher's arguments name other hosts, so the relay must listen where they reach.
bool names_hosts(const std::vector<std::string>& argv) {
  for (const std::string& a : argv)
    for (const char* opt : {"-hosts", "-host", "--host", "-H", "-f", "-hostfile", "--hostfile",
                            "-machinefile", "--machinefile", "-launcher-exec"})
      if (a == opt) return true;
  return false;
}

// The prefix liblog and the .live file are named by: MPE_LOGFILE_PREFIX, else the program's name:
// the last argument that is an executable file (the launcher's own options may name scripts, such
// as Hydra's -launcher-exec, before the program; the program's arguments are rarely executables).
std::string run_prefix(const std::vector<std::string>& argv, bool launcher) {
  if (const char* p = std::getenv("MPE_LOGFILE_PREFIX"); p && *p) return p;
  std::string program = "mpe-live";
  for (size_t i = launcher ? 1 : 0; i < argv.size(); ++i)
    if (access(argv[i].c_str(), X_OK) == 0 && std::filesystem::is_regular_file(argv[i]))
      program = std::filesystem::path(argv[i]).filename();
  return program;
}

pid_t g_launcher = -1;

// Passes SIGINT and SIGTERM on to the launcher, so that `mpe run` can end the relay after it.
void forward_signal(int sig) {
  if (g_launcher > 0) kill(g_launcher, sig);
}

// Runs argv as a child and returns its exit status (128+signal when killed).
int run_child(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "mpe: cannot run '%s': %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  if (pid < 0) return 127;
  g_launcher = pid;
  signal(SIGINT, forward_signal);
  signal(SIGTERM, forward_signal);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// --quiet as MPE_QUIET; with liblog, MPE's logging API for Python programs (`import mpelog`,
// docs/python.md) on PYTHONPATH, beside the tool libraries and before whatever it already names.
void add_plain_settings(bool quiet, bool log, std::vector<std::pair<std::string, std::string>>* env) {
  if (quiet) env->emplace_back("MPE_QUIET", "1");
  if (!log) return;
  const char* path = std::getenv("PYTHONPATH");
  env->emplace_back("PYTHONPATH", library_dir() + "/python" + (path && *path ? std::string(":") + path : ""));
}

// --filter FILE as MPE_LOG_FILTER for the ranks. The file is checked here too, so that a bad line
// is said once, before the run, which then goes on without a filter, as the tools would run it.
Status add_filter_setting(const std::string& path, bool recording,
                          std::vector<std::pair<std::string, std::string>>* env) {
  if (path.empty()) return Status();
  if (!recording) return Status(StatusCode::kInvalidArgument, "--filter applies to --log and --live");
  const StatusOr<format::LogFilter> filter = format::LogFilter::read(path);
  if (filter.ok())
    env->emplace_back("MPE_LOG_FILTER", std::filesystem::absolute(path));
  else
    std::fprintf(stderr, "mpe: --filter: %s; the run goes on without a filter\n",
                 filter.status().message().c_str());
  return Status();
}

}  // namespace

void add_run_command(CLI::App& app) {
  struct Options {
    bool time = false, umq = false, log = false, live = false, quiet = false;
    std::string stack, filter;
    std::vector<std::string> command;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand("run", "Run a program under the chosen tools, without relinking");
  run->add_flag("--time", opts->time, "time, calls and bytes per MPI routine (libmpetime)");
  run->add_flag("--umq", opts->umq, "receives that meet a long unexpected-message queue (libumq)");
  run->add_flag("--log", opts->log, "timestamped event log (liblog)");
  run->add_flag(
      "--live", opts->live,
      "live view while the job runs (liblive): writes <prefix>.live for `mpe top` and `upshot --live`");
  run->add_option(
      "--stack", opts->stack,
      "other PMPI tools (mpiP, a site's wrapper...) stacked with ours, unmodified, in this order: "
      "A.so[,mpe,B.so] (mpe: where ours sit; default on top); see docs/stack.md");
  run->add_option("--filter", opts->filter,
                  "what liblog and liblive leave out (MPE_LOG_FILTER): a file of rules, one a line; see "
                  "docs/filter.md");
  run->add_flag("--quiet", opts->quiet,
                "no informational lines from the tools (MPE_QUIET=1); lines about lost data still print");
  run->add_option("command", opts->command, "the launcher and program, after --, e.g. -- mpiexec -n 4 ./app")
      ->required();
  set_action(run, [opts]() -> Status {
    std::vector<std::string> libs;
    if (opts->time) libs.push_back("libmpetime.so");
    if (opts->umq) libs.push_back("libumq.so");
    if (opts->log) libs.push_back("liblog.so");
    if (opts->live) libs.push_back("liblive.so");
    if (libs.empty() && opts->stack.empty())
      return Status(StatusCode::kInvalidArgument,
                    "choose at least one tool: --time, --umq, --log, --live or --stack");
    std::vector<std::string> argv = opts->command;
    const Launcher launcher = launcher_of(argv[0]);
    std::vector<std::pair<std::string, std::string>> env;
    // Other PMPI tools: libmpestack, preloaded before ours, loads them as layers.
    if (!opts->stack.empty()) {
      auto stack = resolve_stack(opts->stack, !libs.empty());
      if (!stack.ok()) return stack.status();
      libs.insert(libs.begin(), "libmpestack.so");
      env.emplace_back("MPE_STACK", *stack);
    }
    add_plain_settings(opts->quiet, opts->log, &env);
    MPE_RETURN_IF_ERROR(add_filter_setting(opts->filter, opts->log || opts->live, &env));

    // The live view: a relay for this job, its address and keys for the ranks. When it cannot
    // start, the job runs without it, and one line says why.
    std::optional<RelayProcess> relay;
    std::string live_file, mpelog;
    if (opts->live) {
      const std::string prefix = run_prefix(argv, launcher != Launcher::kNone);
      live_file = prefix + ".live";
      if (opts->log) mpelog = std::filesystem::absolute(prefix + ".mpelog");
      auto address = live_stream::relay_address(names_hosts(argv));
      auto started =
          address.ok() ? start_relay(*address, live_file, mpelog) : StatusOr<RelayProcess>(address.status());
      if (started.ok()) {
        relay = std::move(*started);
        for (auto& kv : publisher_environment(*relay)) env.push_back(kv);
        for (const char* pass : {"MPE_LIVE_INTERVAL", "MPE_LIVE_BUDGET"})
          if (const char* v = std::getenv(pass)) env.emplace_back(pass, v);
        if (!opts->quiet)
          std::fprintf(stderr, "mpe: live view of this run: mpe top %s (or upshot --live %s)\n",
                       live_file.c_str(), live_file.c_str());
      } else {
        std::fprintf(stderr, "mpe: the live view is off for this run: %s\n",
                     started.status().message().c_str());
        libs.pop_back();
      }
    }
    std::string preload;
    for (const auto& name : libs) {
      const std::string path = library_dir() + "/" + name;
      if (!std::filesystem::exists(path))
        return Status(StatusCode::kIoError, path + " is missing; is mpe-tools installed?");
      preload += (preload.empty() ? "" : ":") + path;
    }
    if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing)
      preload += std::string(":") + existing;
    if (!preload.empty()) env.emplace(env.begin(), "LD_PRELOAD", preload);

    // Launchers get the settings per rank, so the launcher itself runs untouched. The live view's
    // keys go through this process's environment, never on a command line that any user of the
    // host can read: Hydra hands its whole environment to every rank, Open MPI the names given
    // with -x.
    std::vector<std::string> settings;
    for (const auto& [k, v] : env) {
      const bool secret = k.rfind("MPE_LIVE_", 0) == 0;
      if (secret || launcher == Launcher::kNone) setenv(k.c_str(), v.c_str(), 1);
      if (launcher == Launcher::kNone) continue;
      if (secret && launcher == Launcher::kOpenMpi)
        settings.insert(settings.end(), {"-x", k});
      else if (secret)
        continue;
      else if (launcher == Launcher::kOpenMpi)
        settings.insert(settings.end(), {"-x", k + "=" + v});
      else
        settings.insert(settings.end(), {"-genv", k, v});
    }
    argv.insert(argv.begin() + 1, settings.begin(), settings.end());
    if (!relay) {
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execvp(cargv[0], cargv.data());
      return Status(StatusCode::kIoError, "cannot run '" + argv[0] + "': " + std::strerror(errno));
    }
    // With a relay, `mpe run` stays to end it once the launcher returns; Ctrl-C goes to the
    // launcher (same terminal group), which stops the job.
    const int status = run_child(argv);
    const std::string lost =
        stop_relay(*relay, status, mpelog.empty() || !std::filesystem::exists(mpelog) ? "" : mpelog);
    ::unlink(live_file.c_str());
    if (!lost.empty()) std::fprintf(stderr, "mpe: %s\n", lost.c_str());
    std::fflush(stdout);
    std::exit(status);
  });
}

}  // namespace mpe::cli
