// mpe-mpit: writes, as JSON on stdout, every MPI_T control and performance variable of the MPI
// library it is linked against (or loaded with, through LD_LIBRARY_PATH). `mpe mpit` runs it and
// filters and formats what it writes; `mpe` itself is not linked against MPI.
//
// It needs no MPI job: MPI_T_init_thread works without MPI_Init (MPI-3, section 14.3.4), and this
// is the only place where the suite calls it that way. Some libraries register their performance
// variables only inside MPI_Init (MPICH's ch3 device: none before, 9 after); when MPI_T alone
// shows none, mpe-mpit initializes MPI as a singleton (still no mpiexec) and asks again, and its
// JSON says so ("after_mpi_init"). `--no-init` never calls MPI_Init.
#include <mpi.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "mpe/mpit.h"

namespace {

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "";
  std::string v(text, static_cast<size_t>(len > 0 ? len : 0));
  const size_t nl = v.find_first_of("\r\n");  // the first line names the library and version
  return nl == std::string::npos ? v : v.substr(0, nl);
}

}  // namespace

int main(int argc, char** argv) {
  const bool may_init = !(argc > 1 && std::string(argv[1]) == "--no-init");
  int provided = 0;
  if (PMPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "mpe-mpit: MPI_T_init_thread failed\n");
    return 1;
  }
  int npvars = 0;
  if (PMPI_T_pvar_get_num(&npvars) != MPI_SUCCESS) npvars = 0;
  const bool init = may_init && npvars == 0;
  if (init && PMPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    std::fprintf(stderr, "mpe-mpit: MPI_Init (singleton) failed\n");
    return 1;
  }
  // Handles (which tell a variable's element count) only after MPI_Init: Open MPI 4.1 crashes
  // allocating some (psm2's) before it. Without them the count stays unknown (it is the
  // communicator's size for a variable bound to one, 1 for most others).
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  if (init && PMPI_T_pvar_session_create(&session) != MPI_SUCCESS) session = MPI_T_PVAR_SESSION_NULL;
  nlohmann::json out;
  out["library"] = library_version();
  out["after_mpi_init"] = init;
  auto& cvars = out["control_variables"] = nlohmann::json::array();
  for (const mpe::mpit::CvarInfo& v : mpe::mpit::control_variables()) {
    nlohmann::json j = {{"name", v.name},
                        {"datatype", mpe::mpit::type_name(v.type)},
                        {"binding", mpe::mpit::bind_name(v.bind)},
                        {"scope", mpe::mpit::scope_name(v.scope)},
                        {"verbosity", mpe::mpit::verbosity_name(v.verbosity)},
                        {"description", v.description}};
    j["count"] = v.count >= 0 ? nlohmann::json(v.count) : nlohmann::json(nullptr);
    j["value"] = v.bind == MPI_T_BIND_NO_OBJECT ? nlohmann::json(v.value) : nlohmann::json(nullptr);
    cvars.push_back(std::move(j));
  }
  auto& pvars = out["performance_variables"] = nlohmann::json::array();
  for (const mpe::mpit::PvarInfo& v : mpe::mpit::performance_variables(session)) {
    nlohmann::json j = {{"name", v.name},
                        {"class", v.known_class ? mpe::pvar_class_name(v.cls) : "class?"},
                        {"datatype", mpe::mpit::type_name(v.type)},
                        {"binding", mpe::mpit::bind_name(v.bind)},
                        {"verbosity", mpe::mpit::verbosity_name(v.verbosity)},
                        {"readonly", v.readonly},
                        {"continuous", v.continuous},
                        {"atomic", v.atomic},
                        {"description", v.description}};
    j["count"] = v.count >= 0 ? nlohmann::json(v.count) : nlohmann::json(nullptr);
    pvars.push_back(std::move(j));
  }
  if (session != MPI_T_PVAR_SESSION_NULL) PMPI_T_pvar_session_free(&session);
  PMPI_T_finalize();
  if (init) PMPI_Finalize();
  // Replace, not throw, on descriptions that are not valid UTF-8.
  const std::string text = out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}
