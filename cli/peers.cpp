// Loads libmpepeers when `mpe` runs under a launcher: see peers.h.
#include "peers.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "commands.h"

namespace mpe::cli {

namespace {

// The job's size as the launcher tells its processes: Hydra (MPICH), Open MPI, PMIx.
int launched_size() {
  for (const char* name : {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 1;
}

// This process's rank in the launcher's job; 0 when not launched.
int launched_rank() {
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

}  // namespace

void set_first_process_action(CLI::App* cmd, Action action) {
  set_action(cmd, [action = std::move(action)]() -> Status {
    if (launched_size() > 1 && launched_rank() != 0) return Status();
    return action();
  });
}

StatusOr<std::unique_ptr<format::SummaryPeers>> launched_peers() {
  if (launched_size() <= 1) return std::unique_ptr<format::SummaryPeers>();
  const std::string path = library_dir() + "/libmpepeers.so";
  // Global: Open MPI's components, loaded later by libmpi, resolve their symbols in it.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return Status(StatusCode::kIoError, std::string("cannot load ") + path + ": " + dlerror());
  using Open = format::SummaryPeers* (*)();
  auto open = reinterpret_cast<Open>(dlsym(lib, "mpe_peers_open"));
  if (!open) return Status(StatusCode::kIoError, path + " has no mpe_peers_open");
  return std::unique_ptr<format::SummaryPeers>(open());
}

}  // namespace mpe::cli
