// `mpe mpit`: what the MPI library offers through MPI_T, like MPICH's mpivars: every control
// variable with its value, and every performance variable, with class, datatype, binding, count,
// verbosity and description; filtered by name and class, as text or JSON. The MPI_T queries run
// in mpe-mpit (linked against MPI, next to this executable); this side filters and formats.
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/pvar_class.h"

namespace mpe::cli {

namespace {

// mpe-mpit beside this executable.
std::string helper_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "mpe-mpit";
  buf[n] = '\0';
  return (std::filesystem::path(buf).parent_path() / "mpe-mpit").string();
}

// Runs mpe-mpit and parses what it wrote.
StatusOr<nlohmann::json> query_mpi() {
  const std::string helper = helper_path();
  if (access(helper.c_str(), X_OK) != 0)
    return Status(StatusCode::kIoError,
                  "cannot run " + helper + " (it lists the variables; is mpe-tools installed?)");
  FILE* p = popen(("'" + helper + "'").c_str(), "r");
  if (!p) return Status(StatusCode::kIoError, "cannot run " + helper);
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0)
    return Status(StatusCode::kIoError, helper + " failed (exit status " +
                                            std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) + ")");
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("performance_variables") || !j.contains("control_variables"))
    return Status(StatusCode::kCorrupt, helper + " wrote something that is not its JSON");
  return j;
}

bool matches_name(const std::vector<std::string>& names, const std::string& name) {
  if (names.empty()) return true;
  for (const auto& n : names)
    if (name.find(n) != std::string::npos) return true;
  return false;
}

std::string text_or_dash(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

void add_mpit_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> names;
    std::vector<std::string> classes;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "mpit", "List the MPI library's MPI_T control and performance variables (no MPI job needed)");
  cmd->add_option("--name", opts->names, "only variables whose name contains this text (repeatable)");
  std::vector<std::string> class_names{"control"};
  for (int i = 0; i < kPvarClassCount; ++i) class_names.push_back(pvar_class_name(static_cast<PvarClass>(i)));
  cmd->add_option("--class", opts->classes,
                  "only these classes: control (the control variables) or a performance-variable class "
                  "(level, size, counter, timer, ...); repeatable")
      ->check(CLI::IsMember(class_names));
  cmd->add_flag("--json", opts->json, "write JSON");
  set_action(cmd, [opts]() -> Status {
    auto got = query_mpi();
    if (!got.ok()) return got.status();
    const nlohmann::json& all = got.value();
    auto want_class = [&](const std::string& c) {
      if (opts->classes.empty()) return true;
      for (const auto& w : opts->classes)
        if (w == c) return true;
      return false;
    };
    nlohmann::json cvars = nlohmann::json::array(), pvars = nlohmann::json::array();
    if (want_class("control"))
      for (const auto& v : all["control_variables"])
        if (matches_name(opts->names, v.value("name", ""))) cvars.push_back(v);
    for (const auto& v : all["performance_variables"])
      if (matches_name(opts->names, v.value("name", "")) && want_class(v.value("class", "")))
        pvars.push_back(v);
    const bool no_pvars = all["performance_variables"].empty();
    if (opts->json) {
      nlohmann::json out = {{"library", all.value("library", "")},
                            {"after_mpi_init", all.value("after_mpi_init", false)},
                            {"control_variables", cvars},
                            {"performance_variables", pvars}};
      std::printf("%s\n", out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return Status();
    }
    std::string out = "MPI library: " + all.value("library", std::string("?")) + "\n";
    if (no_pvars)
      out +=
          "This MPI library exports no MPI_T performance variables (none with MPI_T alone, none after "
          "MPI_Init).\n";
    else if (all.value("after_mpi_init", false))
      out += "(Listed after a singleton MPI_Init: MPI_T alone showed no performance variable.)\n";
    if (want_class("control")) {
      out += "\nControl variables (" + std::to_string(cvars.size()) + "):\n";
      for (const auto& v : cvars)
        out += "  " + v.value("name", "") + " = " + text_or_dash(v["value"]) + "\n      " +
               v.value("datatype", "") + ", binding " + v.value("binding", "") + ", count " +
               text_or_dash(v["count"]) + ", scope " + v.value("scope", "") + ", verbosity " +
               v.value("verbosity", "") + "\n      " + v.value("description", "") + "\n";
    }
    if (!no_pvars) {
      out += "\nPerformance variables (" + std::to_string(pvars.size()) + "):\n";
      for (const auto& v : pvars)
        out += "  " + v.value("name", "") + "\n      class " + v.value("class", "") + ", " +
               v.value("datatype", "") + ", binding " + v.value("binding", "") + ", count " +
               text_or_dash(v["count"]) + ", verbosity " + v.value("verbosity", "") +
               (v.value("continuous", false) ? ", continuous" : "") +
               (v.value("readonly", false) ? ", readonly" : "") + "\n      " + v.value("description", "") +
               "\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status();
  });
}

}  // namespace mpe::cli
