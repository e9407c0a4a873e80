// `mpe run --stack`: the layers named on the command line, checked before anything is launched.
#pragma once
#include <string>
#include <vector>

#include "mpe/status.h"

namespace mpe::cli {

// "A.so,mpe,B.so" -> the MPE_STACK value libmpestack reads: each library as an absolute path, checked
// to be a shared library that defines at least one MPI_ function; `mpe` (the suite's tools) kept
// where it is named, and placed first when it is not named but `with_suite` is set.
StatusOr<std::string> resolve_stack(const std::string& listed, bool with_suite);

// The MPI_ functions a shared library defines itself, from its dynamic symbol table.
StatusOr<std::vector<std::string>> defined_mpi_functions(const std::string& path);

}  // namespace mpe::cli
