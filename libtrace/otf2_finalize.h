// liblog's OTF2 output at MPI_Finalize (MPE_LOG_FORMAT=otf2 or both).
#pragma once

#include <mpi.h>

#include <string>

namespace mpe::tools::log {

// MPE_LOG_FORMAT: mpelog (default), otf2, or both; anything else is reported and means mpelog.
struct OutputFormats {
  bool mpelog = true;
  bool otf2 = false;
};
OutputFormats output_formats();

// <dir>/<prefix>.mpelog -> <dir>/<prefix>.otf2 (a directory; its anchor is traces.otf2).
std::string otf2_path(const std::string& mpelog);

// Writes the merged logfile `mpelog` as the OTF2 archive directory `archive_dir`, in parallel:
// every rank of `comm` writes its own locations' events, rank 0 the global definitions. All
// ranks must call it. Never throws; on failure rank 0 prints one line and nothing named
// `archive_dir` is left half-written. Returns true (on every rank) when the archive is whole.
bool write_otf2(MPI_Comm comm, const std::string& mpelog, const std::string& archive_dir) noexcept;

}  // namespace mpe::tools::log
