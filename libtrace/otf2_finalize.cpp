// liblog's parallel OTF2 output. After the merge, every rank opens the merged logfile (the merge
// already assumes a file system all ranks share), writes the events of its own threads into one
// OTF2 archive through OTF2's MPI collective callbacks on liblog's private communicator, and
// rank 0 writes the global definitions from what each rank reports (its locations, event
// counts, regions used, markers). OTF2_MPI_USE_PMPI sends OTF2's own MPI calls to PMPI_, so no
// tool sees them. Every collective step is taken by every rank, even after a local failure,
// and the ranks agree on the outcome, so a failure costs one line of output, never a hang.
#include "otf2_finalize.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "mpe/config.h"
#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "mpe/otf2_export.h"

#define OTF2_MPI_USE_PMPI
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <otf2/OTF2_MPI_Collectives.h>
#pragma GCC diagnostic pop

namespace mpe::liblog {

namespace {

bool all_agree(MPI_Comm comm, bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all != 0;
}

// Rank 0 receives every rank's bytes.
std::vector<std::string> gather_to_root(MPI_Comm comm, int rank, int size, const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(rank == 0 ? static_cast<size_t>(size) : 0), displs;
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    int at = 0;
    for (int l : lens) displs.push_back(at), at += l;
    all.resize(static_cast<size_t>(at));
  }
  PMPI_Gatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), displs.data(), MPI_BYTE, 0, comm);
  std::vector<std::string> out;
  for (size_t r = 0; r < lens.size(); ++r)
    out.push_back(all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(lens[r])));
  return out;
}

std::string broadcast_from_root(MPI_Comm comm, int rank, std::string bytes) {
  int len = static_cast<int>(bytes.size());
  PMPI_Bcast(&len, 1, MPI_INT, 0, comm);
  if (rank != 0) bytes.resize(static_cast<size_t>(len));
  PMPI_Bcast(bytes.data(), len, MPI_BYTE, 0, comm);
  return bytes;
}

}  // namespace

OutputFormats output_formats() {
  const std::string v = config::env_string("MPE_LOG_FORMAT", "mpelog");
  if (v == "otf2") return {false, true};
  if (v == "both") return {true, true};
  if (v != "mpelog") config::warn("MPE_LOG_FORMAT='" + v + "' is not mpelog, otf2 or both; writing mpelog");
  return {};
}

std::string otf2_path(const std::string& mpelog) {
  const std::string ext = ".mpelog";
  const bool has_ext =
      mpelog.size() > ext.size() && mpelog.compare(mpelog.size() - ext.size(), ext.size(), ext) == 0;
  return (has_ext ? mpelog.substr(0, mpelog.size() - ext.size()) : mpelog) + ".otf2";
}

bool write_otf2(MPI_Comm comm, const std::string& mpelog, const std::string& archive_dir) noexcept {
  namespace fs = std::filesystem;
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  Status first;  // this rank's first error
  auto note = [&](const Status& s) {
    if (!s.ok() && first.ok()) first = s;
  };
  const std::string tmp = archive_dir + ".tmp";
  try {
    auto log = log::LogFile::open(mpelog);
    note(log.status());
    if (rank == 0) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
    }
    if (!all_agree(comm, log.ok())) {
      if (rank == 0)
        config::warn("liblog: no OTF2 archive: cannot read " + mpelog + ": " + first.to_string());
      return false;
    }
    interop::Otf2Export x(*log);
    note(x.create(tmp));
    if (!all_agree(comm, first.ok())) {
      if (rank == 0)
        config::warn("liblog: no OTF2 archive: " + (first.ok() ? "another rank failed" : first.to_string()));
      return false;
    }
    note(x.set_collectives(
        [comm](OTF2_Archive* a) { return OTF2_MPI_Archive_SetCollectiveCallbacks(a, comm, MPI_COMM_NULL); }));
    note(x.open_event_files());
    note(x.write_rank_events(static_cast<uint32_t>(rank), nullptr));
    note(x.close_event_files());
    const std::vector<std::string> summaries = gather_to_root(comm, rank, size, x.summary());
    std::string table;
    if (rank == 0) {
      note(x.write_global_definitions(summaries));
      table = x.region_table();
    }
    table = broadcast_from_root(comm, rank, table);
    note(x.write_local_definitions(table));
    note(x.close());
    const bool ok = all_agree(comm, first.ok());
    if (rank == 0) {
      std::error_code ec;
      if (ok && fs::is_directory(archive_dir, ec) && interop::is_otf2(archive_dir))
        fs::remove_all(archive_dir, ec);
      if (ok) fs::rename(tmp, archive_dir, ec);
      if (ok && !ec)
        config::inform("liblog wrote " + archive_dir + "/traces.otf2 (OTF2, " + std::to_string(size) +
                       " ranks writing in parallel)");
      else {
        std::error_code ignored;
        fs::remove_all(tmp, ignored);
        config::warn("liblog: no OTF2 archive: " + (ec ? "cannot rename " + tmp + ": " + ec.message()
                                                    : first.ok() ? std::string("another rank failed")
                                                                 : first.to_string()));
      }
      return ok && !ec;
    }
    return ok;
  } catch (...) {
    // Out of memory between collective steps: the other ranks may still be waiting in one; we
    // cannot repair that from here, but we never let an exception reach the application.
    if (rank == 0) config::warn("liblog: no OTF2 archive: out of memory", false);
    return false;
  }
}

}  // namespace mpe::liblog
