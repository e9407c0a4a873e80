// `mpe run`: runs an unmodified program under the chosen tools by preloading their libraries.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "commands.h"

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

}  // namespace

void add_run_command(CLI::App& app) {
  struct Options {
    bool time = false, umq = false, log = false, quiet = false;
    std::vector<std::string> command;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand("run", "Run a program under the chosen tools, without relinking");
  run->add_flag("--time", opts->time, "time, calls and bytes per MPI routine (libmpetime)");
  run->add_flag("--umq", opts->umq, "receives that meet a long unexpected-message queue (libumq)");
  run->add_flag("--log", opts->log, "timestamped event log (liblog)");
  run->add_flag("--quiet", opts->quiet,
                "no informational lines from the tools (MPE_QUIET=1); lines about lost data still print");
  run->add_option("command", opts->command, "the launcher and program, after --, e.g. -- mpiexec -n 4 ./app")
      ->required();
  set_action(run, [opts]() -> Status {
    std::vector<std::string> libs;
    if (opts->time) libs.push_back("libmpetime.so");
    if (opts->umq) libs.push_back("libumq.so");
    if (opts->log) libs.push_back("liblog.so");
    if (libs.empty())
      return Status(StatusCode::kInvalidArgument, "choose at least one tool: --time, --umq or --log");
    std::string preload;
    for (const auto& name : libs) {
      const std::string path = library_dir() + "/" + name;
      if (!std::filesystem::exists(path))
        return Status(StatusCode::kIoError, path + " is missing; is mpe-tools installed?");
      preload += (preload.empty() ? "" : ":") + path;
    }
    if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing)
      preload += std::string(":") + existing;

    std::vector<std::string> argv = opts->command;
    // Launchers get the preload as a per-rank setting, so the launcher itself runs untouched.
    switch (launcher_of(argv[0])) {
      case Launcher::kOpenMpi:
        argv.insert(argv.begin() + 1, {"-x", "LD_PRELOAD=" + preload});
        if (opts->quiet) argv.insert(argv.begin() + 1, {"-x", "MPE_QUIET=1"});
        break;
      case Launcher::kMpich:
        argv.insert(argv.begin() + 1, {"-genv", "LD_PRELOAD", preload});
        if (opts->quiet) argv.insert(argv.begin() + 1, {"-genv", "MPE_QUIET", "1"});
        break;
      case Launcher::kNone:
        setenv("LD_PRELOAD", preload.c_str(), 1);
        if (opts->quiet) setenv("MPE_QUIET", "1", 1);
        break;
    }
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execvp(cargv[0], cargv.data());
    return Status(StatusCode::kIoError, "cannot run '" + argv[0] + "': " + std::strerror(errno));
  });
}

}  // namespace mpe::cli
