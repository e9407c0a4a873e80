// Writing a .mpelog as an OTF2 archive, in phases, so that one process (`mpe convert`) or every
// rank of a run (liblog's finalize, each rank writing its own locations) can drive it. The
// collective phases are marked; with the serial callbacks one process calls them all.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace mpe::interop {

class Progress;

// Installs OTF2 collective callbacks on a fresh archive (OTF2_MPI_Archive_SetCollectiveCallbacks
// in liblog); empty means serial (one process writes everything).
using CollectiveSetup = std::function<OTF2_ErrorCode(OTF2_Archive*)>;

class Otf2Export {
 public:
  // `log` must outlive the exporter.
  explicit Otf2Export(const format::LogFile& log);
  ~Otf2Export();
  Otf2Export(const Otf2Export&) = delete;
  Otf2Export& operator=(const Otf2Export&) = delete;

  // Creates the archive `dir/traces.otf2` (+ `dir/traces/`): local, so that the ranks can agree
  // it worked everywhere before the first collective step.
  Status create(const std::string& dir);
  Status set_collectives(const CollectiveSetup& setup);               // collective when `setup` is
  Status open(const std::string& dir, const CollectiveSetup& setup);  // both
  Status open_event_files();                                          // collective
  // Writes the events of every thread of `rank` (local). Errors are kept; keep calling the
  // collective phases anyway so that no rank is left waiting.
  Status write_rank_events(uint32_t rank, Progress* progress);
  Status close_event_files();  // collective
  // What the root needs from this process for the global definitions: its locations with their
  // event counts and last timestamps, the regions its events used, its markers, its calling
  // contexts (a log with call sites; docs/interop.md).
  std::string summary() const;
  // Root only: definitions (clock, system tree, locations, regions, groups, communicators, call
  // sites as source code locations and calling contexts) and the markers, from every process's
  // summary.
  Status write_global_definitions(const std::vector<std::string>& summaries);
  // Root, after write_global_definitions: the category of each global region and every process's
  // calling-context map, to hand to every process (events use category ids and per-process
  // context ids; the local definitions map them to the global refs).
  std::string region_table() const;
  // Collective: the local definition files, one per location written here, with the mapping.
  Status write_local_definitions(const std::string& region_table);
  Status close();  // collective

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace mpe::interop
