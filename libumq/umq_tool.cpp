// libumq's life cycle: registration, settings and the start of the reads at MPI_Init, the report
// at MPI_Finalize.
//
// libumq reads the MPI library's unexpected-message-queue length (an MPI_T performance variable)
// on every receive-family call, and when it is above MPE_UMQ_THRESHOLD records the receive under
// its call site (the core's id of its MPE_UMQ_DEPTH application frames). At finalize each rank
// symbolizes its own sites, rank 0 gathers them on a private communicator and writes
// <prefix>.umq.txt and <prefix>.umq.json. The parts:
//   umq_hooks     the hooks, inline (the hot path)
//   queue_reader  the variable, its handles, what the hooks do at a receive and for communicators
//   call_sites    the lock-free per-site statistics over the threshold
//   report        the gather encoding, the merge on rank 0, the text and JSON files
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "call_sites.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "queue_reader.h"
#include "report.h"
#include "umq_hooks.h"

namespace mpe::tools::umq {

namespace {

constexpr const char* kKnownNames[] = {"unexpected_recvq_length", "pml_ob1_unexpected_msgq_length"};

// Prints "umq: <what> (<why>)" without allocating: the failure may be the lack of memory itself.
void warn_lost(const char* what, const std::exception& e, bool rank0_only) noexcept {
  const bool no_memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
  char line[512];
  std::snprintf(line, sizeof line, "umq: %s (%s)", what, no_memory ? "out of memory" : e.what());
  mpe::config::warn(line, rank0_only);
}

void after_init() noexcept {
  bool ok = false;
  try {
    const auto threshold = static_cast<uint64_t>(mpe::config::env_int("MPE_UMQ_THRESHOLD", 5, 0, INT64_MAX));
    configure_call_sites(static_cast<int>(mpe::config::env_int("MPE_UMQ_DEPTH", kDefaultDepth, 1, kMaxDepth)),
                         mpe::config::env_bool("MPE_UMQ_PRINT", false));
    const std::string override_name = mpe::config::env_string("MPE_UMQ_PVAR", "");
    std::vector<std::string> names;
    if (!override_name.empty()) {
      names.push_back(override_name);
    } else {
      names.assign(std::begin(kKnownNames), std::end(kKnownNames));
    }
    ok = start_reading(names, threshold);
  } catch (const std::exception& e) {
    warn_lost("cannot start; libumq is inactive", e, false);
  }
  // Every rank reads or none does: the report's gather at finalize needs every rank.
  const bool all = mpe::collective::all_ok(ok, MPI_COMM_WORLD);
  set_reading(all);
  if (ok && !all) mpe::config::warn("umq: another rank cannot read the queue length; libumq is inactive");
}

// This rank's call sites, symbolized and encoded; empty when that failed (said on stderr), so
// that the rank still joins the gather.
std::string this_rank_sites() noexcept {
  try {
    return encode_sites(symbolized_sites(communicator_label));
  } catch (const std::exception& e) {
    warn_lost("this rank's call sites are left out of the report", e, false);
    return {};
  }
}

// Symbolizes this rank's call sites, gathers them on rank 0 of a private communicator and writes
// the report there. Collective over MPI_COMM_WORLD.
void report_call_sites() noexcept {
  const std::string mine = this_rank_sites();
  MPI_Comm priv;
  if (collective::duplicate(MPI_COMM_WORLD, &priv) != MPI_SUCCESS) {
    mpe::config::warn("umq: cannot create a communicator for the report; no report");
    return;
  }
  int rank = 0;
  PMPI_Comm_rank(priv, &rank);
  auto gathered = mpe::collective::gather_to_root(mine, 0, priv);
  PMPI_Comm_free(&priv);
  char line[512];
  if (!gathered.ok()) {
    const Status& status = gathered.status();
    std::snprintf(line, sizeof line, "umq: no report (%s%s%s)", mpe::status_code_name(status.code()),
                  status.message().empty() ? "" : ": ", status.message().c_str());
    mpe::config::warn(line);
  } else if (rank == 0) {
    try {
      write_report(*gathered, variable());
    } catch (const std::exception& e) {
      warn_lost("the report is missing or incomplete", e, true);
    }
  }
  if (const uint64_t dropped = dropped_occurrences()) {
    std::snprintf(line, sizeof line,
                  "umq: rank %d: %" PRIu64
                  " occurrences not recorded (call-site table full or out of memory)",
                  mpe_core_world_rank(), dropped);
    mpe::config::warn(line, false);
  }
}

void before_finalize() noexcept {
  if (reading()) {  // the same on every rank (after_init agreed)
    set_reading(false);
    report_call_sites();
  }
  close_reader();
  release_symbolizer();
}

constexpr mpe::Tool kTool = mpe::core::solo_tool<Hooks>("umq", after_init, before_finalize);

__attribute__((constructor)) void register_umq_tool() {
  if (mpe_core_register_tool(&kTool) != 0) mpe::config::warn("umq: too many tools loaded; libumq is off");
}

}  // namespace

}  // namespace mpe::tools::umq
