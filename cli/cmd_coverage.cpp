// `mpe coverage`: how many of the MPI library's exported PMPI_ routines the tools wrap, and how many
// of those the conformance matrix (tests/matrix) calls.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "commands.h"

namespace mpe::cli {

namespace {

// Defined symbols a shared library exports, read with nm.
StatusOr<std::set<std::string>> exported_symbols(const std::string& library) {
  if (!std::filesystem::exists(library)) return Status(StatusCode::kIoError, library + ": no such file");
  const std::string cmd = "nm -D --defined-only '" + library + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return Status(StatusCode::kIoError, "cannot run nm");
  std::set<std::string> out;
  char line[1024];
  while (fgets(line, sizeof line, pipe.get())) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    const auto space = s.rfind(' ');
    out.insert(space == std::string::npos ? s : s.substr(space + 1));
  }
  return out;
}

// The routines the conformance matrix calls, per language ("c", "mpif", "usempi", "f08"), from the
// list its generator writes into the build tree (<build>/tests/matrix/tested.txt: "<lang> <C name>").
std::map<std::string, std::set<std::string>> matrix_tested(const std::string& path) {
  std::map<std::string, std::set<std::string>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string lang, name;
    if (fields >> lang >> name) out[lang].insert(name);
  }
  return out;
}

// The matrix's list beside the tool libraries of a build tree (<build>/lib -> <build>/tests/matrix).
// An installed mpe has none: the matrix is a test of the build, not installed.
std::string default_matrix_list() {
  return (std::filesystem::path(library_dir()).parent_path() / "tests" / "matrix" / "tested.txt").string();
}

}  // namespace

void add_coverage_command(CLI::App& app) {
  auto tool = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto matrix = std::make_shared<std::string>();
  CLI::App* cov =
      app.add_subcommand("coverage", "Count the MPI library's PMPI_ routines that the tools wrap");
  cov->add_option("--tool-library", *tool, "tool library to inspect (default: libmpetime.so beside mpe)");
  cov->add_flag("--list-missing", *list, "name every routine that is not wrapped");
  cov->add_option("--matrix-list", *matrix,
                  "the conformance matrix's list of tested routines (default: tests/matrix/tested.txt of the "
                  "build tree mpe belongs to)");
  set_action(cov, [tool, list, matrix]() -> Status {
    std::string lib = *tool;
    if (lib.empty()) {
      for (const char* name : {"libmpetime.so", "libumq.so", "liblog.so", "libmpenull.so"}) {
        lib = library_dir() + "/" + name;
        if (std::filesystem::exists(lib)) break;
      }
    }
    const auto wrapped = exported_symbols(lib);
    if (!wrapped.ok()) return wrapped.status();
    const auto c_symbols = exported_symbols(MPE_MPI_C_LIBRARY);
    if (!c_symbols.ok()) return c_symbols.status();
    const auto f_symbols = exported_symbols(MPE_MPI_FORTRAN_LIBRARY);
    if (!f_symbols.ok()) return f_symbols.status();
    int total = 0, covered = 0;
    std::set<std::string> missing;
    for (const auto& sym : c_symbols.value()) {
      if (sym.rfind("PMPI_", 0) != 0) continue;
      ++total;
      if (wrapped->count(sym.substr(1)))
        ++covered;
      else
        missing.insert(sym.substr(1));
    }
    // Fortran: every pmpi_x_ entry point of the mpif.h / use mpi binding.
    int ftotal = 0, fcovered = 0;
    std::set<std::string> fmissing;
    for (const auto& sym : f_symbols.value()) {
      if (sym.rfind("pmpi_", 0) != 0 || sym.back() != '_' || sym[sym.size() - 2] == '_' ||
          sym.find("f08") != std::string::npos)
        continue;
      ++ftotal;
      if (wrapped->count(sym.substr(1)))
        ++fcovered;
      else
        fmissing.insert(sym.substr(1));
    }
    std::printf("MPI library:  %s (%s)\ntool library: %s\n", MPE_MPI_C_LIBRARY, MPE_MPI_NAME, lib.c_str());
    std::printf("C:       %d of %d exported PMPI_ routines wrapped (%.1f%%)\n", covered, total,
                100.0 * covered / total);
    std::printf(
        "Fortran: %d of %d exported pmpi_*_ entry points wrapped (%.1f%%); the rest are predefined\n"
        "         callbacks and Fortran-only helpers with no C routine behind them\n",
        fcovered, ftotal, 100.0 * fcovered / ftotal);
    // The tested share: wrapped C routines the matrix calls from C (large-count twins included), and
    // the routines it calls from each Fortran binding, under their C names.
    const std::string matrix_list = matrix->empty() ? default_matrix_list() : *matrix;
    if (std::filesystem::exists(matrix_list)) {
      const auto tested = matrix_tested(matrix_list);
      int ctested = 0;
      if (const auto it = tested.find("c"); it != tested.end())
        for (const auto& name : it->second)
          if (wrapped->count(name) && c_symbols->count("P" + name)) ++ctested;
      const auto count = [&](const char* lang) {
        const auto it = tested.find(lang);
        return it == tested.end() ? 0 : static_cast<int>(it->second.size());
      };
      std::printf(
          "tested by the conformance matrix: %d of %d wrapped C routines (%.0f%%); "
          "Fortran mpif.h %d, use mpi %d, mpi_f08 %d\n",
          ctested, covered, covered ? 100.0 * ctested / covered : 0.0, count("mpif"), count("usempi"),
          count("f08"));
    } else {
      std::printf(
          "tested by the conformance matrix: unknown (%s not found: the matrix's list is written by a "
          "build's tests/matrix and is not installed)\n",
          matrix_list.c_str());
    }
    if (*list) {
      for (const auto& m : missing) std::printf("  not wrapped (C): %s\n", m.c_str());
      for (const auto& m : fmissing) std::printf("  not wrapped (Fortran): %s\n", m.c_str());
    }
    if (covered != total)
      return Status(StatusCode::kInvalidArgument, lib + " wraps " + std::to_string(covered) + " of " +
                                                      std::to_string(total) +
                                                      " C routines: coverage is below 100%");
    return Status();
  });
}

}  // namespace mpe::cli
