// liblog's parallel OTF2 output. After the merge, every rank opens the merged logfile (the merge
// already assumes a file system all ranks share), writes the events of its own threads into one
// OTF2 archive through OTF2's MPI collective callbacks on liblog's private communicator, and
// rank 0 writes the global definitions from what each rank reports (its locations, event
// counts, regions used, markers). OTF2_MPI_USE_PMPI sends OTF2's own MPI calls to PMPI_, so no
// tool sees them. Our own collective steps (agreement, the gather of the summaries, the
// broadcast of the region table) go through mpe/collective.h; OTF2's are taken by every rank,
// even after a local failure. No local step lets an exception out (each is run by Steps::run,
// which notes it as this rank's failure), and every decision to take or skip a collective step
// is agreed first, so a failure on one rank (no memory, a full disk) costs one line of output,
// never a hang.
#include "otf2_finalize.h"

#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <system_error>
#include <vector>

#include "mpe/collective.h"
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

namespace mpe::tools::log {

namespace {

// One rank's progress through write_otf2: its first failure, kept, and the local steps run so
// that no exception leaves them.
class Steps {
 public:
  // Runs a local step that returns a Status; an exception is noted as the step's failure.
  template <typename F>
  void run(F&& f) noexcept {
    try {
      note(f());
    } catch (const std::bad_alloc&) {
      note(Status::out_of_memory());
    } catch (...) {
      note(Status(StatusCode::kIoError, "unexpected error"));
    }
  }
  void note(const Status& s) noexcept {
    if (s.ok() || !first_.ok()) return;
    try {
      first_ = s;
    } catch (...) {
      first_ = Status::out_of_memory();
    }
  }
  bool ok() const { return first_.ok(); }
  const Status& first() const { return first_; }

 private:
  Status first_;
};

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
  Steps steps;
  std::string tmp;
  // Rank 0 removes what was made of the archive, and says in one line why there is none: its own
  // first error, else that another rank failed.
  auto give_up = [&](const char* when) noexcept {
    if (rank != 0) return false;
    try {
      std::error_code ignored;
      if (!tmp.empty()) fs::remove_all(tmp, ignored);
      config::warn(
          "liblog: no OTF2 archive " + archive_dir + ": " +
          (steps.ok() ? std::string("another rank failed") : steps.first().to_string()) + " (" + when +
          "); the .mpelog logfile is kept: `mpe convert <logfile> --to otf2 <dir>` makes the archive");
    } catch (...) {
      config::warn("liblog: no OTF2 archive: out of memory", false);
    }
    return false;
  };
  std::optional<StatusOr<format::LogFile>> log;
  steps.run([&] {
    tmp = archive_dir + ".tmp";
    log.emplace(format::LogFile::open(mpelog));
    if (rank == 0) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
    }
    return log->status();
  });
  if (!collective::all_ok(steps.ok(), comm)) return give_up("reading the logfile");
  std::unique_ptr<interop::Otf2Export> x;
  steps.run([&] {
    x = std::make_unique<interop::Otf2Export>(log->value());
    return x->create(tmp);
  });
  if (!collective::all_ok(steps.ok(), comm)) return give_up("creating the archive");
  // OTF2's own collective phases: every rank takes each one, whatever happened before.
  steps.run([&] {
    return x->set_collectives(
        [comm](OTF2_Archive* a) { return OTF2_MPI_Archive_SetCollectiveCallbacks(a, comm, MPI_COMM_NULL); });
  });
  // Without its collective callbacks OTF2 aborts at the next collective phase: stop here, every
  // rank alike.
  // An archive whose callbacks are half installed cannot even be closed (OTF2_Archive_Close
  // crashes in otf2_collectives_get_rank): it is left open, a few kilobytes at exit.
  if (!collective::all_ok(steps.ok(), comm)) {
    x.release();
    return give_up("setting up the archive's collectives");
  }
  steps.run([&] { return x->open_event_files(); });
  steps.run([&] { return x->write_rank_events(static_cast<uint32_t>(rank), nullptr); });
  steps.run([&] { return x->close_event_files(); });
  std::string summary;
  steps.run([&] {
    summary = x->summary();
    return Status();
  });
  StatusOr<std::vector<std::string>> summaries = collective::gather_to_root(summary, 0, comm);
  steps.note(summaries.status());
  std::string table;
  // Only on an archive whose every phase so far worked: OTF2 aborts the process when asked for
  // the definitions of an archive whose collective set-up failed.
  if (rank == 0 && steps.ok())
    steps.run([&] {
      MPE_RETURN_IF_ERROR(x->write_global_definitions(summaries.value()));
      table = x->region_table();
      return Status();
    });
  // The local definitions need root's table: every rank writes them, or none does.
  const bool have_table = collective::all_ok(rank != 0 || steps.ok(), comm) &&
                          collective::all_ok(collective::broadcast_from_root(&table, 0, comm).ok(), comm);
  if (have_table) steps.run([&] { return x->write_local_definitions(table); });
  steps.run([&] { return x->close(); });
  if (!collective::all_ok(steps.ok(), comm)) return give_up("writing the archive");
  if (rank != 0) return true;
  // Rank 0 alone from here: no collective is left, and every allocation is inside a step.
  steps.run([&] {
    std::error_code ec;
    if (fs::is_directory(archive_dir, ec) && interop::is_otf2(archive_dir)) fs::remove_all(archive_dir, ec);
    fs::rename(tmp, archive_dir, ec);
    return ec ? Status(StatusCode::kIoError, "cannot rename " + tmp + ": " + ec.message()) : Status();
  });
  if (!steps.ok()) return give_up("renaming the archive into place");
  try {
    config::inform("liblog wrote " + archive_dir + "/traces.otf2 (OTF2, " + std::to_string(size) +
                   " ranks writing in parallel)");
  } catch (const std::bad_alloc&) {
    config::warn("liblog wrote the OTF2 archive (out of memory for the rest of this line)");
  }
  return true;
}

}  // namespace mpe::tools::log
